# Sourced by the e2e scripts (tests/e2e/*.sh, run as `bash FILE GEOLAKE_BIN`): strict mode,
# the program under test ($bin), the real data ($data), oracle ($oracles) and optional shared
# ($shared) folders from ctest's environment (docs/testing.md), a scratch folder ($work)
# removed on exit, pass/fail counters, and the skip rule: a script whose input is missing calls
# needs_data / needs_oracles / needs_shared, which print a `[skip:...]` reason and exit 77
# (ctest's SKIP_RETURN_CODE for these tests), so a missing input is neither a pass nor a failure.
set -uo pipefail
bin="$1"
here_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
data="${GEOLAKE_DATA_DIR:-$here_dir/build/data}"
oracles="${GEOLAKE_ORACLES_DIR:-$here_dir/build/oracles}"
shared="${GEOLAKE_SHARED_DIR:-$here_dir/../shared}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# skip TAG REASON: end the script as skipped.
skip() { echo "[skip:$1] $2"; exit 77; }
# needs_data NAME...: each DATA/NAME must exist (scripts/fetch-data.sh writes them).
needs_data() {
  local name
  for name in "$@"; do
    [ -s "$data/$name" ] ||
      skip data "$data/$name not found (GEOLAKE_DATA_DIR; run scripts/fetch-data.sh)"
  done
}
# needs_oracles: the verify scripts and their npm packages (scripts/install-deps.sh) and node.
needs_oracles() {
  command -v node >/dev/null || skip oracles "node not found (run scripts/install-deps.sh)"
  local name
  for name in verify_parquet.mjs verify_iceberg.mjs node_modules/@duckdb/node-api; do
    [ -e "$oracles/$name" ] ||
      skip oracles "$oracles/$name not found (GEOLAKE_ORACLES_DIR; run scripts/install-deps.sh)"
  done
}
# needs_shared PATH: SHARED/PATH must exist (third-party files only development and CI have).
needs_shared() {
  [ -e "$shared/$1" ] ||
    skip shared "$shared/$1 not found (GEOLAKE_SHARED_DIR; present only on development and CI machines)"
}
# peak_kib OUT CMD...: runs CMD with its output (stdout and stderr) in OUT, prints its peak RSS
# in KiB (GNU time's %M); fails, printing nothing, when CMD fails.
peak_kib() {
  local out="$1"; shift
  /usr/bin/time -f '%M' -o "$work/peak_kib.rss" "$@" >"$out" 2>&1 || return 1
  tail -n 1 "$work/peak_kib.rss"
}
