#!/usr/bin/env bash
# bench/ops/reproject.sh: `geolake reproject --to EPSG:5070` (2 workers, GeoParquet file out)
# against PostGIS ST_Transform (CREATE TABLE AS, so the output is written; serial, and with 2
# parallel workers forced) and GeoPandas to_crs (in memory: reading and writing not counted),
# over real polygon sets and one generated giant polygon. Each time is the best of N runs; the
# ratios are the other tool's time over geolake's. Not run by `make test` (docs/ops.md).
# Usage: bench/ops/reproject.sh GEOLAKE_BIN [N=3] [GIANT_VERTICES=3000000]
# Needs a release build, ogr2ogr, PostgreSQL + PostGIS (scripts/install-deps.sh) and, for the
# GeoPandas column, /usr/bin/python3 with geopandas (Debian's python3-geopandas).
set -euo pipefail
bin="${1:?usage: bench/ops/reproject.sh GEOLAKE_BIN [N] [GIANT_VERTICES]}"
n="${2:-3}"
giant_n="${3:-3000000}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
work="$(mktemp -d)"
# A private PostgreSQL + PostGIS under $work/pg, stopped (and $work removed) on exit: the e2e
# tests' start_postgres, whose "skip" is a failure here (the bench needs its peer).
here_dir="$here"
skip() { echo "${0##*/}: $2" >&2; exit 1; }
# shellcheck source=../../tests/e2e/lib/postgres.bash
source "$here/tests/e2e/lib/postgres.bash"
start_postgres --postgis

# The giant polygon: one ring of GIANT_VERTICES vertices around (-100, 40), as GeoPackage.
python3 - "$giant_n" >"$work/giant.geojsonl" <<'PY'
import json, math, sys
n = int(sys.argv[1])
ring = [[-100 + 8 * math.cos(2 * math.pi * i / n), 40 + 5 * math.sin(2 * math.pi * i / n)]
        for i in range(n)]
ring.append(ring[0])
print(json.dumps({"type": "Feature", "properties": {"id": 1},
                  "geometry": {"type": "Polygon", "coordinates": [ring]}}))
PY
ogr2ogr -f GPKG "$work/giant.gpkg" "$work/giant.geojsonl" -nln giant -a_srs EPSG:4326

best() {  # COMMAND...: the best wall seconds of N runs
  local b="" t
  for _ in $(seq 1 "$n"); do
    /usr/bin/time -f "%e" -o "$work/t" "$@" >/dev/null 2>"$work/cmd.err" ||
      { cat "$work/cmd.err" >&2; exit 1; }
    t="$(tail -1 "$work/t")"
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b="$t"; fi
  done
  echo "$b"
}
pg_best() {  # TABLE SETTINGS: best seconds of CREATE TABLE AS ... ST_Transform (psql \timing)
  local b="" t
  for _ in $(seq 1 "$n"); do
    t="$(psql "$uri" -q -At -c "SET client_min_messages = warning; DROP TABLE IF EXISTS out_t" -c "$2" -c '\timing on' \
      -c "CREATE TABLE out_t AS SELECT id_col, ST_Transform(geom, 5070) AS geom FROM $1" \
      | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
    t="$(awk -v ms="$t" 'BEGIN { printf "%.3f", ms / 1000 }')"
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b="$t"; fi
  done
  echo "$b"
}
serial="SET max_parallel_workers_per_gather = 0"
parallel="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off"

printf "%-22s %9s %9s | %8s %8s %8s | %6s %6s %6s\n" dataset vertices geolake pg_ser pg_par2 gpd \
  ser/gl par/gl gpd/gl
for entry in "us_counties|$data/us_counties.gpkg" "us_zipcodes|$data/us_zipcodes.gpkg" \
  "ne_countries_10m|$data/ne_countries_10m.gpkg" "giant_${giant_n}|$work/giant.gpkg"; do
  name="${entry%%|*}"; src="${entry#*|}"
  [ -s "$src" ] || { echo "$name: $src missing, skipped"; continue; }
  layer="$(ogrinfo -ro -q "$src" | sed -n '1s/^1: \([^ ]*\).*/\1/p')"
  vertices="$(ogrinfo -ro -q -dialect SQLite -sql "SELECT SUM(ST_NPoints(geometry)) AS n FROM \"$layer\"" "$src" 2>/dev/null \
    | sed -n 's/^ *n (Integer) = //p')"
  [ -n "$vertices" ] || vertices="$(ogrinfo -ro -q -dialect SQLite -sql "SELECT SUM(ST_NPoints(geom)) AS n FROM \"$layer\"" "$src" | sed -n 's/^ *n (Integer) = //p')"
  cat "$src" >/dev/null
  gl="$(best bash -c "rm -rf '$work/wh' '$work/out.parquet'; '$bin' --warehouse '$work/wh' --workers 2 --progress off reproject '$src' --to EPSG:5070 -o '$work/out.parquet'")"
  ogr2ogr -f PostgreSQL "PG:$uri" "$src" -nln src_t -overwrite -lco GEOMETRY_NAME=geom \
    -lco FID=id_col -lco SPATIAL_INDEX=NONE -nlt PROMOTE_TO_MULTI >/dev/null 2>&1
  psql "$uri" -q -c "VACUUM ANALYZE src_t" >/dev/null
  ser="$(pg_best src_t "$serial")"
  par="$(pg_best src_t "$parallel")"
  gpd="-"
  if /usr/bin/python3 -c "import geopandas" 2>/dev/null; then
    gpd="$(/usr/bin/python3 - "$src" "$n" <<'PY'
import sys, time, geopandas
df = geopandas.read_file(sys.argv[1])
best = None
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); df.to_crs(5070); t = time.perf_counter() - t
    best = t if best is None or t < best else best
print(f"{best:.3f}")
PY
)"
  fi
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b <= 0) print "-"; else printf "%.2f", a / b }'; }
  printf "%-22s %9s %9s | %8s %8s %8s | %6s %6s %6s\n" "$name" "$vertices" "$gl" "$ser" "$par" "$gpd" \
    "$(ratio "$ser" "$gl")" "$(ratio "$par" "$gl")" "$(ratio "$gpd" "$gl")"
done
planned="$(psql "$uri" -At -c "$parallel" -c "EXPLAIN CREATE TABLE x AS SELECT ST_Transform(geom, 5070) FROM src_t" | sed -n 's/.*Workers Planned: //p')"
echo "(PostGIS with forced parallelism: Workers Planned: ${planned:-none} for the last dataset)"
echo "(seconds, best of $n; geolake: whole run incl. reading the GeoPackage and writing GeoParquet;"
echo " PostGIS: CREATE TABLE AS in the server, loading not counted; GeoPandas: to_crs only)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
