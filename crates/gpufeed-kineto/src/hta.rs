//! Holistic Trace Analysis' figures, by HTA 0.5.0's own rules: rows, rounding, GPU rows,
//! the window of analysed steps, kernel types, merging, the temporal breakdown, the
//! per-stream idle-time breakdown and the kernel-type breakdown.
//!
//! Each rule below cites the HTA source it follows (paths inside the `hta` package, as
//! set out in `shared/data/kineto/README.md`); the same trace gives the same figures.
//!
//! - **Rows** (`common/trace_parser.py`, `_compress_df`): events with `dur` and `cat`,
//!   except cat `Trace`. `stream` and `correlation` from `args`, else -1.
//! - **Rounding** (`round_down_time_stamps`): when some `ts` is fractional or missing,
//!   `end = floor(ts + dur)` and `ts = ceil(ts)` in f64, for every row.
//! - **GPU rows** (`common/trace_filter.py`): `stream >= 0 && correlation >= 0`, or the
//!   name `Event Sync` / `Context Sync`; every other row is a CPU row.
//! - **Window** (`common/trace.py`, `_filter_irrelevant_gpu_kernels`): with at least two
//!   distinct `ProfilerStep` names in the folder, a rank keeps the CPU rows that start
//!   before its last ProfilerStep and the GPU rows whose correlation one of those has.
//! - **Kernel type** (`utils/utils.py`, `get_kernel_type`): from the name only.
//! - **Merging** (`merge_kernel_intervals`): sort by start; touching intervals merge.
//! - **Temporal breakdown** (`analyzers/breakdown_analysis.py`): span of the merged GPU
//!   rows with a stream, idle = span − merged length, compute = merged length of the
//!   COMPUTATION rows, non-compute = the rest; percentages rounded to 2 decimals, half to
//!   even (numpy).
//! - **Idle-time breakdown** (`_analyze_idle_time_for_stream`): per stream, events sorted
//!   by start; each gap to the previous event's end is host wait when the launch call
//!   started after that end, else kernel wait below [`KERNEL_WAIT_US`], else other.
//! - **Kernel-type breakdown** (`_get_gpu_kernel_type_time`): a sweep over the merged
//!   COMPUTATION, COMMUNICATION and MEMORY intervals labels each segment with the types
//!   running.

use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::read::{Event, NO_CAT, RawTrace};

pub use gpufeed_stats::thresholds::KERNEL_WAIT_US;

/// HTA's kernel types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KernelType {
    /// Compute kernels.
    Computation,
    /// NCCL kernels.
    Communication,
    /// Memcpy, memset, DMA.
    Memory,
    /// Anything with `Memcpy` or `Sync` in its name that is not MEMORY.
    Other,
}

impl KernelType {
    /// HTA's `get_kernel_type`: `re.match` on the name, anchored at its start.
    #[must_use]
    pub fn of(name: &str) -> Self {
        let nccl = name.starts_with("nccl") && name[4..].contains("Kernel");
        if nccl {
            Self::Communication
        } else if name.starts_with("Memcpy")
            || name.starts_with("Memset")
            || name.starts_with("dma")
        {
            Self::Memory
        } else if name.contains("Memcpy") || name.starts_with("Memset") || name.contains("Sync") {
            Self::Other
        } else {
            Self::Computation
        }
    }

    pub(crate) fn bit(self) -> u8 {
        match self {
            Self::Computation => 1,
            Self::Communication => 2,
            Self::Memory => 4,
            Self::Other => 0,
        }
    }
}

/// A GPU row after rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuRow {
    /// Start, µs.
    pub ts: i64,
    /// End, µs.
    pub end: i64,
    /// `args.stream`, -1 when absent.
    pub stream: i64,
    /// `args.correlation`.
    pub corr: i64,
    /// Name id in the rank's symbols.
    pub name: u32,
    /// Category id.
    pub cat: u32,
    /// Kernel type by name.
    pub kind: KernelType,
    /// Start of the CPU row that launched it (same correlation; the last such row in file
    /// order), when that row is in the window.
    pub launch_ts: Option<i64>,
    /// Interned process id: the device (Kineto's GPU `pid`, TensorFlow's `/device:GPU:N`).
    pub pid: u32,
}

