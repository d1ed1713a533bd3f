//! A trace analysed from disk, in memory bounded by its steps and streams rather than by
//! its events: the same [`FileSummary`] as [`crate::job::summarize`], field for field.
//!
//! The reader writes the events to a temporary file ([`read::spill_path_counted`], 48 bytes
//! each) and keeps only the names and metadata. The analysis then reads that file, never the
//! JSON again:
//!
//! 1. **File order, once.** What does not depend on HTA's window: the file's counts, the last
//!    `ProfilerStep` (the window's bound), the steps' GPU-track copies, the host ops that launch
//!    collectives, which correlations ran host-to-device and device-to-host copies. Every GPU
//!    row goes to an external merge sort by `(start, end, place in the file)`: runs of
//!    [`RUN_ROWS`] sorted in memory and written to temporary files, then merged.
//! 2. **Each GPU row's launch** (the start of the last host row with its correlation, in
//!    HTA's window and not). Where the trace's correlations fit in [`LAUNCH_MAP_BYTES`]
//!    (8 bytes each, dense where the ids are; 16 million, a trace of about 6 GB), each
//!    window's host rows fill a map. Past that, a second pass sorts the GPU rows and the host
//!    rows by correlation on disk and joins them, so that nothing grows with the trace.
//! 3. **Per window** (HTA's, or none), file order again for the host rows: the steps, the
//!    DataLoader's and optimizer's marks, the correlations launched inside a collective's
//!    op, and where the host waited.
//! 4. **GPU rows in time order, twice per window and GPU**: first what decides the steps
//!    (whether each step's GPU-track copy holds its work) and the communication streams'
//!    shares; then one sweep that merges intervals as they come. HTA's temporal figures are
//!    a union's length and ends; its kernel-type figures are its own sweep over each type's
//!    merged intervals, their points taken from a heap once no later row can come before
//!    them ([`KindSweep`]); each stream's idle gaps need only its previous row; each step's
//!    figures are clipped lengths of merged intervals (an exposed share is a union's length
//!    less compute's), and its idle gaps are charged to the host as they close.
//!
//! TensorFlow's trace viewer JSON goes the same way: its events are lowered onto HTA's
//! rows as they are read back ([`tf::Lowering`]), and its step markers gathered in the first
//! pass ([`tf::Marks`]). Every figure is an integer number of µs summed in the same way as
//! in memory, so the two routes agree exactly (`tests/stream.rs` holds them to it on every
//! trace of the shared data and every generated case). Two kinds of trace are analysed in
//! memory instead: TensorFlow's `*.xplane.pb` (a protobuf decoded whole, as before), and a
//! trace with a GPU row of negative duration (see [`KindSweep`]), read back from the spill.

use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, BufReader, Read, Seek, Write};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::hta::{
    self, CUDA_WORK_CATS, CpuRow, GpuRow, IDLE_CATS, KernelType, MaskSums, Merger, Row, RowRule,
    StreamIdle, Temporal,
};
use crate::job::{self, FileSummary, Fullness};
use crate::read::{self, Event, EventFile, RawTrace, Spilled};
use crate::report::{self, Counts, Figures, Options};
use crate::steps::{
    self, GPU_ANNOTATION_CAT, Host, HostTimes, LaunchStats, Markers, StepFigures, is_collective,
    is_comm_launcher, is_d2h, is_h2d, is_pageable,
};
use crate::tf;
use gpufeed_contract::format::TraceFormat;
use gpufeed_stats::thresholds::GPU_STEP_COPY_HOLDS;

/// Records sorted in memory at a time: 262,144 GPU rows (88 bytes each in memory, 23 MiB;
/// 72 on disk).
pub const RUN_ROWS: usize = 1 << 18;

/// The most the launch of each correlation may take in a map: 128 MiB, 16 million
/// correlations (a PyTorch trace of about 6 GB). A trace that needs more joins its GPU
/// rows to their launches on disk instead (about a fifth slower).
pub const LAUNCH_MAP_BYTES: u64 = 128 << 20;

/// Summarises a trace read by [`read::spill_path_counted`]: streamed (see the module's
/// docs), else (an xplane file, or negative durations) in memory as [`job::summarize`] does.
///
/// # Errors
///
/// The temporary files cannot be written or read back, or (read back into memory) the trace
/// holds more than [`read::MAX_EVENTS`] events.
pub fn summarize_spilled(
    spilled: Spilled,
    index: usize,
    opts: Options,
    alone: bool,
) -> Result<FileSummary> {
    summarize_spilled_with(spilled, index, opts, alone, Limits::default())
}

/// What the streamed analysis holds in memory at most, besides its names, steps and streams.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Records sorted in memory at a time ([`RUN_ROWS`]).
    pub run_rows: usize,
    /// Bytes the launch of each correlation may take in a map ([`LAUNCH_MAP_BYTES`]).
    pub map_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            run_rows: RUN_ROWS,
            map_bytes: LAUNCH_MAP_BYTES,
        }
    }
}

/// [`summarize_spilled`] within `limits` (tests use runs of a few rows and no map, so that
/// small traces go through the merge of runs and the join on disk).
///
/// # Errors
///
/// As [`summarize_spilled`].
#[doc(hidden)]
pub fn summarize_spilled_with(
    spilled: Spilled,
    index: usize,
    opts: Options,
    alone: bool,
    limits: Limits,
) -> Result<FileSummary> {
    let (mut t, events) = match spilled {
        Spilled::Whole(t) => return Ok(job::summarize(t, index, opts, alone)),
        Spilled::Spilled(t, events) => (t, events),
    };
    let path = t.path.clone();
    let spill_err = |cause| Error::Spill {
        path: path.clone(),
        cause,
    };
    let format = job::format_of(&t, opts);
    let lowering =
        (format == TraceFormat::Tensorflow).then(|| tf::Lowering::new(&mut t, events.max_corr()));
    let source = Source {
        file: &events,
        lowering: lowering.as_ref(),
    };
    if let Some(summary) =
        streamed(&t, source, format, index, opts, alone, limits).map_err(spill_err)?
    {
        return Ok(summary);
    }
    // A trace with negative durations: read back, within the reader's limit.
    if events.len() > read::MAX_EVENTS as u64 {
        return Err(Error::TooLarge {
            path: t.path.clone(),
            offset: t.bytes,
            what: format!("{} events", read::MAX_EVENTS),
        });
    }
    let all: io::Result<Vec<Event>> = events.events().map_err(spill_err)?.collect();
    t.events = all.map_err(spill_err)?;
    Ok(job::summarize(t, index, opts, alone))
}

