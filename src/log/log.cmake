# Recording code (src/log/: MCAP writer and reader, include/ardnet_log.h), built into libardnet
# itself so that its errors share the library's thread-local detail (ard_errdetail) and one
# library serves C programs and the Python binding. Included by src/lib/CMakeLists.txt twice:
# first to add the sources, then (ARD_LOG_LINK) to link zstd and zlib to the built targets.
if(NOT ARD_LOG_LINK)
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  find_package(ZLIB REQUIRED)
  foreach(f mcap.c msgdef.c cdr.c chunk.c writer.c reader.c)
    list(APPEND ARD_LIB_SOURCES ${CMAKE_CURRENT_LIST_DIR}/${f})
  endforeach()
else()
  target_include_directories(ardnet_objects PRIVATE ${PROJECT_SOURCE_DIR}/src/log)
  target_link_libraries(ardnet_objects PRIVATE PkgConfig::ZSTD ZLIB::ZLIB)
  target_link_libraries(ardnet PRIVATE PkgConfig::ZSTD ZLIB::ZLIB)
  # Installed static users link -lzstd -lz by name (the .pc file says the same).
  target_link_libraries(ardnet_static PUBLIC "$<BUILD_INTERFACE:PkgConfig::ZSTD;ZLIB::ZLIB>"
                        "$<INSTALL_INTERFACE:zstd;z>")
  install(FILES ${PROJECT_SOURCE_DIR}/include/ardnet_log.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
