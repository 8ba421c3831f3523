#!/usr/bin/env bash
# Fails if any C source or header differs from what clang-format (.clang-format) makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find include src tests bench examples -name '*.[ch]')
clang-format --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files clean"