/// What each name id is, tested once per name.
struct Names {
    step_number: Vec<Option<i64>>,
    profiler_step: Vec<bool>,
    launch_call: Vec<bool>,
    host: Vec<Option<Host>>,
    loader_next: Vec<bool>,
    optimizer_step: Vec<bool>,
    launcher: Vec<bool>,
    collective: Vec<bool>,
    h2d: Vec<bool>,
    d2h: Vec<bool>,
    pageable: Vec<bool>,
    kind: Vec<KernelType>,
}

impl Names {
    fn of(t: &RawTrace) -> Self {
        let names: Vec<&str> = t.symbols.iter().map(|(_, s)| s).collect();
        let each = |f: &dyn Fn(&str) -> bool| names.iter().map(|n| f(n)).collect::<Vec<bool>>();
        let launch_ids = report::launch_call_ids(t);
        Self {
            step_number: names.iter().map(|n| steps::step_number(n)).collect(),
            profiler_step: each(&|n| n.contains("ProfilerStep")),
            launch_call: (0..names.len() as u32)
                .map(|i| launch_ids.contains(&i))
                .collect(),
            host: names.iter().map(|n| steps::host_kind(n)).collect(),
            loader_next: each(&|n| n.contains("DataLoader") && n.contains("__next__")),
            optimizer_step: each(&|n| n.starts_with("Optimizer.step#")),
            launcher: each(&is_comm_launcher),
            collective: each(&is_collective),
            h2d: each(&is_h2d),
            d2h: each(&is_d2h),
            pageable: each(&is_pageable),
            kind: names.iter().map(|n| KernelType::of(n)).collect(),
        }
    }

    /// A name's kernel type (ids past the table, none are, as computation).
    fn kind_of(&self, id: u32) -> KernelType {
        self.kind
            .get(id as usize)
            .copied()
            .unwrap_or(KernelType::Computation)
    }
}

/// A name's flag; ids past the table (none are) read as false.
fn flag(v: &[bool], id: u32) -> bool {
    v.get(id as usize).copied().unwrap_or(false)
}

/// The symbol ids of `cats`.
fn cat_ids(t: &RawTrace, cats: &[&str]) -> FxHashSet<u32> {
    cats.iter().filter_map(|c| t.symbols.get(c)).collect()
}

/// What the first pass over the events in file order keeps: nothing that depends on HTA's
/// window.
struct FileFacts {
    fullness: Fullness,
    counts: Counts,
    gpu_in_file: usize,
    /// The start of the last `ProfilerStep` row (HTA's window ends there).
    last_step: Option<i64>,
    /// Step number → the rounded span of its GPU-track copy (the last in file order).
    extents: FxHashMap<i64, (i64, i64)>,
    /// Host ops that launch collectives: `(tid, ts, end)`.
    launchers: Vec<(u32, i64, i64)>,
    /// `(pid, correlation)` of host-to-device copies that are GPU work, and of
    /// device-to-host copies; and their correlations on any GPU.
    h2d: FxHashSet<(u32, i64)>,
    d2h: FxHashSet<(u32, i64)>,
    h2d_any: FxHashSet<i64>,
    d2h_any: FxHashSet<i64>,
    /// The earliest start of a host row with each negative correlation (HTA's window keeps
    /// a GPU row of such a correlation where some host row in the window has it).
    negative: FxHashMap<i64, i64>,
    /// GPU pids with a stream, any row.
    gpu_pids: Vec<u32>,
    /// A GPU row ends more than 1 µs before it starts (a negative duration): the kernel-type
    /// sweep cannot take its points as the rows come (see [`KindSweep`]).
    wild: bool,
    /// TensorFlow's step markers.
    marks: Option<tf::Marks>,
    /// The smallest and largest correlation ≥ 0 of a host row, and how many have one.
    corr_range: Option<(i64, i64)>,
    corr_rows: u64,
    /// Whether each window's launches are looked up in a map (few enough correlations),
    /// else joined to the GPU rows on disk, in `sorted`.
    mapped: bool,
    /// The GPU rows by time, each with its launches where they were joined.
    sorted: Sorted<Placed, (i64, i64, u64)>,
}

fn file_facts(
    t: &RawTrace,
    events: Source<'_>,
    names: &Names,
    rule: RowRule,
    limits: Limits,
) -> io::Result<FileFacts> {
    let work = cat_ids(t, CUDA_WORK_CATS);
    let gpu_cat = t.symbols.get(GPU_ANNOTATION_CAT);
    let mut f = FileFacts {
        fullness: Fullness {
            gpu_events: 0,
            steps: 0,
            events: usize::try_from(events.file.len()).unwrap_or(usize::MAX),
        },
        counts: Counts {
            launch_calls: 0,
            profiler_steps: 0,
        },
        gpu_in_file: 0,
        last_step: None,
        extents: FxHashMap::default(),
        launchers: Vec::new(),
        h2d: FxHashSet::default(),
        d2h: FxHashSet::default(),
        h2d_any: FxHashSet::default(),
        d2h_any: FxHashSet::default(),
        negative: FxHashMap::default(),
        corr_range: None,
        corr_rows: 0,
        mapped: true,
        gpu_pids: Vec::new(),
        wild: false,
        marks: events.lowering.is_some().then(|| tf::Marks::new(t)),
        sorted: Sorted::Mem(Vec::new()),
    };
    let mut gpu = Sorter::new(by_time, limits.run_rows);
    for (i, e) in events.events()?.enumerate() {
        let e = e?;
        if let Some(m) = &mut f.marks {
            m.add(t, i, &e);
        }
        if work.contains(&e.cat) {
            f.fullness.gpu_events += 1;
        }
        let step_name = flag(&names.profiler_step, e.name);
        if step_name {
            f.fullness.steps += 1;
            if Some(e.cat) != gpu_cat {
                f.counts.profiler_steps += 1;
            }
        }
        if flag(&names.launch_call, e.name) {
            f.counts.launch_calls += 1;
        }
        if Some(e.cat) == gpu_cat
            && let Some(n) = names.step_number.get(e.name as usize).copied().flatten()
        {
            f.extents
                .insert(n, hta::round_span(e.ts, e.dur, rule.round));
        }
        match rule.row(&e, |n| names.kind_of(n)) {
            Some(Row::Gpu(g)) => {
                f.gpu_in_file += 1;
                f.wild |= g.end < g.ts - 1;
                if g.stream != -1 && !f.gpu_pids.contains(&g.pid) {
                    f.gpu_pids.push(g.pid);
                }
                if g.stream != -1 && work.contains(&g.cat) && flag(&names.h2d, g.name) {
                    f.h2d.insert((g.pid, g.corr));
                    f.h2d_any.insert(g.corr);
                }
                if g.corr >= 0 && flag(&names.d2h, g.name) {
                    f.d2h.insert((g.pid, g.corr));
                    f.d2h_any.insert(g.corr);
                }
                gpu.push(Placed {
                    seq: i as u64,
                    g,
                    win: None,
                })?;
            }
            Some(Row::Cpu(c)) => {
                if step_name {
                    f.last_step = Some(f.last_step.map_or(c.ts, |l| l.max(c.ts)));
                }
                if flag(&names.launcher, c.name) {
                    f.launchers.push((c.tid, c.ts, c.end));
                }
                if c.corr >= 0 {
                    f.corr_rows += 1;
                    f.corr_range = Some(
                        f.corr_range
                            .map_or((c.corr, c.corr), |(a, b)| (a.min(c.corr), b.max(c.corr))),
                    );
                } else {
                    let ts = f.negative.entry(c.corr).or_insert(c.ts);
                    *ts = (*ts).min(c.ts);
                }
            }
            None => {}
        }
    }
    f.fullness.steps = f.fullness.steps.max(t.step_marks.len());
    f.mapped = CorrMap::bytes(f.corr_range, f.corr_rows) <= limits.map_bytes;
    f.sorted = if f.mapped {
        gpu.finish()?
    } else {
        drop(gpu);
        joined(events, rule, names, f.last_step, limits.run_rows)?
    };
    Ok(f)
}

