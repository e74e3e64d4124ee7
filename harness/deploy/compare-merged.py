#!/usr/bin/env python3
"""Checks that a merged night holds exactly the rows of an unsharded campaign of the same
programs: runs.csv (all columns but the wall-clock ones; no row lost or repeated) and
programs.csv. Used by simulate-job.sh (the Kubernetes scripts) and harness/tests/deploy_slurm.rs
(the Slurm recipe).

Usage: compare-merged.py MERGED-DIR UNSHARDED-DIR PROGRAMS
Prints `merged = unsharded: N rows of P programs`; exits non-zero, saying why, otherwise.
"""
import csv, gzip, os, sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
merged, whole, programs = sys.argv[1], sys.argv[2], int(sys.argv[3])


def rows(path):
    # The merge compresses runs.csv; an unsharded campaign leaves it plain.
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        r = csv.reader(f)
        header = next(r)
        # Wall-clock columns, and the whole-process counts that include the runtime's report
        # of starttime/stoptime (elapsed time printed: its digits vary); program_insns stays.
        clock = ("compile_us", "run_us", "millis", "insns", "cycles")
        keep = [i for i, h in enumerate(header) if not (h.startswith(("us_", "class_")) or h in clock)]
        out = [tuple(row[i] for i in keep) for row in r]
    if len(set(out)) != len(out):
        sys.exit(f"compare-merged: repeated rows in {path}")
    return sorted(out)


def runs(d):
    for name in ("runs.csv.gz", "runs.csv"):
        if os.path.exists(f"{d}/{name}"):
            return f"{d}/{name}"
    sys.exit(f"compare-merged: no runs.csv in {d}")


a, b = rows(runs(merged)), rows(runs(whole))
if a != b:
    sys.exit(f"compare-merged: merged runs.csv ({len(a)} rows) differs from the unsharded run ({len(b)} rows)")
p, q = rows(f"{merged}/programs.csv"), rows(f"{whole}/programs.csv")
if p != q or len(p) != programs:
    sys.exit(f"compare-merged: programs.csv differs ({len(p)} merged, {len(q)} unsharded, {programs} expected)")
print(f"merged = unsharded: {len(a)} rows of {len(p)} programs")
