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
//!    [`RUN_ROWS`] sorted in memory and written out, then merged.
//! 2. **Per window** (HTA's, or none), file order again for the host rows: the launch of
//!    each correlation (the one table that grows with the trace: 8 bytes per correlation,
//!    dense where the ids are), the steps, the DataLoader's and optimizer's marks, the
//!    correlations launched inside a collective's op, and where the host waited.
//! 3. **GPU rows in time order, twice per window and GPU**: first what decides the steps
//!    (whether each step's GPU-track copy holds its work) and the communication streams'
//!    shares; then one sweep that merges intervals as they come. HTA's temporal and
//!    kernel-type figures are unions' lengths (the time with exactly a set of kernel types
//!    running is an inclusion-exclusion of seven unions); each stream's idle gaps need only
//!    its previous row; each step's figures are clipped lengths of merged intervals, and its
//!    idle gaps are charged to the host as they close.
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
    self, CUDA_WORK_CATS, CpuRow, GpuRow, IDLE_CATS, KernelType, Row, RowRule, StreamIdle, Temporal,
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
use gpufeed_stats::thresholds::{COMM_STREAM_SHARE, GPU_STEP_COPY_HOLDS};

/// GPU rows sorted in memory at a time (72 bytes each in memory, 56 on disk).
pub const RUN_ROWS: usize = 1 << 19;

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
    summarize_spilled_runs(spilled, index, opts, alone, RUN_ROWS)
}

/// [`summarize_spilled`], sorting `run_rows` GPU rows in memory at a time (tests use runs of
/// a few rows, so that small traces go through the merge of runs on disk).
///
/// # Errors
///
/// As [`summarize_spilled`].
#[doc(hidden)]
pub fn summarize_spilled_runs(
    spilled: Spilled,
    index: usize,
    opts: Options,
    alone: bool,
    run_rows: usize,
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
    let lowering = if format == TraceFormat::Tensorflow {
        let mut max_corr = None;
        for e in events.events().map_err(spill_err)? {
            let corr = e.map_err(spill_err)?.corr;
            max_corr = Some(max_corr.map_or(corr, |m: i64| m.max(corr)));
        }
        Some(tf::Lowering::new(&mut t, max_corr))
    } else {
        None
    };
    let source = Source {
        file: &events,
        lowering: lowering.as_ref(),
    };
    if let Some(summary) =
        streamed(&t, source, format, index, opts, alone, run_rows).map_err(spill_err)?
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
    /// The smallest and largest correlation ≥ 0 of a host row, and how many have one.
    corr_range: Option<(i64, i64)>,
    corr_rows: u64,
    /// GPU pids with a stream, any row.
    gpu_pids: Vec<u32>,
    /// A GPU row ends more than 1 µs before it starts (a negative duration): the kernel-type
    /// sweep cannot take its points as the rows come (see [`KindSweep`]).
    wild: bool,
    /// TensorFlow's step markers.
    marks: Option<tf::Marks>,
    sorted: Sorted,
}

