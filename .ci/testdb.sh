#!/usr/bin/env bash
# The PostgreSQL + pgvector database the tests use, in a cluster of the
# tests' own: its own data directory, port and socket directory, started and
# stopped here. It never reconfigures, starts or stops a cluster it did not
# create (a developer's own PostgreSQL is left alone).
#
#   .ci/testdb.sh run go test ./...   # start, run with QUIRE_TEST_DATABASE_URL, stop
#   url=$(.ci/testdb.sh start)        # or by hand
#   .ci/testdb.sh stop
#
# "start" prints the database URL on stdout (all progress goes to stderr).
# "run" stops the cluster afterwards only if it started it. If
# QUIRE_TEST_DATABASE_URL is already set, "start" prints it, "run" runs the
# command with it and "stop" does nothing: nothing is installed, created or
# started.
#
# Otherwise, idempotently and without a terminal:
#   1. (root only) PostgreSQL from Debian's packages and the server's dev
#      package;
#   2. (root only) pgvector built from Debian's source package: `apt-get
#      source pgvector` from the trixie suite, configured in a private apt
#      directory (deb-src only, pinned to -1, own package lists) so nothing
#      else on the machine is upgraded or even sees trixie; built against the
#      installed server;
#   3. a cluster made with initdb in the state directory (root:
#      /var/lib/quire-testdb, run as the postgres user; anyone else:
#      $XDG_STATE_HOME/quire-testdb), listening on 127.0.0.1 and a socket
#      directory of its own, port $QUIRE_PG_PORT (55432 by default), with a
#      role and a test database that has the vector extension.
# Without root, 1 and 2 must be done first (the message says how).
# On a prepared machine "start" takes about a second.
set -euo pipefail

action=${1:-start}
case "$action" in
start | stop) ;;
run)
	shift
	[ $# -gt 0 ] || { printf 'usage: %s run COMMAND [ARG...]\n' "$0" >&2; exit 2; }
	if [ -n "${QUIRE_TEST_DATABASE_URL:-}" ]; then
		exec "$@"
	fi
	self=$0
	was_running=$("$self" status)
	url=$("$self" start) || exit 1
	status=0
	QUIRE_TEST_DATABASE_URL=$url "$@" || status=$?
	[ "$was_running" = running ] || "$self" stop
	exit "$status"
	;;
status) ;;
*)
	printf 'usage: %s start|stop|status|run COMMAND [ARG...]\n' "$0" >&2
	exit 2
	;;
esac

if [ -n "${QUIRE_TEST_DATABASE_URL:-}" ]; then
	case "$action" in
	start) printf '%s\n' "$QUIRE_TEST_DATABASE_URL" ;;
	status) echo external ;;
	esac
	exit 0
fi

