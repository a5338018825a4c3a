#!/usr/bin/env bash
# The same source ingested by N processes at once (issue 17, item 3; docs/pipeline.md "Commit"):
# before, each process committed every unit (2 and 5 processes gave 2x and 5x the rows, exit 0).
# Now every commit attempt checks the snapshots committed since its run's base, so a unit another
# run committed meanwhile is not committed again. For a SQLite catalog and a PostgreSQL catalog
# (a private throwaway server, scripts/pg-test-server.sh; skipped with a reason when none can be
# started), N processes ingest the same generated GeoJSONSeq sources (four files), all at once
# with --create and a commit per unit, then:
# - the table holds every row exactly once (count and distinct ids equal the source's);
# - every process exits 0 and its summary balances: rows read = committed + rejected + rows
#   another run committed meanwhile, and the rows committed by all runs add up to the source;
# - each (source, unit) pair is in exactly one snapshot.
# Size: GEOLAKE_SAME_SOURCE_PROCESSES (default 4) x GEOLAKE_SAME_SOURCE_ROWS (default 6000) rows
# (commits of GEOLAKE_SAME_SOURCE_UNIT_ROWS rows, default 500); ctest runs it small (label e2e) and
# larger as stress.ingest_same_source_concurrently (label stress).
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"
procs="${GEOLAKE_SAME_SOURCE_PROCESSES:-4}"
rows="${GEOLAKE_SAME_SOURCE_ROWS:-6000}"
unit_rows="${GEOLAKE_SAME_SOURCE_UNIT_ROWS:-500}"
command -v node >/dev/null || skip oracles "node not found (run scripts/install-deps.sh)"

# Four files (a GeoJSONSeq file is one unit), so that each run commits several times.
srcs=()
for f in 0 1 2 3; do
  awk -v n="$rows" -v f="$f" 'BEGIN { for (i = f; i < n; i += 4)
    printf "{\"type\":\"Feature\",\"properties\":{\"id\":%d},\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.4f,%.4f]}}\n",
      i, -170 + (i * 7919 % 34000) / 100.0, -80 + (i * 104729 % 16000) / 100.0 }' >"$work/points$f.geojsonl"
  srcs+=("$work/points$f.geojsonl")
done

# units_report WH CATALOG: "<records> <unit pairs> <distinct unit pairs>" from the metadata.
units_report() {
  "$bin" --warehouse "$1" --catalog "$2" describe geo.same --json >"$work/d.json" 2>/dev/null ||
    { echo "describe failed"; return; }
  node -e '
    const fs = require("fs");
    const d = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const m = JSON.parse(fs.readFileSync(d.metadata_location, "utf8"));
    const byId = new Map(m.snapshots.map(s => [s["snapshot-id"], s]));
    let id = m["current-snapshot-id"], pairs = [], records = 0;
    if (byId.get(id)) records = Number(byId.get(id).summary["total-records"]);
    while (id != null && byId.has(id)) {
      const s = byId.get(id);
      for (const u of JSON.parse(s.summary["geolake.units"] || "[]"))
        for (const i of u.units) pairs.push(u.source + "#" + i);
      id = s["parent-snapshot-id"];
    }
    console.log(records, pairs.length, new Set(pairs).size);
  ' "$work/d.json"
}

# run_backend NAME CATALOG_URI
run_backend() {
  local name="$1" uri="$2" wh="$work/wh-$1"
  local g=("$bin" --warehouse "$wh" --catalog "$uri" --progress off --workers 1)
  local pids=() p
  for ((p = 0; p < procs; p++)); do
    "${g[@]}" ingest geo.same "${srcs[@]}" --create --partition none --unit-rows "$unit_rows" \
      --commit-rows "$unit_rows" >"$work/$name-out$p.txt" 2>"$work/$name-err$p.txt" &
    pids+=($!)
  done
  local ok=1 committed=0 elsewhere=0
  for ((p = 0; p < procs; p++)); do
    wait "${pids[$p]}" ||
      { ok=0; fail "$name: process $p: exit $?: $(grep -v '^geolake: info' "$work/$name-err$p.txt" | head -n 1)"; }
    local line; line=$(grep '^rows read ' "$work/$name-out$p.txt")
    local r c j e
    r=$(sed -n 's/^rows read \([0-9]*\) .*/\1/p' <<<"$line")
    c=$(sed -n 's/.* rows committed \([0-9]*\) .*/\1/p' <<<"$line")
    j=$(sed -n 's/.* rows rejected \([0-9]*\).*/\1/p' <<<"$line")
    e=$(sed -n 's/.* rows another run committed meanwhile \([0-9]*\) .*/\1/p' <<<"$line")
    [ "$r" = "$((c + j + ${e:-0}))" ] ||
      { ok=0; fail "$name: process $p summary does not balance: $line"; }
    committed=$((committed + c)); elsewhere=$((elsewhere + ${e:-0}))
  done
  [ $ok = 1 ] && pass "$name: $procs processes ingested one source at once, each exit 0 with a balanced summary"
  [ "$committed" = "$rows" ] && pass "$name: the runs committed $committed rows in all = the source's $rows ($elsewhere rows found committed by another run)" ||
    fail "$name: the runs committed $committed rows in all, the source has $rows"
  "${g[@]}" query geo.same --format csv --columns id -o "$work/$name.csv" 2>"$work/$name-q.err" ||
    fail "$name: query failed: $(head -n 1 "$work/$name-q.err")"
  local n distinct
  n=$(tail -n +2 "$work/$name.csv" | wc -l)
  distinct=$(tail -n +2 "$work/$name.csv" | sort -u | wc -l)
  [ "$n" = "$rows" ] && [ "$distinct" = "$rows" ] &&
    pass "$name: exactly one copy of every row ($n rows, $distinct distinct ids)" ||
    fail "$name: $n rows, $distinct distinct ids; the source has $rows"
  local records pairs dpairs
  read -r records pairs dpairs <<<"$(units_report "$wh" "$uri")"
  [ "$records" = "$rows" ] && [ -n "$pairs" ] && [ "$pairs" = "$dpairs" ] &&
    pass "$name: total-records $records, each of $pairs units in exactly one snapshot" ||
    fail "$name: total-records $records, $pairs unit pairs, $dpairs distinct"
}

run_backend sqlite "sqlite:$work/wh-sqlite/catalog.db"

if start_postgres --optional; then
  run_backend postgres "$uri"
fi

echo "passed $passed, failed $failed"
[ "$failed" = 0 ]
