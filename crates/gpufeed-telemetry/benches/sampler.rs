//! The sampler's own cost, per tick, on the sources that need no GPU.
//!
//! - **synthetic**: `SyntheticSource::poll` for one GPU on a virtual clock (the figure the
//!   issue asks for: "sampler CPU time per sample on the synthetic source");
//! - **sampler + collector**: a whole `Sampler::tick` with the synthetic source, and the
//!   records pushed into a `Collector` (what `monitor --speed max` does per tick before
//!   any display);
//! - **/proc host**: `ProcHost::poll` on this machine's `/proc` (CPU per core, PSI,
//!   disks, memory, load), without and with a watched process tree (this process);
//! - **replay**: `ReplaySource` over a gpufeed JSONL recording, records per second.
//!
//! CPU time is the thread's (`CLOCK_THREAD_CPUTIME_ID`); each figure is the median of
//! three runs.
//!
//! ```text
//! cargo bench -p gpufeed-telemetry --bench sampler
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::Cursor;
use std::path::Path;

use gpufeed_telemetry::host::ProcHost;
use gpufeed_telemetry::jsonl::{GpuSample, Header, JsonlWriter, Record};
use gpufeed_telemetry::replay::ReplaySource;
use gpufeed_telemetry::sampler::{Collector, Sampler, TickOutcome};
use gpufeed_telemetry::source::{Source, VirtualClock};
use gpufeed_telemetry::synthetic::SyntheticSource;
use rustix::time::{ClockId, clock_gettime};

fn cpu_s() -> f64 {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Median of three runs of `f`, which returns how many units it did; CPU s per unit.
fn median_per_unit(mut f: impl FnMut() -> usize) -> f64 {
    let mut v: Vec<f64> = (0..3)
        .map(|_| {
            let start = cpu_s();
            let n = f();
            (cpu_s() - start) / n as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[1]
}

fn main() {
    const TICKS: usize = 1_000_000;
    let synthetic = median_per_unit(|| {
        let mut s = SyntheticSource::parse("oscillating").unwrap();
        let mut out = Vec::with_capacity(1);
        for i in 0..TICKS {
            out.clear();
            s.poll(i as f64 * 0.1, &mut out).unwrap();
        }
        TICKS
    });
    println!(
        "synthetic poll, 1 GPU          {:>8.3} µs per sample",
        synthetic * 1e6
    );

    let sampler = median_per_unit(|| {
        let s = SyntheticSource::parse("oscillating").unwrap();
        let mut sampler = Sampler::new(vec![Box::new(s)], Box::new(VirtualClock::default()), 0.1)
            .with_end(TICKS as f64 * 0.1);
        let mut c = Collector::new();
        let mut out = Vec::new();
        let mut n = 0;
        while let TickOutcome::Sampled(_) = sampler.tick(&mut out, &|| false).unwrap() {
            c.extend(&out);
            out.clear();
            n += 1;
        }
        n
    });
    println!(
        "sampler tick + collector       {:>8.3} µs per tick",
        sampler * 1e6
    );

    if Path::new("/proc/stat").exists() {
        for (what, watch) in [("/proc host", false), ("/proc host + tree", true)] {
            let per = median_per_unit(|| {
                let mut h = ProcHost::new();
                if watch {
                    h = h.watch(std::process::id());
                }
                let mut out = Vec::new();
                // Times a second apart, so the tree is rescanned every poll: the worst
                // case (live runs rescan once a second).
                for i in 0..2000 {
                    h.poll(f64::from(i), &mut out).unwrap();
                }
                2000
            });
            println!("{what:<30} {:>8.1} µs per poll", per * 1e6);
        }
    }

    let mut w = JsonlWriter::new(
        Vec::new(),
        &Header::new("2026-11-21T10:00:00Z", 100, "bench"),
    )
    .unwrap();
    for i in 0..TICKS {
        w.write(&Record::Gpu(GpuSample {
            util: Some((i % 50) as f64),
            power_w: Some(200.0),
            ..GpuSample::new(i as f64 * 0.1, 0)
        }))
        .unwrap();
    }
    let bytes = w.into_inner();
    let replay = median_per_unit(|| {
        let mut r = ReplaySource::from_reader(Cursor::new(bytes.clone()), Path::new("bench.jsonl"))
            .unwrap();
        let mut out = Vec::new();
        r.poll(f64::INFINITY, &mut out).unwrap();
        out.len()
    });
    println!(
        "replay (JSONL)                 {:>8.3} µs per record ({:.1} M records/s)",
        replay * 1e6,
        1e-6 / replay
    );
}