/// A CPU row after rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuRow {
    /// Start, µs.
    pub ts: i64,
    /// End, µs.
    pub end: i64,
    /// Name id.
    pub name: u32,
    /// Category id.
    pub cat: u32,
    /// Interned thread id.
    pub tid: u32,
    /// `args.correlation`.
    pub corr: i64,
}

/// One rank's rows, split and windowed as HTA does.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    /// GPU rows in the window, in file order.
    pub gpu: Vec<GpuRow>,
    /// CPU rows in the window, in file order.
    pub cpu: Vec<CpuRow>,
    /// GPU rows in the file (before the window).
    pub gpu_in_file: usize,
    /// GPU rows the window left out (launched from the last step, or before the trace
    /// began: no launch row). HTA's figures leave them out; the per-step figures count GPU
    /// time by when it runs, whoever launched it (see [`crate::steps`]).
    pub gpu_outside: Vec<GpuRow>,
    /// Whether the window was applied.
    pub windowed: bool,
    /// Whether HTA's ns rounding was applied (see [`round_span`]).
    pub rounded: bool,
}

/// An event's `[ts, end)` in whole µs, rounded as HTA rounds rows when `round` is set.
#[must_use]
pub fn round_span(ts: f64, dur: f64, round: bool) -> (i64, i64) {
    if round {
        ((ts.ceil()) as i64, (ts + dur).floor() as i64)
    } else {
        (ts as i64, (ts + dur) as i64)
    }
}

/// Distinct names containing `ProfilerStep` over all ranks of a folder: the window needs
/// at least two.
#[must_use]
pub fn profiler_step_names(traces: &[&RawTrace]) -> usize {
    let mut names = FxHashSet::default();
    for t in traces {
        for (_, s) in t.symbols.iter() {
            if s.contains("ProfilerStep") {
                names.insert(s.to_owned());
            }
        }
    }
    names.len()
}

/// The symbol ids of the trace's ProfilerStep event names (HTA's rule: a name holding
/// `ProfilerStep`).
pub(crate) fn profiler_step_ids(t: &RawTrace) -> FxHashSet<u32> {
    t.symbols
        .iter()
        .filter(|(_, s)| s.contains("ProfilerStep"))
        .map(|(id, _)| id)
        .collect()
}

/// HTA's ns rounding can be turned off with this environment variable, as in HTA.
pub const DISABLE_ROUNDING_ENV: &str = "HTA_DISABLE_NS_ROUNDING";

/// An event as HTA's model has it: a GPU row, a CPU row, or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Row {
    Gpu(GpuRow),
    Cpu(CpuRow),
}

/// HTA's rule from an event to a row (see the module's docs): which are kept, which are
/// GPU rows, and the rounding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowRule {
    trace_cat: Option<u32>,
    event_sync: Option<u32>,
    context_sync: Option<u32>,
    /// Whether HTA's ns rounding applies (asked, and some `ts` is fractional).
    pub(crate) round: bool,
}

impl RowRule {
    pub(crate) fn of(t: &RawTrace, round: bool) -> Self {
        Self {
            trace_cat: t.symbols.get("Trace"),
            event_sync: t.symbols.get("Event Sync"),
            context_sync: t.symbols.get("Context Sync"),
            round: round && t.fractional_ts,
        }
    }

    fn kept(&self, e: &Event) -> bool {
        !(e.cat == NO_CAT || Some(e.cat) == self.trace_cat || e.ts.is_nan() || e.dur.is_nan())
    }

    fn is_gpu(&self, e: &Event) -> bool {
        (e.stream >= 0 && e.corr >= 0)
            || Some(e.name) == self.event_sync
            || Some(e.name) == self.context_sync
    }

    /// The row of `e`, if HTA keeps it; `kind` gives a GPU row's kernel type by name id.
    pub(crate) fn row(&self, e: &Event, kind: impl FnOnce(u32) -> KernelType) -> Option<Row> {
        if !self.kept(e) {
            return None;
        }
        let (ts, end) = round_span(e.ts, e.dur, self.round);
        Some(if self.is_gpu(e) {
            Row::Gpu(GpuRow {
                ts,
                end,
                stream: e.stream,
                corr: e.corr,
                name: e.name,
                cat: e.cat,
                kind: kind(e.name),
                launch_ts: None,
                pid: e.pid,
            })
        } else {
            Row::Cpu(CpuRow {
                ts,
                end,
                name: e.name,
                cat: e.cat,
                tid: e.tid,
                corr: e.corr,
            })
        })
    }
}

