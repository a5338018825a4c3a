#!/usr/bin/env bash
# bench/ops/dissolve.sh: `geolake dissolve` and `geolake eliminate` (2 workers, GeoParquet file
# out, whole run) against PostGIS (CREATE TABLE AS, so the output is written; serial, and with 2
# parallel workers forced when the planner will use them) and GeoPandas 0.12 (in memory: reading
# not counted), in one run (issue 20's benchmark), over these CASEs:
#   us_counties     build/data/us_counties.gpkg dissolved by state_fips: geolake --by state_fips;
#                   PostGIS ST_Union(ST_MakeValid(geom)) GROUP BY state_fips; GeoPandas
#                   make_valid() then dissolve(by="state_fips") (the counties have invalid
#                   polygons; make_valid is inside the timed part, as in the other two).
#   by_100k by_1m   the generated coverage (geolake_make_coverage 316|1000 42: 99,856 | 1,000,000
#                   jittered quadrilaterals, EPSG:4326) with a column grp = (row / B) * 100 +
#                   col / B (B = 10 | 32: 1,024 square blocks), added once by ogr2ogr -sql and
#                   cached, read by all three tools: --by grp / ST_Union(geom) GROUP BY grp /
#                   dissolve(by="grp"). The coverage is valid: no make-valid in PostGIS or GeoPandas.
#   touching_100k touching_1m  the same coverage without the cells of every 16th | 50th row and
#                   column (streets: 400 islands of ~15x15 | 49x49 cells; cached): --touching /
#                   ST_ClusterDBSCAN(geom, 0, 1) OVER () then ST_Union per cluster / unary_union of
#                   all then explode() (components that meet only at a point come out apart in
#                   GeoPandas; the blocks here never do).
#   tiles_100k tiles_1m  the coverage cut by PostGIS (once, cached) into 2-degree tiles
#                   (ST_Intersection with each tile's box where a cell crosses it; the grid is
#                   offset by 0.01 so that its lines cut cells), one row per cell and tile with
#                   cell_id and tile: geolake --by cell_id --tile-column tile --tile-grid
#                   2,-9.99,40.01; PostGIS and GeoPandas do the global dissolve by cell_id.
#   eliminate_100k  the 100k coverage, --area-below 0.003 (square degrees; 10,760 cells below):
#                   PostGIS runs the rule of docs/cli.md written in SQL (the PL/pgSQL of
#                   tests/e2e/eliminate_vs_postgis.sh: borders measured as ST_Length(ST_Intersection(
#                   ST_Boundary(a), ST_Boundary(b))), rounds, ST_Union per survivor), GeoPandas has
#                   no equivalent (not run).
# Default: all eight (eliminate at 1M is not a case). Measured on the shared 2-core VM (load 4-6):
# ~16 min with N=1 including making the cached inputs (~4 min, most of it PostGIS cutting the 1M
# coverage into tiles), ~16 min with N=2 on cached inputs; the 1M cases are most of it (PostGIS
# and GeoPandas take 30-80 s a run there): name the 100k cases to run fewer.
# Each time is the best of N runs (a run that hits TIMEOUT ends the repeats); ratios are the other
# tool's time over geolake's (> 1 = geolake faster). Peak RSS: geolake and GeoPandas by
# /usr/bin/time -f %M (GeoPandas' includes reading the file); PostGIS: the VmHWM of the session's
# backend process (read from /proc after the statement; it counts the shared buffers it touched;
# parallel workers are not counted). Prints `name,seconds` CSV lines, then a summary with issue
# 20's targets on the 1M dissolves (>= 5x the faster PostGIS, >= 10x GeoPandas) and checks: output
# rows equal between tools, total area equal to 1e-6 relative.
# Usage: bench/ops/dissolve.sh GEOLAKE_BIN [N=2] [CASE...]
#   Environment: DISSOLVEBENCH_TIMEOUT (seconds, default 600: PostgreSQL statement_timeout and the
#   limit for one run of any tool).
# Needs a release build (GEOLAKE_BIN = build/release/src/geolake/cli/geolake, and
# build/release/bench/geolake_make_coverage unless the coverages are cached in
# build/release/bench-data), ogr2ogr, PostgreSQL 15 + PostGIS (scripts/install-deps.sh; started
# privately by scripts/pg-test-server.sh), /usr/bin/python3 with geopandas (python3-geopandas).
# Not run by `make test` (docs/ops.md).
set -euo pipefail
bin="$(realpath "${1:?usage: bench/ops/dissolve.sh GEOLAKE_BIN [N] [CASE...]}")"
n="${2:-2}"
shift $(($# >= 2 ? 2 : 1))
cases=("$@")
[ ${#cases[@]} -gt 0 ] ||
  cases=(us_counties by_100k touching_100k tiles_100k eliminate_100k by_1m touching_1m tiles_1m)
timeout_s="${DISSOLVEBENCH_TIMEOUT:-600}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
build="$(cd "$(dirname "$bin")/../../.." && pwd)" # build/release
cache="$build/bench-data"
py=/usr/bin/python3
die() { echo "${0##*/}: $*" >&2; exit 1; }
[ -x "$bin" ] || die "$bin is not an executable"
for tool in ogr2ogr ogrinfo psql timeout; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
"$py" -c "import geopandas" 2>/dev/null || die "$py cannot import geopandas (python3-geopandas)"
for c in "${cases[@]}"; do
  case "$c" in
    us_counties | by_100k | by_1m | touching_100k | touching_1m | tiles_100k | tiles_1m | eliminate_100k) ;;
    *) die "unknown CASE $c (us_counties by_100k by_1m touching_100k touching_1m tiles_100k tiles_1m eliminate_100k)" ;;
  esac
done
work="$(mktemp -d /tmp/dissolvebench-XXXXXX)"
here_dir="$here"
skip() { echo "${0##*/}: $2" >&2; exit 1; } # start_postgres's "skip" is a failure here
# shellcheck source=../../tests/e2e/lib/postgres.bash
source "$here/tests/e2e/lib/postgres.bash"
# shellcheck source=lib.bash
source "$here/bench/ops/lib.bash"
# shellcheck source=../../tests/e2e/lib/eliminate_rule.bash
source "$here/tests/e2e/lib/eliminate_rule.bash"
start_postgres --postgis
results="$work/results" # CASE|KEY|VALUE lines, for the summary
: >"$results"
record() { # CASE KEY VALUE; times (keys without _) also as a CSV line
  echo "$1|$2|$3" >>"$results"
  case "$2" in geolake | postgis_serial | postgis_par2 | geopandas) echo "$1.$2,$3" ;; esac
}
get() { awk -F'|' -v c="$1" -v k="$2" '$1 == c && $2 == k { v = $3 } END { print (v == "" ? "-" : v) }' "$results"; }
q() { psql "$uri" -q -At -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "$1"; }

# --- inputs (generated once, cached in $cache) ---
coverage() { # SIDE: the generated coverage's path, made once (fixed seed)
  local out="$cache/coverage_$1x$1.gpkg"
  if [ ! -f "$out" ]; then
    [ -x "$build/bench/geolake_make_coverage" ] ||
      die "$build/bench/geolake_make_coverage missing: cmake --build build/release --target geolake_make_coverage"
    mkdir -p "$cache"
    rm -f "$out.tmp.gpkg"
    "$build/bench/geolake_make_coverage" "$out.tmp.gpkg" "$1" 42 >&2
    mv "$out.tmp.gpkg" "$out"
  fi
  echo "$out"
}
derived() { # OUT SRC SQL: OUT made once by ogr2ogr -sql (SQLite dialect) from SRC
  if [ ! -f "$1" ]; then
    rm -f "$1.tmp.gpkg"
    ogr2ogr -f GPKG "$1.tmp.gpkg" "$2" -dialect SQLite -sql "$3" -nln coverage -nlt POLYGON >&2 ||
      die "ogr2ogr -sql into $1 failed"
    mv "$1.tmp.gpkg" "$1"
  fi
  echo "$1"
}
side_of() { case "$1" in *_1m) echo 1000 ;; *) echo 316 ;; esac; }
grouped() { # SIDE: the coverage with grp (1,024 blocks)
  local b=$(($1 == 1000 ? 32 : 10))
  derived "$cache/coverage_$1x$1_grp.gpkg" "$(coverage "$1")" \
    "SELECT cell_id, (\"row\" / $b) * 100 + col / $b AS grp, geom FROM coverage"
}
streets() { # SIDE: the coverage without every P-th row and column of cells (400 islands)
  local p=$(($1 == 1000 ? 50 : 16))
  derived "$cache/coverage_$1x$1_streets.gpkg" "$(coverage "$1")" \
    "SELECT cell_id, geom FROM coverage WHERE \"row\" % $p <> $((p - 1)) AND col % $p <> $((p - 1))"
}
tiled() { # SIDE: the coverage cut into 2-degree tiles by PostGIS (one row per cell and tile)
  local out="$cache/coverage_$1x$1_tiles2.gpkg"
  if [ ! -f "$out" ]; then
    load "$(coverage "$1")" cut_src
    q "CREATE TABLE tiles AS
         SELECT i || '_' || j AS tile,
                ST_MakeEnvelope(-9.99 + 2 * i, 40.01 + 2 * j, -7.99 + 2 * i, 42.01 + 2 * j, 4326) AS box
         FROM generate_series(-1, 10) i, generate_series(-1, 10) j;
       CREATE TABLE pieces AS
         SELECT c.cell_id, t.tile,
                CASE WHEN ST_CoveredBy(c.geom, t.box) THEN c.geom
                     ELSE ST_CollectionExtract(ST_Intersection(c.geom, t.box), 3) END AS geom
         FROM cut_src c JOIN tiles t ON c.geom && t.box;
       DELETE FROM pieces WHERE ST_IsEmpty(geom) OR ST_Area(geom) = 0;" >/dev/null
    rm -f "$out.tmp.gpkg"
    ogr2ogr -f GPKG "$out.tmp.gpkg" "PG:$uri" -sql "SELECT cell_id, tile, geom FROM pieces" \
      -nln coverage -nlt PROMOTE_TO_MULTI >&2 || die "export of the tiled coverage failed"
    mv "$out.tmp.gpkg" "$out"
    q "DROP TABLE cut_src, tiles, pieces" >/dev/null
  fi
  echo "$out"
}
load() { # SRC TABLE: into PostGIS (geometry column geom, fid = id), checked against the source
  local expected rows
  expected="$(ogrinfo -ro -so -al "$1" | sed -n 's/^Feature Count: //p' | head -1)"
  ogr2ogr -f PostgreSQL "PG:$uri" "$1" -nln "$2" -overwrite -lco GEOMETRY_NAME=geom \
    -lco FID=id -lco SPATIAL_INDEX=NONE -nlt PROMOTE_TO_MULTI >/dev/null 2>"$work/ogr.err" ||
    { cat "$work/ogr.err" >&2; die "ogr2ogr $1 into PostGIS failed"; }
  q "VACUUM ANALYZE $2" >/dev/null
  rows="$(q "SELECT count(*) FROM $2")"
  [ "$rows" = "$expected" ] || die "$2: PostGIS has $rows rows, $1 $expected"
}

