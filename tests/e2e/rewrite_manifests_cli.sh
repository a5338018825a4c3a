#!/usr/bin/env bash
# rewrite-manifests on real data (us_counties, 20 ingests: one manifest per commit):
# - a dry run prints the plan and changes nothing;
# - the run rewrites the 20 data manifests into 1, data files untouched, rows identical (query
#   and the oracles: icebird, avsc, DuckDB), each entry keeps its sequence numbers;
# - time travel to an older snapshot still reads the rows it had;
# - a second run is a no-op; --target-manifest-size splits; remove-orphans finds nothing left;
# - 6 SIGKILLs at random instants: rows intact after each, a re-run completes, remove-orphans
#   removes what they left;
# - bad input: a bad size, an unknown table, a damaged manifest (refused naming it).
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
needs_oracles
gl() { "$bin" --warehouse "$work/wh" "$@"; }

table="$work/wh/geo/c"
gl create geo.c --from "$data/us_counties.gpkg" --partition none >/dev/null || fail "create"
for i in $(seq 1 20); do
  cp "$data/us_counties.gpkg" "$work/c$i.gpkg"
  gl ingest geo.c "$work/c$i.gpkg" --progress off >/dev/null 2>"$work/i$i.err" ||
    fail "ingest $i: $(head -c 300 "$work/i$i.err")"
  rm -f "$work/c$i.gpkg"
done
count() { gl query geo.c --format csv "$@" | tail -n +2 | wc -l; }
content() { gl query geo.c --format csv "$@" | tail -n +2 | sort | sha256sum | cut -d' ' -f1; }
snapshots() { gl snapshots geo.c | sed -n 's/^snapshot \([0-9]*\).*/\1/p'; }
oracle() {
  if node "$oracles/verify_iceberg.mjs" "$table" --quiet >"$work/ice.json" 2>"$work/ice.err" &&
    grep -q '"ok": true' "$work/ice.json"; then
    pass "oracles read the table $1"
  else
    fail "oracles $1: $(head -c 300 "$work/ice.json") $(head -c 300 "$work/ice.err")"
  fi
}
n=$(count); sum=$(content)
[ "$(snapshots | wc -l)" = 20 ] && pass "20 ingests: 20 snapshots, $n rows" ||
  fail "setup: $(snapshots | wc -l) snapshots"
data_before=$(find "$table/data" -type f -name '*.parquet' -printf '%p %s %T@\n' | sort | sha256sum)
oracle "before"
old=$(snapshots | sed -n 5p)
old_rows=$(count --snapshot "$old")

gl rewrite-manifests geo.c --dry-run >"$work/dry.out" 2>&1 || fail "dry run: $(cat "$work/dry.out")"
[ "$(snapshots | wc -l)" = 20 ] && grep -q "^would rewrite manifests of geo.c: 20 data manifests" "$work/dry.out" &&
  pass "dry run changed nothing: $(head -1 "$work/dry.out")" || fail "dry run: $(cat "$work/dry.out")"

gl --metrics-json "$work/m.json" rewrite-manifests geo.c >"$work/rw.out" 2>&1 ||
  fail "rewrite: $(cat "$work/rw.out")"
grep -q "20 data manifests .* -> 1 manifest .* 20 entries" "$work/rw.out" &&
  pass "rewrote: $(head -1 "$work/rw.out")" || fail "rewrite said: $(cat "$work/rw.out")"
grep -q '"rewrite_manifests.manifests_before": 20' "$work/m.json" &&
  grep -q '"rewrite_manifests.manifests_after": 1' "$work/m.json" &&
  pass "--metrics-json: manifests 20 -> 1" || fail "metrics: $(grep rewrite "$work/m.json")"
[ "$(snapshots | wc -l)" = 21 ] && pass "one new snapshot" || fail "$(snapshots | wc -l) snapshots"
gl snapshots geo.c | tail -2 | grep -q "operation *replace" && pass "operation replace" ||
  fail "last snapshot: $(gl snapshots geo.c | tail -4)"
data_after=$(find "$table/data" -type f -name '*.parquet' -printf '%p %s %T@\n' | sort | sha256sum)
[ "$data_before" = "$data_after" ] && pass "data files untouched" || fail "data files changed"
[ "$(count)" = "$n" ] && [ "$(content)" = "$sum" ] && pass "rows identical ($n) via query" ||
  fail "rows after: $(count), want $n"
