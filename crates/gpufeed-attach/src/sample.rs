//! The sampling loop: py-spy reads of every training process and worker at the rate
//! asked, `/proc` CPU and I/O, and NVML over the same window.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpufeed_contract::GpuUse;
use gpufeed_telemetry::jsonl::Record;
use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::source::Source as _;
use py_spy::config::LockingStrategy;
use py_spy::{Config, Frame, PythonSpy};

use crate::procs::{self, Target};
use crate::rules;
use crate::{AttachError, Options};

/// How often the workers of each training process are listed again (DataLoader workers
/// start and end with each epoch unless `persistent_workers`).
const RESCAN: Duration = Duration::from_millis(500);
/// How often NVML is read (its per-process samples cover about a second each).
const NVML_EVERY: Duration = Duration::from_secs(1);
/// Reads of one process at one instant before its stack counts as torn. A stack changes
/// under the read far more often while the loop runs Python than while it blocks, so
/// leaving torn reads out would over-count blocked moments: 4 % of the reads of the
/// tf.data truth loop were torn once, none three times.
pub(crate) const TORN_TRIES: usize = 3;
/// The sampling thread's nice value where it may raise its priority. A sampler woken late
/// (its CPU busy with the target's compute) reads the stack after the phase it was due
/// in: on the tf.data truth loop, 0.6 ms late at p90 at nice 0 and +4 points of data wait,
/// 0.3 ms and within the sampling error at nice -10.
const SAMPLER_NICE: i32 = -10;

/// One thread's stack at one tick.
#[derive(Debug, Clone)]
pub struct ThreadSample {
    /// The tick (0, 1, ...) at which it was read.
    pub tick: u32,
    /// Python's thread id.
    pub thread_id: u64,
    /// The OS thread id, when py-spy knows it.
    pub os_thread_id: Option<u64>,
    /// The thread's name (`threading`), when known.
    pub name: Option<Arc<str>>,
    /// Whether it was on the CPU.
    pub active: bool,
    /// Whether it held the GIL (the interpreter's last holder).
    pub owns_gil: bool,
    /// Innermost first; shared between the samples of one process that saw the same stack
    /// (a loop's stacks repeat, so hours of samples hold each stack once).
    pub frames: Arc<[Frame]>,
}

/// What was read from one process.
#[derive(Debug)]
pub struct ProcRecord {
    /// Its PID.
    pub pid: u32,
    /// The training process it belongs to (workers only).
    pub parent: Option<u32>,
    /// Every thread's stack at every tick read whole.
    pub samples: Vec<ThreadSample>,
    /// Ticks at which the stacks could not be read whole.
    pub torn: usize,
    /// CPU ticks and time (s) when first and last seen.
    pub cpu: Option<((f64, u64), (f64, u64))>,
    /// `read_bytes` when first and last seen.
    pub io: Option<(u64, u64)>,
    /// Each thread's runnable nanoseconds (on the CPU or queued for it), with the time
    /// (s) read, when first and last seen: the truth that [`ProcRecord::runnable_share`]
    /// gives the samples' `active` flags to match.
    pub runnable: Option<RunnableSpan>,
    /// Whether it exited during the window.
    pub gone: bool,
    /// At the ticks where a thread sat in Keras's compiled step ([`rules::in_step`]),
    /// each OS thread's nanoseconds on a CPU during
    /// [`RUNNING_LOOK`], read right after the stacks, for the threads that ran, less TF's
    /// inter-op pool ([`TF_INTER_OP`]): Keras runs the input's `GetNext` inside its
    /// compiled step, and only the other threads tell its wait from its compute.
    pub running: HashMap<u32, Vec<(u64, u64)>>,
}

/// How long [`procs::cpu_during`] looks at the threads' CPU time: long beside the few
/// microseconds a pool worker runs between ops, short beside a step.
pub const RUNNING_LOOK: Duration = Duration::from_micros(300);