# --- timing ---
gl_best() { # CASE ARGS...: best wall seconds and peak RSS of N geolake runs (fresh output)
  local c="$1" dir="$work/gl" b="" rss="" t m rc
  shift
  for _ in $(seq 1 "$n"); do
    rm -rf "$dir"
    mkdir -p "$dir"
    rc=0
    /usr/bin/time -f "%e %M" -o "$work/t" timeout "$timeout_s" "$bin" --warehouse "$dir/wh" \
      --workers 2 --progress off "$@" -o "$dir/out.parquet" >"$dir/stdout" 2>"$dir/stderr" || rc=$?
    if [ "$rc" = 124 ]; then b=">$timeout_s"; break; fi
    if [ "$rc" != 0 ]; then
      { echo "FAILED (exit $rc): $bin --workers 2 $* -o $dir/out.parquet"
        cat "$dir/stdout" "$dir/stderr"; } | sed 's/^/  /' >&2
      b=FAIL; break
    fi
    read -r t m < <(tail -1 "$work/t")
    if [ -z "$b" ] || faster "$t" "$b"; then b="$t"; fi
    if [ -z "$rss" ] || [ "$m" -gt "$rss" ]; then rss="$m"; fi
  done
  record "$c" geolake "$b"
  record "$c" geolake_rss_mb "$([ -n "$rss" ] && echo $((rss / 1024)) || echo -)"
  grep -E '^(dissolve|eliminate)' "$dir/stdout" 2>/dev/null | head -4 | sed "s/^/# geolake $c: /" || true
  if [[ "$b" =~ ^[0-9] ]]; then # its output into PostGIS (gl_t), via `geolake cat` (WKT CSV)
    q "DROP TABLE IF EXISTS gl_t; CREATE TABLE gl_t (geom geometry)" >/dev/null
    "$bin" cat "$dir/out.parquet" --format csv --columns geometry |
      psql "$uri" -q -v ON_ERROR_STOP=1 -c "\\copy gl_t (geom) FROM STDIN WITH (FORMAT csv, HEADER true)"
    IFS='|' read -r r a < <(q "SELECT count(*), sum(ST_Area(geom)) FROM gl_t")
    record "$c" geolake_rows "$r"
    record "$c" geolake_area "$a"
  fi
}
serial="SET max_parallel_workers_per_gather = 0;"
parallel="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off;"
pg_best() { # CASE KEY SETTINGS SQL: best seconds (sum of the statements' \timing) of N runs
  local c="$1" key="$2" b="" rss="" t m rc
  for _ in $(seq 1 "$n"); do
    rc=0
    { echo "SET client_min_messages = warning; DROP TABLE IF EXISTS out_t;"
      echo "$3"
      echo "SET statement_timeout = '${timeout_s}s';"
      echo "SELECT pg_backend_pid() AS pid \\gset"
      echo '\timing on'
      echo "$4;"
      echo '\timing off'
      echo '\setenv BACKEND_PID :pid'
      echo '\! grep VmHWM /proc/$BACKEND_PID/status'; } >"$work/pg.sql"
    # The outer timeout: for when GEOS does not see statement_timeout's cancel.
    PGAPPNAME=dissolvebench timeout $((timeout_s + 30)) psql "$uri" -q -At -v ON_ERROR_STOP=1 \
      -f "$work/pg.sql" >"$work/pg.out" 2>"$work/pg.err" || rc=$?
    if grep -q "statement timeout" "$work/pg.err" || [ "$rc" = 124 ]; then
      stop_stuck_statement "$uri" "application_name = 'dissolvebench'" || die "PostgreSQL did not come back"
      b=">$timeout_s"; break
    fi
    if [ "$rc" != 0 ]; then
      { echo "FAILED: $4"; cat "$work/pg.err"; } | sed 's/^/  /' >&2
      b=FAIL; break
    fi
    t="$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/pg.out" | awk '{ s += $1 } END { printf "%.3f", s / 1000 }')"
    m="$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "$work/pg.out")"
    if [ -z "$b" ] || faster "$t" "$b"; then b="$t"; fi
    if [ -n "$m" ] && { [ -z "$rss" ] || [ "$m" -gt "$rss" ]; }; then rss="$m"; fi
  done
  record "$c" "$key" "$b"
  record "$c" "${key}_rss_mb" "$([ -n "$rss" ] && echo $((rss / 1024)) || echo -)"
}
pg_case() { # CASE SQL (creates out_t): serial, then 2 workers if the planner uses them
  local c="$1" planned
  pg_best "$c" postgis_serial "$serial" "$2"
  if [[ "$(get "$c" postgis_serial)" =~ ^[0-9] ]]; then
    IFS='|' read -r r a < <(q "SELECT count(*), sum(ST_Area(geom)) FROM out_t")
    record "$c" postgis_rows "$r"
    record "$c" postgis_area "$a"
  fi
  planned="$(psql "$uri" -At -c "$parallel" -c "EXPLAIN ${2#CREATE TABLE out_t AS }" 2>/dev/null |
    sed -n 's/.*Workers Planned: //p' | head -1 || true)"
  if [ "$c" = eliminate_100k ]; then
    record "$c" postgis_par2 "n/a" # a PL/pgSQL loop of many statements
  elif [ -z "$planned" ]; then
    record "$c" postgis_par2 "no plan" # EXPLAIN: no parallel plan even when forced
  else
    pg_best "$c" postgis_par2 "$parallel" "$2"
  fi
}
gpd_case() { # CASE SRC MODE KEY: GeoPandas, best of N in a forked child (timeout), peak RSS
  local c="$1" out s r a m
  out="$(PYTHONPATH="$here/bench/ops" /usr/bin/time -f "RSS %M" -o "$work/gpd.time" "$py" - "$2" "$3" "$4" "$n" "$timeout_s" 2>"$work/gpd.err" <<'PY'
import sys, warnings
import geopandas
import gpd_timed
warnings.filterwarnings("ignore")  # area in a geographic CRS
src, mode, key, n, timeout = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
frame = geopandas.read_file(src)

def dissolve():
    if mode == "by":
        return frame.dissolve(by=key)
    if mode == "by_valid":  # make_valid first, timed (PostGIS and geolake repair in their time)
        valid = frame.copy()
        valid["geometry"] = frame.geometry.make_valid()
        return valid.dissolve(by=key)
    # touching: one union of everything, its polygons apart
    whole = geopandas.GeoSeries([frame.geometry.unary_union], crs=frame.crs)
    return whole.explode(index_parts=False)

seconds, summary = gpd_timed.best_of(dissolve, lambda out: (len(out), float(out.area.sum())), n, timeout)
rows, area = summary or ("-", "-")
print(seconds, rows, area)
PY
)" || { echo "# GeoPandas failed on $c:" >&2; cat "$work/gpd.err" >&2; out="FAIL - -"; }
  read -r s r a <<<"$out"
  m="$(sed -n 's/^RSS //p' "$work/gpd.time" 2>/dev/null)"
  record "$c" geopandas "$s"
  record "$c" geopandas_rows "$r"
  record "$c" geopandas_area "$a"
  record "$c" geopandas_rss_mb "$([ -n "$m" ] && echo $((m / 1024)) || echo -)"
}