/// The rows of one rank (rounding, GPU/CPU split) outside any window, before [`link`] gives each GPU row its launch
/// (a map of every correlation, which the caller may build once the events are gone).
#[must_use]
pub(crate) fn unlinked_rows(t: &RawTrace, round: bool) -> Rows {
    let rule = RowRule::of(t, round);
    // Counted first, so that each vector is allocated once at its size: a doubling vector
    // holds up to twice what it needs, and the rows are the largest thing a read keeps.
    let gpu_rows = t
        .events
        .iter()
        .filter(|e| rule.kept(e) && rule.is_gpu(e))
        .count();
    let kept = t.events.iter().filter(|e| rule.kept(e)).count();
    let mut gpu = Vec::with_capacity(gpu_rows);
    let mut cpu = Vec::with_capacity(kept - gpu_rows);
    for e in &t.events {
        match rule.row(e, |n| KernelType::of(t.symbols.name(n))) {
            Some(Row::Gpu(g)) => gpu.push(g),
            Some(Row::Cpu(c)) => cpu.push(c),
            None => {}
        }
    }
    let gpu_in_file = gpu.len();
    Rows {
        gpu,
        cpu,
        gpu_in_file,
        gpu_outside: Vec::new(),
        windowed: false,
        rounded: rule.round,
    }
}

/// Gives each GPU row of `rows` (outside any window) its launch: what [`windowed`] narrows.
pub(crate) fn link(rows: &mut Rows) {
    link_launches(&mut rows.gpu, &rows.cpu);
}

/// Each GPU row's launch: the start of the last CPU row in file order with its
/// correlation, if any.
fn launch_map(cpu: &[CpuRow]) -> FxHashMap<i64, i64> {
    let mut launch: FxHashMap<i64, i64> = FxHashMap::default();
    for r in cpu {
        // The last CPU row in file order with a correlation wins.
        launch.insert(r.corr, r.ts);
    }
    launch
}

fn link_launches(gpu: &mut [GpuRow], cpu: &[CpuRow]) {
    let launch = launch_map(cpu);
    for g in gpu {
        g.launch_ts = if g.corr >= 0 {
            launch.get(&g.corr).copied()
        } else {
            None
        };
    }
}

/// HTA's window over a rank's rows (linked, outside any window): the CPU rows before the start of
/// the last ProfilerStep, and the GPU rows they launched; the others are `gpu_outside`.
/// A rank without a step keeps nothing (`ts < NaN` is false in pandas).
#[must_use]
pub fn windowed(all: Rows, t: &RawTrace) -> Rows {
    let steps = profiler_step_ids(t);
    let last = all
        .cpu
        .iter()
        .filter(|r| steps.contains(&r.name))
        .map(|r| r.ts)
        .max();
    // In place, and the rows left outside in a vector of their size: no second copy of
    // the rows at any time.
    let mut cpu = all.cpu;
    cpu.retain(|r| last.is_some_and(|l| r.ts < l));
    cpu.shrink_to_fit();
    let launch = launch_map(&cpu);
    let mut gpu = all.gpu;
    let mut gpu_outside =
        Vec::with_capacity(gpu.iter().filter(|g| !launch.contains_key(&g.corr)).count());
    gpu.retain(|g| {
        let keep = launch.contains_key(&g.corr);
        if !keep {
            gpu_outside.push(*g);
        }
        keep
    });
    gpu.shrink_to_fit();
    link_launches(&mut gpu, &cpu);
    // Launched outside the window: no launch.
    for g in &mut gpu_outside {
        g.launch_ts = None;
    }
    Rows {
        gpu,
        cpu,
        gpu_in_file: all.gpu_in_file,
        gpu_outside,
        windowed: true,
        rounded: all.rounded,
    }
}

/// Merges intervals (HTA's `merge_kernel_intervals`): touching intervals merge.
#[must_use]
pub fn merge(mut iv: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    iv.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(iv.len());
    let mut m = Merger::default();
    for (s, e) in iv {
        out.extend(m.push(s, e));
    }
    out.extend(m.finish());
    out
}

/// Intervals merged as they come by start: [`merge`]'s rule one interval at a time (the
/// streamed analysis merges rows as its sweep reaches them).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Merger {
    /// The interval still open.
    pub(crate) cur: Option<(i64, i64)>,
}

