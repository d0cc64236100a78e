# Quire's build and test entry points. `make test` is what CI runs (.ci/run)
# and what a newcomer runs on a fresh Debian machine: it installs and starts
# whatever the tests need, idempotently, then runs every check.

GO        ?= go
# Every step that can take a while says what it does, that it is still at
# it every 30 s, and how long it took (.ci/step).
STEP      := .ci/step
# Native Node modules (code-server's argon2, node-pty, ...) build against
# Debian's Node headers in /usr/include/node: node-gyp would otherwise try
# to download Node's headers, which only works where something cached them.
export npm_config_nodedir ?= /usr
# Fuzz budgets are counts, not durations: Go 1.26's fuzz coordinator can fail
# a duration-bounded run with "context deadline exceeded" on a loaded machine
# (golang/go#75804), while a count has no deadline to race.
# 10,000 inputs a target keeps the smoke run of 42 targets to a few
# minutes on 2 cores (each run also builds and links an instrumented test
# binary); run a target longer by hand when its code changes.
FUZZTIME  ?= 10000x
# Targets that build a tree on disk (and commit it) per input run fewer:
# FuzzWorkspaceTree runs about 70 inputs a second (1000 in about 15 s).
# FuzzMerge3 runs git merge-file per input: its 10,000 take about 45 s.
FUZZTIME_TREE ?= 1000x
TREE_FUZZ     := FuzzWorkspaceTree
PKGS      := ./...

.PHONY: all build serve test modules check-fmt vet cross unit fuzz-smoke bench bench-scale bench-recall golden test-editors editor-tools test-mcp test-vscode test-openapi test-console console-tools dist test-dist

all: build

build:
	@$(STEP) "building bin/quire (the first build downloads and compiles the Go modules: 2-4 min on 2 cores; later ones take seconds)" \
	  $(GO) build -o bin/quire ./cmd/quire

# The README's first command: the daemon on the bundled examples with the
# embedded store (no database).
serve: build
	@echo "==> bin/quire serve --dir examples (Ctrl-C stops it)" >&2
	@exec bin/quire serve --dir examples

test: modules check-fmt vet cross unit fuzz-smoke test-editors test-vscode test-mcp test-openapi test-console test-dist
	@echo "make test: every check passed"

modules:
	@$(STEP) "Go modules (downloaded once into $$($(GO) env GOMODCACHE))" $(GO) mod download

check-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@$(STEP) "go vet (compiles every package: 1-3 min the first time)" $(GO) vet $(PKGS)

# Every platform Quire ships on but Linux is built and vetted only (no
# macOS here, and Wine cannot start Go 1.26 Windows binaries): go vet ./...
# (test files included) per system; test-dist builds every target.
cross:
	@.ci/cross.sh

# The PostgreSQL store's tests need a database: .ci/testdb.sh installs
# PostgreSQL and pgvector, starts a cluster of the tests' own (its own data
# directory and port; nothing else on the machine is touched) and stops it
# afterwards, or passes QUIRE_TEST_DATABASE_URL through when it is set.
unit:
	@$(STEP) "unit tests: go test -race ./... against real git and PostgreSQL (4-8 min on 2 cores; installing PostgreSQL and building pgvector the first time adds about 1 min)" \
	  .ci/testdb.sh run $(GO) test -race -count=1 $(PKGS)

# A short run of every fuzz target, one at a time (go test -fuzz takes one);
# the workspace-tree target (no read outside the root, no hang, check and
# the push validator agree) gets FUZZTIME_TREE.
fuzz-smoke:
	@echo "==> fuzz smoke: a short run of every fuzz target (5-8 min on 2 cores)" >&2
	@set -e; start=$$(date +%s); for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    budget=$(FUZZTIME); \
	    case " $(TREE_FUZZ) " in *" $$target "*) budget=$(FUZZTIME_TREE);; esac; \
	    echo "fuzz $$pkg $$target ($$budget)"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $$budget $$pkg; \
	  done; \
	done; echo "<== fuzz smoke: done in $$(( $$(date +%s) - start ))s" >&2

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The scale benchmarks of issue 29 in one table, targets beside what this
# machine measures, with its cores and load (.ci/benchscale). Small sizes
# by default (a few minutes on 2 cores); full sizes:
#   QUIRE_SCALE_AGENTS=10000 QUIRE_BENCH_APPENDS=100000 QUIRE_BENCH_CHUNKS=1000000 make bench-scale
bench-scale:
	$(GO) run ./.ci/benchscale