# The rule of docs/cli.md (longest border, ties to the lower row id, mutual choices keep the
# larger, chains to their root; areas in the CRS's units) in SQL, the statement
# tests/e2e/eliminate_vs_postgis.sh checks geolake against (tests/e2e/lib/eliminate_rule.bash),
# then the union per survivor into out_t. Input table c_in (id = input order).
eliminate_sql() { # THRESHOLD
  cat <<SQL
CREATE TABLE c AS SELECT (row_number() OVER (ORDER BY id) - 1)::bigint AS rid, geom, ST_Area(geom) AS area FROM c_in;
CREATE INDEX ON c USING gist (geom);
CREATE TABLE borders AS
  SELECT a.rid AS a, b.rid AS b, ST_Length(ST_Intersection(ST_Boundary(a.geom), ST_Boundary(b.geom))) AS len
  FROM c a JOIN c b ON a.rid < b.rid AND a.geom && b.geom
  WHERE a.area < $1 OR b.area < $1;
DELETE FROM borders WHERE len <= 0;
SQL
  eliminate_rule_sql el "$1" "e.len DESC, e.b ASC"
  cat <<SQL
CREATE TABLE out_t AS SELECT o.owner, ST_Union(c.geom) AS geom FROM el_owner o JOIN c USING (rid) GROUP BY o.owner;
DROP TABLE c, borders, el_owner, el_r, el_e, el_rounds;
SQL
}

