#!/usr/bin/env bash
# The demo `make demo` runs: what geolake can do today, on real data.
# Usage: scripts/demo.sh GEOLAKE_BIN DEMO_DIR
set -euo pipefail
bin="$1"; demo_dir="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
oracles="${GEOLAKE_ORACLES_DIR:-$here/build/oracles}"
mkdir -p "$demo_dir"

if [ ! -s "$data/ne_countries_10m.gpkg" ]; then
  bash "$here/scripts/fetch-data.sh" "$data"
fi

say() { printf '\n== %s\n' "$*"; }
say "geolake $("$bin" --version | cut -d' ' -f2): Iceberg ingest is not wired to the CLI yet (issues #4, #5);"
echo "   this demo profiles real datasets on every core and converts them to GeoParquet."

for name in ne_countries_10m us_counties; do
  say "geolake geoinfo $name.gpkg   (WKB, GEOS make-valid, PROJ equal-area, quadkey + Hilbert keys)"
  "$bin" geoinfo "$data/$name.gpkg" --metrics --metrics-json "$demo_dir/$name.geoinfo.json"
done

for name in geonames_cities500 us_counties; do
  say "geolake convert $name.gpkg -> $name.parquet   (GeoParquet 1.1, bbox covering, Hilbert order)"
  "$bin" convert "$data/$name.gpkg" "$demo_dir/$name.parquet" --metrics-json "$demo_dir/$name.convert.json"
done

say "geolake inspect us_counties.parquet (first lines)"
"$bin" inspect "$demo_dir/us_counties.parquet" | head -25
say "geolake cat geonames_cities500.parquet --limit 3"
"$bin" cat "$demo_dir/geonames_cities500.parquet" --limit 3 --columns name,country,population,geometry

if [ -f "$oracles/verify_parquet.mjs" ]; then
  say "readers no one here wrote (DuckDB, hyparquet, parquet-wasm) read both files with equal values"
  for name in geonames_cities500 us_counties; do
    node "$oracles/verify_parquet.mjs" "$demo_dir/$name.parquet" --strict-values --quiet >"$demo_dir/$name.verify.json" \
      && echo "   $name.parquet: ok" || { echo "   $name.parquet: PROBLEMS (see $demo_dir/$name.verify.json)"; exit 1; }
  done
fi
say "outputs and metrics JSON are in $demo_dir"