/// A spilled trace's events, lowered onto HTA's model as they are read where the trace is
/// TensorFlow's (each pass from a fresh [`tf::Lowering`], as the in-memory route lowers
/// them once in file order).
#[derive(Clone, Copy)]
struct Source<'a> {
    file: &'a EventFile,
    lowering: Option<&'a tf::Lowering>,
}

impl<'a> Source<'a> {
    fn events(&self) -> io::Result<impl Iterator<Item = io::Result<Event>> + 'a> {
        let mut lowering = self.lowering.cloned();
        Ok(self.file.events()?.map(move |e| {
            e.map(|mut e| {
                if let Some(l) = &mut lowering {
                    l.apply(&mut e);
                }
                e
            })
        }))
    }
}

/// The streamed summary of a PyTorch or TensorFlow trace (see the module's docs); `None`
/// where it cannot stream (negative durations).
fn streamed(
    t: &RawTrace,
    events: Source<'_>,
    format: TraceFormat,
    index: usize,
    opts: Options,
    alone: bool,
    limits: Limits,
) -> io::Result<Option<FileSummary>> {
    let names = Names::of(t);
    let rule = RowRule::of(t, !opts.no_rounding);
    let facts = file_facts(t, events, &names, rule, limits)?;
    if facts.wild {
        return Ok(None);
    }
    let step_names = job::step_names(t);
    let rank = t.rank.unwrap_or(0);
    let pytorch = format == TraceFormat::Pytorch;
    let window = pytorch && step_names.len() >= 2;
    let ctx = Ctx {
        t,
        rule,
        format,
        events,
        names: &names,
        facts: &facts,
    };
    let (report, other_window) = if window {
        (ctx.rank(rank, Some(facts.last_step))?, None)
    } else {
        let report = ctx.rank(rank, None)?;
        let other = if alone || !pytorch {
            None
        } else {
            Some(Box::new(ctx.rank(rank, Some(facts.last_step))?))
        };
        (report, other)
    };
    Ok(Some(FileSummary {
        index,
        file: t.path.display().to_string(),
        rank,
        format,
        fullness: facts.fullness,
        step_names,
        truncated: job::truncation_warning(t),
        report,
        other_window,
    }))
}

/// HTA's window: `None`, none; `Some(last)`, the host rows before `last` (none where the
/// trace has no step) and the GPU rows they launched.
type Window = Option<Option<i64>>;

struct Ctx<'a> {
    t: &'a RawTrace,
    rule: RowRule,
    format: TraceFormat,
    events: Source<'a>,
    names: &'a Names,
    facts: &'a FileFacts,
}

/// Correlation → the start of the last host row (in file order) with it: dense over the
/// trace's range of correlations where they are dense enough, else hashed.
struct CorrMap {
    base: i64,
    dense: Vec<i64>,
    sparse: FxHashMap<i64, i64>,
}

impl CorrMap {
    const ABSENT: i64 = i64::MIN;

    /// The dense table's length for `rows` host rows with a correlation in `range`; 0 where
    /// the ids are too sparse for one.
    fn dense_len(range: Option<(i64, i64)>, rows: u64) -> u64 {
        range
            .map(|(a, b)| b.saturating_sub(a).saturating_add(1))
            .filter(|&len| len > 0 && (len as u64) <= 2 * rows + 4096)
            .map_or(0, |len| len as u64)
    }

    /// About the bytes the map takes: 8 per slot of the dense table, else about 32 per
    /// entry hashed.
    fn bytes(range: Option<(i64, i64)>, rows: u64) -> u64 {
        match Self::dense_len(range, rows) {
            0 => rows.saturating_mul(32),
            len => len * 8,
        }
    }

    fn new(range: Option<(i64, i64)>, rows: u64) -> Self {
        Self {
            base: range.map_or(0, |r| r.0),
            dense: vec![Self::ABSENT; usize::try_from(Self::dense_len(range, rows)).unwrap_or(0)],
            sparse: FxHashMap::default(),
        }
    }

    fn slot(&self, corr: i64) -> Option<usize> {
        let i = corr.checked_sub(self.base)?;
        usize::try_from(i).ok().filter(|&i| i < self.dense.len())
    }

    fn insert(&mut self, corr: i64, ts: i64) {
        match self.slot(corr) {
            Some(i) => self.dense[i] = ts,
            None => {
                self.sparse.insert(corr, ts);
            }
        }
    }

    fn get(&self, corr: i64) -> Option<i64> {
        match self.slot(corr) {
            Some(i) => Some(self.dense[i]).filter(|&v| v != Self::ABSENT),
            None => self.sparse.get(&corr).copied(),
        }
    }
}

/// What the host rows of a window give.
struct HostSide {
    /// The launch of each correlation in the window, where the trace's fit in a map.
    launch: Option<CorrMap>,
    origin: Option<i64>,
    /// `ProfilerStep#N` rows on the host: `(N, ts, end)` in file order.
    steps: Vec<(i64, i64, i64)>,
    loader: Vec<CpuRow>,
    optimizer: Vec<CpuRow>,
    comm_corr: FxHashSet<i64>,
    /// Where the host waited, for every GPU (`None`) and for each GPU pid.
    times: Vec<(Option<u32>, HostTimes)>,
}

