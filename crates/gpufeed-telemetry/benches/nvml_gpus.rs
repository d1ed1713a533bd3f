//! CPU per poll of the NVML source on 1 GPU against 8: `gpufeed monitor` on a machine
//! with many GPUs, through the fake NVML (`tests/fake_nvml/fake_nvml.c`, the real NVML ABI
//! through nvml-wrapper; `FAKE_NVML_GPUS` sets how many GPUs it lists: GPU 1 is its
//! consumer card, every other one its busy card).
//!
//! Each run is a child process of this bench (the fake reads `FAKE_NVML_GPUS` once, at
//! `nvmlInit`): a [`Sampler`] over the NVML source on the real clock, a poll every 100 ms
//! for [`RUN_S`] seconds, as `gpufeed monitor` does (utilisation on new driver readings,
//! GPM every 0.5 s, PCIe every 4 s); the figure is the CPU time spent inside `poll` per
//! tick (the sampler's own `CLOCK_THREAD_CPUTIME_ID` account). The parent alternates 1 and
//! 8 GPUs round after round (`GPUFEED_BENCH_ROUNDS`, 3) and prints the median of each, the
//! cost per GPU and the ratio, which should be no worse than linear (8x or less).
//!
//! ```text
//! cargo bench -p gpufeed-telemetry --bench nvml_gpus
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::sampler::{Sampler, TickOutcome};
use gpufeed_telemetry::source::RealClock;

include!("../tests/fake_nvml/builder.rs");

/// Seconds each run samples.
const RUN_S: f64 = 6.0;
/// Poll interval, seconds (`monitor`'s default).
const INTERVAL_S: f64 = 0.1;
/// Marks a child run; its value is the library path.
const CHILD: &str = "GPUFEED_BENCH_NVML_CHILD";

/// The child: samples the fake's GPUs and prints `GPUS US_PER_TICK`.
fn child(lib: &str) {
    let source = NvmlSource::open_with_lib(lib).expect("the fake NVML opens");
    let gpus = gpufeed_telemetry::source::Source::gpus(&source).len();
    let mut sampler = Sampler::new(
        vec![Box::new(source)],
        Box::new(RealClock::start()),
        INTERVAL_S,
    )
    .with_end(RUN_S);
    let mut out = Vec::new();
    while let TickOutcome::Sampled(_) = sampler.tick(&mut out, &|| false).unwrap() {
        out.clear();
    }
    let cost = sampler.cost();
    println!("{gpus} {}", cost.poll_cpu_s / cost.ticks as f64 * 1e6);
}

/// One child run with `gpus` GPUs: µs of CPU per tick.
fn run(lib: &std::path::Path, gpus: u32) -> f64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, lib)
        .env("FAKE_NVML_GPUS", gpus.to_string())
        .env_remove("FAKE_NVML_LOST_GPU")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (n, us) = text.trim().split_once(' ').unwrap();
    assert_eq!(n.parse::<u32>().unwrap(), gpus, "{text}");
    us.parse().unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if let Ok(lib) = std::env::var(CHILD) {
        child(&lib);
        return;
    }
    let rounds: usize = std::env::var("GPUFEED_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    let lib = fake_nvml();
    let (mut one, mut eight) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        one.push(run(lib, 1));
        eight.push(run(lib, 8));
    }
    let (a, b) = (median(one.clone()), median(eight.clone()));
    println!(
        "NVML poll, 1 GPU   {a:>8.1} µs CPU per tick (rounds: {})",
        fmt(&one)
    );
    println!(
        "NVML poll, 8 GPUs  {b:>8.1} µs CPU per tick, {:.1} µs per GPU (rounds: {})",
        b / 8.0,
        fmt(&eight)
    );
    println!(
        "8 GPUs / 1 GPU     {:>8.2}x (linear: 8x); at a poll every {} ms: {:.3} % of a core for 8 GPUs",
        b / a,
        INTERVAL_S * 1e3,
        b * 1e-6 / INTERVAL_S * 100.0
    );
}

fn fmt(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}
