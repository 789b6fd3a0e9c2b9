# make chart: lint charts/cluster-autoscaler-provider with each provider's
# example values and package it into _out/charts (Helm Go library, no helm
# binary needed). hack/chart is a module of its own (Helm stays out of the
# root go.mod): built from its folder into bin/tools, run from here.
CHART_VALUES := $(foreach p,vultr volcengine exoscale,-values examples/helm/standalone/provider-$(p).yaml)
CHART_TOOL   := bin/tools/chart
.PHONY: chart

chart: ## lint and package charts/cluster-autoscaler-provider into _out/charts
	$(GO) build -C hack/chart -o $(CURDIR)/$(CHART_TOOL) .
	$(CHART_TOOL) -out _out/charts $(CHART_VALUES) charts/cluster-autoscaler-provider
