//! Per iteration: step time, GPU busy share, and where the host was while the GPU idled.
//!
//! A step is `[ts, end)` of its markers ([`Markers`]): PyTorch's `ProfilerStep#N` (timed on
//! the GPU by its GPU-track copy when that copy holds the step's GPU work, else the host's
//! window), DataLoader `__next__` calls without a schedule, TensorFlow's `step_num`, GPU
//! `Steps` line, Keras `train_function` or `iter_num`. Inside it, the GPU's busy time is
//! the union of its kernels, copies and sets on every stream that run inside the step,
//! **whoever launched them**: a kernel launched before the trace began, or by the step
//! before (a GPU that runs behind the CPU), is busy time, not idle. Its idle time is the
//! rest of the step. Each idle interval is then charged to what the host was doing, in
//! this order:
//!
//! 1. **data wait**: the part that overlaps the DataLoader's `__next__` (or tf.data's
//!    `GetNext`): the host was fetching the batch.
//! 2. **copy wait**: the part that overlaps a host call that issued a host-to-device copy
//!    (its GPU memcpy row has the same correlation): a copy from pageable memory blocks
//!    the host while it stages the bytes.
//! 3. **sync wait**: the rest of an interval in which a synchronisation returned
//!    (`cudaDeviceSynchronize`, `cudaStreamSynchronize`, `cudaEventSynchronize`,
//!    `aten::item`, `aten::_local_scalar_dense`): the host waited for the GPU to drain, so
//!    the GPU then idles until the host has launched new work.
//! 4. **launch wait**: the rest of an interval shorter than [`KERNEL_WAIT_US`], HTA's
//!    launch-overhead scale: short gaps between short kernels.
//! 5. **other**: the host was busy elsewhere (Python, CPU ops, the optimizer on the CPU).
//!
//! The copies themselves are GPU time: `h2d_us` is the host-to-device copy time that no
//! compute kernel overlaps, split into pageable and pinned by the memcpy kind in the row's
//! name (`Memcpy HtoD (Pageable -> Device)`).

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hta::{CUDA_WORK_CATS, CpuRow, GpuRow, KernelType, Rows, merge};
use crate::read::RawTrace;
use gpufeed_stats::thresholds::{
    COMM_STREAM_SHARE, GPU_STEP_COPY_HOLDS, KERNEL_WAIT_US, PER_OP_GAP_US,
};

/// One step's figures: an entry of the contract's `steps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StepFigures {
    /// The step number (`ProfilerStep#N`).
    pub step: i64,
    /// Start, µs from the rank's first analysed event.
    pub start_us: f64,
    /// Step time, µs.
    pub dur_us: f64,
    /// Time with some GPU work running inside the step, whoever launched it, µs.
    pub gpu_busy_us: f64,
    /// `gpu_busy_us` over the step, percent: the GPU's busy share by time.
    pub gpu_busy_pct: f64,
    /// Time with a compute kernel running, µs (communication kernels that HTA's names call
    /// computation, such as DeepEP's dispatch, are not compute).
    pub compute_us: f64,
    /// Time with a collective (NCCL/RCCL all-reduce, all-gather, all-to-all, ...) running,
    /// µs: known by its kernel's name, by the host op that launched it, or by the stream it
    /// ran on (see [`comm_rows`]).
    pub collective_us: f64,
    /// Of `collective_us`, the time with no compute kernel running beside it: exposed
    /// communication, which the step waits for; the rest is overlapped with compute, µs.
    #[serde(default)]
    pub collective_exposed_us: f64,
    /// Host-to-device copy time on the GPU that no compute overlaps, µs.
    pub h2d_us: f64,
    /// Of `h2d_us`, copies from pageable host memory, µs.
    pub h2d_pageable_us: f64,
    /// Of `h2d_us`, copies from pinned host memory, µs.
    pub h2d_pinned_us: f64,
    /// GPU idle time, µs.
    pub idle_us: f64,
    /// Idle while the host fetched the batch, µs.
    pub data_wait_us: f64,
    /// Idle while the host issued a host-to-device copy, µs.
    pub copy_wait_us: f64,
    /// Idle after a host synchronisation, µs.
    pub sync_wait_us: f64,
    /// Idle in short gaps between kernels (launch overhead), µs.
    pub launch_wait_us: f64,
    /// Idle with the host busy elsewhere, µs.
    pub other_idle_us: f64,
    /// Of `other_idle_us`, the part in gaps shorter than [`PER_OP_GAP_US`] between GPU ops:
    /// the host's per-op overhead, µs.
    pub other_idle_short_us: f64,
    /// GPU rows that started in the step (whoever launched them).
    pub kernels: usize,
    /// Host synchronisations that returned in the step.
    pub syncs: usize,
}

