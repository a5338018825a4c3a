# Helpers the ops benchmarks share (bench/ops/*.sh source this). Times are seconds as text; a
# peer that did not finish is ">T" and one that failed is any other non-number.

# faster A B: A < B (both numbers).
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# ratio PEER GEOLAKE: PEER / GEOLAKE to two places (> 1: geolake faster); ">R" when the peer did
# not finish in its timeout; "-" when either side has no time.
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (b !~ /^[0-9]/ || b <= 0) { print "-"; exit }
    if (a ~ /^>/) { printf ">%.1f", substr(a, 2) / b; exit }
    if (a !~ /^[0-9]/) { print "-"; exit }
    printf "%.2f", a / b }'
}

# at_least RATIO TARGET: a ratio (as ratio prints it) that reaches TARGET.
at_least() { awk -v r="${1#>}" -v t="$2" 'BEGIN { exit !(r != "-" && r + 0 >= t) }'; }

# stop_stuck_statement URI FILTER: a statement past its timeout that is still running, in the
# PostgreSQL at URI, where FILTER (a WHERE condition on pg_stat_activity) picks it out. PostGIS
# passes a cancel on to GEOS, but GEOS checks for it only in some loops (its make-valid of a
# 1.2M-vertex polygon ran ~8 min past a 600 s statement_timeout, holding a lock that blocked the
# next DROP TABLE). Cancel it; if it is still there 10 s later, kill that backend by its pid
# (the postmaster then restarts its backends: crash recovery of a throwaway server) and wait
# until the server takes queries again. Fails when the server does not come back.
stop_stuck_statement() {
  local uri="$1" from="FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND ($2)" pids p
  psql "$uri" -q -At -c "SELECT pg_cancel_backend(pid) $from" >/dev/null || true
  for _ in $(seq 1 10); do
    pids="$(psql "$uri" -q -At -c "SELECT pid $from")"
    [ -n "$pids" ] || return 0
    sleep 1
  done
  echo "# a PostgreSQL backend ignored the cancel: killing pid $pids (server restarts its backends)" >&2
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  for _ in $(seq 1 120); do
    psql "$uri" -q -At -c "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "# PostgreSQL did not come back after killing a backend" >&2
  return 1
}
