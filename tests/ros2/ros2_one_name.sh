# One name and one type everywhere (docs/ros2.md#names): three connections (arm.state, and
# s.pose and s_pose, whose CamelCase SPose clashes with two layouts) recorded by `ard record`,
# served by `ard web` over the Foxglove protocol and put on ROS 2 topics by ardnet through
# Cyclone DDS. Independent readers give back each side's type name and .msg text: @mcap/core
# for the file, @foxglove/ws-protocol's FoxgloveClient for the live server, DDS discovery
# (Cyclone's builtin DCPSPublication topic, discover.c) for the ROS 2 type, whose .msg text is
# what `ard ros2-msgs` writes. The three type names and the three .msg texts are compared byte
# for byte: ardnet_msgs/msg/ArmState, ardnet_msgs/msg/SPose for s.pose (met first everywhere),
# ardnet_msgs/msg/SPoseH<the first 8 hex digits of its layout hash> for s_pose; the layout hash
# and the ardnet name are in the recording's channel metadata; each of the four programs
# reports the clash naming both connections. Skipped (77) when the npm packages cannot be
# installed, except under CI=true.

NPM_DIR=${ARD_ONE_NAME_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ardnet-one-name-test}
skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $* (CI=true: the independent readers must run)"
        exit 1
    fi
    echo "SKIP: $*" >&2
    exit 77
}
command -v node >/dev/null || skip "node is not installed"
# Fetched before common.sh moves the test into a network namespace of its own (only lo).
if ! NODE_PATH="$NPM_DIR/node_modules" node -e "for (const m of ['@mcap/core','@foxglove/ws-protocol','ws']) require(m)" 2>/dev/null; then
    command -v npm >/dev/null || skip "npm is not installed"
    mkdir -p "$NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name":"ardnet-one-name-test","private":true}' >"$NPM_DIR/package.json"
    st=0
    (cd "$NPM_DIR" && flock "$NPM_DIR/.lock" timeout 150 npm install --no-audit --no-fund \
        --loglevel=error @mcap/core@2 @foxglove/ws-protocol@0 ws@8) >"$NPM_DIR/npm.log" 2>&1 || st=$?
    if [ "$st" != 0 ]; then
        . "$(dirname "$0")/../lib/npm.sh"
        skip "npm packages could not be installed into $NPM_DIR: $(npm_error "$NPM_DIR/npm.log" "$st")"
    fi
fi
source "$(dirname "$0")/common.sh"
: "${ARD:?} ${DISCOVER:?}"
export NODE_PATH="$NPM_DIR/node_modules"
JS="$(dirname "$0")/one_name.js"

CONNS=(arm.state s.pose s_pose)
TOPICS=(/arm/state /s/pose /s_pose)
"$ARD" pub arm.state --type "q:f64[7] qd:f64[7]" "q[0]=1.25" -n 1 >/dev/null
"$ARD" pub s.pose --type "x:f64 y:f64" x=1.5 -n 1 >/dev/null
"$ARD" pub s_pose --type "a:i32" a=7 -n 1 >/dev/null

# The recording.
bg record "$ARD" record "${CONNS[@]}" -o "$T/rec.mcap"
sleep 1
stop record || fail "ard record exit status"
mkdir -p "$T/file" "$T/live"
OUT=$T/file node "$JS" mcap "$T/rec.mcap" "${TOPICS[@]}" || fail "@mcap/core"

# The live side.
bg web "$ARD" web --listen 127.0.0.1:0 --no-token
for ((i = 0; i < 100; i++)); do grep -q 'http://' "$T/web.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$T/web.out" | head -1)
[ -n "$url" ] || fail "ard web printed no address"
url=${url%%\?*}
OUT=$T/live node "$JS" fox "ws://${url#http://}" "${TOPICS[@]}" || fail "FoxgloveClient"
stop web || fail "ard web exit status"

# ROS 2: ardnet's writers as DDS discovery shows them; the package ard ros2-msgs writes.
bg ardnet "$ARDNET" --in s.pose --out ros2:/s/pose --next --in s_pose --out ros2:/s_pose \
    --next --in arm.state --out ros2:/arm/state
"$DISCOVER" 20 rt/arm/state rt/s/pose rt/s_pose >"$T/dds.txt" || fail "DDS discovery: $(cat "$T/dds.txt")"
stop ardnet || fail "ardnet exit status"
"$ARD" ros2-msgs "$T/pkg" 2>"$T/msgs.err" >/dev/null || fail "ard ros2-msgs exit status"

fnv() { # the layout hash of a .msg text (FNV-1a 64), 16 hex digits
    python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) % (1 << 64)
print("%016x" % h)' "$1"
}
for i in 0 1 2; do
    c=${CONNS[$i]} t=${TOPICS[$i]}
    name=$(cat "$T/file/$i.name")
    dds=$(awk -v t="rt$t" '$1 == t { print $2 }' "$T/dds.txt")
    [ "$name" = "$(cat "$T/live/$i.name")" ] ||
        fail "$c: recording's type $name, Foxglove's $(cat "$T/live/$i.name")"
    msg=${name#ardnet_msgs/msg/}
    [ "$dds" = "ardnet_msgs::msg::dds_::${msg}_" ] || fail "$c: recording's type $name, DDS type $dds"
    cmp "$T/file/$i.msg" "$T/live/$i.msg" || fail "$c: .msg texts of the recording and Foxglove differ"
    cmp "$T/file/$i.msg" "$T/pkg/msg/$msg.msg" || fail "$c: .msg of the recording and ard ros2-msgs differ"
    h=$(fnv "$T/file/$i.msg")
    grep -qx "ardnet.layout_hash=$h" "$T/file/$i.meta" || fail "$c: layout hash $h not in the metadata"
    grep -qx "ardnet.name=$c" "$T/file/$i.meta" || fail "$c: ardnet name not in the metadata"
    case $c in
    arm.state) want=ArmState ;;
    s.pose) want=SPose ;;
    s_pose) want=SPoseH${h:0:8} ;;
    esac
    [ "$msg" = "$want" ] || fail "$c: type ardnet_msgs/msg/$msg, expected ardnet_msgs/msg/$want"
    echo "$c: $t ardnet_msgs/msg/$msg ($dds), .msg $(wc -c <"$T/file/$i.msg") bytes, the same in all three"
done
# The clash, reported by every program that named both, with the same words.
s_pose=$(cat "$T/file/2.name")
for p in record web ardnet msgs; do
    grep -q "connections 's.pose' and 's_pose' both have the ROS 2 message name SPose with different fields: 's_pose' is $s_pose" "$T/$p.err" ||
        fail "$p did not report the clash: $(cat "$T/$p.err")"
done
grep -q "name ArmState" "$T/record.err" "$T/web.err" "$T/ardnet.err" "$T/msgs.err" &&
    fail "a connection without a clash reported"
echo "ok: one type name and one .msg text per connection in the recording, the Foxglove protocol and DDS"
