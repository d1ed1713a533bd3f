//! A generator of profiler traces with known truth, for the cases no real trace covers:
//! a slow DataLoader, pageable copies, sync stalls, launch-bound short kernels, a periodic
//! stall, a straggler rank; in PyTorch (Kineto) format, in TensorFlow's trace viewer
//! format, and as the `XSpace` protobuf TensorFlow's profiler writes (`*.xplane.pb`): the
//! same simulation, so the same truth, drives every format.
//!
//! The generator simulates one host thread issuing work to one GPU stream: each step
//! fetches a batch (a DataLoader `__next__` the GPU cannot overlap), copies it to the GPU
//! (a pageable copy blocks the host until it is done), launches kernels (each launch call
//! costs `launch_us` of host time, a kernel starts when both its launch and the previous
//! kernel are done), and synchronises (`aten::item`: the host waits for the GPU, then
//! spends `sync_tail_us` before its next launch). It writes the events a profiler would,
//! and tallies as it goes what each GPU gap was (the [`Truth`]): a test compares the
//! analysis of the written file against that tally and the case's expected verdict.

use std::fmt::Write as _;

use prost::Message as _;

use crate::xplane::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// PyTorch profiler (Kineto) Chrome trace.
    Kineto,
    /// TensorFlow profiler trace viewer JSON.
    TensorFlow,
    /// TensorFlow profiler `*.xplane.pb` (an `XSpace` protobuf), as its profiler writes it.
    XPlane,
}

/// One generated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Its name.
    pub name: &'static str,
    /// The verdict the analysis must give.
    pub expect: &'static str,
    /// Steps written (PyTorch: the last is outside HTA's window).
    pub steps: usize,
    /// Kernels per step.
    pub kernels: usize,
    /// Kernel duration, µs.
    pub kernel_us: f64,
    /// Host cost of one launch call, µs.
    pub launch_us: f64,
    /// Host time between launches, µs.
    pub host_gap_us: f64,
    /// DataLoader `__next__` per step, µs.
    pub data_us: f64,
    /// Host-to-device copy per step, µs (0: none).
    pub h2d_us: f64,
    /// Whether the copy is from pageable memory.
    pub pageable: bool,
    /// Synchronisations per step (evenly spread over the kernels).
    pub syncs: usize,
    /// Host time after a sync before the next launch, µs.
    pub sync_tail_us: f64,
    /// Every `n`-th step the DataLoader takes this much longer, µs.
    pub slow_every: Option<(usize, f64)>,
    /// Ranks written.
    pub ranks: usize,
    /// This rank's DataLoader takes this many times longer.
    pub straggler: Option<(usize, f64)>,
    /// This rank's kernels take this many times longer (a slower or throttling GPU).
    pub slow_compute: Option<(usize, f64)>,
    /// An all-reduce (NCCL) after each step's kernels, µs (0: none). Every rank's
    /// all-reduce ends at the same time after the step's start on the GPU: when the
    /// slowest rank's compute could end, plus this; so the others wait inside it.
    pub allreduce_us: f64,
    /// Output format.
    pub flavor: Flavor,
    /// Timestamps with nanosecond digits.
    pub float_ts: bool,
    /// Host time in the first step before its kernels, µs (0: none): warm-up such as
    /// cuDNN's autotuning.
    pub warmup_us: f64,
    /// Whether durations vary by up to 5 % (false: every rank alike to the microsecond but
    /// for what the case sets apart, as a generated job or a very steady one is).
    pub jitter: bool,
}

impl Case {
    fn base(name: &'static str, expect: &'static str) -> Self {
        Self {
            name,
            expect,
            steps: 8,
            kernels: 60,
            kernel_us: 300.0,
            launch_us: 6.0,
            host_gap_us: 4.0,
            data_us: 60.0,
            h2d_us: 0.0,
            pageable: false,
            syncs: 1,
            sync_tail_us: 20.0,
            slow_every: None,
            ranks: 1,
            straggler: None,
            slow_compute: None,
            allreduce_us: 0.0,
            flavor: Flavor::Kineto,
            float_ts: false,
            warmup_us: 0.0,
            jitter: true,
        }
    }

