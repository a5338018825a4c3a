#!/usr/bin/env bash
# Issue 17: many random bad inputs of each kind, from a fixed seed, through `geolake ingest`
# and `geolake append`. Small clean sources are cut from build/data (40 US counties as
# GeoPackage with an added MEDIUMINT column, FlatGeobuf, GeoJSONSeq, CSV with WKT, Shapefile;
# a GeoParquet file for append); each case damages one copy: a truncation, byte flips, text
# that is not UTF-8, NaN/Inf coordinates, malformed GeoJSONSeq or CSV lines, a number SQLite
# would coerce, a shapefile without its .dbf. After every case:
#   - the command ended with a clean error (exit 2, 3, 5, 6, 9) or succeeded (0); never an
#     internal error (1), a crash (>= 128) or a commit conflict;
#   - the metrics (--metrics-json) balance: rows read = committed + rejected on success, and
#     the table grew by exactly the rows committed (nothing for a failed append);
#   - `geolake query` reads the whole table, and verify_iceberg.mjs (icebird, avsc, DuckDB)
#     loads it without a problem (when the case changed it; an unchanged table was verified).
# verify_iceberg.mjs (about 1.5 s a call) runs after every case that changed the table and once
# per table at the end; `geolake query` after every case.
# FUZZ_SEED (default 17) and FUZZ_CASES (cases per kind of damage, default 2) pick the cases; a
# failing case prints its kind, file and seed, and FUZZ_KEEP=DIR keeps the inputs.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_counties.gpkg
needs_oracles
seed="${FUZZ_SEED:-17}"
per_kind="${FUZZ_CASES:-2}"
wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }
# metrics3 FILE: rows_read rows_committed rows_rejected of a --metrics-json report (-1 each
# when there is none).
metrics3() {
  python3 -c 'import json,sys
try:
    c = json.load(open(sys.argv[1]))["counters"]
    print(c.get("rows_read", -1), c.get("rows_committed", -1), c.get("rows_rejected", -1))
except Exception: print(-1, -1, -1)' "$1"
}
# records TABLE: the current snapshot's record count (0 without one).
records() {
  gl describe "$1" --json >"$work/d.json" 2>/dev/null &&
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("records") or 0)' "$work/d.json"
}

# ---- clean sources: 40 counties in every format --------------------------------------------
base="$work/base"
mkdir -p "$base" "$work/cases"
# No R-tree: its triggers call GDAL's SQL functions, which Python's sqlite3 does not have.
ogr2ogr -f GPKG "$base/c.gpkg" "$data/us_counties.gpkg" -limit 40 -nln counties \
  -lco SPATIAL_INDEX=NO 2>/dev/null &&
  python3 - "$base/c.gpkg" <<'EOF' || fail "cannot make the clean GeoPackage"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("ALTER TABLE counties ADD COLUMN pop MEDIUMINT")
db.execute("UPDATE counties SET pop = fid * 1000")
db.commit()
EOF
ogr2ogr -f FlatGeobuf "$base/c.fgb" "$base/c.gpkg" 2>/dev/null || fail "cannot make the clean FlatGeobuf"
ogr2ogr -f GeoJSONSeq "$base/c.geojsonl" "$base/c.gpkg" 2>/dev/null || fail "cannot make the clean GeoJSONSeq"
ogr2ogr -f CSV "$base/c.csv" "$base/c.gpkg" -lco GEOMETRY=AS_WKT 2>/dev/null || fail "cannot make the clean CSV"
ogr2ogr -f "ESRI Shapefile" "$base/c.shp" "$base/c.gpkg" 2>/dev/null || fail "cannot make the clean Shapefile"
gl convert "$base/c.gpkg" "$base/c.parquet" >/dev/null 2>&1 || fail "cannot convert the clean GeoPackage"

# One table per format, created from its clean source; the append table from the Parquet file.
for fmt in gpkg fgb geojsonl csv shp; do
  gl ingest "fz.$fmt" "$base/c.$fmt" --create --partition none >/dev/null 2>"$work/err.txt" ||
    fail "clean $fmt: $(head -n 1 "$work/err.txt")"
done
gl create fz.append --from "$base/c.parquet" --partition none >/dev/null 2>&1 &&
  gl append fz.append "$base/c.parquet" >/dev/null 2>"$work/err.txt" ||
  fail "clean append: $(head -n 1 "$work/err.txt")"

