#!/usr/bin/env bash
# expire-snapshots on real data (us_counties, 4 ingests, then a hilbert compaction):
# - a dry run changes nothing and announces what the real run then does;
# - --retain-last 2 drops the 3 oldest snapshots and deletes exactly the files only they
#   reached (the 4 ingests' files stay live until the compaction replaced them);
# - time travel to each retained snapshot reads the rows it had, the oracles (icebird, avsc,
#   DuckDB) read the table, remove-orphans finds nothing left behind;
# - an ingest running beside an expiry loses nothing;
# - bad input: --retain-last 0, a bad duration, an unknown table.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
needs_oracles
gl() { "$bin" --warehouse "$work/wh" "$@"; }

table="$work/wh/geo/c"
gl create geo.c --from "$data/us_counties.gpkg" --partition none >/dev/null || fail "create"
for i in 1 2 3 4; do
  cp "$data/us_counties.gpkg" "$work/c$i.gpkg"
  gl ingest geo.c "$work/c$i.gpkg" --progress off >/dev/null 2>"$work/i$i.err" ||
    fail "ingest $i: $(head -c 300 "$work/i$i.err")"
done
gl compact geo.c --strategy hilbert --min-input-files 2 --progress off >/dev/null 2>&1 ||
  fail "compact"
count() { gl query geo.c --format csv "$@" | tail -n +2 | wc -l; }
content() { gl query geo.c --format csv "$@" | tail -n +2 | sort | sha256sum | cut -d' ' -f1; }
# Ids from the text output: jq reads numbers as doubles, and snapshot ids exceed 2^53.
snapshots() { gl snapshots geo.c | sed -n 's/^snapshot \([0-9]*\).*/\1/p'; }
n=$(count); sum=$(content)
[ "$(snapshots | wc -l)" = 5 ] && pass "4 ingests and a compaction: 5 snapshots, $n rows" ||
  fail "setup: $(snapshots | wc -l) snapshots"
data_files() { find "$table/data" -type f -name '*.parquet' | wc -l; }
before_files=$(data_files)

gl expire-snapshots geo.c --older-than 0s --retain-last 2 --dry-run >"$work/dry.out" 2>&1 ||
  fail "dry run: $(cat "$work/dry.out")"
[ "$(snapshots | wc -l)" = 5 ] && [ "$(data_files)" = "$before_files" ] &&
  pass "dry run changed nothing: $(head -1 "$work/dry.out")" || fail "dry run changed the table"

kept=$(snapshots | tail -2)
gl expire-snapshots geo.c --older-than 0s --retain-last 2 >"$work/exp.out" 2>&1 ||
  fail "expire: $(cat "$work/exp.out")"
[ "$(tail -1 "$work/dry.out" | sed 's/^would delete/deleted/')" = "$(tail -1 "$work/exp.out")" ] &&
  pass "the real run did what the dry run said: $(tail -1 "$work/exp.out")" ||
  fail "dry run said '$(tail -1 "$work/dry.out")', run did '$(tail -1 "$work/exp.out")'"
[ "$(snapshots)" = "$kept" ] && pass "the 2 newest snapshots are kept" ||
  fail "snapshots left: $(snapshots | tr '\n' ' ')"
# The retained snapshot before the compaction (the 4th ingest) still reads every ingested
# file: no data file is deleted yet, only the 3 expired manifest lists.
[ "$(data_files)" = "$before_files" ] && pass "files the retained ingest snapshot reads are kept" ||
  fail "data files $(data_files), were $before_files"
oldest=$(snapshots | head -1)
[ "$(count --snapshot "$oldest")" = "$n" ] && [ "$(content --snapshot "$oldest")" = "$sum" ] &&
  pass "time travel to the retained snapshot $oldest reads its $n rows" ||
  fail "time travel to $oldest: $(count --snapshot "$oldest") rows"

gl expire-snapshots geo.c --older-than 0s --retain-last 1 >"$work/exp2.out" 2>&1 ||
  fail "expire to 1: $(cat "$work/exp2.out")"
live=$(gl files geo.c | tail -1 | cut -d' ' -f1)
[ "$(data_files)" = "$live" ] && grep -q "^deleted $((before_files - live)) data files" "$work/exp2.out" &&
  pass "retain-last 1: the $((before_files - live)) replaced files are deleted, $live live left" ||
  fail "after retain-last 1: $(data_files) data files: $(tail -1 "$work/exp2.out")"
[ "$(content)" = "$sum" ] && pass "rows unchanged" || fail "rows changed"
if node "$oracles/verify_iceberg.mjs" "$table" --quiet >"$work/ice.json" 2>"$work/ice.err" &&
   grep -q '"ok": true' "$work/ice.json"; then
  pass "oracles read the expired table"
else
  fail "oracles: $(head -c 300 "$work/ice.json") $(head -c 300 "$work/ice.err")"
fi
orphans=$(gl remove-orphans geo.c --older-than 0s --dry-run | tail -1)
echo "$orphans" | grep -q "^would remove 0 orphan files" && pass "no file left behind" ||
  fail "after expiry: $orphans"

# An ingest beside an expiry loses nothing.
for i in 5 6; do cp "$data/us_counties.gpkg" "$work/c$i.gpkg"; done
gl ingest geo.c "$work/c5.gpkg" --progress off >/dev/null 2>&1 || fail "ingest 5"
gl ingest geo.c "$work/c6.gpkg" --progress off >/dev/null 2>"$work/i6.err" &
ing=$!
gl expire-snapshots geo.c --older-than 0s --retain-last 1 >"$work/exp3.out" 2>&1 ||
  fail "expire beside an ingest: $(cat "$work/exp3.out")"
wait $ing || fail "ingest beside an expiry: $(head -c 300 "$work/i6.err")"
[ "$(count)" = $((n / 4 * 6)) ] && pass "ingest beside an expiry: every row once ($(count))" ||
  fail "rows $(count), want $((n / 4 * 6))"

# Bad input.
gl expire-snapshots geo.c --retain-last 0 >/dev/null 2>&1; code=$?
[ $code = 2 ] && pass "--retain-last 0: exit 2" || fail "--retain-last 0: exit $code"
gl expire-snapshots geo.c --older-than soon >/dev/null 2>"$work/bad.err"; code=$?
[ $code = 2 ] && grep -q -- "--older-than" "$work/bad.err" && pass "bad duration: exit 2" ||
  fail "bad duration: exit $code $(cat "$work/bad.err")"
gl expire-snapshots geo.nope >/dev/null 2>&1; code=$?
[ $code = 3 ] && pass "unknown table: exit 3" || fail "unknown table: exit $code"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
