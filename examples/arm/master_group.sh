#!/bin/bash
# master_group.sh - the simulated arm with controller and plant as plugins in one 1 kHz
# ardrun group (group.yaml), the trajectory generator and a 10 Hz monitor as processes.
# The same blocks and connections as master.sh: only the configuration differs.
#
#   examples/arm/master_group.sh       (ARM_BIN: example blocks, default build/examples or the installed ones)
#   ardstart --list;  ardrun ctl arm_rt status;  ardkill arm
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${ARD_PATH:-}" ]; then
    exec ardstart --wait="${ARM_WAIT:-60}" -n arm -- "$here/master_group.sh" "$@"
fi
if [ -z "${ARM_BIN:-}" ]; then
    # build/examples of this source tree, or the installed blocks when this script is the
    # installed one (PREFIX/share/ardnet/examples/arm -> PREFIX/libexec/ardnet/examples)
    for ARM_BIN in "$here/../../build/examples" "$here/../../../../libexec/ardnet/examples"; do
        [ -x "$ARM_BIN/arm_traj" ] && break
    done
    ARM_BIN=$(cd "$ARM_BIN" 2>/dev/null && pwd) || {
        echo "master_group.sh: example blocks not found: build the tree, or set ARM_BIN" >&2
        exit 1
    }
fi
export ARDRUN_PLUGIN_PATH="${ARDRUN_PLUGIN_PATH:-$ARM_BIN/plugins}"

ardstart -q --wait=20 -n traj -- "$ARM_BIN/arm_traj" --rate 200 --ard ref=arm.ref
ardstart -q --wait=20 -n rt -- ardrun "$here/group.yaml"
ardstart -q --wait=20 -n monitor -- "$ARM_BIN/arm_monitor" --rate 10 \
    --ard ref=arm.ref --ard state=arm.state
ardstart --ready
exec sleep infinity
