#!/usr/bin/env bash
# reproject on real data: the 3,231 US counties (EPSG:4326) into NAD83 / Conus Albers
# (EPSG:5070). Every vertex of every county must equal GDAL's own transform of the same
# coordinates (ogr2ogr -t_srs EPSG:5070, through PROJ) within 1e-6 m, with the same structure;
# a table output (partitioned quadkey:3, so geo_cell, bbox and Hilbert keys are all in play)
# must say EPSG:5070 and answer a --bbox query in EPSG:5070 metres with exactly the counties
# whose box, computed from ogr2ogr's output, overlaps it.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
command -v ogr2ogr >/dev/null || skip oracles "ogr2ogr not found (run scripts/install-deps.sh)"
command -v python3 >/dev/null || skip oracles "python3 not found"

src="$data/us_counties.gpkg"
wh=(--warehouse "$work/wh" --progress off)

# 1. File output vs ogr2ogr, vertex by vertex.
if "$bin" "${wh[@]}" reproject "$src" --to EPSG:5070 -o "$work/geolake.csv" >"$work/run.txt" 2>&1; then
  pass "reproject us_counties -> EPSG:5070: $(head -1 "$work/run.txt")"
else
  fail "reproject us_counties: $(cat "$work/run.txt")"
fi
ogr2ogr -f CSV "$work/gdal.csv" "$src" -t_srs EPSG:5070 -lco GEOMETRY=AS_WKT 2>"$work/ogr.err" ||
  fail "ogr2ogr: $(cat "$work/ogr.err")"

# compare.py GEOLAKE_CSV GDAL_CSV: per geoid, the same WKT with the numbers taken out, and every
# number within 1e-6 (metres). Prints "features vertices max_diff" or the first difference.
cat >"$work/compare.py" <<'PY'
import csv, re, sys
csv.field_size_limit(1 << 30)
num = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
def rows(path, geom):
    with open(path, newline="") as f:
        return {r["geoid"]: r[geom] for r in csv.DictReader(f)}
ours, gdal = rows(sys.argv[1], "geometry"), rows(sys.argv[2], "WKT")
if set(ours) != set(gdal):
    sys.exit(f"geoids differ: {len(ours)} vs {len(gdal)}")
worst, vertices = 0.0, 0
for geoid, a in ours.items():
    b = gdal[geoid]
    # Same shape: type and nesting (OGR writes MULTIPOLYGON (((, ours the same).
    if num.sub("N", a).replace(" ", "") != num.sub("N", b).replace(" ", ""):
        sys.exit(f"{geoid}: structure differs: {a[:80]} vs {b[:80]}")
    xa, xb = [float(v) for v in num.findall(a)], [float(v) for v in num.findall(b)]
    for p, q in zip(xa, xb):
        worst = max(worst, abs(p - q))
    vertices += len(xa) // 2
    if worst > 1e-6:
        sys.exit(f"{geoid}: a coordinate differs by {worst} m")
print(len(ours), vertices, worst)
PY
if out="$(python3 "$work/compare.py" "$work/geolake.csv" "$work/gdal.csv")"; then
  read -r n v worst <<<"$out"
  pass "all $n counties, $v vertices equal ogr2ogr's EPSG:5070 within 1e-6 m (max difference $worst m)"
else
  fail "vertices differ from ogr2ogr: $out"
fi

# 2. Table output in EPSG:5070 and a --bbox query in metres (around Denver, -105 39.7).
"$bin" "${wh[@]}" reproject "$src" --to EPSG:5070 -o geo.counties_5070 --partition quadkey:3 \
  >"$work/table.txt" 2>&1 || fail "reproject into a table: $(cat "$work/table.txt")"
crs="$("$bin" "${wh[@]}" describe geo.counties_5070 | sed -n 's/^  geolake.crs = //p')"
[ "$crs" = "EPSG:5070" ] && pass "table geolake.crs = $crs" || fail "table CRS '$crs'"
read -r cx cy _ <<<"$(echo "-105 39.7" | gdaltransform -s_srs EPSG:4326 -t_srs EPSG:5070)"
box="$(awk -v x="$cx" -v y="$cy" 'BEGIN { printf "%.3f,%.3f,%.3f,%.3f", x - 60000, y - 40000, x + 60000, y + 40000 }')"
"$bin" "${wh[@]}" query geo.counties_5070 --bbox "$box" --columns geoid --format csv \
  | tail -n +2 | cut -d, -f1 | sort >"$work/got.txt"
python3 - "$work/gdal.csv" "$box" >"$work/want.txt" <<'PY'
import csv, re, sys
csv.field_size_limit(1 << 30)
num = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
x1, y1, x2, y2 = map(float, sys.argv[2].split(","))
out = []
for r in csv.DictReader(open(sys.argv[1], newline="")):
    v = [float(t) for t in num.findall(r["WKT"])]
    if not v:
        continue
    xs, ys = v[0::2], v[1::2]
    if min(xs) <= x2 and max(xs) >= x1 and min(ys) <= y2 and max(ys) >= y1:
        out.append(r["geoid"])
print("\n".join(sorted(out)))
PY
if [ -s "$work/want.txt" ] && cmp -s "$work/got.txt" "$work/want.txt"; then
  pass "--bbox $box (EPSG:5070 m) returns the $(wc -l <"$work/want.txt") counties ogr2ogr's boxes overlap: $(paste -sd' ' "$work/got.txt")"
else
  fail "--bbox $box: got [$(paste -sd' ' "$work/got.txt")], want [$(paste -sd' ' "$work/want.txt")]"
fi
# The same place in degrees is outside every county's EPSG:5070 box.
n="$("$bin" "${wh[@]}" query geo.counties_5070 --bbox -105.1,39.6,-104.9,39.8 --format csv | tail -n +2 | wc -l)"
[ "$n" = 0 ] && pass "a box in degrees finds nothing in the EPSG:5070 table" || fail "degree box found $n rows"

echo "reproject_real_data: $passed passed, $failed failed"
[ "$failed" = 0 ]
