//! A job read a file at a time, kept as summaries, in parallel or fanned out over tasks,
//! gives the report of every trace read into memory at once: on every profiler trace of
//! `shared/data` (beside the repository, as CI has it) and on generated jobs.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_kineto::job::{MergeError, Part, Plan, Progress, analyze_job, merge, read_part};
use gpufeed_kineto::report::trace_files;
use gpufeed_kineto::synth::{Case, generate};
use gpufeed_kineto::{Options, Report, analyze, read};

mod common;

/// Every profiler trace folder of the shared data, and each trace file in it.
fn profiler_inputs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (d, files) in common::profiler_folders() {
        if files.len() > 1 {
            out.extend(files);
        }
        out.push(d);
    }
    out
}

/// The report of every file read into memory first, as `trace` did before job reading.
fn in_memory(path: &Path, opts: Options) -> Report {
    let traces = trace_files(path)
        .unwrap()
        .iter()
        .map(|f| read::read_path(f).unwrap())
        .collect();
    analyze(path, traces, opts)
}

/// `count` tasks' parts, through their JSON documents as the tasks write them.
fn parts(path: &Path, opts: Options, count: u32) -> Vec<Part> {
    (0..count)
        .rev()
        .map(|i| {
            let part = read_part(path, opts, &Plan::default(), (i, count)).unwrap();
            serde_json::from_str(&serde_json::to_string(&part).unwrap()).unwrap()
        })
        .collect()
}

/// A report without what a folder adds beside the traces (TF Profiler's overview, the
/// files left out), which the in-memory entry point does not read.
fn traces_only(mut r: Report) -> Report {
    r.tf_profiler = None;
    r.tf_profiler_agreement = None;
    r.warnings.retain(|w| !w.contains("left out, as no trace"));
    r
}

#[test]
fn a_job_read_file_by_file_equals_every_trace_read_at_once_on_the_shared_data() {
    let inputs = profiler_inputs();
    assert!(inputs.len() >= 13, "{inputs:?}");
    let opts = Options::default();
    for path in &inputs {
        let one = analyze_job(
            path,
            opts,
            &Plan {
                jobs: 1,
                ..Plan::default()
            },
        )
        .unwrap();
        let progress = Progress::default();
        let two = analyze_job(
            path,
            opts,
            &Plan {
                jobs: 2,
                progress: Some(&progress),
            },
        )
        .unwrap();
        assert_eq!(one, two, "{}: 1 job against 2", path.display());
        assert_eq!(one.warnings, two.warnings, "{}", path.display());
        let on_disk: u64 = trace_files(path)
            .unwrap()
            .iter()
            .map(|f| fs_err::metadata(f).unwrap().len())
            .sum();
        let read = progress
            .bytes_read
            .load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(read, on_disk, "{}: bytes counted", path.display());
        let memory = in_memory(path, opts);
        assert_eq!(traces_only(one.clone()), memory, "{}", path.display());
        assert_eq!(
            traces_only(one.clone()).warnings,
            memory.warnings,
            "{}",
            path.display()
        );
        // Through three tasks' part documents.
        let merged = merge(parts(path, opts, 3)).unwrap();
        assert_eq!(merged, one, "{}: merged from 3 parts", path.display());
        assert_eq!(merged.warnings, one.warnings, "{}", path.display());
    }
}

/// An 8-rank job with a straggler, as files in a folder.
fn job(dir: &Path, case: &Case) {
    for r in 0..case.ranks {
        fs_err::write(
            dir.join(format!("rank{r}.pt.trace.json")),
            generate(case, r),
        )
        .unwrap();
    }
}

fn eight_ranks() -> Case {
    Case {
        ranks: 8,
        slow_compute: Some((5, 2.2)),
        ..Case::allreduce_straggler_steady()
    }
}

#[test]
fn shards_merged_equal_the_single_run_on_a_generated_eight_rank_job() {
    let dir = tempfile::tempdir().unwrap();
    job(dir.path(), &eight_ranks());
    let opts = Options::default();
    let single = analyze_job(dir.path(), opts, &Plan::default()).unwrap();
    assert_eq!(single.ranks.len(), 8);
    assert_eq!(single.straggler.as_ref().map(|s| s.rank), Some(5));
    for count in [1, 2, 3, 8, 11] {
        let merged = merge(parts(dir.path(), opts, count)).unwrap();
        assert_eq!(merged, single, "{count} tasks");
    }
    let text = |r: &Report| serde_json::to_string(r).unwrap();
    assert_eq!(
        text(&merge(parts(dir.path(), opts, 4)).unwrap()),
        text(&single)
    );
}

#[test]
fn a_merge_names_the_missing_repeated_or_foreign_parts() {
    let dir = tempfile::tempdir().unwrap();
    job(dir.path(), &eight_ranks());
    let opts = Options::default();
    let mut four = parts(dir.path(), opts, 4);
    let third = four.remove(1);
    let e = merge(four.clone()).unwrap_err().to_string();
    assert!(e.contains("task 2 is missing"), "{e}");
    four.push(third.clone());
    four.push(third);
    let e = merge(four.clone()).unwrap_err().to_string();
    assert!(e.contains("task 2 is given twice"), "{e}");
    let mut other = parts(dir.path(), opts, 4);
    other[0].files.pop();
    let e = merge(other).unwrap_err().to_string();
    assert!(e.contains("the traces differ"), "{e}");
    let mut mixed = parts(dir.path(), opts, 4);
    mixed[1] = read_part(dir.path(), opts, &Plan::default(), (1, 3)).unwrap();
    assert!(matches!(
        merge(mixed).unwrap_err(),
        MergeError::Mismatch {
            what: "the task counts",
            ..
        }
    ));
    assert!(matches!(merge(Vec::new()), Err(MergeError::Empty)));
}

/// A rank of one step beside ranks of many: the job has two step names, so HTA windows
/// every rank, the one-step rank too, which only the job can know, and a task that reads
/// that rank alone must carry both windows.
#[test]
fn the_window_is_the_jobs_even_where_a_task_holds_a_rank_of_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let many = Case {
        ranks: 2,
        ..Case::compute_bound()
    };
    let one = Case {
        steps: 1,
        ..many.clone()
    };
    fs_err::write(dir.path().join("a.json"), generate(&many, 0)).unwrap();
    fs_err::write(dir.path().join("b.json"), generate(&one, 1)).unwrap();
    let opts = Options::default();
    let single = analyze_job(dir.path(), opts, &Plan::default()).unwrap();
    assert!(single.ranks.iter().all(|r| r.window.applied));
    assert_eq!(single, traces_only(in_memory(dir.path(), opts)));
    assert_eq!(merge(parts(dir.path(), opts, 2)).unwrap(), single);
}

#[test]
fn the_first_file_that_cannot_be_read_is_the_error_whatever_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    job(dir.path(), &eight_ranks());
    fs_err::write(
        dir.path().join("rank3.pt.trace.json"),
        b"{\"traceEvents\": 7}",
    )
    .unwrap();
    fs_err::write(dir.path().join("rank6.pt.trace.json"), b"[{\"ph\": 1}]").unwrap();
    for jobs in [1, 2, 4] {
        let e = analyze_job(
            dir.path(),
            Options::default(),
            &Plan {
                jobs,
                ..Plan::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rank3.pt.trace.json"), "{jobs} jobs: {e}");
    }
}
