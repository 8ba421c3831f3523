#!/bin/bash
# demo.sh - build ardnet, start the simulated 7-joint arm with ardstart (level by level,
# each level ready before the next), show the monitor, the listing, the connections with
# `ard list` and `ard show -f`, stop everything with ardkill; then the same arm with controller
# and plant in one ardrun group; show that nothing is left. Exits 0 when all of that worked.
#
#   scripts/demo.sh                 (BUILD_DIR=... to build elsewhere; ARD_DOMAIN=... )
# On a fresh Debian/Ubuntu machine run as root, missing build tools are installed with apt-get.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
export ARD_DOMAIN=${ARD_DOMAIN:-demo}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "dependencies"
t=$SECONDS
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v make >/dev/null || missing+=(make)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if ! pkg-config --exists yaml-0.1 2>/dev/null; then missing+=(libyaml-dev); fi
if ! pkg-config --exists libsodium 2>/dev/null; then missing+=(libsodium-dev); fi
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # The core's build needs only these: no recommended extras, no test tools.
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "missing: ${missing[*]} (install them, or run this as root on Debian/Ubuntu)" >&2
        exit 1
    fi
fi
echo "ok ($((SECONDS - t)) s)"

step "build ($build)"
t=$SECONDS
tests=ON
pkg-config --exists cmocka 2>/dev/null || tests=OFF # the demo needs no test framework
cmake -S "$root" -B "$build" -DARD_TESTS=$tests >/dev/null
cmake --build "$build" -j"$(nproc)" --target ardstart ardkill ardnet_bin ard ardrun \
    arm_traj arm_ctrl arm_plant arm_monitor arm_ctrl_block arm_plant_block >/dev/null
export PATH="$build/src/ardstart:$build/src/ardkill:$build/src/ardnet:$build/src/tools:$build/src/ardrun:$PATH"
export ARM_BIN="$build/examples"
echo "ok ($((SECONDS - t)) s)"

# A previous run that was interrupted: start from a clean domain.
ardkill -q || true

step "start the arm: examples/arm/master.sh (domain $ARD_DOMAIN)"
"$root/examples/arm/master.sh"

step "the monitor's output for 3 s (tail -f of its log)"
log=$(ardstart --log arm/control/monitor)
echo "log file: $log"
timeout 3 tail -n 2 -f "$log" || true

step "ardstart --list"
ardstart --list

step "ard list: the connections, their writers, readers and rates"
sleep 0.5 # a few packets on each, for the rates
ard list

step "ard show -f arm.state --field q (3 packets)"
ard show -f arm.state --field q -n 3

step "ard graph (Graphviz dot; 'ard graph --format svg' draws it)"
ard graph

step "ardkill (everything in domain $ARD_DOMAIN)"
ardkill

step "the same arm, controller and plant as plugins in one 1 kHz ardrun group: examples/arm/master_group.sh"
"$root/examples/arm/master_group.sh"
sleep 1
ardrun ctl arm_rt status
ardstart --list

step "ardkill"
ardkill

step "what is left"
left_procs=0
envof() { { tr '\0' '\n' <"$1/environ"; } 2>/dev/null || true; }
for p in /proc/[0-9]*; do
    # Everything ardstart starts carries its domain and its place in the hierarchy.
    env=$(envof "$p")
    if grep -qx "ARD_DOMAIN=$ARD_DOMAIN" <<<"$env" && grep -q '^ARD_PATH=' <<<"$env"; then
        echo "still running: $(tr '\0' ' ' <"$p/cmdline")"
        left_procs=$((left_procs + 1))
    fi
done
left_shm=$(ls /dev/shm | grep -c "^ard\.$ARD_DOMAIN\." || true)
left_entries=$(ardstart --list --raw | wc -l)
echo "processes of the system: $left_procs, shared memory objects: $left_shm," \
    "entries in the books: $left_entries"
if [ "$left_procs" != 0 ] || [ "$left_shm" != 0 ] || [ "$left_entries" != 0 ]; then
    echo "demo FAILED: something was left" >&2
    exit 1
fi
echo "demo ok"
