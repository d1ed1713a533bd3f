//! Synthetic recordings with a known truth: each test builds steps whose phases it chose,
//! and checks the shares, the categories and the verdict that follow.

use super::*;

/// A small seeded generator (xorshift64*), so the jitter is the same on every run.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform noise in [-a, a].
    fn jitter(&mut self, a: f64) -> f64 {
        a * (2.0 * self.uniform() - 1.0)
    }
}

fn meta(warmup: usize) -> Meta {
    Meta {
        source: "test".to_owned(),
        sync: true,
        warmup,
        batch_size: Some(32),
    }
}

/// A step of the named phases, with `rest` ms outside every phase.
fn step(phases: &[(&str, f64)], rest: f64) -> StepRecord {
    StepRecord {
        total_ms: phases.iter().map(|(_, v)| v).sum::<f64>() + rest,
        phases: phases.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
        items: None,
    }
}

/// `n` steps of the given phase means, each jittered by up to 2 % (seeded), 1 ms outside
/// the phases.
fn recording(n: usize, phases: &[(&str, f64)], seed: u64) -> Vec<StepRecord> {
    let mut g = Rng(seed);
    (0..n)
        .map(|_| {
            let jittered: Vec<(&str, f64)> = phases
                .iter()
                .map(|&(name, ms)| (name, ms * (1.0 + g.jitter(0.02))))
                .collect();
            step(&jittered, 1.0)
        })
        .collect()
}

fn doc(steps: &[StepRecord]) -> PhaseSteps {
    document(&meta(0), steps).unwrap()
}

#[test]
fn categories_follow_the_documented_rule() {
    let cases = [
        ("data_wait", Category::Input),
        ("DATA_WAIT", Category::Input),
        ("h2d_copy", Category::Copy),
        ("device_copy", Category::Copy),
        ("copy_batch", Category::Copy),
        ("H2D", Category::Copy),
        ("batch_to_device", Category::Copy),
        ("transfer", Category::Copy),
        ("forward", Category::Compute),
        ("backward", Category::Compute),
        ("optimizer", Category::Compute),
        ("loss", Category::Compute),
        ("data_wait_extra", Category::Compute),
        ("wait", Category::Compute),
    ];
    for (name, expected) in cases {
        assert_eq!(Category::of(name), expected, "{name}");
    }
}

#[test]
fn shares_and_unaccounted_are_exact_on_steady_steps() {
    let steps: Vec<StepRecord> = (0..20)
        .map(|_| {
            step(
                &[("data_wait", 10.0), ("forward", 50.0), ("backward", 30.0)],
                10.0,
            )
        })
        .collect();
    let d = doc(&steps);
    let names: Vec<&str> = d.phases.names().collect();
    assert_eq!(names, ["data_wait", "forward", "backward"]);
    let share = |n: &str| d.phases.get(n).unwrap().share;
    assert!((share("data_wait") - 0.1).abs() < 1e-12);
    assert!((share("forward") - 0.5).abs() < 1e-12);
    assert!((share("backward") - 0.3).abs() < 1e-12);
    assert!((d.unaccounted_share - 0.1).abs() < 1e-12);
    assert_eq!(d.phases.get("forward").unwrap().std_ms, 0.0);
    assert_eq!(d.phases.get("forward").unwrap().order, 1);
    assert_eq!(d.step.samples, 20);
    assert!((d.steps_per_s - 10.0).abs() < 1e-9, "{}", d.steps_per_s);
    assert!((d.samples_per_s.unwrap() - 320.0).abs() < 1e-9);
    assert_eq!(d.series.as_ref().unwrap().total_ms.len(), 20);
    assert_eq!(
        d.series.as_ref().unwrap().phases.get("backward").unwrap(),
        &vec![30.0; 20]
    );
    // 10 % data wait: moderately input-bound.
    assert_eq!(
        (d.verdict.as_str(), d.level),
        ("input-bound", Some(Level::Moderate))
    );
    assert!(
        d.evidence
            .iter()
            .any(|e| e == "10.0 % of the step is outside every timed phase"),
        "{:?}",
        d.evidence
    );
}

