//! Fuzzing's regressions for the trace readers: the seed corpora of the `nvsmi`, `jsonl` and
//! `steps` fuzz targets (`fuzz/corpus/`), replayed through the targets' own bodies (the
//! files of `fuzz/src/`, compiled here by path, so `cargo test` needs no libFuzzer), the
//! inputs the fuzzers found, and hostile sizes (a log far larger than memory, streamed).

#[path = "../../../fuzz/src/jsonl.rs"]
mod jsonl;
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/nvsmi.rs"]
mod nvsmi;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/steps.rs"]
mod steps;
#[path = "../../../fuzz/src/stream.rs"]
mod stream;

use std::io::BufReader;
use std::path::Path;

use gpufeed_telemetry::trace::{Trace, read_trace_from};
use gpufeed_telemetry::{
    TraceError, jsonl as jsonl_reader, nvsmi as nvsmi_reader, phase_steps, steps as steps_reader,
};
use replay::{corpus_dir, replay};
use stream::Repeat;

const GB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

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

/// A 10 GB file with no line break (a binary file, a log whose newlines were lost) is
/// refused after its first MiB by every trace reader: the line cap stops the read, so
/// neither time nor memory grows with the file.
#[test]
fn ten_gb_without_a_newline_is_refused_after_one_mib() {
    type ReadFn = fn(&mut BufReader<Repeat>, &Path) -> Result<(), TraceError>;
    let readers: [(&str, ReadFn); 5] = [
        ("nvsmi", |r, p| nvsmi_reader::read(r, p).map(drop)),
        ("jsonl", |r, p| jsonl_reader::read_util(r, p).map(drop)),
        ("steps", |r, p| steps_reader::read(r, p).map(drop)),
        ("phase_steps", |r, p| phase_steps::read(r, p).map(drop)),
        ("read_trace_from", |r, p| {
            read_trace_from(r, p, None).map(drop)
        }),
    ];
    for (name, read) in readers {
        let mut input = BufReader::with_capacity(64 << 10, Repeat::new(b"", b"1234567,", 10 * GB));
        let (result, growth) = memory::peak_growth(|| read(&mut input, Path::new("huge.log")));
        let consumed = input.get_ref().pos;
        let e = result.expect_err(name);
        assert!(
            matches!(e, TraceError::LineTooLong { line: 1, .. }),
            "{name}: {e}"
        );
        assert!(
            e.to_string().starts_with("`huge.log` line 1: longer than"),
            "{name}: {e}"
        );
        eprintln!(
            "{name}: read {consumed} bytes of 10 GiB, peak resident memory +{growth:?} bytes"
        );
        assert!(consumed <= 2 * MIB, "{name} read {consumed} bytes of 10 GB");
        if let Some(growth) = growth {
            assert!(
                growth < 64 * MIB,
                "{name}: peak resident memory grew {growth} bytes"
            );
        }
    }
}

/// A long nvidia-smi log is streamed: 64 MiB of rows whose value is unavailable (`[N/A]`,
/// counted and not kept) are read to the end with the peak resident memory growing by a few
/// MiB, not by the size of the file. (Rows with a value are kept, 16 bytes each: memory
/// grows with the samples, never with the bytes around them.)
#[test]
fn long_log_streams_in_bounded_memory() {
    let head = b"timestamp, index, utilization.gpu [%], memory.used [MiB]\n";
    let na = b"2026/11/21 10:00:00.100, 0, [N/A], 1234 MiB\n";
    let rows = 64 * MIB / na.len() as u64;
    let len = head.len() as u64 + rows * na.len() as u64;
    let mut input = BufReader::new(Repeat::new(head, na, len));
    let (result, growth) =
        memory::peak_growth(|| read_trace_from(&mut input, Path::new("long.csv"), None));
    assert_eq!(input.get_ref().pos, len, "the whole log was read");
    let e = result.expect_err("every value is unavailable");
    assert!(
        matches!(e, TraceError::NoSamples { skipped, .. } if skipped as u64 == rows),
        "{e}"
    );
    eprintln!("{len} bytes, {rows} rows of [N/A]: peak resident memory +{growth:?} bytes");
    if let Some(growth) = growth {
        assert!(
            growth < 8 * MIB,
            "peak resident memory grew {growth} bytes for {len} bytes"
        );
    }
    // The same rows with a value: the samples are kept, and only they.
    let row = b"2026/11/21 10:00:00.100, 0, 45 %, 1234 MiB\n";
    let rows = 16 * MIB / row.len() as u64;
    let len = head.len() as u64 + rows * row.len() as u64;
    let mut input = BufReader::new(Repeat::new(head, row, len));
    let (result, growth) =
        memory::peak_growth(|| read_trace_from(&mut input, Path::new("long.csv"), None));
    let Ok(Trace::Util(trace)) = result else {
        panic!("not read: {result:?}");
    };
    assert_eq!(trace.rows as u64, rows);
    eprintln!("{len} bytes, {rows} samples: peak resident memory +{growth:?} bytes");
    if let Some(growth) = growth {
        // 16 bytes a sample, and the vectors' doubling: at most 2 x 16 bytes a sample.
        assert!(
            growth < 32 * rows + 4 * MIB,
            "{growth} bytes for {rows} samples"
        );
    }
}

