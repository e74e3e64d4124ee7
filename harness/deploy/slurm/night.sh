#!/usr/bin/env bash
# Submits one night of sharded campaigns to Slurm: an array job (one shard per task,
# shard.sbatch) and a merge job (merge.sbatch) that waits for every task to finish,
# succeeded or failed (--dependency=afterany). Prints both job ids and returns at once.
#
# Usage: harness/deploy/slurm/night.sh --results DIR [options] [-- SBATCH-OPTION...]
#   --results DIR          results directory, on a file system every node mounts (required)
#   --night YYYYMMDD       the night: campaign seed and directory name (default: today, UTC)
#   --shards N             array tasks, one shard each (default 8)
#   --cpus N               CPUs per task; each shard runs with --jobs N (default 4)
#   --mem SIZE             memory per task (default 8G)
#   --hours H              campaign length of each shard (default 8)
#   --time MINUTES         time limit per task (default: the hours plus 2 h, for resumes)
#   --campaign-args ARGS   options of each shard's campaign, instead of "--hours H"
#   --bin DIR              directory with harness and its cost plugin (default: the harness
#                          on PATH, else the checkout's target/campaign or target/release)
#   --keep-raw-days N      days the merge keeps compressed raw rows (default 7)
#   -- ...                 further sbatch options for both jobs (--partition, --account, ...)
# Every night from cron or scrontab: `0 22 * * * .../night.sh --results /shared/sysyc-nightly`.
set -euo pipefail
deploy=$(cd "$(dirname "$0")/.." && pwd)
checkout=$(cd "$deploy/../.." && pwd)

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
fail() { echo "night.sh: $*" >&2; exit 2; }

results='' night=$(date -u +%Y%m%d) shards=8 cpus=4 mem=8G hours=8 time_limit='' campaign_args=''
bin='' keep_raw_days=7
while [ $# -gt 0 ]; do
    case "$1" in
        --results|--night|--shards|--cpus|--mem|--hours|--time|--campaign-args|--bin|--keep-raw-days)
            [ $# -ge 2 ] || fail "$1 needs a value"
            case "$1" in
                --results) results=$2 ;; --night) night=$2 ;; --shards) shards=$2 ;; --cpus) cpus=$2 ;;
                --mem) mem=$2 ;; --hours) hours=$2 ;; --time) time_limit=$2 ;;
                --campaign-args) campaign_args=$2 ;; --bin) bin=$2 ;; --keep-raw-days) keep_raw_days=$2 ;;
            esac
            shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) fail "unknown option $1 (see --help)" ;;
    esac
done
extra_sbatch=("$@")

[ -n "$results" ] || fail "--results DIR is required (a directory every node mounts)"
[[ "$night" =~ ^[0-9]{8}$ ]] || fail "--night must be YYYYMMDD, not '$night'"
for v in shards cpus hours; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || fail "--$v must be a positive integer, not '${!v}'"
done
[[ "$keep_raw_days" =~ ^[0-9]+$ ]] || fail "--keep-raw-days must be a number of days, not '$keep_raw_days'"
if [ -n "$time_limit" ]; then
    [[ "$time_limit" =~ ^[1-9][0-9]*$ ]] || fail "--time must be minutes, not '$time_limit'"
else
    time_limit=$(( (hours + 2) * 60 ))
fi
[ -n "$campaign_args" ] || campaign_args="--hours $hours"
command -v sbatch >/dev/null 2>&1 || fail "sbatch not found: run this on a Slurm submit host"

if [ -z "$bin" ]; then
    if command -v harness >/dev/null 2>&1; then
        bin=$(dirname "$(command -v harness)")
    else
        for d in "$checkout/target/campaign" "$checkout/target/release"; do
            if [ -x "$d/harness" ]; then bin=$d; break; fi
        done
    fi
fi
[ -n "$bin" ] && [ -x "$bin/harness" ] || fail "no harness binary (give --bin DIR; build it with scripts/build-campaign.sh)"
bin=$(cd "$bin" && pwd)

mkdir -p "$results"
results=$(cd "$results" && pwd)
night_dir=$results/night-$night
# Slurm opens the output files before the job runs: their directory must exist.
mkdir -p "$night_dir/slurm"

# The jobs get this environment (--export=ALL): the scripts read these.
export NIGHT=$night SHARDS=$shards CAMPAIGN_ARGS=$campaign_args RESULTS=$results
export KEEP_RAW_DAYS=$keep_raw_days SYSYC_DEPLOY_DIR=$deploy PATH=$bin:$PATH

# --parsable prints "jobid" or "jobid;cluster".
array_job=$(sbatch --parsable --export=ALL --job-name="sysyc-shards-$night" \
    --array="0-$((shards - 1))" --ntasks=1 --cpus-per-task="$cpus" --mem="$mem" --time="$time_limit" \
    --requeue --open-mode=append --output="$night_dir/slurm/shard-%a.out" \
    "${extra_sbatch[@]}" "$deploy/slurm/shard.sbatch")
array_job=${array_job%%;*}
export SHARDS_JOB=$array_job
merge_job=$(sbatch --parsable --export=ALL --job-name="sysyc-merge-$night" \
    --dependency="afterany:$array_job" --ntasks=1 --cpus-per-task=1 --mem=2G --time=120 \
    --output="$night_dir/slurm/merge-%j.out" \
    "${extra_sbatch[@]}" "$deploy/slurm/merge.sbatch") || {
    scancel "$array_job"
    fail "the merge job was not accepted; array job $array_job cancelled"
}
merge_job=${merge_job%%;*}
echo "night $night: array job $array_job (shards 0-$((shards - 1)), $cpus CPUs each), merge job $merge_job (afterany:$array_job)"
echo "results: $night_dir (logs in slurm/; merged into merged/)"
