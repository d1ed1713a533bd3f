//! TensorFlow profiler traces (the trace viewer's JSON, `*.trace.json.gz`) on the rows of
//! a PyTorch trace.
//!
//! TensorFlow writes no categories: a process named `/device:GPU:N` holds the GPU, one
//! thread per stream (`Stream #14(Compute)`), beside derived lines (`TensorFlow Ops`,
//! `XLA Ops`, `Steps`) that repeat the same time and are left out. Host processes
//! (`/host:CPU`) hold the launches (`cuLaunchKernel`, `cudaLaunchKernel`) with the same
//! `args.correlation_id` as their kernel, and the step markers (`args.step_num`, written by
//! `tf.profiler.experimental.Trace("train", step_num=N)` and by Keras' `fit`). [`lower`]
//! gives every GPU row a category (`kernel`, or `gpu_memcpy` for `Memcpy*`) and its stream
//! number, every host row `cpu_op`, so HTA's rules apply unchanged; TensorFlow has no
//! ProfilerStep, so no window is applied.

use crate::read::{NO_CAT, RawTrace};

/// Whether the trace has TensorFlow's process names.
#[must_use]
pub fn is_tensorflow(t: &RawTrace) -> bool {
    t.process_names
        .iter()
        .any(|p| p.name.contains("/device:GPU") || p.name.contains("/host:CPU"))
}

/// The stream number of a GPU thread name: `Stream #14(Compute)` → 14.
fn stream_of(thread: &str) -> Option<i64> {
    let rest = thread.strip_prefix("Stream #")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Gives TensorFlow's rows the categories, streams and correlations of HTA's model.
pub fn lower(t: &mut RawTrace) {
    let gpu_pids: Vec<u32> = t
        .process_names
        .iter()
        .filter(|p| p.name.contains("/device:GPU"))
        .map(|p| p.pid)
        .collect();
    let streams: Vec<((u32, u32), i64)> = t
        .thread_names
        .iter()
        .filter_map(|m| Some(((m.pid, m.tid?), stream_of(&m.name)?)))
        .collect();
    let kernel = t.symbols.intern("kernel");
    let memcpy = t.symbols.intern("gpu_memcpy");
    let cpu = t.symbols.intern("cpu_op");
    // Kernels without a launch link still count as GPU rows (HTA needs a correlation):
    // they get ids above every real one, so they match no launch.
    let mut spare = t.events.iter().map(|e| e.corr).max().unwrap_or(0).max(0) + 1;
    for e in &mut t.events {
        if gpu_pids.contains(&e.pid) {
            match streams.iter().find(|(k, _)| *k == (e.pid, e.tid)) {
                Some(&(_, s)) => {
                    e.stream = s;
                    e.cat = if t.symbols.name(e.name).starts_with("Memcpy") {
                        memcpy
                    } else {
                        kernel
                    };
                    if e.corr < 0 {
                        e.corr = spare;
                        spare += 1;
                    }
                }
                None => e.cat = NO_CAT,
            }
        } else {
            e.cat = cpu;
            e.stream = -1;
        }
    }
}

/// The steps of a TensorFlow trace: host events with `args.step_num`, `(N, ts, end)`,
/// the first marker of each N (nested markers of the same step are one step).
#[must_use]
pub fn steps(t: &RawTrace) -> Vec<(i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64)> = Vec::new();
    for &(n, i) in &t.step_marks {
        let Some(e) = t.events.get(i) else { continue };
        if e.ts.is_nan() {
            continue;
        }
        if !out.iter().any(|s| s.0 == n) {
            out.push((n, e.ts.ceil() as i64, (e.ts + e.dur).floor() as i64));
        }
    }
    out.sort_by_key(|s| s.1);
    out
}
