#!/usr/bin/env bash
# `geolake eliminate` (docs/cli.md "eliminate") against PostGIS on real data: the US county
# polygons, loaded into a private PostgreSQL 15 + PostGIS 3 server by ogr2ogr, with every
# county below 1,000 km² (measured in EPSG:6933, equal-area) merged into a neighbour. The
# same rule is written independently in SQL (PL/pgSQL rounds over a border table whose lengths
# PostGIS measures as ST_Length(ST_Intersection(ST_Boundary(a), ST_Boundary(b))) in
# EPSG:6933), and geolake's output must give:
# - the same surviving counties (by geoid), and each eliminated county's interior point inside
#   the output feature of the county SQL assigns it to;
# - each survivor's geometry equal to PostGIS's ST_Union of its members (symmetric difference
#   summed below 1e-9 of the total area), valid, and the total area equal to the input's;
# - the same numbers of merged counties and islands as the report;
# with the default rule, with --within state_fips and with --merge-into largest-area. Then a
# table output (committed once, a re-run adds nothing), bad arguments (exit 2) and a missing
# input (exit 3).
# Skipped (exit 77) when the data are missing or no PostgreSQL + PostGIS can be started.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"
source "$(dirname "${BASH_SOURCE[0]}")/lib/eliminate_rule.bash"

needs_data us_counties.gpkg
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"
start_postgres --postgis
wh="$work/wh"
g() { "$bin" --warehouse "$wh" --progress off "$@"; }
counties="$data/us_counties.gpkg"
threshold=1e9 # m² in EPSG:6933

load() { # load PATH TABLE
  ogr2ogr -f PostgreSQL "PG:$uri" "$1" -nln "$2" -lco GEOMETRY_NAME=geom -lco FID=fid \
    -preserve_fid -nlt PROMOTE_TO_MULTI 2>"$work/ogr.err" ||
    { fail "ogr2ogr $1: $(head -n 3 "$work/ogr.err")"; return 1; }
}
load "$counties" counties || { echo "passed $passed, failed $failed"; exit 1; }
q() { psql "$uri" -At -F, -v ON_ERROR_STOP=1 -c "$1"; }

# The input as geolake sees it: rows in fid order (row id = position), made valid with GEOS's
# structure method (geolake's make-valid), measured in EPSG:6933.
t0=$(date +%s%N)
q "CREATE TABLE c AS
     SELECT rid, geoid, state_fips, v AS geom, ST_Transform(v, 6933) AS m
     FROM (SELECT (row_number() OVER (ORDER BY fid) - 1)::bigint AS rid, geoid, state_fips,
                  ST_MakeValid(geom, 'method=structure') AS v
           FROM counties) s
     WHERE v IS NOT NULL AND NOT ST_IsEmpty(v);
   ALTER TABLE c ADD COLUMN area double precision;
   UPDATE c SET area = ST_Area(m);
   CREATE INDEX ON c USING gist (m);
   CREATE TABLE borders AS
     SELECT a.rid AS a, b.rid AS b,
            ST_Length(ST_Intersection(ST_Boundary(a.m), ST_Boundary(b.m))) AS len
     FROM c a JOIN c b ON a.rid < b.rid AND a.m && b.m
     WHERE a.area < $threshold OR b.area < $threshold;
   DELETE FROM borders WHERE len <= 0;" >/dev/null
border_ms=$((($(date +%s%N) - t0) / 1000000))
echo "PostGIS: $(q "SELECT count(*) FROM c WHERE area < $threshold") counties below $threshold m², $(q 'SELECT count(*) FROM borders') borders measured in $border_ms ms"

# sql_rule NAME WITHIN(true|false) ORDER: the rule of docs/cli.md in PL/pgSQL
# (lib/eliminate_rule.bash); ORDER is the choice's ORDER BY after the candidate (its preference),
# WITHIN true keeps merges inside a state. Leaves NAME_owner(rid, owner) and NAME_rounds.
sql_rule() {
  local group=""
  [ "$2" = true ] && group=state_fips
  q "$(eliminate_rule_sql "$1" "$threshold" "$3" $group)" >/dev/null
}

