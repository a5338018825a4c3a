#!/usr/bin/env bash
# `geolake simplify --coverage` (docs/ops.md "Simplify --coverage") on the 3,231 US counties,
# checked by PostGIS (a private PostgreSQL + PostGIS server, both layers loaded by ogr2ogr):
# - one output row per county, with its geoid and name;
# - every county whose input PostGIS finds valid is valid;
# - no overlaps introduced: the area where two output counties intersect, summed over all
#   pairs, is no larger than the input's (the input has a few overlapping invalid features);
# - no gaps introduced: the union of the output has no more holes than the union of the
#   input, and its area is within 1e-3 relative of it (only the outer coast is simplified);
# - fewer vertices (ST_NPoints), printed with the ratio.
# The same checks on the per-feature `--preserve-topology` output (each county on its own, as
# ST_SimplifyPreserveTopology) must find the overlaps and gaps that --coverage avoids: the
# control that shows the checks can fail.
# Skipped (exit 77) when the datasets are missing or no PostgreSQL + PostGIS can be started.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"

needs_data us_counties.gpkg
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"
start_postgres --postgis
wh="$work/wh"
g() { "$bin" --warehouse "$wh" --progress off "$@"; }
counties="$data/us_counties.gpkg"
tolerance=0.02

load() {  # load PATH TABLE
  ogr2ogr -f PostgreSQL "PG:$uri" "$1" -nln "$2" -lco GEOMETRY_NAME=geom \
    -nlt PROMOTE_TO_MULTI -t_srs EPSG:4326 2>"$work/ogr.err" ||
    { fail "ogr2ogr $1: $(head -n 3 "$work/ogr.err")"; return 1; }
}
q() { PGOPTIONS='-c client_min_messages=warning' psql "$uri" -At -F, -c "$1"; }
load "$counties" counties || { echo "passed $passed, failed $failed"; exit 1; }

# overlap TABLE: the summed area of pairwise intersections (CRS units squared), of the
# geometries made valid (GEOS cannot intersect the few invalid counties as they are).
overlap() {
  q "CREATE TEMP TABLE v AS SELECT geoid, ST_MakeValid(geom) AS geom FROM $1;
     CREATE INDEX ON v USING gist (geom);
     SELECT coalesce(sum(ST_Area(ST_Intersection(a.geom, b.geom))), 0)
     FROM v a JOIN v b ON a.geoid < b.geoid AND ST_Intersects(a.geom, b.geom)
     AND NOT ST_Touches(a.geom, b.geom)" | tail -n 1
}
# holes TABLE: interior rings of the union of the table's geometries (made valid).
holes() {
  q "SELECT sum(ST_NumInteriorRings(d.geom)) FROM
     (SELECT (ST_Dump(ST_Union(ST_MakeValid(geom)))).geom FROM $1) d"
}
union_area() { q "SELECT ST_Area(ST_Union(ST_MakeValid(geom))) FROM $1"; }
le() { python3 -c "import sys; sys.exit(0 if float('$1') <= float('$2') else 1)"; }

overlap_in=$(overlap counties)
holes_in=$(holes counties)
area_in=$(union_area counties)
points_in=$(q "SELECT sum(ST_NPoints(geom)) FROM counties")
echo "input: overlap area $overlap_in, union holes $holes_in, union area $area_in, $points_in points"

if g simplify "$counties" --tolerance $tolerance --coverage -o "$work/cov.gpkg" \
  >"$work/cov.out" 2>&1; then
  load "$work/cov.gpkg" cov
  rows=$(q "SELECT count(*) FROM cov")
  differ=$(q "SELECT count(*) FROM counties c FULL JOIN cov o USING (geoid)
              WHERE c.name IS DISTINCT FROM o.name")
  [ "$rows" = "$(q 'SELECT count(*) FROM counties')" ] && [ "$differ" = "0" ] &&
    pass "one output row per county ($rows), each with its geoid and name" ||
    fail "rows: $rows, $differ geoids or names differ"
  invalid=$(q "SELECT count(*) FROM counties c JOIN cov o USING (geoid)
               WHERE ST_IsValid(c.geom) AND NOT ST_IsValid(o.geom)")
  [ "$invalid" = "0" ] && pass "every county valid in the input is valid in the output" ||
    fail "$invalid counties valid in the input are invalid after --coverage"
  overlap_out=$(overlap cov)
  le "$overlap_out" "$overlap_in" &&
    pass "no overlaps introduced: pairwise intersection area $overlap_out (input $overlap_in)" ||
    fail "overlaps introduced: pairwise intersection area $overlap_out (input $overlap_in)"
  holes_out=$(holes cov)
  area_out=$(union_area cov)
  le "$holes_out" "$holes_in" &&
    python3 -c "import sys; sys.exit(0 if abs($area_out - $area_in) <= 1e-3 * $area_in else 1)" &&
    pass "no gaps introduced: the union has $holes_out holes (input $holes_in), area $area_out (input $area_in)" ||
    fail "gaps: the union has $holes_out holes (input $holes_in), area $area_out (input $area_in)"
  points_out=$(q "SELECT sum(ST_NPoints(geom)) FROM cov")
  python3 -c "import sys; sys.exit(0 if $points_out < 0.9 * $points_in else 1)" &&
    pass "vertices: $points_in -> $points_out ($(python3 -c "print(f'{$points_out / $points_in:.3f}')") at tolerance $tolerance)" ||
    fail "vertices: $points_in -> $points_out"
  grep -q "^simplify (coverage, tolerance $tolerance): " "$work/cov.out" &&
    pass "report: $(grep '^simplify (coverage' "$work/cov.out")" ||
    fail "no simplify line: $(head -n 3 "$work/cov.out")"
else
  fail "simplify --coverage: $(tail -n 3 "$work/cov.out")"
fi

# The control: per-feature topology-preserving simplification opens gaps and overlaps.
if g simplify "$counties" --tolerance $tolerance --preserve-topology -o "$work/tps.gpkg" \
  >"$work/tps.out" 2>&1; then
  load "$work/tps.gpkg" tps
  overlap_tps=$(overlap tps)
  holes_tps=$(holes tps)
  ! le "$overlap_tps" "$overlap_in" && ! le "$holes_tps" "$holes_in" &&
    pass "control: per-feature --preserve-topology overlaps ($overlap_tps) and opens gaps ($holes_tps union holes); the checks catch it" ||
    fail "control: per-feature output shows overlap $overlap_tps, holes $holes_tps (input $overlap_in, $holes_in)"
else
  fail "simplify --preserve-topology: $(tail -n 3 "$work/tps.out")"
fi

# Bad combinations exit 2.
g simplify "$counties" --tolerance 1 --coverage --shard 0/2 -o "$work/x.gpkg" >/dev/null 2>&1
code=$?
[ $code = 2 ] && pass "--coverage with --shard is refused (exit 2)" ||
  fail "--coverage with --shard: exit $code"

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
