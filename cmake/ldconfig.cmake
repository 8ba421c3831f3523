# ldconfig.cmake - run at install and uninstall time with ARD_LIBDIR_FULL set to the directory
# that receives (or held) libardnet.so. When that directory is one the dynamic linker searches
# by default (/usr/local/lib on Debian), refresh the linker's cache so that a block built with
# `pkg-config --libs ardnet` runs at once; otherwise say what a block needs instead.
# Skipped when staging into DESTDIR (a package runs ldconfig in its own scripts).
if(NOT "$ENV{DESTDIR}" STREQUAL "")
  return()
endif()
get_filename_component(_ard_libdir "${ARD_LIBDIR_FULL}" REALPATH)
find_program(_ard_ldconfig ldconfig PATHS /sbin /usr/sbin)
if(NOT _ard_ldconfig)
  message(STATUS "ardnet: no ldconfig here; make sure ${_ard_libdir} is searched for libardnet.so")
  return()
endif()
# `ldconfig -v -N -X` lists the directories the linker searches ("DIR: (from FILE:LINE)"),
# without changing anything.
execute_process(COMMAND ${_ard_ldconfig} -v -N -X OUTPUT_VARIABLE _ard_dirs ERROR_QUIET)
string(FIND "\n${_ard_dirs}" "\n${_ard_libdir}:" _ard_at)
if(_ard_at LESS 0)
  if(ARD_UNINSTALLING)
    return()
  endif()
  message(STATUS "ardnet: ${_ard_libdir} is not searched by the dynamic linker: build blocks "
                 "with -Wl,-rpath,${_ard_libdir} or run them with LD_LIBRARY_PATH=${_ard_libdir} "
                 "(docs/install.md)")
  return()
endif()
execute_process(COMMAND ${_ard_ldconfig} RESULT_VARIABLE _ard_rc ERROR_VARIABLE _ard_err)
if(_ard_rc EQUAL 0)
  message(STATUS "ardnet: ran ldconfig (${_ard_libdir} is a system library directory)")
else()
  message(WARNING "ardnet: ldconfig failed (${_ard_err}); run it as root, or blocks built "
                  "against ${_ard_libdir} will not find libardnet.so")
endif()
