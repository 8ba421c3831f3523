# install.cmake - install-time steps of the whole tree (included last by the top CMakeLists,
# so that they run after every file is installed), and the `uninstall` target.

# A system prefix (its libdir searched by the dynamic linker): run ldconfig, so that a block
# built with pkg-config runs at once. Another prefix: say what a block needs.
install(CODE "set(ARD_LIBDIR_FULL \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}\")
if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
  set(ARD_LIBDIR_FULL \"${CMAKE_INSTALL_LIBDIR}\")
endif()
include(\"${CMAKE_CURRENT_LIST_DIR}/ldconfig.cmake\")")

# Removes what the last `cmake --install` of this build directory installed.
add_custom_target(uninstall
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/install_manifest.txt
          -P ${CMAKE_CURRENT_LIST_DIR}/uninstall.cmake
  COMMENT "Removing the files listed in install_manifest.txt")

# `deb`: the Debian packages (debian/build.sh).
include(${CMAKE_CURRENT_LIST_DIR}/package.cmake)
