#!/usr/bin/env bash
# One shard of a night, for either scheduler (k8s/nightly.yaml's shard pods, slurm/shard.sbatch's
# array tasks): a new shard campaign, or the resume of the shard's directory when this is a
# retry (a pod of the same index, a requeued task): the records survive SIGKILL (see `records`).
#
#   NIGHT          the night, YYYYMMDD: the campaign seed and the directory name
#   SHARDS         how many shards the night has
#   SHARD_INDEX    this shard (0-based); defaults to the scheduler's own index,
#                  JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm)
#   CPUS           --jobs: the CPUs the scheduler gave this shard
#   CAMPAIGN_ARGS  further options of a new campaign (a resume takes them from campaign.json)
#   RESULTS        the results volume (default /results)
#
# Output goes to stdout (the pod's log, the task's output file) and to
# $RESULTS/night-$NIGHT/log-shard-$SHARD_INDEX.txt.
set -u -o pipefail
index=${SHARD_INDEX:-${JOB_COMPLETION_INDEX:-${SLURM_ARRAY_TASK_ID:-}}}
if [ -z "$index" ]; then
    echo "shard.sh: no shard index: set SHARD_INDEX (or run as an indexed Job or an array task)" >&2
    exit 2
fi
for var in NIGHT SHARDS CPUS; do
    if [ -z "${!var:-}" ]; then echo "shard.sh: $var is not set" >&2; exit 2; fi
done
results=${RESULTS:-/results}
night_dir=$results/night-$NIGHT
dir=$night_dir/shard-$index
log=$night_dir/log-shard-$index.txt
mkdir -p "$night_dir"
if [ -f "$dir/campaign.json" ]; then
    finished=0
    if [ -f "$dir/programs.csv" ]; then finished=$(( $(wc -l <"$dir/programs.csv") - 1 )); fi
    echo "shard $index of night $NIGHT: retry, resuming $dir ($finished programs finished)" | tee -a "$log"
    harness campaign --resume "$dir" --jobs "$CPUS" 2>&1 | tee -a "$log"
else
    # campaign.json is written last when a campaign starts: without it nothing ran.
    rm -rf "$dir"
    # CAMPAIGN_ARGS holds several options: split on purpose.
    # shellcheck disable=SC2086
    harness campaign --seed "$NIGHT" --shard "$index/$SHARDS" ${CAMPAIGN_ARGS:-} \
        --jobs "$CPUS" --out "$dir" 2>&1 | tee -a "$log"
fi
status=$?
# Status 1 with "failing checks" means the campaign ran and found failures (saved and
# triaged in the shard directory): the shard itself succeeded.
if [ "$status" -eq 1 ] && tail -n 1 "$log" | grep -q "failing checks"; then
    exit 0
fi
exit "$status"
