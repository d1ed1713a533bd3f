//! Fuzzing's regressions for the profiler-trace reader: the seed corpus of the `kineto`
//! fuzz target (`fuzz/corpus/kineto`: two real traces trimmed to a few steps, and one cut
//! off mid-write), replayed through the target's own body (`fuzz/src/kineto.rs`, compiled
//! here by path, so `cargo test` needs no libFuzzer), and the inputs the fuzzer found.

#[path = "../../../fuzz/src/kineto.rs"]
mod kineto;
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/stream.rs"]
mod stream;

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

/// A 10 GB event (one string that never ends, a file whose quotes were lost): the reader
/// buffered the value being read whole, 420 MB resident for a 400 MB one before the fix.
/// Now it stops after `MAX_VALUE_BYTES` (64 MiB) with one error naming the file and the
/// byte, in bounded memory.
#[test]
fn ten_gb_event_is_refused_after_64_mib() {
    use gpufeed_kineto::read::{MAX_VALUE_BYTES, read_from};
    let head = br#"{"traceEvents": [{"ph": "X", "name": ""#;
    let mut input = stream::Repeat::new(head, b"abcdefghijklmnop", 10 << 30);
    let (result, growth) =
        memory::peak_growth(|| read_from(&mut input, std::path::Path::new("huge.json")));
    let consumed = input.pos;
    let e = result.expect_err("read").to_string();
    assert_eq!(
        e,
        format!(
            "`huge.json`: bad trace event at byte 17: one JSON value longer than \
             {MAX_VALUE_BYTES} bytes (a trace event is a few hundred): the file is damaged or \
             not a profiler trace"
        )
    );
    eprintln!("10 GB event: read {consumed} bytes: {e}; peak resident memory +{growth:?} bytes");
    assert!(
        consumed < (MAX_VALUE_BYTES + (4 << 20)) as u64,
        "read {consumed} bytes"
    );
    if let Some(growth) = growth {
        assert!(
            growth < 3 * MAX_VALUE_BYTES as u64,
            "peak resident memory grew {growth} bytes"
        );
    }
}
