#!/usr/bin/env bash
# The project's test command (README quickstart, `make test`, `.ci/run`).
#
# Installs missing system packages, builds the whole workspace (the QEMU cost plugin is a
# cdylib the tests load from target/), then runs every test of every crate: unit tests,
# filetests, the corpus end to end under qemu-arm, harness tests. cargo-nextest runs them
# when installed (faster, per-test isolation, a summary line); otherwise `cargo test`.
# Tests that use the competition suites find them through $SYSY_TESTS (default: see
# scripts/suites.sh) and skip, saying so, when they are absent.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

SYSY_TESTS="$(bash scripts/suites.sh)"
export SYSY_TESTS
echo "test.sh: competition suites: ${SYSY_TESTS:-not found (suite tests skip)}"

cargo build --workspace --all-targets

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@"
    cargo test --workspace --doc
    # The fault-injection tests: the harness must catch each deliberate miscompile. The
    # feature changes the compiler, so these run in a separate build.
    cargo nextest run -p harness --features fault-injection --no-fail-fast -E 'test(/fault|_is_detected|triaged/)' "$@"
else
    cargo test --workspace --no-fail-fast "$@"
    cargo test -p harness --features fault-injection --no-fail-fast "$@"
fi
