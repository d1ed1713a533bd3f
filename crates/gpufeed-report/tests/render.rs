//! The renderers on a report built here, not measured: deterministic, so `summary.md` is a
//! snapshot (insta; stage times, throughputs and the version redacted all the same, as they
//! would differ between machines in a live run), and the HTML is checked for what makes it
//! one self-contained, safe file.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use gpufeed_contract::{Ordered, Phase, PhaseCategory, PhaseVerdict, StepConfig, StepProfile};
use gpufeed_report::model::{
    Breakdown, Cell, DataConfig, DataProfile, DoctorSection, Finding, GpuUtil, Inputs,
    Recommendation, Severity, Stage, StepPhases, Steps, StorageSpeed, Telemetry, Util,
};
use gpufeed_report::render::{Html, Json, Markdown, Renderer};
use gpufeed_report::{Collected, Report, UtilSamples};
use gpufeed_stats::thresholds::Level;
use gpufeed_stats::{IdleGaps, StepVerdict, UtilVerdict};
use serde_json::json;

fn steps(mean: f64, median: f64, verdict: StepVerdict) -> Steps {
    Steps {
        samples: 30,
        mean_ms: mean,
        std_ms: mean * 0.1,
        min_ms: median * 0.9,
        max_ms: mean * 2.0,
        median_ms: median,
        p95_ms: mean * 1.5,
        p99_ms: mean * 1.9,
        cv: 0.1,
        period_steps: None,
        period_strength: None,
        outliers: 1,
        verdict,
        ..Steps::default()
    }
}

/// `profile step`'s phases in step order: (name, mean ms, std ms, share).
fn phases(list: &[(&str, f64, f64, f64)]) -> Ordered<Phase> {
    Ordered(
        list.iter()
            .enumerate()
            .map(|(order, &(name, mean_ms, std_ms, share))| {
                let phase = Phase {
                    order,
                    category: PhaseCategory::of(name),
                    mean_ms,
                    std_ms,
                    share,
                    steps: 30,
                };
                (name.to_owned(), phase)
            })
            .collect(),
    )
}

fn finding(id: &str, severity: Severity, check: &str, message: &str) -> Finding {
    Finding {
        finding: gpufeed_contract::Finding {
            id: id.to_owned(),
            severity,
            message: message.to_owned(),
            path: None,
            line: None,
            column: None,
            evidence: String::new(),
            fix: String::new(),
        },
        check: check.to_owned(),
    }
}

