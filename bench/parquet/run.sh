#!/usr/bin/env bash
# bench/parquet: the same rows written by geolake and by DuckDB (zstd, row groups of 65536, one
# thread each), each file read back by both, in one run. Prints `name,run,seconds,cpu_seconds`
# CSV, file sizes, the load average, and the ratios geolake/DuckDB of the median of RUNS runs,
# by CPU time (user + system of the process over the timed span) and by wall time
# (throughput: > 1 means geolake is faster). CPU time is the number to trust on a shared machine.
# Usage: bench/parquet/run.sh RELEASE_BUILD_DIR [ROWS] [RUNS]
set -euo pipefail
build="$1"; rows="${2:-2000000}"; runs="${3:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GEOLAKE_ORACLES_DIR="${GEOLAKE_ORACLES_DIR:-$here/../../build/oracles}"
bench="$build/bench/geolake_parquet_bench"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
duck() { node "$here/duckdb_side.mjs" "$@"; }

declare -A walls cpus
record() {  # name wall cpu: keep every run's times
  echo "$1,$run,$2,$3"
  walls[$1]="${walls[$1]:-} $2"; cpus[$1]="${cpus[$1]:-} $3"
}
median() { printf '%s\n' $1 | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
checksums=()
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "name,run,seconds,cpu_seconds"
for run in $(seq 1 "$runs"); do
  IFS=, read -r s u c < <("$bench" write "$work/geolake.parquet" "$rows"); record geolake_write "$s" "$u"; checksums+=("$c")
  IFS=, read -r s u c < <(duck write "$work/duckdb.parquet" "$rows"); record duckdb_write "$s" "$u"; checksums+=("$c")
  IFS=, read -r s u c < <("$bench" read "$work/geolake.parquet"); record geolake_read_geolake_file "$s" "$u"; checksums+=("$c")
  IFS=, read -r s u c < <("$bench" read "$work/duckdb.parquet"); record geolake_read_duckdb_file "$s" "$u"; checksums+=("$c")
  IFS=, read -r s u c < <(duck read "$work/geolake.parquet"); record duckdb_read_geolake_file "$s" "$u"; checksums+=("$c")
  IFS=, read -r s u c < <(duck read "$work/duckdb.parquet"); record duckdb_read_duckdb_file "$s" "$u"; checksums+=("$c")
done
distinct=$(printf '%s\n' "${checksums[@]}" | sort -u | wc -l)
if [ "$distinct" != 1 ]; then
  echo "CHECKSUM MISMATCH: writers/readers disagree:"; printf '  %s\n' "${checksums[@]}" | sort | uniq -c
  exit 1
fi
gsize=$(stat -c %s "$work/geolake.parquet"); dsize=$(stat -c %s "$work/duckdb.parquet")
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
# "a/b" throughput ratio of two timed names: CPU-time medians, then wall-time medians.
speed() {
  local ca cb wa wb
  ca=$(median "${cpus[$1]}"); cb=$(median "${cpus[$2]}")
  wa=$(median "${walls[$1]}"); wb=$(median "${walls[$2]}")
  echo "$(ratio "$cb" "$ca") by CPU time (median $ca s vs $cb s), $(ratio "$wb" "$wa") by wall time (median $wa s vs $wb s)"
}
echo "rows: $rows; runs: $runs; every reader decoded every file to checksum ${checksums[0]}"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file size: geolake $gsize B, duckdb $dsize B, geolake/duckdb = $(ratio "$gsize" "$dsize")"
echo "write throughput geolake/duckdb = $(speed geolake_write duckdb_write)"
echo "read throughput (each engine's own file) geolake/duckdb = $(speed geolake_read_geolake_file duckdb_read_duckdb_file)"
echo "read throughput (DuckDB's file) geolake/duckdb = $(speed geolake_read_duckdb_file duckdb_read_duckdb_file)"
