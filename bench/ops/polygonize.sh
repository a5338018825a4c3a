#!/usr/bin/env bash
# geolake polygonize vs gdal_polygonize.py on generated classified rasters (bench/ops/
# gen_raster.py, fixed seed), same machine, same run. Usage:
#   bench/ops/polygonize.sh RELEASE_BUILD_DIR [SIZES...]   (default sizes: 4000 20000, i.e. 16M
#   and 400M pixels; "4000" means 4000x4000)
# Prints per size: wall seconds and peak RSS of each tool, the ratio, and whether the polygons
# are the same (count, and area per value to 1e-9 relative, both read back with GDAL).
# Both write GeoPackage (gdal_polygonize.py's usual output). geolake runs with --workers 2.
set -euo pipefail
build="$(cd "${1:?usage: polygonize.sh RELEASE_BUILD_DIR [SIZES...]}" && pwd)"
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4000 20000)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
geolake="$build/src/geolake/cli/geolake"
work="${BENCH_WORK:-$(mktemp -d)}"
mkdir -p "$work"
py=/usr/bin/python3  # Debian's python3 has osgeo (GDAL's bindings)

# Wall seconds and peak RSS (KiB) of a command: "SECONDS RSS_KIB".
measure() {
  local log="$work/time.log"
  /usr/bin/time -f "%e %M" -o "$log" "$@" >"$work/last.out" 2>"$work/last.err" || {
    cat "$work/last.err" >&2; return 1; }
  cat "$log"
}

# Polygon count and area per value of a vector file (GDAL, layer 0), as one line.
summary() {
  "$py" - "$1" <<'PY'
import sys
from osgeo import ogr
ds = ogr.Open(sys.argv[1])
layer = ds.GetLayer(0)
areas = {}
n = 0
for f in layer:
    n += 1
    g = f.GetGeometryRef()
    v = int(f.GetField(0))
    areas[v] = areas.get(v, 0.0) + g.GetArea()
print(n, " ".join("%d:%.6f" % (k, areas[k]) for k in sorted(areas)))
PY
}

same() {
  "$py" - "$1" "$2" <<'PY'
import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
ok = a[0] == b[0] and len(a) == len(b)
for x, y in zip(a[1:], b[1:]):
    kx, vx = x.split(":"); ky, vy = y.split(":")
    ok = ok and kx == ky and abs(float(vx) - float(vy)) <= 1e-9 * max(1.0, abs(float(vy)))
print("same" if ok else "DIFFERENT")
PY
}

for size in "${sizes[@]}"; do
  raster="$work/classes_${size}.tif"
  [ -s "$raster" ] || "$py" "$here/gen_raster.py" "$raster" "$size" "$size"
  mpx=$(( size * size / 1000000 ))
  rm -rf "$work/wh" "$work/ours_$size.gpkg" "$work/gdal_$size.gpkg"
  read -r g_s g_kb < <(measure "$py" /usr/bin/gdal_polygonize.py -q "$raster" -f GPKG \
    "$work/gdal_$size.gpkg" polygons DN)
  read -r o_s o_kb < <(measure "$geolake" --warehouse "$work/wh" --workers 2 polygonize \
    "$raster" -o "$work/ours_$size.gpkg")
  grep '^polygonize' "$work/last.out" || true
  s_gdal=$(summary "$work/gdal_$size.gpkg")
  s_ours=$(summary "$work/ours_$size.gpkg")
  verdict=$(same "$s_ours" "$s_gdal")
  echo "polygonize_${mpx}M,gdal_polygonize,${g_s},rss_kib=${g_kb}"
  echo "polygonize_${mpx}M,geolake,${o_s},rss_kib=${o_kb}"
  echo "polygonize_${mpx}M: geolake $(awk -v a="$g_s" -v b="$o_s" 'BEGIN{printf "%.2f", a/b}')x gdal_polygonize; polygons $(echo "$s_ours" | cut -d' ' -f1) vs $(echo "$s_gdal" | cut -d' ' -f1): $verdict"
done
