# The installed package: `cmake --install` puts the libraries, the public headers, the
# `geolake` program, a CMake package (find_package(geolake) -> geolake::geolake and
# geolake::<module>) and geolake.pc under the prefix. docs/api.md says how to use them;
# scripts/check-install.sh builds examples/ against an installed copy both ways.
#
# Every module is a static library, so a consumer links what the modules link privately too
# (sqlite3, zstd, GEOS, ...): the package config finds each of those packages again, and
# geolake.pc requires them. Both lists are derived from the modules' own link libraries below,
# so a dependency added to a module's DEPS reaches the package without a second edit; one this
# file does not know stops the configure step with a message instead of breaking consumers.
include(CMakePackageConfigHelpers)

set(GEOLAKE_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/geolake)

# target -> the config file's call that defines it | the pkg-config modules that provide it.
# ("-" = nothing for pkg-config: header-only or linked by name below.)
set(_geolake_dep_Threads::Threads "find_dependency(Threads)|-")
set(_geolake_dep_fmt::fmt "find_dependency(fmt)|fmt")
set(_geolake_dep_nlohmann_json::nlohmann_json "find_dependency(nlohmann_json 3.10)|nlohmann_json")
set(_geolake_dep_simdjson::simdjson "find_dependency(simdjson)|simdjson")
set(_geolake_dep_GEOS::geos_c "find_dependency(GEOS 3.11)|geos")
set(_geolake_dep_PROJ::proj "find_dependency(PROJ)|proj")
set(_geolake_dep_GDAL::GDAL "find_dependency(GDAL)|gdal")
set(_geolake_dep_SQLite::SQLite3 "find_dependency(SQLite3)|sqlite3")
set(_geolake_dep_ZLIB::ZLIB "find_dependency(ZLIB)|zlib")
set(_geolake_dep_Snappy::snappy "find_dependency(Snappy)|snappy")
set(_geolake_dep_TBB::tbb "find_dependency(TBB)|tbb")
set(_geolake_dep_PostgreSQL::PostgreSQL "find_dependency(PostgreSQL)|libpq")
set(_geolake_dep_PkgConfig::ZSTD "pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)|libzstd")
set(_geolake_dep_PkgConfig::LZ4 "pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)|liblz4")
set(_geolake_dep_PkgConfig::BROTLI
    "pkg_check_modules(BROTLI REQUIRED IMPORTED_TARGET libbrotlidec libbrotlienc)|libbrotlidec libbrotlienc")
set(_geolake_dep_PkgConfig::XXHASH
    "pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)|libxxhash")
set(_geolake_dep_PkgConfig::CAIRO "pkg_check_modules(CAIRO REQUIRED IMPORTED_TARGET cairo)|cairo")

# Our own helper targets that modules link: exported with them.
set(_geolake_helpers geolake_s2 geolake_gdal_api)
set_target_properties(geolake_s2 PROPERTIES EXPORT_NAME s2_system)
set_target_properties(geolake_gdal_api PROPERTIES EXPORT_NAME gdal_loader)
install(TARGETS ${_geolake_helpers} EXPORT geolakeTargets)

get_property(_geolake_modules GLOBAL PROPERTY GEOLAKE_INSTALLED_MODULES)
set(_geolake_find_calls "")
set(_geolake_pc_requires "")
foreach(_module ${_geolake_modules})
  get_target_property(_type geolake_${_module} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_libs geolake_${_module} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(_libs geolake_${_module} LINK_LIBRARIES)
  endif()
  foreach(_lib ${_libs})
    if(NOT _lib MATCHES "::" OR _lib MATCHES "^geolake::|^\\$<")
      continue()  # our own modules and build-tree-only generator expressions
    endif()
    if(NOT DEFINED _geolake_dep_${_lib})
      message(FATAL_ERROR "geolake_${_module} links ${_lib}: say in cmake/GeolakePackage.cmake "
                          "how a consumer of the installed package finds it")
    endif()
    string(REPLACE "|" ";" _entry "${_geolake_dep_${_lib}}")
    list(GET _entry 0 _call)
    list(GET _entry 1 _pc)
    list(APPEND _geolake_find_calls "${_call}")
    if(NOT _pc STREQUAL "-")
      list(APPEND _geolake_pc_requires ${_pc})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _geolake_find_calls)
list(REMOVE_DUPLICATES _geolake_pc_requires)
list(JOIN _geolake_find_calls "\n" GEOLAKE_FIND_DEPENDENCIES)
string(REPLACE ";" " " GEOLAKE_PC_REQUIRES "${_geolake_pc_requires}")

install(EXPORT geolakeTargets NAMESPACE geolake:: DESTINATION ${GEOLAKE_CMAKE_INSTALL_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/geolakeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/geolakeConfig.cmake
                              INSTALL_DESTINATION ${GEOLAKE_CMAKE_INSTALL_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/geolakeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/geolakeConfig.cmake
              ${PROJECT_BINARY_DIR}/geolakeConfigVersion.cmake
        DESTINATION ${GEOLAKE_CMAKE_INSTALL_DIR})

# geolake.pc: the module libraries from the top of the module order to the bottom (a static
# archive must come before the archives it uses), then what no .pc file provides.
get_property(_geolake_archives GLOBAL PROPERTY GEOLAKE_INSTALLED_ARCHIVES)
list(REVERSE _geolake_archives)
set(GEOLAKE_PC_LIBS "")
foreach(_archive ${_geolake_archives})
  string(APPEND GEOLAKE_PC_LIBS " -l${_archive}")
endforeach()
get_filename_component(_s2_dir ${S2_LIBRARY} DIRECTORY)
string(APPEND GEOLAKE_PC_LIBS " -L${_s2_dir} -ls2 -pthread")
if(CMAKE_DL_LIBS)
  string(APPEND GEOLAKE_PC_LIBS " -l${CMAKE_DL_LIBS}")
endif()
file(RELATIVE_PATH GEOLAKE_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/geolake.pc.in ${PROJECT_BINARY_DIR}/geolake.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/geolake.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
