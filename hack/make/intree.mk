# The upstream Cluster Autoscaler with our providers in-tree (intree/,
# docs/intree.md): CA's router_<p>.go imports ours in place of upstream's.
#
#   make ca CA_SRC=<cluster-autoscaler tree> PROVIDER=vultr   -> bin/cluster-autoscaler
#   make ca-container CA_SRC=... PROVIDER=vultr               -> _out/oci/ca-vultr (daemonless OCI image, hack/container)
#   make ca-push CA_SRC=... PROVIDER=vultr IMAGE=<registry>/<repo> TAG=<tag>
#   make ca-test                                              the nested module's tests
#
# intree/ is a nested module outside MODULES (the Makefile says why).
# The CA tree is copied to _out/ca-src and changed there only.
CA_SRC  ?=
CA_OUT  := _out/ca-src
CA_BIN  ?= bin/cluster-autoscaler
CA_TAGS := $(if $(filter all,$(PROVIDER)),vultr volcengine exoscale,$(PROVIDER))

.PHONY: ca ca-src ca-test ca-container ca-push

ca-src: ## copy CA_SRC to _out/ca-src with our providers in its router files
	hack/intree/prepare.sh '$(CA_SRC)' '$(CA_OUT)'

ca: ca-src ## build upstream CA from CA_SRC with our PROVIDER in-tree into bin/cluster-autoscaler
	cd '$(CA_OUT)' && CGO_ENABLED=0 $(GO) build -trimpath -tags '$(CA_TAGS)' -ldflags '-s -w' -o '$(CURDIR)/$(CA_BIN)' .
	@echo "built $(CA_BIN): upstream cluster-autoscaler with --cloud-provider=$(CA_TAGS) from cluster-autoscaler-provider"

ca-test: ## go test the nested module intree/ against _out/ca-src (make ca-src first)
	@if [ ! -f '$(CA_OUT)/go.mod' ]; then \
		echo "skip: $(CA_OUT) is missing: intree/go.mod builds against it; run make ca-src CA_SRC=<cluster-autoscaler tree> first"; \
	else \
		echo "cd intree && $(GO) vet ./... && $(GO) test -race ./..."; \
		cd intree && $(GO) vet ./... && $(GO) test -race ./...; \
	fi

# The image is built like ours (hack/container, no Docker engine, timestamps
# from the commit): the binary at /cluster-autoscaler as in upstream's image.
ca-container: ca-src _container-tool ## daemonless OCI image of the in-tree CA into _out/oci/ca-$(PROVIDER) (one provider or all)
	$(CONTAINER_TOOL) build --cluster-autoscaler --module-dir='$(CA_OUT)' --provider='$(PROVIDER)' --version='$(VERSION)' \
		--revision='$(REVISION)' --source-date-epoch='$(SOURCE_DATE_EPOCH)' --platforms='$(PLATFORMS)' \
		--out='_out/oci/ca-$(PROVIDER)' --digest-file='_out/oci/ca-$(PROVIDER).digest'

ca-push: _push-args ca-container ## build and push the in-tree CA image: CA_SRC=... PROVIDER=<p> IMAGE=<registry>/<repo> TAG=<tag>
	$(CONTAINER_TOOL) push --layout='_out/oci/ca-$(PROVIDER)' --image='$(IMAGE)' --tag='$(TAG)'
