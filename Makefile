# zkherd: two commands on a fresh Debian/Ubuntu machine.
#   make demo   start a local ZooKeeper ensemble and run the herd-vs-fair scenario
#   make test   run every test, integration tests against real ZooKeeper included
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
export GOTOOLCHAIN ?= auto
GO ?= go
GOTESTFLAGS ?= -race -count=1 -timeout 25m
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
