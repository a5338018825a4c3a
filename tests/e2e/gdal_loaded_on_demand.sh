#!/usr/bin/env bash
# GDAL is loaded on first use, not linked (sources/gdal_api.h, docs/architecture.md): the
# executable does not need libgdal; a GeoPackage ingest (native reader and description),
# create --from a GeoPackage and a CSV query never load it (glibc's LD_DEBUG=files lists every
# library the loader opens); a FlatGeobuf ingest and a query written to a GeoPackage load it
# and give the same rows.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg us_states.fgb
wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
loads_gdal() { grep -c 'file=libgdal' "$1"; }  # how many times the loader opened libgdal
want=$(ogrinfo -ro -so -al "$data/us_states.gpkg" | sed -n 's/^Feature Count: //p' | head -n 1)
rows_of() { gl describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])'; }

if readelf -d "$bin" | grep -q 'NEEDED.*libgdal'; then
  fail "the executable links libgdal: $(readelf -d "$bin" | grep 'NEEDED.*libgdal')"
else
  pass "the executable does not link libgdal"
fi

if LD_DEBUG=files gl ingest demo.gpkg "$data/us_states.gpkg" --create >"$work/out1.txt" 2>"$work/ld1.txt"; then
  n=$(loads_gdal "$work/ld1.txt")
  [ "$n" = 0 ] && pass "GeoPackage ingest: libgdal not loaded" ||
    fail "GeoPackage ingest loaded libgdal: $(grep -m1 'file=libgdal' "$work/ld1.txt")"
  r=$(rows_of demo.gpkg)
  [ "$r" = "$want" ] && pass "GeoPackage ingest: $r rows" || fail "GeoPackage ingest: $r rows, want $want"
else
  fail "GeoPackage ingest failed: $(grep -v '^ *[0-9]*:' "$work/ld1.txt" | head -n 1)"
fi

if LD_DEBUG=files gl create demo.from --from "$data/us_states.gpkg" >"$work/out5.txt" 2>"$work/ld5.txt"; then
  n=$(loads_gdal "$work/ld5.txt")
  [ "$n" = 0 ] && pass "create --from a GeoPackage: libgdal not loaded" ||
    fail "create --from a GeoPackage loaded libgdal"
else
  fail "create --from failed: $(grep -v '^ *[0-9]*:' "$work/ld5.txt" | head -n 1)"
fi

if LD_DEBUG=files gl ingest demo.fgb "$data/us_states.fgb" --create >"$work/out2.txt" 2>"$work/ld2.txt"; then
  n=$(loads_gdal "$work/ld2.txt")
  [ "$n" -ge 1 ] && pass "FlatGeobuf ingest: libgdal loaded on demand" ||
    fail "FlatGeobuf ingest: no libgdal in the loader's list (is LD_DEBUG working?)"
  r=$(rows_of demo.fgb)
  [ "$r" = "$want" ] && pass "FlatGeobuf ingest: $r rows" || fail "FlatGeobuf ingest: $r rows, want $want"
else
  fail "FlatGeobuf ingest failed: $(grep -v '^ *[0-9]*:' "$work/ld2.txt" | head -n 1)"
fi

if LD_DEBUG=files gl query demo.gpkg --format csv >"$work/q.csv" 2>"$work/ld3.txt"; then
  n=$(loads_gdal "$work/ld3.txt")
  [ "$n" = 0 ] && pass "query --format csv: libgdal not loaded" || fail "query --format csv loaded libgdal"
  r=$(( $(wc -l <"$work/q.csv") - 1 ))
  [ "$r" = "$want" ] && pass "query --format csv: $r rows" || fail "query --format csv: $r rows, want $want"
else
  fail "query --format csv failed: $(grep -v '^ *[0-9]*:' "$work/ld3.txt" | head -n 1)"
fi

if gl query demo.gpkg --output "$work/out.gpkg" >"$work/out4.txt" 2>&1; then
  r=$(ogrinfo -ro -so -al "$work/out.gpkg" | sed -n 's/^Feature Count: //p' | head -n 1)
  [ "$r" = "$want" ] && pass "query --output out.gpkg (through GDAL): $r features" ||
    fail "query --output out.gpkg: $r features, want $want"
else
  fail "query --output out.gpkg failed: $(head -n 1 "$work/out4.txt")"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
