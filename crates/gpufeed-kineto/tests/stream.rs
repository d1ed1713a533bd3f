//! A trace streamed from its events on disk gives the summary of the trace read into
//! memory, field for field: on every profiler trace of `shared/data` (beside the repository,
//! as CI has it) and on every generated case, PyTorch's and TensorFlow's, with HTA's window and without, with HTA's
//! rounding and without, and with the GPU rows sorted in memory or merged from runs on disk.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_kineto::job::summarize;
use gpufeed_kineto::stream::{Limits, summarize_spilled_with};
use gpufeed_kineto::synth::{Case, generate};
use gpufeed_kineto::{Options, read};

mod common;

/// Every profiler trace file of the shared data.
fn shared_traces() -> Vec<PathBuf> {
    common::profiler_folders()
        .into_iter()
        .flat_map(|(_, files)| files)
        .collect()
}

/// Asserts that the streamed summaries of `path` equal the in-memory ones.
fn same(path: &Path, run_rows: &[usize]) {
    for no_rounding in [false, true] {
        let opts = Options {
            no_rounding,
            ..Options::default()
        };
        for alone in [true, false] {
            let whole = summarize(read::read_path(path).unwrap(), 3, opts, alone);
            // Runs of `rows` with each window's launches in a map, and joined on disk.
            let limits = run_rows.iter().flat_map(|&run_rows| {
                [u64::MAX, 0].map(|map_bytes| Limits {
                    run_rows,
                    map_bytes,
                })
            });
            for limits in limits {
                let (rows, map) = (limits.run_rows, limits.map_bytes);
                let spilled = read::spill_path_counted(path, None).unwrap();
                let streamed = summarize_spilled_with(spilled, 3, opts, alone, limits).unwrap();
                if streamed != whole {
                    // The first lines that differ, in the JSON both give.
                    let a = serde_json::to_string_pretty(&streamed).unwrap();
                    let b = serde_json::to_string_pretty(&whole).unwrap();
                    let diff: Vec<String> = a
                        .lines()
                        .zip(b.lines())
                        .filter(|(x, y)| x != y)
                        .take(8)
                        .map(|(x, y)| format!("streamed {x}\n  memory {y}"))
                        .collect();
                    panic!(
                        "`{}` (alone: {alone}, no_rounding: {no_rounding}, runs of {rows} \
                         rows, a map of {map} bytes):\n{}",
                        path.display(),
                        diff.join("\n")
                    );
                }
            }
        }
    }
}

#[test]
fn every_shared_trace_streams_to_the_in_memory_summary() {
    let traces = shared_traces();
    assert!(traces.len() >= 12, "{traces:?}");
    for t in &traces {
        same(t, &[usize::MAX, 1000]);
    }
}

#[test]
fn every_generated_case_streams_to_the_in_memory_summary() {
    let dir = tempfile::tempdir().unwrap();
    // Every case in PyTorch's format and in TensorFlow's trace viewer JSON (lowered onto
    // HTA's rows as the events are read back).
    let cases: Vec<Case> = Case::all()
        .into_iter()
        .chain(Case::more())
        .flat_map(|c| [c.clone(), c.tensorflow()])
        .collect();
    for (i, case) in cases.iter().enumerate() {
        for rank in 0..2 {
            let path = dir.path().join(format!("case{i}_rank{rank}.json"));
            fs_err::write(&path, generate(case, rank)).unwrap();
            same(&path, &[usize::MAX, 7]);
        }
    }
}

/// A generated trace changed through its JSON: `f` edits the event list.
fn edited(case: &Case, f: impl FnOnce(&mut Vec<serde_json::Value>)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&generate(case, 0)).unwrap();
    f(v["traceEvents"].as_array_mut().unwrap());
    serde_json::to_vec(&v).unwrap()
}

/// Every GPU row copied onto a second GPU (pid 1), each copy half as long and a little
/// later: a rank of two GPUs, each with its figures, the busier setting the pace.
fn second_gpu(events: &mut Vec<serde_json::Value>) {
    let copies: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e["args"]["stream"].is_i64())
        .map(|e| {
            let mut c = e.clone();
            c["pid"] = 1.into();
            c["ts"] = (e["ts"].as_f64().unwrap() + 3.0).into();
            c["dur"] = (e["dur"].as_f64().unwrap() / 2.0).floor().into();
            c
        })
        .collect();
    events.extend(copies);
}

