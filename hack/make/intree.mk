# The upstream Cluster Autoscaler with our providers in-tree (intree/,
# docs/intree.md): CA's router_<p>.go imports ours in place of upstream's.
#
#   make ca CA_SRC=<cluster-autoscaler tree> PROVIDER=vultr   -> bin/cluster-autoscaler
#   make ca CA_SRC=<split-core tree> CA_CORE_SRC=<sigs.k8s.io/cluster-autoscaler checkout> PROVIDER=vultr
#                                                             (CA_CORE_SRC only where the module proxy lacks the core)
#   make ca-container CA_SRC=... PROVIDER=vultr               -> _out/oci/ca-vultr (daemonless OCI image, hack/container)
#   make ca-push CA_SRC=... PROVIDER=vultr IMAGE=<registry>/<repo> TAG=<tag>
#   make ca-test                                              the nested module's tests
#   make ca-compare CA_SRC=... [CA_CORE_SRC=...]              ours vs upstream's own provider (hack/intree/compare.sh)
#
# intree/ is a nested module outside MODULES (the Makefile says why).
# The CA tree is copied to _out/ca-src and changed there only; for a
# split-core tree, intree/ is rewritten into _out/intree-split
# (hack/intree/prepare.sh says how), and _out/ca-src.env names the
# generation and the in-tree module make ca-test runs.
CA_SRC  ?=
CA_CORE_SRC ?=
CA_TEST_FLAGS ?=
CA_OUT  := _out/ca-src
CA_BIN  ?= bin/cluster-autoscaler
CA_TAGS := $(if $(filter all,$(PROVIDER)),vultr volcengine exoscale,$(PROVIDER))

.PHONY: ca ca-src ca-test ca-container ca-push ca-compare

ca-src: ## copy CA_SRC to _out/ca-src with our providers in its router files
	hack/intree/prepare.sh '$(CA_SRC)' '$(CA_OUT)' '$(CA_CORE_SRC)'

ca: ca-src ## build upstream CA from CA_SRC with our PROVIDER in-tree into bin/cluster-autoscaler
	cd '$(CA_OUT)' && CGO_ENABLED=0 $(GO) build -trimpath -tags '$(CA_TAGS)' -ldflags '-s -w' -o '$(CURDIR)/$(CA_BIN)' .
	@echo "built $(CA_BIN): upstream cluster-autoscaler with --cloud-provider=$(CA_TAGS) from cluster-autoscaler-provider"

ca-test: ## go vet and go test the in-tree module against _out/ca-src, of either generation (make ca-src first)
	@if [ ! -f '$(CA_OUT).env' ]; then \
		echo "skip: $(CA_OUT).env is missing: the in-tree module builds against _out/ca-src; run make ca-src CA_SRC=<cluster-autoscaler tree> first"; \
	else \
		. './$(CA_OUT).env'; \
		echo "$$CA_GENERATION: cd $$CA_INTREE && $(GO) vet ./... && $(GO) test -race $(CA_TEST_FLAGS) ./..."; \
		cd "$$CA_INTREE" && $(GO) vet ./... && $(GO) test -race $(CA_TEST_FLAGS) ./...; \
	fi

# The image is built like ours (hack/container, no Docker engine, timestamps
# from the commit): the binary at /cluster-autoscaler as in upstream's image.
ca-container: ca-src _container-tool ## daemonless OCI image of the in-tree CA into _out/oci/ca-$(PROVIDER) (one provider or all)
	$(CONTAINER_TOOL) build --cluster-autoscaler --module-dir='$(CA_OUT)' --provider='$(PROVIDER)' --version='$(VERSION)' \
		--revision='$(REVISION)' --source-date-epoch='$(SOURCE_DATE_EPOCH)' --platforms='$(PLATFORMS)' \
		--out='_out/oci/ca-$(PROVIDER)' --digest-file='_out/oci/ca-$(PROVIDER).digest'

ca-push: _push-args ca-container ## build and push the in-tree CA image: CA_SRC=... PROVIDER=<p> IMAGE=<registry>/<repo> TAG=<tag>
	$(CONTAINER_TOOL) push --layout='_out/oci/ca-$(PROVIDER)' --image='$(IMAGE)' --tag='$(TAG)'

ca-compare: ## ours vs upstream's own in-tree provider from CA_SRC: size, start-up, RSS, cloud calls per loop (COMPARE_PROVIDERS)
	hack/intree/compare.sh '$(CA_SRC)' '$(CA_CORE_SRC)'
