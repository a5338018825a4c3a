#!/usr/bin/env bash
# bench/ops/make_valid_simplify.sh: `geolake make-valid` and `geolake simplify --preserve-topology`
# (2 workers, GeoParquet file out) against PostGIS ST_MakeValid / ST_SimplifyPreserveTopology
# (CREATE TABLE AS, so the output is written; serial, and with 2 parallel workers forced) and
# GeoPandas make_valid() / simplify(T, preserve_topology=True) (in memory: reading and writing
# not counted), in one run, over:
#   us_counties, ne_countries_10m  the real polygon sets of build/data (both have invalid
#                                  polygons; us_zipcodes is points)
#   coverage_1m                    1,000,000 quadrilaterals (geolake_make_coverage 1000 42,
#                                  cached in RELEASE_BUILD_DIR/bench-data as bench/ingest/run.sh)
#   giant_holes                    make-valid only: the polygon of geo/ring_repair_slow_test.cc
#                                  (the generator of geo/ring_repair_testing.h redone in Python,
#                                  same std::mt19937_64 numbers, so the same coordinates): a
#                                  150k-vertex shell crossing itself 3 times, 120,045 holes (200
#                                  broken or touching), 1,229,050 vertices. GEOS on the whole
#                                  takes ~30 min, so PostGIS and GeoPandas get TIMEOUT seconds
#                                  and are reported as "did not finish"; geolake's area is checked
#                                  against the one GEOS computed once (recorded in that test).
#   or any vector file path (its name is the file name without extension).
# Each time is the best of N runs (a run that hits TIMEOUT ends the repeats); the ratios are the
# other tool's time over geolake's (> 1 = geolake faster). Prints `name,seconds` CSV lines, then
# a summary with the targets of issue 21 (>= 3x PostGIS on each per-feature op; the giant
# make-valid in seconds where PostGIS takes minutes) and light correctness checks: output rows of
# geolake and PostGIS equal, and for make-valid the total area equal to 1e-6 relative (geolake's
# parquet read back with `geolake cat` into PostGIS).
# Usage: bench/ops/make_valid_simplify.sh GEOLAKE_BIN [N=3] [INPUT...]
#   INPUT: us_counties ne_countries_10m coverage_1m giant_holes (the default: all four) or a path.
#   Environment: MVBENCH_TIMEOUT (seconds, default 600: PostgreSQL statement_timeout, and the
#   limit for one run of any tool), MVBENCH_TOLERANCE (default 0.001: degrees, the inputs are
#   EPSG:4326).
# Needs a release build (GEOLAKE_BIN = build/release/src/geolake/cli/geolake, and
# build/release/bench/geolake_make_coverage when the coverage is not cached), ogr2ogr,
# PostgreSQL 15 + PostGIS (scripts/install-deps.sh; started privately by
# scripts/pg-test-server.sh), /usr/bin/python3 with GDAL's bindings and geopandas (Debian's
# python3-gdal and python3-geopandas). Takes ~25 min with the defaults (the giant's two timeouts
# are 20 of them; more when GEOS ignores PostgreSQL's cancel, see stop_stuck_statement in lib.bash). Not run by `make test` (docs/ops.md).
set -euo pipefail
bin="$(realpath "${1:?usage: bench/ops/make_valid_simplify.sh GEOLAKE_BIN [N] [INPUT...]}")"
n="${2:-3}"
shift $(($# >= 2 ? 2 : 1))
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=(us_counties ne_countries_10m coverage_1m giant_holes)
timeout_s="${MVBENCH_TIMEOUT:-600}"
tol="${MVBENCH_TOLERANCE:-0.001}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
build="$(cd "$(dirname "$bin")/../../.." && pwd)"  # build/release
cache="$build/bench-data"
py=/usr/bin/python3
work="$(mktemp -d /tmp/mvbench-XXXXXX)"
# A private PostgreSQL + PostGIS under $work/pg, stopped (and $work removed) on exit: the e2e
# tests' start_postgres, whose "skip" is a failure here (the bench needs its peer).
here_dir="$here"
skip() { echo "${0##*/}: $2" >&2; exit 1; }
# shellcheck source=../../tests/e2e/lib/postgres.bash
source "$here/tests/e2e/lib/postgres.bash"
# shellcheck source=lib.bash
source "$here/bench/ops/lib.bash"
start_postgres --postgis
results="$work/results"  # INPUT|OP|TOOL|VALUE lines, for the summary
: >"$results"
record() {  # INPUT OP TOOL VALUE: keep for the summary; seconds also as a CSV line
  echo "$1|$2|$3|$4" >>"$results"
  case "$3" in *_rows | *_area | *_vertices | *_invalid | *_note) ;; *) echo "$1.$2.$3,$4" ;; esac
}
get() {  # INPUT OP TOOL: a recorded value, or "-"
  awk -F'|' -v i="$1" -v o="$2" -v t="$3" '$1 == i && $2 == o && $3 == t { v = $4 } END { print (v == "" ? "-" : v) }' "$results"
}

