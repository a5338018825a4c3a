#!/usr/bin/env bash
# query on a real table (us_counties, created and ingested by the geolake CLI, partitioned by
# quadkey:4): --intersects with a box returns exactly the counties GDAL's spatial filter
# returns (geoid sets compared); --bbox returns as many rows as DuckDB counts with a WHERE on
# the bbox struct over the same data files; partitions and files are pruned per --explain;
# --intersects FILE (GeoJSON, GeoPackage: the union of the file's geometries; WKT text) returns
# the same counties; --snapshot/--as-of return the older snapshot's rows after a second ingest; every output
# format is read back by GDAL with the same row count.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg us_counties.fgb
needs_oracles
g() { "$bin" --warehouse "$work/wh" "$@"; }
src="$data/us_counties.gpkg"

g create geo.counties --from "$src" --partition quadkey:4 >/dev/null 2>"$work/err"
code=$?
if [ $code = 9 ]; then echo "SKIP: geolake create is not built in this tree"; exit 0; fi
[ $code = 0 ] || { cat "$work/err"; echo "FAIL: create"; exit 1; }
g ingest geo.counties "$src" >/dev/null 2>&1 || { echo "FAIL: ingest"; exit 1; }
first=$(g query geo.counties --explain --json | sed -E 's/.*"snapshot_id":([0-9]+).*/\1/')
sleep 1
as_of=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sleep 1
# The same counties again from another file (a new source, so not skipped as already ingested).
g ingest geo.counties "$data/us_counties.fgb" >/dev/null 2>&1 || { echo "FAIL: second ingest"; exit 1; }

# --intersects BOX vs GDAL's spatial filter (exact intersection with the rectangle).
box="-100,35,-97,37"
wkt="POLYGON((-100 35,-97 35,-97 37,-100 37,-100 35))"
g query geo.counties --snapshot "$first" --intersects "$wkt" --format csv --columns geoid \
  | tail -n +2 | cut -d, -f1 | sort >"$work/ours"
ogr2ogr -f CSV /vsistdout/ "$src" -spat -100 35 -97 37 -select geoid | tail -n +2 | tr -d '"' \
  | sort >"$work/gdal"
n=$(wc -l <"$work/ours")
if [ "$n" -gt 10 ] && cmp -s "$work/ours" "$work/gdal"; then
  pass "intersects: $n counties, the same geoids as ogr2ogr -spat"
else
  fail "intersects: ours $n vs gdal $(wc -l <"$work/gdal")"; diff "$work/ours" "$work/gdal" | head
fi

# --intersects FILE: the same rectangle as two halves (two features of a GeoJSON file, and the
# same file converted to GeoPackage by GDAL) is their union, so the same geoids again; a file in
# another CRS is refused (exit 2), a file holding WKT text is still read as WKT.
cat >"$work/halves.geojson" <<'JSON'
{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"part":1},"geometry":{"type":"Polygon","coordinates":[[[-100,35],[-98.5,35],[-98.5,37],[-100,37],[-100,35]]]}},
{"type":"Feature","properties":{"part":2},"geometry":{"type":"Polygon","coordinates":[[[-98.5,35],[-97,35],[-97,37],[-98.5,37],[-98.5,35]]]}}]}
JSON
ogr2ogr -f GPKG "$work/halves.gpkg" "$work/halves.geojson"
ogr2ogr -f GPKG -t_srs EPSG:3857 "$work/halves_3857.gpkg" "$work/halves.geojson"
echo "$wkt" >"$work/rect.wkt"
for f in halves.geojson halves.gpkg rect.wkt; do
  g query geo.counties --snapshot "$first" --intersects "$work/$f" --format csv --columns geoid \
    | tail -n +2 | cut -d, -f1 | sort >"$work/ours_file"
  cmp -s "$work/ours_file" "$work/gdal" && pass "intersects $f: the same $(wc -l <"$work/ours_file") geoids" \
    || fail "intersects $f: $(wc -l <"$work/ours_file") geoids, gdal $(wc -l <"$work/gdal")"
done
g query geo.counties --intersects "$work/halves_3857.gpkg" --format csv >/dev/null 2>"$work/err"
code=$?
[ $code = 2 ] && grep -q "EPSG:3857" "$work/err" && pass "intersects: a file in EPSG:3857 is refused" \
  || fail "intersects EPSG:3857 file: exit $code, $(cat "$work/err")"

