#!/usr/bin/env bash
# Install what building and testing ardnet needs on Debian 12, when it is missing.
# Runs apt-get only as root and only for packages that are not installed yet.
set -euo pipefail

pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev libcmocka-dev libyaml-dev libzstd-dev zlib1g-dev
      # the Debian packages (debian/, tests/fresh/packages*); pip install ./python in a venv
      dpkg-dev debhelper dh-python fakeroot lintian python3-venv python3-setuptools python3-wheel
      iproute2 nftables openssh-server openssh-client procps util-linux strace psmisc spin clang-format
      python3 python3-dev python3-numpy python3-pytest graphviz libcivetweb-dev chromium curl
      octave liboctave-dev gnuplot-nox fonts-freefont-otf)
# liblz4-dev: the recording library (part ARD_LOG) reads lz4-compressed chunks.
pkgs+=(liblz4-dev)
# libsodium-dev: ardnet seals its datagrams with libsodium's AEAD (--key; src/ardnet/seal.c).
pkgs+=(libsodium-dev)
# ardnet's ros2: endpoints (ARD_ROS2): Cyclone DDS, its idlc for the tests' DDS peer, and
# xmllint for the ROS 2 package that ard ros2-msgs writes.
pkgs+=(cyclonedds-dev cyclonedds-tools libxml2-utils)
# The tests' second DDS peer, of another vendor: eProsima Fast DDS in C++ (tests/ros2/
# fastdds_peer.cpp) on the code fastddsgen generates; fastddsgen is a Java program.
pkgs+=(libfastrtps-dev libfastcdr-dev fastddsgen default-jre-headless g++)
# openssl: tests/ros2/ros2_secure.sh makes its DDS Security keystore (CAs, certificates, signed
# governance and permissions) with the openssl command.
pkgs+=(openssl)
# gnuplot-nox and fonts-freefont-otf (Octave's fallback font): the tests draw the Octave
# examples' plots headless into PNG files.
# The tests' own checks run /usr/bin/python3 (never the first python3 on PATH) with these modules.
pkgs+=(python3-yaml)
# tests/fresh makes a brand-new Debian 12 root file system with debootstrap.
pkgs+=(debootstrap)
# scripts/soak.sh (the soak_fixed and soak_random tests) computes its intervals with bc.
pkgs+=(bc)
# The big-endian peer of tests/ardnet/ardnet_bigend.sh: a cross compiler, its C library,
# qemu-user to run its programs, and the s390x libyaml (multiarch: the s390x architecture is
# added to dpkg first). Installed in a second step whose failure is reported but not fatal:
# an s390x package can lag behind its amd64 twin on a mirror, and multiarch refuses two
# versions; then every other test still runs and ardnet_bigend names what is missing (it is
# skipped, or fails when CI is set).
cross=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user libyaml-dev:s390x)
# The aarch64 peer of the same test (multiarch architecture arm64).
cross+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross libyaml-dev:arm64)
# The peers' ardnet links libsodium statically too (sealed datagrams).
cross+=(libsodium-dev:s390x libsodium-dev:arm64)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in "${pkgs[@]}"; do
    installed "$p" || missing+=("$p")
done
missing_cross=()
for p in "${cross[@]}"; do
    installed "$p" || missing_cross+=("$p")
done
# Node.js and npm run the independent checkers of the tests (an MCAP reader, a browser driver).
# Any nodejs that brings npm will do (some machines have one from another repository, whose
# package conflicts with Debian's npm): install Debian's only when there is no npm at all.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]} + ${#missing_cross[@]} == 0)); then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deps.sh: missing packages: ${missing[*]} ${missing_cross[*]}; run as root, or: sudo dpkg --add-architecture s390x && sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install -y ${missing[*]} ${missing_cross[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ((${#missing_cross[@]})) && ! dpkg --print-foreign-architectures | grep -qx s390x; then
    dpkg --add-architecture s390x
fi
if ((${#missing_cross[@]})) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
fi
apt-get update -qq
if ((${#missing[@]})); then
    echo "deps.sh: installing ${missing[*]}"
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ((${#missing_cross[@]})); then
    echo "deps.sh: installing ${missing_cross[*]}"
    if ! apt-get install -y -qq --no-install-recommends "${missing_cross[@]}"; then
        echo "deps.sh: WARNING: could not install ${missing_cross[*]}: the s390x and aarch64 peers' test (ardnet_bigend) cannot run (it fails under CI)" >&2
    fi
fi
