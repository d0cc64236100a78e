#!/usr/bin/env bash
# .ci/cross.sh [GOOS/GOARCH ...]
#
# Cross-builds ./cmd/quire and runs `go vet ./...` (which type-checks the
# test files too, with each system's build tags) for every platform Quire
# ships on, or for the targets given. Nothing here runs the binaries:
# Linux is tested at run time by `make test`; macOS, Windows and FreeBSD
# are built and vetted only (see the README's "Platforms").
#
# Vet runs per GOOS, for the GOOS/GOARCH pairs in CROSS_VET (default:
# darwin/amd64 windows/amd64 freebsd/amd64; linux/amd64 is `make vet`'s):
# the arm64 variants share their GOOS's build tags and are built, not
# vetted, by default, as vetting them doubles the step (measured on 2
# shared cores under load: 28 min with every target vetted from cold
# caches, the three arm64 vets 5-7 min each). CROSS_VET=all vets every
# target. Each step says what it does and how long it took (.ci/step).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64)
fi
vet=" ${CROSS_VET:-darwin/amd64 windows/amd64 freebsd/amd64} "
[ "$vet" = " all " ] && vet=" ${targets[*]} "
GO=${GO:-go}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

start=$SECONDS
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	ext=
	[ "$goos" = windows ] && ext=.exe
	bin="$out/quire-$goos-$goarch$ext"
	.ci/step "cross: build quire for $t" env CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" \
		"$GO" build -trimpath -o "$bin" ./cmd/quire
	printf '    quire for %s: %s bytes\n' "$t" "$(wc -c <"$bin" | tr -d ' ')" >&2
	case "$vet" in
	*" $t "*)
		.ci/step "cross: go vet ./... for $t (test files included)" env CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" \
			"$GO" vet ./...
		;;
	esac
done
printf '<== cross: %d targets built, vetted: %s (%ds)\n' "${#targets[@]}" "$(echo $vet)" $((SECONDS - start)) >&2
