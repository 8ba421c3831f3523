#!/bin/bash
# control.sh - subsystem "control": trajectory generator, joint controller, monitor, and the
# bridges to the simulator host when that is another host. Started by master.sh.
set -euo pipefail
# Each bridge publishes its counters on connection ardnet.<its name>: `ard show ardnet.NAME`.
bridged() { [ "${ARM_SIM_HOST}" != "${ARM_CTRL_HOST}" ]; }

if bridged; then
    # the arm's state arrives from the simulator host on UDP port 7101
    ardstart -q --wait=20 -n state_in -- ardnet --in udp://:7101 --out arm.state \
        --counters ardnet.state_in --size 112 --type 'q:f64[7] qd:f64[7]'
fi
ardstart -q --wait=20 -n traj -- "$ARM_BIN/arm_traj" --ard ref=arm.ref
ardstart -q --wait=20 -n ctrl -- "$ARM_BIN/arm_ctrl" \
    --ard ref=arm.ref --ard state=arm.state --ard cmd=arm.cmd
if bridged; then
    ardstart -q --wait=20 -n cmd_out -- ardnet --in arm.cmd \
        --counters ardnet.cmd_out --out "udp://${ARM_SIM_HOST:-localhost}:7102"
fi
ardstart -q --wait=20 -n monitor -- "$ARM_BIN/arm_monitor" --ard ref=arm.ref --ard state=arm.state
ardstart --ready
exec sleep infinity
