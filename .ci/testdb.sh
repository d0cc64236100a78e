#!/usr/bin/env bash
# Prepares the PostgreSQL + pgvector database the memory/pgstore tests use and
# prints its URL on stdout (all progress goes to stderr).
#
#   url=$(.ci/testdb.sh) && QUIRE_TEST_DATABASE_URL=$url go test ./...
#
# If QUIRE_TEST_DATABASE_URL is already set, it is printed and nothing is
# installed (a developer's laptop without root). Otherwise, as root on Debian
# 12, idempotently and without a terminal:
#   1. PostgreSQL from Debian's packages, plus the server's dev package;
#   2. pgvector built from Debian's source package: `apt-get source pgvector`
#      from the trixie suite, configured in a private apt directory (deb-src
#      only, pinned to -1, own package lists) so nothing else on the machine
#      is upgraded or even sees trixie; built against the installed server;
#   3. a cluster listening on 127.0.0.1, a role and a test database with the
#      vector extension.
# On a prepared machine this takes well under a second.
set -euo pipefail

if [ -n "${QUIRE_TEST_DATABASE_URL:-}" ]; then
	printf '%s\n' "$QUIRE_TEST_DATABASE_URL"
	exit 0
fi

say() { printf 'testdb: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}

PGMAJOR=${QUIRE_PG_MAJOR:-15}
PORT=${QUIRE_PG_PORT:-5432}
DB=quire_test
ROLE=quire_test
PASSWORD=quire_test
STATE=/var/lib/quire-testdb
URL="postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DB?sslmode=disable"

[ "$(id -u)" = 0 ] || die "not root: set QUIRE_TEST_DATABASE_URL to a PostgreSQL database with pgvector instead (see .ci/testdb.sh)"
command -v apt-get >/dev/null || die "no apt-get: this set-up needs Debian; set QUIRE_TEST_DATABASE_URL instead"

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
	say "installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# 1. The server and its headers.
apt_install postgresql "postgresql-$PGMAJOR" "postgresql-server-dev-$PGMAJOR" build-essential dpkg-dev ca-certificates

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

# 3. A cluster on 127.0.0.1 and the test database.
if ! pg_lsclusters -h | awk -v v="$PGMAJOR" '$1 == v && $2 == "main"' | grep -q .; then
	say "creating cluster $PGMAJOR/main"
	pg_createcluster "$PGMAJOR" main -p "$PORT" -- --auth-local=peer --auth-host=scram-sha-256 >&2
fi
conf=/etc/postgresql/$PGMAJOR/main/conf.d/quire-test.conf
# shared_buffers holds the 100,000-chunk benchmark corpus (~0.7 GB with
# its indexes); the tests themselves need little.
want=$(printf "listen_addresses = '127.0.0.1'\nport = %s\nmax_connections = 200\nshared_buffers = 1GB\n" "$PORT")
if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
	mkdir -p "$(dirname "$conf")"
	printf '%s\n' "$want" >"$conf"
	if pg_ctlcluster "$PGMAJOR" main status >/dev/null 2>&1; then
		say "restarting cluster $PGMAJOR/main for $conf"
		pg_ctlcluster "$PGMAJOR" main restart >&2
	fi
fi
if ! pg_ctlcluster "$PGMAJOR" main status >/dev/null 2>&1; then
	say "starting cluster $PGMAJOR/main"
	pg_ctlcluster "$PGMAJOR" main start >&2
fi
for _ in $(seq 1 50); do
	runuser -u postgres -- psql -p "$PORT" -Atqc 'select 1' >/dev/null 2>&1 && break
	sleep 0.2
done

psql_admin() { runuser -u postgres -- psql -p "$PORT" -v ON_ERROR_STOP=1 -Atq "$@"; }
if [ "$(psql_admin -c "select 1 from pg_roles where rolname = '$ROLE'")" != 1 ]; then
	say "creating role $ROLE"
	psql_admin -c "create role $ROLE login password '$PASSWORD'"
fi
if [ "$(psql_admin -c "select 1 from pg_database where datname = '$DB'")" != 1 ]; then
	say "creating database $DB"
	psql_admin -c "create database $DB owner $ROLE"
fi
psql_admin -d "$DB" -c "set client_min_messages = warning" -c "create extension if not exists vector"

printf '%s\n' "$URL"
