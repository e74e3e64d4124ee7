//! The nightly deployment recipe (`harness/deploy/`): the manifests parse (with python3's
//! yaml, converted to JSON; no YAML crate is a dependency), carry the settings a real
//! cluster needs and are valid against the Kubernetes API's schemas (`kubernetes-validate`),
//! and the local simulation of one night with the scripts both schedulers run (shards, a
//! SIGKILLed and retried shard, the merge) gives exactly the rows of an unsharded campaign.
//! The Slurm recipe runs on a real Slurm in `deploy_slurm.rs`.
//! Skipped, saying why, without python3 and its yaml module (or the ARM tools), and without
//! kubernetes-validate (`pip install kubernetes-validate`; with `SYSY_REQUIRE_KUBERNETES_VALIDATE`
//! set, as in CI, its absence fails).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn python_yaml() -> bool {
    let ok = Command::new("python3").args(["-c", "import yaml"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: skipping: python3 with the yaml module is not installed");
    }
    ok
}

fn python3() -> bool {
    let ok = Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: skipping: python3 is not installed");
    }
    ok
}

/// The Kubernetes version the manifests must be valid for: the newest kubernetes-validate knows.
const KUBERNETES_VERSION: &str = "1.37.0";

/// Runs kubernetes-validate, strict (unknown fields are errors), on `files`; `None` (after
/// saying why) when it is not installed.
fn kubernetes_validate(files: &[&Path]) -> Option<std::process::Output> {
    match Command::new("kubernetes-validate").args(["--strict", "--kubernetes-version", KUBERNETES_VERSION]).args(files).output() {
        Ok(out) => Some(out),
        Err(e) => {
            assert!(
                std::env::var_os("SYSY_REQUIRE_KUBERNETES_VALIDATE").is_none(),
                "SYSY_REQUIRE_KUBERNETES_VALIDATE is set but kubernetes-validate does not run ({e}; pip install kubernetes-validate)"
            );
            eprintln!("note: skipping: kubernetes-validate is not installed (pip install kubernetes-validate): {e}");
            None
        }
    }
}

/// The documents of a YAML file (or text) as JSON values.
fn yaml_documents(text: &str) -> Vec<Value> {
    let script = "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), text.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("python3 finishes");
    assert!(out.status.success(), "the YAML does not parse");
    serde_json::from_slice(&out.stdout).expect("json")
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind}"))
}

fn env<'a>(container: &'a Value, name: &str) -> &'a Value {
    container["env"].as_array().expect("env").iter().find(|e| e["name"] == name).unwrap_or_else(|| panic!("no env {name}"))
}

