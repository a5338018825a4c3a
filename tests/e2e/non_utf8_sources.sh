#!/usr/bin/env bash
# Issue 17 item 8: text that is not UTF-8 never reaches a Parquet STRING column. A Latin-1 CSV
# (GDAL's CSV driver declares no encoding), a Latin-1 GeoJSONSeq file (geolake's own reader)
# and a shapefile whose DBF has no .cpg and no code page byte are ingested with each invalid byte replaced by U+FFFD, a warning naming the field
# and the count in the metrics; under --on-invalid reject those rows go to the rejects file
# naming the field; a .cpg that declares the encoding makes GDAL decode the text exactly. After
# each run the data files open in DuckDB, hyparquet and parquet-wasm (verify_parquet.mjs) and
# the table in icebird/avsc/DuckDB (verify_iceberg.mjs). Before the fix the bytes were written
# as they came and DuckDB refused the whole file ("Invalid string encoding").
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_oracles
wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
# counter FILE NAME: a counter anywhere in a --metrics-json report (top level or a stage's).
counter() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
found = j.get("counters", {}).get(sys.argv[2])
for stage in j.get("stages", {}).values() if isinstance(j.get("stages"), dict) else j.get("stages", []):
    found = stage.get("counters", {}).get(sys.argv[2], found)
print(found if found is not None else -1)
EOF
}
# check_files TABLE_DIR LABEL: every data file passes verify_parquet, the table verify_iceberg.
check_files() {
  local f bad=0 n=0
  while IFS= read -r f; do
    n=$((n + 1))
    node "$oracles/verify_parquet.mjs" "$f" --quiet >"$work/vp.json" 2>&1 ||
      { bad=1; fail "$2: verify_parquet $(basename "$f"): $(head -c 300 "$work/vp.json")"; }
  done < <(find "$1/data" -name '*.parquet')
  [ "$n" -gt 0 ] && [ "$bad" = 0 ] && pass "$2: $n data files read by DuckDB, hyparquet, parquet-wasm"
  node "$oracles/verify_iceberg.mjs" "$1" --quiet >"$work/vi.json" 2>&1 &&
    pass "$2: verify_iceberg ok" || fail "$2: verify_iceberg: $(head -c 300 "$work/vi.json")"
}

# Latin-1 bytes: u-umlaut 0xFC, e-grave 0xE8, e-acute 0xE9 (in a column name too).
printf 'name,r\xe9gion,pop,lon,lat\nZ\xfcrich,ZH,400000,8.54,47.37\nGen\xe8ve,GE,200000,6.14,46.20\nBern,BE,130000,7.44,46.95\n' \
  >"$work/latin1.csv"

# 1. make-valid (the default): replaced, counted, warned, readable by every reader.
if gl --metrics-json "$work/m1.json" ingest t.csv "$work/latin1.csv" --create --partition none \
  >"$work/out1.txt" 2>"$work/err1.txt"; then
  grep -q "field 'name': 2 values were not valid UTF-8" "$work/err1.txt" &&
    pass "csv: warns naming the field and the count" || fail "csv: no warning: $(cat "$work/err1.txt")"
  grep -q "field name 'r\\\\xe9gion' is not valid UTF-8" "$work/err1.txt" &&
    pass "csv: warns about the Latin-1 column name" || fail "csv: no column-name warning: $(cat "$work/err1.txt")"
  [ "$(counter "$work/m1.json" utf8_replaced)" = 2 ] && pass "csv: metrics count 2 values replaced" ||
    fail "csv: utf8_replaced = $(counter "$work/m1.json" utf8_replaced)"
  gl query t.csv --format csv >"$work/q1.csv" 2>"$work/qerr1.txt" || fail "csv: query: $(head -n 1 "$work/qerr1.txt")"
  grep -q "Z$(printf '\xef\xbf\xbd')rich" "$work/q1.csv" && pass "csv: query gives Z<U+FFFD>rich" ||
    fail "csv: query output: $(head -c 300 "$work/q1.csv")"
  check_files "$wh/t/csv" "csv"
