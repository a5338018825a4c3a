#!/usr/bin/env bash
# The demo `make demo` runs: what geolake can do today, on real data.
# Usage: scripts/demo.sh GEOLAKE_BIN DEMO_DIR
set -euo pipefail
bin="$1"; demo_dir="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
mkdir -p "$demo_dir"

if [ ! -s "$data/ne_countries_10m.gpkg" ]; then
  bash "$here/scripts/fetch-data.sh" "$data"
fi

say() { printf '\n== %s\n' "$*"; }
say "geolake $("$bin" --version | cut -d' ' -f2): the ingest pipeline is not built yet (issue #5);"
echo "   this demo profiles real datasets with the geo module on every core instead."

for name in ne_countries_10m us_counties geonames_cities500; do
  say "geolake geoinfo $name.gpkg"
  "$bin" geoinfo "$data/$name.gpkg" --metrics --metrics-json "$demo_dir/$name.metrics.json"
done
say "metrics JSON written to $demo_dir/*.metrics.json"