/// What a host row is, for the attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    Data,
    Sync,
    Launch,
}

/// The host calls that launch a CUDA kernel.
pub(crate) const CUDA_LAUNCHES: [&str; 4] = [
    "cudaLaunchKernel",
    "cuLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernelEx",
];

/// A host call that launches GPU work (its duration is the launch cost).
fn is_launch(name: &str) -> bool {
    CUDA_LAUNCHES.contains(&name)
}

pub(crate) fn host_kind(name: &str) -> Option<Host> {
    if (name.contains("DataLoader") && name.contains("__next__"))
        || name.ends_with("GetNext")
        || name.contains("IteratorGetNext")
    {
        Some(Host::Data)
    } else if matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "aten::item"
            | "aten::_local_scalar_dense"
    ) {
        Some(Host::Sync)
    } else if is_launch(name) {
        Some(Host::Launch)
    } else {
        None
    }
}

/// A host-to-device copy row, by its name (Kineto `Memcpy HtoD (...)`, TensorFlow
/// `MemcpyH2D`).
#[must_use]
pub fn is_h2d(name: &str) -> bool {
    name.starts_with("Memcpy HtoD") || name.starts_with("MemcpyH2D")
}

/// A device-to-host copy row, by its name (Kineto `Memcpy DtoH (...)`, TensorFlow
/// `MemcpyD2H`).
#[must_use]
pub fn is_d2h(name: &str) -> bool {
    name.starts_with("Memcpy DtoH") || name.starts_with("MemcpyD2H")
}

/// Whether a host-to-device copy came from pageable memory.
#[must_use]
pub fn is_pageable(name: &str) -> bool {
    name.contains("Pageable")
}

/// Sorted, merged intervals clipped to `[s, e)`.
fn clip(iv: &[(i64, i64)], s: i64, e: i64) -> Vec<(i64, i64)> {
    let from = iv.partition_point(|x| x.1 <= s);
    iv[from..]
        .iter()
        .take_while(|x| x.0 < e)
        .map(|&(a, b)| (a.max(s), b.min(e)))
        .filter(|(a, b)| b > a)
        .collect()
}

fn len(iv: &[(i64, i64)]) -> i64 {
    iv.iter().map(|(a, b)| b - a).sum()
}

/// `a` minus `b`, both sorted and merged.
fn minus(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(mut s, e) in a {
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > s {
                out.push((s, b[k].0));
            }
            s = s.max(b[k].1);
            k += 1;
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

/// Which markers delimit a rank's iterations: the report names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Markers {
    /// PyTorch's `ProfilerStep#N` on the host, each step's GPU extent taken from its copy
    /// on the GPU track (`gpu_user_annotation`, recent PyTorch): where the step's GPU work
    /// really runs.
    ProfilerStepGpu,
    /// PyTorch's `ProfilerStep#N` on the host: the step's CPU window.
    ProfilerStep,
    /// PyTorch without a schedule: one iteration from each DataLoader `__next__` to the
    /// next; the data wait is the GPU idle inside that `__next__`.
    DataloaderNext,
    /// PyTorch without a schedule or a DataLoader: one iteration from the end of each
    /// `Optimizer.step#...` to the end of the next.
    OptimizerStep,
    /// TensorFlow/JAX host events with `step_num` (`tf.profiler.experimental.Trace`,
    /// `jax.profiler.StepTraceAnnotation`, Keras `fit` on recent versions).
    StepNum,
    /// TensorFlow's `Steps` line on the GPU plane (one event per step, `group_id`): the
    /// step's GPU extent.
    TfStepsLine,
    /// Keras' `train_function` calls on the host, one per step.
    TrainFunction,
    /// TensorFlow graph-mode iterations (`iter_num`): each step from the first to the last
    /// event of its iteration.
    IterNum,
}

impl Markers {
    /// What the text report calls them.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::ProfilerStepGpu => {
                "ProfilerStep#N, each timed on the GPU by its GPU-track copy (gpu_user_annotation)"
            }
            Self::ProfilerStep => "ProfilerStep#N (the host's step window)",
            Self::DataloaderNext => {
                "DataLoader `__next__` calls (no ProfilerStep: a profile without a schedule)"
            }
            Self::OptimizerStep => {
                "`Optimizer.step#...` annotations, one iteration between the ends of two \
                 (no ProfilerStep or DataLoader: a profile without a schedule)"
            }
            Self::StepNum => "step_num markers",
            Self::TfStepsLine => "the GPU's `Steps` line (group_id)",
            Self::TrainFunction => "Keras `train_function` calls",
            Self::IterNum => "iter_num (graph-mode iterations)",
        }
    }
}

