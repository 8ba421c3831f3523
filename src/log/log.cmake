# Recording code (src/log/: MCAP writer and reader, include/ardnet_log.h), built into libardnet
# itself so that its errors share the library's thread-local detail (ard_errdetail) and one
# library serves C programs and the Python binding. Included by src/lib/CMakeLists.txt twice:
# first to add the sources, then (ARD_LOG_LINK) to link zstd and zlib to the built targets.
if(NOT ARD_LOG_LINK)
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  find_package(ZLIB REQUIRED)
  pkg_check_modules(LZ4 IMPORTED_TARGET liblz4) # optional: lz4 chunks are read when found
  # For what links libardnet.a by hand (octave/, the .pc file's Libs.private).
  if(LZ4_FOUND)
    set(ARD_LOG_LZ4_LIB "-llz4" CACHE INTERNAL "liblz4 for static users of libardnet")
  else()
    set(ARD_LOG_LZ4_LIB "" CACHE INTERNAL "liblz4 for static users of libardnet")
  endif()
  foreach(f mcap.c msgdef.c cdr.c chunk.c writer.c reader.c)
    list(APPEND ARD_LIB_SOURCES ${CMAKE_CURRENT_LIST_DIR}/${f})
  endforeach()
else()
  target_include_directories(ardnet_objects PRIVATE ${PROJECT_SOURCE_DIR}/src/log)
  target_link_libraries(ardnet_objects PRIVATE PkgConfig::ZSTD ZLIB::ZLIB)
  target_link_libraries(ardnet PRIVATE PkgConfig::ZSTD ZLIB::ZLIB)
  if(LZ4_FOUND)
    target_compile_definitions(ardnet_objects PRIVATE ARD_HAVE_LZ4=1)
    target_link_libraries(ardnet_objects PRIVATE PkgConfig::LZ4)
    target_link_libraries(ardnet PRIVATE PkgConfig::LZ4)
    target_link_libraries(ardnet_static PUBLIC "$<BUILD_INTERFACE:PkgConfig::LZ4>"
                          "$<INSTALL_INTERFACE:lz4>")
  endif()
  # Installed static users link -lzstd -lz by name (the .pc file says the same).
  target_link_libraries(ardnet_static PUBLIC "$<BUILD_INTERFACE:PkgConfig::ZSTD;ZLIB::ZLIB>"
                        "$<INSTALL_INTERFACE:zstd;z>")
  install(FILES ${PROJECT_SOURCE_DIR}/include/ardnet_log.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