else
  fail "csv: ingest failed: $(head -n 1 "$work/err1.txt")"
fi

# 2. --on-invalid reject: the two rows go to the rejects file naming the field.
if gl --metrics-json "$work/m2.json" ingest t.csv_reject "$work/latin1.csv" --create --partition none \
  --on-invalid reject >"$work/out2.txt" 2>"$work/err2.txt"; then
  grep -q "rows read 3 = rows committed 1 + rows rejected 2" "$work/out2.txt" &&
    pass "csv reject: read 3 = committed 1 + rejected 2" || fail "csv reject: $(cat "$work/out2.txt")"
  rejects=$(find "$wh/.geolake/runs" -name rejects.geojsonseq -newer "$work/m1.json" | head -n 1)
  [ -n "$rejects" ] && [ "$(grep -c "invalid UTF-8 in field 'name'" "$rejects")" = 2 ] &&
    pass "csv reject: the rejects file names the field twice" || fail "csv reject: rejects: $(cat "$rejects" 2>/dev/null | head -c 300)"
  check_files "$wh/t/csv_reject" "csv reject"
else
  fail "csv reject: ingest failed: $(head -n 1 "$work/err2.txt")"
fi

# 3. A shapefile whose DBF declares nothing (no code page byte, no .cpg): GDAL hands the bytes
# over as they are.
ogr2ogr -f "ESRI Shapefile" -lco ENCODING="" "$work/nocpg.shp" "$work/latin1.csv" \
  -oo X_POSSIBLE_NAMES=lon -oo Y_POSSIBLE_NAMES=lat -a_srs EPSG:4326 2>"$work/ogr.err" ||
  fail "ogr2ogr: $(head -n 1 "$work/ogr.err")"
# GDAL 3.6 writes an empty .cpg for ENCODING="": remove it, and the code page byte must be 0.
rm -f "$work/nocpg.cpg"
[ "$(od -An -tu1 -j29 -N1 "$work/nocpg.dbf" | tr -d ' ')" = 0 ] ||
  fail "the DBF declares a code page; the case needs none"
if gl --metrics-json "$work/m3.json" ingest t.shp "$work/nocpg.shp" --create --partition none \
  >"$work/out3.txt" 2>"$work/err3.txt"; then
  grep -q "field 'name': 2 values were not valid UTF-8" "$work/err3.txt" &&
    pass "dbf without .cpg: warns naming the field" || fail "dbf without .cpg: no warning: $(cat "$work/err3.txt")"
  check_files "$wh/t/shp" "dbf without .cpg"
else
  fail "dbf without .cpg: ingest failed: $(head -n 1 "$work/err3.txt")"
fi

# 4. The same DBF with a .cpg declaring Latin-1: GDAL decodes it, nothing is replaced.
mkdir -p "$work/cpg"
for ext in shp shx dbf prj; do cp "$work/nocpg.$ext" "$work/cpg/latin1.$ext"; done
echo "ISO-8859-1" >"$work/cpg/latin1.cpg"
if gl --metrics-json "$work/m4.json" ingest t.cpg "$work/cpg/latin1.shp" --create --partition none \
  >"$work/out4.txt" 2>"$work/err4.txt"; then
  grep -q "not valid UTF-8" "$work/err4.txt" && fail "with .cpg: warned: $(cat "$work/err4.txt")" ||
    pass "with .cpg: no replacement warning"
  gl query t.cpg --format csv >"$work/q4.csv" 2>/dev/null
  grep -q "Zürich" "$work/q4.csv" && grep -q "Genève" "$work/q4.csv" && grep -q "région" "$work/q4.csv" &&
    pass "with .cpg: Zürich, Genève and the column région decoded exactly" ||
    fail "with .cpg: query output: $(head -c 300 "$work/q4.csv")"
  check_files "$wh/t/cpg" "with .cpg"