impl Ctx<'_> {
    fn in_window(window: Window, ts: i64) -> bool {
        window.is_none_or(|last| last.is_some_and(|l| ts < l))
    }

    fn host_side(&self, window: Window) -> io::Result<HostSide> {
        let (names, facts) = (self.names, self.facts);
        let rule = self.rule;
        let gpu_cat = self.t.symbols.get(GPU_ANNOTATION_CAT);
        let spans = steps::LauncherSpans::of(
            facts
                .launchers
                .iter()
                .copied()
                .filter(|&(_, ts, _)| Self::in_window(window, ts)),
        );
        let filters: Vec<Option<u32>> = std::iter::once(None)
            .chain(
                (facts.gpu_pids.len() > 1)
                    .then_some(facts.gpu_pids.iter().map(|&p| Some(p)))
                    .into_iter()
                    .flatten(),
            )
            .collect();
        let mut times: Vec<(Option<u32>, HostTimes)> =
            filters.iter().map(|&f| (f, HostTimes::default())).collect();
        let mut side = HostSide {
            launch: facts
                .mapped
                .then(|| CorrMap::new(facts.corr_range, facts.corr_rows)),
            origin: None,
            steps: Vec::new(),
            loader: Vec::new(),
            optimizer: Vec::new(),
            comm_corr: FxHashSet::default(),
            times: Vec::new(),
        };
        let kind_of = |n: u32| names.kind_of(n);
        for e in self.events.events()? {
            let Some(Row::Cpu(r)) = rule.row(&e?, kind_of) else {
                continue;
            };
            if !Self::in_window(window, r.ts) {
                continue;
            }
            if let Some(m) = &mut side.launch {
                m.insert(r.corr, r.ts);
            }
            side.origin = Some(side.origin.map_or(r.ts, |o| o.min(r.ts)));
            if Some(r.cat) != gpu_cat
                && let Some(n) = names.step_number.get(r.name as usize).copied().flatten()
            {
                side.steps.push((n, r.ts, r.end));
            }
            if flag(&names.loader_next, r.name) {
                side.loader.push(r);
            }
            if flag(&names.optimizer_step, r.name) {
                side.optimizer.push(r);
            }
            if r.corr >= 0 && spans.hold(r.tid, r.ts) {
                side.comm_corr.insert(r.corr);
            }
            let kind = names.host.get(r.name as usize).copied().flatten();
            for (f, h) in &mut times {
                let f = *f;
                let of = |set: &FxHashSet<(u32, i64)>, any: &FxHashSet<i64>| {
                    r.corr >= 0
                        && match f {
                            Some(pid) => set.contains(&(pid, r.corr)),
                            None => any.contains(&r.corr),
                        }
                };
                h.add(
                    &r,
                    kind,
                    of(&facts.h2d, &facts.h2d_any),
                    of(&facts.d2h, &facts.d2h_any),
                );
            }
        }
        side.times = times.into_iter().map(|(f, h)| (f, h.finish())).collect();
        Ok(side)
    }

    /// One rank's report in `window`: every GPU's figures, and each GPU's where it has
    /// several.
    fn rank(&self, rank: u32, window: Window) -> io::Result<report::RankReport> {
        let host = self.host_side(window)?;
        let (all, devices) = self.figures(&host, window, None)?;
        let mut per_device = Vec::new();
        if devices.len() > 1 {
            for pid in devices {
                per_device.push((pid, self.figures(&host, window, Some(pid))?.0));
            }
        }
        Ok(report::rank_of_figures(
            rank,
            self.t,
            self.format,
            self.facts.counts,
            all,
            per_device,
        ))
    }
}

/// The length of a union, with its first start and last end.
#[derive(Debug, Default, Clone, Copy)]
struct Union {
    m: Merger,
    len: i64,
    first: Option<i64>,
    last: i64,
}

impl Union {
    fn push(&mut self, s: i64, e: i64) {
        if let Some(iv) = self.m.push(s, e) {
            self.add(iv);
        }
    }

    fn add(&mut self, (s, e): (i64, i64)) {
        self.first.get_or_insert(s);
        self.last = e;
        self.len += e - s;
    }

    fn finish(&mut self) {
        if let Some(iv) = self.m.finish() {
            self.add(iv);
        }
    }
}

/// Steps sorted by start, with the largest end so far: the steps that overlap an interval
/// or hold an instant are found by a binary search and a short walk back.
struct StepIndex {
    steps: Vec<(i64, i64, i64)>,
    max_end: Vec<i64>,
}

impl StepIndex {
    fn new(steps: Vec<(i64, i64, i64)>) -> Self {
        let mut m = i64::MIN;
        let max_end = steps
            .iter()
            .map(|s| {
                m = m.max(s.2);
                m
            })
            .collect();
        Self { steps, max_end }
    }

    /// Each step `j` that `[a, b)` overlaps, with the overlap.
    fn overlaps(&self, a: i64, b: i64, mut f: impl FnMut(usize, i64, i64)) {
        let to = self.steps.partition_point(|s| s.1 < b);
        for j in (0..to).rev() {
            if self.max_end[j] <= a {
                break;
            }
            let (_, s, e) = self.steps[j];
            let (lo, hi) = (a.max(s), b.min(e));
            if hi > lo {
                f(j, lo, hi);
            }
        }
    }

    /// Each step `j` with `s <= x < e`.
    fn holding(&self, x: i64, mut f: impl FnMut(usize)) {
        let to = self.steps.partition_point(|s| s.1 <= x);
        for j in (0..to).rev() {
            if self.max_end[j] <= x {
                break;
            }
            if self.steps[j].2 > x {
                f(j);
            }
        }
    }
}

/// The unions a step's figures clip: busy, compute, collective, and each of collective,
/// pageable copies and pinned copies with compute (`a` less compute is `a ∪ compute` less
/// compute).
const STEP_UNIONS: usize = 6;

