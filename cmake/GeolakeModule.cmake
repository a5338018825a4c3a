# geolake_module(NAME [DEPS targets...] [PRIVATE_DEPS targets...] [EXCLUDE regex])
#
# One CMake library per folder of src/geolake: every *.cc in the folder (recursively) except
# tests, benchmarks and fuzz targets becomes geolake_<NAME>; every *_test.cc becomes one test
# executable geolake_<NAME>_test, registered with ctest under the label `unit` (or `slow` for
# *_slow_test.cc).
# After the call, GEOLAKE_MODULE_SCOPE (in the caller's scope) is PUBLIC for a library with
# sources and INTERFACE for a header-only one, for the caller's own target_* calls.
function(geolake_module name)
  cmake_parse_arguments(M "" "EXCLUDE" "DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  file(GLOB_RECURSE all_cc CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(M_EXCLUDE)
    list(FILTER all_cc EXCLUDE REGEX "${M_EXCLUDE}")
  endif()
  set(srcs ${all_cc})
  list(FILTER srcs EXCLUDE REGEX "(_test|_benchmark|_fuzz)\\.cc$")
  set(tests ${all_cc})
  list(FILTER tests INCLUDE REGEX "_test\\.cc$")

  set(target geolake_${name})
  if(srcs)
    add_library(${target} STATIC ${srcs})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS} geolake_warnings)
    set(GEOLAKE_MODULE_SCOPE PUBLIC PARENT_SCOPE)
  else()
    set(GEOLAKE_MODULE_SCOPE INTERFACE PARENT_SCOPE)
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} INTERFACE ${M_DEPS})
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

  if(GEOLAKE_BUILD_TESTS AND tests)
    add_executable(${target}_test ${tests})
    target_link_libraries(${target}_test PRIVATE ${target} ${M_PRIVATE_DEPS} ${M_TEST_DEPS}
                          GTest::gmock GTest::gtest_main geolake_warnings)
    target_compile_definitions(${target}_test PRIVATE
      GEOLAKE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      GEOLAKE_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
      GEOLAKE_BINARY_DIR="${PROJECT_BINARY_DIR}")
    gtest_discover_tests(${target}_test
      PROPERTIES LABELS unit
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
