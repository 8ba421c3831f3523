# ard web (docs/web.md), all of it in this folder: civetweb (Debian's libcivetweb-dev) serves
# the page, whose assets (index.html, app.js, app.css) are built into the program. Included
# when the part ARD_WEB is built (cmake/parts.cmake found civetweb.h and the library).
set(WEB_DIR ${CMAKE_CURRENT_LIST_DIR})
set(WEB_ASSETS ${WEB_DIR}/index.html ${WEB_DIR}/app.js ${WEB_DIR}/app.css)
string(REPLACE ";" "|" WEB_ASSET_ARG "${WEB_ASSETS}")
set(WEB_GEN ${CMAKE_CURRENT_BINARY_DIR}/web_assets.c)
add_custom_command(OUTPUT ${WEB_GEN}
  COMMAND ${CMAKE_COMMAND} "-DFILES=${WEB_ASSET_ARG}" -DOUT=${WEB_GEN}
          -P ${WEB_DIR}/embed.cmake
  DEPENDS ${WEB_ASSETS} ${WEB_DIR}/embed.cmake
  COMMENT "ard web: page assets" VERBATIM)
target_sources(ard PRIVATE ${WEB_DIR}/web.c ${WEB_DIR}/hub.c ${WEB_DIR}/webguard.c ${WEB_GEN})
target_include_directories(ard PRIVATE ${WEB_DIR} ${ARD_INC_CIVETWEB_H})
target_link_libraries(ard PRIVATE ${ARD_LIB_CIVETWEB} pthread)
target_compile_definitions(ard PRIVATE ARD_HAVE_WEB=1)
# The Foxglove WebSocket protocol on the same port: channels, schemas and CDR of src/ros2
# (ardros2.h, linked above), the ones the recorder writes; built with the recorder (ARD_LOG).
if(ARD_HAVE_LOG)
  target_sources(ard PRIVATE ${WEB_DIR}/foxglove.c)
endif()
