//! A job's traces, one rank at a time: each file is read with its events spilled to a
//! temporary file, summarised from there ([`crate::stream`]: memory bounded by the trace's
//! steps and streams, not its events) and dropped, so that memory holds at most `jobs` such
//! analyses, whatever the number of ranks; the job's report is built from the summaries
//! alone ([`crate::report::finish`]).
//!
//! - [`summarize`]: one file → its [`FileSummary`] (the rank's report, and what choosing
//!   among files and HTA's window need).
//! - [`analyze_job`]: a file or folder, read `jobs` files at a time, with a [`Progress`] a
//!   caller's progress bar polls.
//! - [`read_part`] and [`merge`]: the fan-out over a scheduler. Each task of an array job
//!   summarises its share of the files into a [`Part`] (a contract document,
//!   `profiler-part`); `merge` gives the job's report from the parts, equal to the one
//!   [`analyze_job`] gives from the whole folder.
//!
//! ```
//! use gpufeed_kineto::job::{Plan, analyze_job, merge, read_part};
//! use gpufeed_kineto::synth::{Case, generate};
//! let dir = tempfile::tempdir().unwrap();
//! let case = Case::straggler();
//! for r in 0..case.ranks {
//!     fs_err::write(dir.path().join(format!("rank{r}.json")), generate(&case, r)).unwrap();
//! }
//! let opts = gpufeed_kineto::Options::default();
//! let whole = analyze_job(dir.path(), opts, &Plan::default()).unwrap();
//! let parts = (0..3)
//!     .map(|i| read_part(dir.path(), opts, &Plan::default(), (i, 3)).unwrap())
//!     .collect();
//! let merged = merge(parts).unwrap();
//! assert_eq!(merged, whole);
//! assert_eq!(merged.straggler.unwrap().rank, 2);
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use gpufeed_contract::{Document, TraceFormat};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hta;
use crate::read::{self, RawTrace};
use crate::report::{self, Options, RankReport, Report};
use crate::tf;

/// How much of a run a file holds, to choose among the files of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Fullness {
    /// GPU events (kernels, copies, sets).
    pub gpu_events: usize,
    /// Steps (`ProfilerStep#N` events, or TensorFlow's step marks).
    pub steps: usize,
    /// Events with a duration.
    pub events: usize,
}

impl Fullness {
    /// The order of choice: GPU events, then steps, then events.
    #[must_use]
    pub fn key(self) -> (usize, usize, usize) {
        (self.gpu_events, self.steps, self.events)
    }
}

/// What one trace file gives the job's report: its rank's report and what choosing among
/// the files of a rank, and HTA's window over the job, need. A few kilobytes per step,
/// whatever the trace's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileSummary {
    /// The file's place in the folder's order (sorted names).
    pub index: usize,
    /// The file.
    pub file: String,
    /// Its rank (`distributedInfo.rank`, else 0).
    pub rank: u32,
    /// The profiler that wrote it (the one forced, if any).
    #[schemars(schema_with = "gpufeed_contract::format::profiler_format_schema")]
    pub format: TraceFormat,
    /// How much of the run it holds.
    pub fullness: Fullness,
    /// Up to two of its `ProfilerStep` names: HTA windows a job's ranks where the job has
    /// two or more.
    pub step_names: Vec<String>,
    /// The warning for a file cut off mid-write.
    pub truncated: Option<String>,
    /// The rank's report, in HTA's window when the file alone has two step names.
    pub report: RankReport,
    /// Where the file has fewer than two step names and other files beside it: the report
    /// in the other window, for the job to choose when it knows all the step names.
    pub other_window: Option<Box<RankReport>>,
}