else
  fail "with .cpg: ingest failed: $(head -n 1 "$work/err4.txt")"
fi

# 5. convert writes the same replacement (its Parquet file opens in DuckDB).
if gl convert "$work/latin1.csv" "$work/latin1.parquet" >/dev/null 2>"$work/err5.txt"; then
  node "$oracles/verify_parquet.mjs" "$work/latin1.parquet" --quiet >"$work/vp5.json" 2>&1 &&
    pass "convert: the Parquet file opens in every reader" || fail "convert: verify_parquet: $(head -c 300 "$work/vp5.json")"
else
  fail "convert failed: $(head -n 1 "$work/err5.txt")"
fi

# 6. GeoJSONSeq in Latin-1 (not JSON by RFC 8259, but what Latin-1 exports produce), read by
# geolake's own reader: the same replacement and warning; under reject, the rows rejected
# naming the field. Before, each such record was rejected as "not JSON" under every policy.
{
  printf '{"type":"Feature","properties":{"name":"Z\xfcrich","pop":400000},"geometry":{"type":"Point","coordinates":[8.54,47.37]}}\n'
  printf '{"type":"Feature","properties":{"name":"Bern","pop":130000},"geometry":{"type":"Point","coordinates":[7.44,46.95]}}\n'
  printf '{"type":"Feature","properties":{"name":"Gen\xe8ve","pop":200000},"geometry":{"type":"Point","coordinates":[6.14,46.2]}}\n'
} >"$work/latin1.geojsonl"
if gl --metrics-json "$work/m6.json" ingest t.seq "$work/latin1.geojsonl" --create --partition none \
  >"$work/out6.txt" 2>"$work/err6.txt"; then
  grep -q "field 'name': 2 values were not valid UTF-8" "$work/err6.txt" &&
    pass "geojsonseq: warns naming the field and the count" ||
    fail "geojsonseq: no warning: $(cat "$work/err6.txt")"
  [ "$(counter "$work/m6.json" utf8_replaced)" = 2 ] && pass "geojsonseq: metrics count 2 values replaced" ||
    fail "geojsonseq: utf8_replaced = $(counter "$work/m6.json" utf8_replaced)"
  gl query t.seq --format csv >"$work/q6.csv" 2>/dev/null
  grep -q "Z$(printf '\xef\xbf\xbd')rich" "$work/q6.csv" && grep -q "Bern" "$work/q6.csv" &&
    pass "geojsonseq: query gives Z<U+FFFD>rich and Bern" ||
    fail "geojsonseq: query output: $(head -c 300 "$work/q6.csv")"
  check_files "$wh/t/seq" "geojsonseq"
else
  fail "geojsonseq: ingest failed: $(head -n 1 "$work/err6.txt")"
fi
if gl --metrics-json "$work/m7.json" ingest t.seq_reject "$work/latin1.geojsonl" --create \
  --partition none --on-invalid reject >"$work/out7.txt" 2>"$work/err7.txt"; then
  grep -q "rows read 3 = rows committed 1 + rows rejected 2" "$work/out7.txt" &&
    pass "geojsonseq reject: read 3 = committed 1 + rejected 2" ||
    fail "geojsonseq reject: $(cat "$work/out7.txt")"
  rejects=$(find "$wh/.geolake/runs" -name rejects.geojsonseq -newer "$work/m6.json" | head -n 1)
  [ -n "$rejects" ] && [ "$(grep -c "invalid UTF-8 in field 'name'" "$rejects")" = 2 ] &&
    pass "geojsonseq reject: the rejects file names the field twice" ||
    fail "geojsonseq reject: rejects: $(head -c 300 "$rejects" 2>/dev/null)"
else
  fail "geojsonseq reject: ingest failed: $(head -n 1 "$work/err7.txt")"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
