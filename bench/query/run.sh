#!/usr/bin/env bash
# bench/query: Hilbert-clustered tables of real data (geonames cities, the largest point set in
# build/data, and US counties), one box per table covering 1% of the table's extent (10% of its
# width x 10% of its height), one centred on dense data and one on sparse data. Prints, per table, the bytes geolake
# read against the table's bytes (from `query --explain --json`; target <= 5%), and the same
# query run by DuckDB over the same data files (read_parquet with a WHERE on the bbox struct):
# row counts (must be equal) and the latency ratio DuckDB/geolake (> 1: geolake is faster).
# Both engines use 2 threads; each time is the best of 3 after a warm-up, query time only
# (wall, and separately the least process CPU time of the 3, which a busy machine disturbs
# less). DuckDB's query returns the geometry only (count and sum of WKB lengths), so geolake is
# timed twice: `--columns geometry` (the same work: the ratio that compares the engines) and
# all columns (what a plain `geolake query --bbox` returns; bytes read are from this run).
# Usage: bench/query/run.sh RELEASE_BUILD_DIR
set -euo pipefail
build="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/../../build/data}"
export GEOLAKE_ORACLES_DIR="${GEOLAKE_ORACLES_DIR:-$here/../../build/oracles}"
geolake="$build/src/geolake/cli/geolake"
make_table="$build/bench/geolake_query_make_table"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
json_field() { sed -E "s/.*\"$1\":([0-9.eE+-]+).*/\1/" <<<"$2"; }

echo "# $(uptime)"
echo "name,run,seconds,cpu_seconds"
summary=()
# best_of_3 LABEL ARGS...: runs the query (after a warm-up), prints each run, and sets
# best_s/best_cpu (least wall / least CPU seconds) and explain (the last run's JSON).
best_of_3() {
  local label="$1" s c
  shift
  "$geolake" --warehouse "$work/wh" --workers 2 query "$@" --explain --json >/dev/null
  best_s=""; best_cpu=""
  for run in 1 2 3; do
    explain=$("$geolake" --warehouse "$work/wh" --workers 2 query "$@" --explain --json)
    s=$(json_field seconds "$explain"); c=$(json_field cpu_seconds "$explain")
    echo "$label,$run,$s,$c"
    if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; fi
    if [ -z "$best_cpu" ] || awk "BEGIN{exit !($c < $best_cpu)}"; then best_cpu=$c; fi
  done
}
# name source centre_x centre_y rows_per_file row_group_rows page_rows
while read -r label name source cx cy per_file per_group per_page; do
  if [ ! -d "$work/wh/bench/$name" ]; then
    "$make_table" "$data/$source" "$work/wh" "bench.$name" "$per_file" "$per_group" "$per_page" >/dev/null
  fi
  read -r x0 y0 x1 y1 < <(ogrinfo -so -al "$data/$source" | sed -nE \
    's/^Extent: \(([-0-9.]+), ([-0-9.]+)\) - \(([-0-9.]+), ([-0-9.]+)\)/\1 \2 \3 \4/p')
  box=$(awk -v a="$x0" -v b="$y0" -v c="$x1" -v d="$y1" -v cx="$cx" -v cy="$cy" \
    'BEGIN{w=(c-a)/10; h=(d-b)/10; printf "%.6f,%.6f,%.6f,%.6f", cx-w/2, cy-h/2, cx+w/2, cy+h/2}')
  best_of_3 "geolake_geometry_$label" "bench.$name" --bbox "$box" --columns geometry
  geom_s=$best_s; geom_cpu=$best_cpu
  best_of_3 "geolake_all_$label" "bench.$name" --bbox "$box"
  IFS=, read -r dsec drows _ dcpu < <(node "$here/duckdb_side.mjs" ${box//,/ } "$work"/wh/bench/"$name"/data/*.parquet)
  echo "duckdb_$label,best,$dsec,$dcpu"
  bytes=$(json_field bytes_read "$explain"); total=$(json_field table_bytes "$explain")
  grows=$(json_field rows_matched "$explain")
  pct=$(awk "BEGIN{printf \"%.2f\", 100 * $bytes / $total}")
  ratio=$(awk "BEGIN{printf \"%.2f\", $dsec / $geom_s}")
  cpu_ratio=$(awk "BEGIN{printf \"%.2f\", $dcpu / $geom_cpu}")
  same=$([ "$grows" = "$drows" ] && echo equal || echo DIFFERENT)
  summary+=("$label: box $box read $bytes of $total bytes ($pct%); rows geolake $grows duckdb $drows ($same); duckdb/geolake same work: wall $ratio (geolake $geom_s s, duckdb $dsec s), cpu $cpu_ratio (geolake $geom_cpu s, duckdb $dcpu s); geolake all columns $best_s s wall, $best_cpu s cpu")
  [ "$same" = equal ] || { printf '%s\n' "${summary[@]}"; echo "ROW COUNT MISMATCH"; exit 1; }
done <<'TABLES'
cities_dense cities geonames_cities500.fgb 10 48 50000 10000 1000
cities_sparse cities geonames_cities500.fgb -60 -20 50000 10000 1000
zipcodes_dense zipcodes us_zipcodes.fgb -90 38 20000 5000 500
zipcodes_sparse zipcodes us_zipcodes.fgb -120 45 20000 5000 500
counties_dense counties us_counties.gpkg -95 38 1000 250 50
counties_sparse counties us_counties.gpkg -150 62 1000 250 50
TABLES
printf '%s\n' "${summary[@]}"
echo "# $(uptime)"