    /// The GPU's work is the step.
    #[must_use]
    pub fn compute_bound() -> Self {
        Self::base("compute-bound", "compute-bound")
    }

    /// A DataLoader with too few workers: 30 ms per batch against 18 ms of kernels.
    #[must_use]
    pub fn input_bound() -> Self {
        Self {
            data_us: 30_000.0,
            ..Self::base("input-bound", "input-bound")
        }
    }

    /// Pageable host-to-device copies of 12 ms a step.
    #[must_use]
    pub fn transfer_bound() -> Self {
        Self {
            h2d_us: 12_000.0,
            pageable: true,
            ..Self::base("transfer-bound", "transfer-bound")
        }
    }

    /// A `.item()` after every 3rd kernel, 400 µs of Python after each.
    #[must_use]
    pub fn sync_bound() -> Self {
        Self {
            syncs: 20,
            sync_tail_us: 400.0,
            ..Self::base("sync-bound", "sync-bound")
        }
    }

    /// 400 kernels of 4 µs per step, each launch 8 µs of host time.
    #[must_use]
    pub fn launch_bound() -> Self {
        Self {
            kernels: 400,
            kernel_us: 4.0,
            launch_us: 8.0,
            host_gap_us: 6.0,
            syncs: 0,
            ..Self::base("launch-bound", "launch-bound")
        }
    }

    /// 300 µs of Python between launches of 100 µs kernels: the host sets the pace.
    #[must_use]
    pub fn host_bound() -> Self {
        Self {
            kernel_us: 100.0,
            host_gap_us: 300.0,
            ..Self::base("host-bound", "host-bound")
        }
    }

    /// Every 4th batch arrives 7 ms late, over 40 steps.
    #[must_use]
    pub fn oscillating() -> Self {
        Self {
            steps: 41,
            slow_every: Some((4, 7_000.0)),
            ..Self::base("oscillating", "oscillating")
        }
    }

    /// Four ranks; rank 2's DataLoader is 40 times slower: the run's verdict is rank 2's
    /// (the others are compute-bound).
    #[must_use]
    pub fn straggler() -> Self {
        Self {
            ranks: 4,
            straggler: Some((2, 40.0)),
            ..Self::base("straggler", "input-bound")
        }
    }

    /// A rank well fed except every 4th step, whose batch comes 36 ms late (a slow worker
    /// in a round robin): the median step waits 2 %, every 4th lasts 3 times as long. The
    /// cycle, not the steady state, is the input stall: oscillating, with the input stall
    /// named as what cycles.
    #[must_use]
    pub fn periodic_input_stall() -> Self {
        Self {
            steps: 41,
            data_us: 360.0,
            slow_every: Some((4, 36_000.0)),
            ..Self::base("periodic-input-stall", "oscillating")
        }
    }

    /// Four ranks under an all-reduce after each step; rank 2's kernels take 1.5 times as
    /// long (a throttling GPU). The others wait for it inside their all-reduce, so every
    /// rank's step is as long: the straggler shows in its compute share, and in the others'
    /// collective wait, not in the step times.
    #[must_use]
    pub fn allreduce_straggler() -> Self {
        Self {
            ranks: 4,
            syncs: 0,
            slow_compute: Some((2, 1.5)),
            allreduce_us: 400.0,
            ..Self::base("allreduce-straggler", "compute-bound")
        }
    }

    /// The same, without jitter, and rank 2's kernels 2.2 times as long: the three others
    /// alike to the microsecond spend half their step in the all-reduce waiting for it, and
    /// each alone looks communication-bound.
    #[must_use]
    pub fn allreduce_straggler_steady() -> Self {
        Self {
            slow_compute: Some((2, 2.2)),
            jitter: false,
            name: "allreduce-straggler-steady",
            ..Self::allreduce_straggler()
        }
    }

