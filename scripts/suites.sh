#!/usr/bin/env bash
# Prints the directory of the public competition suites (functional/, performance/), as
# `sysyc::suites::sysy_tests_dir` finds it: `$SYSY_TESTS` when set, else the first
# `shared/sysy-tests` beside the checkout or beside one of its ancestor directories. Prints
# nothing (and exits 0) when there is none: the tests that need the suites then skip.
set -euo pipefail
if [ -n "${SYSY_TESTS:-}" ]; then
    [ -d "$SYSY_TESTS" ] && (cd "$SYSY_TESTS" && pwd)
    exit 0
fi
dir="$(cd "$(dirname "$0")/.." && pwd)"
while [ "$dir" != / ]; do
    dir="$(dirname "$dir")"
    if [ -d "$dir/shared/sysy-tests" ]; then
        echo "$dir/shared/sysy-tests"
        exit 0
    fi
done
