# ros2: endpoints of ardnet (Cyclone DDS): the optional part ARD_ROS2, declared with the other
# parts in the top CMakeLists.txt (cmake/parts.cmake). Only the ardnet program links DDS and the
# ROS 2 representation (src/ros2: CDR, names, .msg text; through ardnet_core); libardnet never
# does.
# ARD_ROS2_BUILT is what tests/ros2 and bench/ros2 look at.
set(ARD_ROS2_BUILT ${ARD_HAVE_ROS2})
if(ARD_ROS2_BUILT)
  target_sources(ardnet_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dds.c
                                     ${CMAKE_CURRENT_LIST_DIR}/dds_security.c)
  target_link_libraries(ardnet_core PUBLIC CycloneDDS::ddsc ardros2 ${CMAKE_DL_LIBS})
  # Cyclone's headers use GNU "asm" (the project compiles as ISO C11).
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/dds.c ${CMAKE_CURRENT_LIST_DIR}/dds_security.c
                              PROPERTIES COMPILE_DEFINITIONS "asm=__asm__")
else()
  target_sources(ardnet_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dds_none.c)
endif()
set(ARD_ROS2_BUILT ${ARD_ROS2_BUILT} PARENT_SCOPE)
