#!/usr/bin/env bash
# bench/query/coverage.sh: the bytes-read claim of issue #6 ("on a Hilbert-clustered table, a
# box covering 1% of the table's extent reads at most 5% of the table's bytes") on a table where
# it can hold: a coverage of SIDE x SIDE jittered quadrilaterals (default 1000 x 1000 =
# 1,000,000 rows, bench/ingest/make_coverage), so density is uniform and a 1% box holds ~1% of
# the rows. (The real datasets of run.sh are skewed: their dense 1% boxes hold 38-74% of rows.)
#
# Three tables of the same rows:
#   ingest        `geolake ingest --create` with its defaults (the partition chosen from the
#                 input size: none for this input; each unit Hilbert-sorted into its own
#                 files, data pages of at most 4,096 rows);
#   hilbert_16k   one global Hilbert order (bench/query/make_table), files of 100,000 rows,
#                 one row group per file, pages of at most 16,384 rows (the writer's default cap);
#   hilbert_4k    the same with pages of at most 4,096 rows.
# For BOXES boxes of 10% x 10% of the extent at seeded random positions, each table prints the
# bytes read / table bytes from `query --explain --json` (all output columns and the geometry
# are read, as a plain `geolake query --bbox` does), rows and pages decoded, the row count
# against DuckDB's (read_parquet over the same files with a WHERE on the bbox struct; must be
# equal) and the latency ratio DuckDB/geolake (best of 3 after a warm-up each, query time only,
# 2 threads each; wall and least process CPU time). DuckDB returns only the geometry, geolake
# every column: these times are context, bench/query/run.sh compares the engines on equal work. The last lines give, per table, the median and maximum percentage and whether
# every box met <= 5%.
#
# Usage: bench/query/coverage.sh RELEASE_BUILD_DIR [SIDE] [BOXES] [SEED]
# GEOLAKE_BENCH_COVERAGE=FILE.gpkg reuses a coverage made before (make_coverage takes ~25 s).
set -euo pipefail
build="$1"
side="${2:-1000}"
boxes="${3:-8}"
seed="${4:-7}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GEOLAKE_ORACLES_DIR="${GEOLAKE_ORACLES_DIR:-$here/../../build/oracles}"
geolake="$build/src/geolake/cli/geolake"
make_table="$build/bench/geolake_query_make_table"
make_coverage="$build/bench/geolake_make_coverage"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
json_field() { sed -E "s/.*\"$1\":([0-9.eE+-]+).*/\1/" <<<"$2"; }
json_kept() { sed -E "s/.*\"$1\":\{[^}]*\"kept\":([0-9]+)\}.*/\1/" <<<"$2"; }

echo "# $(uptime)"
coverage="${GEOLAKE_BENCH_COVERAGE:-}"
if [ -z "$coverage" ]; then
  coverage="$work/coverage.gpkg"
  "$make_coverage" "$coverage" "$side" 42 >&2
fi
wh="$work/wh"
"$geolake" --warehouse "$wh" --workers 2 --progress off ingest bench.ingest "$coverage" --create \
  >/dev/null 2>&1
"$make_table" "$coverage" "$wh" bench.hilbert_16k 100000 100000 16384 >/dev/null
"$make_table" "$coverage" "$wh" bench.hilbert_4k 100000 100000 4096 >/dev/null

read -r x0 y0 x1 y1 < <(ogrinfo -so -al "$coverage" | sed -nE \
  's/^Extent: \(([-0-9.]+), ([-0-9.]+)\) - \(([-0-9.]+), ([-0-9.]+)\)/\1 \2 \3 \4/p')
mapfile -t box_list < <(awk -v a="$x0" -v b="$y0" -v c="$x1" -v d="$y1" -v n="$boxes" \
  -v seed="$seed" 'BEGIN{srand(seed); w=(c-a)/10; h=(d-b)/10;
  for (i = 0; i < n; i++) { x = a + rand() * (c - a - w); y = b + rand() * (d - b - h);
    printf "%.6f,%.6f,%.6f,%.6f\n", x, y, x + w, y + h } }')

echo "table,box,bytes_read,table_bytes,percent,files_kept,pages_kept,rows_decoded,rows_geolake,rows_duckdb,geolake_s,duckdb_s,duckdb_over_geolake,geolake_cpu_s,duckdb_cpu_s"
summary=()
for name in ingest hilbert_16k hilbert_4k; do
  mapfile -t files < <(find "$wh/bench/$name/data" -name '*.parquet' | sort)
  pcts=()
  for box in "${box_list[@]}"; do
    q() { "$geolake" --warehouse "$wh" --workers 2 query "bench.$name" --bbox "$box" --explain --json; }
    q >/dev/null
    best=""; best_cpu=""; explain=""
    for _ in 1 2 3; do
      explain=$(q)
      s=$(json_field seconds "$explain"); c=$(json_field cpu_seconds "$explain")
      if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
      if [ -z "$best_cpu" ] || awk "BEGIN{exit !($c < $best_cpu)}"; then best_cpu=$c; fi
    done
    IFS=, read -r dsec drows _ dcpu < <(node "$here/duckdb_side.mjs" ${box//,/ } "${files[@]}")
    bytes=$(json_field bytes_read "$explain"); total=$(json_field table_bytes "$explain")
    grows=$(json_field rows_matched "$explain")
    pct=$(awk "BEGIN{printf \"%.2f\", 100 * $bytes / $total}")
    pcts+=("$pct")
    echo "$name,\"$box\",$bytes,$total,$pct,$(json_kept files "$explain"),$(json_kept pages "$explain"),$(json_field rows_decoded "$explain"),$grows,$drows,$best,$dsec,$(awk "BEGIN{printf \"%.2f\", $dsec / $best}"),$best_cpu,$dcpu"
    if [ "$grows" != "$drows" ]; then echo "ROW COUNT MISMATCH: $name $box"; exit 1; fi
  done
  summary+=("$(printf '%s\n' "${pcts[@]}" | sort -g | awk -v name="$name" \
    '{ p[NR] = $1 } END { med = (NR % 2) ? p[(NR + 1) / 2] : (p[NR / 2] + p[NR / 2 + 1]) / 2;
       printf "%s: %d boxes of 1%% of the extent read median %.2f%%, max %.2f%% of the table bytes: %s\n",
         name, NR, med, p[NR], (p[NR] <= 5 ? "every box <= 5%" : "NOT every box <= 5%") }')")
done
printf '%s\n' "${summary[@]}"
echo "# $(uptime)"