#[test]
fn the_nightly_manifests_carry_what_a_cluster_needs() {
    if !python_yaml() {
        return;
    }
    let text = std::fs::read_to_string(repo().join("harness/deploy/k8s/nightly.yaml")).expect("nightly.yaml");
    let docs = yaml_documents(&text);
    let scripts = &kind(&docs, "ConfigMap")["data"];
    let script = |name: &str| scripts[name].as_str().unwrap_or_else(|| panic!("script {name}")).to_string();
    // The shard and merge scripts are files both schedulers run; the image holds them.
    let shared_script = |name: &str| std::fs::read_to_string(repo().join("harness/deploy/scripts").join(name)).expect(name);
    let containerfile = std::fs::read_to_string(repo().join("harness/deploy/Containerfile")).expect("Containerfile");
    assert!(containerfile.contains("COPY harness/deploy/scripts/ /opt/sysyc/scripts/"), "{containerfile}");
    assert!(scripts.get("shard.sh").is_none() && scripts.get("merge.sh").is_none(), "one copy of each script: harness/deploy/scripts/");

    // The CronJob: nightly, one at a time, merge after the launcher.
    let cron = kind(&docs, "CronJob");
    assert_eq!(cron["spec"]["concurrencyPolicy"], "Forbid");
    assert!(cron["spec"]["schedule"].as_str().is_some_and(|s| s.split_whitespace().count() == 5));
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["fsGroup"], 1000);
    assert_eq!(pod["initContainers"][0]["command"][1], "/scripts/launch.sh");
    assert_eq!(env(&pod["initContainers"][0], "DRIVER_JOB")["valueFrom"]["fieldRef"]["fieldPath"], "metadata.labels['job-name']");
    assert_eq!(pod["containers"][0]["command"][1], "/opt/sysyc/scripts/merge.sh");
    assert_eq!(env(&pod["containers"][0], "NIGHT_FILE")["value"], "/state/night", "the night the launcher chose");
    let role = kind(&docs, "Role");
    assert!(role["rules"][0]["verbs"].as_array().expect("verbs").iter().any(|v| v == "create"));

    // The launcher: the night from the driver's Job name, every index finished either way.
    let launch = script("launch.sh");
    assert!(launch.contains(r#"date -u -d "@$((minutes * 60))" +%Y%m%d"#), "{launch}");
    assert!(launch.contains(r#"*" Complete "*|*" Failed "*) break"#), "{launch}");
    assert!(!launch.contains("--for=condition=complete"), "waiting for Complete alone hangs on a failed index");

    // The shard Job, rendered for one night.
    let job = yaml_documents(&script("shards-job.yaml").replace("@NIGHT@", "20260102"));
    let job = &job[0];
    assert_eq!(job["metadata"]["name"], "sysyc-shards-20260102");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], spec["parallelism"]);
    assert!(spec["backoffLimitPerIndex"].as_u64().is_some_and(|n| n >= 1), "a failed pod is retried");
    assert!(spec["ttlSecondsAfterFinished"].as_u64().is_some(), "finished Jobs go away");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["securityContext"]["fsGroup"], 1000, "the volume is writable by the image's user");
    assert_eq!(pod["securityContext"]["runAsUser"], 1000);
    let container = &pod["containers"][0];
    assert_eq!(container["command"][1], "/opt/sysyc/scripts/shard.sh");
    assert_eq!(env(container, "SHARDS")["value"].as_str().and_then(|s| s.parse::<u64>().ok()), spec["completions"].as_u64());
    assert_eq!(env(container, "NIGHT")["value"], "20260102");
    let cpus = &env(container, "CPUS")["valueFrom"]["resourceFieldRef"];
    assert_eq!(cpus["resource"], "requests.cpu", "--jobs follows the CPU request");
    assert_eq!(cpus["containerName"], container["name"]);
    assert!(container["resources"]["requests"]["cpu"].is_string());

    // The shard script: --jobs $CPUS, resume on retry, output to the pod's log.
    let shard = shared_script("shard.sh");
    assert!(shard.contains("JOB_COMPLETION_INDEX") && shard.contains("SLURM_ARRAY_TASK_ID"), "both schedulers' index: {shard}");
    assert!(shard.contains(r#"--jobs "$CPUS""#) && !shard.contains("nproc"), "{shard}");
    assert!(shard.contains(r#"harness campaign --resume "$dir""#), "{shard}");
    assert!(shard.contains(r#"2>&1 | tee -a "$log""#), "logs reach kubectl logs and the task's output: {shard}");
    assert!(shard.contains("pipefail"), "the campaign's status survives the pipe: {shard}");

    // The merge: whatever finished, then compaction and retention.
    let merge = shared_script("merge.sh");
    assert!(merge.contains(r#"harness merge "${shards[@]}""#), "{merge}");
    assert!(merge.contains("gzip -f -9") && merge.contains("-name 'runs.csv.gz' -mtime"), "{merge}");
    assert!(merge.contains("previous=(--previous"), "compared with the latest earlier night: {merge}");

    // The Slurm recipe calls the same two scripts.
    let slurm = |name: &str| std::fs::read_to_string(repo().join("harness/deploy/slurm").join(name)).expect(name);
    assert!(slurm("shard.sbatch").contains(r#"exec bash "$SYSYC_DEPLOY_DIR/scripts/shard.sh""#));
    assert!(slurm("shard.sbatch").contains("CPUS=${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-}}"), "--jobs follows the allocation");
    assert!(slurm("merge.sbatch").contains(r#"exec bash "$SYSYC_DEPLOY_DIR/scripts/merge.sh""#));
    assert!(slurm("night.sh").contains(r#"--dependency="afterany:$array_job""#), "the merge runs after failed tasks too");

    // The image's build context leaves out target/.
    let ignore = std::fs::read_to_string(repo().join(".dockerignore")).expect(".dockerignore");
    assert!(ignore.lines().any(|l| l.trim() == "target/"), "{ignore}");
}

/// harness/deploy/simulate-job.sh with this build's harness: four shards, shard 1 killed by
/// SIGKILL and retried, the merge; the merged rows equal an unsharded campaign's.
#[test]
fn a_simulated_night_merges_to_the_unsharded_rows() {
    if common::tools("simulated night").is_none() || !python3() {
        return;
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_harness")).parent().expect("binary directory");
    let out = Command::new("bash")
        .arg(repo().join("harness/deploy/simulate-job.sh"))
        .arg(bin)
        .env("PROGRAMS", "8")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("killed with SIGKILL after") && stdout.contains("merged = unsharded"), "{stdout}");
}

/// The manifests, and the shard Job the launcher creates from its template, are valid against
/// the API schemas of Kubernetes 1.37 (kubernetes-validate, strict). A copy of the Job with a
/// mistyped field and one with a misspelt field must fail, so the validator is known to look.
#[test]
fn the_manifests_are_valid_for_kubernetes_1_37() {
    if !python_yaml() {
        return;
    }
    let manifest = repo().join("harness/deploy/k8s/nightly.yaml");
    let docs = yaml_documents(&std::fs::read_to_string(&manifest).expect("nightly.yaml"));
    let template = kind(&docs, "ConfigMap")["data"]["shards-job.yaml"].as_str().expect("shards-job.yaml").to_string();
    let scratch = common::scratch();
    let job = scratch.path().join("shards-job.yaml");
    let job_text = template.replace("@NIGHT@", "20260102");
    std::fs::write(&job, &job_text).expect("write");
    let Some(out) = kubernetes_validate(&[&manifest, &job]) else {
        return;
    };
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}");
    let version = KUBERNETES_VERSION.rsplit_once('.').expect("x.y.z").0;
    let passed = report.lines().filter(|l| l.contains("passed for resource") && l.ends_with(&format!("against version {version}"))).count();
    assert_eq!(passed, docs.len() + 1, "every resource of the manifest and the shard Job passed:\n{report}");

    for (what, broken) in [
        ("a mistyped field", job_text.replace("completions: 8", "completions: eight")),
        ("a misspelt field", job_text.replace("backoffLimitPerIndex:", "backoffLimitPerIndx:")),
    ] {
        assert_ne!(broken, job_text, "the template changed: update {what}");
        std::fs::write(&job, &broken).expect("write");
        let out = kubernetes_validate(&[&job]).expect("ran above");
        assert!(!out.status.success(), "{what} passed validation: {}", String::from_utf8_lossy(&out.stdout));
    }
}