    /// A loader 8 ms a batch against 18 ms of kernels (input-bound), after a first step
    /// that spends 4 s on the host (cuDNN's autotuning): warm-up, not the run.
    #[must_use]
    pub fn input_bound_after_warmup() -> Self {
        Self {
            data_us: 8_000.0,
            warmup_us: 4_000_000.0,
            ..Self::base("input-bound-after-warmup", "input-bound")
        }
    }

    /// Cases beyond [`Case::all`]'s, which its tests' single-rank assumptions do not fit.
    #[must_use]
    pub fn more() -> Vec<Self> {
        vec![
            Self::periodic_input_stall(),
            Self::allreduce_straggler(),
            Self::allreduce_straggler_steady(),
            Self::input_bound_after_warmup(),
        ]
    }

    /// Every case, each with the verdict it must get.
    #[must_use]
    pub fn all() -> Vec<Self> {
        vec![
            Self::compute_bound(),
            Self::input_bound(),
            Self::transfer_bound(),
            Self::sync_bound(),
            Self::launch_bound(),
            Self::host_bound(),
            Self::oscillating(),
            Self::straggler(),
        ]
    }

    /// The same case in TensorFlow's format.
    #[must_use]
    pub fn tensorflow(self) -> Self {
        Self {
            flavor: Flavor::TensorFlow,
            float_ts: true,
            ..self
        }
    }

    /// The same case as TensorFlow's `*.xplane.pb`.
    #[must_use]
    pub fn xplane(self) -> Self {
        Self {
            flavor: Flavor::XPlane,
            float_ts: false,
            ..self
        }
    }

    /// A case by its name (`input-bound`, ...), as [`Case::all`] names them.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        Self::all()
            .into_iter()
            .chain(Self::more())
            .find(|c| c.name == name)
    }
}

/// What the generator did, tallied while it wrote (window: steps before the last).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Truth {
    /// GPU gaps where the launch started after the previous GPU op ended, µs.
    pub host_wait_us: f64,
    /// Gaps below 30 µs with the op already launched, µs.
    pub kernel_wait_us: f64,
    /// Longer gaps with the op already launched, µs.
    pub other_us: f64,
    /// GPU busy time, µs.
    pub busy_us: f64,
    /// GPU span from the first op's start to the last one's end, µs.
    pub span_us: f64,
}

/// A tiny deterministic generator (xorshift64*), for jitter: no dependency for 6 lines.
struct Rng(u64, bool);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `x` times a factor in [0.95, 1.05), to the microsecond: every time the simulation
    /// computes is then an exact integer, so the truth is exact.
    fn jitter(&mut self, x: f64) -> f64 {
        if !self.1 {
            return x.round().max(1.0);
        }
        (x * (0.95 + 0.1 * self.next())).round().max(1.0)
    }
}

struct Writer {
    out: String,
    flavor: Flavor,
    float_ts: bool,
    first: bool,
    /// The planes, for [`Flavor::XPlane`]: the host's, then the GPU's.
    host: XPlane,
    gpu: XPlane,
}

/// Start of both lines of a generated xplane, ns. TensorFlow writes times from the start
/// of the profile (its lines start a few µs in), and the converter's picoseconds would
/// overflow an `i64` from an epoch like [`BASE_TS`].
const XPLANE_LINE_NS: i64 = 1_000_000;

/// A plane with one line.
fn plane(name: &str, line_id: i64, line: &str) -> XPlane {
    XPlane {
        name: name.to_owned(),
        lines: vec![XLine {
            id: line_id,
            name: line.to_owned(),
            timestamp_ns: XPLANE_LINE_NS,
            ..XLine::default()
        }],
        ..XPlane::default()
    }
}

