#!/usr/bin/env bash
# Print what the last ctest run in BUILD_DIR skipped, and why: the number of skipped tests per
# reason tag ([skip:data], [skip:oracles], [skip:shared]; docs/testing.md), then each skipped
# test with its first reason line. A skip without a tag is listed as "untagged" so that it
# gets one. `make test` and .ci/run call this after ctest. It fails (exit 1) only when
# GEOLAKE_FAIL_ON_SKIP names tags (e.g. "postgres,data") and a test printed one of them: CI sets
# it, so a comparison that silently stopped running (a package missing) fails the build.
#
# Usage: [GEOLAKE_FAIL_ON_SKIP=TAG,...] tests/skip_summary.sh BUILD_DIR
set -uo pipefail
GEOLAKE_FAIL_ON_SKIP="${GEOLAKE_FAIL_ON_SKIP:-}"
log="${1:?usage: skip_summary.sh BUILD_DIR}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skip summary: no ctest log at $log"; exit 0; }
awk '
  function flush() {
    if (name != "" && skipped) {
      n++; tag = (reason == "" ? "untagged" : reason_tag)
      count[tag]++
      line[n] = sprintf("  %-60s %s", name, reason == "" ? "(no [skip:...] reason printed)" : reason)
    }
    name = ""; skipped = 0; reason = ""; reason_tag = ""
  }
  /^[0-9]+\/[0-9]+ Test: / { flush(); name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); next }
  name != "" && /\[skip:[a-z]+\]/ {
    skipped = 1
    if (reason == "") {
      reason = $0; sub(/^.*\[skip:/, "[skip:", reason)
      reason_tag = reason; sub(/^\[skip:/, "", reason_tag); sub(/\].*$/, "", reason_tag)
    }
  }
  name != "" && (/^\[  SKIPPED \]/ || /^Test Skipped/ || /Skipped: /) { skipped = 1 }
  END {
    flush()
    if (n == 0) { print "skip summary: no test was skipped"; exit }
    summary = ""
    for (t in count) summary = summary sprintf("%s%s %d", summary == "" ? "" : ", ", t, count[t])
    printf "skip summary: %d tests skipped (%s)\n", n, summary
    for (i = 1; i <= n; i++) print line[i]
  }
' "$log"
status=0
for tag in ${GEOLAKE_FAIL_ON_SKIP//,/ }; do
  if grep -q "\[skip:$tag\]" "$log"; then
    echo "skip summary: FAIL: [skip:$tag] is not allowed here (GEOLAKE_FAIL_ON_SKIP=$GEOLAKE_FAIL_ON_SKIP)"
    status=1
  fi
done
exit $status