/// The name TensorFlow gives the threads of its inter-op pool (`tf_` + Eigen's
/// `Compute`). They run tf.data's own functions (a generator's hand-over, prefetching) as
/// much as the step's small ops, so their CPU time is not taken as the step's compute;
/// the step's heavy kernels run in the intra-op pool (Eigen's threads, which keep the
/// process's name) or on a GPU.
pub const TF_INTER_OP: &str = "tf_Compute";

/// Per-thread runnable nanoseconds at two times (s): first and last seen.
pub type RunnableSpan = ((f64, HashMap<u64, u64>), (f64, HashMap<u64, u64>));

impl ProcRecord {
    fn new(pid: u32, parent: Option<u32>, t: f64) -> Self {
        Self {
            pid,
            parent,
            samples: Vec::new(),
            torn: 0,
            cpu: procs::cpu_ticks(pid).map(|c| ((t, c), (t, c))),
            io: procs::read_bytes(pid).map(|b| (b, b)),
            runnable: procs::thread_runnable_ns(pid).map(|m| ((t, m.clone()), (t, m))),
            gone: false,
            running: HashMap::new(),
        }
    }

    fn update(&mut self, t: f64) {
        if let (Some((_, last)), Some(c)) = (self.cpu.as_mut(), procs::cpu_ticks(self.pid)) {
            *last = (t, c);
        }
        if let (Some((_, last)), Some(b)) = (self.io.as_mut(), procs::read_bytes(self.pid)) {
            *last = b;
        }
        if let (Some((_, last)), Some(m)) =
            (self.runnable.as_mut(), procs::thread_runnable_ns(self.pid))
        {
            *last = (t, m);
        }
    }

    /// The share of `[first seen, last seen]` during which OS thread `tid` was runnable,
    /// with the seconds it covers; `None` where the kernel keeps no schedstat or the
    /// thread was not seen twice.
    #[must_use]
    pub fn runnable_share(&self, tid: u64) -> Option<(f64, f64)> {
        let ((t0, m0), (t1, m1)) = self.runnable.as_ref()?;
        let span = t1 - t0;
        let (a, b) = (m0.get(&tid)?, m1.get(&tid)?);
        (span > 0.0).then(|| {
            (
                (b.saturating_sub(*a) as f64 * 1e-9 / span).clamp(0.0, 1.0),
                span,
            )
        })
    }

    /// Mean CPU use in cores while seen.
    #[must_use]
    pub fn cpu_cores(&self) -> f64 {
        match self.cpu {
            Some(((t0, c0), (t1, c1))) if t1 > t0 => {
                c1.saturating_sub(c0) as f64 / procs::ticks_per_s() / (t1 - t0)
            }
            _ => 0.0,
        }
    }
}

/// Everything sampled over the window.
#[derive(Debug)]
pub struct Recording {
    /// One per training process, in the target's order.
    pub ranks: Vec<ProcRecord>,
    /// Every worker seen.
    pub workers: Vec<ProcRecord>,
    /// Seconds sampled.
    pub window_s: f64,
    /// Whether every training process exited before the end.
    pub exited: bool,
    /// The Python version read (`3.11.7`).
    pub python: String,
    /// Stack reads made.
    pub reads: usize,
    /// gpufeed's CPU time over the window, s (the sampling thread).
    pub cpu_s: f64,
    /// Mean seconds between ticks.
    pub period_s: f64,
    /// How late the reads began after their instant, 90th percentile, s.
    pub late_p90_s: f64,
    /// The sampling thread's nice value (below 0 when it could raise its priority).
    pub nice: Option<i32>,
    /// Whether the sampling thread ran at real-time priority (`SCHED_FIFO`).
    pub realtime: bool,
    /// NVML readings, when NVML loaded.
    pub gpus: Option<Vec<GpuUse>>,
}

fn config() -> Config {
    Config {
        blocking: LockingStrategy::NonBlocking,
        native: false,
        ..Config::default()
    }
}