# --bbox vs DuckDB over the current snapshot's data files (two copies of every county).
explain=$(g query geo.counties --bbox "$box" --explain --json)
ours=$(sed -E 's/.*"rows_matched":([0-9]+).*/\1/' <<<"$explain")
files=$(find "$work/wh/geo/counties/data" -name '*.parquet' | sed "s/.*/'&'/" | paste -sd,)
duck=$(node --input-type=module -e '
  const { DuckDBInstance } = await import(process.argv[1] + "/node_modules/@duckdb/node-api/lib/index.js");
  const conn = await (await DuckDBInstance.create(":memory:")).connect();
  const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR AS n FROM read_parquet([${process.argv[2]}])
    WHERE bbox.xmin <= -97 AND bbox.xmax >= -100 AND bbox.ymin <= 37 AND bbox.ymax >= 35`);
  console.log(r.getRowObjectsJS()[0].n);' "$oracles" "$files")
[ "$ours" = "$duck" ] && [ "$ours" -gt 0 ] && pass "bbox: $ours rows, as DuckDB counts" \
  || fail "bbox: ours $ours, duckdb $duck"
pruned_parts=$(sed -E 's/.*"partitions":\{"considered":[0-9]+,"pruned":([0-9]+).*/\1/' <<<"$explain")
pruned_files=$(sed -E 's/.*"files":\{"considered":[0-9]+,"pruned":([0-9]+).*/\1/' <<<"$explain")
read_bytes=$(sed -E 's/.*"bytes_read":([0-9]+).*/\1/' <<<"$explain")
table_bytes=$(sed -E 's/.*"table_bytes":([0-9]+).*/\1/' <<<"$explain")
if [ "$pruned_parts" -gt 0 ] && [ "$pruned_files" -gt 0 ] && [ "$read_bytes" -lt "$table_bytes" ]; then
  pass "explain: $pruned_parts partitions and $pruned_files files pruned, $read_bytes of $table_bytes bytes read"
else
  fail "explain: $explain"
fi

# Time travel: the first snapshot has the counties of the first ingest (as many as GDAL counts in
# the source), the current one every row of the table's data files (DuckDB's count).
count() { g query geo.counties "$@" --format csv --columns geoid | tail -n +2 | wc -l; }
c_first=$(count --snapshot "$first"); c_asof=$(count --as-of "$as_of"); c_now=$(count)
n_src=$(ogrinfo -ro -so -al "$src" | sed -nE 's/^Feature Count: ([0-9]+)/\1/p')
n_all=$(node --input-type=module -e '
  const { DuckDBInstance } = await import(process.argv[1] + "/node_modules/@duckdb/node-api/lib/index.js");
  const conn = await (await DuckDBInstance.create(":memory:")).connect();
  const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR AS n FROM read_parquet([${process.argv[2]}])`);
  console.log(r.getRowObjectsJS()[0].n);' "$oracles" "$files")
[ "$c_first" = "$n_src" ] && [ "$c_asof" = "$n_src" ] && [ "$c_now" = "$n_all" ] && [ "$c_now" -gt "$c_first" ] \
  && pass "time travel: snapshot $c_first, as-of $c_asof, current $c_now" \
  || fail "time travel: snapshot $c_first, as-of $c_asof, current $c_now"

# Every output format, read back by GDAL.
want=$(g query geo.counties --snapshot "$first" --bbox "$box" --format csv | tail -n +2 | wc -l)
for f in geojson geojsonseq fgb gpkg parquet csv; do
  g query geo.counties --snapshot "$first" --bbox "$box" --format "$f" -o "$work/out.$f" || { fail "$f: query"; continue; }
  if [ "$f" = parquet ]; then
    got=$(node "$oracles/verify_parquet.mjs" "$work/out.parquet" --quiet >/dev/null && "$bin" inspect "$work/out.parquet" | grep -c . >/dev/null && \
      node --input-type=module -e '
        const { DuckDBInstance } = await import(process.argv[1] + "/node_modules/@duckdb/node-api/lib/index.js");
        const conn = await (await DuckDBInstance.create(":memory:")).connect();
        const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR AS n FROM read_parquet(\x27${process.argv[2]}\x27)`);
        console.log(r.getRowObjectsJS()[0].n);' "$oracles" "$work/out.parquet")
  elif [ "$f" = csv ]; then
    got=$(tail -n +2 "$work/out.csv" | wc -l)
  else
    got=$(ogrinfo -ro -so -al "$work/out.$f" | sed -nE 's/^Feature Count: ([0-9]+)/\1/p')
  fi
  [ "$got" = "$want" ] && [ "$want" -gt 0 ] && pass "$f: $got rows read back" || fail "$f: $got rows, want $want"
done

echo "query_real_table: $passed passed, $failed failed"
[ $failed = 0 ]
