#!/usr/bin/env bash
# bench/ingest: load real and generated inputs with geolake and convert them with ogr2ogr, in
# one run, and print features/s and ratios.
#   inputs: ne_countries_10m.gpkg (258 large polygons), geonames_cities500.gpkg (~200k points,
#           the largest point set in build/data), and a generated coverage of 1,000,000 jittered
#           quadrilaterals (make_coverage, fixed seed, cached in RELEASE_BUILD_DIR/bench-data).
#   tools:  ogr2ogr -f GPKG, ogr2ogr -f FlatGeobuf (one thread, what a user would run), and
#           ogr2ogr -f FlatGeobuf -makevalid (the validity work geolake does by default);
#           geolake_sources_bench (DiscoverSources + UnitReaders, 1 and 2 threads: the sources
#           half of an ingest, with no transform/write);
#           geolake ingest --workers 1 and --workers 2 into a fresh warehouse (when the
#           command is built; otherwise reported as missing);
#           the floor: geolake ingest and ogr2ogr -> GPKG of the input's first feature alone
#           (what any run costs: process start, PROJ, catalog, table, commit), with the bounds
#           it sets: the time 3x ogr2ogr allows, and the workers2/workers1 ratio if everything
#           but the floor ran twice as fast.
# Prints `name,run,seconds` CSV lines (and on stderr, per ingest run, the busy seconds per stage,
# the number of threads that transformed, and the load average), then per input: features/s for
# each tool, the ratios geolake/ogr2ogr (> 1 = geolake faster) and workers2/workers1, from the
# best run of each and as the median of each run's own ratio.
# Usage: bench/ingest/run.sh RELEASE_BUILD_DIR [RUNS] [INPUT_NAME...]
#   (INPUT_NAME: ne_countries_10m, geonames_cities500, coverage_1m [default: these three],
#    geonames_cities500_geojsonl, and issue 22's coverage_1m_fgb, coverage_1m_geojsonl,
#    coverage_4m_fgb, points_1m_fgb, points_1m_geojsonl, for which ingest also runs with
#    --on-invalid keep)
set -euo pipefail
build="$(cd "${1:?usage: bench/ingest/run.sh RELEASE_BUILD_DIR [RUNS] [INPUT...]}" && pwd)"
runs="${2:-1}"
shift $(( $# >= 2 ? 2 : 1 ))
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/../../build/data}"
geolake="$build/src/geolake/cli/geolake"
sources_bench="$build/bench/geolake_sources_bench"
make_coverage="$build/bench/geolake_make_coverage"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

cache="$build/bench-data"; mkdir -p "$cache"
coverage="$cache/coverage_1000x1000.gpkg"
coverage4="$cache/coverage_2000x2000.gpkg"
points="$cache/points_1m.gpkg"
# make_cached OUT ARGS...: run make_coverage once into OUT (fixed seed), kept in the cache.
make_cached() {
  local out="$1"; shift
  [ -f "$out" ] && return 0
  rm -f "$out.tmp.gpkg"
  "$make_coverage" "$out.tmp.gpkg" "$@" 42
  mv "$out.tmp.gpkg" "$out"
}
# converted BASE EXT: BASE (a cached GeoPackage) as FlatGeobuf (ogr2ogr's default, with the
# packed R-tree) or GeoJSONSeq, converted once by ogr2ogr and cached.
converted() {
  local out="${1%.gpkg}.$2"
  [ -f "$out" ] && return 0
  rm -f "$out.tmp.$2"
  ogr2ogr -f "$([ "$2" = fgb ] && echo FlatGeobuf || echo GeoJSONSeq)" "$out.tmp.$2" "$1"
  mv "$out.tmp.$2" "$out"
}
# ensure NAME: make the generated inputs NAME needs (only those: the 4M coverage alone takes
# minutes and about 1.5 GB of cache).
ensure() {
  [ -f "${input[$1]}" ] && return 0
  case "$1" in
    coverage_1m) make_cached "$coverage" 1000 ;;
    coverage_1m_fgb | coverage_1m_geojsonl) make_cached "$coverage" 1000; converted "$coverage" "${1##*_}" ;;
    coverage_4m_fgb) make_cached "$coverage4" 2000; converted "$coverage4" fgb ;;
    points_1m_fgb | points_1m_geojsonl)
      make_cached "$points" --points 1000000; converted "$points" "${1##*_}" ;;
  esac
}

