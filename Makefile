# PROVIDER selects the compiled-in providers: vultr, volcengine, exoscale or all.
PROVIDER ?= all
BIN      ?= bin/cluster-autoscaler-provider
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO       ?= go
TAGS     := $(if $(filter all,$(PROVIDER)),,$(PROVIDER))
LDFLAGS  := -s -w -X main.version=$(VERSION)

.PHONY: build test lint proto verify clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

test:
	$(GO) test -race ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	for t in vultr volcengine exoscale; do $(GO) vet -tags $$t . ./router/ || exit 1; done

proto:
	hack/update-proto.sh

verify: lint
	hack/verify-proto.sh

clean:
	rm -rf bin _out

# Further targets (container, push, bench, soak, fuzz, demo) live in hack/make/.
-include hack/make/*.mk
