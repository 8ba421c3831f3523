# ros2: endpoints of ardnet (Cyclone DDS), an optional part: ARD_ROS2 = AUTO (built when
# find_package(CycloneDDS) finds it), ON (an error without it) or OFF. Only the ardnet program
# links DDS (through ardnet_core); libardnet never does. Sets ARD_ROS2_BUILT and
# ARD_ROS2_REASON for the configure summary.
set(ARD_ROS2 AUTO CACHE STRING "ros2: endpoints in ardnet through Cyclone DDS: AUTO, ON or OFF")
set_property(CACHE ARD_ROS2 PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${ARD_ROS2}" _ard_ros2)
if(NOT _ard_ros2 MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ARD_ROS2 must be AUTO, ON or OFF (not '${ARD_ROS2}')")
endif()
set(ARD_ROS2_BUILT OFF)
if(_ard_ros2 STREQUAL "OFF")
  set(ARD_ROS2_REASON "ARD_ROS2=OFF")
else()
  find_package(CycloneDDS QUIET)
  if(CycloneDDS_FOUND AND TARGET CycloneDDS::ddsc)
    set(ARD_ROS2_BUILT ON)
    # Seen by everything that links ardnet_core (the tests, the fuzzers) and by tests/ros2.
    set_target_properties(CycloneDDS::ddsc PROPERTIES IMPORTED_GLOBAL TRUE)
    set(ARD_ROS2_REASON "Cyclone DDS ${CycloneDDS_VERSION}")
  elseif(_ard_ros2 STREQUAL "ON")
    message(FATAL_ERROR "ARD_ROS2=ON needs Cyclone DDS: install cyclonedds-dev "
                        "(and cyclonedds-tools for the tests' idlc)")
  else()
    set(ARD_ROS2_REASON "cyclonedds-dev not found")
  endif()
endif()
message(STATUS "ardnet ros2: endpoints (ARD_ROS2=${ARD_ROS2}): "
               "${ARD_ROS2_BUILT} (${ARD_ROS2_REASON})")

if(ARD_ROS2_BUILT)
  target_sources(ardnet_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dds.c)
  target_link_libraries(ardnet_core PUBLIC CycloneDDS::ddsc)
  # Cyclone's headers use GNU "asm" (the project compiles as ISO C11).
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/dds.c PROPERTIES COMPILE_DEFINITIONS
                                                                         "asm=__asm__")
else()
  target_sources(ardnet_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dds_none.c)
endif()
# For tests/ros2, bench/ros2 and the summary (this file runs in src/ardnet's scope).
set(ARD_ROS2_BUILT ${ARD_ROS2_BUILT} PARENT_SCOPE)
set(ARD_ROS2_REASON "${ARD_ROS2_REASON}" PARENT_SCOPE)