impl Ctx<'_> {
    /// A GPU row's place in `window`, and its launch (see [`hta::windowed`]).
    fn placed(&self, host: &HostSide, window: Window, p: &Placed) -> (bool, Option<i64>) {
        let g = &p.g;
        if let Some(map) = &host.launch {
            let launch = map.get(g.corr);
            let inside = window.is_none() || launch.is_some();
            return (inside, launch.filter(|_| g.corr >= 0));
        }
        match window {
            None => (true, g.launch_ts),
            Some(last) => {
                let inside = if g.corr >= 0 {
                    p.win.is_some()
                } else {
                    let first = self.facts.negative.get(&g.corr);
                    last.zip(first).is_some_and(|(l, &ts)| ts < l)
                };
                (inside, p.win)
            }
        }
    }

    /// The figures of `window` for every GPU (`dev` none), or for one; with every GPU's,
    /// the GPU pids in the order the report lists them.
    fn figures(
        &self,
        host: &HostSide,
        window: Window,
        dev: Option<u32>,
    ) -> io::Result<(Figures, Vec<u32>)> {
        let first = self.first_sweep(host, window, dev)?;
        let (step_rows, markers) = match &self.facts.marks {
            Some(marks) => marks.steps(dev),
            None => self.steps_of(host, &first),
        };
        let origin = match (first.origin, host.origin) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(0),
        };
        let steps = StepIndex::new(step_rows);
        let (hta_figs, step_figs) = self.second_sweep(host, window, dev, &first, &steps, origin)?;
        let launch = LaunchStats {
            kernel_median_us: steps::median_counted(&first.kernel_durs),
            launch_median_us: steps::median_counted(&self.times(host, dev).launch_durs),
        };
        let figures = Figures {
            temporal: hta_figs.0,
            idle_breakdown: hta_figs.1,
            kernel_types: hta_figs.2,
            markers,
            step_rows: steps.steps.len(),
            steps: step_figs,
            launch,
            windowed: window.is_some(),
            gpu_events_in_file: if dev.is_some() {
                first.dev_rows
            } else {
                self.facts.gpu_in_file
            },
            gpu_events_analysed: first.analysed,
        };
        Ok((figures, first.devices))
    }

    fn times<'h>(&self, host: &'h HostSide, dev: Option<u32>) -> &'h HostTimes {
        host.times
            .iter()
            .find(|(f, _)| *f == dev)
            .map_or(&host.times[0].1, |(_, h)| h)
    }
}

/// What the first sweep over the GPU rows gives.
struct FirstSweep {
    origin: Option<i64>,
    analysed: usize,
    dev_rows: usize,
    devices: Vec<u32>,
    /// (pid, stream) → whether its known communication holds its work.
    comm_streams: FxHashSet<(u32, i64)>,
    kernel_durs: BTreeMap<i64, u64>,
    /// The host steps sorted by start, and whether each one's GPU-track copy holds its work.
    host_steps: Vec<(i64, i64, i64)>,
    copies_hold: bool,
}

impl Ctx<'_> {
    fn is_comm(&self, host: &HostSide, g: &GpuRow) -> bool {
        flag(&self.names.collective, g.name) || (g.corr >= 0 && host.comm_corr.contains(&g.corr))
    }

    fn first_sweep(
        &self,
        host: &HostSide,
        window: Window,
        dev: Option<u32>,
    ) -> io::Result<FirstSweep> {
        let work_cats = cat_ids(self.t, CUDA_WORK_CATS);
        let mut host_steps = host.steps.clone();
        host_steps.sort_by_key(|s| s.1);
        let extents: Option<Vec<(i64, i64)>> = self
            .t
            .symbols
            .get(GPU_ANNOTATION_CAT)
            .filter(|_| !self.facts.extents.is_empty())
            .and_then(|_| {
                host_steps
                    .iter()
                    .map(|s| self.facts.extents.get(&s.0).copied())
                    .collect()
            });
        let index = StepIndex::new(host_steps.clone());
        // Per host step: its launched rows merged, their length, the part inside its copy.
        let mut launched: Vec<(Merger, i64, i64)> =
            vec![(Merger::default(), 0, 0); host_steps.len()];
        let held = |(s, e): (i64, i64), (gs, ge): (i64, i64)| (e.min(ge) - s.max(gs)).max(0);
        // A pid's first row with a stream inside the window, and outside it, by place.
        let mut first_in: FxHashMap<u32, u64> = FxHashMap::default();
        let mut first_out: FxHashMap<u32, u64> = FxHashMap::default();
        let mut streams: FxHashMap<(u32, i64), (i64, i64)> = FxHashMap::default();
        let mut out = FirstSweep {
            origin: None,
            analysed: 0,
            dev_rows: 0,
            devices: Vec::new(),
            comm_streams: FxHashSet::default(),
            kernel_durs: BTreeMap::new(),
            host_steps: Vec::new(),
            copies_hold: false,
        };
        self.facts.sorted.each(|p| {
            let (seq, g) = (p.seq, &p.g);
            if dev.is_some_and(|p| g.pid != p) {
                return;
            }
            let (inside, launch) = self.placed(host, window, p);
            out.dev_rows += 1;
            if g.stream != -1 {
                let first = if inside {
                    &mut first_in
                } else {
                    &mut first_out
                };
                let e = first.entry(g.pid).or_insert(seq);
                *e = (*e).min(seq);
            }
            if inside {
                out.analysed += 1;
                out.origin.get_or_insert(g.ts);
                if let (Some(l), Some(ext)) = (launch.filter(|_| g.stream != -1), &extents) {
                    index.holding(l, |j| {
                        if let Some(iv) = launched[j].0.push(g.ts, g.end) {
                            launched[j].1 += iv.1 - iv.0;
                            launched[j].2 += held(iv, ext[j]);
                        }
                    });
                }
            }
            if g.stream != -1 && work_cats.contains(&g.cat) {
                let d = (g.end - g.ts).max(0);
                let s = streams.entry((g.pid, g.stream)).or_default();
                s.1 += d;
                if self.is_comm(host, g) {
                    s.0 += d;
                }
                if g.kind == KernelType::Computation {
                    *out.kernel_durs.entry(g.end - g.ts).or_default() += 1;
                }
            }
        })?;
        if let Some(ext) = &extents {
            for (j, l) in launched.iter_mut().enumerate() {
                if let Some(iv) = l.0.finish() {
                    l.1 += iv.1 - iv.0;
                    l.2 += held(iv, ext[j]);
                }
            }
            out.copies_hold = !host_steps.is_empty()
                && launched.iter().zip(ext).all(|(l, &(gs, ge))| {
                    (l.2 as f64) >= GPU_STEP_COPY_HOLDS * l.1 as f64 && ge > gs
                });
        }
        out.comm_streams = streams
            .into_iter()
            .filter(|&(_, (known, all))| steps::comm_stream(known, all))
            .map(|(k, _)| k)
            .collect();
        let mut devices: Vec<(bool, u64, u32)> = first_in
            .iter()
            .map(|(&pid, &seq)| (false, seq, pid))
            .chain(
                first_out
                    .iter()
                    .filter(|(pid, _)| !first_in.contains_key(pid))
                    .map(|(&pid, &seq)| (true, seq, pid)),
            )
            .collect();
        devices.sort_unstable();
        out.devices = devices.into_iter().map(|d| d.2).collect();
        out.host_steps = host_steps;
        Ok(out)
    }

    /// The iterations and their markers, as [`steps::profiler_steps`] gives them.
    fn steps_of(
        &self,
        host: &HostSide,
        first: &FirstSweep,
    ) -> (Vec<(i64, i64, i64)>, Option<Markers>) {
        if first.host_steps.is_empty() {
            let loader = steps::dataloader_iterations(&host.loader, self.t);
            if !loader.is_empty() {
                return (loader, Some(Markers::DataloaderNext));
            }
            let optimizer = steps::optimizer_iterations(&host.optimizer, self.t);
            let markers = (!optimizer.is_empty()).then_some(Markers::OptimizerStep);
            return (optimizer, markers);
        }
        if first.copies_hold {
            let mut gpu: Vec<(i64, i64, i64)> = first
                .host_steps
                .iter()
                .map(|&(n, _, _)| {
                    let (gs, ge) = self.facts.extents[&n];
                    (n, gs, ge)
                })
                .collect();
            gpu.sort_by_key(|s| s.1);
            return (gpu, Some(Markers::ProfilerStepGpu));
        }
        (first.host_steps.clone(), Some(Markers::ProfilerStep))
    }
}

