#!/bin/bash
# master.sh - start the simulated 7-joint arm, level by level, each level ready before the
# next: the simulator (plant), then the control subsystem (trajectory, controller, monitor).
#
#   examples/arm/master.sh            everything on this host
#   ARM_SIM_HOST=rt1 ARM_CTRL_HOST=rt2 examples/arm/master.sh    on two hosts (ssh)
#
# Host mapping (empty = this host). Blocks on different hosts are wired by ardnet bridges
# that the subsystem scripts insert. Remote hosts need the same paths (shared or identical
# install) and ardstart/ardkill/ardnet in their PATH.
#   ARM_SIM_HOST    host of the plant simulator
#   ARM_CTRL_HOST   host of trajectory generator, joint controller and monitor
#   ARM_BIN         directory of the example blocks (default: build/examples of this tree,
#                   or PREFIX/libexec/ardnet/examples for the installed script)
#
# Run directly, it starts itself through ardstart as entry "arm", so the whole system is
# one subtree: `ardstart --list` shows it, `ardkill arm` (or just `ardkill`) stops it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${ARD_PATH:-}" ]; then
    exec ardstart --wait="${ARM_WAIT:-60}" -n arm -- "$here/master.sh" "$@"
fi

: "${ARM_SIM_HOST:=}" "${ARM_CTRL_HOST:=}"
if [ -z "${ARM_BIN:-}" ]; then
    # build/examples of this source tree, or the installed blocks when this script is the
    # installed one (PREFIX/share/ardnet/examples/arm -> PREFIX/libexec/ardnet/examples)
    for ARM_BIN in "$here/../../build/examples" "$here/../../../../libexec/ardnet/examples"; do
        [ -x "$ARM_BIN/arm_plant" ] && break
    done
    ARM_BIN=$(cd "$ARM_BIN" 2>/dev/null && pwd) || {
        echo "master.sh: example blocks not found: build the tree, or set ARM_BIN" >&2
        exit 1
    }
fi
# The mapping travels with every subsystem (environment does not cross ssh by itself).
pass=(-E "ARM_SIM_HOST=$ARM_SIM_HOST" -E "ARM_CTRL_HOST=$ARM_CTRL_HOST" -E "ARM_BIN=$ARM_BIN")

on() { # on HOST ARDSTART-ARGS...: start on HOST, or here when HOST is empty
    local host=$1
    shift
    if [ -n "$host" ]; then
        ardstart -H "$host" "$@"
    else
        ardstart "$@"
    fi
}

on "$ARM_SIM_HOST" --wait=30 -n sim "${pass[@]}" -- "$here/sim.sh"
on "$ARM_CTRL_HOST" --wait=30 -n control "${pass[@]}" -- "$here/control.sh"
ardstart --ready
# The master stays, so its entry shows the system as running; ardkill stops it last.
exec sleep infinity
