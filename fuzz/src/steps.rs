//! Step lists (`steps.txt`, `steps.csv`: [`gpufeed_telemetry::steps::read`]) and step
//! recordings (`phase_steps::read`), as `analyze` and `profile` read them.

use std::path::Path;

use gpufeed_telemetry::{phase_steps, steps};

use crate::nvsmi::names_the_file;

/// Reads `data` as both kinds of step file.
pub fn run(data: &[u8]) {
    let path = Path::new("fuzz-steps.txt");
    match steps::read(data, path) {
        Ok(trace) => assert!(!trace.ms.is_empty(), "a step list read with no step"),
        Err(e) => names_the_file(&e),
    }
    match phase_steps::read(data, Path::new("fuzz-steps.jsonl")) {
        Ok(trace) => {
            // The analysis reads every step's totals; they must not panic either.
            let _ = trace.analysed_totals();
        }
        Err(e) => names_the_file(&e),
    }
}