/// Adds an event to the first line of `plane`, its name and stats' names interned in the
/// plane's metadata as TensorFlow's profiler does; times in µs (integers: see [`Rng`]).
fn push_event(plane: &mut XPlane, name: &str, ts: f64, dur: f64, stats: &[(&str, x_stat::Value)]) {
    let meta_id = match plane.event_metadata.values().find(|m| m.name == name) {
        Some(m) => m.id,
        None => {
            let id = plane.event_metadata.len() as i64 + 1;
            plane.event_metadata.insert(
                id,
                XEventMetadata {
                    id,
                    name: name.to_owned(),
                    ..XEventMetadata::default()
                },
            );
            id
        }
    };
    let mut xstats = Vec::with_capacity(stats.len());
    for (stat, value) in stats {
        let id = match plane.stat_metadata.values().find(|m| m.name == *stat) {
            Some(m) => m.id,
            None => {
                let id = plane.stat_metadata.len() as i64 + 1;
                plane.stat_metadata.insert(
                    id,
                    XStatMetadata {
                        id,
                        name: (*stat).to_owned(),
                        description: String::new(),
                    },
                );
                id
            }
        };
        xstats.push(XStat {
            metadata_id: id,
            value: Some(value.clone()),
        });
    }
    let ps = |us: f64| (us * 1e6).round() as i64;
    if let Some(line) = plane.lines.first_mut() {
        line.events.push(XEvent {
            metadata_id: meta_id,
            data: Some(x_event::Data::OffsetPs(ps(ts))),
            duration_ps: ps(dur),
            stats: xstats,
        });
    }
}

const BASE_TS: f64 = 1_700_000_000_000_000.0;

impl Writer {
    fn t(&self, x: f64) -> String {
        if self.float_ts {
            format!("{:.3}", BASE_TS + x)
        } else {
            format!("{}", (BASE_TS + x).round() as i64)
        }
    }

    fn d(&self, x: f64) -> String {
        if self.float_ts {
            format!("{x:.3}")
        } else {
            format!("{}", x.round() as i64)
        }
    }

    fn sep(&mut self) {
        if !self.first {
            self.out.push_str(",\n");
        }
        self.first = false;
    }

