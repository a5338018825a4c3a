#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL 15 server for tests.
#
#   scripts/pg-test-server.sh start DIR   # prints postgresql://postgres@127.0.0.1:PORT/postgres
#   scripts/pg-test-server.sh stop DIR    # stops the server and removes DIR
#
# The server listens on 127.0.0.1 only, on a free port, with its unix socket inside DIR, and
# trusts every local connection: it is for tests on this machine, never for data anyone keeps.
# fsync is off for speed. Debian's postgres refuses to run as root, so when run as root the
# server runs as the system user `geolake-pg` (created on first use). The cluster made by initdb
# is cached as a template (GEOLAKE_PG_TEMPLATE, default /tmp/geolake-pg15-template-UID) and copied,
# which cuts a start from ~2 s to ~0.3 s; ctest starts one server per test process.
# Only the URI goes to stdout; progress and errors go to stderr. Exit status 0 = success.
set -euo pipefail

PG_USER_NAME="${GEOLAKE_PG_USER:-geolake-pg}"
TEMPLATE="${GEOLAKE_PG_TEMPLATE:-/tmp/geolake-pg15-template-$(id -u)}"

die() {
  echo "pg-test-server: $*" >&2
  exit 1
}

find_bindir() {
  local candidate
  for candidate in "${PG_BIN:-}" /usr/lib/postgresql/15/bin; do
    if [[ -n "$candidate" && -x "$candidate/pg_ctl" && -x "$candidate/initdb" ]]; then
      echo "$candidate"
      return
    fi
  done
  if command -v pg_config >/dev/null 2>&1; then
    candidate="$(pg_config --bindir)"
    if [[ -x "$candidate/pg_ctl" && -x "$candidate/initdb" ]]; then
      echo "$candidate"
      return
    fi
  fi
  die "no PostgreSQL server binaries (pg_ctl, initdb) found; install postgresql-15 (make test does)"
}

# Run a command as the server's user: ourselves, or geolake-pg when we are root.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u "$PG_USER_NAME" -- "$@"
  else
    "$@"
  fi
}

ensure_user() {
  [[ "$(id -u)" == 0 ]] || return 0
  if ! id "$PG_USER_NAME" >/dev/null 2>&1; then
    # Another test process may create the user at the same moment; only a missing user after
    # the attempt is an error.
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      "$PG_USER_NAME" >/dev/null 2>&1 || true
    id "$PG_USER_NAME" >/dev/null 2>&1 || die "cannot create system user $PG_USER_NAME"
  fi
}

# Make the initdb template once; concurrent callers race on a rename, and the loser's copy is
# discarded.
ensure_template() {
  local bindir="$1"
  [[ -f "$TEMPLATE/PG_VERSION" ]] && return 0
  local tmp="${TEMPLATE}.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  [[ "$(id -u)" == 0 ]] && chown "$PG_USER_NAME" "$tmp"
  chmod 700 "$tmp"
  if ! as_pg "$bindir/initdb" -D "$tmp" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >"${tmp}.log" 2>&1; then
    cat "${tmp}.log" >&2
    rm -rf "$tmp" "${tmp}.log"
    die "initdb failed"
  fi
  rm -f "${tmp}.log"
  mv -T "$tmp" "$TEMPLATE" 2>/dev/null || rm -rf "$tmp"
  [[ -f "$TEMPLATE/PG_VERSION" ]] || die "template $TEMPLATE is incomplete"
}

port_in_use() {
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

start() {
  local dir="$1"
  local bindir
  bindir="$(find_bindir)"
  ensure_user
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/uri" && -f "$dir/data/postmaster.pid" ]] &&
    as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    cat "$dir/uri"
    return 0
  fi
  [[ "$(id -u)" == 0 ]] && chown "$PG_USER_NAME" "$dir"
  as_pg test -w "$dir" ||
    die "$dir is not writable by $(as_pg id -un); its parent directories must be searchable (chmod o+x)"
  # A unix socket path is limited to 107 bytes.
  ((${#dir} < 90)) || die "directory path too long for a unix socket: $dir"

  ensure_template "$bindir"
  rm -rf "$dir/data"
  cp -a "$TEMPLATE" "$dir/data"
  [[ "$(id -u)" == 0 ]] && chown -R "$PG_USER_NAME" "$dir/data"

  local attempt port
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    port_in_use "$port" && continue
    if as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
      "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=200" \
      start >/dev/null 2>&1; then
      local uri="postgresql://postgres@127.0.0.1:${port}/postgres"
      echo "$uri" >"$dir/uri"
      echo "$uri"
      return 0
    fi
    echo "pg-test-server: start on port $port failed (attempt $attempt), retrying" >&2
  done
  [[ -f "$dir/server.log" ]] && tail -n 20 "$dir/server.log" >&2
  die "could not start PostgreSQL in $dir"
}

stop() {
  local dir="$1"
  [[ -d "$dir" ]] || return 0
  local bindir
  bindir="$(find_bindir)"
  if [[ -f "$dir/data/postmaster.pid" ]]; then
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
      echo "pg-test-server: pg_ctl stop failed in $dir" >&2
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start)
    [[ $# -eq 2 ]] || die "usage: $0 start DIR"
    start "$2"
    ;;
  stop)
    [[ $# -eq 2 ]] || die "usage: $0 stop DIR"
    stop "$2"
    ;;
  *)
    die "usage: $0 start|stop DIR"
    ;;
esac
