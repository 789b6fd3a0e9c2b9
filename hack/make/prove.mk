# Proof targets: CA-loop benchmark, chaos soak, fuzzing.
#   make bench                      table for docs/performance.md (minutes; not in CI)
#   make soak SOAK_DURATION=2h      chaos soak of all three providers
#   make soak-binary                the same against the built binary (--simulate-faults)
#   make fuzz FUZZTIME=1m           every fuzz target in turn
SOAK_DURATION ?= 60s
FUZZTIME      ?= 10s
BENCH_FLAGS   ?=
SOAK_FLAGS    ?=

.PHONY: bench soak soak-binary fuzz

bench: build ## CA-loop benchmark for docs/performance.md (minutes)
	$(GO) run ./hack/bench -binary $(BIN) $(BENCH_FLAGS)

soak: ## chaos soak of all three providers (SOAK_DURATION)
	$(GO) run ./hack/soak -duration $(SOAK_DURATION) $(SOAK_FLAGS)

soak-binary: build ## chaos soak of the built binary with --simulate and --simulate-faults, over gRPC (SOAK_DURATION)
	$(GO) run ./hack/soak -binary $(BIN) -duration $(SOAK_DURATION) -faults 5xx,429+Retry-After,reset,slow,malformed,lost-answer,slow-applied $(SOAK_FLAGS)

fuzz: ## every fuzz target in turn (FUZZTIME)
	GO='$(GO)' FUZZTIME=$(FUZZTIME) hack/ci-prove.sh fuzz