fn file_facts(
    t: &RawTrace,
    events: Source<'_>,
    names: &Names,
    rule: RowRule,
    run_rows: usize,
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
        corr_range: None,
        corr_rows: 0,
        gpu_pids: Vec::new(),
        wild: false,
        marks: events.lowering.is_some().then(|| tf::Marks::new(t)),
        sorted: Sorted::Mem(Vec::new()),
    };
    let mut sorter = Sorter {
        run_rows: run_rows.max(1),
        ..Sorter::default()
    };
    let mut seq = 0u64;
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
        match rule.row(&e, |n| {
            names
                .kind
                .get(n as usize)
                .copied()
                .unwrap_or(KernelType::Computation)
        }) {
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
                sorter.push(seq, g)?;
                seq += 1;
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
                }
            }
            None => {}
        }
    }
    f.fullness.steps = f.fullness.steps.max(t.step_marks.len());
    f.sorted = sorter.finish()?;
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
    run_rows: usize,
) -> io::Result<Option<FileSummary>> {
    let names = Names::of(t);
    let rule = RowRule::of(t, !opts.no_rounding);
    let facts = file_facts(t, events, &names, rule, run_rows)?;
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

    fn new(range: Option<(i64, i64)>, rows: u64) -> Self {
        let dense_len = range
            .map(|(a, b)| b - a + 1)
            .filter(|&len| len > 0 && (len as u64) <= 2 * rows + 4096)
            .unwrap_or(0);
        Self {
            base: range.map_or(0, |r| r.0),
            dense: vec![Self::ABSENT; usize::try_from(dense_len).unwrap_or(0)],
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
    launch: CorrMap,
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
        let mut spans: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
        for &(tid, ts, end) in &facts.launchers {
            if Self::in_window(window, ts) {
                spans.entry(tid).or_default().push((ts, end));
            }
        }
        let spans: FxHashMap<u32, Vec<(i64, i64)>> =
            spans.into_iter().map(|(k, v)| (k, hta::merge(v))).collect();
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
            launch: CorrMap::new(facts.corr_range, facts.corr_rows),
            origin: None,
            steps: Vec::new(),
            loader: Vec::new(),
            optimizer: Vec::new(),
            comm_corr: FxHashSet::default(),
            times: Vec::new(),
        };
        let kind_of = |n: u32| {
            names
                .kind
                .get(n as usize)
                .copied()
                .unwrap_or(KernelType::Computation)
        };
        for e in self.events.events()? {
            let Some(Row::Cpu(r)) = rule.row(&e?, kind_of) else {
                continue;
            };
            if !Self::in_window(window, r.ts) {
                continue;
            }
            side.launch.insert(r.corr, r.ts);
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
            if r.corr >= 0
                && let Some(iv) = spans.get(&r.tid)
            {
                let i = iv.partition_point(|&(_, e)| e < r.ts);
                if iv.get(i).is_some_and(|&(s, e)| s <= r.ts && r.ts <= e) {
                    side.comm_corr.insert(r.corr);
                }
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

/// Rows merged as they come by start: HTA's `merge_kernel_intervals` one row at a time.
#[derive(Debug, Default, Clone, Copy)]
struct Merger {
    cur: Option<(i64, i64)>,
}

impl Merger {
    /// Adds `[s, e)` (no start before the last one's); gives the merged interval it closes.
    fn push(&mut self, s: i64, e: i64) -> Option<(i64, i64)> {
        match &mut self.cur {
            Some(c) if s <= c.1 => {
                c.1 = c.1.max(e);
                None
            }
            _ => self.cur.replace((s, e)),
        }
    }

    /// The interval still open.
    fn finish(&mut self) -> Option<(i64, i64)> {
        self.cur.take()
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
    fn placed(host: &HostSide, window: Window, g: &GpuRow) -> (bool, Option<i64>) {
        let launch = host.launch.get(g.corr);
        let inside = window.is_none() || launch.is_some();
        (inside, launch.filter(|_| g.corr >= 0))
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
        self.facts.sorted.each(|seq, g| {
            if dev.is_some_and(|p| g.pid != p) {
                return;
            }
            let (inside, launch) = Self::placed(host, window, g);
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
            .filter(|&(_, (known, all))| {
                known > 0 && known as f64 >= COMM_STREAM_SHARE * all as f64
            })
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
            let i = &mut self.idle;
            i.events += 1;
            if let Some(prev) = self.prev_end {
                let gap = (ts - prev) as f64;
                i.min_gap_us = Some(i.min_gap_us.map_or(gap, |m: f64| m.min(gap)));
                if launch.is_some_and(|l| l > prev) {
                    i.host_wait_us += gap;
                } else if gap < hta::KERNEL_WAIT_US {
                    i.kernel_wait_us += gap;
                } else {
                    i.other_us += gap;
                }
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
        self.facts.sorted.each(|seq, g| {
            if dev.is_some_and(|p| g.pid != p) {
                return;
            }
            let (inside, launch) = Self::placed(host, window, g);
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
    mask: u8,
    at: Option<i64>,
    sums: [i64; 8],
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
            if let Some(prev) = self.at {
                self.sums[self.mask as usize] += at - prev;
            }
            if dir == 0 {
                self.mask |= bit;
            } else {
                self.mask &= !bit;
            }
            self.at = Some(at);
        }
    }

    fn finish(mut self) -> [i64; 8] {
        for k in 0..3 {
            if let Some(iv) = self.mergers[k].finish() {
                self.add(iv, Self::KINDS[k].bit());
            }
        }
        self.take_before(i64::MAX);
        self.sums
    }
}

/// Bytes of a GPU row in a sorted run.
const ROW_BYTES: usize = 56;

fn encode(seq: u64, g: &GpuRow) -> [u8; ROW_BYTES] {
    let mut b = [0u8; ROW_BYTES];
    b[0..8].copy_from_slice(&g.ts.to_le_bytes());
    b[8..16].copy_from_slice(&g.end.to_le_bytes());
    b[16..24].copy_from_slice(&g.stream.to_le_bytes());
    b[24..32].copy_from_slice(&g.corr.to_le_bytes());
    b[32..40].copy_from_slice(&seq.to_le_bytes());
    b[40..44].copy_from_slice(&g.name.to_le_bytes());
    b[44..48].copy_from_slice(&g.cat.to_le_bytes());
    b[48..52].copy_from_slice(&g.pid.to_le_bytes());
    b[52] = match g.kind {
        KernelType::Computation => 0,
        KernelType::Communication => 1,
        KernelType::Memory => 2,
        KernelType::Other => 3,
    };
    b
}

fn decode(b: &[u8; ROW_BYTES]) -> (u64, GpuRow) {
    let l = |i: usize| i64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
    let row = GpuRow {
        ts: l(0),
        end: l(8),
        stream: l(16),
        corr: l(24),
        name: u(40),
        cat: u(44),
        pid: u(48),
        kind: match b[52] {
            0 => KernelType::Computation,
            1 => KernelType::Communication,
            2 => KernelType::Memory,
            _ => KernelType::Other,
        },
        launch_ts: None,
    };
    (l(32) as u64, row)
}

/// An external merge sort of GPU rows by `(start, end, place in the file)`: runs of
/// [`RUN_ROWS`] sorted in memory, written to temporary files.
#[derive(Default)]
struct Sorter {
    run_rows: usize,
    buf: Vec<(u64, GpuRow)>,
    runs: Vec<std::fs::File>,
}

impl Sorter {
    fn push(&mut self, seq: u64, g: GpuRow) -> io::Result<()> {
        self.buf.push((seq, g));
        if self.buf.len() >= self.run_rows {
            self.spill()?;
        }
        Ok(())
    }

    fn sort(buf: &mut [(u64, GpuRow)]) {
        buf.sort_unstable_by_key(|(seq, g)| (g.ts, g.end, *seq));
    }

    fn spill(&mut self) -> io::Result<()> {
        Self::sort(&mut self.buf);
        let mut w = io::BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        for (seq, g) in self.buf.drain(..) {
            w.write_all(&encode(seq, &g))?;
        }
        self.runs
            .push(w.into_inner().map_err(io::IntoInnerError::into_error)?);
        Ok(())
    }

    fn finish(mut self) -> io::Result<Sorted> {
        if self.runs.is_empty() {
            Self::sort(&mut self.buf);
            self.buf.shrink_to_fit();
            return Ok(Sorted::Mem(self.buf));
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        Ok(Sorted::Runs(self.runs))
    }
}

/// GPU rows sorted by `(start, end, place in the file)`, to be read as many times as needed.
enum Sorted {
    /// Few enough to stay in memory.
    Mem(Vec<(u64, GpuRow)>),
    /// Sorted runs on disk, merged as they are read.
    Runs(Vec<std::fs::File>),
}

impl Sorted {
    /// Calls `f` on each row in order.
    fn each(&self, mut f: impl FnMut(u64, &GpuRow)) -> io::Result<()> {
        let runs = match self {
            Self::Mem(rows) => {
                for (seq, g) in rows {
                    f(*seq, g);
                }
                return Ok(());
            }
            Self::Runs(runs) => runs,
        };
        let mut readers = Vec::with_capacity(runs.len());
        for mut file in runs {
            file.seek(io::SeekFrom::Start(0))?;
            readers.push(BufReader::with_capacity(64 << 10, file));
        }
        let next = |r: &mut BufReader<&std::fs::File>| -> io::Result<Option<(u64, GpuRow)>> {
            let mut b = [0u8; ROW_BYTES];
            match r.read_exact(&mut b) {
                Ok(()) => Ok(Some(decode(&b))),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
                Err(e) => Err(e),
            }
        };
        let mut heads: Vec<Option<(u64, GpuRow)>> = Vec::with_capacity(readers.len());
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            let head = next(r)?;
            if let Some((seq, g)) = &head {
                heap.push(std::cmp::Reverse((g.ts, g.end, *seq, i)));
            }
            heads.push(head);
        }
        while let Some(std::cmp::Reverse((_, _, _, i))) = heap.pop() {
            if let Some((seq, g)) = heads[i].take() {
                f(seq, &g);
            }
            let head = next(&mut readers[i])?;
            if let Some((seq, g)) = &head {
                heap.push(std::cmp::Reverse((g.ts, g.end, *seq, i)));
            }
            heads[i] = head;
        }
        Ok(())
    }
}