/// Summarises one trace read into memory (the route of xplane files and of
/// [`crate::analyze`]; [`crate::stream`] gives the same from disk): `index` is its place in
/// the folder, `alone` whether it is the job's only file (its own step names then decide
/// HTA's window).
#[must_use]
pub fn summarize(mut t: RawTrace, index: usize, opts: Options, alone: bool) -> FileSummary {
    let format = format_of(&t, opts);
    if format == TraceFormat::Tensorflow {
        tf::lower(&mut t);
    }
    let truncated = truncation_warning(&t);
    let step_names = step_names(&t);
    let rank = t.rank.unwrap_or(0);
    let window = format == TraceFormat::Pytorch && step_names.len() >= 2;
    let fullness = report::fullness(&t);
    let counts = report::Counts::of(&t);
    let mut rows = hta::unlinked_rows(&t, !opts.no_rounding);
    if format == TraceFormat::Pytorch {
        // The rows hold what the analysis reads from here on, but for the steps' GPU-track
        // copies: the events go before the launch links' map is built (the events are a
        // third of the memory of a large trace's analysis). TensorFlow's steps are read
        // from the events (`tf::steps`).
        let gpu_cat = t.symbols.get(crate::steps::GPU_ANNOTATION_CAT);
        t.events.retain(|e| Some(e.cat) == gpu_cat);
        t.events.shrink_to_fit();
    }
    hta::link(&mut rows);
    let (report, other_window) = if window {
        let rows = hta::windowed(rows, &t);
        (report::rank_of_rows(rank, &t, &rows, format, counts), None)
    } else {
        let report = report::rank_of_rows(rank, &t, &rows, format, counts);
        let other = (!alone && format == TraceFormat::Pytorch).then(|| {
            let rows = hta::windowed(rows, &t);
            Box::new(report::rank_of_rows(rank, &t, &rows, format, counts))
        });
        (report, other)
    };
    FileSummary {
        index,
        file: t.path.display().to_string(),
        rank,
        format,
        fullness,
        step_names,
        truncated,
        report,
        other_window,
    }
}

/// The profiler that wrote `t`: the one forced, else TensorFlow's by its process names,
/// else PyTorch's.
pub(crate) fn format_of(t: &RawTrace, opts: Options) -> TraceFormat {
    opts.format.filter(|f| f.is_profiler()).unwrap_or({
        if tf::is_tensorflow(t) {
            TraceFormat::Tensorflow
        } else {
            TraceFormat::Pytorch
        }
    })
}

/// The warning for a trace cut off mid-write, if it is.
pub(crate) fn truncation_warning(t: &RawTrace) -> Option<String> {
    t.truncated_at.map(|at| {
        let (of, kept) = if t.from_xplane {
            ("the file", "of the whole planes before it")
        } else {
            ("its JSON", "before it")
        };
        format!(
            "`{}` stops mid-write at byte {at} of {of} (was the job killed while the profiler \
             wrote?): analysed the {} event(s) {kept}",
            t.path.display(),
            t.elements
        )
    })
}

/// Up to two of a trace's `ProfilerStep` names.
pub(crate) fn step_names(t: &RawTrace) -> Vec<String> {
    t.symbols
        .iter()
        .filter(|(_, s)| s.contains("ProfilerStep"))
        .take(2)
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// What a long read has done, for a progress bar to poll from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes read from the files (compressed, where they are).
    pub bytes_read: Arc<AtomicU64>,
    /// Bytes of all the files to read, set when the read starts.
    pub bytes_total: AtomicU64,
    /// Files summarised.
    pub files_done: AtomicUsize,
    /// Files to read, set when the read starts.
    pub files_total: AtomicUsize,
}

/// How a job's files are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan<'a> {
    /// Files read at once; 0: one per core. Memory is at most this many traces being read.
    pub jobs: usize,
    /// Where to count what was read.
    pub progress: Option<&'a Progress>,
}

impl Plan<'_> {
    fn jobs_for(&self, files: usize) -> usize {
        let jobs = if self.jobs == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            self.jobs
        };
        jobs.clamp(1, files.max(1))
    }
}

/// Reads and summarises `files` (each with its index in the folder), `plan.jobs` at a time.
/// The first file in order that cannot be read is the error, as a read one at a time gives.
fn summaries(
    files: &[(usize, PathBuf)],
    opts: Options,
    plan: &Plan<'_>,
    alone: bool,
) -> Result<Vec<FileSummary>> {
    if let Some(p) = plan.progress {
        let total = files
            .iter()
            .map(|(_, f)| fs_err::metadata(f).map_or(0, |m| m.len()))
            .sum();
        p.bytes_total.store(total, Ordering::Relaxed);
        p.files_total.store(files.len(), Ordering::Relaxed);
    }
    let counter = plan.progress.map(|p| Arc::clone(&p.bytes_read));
    in_order(files.len(), plan.jobs_for(files.len()), |i| {
        let (index, path) = &files[i];
        // Each file's events wait on disk while it is analysed (`crate::stream`): memory is
        // bounded by its steps and streams, not by its events.
        let r = read::spill_path_counted(path, counter.clone())
            .and_then(|t| crate::stream::summarize_spilled(t, *index, opts, alone));
        if let Some(p) = plan.progress {
            p.files_done.fetch_add(1, Ordering::Relaxed);
        }
        r
    })
}

