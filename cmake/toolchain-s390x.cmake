# Cross build for s390x (64-bit, big-endian: the byte-order check of ardnet's wire format) with
# Debian's gcc-s390x-linux-gnu, libc6-dev-s390x-cross and libyaml-dev:s390x (after
# `dpkg --add-architecture s390x`; scripts/deps.sh installs them). The core only:
#   cmake -S . -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x.cmake -DARD_TESTS=OFF \
#         -DARD_WEB=OFF -DARD_LOG=OFF -DARD_PYTHON=OFF -DARD_OCTAVE=OFF
# Programs run here under qemu-s390x (tests/ardnet/ardnet_bigend.sh).
set(ARD_CROSS_ARCH s390x)
set(ARD_CROSS_TRIPLE s390x-linux-gnu)
set(ARD_CROSS_DEBARCH s390x)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
