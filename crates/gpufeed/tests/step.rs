//! `gpufeed profile step` end to end, through the built binary, on the CPU.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::Path;

use gpufeed_contract::{PhaseVerdict, StepProfile, StepsKind};

mod common;
use common::gpufeed;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A demo dataset of 8 clips and a config with batches of 4.
fn setup(dir: &Path, extra: &str) -> (String, String) {
    let data = dir.join("demo");
    let out = gpufeed()
        .args(["demo-data", s(&data), "--clips", "8"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let config = dir.join("config.yaml");
    fs_err::write(
        &config,
        format!("data:\n  batch_size: 4\n  num_workers: 1\n{extra}"),
    )
    .unwrap();
    (s(&data).to_owned(), s(&config).to_owned())
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = gpufeed().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn json_document_on_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, config) = setup(tmp.path(), "");
    let (code, stdout, stderr) = run(&[
        "profile", "step", "--data", &data, "--config", &config, "--steps", "12", "--warmup", "2",
        "--format", "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    // The contract's type, which refuses unknown fields.
    let doc: StepProfile = serde_json::from_str(&stdout).unwrap();
    let order = [
        "data_wait",
        "h2d_copy",
        "forward",
        "loss",
        "backward",
        "optimizer",
    ];
    assert_eq!(doc.phases.names().collect::<Vec<_>>(), order);
    // In step order in the document (serde_json's map sorts keys, so read the text).
    let at: Vec<usize> = order
        .iter()
        .map(|k| stdout.find(&format!("\"{k}\":{{")).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{stdout}");
    let mut shares = doc.unaccounted_share;
    for (i, (_, p)) in doc.phases.iter().enumerate() {
        assert!(p.mean_ms >= 0.0 && p.std_ms >= 0.0, "{p:?}");
        assert_eq!((p.order, p.steps), (i, 12), "{p:?}");
        shares += p.share;
    }
    // The shares of the phases and the cleanup make the whole step.
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    assert_eq!(doc.step.kind, StepsKind::Steps);
    assert_eq!(doc.step.samples, 12);
    assert!(doc.steps_per_s > 0.0);
    assert!((doc.samples_per_s / doc.steps_per_s - 4.0).abs() < 1e-9);
    // gpufeed's own loop times its wait for data: never undetermined.
    assert_ne!(doc.verdict, PhaseVerdict::Undetermined);
    assert_eq!(
        doc.level.is_some(),
        [PhaseVerdict::InputBound, PhaseVerdict::TransferBound].contains(&doc.verdict)
    );
    assert!(!doc.evidence.is_empty() && !doc.fix.is_empty());
    assert!(doc.loss.first.is_finite() && doc.loss.last.is_finite());
    assert!(doc.overhead.is_some());
    assert_eq!(doc.config.model["preset"], "tiny");
    assert_eq!(doc.config.device, "cpu");
    assert!(doc.config.sync);
    assert_eq!(doc.config.loader["batch_size"], 4);
}

#[test]
fn text_leads_with_the_verdict_and_config_sizes_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let model = "model:\n  text_encoder_dim: 32\n  text_encoder_heads: 4\n  decoder_layers: 1\n";
    let (data, config) = setup(tmp.path(), model);
    let (code, stdout, stderr) = run(&[
        "profile",
        "step",
        "--data",
        &data,
        "--config",
        &config,
        "--steps",
        "6",
        "--warmup",
        "1",
        "--no-sync",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(
        [
            "input-bound",
            "transfer-bound",
            "compute-bound",
            "oscillating"
        ]
        .iter()
        .any(|v| first.starts_with(v)),
        "{stdout}"
    );
    assert!(stdout.contains("not synchronised"), "{stdout}");
    let (_, stdout, _) = run(&[
        "profile", "step", "--data", &data, "--config", &config, "--steps", "2", "--warmup", "0",
        "--format", "json",
    ]);
    let doc: StepProfile = serde_json::from_str(&stdout).unwrap();
    let sizes = &doc.config.model["sizes"];
    assert_eq!(sizes["encoder_dim"], 32);
    assert_eq!(sizes["encoder_heads"], 4);
    assert_eq!(sizes["decoder_layers"], 1);
    assert_eq!(
        sizes["decoder_dim"], 96,
        "unset keys keep the preset's value"
    );
}

/// Exit 2, one line on stderr, nothing on stdout.
fn fails(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(stdout.is_empty());
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0].to_owned()
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    let out = gpufeed()
        .args(["demo-data", s(&data), "--clips", "2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let d = s(&data);
    for (args, expect) in [
        (vec!["--model", "huge"], "`--model huge`"),
        (vec!["--dtype", "f64"], "`--dtype f64`"),
        (vec!["--device", "gpu"], "device `gpu`"),
        (vec!["--data-device", "cuda:x"], "device `cuda:x`"),
        (vec!["--steps", "0"], "`--steps 0`"),
    ] {
        let mut all = vec!["profile", "step", "--data", d];
        all.extend(args);
        let line = fails(&all);
        assert!(line.contains(expect), "{line}");
    }
    let line = fails(&["profile", "step"]);
    assert!(line.contains("--data DIR"), "{line}");
    assert!(
        !data.join(".gpufeed-cache").exists(),
        "refused before any precompute"
    );
}

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_without_the_feature_names_it() {
    let line = fails(&["profile", "step", "--device", "cuda:0", "--data", "nowhere"]);
    assert!(line.contains("--features cuda"), "{line}");
}
