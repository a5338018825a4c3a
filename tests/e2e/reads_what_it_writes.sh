#!/usr/bin/env bash
# geolake reads every file it writes (docs/cli.md "create", "ingest"): GeoParquet that
# `convert`, `query -o parquet`, a table's own data files and DuckDB (another writer) wrote is a
# source for `create --from` (through geolake's Parquet reader, not GDAL), `ingest --create`,
# `ingest` into an existing table and `append`. The layout columns such a file carries
# (geo_cell, geo_hilbert) are recomputed for the target table: another partitioning and CRS
# give that table's cells and coordinates. Row counts equal ogrinfo's for the GeoPackage the
# chain started from. Also the failure paths: a --layer a GeoParquet file does not have, a
# Parquet file that is not GeoParquet.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"

needs_data us_counties.gpkg
needs_oracles
src="$data/us_counties.gpkg"
wh="$work/wh"
g() { "$bin" --warehouse "$wh" "$@"; }
# json FILE EXPR: a JavaScript expression over the parsed JSON object `j`.
json() { node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(eval(process.argv[2]))' "$1" "$2"; }
# records TABLE: the current snapshot's record count.
records() { g describe "$1" --json >"$work/d.json" 2>/dev/null && json "$work/d.json" 'j.records'; }
# schema TABLE: "name:type" of every column, in order (ids included).
schema() {
  g describe "$1" --json >"$work/d.json" 2>/dev/null &&
    json "$work/d.json" 'j.schema.fields.map(f => f.id + ":" + f.name + ":" + JSON.stringify(f.type)).join(" ")'
}
want=$(ogrinfo -ro -so -al "$src" | sed -n 's/^Feature Count: //p')

# 1. convert -> create --from (our reader) -> append, and the same table as from the GeoPackage.
g convert "$src" "$work/c.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "convert: $(head -n 1 "$work/err.txt")"
if g create t.c --from "$work/c.parquet" --partition none >/dev/null 2>"$work/err.txt"; then
  pass "create --from c.parquet (convert's output)"
else
  fail "create --from c.parquet: $(head -n 1 "$work/err.txt")"
fi
g create t.gpkg --from "$src" --partition none >/dev/null 2>&1
a=$(schema t.c) b=$(schema t.gpkg)
[ -n "$a" ] && [ "$a" = "$b" ] && pass "create --from c.parquet gives the schema create --from the .gpkg gives" ||
  fail "schemas differ: from parquet [$a], from gpkg [$b]"
g append t.c "$work/c.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "append c.parquet: $(head -n 1 "$work/err.txt")"
n=$(records t.c)
[ "$n" = "$want" ] && pass "convert -> create --from -> append: $n rows = ogrinfo" ||
  fail "convert -> create --from -> append: $n rows, ogrinfo $want"

# 2. convert -> ingest --create, and into the table create --from made (default partition).
if g ingest t.c2 "$work/c.parquet" --create --partition quadkey:2 >/dev/null 2>"$work/err.txt"; then
  n=$(records t.c2)
  [ "$n" = "$want" ] && pass "convert -> ingest --create: $n rows" || fail "ingest --create: $n rows, want $want"
  grep -q "dropped" "$work/err.txt" && fail "ingest warned: $(grep dropped "$work/err.txt")" ||
    pass "ingest --create: no field reported dropped (geo_hilbert is recomputed)"
else
  fail "ingest --create c.parquet: $(head -n 1 "$work/err.txt")"
fi
g create t.c3 --from "$work/c.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "create --from c.parquet (default partition): $(head -n 1 "$work/err.txt")"
g ingest t.c3 "$work/c.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "ingest into t.c3: $(head -n 1 "$work/err.txt")"
n=$(records t.c3)
[ "$n" = "$want" ] && pass "convert -> create --from -> ingest: $n rows" ||
  fail "convert -> create --from -> ingest: $n rows, want $want"

# 3. query --format parquet -> ingest --create; with the layout columns asked for as well.
g query t.c2 --format parquet -o "$work/q.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "query --format parquet: $(head -n 1 "$work/err.txt")"
[ "$(head -c 4 "$work/q.parquet")" = PAR1 ] || fail "query --format parquet wrote no Parquet file"
if g ingest t.q "$work/q.parquet" --create >/dev/null 2>"$work/err.txt"; then
  n=$(records t.q)
  [ "$n" = "$want" ] && pass "query -o parquet -> ingest --create: $n rows" ||
    fail "query -o parquet -> ingest: $n rows, want $want"
  a=$(schema t.q) b=$(schema t.c3)
  [ -n "$a" ] && [ "$a" = "$b" ] && pass "the query's output makes the table the converted file makes" ||
    fail "schemas differ: from query [$a], from convert [$b]"
else
  fail "ingest q.parquet: $(head -n 1 "$work/err.txt")"
fi
# The table's own geo_cell (quadkey:2) and geo_hilbert asked for: carried as attributes, then
# recomputed by a table partitioned quadkey:3.
cols=$(g describe t.c2 --json >"$work/d.json" 2>/dev/null &&
  json "$work/d.json" 'j.schema.fields.filter(f => f.type !== "binary" && f.name !== "bbox").map(f => f.name).join(",")')
if g query t.c2 --format parquet --columns "$cols" -o "$work/q2.parquet" >/dev/null 2>"$work/err.txt" &&
  g ingest t.q2 "$work/q2.parquet" --create --partition quadkey:3 >/dev/null 2>"$work/err.txt"; then
  n=$(records t.q2)
  g files t.q2 --json >"$work/files_q2.json" 2>/dev/null
  cells=$(json "$work/files_q2.json" '[...new Set(j.files.map(f => f.partition.geo_cell))].filter(c => c !== null).sort().join(" ")')
  [ "$n" = "$want" ] && [ -n "$cells" ] && ! grep -qvE '^[0-3]{3}$' < <(tr ' ' '\n' <<<"$cells") &&
    pass "query --columns ...,geo_cell,geo_hilbert -> ingest quadkey:3: $n rows, cells recomputed" ||
    fail "query with layout columns -> ingest: $n rows (want $want), cells [$cells]"
else
  fail "query --columns $cols -> ingest: $(head -n 1 "$work/err.txt")"
fi

# 4. A table's own data files (geo_cell of quadkey:2, geo_hilbert) -> a table partitioned by
# S2 level 3 in EPSG:3857: its cells are S2 tokens, its coordinates metres.
g files t.c2 --json >"$work/files.json" 2>/dev/null
mapfile -t data_files < <(json "$work/files.json" 'j.files.map(f => f.path).join("\n")')
cells=$(json "$work/files.json" '[...new Set(j.files.map(f => f.partition.geo_cell))].sort().join(" ")')
echo "t.c2 cells: $cells"
if g ingest t.d "${data_files[@]}" --create --partition s2:3 --crs EPSG:3857 >/dev/null 2>"$work/err.txt"; then
  n=$(records t.d)
  [ "$n" = "$want" ] && pass "${#data_files[@]} data files of t.c2 -> ingest --create: $n rows" ||
    fail "data files -> ingest: $n rows, want $want"
  g files t.d --json >"$work/files_d.json" 2>/dev/null
  d_cells=$(json "$work/files_d.json" '[...new Set(j.files.map(f => f.partition.geo_cell))].sort().join(" ")')
  # quadkey:2 cells are two digits 0-3; S2 tokens of level 3 are hex and never two such digits.
  if [ -n "$d_cells" ] && ! grep -qE '(^| )[0-3]{2}( |$)' <<<"$d_cells"; then
    pass "geo_cell recomputed for s2:3: $d_cells"
  else
    fail "t.d cells [$d_cells] look like t.c2's [$cells]"
  fi
  g describe t.d --json >"$work/d.json" 2>/dev/null
  xmin=$(json "$work/d.json" 'j.bbox[0]')
  awk -v x="$xmin" 'BEGIN { exit !(x < -1e7) }' && pass "reprojected to EPSG:3857: bbox xmin $xmin m" ||
    fail "t.d bbox xmin $xmin: not metres"
else
  fail "ingest data files: $(head -n 1 "$work/err.txt")"
fi

# 5. DuckDB's GeoParquet (another writer), including columns named like the layout's.
mkdir -p "$work/duck"
ln -s "$oracles/node_modules" "$work/duck/node_modules"
cat >"$work/duck/w.mjs" <<'EOF'
import { DuckDBInstance } from '@duckdb/node-api';
const db = await (await DuckDBInstance.create(':memory:')).connect();
await db.run(`COPY (SELECT i::bigint AS id, 'p' || i AS name,
  ('POINT(' || (-120 + i % 50) || ' ' || (30 + i // 50) || ')')::GEOMETRY AS geometry,
  'x' AS geo_cell, i * 3 AS geo_hilbert
  FROM range(1000) t(i)) TO '${process.argv[2]}' (FORMAT parquet)`);
await db.run(`COPY (SELECT i AS id FROM range(3) t(i)) TO '${process.argv[3]}' (FORMAT parquet)`);
EOF
if node "$work/duck/w.mjs" "$work/duck.parquet" "$work/plain.parquet" 2>"$work/err.txt"; then
  g create t.duck --from "$work/duck.parquet" --partition quadkey:3 >/dev/null 2>"$work/err.txt" &&
    g ingest t.duck "$work/duck.parquet" >/dev/null 2>>"$work/err.txt" &&
    [ "$(records t.duck)" = 1000 ] && pass "DuckDB GeoParquet -> create --from -> ingest: 1000 rows" ||
    fail "DuckDB GeoParquet: $(head -n 1 "$work/err.txt")"
  g files t.duck --json >"$work/files_duck.json" 2>/dev/null
  cells=$(json "$work/files_duck.json" '[...new Set(j.files.map(f => f.partition.geo_cell))].sort().join(" ")')
  [ -n "$cells" ] && ! grep -qvE '^[0-3]{3}$' < <(tr ' ' '\n' <<<"$cells") &&
    pass "DuckDB's geo_cell ('x') is recomputed as quadkey:3 cells: $cells" ||
    fail "t.duck cells: [$cells]"
else
  fail "DuckDB could not write GeoParquet: $(head -n 1 "$work/err.txt")"
fi

# 6. Failure paths.
g create t.bad --from "$work/c.parquet" --layer counties >/dev/null 2>"$work/err.txt"
code=$?
[ $code = 3 ] && grep -q "one unnamed layer" "$work/err.txt" &&
  pass "create --from X.parquet --layer NAME: exit 3, $(head -n 1 "$work/err.txt")" ||
  fail "create --layer on GeoParquet: exit $code, $(head -n 1 "$work/err.txt")"
if [ -s "$work/plain.parquet" ]; then
  g create t.bad --from "$work/plain.parquet" >/dev/null 2>"$work/err.txt"
  code=$?
  [ $code = 2 ] && grep -q "not GeoParquet" "$work/err.txt" &&
    pass "create --from a plain Parquet file: exit 2, $(head -n 1 "$work/err.txt")" ||
    fail "create --from plain.parquet: exit $code, $(head -n 1 "$work/err.txt")"
fi

echo "passed: $passed, failed: $failed"
[ "$failed" = 0 ]
