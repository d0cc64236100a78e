#!/usr/bin/env bash
# Installs what the real-VS-Code test needs, idempotently and without a
# terminal, then (with "run") runs it:
#
#   .ci/vscode-e2e.sh install   # Debian packages, code-server and playwright-core
#   .ci/vscode-e2e.sh run       # editors/vscode/e2e/run.js
#
# 1. Debian's chromium (the browser playwright-core drives; no browser is
#    downloaded), ripgrep (code-server's search; its own download from
#    GitHub is not reachable) and what code-server's native modules build
#    with (build-essential, pkg-config, libkrb5-dev, libxkbfile-dev,
#    libsecret-1-dev, libx11-dev).
# 2. editors/vscode/e2e: `npm ci` of code-server (Node 20 needs 4.100.x)
#    and playwright-core, as root with npm_config_unsafe_perm (and
#    npm_config_yes: node-pty runs `npx node-gyp`, which must not ask), and
#    npm_config_nodedir=/usr: native modules (argon2, node-pty) build
#    against Debian's Node headers in /usr/include/node, where node-gyp
#    would otherwise download Node's headers (unreachable here). The
#    @vscode/ripgrep postinstall finds Debian's rg in its download cache (a
#    tarball made here in a private TMPDIR) instead of fetching it.
# On a prepared machine this takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'vscode-e2e: %s\n' "$*" >&2; }
E2E=editors/vscode/e2e

# The @vscode/ripgrep version code-server 4.100.3 ships, and the ripgrep
# release it asks for; change them together with the code-server version.
RG_PKG_VERSION=1.15.11
RG_RELEASE=v13.0.0-10

install() {
	local pkgs=(chromium ripgrep build-essential pkg-config python3 libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)
	local missing=()
	for p in "${pkgs[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		local sudo=
		[ "$(id -u)" = 0 ] || sudo=sudo
		say "installing ${missing[*]}"
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
	command -v npm >/dev/null || { say "needs Node 20 and npm"; exit 1; }
	export npm_config_nodedir=${npm_config_nodedir:-/usr}
	[ -f "$npm_config_nodedir/include/node/node.h" ] ||
		{ say "no Node headers in $npm_config_nodedir/include/node (Debian's nodejs package has them): set npm_config_nodedir"; exit 1; }

	local stamp=$E2E/node_modules/.installed
	if [ -f "$stamp" ] && [ "$stamp" -nt $E2E/package-lock.json ] && [ -x $E2E/node_modules/.bin/code-server ]; then
		return
	fi
	local arch
	case "$(uname -m)" in
	x86_64) arch=x86_64-unknown-linux-musl ;;
	aarch64) arch=aarch64-unknown-linux-musl ;;
	*) say "no ripgrep target for $(uname -m)"; exit 1 ;;
	esac
	local tmp status=0
	tmp=$(mktemp -d)
	mkdir -p "$tmp/vscode-ripgrep-cache-$RG_PKG_VERSION" "$tmp/rg"
	cp "$(command -v rg)" "$tmp/rg/rg"
	tar -C "$tmp/rg" -czf "$tmp/vscode-ripgrep-cache-$RG_PKG_VERSION/ripgrep-$RG_RELEASE-$arch.tar.gz" rg
	say "installing code-server and playwright-core (builds native modules; a few minutes the first time)"
	(cd $E2E && TMPDIR="$tmp" npm_config_yes=true npm_config_unsafe_perm=true npm ci --no-audit --no-fund --loglevel=error >"$tmp/npm.log" 2>&1) || status=$?
	if [ $status -ne 0 ]; then
		tail -40 "$tmp/npm.log" >&2
		rm -rf "$tmp"
		say "npm ci failed"
		exit 1
	fi
	rm -rf "$tmp"
	local rg=$E2E/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg
	[ -x "$rg" ] || { say "code-server's ripgrep is missing ($rg)"; exit 1; }
	touch "$stamp"
}

case "${1:-}" in
install) install ;;
run)
	install
	cd $E2E && node run.js
	;;
*)
	say "usage: $0 install|run"
	exit 2
	;;
esac