    /// A host event; `corr` links a launch to its GPU op.
    fn host(&mut self, name: &str, cat: &str, ts: f64, dur: f64, corr: Option<u64>) {
        if self.flavor == Flavor::XPlane {
            let stats: Vec<(&str, x_stat::Value)> = corr
                .map(|c| ("correlation_id", x_stat::Value::Uint64Value(c)))
                .into_iter()
                .collect();
            push_event(&mut self.host, name, ts, dur, &stats);
            return;
        }
        self.sep();
        let (t, d) = (self.t(ts), self.d(dur));
        let _ = match (self.flavor, corr) {
            (Flavor::Kineto, Some(c)) => write!(
                self.out,
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 100, "tid": 100, "ts": {t}, "dur": {d}, "args": {{"correlation": {c}, "External id": {c}}}}}"#
            ),
            (Flavor::Kineto, None) => write!(
                self.out,
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 100, "tid": 100, "ts": {t}, "dur": {d}, "args": {{}}}}"#
            ),
            (Flavor::TensorFlow, Some(c)) => write!(
                self.out,
                r#"{{"pid": 701, "tid": 1, "name": "{name}", "ts": {t}, "dur": {d}, "ph": "X", "args": {{"correlation_id": "{c}"}}}}"#
            ),
            (Flavor::TensorFlow, None) => write!(
                self.out,
                r#"{{"pid": 701, "tid": 1, "name": "{name}", "ts": {t}, "dur": {d}, "ph": "X"}}"#
            ),
            (Flavor::XPlane, _) => Ok(()),
        };
    }

    fn step(&mut self, n: usize, ts: f64, dur: f64) {
        match self.flavor {
            Flavor::Kineto => {
                self.host(
                    &format!("ProfilerStep#{n}"),
                    "user_annotation",
                    ts,
                    dur,
                    None,
                );
            }
            // `tf.profiler.experimental.Trace("train", step_num=N, _r=1)`: the profiler
            // records the name and the keyword arguments as stats.
            Flavor::XPlane => push_event(
                &mut self.host,
                "train",
                ts,
                dur,
                &[
                    ("step_num", x_stat::Value::Int64Value(n as i64)),
                    ("_r", x_stat::Value::Int64Value(1)),
                ],
            ),
            Flavor::TensorFlow => {
                self.sep();
                let (t, d) = (self.t(ts), self.d(dur));
                let _ = write!(
                    self.out,
                    r#"{{"pid": 701, "tid": 1, "name": "train {n}", "ts": {t}, "dur": {d}, "ph": "X", "args": {{"step_num": {n}, "group_id": {n}}}}}"#
                );
            }
        }
    }

    fn gpu(&mut self, name: &str, cat: &str, ts: f64, dur: f64, corr: u64, pageable: bool) {
        if self.flavor == Flavor::XPlane {
            // TensorFlow's GPU tracer names every host-to-device copy `MemcpyH2D` and puts the
            // memory kinds in `memcpy_details`.
            let mut stats = vec![("correlation_id", x_stat::Value::Uint64Value(corr))];
            let name = if name.starts_with("Memcpy HtoD") {
                let src = if pageable { "pageable" } else { "pinned" };
                stats.push((
                    "memcpy_details",
                    x_stat::Value::StrValue(format!("kind_src:{src} kind_dst:device")),
                ));
                "MemcpyH2D"
            } else {
                name
            };
            push_event(&mut self.gpu, name, ts, dur, &stats);
            return;
        }
        self.sep();
        let (t, d) = (self.t(ts), self.d(dur));
        let _ = match self.flavor {
            Flavor::Kineto => write!(
                self.out,
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": 7, "ts": {t}, "dur": {d}, "args": {{"device": 0, "stream": 7, "correlation": {corr}, "External id": {corr}}}}}"#
            ),
            Flavor::XPlane => Ok(()),
            Flavor::TensorFlow => {
                let name = if name.starts_with("Memcpy HtoD") {
                    "MemcpyH2D"
                } else {
                    name
                };
                let details = if pageable {
                    r#", "memcpy_details": "kind_src:pageable kind_dst:device""#
                } else {
                    ""
                };
                write!(
                    self.out,
                    r#"{{"pid": 1, "tid": 7, "name": "{name}", "ts": {t}, "dur": {d}, "ph": "X", "args": {{"correlation_id": "{corr}"{details}}}}}"#
                )
            }
        };
    }
}

/// The GPU side of the simulation: the stream's last end, the tally.
struct Gpu {
    free: f64,
    first: Option<f64>,
    truth: Truth,
}

impl Gpu {
    /// Runs an op launched at `launch` (host start of the call), ready at `ready`.
    fn run(&mut self, launch: f64, ready: f64, dur: f64, counted: bool) -> f64 {
        let start = ready.max(self.free);
        if counted {
            if self.first.is_some() {
                let gap = start - self.free;
                if launch > self.free {
                    self.truth.host_wait_us += gap;
                } else if gap < 30.0 {
                    self.truth.kernel_wait_us += gap;
                } else {
                    self.truth.other_us += gap;
                }
            }
            self.first.get_or_insert(start);
            self.truth.busy_us += dur;
            self.truth.span_us = start + dur - self.first.unwrap_or(start);
        }
        self.free = start + dur;
        start
    }
}

/// The host's kernel-launch call in each format.
fn launch_name(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::Kineto => "cudaLaunchKernel",
        Flavor::TensorFlow | Flavor::XPlane => "cuLaunchKernel",
    }
}

