# The project's test command is `make test`; .ci/run calls it.
GO ?= go

.PHONY: test fmt vet unit allocs examples conformance bench run mutate

test: fmt vet unit allocs examples conformance

fmt:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	@# Every listed mutation must still apply to the code it names, so that
	@# `make mutate` keeps measuring what docs/testing.md says it does.
	$(GO) run scripts/mutate/main.go -check

# The Redis single-use store is tested against a real redis-server
# (scripts/deps.sh installs it); here its absence is a failure, not a skip.
unit:
	PARLEY_REQUIRE_REDIS=1 $(GO) test -race ./...

# Allocation budgets are asserted without -race, which perturbs them.
allocs:
	$(GO) test -count=1 -run 'AllocBudget' ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

run:
	$(GO) run ./examples/provision

# Every example must run to completion; CI runs them all.
examples:
	@for d in examples/*/; do echo "== $$d"; $(GO) run ./$$d || exit 1; done
	@for t in stdio http; do echo "== examples/provision -transport $$t"; $(GO) run ./examples/provision -transport $$t || exit 1; done
	@for t in memory stdio http; do echo "== examples/provision -transport $$t -protocol 2025-11-25"; $(GO) run ./examples/provision -transport $$t -protocol 2025-11-25 || exit 1; done

# Mutation testing of the security-critical packages (about 4 minutes; not
# part of test): see docs/testing.md.
mutate:
	$(GO) run scripts/mutate/main.go

# The official MCP conformance suite (installs Node 22 and the suite once,
# from the npm registry, into a cache folder).
conformance:
	bash conformance/run.sh
