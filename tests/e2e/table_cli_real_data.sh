#!/usr/bin/env bash
# Table commands on real data: us_states and us_counties (GeoPackage) are converted to
# GeoParquet, tables are made with `create --from SOURCE --partition none` and filled with
# `append` (two files in one snapshot for us_states), and then:
# - icebird and avsc (verify_iceberg.mjs) read every table: manifests, counts, sizes, bounds
#   and rows agree with each other and with DuckDB over the data files;
# - `files --json` and `describe --json` record counts equal ogrinfo's feature counts, and
#   describe's bbox equals ogrinfo's layer extent;
# - the same for us_states on a PostgreSQL catalog when scripts/pg-test-server.sh can start a
#   server.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg us_counties.gpkg
needs_oracles
src_dir="$(cd "$(dirname "$0")/../.." && pwd)"
chmod o+x "$work"  # the PostgreSQL server runs as another user and needs to reach $work/pg
pg_dir=""
cleanup() {
  if [ -n "$pg_dir" ]; then "$src_dir/scripts/pg-test-server.sh" stop "$pg_dir" >/dev/null 2>&1; fi
  rm -rf "$work"
}
trap cleanup EXIT

# json FILE EXPR: evaluate a JavaScript expression over the parsed JSON object `j`.
json() { node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(eval(process.argv[2]))' "$1" "$2"; }

# check_table WAREHOUSE CATALOG_ARGS TABLE SOURCE COPIES: files/describe counts against ogrinfo
# (times COPIES), describe's bbox against ogrinfo's extent, verify_iceberg on the directory.
check_table() {
  local wh="$1" cat_args="$2" table="$3" src="$4" copies="$5" label="$3 ($6)"
  local want; want=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p')
  want=$((want * copies))
  # shellcheck disable=SC2086
  "$bin" --warehouse "$wh" $cat_args files "$table" --json >"$work/files.json" 2>"$work/err.txt" ||
    { fail "$label: files failed: $(head -n 1 "$work/err.txt")"; return; }
  local got; got=$(json "$work/files.json" 'j.files.reduce((s, f) => s + f.record_count, 0)')
  local nfiles; nfiles=$(json "$work/files.json" 'j.data_files')
  [ "$got" = "$want" ] && [ "$nfiles" = "$copies" ] &&
    pass "$label: files --json lists $nfiles files, $got records = ogrinfo x $copies" ||
    fail "$label: files --json: $nfiles files, $got records, want $copies files, $want records"
  # shellcheck disable=SC2086
  "$bin" --warehouse "$wh" $cat_args describe "$table" --json >"$work/describe.json" 2>"$work/err.txt" ||
    { fail "$label: describe failed: $(head -n 1 "$work/err.txt")"; return; }
  got=$(json "$work/describe.json" 'j.records')
  [ "$got" = "$want" ] && pass "$label: describe --json records $got" ||
    fail "$label: describe records $got, want $want"
  local extent box
  extent=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Extent: (\(.*\), \(.*\)) - (\(.*\), \(.*\))$/\1,\2,\3,\4/p')
  box=$(json "$work/describe.json" 'j.bbox.map(v => v.toFixed(6)).join(",")')
  [ -n "$extent" ] && [ "$box" = "$extent" ] && pass "$label: describe bbox $box = ogrinfo extent" ||
    fail "$label: describe bbox $box, ogrinfo extent $extent"
  local location; location=$(json "$work/describe.json" 'j.location')
  if node "$oracles/verify_iceberg.mjs" "$location" --quiet >"$work/verify.json" 2>&1; then
    rows=$(json "$work/verify.json" 'j.icebird_rows_read')
    [ "$rows" = "$want" ] && pass "$label: verify_iceberg ok, icebird read $rows rows" ||
      fail "$label: icebird read $rows rows, want $want"
  else
    fail "$label: verify_iceberg: $(head -c 600 "$work/verify.json")"
  fi
}

# Convert each dataset once; every suite appends the same files.
datasets=()
for name in us_states us_counties; do
  src="$data/$name.gpkg"
  [ -s "$src" ] || { fail "$src missing (run scripts/fetch-data.sh)"; continue; }
  if "$bin" convert "$src" "$work/$name.parquet" >/dev/null 2>"$work/err.txt"; then
    datasets+=("$name")
  else
    fail "$name: convert failed: $(head -n 1 "$work/err.txt")"
  fi
done

# run_suite WAREHOUSE CATALOG_ARGS KIND NAME...: create --from, append, check.
run_suite() {
  local wh="$1" cat_args="$2" kind="$3"
  shift 3
  for name in "$@"; do
    local src="$data/$name.gpkg" out="$work/$name.parquet"
    # shellcheck disable=SC2086
    "$bin" --warehouse "$wh" $cat_args create "geo.$name" --from "$src" --partition none \
      >/dev/null 2>"$work/err.txt" ||
      { fail "$name ($kind): create --from failed: $(head -n 1 "$work/err.txt")"; continue; }
    local files=("$out") copies=1
    if [ "$name" = us_states ]; then
      # Two files in one snapshot (the second outside the table location as well).
      cp "$out" "$work/$kind-$name-copy.parquet"
      files+=("$work/$kind-$name-copy.parquet"); copies=2
    fi
    # shellcheck disable=SC2086
    "$bin" --warehouse "$wh" $cat_args append "geo.$name" "${files[@]}" --json \
      >"$work/append.json" 2>"$work/err.txt" ||
      { fail "$name ($kind): append failed: $(head -n 1 "$work/err.txt")"; continue; }
    local attempts; attempts=$(json "$work/append.json" 'j.attempts')
    [ "$attempts" = 1 ] && pass "$name ($kind): appended ${#files[@]} files in one commit" ||
      fail "$name ($kind): append took $attempts attempts"
    check_table "$wh" "$cat_args" "geo.$name" "$src" "$copies" "$kind"
  done
}

run_suite "$work/wh-sqlite" "" sqlite "${datasets[@]}"

# The same against PostgreSQL, on the smaller dataset (optional: skipped when no server can be
# started here).
if [ -x "$src_dir/scripts/pg-test-server.sh" ]; then
  pg_dir="$work/pg"
  if uri=$("$src_dir/scripts/pg-test-server.sh" start "$pg_dir" 2>"$work/pg.err"); then
    run_suite "$work/wh-pg" "--catalog $uri" postgresql us_states
  else
    pg_dir=""
    echo "skip: postgresql catalog ($(head -n 1 "$work/pg.err"))"
  fi
fi

echo "table_cli_real_data: $passed passed, $failed failed"
[ "$failed" = 0 ]
