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

.PHONY: build test lint staticcheck proto verify clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

test:
	$(GO) test -race ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	for t in vultr volcengine exoscale; do $(GO) vet -tags $$t . ./router/ || exit 1; done

# staticcheck installs the pinned version into bin/tools once, then checks the
# default build (every provider) and each provider tag's own files.
staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...
	for t in vultr volcengine exoscale; do $(STATICCHECK) -tags $$t . ./router/ || exit 1; done

$(STATICCHECK):
	mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/install $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/tools/install/staticcheck $@

proto:
	hack/update-proto.sh

verify: lint
	hack/verify-proto.sh

clean:
	rm -rf bin _out

# Further targets (container, push, bench, soak, fuzz, demo) live in hack/make/.
-include hack/make/*.mk
