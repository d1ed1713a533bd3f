//! `gpufeed demo-data`, `precompute` and `mel` end to end, through the built binary.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::Path;

mod common;
use common::gpufeed;
use gpufeed_contract::{DataProfile, Document, Judged};

fn run_ok(args: &[&str]) -> String {
    let out = gpufeed().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Exit 2, one line on stderr, nothing on stdout; returns the line.
fn fails(args: &[&str]) -> String {
    let out = gpufeed().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0].to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn demo_data_precompute_and_reuse() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    let cache = tmp.path().join("cache");
    let out = run_ok(&["demo-data", s(&data), "--clips", "4", "--seed", "9"]);
    assert!(out.contains("wrote 4 clips"), "{out}");
    assert_eq!(
        std::fs::read_to_string(data.join("metadata.csv"))
            .unwrap()
            .lines()
            .count(),
        4
    );
    let out = run_ok(&[
        "precompute",
        "--data",
        s(&data),
        "--cache",
        s(&cache),
        "--jobs",
        "2",
    ]);
    assert!(
        out.contains("built 1 shard(s)") && out.contains("4 utterances"),
        "{out}"
    );
    let out = run_ok(&["precompute", "--data", s(&data), "--cache", s(&cache)]);
    assert!(out.contains("is complete"), "{out}");
    // A config that changes a feature setting gets its own cache.
    let config = tmp.path().join("config.yaml");
    std::fs::write(&config, "data:\n  n_mels: 64  # fewer bands\n").unwrap();
    let out = run_ok(&[
        "precompute",
        "--data",
        s(&data),
        "--cache",
        s(&cache),
        "--config",
        s(&config),
    ]);
    assert!(out.contains("built 1 shard(s)"), "{out}");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
}

#[test]
fn mel_writes_a_float32_npy() {
    let tmp = tempfile::tempdir().unwrap();
    let wav = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ljspeech-mini/wavs/LJ001-0008.wav");
    let out_path = tmp.path().join("m.npy");
    let out = run_ok(&["mel", s(&wav), "--out", s(&out_path)]);
    assert!(out.contains("(154, 80)"), "{out}");
    let (shape, data) = gpufeed_audio::npy::read_f32(&out_path).unwrap();
    // 1.783 s at 22050 Hz = 39,318 samples: 1 + 39318 / 256 = 154 frames.
    assert_eq!(shape, [154, 80]);
    assert!(
        data.iter()
            .all(|v| v.is_finite() && *v >= (1e-5f32).ln() - 1e-4)
    );
}

#[test]
fn bad_inputs_get_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let line = fails(&["precompute", "--data", "/nonexistent/ds"]);
    assert!(line.contains("/nonexistent/ds"), "{line}");
    let line = fails(&["precompute", "--data", s(tmp.path()), "--shard", "2/2"]);
    assert!(line.contains("--shard 2/2"), "{line}");
    let line = fails(&["precompute", "--data", s(tmp.path()), "--on-error", "maybe"]);
    assert!(line.contains("--on-error maybe"), "{line}");
    let text = tmp.path().join("x.wav");
    std::fs::write(&text, "not audio").unwrap();
    let line = fails(&["mel", s(&text), "--out", s(&tmp.path().join("x.npy"))]);
    assert!(line.contains("x.wav"), "{line}");
    assert!(!tmp.path().join("x.npy").exists(), "no half-written output");
    let config = tmp.path().join("bad.yaml");
    std::fs::write(&config, "data:\n  hop_length: 0\n").unwrap();
    let line = fails(&["mel", s(&text), "--out", "y.npy", "--config", s(&config)]);
    assert!(line.contains("bad.yaml:2:"), "{line}");
    // A cache folder that cannot be made: the path and the reason, the reason once.
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("wavs")).unwrap();
    std::fs::write(ds.join("metadata.csv"), "LJ001-0001|Hi.|Hi.\n").unwrap();
    let cache = text.join("cache");
    let line = fails(&["precompute", "--data", s(&ds), "--cache", s(&cache)]);
    assert!(line.contains("x.wav/cache"), "{line}");
    assert_eq!(line.matches("Not a directory").count(), 1, "{line}");
}

#[test]
fn profile_data_precomputes_then_profiles() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    run_ok(&["demo-data", s(&data), "--clips", "12"]);
    let json = run_ok(&[
        "profile",
        "data",
        "--data",
        s(&data),
        "--batch-size",
        "4",
        "--workers",
        "2",
        "--batches",
        "30",
        "--consumer-ms",
        "2",
        "--format",
        "json",
    ]);
    // The document as its writer defines it (gpufeed-contract; unknown fields refused).
    let p: DataProfile = serde_json::from_str(&json).unwrap();
    assert_eq!(p.schema_version, <DataProfile as Document>::VERSION);
    // With a consumer, the figures are of its waits.
    assert_eq!(p.judged, Judged::Wait);
    assert_eq!(p.batches.samples, 30);
    assert!(p.batches.min_ms <= p.batches.median_ms && p.batches.median_ms <= p.batches.max_ms);
    assert!(p.samples_per_s > 0.0 && p.bytes_per_s > 0.0);
    assert_eq!(p.loader().map(|l| l.batch_size), Some(4));
    assert_eq!(p.config.items, 12);
    assert_eq!(p.config.over_length.policy, "skip");
    let b = &p.breakdown;
    for (key, v) in [
        ("read_warm_ms", b.read_warm_ms),
        ("assemble_ms", b.assemble_ms),
        ("queue_wait_ms", b.queue_wait_ms),
        ("padding_share", b.padding_share),
    ] {
        assert!(v >= 0.0 && v.is_finite(), "breakdown.{key} = {v}");
    }
    assert!(p.grid.is_none() && p.recommendation.is_none());
    // The cache exists now: --cache finds it, and --benchmark recommends a data: block.
    let text = run_ok(&[
        "profile",
        "data",
        "--cache",
        s(&data.join(".gpufeed-cache")),
        "--batches",
        "20",
        "--benchmark",
    ]);
    assert!(
        text.contains("recommended") && text.contains("data:\n  batch_size:"),
        "{text}"
    );
}

