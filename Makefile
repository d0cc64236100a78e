# Quire's build and test entry points. `make test` is what CI runs (.ci/run)
# and what a newcomer runs on a fresh Debian machine: it installs and starts
# whatever the tests need, idempotently, then runs every check.

GO        ?= go
# Fuzz budgets are counts, not durations: Go 1.26's fuzz coordinator can fail
# a duration-bounded run with "context deadline exceeded" on a loaded machine
# (golang/go#75804), while a count has no deadline to race.
FUZZTIME  ?= 50000x
# Targets that build a tree on disk (and commit it) per input run fewer:
# FuzzWorkspaceTree runs about 200 inputs a second.
FUZZTIME_TREE ?= 5000x
TREE_FUZZ     := FuzzWorkspaceTree
PKGS      := ./...

.PHONY: all build test check-fmt vet unit fuzz-smoke bench bench-recall golden test-editors editor-tools test-mcp test-vscode

all: build

build:
	$(GO) build -o bin/quire ./cmd/quire

test: check-fmt vet unit fuzz-smoke test-editors test-vscode test-mcp

check-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# The PostgreSQL store's tests need a database: .ci/testdb.sh installs and
# starts one (or passes QUIRE_TEST_DATABASE_URL through when it is set).
unit:
	@url=$$(.ci/testdb.sh) && QUIRE_TEST_DATABASE_URL="$$url" $(GO) test -race -count=1 $(PKGS)

# A short run of every fuzz target, one at a time (go test -fuzz takes one);
# the workspace-tree target (no read outside the root, no hang, check and
# the push validator agree) gets FUZZTIME_TREE.
fuzz-smoke:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    budget=$(FUZZTIME); \
	    case " $(TREE_FUZZ) " in *" $$target "*) budget=$(FUZZTIME_TREE);; esac; \
	    echo "fuzz $$pkg $$target ($$budget)"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $$budget $$pkg; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Recall@6 per question category on the LoCoMo dev set (read in place from
# LOCOMO; its licence is non-commercial: never copy it into the project),
# for each offline embedder (glove too when QUIRE_GLOVE_FILE names a GloVe
# text file) and both stores. Says so and skips when the set is absent.
LOCOMO ?= $(CURDIR)/../shared/bench/locomo-dev

bench-recall:
	@if [ ! -d "$(LOCOMO)/data" ]; then \
	  echo "bench-recall: no LoCoMo dev set at $(LOCOMO) (set LOCOMO=DIR): skipped"; exit 0; fi; \
	url=$$(.ci/testdb.sh) && QUIRE_TEST_DATABASE_URL="$$url" QUIRE_LOCOMO_DIR="$(LOCOMO)" \
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

test-editors: editor-tools $(VSCODE)/node_modules/.installed
	$(GO) build -o bin/quire ./cmd/quire
	cd $(VSCODE) && npm run --silent typecheck && npm run --silent bundle -- --log-level=warning && npm test && npm run --silent package
	cd $(VSCODE) && QUIRE_LSP="$(QUIRE_LSP)" npm run --silent client-test
	QUIRE_LSP="$(QUIRE_LSP)" nvim --headless -u NONE -i NONE --cmd 'set rtp+=editors/nvim' -c 'luafile editors/nvim/test/headless.lua'

editor-tools:
	@command -v nvim >/dev/null 2>&1 || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq neovim >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing Node.js and npm from Debian's packages (the editor and MCP tests need them)"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }

$(VSCODE)/node_modules/.installed: $(VSCODE)/package-lock.json | editor-tools
	cd $(VSCODE) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The MCP server against a client nobody here wrote: the official TypeScript
# SDK's (npm ci from the committed lock file) drives streamable HTTP on the
# socket and on --api-listen, and stdio (`quire mcp`), with a real daemon
# and git pushes.
MCPCLIENT := daemon/mcp/testclient

test-mcp: $(MCPCLIENT)/node_modules/.installed
	$(GO) build -o bin/quire ./cmd/quire
	cd $(MCPCLIENT) && QUIRE="$(CURDIR)/bin/quire" npm test --silent

$(MCPCLIENT)/node_modules/.installed: $(MCPCLIENT)/package-lock.json | editor-tools
	cd $(MCPCLIENT) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# A real VS Code: code-server (from npm) with the .vsix test-editors built and
# the real `quire lsp`, driven by Debian's Chromium through playwright-core
# (editors/vscode/e2e/run.js): the faded cut, the code lens, the status bar
# item, the preview, a missing binary explained. .ci/vscode-e2e.sh installs
# what it needs, idempotently; the screenshots of each step are kept in
# editors/vscode/e2e/artifacts (git-ignored).
test-vscode: test-editors
	QUIRE_BIN="$(CURDIR)/bin/quire" .ci/vscode-e2e.sh run