/// A generated trace: an xplane's bytes, or a JSON document as the text before the
/// events, the events, and the text after them.
enum Generated {
    XPlane(Vec<u8>),
    Json(String, String, String),
}

/// Simulates rank `rank` of `case`.
fn simulate(case: &Case, rank: usize) -> (Generated, Truth) {
    let mut w = Writer {
        out: String::new(),
        flavor: case.flavor,
        float_ts: case.float_ts,
        first: true,
        host: plane("/host:CPU", 1, "python"),
        gpu: plane("/device:GPU:0", 7, "Stream #7(Compute)"),
    };
    let mut rng = Rng(
        0x9E37_79B9_7F4A_7C15 ^ (rank as u64 + 1).wrapping_mul(0x1234_5678_9ABC),
        case.jitter,
    );
    let mut gpu = Gpu {
        free: 0.0,
        first: None,
        truth: Truth::default(),
    };
    let data_factor = match case.straggler {
        Some((r, f)) if r == rank => f,
        _ => 1.0,
    };
    let compute_factor = match case.slow_compute {
        Some((r, f)) if r == rank => f,
        _ => 1.0,
    };
    // When the slowest rank's compute could end, from the step's first kernel.
    let slowest_compute = case.kernels as f64
        * case.kernel_us
        * case.slow_compute.map_or(1.0, |(_, f)| f.max(1.0))
        * 1.06;
    let mut t = 1000.0;
    let mut corr = 1u64;
    let sync_every = case
        .kernels
        .checked_div(case.syncs)
        .map_or(usize::MAX, |n| n.max(1));
    for step in 0..case.steps {
        // The last step is outside HTA's window (PyTorch): simulated, not tallied.
        let counted = case.flavor != Flavor::Kineto || step + 1 < case.steps;
        let start = t;
        let mut data = rng.jitter(case.data_us * data_factor);
        if let Some((n, extra)) = case.slow_every
            && step % n == 0
        {
            data += extra;
        }
        let fetch = match case.flavor {
            Flavor::Kineto => "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            Flavor::TensorFlow | Flavor::XPlane => "IteratorGetNextOp::DoCompute",
        };
        w.host(fetch, "cpu_op", t, data, None);
        t += data;
        if step == 0 && case.warmup_us > 0.0 {
            w.host("aten::cudnn_convolution", "cpu_op", t, case.warmup_us, None);
            t += case.warmup_us;
        }
        if case.h2d_us > 0.0 {
            let dur = rng.jitter(case.h2d_us);
            let start = gpu.run(t, t + case.launch_us, dur, counted);
            let name = if case.pageable {
                "Memcpy HtoD (Pageable -> Device)"
            } else {
                "Memcpy HtoD (Pinned -> Device)"
            };
            w.gpu(name, "gpu_memcpy", start, dur, corr, case.pageable);
            // A pageable copy holds the host until the bytes are on the GPU.
            let host_end = if case.pageable {
                start + dur + 2.0
            } else {
                t + case.launch_us
            };
            w.host(
                "cudaMemcpyAsync",
                "cuda_runtime",
                t,
                host_end - t,
                Some(corr),
            );
            corr += 1;
            t = host_end + case.host_gap_us;
        }
        let mut gpu_step_start = None;
        for k in 0..case.kernels {
            let dur = rng.jitter(case.kernel_us * compute_factor);
            let start = gpu.run(t, t + case.launch_us, dur, counted);
            gpu_step_start.get_or_insert(start);
            w.gpu("volta_sgemm_128x64_nn", "kernel", start, dur, corr, false);
            w.host(
                launch_name(case.flavor),
                "cuda_runtime",
                t,
                case.launch_us,
                Some(corr),
            );
            corr += 1;
            t += case.launch_us + case.host_gap_us;
            if (k + 1) % sync_every == 0 {
                // `.item()`: the host waits for the GPU to drain.
                let end = t.max(gpu.free) + 3.0;
                w.host("aten::item", "cpu_op", t, end - t, None);
                let sync = match case.flavor {
                    Flavor::Kineto => "cudaStreamSynchronize",
                    Flavor::TensorFlow | Flavor::XPlane => "cuStreamSynchronize",
                };
                w.host(sync, "cuda_runtime", t, end - t - 1.0, None);
                t = end + case.sync_tail_us;
            }
        }
        if case.allreduce_us > 0.0 {
            // Every rank's all-reduce ends together: the others wait inside it.
            let ends = gpu_step_start.unwrap_or(t) + (slowest_compute + case.allreduce_us).round();
            let ready = (t + case.launch_us).max(gpu.free);
            let dur = (ends - ready).max(case.allreduce_us);
            let at = gpu.run(t, t + case.launch_us, dur, counted);
            w.gpu(
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                "kernel",
                at,
                dur,
                corr,
                false,
            );
            w.host(
                launch_name(case.flavor),
                "cuda_runtime",
                t,
                case.launch_us,
                Some(corr),
            );
            corr += 1;
            t += case.launch_us;
            // The loss read after the step: the host waits for the all-reduce.
            let end = t.max(gpu.free) + 3.0;
            w.host("aten::item", "cpu_op", t, end - t, None);
            t = end + case.sync_tail_us;
        }
        w.step(step + 1, start, t - start);
    }
    finish(case, rank, w, gpu.truth)
}

