#!/usr/bin/env bash
# The demo `make demo` runs: real vector data ingested into Iceberg tables of GeoParquet files
# in a fresh local warehouse (SQLite catalog), described, queried and checked by readers no one
# here wrote.
# Usage: scripts/demo.sh GEOLAKE_BIN DEMO_DIR
set -euo pipefail
bin="$1"; demo_dir="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/build/data}"
oracles="${GEOLAKE_ORACLES_DIR:-$here/build/oracles}"
rm -rf "$demo_dir"
mkdir -p "$demo_dir"
wh="$demo_dir/warehouse"

if [ ! -s "$data/ne_countries_10m.gpkg" ] || [ ! -s "$data/us_counties.gpkg" ]; then
  bash "$here/scripts/fetch-data.sh" "$data"
fi

say() { printf '\n== %s\n' "$*"; }
gl() { "$bin" --warehouse "$wh" "$@"; }
has() { "$bin" "$1" --help >/dev/null 2>&1 && ! "$bin" "$1" --help 2>&1 | grep -q "not built yet"; }
say "geolake $("$bin" --version | cut -d' ' -f2): a fresh warehouse in $wh (SQLite catalog)"

say "geolake create demo.counties --from us_counties.gpkg --partition quadkey:4   (schema from the source, Web Mercator tile partitions, Hilbert sort)"
gl create demo.counties --from "$data/us_counties.gpkg" --partition quadkey:4

say "geolake ingest demo.counties us_counties.gpkg   (discover -> transform -> write -> commit)"
gl --metrics-json "$demo_dir/counties.metrics.json" ingest demo.counties "$data/us_counties.gpkg"

say "geolake ingest demo.countries ne_countries_10m.gpkg --create --on-invalid make-valid"
gl --metrics-json "$demo_dir/countries.metrics.json" ingest demo.countries \
  "$data/ne_countries_10m.gpkg" --create --on-invalid make-valid

say "the same ingest again: resume skips what is committed"
gl ingest demo.countries "$data/ne_countries_10m.gpkg"

say "geolake describe demo.counties"
gl describe demo.counties

say "run metrics of the counties ingest (--metrics-json)"
python3 - "$demo_dir/counties.metrics.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
for s in m["stages"]:
    print(f"   {s['name']:<10} rows in {s['rows_in']:>8}  out {s['rows_out']:>8}  bytes out {s['bytes_out']:>10}  wall {s['wall_ms']:>6} ms  busy {s['busy_ms']:>6} ms")
print("   counters:", ", ".join(f"{k}={v}" for k, v in m["counters"].items()))
print("   gauges:  ", ", ".join(f"{k}={v['value']} (peak {v['peak']})" for k, v in m["gauges"].items()))
EOF

if has query; then
  say "geolake query demo.counties --bbox -71.9,41.1,-71.1,42.1 --columns name,geoid --format csv   (Rhode Island)"
  gl query demo.counties --bbox -71.9,41.1,-71.1,42.1 --columns name,geoid --format csv |
    cut -c1-110 | head -12
else
  say "geolake files demo.counties (query is not built yet)"
  gl files demo.counties | head -8
  first=$(find "$wh" -name '*.parquet' | sort | head -n 1)
  say "geolake cat $(basename "$first") --limit 3"
  gl cat "$first" --limit 3
fi

if [ -f "$oracles/verify_iceberg.mjs" ]; then
  say "readers no one here wrote (icebird, avsc, DuckDB) load both tables"
  for t in counties countries; do
    node "$oracles/verify_iceberg.mjs" "$wh/demo/$t" --quiet >"$demo_dir/$t.verify.json" \
      && echo "   demo.$t: ok" || { echo "   demo.$t: PROBLEMS (see $demo_dir/$t.verify.json)"; exit 1; }
  done
fi
say "warehouse, run journals (.geolake/runs) and metrics JSON are in $demo_dir"