/// A run on a starving machine: an oscillating GPU log, an input-bound step, a slow disk,
/// a config warning, and a benchmark that found better loader settings.
fn starving() -> Collected {
    let loader = json!({"loader": {"batch_size": 16, "workers": 2, "prefetch": 4}});
    let data = DataProfile {
        config: DataConfig {
            loader: json!({"batch_size": 16, "workers": 2, "prefetch": 4}),
            batches: 200,
            ..DataConfig::default()
        },
        batches: steps(9.5, 6.0, StepVerdict::Unstable),
        samples_per_s: 1680.0,
        bytes_per_s: 2.1e8,
        breakdown: Breakdown {
            read_cold_ms: Some(7.1),
            read_warm_ms: 1.2,
            assemble_ms: 0.8,
            queue_wait_ms: 9.5,
            padding_share: 0.35,
            ..Breakdown::default()
        },
        grid: Some(
            [
                (8, 1, 900.0),
                (8, 8, 2600.0),
                (16, 1, 1100.0),
                (16, 8, 3400.0),
            ]
            .into_iter()
            .map(|(b, w, s)| Cell {
                batch_size: b,
                workers: w,
                samples_per_s: s,
                mean_wait_ms: 1000.0 * b as f64 / s,
                cv: 0.12,
            })
            .collect(),
        ),
        recommendation: Some(Recommendation {
            batch_size: 16,
            num_workers: 8,
            prefetch_buffer_size: 16,
            samples_per_s: 3400.0,
            mean_wait_ms: 4.7,
            yaml: "data:\n  batch_size: 16\n  num_workers: 8\n  prefetch_buffer_size: 16\n"
                .to_owned(),
            keep_current: false,
        }),
        ..DataProfile::default()
    };
    let step = StepPhases::Model(Box::new(StepProfile {
        config: StepConfig {
            loader: loader["loader"].clone(),
            model: json!({"preset": "tiny", "parameters": 364064}),
            device: "cuda:0".to_owned(),
            dtype: "f32".to_owned(),
            warmup_steps: 3,
            ..StepConfig::default()
        },
        phases: phases(&[
            ("data_wait", 38.0, 20.0, 0.38),
            ("h2d_copy", 2.0, 0.1, 0.02),
            ("forward", 20.0, 1.0, 0.2),
            ("loss", 2.0, 0.1, 0.02),
            ("backward", 33.0, 1.0, 0.33),
            ("optimizer", 4.0, 0.2, 0.04),
        ]),
        step: steps(100.0, 96.0, StepVerdict::Stable),
        steps_per_s: 10.0,
        samples_per_s: 160.0,
        verdict: PhaseVerdict::InputBound,
        level: Some(Level::High),
        evidence: vec!["data wait 38.0 % + copies 2.0 % = 40.0 % of the step (TF Profiler: >= 5 % moderately, >= 20 % highly input-bound)".to_owned()],
        fix: "the loader does not keep up".to_owned(),
        ..StepProfile::default()
    }));
    let util: Vec<f64> = (0..600)
        .map(|i| if i % 15 < 7 { 40.0 } else { 2.0 })
        .collect();
    let telemetry = Telemetry {
        source: "trace".to_owned(),
        file: Some("gpu.csv".to_owned()),
        util: Util {
            samples: 600,
            interval_s: 0.1,
            gpus: vec![GpuUtil {
                gpu: 0,
                mean: 19.7,
                std: 18.9,
                cv: 0.96,
                p5: 2.0,
                p50: 2.0,
                p95: 40.0,
                idle_fraction: 0.533,
                busy_fraction: 0.0,
                period_s: Some(1.5),
                period_strength: Some(0.93),
                idle_gaps: IdleGaps {
                    count: 40,
                    mean_s: 0.8,
                    max_s: 0.8,
                },
                verdict: UtilVerdict::Oscillating,
                ..GpuUtil::default()
            }],
            ..Util::default()
        },
    };
    let mut slow = finding(
        "storage-slow-sequential",
        Severity::Warning,
        "Storage",
        "sequential reads at 41 MB/s",
    );
    slow.path = Some("/data/ljspeech".to_owned());
    slow.evidence = "64.0 MiB in 1.56 s of reads (O_DIRECT); reported below 200 MB/s".to_owned();
    slow.fix = "a local SSD; precompute".to_owned();
    let mut config = finding(
        "loader-in-main-thread",
        Severity::Warning,
        "Config",
        "`data.num_workers: 0`: batches are built | between steps",
    );
    config.path = Some("config.yaml".to_owned());
    config.line = Some(12);
    config.column = Some(16);
    config.fix = "data:\n  num_workers: 8".to_owned();
    let doctor = DoctorSection {
        findings: vec![
            slow,
            config,
            finding(
                "gpu-inventory",
                Severity::Info,
                "GPU",
                "GPU 0: NVIDIA <A100> & co",
            ),
        ],
        skipped: vec![(
            "Code".to_owned(),
            "pass `--code DIR` to lint the training code".to_owned(),
        )],
        storage: vec![StorageSpeed {
            role: "data".to_owned(),
            path: "/data/ljspeech".to_owned(),
            sequential_mb_s: Some(41.0),
            random_reads_per_s: Some(420.0),
        }],
    };
    Collected {
        stages: vec![
            Stage::skipped("demo data", "`--data /data/ljspeech` given".to_owned()),
            Stage::ok(
                "precompute",
                0.4,
                Some("cache `/data/ljspeech/.gpufeed-cache/abc`".to_owned()),
            ),
            Stage::ok(
                "doctor",
                6.2,
                Some("0 error(s), 2 warning(s), 1 info(s)".to_owned()),
            ),
            Stage::ok(
                "profile data",
                14.0,
                Some("200 batches, with the benchmark grid".to_owned()),
            ),
            Stage::ok(
                "profile step",
                61.5,
                Some("30 steps of the `tiny` model on cuda:0 after 3 warm-up".to_owned()),
            ),
            Stage::ok(
                "telemetry",
                0.1,
                Some("`gpu.csv`: 600 samples of 1 GPU(s)".to_owned()),
            ),
        ],
        doctor: Some(doctor),
        data: Some(data),
        batch_ms: (0..200)
            .map(|i| if i % 2 == 0 { 6.0 } else { 13.0 })
            .collect(),
        step: Some(step),
        step_ms: (0..30).map(|i| 90.0 + f64::from(i % 3) * 5.0).collect(),
        telemetry: Some(telemetry),
        util: vec![UtilSamples {
            gpu: 0,
            interval_s: 0.1,
            util,
        }],
        ..Collected::new(
            "0.1.0",
            Inputs {
                data: Some("/data/ljspeech".to_owned()),
                config: Some("config.yaml".to_owned()),
                trace: Some("gpu.csv".to_owned()),
                device: "cuda:0".to_owned(),
                ..Inputs::default()
            },
        )
    }
}

