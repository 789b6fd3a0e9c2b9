# Proof targets (issue 7): CA-loop benchmark, chaos soak, fuzzing.
#   make bench                      table for docs/performance.md (minutes; not in CI)
#   make soak SOAK_DURATION=2h      chaos soak of all three providers
#   make fuzz FUZZTIME=1m           every fuzz target in turn
SOAK_DURATION ?= 60s
FUZZTIME      ?= 10s
BENCH_FLAGS   ?=
SOAK_FLAGS    ?=

.PHONY: bench soak fuzz

bench: build ## CA-loop benchmark for docs/performance.md (minutes)
	$(GO) run ./hack/bench -binary $(BIN) $(BENCH_FLAGS)

soak: ## chaos soak of all three providers (SOAK_DURATION)
	$(GO) run ./hack/soak -duration $(SOAK_DURATION) $(SOAK_FLAGS)

fuzz: ## every fuzz target in turn (FUZZTIME)
	GO='$(GO)' FUZZTIME=$(FUZZTIME) hack/ci-prove.sh fuzz