impl Merger {
    /// Adds `[s, e)` (no start before the last one's); gives the merged interval it closes.
    pub(crate) fn push(&mut self, s: i64, e: i64) -> Option<(i64, i64)> {
        match &mut self.cur {
            Some(c) if s <= c.1 => {
                c.1 = c.1.max(e);
                None
            }
            _ => self.cur.replace((s, e)),
        }
    }

    /// The interval still open.
    pub(crate) fn finish(&mut self) -> Option<(i64, i64)> {
        self.cur.take()
    }
}

fn merged_len(iv: &[(i64, i64)]) -> i64 {
    iv.iter().map(|(s, e)| e - s).sum()
}

/// numpy's `round(x, d)`: half to even.
#[must_use]
pub fn round_to(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round_ties_even() / f
}

/// Temporal breakdown of one rank: the contract's `temporal` object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Temporal {
    /// From the first GPU event's start to the last one's end, µs.
    pub span_us: f64,
    /// Time with no GPU event running, µs.
    pub idle_us: f64,
    /// Time with a compute kernel running, µs.
    pub compute_us: f64,
    /// Time with only memory, communication or other GPU work running, µs.
    pub non_compute_us: f64,
    /// `idle_us` over the span, percent, 2 decimals.
    pub idle_pct: f64,
    /// `compute_us` over the span, percent.
    pub compute_pct: f64,
    /// `non_compute_us` over the span, percent.
    pub non_compute_pct: f64,
}

/// HTA's `get_temporal_breakdown` for one rank; `None` without GPU rows.
#[must_use]
pub fn temporal(rows: &Rows) -> Option<Temporal> {
    let all: Vec<(i64, i64)> = rows
        .gpu
        .iter()
        .filter(|g| g.stream != -1)
        .map(|g| (g.ts, g.end))
        .collect();
    let merged = merge(all);
    let (first, last) = (merged.first()?.0, merged.last()?.1);
    let span = last - first;
    let idle = span - merged_len(&merged);
    let compute = merged_len(&merge(
        rows.gpu
            .iter()
            .filter(|g| g.stream != -1 && g.kind == KernelType::Computation)
            .map(|g| (g.ts, g.end))
            .collect(),
    ));
    Some(temporal_of(span, idle, compute))
}

/// The temporal breakdown from the span of the GPU rows, its idle time and its compute time.
pub(crate) fn temporal_of(span: i64, idle: i64, compute: i64) -> Temporal {
    let non_compute = span - compute - idle;
    let pct = |x: i64| {
        if span > 0 {
            round_to(100.0 * (x as f64 / span as f64), 2)
        } else {
            0.0
        }
    };
    Temporal {
        span_us: span as f64,
        idle_us: idle as f64,
        compute_us: compute as f64,
        non_compute_us: non_compute as f64,
        idle_pct: pct(idle),
        compute_pct: pct(compute),
        non_compute_pct: pct(non_compute),
    }
}

/// Idle time of one stream by cause: an entry of the contract's `idle_breakdown`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StreamIdle {
    /// CUDA stream.
    pub stream: i64,
    /// Gaps where the launch call started after the previous kernel ended: the host was
    /// late, µs.
    pub host_wait_us: f64,
    /// Gaps below [`KERNEL_WAIT_US`] with the kernel already queued: launch overhead, µs.
    pub kernel_wait_us: f64,
    /// Longer gaps with the kernel queued: waits on events or other streams, µs.
    pub other_us: f64,
    /// Events on the stream analysed.
    pub events: usize,
    /// The smallest gap (negative when events overlap), µs.
    pub min_gap_us: Option<f64>,
}

impl StreamIdle {
    /// The gap from a row that ended at `prev_end` to the next, which starts at `ts` and
    /// was launched at `launch`: host wait when the launch came after that end, else
    /// kernel wait below [`KERNEL_WAIT_US`], else other.
    pub(crate) fn gap(&mut self, prev_end: i64, ts: i64, launch: Option<i64>) {
        let gap = (ts - prev_end) as f64;
        self.min_gap_us = Some(self.min_gap_us.map_or(gap, |m: f64| m.min(gap)));
        if launch.is_some_and(|l| l > prev_end) {
            self.host_wait_us += gap;
        } else if gap < KERNEL_WAIT_US {
            self.kernel_wait_us += gap;
        } else {
            self.other_us += gap;
        }
    }
}

