# Build entry points. The README's quickstart uses `make campaign` (main job) and `make test`.
# Both install missing system packages first (scripts/install-deps.sh).

CARGO ?= cargo
MINUTES ?= 3
JOBS ?= 2
# PGO=1: `make campaign` builds the campaign binary with fat LTO and a training profile
# (scripts/build-campaign.sh, about 15 minutes on 2 cores) instead of the plain release build
# (a few minutes): worth it for long campaigns and nightlies (the container image always
# builds it), not for the quickstart. Figures in results/campaign/README.md.
PGO ?= 0

.PHONY: deps build test campaign conform fuzz-smoke bench speedup clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

# The project's own tests (unit, filetests, corpus end-to-end under qemu, harness tests).
test: deps
	bash scripts/test.sh

# The main job: a short differential campaign with a report under results/campaigns/. The
# release build by default (shared with `make build`, `bench`, `speedup`); PGO=1 the
# `campaign` profile (fat LTO, profile-guided: Cargo.toml, scripts/build-campaign.sh).
ifeq ($(PGO),1)
CAMPAIGN_HARNESS = target/campaign/harness
else
CAMPAIGN_HARNESS = target/release/harness
endif
campaign: deps
ifeq ($(PGO),1)
	CARGO=$(CARGO) PGO=1 bash scripts/build-campaign.sh
else
	$(CARGO) build --release -p harness -p sysy-cost-plugin
endif
	./$(CAMPAIGN_HARNESS) campaign --minutes $(MINUTES) --jobs $(JOBS)

# libFuzzer smoke run: every target for FUZZ_SECONDS (stable toolchain; see scripts/fuzz.sh).
FUZZ_SECONDS ?= 30
fuzz-smoke: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The functional suite through every engine (needs the competition suites, $$SYSY_TESTS).
SYSY_TESTS ?= $(shell bash scripts/suites.sh)
conform: build
	for e in ref "ir -O0" "ir -O2" "qemu -O0" "qemu -O2"; do \
		./target/release/harness conform $(SYSY_TESTS)/functional --engine $$e --jobs $(JOBS) | tail -n 1 || exit 1; \
	done
# The performance suite with sysyc -O0 and -O2 against gcc -O2 (cost plugin counts), into
# results/bench/. The tables are written even when a case fails (then the command fails too).
PERF_SUITE ?= $(SYSY_TESTS)/performance
bench: build
	-./target/release/harness bench $(PERF_SUITE) -O0 --vs-gcc --jobs $(JOBS) --out results/bench/performance-O0.csv
	./target/release/harness bench $(PERF_SUITE) -O2 --vs-gcc --jobs $(JOBS) --out results/bench/performance-O2.csv

# Per-pass speedup report over corpus/bench (SUITE=DIR for another suite), into
# results/speedup/<date>/.
speedup: build
	./target/release/harness report speedup $(if $(SUITE),--suite $(SUITE)) --jobs $(JOBS)

clean:
	$(CARGO) clean