#[test]
fn input_bound_recording() {
    // 30 ms of 101 waiting for data: highly input-bound (TF Profiler: >= 20 %).
    let d = doc(&recording(
        200,
        &[("data_wait", 30.0), ("forward", 30.0), ("backward", 40.0)],
        1,
    ));
    assert_eq!(
        (d.verdict.as_str(), d.level),
        ("input-bound", Some(Level::High))
    );
    assert!(
        d.evidence[0].starts_with("data wait 29.") || d.evidence[0].starts_with("data wait 30."),
        "{:?}",
        d.evidence
    );
    // The loader is the user's: nothing of gpufeed's own loader is quoted.
    assert!(d.fix.contains("num_workers"), "{}", d.fix);
    assert!(!d.fix.contains("(now"), "{}", d.fix);
    assert!(!d.fix.chars().any(|c| c.is_ascii_digit()), "{}", d.fix);
}

#[test]
fn transfer_bound_recording() {
    let d = doc(&recording(
        100,
        &[
            ("data_wait", 2.0),
            ("to_device", 25.0),
            ("forward", 30.0),
            ("backward", 40.0),
        ],
        2,
    ));
    assert_eq!(
        (d.verdict.as_str(), d.level),
        ("transfer-bound", Some(Level::High))
    );
    assert_eq!(d.phases.get("to_device").unwrap().category, Category::Copy);
    assert!(d.fix.contains("pin_memory"), "{}", d.fix);
    assert!(!d.fix.contains("data_gpu"), "{}", d.fix);
}

#[test]
fn compute_bound_recording() {
    let d = doc(&recording(
        100,
        &[
            ("data_wait", 0.5),
            ("h2d_copy", 0.5),
            ("forward", 40.0),
            ("backward", 55.0),
            ("optimizer", 3.0),
        ],
        3,
    ));
    assert_eq!((d.verdict.as_str(), d.level), ("compute-bound", None));
    assert!(
        d.evidence[0]
            .starts_with("the compute phases (every phase but data wait and copies) are 9"),
        "{:?}",
        d.evidence
    );
    assert!(d.fix.contains("mixed precision"), "{}", d.fix);
    assert!(!d.fix.contains("--dtype"), "{}", d.fix);
}

#[test]
fn oscillating_recording() {
    // A checkpoint-like stall every 8th step in the compute; the data wait stays small.
    let mut g = Rng(4);
    let steps: Vec<StepRecord> = (0..160)
        .map(|i| {
            let forward = if i % 8 == 5 { 300.0 } else { 60.0 };
            step(
                &[
                    ("data_wait", 2.0 + g.jitter(0.2)),
                    ("forward", forward + g.jitter(1.0)),
                    ("backward", 40.0 + g.jitter(1.0)),
                ],
                1.0,
            )
        })
        .collect();
    let d = doc(&steps);
    assert_eq!((d.verdict.as_str(), d.level), ("oscillating", None));
    assert_eq!(d.step.period_steps, Some(8));
    assert!(
        d.evidence[0].starts_with("the step time repeats every 8 steps"),
        "{:?}",
        d.evidence
    );
}

#[test]
fn warm_up_is_left_out() {
    // A first step that compiles for a second while waiting for the loader to start.
    let mut steps = vec![step(&[("data_wait", 900.0), ("forward", 100.0)], 0.0)];
    steps.extend(recording(30, &[("data_wait", 1.0), ("forward", 99.0)], 5));
    let warm = document(&meta(1), &steps).unwrap();
    assert_eq!(warm.step.samples, 30);
    assert_eq!(warm.verdict.as_str(), "compute-bound");
    assert!(warm.step.max_ms < 110.0, "{}", warm.step.max_ms);
    assert_eq!(warm.series.as_ref().unwrap().total_ms.len(), 30);
    let cold = document(&meta(0), &steps).unwrap();
    assert_eq!(cold.step.samples, 31);
    assert!(cold.phases.get("data_wait").unwrap().share > 0.2);
    assert_eq!(cold.verdict.as_str(), "input-bound");
}