/// A 10 GiB nvidia-smi log, streamed from memory (no disk): rows without a value are read
/// to the end in a few MiB; rows with one are kept up to `trace::MAX_SAMPLES` (16 bytes
/// each), then the read stops with one error naming the line, so resident memory is
/// bounded by the limit, not by the file. Minutes in a debug build: run in release with
/// `cargo test --release -p gpufeed-telemetry --test fuzz_regressions -- --ignored
/// --nocapture`. The table of docs/fuzzing.md has the figures.
#[test]
#[ignore = "reads 10 GiB; about a minute in release"]
fn ten_gib_log_in_bounded_memory() {
    use gpufeed_telemetry::trace::MAX_SAMPLES;
    let head = b"timestamp, index, utilization.gpu [%], memory.used [MiB]\n";
    let na = b"2026/11/21 10:00:00.100, 0, [N/A], 1234 MiB\n";
    // Whole rows, 10 GiB at most.
    let len = head.len() as u64 + (10 * GB - head.len() as u64) / na.len() as u64 * na.len() as u64;
    let mut input = BufReader::with_capacity(256 << 10, Repeat::new(head, na, len));
    let start = std::time::Instant::now();
    let (result, growth) =
        memory::peak_growth(|| read_trace_from(&mut input, Path::new("10g.csv"), None));
    assert_eq!(input.get_ref().pos, len, "the whole log was read");
    assert!(
        matches!(result, Err(TraceError::NoSamples { .. })),
        "{result:?}"
    );
    eprintln!(
        "{len} bytes of [N/A] rows: read to the end in {:.0?}, peak resident memory +{growth:?} bytes",
        start.elapsed()
    );
    if let Some(growth) = growth {
        assert!(growth < 8 * MIB, "peak resident memory grew {growth} bytes");
    }
    let row = b"2026/11/21 10:00:00.100, 0, 45 %, 1234 MiB\n";
    let mut input = BufReader::with_capacity(256 << 10, Repeat::new(head, row, 10 * GB));
    let start = std::time::Instant::now();
    let (result, growth) =
        memory::peak_growth(|| read_trace_from(&mut input, Path::new("10g.csv"), None));
    let consumed = input.get_ref().pos;
    let e = result.expect_err("more samples than the limit");
    let line = MAX_SAMPLES + 2;
    assert!(
        matches!(e, TraceError::TooLarge { line: l, .. } if l == line),
        "{e}"
    );
    eprintln!(
        "10 GiB of rows with a value: stopped after {consumed} bytes in {:.0?}: {e}; peak \
         resident memory +{growth:?} bytes",
        start.elapsed()
    );
    if let Some(growth) = growth {
        // The samples kept, and the vectors' doubling: at most 2 x 16 bytes a sample.
        assert!(
            growth < 32 * MAX_SAMPLES as u64 + 64 * MIB,
            "{growth} bytes"
        );
    }
}
