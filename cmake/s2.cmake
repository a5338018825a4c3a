# Debian libs2-dev ships headers and libs2.so without a CMake package.
find_path(S2_INCLUDE_DIR s2/s2cell_id.h REQUIRED)
find_library(S2_LIBRARY s2 REQUIRED)
add_library(geolake_s2 INTERFACE)
target_include_directories(geolake_s2 SYSTEM INTERFACE ${S2_INCLUDE_DIR})
target_link_libraries(geolake_s2 INTERFACE ${S2_LIBRARY})
