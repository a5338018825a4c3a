#!/usr/bin/env bash
# `geolake dissolve` (docs/cli.md "dissolve") against PostGIS on real data: the 3,230 US county
# polygons, loaded into a private PostgreSQL 15 + PostGIS 3 server by ogr2ogr, dissolved by
# state. geolake's result equals `ST_Union(ST_MakeValid(geom)) ... GROUP BY state_fips`:
# - the same groups, with the same count(*) and min(geoid);
# - each group's area within 1e-9 (relative) of PostGIS's;
# - the area of the symmetric difference of the two unions, summed, below 1e-9 of the total.
# The counties densified, dissolved in passes by state at --memory 8MiB: the result of one
# pass, with a lower peak RSS; groups over the share in spatial chunks, the same result.
# With --touching (no --by, and --by state, also within a 2 MiB budget, so in passes) it equals
# the components of ST_ClusterDBSCAN(ST_MakeValid(geom), 0, 1) (eps 0: polygons that touch or
# overlap), each unioned: the same components (named by their smallest geoid, with the same
# count), areas and symmetric difference as above.
# Then the CLI's other promises: the busy time per worker, a table output committed once and a
# re-run that adds nothing, bad arguments (exit 2), a missing input (exit 3), SIGINT within 2 s
# (exit 130), and two dissolves into one new table at once (exactly one copy of the groups).
# Skipped (exit 77) when the datasets are missing or no PostgreSQL + PostGIS can be started.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.bash"

needs_data us_counties.gpkg ne_countries_10m.gpkg
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"
start_postgres --postgis
wh="$work/wh"
g() { "$bin" --warehouse "$wh" --progress off "$@"; }
counties="$data/us_counties.gpkg"

load() {  # load PATH TABLE
  ogr2ogr -f PostgreSQL "PG:$uri" "$1" -nln "$2" -lco GEOMETRY_NAME=geom \
    -nlt PROMOTE_TO_MULTI -t_srs EPSG:4326 2>"$work/ogr.err" ||
    { fail "ogr2ogr $1: $(head -n 3 "$work/ogr.err")"; return 1; }
}
load "$counties" counties || { echo "passed $passed, failed $failed"; exit 1; }
q() { psql "$uri" -At -F, -c "$1"; }

