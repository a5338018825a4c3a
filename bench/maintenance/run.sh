#!/usr/bin/env bash
# bench/maintenance: the same small data files compacted by geolake (`compact --strategy
# hilbert`, 2 workers, --memory 256MiB) and by DuckDB (COPY ... ORDER BY geo_hilbert, 2
# threads), in one run, 3 alternating runs each. The table: GeoNames cities500 (the largest
# point set in build/data) cut into PARTS parts and ingested one part per commit into an
# unpartitioned table, so PARTS small files of one partition. Prints `name,run,seconds,peak_rss_kib`
# lines, then the medians, the throughput ratio DuckDB/geolake (target >= 2) and the peak RSS
# ratio geolake/DuckDB (target <= 0.25; RSS of the whole process: node's own ~50 MB counts for
# DuckDB). Rows out are checked equal to rows in for both.
# Usage: bench/maintenance/run.sh RELEASE_BUILD_DIR [PARTS]
set -euo pipefail
build="$1"
parts="${2:-100}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/../../build/data}"
export GEOLAKE_ORACLES_DIR="${GEOLAKE_ORACLES_DIR:-$here/../../build/oracles}"
geolake="$build/src/geolake/cli/geolake"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
src="$data/geonames_cities500.gpkg"
[ -s "$src" ] || { echo "bench/maintenance: $src not found (run scripts/fetch-data.sh)"; exit 1; }

echo "# $(uptime)"
# Built at $work/wh (table locations are absolute paths) and kept as a copy, restored there
# before each run.
"$geolake" --warehouse "$work/wh" --progress off create geo.t --from "$src" --partition none >/dev/null
for ((k = 0; k < parts; k++)); do
  ogr2ogr -f GPKG "$work/part.gpkg" "$src" -where "fid % $parts = $k" 2>/dev/null
  mv "$work/part.gpkg" "$work/part$k.gpkg"
  "$geolake" --warehouse "$work/wh" --progress off ingest geo.t "$work/part$k.gpkg" >/dev/null
  rm -f "$work/part$k.gpkg"
done
cp -a "$work/wh" "$work/pristine"
rows=$("$geolake" --warehouse "$work/wh" describe geo.t --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
mapfile -t files < <("$geolake" --warehouse "$work/wh" files geo.t --json |
  python3 -c 'import json,sys; print("\n".join(f["path"] for f in json.load(sys.stdin)["files"]))')
bytes=$(du -cb "${files[@]}" | tail -n 1 | cut -f1)
echo "# $rows rows in ${#files[@]} files, $bytes bytes"
echo "name,run,seconds,peak_rss_kib"

declare -a g_s d_s g_rss d_rss
for run in 1 2 3; do
  rm -rf "$work/wh"
  cp -a "$work/pristine" "$work/wh"
  /usr/bin/time -f '%e %M' -o "$work/time" "$geolake" --warehouse "$work/wh" --progress off \
    --workers 2 --memory 256MiB compact geo.t --strategy hilbert --min-input-files 2 >"$work/g.out"
  read -r s rss <"$work/time"
  out_rows=$("$geolake" --warehouse "$work/wh" describe geo.t --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
  [ "$out_rows" = "$rows" ] || { echo "geolake: $out_rows rows out of $rows"; exit 1; }
  echo "geolake_compact_hilbert,$run,$s,$rss"; g_s+=("$s"); g_rss+=("$rss")
  rm -f "$work/duck.parquet"
  /usr/bin/time -f '%e %M' -o "$work/time" node "$here/duckdb_compact.mjs" "$work/duck.parquet" \
    "${files[@]}" >"$work/d.out"
  read -r s rss <"$work/time"
  n=$(cut -d, -f2 "$work/d.out")
  [ "$n" = "$rows" ] || { echo "duckdb: $n rows out of $rows"; exit 1; }
  echo "duckdb_copy_order_by,$run,$s,$rss"; d_s+=("$s"); d_rss+=("$rss")
done
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
gs=$(median "${g_s[@]}"); ds=$(median "${d_s[@]}"); gr=$(median "${g_rss[@]}"); dr=$(median "${d_rss[@]}")
python3 - "$gs" "$ds" "$gr" "$dr" "$rows" <<'PY'
import sys
gs, ds, gr, dr, rows = map(float, sys.argv[1:])
print(f"median: geolake {gs:.2f} s, {gr/1024:.0f} MiB peak; DuckDB {ds:.2f} s, {dr/1024:.0f} MiB peak ({rows:.0f} rows)")
print(f"throughput ratio DuckDB/geolake: {ds/gs:.2f} (target >= 2)")
print(f"peak RSS ratio geolake/DuckDB: {gr/dr:.2f} (target <= 0.25)")
PY