#[test]
fn too_few_steps_after_warm_up_is_an_error_saying_how_many() {
    let steps = recording(15, &[("data_wait", 1.0), ("forward", 99.0)], 6);
    let e = document(&meta(3), &steps).unwrap_err().to_string();
    assert_eq!(
        e,
        "15 step(s) recorded, 12 after the 3 warm-up step(s): a verdict needs at least 13 \
         (fewer cannot show a cycle; `STEPS_MIN_JUDGED` in gpufeed_stats::thresholds); record \
         at least 16 steps"
    );
    assert!(document(&meta(2), &steps).is_ok());
    let e = document(&meta(40), &steps).unwrap_err().to_string();
    assert!(
        e.starts_with("15 step(s) recorded, 0 after the 40 warm-up"),
        "{e}"
    );
    assert!(document(&meta(0), &[]).is_err());
}

#[test]
fn no_data_wait_is_not_judged_compute_bound() {
    let d = doc(&recording(50, &[("forward", 60.0), ("backward", 39.0)], 7));
    assert_eq!((d.verdict.as_str(), d.level), ("undetermined", None));
    assert!(d.fix.contains("`data_wait`"), "{}", d.fix);
    assert!(
        d.evidence
            .iter()
            .any(|e| e.starts_with("no `data_wait` phase was recorded")),
        "{:?}",
        d.evidence
    );
    // Copies alone can still make it transfer-bound: that much was measured.
    let d = doc(&recording(50, &[("h2d", 30.0), ("forward", 69.0)], 8));
    assert_eq!(d.verdict.as_str(), "transfer-bound");
    assert!(
        d.evidence
            .iter()
            .any(|e| e.starts_with("no `data_wait` phase was recorded"))
    );
}

#[test]
fn without_sync_the_evidence_says_so() {
    let steps = recording(20, &[("data_wait", 1.0), ("forward", 99.0)], 9);
    let m = Meta {
        sync: false,
        ..meta(0)
    };
    let d = document(&m, &steps).unwrap();
    assert!(!d.sync);
    assert!(
        d.evidence
            .iter()
            .any(|e| e.starts_with("timed without a device sync")),
        "{:?}",
        d.evidence
    );
    assert!(
        !doc(&steps)
            .evidence
            .iter()
            .any(|e| e.contains("device sync"))
    );
}

#[test]
fn an_occasional_phase_keeps_its_place_and_counts_its_steps() {
    let steps: Vec<StepRecord> = (0..40)
        .map(|i| {
            if i % 10 == 9 {
                step(
                    &[
                        ("data_wait", 1.0),
                        ("forward", 50.0),
                        ("checkpoint", 40.0),
                        ("optimizer", 5.0),
                    ],
                    0.0,
                )
            } else {
                step(
                    &[("data_wait", 1.0), ("forward", 50.0), ("optimizer", 5.0)],
                    0.0,
                )
            }
        })
        .collect();
    let d = doc(&steps);
    let names: Vec<&str> = d.phases.names().collect();
    assert_eq!(names, ["data_wait", "forward", "checkpoint", "optimizer"]);
    let c = d.phases.get("checkpoint").unwrap();
    assert_eq!((c.steps, c.order), (4, 2));
    assert!((c.mean_ms - 4.0).abs() < 1e-12);
    let text = render_text(&d);
    assert!(text.contains("(in 4 of 40 steps)"), "{text}");
}

#[test]
fn a_phase_timed_twice_in_a_step_counts_its_total() {
    // Gradient accumulation: forward and backward once per micro-batch.
    let steps: Vec<StepRecord> = (0..20)
        .map(|_| {
            step(
                &[
                    ("data_wait", 2.0),
                    ("forward", 20.0),
                    ("backward", 25.0),
                    ("forward", 20.0),
                    ("backward", 25.0),
                ],
                8.0,
            )
        })
        .collect();
    let d = doc(&steps);
    assert_eq!(d.phases.0.len(), 3);
    assert!((d.phases.get("forward").unwrap().mean_ms - 40.0).abs() < 1e-12);
    assert!((d.unaccounted_share - 0.08).abs() < 1e-12);
}

