# kubecause — see README.md. `make demo` runs it, `make test` tests everything.
SHELL := /usr/bin/env bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
BRANCH ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
export VERSION REVISION BRANCH
# Every script a target runs. They are run with bash (an exec bit lost in a checkout does not matter)
# and checked here, when make starts: a missing one stops make instead of skipping a test
# (internal/repo/scripts_test.go checks the same list against the scripts this Makefile names).
SCRIPTS := hack/ldflags.sh hack/install-deps.sh hack/lint-mixin.sh hack/bench-apiserver.sh hack/e2e.sh \
	hack/demo.sh hack/image.sh hack/release.sh hack/compat.sh
$(foreach s,$(SCRIPTS),$(if $(wildcard $(s)),,$(error $(s) is missing: the Makefile runs it)))
# The linker flags of every build (Makefile, hack/image.sh through .ko.yaml, Dockerfile) come from one script.
LDFLAGS = $(shell bash hack/ldflags.sh)
# Heavy tool builds (kube-apiserver, etcd, kube-state-metrics, promtool, …) are cached here by version.
export KUBECAUSE_CACHE ?= $(HOME)/.cache/kubecause
BIN := bin/kubecause
# A prefix for the compile-bound phases; `make test` sets it so that they yield the CPU to the e2e suite.
YIELD ?=

.PHONY: all build deps test unit fuzz lint generate check-generated bench e2e compat real-messages demo image release clean

all: build

deps: ## install what the build and the tests need (idempotent)
	bash hack/install-deps.sh

build: ## the kubecause binary
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./exporter/cmd/kubecause

unit: ## unit tests with the race detector
	$(YIELD) $(GO) test -race -count=1 -timeout 30m ./...

# Each fuzz target for a bounded time (FUZZTIME each); their seed corpora also run in `make unit`.
FUZZTIME ?= 15s
FUZZ_TARGETS := ./exporter/events:FuzzViewExposition ./exporter/events/snapshotfile:FuzzSnapshotDecode ./exporter/explain:FuzzDecode ./exporter/causes:FuzzClassify ./exporter/labels:FuzzValue
fuzz: ## run every fuzz target for FUZZTIME
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		$(YIELD) $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) "$$pkg" || exit 1; done

lint: ## gofmt, go vet, rule and dashboard lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(YIELD) $(GO) vet ./...
	$(YIELD) $(GO) vet -tags e2e,load,image,compat ./...
	$(YIELD) bash hack/lint-mixin.sh

# Generators in the order they must run: deploy.sh copies and renders what mixin.sh writes.
# scrape.sh records the golden /metrics (exporter/events/testdata/scrape.golden.txt).
GENERATORS := causes-doc scrape mixin deploy chart-readme
generate: ## regenerate committed outputs (rules, dashboards, docs tables, deploy/, the golden scrape)
	@for g in hack/generate/*.sh; do case " $(GENERATORS) " in *" $$(basename "$$g" .sh) "*) ;; \
		*) echo "$$g is not listed in GENERATORS (Makefile)" >&2; exit 1;; esac; done
	@for g in $(GENERATORS); do echo "== hack/generate/$$g.sh"; bash "hack/generate/$$g.sh" || exit 1; done

GENERATED := rules dashboards deploy docs slo exporter/events/testdata/scrape.golden.txt
check-generated: generate ## fail when committed generated files are stale
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are stale: run 'make generate' and commit"; git status --porcelain -- $(GENERATED); git diff --stat; exit 1; fi

bench: ## in-process benchmarks (benchstat-friendly)
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./exporter/...
	bash hack/bench-apiserver.sh

e2e: deps build ## end-to-end tests on real components (127.0.0.1 only)
	bash hack/e2e.sh

# Not part of make test: builds older releases (hack/compat-deps.sh, cached by version) and runs
# each cell of the matrix one after the other (docs/e2e.md, "Compatibility matrix").
compat: deps build ## compatibility matrix: older and newer kube-apiserver, kube-state-metrics, promtool, Alertmanager; writes docs/measurements/compat-<date>.md
	bash hack/compat.sh

real-messages: deps build ## re-record the real node's Event messages into the classifier's fixture (new ones: cause TODO)
	KUBECAUSE_REAL_MESSAGES=$(CURDIR)/exporter/causes/testdata/real-node.yaml bash hack/e2e.sh -run '^TestRealNode(Incident)?$$'

# The demo installs only what it runs (hack/demo.sh: Debian packages, control plane, kubelet), not
# the lint, rule-test and chart tools of `deps`.
demo: build ## local control plane + seed scenarios, or KUBECONFIG=... for a real cluster
	bash hack/demo.sh

# IMAGE_PLATFORMS: make test builds linux/amd64 alone; make release both.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
image: deps ## linux/amd64+arm64 image into bin/image without a Docker daemon; tests its binary
	VERSION=$(VERSION) REVISION=$(REVISION) BRANCH=$(BRANCH) KUBECAUSE_IMAGE_PLATFORMS=$(IMAGE_PLATFORMS) $(YIELD) bash hack/image.sh

release: deps ## image (multi-arch OCI archive + SBOMs), Helm chart and checksums into bin/release; VERSION=vX.Y.Z
	VERSION=$(if $(filter command line environment,$(origin VERSION)),$(VERSION)) bash hack/release.sh

# The whole suite. The e2e suite spends most of its time in designed waits (alerts' `for`, pod alerts
# held 2 min past the last bad sample, the real node's 5-minute NodeNotReady hold and 10-minute
# kube-state-metrics outage, pods starting), using well under one core, while lint, the race-detector
# unit tests, fuzzing and the image build compile with every core: so, once the generated files are
# checked (make generate rewrites files the e2e stacks read), the five run side by side
# (docs/e2e.md, "How long"). Each must pass: with -k all five run to their end, make reports each
# that failed and exits non-zero. Their output is not held back (make's --output-sync would keep the
# e2e suite's until it ends): their lines interleave. The four compile-bound phases yield the CPU
# to the e2e suite (YIELD, nice): its test binaries compile first and its stacks and real node keep
# their pace; the compiles take what the suite leaves idle.
test: deps check-generated ## the whole test suite (what CI runs)
	$(MAKE) --no-print-directory -k -j5 YIELD="nice -n 15" IMAGE_PLATFORMS=linux/amd64 e2e lint unit fuzz image

clean:
	rm -rf bin
