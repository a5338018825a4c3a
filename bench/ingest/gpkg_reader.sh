#!/usr/bin/env bash
# bench/ingest/gpkg_reader.sh: the sources half of an ingest (geolake_sources_bench: discover +
# UnitReaders, no transform or write) on the GeoPackage bench inputs, read through GDAL
# (--gdal-gpkg: GdalSource, OGR features) and natively (GpkgSource, SQLite), alternating in one
# run with 1 and 2 threads. Prints per input and mode the median wall and process CPU seconds
# of RUNS runs, the ratio GDAL/native (> 1 = native faster) and the load average before and
# after; stops if the two readers' checksums (feature indices + WKB bytes) differ.
# Usage: bench/ingest/gpkg_reader.sh RELEASE_BUILD_DIR [RUNS]
#   (the coverage input is the one bench/ingest/run.sh generates in RELEASE_BUILD_DIR/bench-data)
set -euo pipefail
build="$(cd "${1:?usage: bench/ingest/gpkg_reader.sh RELEASE_BUILD_DIR [RUNS]}" && pwd)"
runs="${2:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/../../build/data}"
bench="$build/bench/geolake_sources_bench"
inputs=("$data/ne_countries_10m.gpkg" "$data/geonames_cities500.gpkg"
        "$build/bench-data/coverage_1000x1000.gpkg")
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-28s %-7s %-6s %10s %10s\n' input threads reader wall_s cpu_s
for src in "${inputs[@]}"; do
  [ -f "$src" ] || { echo "gpkg_reader: missing $src (see bench/ingest/run.sh)" >&2; exit 1; }
  for threads in 1 2; do
    declare -A wall=() cpu=() sum=()
    for run in $(seq 1 "$runs"); do
      for mode in gdal native; do
        flag=(); [ "$mode" = gdal ] && flag=(--gdal-gpkg)
        IFS=, read -r disc secs rows units wkb checksum cpu_s < <("$bench" --threads "$threads" "${flag[@]}" "$src")
        wall[$mode]+="$(awk "BEGIN{print $disc + $secs}") "
        cpu[$mode]+="$cpu_s "
        if [ -n "${sum[$mode]:-}" ] && [ "${sum[$mode]}" != "$checksum" ]; then
          echo "gpkg_reader: $src: $mode checksum changed between runs" >&2; exit 1
        fi
        sum[$mode]=$checksum
      done
    done
    if [ "${sum[gdal]}" != "${sum[native]}" ]; then
      echo "gpkg_reader: $src: GDAL and native readers differ (${sum[gdal]} vs ${sum[native]})" >&2
      exit 1
    fi
    for mode in gdal native; do
      printf '%-28s %-7s %-6s %10s %10s\n' "$(basename "$src")" "$threads" "$mode" \
        "$(tr ' ' '\n' <<<"${wall[$mode]}" | grep . | median)" \
        "$(tr ' ' '\n' <<<"${cpu[$mode]}" | grep . | median)"
    done
    g_cpu=$(tr ' ' '\n' <<<"${cpu[gdal]}" | grep . | median)
    n_cpu=$(tr ' ' '\n' <<<"${cpu[native]}" | grep . | median)
    g_wall=$(tr ' ' '\n' <<<"${wall[gdal]}" | grep . | median)
    n_wall=$(tr ' ' '\n' <<<"${wall[native]}" | grep . | median)
    echo "  gdal/native: cpu $(awk "BEGIN{printf \"%.2f\", $g_cpu / $n_cpu}")x, wall $(awk "BEGIN{printf \"%.2f\", $g_wall / $n_wall}")x"
    unset wall cpu sum
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg) (medians of $runs runs; cpu = user + system of the process, including discover and GDAL's start-up)"
