#!/usr/bin/env bash
# A table found by its folder alone (Iceberg's Hadoop convention, as icebird and DuckDB's
# iceberg_scan on a folder read it): after each commit, metadata/version-hint.text names N and
# metadata/v<N>.metadata.json is the catalog's current metadata, byte for byte, so icebird
# given ONLY the table folder reads every committed row. Checked after create, two appends and
# a remove-orphans run; a stale hint left by a crash is never followed past the newest version.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
needs_data us_states.gpkg
needs_oracles
[ -e "$oracles/read_by_folder.mjs" ] ||
  skip oracles "$oracles/read_by_folder.mjs not found (run scripts/install-deps.sh)"
gl() { "$bin" --warehouse "$work/wh" "$@"; }

table="$work/wh/geo/states"
meta="$table/metadata"

# by_folder: "N ROWS" as icebird sees the table from its folder, or "bad: <error>".
by_folder() {
  if node "$oracles/read_by_folder.mjs" "$table" >"$work/f.json" 2>"$work/f.err"; then
    local v rows
    v=$(sed -n 's/.*"discovered_version": "v\{0,1\}\([0-9]*\)".*/\1/p' "$work/f.json")
    rows=$(sed -n 's/.*"rows": \([0-9]*\).*/\1/p' "$work/f.json")
    echo "$v $rows"
  else
    echo "bad: $(head -c 300 "$work/f.err")"
  fi
}
# newest: the highest-numbered NNNNN-<uuid>.metadata.json (the catalog's current one).
newest() { ls "$meta" | grep -E '^[0-9]{5}-.*\.metadata\.json$' | sort | tail -n1; }
# same_as_current N: v<N>.metadata.json is the newest catalog metadata file, byte for byte.
same_as_current() { cmp -s "$meta/v$1.metadata.json" "$meta/$(newest)"; }

gl create geo.states --from "$data/us_states.gpkg" --partition none >/dev/null || fail "create"
hint=$(cat "$meta/version-hint.text")
[ -n "$hint" ] && same_as_current "$hint" &&
  pass "create: hint $hint names v$hint.metadata.json, the current metadata" ||
  fail "create: hint '$hint', files: $(ls "$meta" | paste -sd' ')"

# append_and_check I WHAT: append the 56 states once more as states-I.parquet; icebird, given
# the folder alone, must then find the newest version (the hint) and read every row so far.
expected=0
append_and_check() {
  gl convert "$data/us_states.gpkg" "$table/data/states-$1.parquet" >/dev/null || fail "convert $1"
  gl append geo.states "$table/data/states-$1.parquet" >/dev/null || fail "append $1"
  expected=$((expected + 56))
  hint=$(cat "$meta/version-hint.text")
  got=$(by_folder)
  [ "$got" = "$hint $expected" ] && same_as_current "$hint" &&
    pass "$2: icebird by folder alone finds v$hint and reads $expected rows" ||
    fail "$2: by folder: '$got', want '$hint $expected'"
}
for i in 1 2; do append_and_check "$i" "append $i"; done

# remove-orphans keeps every v<N> name of a kept version (they are part of the version).
gl remove-orphans geo.states --older-than 0s --no-running-writers >/dev/null || fail "remove-orphans"
got=$(by_folder)
[ "$got" = "$hint $expected" ] && pass "after remove-orphans: still v$hint, $expected rows" ||
  fail "after remove-orphans: by folder: '$got'"

# A hint one past the newest version (as a crash between two writes could never leave, but a
# hand edit could) finds no file: icebird fails loudly instead of reading a wrong version, and
# the next commit writes a correct hint again.
echo $((hint + 5)) >"$meta/version-hint.text"
got=$(by_folder)
case "$got" in bad:*) pass "a hint past the newest version is an error, not a wrong read" ;;
  *) fail "hint past the newest version read: '$got'" ;; esac
append_and_check 3 "the next commit repairs the hint"

echo "passed=$passed failed=$failed"
[ "$failed" = 0 ]
