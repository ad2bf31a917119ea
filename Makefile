# zkherd: two commands on a fresh Debian/Ubuntu machine.
#   make demo   start a local ZooKeeper ensemble and run the herd-vs-fair scenario
#   make test   run every test, integration tests against real ZooKeeper included
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
export GOTOOLCHAIN ?= auto
GO ?= go
# -p 3: most packages' tests wait on ensembles and timed loads, so three
# packages at once keep two cores busy (docs/BENCHMARKS.md, "make test runs
# three packages at once": 525 s against 768 s).
GOTESTFLAGS ?= -race -count=1 -timeout 25m -p 3
# staticcheck, installed by scripts/setup.sh into $(go env GOPATH)/bin.
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: demo test setup build bench install

setup:
	@bash scripts/setup.sh

build: setup
	$(GO) build -o bin/zkherd .

install: setup
	$(GO) install .

demo: build
	./bin/zkherd demo

test: setup
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) test $(GOTESTFLAGS) ./...

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...
