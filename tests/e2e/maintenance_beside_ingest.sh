#!/usr/bin/env bash
# Maintenance beside running ingests (docs/maintenance.md "Concurrency"), on the SQLite catalog
# and on a private PostgreSQL one: two ingest processes each commit four small sources (the
# 42,555 US ZIP code points cut into 8 parts) into one table, while a third process runs
# compact (hilbert), rewrite-manifests and expire-snapshots (--older-than 0s --retain-last 2) in
# a loop until both ingests end, then once more. Afterwards:
# - every maintenance command and every ingest exited 0 (conflicts are retried, never lost);
# - the table holds every source row exactly once (the sorted zip list equals the sources');
# - every snapshot the table keeps loads (a query at each one), and the oracles (icebird, avsc,
#   DuckDB) read the table;
# - remove-orphans, told nothing writes, leaves a table with the same rows.
# Skipped (exit 77) without the data, the oracles or (the PostgreSQL half only) a server.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"
needs_data us_zipcodes.gpkg
needs_oracles
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"

parts=8
for ((k = 0; k < parts; k++)); do
  ogr2ogr -f GPKG "$work/z$k.gpkg" "$data/us_zipcodes.gpkg" -nln zips \
    -where "fid % $parts = $k" 2>"$work/ogr.err" || fail "ogr2ogr part $k: $(head -n 2 "$work/ogr.err")"
done
ogr2ogr -f CSV /vsistdout/ "$data/us_zipcodes.gpkg" -select zip 2>/dev/null | tail -n +2 |
  tr -d '"' | LC_ALL=C sort >"$work/zips.expected"
expected=$(wc -l <"$work/zips.expected")

# run_round NAME CATALOG_ARGS...: the whole scenario against one catalog.
run_round() {
  local name="$1"
  shift
  local wh="$work/wh-$name"
  local -a gl=("$bin" --warehouse "$wh" "$@" --progress off)
  "${gl[@]}" create geo.t --from "$work/z0.gpkg" --partition quadkey:2 >/dev/null 2>"$work/$name.create" ||
    { fail "$name: create: $(head -n 1 "$work/$name.create")"; return; }
  # Two ingest processes, four sources each, one commit per source.
  for side in 0 1; do
    (
      for ((k = side; k < parts; k += 2)); do
        "${gl[@]}" ingest geo.t "$work/z$k.gpkg" >>"$work/$name.ingest$side" 2>&1 ||
          { echo "ingest z$k failed" >>"$work/$name.ingest$side"; exit 1; }
      done
    ) &
    eval "ingest_pid_$side=$!"
  done
  local rounds=0 maint_failures=0 out
  maintain_once() {
    for cmd in "compact geo.t --strategy hilbert --min-input-files 2" "rewrite-manifests geo.t" \
      "expire-snapshots geo.t --older-than 0s --retain-last 2"; do
      # shellcheck disable=SC2086
      if ! out=$("${gl[@]}" $cmd 2>&1); then
        maint_failures=$((maint_failures + 1))
        echo "$name: $cmd: $(echo "$out" | tail -n 2)" >>"$work/$name.maint"
      fi
    done
    rounds=$((rounds + 1))
  }
  while kill -0 "$ingest_pid_0" 2>/dev/null || kill -0 "$ingest_pid_1" 2>/dev/null; do
    maintain_once
  done
  local ingest_ok=1
  wait "$ingest_pid_0" || ingest_ok=0
  wait "$ingest_pid_1" || ingest_ok=0
  maintain_once
  [ $ingest_ok = 1 ] && pass "$name: both ingests exited 0 beside maintenance" ||
    fail "$name: an ingest failed: $(tail -n 3 "$work/$name.ingest0" "$work/$name.ingest1")"
  [ $maint_failures = 0 ] && pass "$name: $rounds maintenance rounds (compact, rewrite-manifests, expire), every command exited 0" ||
    fail "$name: $maint_failures maintenance commands failed in $rounds rounds: $(head -n 3 "$work/$name.maint")"

  rows() { "${gl[@]}" query geo.t --format csv "$@" | head -n 1 | tr ',' '\n' | grep -nx zip | cut -d: -f1; }
  local col
  col=$(rows)
  "${gl[@]}" query geo.t --format csv | tail -n +2 | cut -d, -f"$col" | tr -d '"' |
    LC_ALL=C sort >"$work/$name.zips"
  if cmp -s "$work/$name.zips" "$work/zips.expected"; then
    pass "$name: every one of the $expected rows once"
  else
    fail "$name: $(wc -l <"$work/$name.zips") rows, expected $expected; $(diff "$work/$name.zips" "$work/zips.expected" | grep -c '^[<>]') differ"
  fi
  local snaps bad=0 n=0
  snaps=$("${gl[@]}" snapshots geo.t --json 2>/dev/null |
    python3 -c 'import json,sys; print(" ".join(str(s["snapshot_id"]) for s in json.load(sys.stdin)["snapshots"]))' 2>/dev/null)
  for s in $snaps; do
    n=$((n + 1))
    "${gl[@]}" query geo.t --snapshot "$s" --format csv >/dev/null 2>"$work/$name.snap" ||
      { bad=$((bad + 1)); echo "snapshot $s: $(head -n 1 "$work/$name.snap")" >>"$work/$name.snaps"; }
  done
  [ "$n" -gt 0 ] && [ $bad = 0 ] && pass "$name: each of the $n snapshots kept loads" ||
    fail "$name: $bad of $n snapshots do not load: $(head -n 2 "$work/$name.snaps" 2>/dev/null)"
  if node "$oracles/verify_iceberg.mjs" "$wh/geo/t" --quiet >"$work/$name.ice" 2>&1 &&
    grep -q '"ok": true' "$work/$name.ice"; then
    pass "$name: the oracles read the table"
  else
    fail "$name: verify_iceberg: $(head -c 400 "$work/$name.ice")"
  fi
  "${gl[@]}" remove-orphans geo.t --older-than 0s --no-running-writers >"$work/$name.orph" 2>&1 ||
    fail "$name: remove-orphans: $(tail -n 1 "$work/$name.orph")"
  "${gl[@]}" query geo.t --format csv | tail -n +2 | cut -d, -f"$col" | tr -d '"' |
    LC_ALL=C sort >"$work/$name.zips2"
  cmp -s "$work/$name.zips2" "$work/zips.expected" &&
    pass "$name: after remove-orphans ($(tail -n 1 "$work/$name.orph")) the rows are the same" ||
    fail "$name: rows changed after remove-orphans"
}

run_round sqlite
if start_postgres --optional; then
  run_round postgres --catalog "$uri"
fi

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
