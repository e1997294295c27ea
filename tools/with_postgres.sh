#!/usr/bin/env bash
# Runs CMD with a throwaway PostgreSQL 15 server, and always stops and removes it afterwards.
#   tools/with_postgres.sh CMD [ARGS...]
# The server listens only on a Unix socket in a fresh temp dir (no TCP: nothing to collide
# with), under a free port number that names the socket; trust authentication; fsync on.
# CMD gets CORRAL_TEST_PG_DSN=postgresql://postgres@/postgres?host=DIR&port=PORT.
# As root, the server runs as the `postgres` system user (PostgreSQL refuses to run as root),
# so the temp dir is owned by that user. Exits non-zero, saying why, when the server cannot
# be started: PostgreSQL is a declared test dependency (tools/setup.sh), never skipped.
set -uo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

pgbin="${CORRAL_PG_BIN:-/usr/lib/postgresql/15/bin}"
die() {
  echo "with_postgres: $*" >&2
  exit 1
}
[ -x "$pgbin/initdb" ] && [ -x "$pgbin/pg_ctl" ] ||
  die "PostgreSQL 15 server binaries not found in $pgbin (install package postgresql-15: tools/setup.sh)"

as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || die "running as root and there is no 'postgres' user to run the server"
  as_pg=(runuser -u postgres --)
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/corral-pg.XXXXXX")" || die "cannot create a temp dir"
cleanup() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    "${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ ${#as_pg[@]} -gt 0 ]; then
  chown postgres: "$dir" || die "cannot give $dir to the postgres user"
fi
chmod 700 "$dir"

# A port number no one is listening on (it also names the socket file).
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')" ||
  die "cannot find a free port"

"${as_pg[@]}" "$pgbin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
  --no-sync >"$dir/initdb.log" 2>&1 || {
  cat "$dir/initdb.log" >&2
  die "initdb failed"
}
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses='' -k $dir -p $port -c fsync=on" start >/dev/null 2>&1 || {
  cat "$dir/server.log" >&2 2>/dev/null
  die "the PostgreSQL server did not start"
}

export CORRAL_TEST_PG_DSN="postgresql://postgres@/postgres?host=$dir&port=$port"
"$@"
