# Build entry points. The README's quickstart uses `make campaign` (main job) and `make test`.
# Both install missing system packages first (scripts/install-deps.sh).

CARGO ?= cargo
MINUTES ?= 3
JOBS ?= 2

.PHONY: deps build test campaign conform fuzz-smoke bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

# The project's own tests (unit, filetests, corpus end-to-end under qemu, harness tests).
test: deps
	bash scripts/test.sh

# The main job: a short differential campaign with a report under results/.
campaign: build
	./target/release/harness campaign --minutes $(MINUTES) --jobs $(JOBS)

# libFuzzer smoke run: every target for FUZZ_SECONDS (stable toolchain; see scripts/fuzz.sh).
FUZZ_SECONDS ?= 30
fuzz-smoke: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The functional suite through every engine (needs the competition suites, $$SYSY_TESTS).
SYSY_TESTS ?= ../shared/sysy-tests
conform: build
	for e in ref "ir --opt 0" "ir --opt 2" "qemu --opt 0" "qemu --opt 2"; do \
		./target/release/harness conform $(SYSY_TESTS)/functional --engine $$e --jobs $(JOBS) | tail -n 1 || exit 1; \
	done

clean:
	$(CARGO) clean