/// Kineto's category of the GPU-track copies of user annotations.
pub const GPU_ANNOTATION_CAT: &str = "gpu_user_annotation";

/// A step name's number: `ProfilerStep#N` → N.
pub(crate) fn step_number(name: &str) -> Option<i64> {
    name.strip_prefix("ProfilerStep#")?.parse().ok()
}

/// The iterations of a PyTorch rank, `(N, ts, end)` by start, and which markers gave
/// them.
///
/// `ProfilerStep#N` rows on the host (in HTA's window) are the steps; their copies on the
/// GPU track are never steps. When every step has such a copy and each copy holds at least
/// [`GPU_STEP_COPY_HOLDS`] of the GPU time of the work its step launched, the copy is the
/// step's extent: the
/// GPU's own record of when the step ran. Otherwise (older PyTorch, or a runtime that
/// records the copy as an instant, as ROCm's does) the host's window is the step, and the
/// GPU work counted in it is whatever runs inside it. Without any ProfilerStep, the
/// DataLoader's `__next__` calls mark the iterations.
#[must_use]
pub fn profiler_steps(rows: &Rows, t: &RawTrace) -> (Vec<(i64, i64, i64)>, Option<Markers>) {
    let gpu_cat = t.symbols.get(GPU_ANNOTATION_CAT);
    let mut steps: Vec<(i64, i64, i64)> = rows
        .cpu
        .iter()
        .filter(|r| Some(r.cat) != gpu_cat)
        .filter_map(|r| Some((step_number(t.symbols.name(r.name))?, r.ts, r.end)))
        .collect();
    steps.sort_by_key(|s| s.1);
    if steps.is_empty() {
        let loader = dataloader_iterations(&rows.cpu, t);
        if !loader.is_empty() {
            return (loader, Some(Markers::DataloaderNext));
        }
        let optimizer = optimizer_iterations(&rows.cpu, t);
        let markers = (!optimizer.is_empty()).then_some(Markers::OptimizerStep);
        return (optimizer, markers);
    }
    match gpu_extents(rows, t, &steps, gpu_cat) {
        Some(gpu) => (gpu, Some(Markers::ProfilerStepGpu)),
        None => (steps, Some(Markers::ProfilerStep)),
    }
}

