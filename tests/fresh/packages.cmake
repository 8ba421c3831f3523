# The Debian packages (debian/): package.debs builds them on this machine and checks their
# file lists, dependencies and lintian (label package, about a minute, less once built);
# fresh.packages installs, uses and purges them in a brand-new Debian 12 (label fresh, root,
# about 5 minutes: scripts/fresh.sh).
add_test(NAME package.debs
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packages_quick.sh ${PROJECT_BINARY_DIR}/deb)
set_tests_properties(package.debs PROPERTIES LABELS "package" TIMEOUT 900 SKIP_RETURN_CODE 77)
add_test(NAME fresh.packages COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packages.sh)
set_tests_properties(fresh.packages PROPERTIES LABELS "fresh" TIMEOUT 1800 SKIP_RETURN_CODE 77)
