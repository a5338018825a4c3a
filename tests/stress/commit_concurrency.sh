#!/usr/bin/env bash
# Concurrent appends to one table: P processes x T threads x N appends each (default 4 x 8 x 25,
# the numbers of issue #4), on SQLite or on a throwaway PostgreSQL server; then the table is
# checked against what every driver reported (geolake_commit_driver check: one append snapshot
# per commit, every (process, thread, i) id live exactly once, total-records right).
#
#   commit_concurrency.sh DRIVER sqlite|postgres
#
# Environment: GEOLAKE_STRESS_PROCESSES, GEOLAKE_STRESS_THREADS, GEOLAKE_STRESS_APPENDS override
# the counts (ctest sets smaller ones only where noted in tests/stress/CMakeLists.txt).
# Exit 77 = skipped (PostgreSQL binaries or support absent).
set -euo pipefail

driver="$1"
backend="$2"
procs="${GEOLAKE_STRESS_PROCESSES:-4}"
threads="${GEOLAKE_STRESS_THREADS:-8}"
appends="${GEOLAKE_STRESS_APPENDS:-25}"
src_dir="${GEOLAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"

# Short path: the PostgreSQL socket lives inside it (107-byte limit).
work="$(mktemp -d /tmp/geolake-commit-XXXXXX)"
chmod 755 "$work"
cleanup() {
  if [[ "$backend" == postgres ]]; then
    bash "$src_dir/scripts/pg-test-server.sh" stop "$work/pg" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

catalog=""
case "$backend" in
  sqlite) catalog="sqlite:$work/catalog.db" ;;
  postgres)
    if ! catalog="$(bash "$src_dir/scripts/pg-test-server.sh" start "$work/pg" 2>"$work/pg.err")"; then
      if grep -q "no PostgreSQL server binaries" "$work/pg.err"; then
        echo "SKIP: PostgreSQL server binaries are not installed: $(cat "$work/pg.err")"
        exit 77
      fi
      cat "$work/pg.err" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 DRIVER sqlite|postgres" >&2
    exit 2
    ;;
esac

wh="$work/warehouse"
# Retries: 32 writers on one table lose many races; a commit must not give up (each append has
# to land), so allow many quick retries instead of Iceberg's 4 with 100 ms minimum.
if ! "$driver" create --catalog "$catalog" --warehouse "$wh" --table stress.t \
  --property commit.retry.num-retries=1000 --property commit.retry.min-wait-ms=5 \
  --property commit.retry.max-wait-ms=200 >"$work/create.log" 2>&1; then
  if grep -q "without PostgreSQL support" "$work/create.log"; then
    echo "SKIP: geolake was built without PostgreSQL support"
    exit 77
  fi
  cat "$work/create.log" >&2
  exit 1
fi

echo "$backend: $procs processes x $threads threads x $appends appends"
start_ns=$(date +%s%N)
pids=()
for ((p = 1; p <= procs; p++)); do
  "$driver" append --catalog "$catalog" --warehouse "$wh" --table stress.t --process "$p" \
    --threads "$threads" --appends "$appends" >"$work/p$p.log" 2>"$work/p$p.err" &
  pids+=($!)
done
status=0
for ((p = 1; p <= procs; p++)); do
  if ! wait "${pids[$((p - 1))]}"; then
    echo "FAIL: driver process $p failed:" >&2
    head -n 5 "$work/p$p.err" >&2
    status=1
  fi
done
end_ns=$(date +%s%N)
grep -h '^done' "$work"/p*.log || true
logs=()
for ((p = 1; p <= procs; p++)); do logs+=(--log "$work/p$p.log"); done
"$driver" check --catalog "$catalog" --warehouse "$wh" --table stress.t "${logs[@]}" | tee "$work/check.log"
grep -q '^ok:' "$work/check.log" || status=1
expected=$((procs * threads * appends))
grep -q " appends=$expected live_files=$expected reported=$expected unreported_live=0 " \
  "$work/check.log" || { echo "FAIL: expected $expected appends"; status=1; }
echo "$backend: $expected commits in $(((end_ns - start_ns) / 1000000)) ms"
exit $status
