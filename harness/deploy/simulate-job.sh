#!/usr/bin/env bash
# Simulates one night of harness/deploy/k8s/nightly.yaml on this machine, with the scripts
# its pods run (harness/deploy/scripts/, which the image holds in /opt/sysyc/scripts):
#   * SHARDS shard "pods" (shard.sh with JOB_COMPLETION_INDEX=i), side by side;
#   * shard KILLED is killed with SIGKILL (its whole process group, as an evicted pod)
#     while it runs, then retried: shard.sh again, which resumes its directory;
#   * merge.sh merges, compresses the raw rows and applies retention;
#   * an unsharded campaign over the same programs; the merged rows must equal its rows
#     (all columns but the wall-clock ones), with no row lost or repeated (compare-merged.py).
# Usage: harness/deploy/simulate-job.sh [DIR-WITH-THE-harness-BINARY] (default target/release)
# Exits non-zero, saying why, when the merged result differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "${1:-target/release}" && pwd)
[ -x "$bin/harness" ] || { echo "simulate-job: no harness binary in $bin" >&2; exit 2; }
export PATH=$bin:$PATH
work=$(mktemp -d "${TMPDIR:-/tmp}/simulate-job.XXXXXX")
trap 'rm -rf "$work"' EXIT

export SHARDS=${SHARDS:-4} NIGHT=${NIGHT:-20260102} CPUS=1 RESULTS=$work/results
PROGRAMS=${PROGRAMS:-12}
KILLED=${KILLED:-1}
export CAMPAIGN_ARGS="--programs $PROGRAMS --strategy o-levels --no-triage"

shard() { JOB_COMPLETION_INDEX=$1 bash harness/deploy/scripts/shard.sh >>"$work/pod-$1.log" 2>&1; }
pids=()
# Job control: each "pod" runs in its own process group, killed as a whole.
set -m
for i in $(seq 0 $((SHARDS - 1))); do
    shard "$i" &
    pids+=($!)
done
set +m
programs_done() { local f=$RESULTS/night-$NIGHT/shard-$1/programs.csv; [ -f "$f" ] && echo $(( $(wc -l <"$f") - 1 )) || echo 0; }
# Kill the shard once it has finished a program and before it has finished them all.
per_shard=$(( (PROGRAMS + SHARDS - 1 - KILLED) / SHARDS ))
for _ in $(seq 600); do
    n=$(programs_done "$KILLED")
    if [ "$n" -ge 1 ]; then break; fi
    sleep 0.1
done
killed_at=$(programs_done "$KILLED")
if [ "$killed_at" -lt 1 ]; then
    echo "simulate-job: shard $KILLED finished no program in 60 s:" >&2
    cat "$work/pod-$KILLED.log" >&2
    exit 1
fi
kill -KILL -- "-${pids[$KILLED]}"
echo "simulate-job: shard $KILLED killed with SIGKILL after $killed_at of $per_shard programs"
for i in "${!pids[@]}"; do
    if [ "$i" -ne "$KILLED" ]; then wait "${pids[$i]}"; fi
done
wait "${pids[$KILLED]}" || true
[ "$killed_at" -lt "$per_shard" ] || { echo "simulate-job: shard $KILLED finished before the kill" >&2; exit 1; }

# The retried pod of that index.
shard "$KILLED"
grep -q "retry, resuming" "$work/pod-$KILLED.log" || { echo "simulate-job: the retry did not resume" >&2; exit 1; }

bash harness/deploy/scripts/merge.sh >"$work/merge.log" 2>&1 || { cat "$work/merge.log" >&2; exit 1; }
merged=$RESULTS/night-$NIGHT/merged
[ -f "$merged/runs.csv.gz" ] && [ ! -f "$merged/runs.csv" ] || { echo "simulate-job: runs.csv not compressed" >&2; exit 1; }
[ -f "$merged/summary.md" ] && [ -f "$merged/failures.csv" ] || { echo "simulate-job: summary or failures.csv missing" >&2; exit 1; }

harness campaign --seed "$NIGHT" $CAMPAIGN_ARGS --jobs 2 --out "$work/whole" >"$work/whole.log" 2>&1 \
    || { cat "$work/whole.log" >&2; exit 1; }

compared=$(python3 harness/deploy/compare-merged.py "$merged" "$work/whole" "$PROGRAMS")
echo "simulate-job: $compared"
