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

/// The fuzzer's first find: an event array with an empty value once panicked with "index
/// out of bounds" in the reader (`bytes[0]` of a value of length 0). It now goes through the
/// target's body (which checks that the reader neither panics nor loses the file's name)
/// like every corpus file, and reads as a trace with no GPU event.
#[test]
fn an_empty_event_value_is_no_panic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/kineto/empty-event-value.json");
    let bytes = fs_err::read(&path).unwrap();
    kineto::run(&bytes);
    let name = std::path::Path::new("empty-event-value.json");
    match gpufeed_kineto::analyze_bytes(&bytes, name) {
        Ok(r) => assert!(r.ranks.iter().all(|k| k.temporal.is_none()), "{r:?}"),
        Err(e) => assert!(e.to_string().contains("empty-event-value.json"), "{e}"),
    }
}
