#!/usr/bin/env bash
# SIGKILL at random instants of compact and expire-snapshots (docs/maintenance.md "Crash
# safety"): 30 runs killed after 0-1000 ms (odd runs compact --strategy hilbert, even runs
# expire-snapshots), on a table of US ZIP code points in quadkey:2 cells fed by small ingests.
# After each kill the table loads and holds exactly the rows it held before (the sorted rows'
# hash); when a compaction had finished, one more small ingest gives the next run work. Then a
# final compact, expire and remove-orphans (told nothing writes): remove-orphans --dry-run finds
# nothing more, every Parquet file under data/ is one the current snapshot lists, and the oracles
# (icebird, avsc, DuckDB) read the table. Prints how many kills hit a live process and how many
# orphans the killed runs left.
# Skipped (exit 77) without the data or the oracles.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_zipcodes.gpkg
needs_oracles
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"

wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
parts=16
for ((k = 0; k < parts; k++)); do
  ogr2ogr -f GPKG "$work/z$k.gpkg" "$data/us_zipcodes.gpkg" -nln zips \
    -where "fid % $parts = $k" 2>"$work/ogr.err" || fail "ogr2ogr part $k: $(head -n 2 "$work/ogr.err")"
done
gl create geo.t --from "$work/z0.gpkg" --partition quadkey:2 >/dev/null || fail "create"
next=0
feed() {  # one more small ingest (a copy, so the source is new to the table)
  local k=$((next % parts))
  cp "$work/z$k.gpkg" "$work/feed$next.gpkg"
  gl ingest geo.t "$work/feed$next.gpkg" >/dev/null 2>"$work/feed.err" ||
    fail "ingest feed$next: $(head -n 1 "$work/feed.err")"
  next=$((next + 1))
}
for i in 1 2 3 4 5 6; do feed; done
content() { gl query geo.t --format csv 2>"$work/q.err" | LC_ALL=C sort | sha256sum | cut -d' ' -f1; }

kills=30 live=0 broken=0
RANDOM=20261204  # a fixed seed: the same instants on every run
for ((i = 1; i <= kills; i++)); do
  before=$(content)
  if ((i % 2)); then
    args=(compact geo.t --strategy hilbert --min-input-files 2)
  else
    args=(expire-snapshots geo.t --older-than 0s --retain-last 1)
  fi
  "$bin" --warehouse "$wh" --progress off "${args[@]}" >"$work/run.out" 2>&1 &
  pid=$!
  delay_ms=$((RANDOM % 1000))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if kill -KILL $pid 2>/dev/null; then live=$((live + 1)); fi
  wait $pid 2>/dev/null
  after=$(content)
  if [ -s "$work/q.err" ] || [ "$after" != "$before" ]; then
    broken=$((broken + 1))
    echo "kill $i (${args[0]} after $delay_ms ms): $(head -n 1 "$work/q.err")" >>"$work/broken"
  fi
  # Work for the next compaction: a finished one leaves few small files.
  if ((i % 2)) && grep -q "committed\|nothing to compact\|no group" "$work/run.out"; then feed; feed; fi
  if ((i % 4 == 0)); then feed; fi
done
[ $broken = 0 ] && pass "$kills SIGKILLs ($live hit a live process): the table loaded with the same rows after each" ||
  fail "$broken of $kills kills left a table that does not load or changed rows: $(head -n 3 "$work/broken")"

final=$(content)
gl compact geo.t --strategy hilbert --min-input-files 2 >"$work/c.out" 2>&1 || fail "final compact: $(tail -n 1 "$work/c.out")"
gl expire-snapshots geo.t --older-than 0s --retain-last 1 >"$work/e.out" 2>&1 || fail "final expire: $(tail -n 1 "$work/e.out")"
[ "$(content)" = "$final" ] && pass "a final compact and expire complete with the same rows" ||
  fail "rows changed in the final compact/expire"
orphans=$(gl remove-orphans geo.t --older-than 0s --no-running-writers 2>&1 | tail -n 1)
echo "remove-orphans: $orphans"
again=$(gl remove-orphans geo.t --older-than 0s --dry-run 2>&1 | tail -n 1)
echo "$again" | grep -q "^would remove 0 orphan files" && pass "nothing unreferenced is left ($orphans)" ||
  fail "after remove-orphans: $again"
on_disk=$(find "$wh/geo/t/data" -name '*.parquet' | LC_ALL=C sort)
listed=$(gl files geo.t --json | python3 -c 'import json,sys; print("\n".join(sorted(f["path"] for f in json.load(sys.stdin)["files"])))')
[ "$on_disk" = "$listed" ] && pass "every Parquet file under data/ is live ($(echo "$listed" | wc -l) files)" ||
  fail "data/ holds $(echo "$on_disk" | wc -l) Parquet files, the snapshot lists $(echo "$listed" | wc -l)"
[ "$(content)" = "$final" ] && pass "rows unchanged by remove-orphans" || fail "rows changed by remove-orphans"
if node "$oracles/verify_iceberg.mjs" "$wh/geo/t" --quiet >"$work/ice" 2>&1 && grep -q '"ok": true' "$work/ice"; then
  pass "the oracles read the table"
else
  fail "verify_iceberg: $(head -c 400 "$work/ice")"
fi

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
