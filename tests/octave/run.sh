#!/usr/bin/env bash
# Driver of the Octave binding's tests (ctest label "octave"): run.sh MODE.
# Environment: OCTAVE (octave-cli), OCTBLOCK (octblock), ARD (the ard tool, for "load"),
# ARD_OCTAVE_PATH (the build's octave/ directory), TESTDIR (this directory).
set -uo pipefail
mode=$1
export ARD_DOMAIN=oct${mode:0:4}$$
T=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    "$OCTBLOCK" unlink - 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL ($mode): $*" >&2; exit 1; }
# OCTAVE_PRELOAD: the sanitizer runtime, for the instrumented MEX file (sanitizer build).
if [ -n "${OCTAVE_PRELOAD:-}" ]; then
    OCTAVE="env LD_PRELOAD=$OCTAVE_PRELOAD $OCTAVE"
fi
oct() { $OCTAVE --no-gui --no-init-file --quiet --path "$ARD_OCTAVE_PATH" --path "$TESTDIR" "$@"; }

case $mode in
reader)
    "$OCTBLOCK" write cw 1000 10000 &
    pids+=($!)
    oct --eval t_reader || fail "t_reader"
    ;;
writer)
    export STOPFILE=$T/stop
    "$OCTBLOCK" read ow 20 >"$T/read.out" 2>&1 &
    reader=$!
    oct --eval t_writer &
    pids+=($!)
    wait $reader
    rc=$?
    touch "$STOPFILE"
    cat "$T/read.out"
    [ $rc -eq 0 ] || fail "octblock read exited $rc"
    grep -q '20 packets ok' "$T/read.out" || fail "reader output"
    ;;
argv)
    $OCTAVE --no-gui --no-init-file --quiet "$TESTDIR/t_argv.m" --ard r=e.wired extra ||
        fail "t_argv"
    # --ard-help prints the ports and ends the interpreter with status 0 (the script's
    # assertions after ard_init are not reached).
    $OCTAVE --no-gui --no-init-file --quiet "$TESTDIR/t_argv.m" --ard-help >"$T/help" 2>&1 ||
        fail "--ard-help exited $?"
    grep -Eq '^ +r +in +8 +r +f64' "$T/help" || fail "--ard-help output: $(cat "$T/help")"
    grep -q 't_argv: ok' "$T/help" && fail "--ard-help did not end the script"
    ;;
errors | clear)
    oct --eval "t_$mode" || fail "t_$mode"
    ;;
interrupt)
    # SIGINT must reach Octave with its default disposition (a non-interactive shell starts
    # background jobs with SIGINT ignored).
    env --default-signal=INT $OCTAVE --no-gui --no-init-file --quiet --path "$ARD_OCTAVE_PATH" \
        --path "$TESTDIR" --eval t_interrupt >"$T/out" 2>&1 &
    oct_pid=$!
    pids+=($oct_pid)
    for _ in $(seq 200); do grep -q blocked "$T/out" && break; sleep 0.05; done
    grep -q blocked "$T/out" || fail "Octave did not reach the blocking rec: $(cat "$T/out")"
    sleep 0.3
    kill -INT $oct_pid
    for _ in $(seq 200); do kill -0 $oct_pid 2>/dev/null || break; sleep 0.05; done
    kill -0 $oct_pid 2>/dev/null && fail "Octave still blocked 10 s after SIGINT"
    cat "$T/out"
    grep -q 'rec returned' "$T/out" && fail "rec returned instead of being interrupted"
    grep -q 'error id: ardnet:ARD_EINTR' "$T/out" || fail "no ARD_EINTR"
    grep -q 'writer held: 1' "$T/out" || fail "writer not held before clear"
    grep -q 'port usable: 1' "$T/out" || fail "port unusable after the interrupt"
    grep -q 'after clear: 0' "$T/out" || fail "writer lock still held after clear ardnet_mex"
    ;;
load)
    # Record 300 packets of octblock's writer with `ard record`, then check every row of
    # ard_load's result against the values sent, and the resampled view.
    "$ARD" record lw -o "$T/run.mcap" -n 300 2>"$T/rec.err" &
    rec=$!
    pids+=($rec)
    sleep 0.5
    "$OCTBLOCK" write lw 600 2000 &
    pids+=($!)
    wait $rec || fail "ard record: $(cat "$T/rec.err")"
    MCAP=$T/run.mcap oct --eval t_load || fail "t_load"
    ;;
example)
    # examples/octave/arm_state_plot.m reading a 1 kHz arm state for 1 s at 100 Hz (not the
    # plot: 'noplot').
    "$OCTBLOCK" arm arm.state 20000 1000 &
    pids+=($!)
    oct --path "$EXAMPLES" --eval t_example || fail "t_example"
    ;;
*)
    fail "unknown mode"
    ;;
esac
echo "ok ($mode)"
