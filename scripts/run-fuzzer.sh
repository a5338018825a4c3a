#!/usr/bin/env bash
# Run one libFuzzer target for a fixed time over a copy of its seed corpus.
# Usage: run-fuzzer.sh FUZZER SEED_DIR SECONDS. Fails when the fuzzer finds a crash, a leak, a
# timeout or an out-of-memory; the reproducer is kept in the printed artifact folder.
set -euo pipefail
fuzzer="$1"; seeds="$2"; seconds="${3:-20}"
work="$(mktemp -d)"
mkdir -p "$work/corpus" "$work/artifacts"
if [ -d "$seeds" ]; then cp -R "$seeds"/. "$work/corpus/"; fi
echo "fuzzing $(basename "$fuzzer") for ${seconds}s over $(ls "$work/corpus" | wc -l) seeds"
if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
     -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
  grep -E "^stat::number_of_executed_units|^Done" "$work/log" || tail -2 "$work/log"
  rm -rf "$work"
else
  tail -40 "$work/log"
  echo "fuzzer failed; artifacts in $work/artifacts"
  exit 1
fi
