//! Per iteration: step time, GPU busy share, and where the host was while the GPU idled.
//!
//! A step is a `ProfilerStep#N` row (PyTorch) or a step marker (TensorFlow), `[ts, end)`.
//! Inside it, the GPU's busy time is the union of its kernels, copies and sets on every
//! stream (the rows of HTA's idle breakdown), and its idle time the rest of the step. Each
//! idle interval is then charged to what the host was doing, in this order:
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

use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hta::{CUDA_WORK_CATS, GpuRow, KernelType, Rows, merge};
use crate::read::RawTrace;
use gpufeed_stats::thresholds::KERNEL_WAIT_US;

/// One step's figures: an entry of the contract's `steps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StepFigures {
    /// The step number (`ProfilerStep#N`).
    pub step: i64,
    /// Start, µs from the rank's first analysed event.
    pub start_us: f64,
    /// Step time, µs.
    pub dur_us: f64,
    /// Time with some GPU work running, µs.
    pub gpu_busy_us: f64,
    /// `gpu_busy_us` over the step, percent.
    pub gpu_busy_pct: f64,
    /// Time with a compute kernel running, µs.
    pub compute_us: f64,
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
    /// GPU rows that started in the step.
    pub kernels: usize,
    /// Host synchronisations that returned in the step.
    pub syncs: usize,
}

/// What a host row is, for the attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    Data,
    Sync,
    Launch,
}

/// A host call that launches GPU work (its duration is the launch cost).
fn is_launch(name: &str) -> bool {
    matches!(
        name,
        "cudaLaunchKernel" | "cuLaunchKernel" | "cudaLaunchKernelExC" | "cuLaunchKernelEx"
    )
}

fn host_kind(name: &str) -> Option<Host> {
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

/// The step rows of a rank: `(N, ts, end)`, `ProfilerStep#N` rows in the window.
#[must_use]
pub fn profiler_steps(rows: &Rows, t: &RawTrace) -> Vec<(i64, i64, i64)> {
    let mut steps: Vec<(i64, i64, i64)> = rows
        .cpu
        .iter()
        .filter_map(|r| {
            let n = t.symbols.name(r.name).strip_prefix("ProfilerStep#")?;
            Some((n.parse().ok()?, r.ts, r.end))
        })
        .collect();
    steps.sort_by_key(|s| s.1);
    steps
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
    // TensorFlow rows carry no category: every GPU row there is work.
    let work = |g: &GpuRow| {
        g.stream != -1
            && (idle_cats.contains(&g.cat)
                || (g.cat == crate::read::NO_CAT && g.kind != KernelType::Other))
    };
    let busy = merge(
        rows.gpu
            .iter()
            .filter(|g| work(g))
            .map(|g| (g.ts, g.end))
            .collect(),
    );
    let compute = merge(
        rows.gpu
            .iter()
            .filter(|g| work(g) && g.kind == KernelType::Computation)
            .map(|g| (g.ts, g.end))
            .collect(),
    );
    let h2d_rows: Vec<&GpuRow> = rows
        .gpu
        .iter()
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

    let mut data = Vec::new();
    let mut copy = Vec::new();
    let mut sync_ends = Vec::new();
    let mut launch_durs = Vec::new();
    for r in &rows.cpu {
        let name = t.symbols.name(r.name);
        match host_kind(name) {
            Some(Host::Data) => data.push((r.ts, r.end)),
            Some(Host::Sync) => sync_ends.push(r.end),
            Some(Host::Launch) => launch_durs.push((r.end - r.ts) as f64),
            None => {}
        }
        if r.corr >= 0 && h2d_corr.contains_key(&r.corr) {
            copy.push((r.ts, r.end));
        }
    }
    let data = merge(data);
    let copy = merge(copy);
    sync_ends.sort_unstable();
    let mut kernel_starts: Vec<i64> = rows.gpu.iter().filter(|g| work(g)).map(|g| g.ts).collect();
    kernel_starts.sort_unstable();
    let kernel_durs: Vec<f64> = rows
        .gpu
        .iter()
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
                let gap = [(a, b)];
                let d = clip(&data, a, b);
                let rest = minus(&gap, &d);
                let c = intersect(&rest, &copy);
                let rest = minus(&rest, &c);
                f.data_wait_us += len(&d) as f64;
                f.copy_wait_us += len(&c) as f64;
                let left = len(&rest) as f64;
                let synced = {
                    let i = sync_ends.partition_point(|&t| t < a);
                    sync_ends.get(i).is_some_and(|&t| t <= b)
                };
                if synced {
                    f.sync_wait_us += left;
                } else if ((b - a) as f64) < KERNEL_WAIT_US {
                    f.launch_wait_us += left;
                } else {
                    f.other_idle_us += left;
                }
            }
            f
        })
        .collect();
    (
        out,
        LaunchStats {
            kernel_median_us: median(kernel_durs),
            launch_median_us: median(launch_durs),
        },
    )
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
