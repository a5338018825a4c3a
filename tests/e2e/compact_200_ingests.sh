#!/usr/bin/env bash
# A table built by 200 small ingests, compacted (docs/maintenance.md): the 42,555 US ZIP code
# points cut into 200 CSV parts, one ingest (one commit) each, into a quadkey:1 table, then
# `compact --strategy hilbert --target-file-size 256KiB`. Checks:
# - rows and values identical before and after (sorted rows' hash), and the oracles (icebird,
#   avsc, DuckDB) read the table after;
# - output files near the target (all but one per partition within 0.5x-1.8x of it);
# - `query --explain` of three boxes reads fewer files and fewer bytes after (printed);
# - expire-snapshots then time travel: the last ingest's snapshot, kept, still reads the rows;
# - an ingest killed (SIGKILL) midway leaves orphans that remove-orphans removes, rows unchanged.
# Skipped (exit 77) without the data or the oracles.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_zipcodes.gpkg
needs_oracles
command -v ogr2ogr >/dev/null || skip data "ogr2ogr not found (run scripts/install-deps.sh)"
wh="$work/wh"
gl() { "$bin" --warehouse "$wh" --progress off "$@"; }

parts=200
ogr2ogr -f CSV "$work/zips.csv" "$data/us_zipcodes.gpkg" -lco GEOMETRY=AS_WKT 2>/dev/null ||
  { fail "ogr2ogr to CSV"; exit 1; }
python3 - "$work/zips.csv" "$work" "$parts" <<'EOF'
import sys
src, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src, encoding="utf-8").read().splitlines()
header, rows = lines[0], lines[1:]
for k in range(parts):
    with open(f"{out}/part{k}.csv", "w", encoding="utf-8") as f:
        f.write(header + "\n" + "\n".join(rows[k::parts]) + "\n")
EOF
gl create geo.t --from "$work/part0.csv" --partition quadkey:1 --crs EPSG:4326 >/dev/null 2>"$work/create.err" ||
  { fail "create: $(head -n 1 "$work/create.err")"; exit 1; }
t0=$(date +%s)
bad=0
for ((k = 0; k < parts; k++)); do
  gl ingest geo.t "$work/part$k.csv" >/dev/null 2>"$work/ingest.err" || { bad=$((bad + 1)); cat "$work/ingest.err" >&2; }
done
content() { gl query geo.t --format csv "$@" | LC_ALL=C sort | sha256sum | cut -d' ' -f1; }
rows() { gl describe geo.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])'; }
files() { gl describe geo.t --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("data_files", d.get("files", "?")))'; }
n=$(rows)
[ $bad = 0 ] && [ "$n" = 42555 ] && pass "$parts ingests in $(($(date +%s) - t0)) s: $n rows, $(files) data files" ||
  fail "$bad of $parts ingests failed; $n rows"
before=$(content)
last_snapshot=$(gl snapshots geo.t --json | python3 -c 'import json,sys; print([s["snapshot_id"] for s in json.load(sys.stdin)["snapshots"] if s["current"]][0])')
boxes=("-100,35,-90,45" "-80,38,-75,42" "-125,30,-60,50")
explain() {  # explain BOX: "files_kept bytes_read"
  gl query geo.t --bbox "$1" --explain --json | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e["files"]["kept"], e["bytes_read"])'
}
declare -a before_explain
for b in "${boxes[@]}"; do before_explain+=("$(explain "$b")"); done

target=$((256 * 1024))
gl compact geo.t --strategy hilbert --target-file-size 256KiB >"$work/compact.out" 2>&1 ||
  fail "compact: $(tail -n 2 "$work/compact.out")"
[ "$(content)" = "$before" ] && [ "$(rows)" = "$n" ] && pass "compacted: rows and values identical ($n rows)" ||
  fail "rows or values changed by the compaction"
python3 - "$target" <<EOF >"$work/sizes" || fail "file sizes: $(cat "$work/sizes")"
import json, subprocess, sys, collections
target = int(sys.argv[1])
d = json.loads(subprocess.run(["$bin", "--warehouse", "$wh", "files", "geo.t", "--json"],
                              capture_output=True, text=True, check=True).stdout)
by_part = collections.defaultdict(list)
for f in d["files"]:
    by_part[json.dumps(f["partition"], sort_keys=True)].append(f["file_size_in_bytes"])
off = sum(max(0, sum(1 for s in sizes if not 0.5 * target <= s <= 1.8 * target) - 1)
          for sizes in by_part.values())
print(f"{len(d['files'])} files in {len(by_part)} partitions, sizes {sorted(s for v in by_part.values() for s in v)}; {off} off target beyond one per partition")
sys.exit(1 if off else 0)
EOF
pass "files near the target: $(cat "$work/sizes")"
i=0
for b in "${boxes[@]}"; do
  read -r f0 b0 <<<"${before_explain[$i]}"
  read -r f1 b1 <<<"$(explain "$b")"
  if [ "$f1" -lt "$f0" ] && [ "$b1" -lt "$b0" ]; then
    pass "box $b: files read $f0 -> $f1, bytes read $b0 -> $b1"
  else
    fail "box $b: files read $f0 -> $f1, bytes read $b0 -> $b1 (not fewer)"
  fi
  i=$((i + 1))
done
if node "$oracles/verify_iceberg.mjs" "$wh/geo/t" --quiet >"$work/ice" 2>&1 && grep -q '"ok": true' "$work/ice"; then
  pass "the oracles read the compacted table"
else
  fail "verify_iceberg: $(head -c 400 "$work/ice")"
fi

# Expire every snapshot but the last two (the compaction's and the last ingest's); time travel.
gl expire-snapshots geo.t --older-than 0s --retain-last 2 >"$work/expire.out" 2>&1 ||
  fail "expire: $(tail -n 1 "$work/expire.out")"
kept=$(gl snapshots geo.t --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]))')
[ "$kept" = 2 ] && [ "$(content --snapshot "$last_snapshot")" = "$before" ] &&
  pass "expired to $kept snapshots; the last ingest's snapshot still reads the same rows" ||
  fail "after expire: $kept snapshots; time travel to $last_snapshot: $(gl query geo.t --snapshot "$last_snapshot" --format csv 2>&1 | tail -n 1)"

# An ingest killed midway: its written, uncommitted files are orphans.
cp "$data/us_zipcodes.gpkg" "$work/big.gpkg"
"$bin" --warehouse "$wh" --progress off ingest geo.t "$work/big.gpkg" --unit-rows 2000 --commit-rows 1000000000 \
  >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
mid=$(content)
removed=$(gl remove-orphans geo.t --older-than 0s --no-running-writers 2>&1 | tail -n 1)
left=$(gl remove-orphans geo.t --older-than 0s --dry-run 2>&1 | tail -n 1)
[ "$(content)" = "$mid" ] && echo "$left" | grep -q "^would remove 0 orphan files" &&
  pass "after a killed ingest: $removed; rows unchanged, nothing left" ||
  fail "after a killed ingest: $removed; then: $left"

echo "passed $passed, failed $failed"
[ $failed -eq 0 ]
