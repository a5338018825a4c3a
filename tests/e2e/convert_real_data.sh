#!/usr/bin/env bash
# convert on real data: every dataset (all five from .gpkg, some from .fgb and .geojsonl, with
# other codecs, row-group sizes and row orders) becomes GeoParquet that DuckDB, hyparquet and
# parquet-wasm read with equal values (verify_parquet.mjs --strict-values: DuckDB types the
# geometry as GEOMETRY, the geo bbox/types and covering checks pass); row counts equal
# ogrinfo's; DuckDB's view of counts, sums and one geometry's WKB equals GDAL's view of the
# source; `geolake cat` prints what DuckDB reads. Also the failure paths of the command.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg us_states.fgb us_counties.gpkg us_counties.geojsonl ne_countries_10m.gpkg \
  geonames_cities500.gpkg geonames_cities500.fgb us_zipcodes.gpkg
needs_oracles

# duck FILE SQL [raw]: the first row of a DuckDB query over read_parquet(FILE) (as `t`), values
# joined by "|".
duck() {
  node --input-type=module -e '
    const { openDuckDB } = await import(process.argv[1] + "/lib/common.mjs");
    const db = await openDuckDB();
    // "raw": the geometry column as the file stores it (BLOB), not as DuckDB GEOMETRY.
    if (process.argv[4] === "raw") await db.conn.run("SET enable_geoparquet_conversion = false");
    const file = process.argv[2].replaceAll("\x27", "\x27\x27");
    const rows = await db.rowsJson(`WITH t AS (SELECT * FROM read_parquet(\x27${file}\x27)) ${process.argv[3]}`);
    console.log(Object.values(rows[0]).map(v => v === null ? "" : String(v)).join("|"));
  ' "$oracles" "$1" "$2" "${3:-}"
}
# ogr SRC SQL: the first row of an SQLite-dialect query on a GeoPackage, values joined by "|".
ogr() {
  ogrinfo -ro -q -sql "$2" "$1" | sed -n 's/^  [^ ]* ([A-Za-z0-9]*) = //p' | paste -sd'|'
}
# near A B: numbers equal to 1e-9 relative (sums in another order).
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a);
  exit !(d <= 1e-9 * (m > 1 ? m : 1)) }'; }

