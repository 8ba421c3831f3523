# Cross build for s390x (64-bit, big-endian) with Debian's cross compiler and multiarch
# libraries: gcc-s390x-linux-gnu, libc6-dev-s390x-cross and libyaml-dev:s390x (after
# `dpkg --add-architecture s390x`; scripts/deps.sh installs them). Used by the big-endian test
# (tests/ardnet/bigend/), which runs the programs under qemu-s390x:
#   cmake -S tests/ardnet/bigend -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/s390x.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)
# Headers and libraries of the target only: the cross toolchain's own tree, and the multiarch
# directories of the s390x packages under /usr (lib/s390x-linux-gnu).
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/s390x-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x)
