#!/usr/bin/env bash
# compact beside other work, through the command line, on real data (us_zipcodes, 3 ingests
# into quadkey:3 cells: 27 groups of 3 small files with --min-input-files 2):
# - SIGINT in the middle of a --partial-progress run: the process ends within 2 s with exit 130
#   (or 0 if it had finished), the table holds exactly its rows, nothing half-written is left
#   behind (remove-orphans finds nothing), and a re-run does only the groups that are left;
# - two compactions at once, and an ingest during a compaction: every row once at the end;
# - verify_iceberg.mjs (icebird, avsc, DuckDB) reads the table after each step.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_zipcodes.gpkg
needs_oracles
gl() { "$bin" --warehouse "$work/wh" "$@"; }

table="$work/wh/geo/z"
gl create geo.z --from "$data/us_zipcodes.gpkg" --partition quadkey:3 >/dev/null || fail "create"
ingest_copy() {
  cp "$data/us_zipcodes.gpkg" "$work/z$1.gpkg"
  gl ingest geo.z "$work/z$1.gpkg" --progress off >/dev/null 2>"$work/ingest$1.err" ||
    fail "ingest $1: $(head -c 300 "$work/ingest$1.err")"
}
for i in 1 2 3; do ingest_copy "$i"; done
rows_one=$(gl query geo.z --format csv --where "zip = '96598'" | tail -n +2 | wc -l)

# The table's rows as sorted text, and their count.
content() { gl query geo.z --format csv | tail -n +2 | sort | sha256sum | cut -d' ' -f1; }
count() { gl query geo.z --format csv | tail -n +2 | wc -l; }
oracle_rows() {
  if node "$oracles/verify_iceberg.mjs" "$table" --quiet >"$work/ice.json" 2>"$work/ice.err" &&
     grep -q '"ok": true' "$work/ice.json"; then
    sed -n 's/.*"duckdb_row_count": "\([0-9]*\)".*/\1/p' "$work/ice.json" | head -n1
  else
    echo bad
  fi
}
before=$(content); n3=$(count)
[ "$rows_one" = 3 ] && [ "$(oracle_rows)" = "$n3" ] && pass "3 ingests: $n3 rows, oracle agrees" ||
  fail "setup: $rows_one copies of one zip, oracle $(oracle_rows) vs $n3"

# SIGINT mid-run (the program itself in the background, not a subshell running `gl`).
"$bin" --warehouse "$work/wh" compact geo.z --strategy hilbert --min-input-files 2 --partial-progress --max-commits 27 \
  --progress off >"$work/c1.out" 2>"$work/c1.err" &
pid=$!
sleep 1.2
kill -INT $pid
t0=$(date +%s%N)
wait $pid; code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $code = 130 ] || [ $code = 0 ]; then
  pass "SIGINT: exit $code after ${ms} ms"
else
  fail "SIGINT: exit $code: $(head -c 300 "$work/c1.err")"
fi
[ $ms -le 2000 ] && pass "stopped within 2 s" || fail "took ${ms} ms to stop"
committed=$(grep -c -- "-> committed" "$work/c1.out")
[ "$(content)" = "$before" ] && pass "rows unchanged after the stop ($committed groups committed)" ||
  fail "rows changed after SIGINT"
orphans=$(gl remove-orphans geo.z --older-than 0s --dry-run | tail -1)
echo "$orphans" | grep -q "^would remove 0 orphan files" && pass "nothing half-written left" ||
  fail "after SIGINT: $orphans"
gl compact geo.z --strategy hilbert --min-input-files 2 --progress off >"$work/c2.out" 2>&1 ||
  fail "re-run: $(tail -3 "$work/c2.out")"
left=$(sed -n 's/^compact geo.z (hilbert): \([0-9]*\) group.*/\1/p' "$work/c2.out")
[ "$left" = $((27 - committed)) ] && pass "re-run planned only the $left groups left" ||
  fail "re-run planned $left groups, $committed were committed"
[ "$(content)" = "$before" ] && [ "$(oracle_rows)" = "$n3" ] && pass "rows unchanged, oracle agrees" ||
  fail "after re-run: oracle $(oracle_rows)"

# Two compactions at once, then an ingest during a compaction.
for i in 4 5 6; do ingest_copy "$i"; done
n6=$(count)
gl compact geo.z --strategy hilbert --min-input-files 2 --progress off >"$work/a.out" 2>&1 &
a=$!
gl compact geo.z --strategy binpack --min-input-files 2 --progress off >"$work/b.out" 2>&1 &
b=$!
wait $a; ca=$?
wait $b; cb=$?
{ [ $ca = 0 ] || [ $ca = 7 ]; } && { [ $cb = 0 ] || [ $cb = 7 ]; } &&
  pass "two compactions at once: exits $ca and $cb" ||
  fail "concurrent compactions: $ca $cb: $(tail -2 "$work/a.out") $(tail -2 "$work/b.out")"
[ "$(count)" = "$n6" ] && pass "every row once after two concurrent compactions ($n6)" ||
  fail "rows after concurrent compactions: $(count), want $n6"

for i in 7 8; do cp "$data/us_zipcodes.gpkg" "$work/z$i.gpkg"; done
gl compact geo.z --strategy hilbert --rewrite-all --progress off >"$work/c3.out" 2>&1 &
c=$!
gl ingest geo.z "$work/z7.gpkg" "$work/z8.gpkg" --progress off >/dev/null 2>"$work/i.err" ||
  fail "ingest during compaction: $(head -c 300 "$work/i.err")"
wait $c || fail "compaction beside an ingest: $(tail -3 "$work/c3.out")"
n8=$(count)
[ "$n8" = $((n6 / 6 * 8)) ] && [ "$(oracle_rows)" = "$n8" ] &&
  pass "ingest beside a compaction: every row once ($n8), oracle agrees" ||
  fail "after ingest + compaction: $n8 rows, want $((n6 / 6 * 8)), oracle $(oracle_rows)"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