/// `f(0)`, ..., `f(n - 1)` on `jobs` threads, each taking the next index; the results in
/// order, or the error of the first index that failed, as a loop would give. Once one
/// fails, no thread takes a new index: every index before it is taken already.
///
/// # Errors
///
/// The first error, by index.
pub fn in_order<T: Send, E: Send>(
    n: usize,
    jobs: usize,
    f: impl Fn(usize) -> std::result::Result<T, E> + Sync,
) -> std::result::Result<Vec<T>, E> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<std::result::Result<T, E>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    let r = f(i);
                    if r.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    let mut out = Vec::with_capacity(n);
    for slot in slots {
        match slot.into_inner().ok().flatten() {
            Some(r) => out.push(r?),
            // Not taken: an index before it failed, and that error came first.
            None => break,
        }
    }
    Ok(out)
}

/// Reads and analyses a file or folder of traces, `plan.jobs` files at a time, keeping
/// only each file's summary: the report [`crate::analyze_path`] gives.
pub fn analyze_job(path: &Path, opts: Options, plan: &Plan<'_>) -> Result<Report> {
    let (files, skipped) = match report::folder_files(path, opts.classified)? {
        report::Found::Files(files, skipped) => (files, skipped),
        report::Found::Done(report) => return Ok(*report),
    };
    let alone = files.len() == 1;
    let indexed: Vec<(usize, PathBuf)> = files.iter().cloned().enumerate().collect();
    let summaries = summaries(&indexed, opts, plan, alone)?;
    let overview = if path.is_dir() {
        report::overview_beside(path)
    } else {
        None
    };
    Ok(report::finish_folder(
        path, summaries, opts, &files, &skipped, overview,
    ))
}

/// The `profiler-part` document: the summaries of one task's share of a job's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Part {
    /// [`Part::VERSION`].
    pub schema_version: u32,
    /// Always `profiler-part`.
    pub kind: PartKind,
    /// The file or folder the job's traces are in, as given.
    pub path: String,
    /// This task's share: the files whose index is `index` mod `count`.
    pub shard: Shard,
    /// The job's trace files, every task's, in order.
    pub files: Vec<String>,
    /// The files of the folder left out as no trace.
    pub skipped: Vec<String>,
    /// The profiler forced (`--kind`), if any.
    #[schemars(with = "Option<String>")]
    pub format: Option<TraceFormat>,
    /// Whether HTA's ns rounding was off.
    pub no_rounding: bool,
    /// TF Profiler's verdict from an overview page in the folder (task 0 reads it).
    pub tf_profiler: Option<tf::TfProfilerVerdict>,
    /// The summaries of this task's files.
    pub summaries: Vec<FileSummary>,
}

/// The `kind` of a [`Part`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PartKind {
    /// A part of a profiler job.
    #[default]
    ProfilerPart,
}

/// A task's share of the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    /// This task, `0..count`.
    pub index: u32,
    /// The tasks.
    pub count: u32,
}

impl Document for Part {
    const NAME: &'static str = "profiler-part";
    const VERSION: u32 = 2;
    const WRITER: &'static str = "gpufeed trace DIR --shard I/N --out PART.json";
}

