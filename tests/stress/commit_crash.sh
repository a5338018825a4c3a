#!/usr/bin/env bash
# Crash safety: 50 times (GEOLAKE_CRASH_ITERATIONS), start a driver that commits appends to one
# SQLite-catalogued table and SIGKILL it at a commit phase, cycling through
#   manifest-written, metadata-written, before-swap, during-swap, after-swap, random
# (the named phases via the driver's commit hook: it kills itself with SIGKILL there, on a
# random one of its commits; during-swap = 0-2 ms after the swap starts, from another thread;
# random = this script kills it after a random delay). After every kill the table must load
# and hold exactly the reported commits (plus the one killed after its swap, for phases at or
# after the swap), nothing twice. At the end verify_iceberg.mjs (icebird, avsc, DuckDB) reads
# the final table once, if the oracles are installed.
#
#   commit_crash.sh DRIVER
set -euo pipefail

driver="$1"
iterations="${GEOLAKE_CRASH_ITERATIONS:-50}"
appends=3
oracles="${GEOLAKE_ORACLES_DIR:-}"
work="$(mktemp -d /tmp/geolake-crash-XXXXXX)"
trap 'rm -rf "$work"' EXIT
catalog="sqlite:$work/catalog.db"
wh="$work/warehouse"
common=(--catalog "$catalog" --warehouse "$wh" --table stress.t)

"$driver" create "${common[@]}" --property commit.retry.min-wait-ms=5 >/dev/null
phases=(manifest-written metadata-written before-swap during-swap after-swap random)
logs=()
killed=0
start_ns=$(date +%s%N)
for ((i = 1; i <= iterations; i++)); do
  phase="${phases[$(((i - 1) % ${#phases[@]}))]}"
  nth=$((RANDOM % appends + 1))
  log="$work/run$i.log"
  logs+=(--log "$log")
  if [[ "$phase" == random ]]; then
    "$driver" append "${common[@]}" --process "$i" --threads 1 --appends "$appends" \
      --crash-at random >"$log" 2>"$work/run$i.err" &
    pid=$!
    sleep "0.$((RANDOM % 9))$((RANDOM % 10))"
    kill -KILL "$pid" 2>/dev/null || true
  else
    "$driver" append "${common[@]}" --process "$i" --threads 1 --appends "$appends" \
      --crash-at "$phase:$nth" >"$log" 2>"$work/run$i.err" &
    pid=$!
  fi
  rc=0
  wait "$pid" 2>/dev/null || rc=$?
  if ((rc == 137)); then
    killed=$((killed + 1))
  elif ((rc != 0)); then
    echo "FAIL: run $i ($phase) exited $rc:"
    cat "$work/run$i.err"
    exit 1
  elif [[ "$phase" != random && "$phase" != during-swap ]]; then
    # during-swap kills from a helper thread 0-2 ms after before-swap: when that was the
    # last append, the driver may exit first. The check below still covers the run.
    echo "FAIL: run $i was not killed at $phase:$nth"
    exit 1
  fi
  if ! "$driver" check "${common[@]}" "${logs[@]}" >"$work/check.log" 2>&1; then
    echo "FAIL after run $i ($phase:$nth, exit $rc):"
    cat "$work/check.log"
    exit 1
  fi
done
end_ns=$(date +%s%N)
cat "$work/check.log"
echo "crash: $iterations runs, $killed killed by SIGKILL, $(((end_ns - start_ns) / 1000000)) ms"

metadata="$(sed -n 's/^metadata //p' "$work/check.log")"
if [[ -n "$oracles" && -f "$oracles/verify_iceberg.mjs" ]] && command -v node >/dev/null; then
  if ! node "$oracles/verify_iceberg.mjs" "$metadata" --quiet >"$work/oracle.json" 2>&1; then
    echo "FAIL: verify_iceberg.mjs on $metadata:"
    cat "$work/oracle.json"
    exit 1
  fi
  grep -E '"ok"|icebird_rows_read|manifest_record_count_sum|duckdb_row_count' "$work/oracle.json"
else
  echo "note: oracles not installed ($oracles); verify_iceberg.mjs skipped"
fi