echo "# dissolve and eliminate: geolake (--workers 2) vs PostGIS vs GeoPandas (issue 20)"
echo "# geolake: $bin; best of $n; timeout ${timeout_s}s; cases: ${cases[*]}"
echo "# $(q "SELECT postgis_full_version()" | grep -o 'POSTGIS="[^"]*"\|GEOS="[^"]*"' | tr '\n' ' ')"
echo "# $("$py" -c "import geopandas, shapely, shapely.geos as g; print('geopandas', geopandas.__version__, 'shapely', shapely.__version__, 'GEOS', '.'.join(map(str, g.geos_version)))")"
echo "# $(nproc) cores, shared: times are noisy. uptime at start: $(uptime)"
for c in "${cases[@]}"; do
  side="$(side_of "$c")"
  case "$c" in
    us_counties) src="$data/us_counties.gpkg"
      [ -s "$src" ] || die "$src missing (scripts/fetch-data.sh)" ;;
    by_*) src="$(grouped "$side")" ;;
    touching_*) src="$(streets "$side")" ;;
    tiles_*) src="$(tiled "$side")" ;;
    eliminate_*) src="$(coverage "$side")" ;;
  esac
  load "$src" c_in
  record "$c" input_rows "$(q "SELECT count(*) FROM c_in")"
  echo "# $c: $src, $(get "$c" input_rows) rows"
  cat "$src" >/dev/null # into the page cache for everyone
  case "$c" in
    us_counties)
      gl=(dissolve "$src" --by state_fips)
      sql="CREATE TABLE out_t AS SELECT state_fips, ST_Union(ST_MakeValid(geom)) AS geom FROM c_in GROUP BY state_fips"
      gpd=(by_valid state_fips) ;;
    by_*)
      gl=(dissolve "$src" --by grp)
      sql="CREATE TABLE out_t AS SELECT grp, ST_Union(geom) AS geom FROM c_in GROUP BY grp"
      gpd=(by grp) ;;
    touching_*)
      gl=(dissolve "$src" --touching)
      sql="CREATE TABLE out_t AS SELECT cid, ST_Union(geom) AS geom FROM (SELECT ST_ClusterDBSCAN(geom, 0, 1) OVER () AS cid, geom FROM c_in) s GROUP BY cid"
      gpd=(touching -) ;;
    tiles_*)
      gl=(dissolve "$src" --by cell_id --tile-column tile --tile-grid 2,-9.99,40.01)
      sql="CREATE TABLE out_t AS SELECT cell_id, ST_Union(geom) AS geom FROM c_in GROUP BY cell_id"
      gpd=(by cell_id) ;;
    eliminate_*)
      gl=(eliminate "$src" --area-below 0.003)
      sql="$(eliminate_sql 0.003)"
      gpd=() ;;
  esac
  gl_best "$c" "${gl[@]}"
  pg_case "$c" "$sql"
  if [ ${#gpd[@]} -gt 0 ]; then gpd_case "$c" "$src" "${gpd[@]}"; else record "$c" geopandas "no peer"; fi
  q "DROP TABLE IF EXISTS c_in, out_t, gl_t" >/dev/null
  echo "# load after $c: $(cut -d' ' -f1-3 /proc/loadavg)"
done

# --- summary ---
echo
echo "seconds (best of $n); ratios = peer / geolake (> 1: geolake faster); >T = did not finish in T s;"
echo "pg = the faster of PostGIS serial and 2 workers; RSS in MB (peak of the runs)"
printf "%-15s %8s | %8s %8s %8s %8s | %6s %6s %6s | %5s %5s %5s %5s | %s\n" case rows_in \
  geolake pg_ser pg_par2 gpd ser/gl pg/gl gpd/gl gl_MB pg_MB par_MB gpdMB target
for c in "${cases[@]}"; do
  gl="$(get "$c" geolake)"; ser="$(get "$c" postgis_serial)"; par="$(get "$c" postgis_par2)"
  gpd="$(get "$c" geopandas)"
  pg="$ser"
  if [[ "$par" =~ ^[0-9] ]] && { ! [[ "$ser" =~ ^[0-9] ]] || faster "$par" "$ser"; }; then pg="$par"; fi
  rp="$(ratio "$pg" "$gl")"; rg="$(ratio "$gpd" "$gl")"
  case "$c" in
    *_1m)
      target="PostGIS $([ "$rp" != - ] && at_least "$rp" 5 && echo met || echo MISSED) (${rp}x, 5x wanted),"
      target+=" GeoPandas $([ "$rg" != - ] && at_least "$rg" 10 && echo met || echo MISSED) (${rg}x, 10x wanted)" ;;
    *) target="(no target: the targets are on the 1M dissolves)" ;;
  esac
  printf "%-15s %8s | %8s %8s %8s %8s | %6s %6s %6s | %5s %5s %5s %5s | %s\n" "$c" \
    "$(get "$c" input_rows)" "$gl" "$ser" "$par" "$gpd" "$(ratio "$ser" "$gl")" "$rp" "$rg" \
    "$(get "$c" geolake_rss_mb)" "$(get "$c" postgis_serial_rss_mb)" "$(get "$c" postgis_par2_rss_mb)" \
    "$(get "$c" geopandas_rss_mb)" "$target"