/// The GPU-track extents of `steps`, when every step has one that holds at least
/// [`GPU_STEP_COPY_HOLDS`] of the GPU time of the work launched from the step (see
/// [`profiler_steps`]).
fn gpu_extents(
    rows: &Rows,
    t: &RawTrace,
    steps: &[(i64, i64, i64)],
    gpu_cat: Option<u32>,
) -> Option<Vec<(i64, i64, i64)>> {
    let gpu_cat = gpu_cat?;
    let mut extents: FxHashMap<i64, (i64, i64)> = FxHashMap::default();
    for e in t.events.iter().filter(|e| e.cat == gpu_cat) {
        if let Some(n) = step_number(t.symbols.name(e.name)) {
            extents.insert(n, crate::hta::round_span(e.ts, e.dur, rows.rounded));
        }
    }
    if extents.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(steps.len());
    for &(n, s, e) in steps {
        let &(gs, ge) = extents.get(&n)?;
        let launched = merge(
            rows.gpu
                .iter()
                .filter(|g| g.stream != -1 && g.launch_ts.is_some_and(|l| l >= s && l < e))
                .map(|g| (g.ts, g.end))
                .collect(),
        );
        let held = len(&clip(&launched, gs, ge));
        if (held as f64) < GPU_STEP_COPY_HOLDS * len(&launched) as f64 || ge <= gs {
            return None;
        }
        out.push((n, gs, ge));
    }
    out.sort_by_key(|s| s.1);
    Some(out)
}

/// PyTorch without a schedule: one iteration from each DataLoader `__next__` call (the
/// outermost, on any thread) to the next; the last call starts no whole iteration.
pub(crate) fn dataloader_iterations(cpu: &[CpuRow], t: &RawTrace) -> Vec<(i64, i64, i64)> {
    let mut calls: Vec<(i64, i64)> = cpu
        .iter()
        .filter(|r| {
            let n = t.symbols.name(r.name);
            n.contains("DataLoader") && n.contains("__next__")
        })
        .map(|r| (r.ts, r.end))
        .collect();
    calls.sort_unstable();
    // Nested calls of one fetch are one call.
    let mut outer: Vec<(i64, i64)> = Vec::with_capacity(calls.len());
    for c in calls {
        match outer.last() {
            Some(&(_, end)) if c.0 < end => {}
            _ => outer.push(c),
        }
    }
    outer
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i as i64 + 1, w[0].0, w[1].0))
        .collect()
}

/// PyTorch without a schedule or a DataLoader: one iteration from the end of each
/// optimizer step (`Optimizer.step#SGD.step`, which the profiler records around every
/// `optimizer.step()`) to the end of the next; the first step ends no whole iteration
/// before it.
pub(crate) fn optimizer_iterations(cpu: &[CpuRow], t: &RawTrace) -> Vec<(i64, i64, i64)> {
    // The host's annotations, not their copies on the GPU track.
    let gpu_cat = t.symbols.get(GPU_ANNOTATION_CAT);
    let mut ends: Vec<i64> = cpu
        .iter()
        .filter(|r| Some(r.cat) != gpu_cat)
        .filter(|r| t.symbols.name(r.name).starts_with("Optimizer.step#"))
        .map(|r| r.end)
        .collect();
    ends.sort_unstable();
    ends.dedup();
    ends.windows(2)
        .enumerate()
        .map(|(i, w)| (i as i64 + 1, w[0], w[1]))
        .collect()
}

/// A collective (NCCL / RCCL all-reduce, all-gather, reduce-scatter, broadcast, ...), by
/// name: NCCL's, RCCL's and MSCCL's kernels (`ncclKernel_AllReduce_...`,
/// `ncclDevKernel_Generic`), XLA's collective ops (`all-reduce.1`, `all-gather-start`,
/// `reduce-scatter`, `collective-permute`, `all-to-all`), and the kernels of communication
/// libraries that HTA's names call computation: DeepEP's dispatch and combine
/// (`deep_ep::intranode::dispatch<...>`), NVSHMEM's, Transformer Engine's userbuffers, custom
/// all-reduce kernels (`cross_device_reduce_1stage`, `oneShotAllReduceKernel`) and any kernel
/// named after an all-to-all, all-gather, all-reduce or reduce-scatter.
#[must_use]
pub fn is_collective(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl")
        || lower.contains("rccl")
        || [
            "all-reduce",
            "all-gather",
            "reduce-scatter",
            "collective-permute",
            "all-to-all",
            "collective-broadcast",
        ]
        .iter()
        .any(|op| lower.starts_with(op))
        || [
            "msccl",
            "deep_ep::",
            "nvshmem",
            "userbuffers",
            "cross_device_reduce",
            "alltoall",
            "all_to_all",
            "allgather",
            "all_gather",
            "allreduce",
            "all_reduce",
            "reducescatter",
            "reduce_scatter",
        ]
        .iter()
        .any(|op| lower.contains(op))
}

