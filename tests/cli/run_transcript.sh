#!/usr/bin/env bash
# Run one golden CLI transcript and compare. Usage: run_transcript.sh BIN_DIR FILE.txt
#
# Transcript format, one case after another:
#   $ geolake ARGS...     the command (run by bash in a fresh temp dir, `geolake` from BIN_DIR)
#   > text                an expected stdout line (all stdout lines, in order; none = no stdout)
#   ! text                the expected FIRST stderr line (omit = stderr not checked)
#   ? N                   the expected exit code (required, ends the case)
# Lines starting with # and blank lines are ignored, except `#needs KIND PATH` (KIND: data,
# oracles or shared): when PATH is missing under that folder the whole file is skipped with a
# `[skip:KIND]` reason and exit code 77 (docs/testing.md). `@DATA@` in a command expands to
# $GEOLAKE_DATA_DIR, `@SHARED@` to $GEOLAKE_SHARED_DIR and `@SRC@` to the repository root.
# Files that use @DATA@ need the real datasets: without $GEOLAKE_DATA_DIR/us_states.gpkg they
# are skipped too.
set -uo pipefail
bin_dir="$1"; file="$2"
src_dir="$(cd "$(dirname "$0")/../.." && pwd)"
data_dir="${GEOLAKE_DATA_DIR:-$src_dir/build/data}"
oracles_dir="${GEOLAKE_ORACLES_DIR:-$src_dir/build/oracles}"
shared_dir="${GEOLAKE_SHARED_DIR:-$src_dir/../shared}"
skip() { echo "$(basename "$file"): [skip:$1] $2 not found ($3)"; exit 77; }
while read -r _ kind path; do
  case "$kind" in
    data) [ -e "$data_dir/$path" ] || skip data "$data_dir/$path" "run scripts/fetch-data.sh" ;;
    oracles) [ -e "$oracles_dir/$path" ] || skip oracles "$oracles_dir/$path" "run scripts/install-deps.sh" ;;
    shared) [ -e "$shared_dir/$path" ] || skip shared "$shared_dir/$path" "present only on development and CI machines" ;;
    *) echo "bad #needs line in $file: $kind $path"; exit 2 ;;
  esac
done < <(grep '^#needs ' "$file")
if grep -q '@DATA@' "$file" && [ ! -s "$data_dir/us_states.gpkg" ]; then
  skip data "$data_dir/us_states.gpkg" "run scripts/fetch-data.sh"
fi
export PATH="$bin_dir:$PATH"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

failures=0; cases=0
cmd=""; want_out=(); want_err=""; have_err=0
run_case() {
  local want_code="$1"
  cases=$((cases + 1))
  local expanded="${cmd//@DATA@/$data_dir}"; expanded="${expanded//@SRC@/$src_dir}"
  expanded="${expanded//@SHARED@/$shared_dir}"
  (cd "$work" && bash -c "$expanded" >"$work/.out" 2>"$work/.err" </dev/null)
  local code=$?
  local got_out; got_out="$(cat "$work/.out")"
  local exp_out=""; if [ ${#want_out[@]} -gt 0 ]; then exp_out="$(printf '%s\n' "${want_out[@]}")"; fi
  local got_err; got_err="$(head -n 1 "$work/.err")"
  local bad=""
  [ "$code" = "$want_code" ] || bad+=" exit code $code, want $want_code;"
  [ "$got_out" = "$exp_out" ] || bad+=" stdout differs;"
  if [ $have_err = 1 ] && [ "$got_err" != "$want_err" ]; then bad+=" stderr differs;"; fi
  if [ -n "$bad" ]; then
    failures=$((failures + 1))
    echo "FAIL: \$ $cmd:$bad"
    if [ "$got_out" != "$exp_out" ]; then diff <(echo "$exp_out") <(echo "$got_out") | head -20; fi
    if [ $have_err = 1 ] && [ "$got_err" != "$want_err" ]; then
      echo "  stderr want: $want_err"; echo "  stderr got:  $got_err"
    fi
  fi
  cmd=""; want_out=(); want_err=""; have_err=0
}

while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    '$ '*) cmd="${line#\$ }" ;;
    '> '*|'>') want_out+=("${line#> }"); [ "$line" = ">" ] && want_out[-1]="" ;;
    '! '*) want_err="${line#! }"; have_err=1 ;;
    '? '*) run_case "${line#\? }" ;;
    '#'*|'') ;;
    *) echo "bad transcript line: $line"; exit 2 ;;
  esac
done <"$file"
echo "$(basename "$file"): $((cases - failures)) passed, $failures failed"
[ $failures = 0 ]
