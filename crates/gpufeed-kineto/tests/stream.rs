//! A trace streamed from its events on disk gives the summary of the trace read into
//! memory, field for field: on every profiler trace of `shared/data` (beside the repository,
//! as CI has it) and on every generated case, with HTA's window and without, with HTA's
//! rounding and without, and with the GPU rows sorted in memory or merged from runs on disk.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_kineto::job::summarize;
use gpufeed_kineto::report::trace_files;
use gpufeed_kineto::stream::summarize_spilled_runs;
use gpufeed_kineto::synth::{Case, generate};
use gpufeed_kineto::{Options, read};

fn shared(sub: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(sub);
    assert!(
        p.is_dir(),
        "`{}` is missing\n\nhint: these tests read the shared data set; check out shared/ \
         beside the repository (CI does)",
        p.display()
    );
    p
}

/// Every profiler trace file of the shared data.
fn shared_traces() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["kineto", "real-world"] {
        let mut dirs: Vec<PathBuf> = fs_err::read_dir(shared(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            if let Ok(files) = trace_files(&d) {
                out.extend(files);
            }
        }
    }
    out
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
            for &rows in run_rows {
                let spilled = read::spill_path_counted(path, None).unwrap();
                let streamed = summarize_spilled_runs(spilled, 3, opts, alone, rows).unwrap();
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
                         rows):\n{}",
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
    let cases = [
        Case::compute_bound(),
        Case::input_bound(),
        Case::transfer_bound(),
        Case::sync_bound(),
        Case::launch_bound(),
        Case::host_bound(),
        Case::oscillating(),
        Case::straggler(),
        Case::periodic_input_stall(),
        Case::allreduce_straggler(),
        Case::allreduce_straggler_steady(),
        Case::input_bound_after_warmup(),
    ];
    for (i, case) in cases.iter().enumerate() {
        for rank in 0..2 {
            let path = dir.path().join(format!("case{i}_rank{rank}.json"));
            fs_err::write(&path, generate(case, rank)).unwrap();
            same(&path, &[usize::MAX, 7]);
        }
    }
}
