//! `read_trace` on the committed fixtures in `tests/fixtures/`, one per format.

use std::path::{Path, PathBuf};

use gpufeed_telemetry::TraceError;
use gpufeed_telemetry::trace::{
    StepTrace, TimeUnit, Trace, TraceFormat, TraceKind, UtilTrace, read_trace,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn util(name: &str) -> UtilTrace {
    match read_trace(&fixture(name), None) {
        Ok(Trace::Util(t)) => t,
        other => panic!("{name}: {other:?}"),
    }
}

fn steps(name: &str) -> StepTrace {
    match read_trace(&fixture(name), None) {
        Ok(Trace::Steps(t)) => t,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn nvidia_smi_log_across_midnight() {
    let t = util("nvidia-smi.csv");
    assert_eq!(t.format, TraceFormat::NvidiaSmiCsv);
    assert_eq!((t.rows, t.skipped), (7, 1));
    assert_eq!(t.gpus[0].util, vec![38.0, 40.0, 3.0, 2.0]);
    assert_eq!(t.gpus[1].util, vec![2.0, 39.0, 41.0]);
    let dt: Vec<f64> = t.gpus[0].t.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(dt.iter().all(|d| (d - 0.1).abs() < 1e-6), "{dt:?}");
}

#[test]
fn nvidia_smi_log_without_header_or_units() {
    let t = util("nvidia-smi-noheader-nounits.csv");
    assert_eq!(t.gpus[0].util, vec![38.0, 40.0]);
    assert_eq!(t.gpus[1].util, vec![2.0, 3.0]);
    assert!(t.has_timestamps);
}

#[test]
fn gpufeed_recording() {
    let t = util("recording.jsonl");
    assert_eq!(t.format, TraceFormat::GpufeedJsonl);
    assert_eq!(t.gpus[0].t, vec![0.0, 0.1, 0.2]);
    assert_eq!(t.gpus[0].util, vec![37.0, 2.0, 39.0]);
}

#[test]
fn step_lists() {
    let t = steps("steps.csv");
    assert_eq!(t.column.as_deref(), Some("step_time_s"));
    assert_eq!(t.unit, TimeUnit::Seconds);
    assert_eq!(t.ms, vec![412.0, 698.0, 405.0]);
    let t = steps("steps.txt");
    assert_eq!(t.ms, vec![412.5, 398.1, 1650.0, 401.2]);
    assert_eq!(t.unit, TimeUnit::Milliseconds);
}

#[test]
fn kind_contradicting_the_content() {
    let path = fixture("nvidia-smi.csv");
    let e = read_trace(&path, Some(TraceKind::Steps)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "`{}` looks like an nvidia-smi log, not a list of step times; drop `--kind steps` or \
             pass `--kind util`",
            path.display()
        )
    );
    assert!(matches!(
        read_trace(&fixture("steps.txt"), Some(TraceKind::Util)),
        Err(TraceError::WrongKind {
            found: TraceFormat::StepList,
            requested: TraceKind::Util,
            ..
        })
    ));
}

#[test]
fn a_directory_is_an_io_error_with_one_reason() {
    let dir = fixture("");
    let e = read_trace(&dir, None).unwrap_err();
    let TraceError::Io { source, .. } = &e else {
        panic!("{e:?}")
    };
    // The path is in the message once, the operating system's reason once.
    assert_eq!(e.to_string(), format!("failed to read `{}`", dir.display()));
    assert!(!source.to_string().contains("fixtures"), "{source}");
}

/// A file of `shared/data/real-world` (its README says what each shows), or `None`, saying
/// so, when the shared data is not checked out beside the repository.
#[allow(clippy::print_stderr)] // the test's own output: why it skipped
fn real_world(case: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/real-world")
        .join(case);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "skipped: `{}` is missing (check out shared/ beside the repository)",
            p.display()
        );
        None
    }
}

/// Issue 26: the two real utilisation logs that gpufeed 0.1.0 refused are read.
#[test]
fn real_utilisation_logs() {
    if let Some(f) = real_world("smi_rpf_epoch_ts/gpu_usage.csv") {
        let Ok(Trace::Util(t)) = read_trace(&f, None) else {
            panic!("`{}` not read as utilisation", f.display())
        };
        // Epoch seconds, 60 s apart (61 now and then), 90 samples, mean 57.7 % by hand.
        assert!(t.has_timestamps);
        let g = &t.gpus[0];
        assert_eq!((g.util.len(), g.t[1] - g.t[0]), (90, 60.0));
        let mean = g.util.iter().sum::<f64>() / g.util.len() as f64;
        assert!((mean - 57.7).abs() < 0.05, "{mean}");
    }
    if let Some(f) = real_world("smi_slowfast_no_ts/gpu_utilization.csv") {
        let Ok(Trace::Util(t)) = read_trace(&f, None) else {
            panic!("`{}` not read as utilisation", f.display())
        };
        // The header before every sample, no timestamps: 40 samples, mean 94.8 % by hand.
        assert!(!t.has_timestamps);
        let g = &t.gpus[0];
        let mean = g.util.iter().sum::<f64>() / g.util.len() as f64;
        assert_eq!(g.util.len(), 40);
        assert!((mean - 94.8).abs() < 0.05, "{mean}");
    }
}

/// `dcgmi dmon -e 203,1002,1004`: told by its `#Entity` header, each GPU judged by its SM
/// activity (`N/A` skipped), no times.
#[test]
fn dcgmi_dmon_output() {
    let t = util("dcgmi-dmon.txt");
    assert_eq!(t.format, TraceFormat::DcgmiDmon);
    assert!(!t.has_timestamps);
    let near = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    };
    assert!(near(&t.gpus[0].util, &[12.0, 11.8]), "{:?}", t.gpus[0].util);
    assert_eq!(t.gpus[0].t, vec![0.0, 2.0], "the N/A row keeps its place");
    assert!(
        near(&t.gpus[1].util, &[81.2, 79.0, 80.5]),
        "{:?}",
        t.gpus[1].util
    );
    assert!(t.note.unwrap().contains("SM activity"));
}

/// A Prometheus range-query answer as `curl | jq` saves it (pretty-printed): told by its
/// keys, though its first line is a lone `{`.
#[test]
fn a_saved_prometheus_range_query() {
    let t = util("prometheus-range.json");
    assert_eq!(t.format, TraceFormat::Prometheus);
    assert!(t.has_timestamps);
    assert_eq!(t.gpus[0].util, vec![97.0, 12.0, 95.0]);
    assert_eq!(
        t.gpus[0].t,
        vec![1_764_000_000.0, 1_764_000_030.0, 1_764_000_060.0]
    );
    assert!(t.note.is_none());
}