# 1. By state, into a GeoPackage, then loaded next to PostGIS's own union.
if g dissolve "$counties" --by state_fips --aggregate count,min:geoid -o "$work/states.gpkg" \
  >"$work/d.out" 2>&1; then
  load "$work/states.gpkg" ours
  q "CREATE TABLE theirs AS SELECT state_fips, count(*) AS n, min(geoid) AS min_geoid,
       ST_Union(ST_MakeValid(geom)) AS geom FROM counties GROUP BY state_fips" >/dev/null
  groups_pg=$(q "SELECT count(*) FROM theirs")
  groups_ours=$(q "SELECT count(*) FROM ours")
  # Keys and aggregates: rows of either side without an equal row on the other.
  differ=$(q "SELECT count(*) FROM theirs t FULL JOIN ours o USING (state_fips)
              WHERE t.n IS DISTINCT FROM o.count OR t.min_geoid IS DISTINCT FROM o.min_geoid")
  [ "$groups_ours" = "$groups_pg" ] && [ "$differ" = "0" ] &&
    pass "the same $groups_pg groups as PostGIS, with the same count(*) and min(geoid)" ||
    fail "groups: geolake $groups_ours, PostGIS $groups_pg, $differ rows differ"
  worst=$(q "SELECT max(abs(ST_Area(o.geom) - ST_Area(t.geom)) / ST_Area(t.geom))
             FROM theirs t JOIN ours o USING (state_fips)")
  python3 -c "import sys; sys.exit(0 if float('$worst') < 1e-9 else 1)" &&
    pass "every group's area within 1e-9 of PostGIS's (worst $worst)" ||
    fail "a group's area differs from PostGIS's by $worst (relative)"
  symdiff=$(q "SELECT sum(ST_Area(ST_SymDifference(o.geom, t.geom))) / sum(ST_Area(t.geom))
               FROM theirs t JOIN ours o USING (state_fips)")
  python3 -c "import sys; sys.exit(0 if float('$symdiff') < 1e-9 else 1)" &&
    pass "symmetric difference with PostGIS's unions: $symdiff of the total area" ||
    fail "symmetric difference with PostGIS's unions is $symdiff of the total area"
  invalid=$(q "SELECT count(*) FROM ours WHERE NOT ST_IsValid(geom)")
  [ "$invalid" = "0" ] && pass "every dissolved state is valid" ||
    fail "$invalid dissolved states are invalid"
  grep -q "^dissolve: $groups_pg groups from $(q 'SELECT count(*) FROM counties') rows" \
    "$work/d.out" && grep -q 'busy per worker: [0-9.]* s, [0-9.]* s' "$work/d.out" &&
    pass "the report: $(grep -o 'busy per worker.*' "$work/d.out")" ||
    fail "dissolve line: $(grep '^dissolve:' "$work/d.out")"
else
  fail "dissolve by state: $(tail -n 3 "$work/d.out")"
fi

# compare_unions NAME THEIRS OURS KEY: the per-row area and symmetric-difference checks.
compare_unions() {
  local name="$1" theirs="$2" ours="$3" key="$4"
  local worst symdiff
  worst=$(q "SELECT coalesce(max(abs(ST_Area(o.geom) - ST_Area(t.geom)) / ST_Area(t.geom)), 0)
             FROM $theirs t JOIN $ours o USING ($key) WHERE t.geom IS NOT NULL")
  symdiff=$(q "SELECT sum(ST_Area(ST_SymDifference(o.geom, t.geom))) / sum(ST_Area(t.geom))
               FROM $theirs t JOIN $ours o USING ($key) WHERE t.geom IS NOT NULL")
  python3 -c "import sys; sys.exit(0 if float('$worst') < 1e-9 and float('$symdiff') < 1e-9 else 1)" &&
    pass "$name: areas within $worst of PostGIS's, symmetric difference $symdiff of the total" ||
    fail "$name: worst relative area difference $worst, symmetric difference $symdiff"
}

# 1b. --touching: the components of ST_ClusterDBSCAN with eps 0, over all counties and per state.
touching() {  # touching NAME PARTITION-COLUMNS (SQL, may be empty) GEOLAKE-ARGS...
  local name="$1" partition="$2"
  shift 2
  local over="" by="cid"
  [ -n "$partition" ] && over="PARTITION BY $partition" && by="$partition, cid"
  if g dissolve "$counties" --touching --aggregate count,min:geoid "$@" \
    -o "$work/$name.gpkg" >"$work/$name.out" 2>&1; then
    load "$work/$name.gpkg" "ours_$name"
    q "CREATE TABLE theirs_$name AS SELECT min(geoid) AS min_geoid, count(*) AS n,
         ST_Union(geom) AS geom
       FROM (SELECT geoid, ST_MakeValid(geom) AS geom,
               ST_ClusterDBSCAN(ST_MakeValid(geom), 0, 1) OVER ($over) AS cid,
               state_fips FROM counties) c
       GROUP BY $by" >/dev/null
    local n_pg n_ours differ
    n_pg=$(q "SELECT count(*) FROM theirs_$name")
    n_ours=$(q "SELECT count(*) FROM ours_$name")
    differ=$(q "SELECT count(*) FROM theirs_$name t FULL JOIN ours_$name o USING (min_geoid)
                WHERE t.n IS DISTINCT FROM o.count")
    [ "$n_ours" = "$n_pg" ] && [ "$differ" = "0" ] &&
      pass "--touching $name: the same $n_pg components as ST_ClusterDBSCAN (eps 0), same counts" ||
      fail "--touching $name: geolake $n_ours components, PostGIS $n_pg, $differ differ"
    compare_unions "--touching $name" "theirs_$name" "ours_$name" min_geoid
    grep '^dissolve --touching' "$work/$name.out"
  else
    fail "dissolve --touching $name: $(tail -n 3 "$work/$name.out")"
  fi
}
touching all ""
touching states state_fips --by state_fips
# The same per state within a 2 MiB budget: the groups (2.0 MiB held) are dissolved in passes,
# each over the states whose key hashes to it; the result is still PostGIS's.
touching states_in_passes state_fips --by state_fips --memory 2MiB
grep -q "^dissolve: the groups did not fit the operation's share of --memory: [0-9]* passes" \
  "$work/states_in_passes.out" && pass "$(grep -o '[0-9]* passes, each reading the input' \
  "$work/states_in_passes.out") at --memory 2MiB" ||
  fail "no passes at --memory 2MiB: $(grep '^dissolve' "$work/states_in_passes.out")"

# 1c. Passes on real, uneven groups. The counties densified (ogr2ogr -segmentize 0.004: 29.7 MiB
# of geometries held, Texas alone 2.7 MiB) dissolved by state at --memory 8MiB (a 4 MiB share):
# the buckets of states are packed into passes by their measured size, and the result is that
# of one pass at --memory 1GiB; the peak RSS in passes is below the one pass's. At --memory
# 4MiB (a 2 MiB share, less than Texas) Texas and Alaska are dissolved in spatial chunks.
# The budget counts the geometries held, not GEOS's memory while it unions a group (measured
# with heaptrack at ~13x the group's WKB), so the peak is not bounded by --memory here.
peak() {  # peak OUT ARGS...: peak RSS in KiB of geolake ARGS on 2 workers (harness peak_kib)
  local out="$1"; shift
  peak_kib "$out" "$bin" --warehouse "$wh" --progress off --workers 2 "$@"
}
dense="$work/dense.gpkg"
if ogr2ogr -f GPKG "$dense" "$counties" -segmentize 0.004 2>"$work/ogr.err" &&
  base=$(peak "$work/sb.out" --memory 8MiB dissolve "$dense" --by state_fips \
    --bbox -70,42,-69.99,42.01 -o "$work/sb.gpkg") &&
  whole=$(peak "$work/sw.out" --memory 1GiB dissolve "$dense" --by state_fips \
    --aggregate count -o "$work/sw.gpkg") &&
  passes=$(peak "$work/sp.out" --memory 8MiB dissolve "$dense" --by state_fips \
    --aggregate count -o "$work/sp.gpkg"); then
  load "$work/sw.gpkg" dense_whole && load "$work/sp.gpkg" dense_passes
  differ=$(q "SELECT count(*) FROM dense_whole w FULL JOIN dense_passes p USING (state_fips)
              WHERE w.count IS DISTINCT FROM p.count")
  n=$(q "SELECT count(*) FROM dense_passes")
  [ "$n" = "$groups_pg" ] && [ "$differ" = "0" ] &&
    pass "densified, in passes at --memory 8MiB: the $n groups of one pass, same counts" ||
    fail "densified, in passes: $n groups (PostGIS $groups_pg), $differ differ from one pass"
  compare_unions "densified, in passes vs one pass" dense_whole dense_passes state_fips
  npasses=$(sed -n "s/^dissolve: the groups did not fit the operation's share of --memory: \([0-9]*\) passes.*/\1/p" \
    "$work/sp.out")
  if [ -n "$npasses" ] && [ "$npasses" -gt 1 ] && [ "$passes" -lt "$whole" ]; then
    pass "peak RSS $passes KiB in $npasses passes < $whole KiB in one pass (a few rows: $base KiB)"
  else
    fail "densified in passes: peak RSS $passes KiB, one pass $whole KiB, passes '$npasses';" \
      "$(grep '^dissolve' "$work/sp.out")"
  fi
  # At --memory 4MiB (a 2 MiB share) Texas and Alaska are over the share: each is dissolved in
  # spatial chunks (passes over runs of cells along a Hilbert curve of its extent), carrying each
  # chunk's partial union to its last pass; Alaska's pieces outgrow the room left beside a chunk
  # and are merged on the way. The result is still that of one pass.
  chunked=$(peak "$work/sc.out" --memory 4MiB dissolve "$dense" --by state_fips \
    --aggregate count -o "$work/sc.gpkg") && load "$work/sc.gpkg" dense_chunked
  nchunks=$(sed -n 's/^dissolve: \([0-9]*\) of the passes took spatial chunks.*/\1/p' "$work/sc.out")
  merges=$(sed -n 's/^dissolve: .*, \([0-9]*\) times merged on the way.*/\1/p' "$work/sc.out")
  differ=$(q "SELECT count(*) FROM dense_whole w FULL JOIN dense_chunked c USING (state_fips)
              WHERE w.count IS DISTINCT FROM c.count")
  [ -n "$nchunks" ] && [ "$nchunks" -gt 1 ] && [ -n "$merges" ] && [ "$merges" -ge 1 ] &&
    [ "$differ" = "0" ] &&
    pass "groups over a 2 MiB share in $nchunks spatial-chunk passes, carried pieces merged" \
      "$merges time(s): the groups of one pass (peak RSS $chunked KiB)" ||
    fail "spatial chunks: '$nchunks' chunk passes, $differ groups differ; $(tail -n 2 "$work/sc.out")"
  compare_unions "densified, in spatial chunks vs one pass" dense_whole dense_chunked state_fips
  # Components need a group's pieces apart: with --touching the same group is refused up front.
  g --memory 4MiB dissolve "$dense" --by state_fips --touching -o "$work/sr.gpkg" \
    >"$work/sr.out" 2>&1
  rc=$?
  [ $rc -eq 9 ] && grep -q 'one group (or groups whose --by values share a hash bucket)' \
    "$work/sr.out" && [ ! -e "$work/sr.gpkg" ] &&
    pass "--touching, a group over the share is refused up front (exit 9, nothing written)" ||
    fail "--touching, a group over the share: exit $rc, $(tail -n 1 "$work/sr.out")"
else
  fail "densified dissolve: $(tail -n 3 "$work/ogr.err" "$work/sb.out" "$work/sw.out" "$work/sp.out" 2>/dev/null)"
fi

# 2. A table output: one commit; a re-run of the same dissolve adds nothing.
records() {
  g describe "$1" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])' 2>/dev/null
}
if g dissolve "$counties" --by state_fips -o geo.states >"$work/t1.out" 2>&1; then
  n=$(records geo.states)
  [ "$n" = "$groups_pg" ] && pass "table output holds $n groups" ||
    fail "table output holds '$n' rows, PostGIS groups $groups_pg"
  g dissolve "$counties" --by state_fips -o geo.states >"$work/t2.out" 2>&1
  rc=$?
  n2=$(records geo.states)
  [ $rc -eq 0 ] && [ "$n2" = "$n" ] && pass "a re-run adds nothing ($n2 rows)" ||
    fail "re-run: exit $rc, $n2 rows (was $n): $(tail -n 2 "$work/t2.out")"
else
  fail "dissolve into a table: $(tail -n 3 "$work/t1.out")"
fi

# 3. Bad arguments are exit 2; a missing input is exit 3 (not found).
expect_exit() {  # expect_exit CODE WHAT ARGS...
  local code="$1" what="$2"
  shift 2
  g dissolve "$@" >"$work/bad.out" 2>&1
  local rc=$?
  [ $rc -eq "$code" ] && pass "$what: exit $code ($(head -n 1 "$work/bad.out"))" ||
    fail "$what: exit $rc, wanted $code: $(head -n 2 "$work/bad.out")"
}
expect_exit 2 "unknown aggregate" "$counties" -o "$work/x.csv" --aggregate median:geoid
expect_exit 2 "sum of a text column" "$counties" -o "$work/x.csv" --aggregate sum:name
expect_exit 2 "unknown --by column" "$counties" -o "$work/x.csv" --by nope
expect_exit 2 "negative precision" "$counties" -o "$work/x.csv" --precision -1
expect_exit 2 "--shard" "$counties" -o "$work/x.csv" --shard 0/2
expect_exit 2 "no output" "$counties"
expect_exit 3 "missing input table" geo.no_such_table -o "$work/x.csv"
expect_exit 3 "missing input file" "$work/none.gpkg" -o "$work/x.csv"
[ ! -e "$work/x.csv" ] && pass "no output file after the refusals" ||
  fail "an output file was left after a refused dissolve"

# 4. SIGINT stops a long dissolve within 2 s with exit 130 (every 10m country in one group:
# not a coverage, so the overlay union runs for seconds). geolake itself in the background,
# not the g function, so that the signal goes to geolake.
"$bin" --warehouse "$wh" --progress off dissolve "$data/ne_countries_10m.gpkg" \
  -o geo.world >"$work/int.out" 2>&1 &
pid=$!
sleep 3
kill -INT $pid 2>/dev/null
t0=$(date +%s%N)
wait $pid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 130 ] && [ $ms -le 2000 ]; then
  pass "SIGINT: exit 130 after $ms ms"
else
  fail "SIGINT: exit $rc after $ms ms: $(tail -n 2 "$work/int.out")"
fi
[ -z "$(records geo.world)" ] || [ "$(records geo.world)" = "0" ] &&
  pass "nothing committed by the stopped dissolve" ||
  fail "the stopped dissolve committed $(records geo.world) rows"

# 5. Two dissolves into one new table at once: one copy of the groups.
for i in 1 2; do
  g dissolve "$counties" --by state_fips -o geo.twice >"$work/c$i.out" 2>&1 &
done
wait
n=$(records geo.twice)
[ "$n" = "$groups_pg" ] && pass "two concurrent dissolves: $n rows, one copy" ||
  fail "two concurrent dissolves: '$n' rows, PostGIS groups $groups_pg ($(tail -n 1 "$work/c1.out") | $(tail -n 1 "$work/c2.out"))"

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