# --- inputs ---
coverage="$cache/coverage_1000x1000.gpkg"
ensure_coverage() {  # as bench/ingest/run.sh: generated once (fixed seed) into the cache
  [ -f "$coverage" ] && return 0
  mkdir -p "$cache"
  rm -f "$coverage.tmp.gpkg"
  "$build/bench/geolake_make_coverage" "$coverage.tmp.gpkg" 1000 42
  mv "$coverage.tmp.gpkg" "$coverage"
}
make_giant() {  # OUT.gpkg: the polygon of ring_repair_slow_test.cc (LargeSpec), EPSG:3857
  "$py" - "$1" <<'PY'
import ctypes, math, struct, sys
from array import array
import numpy as np
from osgeo import ogr, osr

class MT64:
    """std::mt19937_64 (the standard fixes its output), the twist vectorised with numpy."""
    N, M = 312, 156
    A, UPPER, LOWER = np.uint64(0xB5026F5AA96619E9), np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)

    def __init__(self, seed):
        s = [seed % 2**64]
        for i in range(1, self.N):
            s.append((6364136223846793005 * (s[-1] ^ (s[-1] >> 62)) + i) % 2**64)
        self.mt, self.out, self.pos = np.array(s, dtype=np.uint64), [], 0

    def _refill(self):
        mt, n, m, one = self.mt, self.N, self.M, np.uint64(1)
        def step(cur, nxt):
            x = (cur & self.UPPER) | (nxt & self.LOWER)
            return (x >> one) ^ np.where((x & one) == one, self.A, np.uint64(0))
        # mt[i] = mt[i+m] ^ step(mt[i], mt[i+1]), in order: three slices whose inputs are ready.
        mt[:n - m] = mt[m:] ^ step(mt[:n - m], mt[1:n - m + 1])
        mt[n - m:n - 1] = mt[:m - 1] ^ step(mt[n - m:n - 1], mt[n - m + 1:])
        mt[n - 1:] = mt[m - 1:m] ^ step(mt[n - 1:], mt[:1])
        y = mt.copy()
        y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
        y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        y ^= y >> np.uint64(43)
        self.out, self.pos = [int(v) for v in y], 0

    def __call__(self):
        if self.pos == len(self.out):
            self._refill()
        self.pos += 1
        return self.out[self.pos - 1]

check = MT64(5489)
for _ in range(9999):
    check()
assert check() == 9981545732273789042, "not std::mt19937_64"
libm = ctypes.CDLL("libm.so.6")  # hypot as C++ calls it (Python's own may differ in the last bit)
libm.hypot.restype, libm.hypot.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]

# LargeSpec() of ring_repair_slow_test.cc; the steps and their order are MakeHoleyPolygon's.
seed, shell_vertices, holes, hmin, hmax, shell_loops = 2026, 150000, 120000, 4, 12, 3
bowtie, touching, crossing, overlapping, nested, outside, collapsed = 50, 20, 20, 30, 20, 5, 5
rng = MT64(seed)
uniform = lambda: (rng() >> 11) * 2.0**-53
below = lambda k: int(uniform() * k)
pi, R = math.pi, 1000.0
radius = lambda t: R * (1 + 0.08 * math.sin(5 * t) + 0.04 * math.sin(13 * t + 1))
n = max(shell_vertices, 16)
shell = []
for i in range(n):
    t = 2 * pi * i / n
    shell.append((radius(t) * math.cos(t), radius(t) * math.sin(t)))