/// Summarises task `index` of `count`'s share of the files of `path` (those whose index
/// in the folder's order is `index` mod `count`): a part for [`merge`].
pub fn read_part(
    path: &Path,
    opts: Options,
    plan: &Plan<'_>,
    (index, count): (u32, u32),
) -> Result<Part> {
    let (files, skipped) = match report::folder_files(path, opts.classified)? {
        report::Found::Files(files, skipped) => (files, skipped),
        report::Found::Done(_) => {
            return Err(Error::EmptyFolder {
                path: path.to_owned(),
            });
        }
    };
    let alone = files.len() == 1;
    let mine: Vec<(usize, PathBuf)> = files
        .iter()
        .cloned()
        .enumerate()
        .filter(|(i, _)| *i as u64 % u64::from(count.max(1)) == u64::from(index))
        .collect();
    let summaries = summaries(&mine, opts, plan, alone)?;
    let tf_profiler = (index == 0 && path.is_dir())
        .then(|| report::overview_beside(path))
        .flatten();
    let names = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect();
    Ok(Part {
        schema_version: Part::VERSION,
        kind: PartKind::ProfilerPart,
        path: path.display().to_string(),
        shard: Shard { index, count },
        files: names(&files),
        skipped: names(&skipped),
        format: opts.format,
        no_rounding: opts.no_rounding,
        tf_profiler,
        summaries,
    })
}

/// Why parts do not make one job.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No part given.
    #[error("no part to merge")]
    Empty,
    /// A part of another job, or read with other options.
    #[error(
        "part {index}/{count} is not of the same job as part {first_index}/{first_count}: \
         {what} differ\n\nhint: merge the parts of one `gpufeed trace DIR --shard I/N` run, \
         each task given the same folder and options"
    )]
    Mismatch {
        /// The part.
        index: u32,
        /// Its count.
        count: u32,
        /// The first part's index.
        first_index: u32,
        /// The first part's count.
        first_count: u32,
        /// What differs.
        what: &'static str,
    },
    /// Tasks missing, or given twice.
    #[error(
        "the job has {count} task(s), and {problem}\n\nhint: wait for every task of the array \
         to finish (or run the missing ones again), then merge each part once"
    )]
    Tasks {
        /// Tasks in the job.
        count: u32,
        /// Which are missing or repeated.
        problem: String,
    },
}

/// The job's report from the parts of all its tasks: equal to [`analyze_job`] on the
/// whole folder. Every task must be there once, each of the same job.
pub fn merge(parts: Vec<Part>) -> std::result::Result<Report, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    let (count, first_index) = (first.shard.count, first.shard.index);
    for p in &parts {
        let what = if p.shard.count != count {
            Some("the task counts")
        } else if p.path != first.path || p.files != first.files {
            Some("the traces")
        } else if p.format != first.format || p.no_rounding != first.no_rounding {
            Some("the options (`--kind`, HTA_DISABLE_NS_ROUNDING)")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(MergeError::Mismatch {
                index: p.shard.index,
                count: p.shard.count,
                first_index,
                first_count: count,
                what,
            });
        }
    }
    let mut seen = vec![0usize; count as usize];
    for p in &parts {
        if let Some(n) = seen.get_mut(p.shard.index as usize) {
            *n += 1;
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| seen[i as usize] == 0)
        .map(|i| i.to_string())
        .collect();
    let twice: Vec<String> = (0..count)
        .filter(|&i| seen[i as usize] > 1)
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() || !twice.is_empty() {
        let tasks = |v: &[String], what: &str| match v {
            [one] => format!("task {one} is {what}"),
            _ => format!("tasks {} are {what}", v.join(", ")),
        };
        let mut problem = Vec::new();
        if !missing.is_empty() {
            problem.push(tasks(&missing, "missing"));
        }
        if !twice.is_empty() {
            problem.push(tasks(&twice, "given twice"));
        }
        return Err(MergeError::Tasks {
            count,
            problem: problem.join(", and "),
        });
    }
    let opts = Options {
        format: first.format,
        no_rounding: first.no_rounding,
        classified: None,
    };
    let path = PathBuf::from(&first.path);
    let files: Vec<PathBuf> = first.files.iter().map(PathBuf::from).collect();
    let skipped: Vec<PathBuf> = first.skipped.iter().map(PathBuf::from).collect();
    let mut overview = None;
    let mut summaries = Vec::new();
    for p in parts {
        overview = overview.or(p.tf_profiler);
        summaries.extend(p.summaries);
    }
    Ok(report::finish_folder(
        &path, summaries, opts, &files, &skipped, overview,
    ))
}