/// HTA's figures of a window: temporal, idle per stream, kernel types.
type HtaFigures = (Option<Temporal>, Vec<StreamIdle>, Vec<hta::KernelTypeTime>);

/// One stream's idle gaps as they come (HTA's `_analyze_idle_time_for_stream`).
struct StreamGaps {
    first_seq: u64,
    /// The rows of the latest start, put in file order before they count: HTA sorts a
    /// stream's rows by start only, keeping file order among equal starts.
    group: Vec<(u64, i64, i64, Option<i64>)>,
    prev_end: Option<i64>,
    idle: StreamIdle,
}

impl StreamGaps {
    fn push(&mut self, seq: u64, g: &GpuRow, launch: Option<i64>) {
        self.first_seq = self.first_seq.min(seq);
        if self.group.first().is_some_and(|r| r.1 != g.ts) {
            self.flush();
        }
        self.group.push((seq, g.ts, g.end, launch));
    }

    fn flush(&mut self) {
        self.group.sort_unstable_by_key(|r| r.0);
        for (_, ts, end, launch) in std::mem::take(&mut self.group) {
            self.idle.events += 1;
            if let Some(prev) = self.prev_end {
                self.idle.gap(prev, ts, launch);
            }
            self.prev_end = Some(end);
        }
    }
}

impl Ctx<'_> {
    /// The sweep over the GPU rows in time order: HTA's figures and each step's.
    fn second_sweep(
        &self,
        host: &HostSide,
        window: Window,
        dev: Option<u32>,
        first: &FirstSweep,
        steps: &StepIndex,
        origin: i64,
    ) -> io::Result<(HtaFigures, Vec<StepFigures>)> {
        let names = self.names;
        let work_cats = cat_ids(self.t, CUDA_WORK_CATS);
        let idle_cats = cat_ids(self.t, &IDLE_CATS);
        let times = self.times(host, dev);
        // HTA: every row with a stream, then the unions of each non-empty set of the three
        // kernel types (by mask).
        let mut all = Union::default();
        let mut compute_union = Union::default();
        let mut kinds = KindSweep::default();
        let mut gaps: FxHashMap<i64, StreamGaps> = FxHashMap::default();
        let mut figs: Vec<StepFigures> = steps
            .steps
            .iter()
            .map(|&(n, s, e)| StepFigures {
                step: n,
                start_us: (s - origin) as f64,
                dur_us: (e - s).max(0) as f64,
                ..StepFigures::default()
            })
            .collect();
        let mut lens = vec![[0i64; STEP_UNIONS]; figs.len()];
        let mut mergers = [Merger::default(); STEP_UNIONS];
        let mut busy_end = i64::MIN;
        // The GPU idles in `[a, b)`: each step's part of it is charged to the host.
        let idle = |a: i64, b: i64, figs: &mut Vec<StepFigures>| {
            steps.overlaps(a, b, |j, lo, hi| {
                figs[j].idle_us += (hi - lo) as f64;
                times.charge(&mut figs[j], lo, hi);
            });
        };
        // Union `k` closes `[a, b)`; a busy interval of some length ends an idle gap (one of
        // no length splits none: clipped to a step, it is dropped).
        let mut closed = |k: usize, (a, b): (i64, i64), figs: &mut Vec<StepFigures>| {
            steps.overlaps(a, b, |j, lo, hi| lens[j][k] += hi - lo);
            if k == 0 && b > a {
                idle(busy_end, a, figs);
                busy_end = b;
            }
        };
        self.facts.sorted.each(|p| {
            let (seq, g) = (p.seq, &p.g);
            if dev.is_some_and(|p| g.pid != p) {
                return;
            }
            let (inside, launch) = self.placed(host, window, p);
            if inside && g.stream != -1 {
                all.push(g.ts, g.end);
                if g.kind == KernelType::Computation {
                    compute_union.push(g.ts, g.end);
                }
                kinds.push(g);
                if idle_cats.contains(&g.cat) {
                    let s = gaps.entry(g.stream).or_insert_with(|| StreamGaps {
                        first_seq: seq,
                        group: Vec::new(),
                        prev_end: None,
                        idle: StreamIdle {
                            stream: g.stream,
                            ..StreamIdle::default()
                        },
                    });
                    s.push(seq, g, launch);
                }
            }
            if g.stream == -1 || !work_cats.contains(&g.cat) {
                return;
            }
            steps.holding(g.ts, |j| figs[j].kernels += 1);
            let comm = self.is_comm(host, g) || first.comm_streams.contains(&(g.pid, g.stream));
            let compute = g.kind == KernelType::Computation && !comm;
            let h2d = flag(&names.h2d, g.name);
            let pageable = h2d && flag(&names.pageable, g.name);
            let pinned = h2d && !pageable;
            let member = [
                true,
                compute,
                comm,
                compute || comm,
                pageable || compute,
                pinned || compute,
            ];
            for (k, m) in mergers.iter_mut().enumerate() {
                if member[k]
                    && let Some(iv) = m.push(g.ts, g.end)
                {
                    closed(k, iv, &mut figs);
                }
            }
        })?;
        for (k, m) in mergers.iter_mut().enumerate() {
            if let Some(iv) = m.finish() {
                closed(k, iv, &mut figs);
            }
        }
        idle(busy_end, i64::MAX, &mut figs);
        for (f, l) in figs.iter_mut().zip(&lens) {
            let [busy, compute, coll, comp_coll, pg_comp, pin_comp] = *l;
            f.gpu_busy_us = busy as f64;
            f.gpu_busy_pct = if f.dur_us > 0.0 {
                100.0 * busy as f64 / f.dur_us
            } else {
                0.0
            };
            f.compute_us = compute as f64;
            f.collective_us = coll as f64;
            f.collective_exposed_us = (comp_coll - compute) as f64;
            f.h2d_pageable_us = (pg_comp - compute) as f64;
            f.h2d_pinned_us = (pin_comp - compute) as f64;
            f.h2d_us = f.h2d_pageable_us + f.h2d_pinned_us;
        }
        for (f, &(_, s, e)) in figs.iter_mut().zip(&steps.steps) {
            let ends = &times.sync_ends;
            f.syncs = ends.partition_point(|&k| k < e) - ends.partition_point(|&k| k < s);
        }
        all.finish();
        compute_union.finish();
        let temporal = all.first.map(|first| {
            let span = all.last - first;
            hta::temporal_of(span, span - all.len, compute_union.len)
        });
        let mut gaps: Vec<StreamGaps> = gaps.into_values().collect();
        gaps.sort_by_key(|g| g.first_seq);
        let idle_breakdown = gaps
            .into_iter()
            .map(|mut g| {
                g.flush();
                g.idle
            })
            .collect();
        let kernel_types = hta::kernel_types_of(kinds.finish());
        Ok(((temporal, idle_breakdown, kernel_types), figs))
    }
}

