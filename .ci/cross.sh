#!/usr/bin/env bash
# .ci/cross.sh [GOOS/GOARCH ...]
#
# Runs `go vet ./...` (which type-checks the test files too, with each
# system's build tags) for the platforms Quire ships on besides the
# host's, or for the targets given. Nothing here runs a binary: Linux is
# tested at run time by `make test`; macOS, Windows and FreeBSD are built
# and vetted only (see the README's "Platforms"). The builds of every
# target are test-dist's (internal/dist), which also checks each binary's
# format and architecture: this step does not build them a second time.
#
# Vet runs once per GOOS (default: darwin/amd64 windows/amd64
# freebsd/amd64; linux/amd64 is `make vet`'s): the arm64 variants share
# their GOOS's build tags (measured on 2 shared cores under load: every
# target vetted from cold caches took 28 min, the three arm64 vets 5-7 min
# each). CROSS_VET=all vets every target. Vet compiles with the release
# build's -trimpath and CGO_ENABLED=0, so test-dist reuses what it
# compiled. Each step says what it does and how long it took (.ci/step).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(darwin/amd64 windows/amd64 freebsd/amd64)
fi
[ "${CROSS_VET:-}" = all ] && targets=(linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64)
GO=${GO:-go}

start=$SECONDS
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	.ci/step "cross: go vet ./... for $t (test files included)" env CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" \
		"$GO" vet -trimpath ./...
done
printf '<== cross: vetted %s (%ds)\n' "${targets[*]}" $((SECONDS - start)) >&2