/// Categories of GPU rows HTA's idle-time breakdown considers (`cuda_sync` is not one):
/// CUDA's kernels, copies and sets under their old and new names ([`CUDA_WORK_CATS`]), then
/// MTIA's.
pub(crate) const IDLE_CATS: [&str; 7] = [
    "kernel",
    "Kernel",
    "gpu_memcpy",
    "Memcpy",
    "gpu_memset",
    "Memset",
    "mtia_ccp_events",
];

/// The CUDA work categories among [`IDLE_CATS`]: kernels, copies and sets.
pub(crate) const CUDA_WORK_CATS: &[&str] = IDLE_CATS.split_at(6).0;

/// HTA's `get_idle_time_breakdown` for one rank: one entry per stream, by first
/// appearance.
#[must_use]
pub fn idle_breakdown(rows: &Rows, t: &RawTrace) -> Vec<StreamIdle> {
    let cats: FxHashSet<u32> = IDLE_CATS.iter().filter_map(|c| t.symbols.get(c)).collect();
    // Each stream's rows by index (4 bytes each, not a copy of the row): the stable sort
    // keeps file order among equal starts, as a sort of the rows would.
    let mut order: Vec<i64> = Vec::new();
    let mut per: FxHashMap<i64, Vec<u32>> = FxHashMap::default();
    for (i, g) in rows.gpu.iter().enumerate() {
        if g.stream == -1 || !cats.contains(&g.cat) {
            continue;
        }
        per.entry(g.stream)
            .or_insert_with(|| {
                order.push(g.stream);
                Vec::new()
            })
            .push(i as u32);
    }
    order
        .into_iter()
        .map(|stream| {
            let mut ev = per.remove(&stream).unwrap_or_default();
            ev.sort_by_key(|&i| rows.gpu[i as usize].ts);
            let mut s = StreamIdle {
                stream,
                events: ev.len(),
                ..StreamIdle::default()
            };
            for w in ev.windows(2) {
                let (prev, cur) = (&rows.gpu[w[0] as usize], &rows.gpu[w[1] as usize]);
                s.gap(prev.end, cur.ts, cur.launch_ts);
            }
            s
        })
        .collect()
}

/// Time with a given set of kernel types running: an entry of HTA's kernel-type table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelTypeTime {
    /// `COMPUTATION`, `COMMUNICATION overlapping MEMORY`, ...
    #[serde(rename = "type")]
    pub label: String,
    /// µs.
    pub us: f64,
    /// Share of the total (of this rank's, or of all ranks' in the run's table), percent,
    /// 1 decimal.
    pub pct: f64,
}

/// HTA's `_get_gpu_kernel_type_time` for one rank: labels with a non-zero time, in
/// HTA's order of bits.
#[must_use]
pub fn kernel_types(rows: &Rows) -> Vec<KernelTypeTime> {
    let mut points: Vec<(i64, u8, u8)> = Vec::new();
    for kind in [
        KernelType::Computation,
        KernelType::Communication,
        KernelType::Memory,
    ] {
        let merged = merge(
            rows.gpu
                .iter()
                .filter(|g| g.stream != -1 && g.kind == kind)
                .map(|g| (g.ts, g.end))
                .collect(),
        );
        for (s, e) in merged {
            points.push((s, 0, kind.bit()));
            points.push((e, 1, kind.bit()));
        }
    }
    points.sort_unstable();
    let mut sums = MaskSums::default();
    for (t, dir, bit) in points {
        sums.point(t, dir, bit);
    }
    kernel_types_of(sums.sums)
}

/// HTA's kernel-type sweep over the points of each type's merged intervals, taken in order
/// (`(time, 0 start | 1 end, type bit)`; at equal times starts come first, so that a
/// zero-length interval sets and clears its bit at once): the time from each point to the
/// next goes to the set of types running after it.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct MaskSums {
    mask: u8,
    at: Option<i64>,
    /// Time with each set of types running, by mask.
    pub(crate) sums: [i64; 8],
}

