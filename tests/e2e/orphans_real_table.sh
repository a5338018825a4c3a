#!/usr/bin/env bash
# remove-orphans on a real table: us_states converted twice into the table's data/ folder and
# appended in two snapshots; then strays are dropped next to the live files (a copy of a real
# data file, a copy of a real manifest under another name, a leftover temporary file, an old
# metadata JSON nobody logs). A dry run lists exactly the strays; the real run removes exactly
# them, every referenced file stays byte-identical, and verify_iceberg.mjs (icebird, avsc,
# DuckDB) still reads the table with all 112 rows.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg
needs_oracles
gl() { "$bin" --warehouse "$work/wh" "$@"; }

table="$work/wh/geo/states"
gl create geo.states --from "$data/us_states.gpkg" --partition none >/dev/null || fail "create"
for i in 1 2; do
  gl convert "$data/us_states.gpkg" "$table/data/states-$i.parquet" >/dev/null || fail "convert $i"
  gl append geo.states "$table/data/states-$i.parquet" >/dev/null || fail "append $i"
done

# iceberg_rows: DuckDB's row count over the table's live files per verify_iceberg.mjs, or "bad".
iceberg_rows() {
  if node "$oracles/verify_iceberg.mjs" "$table" --quiet >"$work/ice.json" 2>"$work/ice.err" &&
     grep -q '"ok": true' "$work/ice.json"; then
    sed -n 's/.*"duckdb_row_count": "\([0-9]*\)".*/\1/p' "$work/ice.json" | head -n1
  else
    echo bad
  fi
}
[ "$(iceberg_rows)" = 112 ] && pass "before: verify_iceberg ok, 112 rows" ||
  fail "before: verify_iceberg: $(cat "$work/ice.json" "$work/ice.err" | head -c 400)"

live_sums() { (cd "$table" && find data metadata -type f -print0 | sort -z | xargs -0 sha256sum); }
live_sums >"$work/live.txt"

manifest=$(ls "$table"/metadata/*-m0.avro | head -n1)
cp "$table/data/states-1.parquet" "$table/data/stray-copy.parquet"
cp "$manifest" "$table/metadata/00000000-0000-0000-0000-000000000000-m0.avro"
echo partial >"$table/data/.states-3.parquet.12345.geolake-tmp"
echo '{}' >"$table/metadata/00099-lost.metadata.json"
strays="data/.states-3.parquet.12345.geolake-tmp data/stray-copy.parquet metadata/00000000-0000-0000-0000-000000000000-m0.avro metadata/00099-lost.metadata.json"

# Fresh strays survive the default threshold of three days.
out=$(gl remove-orphans geo.states); code=$?
[ $code = 0 ] && echo "$out" | grep -q "removed 0 orphan files.* 4 unreferenced files newer than 3d" &&
  pass "default 3d keeps fresh strays" || fail "default threshold: exit $code: $out"

listed=$(gl remove-orphans geo.states --older-than 0s --dry-run | sed -n 's/^would remove \([^ ]*\) (.*/\1/p' | sort | paste -sd' ')
[ "$listed" = "$strays" ] && [ -e "$table/data/stray-copy.parquet" ] &&
  pass "dry run lists exactly the 4 strays, deletes nothing" || fail "dry run listed: $listed"

removed=$(gl remove-orphans geo.states --older-than 0s --no-running-writers | sed -n 's/^removed \([^ ]*\) (.*/\1/p' | sort | paste -sd' ')
[ "$removed" = "$strays" ] && pass "removed exactly the 4 strays" || fail "removed: $removed"
live_sums >"$work/after.txt"
cmp -s "$work/live.txt" "$work/after.txt" && pass "every referenced file still there, unchanged" ||
  fail "referenced files changed: $(diff "$work/live.txt" "$work/after.txt" | head -5)"
[ "$(iceberg_rows)" = 112 ] && pass "after: verify_iceberg ok, 112 rows" ||
  fail "after: verify_iceberg: $(cat "$work/ice.json" "$work/ice.err" | head -c 400)"

# Nothing left to do: a second run removes nothing.
out=$(gl remove-orphans geo.states --older-than 0s --no-running-writers)
echo "$out" | grep -q "^removed 0 orphan files" && pass "second run removes nothing" || fail "second run: $out"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
