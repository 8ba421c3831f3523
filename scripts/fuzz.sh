#!/usr/bin/env bash
# Run the libFuzzer targets (clang, -DARD_FUZZ=ON).
#
#   scripts/fuzz.sh DURATION [TARGET...]
#       Build build-fuzz/ and run each target (default: all of types options routes system
#       datagram) for DURATION seconds, $ARD_FUZZ_JOBS at a time (default 1). Inputs found go
#       to build-fuzz/fuzz/corpus/TARGET (kept between runs, seeded from tests/fuzz/corpus/),
#       logs to build-fuzz/fuzz/TARGET.log, crashes to build-fuzz/fuzz/crash/TARGET/.
#       Prints executions, coverage and crashes per target; exits 1 if a target failed.
#   scripts/fuzz.sh --one BINARY SEEDS SECONDS
#       Run one target on a scratch copy of the seed directory (what ctest's "fuzz" label runs).
#
# A crash is replayed with: build-fuzz/tests/fuzz/fuzz_TARGET CRASH_FILE
set -euo pipefail

# Options for every run: stderr of the code under test is dropped (libFuzzer and the
# sanitizers keep theirs), 60 s for one input is a hang (every input here takes well under a
# millisecond; less than that was seen to fire when the shared machine stalled), 2 GB is a leak.
common=(-timeout=60 -rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1)

one() {
    local bin=$1 seeds=$2 secs=$3
    work=$(mktemp -d /tmp/ardfuzz.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/corpus" "$work/crash"
    local rc=0
    "$bin" "${common[@]}" -max_total_time="$secs" -artifact_prefix="$work/crash/" \
        "$work/corpus" "$seeds" || rc=$?
    if ((rc != 0)) || [ -n "$(ls "$work/crash")" ]; then
        local f
        for f in "$work"/crash/*; do
            [ -e "$f" ] || continue
            echo "fuzz: $(basename "$bin") failed on this input (base64):"
            base64 -w 100 "$f"
        done
        exit 1
    fi
}

if [ "${1:-}" = --one ]; then
    [ $# = 4 ] || { echo "usage: $0 --one BINARY SEEDS SECONDS" >&2; exit 100; }
    one "$2" "$3" "$4"
    exit 0
fi

[ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]] || { echo "usage: $0 DURATION [TARGET...]" >&2; exit 100; }
duration=$1
shift
targets=("$@")
((${#targets[@]})) || targets=(types options routes system datagram)
cd "$(dirname "$0")/.."
src=$PWD
build=build-fuzz
CC=clang cmake -S . -B "$build" -DARD_FUZZ=ON -DARD_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target fuzz_types fuzz_options fuzz_routes fuzz_system \
    ardnet_fuzz_datagram ardnet_test_bad_datagrams >/dev/null
out=$build/fuzz
mkdir -p "$out"

run_target() {
    local t=$1 bin seeds extra=()
    case $t in
    types | options | routes | system)
        bin=$build/tests/fuzz/fuzz_$t
        seeds=$src/tests/fuzz/corpus/$t
        ;;
    datagram)
        bin=$build/tests/ardnet/ardnet_fuzz_datagram
        seeds=$out/seeds-datagram
        rm -rf "$seeds"
        mkdir -p "$seeds"
        "$build/tests/ardnet/ardnet_test_bad_datagrams" --write-corpus "$seeds" >/dev/null
        extra=(-max_len=70000)
        ;;
    *)
        echo "fuzz.sh: unknown target '$t' (types options routes system datagram)" >&2
        return 100
        ;;
    esac
    mkdir -p "$out/corpus/$t" "$out/crash/$t"
    local rc=0
    "$bin" "${common[@]}" ${extra[@]+"${extra[@]}"} -max_total_time="$duration" \
        -artifact_prefix="$out/crash/$t/" "$out/corpus/$t" "$seeds" >"$out/$t.log" 2>&1 || rc=$?
    echo "$rc" >"$out/$t.rc"
}

summary() {
    local t=$1 log=$out/$1.log execs cov ft crashes
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1)
    crashes=$(find "$out/crash/$t" -type f | wc -l)
    printf '%-9s rc=%-3s executions=%-10s %s  crash files: %s\n' "$t" "$(cat "$out/$t.rc")" \
        "${execs:-?}" "${cov:-?}" "$crashes"
}

jobs=${ARD_FUZZ_JOBS:-1}
pending=()
for t in "${targets[@]}"; do
    echo "fuzz: $t for ${duration}s"
    run_target "$t" &
    pending+=($!)
    if ((${#pending[@]} >= jobs)); then
        wait "${pending[0]}" || true
        pending=("${pending[@]:1}")
    fi
done
wait || true

failed=0
for t in "${targets[@]}"; do
    summary "$t"
    [ "$(cat "$out/$t.rc")" = 0 ] || failed=1
done
exit $failed