impl MaskSums {
    /// The next point in order.
    pub(crate) fn point(&mut self, t: i64, dir: u8, bit: u8) {
        if let Some(prev) = self.at {
            self.sums[self.mask as usize] += t - prev;
        }
        if dir == 0 {
            self.mask |= bit;
        } else {
            self.mask &= !bit;
        }
        self.at = Some(t);
    }
}

/// The kernel-type table from the time with each set of types running (`sums[mask]`,
/// the mask's bits as [`KernelType`]'s).
pub(crate) fn kernel_types_of(sums: [i64; 8]) -> Vec<KernelTypeTime> {
    // Mask 0 is the time with none of the three running: not in HTA's table.
    let total: i64 = sums[1..].iter().sum();
    (1..8)
        .filter(|&m| sums[m] > 0)
        .map(|m| KernelTypeTime {
            label: label(m as u8),
            us: sums[m] as f64,
            pct: share_pct(sums[m] as f64, total as f64),
        })
        .collect()
}

/// `x` over `total`, percent, 1 decimal as HTA rounds its kernel-type shares; 0 when the
/// total is 0.
fn share_pct(x: f64, total: f64) -> f64 {
    if total > 0.0 {
        round_to(x / total * 100.0, 1)
    } else {
        0.0
    }
}

fn label(mask: u8) -> String {
    let names = [(1, "COMPUTATION"), (2, "COMMUNICATION"), (4, "MEMORY")];
    names
        .iter()
        .filter(|(b, _)| mask & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(" overlapping ")
}

/// HTA's public kernel-type table: per-label sums over all ranks with their share.
#[must_use]
pub fn kernel_type_totals(per_rank: &[Vec<KernelTypeTime>]) -> Vec<KernelTypeTime> {
    let mut out: Vec<KernelTypeTime> = Vec::new();
    for k in per_rank.iter().flatten() {
        match out.iter_mut().find(|o| o.label == k.label) {
            Some(o) => o.us += k.us,
            None => out.push(k.clone()),
        }
    }
    let total: f64 = out.iter().map(|k| k.us).sum();
    for k in &mut out {
        k.pct = share_pct(k.us, total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_types_by_name_as_hta() {
        assert_eq!(
            KernelType::of("ncclKernel_AllReduce"),
            KernelType::Communication
        );
        assert_eq!(KernelType::of("ncclDevKernel_X"), KernelType::Communication);
        assert_eq!(KernelType::of("nccl"), KernelType::Computation);
        assert_eq!(
            KernelType::of("Memcpy HtoD (Pinned -> Device)"),
            KernelType::Memory
        );
        assert_eq!(KernelType::of("Memset (Device)"), KernelType::Memory);
        assert_eq!(KernelType::of("dma_x"), KernelType::Memory);
        assert_eq!(KernelType::of("Event Sync"), KernelType::Other);
        assert_eq!(KernelType::of("myMemcpyKernel"), KernelType::Other);
        assert_eq!(KernelType::of("volta_sgemm"), KernelType::Computation);
    }

    #[test]
    fn merge_joins_touching() {
        assert_eq!(
            merge(vec![(5, 7), (0, 2), (2, 3), (6, 9)]),
            vec![(0, 3), (5, 9)]
        );
    }

    #[test]
    fn round_half_even() {
        assert_eq!(round_to(0.125, 2), 0.12);
        assert_eq!(round_to(39.425_000_1, 2), 39.43);
    }

    #[test]
    fn kernel_type_sweep_labels_overlap() {
        let g = |ts, end, kind| GpuRow {
            ts,
            end,
            stream: 7,
            corr: 1,
            name: 0,
            cat: 0,
            kind,
            launch_ts: None,
            pid: 0,
        };
        let rows = Rows {
            gpu: vec![
                g(0, 10, KernelType::Computation),
                g(5, 15, KernelType::Memory),
                g(20, 30, KernelType::Other),
            ],
            ..Rows::default()
        };
        let k = kernel_types(&rows);
        let find = |l: &str| k.iter().find(|x| x.label == l).map(|x| x.us);
        assert_eq!(find("COMPUTATION"), Some(5.0));
        assert_eq!(find("COMPUTATION overlapping MEMORY"), Some(5.0));
        assert_eq!(find("MEMORY"), Some(5.0));
        let t = temporal(&rows).unwrap();
        assert_eq!(
            (t.span_us, t.idle_us, t.compute_us, t.non_compute_us),
            (30.0, 5.0, 10.0, 15.0)
        );
    }
}
