//! The JSON contract: the schemas under `docs/schemas/` are the ones the documents' types
//! give, a schema never changes without its version, and real output of each command
//! validates against its schema.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_analysis::registry::{Entry, documents, published};
use serde_json::Value;

mod common;
use common::{assert_valid, gpufeed, published_schema};

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas")
}

fn version_in(schema: &Value) -> Option<u64> {
    schema["properties"]["schema_version"]["const"].as_u64()
}

/// What is wrong with the published file of `e`, if anything.
fn drift(e: &Entry, published_text: Option<&str>) -> Option<String> {
    let regenerate = "run `cargo run -p gpufeed -- schema --out docs/schemas`";
    let Some(text) = published_text else {
        return Some(format!(
            "docs/schemas/{}.json is missing: {regenerate}",
            e.name
        ));
    };
    if text == published(e) {
        return None;
    }
    let old: Value = serde_json::from_str(text).ok()?;
    if version_in(&old) == Some(u64::from(e.version)) {
        Some(format!(
            "the schema of `{}` changed but its version is still {}: raise `VERSION` in its \
             `Document` impl (gpufeed-contract), then {regenerate}",
            e.name, e.version
        ))
    } else {
        Some(format!(
            "docs/schemas/{}.json is out of date (version {:?}, the type says {}): {regenerate}",
            e.name,
            version_in(&old),
            e.version
        ))
    }
}