used = []
def pick():  # a shell vertex at least 8 from every one picked before
    while True:
        i = 4 + below(n - 8)
        if all(abs(u - i) >= 8 for u in used):
            used.append(i)
            return i
loop_at = [pick() for _ in range(shell_loops)]
ring = []
for i in range(n):
    x, y = shell[i]
    ring += [x, y]
    if i in loop_at:  # a small figure eight bulging out
        nx, ny = shell[i + 1]
        dx, dy, h = nx - x, ny - y, 0.5
        ring += [x + 0.75 * dx + h * dy, y + 0.75 * dy - h * dx,
                 x + 0.25 * dx + h * dy, y + 0.25 * dy - h * dx]
rings = [ring + ring[:2]]
inner = 0.85 * R
special = 2 * overlapping + bowtie + 2 * nested + collapsed
needed = holes + overlapping + nested
cell = inner * math.sqrt(pi / (1.2 * max(needed, 1)))
while True:  # grid cells wholly inside `inner`
    centers = []
    half = int(inner / cell) + 1
    for gy in range(-half, half):
        y0 = gy * cell
        far_y = max(abs(y0), abs(y0 + cell))
        for gx in range(-half, half):
            x0 = gx * cell
            far_x = max(abs(x0), abs(x0 + cell))
            if far_x * far_x + far_y * far_y < inner * inner:
                centers.append((x0 + cell / 2, y0 + cell / 2))
    if len(centers) >= needed:
        break
    cell *= 0.97
for i in range(len(centers), 1, -1):
    j = int(uniform() * float(i))
    centers[i - 1], centers[j] = centers[j], centers[i - 1]
cells = iter(centers)
def square(cx, cy, h):
    return [cx - h, cy - h, cx - h, cy + h, cx + h, cy + h, cx + h, cy - h, cx - h, cy - h]
for _ in range(max(0, holes - special)):  # star-shaped holes, clockwise
    cx, cy = next(cells)
    m = hmin + below(hmax - hmin + 1)
    r = []
    for j in range(m):
        t = -2 * pi * (j + 0.4 * uniform()) / m
        rad = cell * (0.15 + 0.2 * uniform())
        r += [cx + rad * math.cos(t), cy + rad * math.sin(t)]
    rings.append(r + r[:2])
for _ in range(bowtie):
    cx, cy = next(cells)
    d = 0.3 * cell
    rings.append([cx - d, cy - d, cx + d, cy + d, cx + d, cy - d, cx - d, cy + d, cx - d, cy - d])
for _ in range(overlapping):
    cx, cy = next(cells)
    rings.append(square(cx - 0.1 * cell, cy - 0.1 * cell, 0.25 * cell))
    rings.append(square(cx + 0.1 * cell, cy + 0.1 * cell, 0.25 * cell))
for _ in range(nested):
    cx, cy = next(cells)
    rings.append(square(cx, cy, 0.4 * cell))
    rings.append([cx - 0.1 * cell, cy - 0.1 * cell, cx + 0.1 * cell, cy - 0.1 * cell, cx,
                  cy + 0.1 * cell, cx - 0.1 * cell, cy - 0.1 * cell])
for _ in range(collapsed):
    cx, cy = next(cells)
    rings.append([cx, cy, cx + 0.1 * cell, cy, cx + 0.2 * cell, cy, cx, cy])
for _ in range(touching):  # triangles sharing a shell vertex
    x, y = shell[pick()]
    ln = libm.hypot(x, y)
    ux, uy, d = -x / ln, -y / ln, 8
    c, s = math.cos(0.4), math.sin(0.4)
    rings.append([x, y, x + d * (c * ux - s * uy), y + d * (s * ux + c * uy),
                  x + d * (c * ux + s * uy), y + d * (-s * ux + c * uy), x, y])
for _ in range(crossing):  # squares half outside the shell
    x, y = shell[pick()]
    rings.append(square(x, y, 3))
for k in range(outside):
    t = 2 * pi * (k + 0.5 * uniform()) / outside
    rings.append(square(1.4 * R * math.cos(t), 1.4 * R * math.sin(t), 10))
