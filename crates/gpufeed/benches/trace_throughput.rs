//! Throughput of `gpufeed trace` on a large nvidia-smi log.
//!
//! Generates a 24-hour, 8-GPU, 10 Hz `nvidia-smi --query-gpu=timestamp,index,
//! utilization.gpu,memory.used --format=csv` log (6.9 million rows, ~330 MB) in a temporary
//! folder, then measures, on one core and from the page cache:
//!
//! - **reference**: reading the file line by line with `BufRead::read_until` and nothing
//!   else, the floor any parser sits on;
//! - **parse**: `gpufeed_telemetry::trace::read_trace`, the reader `trace` uses;
//! - **parse + analyse**: `gpufeed_analysis::trace::analyze_file`, everything `gpufeed trace` does
//!   before printing.
//!
//! Each is run three times and the median reported, in rows/s and as a ratio to the
//! reference of the same run. Peak resident memory (`VmHWM`) is reported against the bytes
//! the samples themselves need (16 per row: timestamp and value as f64), first for a quarter
//! of the log and then for all of it, to show that memory follows the samples, not the file.
//!
//! ```text
//! cargo bench -p gpufeed --bench trace_throughput            # 24 h
//! cargo bench -p gpufeed --bench trace_throughput -- --hours 2
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
// A benchmark that panics on a broken temp file is fine; fs-err adds nothing here.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

const GPUS: usize = 8;
const HZ: usize = 10;

fn generate(path: &Path, hours: f64) -> usize {
    let file = std::fs::File::create(path).expect("create the log");
    let mut w = BufWriter::with_capacity(1 << 20, file);
    writeln!(
        w,
        "timestamp, index, utilization.gpu [%], memory.used [MiB]"
    )
    .unwrap();
    let ticks = (hours * 3600.0 * HZ as f64) as usize;
    // A cheap deterministic generator for the noise (xorshift64).
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 7) as i64 - 3
    };
    for tick in 0..ticks {
        let ms = tick * 1000 / HZ;
        let (s, ms) = (ms / 1000, ms % 1000);
        let (day, s) = (s / 86_400, s % 86_400);
        let (h, m, sec) = (s / 3600, (s / 60) % 60, s % 60);
        for gpu in 0..GPUS {
            // Half the GPUs oscillate 2 % / 40 % every 1.5 s, the others are well fed.
            let base: i64 = if gpu % 2 == 0 {
                if tick % 15 < 7 { 40 } else { 2 }
            } else {
                93
            };
            let util = (base + noise()).clamp(0, 100);
            writeln!(
                w,
                "2026/11/{:02} {h:02}:{m:02}:{sec:02}.{ms:03}, {gpu}, {util} %, {} MiB",
                21 + day,
                20_000 + gpu * 100
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    ticks * GPUS
}

fn reference(path: &Path) -> usize {
    let mut r = BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
    let mut line = Vec::with_capacity(128);
    let mut n = 0;
    while r.read_until(b'\n', &mut line).unwrap() > 0 {
        n += usize::from(line.len() > 1);
        line.clear();
    }
    n.saturating_sub(1) // the header
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn median_secs(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}

fn run(dir: &Path, hours: f64) {
    let path = dir.join(format!("gpu-{hours}h.csv"));
    let t = Instant::now();
    let rows = generate(&path, hours);
    let size = std::fs::metadata(&path).unwrap().len();
    println!(
        "\n{hours} h, {GPUS} GPUs, {HZ} Hz: {rows} rows, {:.0} MB (generated in {:.1} s)",
        size as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let t_ref = median_secs(|| assert_eq!(reference(&path), rows));
    let t_parse = median_secs(|| {
        let trace = gpufeed_telemetry::trace::read_trace(&path, None).unwrap();
        std::hint::black_box(trace);
    });
    let t_all = median_secs(|| {
        let report = gpufeed_analysis::trace::analyze_file(&path, None).unwrap();
        std::hint::black_box(report);
    });
    let rate = |secs: f64| rows as f64 / secs / 1e6;
    println!(
        "  reference (read lines)  {:>6.2} M rows/s  1.00x",
        rate(t_ref)
    );
    println!(
        "  parse                   {:>6.2} M rows/s  {:.2}x of reference",
        rate(t_parse),
        t_ref / t_parse
    );
    println!(
        "  parse + analyse         {:>6.2} M rows/s  {:.2}x of reference  ({:.2} s)",
        rate(t_all),
        t_ref / t_all,
        t_all
    );
    let samples = rows as u64 * 16;
    if let Some(peak) = peak_rss_bytes() {
        println!(
            "  peak RSS {:.0} MB for {:.0} MB of samples ({:.2}x); file {:.0} MB",
            peak as f64 / 1e6,
            samples as f64 / 1e6,
            peak as f64 / samples as f64,
            size as f64 / 1e6
        );
    }
    std::fs::remove_file(&path).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let hours = args
        .iter()
        .position(|a| a == "--hours")
        .and_then(|i| args.get(i + 1))
        .map_or(24.0, |h| h.parse().expect("--hours takes a number"));
    let dir = tempfile::tempdir().unwrap();
    println!("trace throughput (single thread, file in the page cache)");
    run(dir.path(), hours / 4.0);
    run(dir.path(), hours);
}