/// py-spy's error, with every cause, on one line.
fn chain(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// The error of opening a training process, in gpufeed's terms.
fn open_error(pid: u32, e: &anyhow::Error) -> AttachError {
    if !procs::exists(pid) {
        return AttachError::NoSuchProcess { pid };
    }
    let denied = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
    });
    let text = chain(e);
    if denied || text.contains("Operation not permitted") || text.contains("Permission denied") {
        return AttachError::permission(pid);
    }
    if let Some(v) = text.split("Unsupported version of Python: ").nth(1) {
        return AttachError::UnsupportedPython {
            pid,
            version: v.split_whitespace().next().unwrap_or(v).to_owned(),
        };
    }
    AttachError::Unreadable { pid, reason: text }
}

fn thread_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

struct Spied {
    spy: PythonSpy,
    rec: ProcRecord,
    /// Each distinct stack and thread name seen, held once.
    stacks: HashSet<Arc<[Frame]>>,
    names: HashSet<Arc<str>>,
    /// Whether each OS thread read is TensorFlow's inter-op pool ([`TF_INTER_OP`]).
    inter_op: HashMap<u64, bool>,
}

impl Spied {
    fn new(spy: PythonSpy, rec: ProcRecord) -> Self {
        Self {
            spy,
            rec,
            stacks: HashSet::new(),
            names: HashSet::new(),
            inter_op: HashMap::new(),
        }
    }

    /// Reads every thread's stack; `TORN_TRIES` tries at once for a stack that changed
    /// under the read. The reads made.
    fn read(&mut self, tick: u32) -> usize {
        let mut got = self.spy.get_stack_traces();
        let mut reads = 1;
        while got.is_err() && reads < TORN_TRIES && procs::exists(self.rec.pid) {
            got = self.spy.get_stack_traces();
            reads += 1;
        }
        match got {
            Ok(traces) => {
                // Only where a rule reads them: the look costs a sleep and two reads of
                // every thread, and a plain TF loop needs neither.
                let in_step = traces.iter().any(|t| {
                    rules::in_step(&t.frames, rules::KERAS_STEPS)
                        || rules::in_tf_function(&t.frames)
                });
                if in_step && let Some(r) = procs::cpu_during(self.rec.pid, RUNNING_LOOK) {
                    let pid = self.rec.pid;
                    let kernels = r
                        .into_iter()
                        .filter(|(tid, _)| {
                            !*self.inter_op.entry(*tid).or_insert_with(|| {
                                procs::thread_name(pid, *tid).as_deref() == Some(TF_INTER_OP)
                            })
                        })
                        .collect();
                    self.rec.running.insert(tick, kernels);
                }
                for t in traces {
                    let frames = intern(&mut self.stacks, t.frames.as_slice());
                    let name = t.thread_name.as_deref().map(|n| intern(&mut self.names, n));
                    self.rec.samples.push(ThreadSample {
                        tick,
                        thread_id: t.thread_id,
                        os_thread_id: t.os_thread_id,
                        name,
                        active: t.active,
                        owns_gil: t.owns_gil,
                        frames,
                    });
                }
            }
            Err(_) if !procs::exists(self.rec.pid) => self.rec.gone = true,
            // The target ran on while its frames were copied, every try: a torn stack,
            // counted.
            Err(_) => self.rec.torn += 1,
        }
        reads
    }
}

/// The shared copy of `value` in `set`, added on first sight.
fn intern<T: ?Sized + Eq + std::hash::Hash>(set: &mut HashSet<Arc<T>>, value: &T) -> Arc<T>
where
    for<'a> Arc<T>: From<&'a T>,
{
    if let Some(held) = set.get(value) {
        return Arc::clone(held);
    }
    let held = Arc::from(value);
    set.insert(Arc::clone(&held));
    held
}

