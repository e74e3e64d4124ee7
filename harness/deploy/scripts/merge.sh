#!/usr/bin/env bash
# The merge of a night, for either scheduler (k8s/nightly.yaml's driver, slurm/merge.sbatch):
# merges the shards that started (a failed shard contributes its finished programs), compared
# with the latest earlier night's merged/ (`--previous`: what is new, what was fixed), then
# compacts: raw rows gzip-compressed (runs.csv and selftests.csv are about 90% of a night),
# journals removed, compressed rows of nights older than KEEP_RAW_DAYS deleted. Summaries,
# stats.csv, failures.csv, programs.csv and failure directories are kept: they are what
# `--previous` and `harness report history` read.
#
#   NIGHT          the night, YYYYMMDD (or NIGHT_FILE: a file holding it)
#   RESULTS        the results volume (default /results)
#   KEEP_RAW_DAYS  days the compressed rows are kept (default 7)
set -eu -o pipefail
results=${RESULTS:-/results}
if [ -z "${NIGHT:-}" ]; then
    if [ -z "${NIGHT_FILE:-}" ]; then echo "merge.sh: set NIGHT (or NIGHT_FILE)" >&2; exit 2; fi
    NIGHT=$(cat "$NIGHT_FILE")
fi
night=$NIGHT
night_dir=$results/night-$night
shards=()
for d in "$night_dir"/shard-*; do
    if [ -f "$d/campaign.json" ]; then shards+=("$d"); fi
done
if [ "${#shards[@]}" -eq 0 ]; then echo "merge.sh: no shard of night $night started (in $night_dir)" >&2; exit 1; fi
previous=()
for m in "$results"/night-*/merged; do
    n=${m%/merged}
    n=${n##*/night-}
    if [ -f "$m/failures.csv" ] && [[ "$n" < "$night" ]]; then previous=(--previous "$m"); fi
done
harness merge "${shards[@]}" --out "$night_dir/merged" "${previous[@]}"
for d in "${shards[@]}" "$night_dir/merged"; do
    rm -rf "$d/journal"
    for f in runs.csv selftests.csv; do
        if [ -f "$d/$f" ]; then gzip -f -9 "$d/$f"; fi
    done
done
for log in "$night_dir"/log-shard-*.txt; do
    if [ -f "$log" ]; then gzip -f -9 "$log"; fi
done
find "$results" -path '*/night-*' -name 'runs.csv.gz' -mtime "+${KEEP_RAW_DAYS:-7}" -print -delete
du -sh "$night_dir" "$results"
