# make chart: lint charts/cluster-autoscaler-provider with each provider's
# example values and package it into _out/charts (Helm Go library, no helm
# binary needed).
CHART_VALUES := $(foreach p,vultr volcengine exoscale,-values examples/helm/standalone/provider-$(p).yaml)
.PHONY: chart

chart: ## lint and package charts/cluster-autoscaler-provider into _out/charts
	$(GO) run ./hack/chart -out _out/charts $(CHART_VALUES) charts/cluster-autoscaler-provider
