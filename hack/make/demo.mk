# make demo PROVIDER=vultr|volcengine|exoscale: the simulated provider, a
# scale-up, a wait until the new node runs, and a deletion through "inspect",
# with before/after tables.
# PROVIDER=all (the default) demonstrates vultr.
.PHONY: demo

demo: ## simulated provider, a scale-up and a deletion through inspect
	GO='$(GO)' PROVIDER='$(PROVIDER)' TAGS='$(TAGS)' LDFLAGS='$(LDFLAGS)' hack/demo.sh