vertices = sum(len(r) // 2 for r in rings)
assert (len(rings), vertices) == (120046, 1229050), (len(rings), vertices)

wkb = bytearray(struct.pack("<BII", 1, 3, len(rings)))
for r in rings:
    wkb += struct.pack("<I", len(r) // 2) + array("d", r).tobytes()
ds = ogr.GetDriverByName("GPKG").CreateDataSource(sys.argv[1])
srs = osr.SpatialReference()
srs.ImportFromEPSG(3857)
layer = ds.CreateLayer("giant_holes", srs, ogr.wkbPolygon)
layer.CreateField(ogr.FieldDefn("name", ogr.OFTString))
feature = ogr.Feature(layer.GetLayerDefn())
feature.SetField("name", "ring_repair_slow_test LargeSpec")
feature.SetGeometryDirectly(ogr.CreateGeometryFromWkb(bytes(wkb)))
layer.CreateFeature(feature)
ds = None
PY
}
# What GEOSMakeValid (linework) on the whole giant gave, once (ring_repair_slow_test.cc):
# the polygonal part's area and vertices.
giant_area=2839550.0471889013
giant_vertices=1229393

# --- timing ---
gl_best() {  # OUT_DIR ARGS...: best wall seconds of N geolake runs (fresh warehouse and output)
  local dir="$1" b="" t rc
  shift
  for _ in $(seq 1 "$n"); do
    rm -rf "$dir"
    mkdir -p "$dir"
    rc=0
    /usr/bin/time -f "%e" -o "$work/t" timeout "$timeout_s" "$bin" --warehouse "$dir/wh" \
      --workers 2 --progress off "$@" -o "$dir/out.parquet" >"$dir/stdout" 2>"$dir/stderr" || rc=$?
    if [ "$rc" = 124 ]; then echo ">$timeout_s"; return; fi
    if [ "$rc" != 0 ]; then
      { echo "FAILED (exit $rc): $bin --warehouse $dir/wh --workers 2 --progress off $* -o $dir/out.parquet"
        cat "$dir/stdout" "$dir/stderr"; } | sed 's/^/  /' >&2
      echo FAIL; return
    fi
    t="$(tail -1 "$work/t")"
    if [ -z "$b" ] || faster "$t" "$b"; then b="$t"; fi
  done
  echo "$b"
}
serial="SET max_parallel_workers_per_gather = 0"
parallel="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off"
pg_best() {  # TABLE SETTINGS EXPR: best seconds of N CREATE TABLE out_t AS SELECT id, EXPR AS geom
  local b="" t rc
  for _ in $(seq 1 "$n"); do
    rc=0
    # The outer timeout: when GEOS does not see statement_timeout's cancel (see above).
    timeout $((timeout_s + 30)) psql "$uri" -q -At -v ON_ERROR_STOP=1 \
      -c "SET client_min_messages = warning; DROP TABLE IF EXISTS out_t" -c "$2" \
      -c "SET statement_timeout = '${timeout_s}s'" -c '\timing on' \
      -c "CREATE TABLE out_t AS SELECT id, $3 AS geom FROM $1" >"$work/pg.out" 2>"$work/pg.err" || rc=$?
    if grep -q "statement timeout" "$work/pg.err" || [ "$rc" = 124 ]; then
      stop_stuck_statement "$uri" "query LIKE 'CREATE TABLE out_t%'" || exit 1
      echo ">$timeout_s"; return
    fi
    if [ "$rc" != 0 ]; then
      { echo "FAILED: CREATE TABLE out_t AS SELECT id, $3 AS geom FROM $1"; cat "$work/pg.err"; } | sed 's/^/  /' >&2
      echo FAIL; return
    fi
    t="$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/pg.out" | tail -1)"
    t="$(awk -v ms="$t" 'BEGIN { printf "%.3f", ms / 1000 }')"
    if [ -z "$b" ] || faster "$t" "$b"; then b="$t"; fi
  done
  echo "$b"
}
gpd_run() {  # SRC OPS...: per op "OP SECONDS ROWS AREA" (only the operation timed, in memory)
  local src="$1"
  shift
  PYTHONPATH="$here/bench/ops" "$py" - "$src" "$n" "$timeout_s" "$tol" "$@" <<'PY'
import sys, warnings
import geopandas
import gpd_timed
warnings.filterwarnings("ignore")  # area in a geographic CRS
src, n, timeout, tol, ops = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
geometry = geopandas.read_file(src).geometry

def summarize(out):
    return int((out.notna() & ~out.is_empty).sum()), float(out.area.sum())

for op in ops:
    if op == "make_valid":
        operation = geometry.make_valid
    else:
        operation = lambda: geometry.simplify(tol, preserve_topology=True)
    seconds, summary = gpd_timed.best_of(operation, summarize, n, timeout)
    rows, area = summary or ("-", "-")
    print(op, seconds, rows, area, flush=True)
PY
}
# geolake's output (OUT_DIR/out.parquet) into PostGIS table gl_t, via `geolake cat` (WKT CSV).
load_gl_output() {
  psql "$uri" -q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS gl_t; CREATE TABLE gl_t (geom geometry)"
  "$bin" cat "$1/out.parquet" --format csv --columns geometry |
    psql "$uri" -q -v ON_ERROR_STOP=1 -c "\\copy gl_t (geom) FROM STDIN WITH (FORMAT csv, HEADER true)"
}

