#!/usr/bin/env bash
# ingest on real data (issue #5): GeoPackage, GeoJSONSeq and FlatGeobuf sources into fresh
# tables of a local SQLite warehouse. Checks: the rows invariant from --metrics-json (rows
# read = rows committed + rows rejected, and = ogrinfo's feature count); a re-run skips the
# committed source and adds nothing; SIGINT after the first commit exits 130 and leaves a
# table that verify_iceberg.mjs loads, holding whole units only (journal: every committed unit
# complete, the uncommitted files listed with committed=false); data files pass
# verify_parquet.mjs and tables pass verify_iceberg.mjs (icebird/avsc/DuckDB).
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg us_states.geojsonl us_states.fgb geonames_cities500.gpkg
needs_oracles
wh="$work/wh"
count() { ogrinfo -ro -so -al "$1" | sed -n 's/^Feature Count: //p' | head -n 1; }
# metric FILE NAME: a top-level counter of a --metrics-json report.
metric() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"].get(sys.argv[2], -1))' "$1" "$2"; }
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
# iceberg_rows TABLE_DIR: rows DuckDB counts over the live data files (verify_iceberg.mjs),
# or "bad" when the oracle reports a problem.
iceberg_rows() {
  node "$oracles/verify_iceberg.mjs" "$1" --quiet >"$work/ice.json" 2>"$work/ice.err"
  local rc=$?
  python3 - "$work/ice.json" "$rc" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print("bad"); sys.exit()
duck, icebird = j.get("duckdb_row_count"), j.get("icebird_rows_read")
ok = sys.argv[2] == "0" and j.get("ok") and duck is not None and str(duck) == str(icebird)
print(duck if ok else "bad")
EOF
}

# 1. GeoPackage, created from the source; invariant from the metrics. Partitioned explicitly:
# the default for 1.7 MB is none (one file per unit), and step 4 wants several partition files.
src="$data/us_counties.gpkg"
want=$(count "$src")
if gl --metrics-json "$work/m1.json" ingest demo.counties "$src" --create --partition quadkey:4 >"$work/out1.txt" 2>"$work/err1.txt"; then
  read_rows=$(metric "$work/m1.json" rows_read)
  committed=$(metric "$work/m1.json" rows_committed)
  rejected=$(metric "$work/m1.json" rows_rejected)
  [ "$read_rows" = "$want" ] && pass "gpkg: $read_rows rows read, as ogrinfo" ||
    fail "gpkg: rows read $read_rows, ogrinfo $want"
  [ "$read_rows" = "$((committed + rejected))" ] &&
    pass "gpkg: rows read $read_rows = committed $committed + rejected $rejected" ||
    fail "gpkg: invariant broken: $read_rows != $committed + $rejected"
  grep -q "rows read $read_rows = rows committed $committed + rows rejected $rejected" "$work/out1.txt" &&
    pass "gpkg: the invariant is printed" || fail "gpkg: summary lacks the invariant: $(cat "$work/out1.txt")"
else
  fail "gpkg ingest failed: $(head -n 1 "$work/err1.txt")"
fi

# 2. GeoJSONSeq and FlatGeobuf of the same layer into one table (two sources, one run).
seq="$data/us_states.geojsonl"; fgb="$data/us_states.fgb"
want_states=$(( $(count "$seq") + $(count "$fgb") ))
if gl --metrics-json "$work/m2.json" ingest demo.states "$seq" "$fgb" --create --workers 2 >"$work/out2.txt" 2>"$work/err2.txt"; then
  read_rows=$(metric "$work/m2.json" rows_read)
  committed=$(metric "$work/m2.json" rows_committed)
  rejected=$(metric "$work/m2.json" rows_rejected)
  [ "$read_rows" = "$want_states" ] && [ "$read_rows" = "$((committed + rejected))" ] &&
    pass "geojsonseq+fgb: $read_rows rows = $committed committed + $rejected rejected" ||
    fail "geojsonseq+fgb: read $read_rows (want $want_states), committed $committed, rejected $rejected"
else
  fail "geojsonseq+fgb ingest failed: $(head -n 1 "$work/err2.txt")"
fi

# 3. Resume: the committed source is skipped and nothing is added.
if gl --metrics-json "$work/m3.json" ingest demo.counties "$src" >"$work/out3.txt" 2>"$work/err3.txt"; then
  grep -q "skipped 1 sources already committed" "$work/err3.txt" "$work/out3.txt" &&
    pass "resume: says it skipped the committed source" || fail "resume: no skip message"
  [ "$(metric "$work/m3.json" rows_read)" = "0" ] && pass "resume: read nothing" ||
    fail "resume: read $(metric "$work/m3.json" rows_read) rows"
else
  fail "resume ingest failed: $(head -n 1 "$work/err3.txt")"
