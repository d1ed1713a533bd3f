//! nvidia-smi CSV logs: [`gpufeed_telemetry::nvsmi::read`] and `read_skipping` (what
//! `monitor --replay` uses), and the format sniffing of `read_trace_from`.

use std::path::Path;

use gpufeed_telemetry::nvsmi;
use gpufeed_telemetry::trace::read_trace_from;

const NAME: &str = "fuzz-gpu.csv";

/// Reads `data` as a log every way a user's file is read.
pub fn run(data: &[u8]) {
    let path = Path::new(NAME);
    let strict = nvsmi::read(data, path);
    let mut skipped = 0_usize;
    let lenient = nvsmi::read_skipping(data, path, |e| {
        names_the_file(&e);
        skipped += 1;
    });
    match (&strict, &lenient) {
        // A log that reads strictly has no bad line: the lenient read skips nothing and
        // gives the same trace (compared as text, so that NaN equals NaN).
        (Ok(s), Ok(l)) => {
            assert_eq!(skipped, 0, "the lenient read skipped lines of a sound log");
            assert_eq!(format!("{s:?}"), format!("{l:?}"));
        }
        (Ok(_), Err(e)) => panic!("the lenient read failed where the strict one did not: {e}"),
        (Err(e), _) => names_the_file(e),
    }
    if let Ok(trace) = &strict {
        for series in &trace.gpus {
            assert_eq!(series.t.len(), series.util.len());
            assert!(series.util.iter().all(|u| (0.0..=100.0).contains(u)));
        }
    }
    if let Err(e) = read_trace_from(data, path, None) {
        names_the_file(&e);
    }
}

/// A reader's error names the file it read.
pub(crate) fn names_the_file(e: &dyn std::error::Error) {
    let message = e.to_string();
    assert!(
        message.contains("fuzz-"),
        "the error does not name the file: {message}"
    );
}
