#!/usr/bin/env bash
# Iceberg v3 geometry on real data (docs/table-layout.md "Format version 3"): a table made with
# `create --format-version 3` from us_counties.gpkg and ingested
# - has the `geometry(srid:4326)` column type (a v2 table made the same way keeps `binary`);
# - writes data files whose geometry column DuckDB types GEOMETRY and whose footer carries the
#   Parquet GEOMETRY logical type with GeospatialStatistics (verify_parquet.mjs);
# - is read by icebird and avsc (verify_iceberg.mjs), and every data file's manifest entry has
#   geometry lower/upper bound points equal to its bbox bounds (avsc's decode; a file of only
#   empty geometries has neither);
# - answers a bbox query with the rows of the v2 table while `--explain` shows files pruned by
#   the geometry bounds;
# - with a CRS that has no EPSG code, types the column geometry(projjson:geolake.crs.projjson).
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
needs_oracles
gl() { "$bin" --warehouse "$work/wh" "$@"; }

gl create geo.v3 --from "$data/us_counties.gpkg" --format-version 3 --partition quadkey:3 \
  >/dev/null 2>"$work/c3.err" || fail "create v3: $(head -c 300 "$work/c3.err")"
gl create geo.v2 --from "$data/us_counties.gpkg" --partition quadkey:3 >/dev/null ||
  fail "create v2"
