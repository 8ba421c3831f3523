# Tests of libardnet (included by tests/CMakeLists.txt).
#
# Every test picks its own ARD_DOMAIN from its pid and removes its objects, so ctest -j works.
# Tests that need root carry the label "root" and exit 77 (skipped) when not root.

pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

# Packets for the stress test: ARD_STRESS_COUNT 64 KiB packets (>= 10^6 in the normal build),
# 10x as many 1 KiB and 30x as many 64 B packets (they are cheap). The sanitizer build checks
# every access and is several times slower, so it sends fewer.
if(ARD_SANITIZE)
  set(ARD_STRESS_DEFAULT 300000)
  set(ARD_STRESS_RESTARTS_DEFAULT 200)
else()
  set(ARD_STRESS_DEFAULT 1000000)
  set(ARD_STRESS_RESTARTS_DEFAULT 500)
endif()
# Override with -DARD_STRESS_COUNT=N / -DARD_STRESS_RESTARTS=K.
if(NOT DEFINED ARD_STRESS_COUNT)
  set(ARD_STRESS_COUNT ${ARD_STRESS_DEFAULT})
endif()
if(NOT DEFINED ARD_STRESS_RESTARTS)
  set(ARD_STRESS_RESTARTS ${ARD_STRESS_RESTARTS_DEFAULT})
endif()

function(ard_lib_test name)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE ardnet_static PkgConfig::CMOCKA)
  # the internal declarations (src/common/ard_common.h) the library's tests check too
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src/common)
endfunction()

foreach(t test_types test_options test_port test_conn test_period test_realtime test_stress
          test_threads test_segment test_loan test_view)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${t}.c)
    ard_lib_test(${t})
  endif()
endforeach()

if(TARGET test_types)
  add_test(NAME lib.types COMMAND test_types)
  set_tests_properties(lib.types PROPERTIES TIMEOUT 60 LABELS "lib")
endif()

if(TARGET test_options)
  add_test(NAME lib.options COMMAND test_options)
  set_tests_properties(lib.options PROPERTIES TIMEOUT 120 LABELS "lib")
endif()

if(TARGET test_port)
  add_test(NAME lib.port COMMAND test_port)
  set_tests_properties(lib.port PROPERTIES TIMEOUT 300 LABELS "lib")
  add_test(NAME lib.port_root COMMAND test_port root)
  set_tests_properties(lib.port_root PROPERTIES TIMEOUT 120 LABELS "lib;root"
                       SKIP_RETURN_CODE 77)
endif()

foreach(t conn period segment loan view)
  if(TARGET test_${t})
    add_test(NAME lib.${t} COMMAND test_${t})
    set_tests_properties(lib.${t} PROPERTIES TIMEOUT 60 LABELS "lib")
  endif()
endforeach()

# The realtime stamp of a send: its derivation against a model of the kernel's clocks, and
# (root) on the real clock while it is slewed and stepped: alone (RUN_SERIAL), since the steps
# move every process's CLOCK_REALTIME for a moment (undone before the test ends).
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_rtclock.c)
  ard_lib_test(test_rtclock)
  target_link_libraries(test_rtclock PRIVATE ardnet_internal Threads::Threads)
  target_include_directories(test_rtclock PRIVATE ${PROJECT_SOURCE_DIR}/src/lib)
  add_test(NAME lib.rtclock COMMAND test_rtclock)
  set_tests_properties(lib.rtclock PROPERTIES TIMEOUT 60 LABELS "lib")
  add_test(NAME lib.rtclock_root COMMAND test_rtclock root)
  set_tests_properties(lib.rtclock_root PROPERTIES TIMEOUT 60 LABELS "lib;root" RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77)
endif()

if(TARGET test_realtime)
  add_test(NAME lib.realtime COMMAND test_realtime)
  set_tests_properties(lib.realtime PROPERTIES TIMEOUT 120 LABELS "lib")
endif()

if(TARGET test_stress)
  # One test per packet size.
  math(EXPR n64 "${ARD_STRESS_COUNT} * 30")
  math(EXPR n1k "${ARD_STRESS_COUNT} * 10")
  foreach(pair "64:${n64}" "1024:${n1k}" "65536:${ARD_STRESS_COUNT}")
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 size)
    list(GET pair 1 n)
    add_test(NAME lib.stress_${size}
             COMMAND test_stress --size ${size} --count ${n} --readers 3 --timeout 840)
    set_tests_properties(lib.stress_${size} PROPERTIES TIMEOUT 900 LABELS "lib;stress")
  endforeach()
  # The writer SIGKILLed at random moments and restarted; kills land in the middle of a
  # send most often with big packets.
  foreach(size 64 65536)
    add_test(NAME lib.stress_kill_${size}
             COMMAND test_stress --size ${size} --restarts ${ARD_STRESS_RESTARTS}
                     --count 100000 --readers 3 --timeout 840)
    set_tests_properties(lib.stress_kill_${size} PROPERTIES TIMEOUT 900 LABELS "lib;stress")
  endforeach()
endif()

if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh)
  if(ARD_SANITIZE)
    set(ARD_INSTALL_TEST_CFLAGS "-fsanitize=address,undefined")
  else()
    set(ARD_INSTALL_TEST_CFLAGS "")
  endif()
  add_test(NAME lib.install
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_C_COMPILER} "${ARD_INSTALL_TEST_CFLAGS}")
  set_tests_properties(lib.install PROPERTIES TIMEOUT 300 LABELS "lib")
  # Installs of the build tree write its install_manifest.txt: one at a time.
  set_tests_properties(lib.install PROPERTIES RESOURCE_LOCK install_manifest)
endif()

# Header fields of a live connection rewritten to hostile values (white-box: uses ardi.h).
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_hostile.c)
  ard_lib_test(test_hostile)
  target_link_libraries(test_hostile PRIVATE ardnet_internal)
  target_include_directories(test_hostile PRIVATE ${PROJECT_SOURCE_DIR}/src/lib)
  add_test(NAME lib.hostile COMMAND test_hostile)
  set_tests_properties(lib.hostile PROPERTIES TIMEOUT 600 LABELS "lib")
endif()

# Threads of one process on one connection; scripts/test.sh also runs it under ThreadSanitizer.
if(TARGET test_threads)
  target_link_libraries(test_threads PRIVATE Threads::Threads)
  add_test(NAME lib.threads COMMAND test_threads)
  set_tests_properties(lib.threads PROPERTIES TIMEOUT 300 LABELS "lib;threads")
endif()
