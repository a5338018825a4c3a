#!/usr/bin/env bash
# Sharded ingest (docs/cli.md "ingest", `--shard I/N`): three geolake processes started at once
# with --shard 0/3, 1/3 and 2/3 load five real datasets (cut into units of 20,000 features)
# into ONE table of a PostgreSQL catalog, all three with --create (one creates it, the others
# load it). Then:
# - the table holds every row exactly once: its record count is the sum of ogrinfo's counts,
#   every (source, unit) pair is committed by exactly one snapshot, and the three runs' units
#   add up to all units;
# - resume per shard: a shard stopped by SIGINT after its first commit, run again, takes only
#   its units not yet committed; a re-run of a finished shard reads nothing;
# - a bad --shard (I >= N, N < 1, not I/N) is exit 2 with a message naming it.
# Skipped (exit 77) when the datasets are missing or no PostgreSQL server can be started.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"

files=(us_states.gpkg us_counties.gpkg us_zipcodes.gpkg ne_countries_10m.gpkg geonames_cities500.fgb)
needs_data "${files[@]}"
needs_oracles
start_postgres
wh="$work/wh"
sources=()
total=0
for f in "${files[@]}"; do
  sources+=("$data/$f")
  n=$(ogrinfo -ro -so -al "$data/$f" | sed -n 's/^Feature Count: //p' | head -n 1)
  total=$((total + n))
done
g() { "$bin" --warehouse "$wh" --catalog "$uri" --progress off "$@"; }
shard_args=(--create --partition quadkey:1 --unit-rows 20000)

# json FILE EXPR: a JavaScript expression over the parsed JSON object `j`.
json() { node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(eval(process.argv[2]))' "$1" "$2"; }
# units_report TABLE: "<records> <unit pairs> <distinct unit pairs>" from the table's metadata.
units_report() {
  g describe "$1" --json >"$work/d.json" 2>/dev/null || { echo "describe failed"; return; }
  local meta; meta=$(json "$work/d.json" 'j.metadata_location')
  node -e '
    const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const byId = new Map(m.snapshots.map(s => [s["snapshot-id"], s]));
    let id = m["current-snapshot-id"], pairs = [], records = 0;
    const cur = byId.get(id);
    if (cur) records = Number(cur.summary["total-records"]);
    while (id != null && byId.has(id)) {
      const s = byId.get(id);
      for (const u of JSON.parse(s.summary["geolake.units"] || "[]"))
        for (const i of u.units) pairs.push(u.source.split(":").slice(0, 3).join(":") + "#" + i);
      id = s["parent-snapshot-id"];
    }
    console.log(records, pairs.length, new Set(pairs).size);
  ' "$meta"
}
# units_done OUT_FILE: the "N units" of the run report in OUT_FILE.
units_done() { sed -n 's/.*sources ([0-9]* skipped), \([0-9]*\) units.*/\1/p' "$1"; }

# 1. Three shards at once into one table.
pids=()
for s in 0 1 2; do
  g ingest geo.all "${sources[@]}" "${shard_args[@]}" --shard "$s/3" >"$work/out$s.txt" 2>"$work/err$s.txt" &
  pids+=($!)
done
ok=1
for s in 0 1 2; do
  wait "${pids[$s]}" || { ok=0; fail "shard $s/3: exit $?: $(grep -v '^geolake: info' "$work/err$s.txt" | head -n 1)"; }
done
[ $ok = 1 ] && pass "three shards ran at once into one PostgreSQL-catalog table"
read -r records pairs distinct <<<"$(units_report geo.all)"
[ "$records" = "$total" ] && pass "every row once: $records records = the sources' $total features" ||
  fail "table has $records records, the sources $total"
[ -n "$pairs" ] && [ "$pairs" = "$distinct" ] && pass "each of $pairs units committed by exactly one snapshot" ||
  fail "units committed: $pairs, distinct $distinct"
sum=0
for s in 0 1 2; do
  u=$(units_done "$work/out$s.txt"); sum=$((sum + ${u:-0}))
  grep -q "shard $s/3: ${u:-x} units to do here" "$work/err$s.txt" ||
    fail "shard $s/3: no shard line in its log: $(grep shard "$work/err$s.txt" | head -n 1)"
  [ "${u:-0}" -gt 0 ] || fail "shard $s/3 took no unit"
done
[ "$sum" = "$pairs" ] && pass "the shards' units add up: $sum" || fail "shards did $sum units, the table has $pairs"

# 2. Re-run of a finished shard: nothing to do.
g ingest geo.all "${sources[@]}" "${shard_args[@]}" --shard 1/3 >"$work/again.txt" 2>"$work/err.txt"
code=$?
[ $code = 0 ] && grep -q "rows read 0 = rows committed 0" "$work/again.txt" &&
  pass "re-run of shard 1/3 reads nothing" ||
  fail "re-run of shard 1/3: exit $code: $(head -n 2 "$work/again.txt" | tail -n 1)"

# 3. A shard stopped after its first commit resumes with only its own units.
"$bin" --warehouse "$wh" --catalog "$uri" --progress off ingest geo.resume "${sources[@]}" \
  "${shard_args[@]}" --shard 2/3 --commit-rows 1 >"$work/cut.txt" 2>"$work/cut.err" &
pid=$!
for _ in $(seq 1 1200); do
  grep -q "committed snapshot" "$work/cut.err" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
kill -INT "$pid" 2>/dev/null
wait "$pid"; code=$?
[ $code = 130 ] || [ $code = 0 ] && pass "shard 2/3 stopped by SIGINT (exit $code)" ||
  fail "shard 2/3 under SIGINT: exit $code: $(grep -v '^geolake: info' "$work/cut.err" | head -n 1)"
for s in 0 1; do
  g ingest geo.resume "${sources[@]}" "${shard_args[@]}" --shard "$s/3" >/dev/null 2>"$work/err.txt" ||
    fail "geo.resume shard $s/3: $(head -n 1 "$work/err.txt")"
done
g ingest geo.resume "${sources[@]}" "${shard_args[@]}" --shard 2/3 >"$work/resumed.txt" 2>"$work/err.txt" ||
  fail "resume of shard 2/3: $(head -n 1 "$work/err.txt")"
skipped=$(sed -n 's/.*units (\([0-9]*\) skipped).*/\1/p' "$work/resumed.txt")
read -r records pairs distinct <<<"$(units_report geo.resume)"
[ "$records" = "$total" ] && [ "$pairs" = "$distinct" ] &&
  pass "resumed shard 2/3 (skipped $skipped committed units): $records records, $pairs units once each" ||
  fail "after resume: $records records (want $total), $pairs units, $distinct distinct"

# 4. Bad --shard values.
for bad in 3/3 0/0 -1/2 x 1/ 2/1; do
  g ingest geo.all "${sources[0]}" --shard "$bad" >/dev/null 2>"$work/err.txt"
  code=$?
  [ $code = 2 ] && grep -q -- "--shard '$bad'" "$work/err.txt" &&
    pass "--shard $bad: exit 2, $(head -n 1 "$work/err.txt")" ||
    fail "--shard $bad: exit $code, $(head -n 1 "$work/err.txt")"
done

echo "passed: $passed, failed: $failed"
[ "$failed" = 0 ]
