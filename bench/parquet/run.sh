#!/usr/bin/env bash
# bench/parquet: the same rows written by geolake and by DuckDB (zstd, row groups of 65536, one
# thread each), each file read back by both, in one run. Prints `name,run,seconds` CSV, file
# sizes, and the ratios geolake/DuckDB (throughput: > 1 means geolake is faster).
# Usage: bench/parquet/run.sh RELEASE_BUILD_DIR [ROWS] [RUNS]
set -euo pipefail
build="$1"; rows="${2:-2000000}"; runs="${3:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GEOLAKE_ORACLES_DIR="${GEOLAKE_ORACLES_DIR:-$here/../../build/oracles}"
bench="$build/bench/geolake_parquet_bench"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
duck() { node "$here/duckdb_side.mjs" "$@"; }

declare -A best
record() {  # name seconds: keep the best of the runs
  echo "$1,$run,$2"
  if [ -z "${best[$1]:-}" ] || awk "BEGIN{exit !($2 < ${best[$1]})}"; then best[$1]=$2; fi
}
checksums=()
echo "name,run,seconds"
for run in $(seq 1 "$runs"); do
  IFS=, read -r s c < <("$bench" write "$work/geolake.parquet" "$rows"); record geolake_write "$s"; checksums+=("$c")
  IFS=, read -r s c < <(duck write "$work/duckdb.parquet" "$rows"); record duckdb_write "$s"; checksums+=("$c")
  IFS=, read -r s c < <("$bench" read "$work/geolake.parquet"); record geolake_read_geolake_file "$s"; checksums+=("$c")
  IFS=, read -r s c < <("$bench" read "$work/duckdb.parquet"); record geolake_read_duckdb_file "$s"; checksums+=("$c")
  IFS=, read -r s c < <(duck read "$work/geolake.parquet"); record duckdb_read_geolake_file "$s"; checksums+=("$c")
  IFS=, read -r s c < <(duck read "$work/duckdb.parquet"); record duckdb_read_duckdb_file "$s"; checksums+=("$c")
done
distinct=$(printf '%s\n' "${checksums[@]}" | sort -u | wc -l)
if [ "$distinct" != 1 ]; then
  echo "CHECKSUM MISMATCH: writers/readers disagree:"; printf '  %s\n' "${checksums[@]}" | sort | uniq -c
  exit 1
fi
gsize=$(stat -c %s "$work/geolake.parquet"); dsize=$(stat -c %s "$work/duckdb.parquet")
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
echo "rows: $rows; every reader decoded every file to checksum ${checksums[0]}"
echo "file size: geolake $gsize B, duckdb $dsize B, geolake/duckdb = $(ratio "$gsize" "$dsize")"
echo "write throughput geolake/duckdb = $(ratio "${best[duckdb_write]}" "${best[geolake_write]}")"
echo "read throughput (each engine's own file) geolake/duckdb = $(ratio "${best[duckdb_read_duckdb_file]}" "${best[geolake_read_geolake_file]}")"
echo "read throughput (DuckDB's file) geolake/duckdb = $(ratio "${best[duckdb_read_duckdb_file]}" "${best[geolake_read_duckdb_file]}")"