#[test]
fn items_per_step_set_the_sample_rate() {
    let mut steps = recording(20, &[("data_wait", 1.0), ("forward", 99.0)], 10);
    let no_batch = Meta {
        batch_size: None,
        ..meta(0)
    };
    assert_eq!(document(&no_batch, &steps).unwrap().samples_per_s, None);
    for s in &mut steps {
        s.items = Some(10);
    }
    let d = document(&no_batch, &steps).unwrap();
    let expected = 10.0 * d.steps_per_s;
    assert!((d.samples_per_s.unwrap() - expected).abs() < 1e-9);
    // A step's own count wins over the batch size; a missing one falls back to it.
    steps[0].items = None;
    let d = document(&meta(0), &steps).unwrap();
    let seconds: f64 = steps.iter().map(|s| s.total_ms).sum::<f64>() / 1e3;
    assert!((d.samples_per_s.unwrap() - (19.0 * 10.0 + 32.0) / seconds).abs() < 1e-9);
}

#[test]
fn bad_records_are_errors_naming_the_step() {
    let good = recording(20, &[("data_wait", 1.0), ("forward", 90.0)], 11);
    type Spoil = fn(&mut StepRecord);
    let cases: [(Spoil, &str); 5] = [
        (
            |s| s.total_ms = -1.0,
            "step 4: step time `-1` ms is not a number above 0",
        ),
        (|s| s.total_ms = f64::NAN, "step 4: step time `NaN` ms"),
        (
            |s| s.phases[1].1 = f64::INFINITY,
            "step 4: phase `forward` is `inf` ms",
        ),
        (
            |s| s.phases[0].0.clear(),
            "step 4: a phase has an empty name",
        ),
        (
            |s| s.phases[1].1 = s.total_ms * 1.5,
            "step 4: the phases add up to",
        ),
    ];
    for (spoil, expected) in cases {
        let mut steps = good.clone();
        spoil(&mut steps[4]);
        let e = document(&meta(0), &steps).unwrap_err().to_string();
        assert!(e.starts_with(expected), "{e}");
    }
    // Huge and tiny values that pass the checks do not panic.
    let mut steps = good.clone();
    steps[1] = step(&[("data_wait", 1e-300)], 1e-300);
    steps[2].items = Some(u64::MAX);
    let d = document(&meta(0), &steps).unwrap();
    assert!(d.samples_per_s.is_some_and(f64::is_finite));
    steps[0] = step(&[("data_wait", 0.0)], 1e300);
    let e = document(&meta(0), &steps).unwrap_err().to_string();
    assert!(
        e.starts_with("step times up to 1e300 ms are too large to compute with"),
        "{e}"
    );
}

#[test]
fn the_step_object_is_what_trace_kind_steps_gives() {
    let steps = recording(60, &[("data_wait", 5.0), ("forward", 90.0)], 12);
    let d = document(&meta(2), &steps).unwrap();
    let totals: Vec<f64> = steps[2..].iter().map(|s| s.total_ms).collect();
    let direct = StepReport::new(gpufeed_stats::analyze_steps(&totals).unwrap());
    assert_eq!(
        serde_json::to_value(&d.step).unwrap(),
        serde_json::to_value(&direct).unwrap()
    );
}

