# ardstart --system takes ardnet with ros2: endpoints as a block like any other: a system of a
# writer block and an ardnet block publishing its connection on ROS 2; the DDS peer gets it.
source "$(dirname "$0")/common.sh"
: "${ARDSTART:?} ${ARDKILL:?}"
export ARD_BOOKS_DIR="$T/books"
# The subsystems run ardstart (and its blocks) from PATH.
export PATH="$(dirname "$ARDSTART"):$(dirname "$ARDKILL"):$(dirname "$ARDNET"):$PATH"
cat >"$T/sys.yaml" <<YAML
name: r2sys
subsystems:
  - name: robot
    blocks:
      - name: writer
        cmd: $LOCAL pub arm arm.state --count 100000 --rate 1000
      - name: bridge
        cmd: $ARDNET --in arm.state --out ros2:/arm/state
YAML
bg sub "$PEER" sub arm rt/arm/state --count 500 --first-ms 20000
"$ARDSTART" --system "$T/sys.yaml" --wait=20 >"$T/start.out" 2>&1 || fail "ardstart --system: $(cat "$T/start.out")"
finish sub || rc=$?
"$ARDKILL" r2sys >/dev/null 2>&1 || true
[ "${rc:-0}" = 0 ] || fail "the DDS peer did not get 500 exact samples from the system's ardnet"
echo "ok: ardstart --system ran ardnet with a ros2: output"
