#!/usr/bin/env bash
# geoinfo on real data: counts agree with GDAL's own ogrinfo, the known invalid polygons of
# us_counties are found and all repaired, and the metrics JSON accounts for every feature.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg us_counties.gpkg
fail() { echo "FAIL: $*"; exit 1; }

for name in us_states us_counties; do
  src="$data/$name.gpkg"
  [ -s "$src" ] || fail "$src missing (run scripts/fetch-data.sh)"
  "$bin" --workers 2 geoinfo "$src" --metrics-json "$work/$name.json" >"$work/$name.txt"
  want=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p')
  got=$(sed -n 's/^features *\([0-9]*\).*/\1/p' "$work/$name.txt")
  [ "$got" = "$want" ] || fail "$name: geoinfo counted $got features, ogrinfo $want"
  invalid=$(sed -n 's/^invalid *\([0-9]*\) .*/\1/p' "$work/$name.txt")
  repaired=$(sed -n 's/.*repaired by make-valid: \([0-9]*\).*/\1/p' "$work/$name.txt")
  [ "$invalid" = "$repaired" ] || fail "$name: $invalid invalid but $repaired repaired"
  grep -q '"rows_out": *'"$want" "$work/$name.json" || fail "$name: metrics JSON lacks rows_out $want"
  echo "$name: $got features, $invalid invalid, all repaired"
done
# docs/data.md: several us_counties polygons are invalid.
inv=$(sed -n 's/^invalid *\([0-9]*\) .*/\1/p' "$work/us_counties.txt")
[ "$inv" -gt 0 ] || fail "us_counties: expected invalid polygons, found none"
echo "1 passed, 0 failed"
