//! Reruns the LJSpeech measurement of the English cleaner and prints the breakdown.
//!
//! ```text
//! cargo run -p gpufeed-text --example ljspeech_measure                # the shared copy
//! cargo run -p gpufeed-text --example ljspeech_measure -- PATH --all  # every mismatch
//! ```
//!
//! The default path is `shared/data/ljspeech-metadata/metadata.csv` beside the repository.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use gpufeed_text::ljspeech::{measure, parse_metadata};

fn main() -> ExitCode {
    let mut path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ljspeech-metadata/metadata.csv");
    let mut all = false;
    for arg in std::env::args().skip(1) {
        if arg == "--all" {
            all = true;
        } else {
            path = PathBuf::from(arg);
        }
    }
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let content = match fs_err::read_to_string(&path) {
        Ok(content) => content,
        Err(err) => {
            let _ = writeln!(
                stderr,
                "error: {err}\n\nhint: pass the path of LJSpeech's metadata.csv"
            );
            return ExitCode::FAILURE;
        }
    };
    let transcripts = match parse_metadata(&content) {
        Ok(t) => t,
        Err(err) => {
            let _ = writeln!(stderr, "error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let m = measure(&transcripts);
    let _ = write!(stdout, "{m}");
    if all {
        let _ = writeln!(stdout, "\nall {} mismatches:", m.mismatches.len());
        for e in &m.mismatches {
            let _ = writeln!(
                stdout,
                "{}: ours \"{}\" / LJSpeech \"{}\"",
                e.id, e.ours, e.theirs
            );
        }
    }
    ExitCode::SUCCESS
}