/// The sampling thread's real-time priority where it may take one (root,
/// `CAP_SYS_NICE`, an `RLIMIT_RTPRIO`): `SCHED_FIFO` at the lowest level. A loop whose
/// compute runs on every core (torch's intra-op threads, as many as the cores) leaves a
/// nice -10 thread waiting for a core until the compute ends, so the reads due in it land
/// in the data wait after: on the torch 0-worker truth loop (1 ms of compute on both cores
/// between 40 ms waits), +2.6 points of data wait at nice -10, +0.2 with the target on one
/// thread. A `SCHED_FIFO` thread preempts the target's at once. Its own CPU is bounded by
/// the rate (0.3 ms a read: 3 % of a core at 100 Hz, 30 % at the 1,000 Hz limit), and the
/// kernel's real-time throttling bounds it whatever happens.
const SAMPLER_RT_PRIORITY: i32 = 1;

/// Raises the calling thread's priority, real-time ([`SAMPLER_RT_PRIORITY`]) where
/// allowed, else to [`SAMPLER_NICE`] where allowed (root, `CAP_SYS_NICE`, an
/// `RLIMIT_NICE`), and puts both back when dropped: `gpufeed.attach` runs on the caller's
/// Python thread.
struct Priority {
    before: Option<i32>,
    now: Option<i32>,
    realtime: bool,
}

impl Priority {
    fn raise() -> Self {
        let realtime = set_scheduler(libc::SCHED_FIFO, SAMPLER_RT_PRIORITY);
        // On Linux the nice value is per thread, and PID 0 names the calling thread.
        let before = rustix::process::getpriority_process(None).ok();
        let raised = before.is_some_and(|b| {
            b > SAMPLER_NICE && rustix::process::setpriority_process(None, SAMPLER_NICE).is_ok()
        });
        let now = if raised { Some(SAMPLER_NICE) } else { before };
        Self {
            before,
            now,
            realtime,
        }
    }
}

/// Sets the calling thread's scheduling policy (on Linux, `sched_setscheduler` with PID 0
/// acts on the calling thread); whether it was allowed. One FFI call by hand: the
/// `thread-priority` crate maps a normal policy's priority onto the nice value, which
/// [`Priority`] keeps itself.
#[allow(unsafe_code)]
fn set_scheduler(policy: libc::c_int, priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid `sched_param` that outlives the call, which only reads it.
    unsafe { libc::sched_setscheduler(0, policy, &raw const param) == 0 }
}

impl Drop for Priority {
    fn drop(&mut self) {
        // Lowering a priority back is always allowed; nothing to do if it fails.
        if self.realtime {
            let _ = set_scheduler(libc::SCHED_OTHER, 0);
        }
        if let (Some(b), true) = (self.before, self.now != self.before) {
            let _ = rustix::process::setpriority_process(None, b);
        }
    }
}

