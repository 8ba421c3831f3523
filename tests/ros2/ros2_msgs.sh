# ard ros2-msgs: the package for every connection of the domain, and for named ones. The .msg
# files parse with @foxglove/rosmsg (npm) to the descriptor's fields; package.xml is
# well-formed XML with the format-3 structure ROS 2 needs (Debian has no format-3 schema);
# CMakeLists.txt lists every message for rosidl_generate_interfaces. Two connections with one
# message name and different fields are refused. Skipped (77) when the npm package cannot be
# installed, except under CI=true.
set -euo pipefail
: "${ARD:?} ${LOCAL:?}"
T=$(mktemp -d /tmp/ros2_msgs.XXXXXX)
export ARD_DOMAIN="t_ros2_msgs_$$"
trap 'rm -f /dev/shm/ard."$ARD_DOMAIN".*; rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
skip() {
    if [ "${CI:-}" = true ]; then fail "$* (CI=true: the check must run)"; fi
    echo "SKIP: $*" >&2
    exit 77
}
NPM_DIR=${ARD_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ardnet-mcap-check}
command -v node >/dev/null || skip "node is not installed"
command -v xmllint >/dev/null || skip "xmllint is not installed (libxml2-utils)"
if ! node -e "require('$NPM_DIR/node_modules/@foxglove/rosmsg')" 2>/dev/null; then
    command -v npm >/dev/null || skip "npm is not installed"
    # The same packages as log_npm's, which shares the folder: an install never drops another's.
    source "$(dirname "$0")/../lib/npm.sh"
    st=0
    npm_install "$NPM_DIR" "$T/npm.log" @mcap/core@2 @foxglove/rosmsg@5 \
        @foxglove/rosmsg2-serialization@3 fzstd@0 || st=$?
    [ "$st" = 0 ] || skip "npm could not install @foxglove/rosmsg: $(npm_error "$T/npm.log" "$st")"
fi
HERE=$(dirname "$0")
ARM="q:f64[7] qd:f64[7]"
ALL=$(sed -n '/#define ALL_DESC/,/af:f32/p' "$HERE/values.h" | grep -o '"[^"]*"' | tr -d '"' | tr -s ' ')

"$LOCAL" pub arm arm.state --count 1 >/dev/null
"$LOCAL" pub all all.types --count 1 >/dev/null
"$ARD" ros2-msgs "$T/ws/src/ardnet_msgs" >"$T/out" || fail "ard ros2-msgs exit $?"
[ "$(ls "$T/ws/src/ardnet_msgs/msg")" = "$(printf 'AllTypes.msg\nArmState.msg')" ] || fail "msg files: $(ls "$T/ws/src/ardnet_msgs/msg")"
node "$HERE/msg_check.js" "$NPM_DIR" "$ARM" "$T/ws/src/ardnet_msgs/msg/ArmState.msg" || fail "ArmState.msg"
node "$HERE/msg_check.js" "$NPM_DIR" "$ALL" "$T/ws/src/ardnet_msgs/msg/AllTypes.msg" || fail "AllTypes.msg"

P=$T/ws/src/ardnet_msgs/package.xml
xmllint --noout "$P" || fail "package.xml is not well-formed"
x() { xmllint --xpath "$1" "$P" 2>/dev/null; }
[ "$(x 'string(/package/@format)')" = 3 ] || fail "package format is not 3"
[ "$(x 'string(/package/name)')" = ardnet_msgs ] || fail "package name"
x 'string(/package/version)' | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || fail "version"
for e in description maintainer/@email license; do
    [ -n "$(x "string(/package/$e)")" ] || fail "package.xml has no $e"
done
[ "$(x 'string(/package/member_of_group)')" = rosidl_interface_packages ] || fail "member_of_group"
[ "$(x 'string(/package/export/build_type)')" = ament_cmake ] || fail "build_type"
[ "$(x 'count(/package/buildtool_depend[.="rosidl_default_generators"])')" = 1 ] || fail "buildtool_depend"
[ "$(x 'count(/package/exec_depend[.="rosidl_default_runtime"])')" = 1 ] || fail "exec_depend"
C=$T/ws/src/ardnet_msgs/CMakeLists.txt
grep -q '^rosidl_generate_interfaces(${PROJECT_NAME}$' "$C" || fail "no rosidl_generate_interfaces"
for m in AllTypes ArmState; do grep -qx "  \"msg/$m.msg\"" "$C" || fail "CMakeLists.txt misses $m"; done

# Named connections only; then a clash (all_types is message AllTypes too, other fields): the
# first met (all.types, the domain is listed in name order) keeps AllTypes, all_types gets
# AllTypesH + the first 8 hex digits of its layout hash (FNV-1a 64 of its .msg text), reported
# naming both (docs/ros2.md#names).
"$ARD" ros2-msgs "$T/one" arm.state >/dev/null || fail "ard ros2-msgs DIR CONN"
[ "$(ls "$T/one/msg")" = ArmState.msg ] || fail "named: $(ls "$T/one/msg")"
"$LOCAL" pub arm all_types --count 1 >/dev/null
"$ARD" ros2-msgs "$T/two" 2>"$T/err" || fail "clash: exit $?, $(cat "$T/err")"
h=$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) % (1 << 64)
print("%016x" % h)' "$T/two/msg/ArmState.msg")
want=AllTypesH${h:0:8}
[ "$(ls "$T/two/msg")" = "$(printf 'AllTypes.msg\n%s.msg\nArmState.msg' "$want")" ] ||
    fail "clash: msg files $(ls "$T/two/msg"), expected AllTypes, $want, ArmState"
cmp -s "$T/two/msg/$want.msg" "$T/two/msg/ArmState.msg" || fail "clash: $want.msg is not all_types' layout"
cmp -s "$T/two/msg/AllTypes.msg" "$T/ws/src/ardnet_msgs/msg/AllTypes.msg" || fail "clash: AllTypes.msg changed"
grep -qx "  \"msg/$want.msg\"" "$T/two/CMakeLists.txt" || fail "clash: CMakeLists.txt misses $want"
grep -q "connections 'all.types' and 'all_types' both have the ROS 2 message name AllTypes with different fields: 'all_types' is ardnet_msgs/msg/$want" "$T/err" ||
    fail "clash not reported: $(cat "$T/err")"
rc=0
"$ARD" ros2-msgs "$T/three" nope 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "missing connection: exit $rc"
echo "ok: ardnet_msgs package checked"