# Recall@6 per question category on the LoCoMo dev set (read in place from
# LOCOMO; its licence is non-commercial: never copy it into the project),
# for each offline embedder (glove too when QUIRE_GLOVE_FILE names a GloVe
# text file) and both stores. Says so and skips when the set is absent.
LOCOMO ?= $(CURDIR)/../shared/bench/locomo-dev

bench-recall:
	@if [ ! -d "$(LOCOMO)/data" ]; then \
	  echo "bench-recall: no LoCoMo dev set at $(LOCOMO) (set LOCOMO=DIR): skipped"; exit 0; fi; \
	QUIRE_LOCOMO_DIR="$(LOCOMO)" .ci/testdb.sh run \
	  $(GO) test -run '^$$' -bench '^BenchmarkRecall$$' -benchtime 1x ./memory/recall/ | grep -E '^(recall@6|ok|FAIL|---)'

# Regenerate golden files after an intended change to prompt assembly.
golden:
	$(GO) test ./prompt/... ./cmd/... -update

# Editor integrations against a real language server: the VS Code extension
# type-checks, bundles, passes its unit tests and packages; a scripted Node
# client and headless Neovim (Debian's neovim, installed here when missing)
# drive the server. QUIRE_LSP is the server command.
QUIRE_LSP ?= $(CURDIR)/bin/quire lsp
VSCODE    := editors/vscode

test-editors: editor-tools $(VSCODE)/node_modules/.installed build
	@$(STEP) "VS Code extension: type-check, bundle, unit tests, package" \
	  sh -c 'cd $(VSCODE) && npm run --silent typecheck && npm run --silent bundle -- --log-level=warning && npm test && npm run --silent package'
	@$(STEP) "editors: a scripted LSP client and headless Neovim against bin/quire lsp" sh -c '\
	  cd $(VSCODE) && QUIRE_LSP="$(QUIRE_LSP)" npm run --silent client-test && cd $(CURDIR) && \
	  QUIRE_LSP="$(QUIRE_LSP)" nvim --headless -u NONE -i NONE --cmd "set rtp+=editors/nvim" -c "luafile editors/nvim/test/headless.lua"'

editor-tools:
	@command -v nvim >/dev/null 2>&1 || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "==> installing Neovim from Debian's packages (the editor tests drive it)" >&2; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq neovim >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "==> installing Node.js and npm from Debian's packages (the editor and MCP tests need them)" >&2; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }

$(VSCODE)/node_modules/.installed: $(VSCODE)/package-lock.json | editor-tools
	@$(STEP) "npm ci in $(VSCODE)" sh -c 'cd $(VSCODE) && npm ci --no-audit --no-fund --loglevel=error'
	touch $@

# Release files (README "Install"): every target's archive, the VS Code
# packages and SHA256SUMS in dist/, reproducibly (internal/dist says how).
# `make dist VERSION=v1.2.0` names the release; the default comes from git.
# DIST_TARGETS=linux/amd64,windows/arm64 builds only those (default: all).
# test-dist builds it all twice (the second time from a copy of the tree
# elsewhere) and requires the same bytes, checks every archive and .vsix
# (checksums, entries, each binary's ELF/Mach-O/PE format and
# architecture), and installs the host's .vsix in code-server to run its
# bundled binary.
DIST_FLAGS = -out dist $(if $(filter command line,$(origin VERSION)),-version $(VERSION)) $(if $(DIST_TARGETS),-targets $(DIST_TARGETS))

dist: $(VSCODE)/node_modules/.installed
	@$(STEP) "make dist: quire for 7 targets, their archives, the VS Code packages and SHA256SUMS in dist/ (with an empty Go build cache 7 cross-compiles, about 8 min of CPU; with a warm one 1-2 min)" \
	  $(GO) run ./internal/dist build $(DIST_FLAGS)

