#!/usr/bin/env bash
# Run every benchmark: bench/*/run.sh RELEASE_BUILD_DIR. Results go to stdout as
# `name,run,seconds` CSV lines followed by ratio lines.
set -euo pipefail
build="$(cd "${1:?usage: bench/run.sh RELEASE_BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for script in "$here"/*/run.sh; do
  echo "== $(basename "$(dirname "$script")")"
  bash "$script" "$build"
done
# The 1%-box bytes-read claim of the query issue, on a uniform 1M-polygon coverage.
echo "== query/coverage"
bash "$here/query/coverage.sh" "$build"
# Compaction within --memory on a table 4x the budget (issue 18).
echo "== maintenance/memory"
bash "$here/maintenance/memory.sh" "$build"
