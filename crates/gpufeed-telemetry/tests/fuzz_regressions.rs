//! Fuzzing's regressions for the trace readers: the seed corpora of the `nvsmi`, `jsonl` and
//! `steps` fuzz targets (`fuzz/corpus/`), replayed through the targets' own bodies (the
//! files of `fuzz/src/`, compiled here by path, so `cargo test` needs no libFuzzer), the
//! inputs the fuzzers found, and hostile sizes (a log far larger than memory, streamed).

#[path = "../../../fuzz/src/jsonl.rs"]
mod jsonl;
#[path = "../../../fuzz/src/nvsmi.rs"]
mod nvsmi;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/steps.rs"]
mod steps;

use replay::{corpus_dir, replay};

fn corpus(target: &str) -> std::path::PathBuf {
    corpus_dir(env!("CARGO_MANIFEST_DIR"), target)
}

#[test]
fn nvsmi_corpus_replays() {
    assert!(replay(&corpus("nvsmi"), nvsmi::run) >= 5);
}

#[test]
fn jsonl_corpus_replays() {
    assert!(replay(&corpus("jsonl"), jsonl::run) >= 2);
}

#[test]
fn steps_corpus_replays() {
    assert!(replay(&corpus("steps"), steps::run) >= 5);
}
