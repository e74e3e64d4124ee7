#!/usr/bin/env bash
# Writes NAME.out for every NAME.sy of a directory from the reference interpreter, in the
# competition convention: the program's stdout, a newline if it does not end with one, then
# the exit status on its own line. Usage: scripts/expected-outputs.sh DIR [NAME...]
set -euo pipefail
dir=$1
shift
harness=${HARNESS:-target/release/harness}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in "$dir"/*.sy; do names+=("$(basename "$f" .sy)"); done
fi
for name in "${names[@]}"; do
    src="$dir/$name.sy"
    input=/dev/null
    [ -f "$dir/$name.in" ] && input="$dir/$name.in"
    out=$(mktemp)
    err=$(mktemp)
    status=0
    "$harness" interp "$src" <"$input" >"$out" 2>"$err" || status=$?
    # A program's own status can be anything from 0 to 255; a trap or a limit is told apart
    # by the interpreter's message on stderr.
    if grep -qE '^(trap|timeout|error)' "$err"; then
        echo "$name: the reference interpreter failed (status $status):" >&2
        cat "$err" >&2
        rm -f "$out" "$err"
        exit 1
    fi
    rm -f "$err"
    if [ -s "$out" ] && [ "$(tail -c 1 "$out" | od -An -c | tr -d ' ')" != '\n' ]; then
        echo >>"$out"
    fi
    echo "$status" >>"$out"
    mv "$out" "$dir/$name.out"
    echo "$name: status $status"
done