# name  source file  key column  key value  extra convert arguments
cases=(
  "us_states|us_states.gpkg|name|Rhode Island|"
  "us_counties|us_counties.gpkg|geoid|44007|--compression snappy"
  "ne_countries_10m|ne_countries_10m.gpkg|name|Iceland|--compression zstd:15"
  "geonames_cities500|geonames_cities500.gpkg|geonameid|2988507|"
  "us_zipcodes|us_zipcodes.gpkg|zip|02903|--row-group-rows 10000"
  "geonames_cities500|geonames_cities500.fgb|||--sort none --compression gzip"
  "us_counties|us_counties.geojsonl|||--row-group-rows 1000"
  "us_states|us_states.fgb|||--geometry-logical-type --compression none"
)
for entry in "${cases[@]}"; do
  IFS='|' read -r name file key value extra <<<"$entry"
  src="$data/$file"
  out="$work/${file//./_}.parquet"
  [ -s "$src" ] || { fail "$src missing (run scripts/fetch-data.sh)"; continue; }
  # shellcheck disable=SC2086
  if ! "$bin" convert "$src" "$out" $extra >"$work/summary.txt" 2>"$work/err.txt"; then
    fail "$file: convert failed: $(head -n 1 "$work/err.txt")"; continue
  fi
  want=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p')
  got=$(sed -n 's/^wrote [^:]*: \([0-9]*\) rows.*/\1/p' "$work/summary.txt")
  [ "$got" = "$want" ] && pass "$file: $got rows, as ogrinfo" ||
    fail "$file: convert wrote $got rows, ogrinfo counts $want"

  node "$oracles/verify_parquet.mjs" "$out" --strict-values >"$work/verify.json" 2>&1
  code=$?
  if [ $code = 0 ] && grep -q '"duckdb_type": "GEOMETRY' "$work/verify.json"; then
    pass "$file: DuckDB, hyparquet and parquet-wasm agree; geo checks pass ($extra)"
  else
    fail "$file: verify_parquet exit $code: $(grep -A3 '"problems"' "$work/verify.json" | head -4 | tr -d '\n')"
  fi
  n=$(duck "$out" "SELECT count(*) FROM t")
  [ "$n" = "$want" ] && pass "$file: DuckDB counts $n rows" || fail "$file: DuckDB counts $n, want $want"

  [ -n "$key" ] || continue
  # GDAL's view of the GeoPackage: counts and coordinate sums, and one geometry's WKB.
  layer="$name"
  gcol=$(ogrinfo -ro -so "$src" "$layer" | sed -n 's/^Geometry Column = //p')
  sums=$(ogr "$src" "SELECT COUNT(*), COUNT($key), SUM(ST_MinX($gcol)), SUM(ST_MaxY($gcol)) FROM $layer")
  dsums=$(duck "$out" "SELECT count(*), count($key), sum(bbox.xmin), sum(bbox.ymax) FROM t")
  IFS='|' read -r o1 o2 o3 o4 <<<"$sums"
  IFS='|' read -r d1 d2 d3 d4 <<<"$dsums"
  if [ "$o1|$o2" = "$d1|$d2" ] && near "$o3" "$d3" && near "$o4" "$d4"; then
    pass "$file: counts and bbox sums equal GDAL's ($dsums)"
  else
    fail "$file: DuckDB says $dsums, GDAL $sums"
  fi
  quoted="'$value'"
  [ "$key" = geonameid ] && quoted="$value"
  owkb=$(ogr "$src" "SELECT hex(ST_AsBinary($gcol)) FROM $layer WHERE $key = $quoted")
  dwkb=$(duck "$out" "SELECT upper(hex(geometry)) FROM t WHERE $key = $quoted" raw)
  [ -n "$owkb" ] && [ "$owkb" = "$dwkb" ] && pass "$file: $key=$value WKB equals GDAL's (${#dwkb} hex digits)" ||
    fail "$file: $key=$value WKB differs (GDAL ${owkb:0:40}..., DuckDB ${dwkb:0:40}...)"
  if [ "$name" = geonames_cities500 ]; then
    o=$(ogr "$src" "SELECT SUM(population) AS p, MAX(geonameid) AS m, COUNT(DISTINCT country) AS c FROM $layer")
    d=$(duck "$out" "SELECT sum(population), max(geonameid), count(DISTINCT country) FROM t")
    [ "$o" = "$d" ] && pass "$file: population sum, max id, countries equal GDAL's ($d)" ||
      fail "$file: DuckDB $d, GDAL $o"
    # Our reader (geolake cat) and DuckDB see the same row.
    line=$("$bin" cat "$out" --columns geonameid,name,population,geometry --format csv |
      grep "^$value,")
    dline=$(duck "$out" "SELECT geonameid, name, population FROM t WHERE geonameid = $value")
    [ "${line%,POINT*}" = "${dline//|/,}" ] && pass "$file: geolake cat row $line" ||
      fail "$file: geolake cat '$line', DuckDB '$dline'"
  fi
done

# Rows come out in Hilbert order: geo_hilbert never decreases through the file.
out="$work/us_counties_gpkg.parquet"
unsorted=$(duck "$out" "SELECT count(*) FROM (SELECT geo_hilbert < lag(geo_hilbert) OVER () AS d FROM t) WHERE d")
[ "$unsorted" = 0 ] && pass "us_counties: geo_hilbert ascending through the file" ||
  fail "us_counties: $unsorted rows out of Hilbert order"
rg=$(duck "$work/us_zipcodes_gpkg.parquet" "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('$work/us_zipcodes_gpkg.parquet')" 2>/dev/null || true)
[ "$rg" = 5 ] && pass "us_zipcodes: 42555 rows in 5 row groups of 10000" ||
  fail "us_zipcodes: $rg row groups, want 5"

# Failure paths: exit codes 3 (missing source), 2 (bad --compression), 5 (unwritable output),
# and no partial file left behind.
"$bin" convert "$work/nope.gpkg" "$work/x.parquet" 2>"$work/err.txt"; code=$?
[ $code = 3 ] && [ ! -e "$work/x.parquet" ] && pass "missing source: exit 3: $(head -n1 "$work/err.txt")" ||
  fail "missing source: exit $code"
"$bin" convert "$data/us_states.gpkg" "$work/x.parquet" --compression lz9 2>"$work/err.txt"; code=$?
[ $code = 2 ] && pass "bad --compression: exit 2: $(head -n1 "$work/err.txt")" || fail "bad --compression: exit $code"
mkdir "$work/dir.parquet"
"$bin" convert "$data/us_states.gpkg" "$work/dir.parquet" 2>"$work/err.txt"; code=$?
[ $code = 5 ] && pass "unwritable output: exit 5: $(head -n1 "$work/err.txt")" || fail "unwritable output: exit $code"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