say() { printf 'testdb: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}

PGMAJOR=${QUIRE_PG_MAJOR:-15}
PORT=${QUIRE_PG_PORT:-55432}
DB=quire_test
ROLE=quire_test
PASSWORD=quire_test
URL="postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DB?sslmode=disable"
PGBIN=/usr/lib/postgresql/$PGMAJOR/bin
if [ "$(id -u)" = 0 ]; then
	STATE=/var/lib/quire-testdb
	as_pg() { runuser -u postgres -- "$@"; }
else
	STATE=${XDG_STATE_HOME:-$HOME/.local/state}/quire-testdb
	as_pg() { "$@"; }
fi
DATA=$STATE/pg$PGMAJOR
RUN=$STATE/run
LOG=$STATE/pg$PGMAJOR.log

running() { [ -f "$DATA/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

if [ "$action" = status ]; then
	if running; then echo running; else echo stopped; fi
	exit 0
fi
if [ "$action" = stop ]; then
	if running; then
		say "stopping the test cluster ($DATA)"
		as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
	fi
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	[ -x "$PGBIN/initdb" ] && [ -f "/usr/share/postgresql/$PGMAJOR/extension/vector.control" ] ||
		die "not root, and PostgreSQL $PGMAJOR with pgvector is not installed: run '.ci/testdb.sh start' once as root (sudo) to install them, or 'apt-get install postgresql-$PGMAJOR postgresql-$PGMAJOR-pgvector' where that package exists, or set QUIRE_TEST_DATABASE_URL to a database with pgvector"
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ -z "$apt_updated" ]; then
		say "apt-get update"
		apt-get update -qq >&2
		apt_updated=1
	fi
	say "installing ${missing[*]} from Debian's packages"
	local log
	log=$(mktemp)
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1 ||
		{ tail -30 "$log" >&2; rm -f "$log"; die "apt-get install ${missing[*]} failed"; }
	rm -f "$log"
}

if [ "$(id -u)" = 0 ]; then
command -v apt-get >/dev/null || die "no apt-get: this set-up needs Debian; set QUIRE_TEST_DATABASE_URL instead"

# 1. The server and its headers.
apt_install "postgresql-$PGMAJOR" "postgresql-server-dev-$PGMAJOR" build-essential dpkg-dev ca-certificates

PG_CONFIG=/usr/lib/postgresql/$PGMAJOR/bin/pg_config
[ -x "$PG_CONFIG" ] || die "$PG_CONFIG missing after install"

# 2. pgvector from Debian's trixie source package.
if [ ! -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]; then
	apt_dir=$STATE/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/sources.list.d" "$apt_dir/preferences.d"
	# The mirror this machine already uses for Debian (the first URIs: of
	# its deb822 sources, or the first deb line of sources.list).
	mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$mirror" ] || die "cannot find this machine's Debian mirror in /etc/apt; set QUIRE_TEST_DATABASE_URL instead"
	cat >"$apt_dir/sources.list.d/trixie-src.sources" <<-EOF
		Types: deb-src
		URIs: $mirror
		Suites: trixie
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	# Belt and braces: even if these lists were used for binaries, nothing
	# from trixie could be installed or upgraded.
	cat >"$apt_dir/preferences.d/trixie" <<-'EOF'
		Package: *
		Pin: release n=trixie
		Pin-Priority: -1
	EOF
	private=(-o "Dir::Etc::SourceList=/dev/null"
		-o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
		-o "Dir::Etc::Preferences=/dev/null"
		-o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::Cache::Archives=$apt_dir/archives")
	say "fetching pgvector's source package from trixie (private apt lists in $apt_dir)"
	apt-get "${private[@]}" update -qq >&2
	rm -rf "$STATE/src"
	mkdir -p "$STATE/src"
	chmod 755 "$STATE"
	chown _apt "$STATE/src" 2>/dev/null || true # apt downloads as _apt
	(cd "$STATE/src" && apt-get "${private[@]}" source -qq pgvector >&2)
	srcdir=$(find "$STATE/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)
	[ -n "$srcdir" ] || die "apt-get source pgvector produced no source tree in $STATE/src"
	say "building $(basename "$srcdir") against PostgreSQL $PGMAJOR"
	# OPTFLAGS= : no -march=native, so the library runs on any amd64/arm64 machine.
	make -s -C "$srcdir" PG_CONFIG="$PG_CONFIG" OPTFLAGS= -j"$(nproc)" >&2
	make -s -C "$srcdir" PG_CONFIG="$PG_CONFIG" install >&2
fi

fi

# 3. The tests' own cluster.
if [ ! -f "$DATA/PG_VERSION" ]; then
	say "creating the test cluster in $DATA (port $PORT)"
	rm -rf "$DATA"
	mkdir -p "$DATA" "$RUN"
	[ "$(id -u)" = 0 ] && chown postgres:postgres "$DATA" "$RUN"
	chmod 700 "$DATA"
	as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
	# shared_buffers holds what a search of the 1M-chunk benchmark corpus
	# reads (the halfvec IVFFlat index ~0.8 GB, chunk_terms with its GIN
	# index ~1.1 GB, the chunk rows it fetches); the tests themselves need
	# little. Memory is only taken as it is used. A cluster made before
	# keeps its setting: ALTER SYSTEM SET shared_buffers and restart it.
	cat <<-EOF | as_pg tee -a "$DATA/postgresql.conf" >/dev/null
		# quire test cluster (.ci/testdb.sh)
		listen_addresses = '127.0.0.1'
		port = $PORT
		unix_socket_directories = '$RUN'
		max_connections = 200
		shared_buffers = 4GB
	EOF
fi
mkdir -p "$RUN"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$RUN"
if ! running; then
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
		die "port $PORT on 127.0.0.1 is taken by another program: set QUIRE_PG_PORT to a free port"
	fi
	say "starting the test cluster ($DATA, port $PORT; log: $LOG)"
	[ "$(id -u)" = 0 ] && { touch "$LOG"; chown postgres:postgres "$LOG"; }
	as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null ||
		{ tail -20 "$LOG" >&2; die "the test cluster did not start (log: $LOG)"; }
fi

psql_admin() { as_pg "$PGBIN/psql" -h "$RUN" -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -Atq "$@"; }
if [ "$(psql_admin -d postgres -c "select 1 from pg_roles where rolname = '$ROLE'")" != 1 ]; then
	say "creating role $ROLE"
	psql_admin -d postgres -c "create role $ROLE login password '$PASSWORD'"
fi
if [ "$(psql_admin -d postgres -c "select 1 from pg_database where datname = '$DB'")" != 1 ]; then
	say "creating database $DB"
	psql_admin -d postgres -c "create database $DB owner $ROLE"
fi
psql_admin -d "$DB" -c "set client_min_messages = warning" -c "create extension if not exists vector"

printf '%s\n' "$URL"
