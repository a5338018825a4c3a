# Sourced by the e2e scripts (tests/e2e/*.sh, run as `bash FILE GEOLAKE_BIN`): strict mode,
# the program under test ($bin), the real data ($data) and oracle ($oracles) folders from
# ctest's environment, a scratch folder ($work) removed on exit, and pass/fail counters.
set -uo pipefail
bin="$1"
data="${GEOLAKE_DATA_DIR:?}"
oracles="${GEOLAKE_ORACLES_DIR:?}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
