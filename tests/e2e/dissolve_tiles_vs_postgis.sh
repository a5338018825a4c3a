#!/usr/bin/env bash
# `geolake dissolve --tile-column` (tile-edge dissolve, docs/cli.md "dissolve") on real data:
# the Natural Earth 10m countries, made valid and cut by PostGIS into a 10° x 10° grid of
# tiles (ST_Intersection with each tile's envelope, one row per country and tile), are
# dissolved back by country with --tile-column. The result must equal a global --touching
# dissolve of the same pieces (the same components per country with the same piece counts;
# symmetric difference of the unions below 1e-9 of the area) and give back each country
# (PostGIS's ST_Union(ST_MakeValid(geom)) per name: symmetric difference below 1e-9 of the
# area), while pairing only the pieces at tile edges. With --tile-grid 10 (the cutting grid)
# fewer pieces are paired (a tile's envelope is its cell, not its data's box) and the output is
# the same.
# Skipped (exit 77) when the data are missing or no PostgreSQL + PostGIS can be started.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"

needs_data ne_countries_10m.gpkg
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"
start_postgres --postgis
wh="$work/wh"
g() { "$bin" --warehouse "$wh" --progress off "$@"; }
q() { psql "$uri" -At -F, -v ON_ERROR_STOP=1 -c "$1"; }
load() { # load PATH TABLE
  ogr2ogr -f PostgreSQL "PG:$uri" "$1" -nln "$2" -lco GEOMETRY_NAME=geom \
    -nlt PROMOTE_TO_MULTI 2>"$work/ogr.err" ||
    { fail "ogr2ogr $1: $(head -n 3 "$work/ogr.err")"; return 1; }
}
load "$data/ne_countries_10m.gpkg" countries || { echo "passed $passed, failed $failed"; exit 1; }

q "CREATE TABLE valid AS SELECT name, ST_MakeValid(geom, 'method=structure') AS geom FROM countries;
   CREATE TABLE tiles AS
     SELECT x || '_' || y AS tile, ST_MakeEnvelope(x, y, x + 10, y + 10, 4326) AS box
     FROM generate_series(-180, 170, 10) x, generate_series(-90, 80, 10) y;
   CREATE TABLE pieces AS
     SELECT v.name, t.tile, ST_Multi(ST_CollectionExtract(ST_Intersection(v.geom, t.box), 3)) AS geom
     FROM valid v JOIN tiles t ON v.geom && t.box;
   DELETE FROM pieces WHERE ST_IsEmpty(geom) OR ST_Area(geom) = 0;" >/dev/null
ogr2ogr -f GPKG "$work/pieces.gpkg" "PG:$uri" -sql "SELECT name, tile, geom FROM pieces" \
  -nln pieces 2>"$work/ogr.err" || fail "export pieces: $(head -n 2 "$work/ogr.err")"
n_pieces=$(q "SELECT count(*) FROM pieces")
echo "PostGIS: $(q 'SELECT count(*) FROM valid') countries cut into $n_pieces pieces in $(q 'SELECT count(DISTINCT tile) FROM pieces') tiles"

run() { # run NAME ARGS...
  local name="$1" t0 ms
  shift
  t0=$(date +%s%N)
  g dissolve "$work/pieces.gpkg" --by name --aggregate count "$@" -o "$work/$name.gpkg" \
    >"$work/$name.out" 2>&1 || { fail "dissolve $name: $(tail -n 3 "$work/$name.out")"; return 1; }
  ms=$((($(date +%s%N) - t0) / 1000000))
  load "$work/$name.gpkg" "$name" || return 1
  echo "$name: $ms ms; $(grep '^dissolve --' "$work/$name.out")"
}
run tiled --tile-column tile && run touching --touching && run gridded --tile-column tile --tile-grid 10 ||
  { echo "passed $passed, failed $failed"; exit 1; }

# The same components: per country, the multiset of piece counts.
differ=$(q "SELECT count(*) FROM
              (SELECT name, array_agg(count ORDER BY count) a FROM tiled GROUP BY name) t
              FULL JOIN (SELECT name, array_agg(count ORDER BY count) a FROM touching GROUP BY name) o
              USING (name) WHERE t.a IS DISTINCT FROM o.a")
n_tiled=$(q "SELECT count(*) FROM tiled")
n_touching=$(q "SELECT count(*) FROM touching")
[ "$differ" = "0" ] && [ "$n_tiled" = "$n_touching" ] &&
  pass "--tile-column gives the same $n_tiled components as --touching (piece counts per country equal)" ||
  fail "--tile-column: $n_tiled components, --touching $n_touching; $differ countries differ"
sum_count=$(q "SELECT sum(count) FROM tiled")
[ "$sum_count" = "$n_pieces" ] && pass "every one of the $n_pieces pieces is counted once" ||
  fail "components count $sum_count pieces of $n_pieces"
grep -q "pieces reach their tile's envelope" "$work/tiled.out" &&
  pass "report: $(grep -o '[0-9]* pieces reach[^;]*' "$work/tiled.out")" ||
  fail "no tile line: $(grep '^dissolve' "$work/tiled.out")"

symdiff() { # symdiff A B: symmetric difference of the per-country unions, over the total area
  q "WITH a AS (SELECT name, ST_Union(geom) g FROM $1 GROUP BY name),
          b AS (SELECT name, ST_Union(geom) g FROM $2 GROUP BY name)
     SELECT sum(ST_Area(ST_SymDifference(a.g, b.g))) / sum(ST_Area(b.g)) FROM a JOIN b USING (name)"
}
s1=$(symdiff tiled touching)
s2=$(symdiff tiled valid)
invalid=$(q "SELECT count(*) FROM tiled WHERE NOT ST_IsValid(geom)")
python3 -c "import sys; sys.exit(0 if float('$s1') < 1e-9 and float('$s2') < 1e-9 else 1)" &&
  [ "$invalid" = "0" ] &&
  pass "tiled equals --touching (symmetric difference $s1) and the uncut countries ($s2), all valid" ||
  fail "symmetric difference with --touching $s1, with the countries $s2; $invalid invalid"

edges() { grep -o '[0-9]* pieces reach' "$work/$1.out" | grep -o '^[0-9]*'; }
s3=$(symdiff gridded tiled)
n_gridded=$(q "SELECT count(*) FROM gridded")
python3 -c "import sys; sys.exit(0 if float('$s3') == 0 else 1)" && [ "$n_gridded" = "$n_tiled" ] &&
  [ "$(edges gridded)" -lt "$(edges tiled)" ] &&
  pass "--tile-grid 10: the same $n_gridded components, $(edges gridded) pieces paired instead of $(edges tiled)" ||
  fail "--tile-grid 10: $n_gridded components (tiled $n_tiled), symmetric difference $s3, edge pieces $(edges gridded) vs $(edges tiled)"

g dissolve "$work/pieces.gpkg" --tile-column tile --touching -o "$work/x.csv" >"$work/bad.out" 2>&1
rc=$?
[ $rc -eq 2 ] && pass "--touching with --tile-column: exit 2" || fail "--touching with --tile-column: exit $rc"
g dissolve "$work/pieces.gpkg" --tile-column nope -o "$work/x.csv" >"$work/bad.out" 2>&1
rc=$?
[ $rc -eq 2 ] && pass "unknown --tile-column: exit 2 ($(head -n 1 "$work/bad.out"))" ||
  fail "unknown --tile-column: exit $rc"

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
