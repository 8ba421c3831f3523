# ard web (docs/web.md): civetweb (Debian's libcivetweb-dev) serves the page, whose assets
# (src/tools/web/) are built into the program. Included when the part ARD_WEB is built
# (cmake/parts.cmake found civetweb.h and the library).
set(WEB_ASSETS ${CMAKE_CURRENT_SOURCE_DIR}/web/index.html ${CMAKE_CURRENT_SOURCE_DIR}/web/app.js
    ${CMAKE_CURRENT_SOURCE_DIR}/web/app.css)
string(REPLACE ";" "|" WEB_ASSET_ARG "${WEB_ASSETS}")
set(WEB_GEN ${CMAKE_CURRENT_BINARY_DIR}/web_assets.c)
add_custom_command(OUTPUT ${WEB_GEN}
  COMMAND ${CMAKE_COMMAND} "-DFILES=${WEB_ASSET_ARG}" -DOUT=${WEB_GEN}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/web/embed.cmake
  DEPENDS ${WEB_ASSETS} ${CMAKE_CURRENT_SOURCE_DIR}/web/embed.cmake
  COMMENT "ard web: page assets" VERBATIM)
target_sources(ard PRIVATE web.c webguard.c ${WEB_GEN})
target_include_directories(ard PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${ARD_INC_CIVETWEB_H})
target_link_libraries(ard PRIVATE ${ARD_LIB_CIVETWEB} pthread)
target_compile_definitions(ard PRIVATE ARD_HAVE_WEB=1)
# The Foxglove WebSocket protocol on the same port: channels, schemas and CDR of src/ros2
# (ardros2.h, linked above), the ones the recorder writes; built with the recorder (ARD_LOG).
if(ARD_HAVE_LOG)
  target_sources(ard PRIVATE foxglove.c)
endif()
