#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with a stable toolchain and runs each for N seconds.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default: 30 s each, all targets)
#
# FUZZ_INPUT_TIMEOUT (default 120 s) is libFuzzer's per-input limit. Every target bounds its
# interpreters by steps, so an input can be slow but never endless; the limit only has to be
# well above the slowest bounded input under coverage instrumentation, or a smoke run fails
# on a slow input that is not a bug.
#
# cargo-fuzz needs nightly for its sanitizer flags; with `--sanitizer none` it only needs
# the SanitizerCoverage instrumentation, which stable rustc provides through -Cpasses and
# -Cllvm-args. This script passes exactly those flags to plain cargo, so neither cargo-fuzz
# nor nightly is required. (With cargo-fuzz installed, the equivalent is
# `RUSTC_BOOTSTRAP=1 cargo fuzz run <target> --sanitizer none`.)
# Seed corpora come from corpus/ (programs) and are copied into fuzz/corpus/<target>
# (ignored by git); crashes land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
input_timeout="${FUZZ_INPUT_TIMEOUT:-120}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(parse differential ir-roundtrip); fi

export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps RUSTFLAGS away from build scripts (as cargo-fuzz does).
host="$(rustc -vV | sed -n 's/^host: //p')"
cargo build --release --manifest-path fuzz/Cargo.toml --bins --target "$host"

for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    artifacts="fuzz/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    extra=()
    if [ "$target" = parse ]; then
        find corpus -name '*.sy' -exec cp -n {} "$corpus/" \;
        extra+=(-dict=fuzz/dict/sysy.dict)
    fi
    echo "fuzz.sh: $target for ${seconds}s"
    # -rss_limit_mb: the interpreters may allocate large arrays; 4 GiB is still a bug signal.
    "fuzz/target/$host/release/$target" "$corpus" "${extra[@]}" -artifact_prefix="$artifacts/" \
        -max_total_time="$seconds" -timeout="$input_timeout" -rss_limit_mb=4096 -print_final_stats=1 2>&1 \
        | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|==|SUMMARY|.*panicked)" || true
    if [ -n "$(ls -A "$artifacts")" ]; then
        echo "fuzz.sh: $target found crashes: $(ls "$artifacts")" >&2
        exit 1
    fi
    echo "fuzz.sh: $target: no crashes"
done