fi
n=$(iceberg_rows "$wh/demo/counties")
[ "$n" = "$want" ] && pass "counties: verify_iceberg ok, $n rows after the re-run" ||
  fail "counties: verify_iceberg says $n (want $want): $(head -c 300 "$work/ice.json")"
n=$(iceberg_rows "$wh/demo/states")
[ "$n" = "$want_states" ] && pass "states: verify_iceberg ok, $n rows" ||
  fail "states: verify_iceberg says $n (want $want_states)"

# 4. Data files pass verify_parquet (three readers agree, geo metadata and covering checked).
checked=0
for f in $(find "$wh/demo" -name '*.parquet' | sort | head -n 4); do
  if node "$oracles/verify_parquet.mjs" "$f" --quiet >"$work/vp.json" 2>&1; then
    checked=$((checked + 1))
  else
    fail "verify_parquet $f: $(head -c 300 "$work/vp.json")"
  fi
done
[ "$checked" -ge 4 ] && pass "verify_parquet: $checked data files" || fail "verify_parquet: only $checked files passed"

# 5. Cancel: SIGINT once the first commit landed (small units, a commit per unit).
cities="$data/geonames_cities500.gpkg"
# ingest_then_signal TABLE SIGNAL STEP: ingest the cities into TABLE and send SIGNAL once the
# first commit landed; sets rc (the exit code) and stop_ms (signal to exit).
ingest_then_signal() {
  # "$bin" itself, not the gl function: $! must be geolake's pid, not a subshell's.
  "$bin" --warehouse "$wh" --progress off --workers 2 ingest "$1" "$cities" --create \
    --unit-rows 10000 --commit-rows 1 --partition none >"$work/out$3.txt" 2>"$work/err$3.txt" &
  local pid=$!
  for _ in $(seq 1 1200); do
    grep -q "committed snapshot" "$work/err$3.txt" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  local start_ns
  start_ns=$(date +%s%N)
  kill "-$2" "$pid" 2>/dev/null
  wait "$pid"; rc=$?
  stop_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
}
ingest_then_signal demo.cities INT 5
[ "$rc" = "130" ] && pass "cancel: exit 130 after ${stop_ms} ms" || fail "cancel: exit $rc: $(head -n 1 "$work/err5.txt")"
[ "$stop_ms" -le 5000 ] && pass "cancel: stopped within 5 s" || fail "cancel: took $stop_ms ms"
journal=$(ls -t "$wh"/.geolake/runs/*/journal.jsonl | head -n 1)
n=$(iceberg_rows "$wh/demo/cities")
total=$(count "$cities")
python3 - "$journal" "$n" "$total" 10000 >"$work/units.txt" <<'EOF'
import json, sys
journal, table_rows, total, unit_rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = [json.loads(l) for l in open(journal) if l.strip()]
files = [l for l in lines if "file" in l]
n = max(1, -(-total // unit_rows))
size = lambda i: (total if i == n - 1 else (i + 1) * total // n) - i * total // n
units = {}
for f in files:
    units.setdefault(f["unit"], []).append(f)
problems = []
committed_rows = 0
for u, fs in units.items():
    states = {f["committed"] for f in fs}
    if states == {True}:
        rows = sum(f["rows"] for f in fs)
        committed_rows += rows
        if rows != size(u):
            problems.append(f"unit {u}: {rows} rows committed, the unit has {size(u)}")
    elif True in states:
        problems.append(f"unit {u}: partly committed")
uncommitted = sum(1 for f in files if not f["committed"])
if table_rows != str(committed_rows):
    problems.append(f"table has {table_rows} rows, committed units {committed_rows}")
if committed_rows == 0 or committed_rows >= total:
    problems.append(f"cancel did not land mid-run ({committed_rows} of {total})")
print("problems:" if problems else "ok:", "; ".join(problems) or
      f"{committed_rows} rows in whole units, {uncommitted} uncommitted files listed")
EOF
grep -q '^ok:' "$work/units.txt" && pass "cancel: $(cat "$work/units.txt")" || fail "cancel: $(cat "$work/units.txt")"
# The run's change files were folded into journal.jsonl when it stopped (RunJournal::Finish).
changes=$(find "$(dirname "$journal")" -maxdepth 1 -name 'journal-*.jsonl' | wc -l)
[ "$changes" = 0 ] && pass "cancel: the journal is one file" || fail "cancel: $changes change files left"

# 6. SIGTERM (what a scheduler sends) is a cancel too, reported as 143 = 128 + 15.
ingest_then_signal demo.cities_term TERM 6
[ "$rc" = "143" ] && pass "SIGTERM: exit 143" || fail "SIGTERM: exit $rc: $(head -n 1 "$work/err6.txt")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
