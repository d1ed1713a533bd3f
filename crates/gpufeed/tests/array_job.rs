//! `gpufeed precompute --shard auto` as the tasks of a Slurm job array and of a Kubernetes
//! Indexed Job: every task started at once on one shared cache folder with the variables
//! its scheduler sets, then `precompute --merge`; the merged cache must equal a one-machine
//! cache item for item, and a slice that never ran must be named by the merge, not skipped.
//! The same for `gpufeed trace DIR --shard auto` and `trace --merge` over a job's profiler
//! traces: the merged report is the single run's.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gpufeed_data::cache::Cache;

mod common;
use common::gpufeed;

/// The variables `--shard auto` reads; removed from every run, so that a test run inside a
/// real array job reads only what the test sets.
const SCHEDULER_VARS: [&str; 7] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "JOB_COMPLETION_INDEX",
    "JOB_COMPLETIONS",
];

/// 12 clips in shards of 2 utterances: 6 shards, two for each of 3 tasks.
const CLIPS: &str = "12";
const SHARD_ITEMS: &str = "2";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `gpufeed precompute` on `data` into `cache` with small shards, one thread, and `env`.
fn precompute(data: &Path, cache: &Path, extra: &[&str], env: &[(&str, String)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpufeed"));
    c.args(["precompute", "--data", s(data), "--cache", s(cache)])
        .args(["--shard-items", SHARD_ITEMS, "--jobs", "1"])
        .args(extra);
    for v in SCHEDULER_VARS {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}

/// Starts every task at once, then waits for all; returns each one's stderr.
fn run_tasks(tasks: Vec<Command>) -> Vec<String> {
    let children: Vec<_> = tasks
        .into_iter()
        .map(|mut c| {
            c.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| ok(&c.wait_with_output().unwrap()))
        .collect()
}

/// The merge step; returns its output.
fn merge(data: &Path, cache: &Path) -> Output {
    precompute(data, cache, &["--merge"], &[]).output().unwrap()
}

/// The one cache folder (`ROOT/<settings key>`) under `root`.
fn cache_dir(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = fs_err::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// The shard file names of a cache folder, sorted.
fn shard_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("shard-"))
        .collect();
    v.sort();
    v
}

/// The cache under `root` equals the one-machine cache under `one`: the same manifest, the
/// same shard files byte for byte, and every item's id, text, mel frames and tokens.
fn assert_same_cache(root: &Path, one: &Path) {
    let (a, b) = (cache_dir(root), cache_dir(one));
    assert_eq!(a.file_name(), b.file_name(), "same settings key");
    let manifest = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs_err::read(d.join("manifest.json")).unwrap()).unwrap()
    };
    assert_eq!(manifest(&a), manifest(&b));
    assert_eq!(shard_files(&a), shard_files(&b));
    assert_eq!(shard_files(&a).len(), 6);
    for f in shard_files(&a) {
        assert!(
            fs_err::read(a.join(&f)).unwrap() == fs_err::read(b.join(&f)).unwrap(),
            "{f} differs"
        );
    }
    let (ca, cb) = (Cache::open(&a).unwrap(), Cache::open(&b).unwrap());
    ca.verify().unwrap();
    assert_eq!(ca.len(), 12);
    assert_eq!(ca.len(), cb.len());
    for i in 0..ca.len() {
        let (x, y) = (ca.item(i), cb.item(i));
        assert_eq!((&x.id, &x.text), (&y.id, &y.text), "item {i}");
        assert_eq!(ca.mel(i), cb.mel(i), "item {i}: mel");
        assert_eq!(ca.tokens(i), cb.tokens(i), "item {i}: tokens");
    }
}

/// The dataset and the one-machine cache, built once per test.
fn setup(tmp: &Path) -> (PathBuf, PathBuf) {
    let data = tmp.join("data");
    let out = gpufeed()
        .args(["demo-data", s(&data), "--clips", CLIPS, "--seed", "16"])
        .output()
        .unwrap();
    ok(&out);
    let one = tmp.join("one-machine");
    ok(&precompute(&data, &one, &[], &[]).output().unwrap());
    (data, one)
}

