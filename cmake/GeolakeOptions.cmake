# Warnings and sanitizers, applied to our own targets through geolake_warnings.
add_library(geolake_warnings INTERFACE)
target_compile_options(geolake_warnings INTERFACE -Wall -Wextra -Wshadow)
if(GEOLAKE_WERROR)
  target_compile_options(geolake_warnings INTERFACE -Werror)
  # g++ 12's optimizer-driven warnings misfire inside inlined libstdc++ code (e.g. -Wrestrict on
  # plain std::string concatenation, GCC bug 105329). In optimized builds they stay visible but
  # do not fail the build; the debug build that `make test` uses keeps all of them fatal.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(geolake_warnings INTERFACE
      $<$<NOT:$<CONFIG:Debug>>:-Wno-error=restrict -Wno-error=maybe-uninitialized
                                -Wno-error=array-bounds -Wno-error=stringop-overflow
                                -Wno-error=mismatched-new-delete>)
  endif()
endif()

# libFuzzer: every object gets coverage instrumentation plus ASan/UBSan; only the fuzz
# executables link the fuzzer driver (see GeolakeModule.cmake).
if(GEOLAKE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GEOLAKE_BUILD_FUZZERS needs clang (use the `fuzz` preset)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  add_custom_target(geolake_fuzzers)
endif()
set(GEOLAKE_FUZZ_SECONDS 20 CACHE STRING "How long ctest runs each fuzzer")

set(_geolake_san "")
if(GEOLAKE_ENABLE_ASAN)
  list(APPEND _geolake_san address)
endif()
if(GEOLAKE_ENABLE_UBSAN)
  list(APPEND _geolake_san undefined)
endif()
if(GEOLAKE_ENABLE_TSAN)
  list(APPEND _geolake_san thread)
endif()
if(_geolake_san)
  list(JOIN _geolake_san "," _geolake_san_list)
  add_compile_options(-fsanitize=${_geolake_san_list} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_geolake_san_list})
endif()
