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

/// A trace made on the fly, piece by piece, so that a test can stream hundreds of MB of
/// it through the reader without holding them: each piece is text, or a run of one byte
/// (an event's name of 32 MiB costs nothing until the reader's buffer takes it).
struct Pieces<I> {
    pieces: I,
    /// The piece being handed out, and how much of it is left.
    current: Option<(Piece, usize)>,
    /// Bytes handed out so far.
    pos: u64,
}

enum Piece {
    Text(Vec<u8>),
    Run(u8, usize),
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Text(t) => t.len(),
            Piece::Run(_, n) => *n,
        }
    }
}

impl<I: Iterator<Item = Piece>> Pieces<I> {
    fn new(pieces: I) -> Self {
        Pieces {
            pieces,
            current: None,
            pos: 0,
        }
    }
}

impl<I: Iterator<Item = Piece>> std::io::Read for Pieces<I> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let (piece, left) = match &mut self.current {
                Some((piece, left)) if *left > 0 => (piece, left),
                _ => match self.pieces.next() {
                    Some(p) => {
                        let len = p.len();
                        self.current = Some((p, len));
                        continue;
                    }
                    None => break,
                },
            };
            let room = (buf.len() - n).min(*left);
            let out = &mut buf[n..n + room];
            match piece {
                Piece::Text(t) => {
                    let at = t.len() - *left;
                    out.copy_from_slice(&t[at..at + room]);
                }
                Piece::Run(b, _) => out.fill(*b),
            }
            *left -= room;
            n += room;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// The names cap at its real size: events whose names are 32 MiB each and all distinct
/// (a trace no profiler writes, but a file can hold). Each name is kept twice (the list
/// and the lookup's key), so the ninth crosses `MAX_NAME_BYTES` (512 MiB) and the read
/// stops there, with the names it kept and one value in its buffer: peak resident memory
/// is the cap and a few values more, not the 10 GB the stream could go on for. Streamed
/// from a generator, so the test holds nothing of the input itself.
#[test]
fn names_stop_at_512_mib() {
    use gpufeed_kineto::read::{MAX_NAME_BYTES, read_from};
    const NAME: usize = 32 << 20;
    let head = std::iter::once(Piece::Text(br#"{"traceEvents": ["#.to_vec()));
    let events = (0u64..).flat_map(|i| {
        [
            Piece::Text(format!(r#"{{"ph": "X", "ts": 1, "dur": 1, "name": "{i:08}"#).into()),
            Piece::Run(b'n', NAME - 8),
            Piece::Text(br#""},"#.to_vec()),
        ]
    });
    // 10 GB of events, were it read to the end.
    let mut input = Pieces::new(head.chain(events).take(3 * 320));
    let start = std::time::Instant::now();
    let (result, growth) =
        memory::peak_growth(|| read_from(&mut input, std::path::Path::new("names.json")));
    let e = result.expect_err("read").to_string();
    let consumed = input.pos;
    eprintln!(
        "names: read {consumed} bytes in {:.1} s: {e}; peak resident memory +{growth:?} bytes",
        start.elapsed().as_secs_f64()
    );
    // 17 bytes of head; an event is 40 bytes, its name and 3.
    let event = (NAME + 43) as u64;
    let ninth = 17 + 8 * event;
    assert!(
        e.starts_with(&format!(
            "`names.json`: more than {MAX_NAME_BYTES} bytes of names by byte {ninth}, the \
             most gpufeed keeps from one trace"
        )),
        "{e}"
    );
    // Up to the ninth event's end, and at most one more chunk (1 MiB).
    assert!(
        consumed <= ninth + event + (1 << 20),
        "read {consumed} bytes"
    );
    if let Some(growth) = growth {
        assert!(
            growth < (MAX_NAME_BYTES + 6 * NAME) as u64,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// The events cap at its real size: 2^25 events with a duration, the smallest there are
/// (`{"dur":0}`, 10 bytes with the comma), from a 10 GB stream. The read keeps 48 bytes
/// an event (1.5 GiB) and stops at the next one. Ignored: 335 MB of events to parse is
/// 48 s in a debug build (10 s in release, +1.61 GB); `cargo test --release -p
/// gpufeed-kineto --test fuzz_regressions -- --ignored --nocapture` runs it (see
/// docs/fuzzing.md).
#[test]
#[ignore = "1.6 GB resident; 10 s in release, 48 s in a debug build"]
fn events_stop_at_two_to_the_25() {
    use gpufeed_kineto::read::{MAX_EVENTS, read_from};
    let head = br#"{"traceEvents": ["#;
    let event = br#"{"dur":0},"#;
    let mut input = stream::Repeat::new(head, event, 10 << 30);
    let start = std::time::Instant::now();
    let (result, growth) =
        memory::peak_growth(|| read_from(&mut input, std::path::Path::new("events.json")));
    let e = result.expect_err("read").to_string();
    let consumed = input.pos;
    eprintln!(
        "events: read {consumed} bytes in {:.1} s: {e}; peak resident memory +{growth:?} bytes",
        start.elapsed().as_secs_f64()
    );
    let at = head.len() + MAX_EVENTS * event.len();
    assert!(
        e.starts_with(&format!(
            "`events.json`: more than {MAX_EVENTS} events by byte {at}, the most gpufeed keeps"
        )),
        "{e}"
    );
    assert!(consumed <= (at + (2 << 20)) as u64, "read {consumed} bytes");
    if let Some(growth) = growth {
        // 48 bytes an event, and the vector's growth: a reallocation may copy.
        assert!(
            growth < (MAX_EVENTS * 48 * 2) as u64,
            "peak resident memory grew {growth} bytes"
        );
    }
}
