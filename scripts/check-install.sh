#!/usr/bin/env bash
# Test the installed package the way a user consumes it (docs/api.md "Embedding geolake"):
#   1. `cmake --install` a built tree into an empty temporary prefix;
#   2. every installed header compiles on its own (nothing includes a header that was not
#      installed, or a third-party header the package does not provide for);
#   3. examples/ is configured against the prefix with find_package(geolake), built, and run on
#      a small generated input: open a warehouse, ingest, bbox query, print rows;
#   4. the same program is built once more with `pkg-config --cflags --libs geolake` and run;
#   5. the installed `geolake` program runs.
# Usage: scripts/check-install.sh [BUILD_DIR]   (a configured and built tree; default build/debug)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$src/build/debug}" && pwd)"
work="$(mktemp -d /tmp/geolake-check-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }
step() { echo "check-install: $*"; }

step "install $build into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
  tail -20 "$work/install.log" >&2; fail "cmake --install"; }
[ -f "$prefix/include/geolake/geolake.h" ] || fail "geolake/geolake.h not installed"
[ -f "$prefix/include/geolake/core/version.h" ] || fail "geolake/core/version.h not installed"
config="$(find "$prefix" -name geolakeConfig.cmake | head -1)"
[ -n "$config" ] || fail "no geolakeConfig.cmake under $prefix"
pc_dir="$(dirname "$(find "$prefix" -name geolake.pc | head -1)")"
[ -f "$pc_dir/geolake.pc" ] || fail "no geolake.pc under $prefix"
# No test helper, internal header or third-party wrapper leaves the build tree.
leaked="$(cd "$prefix/include" && find . -name '*_internal.h' -o -name '*test*.h' \
          -o -name 'gdal_api.h' | sort)"
[ -z "$leaked" ] || fail "headers that must not be installed: $leaked"

# A user compiles against the prefix, never against the source tree: copy nothing from $src.
cxx="${CXX:-g++}"
step "every installed header compiles alone"
pc_cflags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags geolake)"
check_header() {  # RELATIVE_PATH: a TU that includes only this header
  local tu="$work/headers/${1//\//_}.cc"
  printf '#include <%s>\n' "$1" >"$tu"
  # shellcheck disable=SC2086
  "$cxx" -std=c++20 -fsyntax-only $pc_cflags "$tu" 2>"$tu.log" || {
    head -20 "$tu.log" >&2; echo "installed header $1 does not compile alone" >&2; return 1; }
}
export -f check_header; export work cxx pc_cflags
mkdir -p "$work/headers"
(cd "$prefix/include" && find geolake -name '*.h' | sort) >"$work/headers.txt"
headers=$(wc -l <"$work/headers.txt")
xargs -P "$(nproc)" -I{} bash -c 'check_header "$1"' _ {} <"$work/headers.txt" ||
  fail "installed headers that do not compile alone (above)"
step "$headers headers"

# The input: six cities as GeoJSON text sequences; the box holds the three in Portugal.
cat >"$work/cities.geojsonl" <<'JSON'
{"type":"Feature","properties":{"name":"Lisbon","pop":545000},"geometry":{"type":"Point","coordinates":[-9.139,38.722]}}
{"type":"Feature","properties":{"name":"Porto","pop":232000},"geometry":{"type":"Point","coordinates":[-8.611,41.149]}}
{"type":"Feature","properties":{"name":"Faro","pop":64000},"geometry":{"type":"Point","coordinates":[-7.935,37.019]}}
{"type":"Feature","properties":{"name":"Madrid","pop":3300000},"geometry":{"type":"Point","coordinates":[-3.704,40.417]}}
{"type":"Feature","properties":{"name":"Seville","pop":684000},"geometry":{"type":"Point","coordinates":[-5.984,37.389]}}
{"type":"Feature","properties":{"name":"Paris","pop":2100000},"geometry":{"type":"Point","coordinates":[2.352,48.857]}}
JSON
check_rows() {  # name output-file: the three Portuguese cities, nothing else, as name<TAB>WKT
  local got; got="$(cut -f1 "$2" | sort | tr '\n' ' ')"
  [ "$got" = "Faro Lisbon Porto " ] || { cat "$2" >&2; fail "$1: rows '$got'"; }
  grep -q $'^Lisbon\tPOINT (-9.139 38.722)$' "$2" || { cat "$2" >&2; fail "$1: Lisbon's WKT"; }
}

step "examples/ with find_package(geolake)"
cmake -S "$src/examples" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || {
  tail -30 "$work/configure.log" >&2; fail "configure examples/ against the installed package"; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log" >&2; fail "build examples/ against the installed package"; }
"$work/cmake-build/bbox_query" "$work/wh-cmake" "$work/cities.geojsonl" -10,36,-6,42 \
  >"$work/rows-cmake.txt" 2>"$work/err-cmake.txt" || {
  cat "$work/err-cmake.txt" >&2; fail "bbox_query (CMake build) failed"; }
check_rows "bbox_query (CMake build)" "$work/rows-cmake.txt"
# A second run resumes: nothing is ingested twice, the same rows come back.
"$work/cmake-build/bbox_query" "$work/wh-cmake" "$work/cities.geojsonl" -10,36,-6,42 \
  >"$work/rows-again.txt" 2>"$work/err-again.txt" || fail "bbox_query (second run) failed"
check_rows "bbox_query (second run)" "$work/rows-again.txt"
grep -q "ingested 0 rows" "$work/err-again.txt" || { cat "$work/err-again.txt" >&2;
  fail "the second run ingested again"; }

step "examples/ with pkg-config"
# shellcheck disable=SC2046
"$cxx" -std=c++20 -O1 "$src/examples/bbox_query.cc" -o "$work/bbox_query_pc" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs geolake) 2>"$work/pc.log" || {
  tail -30 "$work/pc.log" >&2; fail "build with pkg-config"; }
"$work/bbox_query_pc" "$work/wh-pc" "$work/cities.geojsonl" -10,36,-6,42 \
  >"$work/rows-pc.txt" 2>"$work/err-pc.txt" || {
  cat "$work/err-pc.txt" >&2; fail "bbox_query (pkg-config build) failed"; }
check_rows "bbox_query (pkg-config build)" "$work/rows-pc.txt"

step "the installed program"
version="$("$prefix/bin/geolake" --version)" || fail "installed geolake --version"
want="geolake $(PKG_CONFIG_PATH="$pc_dir" pkg-config --modversion geolake)"
[ "$version" = "$want" ] || fail "installed geolake says '$version', the package '$want'"
step "ok ($version; $headers headers; CMake and pkg-config builds ran the example)"
