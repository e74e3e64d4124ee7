#!/usr/bin/env bash
# Growth table of `cargo bench -p sysyc --bench compile_time`: for each shape and level, the
# mean compile time per size (from criterion's estimates under target/criterion) and the
# ratio to the previous size. Linear growth shows as a time ratio equal to the size ratio.
set -euo pipefail
root="${1:-target/criterion}"
echo "| shape | level | statements | mean time | x time vs previous | x size vs previous |"
echo "|---|---|---:|---:|---:|---:|"
for group in "$root"/compile-time_*; do
    [ -d "$group" ] || continue
    name=${group##*/compile-time_}
    shape=${name%_*}
    level=${name##*_}
    prev_t=""
    prev_n=""
    for n in $(ls "$group" | grep -E '^[0-9]+$' | sort -n); do
        est="$group/$n/new/estimates.json"
        [ -f "$est" ] || continue
        # The mean's point estimate, in nanoseconds.
        t=$(grep -o '^{"mean":{"confidence_interval":{[^}]*},"point_estimate":[0-9.e+]*' "$est" | grep -o '[0-9.e+]*$')
        ms=$(awk -v t="$t" 'BEGIN { printf "%.1f ms", t / 1e6 }')
        if [ -n "$prev_t" ]; then
            rt=$(awk -v a="$t" -v b="$prev_t" 'BEGIN { printf "%.2f", a / b }')
            rn=$(awk -v a="$n" -v b="$prev_n" 'BEGIN { printf "%.1f", a / b }')
        else
            rt="-"
            rn="-"
        fi
        echo "| $shape | $level | $n | $ms | $rt | $rn |"
        prev_t=$t
        prev_n=$n
    done
done