type_of() { gl describe "$1" --json | node -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const f = (j.schema.fields || j.schema).find(f => f.name === "geometry");
  console.log(typeof f.type === "string" ? f.type : JSON.stringify(f.type));'; }
t3=$(type_of geo.v3); t2=$(type_of geo.v2)
[ "$t3" = "geometry(srid:4326)" ] && [ "$t2" = "binary" ] &&
  pass "v3 geometry column is $t3, v2 stays $t2" || fail "geometry types: v3 '$t3', v2 '$t2'"

for t in v3 v2; do
  gl ingest geo.$t "$data/us_counties.gpkg" --progress off >/dev/null 2>"$work/i$t.err" ||
    fail "ingest $t: $(head -c 300 "$work/i$t.err")"
done

# One data file through DuckDB, hyparquet and parquet-wasm.
f=$(find "$work/wh/geo/v3/data" -name '*.parquet' | head -1)
node "$oracles/verify_parquet.mjs" "$f" >"$work/vp.json" 2>&1 || true
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const s = JSON.stringify(r);
  const duck = r.readers?.duckdb ?? r.duckdb;
  const col = (duck?.columns ?? []).find(c => c.name === "geometry");
  if (!r.ok) { console.log("not ok: " + JSON.stringify(r.problems)); process.exit(1); }
  if (!col || !/GEOMETRY/i.test(col.type)) { console.log("duckdb type " + JSON.stringify(col)); process.exit(1); }
  if (!/geospatial_statistics|GEOMETRY/.test(s)) { console.log("no GEOMETRY logical type"); process.exit(1); }
  console.log(col.type);' "$work/vp.json" >"$work/vp.out" 2>&1 &&
  pass "verify_parquet: readers agree, DuckDB types geometry $(cat "$work/vp.out")" ||
  fail "verify_parquet: $(cat "$work/vp.out") $(head -c 300 "$work/vp.json")"
# hyparquet's footer decode: GEOMETRY(crs=srid:4326) on the column, a GeospatialStatistics bbox.
node -e '
  const s = JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")));
  const typed = /"logical_type":\{"type":"GEOMETRY","crs":"srid:4326"\}/.test(s);
  const stats = /"geospatial_statistics":\{"bbox":\{"xmin":-?[0-9.]+/.test(s);
  process.exit(typed && stats ? 0 : 1);' "$work/vp.json" &&
  pass "footer: GEOMETRY(srid:4326) logical type with GeospatialStatistics bbox" ||
  fail "no GEOMETRY logical type or geospatial statistics in the footer"

# The table through icebird and avsc; geometry bounds of every entry equal its bbox bounds.
if node "$oracles/verify_iceberg.mjs" "$work/wh/geo/v3" >"$work/ice.json" 2>"$work/ice.err" &&
   grep -q '"ok": true' "$work/ice.json"; then
  pass "icebird and avsc read the v3 table"
else
  fail "verify_iceberg: $(head -c 400 "$work/ice.json") $(head -c 300 "$work/ice.err")"
fi
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  let files = 0, ok = 0, bad = [];
  const walk = o => {
    if (Array.isArray(o)) return o.forEach(walk);
    if (!o || typeof o !== "object") return;
    if (Array.isArray(o.columns) && o.columns.some(c => c.name === "geometry")) {
      files++;
      const by = n => o.columns.find(c => c.name === n);
      const g = by("geometry"), x0 = by("bbox.xmin"), y0 = by("bbox.ymin");
      const x1 = by("bbox.xmax"), y1 = by("bbox.ymax");
      // A file of only empty geometries (us_counties has one) has neither kind of bound.
      if (x0?.lower === undefined ? g?.lower === undefined
          : g?.lower && g.lower.x === x0.lower && g.lower.y === y0.lower &&
            g.upper.x === x1.upper && g.upper.y === y1.upper) ok++;
      else bad.push(JSON.stringify({ g, x0: x0?.lower, x1: x1?.upper }));
      return;
    }
    Object.values(o).forEach(walk);
  };
  walk(r);
  console.log(`${ok} of ${files}`);
  if (files === 0 || ok !== files) { console.log(bad.slice(0, 2).join(" ")); process.exit(1); }
' "$work/ice.json" >"$work/bounds.out" 2>&1 &&
  pass "avsc: geometry bounds equal the bbox bounds in $(head -1 "$work/bounds.out") entries" ||
  fail "geometry bounds: $(head -c 400 "$work/bounds.out")"

# A box around Colorado: the same rows as the v2 table, files pruned by geometry bounds.
box="-109.06,36.99,-102.04,41.0"
rows() { gl query "$1" --bbox "$box" --format csv | tail -n +2 | sort | sha256sum | cut -d' ' -f1; }
[ "$(rows geo.v3)" = "$(rows geo.v2)" ] && pass "bbox query: v3 rows equal v2 rows" ||
  fail "bbox query rows differ between v3 and v2"
gl query geo.v3 --bbox "$box" --explain >"$work/explain.txt" 2>&1 || fail "query --explain"
line=$(grep 'pruned by geometry bounds' "$work/explain.txt" || true)
n=$(echo "$line" | sed -n 's/.*(\([0-9]*\) pruned by geometry bounds.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] && pass "--explain:$line" ||
  fail "--explain shows no file pruned by geometry bounds: $(cat "$work/explain.txt" | head -c 600)"

# `ingest --create --format-version 3` makes the same v3 table in one step: the same column
# type and the same rows as the table made by `create --format-version 3`.
gl ingest geo.v3i "$data/us_counties.gpkg" --create --format-version 3 --partition quadkey:3 \
  --progress off >/dev/null 2>"$work/i3.err" || fail "ingest --create v3: $(head -c 300 "$work/i3.err")"
ti=$(type_of geo.v3i)
[ "$ti" = "geometry(srid:4326)" ] && [ "$(rows geo.v3i)" = "$(rows geo.v3)" ] &&
  pass "ingest --create --format-version 3: $ti, bbox query rows equal create's" ||
  fail "ingest --create v3: type '$ti', rows $(rows geo.v3i) vs $(rows geo.v3)"
gl ingest geo.v4 "$data/us_counties.gpkg" --create --format-version 4 >/dev/null 2>"$work/i4.err"
rc=$?
[ "$rc" -ne 0 ] && grep -q 'format-version' "$work/i4.err" && ! gl describe geo.v4 >/dev/null 2>&1 &&
  pass "--format-version 4 refused (exit $rc), no table" ||
  fail "--format-version 4: exit $rc, $(head -c 300 "$work/i4.err")"

# A CRS without an EPSG code: the type refers to the table property holding its PROJJSON, the
# data files inline it in their GEOMETRY crs, and the readers still read them.
laea='+proj=laea +lat_0=40 +lon_0=-97 +ellps=WGS84 +units=m +type=crs'
gl create geo.laea --from "$data/us_counties.gpkg" --format-version 3 --partition none \
  --crs "$laea" --property geolake.hilbert.extent=-5e6,-5e6,5e6,5e6 >/dev/null 2>"$work/cl.err" ||
  fail "create laea: $(head -c 300 "$work/cl.err")"
gl ingest geo.laea "$data/us_counties.gpkg" --progress off >/dev/null 2>&1 || fail "ingest laea"
tl=$(type_of geo.laea)
fl=$(find "$work/wh/geo/laea/data" -name '*.parquet' | head -1)
if [ "$tl" = "geometry(projjson:geolake.crs.projjson)" ] &&
   gl describe geo.laea --json | grep -q '"geolake.crs.projjson"' &&
   node "$oracles/verify_parquet.mjs" "$fl" --quiet | grep -q '"ok": true' &&
   node "$oracles/verify_iceberg.mjs" "$work/wh/geo/laea" --quiet | grep -q '"ok": true'; then
  pass "a CRS without EPSG code: $tl, readers read the files and the table"
else
  fail "laea table: type '$tl'"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