test-dist: $(VSCODE)/node_modules/.installed
	@.ci/vscode-e2e.sh install
	@$(STEP) "release files: build dist/ twice, same bytes, formats and checksums (with an empty Go build cache 7 cross-compiles, about 9 min of CPU; with a warm one 2-4 min)" \
	  env CODE_SERVER="$(CURDIR)/$(VSCODE)/e2e/node_modules/.bin/code-server" $(GO) run ./internal/dist test $(DIST_FLAGS)

# The MCP server against a client nobody here wrote: the official TypeScript
# SDK's (npm ci from the committed lock file) drives streamable HTTP on the
# socket and on --api-listen, and stdio (`quire mcp`), with a real daemon
# and git pushes.
MCPCLIENT := daemon/mcp/testclient

test-mcp: $(MCPCLIENT)/node_modules/.installed build
	@$(STEP) "MCP: the official TypeScript SDK client against a real daemon" \
	  sh -c 'cd $(MCPCLIENT) && QUIRE="$(CURDIR)/bin/quire" npm test --silent'

$(MCPCLIENT)/node_modules/.installed: $(MCPCLIENT)/package-lock.json | editor-tools
	@$(STEP) "npm ci in $(MCPCLIENT)" sh -c 'cd $(MCPCLIENT) && npm ci --no-audit --no-fund --loglevel=error'
	touch $@

# The local API's OpenAPI document against tools nobody here wrote: Redocly
# lints it, openapi-typescript generates a client from what a running
# daemon serves, and openapi-fetch drives every route with it.
OPENAPICLIENT := daemon/api/testdata/openapi-client

test-openapi: $(OPENAPICLIENT)/node_modules/.installed build
	@$(STEP) "OpenAPI: lint, generate a TypeScript client, drive every route" \
	  sh -c 'cd $(OPENAPICLIENT) && QUIRE="$(CURDIR)/bin/quire" npm test --silent'

$(OPENAPICLIENT)/node_modules/.installed: $(OPENAPICLIENT)/package-lock.json | editor-tools
	@$(STEP) "npm ci in $(OPENAPICLIENT)" sh -c 'cd $(OPENAPICLIENT) && npm ci --no-audit --no-fund --loglevel=error'
	touch $@

# A real VS Code: code-server (from npm) with the .vsix test-editors built and
# the real `quire lsp`, driven by Debian's Chromium through playwright-core
# (editors/vscode/e2e/run.js): the faded cut, the code lens, the status bar
# item, the preview, a missing binary explained. .ci/vscode-e2e.sh installs
# what it needs, idempotently; the screenshots of each step are kept in
# editors/vscode/e2e/artifacts (git-ignored).
test-vscode: test-editors
	@$(STEP) "a real VS Code (code-server) driven by Chromium: installs code-server the first time (1-2 min)" \
	  env QUIRE_BIN="$(CURDIR)/bin/quire" .ci/vscode-e2e.sh run

# The web console (/ui/) of a real `quire serve`, driven by Debian's
# Chromium through playwright-core, with axe-core on every page
# (daemon/console/e2e/run.js): sign-in, the prompt preview with its cut, a
# stale save, approving and rejecting proposals, a write arriving live.
# Screenshots are kept in daemon/console/e2e/artifacts (git-ignored).
CONSOLE_E2E := daemon/console/e2e

test-console: $(CONSOLE_E2E)/node_modules/.installed build | console-tools
	@$(STEP) "console: a real quire serve in Chromium (playwright-core), axe-core on every page" \
	  sh -c 'cd $(CONSOLE_E2E) && QUIRE_BIN="$(CURDIR)/bin/quire" node run.js'

console-tools:
	@[ -x /usr/bin/chromium ] || [ -n "$$CHROMIUM" ] || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "==> installing Chromium from Debian's packages (the console test drives it)" >&2; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

$(CONSOLE_E2E)/node_modules/.installed: $(CONSOLE_E2E)/package-lock.json | editor-tools
	@$(STEP) "npm ci in $(CONSOLE_E2E)" sh -c 'cd $(CONSOLE_E2E) && npm ci --no-audit --no-fund --loglevel=error'
	touch $@