#[test]
fn unusual_traces_stream_to_the_in_memory_summary() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: Vec<u8>| {
        let p = dir.path().join(name);
        fs_err::write(&p, bytes).unwrap();
        p
    };
    let two_gpus = write("two_gpus.json", edited(&Case::input_bound(), second_gpu));
    let whole = summarize(
        read::read_path(&two_gpus).unwrap(),
        0,
        Options::default(),
        true,
    );
    assert_eq!(whole.report.devices.len(), 2, "the case holds two GPUs");
    same(&two_gpus, &[usize::MAX, 5]);
    // The same in TensorFlow's trace viewer JSON: a second `/device:GPU:1` process with its
    // stream's thread name, each row copied half as long.
    let tf_two = write(
        "tf_two_gpus.json",
        edited(&Case::input_bound().tensorflow(), |events| {
            let copies: Vec<serde_json::Value> = events
                .iter()
                .filter(|e| e["pid"] == 1)
                .map(|e| {
                    let mut c = e.clone();
                    c["pid"] = 2.into();
                    if e["ph"] == "M" {
                        let name = e["args"]["name"]
                            .as_str()
                            .unwrap()
                            .replace("GPU:0", "GPU:1");
                        c["args"]["name"] = name.into();
                    } else {
                        c["ts"] = (e["ts"].as_f64().unwrap() + 3.0).into();
                        c["dur"] = (e["dur"].as_f64().unwrap() / 2.0).into();
                    }
                    c
                })
                .collect();
            events.extend(copies);
        }),
    );
    let whole = summarize(
        read::read_path(&tf_two).unwrap(),
        0,
        Options::default(),
        true,
    );
    assert_eq!(
        whole.report.devices.len(),
        2,
        "the TensorFlow case holds two GPUs"
    );
    same(&tf_two, &[usize::MAX, 5]);
    // Events in reverse file order: every stream out of order, ties in file order reversed.
    let reversed = write(
        "reversed.json",
        edited(&Case::sync_bound(), |e| e.reverse()),
    );
    same(&reversed, &[usize::MAX, 3]);
    // Fractional times, so that HTA's rounding gives rows that end 1 µs before they start,
    // and rows of the same start with other ends.
    let rounded = write(
        "rounded.json",
        edited(&Case::launch_bound(), |events| {
            for (i, e) in events.iter_mut().enumerate() {
                if e["args"]["stream"].is_i64() && i % 3 == 0 {
                    e["ts"] = (e["ts"].as_f64().unwrap() + 0.6).into();
                    e["dur"] = 0.3.into();
                }
            }
        }),
    );
    same(&rounded, &[usize::MAX, 4]);
    // Rows of the same start on one stream, the longer first in the file: HTA takes a
    // stream's rows by start, in file order among equal starts; merging takes them by end.
    let ties = write(
        "ties.json",
        edited(&Case::input_bound(), |events| {
            let mut out = Vec::with_capacity(events.len() * 2);
            for (i, e) in events.drain(..).enumerate() {
                if e["args"]["stream"].is_i64() && i % 5 == 0 {
                    let mut longer = e.clone();
                    longer["dur"] = (e["dur"].as_f64().unwrap() * 2.0 + 1.0).into();
                    out.push(longer);
                }
                out.push(e);
            }
            *events = out;
        }),
    );
    same(&ties, &[usize::MAX, 6]);
    // Two host rows of one correlation, the second after the last step and last in the
    // file: HTA's window links the kernel to the first, no window to the second.
    let relaunched = write(
        "relaunched.json",
        edited(&Case::sync_bound(), |events| {
            let end = events
                .iter()
                .filter_map(|e| Some(e["ts"].as_f64()? + e["dur"].as_f64()?))
                .fold(0.0, f64::max);
            let again: Vec<serde_json::Value> = events
                .iter()
                .filter(|e| e["name"] == "cudaLaunchKernel")
                .step_by(4)
                .map(|e| {
                    let mut c = e.clone();
                    c["ts"] = (end + 10.0).into();
                    c
                })
                .collect();
            assert!(!again.is_empty(), "the case launches kernels");
            events.extend(again);
        }),
    );
    same(&relaunched, &[usize::MAX, 5]);
    // A negative duration: read back into memory, the same summary.
    let negative = write(
        "negative.json",
        edited(&Case::compute_bound(), |events| {
            let k = events
                .iter_mut()
                .find(|e| e["args"]["stream"].is_i64())
                .unwrap();
            k["dur"] = (-50).into();
        }),
    );
    same(&negative, &[usize::MAX]);
}
