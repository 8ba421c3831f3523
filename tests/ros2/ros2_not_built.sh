# An ardnet built without ROS 2 refuses a ros2: endpoint with the documented message and exit
# status 100 (registered only in such a build).
set -uo pipefail
: "${ARDNET:?}"
err=$("$ARDNET" --in arm.state --out ros2:/arm/state 2>&1 >/dev/null)
rc=$?
[ "$rc" = 100 ] || { echo "FAIL: exit $rc, expected 100"; exit 1; }
grep -qx "ardnet: ros2: endpoints not built (configure with cyclonedds-dev)" <<<"$err" ||
    { echo "FAIL: message: $err"; exit 1; }
echo "ok: $err"
