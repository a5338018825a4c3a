#!/usr/bin/env bash
# The partition `ingest --create` and `create --from` choose without --partition (issue #5,
# docs/table-layout.md "The default partition"): a small real input (us_counties.gpkg, 1.7 MB,
# cut into 4 units of 1,000 rows) gets `none` with the reason printed and one data file per
# unit; the same input with --partition quadkey:4 is partitioned as before (geo_cell folders,
# more files than units, no choice printed); create --from chooses as ingest --create does.
# The tables pass verify_iceberg (DuckDB/icebird row counts equal the source's).
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
needs_oracles
wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
src="$data/us_counties.gpkg"
want=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p' | head -n 1)
units=$(( (want + 999) / 1000 ))
partition_of() { gl describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["properties"]["geolake.partition"])'; }
files_in() { find "$wh/demo/$1/data" -name '*.parquet' | wc -l; }
iceberg_rows() {
  node "$oracles/verify_iceberg.mjs" "$1" --quiet >"$work/ice.json" 2>/dev/null
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("duckdb_row_count") if j.get("ok") and str(j.get("duckdb_row_count")) == str(j.get("icebird_rows_read")) else "bad")' "$work/ice.json" 2>/dev/null || echo bad
}

# 1. Default: none, the reason first on stdout, one file per unit, no geo_cell folders.
if gl ingest demo.auto "$src" --create --unit-rows 1000 >"$work/out1.txt" 2>"$work/err1.txt"; then
  line=$(head -n 1 "$work/out1.txt")
  [[ "$line" == "partition: none (input 1."*" MiB < 512 MiB = 4 cells of quadkey:1 x 128 MiB target file size)" ]] &&
    pass "default: $line" || fail "default: first line is '$line'"
  [ "$(partition_of demo.auto)" = none ] && pass "default: table property geolake.partition = none" ||
    fail "default: geolake.partition = $(partition_of demo.auto)"
  n=$(files_in auto)
  [ "$n" = "$units" ] && pass "default: $n data files for $units units" ||
    fail "default: $n data files for $units units"
  [ -z "$(find "$wh/demo/auto/data" -mindepth 1 -type d)" ] && pass "default: no partition folders" ||
    fail "default: partition folders $(find "$wh/demo/auto/data" -mindepth 1 -type d | head -n 2)"
  grep -q "^$n files written, $n committed" "$work/out1.txt" && pass "default: the report says $n files" ||
    fail "default: report: $(grep 'files written' "$work/out1.txt")"
  r=$(iceberg_rows "$wh/demo/auto")
  [ "$r" = "$want" ] && pass "default: verify_iceberg $r rows" || fail "default: verify_iceberg says $r (want $want)"
else
  fail "default ingest failed: $(head -n 1 "$work/err1.txt")"
fi

# 2. --partition quadkey:4: partitioned as given, nothing chosen or printed.
if gl ingest demo.q4 "$src" --create --unit-rows 1000 --partition quadkey:4 >"$work/out2.txt" 2>"$work/err2.txt"; then
  ! grep -q '^partition:' "$work/out2.txt" && pass "quadkey:4: no choice printed" ||
    fail "quadkey:4: printed $(grep '^partition:' "$work/out2.txt")"
  [ "$(partition_of demo.q4)" = quadkey:4 ] && pass "quadkey:4: table property" ||
    fail "quadkey:4: geolake.partition = $(partition_of demo.q4)"
  n=$(files_in q4); cells=$(find "$wh/demo/q4/data" -mindepth 1 -maxdepth 1 -type d -name 'geo_cell=*' | wc -l)
  [ "$cells" -ge 2 ] && [ "$n" -gt "$units" ] && pass "quadkey:4: $n files in $cells geo_cell folders" ||
    fail "quadkey:4: $n files in $cells geo_cell folders"
  r=$(iceberg_rows "$wh/demo/q4")
  [ "$r" = "$want" ] && pass "quadkey:4: verify_iceberg $r rows" || fail "quadkey:4: verify_iceberg says $r (want $want)"
else
  fail "quadkey:4 ingest failed: $(head -n 1 "$work/err2.txt")"
fi

# 3. create --from chooses as ingest --create does; the ingest into it then prints nothing.
if gl create demo.made --from "$src" >"$work/out3.txt" 2>"$work/err3.txt"; then
  grep -q '^  partition none (input 1\..* MiB < 512 MiB' "$work/out3.txt" &&
    pass "create --from: $(grep partition "$work/out3.txt" | sed 's/^ *//')" ||
    fail "create --from: $(cat "$work/out3.txt")"
  gl ingest demo.made "$src" --create --unit-rows 1000 >"$work/out4.txt" 2>&1
  ! grep -q '^partition:' "$work/out4.txt" && [ "$(files_in made)" = "$units" ] &&
    pass "create --from then ingest: existing table kept, $units files" ||
    fail "create --from then ingest: $(head -n 2 "$work/out4.txt"), $(files_in made) files"
else
  fail "create --from failed: $(head -n 1 "$work/err3.txt")"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