/// HTA's kernel-type sweep (see [`hta::kernel_types`]) as the rows come: each type's rows
/// merged, each merged interval's start and end points put in a heap, and the points taken
/// in order once no later row can come before them. Rows end at most 1 µs before they start
/// (HTA's rounding of a sub-µs row; [`FileFacts::wild`] sends other traces to the in-memory
/// route), so a point earlier than 1 µs before the open intervals' starts and the last row's
/// start is final.
#[derive(Debug, Default)]
struct KindSweep {
    mergers: [Merger; 3],
    points: BinaryHeap<std::cmp::Reverse<(i64, u8, u8)>>,
    sums: MaskSums,
}

impl KindSweep {
    const KINDS: [KernelType; 3] = [
        KernelType::Computation,
        KernelType::Communication,
        KernelType::Memory,
    ];

    fn push(&mut self, g: &GpuRow) {
        let Some(k) = Self::KINDS.iter().position(|&k| k == g.kind) else {
            return;
        };
        if let Some(iv) = self.mergers[k].push(g.ts, g.end) {
            self.add(iv, Self::KINDS[k].bit());
        }
        let open = self
            .mergers
            .iter()
            .filter_map(|m| m.cur.map(|c| c.0))
            .min()
            .unwrap_or(g.ts);
        self.take_before(open.min(g.ts) - 1);
    }

    fn add(&mut self, (s, e): (i64, i64), bit: u8) {
        self.points.push(std::cmp::Reverse((s, 0, bit)));
        self.points.push(std::cmp::Reverse((e, 1, bit)));
    }

    /// Takes the points before `t` in order: the time from each to the next goes to the
    /// set of types running after it.
    fn take_before(&mut self, t: i64) {
        while let Some(&std::cmp::Reverse((at, dir, bit))) = self.points.peek() {
            if at >= t {
                break;
            }
            self.points.pop();
            self.sums.point(at, dir, bit);
        }
    }

    fn finish(mut self) -> [i64; 8] {
        for k in 0..3 {
            if let Some(iv) = self.mergers[k].finish() {
                self.add(iv, Self::KINDS[k].bit());
            }
        }
        self.take_before(i64::MAX);
        self.sums.sums
    }
}

/// A GPU row, its place in the file and its launches: `g.launch_ts` is the start of the last
/// host row (in file order) with its correlation, `win` that of the last such row in HTA's
/// window (for a correlation ≥ 0; see [`Ctx::placed`]).
#[derive(Debug, Clone, Copy)]
struct Placed {
    seq: u64,
    g: GpuRow,
    win: Option<i64>,
}

/// A host row with a correlation ≥ 0: the correlation, its place in the file, its start.
#[derive(Debug, Clone, Copy)]
struct Launch {
    corr: i64,
    seq: u64,
    ts: i64,
}

/// A fixed-size record of an external sort's runs.
trait Record: Copy {
    const BYTES: usize;
    fn encode(&self, out: &mut [u8]);
    fn decode(b: &[u8]) -> Self;
}

