#!/usr/bin/env bash
# Driver of the Octave binding's tests (ctest label "octave"): run.sh MODE.
# Environment: OCTAVE (octave-cli), OCTBLOCK (octblock), ARD (the ard tool, for "load"),
# ARD_OCTAVE_PATH (the build's octave/ directory), TESTDIR (this directory), EXAMPLES
# (examples/octave); KEEP=1 keeps the temporary directory (the example's PNG files).
set -uo pipefail
mode=$1
export ARD_DOMAIN=oct${mode:0:4}$$
T=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    "$OCTBLOCK" unlink - 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$T"
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
    # One interactive Octave session, fed line by line through a FIFO as a user types, and
    # real SIGINTs (Ctrl-C). SIGINT must reach Octave with its default disposition (a
    # non-interactive shell starts background jobs with SIGINT ignored).
    mkfifo "$T/in"
    env --default-signal=INT $OCTAVE --no-gui --no-init-file --quiet --interactive \
        --no-line-editing --path "$ARD_OCTAVE_PATH" --path "$TESTDIR" <"$T/in" >"$T/out" 2>&1 &
    oct_pid=$!
    pids+=($oct_pid)
    exec 7>"$T/in"
    say() { printf '%s\n' "$*" >&7; }
    await() {
        for _ in $(seq 600); do
            grep -q -- "$1" "$T/out" && return 0
            kill -0 $oct_pid 2>/dev/null || break
            sleep 0.05
        done
        fail "waiting for '$1': $(cat "$T/out")"
    }
    ctrl_c() {
        sleep 0.3
        kill -INT $oct_pid
    }
    # Until Octave's main thread sleeps in a futex: inside the blocking ard_rec, past the
    # printf before it (on a loaded machine 0.3 s may not be enough). Where the kernel does not
    # tell (wchan "0"), ctrl_c's pause is all there is.
    in_rec() {
        for _ in $(seq 500); do
            case $(cat /proc/$oct_pid/wchan 2>/dev/null) in *futex*) return 0 ;; esac
            sleep 0.02
        done
    }
    say "blk = getenv ('OCTBLOCK');"
    # 1. SIGINT during a blocking ard_rec ends it with ARD_EINTR and closes every port (the
    #    writer is released); a port declared again works; clear ardnet_mex releases it.
    say "t_interrupt"
    await blocked
    in_rec
    ctrl_c
    await 'after clear:'
    # 2. A writer script interrupted, then run again: it runs, with the same wiring and then
    #    with another one, and a C reader gets its packets.
    say "rerun_args = {'--ard', 'w=i.first'}; rerun_count = Inf; t_rerun"
    await 't_rerun: writing on i.first'
    ctrl_c
    say "printf ('held after the interrupt: %d\n', system ([blk ' trywrite i.first']))"
    await 'held after the interrupt:'
    "$OCTBLOCK" read i.first 20 >"$T/read.out" 2>&1 &
    reader=$!
    pids+=($reader)
    say "rerun_count = 100; t_rerun"
    await 't_rerun: done, 100 packets'
    wait $reader || fail "octblock read on the script run again: $(cat "$T/read.out")"
    say "rerun_args = {'--ard', 'w=i.second'}; rerun_count = 3; t_rerun"
    await 't_rerun: done, 3 packets'
    say "printf ('first %d second %d\n', system ([blk ' trywrite i.first']), system ([blk ' trywrite i.second']))"
    await '^first [0-9]'
    # 3. A function's guarded port is closed by Ctrl-C itself; the function runs again.
    say "t_rerun_fn (Inf)"
    await 't_rerun_fn: writing on i.fn'
    ctrl_c
    say "printf ('released by the interrupt: %d\n', system ([blk ' trywrite i.fn']))"
    await 'released by the interrupt:'
    say "t_rerun_fn (5); printf ('released at the end: %d\n', system ([blk ' trywrite i.fn']))"
    await 'released at the end:'
    exec 7>&-
    for _ in $(seq 200); do kill -0 $oct_pid 2>/dev/null || break; sleep 0.05; done
    kill -0 $oct_pid 2>/dev/null && fail "Octave did not end at the end of its input"
    cat "$T/out"
    grep -q 'rec returned' "$T/out" && fail "rec returned instead of being interrupted"
    grep -q 'error id: ardnet:ARD_EINTR' "$T/out" || fail "no ARD_EINTR"
    grep -q 'writer held: 0' "$T/out" || fail "Ctrl-C in ard_rec left the writer role held"
    grep -q 'closed port: ardnet:ARD_ESTATE' "$T/out" || fail "a port survived Ctrl-C in ard_rec"
    grep -q 'port usable: 1' "$T/out" || fail "a port declared after the interrupt does not work"
    grep -q 'held again: 1' "$T/out" || fail "the new writer does not hold its connection"
    grep -q 'after clear: 0' "$T/out" || fail "writer lock still held after clear ardnet_mex"
    # A script's ports belong to the session: held until it runs again (or ard_fini, clear).
    grep -q 'held after the interrupt: 6' "$T/out" || fail "the interrupted script's writer"
    grep -q 'octblock read: 20 packets ok' "$T/read.out" || fail "reader: $(cat "$T/read.out")"
    grep -q 'first 0 second 6' "$T/out" || fail "the run with other options kept the first wiring"
    grep -q 'released by the interrupt: 0' "$T/out" || fail "Ctrl-C kept the guarded writer"
    grep -q 't_rerun_fn: done, 5 packets' "$T/out" || fail "the function did not run again"
    grep -q 'released at the end: 0' "$T/out" || fail "the guard did not close at the end"
    grep -q 'already declared\|called twice\|ARD_EBUSY' "$T/out" && fail "a run again was refused"
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
    # Both examples with their plots (t_example.m), headless: arm_state_plot.m reading a 1 kHz
    # arm state at 100 Hz; plot_joint.m on a recording of arm.state and arm.ref. The gnuplot
    # graphics toolkit draws them (octave-cli has no other; scripts/deps.sh installs it).
    command -v gnuplot >/dev/null || {
        echo "SKIP: gnuplot not found (scripts/deps.sh installs gnuplot-nox)"
        exit 77
    }
    export PLOTDIR=$T MCAP=$T/arm.mcap
    "$ARD" record 'arm.*' -o "$MCAP" -n 400 2>"$T/rec.err" &
    rec=$!
    pids+=($rec)
    sleep 0.5
    "$OCTBLOCK" arm arm.state 20000 1000 &
    pids+=($!)
    "$OCTBLOCK" arm arm.ref 20000 1000 &
    pids+=($!)
    wait $rec || fail "ard record: $(cat "$T/rec.err")"
    oct --path "$EXAMPLES" --eval t_example || fail "t_example"
    ;;
*)
    fail "unknown mode"
    ;;
esac
echo "ok ($mode)"
