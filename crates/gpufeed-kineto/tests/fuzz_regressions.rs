//! Fuzzing's regressions for the profiler-trace reader: the seed corpus of the `kineto`
//! fuzz target (`fuzz/corpus/kineto`: two real traces trimmed to a few steps, and one cut
//! off mid-write), replayed through the target's own body (`fuzz/src/kineto.rs`, compiled
//! here by path, so `cargo test` needs no libFuzzer), and the inputs the fuzzer found.

#[path = "../../../fuzz/src/kineto.rs"]
mod kineto;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use replay::{corpus_dir, replay};

#[test]
fn kineto_corpus_replays() {
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "kineto");
    assert!(replay(&dir, kineto::run) >= 3);
}