fn put(out: &mut [u8], at: usize, v: i64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

/// `None` on disk.
const NONE: i64 = i64::MIN;

impl Record for Placed {
    const BYTES: usize = 72;

    fn encode(&self, b: &mut [u8]) {
        let g = &self.g;
        for (i, v) in [
            g.ts,
            g.end,
            g.stream,
            g.corr,
            self.seq as i64,
            g.launch_ts.unwrap_or(NONE),
            self.win.unwrap_or(NONE),
        ]
        .into_iter()
        .enumerate()
        {
            put(b, 8 * i, v);
        }
        b[56..60].copy_from_slice(&g.name.to_le_bytes());
        b[60..64].copy_from_slice(&g.cat.to_le_bytes());
        b[64..68].copy_from_slice(&g.pid.to_le_bytes());
        b[68] = match g.kind {
            KernelType::Computation => 0,
            KernelType::Communication => 1,
            KernelType::Memory => 2,
            KernelType::Other => 3,
        };
    }

    fn decode(b: &[u8]) -> Self {
        let opt = |v: i64| (v != NONE).then_some(v);
        Self {
            seq: get(b, 32) as u64,
            g: GpuRow {
                ts: get(b, 0),
                end: get(b, 8),
                stream: get(b, 16),
                corr: get(b, 24),
                launch_ts: opt(get(b, 40)),
                name: get32(b, 56),
                cat: get32(b, 60),
                pid: get32(b, 64),
                kind: match b[68] {
                    0 => KernelType::Computation,
                    1 => KernelType::Communication,
                    2 => KernelType::Memory,
                    _ => KernelType::Other,
                },
            },
            win: opt(get(b, 48)),
        }
    }
}

impl Record for Launch {
    const BYTES: usize = 24;

    fn encode(&self, b: &mut [u8]) {
        put(b, 0, self.corr);
        put(b, 8, self.seq as i64);
        put(b, 16, self.ts);
    }

    fn decode(b: &[u8]) -> Self {
        Self {
            corr: get(b, 0),
            seq: get(b, 8) as u64,
            ts: get(b, 16),
        }
    }
}

/// GPU rows by `(start, end, place in the file)`: the order of the sweeps.
fn by_time(p: &Placed) -> (i64, i64, u64) {
    (p.g.ts, p.g.end, p.seq)
}

/// GPU rows by `(correlation, place)`: the order of the join with their launches.
fn by_corr(p: &Placed) -> (i64, u64) {
    (p.g.corr, p.seq)
}

fn launch_key(l: &Launch) -> (i64, u64) {
    (l.corr, l.seq)
}

/// An external merge sort: runs of `run_rows` records sorted in memory by `key`, written to
/// unnamed temporary files, merged as they are read.
struct Sorter<R, K> {
    key: fn(&R) -> K,
    run_rows: usize,
    buf: Vec<R>,
    runs: Vec<std::fs::File>,
}

impl<R: Record, K: Ord + Copy> Sorter<R, K> {
    fn new(key: fn(&R) -> K, run_rows: usize) -> Self {
        Self {
            key,
            run_rows: run_rows.max(1),
            buf: Vec::new(),
            runs: Vec::new(),
        }
    }

    fn push(&mut self, r: R) -> io::Result<()> {
        self.buf.push(r);
        if self.buf.len() >= self.run_rows {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        let key = self.key;
        self.buf.sort_unstable_by_key(key);
        let mut w = io::BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        let mut b = vec![0u8; R::BYTES];
        for r in self.buf.drain(..) {
            r.encode(&mut b);
            w.write_all(&b)?;
        }
        self.runs
            .push(w.into_inner().map_err(io::IntoInnerError::into_error)?);
        Ok(())
    }

    fn finish(mut self) -> io::Result<Sorted<R, K>> {
        if self.runs.is_empty() {
            let key = self.key;
            self.buf.sort_unstable_by_key(key);
            self.buf.shrink_to_fit();
            return Ok(Sorted::Mem(self.buf));
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        Ok(Sorted::Runs(self.runs, self.key))
    }
}

/// Records sorted, to be read in order as many times as needed.
enum Sorted<R, K> {
    /// Few enough to stay in memory.
    Mem(Vec<R>),
    /// Sorted runs on disk, merged as they are read.
    Runs(Vec<std::fs::File>, fn(&R) -> K),
}

impl<R: Record, K: Ord + Copy> Sorted<R, K> {
    /// The records in order.
    fn iter(&self) -> io::Result<Merged<'_, R, K>> {
        let (runs, key) = match self {
            Self::Mem(rows) => return Ok(Merged::Mem(rows.iter())),
            Self::Runs(runs, key) => (runs, *key),
        };
        let mut readers = Vec::with_capacity(runs.len());
        for mut file in runs {
            file.seek(io::SeekFrom::Start(0))?;
            readers.push(BufReader::with_capacity(64 << 10, file));
        }
        let mut m = Runs {
            readers,
            heads: Vec::new(),
            heap: BinaryHeap::new(),
            key,
        };
        for i in 0..m.readers.len() {
            let head = m.next_of(i)?;
            if let Some(r) = &head {
                m.heap.push(std::cmp::Reverse(((m.key)(r), i)));
            }
            m.heads.push(head);
        }
        Ok(Merged::Runs(m))
    }

    /// Calls `f` on each record in order.
    fn each(&self, mut f: impl FnMut(&R)) -> io::Result<()> {
        for r in self.iter()? {
            f(&r?);
        }
        Ok(())
    }
}

/// The runs of a [`Sorted`] being merged: each run's next record, and a heap of their keys.
struct Runs<'a, R, K> {
    readers: Vec<BufReader<&'a std::fs::File>>,
    heads: Vec<Option<R>>,
    heap: BinaryHeap<std::cmp::Reverse<(K, usize)>>,
    key: fn(&R) -> K,
}

impl<R: Record, K: Ord + Copy> Runs<'_, R, K> {
    fn next_of(&mut self, i: usize) -> io::Result<Option<R>> {
        let mut b = vec![0u8; R::BYTES];
        match self.readers[i].read_exact(&mut b) {
            Ok(()) => Ok(Some(R::decode(&b))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn pop(&mut self) -> io::Result<Option<R>> {
        let Some(std::cmp::Reverse((_, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let out = self.heads[i].take();
        let head = self.next_of(i)?;
        if let Some(r) = &head {
            self.heap.push(std::cmp::Reverse(((self.key)(r), i)));
        }
        self.heads[i] = head;
        Ok(out)
    }
}

/// The records of a [`Sorted`] in order.
enum Merged<'a, R, K> {
    Mem(std::slice::Iter<'a, R>),
    Runs(Runs<'a, R, K>),
}

impl<R: Record, K: Ord + Copy> Iterator for Merged<'_, R, K> {
    type Item = io::Result<R>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::Mem(it) => it.next().copied().map(Ok),
            Self::Runs(m) => m.pop().transpose(),
        }
    }
}

/// The GPU rows sorted by time with their launches joined on disk: a second pass over the
/// events puts the GPU rows and the host rows with a correlation in sorts by correlation,
/// then [`join_launches`] merges them.
fn joined(
    events: Source<'_>,
    rule: RowRule,
    names: &Names,
    last_step: Option<i64>,
    run_rows: usize,
) -> io::Result<Sorted<Placed, (i64, i64, u64)>> {
    let mut gpu = Sorter::new(by_corr, run_rows);
    let mut launches = Sorter::new(launch_key, run_rows);
    for (i, e) in events.events()?.enumerate() {
        let kind = |n: u32| names.kind_of(n);
        match rule.row(&e?, kind) {
            Some(Row::Gpu(g)) => gpu.push(Placed {
                seq: i as u64,
                g,
                win: None,
            })?,
            Some(Row::Cpu(c)) if c.corr >= 0 => launches.push(Launch {
                corr: c.corr,
                seq: i as u64,
                ts: c.ts,
            })?,
            _ => {}
        }
    }
    let (gpu, launches) = (gpu.finish()?, launches.finish()?);
    join_launches(&gpu, &launches, last_step, run_rows)
}

/// Each GPU row (by correlation) given its launches (by correlation), then sorted by time:
/// the join that a map of every correlation would otherwise hold in memory.
fn join_launches(
    gpu: &Sorted<Placed, (i64, u64)>,
    launches: &Sorted<Launch, (i64, u64)>,
    last_step: Option<i64>,
    run_rows: usize,
) -> io::Result<Sorted<Placed, (i64, i64, u64)>> {
    let mut out = Sorter::new(by_time, run_rows);
    let mut launches = launches.iter()?.peekable();
    // The launches of the correlation last looked up: every host row with it, in file order.
    let mut at: Option<(i64, Option<i64>, Option<i64>)> = None;
    for p in gpu.iter()? {
        let mut p = p?;
        let corr = p.g.corr;
        if corr >= 0 && at.is_none_or(|a| a.0 != corr) {
            let (mut all, mut win) = (None, None);
            while let Some(l) = launches.next_if(|l| l.as_ref().is_ok_and(|l| l.corr <= corr)) {
                let l = l?;
                if l.corr == corr {
                    all = Some(l.ts);
                    if last_step.is_some_and(|last| l.ts < last) {
                        win = Some(l.ts);
                    }
                }
            }
            if let Some(Err(_)) = launches.peek() {
                launches.next().transpose()?;
            }
            at = Some((corr, all, win));
        }
        let (all, win) = match at {
            Some((c, all, win)) if c == corr && corr >= 0 => (all, win),
            _ => (None, None),
        };
        p.g.launch_ts = all;
        p.win = win;
        out.push(p)?;
    }
    out.finish()
}
