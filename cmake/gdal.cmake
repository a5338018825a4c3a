find_package(GDAL REQUIRED)  # Debian libgdal-dev: GDAL::GDAL

# geolake_gdal_api: GDAL's headers and the soname to dlopen, without linking libgdal: geolake
# loads GDAL on first use (src/geolake/sources/gdal_api.h), so commands that never need it do
# not pay for binding its ~120 libraries at start. Code that calls GDAL directly (tests writing
# fixtures, bench tools) links GDAL::GDAL as before.
# CMake's FindGDAL gives the library's path (libgdal.so, a link for the linker); the loader
# wants the soname recorded in it (libgdal.so.32), which objdump reads.
get_target_property(_gdal_location GDAL::GDAL IMPORTED_LOCATION)
execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${_gdal_location} OUTPUT_VARIABLE _gdal_headers
                RESULT_VARIABLE _gdal_objdump_result)
string(REGEX MATCH "SONAME +([^ \n]+)" _gdal_soname_line "${_gdal_headers}")
set(GEOLAKE_GDAL_SONAME "${CMAKE_MATCH_1}")
if(NOT _gdal_objdump_result EQUAL 0 OR NOT GEOLAKE_GDAL_SONAME)
  message(FATAL_ERROR "cannot read the soname of ${_gdal_location} (objdump: ${CMAKE_OBJDUMP})")
endif()
message(STATUS "GDAL is loaded at run time as ${GEOLAKE_GDAL_SONAME}")
add_library(geolake_gdal_api INTERFACE)
# Headers and soname matter only to our own sources; the installed package (GeolakePackage.cmake)
# keeps just the link to libdl, so a consumer needs no GDAL development files.
target_include_directories(geolake_gdal_api SYSTEM INTERFACE
                           $<BUILD_INTERFACE:$<TARGET_PROPERTY:GDAL::GDAL,INTERFACE_INCLUDE_DIRECTORIES>>)
target_compile_definitions(geolake_gdal_api INTERFACE
                           $<BUILD_INTERFACE:GEOLAKE_GDAL_SONAME="${GEOLAKE_GDAL_SONAME}">)
target_link_libraries(geolake_gdal_api INTERFACE ${CMAKE_DL_LIBS})