/// Samples `target` for the window of `opts`, or until `opts.stop` is set.
///
/// The instants form a Poisson process of the rate asked (see
/// `gpufeed_stats::sampling::poisson_gap`): a fixed grid locks onto loops whose step is
/// near a multiple of it (on the tf.data truth loop, errors from -7 to +17 points between
/// windows on a 10 ms grid; -1 to +5 with Poisson instants).
pub fn record(target: &Target, opts: &Options) -> Result<Recording, AttachError> {
    let cfg = config();
    let priority = Priority::raise();
    let start = Instant::now();
    let mut ranks = Vec::new();
    let mut python = String::new();
    for r in &target.ranks {
        let spy = PythonSpy::new(r.pid as py_spy::Pid, &cfg).map_err(|e| open_error(r.pid, &e))?;
        if python.is_empty() {
            python = spy.version.to_string();
        }
        ranks.push(Spied::new(spy, ProcRecord::new(r.pid, None, 0.0)));
    }
    let mut nvml = if opts.nvml {
        NvmlSource::open().ok().map(|s| s.watch(target.pid))
    } else {
        None
    };
    let mut nvml_out: Vec<Record> = Vec::new();
    let mut workers: Vec<Spied> = Vec::new();
    let mut tried: HashSet<u32> = HashSet::new();
    let period = Duration::from_secs_f64(1.0 / opts.rate_hz);
    let cpu0 = thread_cpu_s();
    let mut reads = 0usize;
    let mut tick: u32 = 0;
    let mut due = Duration::ZERO;
    let mut late: Vec<f32> = Vec::new();
    let mut last_scan: Option<Instant> = None;
    let mut last_nvml: Option<Instant> = None;
    let exited: bool;
    loop {
        let now = start.elapsed();
        if now >= opts.duration || opts.stopped() {
            // Stopped because the command ended (`watch`), or at the window's end: the
            // target may have exited since the last read.
            exited = ranks
                .iter()
                .all(|r| r.rec.gone || !procs::exists(r.rec.pid));
            break;
        }
        let t = now.as_secs_f64();
        if last_scan.is_none_or(|s| s.elapsed() >= RESCAN) {
            last_scan = Some(Instant::now());
            for r in ranks.iter_mut().filter(|r| !r.rec.gone) {
                r.rec.update(t);
                for w in procs::workers(r.rec.pid) {
                    if tried.insert(w) {
                        // A worker that cannot be read (exited, or not yet an interpreter)
                        // is left out; the training processes are what the verdict needs.
                        if let Ok(spy) = PythonSpy::new(w as py_spy::Pid, &cfg) {
                            workers.push(Spied::new(spy, ProcRecord::new(w, Some(r.rec.pid), t)));
                        }
                    }
                }
            }
            for w in workers.iter_mut().filter(|w| !w.rec.gone) {
                w.rec.update(t);
            }
        }
        if let Some(src) = nvml.as_mut()
            && last_nvml.is_none_or(|s| s.elapsed() >= NVML_EVERY)
        {
            last_nvml = Some(Instant::now());
            if src.poll(t, &mut nvml_out).is_err() {
                nvml = None;
            }
        }
        late.push(start.elapsed().saturating_sub(due).as_secs_f32());
        for s in ranks.iter_mut().chain(workers.iter_mut()) {
            if !s.rec.gone {
                reads += s.read(tick);
            }
        }
        if ranks.iter().all(|r| r.rec.gone) {
            exited = true;
            break;
        }
        tick += 1;
        due += period.mul_f64(gpufeed_stats::sampling::poisson_gap(fastrand::f64()));
        let elapsed = start.elapsed();
        if due > elapsed {
            std::thread::sleep(due - elapsed);
        } else {
            // Behind (a slow read): read now rather than in a burst to catch up.
            due = elapsed;
        }
    }
    let window_s = start
        .elapsed()
        .as_secs_f64()
        .min(opts.duration.as_secs_f64());
    for s in ranks.iter_mut().chain(workers.iter_mut()) {
        if !s.rec.gone {
            s.rec.update(window_s);
        }
    }
    let cpu_s = thread_cpu_s() - cpu0;
    let gpus = nvml.map(|_| gpu_use(&nvml_out));
    Ok(Recording {
        ranks: ranks.into_iter().map(|s| s.rec).collect(),
        workers: workers.into_iter().map(|s| s.rec).collect(),
        window_s,
        exited,
        python,
        reads,
        cpu_s,
        period_s: period.as_secs_f64(),
        late_p90_s: p90(&mut late),
        nice: priority.now,
        realtime: priority.realtime,
        gpus,
    })
}

/// The 90th percentile (nearest rank) of `v`, s; 0 when empty.
fn p90(v: &mut [f32]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let k = (v.len() * 9 / 10).min(v.len() - 1);
    let (_, x, _) = v.select_nth_unstable_by(k, f32::total_cmp);
    f64::from(*x)
}

/// Mean utilisation per GPU, and of the watched processes on it, over NVML's samples.
fn gpu_use(records: &[Record]) -> Vec<GpuUse> {
    let mut per: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for r in records {
        if let Record::Gpu(g) = r {
            let e = per.entry(g.gpu).or_default();
            e.0.extend(g.util);
            e.1.extend(g.proc_util);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    per.into_iter()
        // The GPUs the job used: a per-process reading above 0 on it.
        .filter(|(_, (_, p))| p.iter().any(|&x| x > 0.0))
        .map(|(index, (u, p))| GpuUse {
            index,
            util_pct: mean(&u),
            process_util_pct: mean(&p),
        })
        .collect()
}
