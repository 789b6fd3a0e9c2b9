# PROVIDER selects the compiled-in providers: vultr, volcengine, exoscale or all.
PROVIDER ?= all
BIN      ?= bin/cluster-autoscaler-provider
# VERSION is what --version prints: the release in release.go (the newest
# CHANGELOG.md entry) unless given, e.g. VERSION=$$(git describe --tags --dirty).
RELEASE  := $(shell sed -n 's/^const release = "\(.*\)"$$/\1/p' release.go)
VERSION  ?= $(RELEASE)
GO       ?= go
TAGS     := $(if $(filter all,$(PROVIDER)),,$(PROVIDER))
LDFLAGS  := -s -w -X main.version=$(VERSION)

# staticcheck is pinned: a new release may add checks, and CI must not turn
# red without a change of ours. v0.8.2 is the first to support Go 1.26.
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := bin/tools/staticcheck-$(STATICCHECK_VERSION)

# actionlint is pinned the same way. It checks .github/workflows and, when
# shellcheck is installed, the shell in their run: blocks.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT         := bin/tools/actionlint-$(ACTIONLINT_VERSION)

# make alone builds; make help lists the targets.
.DEFAULT_GOAL := build

.PHONY: help build test lint staticcheck actionlint shellcheck proto verify clean

# help lists every target with the text after its "##", from this file and
# hack/make/*.mk. Internal targets start with "_" and are never listed.
help: ## list the make targets
	@awk -F ':.*## ' '/^[a-zA-Z0-9][a-zA-Z0-9_-]*:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## build bin/cluster-autoscaler-provider (PROVIDER=vultr|volcengine|exoscale|all, VERSION)
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

test: ## go test -race ./... (no network or credentials needed)
	$(GO) test -race ./...

lint: ## gofmt, go vet (default build and each provider tag)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	for t in vultr volcengine exoscale; do $(GO) vet -tags $$t . ./router/ || exit 1; done

# staticcheck installs the pinned version into bin/tools once, then checks the
# default build (every provider) and each provider tag's own files.
staticcheck: $(STATICCHECK) ## staticcheck at the pinned version (installed into bin/tools once)
	$(STATICCHECK) ./...
	for t in vultr volcengine exoscale; do $(STATICCHECK) -tags $$t . ./router/ || exit 1; done

$(STATICCHECK):
	mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/install $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/tools/install/staticcheck $@

actionlint: $(ACTIONLINT) ## lint .github/workflows at the pinned actionlint (shellcheck on run: blocks when installed)
	$(ACTIONLINT) -no-color

# shellcheck is Debian's (apt-get install shellcheck); .ci/run installs it.
shellcheck: ## shellcheck the repository's shell scripts (needs shellcheck installed)
	shellcheck $$(git ls-files '*.sh') .ci/run

$(ACTIONLINT):
	mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/install $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv bin/tools/install/actionlint $@

proto: ## regenerate the externalgrpc protobuf code
	hack/update-proto.sh

verify: lint ## lint and check the generated code is current
	hack/verify-proto.sh

clean: ## remove bin/ and _out/
	rm -rf bin _out

# Further targets (chart, container, push, bench, soak, fuzz, demo) live in
# hack/make/; make help lists them too.
-include hack/make/*.mk