echo "# make-valid and simplify --preserve-topology: geolake (--workers 2) vs PostGIS vs GeoPandas"
echo "# geolake: $bin; best of $n; timeout ${timeout_s}s; simplify tolerance $tol (CRS units: degrees)"
echo "# $(psql "$uri" -At -c "SELECT postgis_full_version()" | grep -o 'POSTGIS="[^"]*"\|GEOS="[^"]*"' | tr '\n' ' ')"
echo "# $("$py" -c "import geopandas, shapely, shapely.geos as g; print('geopandas', geopandas.__version__, 'shapely', shapely.__version__, 'GEOS', '.'.join(map(str, g.geos_version)))" 2>/dev/null || echo "no geopandas")"
measured=()
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
for input in "${inputs[@]}"; do
  case "$input" in
    coverage_1m) ensure_coverage; src="$coverage" ;;
    giant_holes) src="$work/giant_holes.gpkg"; make_giant "$src" ;;
    */* | *.*) src="$input"; input="$(basename "${input%.*}")" ;;
    *) src="$data/$input.gpkg" ;;
  esac
  [ -s "$src" ] || { echo "# $input: $src missing, skipped"; continue; }
  measured+=("$input")
  ops=(make_valid simplify)
  [ "$input" = giant_holes ] && ops=(make_valid)  # the giant is the make-valid case only
  table="src_$(echo "$input" | tr -c 'a-zA-Z0-9_\n' _ | tr '[:upper:]' '[:lower:]')"

  # PostGIS: load, check the row count against the source's.
  expected="$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p' | head -1)"
  ogr2ogr -f PostgreSQL "PG:$uri" "$src" -nln "$table" -overwrite -lco GEOMETRY_NAME=geom \
    -lco FID=id -lco SPATIAL_INDEX=NONE >/dev/null 2>"$work/ogr.err" ||
    { cat "$work/ogr.err" >&2; exit 1; }
  psql "$uri" -q -c "VACUUM ANALYZE $table" >/dev/null
  IFS='|' read -r rows vertices max_vertices < <(psql "$uri" -At -c \
    "SELECT count(*), sum(ST_NPoints(geom)), max(ST_NPoints(geom)) FROM $table")
  [ "$rows" = "$expected" ] || { echo "# $input: PostGIS has $rows rows, $src $expected" >&2; exit 1; }
  invalid="-"  # GEOS's IsValid takes ~90 s on the giant
  [ "$max_vertices" -gt 500000 ] ||
    invalid="$(psql "$uri" -At -c "SELECT count(*) FROM $table WHERE NOT ST_IsValid(geom)" 2>/dev/null)"
  record "$input" all input_rows "$rows"
  record "$input" all input_vertices "$vertices"
  record "$input" all input_invalid "$invalid"
  echo "# $input: $src, $rows rows ($rows loaded into PostGIS), $vertices vertices, $invalid invalid"
  cat "$src" >/dev/null

  gpd_out="$work/gpd.out"
  : >"$gpd_out"
  gpd_run "$src" "${ops[@]}" >"$gpd_out" 2>"$work/gpd.err" || { echo "# GeoPandas failed:" >&2; cat "$work/gpd.err" >&2; }
  for op in "${ops[@]}"; do
    if [ "$op" = make_valid ]; then
      args=(make-valid "$src"); expr="ST_MakeValid(geom)"
    else
      args=(simplify "$src" --tolerance "$tol" --preserve-topology); expr="ST_SimplifyPreserveTopology(geom, $tol)"
    fi
    out="$work/gl_$op"
    record "$input" "$op" geolake "$(gl_best "$out" "${args[@]}")"
    grep -E '^(make-valid|simplify) \(|ring by ring' "$out/stdout" 2>/dev/null | sed 's/^/# geolake: /' || true
    record "$input" "$op" postgis_serial "$(pg_best "$table" "$serial" "$expr")"
    pg_ser_ok="$(get "$input" "$op" postgis_serial)"
    # Kept for the checks: the serial run's table (the parallel run overwrites it).
    if [[ "$pg_ser_ok" =~ ^[0-9] ]]; then
      IFS='|' read -r r a v < <(psql "$uri" -At -c "SELECT count(*), sum(ST_Area(geom)), sum(ST_NPoints(geom)) FROM out_t")
      record "$input" "$op" postgis_rows "$r"; record "$input" "$op" postgis_area "$a"; record "$input" "$op" postgis_vertices "$v"
    fi
    if [ "$rows" -lt 2 ]; then
      record "$input" "$op" postgis_par2 "n/a"  # one row: a parallel plan cannot split it
    else
      planned="$(psql "$uri" -At -c "$parallel" -c "EXPLAIN CREATE TABLE x AS SELECT id, $expr AS geom FROM $table" | sed -n 's/.*Workers Planned: //p')"
      record "$input" "$op" postgis_par2 "$(pg_best "$table" "$parallel" "$expr")"
      record "$input" "$op" postgis_par2_note "Workers Planned: ${planned:-none}"
    fi
    read -r _ g_s g_rows g_area < <(grep "^$op " "$gpd_out" || echo "$op - - -")
    record "$input" "$op" geopandas "$g_s"
    record "$input" "$op" geopandas_rows "$g_rows"; record "$input" "$op" geopandas_area "$g_area"
    if [[ "$(get "$input" "$op" geolake)" =~ ^[0-9] ]]; then
      load_gl_output "$out"
      check_valid="count(*) FILTER (WHERE NOT ST_IsValid(geom))"
      [ "$max_vertices" -gt 500000 ] && check_valid="'-'"
      IFS='|' read -r r a v bad < <(psql "$uri" -q -At -c "SET client_min_messages = warning; SELECT count(*), sum(ST_Area(geom)), sum(ST_NPoints(geom)), $check_valid FROM gl_t")
      record "$input" "$op" geolake_rows "$r"; record "$input" "$op" geolake_area "$a"
      record "$input" "$op" geolake_vertices "$v"; record "$input" "$op" geolake_invalid "$bad"
    fi
  done
  psql "$uri" -q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $table, out_t, gl_t" >/dev/null
  echo "# load average after $input: $(cut -d' ' -f1-3 /proc/loadavg)"
done

# --- summary ---
echo
echo "seconds (best of $n); ratios = peer / geolake (> 1: geolake faster); >T = did not finish in T s"
printf "%-17s %-10s %8s %9s | %8s %8s %8s %8s | %7s %7s %7s | %s\n" input op rows vertices \
  geolake pg_ser pg_par2 gpd ser/gl par/gl gpd/gl target
for input in "${measured[@]}"; do
  for op in make_valid simplify; do
    gl="$(get "$input" "$op" geolake)"
    [ "$gl" != - ] || continue
    ser="$(get "$input" "$op" postgis_serial)"; par="$(get "$input" "$op" postgis_par2)"
    gpd="$(get "$input" "$op" geopandas)"
    # The faster PostGIS (serial or 2 workers) against geolake.
    pg="$ser"
    if [[ "$par" =~ ^[0-9] ]] && { ! [[ "$ser" =~ ^[0-9] ]] || faster "$par" "$ser"; }; then pg="$par"; fi
    if [ "$input" = giant_holes ]; then
      # PostGIS's time (or its timeout) must be a minute or more to tell.
      pg_min="${pg#>}"
      if ! [[ "$pg_min" =~ ^[0-9] ]] || faster "$pg_min" 60; then
        target="undecided: PostGIS $pg (a timeout under 60 s does not show minutes)"
      elif [[ "$gl" =~ ^[0-9] ]] && faster "$gl" 60; then
        target="met: geolake ${gl} s, PostGIS $( [[ "$pg" == ">"* ]] && echo "did not finish in ${pg#>} s" || echo "$pg s")"
      else
        target="MISSED: seconds vs minutes (geolake $gl, PostGIS $pg)"
      fi
    else
      r="$(ratio "$pg" "$gl")"
      if [ "$r" = - ]; then target="-"
      elif at_least "$r" 3; then target="met: ${r}x the faster PostGIS"
      else target="MISSED: ${r}x the faster PostGIS (3x wanted)"; fi
    fi
    printf "%-17s %-10s %8s %9s | %8s %8s %8s %8s | %7s %7s %7s | %s\n" "$input" "$op" \
      "$(get "$input" all input_rows)" "$(get "$input" all input_vertices)" "$gl" "$ser" "$par" "$gpd" \
      "$(ratio "$ser" "$gl")" "$(ratio "$par" "$gl")" "$(ratio "$gpd" "$gl")" "$target"
  done
done
echo "(geolake: whole run incl. reading the GeoPackage and writing GeoParquet, 2 workers; PostGIS:"
echo " CREATE TABLE AS in the server, loading not counted, JIT as configured by default; GeoPandas:"
echo " the operation only, on the GeoSeries in memory, reading not counted; with shapely 1.8 it is"
echo " a loop over the rows on one core)"
echo
echo "correctness (rows: geolake output vs PostGIS CREATE TABLE; area: sum of ST_Area, polygonal parts)"
for input in "${measured[@]}"; do
  for op in make_valid simplify; do
    [ "$(get "$input" "$op" geolake)" != - ] || continue
    gr="$(get "$input" "$op" geolake_rows)"; pr="$(get "$input" "$op" postgis_rows)"
    ga="$(get "$input" "$op" geolake_area)"; pa="$(get "$input" "$op" postgis_area)"
    line="$input $op: rows geolake $gr, PostGIS $pr"
    if [ "$pr" = - ]; then line+=" (PostGIS did not finish)"
    elif [ "$gr" = "$pr" ]; then line+=" (equal)"; else line+=" (DIFFERENT)"; fi
    if [ "$op" = make_valid ]; then
      ref="$pa"; who=PostGIS
      if [ "$input" = giant_holes ] && [ "$pa" = - ]; then ref="$giant_area"; who="GEOS whole, recorded"; fi
      rel="$(awk -v a="$ga" -v b="$ref" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else { d = (a - b) / b; if (d < 0) d = -d; printf "%.1e", d } }')"
      verdict="$(awk -v r="$rel" 'BEGIN { print (r == "-" ? "not checked" : (r + 0 <= 1e-6 ? "ok" : "DIFFERENT")) }')"
      line+="; area geolake $ga, $who $ref, relative difference $rel ($verdict)"
      if [ "$input" = giant_holes ]; then
        line+="; vertices geolake $(get "$input" "$op" geolake_vertices), GEOS whole $giant_vertices"
      fi
      ga2="$(get "$input" "$op" geopandas_area)"
      [ "$ga2" = - ] || line+="; GeoPandas area $ga2"
    else
      line+="; vertices after: geolake $(get "$input" "$op" geolake_vertices), PostGIS $(get "$input" "$op" postgis_vertices)"
    fi
    line+="; geolake output invalid: $(get "$input" "$op" geolake_invalid)"
    echo "$line"
  done
done
echo "(PostGIS keeps the lines GEOS returns for collapsed rings, geolake drops them: vertex totals differ)"
for input in "${measured[@]}"; do
  note="$(get "$input" make_valid postgis_par2_note)"
  [ "$note" = - ] || echo "(PostGIS with forced parallelism on $input: $note)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
