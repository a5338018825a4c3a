#!/usr/bin/env bash
# bench/ingest/default_partition.sh: what the partition `ingest --create` chooses from the input
# size (docs/table-layout.md "The default partition") changes in files written and ingest time,
# against the old fixed default quadkey:4, with the same geolake binary in the same run
# (variants alternate within each repetition, so load drifts hit both alike).
# Inputs as bench/ingest/run.sh: ne_countries_10m.gpkg, geonames_cities500.gpkg and the 1M
# coverage (RELEASE_BUILD_DIR/bench-data/coverage_1000x1000.gpkg, made by run.sh, or
# GEOLAKE_BENCH_COVERAGE=FILE). Each variant runs --workers 1 and 2.
# Prints a CSV line per run (wall and user+system CPU seconds from /usr/bin/time, data files,
# median file bytes, table data bytes, the partition, the 1-minute load average), then per
# input/variant/workers the medians and the ratios quadkey:4 / default (> 1 = the default is
# cheaper). Usage: bench/ingest/default_partition.sh RELEASE_BUILD_DIR [RUNS] [INPUT_NAME...]
set -euo pipefail
build="$(cd "${1:?usage: bench/ingest/default_partition.sh RELEASE_BUILD_DIR [RUNS] [INPUT...]}" && pwd)"
runs="${2:-3}"
shift $(( $# >= 2 ? 2 : 1 ))
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${GEOLAKE_DATA_DIR:-$here/../../build/data}"
geolake="$build/src/geolake/cli/geolake"
declare -A input=(
  [ne_countries_10m]="$data/ne_countries_10m.gpkg"
  [geonames_cities500]="$data/geonames_cities500.gpkg"
  [coverage_1m]="${GEOLAKE_BENCH_COVERAGE:-$build/bench-data/coverage_1000x1000.gpkg}"
)
names=("$@"); [ ${#names[@]} -eq 0 ] && names=(ne_countries_10m geonames_cities500 coverage_1m)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
echo "# $(uptime)" >&2
echo "input,variant,workers,run,wall_s,cpu_s,files,median_file_bytes,table_data_bytes,partition,load1" |
  tee "$work/all.csv"
for name in "${names[@]}"; do
  src="${input[$name]}"
  [ -f "$src" ] || { echo "missing input $src (run bench/ingest/run.sh or scripts/fetch-data.sh)" >&2; exit 1; }
  for run in $(seq 1 "$runs"); do
    for workers in 1 2; do
      for variant in quadkey4 default; do
        extra=(); [ "$variant" = quadkey4 ] && extra=(--partition quadkey:4)
        rm -rf "$work/wh"
        /usr/bin/time -f "%e %U %S" -o "$work/time" "$geolake" --warehouse "$work/wh" \
          --workers "$workers" --progress off ingest "bench.$name" "$src" --create "${extra[@]}" \
          >"$work/out" 2>&1 || { echo "ingest failed: $variant $name" >&2; tail -3 "$work/out" >&2; exit 1; }
        read -r wall user sys <"$work/time"
        mapfile -t sizes < <(find "$work/wh/bench/$name/data" -name '*.parquet' -printf '%s\n' | sort -n)
        total=$(printf '%s\n' "${sizes[@]}" | awk '{s += $1} END {print s}')
        part=$("$geolake" --warehouse "$work/wh" describe "bench.$name" --json |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["properties"]["geolake.partition"])')
        echo "$name,$variant,$workers,$run,$wall,$(awk "BEGIN{printf \"%.2f\", $user + $sys}"),${#sizes[@]},${sizes[$((${#sizes[@]} / 2))]},$total,$part,$(cut -d' ' -f1 /proc/loadavg)" |
          tee -a "$work/all.csv"
      done
    done
  done
done
echo "# $(uptime)" >&2
python3 - "$work/all.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda key, **k: statistics.median(float(r[key]) for r in rows if all(r[a] == str(b) for a, b in k.items()))
print("\nmedians; ratio = quadkey:4 / default (> 1: the default is cheaper)")
for name in dict.fromkeys(r["input"] for r in rows):
    part = next(r["partition"] for r in rows if r["input"] == name and r["variant"] == "default")
    f4, fd = med("files", input=name, variant="quadkey4"), med("files", input=name, variant="default")
    print(f"{name}: default partition {part}; files {f4:.0f} -> {fd:.0f}; median file bytes "
          f"{med('median_file_bytes', input=name, variant='quadkey4'):.0f} -> "
          f"{med('median_file_bytes', input=name, variant='default'):.0f}")
    for w in (1, 2):
        q = {k: med(k, input=name, variant="quadkey4", workers=w) for k in ("wall_s", "cpu_s")}
        d = {k: med(k, input=name, variant="default", workers=w) for k in ("wall_s", "cpu_s")}
        print(f"  workers {w}: wall {q['wall_s']:.2f} -> {d['wall_s']:.2f} s ({q['wall_s'] / d['wall_s']:.2f}x), "
              f"cpu {q['cpu_s']:.2f} -> {d['cpu_s']:.2f} s ({q['cpu_s'] / d['cpu_s']:.2f}x)")
PY