#[test]
fn the_document_round_trips_and_keeps_the_loop_order() {
    let d = doc(&recording(
        30,
        &[("zz_data_prep", 3.0), ("data_wait", 5.0), ("alpha", 90.0)],
        13,
    ));
    let json = serde_json::to_string(&d).unwrap();
    let back: PhaseSteps = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d);
    assert!(
        json.starts_with("{\"kind\":\"phase-steps\",\"schema_version\":2,"),
        "{json}"
    );
    let at = |s: &str| json.find(s).unwrap();
    assert!(at("\"zz_data_prep\":{") < at("\"data_wait\":{"));
    assert!(at("\"data_wait\":{") < at("\"alpha\":{"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for key in [
        "kind",
        "schema_version",
        "source",
        "sync",
        "warmup",
        "phases",
        "unaccounted_share",
        "step",
        "steps_per_s",
        "samples_per_s",
        "verdict",
        "level",
        "evidence",
        "fix",
        "series",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["phases"]["data_wait"]["category"], "input");
    assert_eq!(v["step"]["kind"], "steps");
}

#[test]
fn text_puts_the_verdict_first_then_evidence_fix_and_the_phase_table() {
    let d = doc(&recording(
        50,
        &[("data_wait", 30.0), ("forward", 30.0), ("backward", 40.0)],
        14,
    ));
    let text = render_text(&d);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "input-bound (high)");
    assert!(lines[1].starts_with("  data wait "), "{text}");
    let fix = lines.iter().position(|l| l.starts_with("  fix: ")).unwrap();
    assert_eq!(fix, 1 + d.evidence.len());
    let own = lines
        .iter()
        .position(|l| l.starts_with("your own loop (test): 50 steps timed after 0 warm-up"))
        .unwrap();
    assert!(own > fix);
    let header = lines
        .iter()
        .position(|l| l.starts_with("phase ") && l.ends_with("share"))
        .unwrap();
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows, ["data_wait", "forward", "backward", "unaccounted"]);
    assert!(lines[header + 1].contains(" input "), "{text}");
    assert!(text.contains("samples/s"));
}

#[test]
fn write_and_read_round_trip_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.jsonl");
    let steps = recording(25, &[("data_wait", 5.0), ("forward", 90.0)], 15);
    write_jsonl(&path, &meta(1), &steps).unwrap();
    let (m, back) = read_jsonl(&path).unwrap();
    assert_eq!((m, back), (meta(1), steps.clone()));
    let names: Vec<String> = fs_err::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["steps.jsonl"], "no temporary file left");
    // Overwritten whole.
    write_jsonl(&path, &meta(0), &steps[..3]).unwrap();
    assert_eq!(read_jsonl(&path).unwrap().1.len(), 3);
}

#[test]
fn a_bad_record_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.jsonl");
    let mut steps = recording(5, &[("data_wait", 5.0), ("forward", 90.0)], 16);
    steps[3].phases[0].1 = -2.0;
    let e = write_jsonl(&path, &meta(0), &steps).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        format!(
            "`{}` not written: step 3: phase `data_wait` is `-2` ms; phase times must be \
             finite and not negative",
            path.display()
        )
    );
    assert_eq!(fs_err::read_dir(dir.path()).unwrap().count(), 0);
    let e = write_jsonl(&dir.path().join("no/such/dir/s.jsonl"), &meta(0), &[]).unwrap_err();
    assert!(format!("{e:#}").starts_with("cannot write `"), "{e:#}");
}

#[test]
fn a_cut_last_line_is_skipped_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.jsonl");
    write_jsonl(&path, &meta(0), &recording(20, &[("forward", 9.0)], 17)).unwrap();
    let mut text = fs_err::read_to_string(&path).unwrap();
    text.push_str("{\"step\":20,\"ms\":10.5,\"pha");
    fs_err::write(&path, &text).unwrap();
    let t = read_recording(&path).unwrap();
    assert_eq!((t.steps.len(), t.truncated_line), (20, Some(22)));
    assert_eq!(
        truncation_warning(&path, 22, 20),
        format!(
            "`{}` line 22: cut off mid-line (was the job killed while writing it?); skipped, \
             the 20 step(s) before it are read",
            path.display()
        )
    );
    assert_eq!(read_jsonl(&path).unwrap().1.len(), 20);
}

#[test]
fn read_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.jsonl");
    fs_err::write(
        &path,
        "{\"format\":\"gpufeed-steps\",\"version\":1}\n{\"ms\":5}\n\n{\"ms\":-5}\n{\"ms\":5}\n",
    )
    .unwrap();
    let e = format!("{:#}", read_jsonl(&path).unwrap_err());
    assert_eq!(
        e,
        format!(
            "`{}` line 4: step time `-5` ms is not a number above 0; a step's time runs from \
             one request for a batch to the next; fix or delete the line",
            path.display()
        )
    );
    let missing = dir.path().join("missing.jsonl");
    let e = format!("{:#}", read_jsonl(&missing).unwrap_err());
    assert!(e.contains(&missing.display().to_string()), "{e}");
}
