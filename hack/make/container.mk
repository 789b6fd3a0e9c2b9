# Daemonless OCI image build and push (hack/container, go-containerregistry).
#
#   make container PROVIDER=vultr|volcengine|exoscale|all   -> _out/oci/$(PROVIDER) (OCI layout)
#   make push PROVIDER=... IMAGE=<registry>/<repo> TAG=<tag>  (credentials: the Docker config)
#   make container-verify PROVIDER=all                        build twice, compare digests
#
# Timestamps come from the commit (SOURCE_DATE_EPOCH), so rebuilding a commit
# gives the same digest. hack/container is a module of its own
# (go-containerregistry stays out of the root go.mod): it is built from its
# folder into bin/tools and run from here, where it compiles the provider
# with the root module.
IMAGE             ?=
TAG               ?= $(VERSION)
PLATFORMS         ?= linux/amd64,linux/arm64
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
CONTAINER_OUT     ?= _out/oci/$(PROVIDER)
CONTAINER_TOOL    := bin/tools/container
CONTAINER_FLAGS   = --provider='$(PROVIDER)' --version='$(VERSION)' --revision='$(REVISION)' \
	--source-date-epoch='$(SOURCE_DATE_EPOCH)' --platforms='$(PLATFORMS)' --ldflags='$(LDFLAGS)'

.PHONY: container push _push-args container-verify _container-tool

container: _container-tool ## daemonless OCI image into _out/oci/$(PROVIDER)
	$(CONTAINER_TOOL) build $(CONTAINER_FLAGS) --out='$(CONTAINER_OUT)' --digest-file='$(CONTAINER_OUT).digest'

push: _push-args container ## build and push the image: IMAGE=<registry>/<repo> TAG=<tag>
	$(CONTAINER_TOOL) push --layout='$(CONTAINER_OUT)' --image='$(IMAGE)' --tag='$(TAG)'

# _container-tool (internal) builds hack/container into bin/tools.
_container-tool:
	$(GO) build -C hack/container -o $(CURDIR)/$(CONTAINER_TOOL) .

# _push-args (internal, used by push) refuses to build without IMAGE and TAG.
_push-args:
	@test -n '$(IMAGE)' && test -n '$(TAG)' || { echo 'usage: make push IMAGE=<registry>/<repo> TAG=<tag> [PROVIDER=...]' >&2; exit 2; }

container-verify: _container-tool ## build the image twice and compare digests
	$(CONTAINER_TOOL) build $(CONTAINER_FLAGS) --out='_out/verify/$(PROVIDER)-1' --digest-file='_out/verify/$(PROVIDER)-1.digest'
	$(CONTAINER_TOOL) build $(CONTAINER_FLAGS) --out='_out/verify/$(PROVIDER)-2' --digest-file='_out/verify/$(PROVIDER)-2.digest'
	@if cmp -s '_out/verify/$(PROVIDER)-1.digest' '_out/verify/$(PROVIDER)-2.digest'; then \
		echo "reproducible: $$(cat '_out/verify/$(PROVIDER)-1.digest')"; \
	else \
		echo "NOT reproducible:"; cat '_out/verify/$(PROVIDER)-1.digest' '_out/verify/$(PROVIDER)-2.digest'; exit 1; \
	fi