# ---- the cases -------------------------------------------------------------------------------
# Each line of cases.tsv: id, command (ingest|append), table, kind, main file.
python3 - "$base" "$work/cases" "$seed" "$per_kind" >"$work/cases.tsv" <<'EOF'
import os, random, shutil, sqlite3, struct, sys
base, out, seed, per_kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
n = [0]

def new(fmt, kind):
    n[0] += 1
    return os.path.join(out, "%03d_%s.%s" % (n[0], kind, fmt)), n[0]

def emit(case_id, command, table, kind, path):
    print("%d\t%s\t%s\t%s\t%s" % (case_id, command, table, kind, path))

def read(path):
    with open(path, "rb") as f:
        return f.read()

def write(path, data):
    with open(path, "wb") as f:
        f.write(data)

def truncate(data):
    return data[: rng.randrange(1, len(data))]

def flip(data, count=None):
    b = bytearray(data)
    for _ in range(count or rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= rng.randint(1, 255)
    return bytes(b)

def latin1_in_text(data):
    # A letter inside some text replaced by Latin-1 bytes (u-umlaut, e-acute): not UTF-8.
    b = bytearray(data)
    letters = [i for i in range(len(b)) if 97 <= b[i] <= 122]
    for i in rng.sample(letters, min(3, len(letters))):
        b[i] = rng.choice([0xFC, 0xE9, 0xE8, 0xC3])
    return bytes(b)

def copy_shapefile(dst):
    stem = dst[:-4]
    for ext in ("shp", "shx", "dbf", "prj", "cpg"):
        src = os.path.join(base, "c." + ext)
        if os.path.exists(src):
            shutil.copy(src, stem + "." + ext)
    return stem

kinds = {}
# GeoJSONSeq
lines = read(os.path.join(base, "c.geojsonl")).split(b"\n")
def seq_malformed():
    ls = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(ls) - 1)
        choice = rng.randrange(6)
        if choice == 0:
            ls[i] = ls[i][: rng.randrange(1, max(2, len(ls[i])))]  # a line cut short
        elif choice == 1:
            ls.insert(i, b"this is not json")
        elif choice == 2:
            ls.insert(i, b"[1, 2, 3]")
        elif choice == 3:
            ls.insert(i, b'{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1]}, "properties": {}}')
        elif choice == 4:
            ls[i] = ls[i].replace(b"}", b"", 1)
        else:
            ls.insert(i, b'{"type": "Feature", "properties": {"name": 5}, "geometry": null}')
    return b"\n".join(ls)
