#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and tests ardnet in five
# configurations, each with warnings as errors:
#   gcc     release build, every test (the multi-host ones need root)
#   clang   release build of everything; the tests of the library and of the programs
#           (labels lib stress threads ardnet ardstart ardrun tools common) but the long and
#           multi-host ones: the optional parts' and the docs' tests run in gcc and asan
#   asan    gcc with AddressSanitizer + UndefinedBehaviorSanitizer, every test but the model,
#           the soak, the docs' examples and the parts' configure checks
#   tsan    clang with ThreadSanitizer: the threaded library test
#   fuzz    clang libFuzzer targets (ctest label "fuzz"): ardnet datagrams (60 s), type
#           descriptors, --ard* options, ardnet route YAML, ardstart system YAML (45 s each);
#           scripts/fuzz.sh DURATION runs them for longer
# Usage: scripts/test.sh [CONFIG...]   (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

configs=("$@")
((${#configs[@]})) || configs=(gcc clang asan tsan fuzz)
jobs=${ARD_TEST_JOBS:-2}
failed=()

run() {
    local name=$1 cc=$2 ctest_args=$3
    shift 3
    local dir=build-test-$name
    echo "=== $name: configure and build ($cc)"
    mkdir -p "$dir"
    CC=$cc cmake -S . -B "$dir" -DARD_WERROR=ON "$@" >"$dir/configure.log" 2>&1 ||
        { cat "$dir/configure.log"; return 1; }
    cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { cat "$dir/build.log"; return 1; }
    echo "=== $name: test"
    # shellcheck disable=SC2086
    (cd "$dir" && ctest --output-on-failure -j"$jobs" $ctest_args)
}

# Every optional part is forced ON where its tests run (cmake/parts.cmake): a part whose
# dependency is missing stops the configure instead of leaving its tests out unnoticed.
parts=(-DARD_LOG=ON -DARD_WEB=ON -DARD_PYTHON=ON -DARD_OCTAVE=ON -DARD_ROS2=ON)
for c in "${configs[@]}"; do
    case $c in
    gcc) run gcc gcc "-LE fuzz" "${parts[@]}" || failed+=(gcc) ;;
    clang) run clang clang "-L lib|stress|threads|ardnet|ardstart|ardrun|tools|common -LE fuzz|long|root" "${parts[@]}" || failed+=(clang) ;;
    asan) run asan gcc "-LE fuzz|model|soak|docs|parts" -DARD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug "${parts[@]}" || failed+=(asan) ;;
    tsan) run tsan clang "-L threads" -DARD_TSAN=ON || failed+=(tsan) ;;
    fuzz) run fuzz clang "-L fuzz" -DARD_FUZZ=ON || failed+=(fuzz) ;;
    *) echo "test.sh: unknown configuration '$c' (gcc clang asan tsan fuzz)" >&2; exit 100 ;;
    esac
done

if ((${#failed[@]})); then
    echo "test.sh: FAILED in: ${failed[*]}"
    exit 1
fi
echo "test.sh: all configurations passed: ${configs[*]}"