/// A run where a stage failed and nothing starves.
fn calm_with_a_failure() -> Collected {
    let step = StepPhases::Model(Box::new(StepProfile {
        config: StepConfig {
            model: json!({"preset": "tiny"}),
            device: "cpu".to_owned(),
            dtype: "f32".to_owned(),
            warmup_steps: 3,
            ..StepConfig::default()
        },
        phases: phases(&[
            ("data_wait", 0.1, 0.0, 0.001),
            ("forward", 60.0, 1.0, 0.6),
            ("backward", 39.9, 1.0, 0.399),
        ]),
        step: steps(100.0, 100.0, StepVerdict::Stable),
        steps_per_s: 10.0,
        samples_per_s: 560.0,
        verdict: PhaseVerdict::ComputeBound,
        ..StepProfile::default()
    }));
    Collected {
        stages: vec![
            Stage::ok("demo data", 1.1, Some("reused the demo dataset".to_owned())),
            Stage::ok("precompute", 0.1, None),
            Stage::ok("doctor", 3.0, None),
            Stage::failed(
                "profile data",
                0.2,
                "the loader plans no batch: every utterance is over the length caps (see `over_length`)".to_owned(),
            ),
            Stage::ok("profile step", 30.0, None),
            Stage::skipped(
                "telemetry",
                "no NVIDIA driver found (`libnvidia-ml.so.1` could not be loaded)".to_owned(),
            ),
        ],
        doctor: Some(DoctorSection::default()),
        step: Some(step),
        step_ms: vec![100.0; 20],
        ..Collected::new(
            "0.1.0",
            Inputs {
                demo: true,
                quick: true,
                device: "cpu".to_owned(),
                ..Inputs::default()
            },
        )
    }
}

/// Stage times, throughputs and the version: what differs between machines and runs.
fn redacted(f: impl FnOnce()) {
    insta::with_settings!({
        filters => vec![
            (r"\| \d+(\.\d+)? s \|", "| [time] |"),
            (r"\| \d+ min \d+ s \|", "| [time] |"),
            (r"\d+(\.\d+)? steps/s", "[rate] steps/s"),
            (r"\d+ samples/s", "[rate] samples/s"),
            (r"\d+ MB/s of batches", "[rate] MB/s of batches"),
            (r"gpufeed \d+\.\d+\.\d+", "gpufeed [version]"),
        ],
    }, {
        f();
    });
}

#[test]
fn summary_of_a_starving_run() {
    let report = Report::build(starving());
    assert_eq!(report.causes[0].id, "oscillating-utilisation");
    assert_eq!(report.causes[1].id, "input-bound");
    redacted(|| insta::assert_snapshot!("starving", Markdown.render(&report)));
}

