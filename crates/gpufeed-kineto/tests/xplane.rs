//! TensorFlow's `*.xplane.pb`: every generated case read from an xplane gets the verdict
//! and the figures of the same simulation written as TensorFlow's trace viewer JSON; a log
//! folder holding only xplane files is read from its latest run; bad input is named.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use gpufeed_contract::TraceFormat;
use gpufeed_kineto::synth::{Case, generate, generate_with_truth};
use gpufeed_kineto::{Error, Options, Report, analyze, analyze_path, read, xplane};
use serde_json::Value;

fn report(case: &Case, name: &str) -> Report {
    let (bytes, _) = generate_with_truth(case, 0);
    let t = if name.ends_with(".pb") {
        xplane::read_bytes(&bytes, Path::new(name)).unwrap()
    } else {
        read::read_from(&bytes[..], Path::new(name)).unwrap()
    };
    analyze(Path::new(name), vec![t], Options::default())
}

/// `a` and `b` equal, numbers to 1e-9 relative (the two forms' timestamps differ in their
/// origin, so sums may differ in the last bits), file names aside.
fn assert_same(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: Vec<&String> = x
                .keys()
                .filter(|k| !["file", "path"].contains(&k.as_str()))
                .collect();
            assert_eq!(
                keys,
                y.keys()
                    .filter(|k| !["file", "path"].contains(&k.as_str()))
                    .collect::<Vec<_>>(),
                "{at}"
            );
            for k in keys {
                assert_same(&x[k], &y[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths");
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                assert_same(p, q, &format!("{at}[{i}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (p, q) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (p - q).abs() <= 1e-9 * p.abs().max(q.abs()),
                "{at}: {p} vs {q}"
            );
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[test]
fn every_case_reads_the_same_from_xplane_as_from_trace_viewer_json() {
    for case in Case::all().into_iter().filter(|c| c.ranks == 1) {
        let x = report(&case.clone().xplane(), "host.xplane.pb");
        let j = report(&case.clone().tensorflow(), "host.trace.json");
        assert_eq!(x.format, TraceFormat::Tensorflow, "{}", case.name);
        assert_eq!(
            x.verdict.map(|v| v.as_str()),
            Some(case.expect),
            "{}",
            case.name
        );
        assert_eq!(x.ranks[0].steps.len(), case.steps, "{}", case.name);
        let (x, j) = (
            serde_json::to_value(&x).unwrap(),
            serde_json::to_value(&j).unwrap(),
        );
        assert_same(&x, &j, case.name);
    }
}

/// The generator's own tally of the GPU's gaps, read back from the xplane: the truth
/// behind the equality above. (The simulation's one in-order stream gives host waits; a
/// kernel wait needs a launch within `launch_us` of the stream draining, which its cases
/// seldom build.)
#[test]
fn xplane_idle_breakdown_is_the_generator_s_tally() {
    let mut host_wait = 0.0;
    for case in Case::all().into_iter().filter(|c| c.ranks == 1) {
        let (bytes, truth) = generate_with_truth(&case.clone().xplane(), 0);
        let t = xplane::read_bytes(&bytes, Path::new("s.xplane.pb")).unwrap();
        let r = analyze(Path::new("s"), vec![t], Options::default());
        let s = &r.ranks[0].idle_breakdown[0];
        assert_eq!(s.stream, 7);
        assert_eq!(
            (s.host_wait_us, s.kernel_wait_us, s.other_us),
            (truth.host_wait_us, truth.kernel_wait_us, truth.other_us),
            "{}",
            case.name
        );
        let tp = r.ranks[0].temporal.unwrap();
        assert_eq!(
            (tp.span_us, tp.span_us - tp.idle_us),
            (truth.span_us, truth.busy_us)
        );
        host_wait += truth.host_wait_us;
    }
    assert!(host_wait > 0.0);
}

#[test]
fn a_log_folder_of_xplane_files_reads_its_latest_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("plugins").join("profile");
    let old = runs.join("2026_01_01_10_00_00");
    let new = runs.join("2026_01_02_10_00_00");
    fs_err::create_dir_all(&old).unwrap();
    fs_err::create_dir_all(&new).unwrap();
    fs_err::write(
        old.join("host.xplane.pb"),
        generate(&Case::compute_bound().xplane(), 0),
    )
    .unwrap();
    fs_err::write(
        new.join("host.xplane.pb"),
        generate(&Case::input_bound().xplane(), 0),
    )
    .unwrap();
    fs_err::write(new.join("notes.txt"), "not a trace").unwrap();
    for path in [dir.path(), &new] {
        let r = analyze_path(path, Options::default()).unwrap();
        assert_eq!(r.ranks.len(), 1);
        assert!(
            r.ranks[0]
                .file
                .ends_with("2026_01_02_10_00_00/host.xplane.pb"),
            "{}",
            r.ranks[0].file
        );
        assert_eq!(r.verdict.map(|v| v.as_str()), Some("input-bound"));
    }
    // A run folder with both forms of one profile (older TensorFlow) reads it once, as JSON.
    fs_err::write(
        new.join("host.trace.json"),
        generate(&Case::input_bound().tensorflow(), 0),
    )
    .unwrap();
    let r = analyze_path(&new, Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 1);
    assert!(r.ranks[0].file.ends_with("host.trace.json"));
}

#[test]
fn a_keras_log_folder_reads_the_latest_run_below_it() {
    // Keras' TensorBoard callback profiles into `LOGDIR/train/plugins/profile/RUN/`, beside
    // `LOGDIR/validation/` (no profile) and event files: `gpufeed trace LOGDIR` reads the
    // latest run found one level down.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path();
    fs_err::create_dir_all(log.join("validation")).unwrap();
    fs_err::write(log.join("validation").join("events.out.tfevents.1"), "x").unwrap();
    let train = log.join("train");
    fs_err::create_dir_all(&train).unwrap();
    fs_err::write(train.join("events.out.tfevents.1"), "x").unwrap();
    for (run, case) in [
        ("2026_01_02_10_00_00", Case::input_bound()),
        ("2026_01_01_10_00_00", Case::compute_bound()),
    ] {
        let d = train.join("plugins").join("profile").join(run);
        fs_err::create_dir_all(&d).unwrap();
        fs_err::write(d.join("host.xplane.pb"), generate(&case.xplane(), 0)).unwrap();
    }
    for path in [log, &train] {
        let r = analyze_path(path, Options::default()).unwrap();
        assert!(
            r.ranks[0]
                .file
                .ends_with("train/plugins/profile/2026_01_02_10_00_00/host.xplane.pb"),
            "{}",
            r.ranks[0].file
        );
        assert_eq!(r.verdict.map(|v| v.as_str()), Some("input-bound"));
    }
    // A log folder with no profile at all is still an error naming it.
    let empty = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(empty.path().join("train")).unwrap();
    assert!(analyze_path(empty.path(), Options::default()).is_err());
}

#[test]
fn bad_xplane_files_are_named_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        fs_err::write(&p, bytes).unwrap();
        p
    };
    // Not a protobuf.
    let p = write("notes.xplane.pb", b"# my notes\nnot a profile\n");
    let e = analyze_path(&p, Options::default()).unwrap_err();
    assert!(matches!(e, Error::NotATrace { .. }), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("notes.xplane.pb") && m.contains("not a TensorFlow XSpace"),
        "{m}"
    );
    assert!(m.contains("hint:"), "{m}");
    // An empty XSpace (what a profile that recorded nothing can hold).
    let p = write("empty.xplane.pb", b"\x22\x04host");
    let m = analyze_path(&p, Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("empty.xplane.pb") && m.contains("no planes"),
        "{m}"
    );
    // Cut off: the GPU plane is written first, so a cut near the end loses the host plane
    // (and the steps) but keeps the GPU's rows, with one warning.
    let full = generate(&Case::input_bound().xplane(), 0);
    let p = write("killed.xplane.pb", &full[..full.len() - 100]);
    let r = analyze_path(&p, Options::default()).unwrap();
    assert!(r.ranks[0].temporal.is_some());
    assert!(r.ranks[0].steps.is_empty());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("killed.xplane.pb") && r.warnings[0].contains("of the file"),
        "{:?}",
        r.warnings
    );
    // Cut inside the first plane: nothing whole, and the error says it looks cut off.
    let p = write("early.xplane.pb", &full[..full.len() / 10]);
    let e = analyze_path(&p, Options::default()).unwrap_err();
    assert!(matches!(e, Error::CutOff { .. }), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("early.xplane.pb") && m.contains("looks cut off"),
        "{m}"
    );
    assert!(m.contains(&format!("{} bytes", full.len() / 10)), "{m}");
}