# check NAME GEOLAKE-ARGS...: run geolake and compare with NAME's SQL result.
check() {
  local name="$1"
  shift
  local t0 ms
  t0=$(date +%s%N)
  if ! g eliminate "$counties" --area-below $threshold --area-crs EPSG:6933 "$@" \
    -o "$work/$name.gpkg" >"$work/$name.out" 2>&1; then
    fail "eliminate $name: $(tail -n 3 "$work/$name.out")"
    return
  fi
  ms=$((($(date +%s%N) - t0) / 1000000))
  load "$work/$name.gpkg" "ours_$name" || return
  # Survivors: the SQL owners, and the counties without a polygon, which pass through (the
  # data's Falls Church, 51610, has an empty geometry).
  local survivors_sql survivors_ours differ
  q "CREATE TABLE ${name}_kept AS
       SELECT c.geoid FROM ${name}_owner o JOIN c USING (rid) WHERE o.owner = o.rid
       UNION ALL SELECT geoid FROM counties WHERE geoid NOT IN (SELECT geoid FROM c)" >/dev/null
  survivors_sql=$(q "SELECT count(*) FROM ${name}_kept")
  survivors_ours=$(q "SELECT count(*) FROM ours_$name")
  differ=$(q "SELECT count(*) FROM ${name}_kept s FULL JOIN ours_$name o USING (geoid)
              WHERE s.geoid IS NULL OR o.geoid IS NULL")
  [ "$survivors_ours" = "$survivors_sql" ] && [ "$differ" = "0" ] &&
    pass "$name: the same $survivors_sql surviving counties as the SQL rule ($ms ms; $(grep -o 'merged into [0-9]* neighbours in [0-9]* rounds' "$work/$name.out"), SQL $(q "SELECT n FROM ${name}_rounds") rounds)" ||
    fail "$name: geolake keeps $survivors_ours counties, SQL $survivors_sql, $differ differ: $(q "SELECT string_agg(coalesce(s.geoid, '') || '/' || coalesce(o.geoid, ''), ' ')
      FROM ${name}_kept s FULL JOIN ours_$name o USING (geoid) WHERE s.geoid IS NULL OR o.geoid IS NULL")"
  # Each eliminated county: the output feature holding its interior point is its SQL owner.
  local eliminated wrong
  eliminated=$(q "SELECT count(*) FROM ${name}_owner WHERE owner <> rid")
  wrong=$(q "SELECT count(*) FROM ${name}_owner o JOIN c e ON e.rid = o.rid
               JOIN c w ON w.rid = o.owner
             WHERE o.owner <> o.rid AND NOT EXISTS (
               SELECT 1 FROM ours_$name x
               WHERE x.geoid = w.geoid AND ST_Contains(x.geom, ST_PointOnSurface(e.geom)))")
  [ "$wrong" = "0" ] && pass "$name: all $eliminated eliminated counties lie in the feature SQL assigns them to" ||
    fail "$name: $wrong of $eliminated eliminated counties are not in their SQL owner's feature"
  grep -q "; $eliminated merged into" "$work/$name.out" &&
    pass "$name: the report counts $eliminated merged" ||
    fail "$name: report: $(grep '^eliminate: [0-9]* features' "$work/$name.out")"
  # Geometries: PostGIS's union of each owner's members.
  local symdiff total_diff invalid
  symdiff=$(q "WITH u AS (SELECT w.geoid, ST_Union(e.geom) AS geom FROM ${name}_owner o
                          JOIN c e ON e.rid = o.rid JOIN c w ON w.rid = o.owner GROUP BY w.geoid)
               SELECT sum(ST_Area(ST_SymDifference(x.geom, u.geom))) / sum(ST_Area(u.geom))
               FROM u JOIN ours_$name x USING (geoid)")
  total_diff=$(q "SELECT abs((SELECT sum(ST_Area(geom)) FROM ours_$name) -
                             (SELECT sum(ST_Area(geom)) FROM c)) / (SELECT sum(ST_Area(geom)) FROM c)")
  invalid=$(q "SELECT count(*) FROM ours_$name WHERE NOT ST_IsValid(geom)")
  python3 -c "import sys; sys.exit(0 if float('$symdiff') < 1e-9 and float('$total_diff') < 1e-9 else 1)" &&
    [ "$invalid" = "0" ] &&
    pass "$name: unions equal PostGIS's (symmetric difference $symdiff of the area), total area within $total_diff, all valid" ||
    fail "$name: symmetric difference $symdiff, total area difference $total_diff, $invalid invalid"
  local islands_sql
  islands_sql=$(q "SELECT count(*) FROM ${name}_r r WHERE r.area < $threshold
                   AND NOT EXISTS (SELECT 1 FROM ${name}_e e WHERE e.a = r.rid)")
  grep -q "kept below: $islands_sql islands" "$work/$name.out" &&
    pass "$name: $islands_sql islands, as SQL finds" ||
    fail "$name: SQL finds $islands_sql islands; report: $(grep -o 'kept below:[^;]*' "$work/$name.out")"
  grep '^eliminate: area out\|^eliminate: [0-9]* candidate' "$work/$name.out"
}

t0=$(date +%s%N)
sql_rule lb false "e.len DESC, e.b ASC"
echo "PostGIS: the rule in SQL took $((($(date +%s%N) - t0) / 1000000)) ms"
check lb
sql_rule within true "e.len DESC, e.b ASC"
check within --within state_fips
sql_rule la false "rb.area DESC, e.len DESC, e.b ASC"
check la --merge-into largest-area

# A table output: committed once, with the survivors; a re-run of the same eliminate adds
# nothing.
records() {
  g describe "$1" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])' 2>/dev/null
}
want=$(q "SELECT count(*) FROM lb_kept")
if g eliminate "$counties" --area-below $threshold --area-crs EPSG:6933 -o geo.counties \
  >"$work/t1.out" 2>&1; then
  n=$(records geo.counties)
  g eliminate "$counties" --area-below $threshold --area-crs EPSG:6933 -o geo.counties \
    >"$work/t2.out" 2>&1
  rc=$?
  n2=$(records geo.counties)
  [ "$n" = "$want" ] && [ $rc -eq 0 ] && [ "$n2" = "$n" ] &&
    pass "table output holds the $n survivors; a re-run adds nothing" ||
    fail "table output: $n rows (want $want), re-run exit $rc with $n2 rows: $(tail -n 2 "$work/t2.out")"
else
  fail "eliminate into a table: $(tail -n 3 "$work/t1.out")"
fi

# Bad arguments are exit 2; a missing input is exit 3 (not found).
expect_exit() { # expect_exit CODE WHAT ARGS...
  local code="$1" what="$2"
  shift 2
  g eliminate "$@" >"$work/bad.out" 2>&1
  local rc=$?
  [ $rc -eq "$code" ] && pass "$what: exit $code ($(head -n 1 "$work/bad.out"))" ||
    fail "$what: exit $rc, wanted $code: $(head -n 2 "$work/bad.out")"
}
expect_exit 2 "no threshold" "$counties" -o "$work/x.csv"
expect_exit 2 "zero threshold" "$counties" --area-below 0 -o "$work/x.csv"
expect_exit 2 "unknown --within column" "$counties" --area-below 1 --within nope -o "$work/x.csv"
expect_exit 2 "unknown --merge-into" "$counties" --area-below 1 --merge-into smallest -o "$work/x.csv"
expect_exit 2 "unknown --area-crs" "$counties" --area-below 1 --area-crs EPSG:1 -o "$work/x.csv"
expect_exit 2 "--shard" "$counties" --area-below 1 --shard 0/2 -o "$work/x.csv"
expect_exit 3 "missing input file" "$work/none.gpkg" --area-below 1 -o "$work/x.csv"
[ ! -e "$work/x.csv" ] && pass "no output file after the refusals" ||
  fail "an output file was left after a refused eliminate"

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