#[test]
fn summary_of_a_calm_run_with_a_failed_stage() {
    let report = Report::build(calm_with_a_failure());
    assert!(report.causes.is_empty());
    assert_eq!(report.exit_code(), 1);
    redacted(|| insta::assert_snapshot!("calm", Markdown.render(&report)));
}

#[test]
fn html_is_one_self_contained_escaped_file() {
    let report = Report::build(starving());
    let html = Html.render(&report);
    // Escaped: the finding's `<A100> & co` and the `|` of a message.
    assert!(html.contains("NVIDIA &lt;A100&gt; &amp; co"), "{html}");
    assert!(!html.contains("<A100>"));
    // Self-contained: no script, nothing fetched; the only URL is the SVG namespace.
    assert!(!html.contains("<script"));
    for attr in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(attr), "{attr}");
    }
    let urls: Vec<&str> = html
        .match_indices("://")
        .map(|(i, _)| &html[i - 4..i + 22])
        .collect();
    assert!(
        urls.iter()
            .all(|u| u.starts_with("http://www.w3.org/2000/svg")),
        "{urls:?}"
    );
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    // Every plot and the findings table.
    for id in [
        "plot-util-0",
        "plot-batches",
        "plot-batches-acf",
        "plot-steps",
        "plot-steps-acf",
        "plot-phases",
        "plot-grid",
        "findings-table",
        "cause-oscillating-utilisation",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // Idle gaps marked: 40 of them.
    assert_eq!(html.matches("<title>idle ").count(), 40);
    // The recommended cell is outlined.
    assert_eq!(html.matches("stroke=\"#d7301f\"").count(), 1);
}

#[test]
fn html_says_why_a_plot_is_missing() {
    let html = Html.render(&Report::build(calm_with_a_failure()));
    assert!(
        html.contains("Not measured: <code>profile data</code> failed: the loader plans no batch")
    );
    assert!(html.contains("Not measured: <code>telemetry</code> skipped: no NVIDIA driver found"));
    assert!(html.contains("id=\"plot-phases\""));
    assert!(!html.contains("id=\"plot-grid\""));
}

#[test]
fn json_is_one_document_with_everything() {
    let report = Report::build(starving());
    let text = Json.render(&report);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema_version"], gpufeed_report::model::SCHEMA);
    // It reads back as the report's own type, which refuses unknown fields.
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back.causes, report.causes);
    assert_eq!(v["causes"][0]["id"], "oscillating-utilisation");
    assert_eq!(v["causes"][0]["rank"], 1);
    assert_eq!(v["stages"][0]["status"], "skipped");
    assert_eq!(v["profile_data"]["recommendation"]["num_workers"], 8);
    assert_eq!(v["profile_step"]["phases"]["data_wait"]["share"], 0.38);
    assert_eq!(v["telemetry"]["util"]["gpus"][0]["period_s"], 1.5);
    assert_eq!(
        v["series"]["util"][0]["idle_gaps_s"]
            .as_array()
            .unwrap()
            .len(),
        40
    );
    assert!(v["series"]["batch_ms"]["acf"].as_array().unwrap().len() > 50);
    assert_eq!(v["thresholds"][0]["name"], "PERIOD_MIN_STRENGTH");
}