done
echo "(geolake: whole run incl. reading the GeoPackage and writing GeoParquet, 2 workers; PostGIS:"
echo " the statements in the server, loading not counted; GeoPandas: the operation on the frame in"
echo " memory, reading not counted (its RSS includes reading); PostGIS RSS: the backend's VmHWM"
echo " incl. shared buffers touched, parallel workers not counted)"
echo
echo "correctness (output rows; total area = sum of ST_Area in PostGIS, GeoPandas' own .area)"
for c in "${cases[@]}"; do
  gr="$(get "$c" geolake_rows)"; pr="$(get "$c" postgis_rows)"; dr="$(get "$c" geopandas_rows)"
  ga="$(get "$c" geolake_area)"; pa="$(get "$c" postgis_area)"; da="$(get "$c" geopandas_area)"
  rows_ok="$(awk -v g="$gr" -v p="$pr" -v d="$dr" 'BEGIN {
    if (g == "-") { print "geolake did not finish"; exit }
    bad = (p != "-" && p != g) || (d != "-" && d != g); print (bad ? "DIFFERENT" : "equal") }')"
  rel() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else { d = (a - b) / b; if (d < 0) d = -d; printf "%.1e", d } }'; }
  rp="$(rel "$ga" "$pa")"; rd="$(rel "$ga" "$da")"
  area_ok="$(awk -v p="$rp" -v d="$rd" 'BEGIN { if (p == "-" && d == "-") { print "not checked"; exit }
    print ((p == "-" || p + 0 <= 1e-6) && (d == "-" || d + 0 <= 1e-6) ? "ok" : "DIFFERENT") }')"
  echo "$c: rows geolake $gr, PostGIS $pr, GeoPandas $dr ($rows_ok); area geolake $ga, PostGIS $pa (rel. diff $rp), GeoPandas $da (rel. diff $rd) ($area_ok, 1e-6 wanted)"
done
echo "uptime at end: $(uptime)"
