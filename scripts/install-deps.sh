#!/usr/bin/env bash
# Installs the system packages the project needs if they are missing: the ARM cross toolchain
# (assembler, linker, armhf glibc for static linking) and the user-mode emulator qemu-arm.
# Idempotent; uses sudo when not run as root. Rust (cargo) must already be installed.
# Arguments name further packages to install (scripts/build-campaign.sh: `llvm-<major>`).
set -euo pipefail

missing=("$@")
command -v arm-linux-gnueabihf-gcc >/dev/null 2>&1 || missing+=(gcc-arm-linux-gnueabihf)
# The armhf C library headers and static libc are only a recommendation of the cross gcc, which
# `--no-install-recommends` skips: without them the runtime library does not compile.
[ -f /usr/arm-linux-gnueabihf/include/stdio.h ] && [ -f /usr/arm-linux-gnueabihf/lib/libc.a ] ||
    missing+=(libc6-dev-armhf-cross)
command -v qemu-arm >/dev/null 2>&1 || missing+=(qemu-user)

if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}" >&2
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "install-deps: need root or sudo to install ${missing[*]}" >&2
            exit 1
        fi
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo not found; install Rust (https://rustup.rs, stable >= 1.85) first" >&2
    exit 1
fi