/// The generated trace of a rank around what `w` wrote: an XSpace of its two planes, or the
/// JSON head and tail of its flavour (with `distributedInfo` for Kineto).
fn finish(case: &Case, rank: usize, w: Writer, truth: Truth) -> (Generated, Truth) {
    let world = case.ranks;
    if case.flavor == Flavor::XPlane {
        let space = XSpace {
            planes: vec![w.gpu, w.host],
            hostnames: vec![format!("gpufeed-{}", case.name)],
            ..XSpace::default()
        };
        return (Generated::XPlane(space.encode_to_vec()), truth);
    }
    let (head, tail) = match case.flavor {
        Flavor::Kineto => (
            format!(
                "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{{\"id\": 0, \"name\": \"gpufeed synthetic GPU\"}}],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {world}}},\n  \"traceEvents\": [\n"
            ),
            format!("\n  ],\n  \"traceName\": \"{}\"\n}}\n", case.name),
        ),
        Flavor::TensorFlow | Flavor::XPlane => (
            "{\"displayTimeUnit\": \"ns\", \"metadata\": {\"highres-ticks\": true}, \"traceEvents\": [\n{\"args\": {\"name\": \"/device:GPU:0\"}, \"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1},\n{\"args\": {\"name\": \"Stream #7(Compute)\"}, \"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 7},\n{\"args\": {\"name\": \"gpufeed /host:CPU\"}, \"name\": \"process_name\", \"ph\": \"M\", \"pid\": 701},\n{\"args\": {\"name\": \"python\"}, \"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 701, \"tid\": 1},\n".to_owned(),
            "\n]}\n".to_owned(),
        ),
    };
    (Generated::Json(head, w.out, tail), truth)
}

/// Writes rank `rank` of `case`: the trace's bytes and what the generator did.
#[must_use]
pub fn generate_with_truth(case: &Case, rank: usize) -> (Vec<u8>, Truth) {
    match simulate(case, rank) {
        (Generated::XPlane(bytes), truth) => (bytes, truth),
        (Generated::Json(head, body, tail), truth) => ((head + &body + &tail).into_bytes(), truth),
    }
}

/// Writes rank `rank` of `case` to `out` without a second copy of the trace in memory (a
/// generated job of large ranks); what the generator did.
///
/// # Errors
///
/// Writing to `out` failed.
pub fn write_rank(
    case: &Case,
    rank: usize,
    out: &mut impl std::io::Write,
) -> std::io::Result<Truth> {
    let (generated, truth) = simulate(case, rank);
    match generated {
        Generated::XPlane(bytes) => out.write_all(&bytes)?,
        Generated::Json(head, body, tail) => {
            out.write_all(head.as_bytes())?;
            out.write_all(body.as_bytes())?;
            out.write_all(tail.as_bytes())?;
        }
    }
    Ok(truth)
}

