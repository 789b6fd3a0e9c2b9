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

# The repository's Go modules, each tested, vetted, staticchecked and tidied
# on its own. The root holds the providers and the binary. The upstream
# Cluster Autoscaler can build our packages in with this module as a
# dependency, and Go's version selection then takes every requirement of the
# root go.mod, so tools and tests that need more than the providers do are
# nested modules: test/ (the examples' checks: kustomize, Helm), hack/chart
# (Helm) and hack/container (go-containerregistry).
MODULES := . test hack/chart hack/container
# Nested modules outside MODULES, each with its reason: hack/apiserver only
# builds kube-apiserver for hack/apiserver/run.sh (about 10 min the first
# time) and has no tests; intree builds against a Cluster Autoscaler tree
# that make ca-src prepares (the module proxy does not serve CA), so make
# ca-test runs its tests (hack/make/intree.mk).
OTHER_MODULES := hack/apiserver intree

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

.PHONY: help build test lint staticcheck tidy actionlint shellcheck proto verify clean

# help lists every target with the text after its "##", from this file and
# hack/make/*.mk. Internal targets start with "_" and are never listed.
help: ## list the make targets
	@awk -F ':.*## ' '/^[a-zA-Z0-9][a-zA-Z0-9_-]*:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## build bin/cluster-autoscaler-provider (PROVIDER=vultr|volcengine|exoscale|all, VERSION)
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

# test runs every module's tests, also after one module fails, and names the
# modules that failed.
test: ## go test -race ./... in every module of MODULES (no network or credentials needed)
	@failed=; for m in $(MODULES); do \
		echo "== go test -race ./... in $$m"; \
		$(GO) test -C $$m -race ./... || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "tests failed in:$$failed"; exit 1; fi

lint: ## gofmt, go vet (every module; the root's default build and each provider tag)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	for m in $(MODULES); do $(GO) vet -C $$m ./... || exit 1; done
	for t in vultr volcengine exoscale; do $(GO) vet -tags $$t . ./router/ || exit 1; done

tidy: ## go mod tidy in every module of MODULES
	for m in $(MODULES); do $(GO) mod tidy -C $$m || exit 1; done

# staticcheck installs the pinned version into bin/tools once, then checks
# every module and the root's build with each provider tag.
staticcheck: $(STATICCHECK) ## staticcheck at the pinned version (installed into bin/tools once), every module
	for m in $(MODULES); do (cd $$m && $(CURDIR)/$(STATICCHECK) ./...) || exit 1; done
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

verify: lint ## lint, and check the generated code is current and every go.mod tidy
	hack/verify-proto.sh
	for m in $(MODULES); do $(GO) mod tidy -C $$m -diff || { echo "go.mod or go.sum of $$m is not tidy: run make tidy"; exit 1; }; done

clean: ## remove bin/ and _out/
	rm -rf bin _out

# Further targets (chart, container, push, bench, soak, fuzz, demo) live in
# hack/make/; make help lists them too.
-include hack/make/*.mk
