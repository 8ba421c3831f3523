# cross.cmake - what the toolchain files cmake/toolchain-<arch>.cmake share: Debian's cross
# compiler <triple>-gcc and the target's multiarch libraries (libyaml-dev:<debian-arch> after
# `dpkg --add-architecture <debian-arch>`), found under /usr/<triple> and /usr/lib/<triple>.
# The toolchain file sets ARD_CROSS_ARCH (CMAKE_SYSTEM_PROCESSOR), ARD_CROSS_TRIPLE and
# ARD_CROSS_DEBARCH, then includes this file.
#
# The project's programs (ardnet, ardstart, ardkill, ardrun, ard: what links ardnet_internal)
# are linked statically unless -DARD_CROSS_STATIC=OFF: qemu-user (the tests' way to run them on
# this machine) aborts dynamically linked s390x programs before main. The shared libraries and
# the example blocks linked with them are built as for the target.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${ARD_CROSS_ARCH})

set(_ard_install "apt-get install gcc-${ARD_CROSS_TRIPLE} libc6-dev-${ARD_CROSS_DEBARCH}-cross")
set(_ard_multiarch "dpkg --add-architecture ${ARD_CROSS_DEBARCH} && apt-get update && "
                   "apt-get install libyaml-dev:${ARD_CROSS_DEBARCH}")
string(CONCAT _ard_multiarch ${_ard_multiarch})
# The compiler is looked for where a shell would run it (PATH).
find_program(ARD_CROSS_CC ${ARD_CROSS_TRIPLE}-gcc PATHS ENV PATH NO_DEFAULT_PATH)
if(NOT ARD_CROSS_CC)
  unset(ARD_CROSS_CC CACHE)
  message(FATAL_ERROR "${CMAKE_TOOLCHAIN_FILE}: the ${ARD_CROSS_ARCH} cross compiler "
                      "${ARD_CROSS_TRIPLE}-gcc is not installed (${_ard_install})")
endif()
if(NOT EXISTS /usr/${ARD_CROSS_TRIPLE}/include/stdio.h)
  message(FATAL_ERROR "${CMAKE_TOOLCHAIN_FILE}: the ${ARD_CROSS_ARCH} C library headers "
                      "are not installed (apt-get install libc6-dev-${ARD_CROSS_DEBARCH}-cross)")
endif()
if(NOT EXISTS /usr/lib/${ARD_CROSS_TRIPLE}/pkgconfig/yaml-0.1.pc)
  message(FATAL_ERROR "${CMAKE_TOOLCHAIN_FILE}: libyaml for ${ARD_CROSS_ARCH} is not "
                      "installed (${_ard_multiarch})")
endif()
set(CMAKE_C_COMPILER ${ARD_CROSS_CC})
set(CMAKE_LIBRARY_ARCHITECTURE ${ARD_CROSS_TRIPLE})

# Headers and libraries of the target only: the cross toolchain's own tree, and the multiarch
# directories of the target's packages under /usr (lib/<triple>).
set(CMAKE_FIND_ROOT_PATH /usr/${ARD_CROSS_TRIPLE} /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${ARD_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
find_program(ARD_CROSS_QEMU qemu-${ARD_CROSS_ARCH})
if(ARD_CROSS_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ARD_CROSS_QEMU})
endif()

set(ARD_CROSS_STATIC ON CACHE BOOL "Link the cross-built programs statically (qemu-user)")
