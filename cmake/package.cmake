# package.cmake - `cmake --build build --target deb`: the Debian packages of this tree
# (debian/, built by dpkg-buildpackage in a copy of the tree, see debian/build.sh) into
# <build>/deb. ARD_DEB_PROFILES (e.g. "nopython;pkg.ardnet.nooctave") leaves parts out.
set(ARD_DEB_PROFILES "" CACHE STRING
    "Debian build profiles of the deb target: nopython pkg.ardnet.nooctave pkg.ardnet.nolog pkg.ardnet.noweb")
add_custom_target(deb
  COMMAND sh ${PROJECT_SOURCE_DIR}/debian/build.sh ${PROJECT_BINARY_DIR}/deb ${ARD_DEB_PROFILES}
  COMMENT "Debian packages into ${PROJECT_BINARY_DIR}/deb (debian/build.sh)"
  USES_TERMINAL VERBATIM)
