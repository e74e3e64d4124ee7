#!/usr/bin/env bash
# Builds the campaign binary, `target/campaign/harness`, and its cost plugin: the `campaign`
# profile (release, fat LTO, one codegen unit), guided by the profile of a training campaign
# (PGO) when an `llvm-profdata` of rustc's own LLVM version can be found or installed.
#
# Why: a campaign runs the generator, the reference interpreter, the compiler and the IR
# interpreter in-process, millions of times, over code whose hot paths (pass manager,
# analyses, regalloc2, the interpreters' dispatch) a static build can only guess. With the
# profile, the same campaign needs less CPU per check (figures in the README).
#
# How:
#  1. The key: a hash of `rustc -vV`, this script and every file the binary is built from
#     (tracked or not, so an uncommitted edit counts): Rust and C sources, manifests,
#     Cargo.lock.
#  2. `target/pgo/<key>.profdata` exists: go to 5.
#  3. An instrumented build (`-Cprofile-generate`) in `target/pgo/gen`, with the `campaign`
#     profile too: a profile matches functions by their symbol names, and cargo's symbol
#     hashes differ between profiles (a release-built profile leaves a campaign build as it was).
#  4. Training: `harness campaign --programs 60 --jobs 2 --seed 1` in a scratch directory that
#     is deleted afterwards (its records are not kept); the raw profiles are merged into
#     `target/pgo/<key>.profdata` and older profiles are deleted.
#  5. The campaign build with `-Cprofile-use` of that file (appended to $RUSTFLAGS).
#
# Arguments go to every `cargo build` (`--locked`, say). `PGO=0` builds without a profile.
# Without a matching `llvm-profdata` (`$LLVM_PROFDATA`, rustup's llvm-tools, `llvm-profdata-<major>`
# on PATH; else apt's `llvm-<major>` as root or with sudo, else `rustup component add
# llvm-tools`), the build goes on without a profile and says so: a profile never decides
# whether the binary builds, and it changes no result of a run, only its speed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo=${CARGO:-cargo}
packages=(-p harness -p sysy-cost-plugin "$@")

plain_build() {
    "$cargo" build --profile campaign "${packages[@]}"
}

if [ "${PGO:-1}" = 0 ]; then
    plain_build
    exit 0
fi

llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')

# Prints the path of an llvm-profdata whose LLVM major version is rustc's, or nothing.
find_profdata() {
    local candidates=() c
    [ -n "${LLVM_PROFDATA:-}" ] && candidates+=("$LLVM_PROFDATA")
    candidates+=("$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata)
    candidates+=("llvm-profdata-$llvm_major" llvm-profdata)
    for c in "${candidates[@]}"; do
        if command -v "$c" >/dev/null 2>&1 &&
            "$c" --version 2>/dev/null | grep -E "LLVM version $llvm_major\." >/dev/null; then
            command -v "$c"
            return
        fi
    done
}

profdata=$(find_profdata)
if [ -z "$profdata" ] && command -v apt-get >/dev/null 2>&1; then
    bash scripts/install-deps.sh "llvm-$llvm_major" >&2 || true
    profdata=$(find_profdata)
fi
if [ -z "$profdata" ] && command -v rustup >/dev/null 2>&1; then
    timeout 120 rustup component add llvm-tools >&2 || true
    profdata=$(find_profdata)
fi
if [ -z "$profdata" ]; then
    echo "build-campaign: no llvm-profdata of LLVM $llvm_major (rustc's); building without a profile" >&2
    plain_build
    exit 0
fi

key=$({
    rustc -vV
    cat Cargo.lock scripts/build-campaign.sh
    find Cargo.toml compiler harness \( -name target -prune \) -o -type f \
        \( -name '*.rs' -o -name '*.c' -o -name '*.h' -o -name Cargo.toml \) -print | LC_ALL=C sort |
        while read -r f; do echo "$f"; cat "$f"; done
} | sha256sum | cut -c1-16)
pgo=$root/target/pgo
profile=$pgo/$key.profdata

# Steps 3 and 4; fails when no profile came of them.
train() {
    echo "build-campaign: training profile $key (instrumented build, then a 60-program campaign)" >&2
    mkdir -p "$pgo"
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$pgo/raw" CARGO_TARGET_DIR=$pgo/gen \
        "$cargo" build --profile campaign "${packages[@]}" || return 1
    rm -rf "$pgo/raw"
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    # The scratch directory is the working directory too: the guests' qemu processes run with
    # an empty environment and would drop their own (unused) profiles there. A campaign that
    # finds a failure still profiles the code it ran.
    (cd "$scratch" && LLVM_PROFILE_FILE="$pgo/raw/harness-%p-%m.profraw" \
        "$pgo/gen/campaign/harness" campaign --programs 60 --jobs 2 --seed 1 --out "$scratch/campaign" >/dev/null) ||
        echo "build-campaign: the training campaign exited with status $?; using its profile" >&2
    "$profdata" merge -o "$profile.tmp" "$pgo"/raw/*.profraw || return 1
    rm -rf "$pgo/raw"
    find "$pgo" -maxdepth 1 -name '*.profdata' ! -name "$key.profdata" -delete
    mv "$profile.tmp" "$profile"
}

if [ ! -f "$profile" ] && ! train; then
    rm -f "$profile.tmp"
    echo "build-campaign: no profile could be made; building without one" >&2
    plain_build
    exit 0
fi

echo "build-campaign: profile $key" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile" "$cargo" build --profile campaign "${packages[@]}"
