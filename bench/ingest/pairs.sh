#!/usr/bin/env bash
# bench/ingest/pairs.sh: workers 2 / workers 1 of `geolake ingest` as the median of N
# alternating pairs (one --workers 1 run, then one --workers 2 run, each into a fresh
# warehouse). On a shared or noisy machine a best-of-N ratio picks a lucky one-worker run; the
# median of pairwise ratios does not. Prints each pair's wall seconds and ratio, then the median.
# Usage: bench/ingest/pairs.sh GEOLAKE_BIN SOURCE [N=9]
set -euo pipefail
bin="${1:?usage: bench/ingest/pairs.sh GEOLAKE_BIN SOURCE [N]}"
src="${2:?usage: bench/ingest/pairs.sh GEOLAKE_BIN SOURCE [N]}"
n="${3:-9}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
wall() {  # workers: wall seconds of one ingest into a fresh warehouse
  rm -rf "$work/wh"
  cat "$src" > /dev/null  # the input in the page cache, as in run.sh
  /usr/bin/time -f "%e" -o "$work/t" "$bin" --warehouse "$work/wh" --workers "$1" --progress off \
    ingest bench.pairs "$src" --create >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t"
}
for _ in $(seq 1 "$n"); do
  echo "$(wall 1) $(wall 2)"
done | python3 -c '
import statistics, sys
ratios = []
for line in sys.stdin:
    one, two = map(float, line.split())
    ratios.append(one / two)
    print(f"workers 1: {one:.2f} s  workers 2: {two:.2f} s  ratio {one / two:.2f}")
print(f"median workers2/workers1: {statistics.median(ratios):.2f} (n={len(ratios)})")'
echo "load average: $(cut -d" " -f1-3 /proc/loadavg)"