#[test]
fn a_slurm_array_then_the_merge_equals_one_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, one) = setup(tmp.path());
    let shared = tmp.path().join("shared-cache");
    // sbatch --array=1-3: ids 1, 2, 3, as Slurm numbers them.
    let tasks = (1..=3)
        .map(|id: u32| {
            let env = [
                ("SLURM_ARRAY_TASK_ID", id.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".to_owned()),
                ("SLURM_ARRAY_TASK_MAX", "3".to_owned()),
                ("SLURM_ARRAY_TASK_STEP", "1".to_owned()),
                ("SLURM_ARRAY_TASK_COUNT", "3".to_owned()),
            ];
            precompute(&data, &shared, &["--shard", "auto"], &env)
        })
        .collect();
    let logs = run_tasks(tasks);
    for (i, log) in logs.iter().enumerate() {
        assert!(
            log.contains(&format!(
                "--shard auto: slice {i}/3 from the Slurm job array (SLURM_ARRAY_TASK_ID={}",
                i + 1
            )),
            "{log}"
        );
    }
    let out = merge(&data, &shared);
    ok(&out);
    assert!(text(&out.stdout).contains("6 shard(s) of 12 utterance(s)"));
    assert_same_cache(&shared, &one);

    // A damaged shard is named by the merge, and the merge fails.
    let dir = cache_dir(&shared);
    let victim = &shard_files(&dir)[3];
    let bytes = fs_err::read(dir.join(victim)).unwrap();
    fs_err::write(dir.join(victim), &bytes[..bytes.len() / 2]).unwrap();
    let out = merge(&data, &shared);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "shard 3 (`{victim}`, slice `--shard 0/3`) damaged"
        )),
        "{err}"
    );
}

#[test]
fn a_kubernetes_indexed_job_with_a_missing_pod_is_named_by_the_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, one) = setup(tmp.path());
    let shared = tmp.path().join("shared-cache");
    let pod = |index: u32| {
        let env = [
            ("JOB_COMPLETION_INDEX", index.to_string()),
            ("JOB_COMPLETIONS", "3".to_owned()),
        ];
        precompute(&data, &shared, &["--shard", "auto"], &env)
    };
    // Pod 1 never ran (evicted, out of retries): its shards 1 and 4 are missing.
    let logs = run_tasks(vec![pod(0), pod(2)]);
    assert!(
        logs[1].contains(
            "--shard auto: slice 2/3 from the Kubernetes Indexed Job \
             (JOB_COMPLETION_INDEX=2, JOB_COMPLETIONS=3)"
        ),
        "{}",
        logs[1]
    );
    let out = merge(&data, &shared);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let dir = cache_dir(&shared);
    let one_files = shard_files(&cache_dir(&one));
    assert!(
        err.contains("2 of 6 shard(s) missing or damaged")
            && err.contains(&format!(
                "shard 1 (`{}`, slice `--shard 1/3`) missing",
                one_files[1]
            ))
            && err.contains(&format!(
                "shard 4 (`{}`, slice `--shard 1/3`) missing",
                one_files[4]
            )),
        "{err}"
    );
    assert!(!dir.join("manifest.json").exists(), "no manifest written");
    // The pod runs again; the merge then completes the same cache as one machine.
    run_tasks(vec![pod(1)]);
    ok(&merge(&data, &shared));
    assert_same_cache(&shared, &one);
}

#[test]
fn shard_auto_without_a_scheduler_names_the_variables() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("c");
    for (env, want) in [
        (vec![], "no array-job index in the environment"),
        (
            vec![("JOB_COMPLETION_INDEX", "0".to_owned())],
            "JOB_COMPLETION_INDEX=0 is set but JOB_COMPLETIONS is not",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "3".to_owned()),
                ("SLURM_ARRAY_TASK_COUNT", "3".to_owned()),
            ],
            "index 3 is not below the count 3",
        ),
    ] {
        // The dataset is never opened: the slice is checked first.
        let out = precompute(tmp.path(), &cache, &["--shard", "auto"], &env)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.starts_with("error: `--shard auto`: "), "{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        if env.is_empty() {
            for var in SCHEDULER_VARS.iter().filter(|v| !v.ends_with("STEP")) {
                assert!(err.contains(var), "{var}: {err}");
            }
        }
    }
}

/// The repository's `deploy/` folder.
fn deploy(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(rel)
}