/// A host op inside which a collective's kernels are launched: PyTorch's
/// `record_param_comms` (around every c10d collective), c10d's ops (`c10d::allreduce_`,
/// `c10d::alltoall_base_`), ProcessGroupNCCL's annotations (`nccl:all_reduce`), functional
/// collectives (`_c10d_functional::all_to_all_single`), and DeepEP's buffer calls.
#[must_use]
pub fn is_comm_launcher(name: &str) -> bool {
    name == "record_param_comms"
        || [
            "c10d::",
            "nccl:",
            "_c10d_functional::",
            "c10d_functional::",
            "deep_ep::",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The GPU rows that are communication, by index into `gpu` (every GPU row, window or
/// not), found three ways:
/// 1. by the kernel's name ([`is_collective`]);
/// 2. by what launched it: a launch call (or copy) on a host thread inside a
///    [`is_comm_launcher`] op of that thread; its GPU row has the call's correlation;
/// 3. by the stream: on a stream where the rows known by 1 and 2 take at least
///    [`COMM_STREAM_SHARE`] of the work time (a stream that ProcessGroupNCCL or DeepEP keeps
///    for its collectives), the rest (the packing and copy kernels around them) is too.
#[must_use]
pub fn comm_rows(gpu: &[&GpuRow], cpu: &[CpuRow], t: &RawTrace) -> Vec<bool> {
    // Each distinct name is tested once.
    let ids = |f: fn(&str) -> bool| -> FxHashSet<u32> {
        t.symbols
            .iter()
            .filter(|(_, n)| f(n))
            .map(|(id, _)| id)
            .collect()
    };
    let (by_name, launchers) = (ids(is_collective), ids(is_comm_launcher));
    let mut comm_corr: FxHashSet<i64> = FxHashSet::default();
    if !launchers.is_empty() {
        let spans = LauncherSpans::of(
            cpu.iter()
                .filter(|r| launchers.contains(&r.name))
                .map(|r| (r.tid, r.ts, r.end)),
        );
        for r in cpu.iter().filter(|r| r.corr >= 0) {
            if spans.hold(r.tid, r.ts) {
                comm_corr.insert(r.corr);
            }
        }
    }
    let mut comm: Vec<bool> = gpu
        .iter()
        .map(|g| by_name.contains(&g.name) || (g.corr >= 0 && comm_corr.contains(&g.corr)))
        .collect();
    // (device, stream) -> (communication time, work time).
    let mut streams: FxHashMap<(u32, i64), (i64, i64)> = FxHashMap::default();
    for (g, &c) in gpu.iter().zip(&comm) {
        let e = streams.entry((g.pid, g.stream)).or_default();
        let d = (g.end - g.ts).max(0);
        e.1 += d;
        if c {
            e.0 += d;
        }
    }
    for (g, c) in gpu.iter().zip(comm.iter_mut()) {
        let (known, all) = streams[&(g.pid, g.stream)];
        if comm_stream(known, all) {
            *c = true;
        }
    }
    comm
}

/// Each host thread's spans inside a collective's launcher op, merged.
pub(crate) struct LauncherSpans(FxHashMap<u32, Vec<(i64, i64)>>);

impl LauncherSpans {
    /// From the launcher ops as `(tid, ts, end)`.
    pub(crate) fn of(ops: impl Iterator<Item = (u32, i64, i64)>) -> Self {
        let mut spans: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
        for (tid, ts, end) in ops {
            spans.entry(tid).or_default().push((ts, end));
        }
        Self(spans.into_iter().map(|(k, v)| (k, merge(v))).collect())
    }

    /// Whether thread `tid` was inside a launcher op at `ts` (ends included).
    pub(crate) fn hold(&self, tid: u32, ts: i64) -> bool {
        self.0.get(&tid).is_some_and(|iv| {
            let i = iv.partition_point(|&(_, e)| e < ts);
            iv.get(i).is_some_and(|&(s, e)| s <= ts && ts <= e)
        })
    }
}

/// Whether a stream whose known communication takes `known` of its `all` work time is a
/// communication stream (see [`comm_rows`]).
pub(crate) fn comm_stream(known: i64, all: i64) -> bool {
    known > 0 && known as f64 >= COMM_STREAM_SHARE * all as f64
}

/// Medians the launch-bound evidence quotes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct LaunchStats {
    /// Median duration of a GPU kernel, µs.
    pub kernel_median_us: Option<f64>,
    /// Median duration of a host launch call (`cudaLaunchKernel`), µs.
    pub launch_median_us: Option<f64>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    Some(gpufeed_stats::summary::percentile_sorted(&v, 0.5))
}

/// The median of values given as counts (value → how many), as [`median`] gives it over
/// the list.
pub(crate) fn median_counted(counts: &BTreeMap<i64, u64>) -> Option<f64> {
    let n: u64 = counts.values().sum();
    if n == 0 {
        return None;
    }
    // `percentile_sorted`'s rule: the values at ranks floor(h) and floor(h) + 1, h = (n-1)/2.
    let h = (n - 1) as f64 * 0.5;
    let lo = h.floor() as u64;
    let hi = (lo + 1).min(n - 1);
    let (mut at_lo, mut at_hi, mut seen) = (None, None, 0u64);
    for (&v, &c) in counts {
        seen += c;
        if at_lo.is_none() && seen > lo {
            at_lo = Some(v as f64);
        }
        if seen > hi {
            at_hi = Some(v as f64);
            break;
        }
    }
    let (a, b) = (at_lo?, at_hi?);
    Some(a + (h - lo as f64) * (b - a))
}

/// The per-step figures of one rank, and the launch medians.
#[must_use]
pub fn step_figures(
    rows: &Rows,
    t: &RawTrace,
    steps: &[(i64, i64, i64)],
    origin: i64,
) -> (Vec<StepFigures>, LaunchStats) {
    let idle_cats: Vec<u32> = CUDA_WORK_CATS
        .iter()
        .filter_map(|c| t.symbols.get(c))
        .collect();
    // Every GPU row, HTA's window or not: GPU time is placed by when it runs, so a kernel
    // launched before the trace began, or from the step before, is busy time.
    let gpu = || rows.gpu.iter().chain(&rows.gpu_outside);
    // TensorFlow rows carry no category: every GPU row there is work.
    let work = |g: &GpuRow| {
        g.stream != -1
            && (idle_cats.contains(&g.cat)
                || (g.cat == crate::read::NO_CAT && g.kind != KernelType::Other))
    };
    let busy = merge(gpu().filter(|g| work(g)).map(|g| (g.ts, g.end)).collect());
    let work_rows: Vec<&GpuRow> = gpu().filter(|g| work(g)).collect();
    let comm = comm_rows(&work_rows, &rows.cpu, t);
    let of = |keep: &dyn Fn(&GpuRow, bool) -> bool| {
        merge(
            work_rows
                .iter()
                .zip(&comm)
                .filter(|(g, c)| keep(g, **c))
                .map(|(g, _)| (g.ts, g.end))
                .collect(),
        )
    };
    let compute = of(&|g, c| g.kind == KernelType::Computation && !c);
    let collective = of(&|_, c| c);
    let h2d_rows: Vec<&GpuRow> = gpu()
        .filter(|g| work(g) && is_h2d(t.symbols.name(g.name)))
        .collect();
    let h2d_of = |pageable: bool| {
        merge(
            h2d_rows
                .iter()
                .filter(|g| is_pageable(t.symbols.name(g.name)) == pageable)
                .map(|g| (g.ts, g.end))
                .collect(),
        )
    };
    let (h2d_pageable, h2d_pinned) = (h2d_of(true), h2d_of(false));
    let h2d_corr: FxHashMap<i64, ()> = h2d_rows.iter().map(|g| (g.corr, ())).collect();
    // A device-to-host copy (`.cpu()`, `.tolist()`, `.numpy()`) returns to the host only
    // once the copy, and the work queued before it, is done: its host call is a sync.
    let d2h_corr: FxHashMap<i64, ()> = gpu()
        .filter(|g| g.corr >= 0 && is_d2h(t.symbols.name(g.name)))
        .map(|g| (g.corr, ()))
        .collect();

    let host = HostTimes::of(&rows.cpu, t, &h2d_corr, &d2h_corr);
    let sync_ends = &host.sync_ends;
    let mut kernel_starts: Vec<i64> = gpu().filter(|g| work(g)).map(|g| g.ts).collect();
    kernel_starts.sort_unstable();
    let kernel_durs: Vec<f64> = gpu()
        .filter(|g| work(g) && g.kind == KernelType::Computation)
        .map(|g| (g.end - g.ts) as f64)
        .collect();

    let out = steps
        .iter()
        .map(|&(n, s, e)| {
            let dur = (e - s).max(0);
            let busy_in = clip(&busy, s, e);
            let compute_in = clip(&compute, s, e);
            let idle = minus(&[(s, e)], &busy_in);
            let mut f = StepFigures {
                step: n,
                start_us: (s - origin) as f64,
                dur_us: dur as f64,
                gpu_busy_us: len(&busy_in) as f64,
                gpu_busy_pct: if dur > 0 {
                    100.0 * len(&busy_in) as f64 / dur as f64
                } else {
                    0.0
                },
                compute_us: len(&compute_in) as f64,
                collective_us: len(&clip(&collective, s, e)) as f64,
                collective_exposed_us: len(&minus(&clip(&collective, s, e), &compute_in)) as f64,
                h2d_pageable_us: len(&minus(&clip(&h2d_pageable, s, e), &compute_in)) as f64,
                h2d_pinned_us: len(&minus(&clip(&h2d_pinned, s, e), &compute_in)) as f64,
                idle_us: len(&idle) as f64,
                kernels: kernel_starts.partition_point(|&k| k < e)
                    - kernel_starts.partition_point(|&k| k < s),
                syncs: sync_ends.partition_point(|&k| k < e)
                    - sync_ends.partition_point(|&k| k < s),
                ..StepFigures::default()
            };
            f.h2d_us = f.h2d_pageable_us + f.h2d_pinned_us;
            for &(a, b) in &idle {
                host.charge(&mut f, a, b);
            }
            f
        })
        .collect();
    (
        out,
        LaunchStats {
            kernel_median_us: median(kernel_durs),
            launch_median_us: median_counted(&host.launch_durs),
        },
    )
}

/// Where the host was, from its rows: in the data loader, issuing host-to-device copies
/// (by correlation, `h2d`), blocked in a call that waits for the device (a sync, or a
/// device-to-host copy by correlation, `d2h`), with each such call's end, and each
/// launch call's duration.
#[derive(Debug, Default)]
pub(crate) struct HostTimes {
    data: Vec<(i64, i64)>,
    copy: Vec<(i64, i64)>,
    blocked: Vec<(i64, i64)>,
    pub(crate) sync_ends: Vec<i64>,
    /// Launch calls by duration (µs → calls): a median needs no list of every call.
    pub(crate) launch_durs: BTreeMap<i64, u64>,
}

impl HostTimes {
    fn of(
        cpu: &[CpuRow],
        t: &RawTrace,
        h2d: &FxHashMap<i64, ()>,
        d2h: &FxHashMap<i64, ()>,
    ) -> Self {
        let mut host = Self::default();
        for r in cpu {
            host.add(
                r,
                host_kind(t.symbols.name(r.name)),
                r.corr >= 0 && h2d.contains_key(&r.corr),
                r.corr >= 0 && d2h.contains_key(&r.corr),
            );
        }
        host.finish()
    }

    /// Adds a host row: `kind` is that of its name, `copies` whether it issued a
    /// host-to-device copy, `waits` whether a device-to-host copy (it returns once done).
    pub(crate) fn add(&mut self, r: &CpuRow, kind: Option<Host>, copies: bool, waits: bool) {
        match kind {
            Some(Host::Data) => self.data.push((r.ts, r.end)),
            Some(Host::Sync) => {
                self.blocked.push((r.ts, r.end));
                self.sync_ends.push(r.end);
            }
            _ if waits => {
                self.blocked.push((r.ts, r.end));
                self.sync_ends.push(r.end);
            }
            Some(Host::Launch) => *self.launch_durs.entry(r.end - r.ts).or_default() += 1,
            None => {}
        }
        if copies {
            self.copy.push((r.ts, r.end));
        }
    }

    /// Sorts and merges what [`HostTimes::add`] gathered.
    pub(crate) fn finish(mut self) -> Self {
        self.sync_ends.sort_unstable();
        self.data = merge(std::mem::take(&mut self.data));
        self.copy = merge(std::mem::take(&mut self.copy));
        self.blocked = merge(std::mem::take(&mut self.blocked));
        self
    }

    /// Charges the GPU's idle interval `[a, b)` of a step to what the host was doing (see
    /// the module's docs for the order).
    pub(crate) fn charge(&self, f: &mut StepFigures, a: i64, b: i64) {
        let gap = [(a, b)];
        let d = clip(&self.data, a, b);
        let rest = minus(&gap, &d);
        let c = intersect(&rest, &self.copy);
        let rest = minus(&rest, &c);
        // The host inside a call that waits for the device (a sync, a device-to-host
        // copy) while the GPU idles: the wait is the sync's.
        let waited = intersect(&rest, &self.blocked);
        let rest = minus(&rest, &waited);
        f.data_wait_us += len(&d) as f64;
        f.copy_wait_us += len(&c) as f64;
        f.sync_wait_us += len(&waited) as f64;
        let left = len(&rest) as f64;
        let synced = {
            let i = self.sync_ends.partition_point(|&t| t < a);
            self.sync_ends.get(i).is_some_and(|&t| t <= b)
        };
        if synced {
            f.sync_wait_us += left;
        } else if ((b - a) as f64) < KERNEL_WAIT_US {
            f.launch_wait_us += left;
        } else {
            f.other_idle_us += left;
            if ((b - a) as f64) < PER_OP_GAP_US {
                f.other_idle_short_us += left;
            }
        }
    }
}

/// `a ∩ b`, both sorted and merged.
fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for &(s, e) in a {
        out.extend(clip(b, s, e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_algebra() {
        let a = [(0, 10), (20, 30)];
        assert_eq!(
            minus(&a, &[(5, 22), (25, 26)]),
            vec![(0, 5), (22, 25), (26, 30)]
        );
        assert_eq!(clip(&a, 5, 25), vec![(5, 10), (20, 25)]);
        assert_eq!(intersect(&a, &[(8, 21)]), vec![(8, 10), (20, 21)]);
        assert_eq!(minus(&a, &[]), a.to_vec());
    }

    #[test]
    fn the_median_of_counts_is_the_median_of_the_list() {
        for list in [
            vec![5],
            vec![3, 1],
            vec![4, 4, 1, 9],
            vec![7, 2, 2, 2, 10, 3, 8],
            vec![1, 1, 1, 1, 2, 2],
            (0..100).map(|i| (i * 37) % 11).collect(),
        ] {
            let mut counts = BTreeMap::new();
            for &v in &list {
                *counts.entry(v).or_insert(0u64) += 1;
            }
            let floats = list.iter().map(|&v| v as f64).collect();
            assert_eq!(median_counted(&counts), median(floats), "{list:?}");
        }
        assert_eq!(median_counted(&BTreeMap::new()), None);
    }

    #[test]
    fn host_kinds() {
        assert_eq!(
            host_kind("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
            Some(Host::Data)
        );
        assert_eq!(host_kind("IteratorGetNext"), Some(Host::Data));
        assert_eq!(host_kind("aten::item"), Some(Host::Sync));
        assert_eq!(host_kind("cudaLaunchKernel"), Some(Host::Launch));
        assert_eq!(host_kind("aten::conv2d"), None);
        assert!(is_h2d("Memcpy HtoD (Pageable -> Device)"));
        assert!(is_pageable("Memcpy HtoD (Pageable -> Device)"));
        assert!(!is_h2d("Memcpy DtoH (Device -> Pageable)"));
    }
}
