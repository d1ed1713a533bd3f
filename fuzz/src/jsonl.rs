//! gpufeed's JSONL recordings: [`gpufeed_telemetry::jsonl::Reader`] record by record, and
//! `read_util` (the utilisation series `analyze` reads).

use std::path::Path;

use gpufeed_telemetry::jsonl;

use crate::nvsmi::names_the_file;

/// Reads `data` as a recording.
pub fn run(data: &[u8]) {
    let path = Path::new("fuzz-recording.jsonl");
    match jsonl::Reader::new(data, path) {
        Ok(reader) => {
            for record in reader {
                if let Err(e) = record {
                    names_the_file(&e);
                    break;
                }
            }
        }
        Err(e) => names_the_file(&e),
    }
    match jsonl::read_util(data, path) {
        Ok(trace) => {
            for series in &trace.gpus {
                assert_eq!(series.t.len(), series.util.len());
                assert!(series.util.iter().all(|u| (0.0..=100.0).contains(u)));
            }
        }
        Err(e) => names_the_file(&e),
    }
}
