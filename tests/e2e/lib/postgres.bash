# Sourced by e2e scripts that need a private PostgreSQL server (after lib/harness.bash).
#
# start_postgres [--optional] [--postgis]: start a server of our own on a free port under
# $work/pg (scripts/pg-test-server.sh), set $uri (its connection URI) and $pg_dir, and stop it
# when the script exits (the EXIT trap also removes $work). With --postgis the extension is
# created in the database. When the server (or PostGIS) cannot be had, the script is skipped
# (exit 77, `[skip:postgres] REASON`); with --optional the function instead prints that line,
# sets $pg_skip to the reason and returns 1, so a script can run its other parts.
start_postgres() {
  local optional=0 postgis=0 arg reason=""
  for arg in "$@"; do
    case "$arg" in
      --optional) optional=1 ;;
      --postgis) postgis=1 ;;
      *) echo "start_postgres: unknown option $arg" >&2; exit 2 ;;
    esac
  done
  if ! command -v psql >/dev/null; then
    reason="psql not found (run scripts/install-deps.sh)"
  else
    chmod o+x "$work"  # the server runs as another user and must reach $work/pg
    pg_dir="$work/pg"
    if uri=$("$here_dir/scripts/pg-test-server.sh" start "$pg_dir" 2>"$work/pg.err"); then
      trap '"$here_dir/scripts/pg-test-server.sh" stop "$pg_dir" >/dev/null 2>&1; rm -rf "$work"' EXIT
      if [ "$postgis" = 1 ] && ! psql "$uri" -q -c "CREATE EXTENSION postgis" >"$work/postgis.err" 2>&1; then
        reason="PostGIS is not installed: $(head -n 1 "$work/postgis.err")"
      fi
    else
      reason="no PostgreSQL server could be started: $(head -n 1 "$work/pg.err")"
    fi
  fi
  [ -z "$reason" ] && return 0
  [ "$optional" = 1 ] || skip postgres "$reason"
  pg_skip="$reason"
  echo "[skip:postgres] $reason"
  return 1
}