oracle "after the rewrite"
[ "$(count --snapshot "$old")" = "$old_rows" ] &&
  pass "time travel to snapshot $old still reads its $old_rows rows" ||
  fail "time travel to $old: $(count --snapshot "$old") rows, want $old_rows"

gl rewrite-manifests geo.c >"$work/again.out" 2>&1 || fail "second run: $(cat "$work/again.out")"
grep -q "^nothing to rewrite in geo.c" "$work/again.out" && [ "$(snapshots | wc -l)" = 21 ] &&
  pass "second run is a no-op: $(cat "$work/again.out")" || fail "second run: $(cat "$work/again.out")"

gl rewrite-manifests geo.c --target-manifest-size 5KiB >"$work/split.out" 2>&1 ||
  fail "split: $(cat "$work/split.out")"
parts=$(grep -c "^manifest " "$work/split.out")
[ "$parts" -gt 1 ] && [ "$(content)" = "$sum" ] &&
  pass "--target-manifest-size 5KiB: 1 -> $parts manifests, rows identical" ||
  fail "split: $(cat "$work/split.out")"
oracle "after the split"

orphans=$(gl remove-orphans geo.c --older-than 0s --dry-run | tail -1)
echo "$orphans" | grep -q "^would remove 0 orphan files" && pass "no file left behind" ||
  fail "after rewrite: $orphans"

# SIGKILL at random instants: each run alternates the target (5KiB splits, 8MiB merges), so
# every run has work; after each kill the table loads with exactly its rows; what a killed run
# wrote is an orphan that remove-orphans removes, and then nothing is left.
killed=0
for k in 1 2 3 4 5 6; do
  size=$([ $((k % 2)) = 1 ] && echo 8MiB || echo 5KiB)
  gl rewrite-manifests geo.c --target-manifest-size "$size" >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
  kill -9 $pid 2>/dev/null && killed=$((killed + 1))
  wait $pid 2>/dev/null
  [ "$(content)" = "$sum" ] || fail "after kill $k ($size): rows differ ($(count))"
done
pass "$killed of 6 runs SIGKILLed mid-way: the table read its $n rows after each"
gl rewrite-manifests geo.c --target-manifest-size 8MiB >"$work/rerun.out" 2>&1 ||
  fail "re-run after kills: $(cat "$work/rerun.out")"
[ "$(content)" = "$sum" ] && pass "re-run after the kills: $(head -1 "$work/rerun.out")" ||
  fail "re-run: rows differ"
gl remove-orphans geo.c --older-than 0s --no-running-writers >"$work/orph.out" 2>&1 || fail "remove-orphans"
orphans=$(gl remove-orphans geo.c --older-than 0s --dry-run | tail -1)
echo "$orphans" | grep -q "^would remove 0 orphan files" && [ "$(content)" = "$sum" ] &&
  pass "remove-orphans took what the killed runs left ($(tail -1 "$work/orph.out")); rows intact" ||
  fail "after the kills: $orphans"
oracle "after the kills"

# Bad input.
gl rewrite-manifests geo.c --target-manifest-size lots >/dev/null 2>"$work/bad.err"; code=$?
[ $code = 2 ] && grep -q -- "--target-manifest-size" "$work/bad.err" && pass "bad size: exit 2" ||
  fail "bad size: exit $code $(cat "$work/bad.err")"
gl rewrite-manifests geo.nope >/dev/null 2>&1; code=$?
[ $code = 3 ] && pass "unknown table: exit 3" || fail "unknown table: exit $code"
victim=$(grep -o "[^ ]*-m0.avro" "$work/split.out" | head -1)
[ -n "$victim" ] || victim=$(ls -t "$table"/metadata/*-m0.avro | head -1)
cp "$victim" "$work/victim.bak"
echo garbage >"$victim"
before=$(ls "$table/metadata" | sha256sum)
gl rewrite-manifests geo.c --target-manifest-size 1MiB >/dev/null 2>"$work/dmg.err"; code=$?
[ $code = 6 ] && grep -q "$(basename "$victim")" "$work/dmg.err" &&
  [ "$(ls "$table/metadata" | sha256sum)" = "$before" ] &&
  pass "damaged manifest: exit 6 naming it, nothing written or deleted" ||
  fail "damaged manifest: exit $code $(cat "$work/dmg.err")"
cp "$work/victim.bak" "$victim"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