#[test]
fn published_schemas_are_current_and_change_only_with_their_version() {
    let dir = schemas_dir();
    let mut problems = Vec::new();
    for e in documents() {
        let text = fs_err::read_to_string(dir.join(format!("{}.json", e.name))).ok();
        problems.extend(drift(&e, text.as_deref()));
    }
    // No file for a document that is gone.
    for entry in fs_err::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".json")
            && !documents().iter().any(|e| e.name == stem)
        {
            problems.push(format!("docs/schemas/{name} names no document"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The test above can fail: a field changed under the same version is caught, and so is
/// a stale file after a version change.
#[test]
fn a_changed_schema_under_the_same_version_is_caught() {
    let e = documents().into_iter().find(|e| e.name == "steps").unwrap();
    let mut changed: Value = serde_json::from_str(&published(&e)).unwrap();
    changed["properties"]["renamed_ms"] = changed["properties"]["mean_ms"].take();
    let text = serde_json::to_string_pretty(&changed).unwrap();
    let why = drift(&e, Some(&text)).unwrap();
    assert!(why.contains("changed but its version is still 1"), "{why}");
    changed["properties"]["schema_version"]["const"] = 0.into();
    let text = serde_json::to_string_pretty(&changed).unwrap();
    let why = drift(&e, Some(&text)).unwrap();
    assert!(why.contains("out of date"), "{why}");
    assert!(drift(&e, Some(&published(&e))).is_none());
}

fn json_of(args: &[&str]) -> Value {
    json_exiting(args, &[0])
}

/// The document of a run that exits with one of `codes` (1: findings at error severity).
fn json_exiting(args: &[&str], codes: &[i32]) -> Value {
    let out = gpufeed().args(args).output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "{args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fixture(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn utilisation_of_trace_monitor_and_watch_validates_against_its_schema() {
    let log = common::example("nvidia-smi-2gpu.csv");
    let doc = json_of(&["trace", log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(doc["gpus"].as_array().unwrap().len(), 2);
    assert_valid("util", &doc);
    // A recording too, with the GPU figures of the same contract.
    let doc = json_of(&[
        "monitor",
        "--synthetic",
        "oscillating",
        "--speed",
        "max",
        "--duration",
        "20",
        "--format",
        "json",
    ]);
    assert!(doc["host"].is_object() && doc.get("exit_code").is_none());
    assert_valid("monitor", &doc);
    let doc = json_of(&[
        "watch",
        "--interval-ms",
        "50",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        "sleep 0.3",
    ]);
    assert_eq!(doc["exit_code"], 0);
    assert_valid("monitor", &doc);
    // `monitor` is not `util`: the host figures are no field of a utilisation log.
    assert!(!published_schema("util").is_valid(&doc));
}

#[test]
fn profiler_trace_reports_validate_against_their_schema() {
    use gpufeed_kineto::synth::{Case, generate};
    let dir = tempfile::tempdir().unwrap();
    // A distributed run with a straggler (a folder of ranks), and one TensorFlow trace.
    let case = Case::straggler();
    for rank in 0..case.ranks {
        let p = dir.path().join(format!("rank-{rank}.pt.trace.json"));
        fs_err::write(&p, generate(&case, rank)).unwrap();
    }
    let doc = json_of(&["trace", dir.path().to_str().unwrap(), "--format", "json"]);
    assert!(doc["straggler"].is_object() && doc["ranks"].as_array().unwrap().len() == 4);
    assert_valid("profiler", &doc);
    // A task's part of the same folder, as `--shard` writes it.
    let part = dir.path().join("part.json.out");
    gpufeed()
        .args(["trace", dir.path().to_str().unwrap(), "--shard", "1/2"])
        .args(["--out", part.to_str().unwrap()])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&fs_err::read(&part).unwrap()).unwrap();
    assert_eq!(doc["summaries"].as_array().unwrap().len(), 2);
    assert_valid("profiler-part", &doc);
    let tf = tempfile::tempdir().unwrap();
    let p = tf.path().join("host.trace.json");
    fs_err::write(&p, generate(&Case::input_bound().tensorflow(), 0)).unwrap();
    let doc = json_of(&["trace", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(doc["format"], "tensorflow");
    assert_valid("profiler", &doc);
}

#[test]
fn step_phases_of_profile_step_and_of_a_recording_validate_against_their_schemas() {
    use gpufeed_analysis::phase_steps::{Meta, StepRecord, write_jsonl};
    let tmp = tempfile::tempdir().unwrap();
    // The user's own loop: a recording with no `data_wait` (verdict `undetermined`), and
    // no batch size (`samples_per_s` null).
    let recording = tmp.path().join("steps.jsonl");
    let steps: Vec<StepRecord> = (0..30)
        .map(|i| StepRecord {
            total_ms: 100.0 + f64::from(i % 3),
            phases: vec![("forward".into(), 60.0), ("backward".into(), 38.0)],
            items: None,
        })
        .collect();
    let meta = Meta {
        source: "python StepTimer".to_owned(),
        sync: false,
        warmup: 1,
        batch_size: None,
    };
    write_jsonl(&recording, &meta, &steps).unwrap();
    let doc = json_of(&["trace", recording.to_str().unwrap(), "--format", "json"]);
    assert_eq!(doc["verdict"], "undetermined");
    assert_valid("phase-steps", &doc);

    // gpufeed's model on the demo data.
    let data = tmp.path().join("demo");
    let d = data.to_str().unwrap();
    let out = gpufeed()
        .args(["demo-data", d, "--clips", "8"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let config = tmp.path().join("config.yaml");
    fs_err::write(&config, "data:\n  batch_size: 4\n  num_workers: 1\n").unwrap();
    let doc = json_of(&[
        "profile",
        "step",
        "--data",
        d,
        "--config",
        config.to_str().unwrap(),
        "--steps",
        "4",
        "--warmup",
        "1",
        "--format",
        "json",
    ]);
    assert_valid("profile-step", &doc);
    // Each is its own document: a recording's fields are no `profile step` document.
    assert!(!published_schema("phase-steps").is_valid(&doc));
}

#[test]
fn findings_of_validate_lint_and_doctor_validate_against_their_schema() {
    let config = fixture("../gpufeed-config/tests/fixtures/warnings.yaml");
    let doc = json_exiting(&["validate", &config, "--format", "json"], &[0, 1]);
    assert!(!doc["findings"].as_array().unwrap().is_empty(), "{doc}");
    assert_valid("findings", &doc);

    let code = fixture("../gpufeed-lint/tests/fixtures/lint");
    let doc = json_exiting(&["lint", &code, "--format", "json"], &[0, 1]);
    let findings = doc["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["line"].is_u64()), "{doc}");
    assert_valid("findings", &doc);

    // The doctor with a config: machine findings with no place, config findings with one.
    // No NVML and a fake interpreter, as in tests/doctor.rs.
    let tmp = tempfile::tempdir().unwrap();
    let out = gpufeed()
        .args(["doctor", "--config", &config, "--format", "json"])
        .env("GPUFEED_NVML_LIB", tmp.path().join("no-libnvidia-ml.so.1"))
        .env("GPUFEED_PYTHON", common::fake_python(tmp.path()))
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"].is_null())
    );
    assert_valid("findings", &doc);

    // A finding with a severity the contract does not know fails.
    let mut bad = doc;
    bad["findings"][0]["severity"] = "fatal".into();
    assert!(!published_schema("findings").is_valid(&bad));
}

/// `gpufeed rules --format json`: every rule, or the one asked for with its examples.
#[test]
fn the_rules_document_validates_against_its_schema() {
    let all = json_of(&["rules", "--format", "json"]);
    assert_valid("rules", &all);
    let ids: Vec<&str> = all["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), gpufeed_findings::RULES.len());
    let one = json_of(&["rules", "host-sync-in-loop", "--format", "json"]);
    assert_valid("rules", &one);
    assert_eq!(one["rules"].as_array().unwrap().len(), 1);
    assert!(
        one["rules"][0]["example"]["fires_on"]
            .as_str()
            .unwrap()
            .contains("# expect: host-sync-in-loop")
    );
}

#[test]
fn real_output_validates_against_its_schema() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/steps_stall8.txt");
    let steps = json_of(&["trace", fixture.to_str().unwrap(), "--format", "json"]);
    assert_valid("steps", &steps);

    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    let d = data.to_str().unwrap();
    let doc = json_of(&["demo-data", d, "--clips", "10", "--format", "json"]);
    assert_eq!(doc["clips"], 10);
    assert_valid("demo-data", &doc);
    let wav = tmp.path().join("demo/wavs/DEMO-0001.wav");
    let npy = tmp.path().join("one.npy");
    let doc = json_of(&[
        "mel",
        wav.to_str().unwrap(),
        "--out",
        npy.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(doc["n_mels"], 80);
    assert!(npy.is_file());
    assert_valid("mel", &doc);
    let cache = tmp.path().join("cache");
    let doc = json_of(&[
        "precompute",
        "--data",
        d,
        "--cache",
        cache.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(doc["dataset"]["layout"], "ljspeech");
    assert_eq!(doc["dataset"]["items"], 10);
    assert_valid("precompute", &doc);
    // No consumer, an epoch tail (10 items in batches of 4), and the benchmark grid.
    let doc = json_of(&[
        "profile",
        "data",
        "--data",
        d,
        "--batch-size",
        "4",
        "--batches",
        "20",
        "--benchmark",
        "--format",
        "json",
    ]);
    assert!(doc["grid"].is_array() && doc["batches"]["partial_batches"].is_object());
    assert_valid("profile-data", &doc);
    // A consumer: judged by its waits.
    let doc = json_of(&[
        "profile",
        "data",
        "--data",
        d,
        "--batches",
        "10",
        "--consumer-ms",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(doc["judged"], "wait");
    assert_valid("profile-data", &doc);

    // The schema is no formality: a document missing a field, or with one more, fails.
    let validator = published_schema("profile-data");
    let mut missing = doc.clone();
    missing.as_object_mut().unwrap().remove("judged");
    assert!(!validator.is_valid(&missing));
    let mut extra = doc;
    extra["batches"]["surprise"] = 1.into();
    assert!(!validator.is_valid(&extra));
}