def seq_nonfinite():
    ls = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(ls) - 1)
        token = rng.choice([b"NaN", b"Infinity", b"1e999", b"-1e400", b"nan"])
        j = ls[i].find(b"[ -", rng.randrange(max(1, len(ls[i]) // 2)))
        if j < 0:
            j = ls[i].find(b"[ -")
        k = ls[i].find(b",", j)
        if j >= 0 and k > j:
            ls[i] = ls[i][: j + 2] + token + ls[i][k:]
    return b"\n".join(ls)
seq = read(os.path.join(base, "c.geojsonl"))
for kind, make in (("truncate", lambda: truncate(seq)), ("flip", lambda: flip(seq)),
                   ("latin1", lambda: latin1_in_text(seq)), ("nonfinite", seq_nonfinite),
                   ("malformed", seq_malformed)):
    for _ in range(per_kind):
        path, i = new("geojsonl", kind)
        write(path, make())
        emit(i, "ingest", "fz.geojsonl", kind, path)

# CSV
csv = read(os.path.join(base, "c.csv"))
def csv_nonfinite():
    rows = csv.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(1, len(rows) - 1)
        j = rows[i].find(b"((")
        if j >= 0:
            k = rows[i].find(b" ", j)
            rows[i] = rows[i][: j + 2] + rng.choice([b"nan", b"inf", b"-inf", b"1e999"]) + rows[i][k:]
    return b"\n".join(rows)
def csv_malformed():
    rows = csv.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(1, len(rows) - 1)
        choice = rng.randrange(4)
        if choice == 0:
            rows[i] = rows[i] + b',"extra'
        elif choice == 1:
            rows[i] = rows[i][: rng.randrange(1, max(2, len(rows[i])))]
        elif choice == 2:
            rows.insert(i, b'"POLYGON ((0 0, 1 1',)
        else:
            rows.insert(i, b",,,,")
    return b"\n".join(rows)
for kind, make in (("truncate", lambda: truncate(csv)), ("flip", lambda: flip(csv)),
                   ("latin1", lambda: latin1_in_text(csv)), ("nonfinite", csv_nonfinite),
                   ("malformed", csv_malformed)):
    for _ in range(per_kind):
        path, i = new("csv", kind)
        write(path, make())
        emit(i, "ingest", "fz.csv", kind, path)

# GeoPackage: bytes, and values put in with SQL
gpkg = read(os.path.join(base, "c.gpkg"))
def gpkg_sql(path, statements):
    shutil.copy(os.path.join(base, "c.gpkg"), path)
    db = sqlite3.connect(path)
    for sql, params in statements:
        db.execute(sql, params)
    db.commit()
    db.close()
for kind in ("truncate", "flip", "latin1", "nonfinite", "coerce"):
    for _ in range(per_kind):
        path, i = new("gpkg", kind)
        fid = rng.randint(1, 40)
        if kind == "truncate":
            write(path, truncate(gpkg))
        elif kind == "flip":
            write(path, flip(gpkg, rng.randint(1, 4)))
        elif kind == "latin1":
            gpkg_sql(path, [("UPDATE counties SET name = CAST(? AS TEXT) WHERE fid = ?",
                             (b"Z\xfcrich \xe9", fid))])
        elif kind == "nonfinite":
            # The first x of the geometry's WKB (after the 8-byte header and its envelope).
            db = sqlite3.connect(os.path.join(base, "c.gpkg"))
            blob = bytearray(db.execute("SELECT GEOMETRY FROM counties WHERE fid = ?", (fid,)).fetchone()[0])
            db.close()
            envelope = [0, 32, 48, 48, 64][(blob[3] >> 1) & 7]
            # multipolygon header and count (9), polygon header (5), ring count, point count
            at = 8 + envelope + 9 + 5 + 4 + 4
            blob[at:at + 8] = struct.pack("<d", rng.choice([float("nan"), float("inf"), -float("inf")]))
            gpkg_sql(path, [("UPDATE counties SET GEOMETRY = ? WHERE fid = ?", (bytes(blob), fid))])
        else:
            gpkg_sql(path, [("UPDATE counties SET pop = ? WHERE fid = ?",
                             (rng.choice(["many", 1e30, 3.75, 5000000000, "12abc"]), fid))])
        emit(i, "ingest", "fz.gpkg", kind, path)

# FlatGeobuf
fgb = read(os.path.join(base, "c.fgb"))
for kind, make in (("truncate", lambda: truncate(fgb)), ("flip", lambda: flip(fgb))):
    for _ in range(per_kind):
        path, i = new("fgb", kind)
        write(path, make())
        emit(i, "ingest", "fz.fgb", kind, path)

# Shapefile: damage to the .shp or the .dbf, a DBF in Latin-1 without .cpg, no .dbf at all
for kind in ("truncate", "flip", "latin1", "nodbf"):
    for _ in range(per_kind):
        path, i = new("shp", kind)
        stem = copy_shapefile(path)
        if kind == "nodbf":
            os.remove(stem + ".dbf")
        else:
            target = stem + rng.choice([".shp", ".dbf"]) if kind != "latin1" else stem + ".dbf"
            data = read(target)
            if kind == "truncate":
                write(target, truncate(data))
            elif kind == "flip":
                write(target, flip(data))
            else:
                if os.path.exists(stem + ".cpg"):
                    os.remove(stem + ".cpg")
                b = bytearray(data)
                b[29] = 0  # no code page byte: GDAL cannot decode
                header = struct.unpack("<H", bytes(b[8:10]))[0]
                body = bytearray(b[header:])
                letters = [k for k in range(len(body)) if 97 <= body[k] <= 122]
                for k in rng.sample(letters, min(3, len(letters))):
                    body[k] = rng.choice([0xFC, 0xE9])
                write(target, bytes(b[:header]) + bytes(body))
        emit(i, "ingest", "fz.shp", kind, path)

# GeoParquet through append
parquet = read(os.path.join(base, "c.parquet"))
for kind, make in (("truncate", lambda: truncate(parquet)), ("flip", lambda: flip(parquet))):
    for _ in range(per_kind):
        path, i = new("parquet", kind)
        write(path, make())
        emit(i, "append", "fz.append", kind, path)
EOF
[ -s "$work/cases.tsv" ] || fail "no cases generated"

# ---- run them --------------------------------------------------------------------------------
# verify WHAT TABLE_DIR: verify_iceberg.mjs on the table's current metadata version, in the
# background (two at a time): a metadata file is written once and never changed, so later
# cases cannot disturb it, and the ~1.5 s of each call overlaps the next cases.
verify() {
  local meta
  meta="$2/metadata/v$(cat "$2/metadata/version-hint.text").metadata.json"
  verifies=$((verifies + 1))
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  (node "$oracles/verify_iceberg.mjs" "$meta" --quiet >"$work/vi.$verifies.json" 2>&1 ||
    echo "$1" >"$work/vi.$verifies.failed") &
}
verifies=0
declare -A rows_of
for table in gpkg fgb geojsonl csv shp append; do rows_of[fz.$table]=$(records "fz.$table"); done
cases=0
while IFS=$'\t' read -r id command table kind file; do
  cases=$((cases + 1))
  what="case $id ($command $kind $(basename "$file"), seed $seed)"
  before=${rows_of[$table]}
  rm -f "$work/m.json"
  if [ "$command" = ingest ]; then
    gl --metrics-json "$work/m.json" ingest "$table" "$file" >"$work/out.txt" 2>"$work/err.txt"
  else
    gl append "$table" "$file" >"$work/out.txt" 2>"$work/err.txt"
  fi
  rc=$?
  case "$rc" in
    0 | 2 | 3 | 5 | 6 | 9) ;;
    *) fail "$what: exit $rc: $(grep -v '^\[' "$work/err.txt" | tail -n 2 | tr '\n' ' ')"; continue ;;
  esac
  after=$(records "$table")
  rows_of[$table]=$after
  if [ "$command" = ingest ]; then
    read -r r c j < <(metrics3 "$work/m.json")
    if [ "$rc" = 0 ] && [ "$r" != "$((c + j))" ]; then
      fail "$what: rows read $r != committed $c + rejected $j"
    elif [ "$c" != -1 ] && [ "$((after - before))" != "$c" ]; then
      fail "$what: the table grew by $((after - before)), the run committed $c"
    elif [ "$c" = -1 ] && [ "$after" != "$before" ]; then
      fail "$what: no metrics, but the table grew by $((after - before))"
    else
      pass "$what: exit $rc, read $r = committed $c + rejected $j"
    fi
    # What each kind of damage must give when the run goes through.
    rejects="$(sed -n 's/.*journal \(.*\)\/journal.jsonl$/\1/p' "$work/out.txt")/rejects.geojsonseq"
    if [ "$rc" = 0 ]; then
      case "$kind" in
        latin1)  # replaced with a warning (rejected only where the damage broke the JSON)
          grep -q "not valid UTF-8" "$work/err.txt" || [ "$j" -gt 0 ] ||
            fail "$what: Latin-1 text neither warned about nor rejected" ;;
        coerce)
          grep -q "field 'pop'" "$rejects" 2>/dev/null ||
            fail "$what: the coerced number is not in the rejects file" ;;
        nonfinite)
          grep -q "non-finite\|unreadable" "$rejects" 2>/dev/null ||
            fail "$what: no row rejected for its NaN/Inf coordinate" ;;
        nodbf)
          grep -q "the shapefile has no .dbf" "$work/err.txt" ||
            fail "$what: no warning about the missing .dbf: $(head -c 300 "$work/err.txt")" ;;
      esac
    fi
  else
    [ "$rc" = 0 ] || [ "$after" = "$before" ] && pass "$what: exit $rc, table $before -> $after rows" ||
      fail "$what: failed append changed the table: $before -> $after"
  fi
  gl query "$table" --format csv >/dev/null 2>"$work/qerr.txt" ||
    fail "$what: query after it: $(head -n 1 "$work/qerr.txt")"
  [ "$after" != "$before" ] && verify "$what" "$wh/fz/${table#fz.}"
done <"$work/cases.tsv"
for table in gpkg fgb geojsonl csv shp append; do verify "fz.$table at the end" "$wh/fz/$table"; done
wait
for n in $(seq 1 "$verifies"); do
  if [ -e "$work/vi.$n.failed" ]; then
    fail "$(cat "$work/vi.$n.failed"): verify_iceberg: $(head -c 300 "$work/vi.$n.json")"
  fi
done
pass "$verifies verify_iceberg runs (after every case that changed a table, and at the end)"
[ -n "${FUZZ_KEEP:-}" ] && cp -r "$work/cases" "$FUZZ_KEEP"
echo "$cases cases (seed $seed, $per_kind per kind): $passed passed, $failed failed"
[ "$failed" = 0 ]