#[test]
fn profile_data_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let line = fails(&["profile", "data"]);
    assert!(
        line.contains("--data DIR") && line.contains("--cache DIR"),
        "{line}"
    );
    let line = fails(&["profile", "data", "--cache", s(tmp.path())]);
    assert!(line.contains("holds no complete cache"), "{line}");
    let data = tmp.path().join("demo");
    run_ok(&["demo-data", s(&data), "--clips", "2"]);
    let line = fails(&["profile", "data", "--data", s(&data), "--batch-size", "0"]);
    assert!(line.contains("--batch-size 0"), "{line}");
    assert!(
        !data.join(".gpufeed-cache").exists(),
        "refused before any precompute"
    );
}

/// The demo dataset and the default config give whole batches: the demo once had 64 clips
/// for batches of 56, so every epoch ended with a batch of 8, and gpufeed reported its own
/// demo's alternating batch times as a loader cycle of period 2.
#[test]
fn the_default_demo_gives_whole_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    run_ok(&["demo-data", s(&data), "--seed", "3"]);
    let out = run_ok(&[
        "profile",
        "data",
        "--data",
        s(&data),
        "--batches",
        "8",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = doc["config"]["items"].as_u64().unwrap();
    let batch = doc["config"]["loader"]["batch_size"].as_u64().unwrap();
    assert_eq!(batch, 56, "the default batch_size");
    assert!(
        items >= 2 * batch && items.is_multiple_of(batch),
        "{items} items"
    );
    assert_eq!(doc["config"]["over_length"]["skipped"], 0);
    assert!(
        doc["batches"].get("partial_batches").is_none(),
        "{}",
        doc["batches"]
    );
}

/// A loader whose epochs end with a short batch: the figures leave it out and say so.
#[test]
fn profile_data_names_the_epoch_tail_it_leaves_out() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    run_ok(&["demo-data", s(&data), "--clips", "10", "--seed", "3"]);
    let args = [
        "profile",
        "data",
        "--data",
        s(&data),
        "--batch-size",
        "4",
        "--batches",
        "30",
    ];
    let doc: serde_json::Value =
        serde_json::from_str(&run_ok(&[&args[..], &["--format", "json"]].concat())).unwrap();
    // No consumer: the figures are of the workers' time per batch, and the text says why.
    assert_eq!(doc["judged"], "work", "{doc}");
    // 10 items in batches of 4: 4, 4, 2 every epoch.
    let p = &doc["batches"]["partial_batches"];
    assert_eq!(p["whole_items"], 4, "{doc}");
    assert_eq!(
        (p["min_items"].clone(), p["max_items"].clone()),
        (2.into(), 2.into())
    );
    let left_out = p["count"].as_u64().unwrap();
    assert!((9..=11).contains(&left_out), "{p}");
    assert_eq!(doc["batches"]["samples"].as_u64().unwrap() + left_out, 30);
    let text = run_ok(&args);
    assert!(
        text.contains(&format!(
            "{left_out} epoch-tail batches of 2 items (a whole one: 4) left out of these figures"
        )),
        "{text}"
    );
    assert!(
        text.contains("worker time per batch mean")
            && text.contains("judged: the time a worker takes to make each batch"),
        "{text}"
    );
}

#[test]
fn precompute_names_the_layout_and_says_each_unhonoured_key_once() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("demo");
    run_ok(&["demo-data", s(&data), "--clips", "3", "--seed", "9"]);
    let config = tmp.path().join("config.yaml");
    std::fs::write(
        &config,
        "data:\n  use_phonemes: true\n  trim_silence: true\n",
    )
    .unwrap();
    let out = gpufeed()
        .args(["precompute", "--data", s(&data), "--config", s(&config)])
        .args(["--cache", s(&tmp.path().join("c"))])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stdout.starts_with("dataset: ljspeech layout (detected from its own files)"),
        "{stdout}"
    );
    // Each key once, with its line, on stderr (today's code said nothing).
    for (key, line) in [("use_phonemes", 2), ("trim_silence", 3)] {
        let hits: Vec<&str> = stderr.lines().filter(|l| l.contains(key)).collect();
        assert_eq!(hits.len(), 1, "{stderr}");
        assert!(
            hits[0].contains(&format!("config.yaml:{line}:")),
            "{}",
            hits[0]
        );
    }
}

#[test]
fn precompute_refuses_what_no_layout_reads_in_one_line() {
    // Today's code read a binary file line by line: exit 0, an empty cache and thousands
    // of "not valid UTF-8" lines.
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("train.parquet");
    std::fs::write(&junk, [0u8, 1, 2, 255].repeat(10_000)).unwrap();
    let line = fails(&[
        "precompute",
        "--data",
        s(&junk),
        "--cache",
        s(&tmp.path().join("c")),
    ]);
    assert!(
        line.contains("train.parquet") && line.contains("--layout"),
        "{line}"
    );
    let line = fails(&["precompute", "--data", s(tmp.path()), "--layout", "timit"]);
    assert!(line.contains("unknown layout `timit`"), "{line}");
}
