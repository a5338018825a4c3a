# geolake_module(NAME [NO_INSTALL] [DEPS targets...] [PRIVATE_DEPS targets...] [EXCLUDE regex])
#
# One CMake library per folder of src/geolake: every *.cc in the folder (recursively) except
# tests, benchmarks and fuzz targets becomes geolake_<NAME> (alias geolake::<NAME>); every
# *_test.cc becomes one test executable geolake_<NAME>_test, registered with ctest under the
# label `unit`, and the *_slow_test.cc files one geolake_<NAME>_slow_test under the label `slow`.
# Unless NO_INSTALL, the library joins the `geolakeTargets` export set (as geolake::<NAME> in
# the installed CMake package) and its public headers are installed under
# <includedir>/geolake/<folder>/: every *.h except *_internal.h, test helpers and the wrappers
# that include a third-party header (gdal_api.h), which never leave the build tree.
# After the call, GEOLAKE_MODULE_SCOPE (in the caller's scope) is PUBLIC for a library with
# sources and INTERFACE for a header-only one, for the caller's own target_* calls.
function(geolake_module name)
  cmake_parse_arguments(M "NO_INSTALL" "EXCLUDE" "DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  file(GLOB_RECURSE all_cc CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(M_EXCLUDE)
    list(FILTER all_cc EXCLUDE REGEX "${M_EXCLUDE}")
  endif()
  set(srcs ${all_cc})
  list(FILTER srcs EXCLUDE REGEX "(_test|_benchmark|_fuzz)\\.cc$")
  set(tests ${all_cc})
  list(FILTER tests INCLUDE REGEX "_test\\.cc$")

  set(target geolake_${name})
  # Includes are rooted at src/ in the build tree and at <includedir> once installed.
  set(include_dirs $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
                   $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(srcs)
    add_library(${target} STATIC ${srcs})
    target_include_directories(${target} PUBLIC ${include_dirs})
    # Warnings are ours to enforce, not a consumer's: geolake_warnings stays in the build tree.
    target_link_libraries(${target} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS}
                          $<BUILD_INTERFACE:geolake_warnings>)
    set(GEOLAKE_MODULE_SCOPE PUBLIC PARENT_SCOPE)
  else()
    set(GEOLAKE_MODULE_SCOPE INTERFACE PARENT_SCOPE)
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${include_dirs})
    target_link_libraries(${target} INTERFACE ${M_DEPS})
  endif()
  add_library(geolake::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  if(NOT M_NO_INSTALL)
    install(TARGETS ${target} EXPORT geolakeTargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${folder}
            FILES_MATCHING PATTERN "*.h"
            PATTERN "*_internal.h" EXCLUDE
            PATTERN "testing.h" EXCLUDE
            PATTERN "*_testing.h" EXCLUDE
            PATTERN "*_test_util.h" EXCLUDE
            PATTERN "test_*.h" EXCLUDE
            PATTERN "gdal_api.h" EXCLUDE)
    set_property(GLOBAL APPEND PROPERTY GEOLAKE_INSTALLED_MODULES ${name})
    if(srcs)
      set_property(GLOBAL APPEND PROPERTY GEOLAKE_INSTALLED_ARCHIVES ${target})
    endif()
  endif()

  # libFuzzer targets: foo_fuzz.cc -> geolake_foo_fuzz, seeded from tests/data/fuzz/foo/ and
  # run for a fixed time by ctest (label `fuzz`) in the clang-built `fuzz` preset.
  if(GEOLAKE_BUILD_FUZZERS)
    set(fuzzers ${all_cc})
    list(FILTER fuzzers INCLUDE REGEX "_fuzz\\.cc$")
    foreach(fuzz_src ${fuzzers})
      get_filename_component(fuzz_name ${fuzz_src} NAME_WE)
      string(REGEX REPLACE "_fuzz$" "" corpus_name ${fuzz_name})
      add_executable(geolake_${fuzz_name} ${fuzz_src})
      target_link_libraries(geolake_${fuzz_name} PRIVATE ${target})
      target_link_options(geolake_${fuzz_name} PRIVATE -fsanitize=fuzzer)
      add_dependencies(geolake_fuzzers geolake_${fuzz_name})
      add_test(NAME fuzz.${corpus_name}
               COMMAND ${PROJECT_SOURCE_DIR}/scripts/run-fuzzer.sh $<TARGET_FILE:geolake_${fuzz_name}>
                       ${PROJECT_SOURCE_DIR}/tests/data/fuzz/${corpus_name} ${GEOLAKE_FUZZ_SECONDS})
      set_tests_properties(fuzz.${corpus_name} PROPERTIES LABELS fuzz)
    endforeach()
  endif()

  # Tests: *_test.cc -> ${target}_test (label unit), *_slow_test.cc -> ${target}_slow_test (label
  # slow: minutes of oracle runs or large inputs, not part of `make test`). Both link
  # geolake_testing and get the test environment (docs/testing.md) from ctest.
  if(GEOLAKE_BUILD_TESTS AND tests)
    set(slow_tests ${tests})
    list(FILTER slow_tests INCLUDE REGEX "_slow_test\\.cc$")
    list(FILTER tests EXCLUDE REGEX "_slow_test\\.cc$")
    foreach(kind unit slow)
      if(kind STREQUAL "unit")
        set(exe ${target}_test)
        set(kind_srcs ${tests})
      else()
        set(exe ${target}_slow_test)
        set(kind_srcs ${slow_tests})
      endif()
      if(NOT kind_srcs)
        continue()
      endif()
      add_executable(${exe} ${kind_srcs})
      target_link_libraries(${exe} PRIVATE ${target} ${M_PRIVATE_DEPS} ${M_TEST_DEPS}
                            geolake_testing GTest::gmock GTest::gtest_main geolake_warnings)
      gtest_discover_tests(${exe} TEST_LIST ${exe}_TESTS DISCOVERY_TIMEOUT 60)
      geolake_test_properties(${exe} "${kind};module.${name}")
    endforeach()
  endif()
endfunction()

# geolake_test_properties(EXE LABELS): give every test gtest_discover_tests found in EXE the
# labels LABELS and the test environment. gtest_discover_tests(PROPERTIES ...) cannot carry a
# list value (CMake 3.25 splits ENVIRONMENT "A=1;B=2" into separate arguments), so a ctest
# include file, run after the discovered tests are defined, sets them from the TEST_LIST.
function(geolake_test_properties exe labels)
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${exe}_properties.cmake")
  file(WRITE ${file}
    "foreach(_test IN LISTS ${exe}_TESTS)\n"
    "  set_tests_properties(\"\${_test}\" PROPERTIES LABELS \"${labels}\"\n"
    "    ENVIRONMENT \"${GEOLAKE_TEST_ENVIRONMENT}\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${file})
endfunction()

# The test environment contract (docs/testing.md, geolake/testing/environment.h): the folders
# every unit and e2e test reads, passed by ctest as environment variables.
if(GEOLAKE_BUILD_TESTS)
  set(GEOLAKE_DATA_DIR "${PROJECT_SOURCE_DIR}/build/data" CACHE PATH
      "Real datasets fetched by scripts/fetch-data.sh")
  set(GEOLAKE_ORACLES_DIR "${PROJECT_SOURCE_DIR}/build/oracles" CACHE PATH
      "Independent readers installed by scripts/install-deps.sh")
  set(GEOLAKE_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
      "Optional folder of third-party test files (parquet-testing corpus, foreign Iceberg tables)")
  set(GEOLAKE_TEST_ENVIRONMENT
      "GEOLAKE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "GEOLAKE_BUILD_DIR=${PROJECT_BINARY_DIR}"
      "GEOLAKE_DATA_DIR=${GEOLAKE_DATA_DIR}"
      "GEOLAKE_ORACLES_DIR=${GEOLAKE_ORACLES_DIR}"
      "GEOLAKE_SHARED_DIR=${GEOLAKE_SHARED_DIR}")
  # Sanitizer builds: third-party suppressions only (tests/sanitizers/, each line explained).
  if(GEOLAKE_ENABLE_ASAN)
    list(APPEND GEOLAKE_TEST_ENVIRONMENT
         "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/lsan.supp")
  endif()
  if(GEOLAKE_ENABLE_TSAN)
    list(APPEND GEOLAKE_TEST_ENVIRONMENT
         "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan.supp")
  endif()
endif()