/// The steps of the user's own loop (a phase-steps document from `analyze --trace`) are
/// labelled as theirs in every renderer, with their own phase order and no samples/s when
/// the recording did not know the batch size.
#[test]
fn the_own_loop_is_labelled_as_the_users() {
    let step: StepPhases = serde_json::from_value(json!({
        "kind": "phase-steps",
        "schema_version": 1,
        "source": "python StepTimer",
        "sync": false,
        "warmup": 2,
        "phases": {
            "zz_prepare": {"order": 0, "category": "compute", "mean_ms": 5.0, "std_ms": 0.1, "share": 0.05, "steps": 30},
            "data_wait": {"order": 1, "category": "input", "mean_ms": 30.0, "std_ms": 1.0, "share": 0.3, "steps": 30},
            "forward": {"order": 2, "category": "compute", "mean_ms": 64.0, "std_ms": 1.0, "share": 0.64, "steps": 30},
        },
        "unaccounted_share": 0.01,
        "step": serde_json::to_value(steps(100.0, 99.0, StepVerdict::Stable)).unwrap(),
        "steps_per_s": 10.0,
        "samples_per_s": null,
        "verdict": "input-bound",
        "level": "high",
        "evidence": ["data wait 30.0 % + copies 0.0 % = 30.0 % of the step"],
        "fix": "the input pipeline does not keep up",
    }))
    .unwrap();
    let report = Report::build(Collected {
        stages: vec![Stage::ok("profile step", 0.1, None)],
        step: Some(step),
        step_ms: vec![100.0; 30],
        ..Collected::new("0.1.0", Inputs::default())
    });
    let md = Markdown.render(&report);
    assert!(
        md.contains("### Training step (your own loop, `--trace`)\n\nyour own training loop, timed by `python StepTimer`, without a device sync at the phase boundaries: 30 timed steps after 2 warm-up.\n\n**input-bound** (high): 10.0 steps/s.\n"),
        "{md}"
    );
    let zz = md.find("| zz_prepare |").unwrap();
    assert!(zz < md.find("| data_wait |").unwrap(), "{md}");
    assert!(
        md.contains("**Verdict:** Most likely cause of starvation: input-bound step: in your own loop, data wait is 30 %"),
        "{md}"
    );
    let html = Html.render(&report);
    assert!(
        html.contains("Your own loop: the time of each step"),
        "no plot title"
    );
    assert!(html.contains("your own training loop, timed by <code>python StepTimer</code>"));
    assert!(
        !html.contains("samples/s;"),
        "no samples/s without a batch size"
    );
}

/// The benchmark's recommendation says what it is worth next to the training step that
/// ran with the same loader: nothing to gain while a compute-bound step consumes a tenth of
/// what the loader delivers; no such sentence when the step is input-bound (the causes say
/// what to change).
#[test]
fn the_recommendation_is_weighed_against_what_the_step_consumes() {
    let sentence = "these settings matter only once the step is about that much faster";
    let mut c = starving();
    let delivered = c.data.as_ref().unwrap().samples_per_s;
    let Some(StepPhases::Model(step)) = c.step.as_mut() else {
        panic!("starving() has gpufeed's step profile")
    };
    // Input-bound: no sentence.
    assert_eq!(step.verdict, PhaseVerdict::InputBound);
    let md = Markdown.render(&Report::build(c.clone()));
    assert!(!md.contains(sentence), "{md}");
    // Compute-bound, consuming a tenth of what the loader delivers.
    let Some(StepPhases::Model(step)) = c.step.as_mut() else {
        unreachable!()
    };
    step.phases = phases(&[("data_wait", 0.1, 0.0, 0.001), ("forward", 99.0, 1.0, 0.99)]);
    step.verdict = PhaseVerdict::ComputeBound;
    step.level = None;
    step.samples_per_s = delivered / 10.0;
    let report = Report::build(c.clone());
    let md = Markdown.render(&report);
    let expected = format!(
        "The loader as configured already delivers {delivered:.0} samples/s, 10x the {:.0} \
         samples/s the training step consumed, which waits for data 0.1 % of its time: {sentence}.",
        delivered / 10.0
    );
    assert!(md.contains(&expected), "{md}");
    assert!(Html.render(&report).contains(sentence));
    // A loader slower than the step consumes.
    let Some(StepPhases::Model(step)) = c.step.as_mut() else {
        unreachable!()
    };
    step.samples_per_s = delivered * 2.0;
    let md = Markdown.render(&Report::build(c.clone()));
    assert!(md.contains("less than the"), "{md}");
    assert!(md.contains("these settings feed it faster"), "{md}");
}
