# The project's test command is `make test`; .ci/run calls it.
GO ?= go

.PHONY: test deps fmt vet api api-record unit allocs fuzz examples conformance interop apps fleet bench bench-compare bench-smoke run mutate cli docs bench-load load-smoke otel bench-scale

# The stages of `make test`, in order; a new stage is one more word here
# (and its target below). scripts/stages.sh runs them one after another,
# stops at the first that fails, and ends with one line that says the
# verdict: "make test: 12 stages passed in 6m40s", or the stage that failed.
STAGES = deps fmt vet api unit otel allocs fuzz bench-smoke load-smoke examples cli docs conformance interop apps fleet

test:
	@MAKE="$(MAKE)" bash scripts/stages.sh $(STAGES)

# Debian packages the tests use (nginx, redis-server, curl, tmux,
# chromium), installed when missing.
deps:
	bash scripts/deps.sh

fmt:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# staticcheck's version is pinned. It is built once, from the module proxy,
# into a cache folder (named by its version and Go's, so that a new Go
# builds it anew), and every module's vet runs that binary: go run built
# (or at least linked and checked) it again for each of them.
STATICCHECK_VERSION = v0.8.2
TOOLS_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/parley-tools
STATICCHECK = $(TOOLS_DIR)/staticcheck-$(STATICCHECK_VERSION)-$(shell $(GO) env GOVERSION)

$(STATICCHECK):
	@mkdir -p $(TOOLS_DIR)
	@# Built beside its final name and renamed, so that two builds at once
	@# (two checkouts on one machine) never leave half a binary there.
	tmp=$$(mktemp -d $(TOOLS_DIR)/build.XXXXXX) && \
	GOBIN=$$tmp GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && \
	mv $$tmp/staticcheck $@ && rmdir $$tmp

vet: $(STATICCHECK)
	$(GO) vet ./...
	$(STATICCHECK) ./...
	cd bench && $(STATICCHECK) ./...
	cd interop && $(STATICCHECK) ./...
	cd browser && $(GO) vet ./... && $(STATICCHECK) ./...
	@bash scripts/stages.sh --self-test
	@bash scripts/deps.sh --self-test
	@# Every listed mutation must still apply to the code it names, so that
	@# `make mutate` keeps measuring what docs/testing.md says it does.
	$(GO) run scripts/mutate/main.go -check
	@# The generated encoders must be what mcpgen writes from today's
	@# declarations (design record 022).
	$(GO) run ./internal/mcpgen -dir mcp -check

# The exported API must match the recorded baseline, api/baseline.zip: a
# removal or an incompatible change fails here until it is recorded on
# purpose (API_BREAK=1 make api-record, named in CHANGELOG.md), and an
# addition until it is recorded (make api-record). See api/README.md.
api:
	GO=$(GO) bash scripts/api.sh check

api-record:
	GO=$(GO) bash scripts/api.sh record

# The Redis single-use store is tested against a real redis-server
# (scripts/deps.sh installs it); here its absence is a failure, not a skip.
# The allocation budgets are left to the allocs stage (the race detector
# changes allocation counts), by name, so that nothing here reports a skip.
# cmd/parley's terminal tests are the cli stage's (with tmux required), and
# the commands of the docs the docs stage's.
unit:
	PARLEY_REQUIRE_REDIS=1 $(GO) test -race -skip AllocBudget $$($(GO) list ./... | grep -v -e '/cmd/parley$$' -e '/internal/docscheck$$')

# Allocation budgets are asserted without -race, which perturbs them.
allocs:
	$(GO) test -count=1 -run 'AllocBudget' ./...

