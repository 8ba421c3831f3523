# The Debian packages (debian/): package_debs builds them on this machine and checks their file
# lists, dependencies and lintian in <build>/deb-test (label package, one to four minutes,
# about one once built);
# fresh_packages installs, uses and purges them in a brand-new Debian 12 (label fresh, root,
# about 5 minutes: scripts/fresh.sh). Both build their own tree with Debian's compiler (gcc)
# and flags, whatever this build's: only a plain gcc build runs them.
if(NOT (ARD_SANITIZE OR ARD_TSAN) AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  add_test(NAME package_debs
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packages_quick.sh ${PROJECT_BINARY_DIR}/deb-test)
  set_tests_properties(package_debs PROPERTIES LABELS "package" TIMEOUT 900 SKIP_RETURN_CODE 77
                                               COST 200)
  add_test(NAME fresh_packages COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packages.sh)
  set_tests_properties(fresh_packages PROPERTIES LABELS "fresh;root" TIMEOUT 1800
                                                 SKIP_RETURN_CODE 77 COST 450)
endif()
