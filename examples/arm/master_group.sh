#!/bin/bash
# master_group.sh - the simulated arm with controller and plant as plugins in one 1 kHz
# ardrun group (group.yaml), the trajectory generator and a 10 Hz monitor as processes.
# The same blocks and connections as master.sh: only the configuration differs.
#
#   examples/arm/master_group.sh       (ARM_BIN: example blocks, default build/examples)
#   ardstart --list;  ardrun ctl arm_rt status;  ardkill arm
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${ARD_PATH:-}" ]; then
    exec ardstart --wait="${ARM_WAIT:-60}" -n arm -- "$here/master_group.sh" "$@"
fi
: "${ARM_BIN:=$(cd "$here/../.." && pwd)/build/examples}"
export ARDRUN_PLUGIN_PATH="${ARDRUN_PLUGIN_PATH:-$ARM_BIN/plugins}"

ardstart -q --wait=20 -n traj -- "$ARM_BIN/arm_traj" --rate 200 --ard ref=arm.ref
ardstart -q --wait=20 -n rt -- ardrun "$here/group.yaml"
ardstart -q --wait=20 -n monitor -- "$ARM_BIN/arm_monitor" --rate 10 \
    --ard ref=arm.ref --ard state=arm.state
ardstart --ready
exec sleep infinity