/// The gpufeed arguments of the first container of a Kubernetes Job, and its env.
fn job_args(rel: &str) -> (serde_norway::Value, Vec<String>, Vec<(String, String)>) {
    let text = fs_err::read_to_string(deploy(rel)).unwrap();
    let job: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"][0].as_str(), Some("gpufeed"), "{rel}");
    let args = c["args"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let env = c["env"]
        .as_sequence()
        .map(|e| {
            e.iter()
                .map(|v| {
                    let (k, v) = (v["name"].as_str(), v["value"].as_str());
                    (k.unwrap().to_owned(), v.unwrap().to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    (job, args, env)
}

/// `args` with the example's volumes put on this test's folders and one thread per task.
fn localised(args: &[String], data: &Path, cache: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if let Some(d) = a.strip_prefix("--data=/data/") {
                assert!(!d.is_empty());
                format!("--data={}", data.display())
            } else if a == "--cache=/cache" {
                format!("--cache={}", cache.display())
            } else if a.starts_with("--jobs=") {
                "--jobs=1".to_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Every pod of a Kubernetes Indexed Job of `n` completions: gpufeed with `args`, the
/// index Kubernetes gives each pod and the Job's `env`.
fn indexed_pods(n: u64, args: &[String], env: &[(String, String)]) -> Vec<Command> {
    (0..n)
        .map(|i| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_gpufeed"));
            c.args(args);
            for v in SCHEDULER_VARS {
                c.env_remove(v);
            }
            c.env("JOB_COMPLETION_INDEX", i.to_string());
            c.envs(env.iter().map(|(k, v)| (k, v)));
            c
        })
        .collect()
}

/// `bash deploy/SCRIPT` as Slurm runs a batch script: gpufeed on PATH as the scripts
/// expect, one CPU, the scheduler's variables only those of `vars`, and `env` (the paths
/// the script reads).
fn slurm_bash(script: &str, env: &[(&str, &Path)], vars: &[(&str, String)]) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_gpufeed")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("bash");
    c.arg(deploy(script));
    for v in SCHEDULER_VARS {
        c.env_remove(v);
    }
    c.env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("SLURM_CPUS_PER_TASK", "1")
        .envs(vars.iter().map(|(k, v)| (k, v)));
    c
}

/// Every task of the array that `script`'s `#SBATCH --array=LO-HI` makes, each with the
/// variables Slurm sets in it.
fn slurm_array(script: &str, env: &[(&str, &Path)]) -> Vec<Command> {
    let text = fs_err::read_to_string(deploy(script)).unwrap();
    let range = text
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --array="))
        .unwrap();
    let (lo, hi) = range.split_once('-').unwrap();
    let (lo, hi): (u32, u32) = (lo.parse().unwrap(), hi.parse().unwrap());
    (lo..=hi)
        .map(|id| {
            slurm_bash(
                script,
                env,
                &[
                    ("SLURM_ARRAY_TASK_ID", id.to_string()),
                    ("SLURM_ARRAY_TASK_MIN", lo.to_string()),
                    ("SLURM_ARRAY_TASK_MAX", hi.to_string()),
                    ("SLURM_ARRAY_TASK_COUNT", (hi - lo + 1).to_string()),
                ],
            )
        })
        .collect()
}

#[test]
fn the_deploy_examples_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    ok(&gpufeed()
        .args(["demo-data", s(&data), "--clips", CLIPS, "--seed", "16"])
        .output()
        .unwrap());

    // Kubernetes: every pod of the Indexed Job with the index Kubernetes gives it and the
    // env the example sets, then the merge Job's container.
    let (job, args, env) = job_args("kubernetes/precompute-job.yaml");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = spec["completions"].as_u64().unwrap();
    assert!(spec["parallelism"].as_u64().unwrap() <= n);
    assert_eq!(
        env,
        [("JOB_COMPLETIONS".to_owned(), n.to_string())],
        "JOB_COMPLETIONS must equal spec.completions"
    );
    assert!(args.iter().any(|a| a == "--shard=auto"), "{args:?}");
    let (_, merge_args, _) = job_args("kubernetes/merge-job.yaml");
    let same = |v: &[String]| -> Vec<String> {
        v.iter()
            .filter(|a| {
                !["--jobs=", "--shard=", "--merge"]
                    .iter()
                    .any(|p| a.starts_with(p))
            })
            .cloned()
            .collect()
    };
    assert_eq!(
        same(&args),
        same(&merge_args),
        "the merge sees the same cache"
    );
    let k8s_cache = tmp.path().join("k8s-cache");
    run_tasks(indexed_pods(n, &localised(&args, &data, &k8s_cache), &env));
    let out = Command::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(localised(&merge_args, &data, &k8s_cache))
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(Cache::open(&cache_dir(&k8s_cache)).unwrap().len(), 12);

    // Slurm: the batch script of every task of its --array, run by bash with the variables
    // Slurm sets, then the merge script; gpufeed on PATH as the scripts expect.
    let slurm_cache = tmp.path().join("slurm-cache");
    let env = [("DATA", data.as_path()), ("CACHE", slurm_cache.as_path())];
    run_tasks(slurm_array("slurm/precompute.sbatch", &env));
    ok(&slurm_bash("slurm/merge.sbatch", &env, &[])
        .output()
        .unwrap());
    assert_eq!(Cache::open(&cache_dir(&slurm_cache)).unwrap().len(), 12);
    let submit = Command::new("bash")
        .args(["-n", s(&deploy("slurm/submit.sh"))])
        .output()
        .unwrap();
    ok(&submit);
}

/// `args` of a trace example with its volumes put on this test's folders.
fn localised_trace(args: &[String], traces: &Path, parts: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a.starts_with("/traces/") {
                s(traces).to_owned()
            } else if a == "--out=/parts" {
                format!("--out={}", parts.display())
            } else if a == "--merge=/parts" {
                format!("--merge={}", parts.display())
            } else if a.starts_with("--jobs=") {
                "--jobs=1".to_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// `gpufeed trace DIR --shard auto` as every task of the Slurm and Kubernetes examples, on
/// a generated 8-rank job, then their merge: the report of one `gpufeed trace DIR`, byte
/// for byte, with the straggler the generator made.
#[test]
fn the_trace_deploy_examples_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("run42");
    let truth = ok_stdout(
        &gpufeed()
            .args(["synth-job", s(&traces), "--ranks", "8", "--straggler", "5"])
            .args(["--rank-size", "1MB", "--kernels", "100"])
            .output()
            .unwrap(),
    );
    let truth: serde_json::Value = serde_json::from_str(&truth).unwrap();
    assert_eq!(truth["straggler"], 5);
    let single_json = ok_stdout(
        &gpufeed()
            .args(["trace", s(&traces), "--format", "json"])
            .output()
            .unwrap(),
    );
    let single: serde_json::Value = serde_json::from_str(&single_json).unwrap();
    assert_eq!(single["straggler"]["rank"], 5, "{single_json}");
    let single_text = ok_stdout(&gpufeed().args(["trace", s(&traces)]).output().unwrap());

    // Kubernetes: every pod of the Indexed Job, then the merge Job's container.
    let (job, args, env) = job_args("kubernetes/trace-job.yaml");
    let n = job["spec"]["completions"].as_u64().unwrap();
    assert_eq!(
        env,
        [("JOB_COMPLETIONS".to_owned(), n.to_string())],
        "JOB_COMPLETIONS must equal spec.completions"
    );
    let parts = tmp.path().join("k8s-parts");
    fs_err::create_dir(&parts).unwrap();
    run_tasks(indexed_pods(
        n,
        &localised_trace(&args, &traces, &parts),
        &env,
    ));
    let (_, merge_args, _) = job_args("kubernetes/trace-merge-job.yaml");
    let merged = Command::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(localised_trace(&merge_args, &traces, &parts))
        .output()
        .unwrap();
    assert_eq!(ok_stdout(&merged), single_text);

    // Slurm: the batch script of every task of its --array, run by bash with the variables
    // Slurm sets, then the merge script; gpufeed on PATH as the scripts expect.
    let parts = tmp.path().join("slurm-parts");
    let report = tmp.path().join("report.json");
    let env = [
        ("TRACES", traces.as_path()),
        ("PARTS", parts.as_path()),
        ("REPORT", report.as_path()),
    ];
    run_tasks(slurm_array("slurm/trace.sbatch", &env));
    let out = slurm_bash("slurm/trace-merge.sbatch", &env, &[])
        .output()
        .unwrap();
    assert_eq!(ok_stdout(&out), single_text);
    assert_eq!(fs_err::read_to_string(&report).unwrap(), single_json);
    // A task that never ran is named by the merge.
    let first = fs_err::read_dir(&parts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("part-00001")
        })
        .unwrap();
    fs_err::remove_file(first).unwrap();
    let out = slurm_bash("slurm/trace-merge.sbatch", &env, &[])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("task 1 is missing"),
        "{}",
        text(&out.stderr)
    );
    ok(&Command::new("bash")
        .args(["-n", s(&deploy("slurm/submit-trace.sh"))])
        .output()
        .unwrap());
}

/// Its stdout, after checking that it succeeded.
fn ok_stdout(out: &Output) -> String {
    ok(out);
    text(&out.stdout)
}
