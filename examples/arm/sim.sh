#!/bin/bash
# sim.sh - subsystem "sim": the plant simulator, and the bridges to the control host when
# that is another host. Started by master.sh through ardstart (ARM_* set by it).
set -euo pipefail
# Each bridge publishes its counters on connection ardnet.<its name>: `ard show ardnet.NAME`.
bridged() { [ "${ARM_SIM_HOST}" != "${ARM_CTRL_HOST}" ]; }

if bridged; then
    # torques come from the control host on UDP port 7102
    ardstart -q --wait=20 -n cmd_in -- ardnet --in udp://:7102 --out arm.cmd \
        --counters ardnet.cmd_in --size 56 --type 'tau:f64[7]'
fi
ardstart -q --wait=20 -n plant -- "$ARM_BIN/arm_plant" --ard cmd=arm.cmd --ard state=arm.state
if bridged; then
    ardstart -q --wait=20 -n state_out -- ardnet --in arm.state \
        --counters ardnet.state_out --out "udp://${ARM_CTRL_HOST:-localhost}:7101"
fi
ardstart --ready
exec sleep infinity
