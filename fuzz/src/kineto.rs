//! PyTorch (Kineto) and TensorFlow profiler traces: [`gpufeed_kineto::analyze_bytes`], the
//! streaming Chrome-trace reader and every analysis after it (HTA's breakdowns, the steps,
//! the verdict), as `gpufeed trace` runs them on a file.

use std::path::Path;

/// Reads and analyses `data` as a trace.
pub fn run(data: &[u8]) {
    let name = Path::new("fuzz-trace.json");
    match gpufeed_kineto::analyze_bytes(data, name) {
        Ok(report) => assert_eq!(report.ranks.len(), 1, "one file is one rank"),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains("fuzz-trace.json"),
                "the error does not name the file: {message}"
            );
        }
    }
}
