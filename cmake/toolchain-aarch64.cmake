# Cross build for aarch64 (64-bit ARM, the architecture of most robot controllers) with Debian's
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and libyaml-dev:arm64 (after
# `dpkg --add-architecture arm64`; scripts/deps.sh installs them). The core only:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DARD_TESTS=OFF -DARD_WEB=OFF -DARD_LOG=OFF -DARD_PYTHON=OFF -DARD_OCTAVE=OFF
# Programs run here under qemu-aarch64 (tests/ardnet/ardnet_bigend.sh); for a real controller,
# -DARD_CROSS_STATIC=OFF links them against its shared libraries.
set(ARD_CROSS_ARCH aarch64)
set(ARD_CROSS_TRIPLE aarch64-linux-gnu)
set(ARD_CROSS_DEBARCH arm64)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
