#!/usr/bin/env bash
# Install what building and testing ardnet needs on Debian 12, when it is missing.
# Runs apt-get only as root and only for packages that are not installed yet.
set -euo pipefail

pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev libcmocka-dev libyaml-dev libzstd-dev zlib1g-dev
      iproute2 nftables openssh-server openssh-client procps util-linux strace psmisc spin clang-format
      python3 python3-dev python3-numpy python3-pytest graphviz libcivetweb-dev chromium curl
      octave liboctave-dev
      # the big-endian peer of tests/ardnet/ardnet_bigend.sh: a cross compiler, its C library,
      # qemu-user to run it, and the s390x libyaml (multiarch, added below)
      gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user libyaml-dev:s390x)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node.js and npm run the independent checkers of the tests (an MCAP reader, a browser driver).
# Any nodejs that brings npm will do (some machines have one from another repository, whose
# package conflicts with Debian's npm): install Debian's only when there is no npm at all.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]} == 0)); then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deps.sh: missing packages: ${missing[*]}; run as root or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if [[ " ${missing[*]} " == *:s390x* ]] && ! dpkg --print-foreign-architectures | grep -qx s390x; then
    dpkg --add-architecture s390x
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