declare -A input=(
  [ne_countries_10m]="$data/ne_countries_10m.gpkg"
  [geonames_cities500]="$data/geonames_cities500.gpkg"
  [coverage_1m]="$coverage"
  # Not in the default set: the same cities as GeoJSON text sequences, to see what GDAL's
  # GeoJSONSeq reader costs (run.sh BUILD 1 geonames_cities500_geojsonl).
  [geonames_cities500_geojsonl]="$data/geonames_cities500.geojsonl"
  [coverage_1m_fgb]="${coverage%.gpkg}.fgb"
  [coverage_1m_geojsonl]="${coverage%.gpkg}.geojsonl"
  # 4,000,000 quadrilaterals as FlatGeobuf: a run long enough (about 5 s on one worker) that
  # the fixed part of an ingest no longer bounds workers2/workers1.
  [coverage_4m_fgb]="${coverage4%.gpkg}.fgb"
  [points_1m_fgb]="${points%.gpkg}.fgb"
  [points_1m_geojsonl]="${points%.gpkg}.geojsonl"
)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then names=(ne_countries_10m geonames_cities500 coverage_1m); fi
for name in "${names[@]}"; do
  [ -n "${input[$name]+set}" ] || { echo "bench/ingest: unknown input $name" >&2; exit 2; }
  ensure "$name"
done

have_ingest=0
if [ -x "$geolake" ] && "$geolake" ingest --help 2>&1 | grep -q -- '--create'; then have_ingest=1; fi

declare -A best cpu features all
now() { date +%s.%N; }
record() {  # name seconds [cpu_seconds]: print the CSV line, keep the best of the runs
  echo "$1,$run,$2"
  all[$1,$run]=$2
  if [ -z "${best[$1]:-}" ] || awk "BEGIN{exit !($2 < ${best[$1]})}"; then
    best[$1]=$2; cpu[$1]="${3:-$2}"
  fi
}
timed() {  # name command...: time one command (its output goes to $work/last.log)
  local name="$1"; shift
  # Every tool starts with the input in the page cache: this machine's cache does not keep a
  # few hundred MiB for long, and a tool that waits for the disk measures the disk.
  cat "$src" > /dev/null
  if ! /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" >"$work/last.log" 2>&1; then
    echo "bench/ingest: $name failed:" >&2; tail -5 "$work/last.log" >&2; return 1
  fi
  local wall user sys
  read -r wall user sys < "$work/time.txt"
  record "$name" "$wall" "$(awk "BEGIN{printf \"%.2f\", $user + $sys}")"
}

echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
echo "name,run,seconds"
for run in $(seq 1 "$runs"); do
  for name in "${names[@]}"; do
    src="${input[$name]}"
    [ -f "$src" ] || { echo "bench/ingest: missing input $src (run scripts/fetch-data.sh)" >&2; exit 1; }
    timed "$name.ogr2ogr_gpkg" ogr2ogr -f GPKG "$work/out.gpkg" "$src"; rm -f "$work/out.gpkg"
    timed "$name.ogr2ogr_fgb" ogr2ogr -f FlatGeobuf "$work/out.fgb" "$src"; rm -f "$work/out.fgb"
    # The same validity work as geolake's default --on-invalid make-valid: OGR repairs every
    # geometry with GEOS (PROMOTE_TO_MULTI, or FlatGeobuf refuses the repaired types). Not the
    # issue's peer (plain ogr2ogr), but the fair one for polygon inputs.
    timed "$name.ogr2ogr_fgb_makevalid" ogr2ogr -f FlatGeobuf -makevalid -nlt PROMOTE_TO_MULTI \
      "$work/out.fgb" "$src"; rm -f "$work/out.fgb"
    sums=()
    for threads in 1 2; do
      cat "$src" > /dev/null
      IFS=, read -r disc secs rows units wkb sum cpu < <("$sources_bench" --threads "$threads" "$src")
      record "$name.sources_read_threads$threads" "$(awk "BEGIN{printf \"%.4f\", $disc + $secs}")" "$cpu"
      features[$name]=$rows; sums+=("$sum")
      echo "# $name: $threads thread(s): $rows features, $units units, $wkb WKB bytes, discover ${disc}s, read ${secs}s, process cpu ${cpu}s" >&2
    done
    if [ ${#sums[@]} -eq 2 ] && [ "${sums[0]}" != "${sums[1]}" ]; then
      echo "bench/ingest: $name: 1 and 2 threads read different features (${sums[*]})" >&2; exit 1
    fi
    if [ "$have_ingest" = 1 ]; then
      # Keep mode (no validity work: the peer is plain ogr2ogr) for the issue-22 inputs, then the
      # default make-valid (whose peer is ogr2ogr -makevalid).
      modes=("")
      case "$name" in *_fgb|*_geojsonl) modes=(keep "") ;; esac
      for mode in "${modes[@]}"; do
      for workers in 1 2; do
        rm -rf "$work/wh"
        suffix=""; extra=()
        if [ -n "$mode" ]; then suffix="_$mode"; extra=(--on-invalid "$mode"); fi
        timed "$name.geolake_ingest${suffix}_workers$workers" \
          "$geolake" --warehouse "$work/wh" --workers "$workers" --progress off \
          --metrics-json "$work/metrics.json" ingest "bench.$name" "$src" --create "${extra[@]}"
        # Where the time went: busy seconds per stage (summed over threads), how many threads
        # transformed (2 with 2 workers also for a one-unit source), and the load right now.
        python3 - "$work/metrics.json" "$name" "$workers" "$(cut -d' ' -f1 /proc/loadavg)" >&2 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
busy = " ".join(f"{s['name']} {s['busy_ms'] / 1000:.2f}s" for s in m["stages"])
print(f"# {sys.argv[2]}: ingest --workers {sys.argv[3]}: {m['elapsed_ms'] / 1000:.2f}s; busy {busy}; "
      f"transform_threads {m['counters'].get('transform_threads', '?')}; load {sys.argv[4]}")
PY
      done
      done
      rm -rf "$work/wh"
      # The floor: the same ingest (and ogr2ogr -> GPKG) of the input's first feature alone, in
      # the input's format. What an ingest costs whatever the input: starting the process,
      # PROJ, the catalog, creating the table, the commit.
      one="$work/one.${src##*.}"
      rm -f "$one"; ogr2ogr -limit 1 "$one" "$src"
      src="$one"
      timed "$name.floor_ogr2ogr_gpkg" ogr2ogr -f GPKG "$work/out.gpkg" "$one"; rm -f "$work/out.gpkg"
      rm -rf "$work/wh"
      timed "$name.floor_geolake_ingest" "$geolake" --warehouse "$work/wh" --workers 2 \
        --progress off ingest "bench.$name" "$one" --create
      rm -rf "$work/wh" "$one"
    fi
  done
done

rate() { awk "BEGIN{printf \"%.0f\", $1 / $2}"; }
# Median over the runs of (a's seconds / b's seconds) in the same run: on a machine whose speed
# drifts (this VM's does, by a third within minutes), best-of-N ratios pair a lucky run of one
# tool with an ordinary run of the other; runs close in time are compared instead.
paired() {
  for r in $(seq 1 "$runs"); do echo "${all[$1,$r]} ${all[$2,$r]}"; done | python3 -c '
import statistics, sys
print(f"{statistics.median(float(a) / float(b) for a, b in (l.split() for l in sys.stdin)):.2f}")'
}
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
line() {  # label key [ogr2ogr comparison]: features/s by wall time and by CPU time
  local n="$1" label="$2" key="$3"
  local w="${best[$key]}" c="${cpu[$key]}"
  local g="${best[$name.ogr2ogr_gpkg]}" f="${best[$name.ogr2ogr_fgb]}"
  local m="${best[$name.ogr2ogr_fgb_makevalid]}"
  printf '  %-26s %9s features/s wall (%ss), %9s features/s cpu (%ss)' "$label" \
    "$(rate "$n" "$w")" "$w" "$(rate "$n" "$c")" "$c"
  if [ "${4:-}" = cmp ]; then
    printf '; vs ogr2ogr wall: GPKG %sx FGB %sx FGB-makevalid %sx; cpu: GPKG %sx FGB %sx' \
      "$(ratio "$g" "$w")" "$(ratio "$f" "$w")" "$(ratio "$m" "$w")" \
      "$(ratio "${cpu[$name.ogr2ogr_gpkg]}" "$c")" "$(ratio "${cpu[$name.ogr2ogr_fgb]}" "$c")"
  fi
  echo
}
echo
echo "features/s (best of $runs run(s)); ratios > 1 mean geolake is faster. cpu = user + system"
echo "seconds of the process: what each tool costs, apart from waiting for a core on a loaded"
echo "machine (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)."
for name in "${names[@]}"; do
  n="${features[$name]}"
  echo "$name ($n features):"
  line "$n" "ogr2ogr -> GPKG" "$name.ogr2ogr_gpkg"
  line "$n" "ogr2ogr -> FlatGeobuf" "$name.ogr2ogr_fgb"
  line "$n" "ogr2ogr -makevalid -> FGB" "$name.ogr2ogr_fgb_makevalid"
  if [ -n "${best[$name.sources_read_threads1]:-}" ]; then
    line "$n" "sources read, 1 thread" "$name.sources_read_threads1" cmp
    line "$n" "sources read, 2 threads" "$name.sources_read_threads2" cmp
    echo "  sources read threads2/threads1 (wall): $(ratio "${best[$name.sources_read_threads1]}" "${best[$name.sources_read_threads2]}")x"
  fi
  if [ "$have_ingest" = 1 ] && [ -n "${best[$name.geolake_ingest_keep_workers1]:-}" ]; then
    line "$n" "geolake ingest keep, 1 worker" "$name.geolake_ingest_keep_workers1" cmp
    line "$n" "geolake ingest keep, 2 workers" "$name.geolake_ingest_keep_workers2" cmp
    echo "  issue 22, medians of the runs' own ratios (wall; targets: workers2/workers1 >= 1.7, >= 3x):" \
      "keep workers2/workers1 $(paired "$name.geolake_ingest_keep_workers1" "$name.geolake_ingest_keep_workers2")x," \
      "make-valid workers2/workers1 $(paired "$name.geolake_ingest_workers1" "$name.geolake_ingest_workers2")x;" \
      "keep, 2 workers vs ogr2ogr -> GPKG $(paired "$name.ogr2ogr_gpkg" "$name.geolake_ingest_keep_workers2")x," \
      "-> FGB $(paired "$name.ogr2ogr_fgb" "$name.geolake_ingest_keep_workers2")x;" \
      "make-valid, 2 workers vs ogr2ogr -makevalid $(paired "$name.ogr2ogr_fgb_makevalid" "$name.geolake_ingest_workers2")x"
  fi
  if [ "$have_ingest" = 1 ]; then
    line "$n" "geolake ingest, 1 worker" "$name.geolake_ingest_workers1" cmp
    line "$n" "geolake ingest, 2 workers" "$name.geolake_ingest_workers2" cmp
    echo "  geolake ingest workers2/workers1 (wall): $(ratio "${best[$name.geolake_ingest_workers1]}" "${best[$name.geolake_ingest_workers2]}")x"
    echo "  median of the runs' own ratios (wall): workers2/workers1 $(paired "$name.geolake_ingest_workers1" "$name.geolake_ingest_workers2")x;" \
      "2 workers vs ogr2ogr -> GPKG $(paired "$name.ogr2ogr_gpkg" "$name.geolake_ingest_workers2")x," \
      "-> FGB $(paired "$name.ogr2ogr_fgb" "$name.geolake_ingest_workers2")x," \
      "-> FGB -makevalid $(paired "$name.ogr2ogr_fgb_makevalid" "$name.geolake_ingest_workers2")x"
    floor="${best[$name.floor_geolake_ingest]}" w1="${best[$name.geolake_ingest_workers1]}"
    echo "  floor, the first feature alone: geolake ingest ${floor}s, ogr2ogr -> GPKG ${best[$name.floor_ogr2ogr_gpkg]}s;" \
      "3x ogr2ogr -> GPKG here means $(awk "BEGIN{printf \"%.3f\", ${best[$name.ogr2ogr_gpkg]} / 3}")s," \
      "3x ogr2ogr -> FGB $(awk "BEGIN{printf \"%.3f\", ${best[$name.ogr2ogr_fgb]} / 3}")s;" \
      "workers2/workers1 if all but the floor ran 2x: $(awk "BEGIN{printf \"%.2f\", $w1 / ($floor + ($w1 - $floor) / 2)}")x"
  else
    echo "  geolake ingest: not built in $build (only the sources half is measured)"
  fi
done