/// Writes rank `rank` of `case`.
#[must_use]
pub fn generate(case: &Case, rank: usize) -> Vec<u8> {
    generate_with_truth(case, rank).0
}

/// A generated job (`gpufeed synth-job`): `ranks` ranks of about `rank_size` bytes of JSON
/// each, rank `straggler`'s kernels `slowdown` times as long (the others wait for it in
/// their all-reduce).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Ranks.
    pub ranks: usize,
    /// Bytes of JSON per rank, about.
    pub rank_size: u64,
    /// The slow rank.
    pub straggler: usize,
    /// How much longer its kernels run.
    pub slowdown: f64,
    /// Kernels per step.
    pub kernels: usize,
    /// Plain JSON instead of gzip.
    pub plain: bool,
}

/// What a generated job holds: each rank's truth and its bytes of JSON (before gzip).
#[derive(Debug, Clone, PartialEq)]
pub struct JobWritten {
    /// Steps of each rank.
    pub steps_per_rank: usize,
    /// Per rank: its truth and its JSON bytes.
    pub per_rank: Vec<(Truth, u64)>,
}

/// Writes the job `spec` into `dir` (`rank-NNNNN.pt.trace.json.gz`, or `.json` when plain),
/// a rank per core, each file whole or not at all, with no second copy of a rank in memory.
///
/// # Errors
///
/// A straggler that is not a rank, or a file that cannot be written, named.
pub fn write_job(dir: &std::path::Path, spec: &JobSpec) -> std::io::Result<JobWritten> {
    if spec.straggler >= spec.ranks {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "--straggler {} is not one of the {} rank(s)",
                spec.straggler, spec.ranks
            ),
        ));
    }
    let case = |steps: usize| Case {
        ranks: spec.ranks,
        steps,
        kernels: spec.kernels,
        slow_compute: Some((spec.straggler, spec.slowdown)),
        ..Case::allreduce_straggler_steady()
    };
    // Bytes per step from two small traces; the steps that make the size asked.
    let (two, four) = (generate(&case(2), 0).len(), generate(&case(4), 0).len());
    let per_step = ((four - two) / 2).max(1) as u64;
    let steps = ((spec.rank_size.saturating_sub(two as u64)) / per_step + 2).max(4) as usize;
    let case = case(steps);
    fs_err::create_dir_all(dir)?;
    let write = |rank: usize| -> std::io::Result<(Truth, u64)> {
        let ext = if spec.plain { "json" } else { "json.gz" };
        let path = dir.join(format!("rank-{rank:05}.pt.trace.{ext}"));
        let mut bytes = 0u64;
        let mut truth = None;
        gpufeed_fs::write_atomic_unsynced(&path, |f| {
            let file = std::io::BufWriter::new(f);
            if spec.plain {
                truth = Some(write_rank(&case, rank, &mut Counter(file, &mut bytes))?);
            } else {
                let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
                truth = Some(write_rank(&case, rank, &mut Counter(&mut gz, &mut bytes))?);
                gz.finish()?;
            }
            Ok(())
        })
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display()))
        })?;
        let truth =
            truth.ok_or_else(|| std::io::Error::other(format!("rank {rank} was not generated")))?;
        Ok((truth, bytes))
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let per_rank = crate::job::in_order(spec.ranks, cores, write)?;
    Ok(JobWritten {
        steps_per_rank: steps,
        per_rank,
    })
}

/// A writer that counts the bytes through it (a rank's JSON, before gzip).
struct Counter<'a, W>(W, &'a mut u64);

impl<W: std::io::Write> std::io::Write for Counter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        *self.1 += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