# Every fuzz target for FUZZTIME each: a count of inputs (20000x, a second
# or two), not a duration, whose expiry on a loaded machine can fail a
# healthy target; FUZZTIME=10m make fuzz for a longer run (docs/testing.md).
FUZZTIME ?= 20000x
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Parley beside the official Go SDK on the same workloads (bench/, a module
# of its own): the ratio table and the targets, medians of BENCH_COUNT runs
# (a few minutes; not part of test). See bench/README.md.
BENCH_COUNT ?= 5
bench-compare:
	cd bench && $(GO) run ./cmd/ratio -count $(BENCH_COUNT)

# The bench module builds, vets, each of its benchmarks runs once, and
# bench-scale runs one small point of each curve and draws its images into
# a scratch folder (seconds; the root module's vet and test do not reach a
# nested module).
bench-smoke:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./cmd/ratio/ && $(GO) test -run '^$$' -bench . -benchtime 1x ./...
	cd bench && d=$$(mktemp -d) && $(GO) run ./cmd/load scale -smoke -figures $$d > $$d/report.md; rc=$$?; rm -rf $$d; exit $$rc

# How cost grows with the work (bench/cmd/load scale): registered tools,
# idle sessions, idle listen streams, tasks, payload size and cores, Parley
# beside go-sdk, mcp-go and a bare net/http handler, the median of
# SCALE_ROUNDS interleaved rounds; the tables and targets on stdout, the
# curves drawn into bench/figures (about 20 minutes on 2 cores; not part of
# test). See bench/README.md and design record 050.
SCALE_ROUNDS ?= 3
bench-scale:
	cd bench && $(GO) run ./cmd/load scale -rounds $(SCALE_ROUNDS) -figures figures

# Serving under load (bench/cmd/load): Parley, go-sdk, mcp-go and a bare
# net/http ceiling, each in its own process, driven by one Go load
# generator at 1, 16, 64 and 256 connections, stateless and on 2025-11-25
# sessions, LOAD_DURATION per cell, the median of LOAD_ROUNDS rounds; then
# the memory of idle sessions. The tables and the targets (about five
# minutes; not part of test). See bench/README.md.
LOAD_DURATION ?= 2s
LOAD_ROUNDS ?= 3
bench-load:
	cd bench && $(GO) run ./cmd/load -duration $(LOAD_DURATION) -rounds $(LOAD_ROUNDS)

# One checked call to each server of bench-load, each started as its own
# process, in both modes, and the harness's own tests (seconds).
load-smoke:
	cd bench && $(GO) test -count=1 ./cmd/load/

run:
	$(GO) run ./examples/provision

# Every example must run to completion; CI runs them all.
examples:
	@for d in examples/*/; do [ -f $$d/main.go ] || continue; echo "== $$d"; $(GO) run ./$$d || exit 1; done
	@for t in stdio http; do echo "== examples/provision -transport $$t"; $(GO) run ./examples/provision -transport $$t || exit 1; done
	@for t in memory stdio http; do echo "== examples/provision -transport $$t -protocol 2025-11-25"; $(GO) run ./examples/provision -transport $$t -protocol 2025-11-25 || exit 1; done

# The parley command (cmd/parley): golden output of every subcommand, and
# its forms answered with keys in a real terminal, a tmux pane (scripts/
# deps.sh installs tmux); here a missing tmux is a failure, not a skip.
cli:
	PARLEY_REQUIRE_TMUX=1 $(GO) test -race -count=1 ./cmd/parley/

# The README's every shell block and every install line of the README and
# the guides, run as written in a sandbox: a copy of the checkout as the
# clone, a fresh module beside it (internal/docscheck).
docs:
	$(GO) test -count=1 ./internal/docscheck/

# Mutation testing of the security-critical packages (about 10 minutes; not
# part of test): see docs/testing.md.
mutate:
	$(GO) run scripts/mutate/main.go

# Three instances behind nginx through restarts and a key rotation, with a
# load driver that must see 0 failed flows (installs nginx and redis-server
# from Debian's archive when missing): see docs/guide/fleet.md.
fleet:
	bash examples/fleet/run.sh

# The official MCP conformance suite (installs Node 22 and the suite once,
# from the npm registry, into a cache folder).
conformance:
	bash conformance/run.sh

# Parley against peers built on the TypeScript SDK v2 (interop/, a module of
# its own): installs Node 22 and the SDK that interop/ts/package-lock.json
# pins once, from the npm registry, into a cache folder; here a missing
# Node.js or npm is a failure, not a skip. See interop/README.md.
interop:
	cd interop && $(GO) vet ./... && PARLEY_REQUIRE_INTEROP=1 $(GO) test -count=1 ./...

# MCP Apps in a real browser (browser/, a module of its own): the records
# app of examples/apps rendered by a test host page built on the
# extension's host library (@modelcontextprotocol/ext-apps) in Debian's
# headless Chromium, driven by playwright-core, in both protocol
# generations; and the MCP Inspector's --app-info probe of it. Installs
# Node 22 and what browser/js/package-lock.json pins once, from the npm
# registry, into a cache folder; a missing Chromium or Node.js is a
# failure here, not a skip. Screenshots go to $PARLEY_ARTIFACTS (default:
# a temporary folder the log names). See browser/README.md.
apps:
	cd browser && PARLEY_REQUIRE_BROWSER=1 $(GO) test -count=1 -v ./...

# The OpenTelemetry module (otel/, a module of its own, so the SDK does not
# depend on OpenTelemetry): vet, staticcheck, its tests with the race
# detector, its allocation budget without it, and its example run to
# completion (printing the span tree; no collector needed).
otel: $(STATICCHECK)
	cd otel && $(GO) vet ./... && $(STATICCHECK) ./... && $(GO) test -race -count=1 ./... && $(GO) test -count=1 -run AllocBudget ./... && $(GO) run ./examples/otlp
