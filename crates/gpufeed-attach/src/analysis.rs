//! From the samples to the `attach` document: the training thread of each rank, its
//! samples classified by [`crate::rules::RULES`], the workers' hottest frames, the verdict
//! (`gpufeed_stats::thresholds`), evidence and fix.

use std::collections::{HashMap, HashSet};

use gpufeed_contract::{
    Attach, AttachCost, AttachRank, AttachShares, AttachVerdict, AttachWorker, ClassLines,
    Document as _, SpeedupIfFixed, TopFrame,
};
use gpufeed_stats::sampling;
use gpufeed_stats::thresholds::{self as th, Level};
use py_spy::Frame;

use crate::Options;
use crate::procs::{self, Target};
use crate::rules::{Class, Context, Matcher, PRODUCER_FRAMES, RULES, classify_in, is_user_file};
use crate::sample::{ProcRecord, RUNNING_LOOK, Recording, TORN_TRIES, ThreadSample};

/// Fewer training-thread samples than this get no verdict.
const MIN_SAMPLES: usize = 10;
/// Lines listed per class and per worker.
const TOP: usize = 3;

/// Source lines of the target's files, read once each.
#[derive(Debug, Default)]
pub struct Sources {
    files: HashMap<(u32, String), Option<Vec<String>>>,
}

impl Sources {
    /// The trimmed text of `frame`'s line, read as process `pid` sees its files (through
    /// `/proc/PID/root` first, so that a container's paths resolve).
    pub fn line(&mut self, pid: u32, frame: &Frame) -> Option<String> {
        let lines = self
            .files
            .entry((pid, frame.filename.clone()))
            .or_insert_with(|| {
                let file = &frame.filename;
                if file.starts_with('<') {
                    return None;
                }
                fs_err::read_to_string(format!("/proc/{pid}/root{file}"))
                    .or_else(|_| fs_err::read_to_string(file))
                    .ok()
                    .map(|t| t.lines().map(|l| l.trim().to_owned()).collect())
            });
        let n = usize::try_from(frame.line).ok()?.checked_sub(1)?;
        lines.as_ref()?.get(n).cloned()
    }
}

/// A line of code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Site {
    function: String,
    file: String,
    line: u32,
}

impl Site {
    fn of(f: &Frame) -> Self {
        Self {
            function: f.name.clone(),
            file: f.filename.clone(),
            line: u32::try_from(f.line).unwrap_or(0),
        }
    }

    /// `load_audio (data.py:40)`.
    fn short(&self) -> String {
        let base = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("`{}` ({base}:{})", self.function, self.line)
    }
}

/// The innermost frame of the user's own code, else the innermost frame.
fn key_frame(frames: &[Frame]) -> Option<&Frame> {
    frames
        .iter()
        .find(|f| is_user_file(&f.filename))
        .or_else(|| frames.first())
}

/// Counts, most frequent first, as top frames with their share of `total`.
fn top(counts: &HashMap<Site, usize>, total: usize) -> Vec<TopFrame> {
    let mut v: Vec<(&Site, &usize)> = counts.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.file.cmp(&b.0.file)));
    v.into_iter()
        .take(TOP)
        .map(|(s, &n)| TopFrame {
            function: s.function.clone(),
            file: s.file.clone(),
            line: s.line,
            share: n as f64 / total.max(1) as f64,
        })
        .collect()
}

/// The training thread of a process: the main thread when the user's own code is on its
/// stack in at least half of its samples (the loop runs there, as in nearly every
/// script); else the thread whose stacks hold the user's code most often. Threads that
/// run user code for a library (tf.data's `numpy_function`, a pin-memory thread) are
/// busy too, which is why the main thread is asked first.
fn training_thread(rec: &ProcRecord) -> Option<(u64, Option<u64>, String)> {
    // Per thread: samples with user code, all samples, OS id, name.
    type Score = (usize, usize, Option<u64>, Option<std::sync::Arc<str>>);
    let mut score: HashMap<u64, Score> = HashMap::new();
    for s in &rec.samples {
        let e = score
            .entry(s.thread_id)
            .or_insert((0, 0, s.os_thread_id, s.name.clone()));
        e.1 += 1;
        if s.frames.iter().any(|f| is_user_file(&f.filename)) {
            e.0 += 1;
        }
    }
    let main = |os: Option<u64>| os == Some(u64::from(rec.pid));
    let main_holds_loop = score
        .values()
        .any(|(user, all, os, _)| main(*os) && *user * 2 >= *all && *user > 0);
    let (&id, (_, _, os, name)) = score
        .iter()
        .max_by_key(|(_, (user, _, os, _))| (main_holds_loop && main(*os), *user, main(*os)))?;
    let tid = os.map_or_else(|| format!("{id:#x}"), |t| t.to_string());
    let label = if main(*os) {
        format!("main thread (tid {tid})")
    } else {
        format!(
            "thread `{}` (tid {tid})",
            name.as_deref().unwrap_or("unnamed")
        )
    };
    Some((id, *os, label))
}

/// The classified samples of all training threads.
#[derive(Default)]
struct Tally {
    /// Samples per class, each weighted by its stratum's weight (see [`Strata`]).
    counts: HashMap<Class, f64>,
    /// Samples counted (unweighted).
    n: usize,
    /// The sum of the squared weights (Kish's effective sample size).
    weight_sq: f64,
    lines: HashMap<Class, HashMap<Site, usize>>,
    /// Weighted samples per rule that decided them ([`RULES`] index).
    rules: HashMap<usize, f64>,
    /// The loop's own `for`/`next` line in data waits.
    loop_lines: HashMap<Site, usize>,
    texts: HashMap<Site, String>,
    /// Separate runs of consecutive sync samples, and the samples in them.
    sync_runs: usize,
    sync_samples: usize,
}

impl Tally {
    fn weight(&self) -> f64 {
        self.counts.values().sum()
    }

    fn share(&self, c: Class) -> f64 {
        let w = self.weight();
        if w > 0.0 {
            self.counts.get(&c).copied().unwrap_or(0.0) / w
        } else {
            0.0
        }
    }

    fn shares(&self) -> AttachShares {
        AttachShares {
            data_wait: self.share(Class::DataWait),
            sync: self.share(Class::Sync),
            compute: self.share(Class::Compute),
            checkpoint_logging: self.share(Class::CheckpointLogging),
            other: self.share(Class::Other),
        }
    }

    /// The share of the samples decided by the [`Matcher::StepInput`] rule that says
    /// `waiting` (a wait inside Keras's compiled step) or not (undetermined).
    fn step_input(&self, waiting: bool) -> f64 {
        let w: f64 = RULES
            .iter()
            .enumerate()
            .filter(
                |(_, r)| matches!(r.matcher, Matcher::StepInput { waiting: x, .. } if x == waiting),
            )
            .filter_map(|(i, _)| self.rules.get(&i))
            .sum();
        w / self.weight().max(f64::MIN_POSITIVE)
    }

    /// The most frequent line of a class.
    fn hottest(&self, c: Class) -> Option<&Site> {
        self.lines
            .get(&c)?
            .iter()
            .max_by_key(|(s, n)| (**n, std::cmp::Reverse(s.line)))
            .map(|(s, _)| s)
    }

    fn text(&self, s: &Site) -> String {
        self.texts
            .get(s)
            .map(|t| format!(": `{t}`"))
            .unwrap_or_default()
    }
}

/// The weights that make the samples' runnable share match the kernel's.
///
/// Samples are read when gpufeed's thread gets a CPU. On a machine with every core busy
/// (workers as many as the cores, the usual DataLoader setting) it gets one soonest when
/// the training thread blocks and frees its core, so blocked moments (waiting for data) are
/// over-sampled: by 5-10 points in the truth loops with 2 busy workers on 2 cores. The
/// kernel counts how long each thread was runnable (`/proc/PID/task/TID/schedstat`: on the
/// CPU or queued for it), and py-spy flags each sample as runnable or not (the thread's
/// `R` state). Weighting each stratum so that its share of the samples is its share of the
/// time (post-stratification, as in survey sampling) removes that bias, while the stacks
/// within each stratum still say what the thread did.
#[derive(Debug, Clone, Copy)]
struct Strata {
    /// The kernel's runnable share of the thread over the window.
    truth: f64,
    /// The samples' runnable share.
    sampled: f64,
}

impl Strata {
    /// The weight of a sample: runnable or blocked.
    fn weight(self, active: bool) -> f64 {
        match self.applies() {
            false => 1.0,
            true if active => self.truth / self.sampled,
            true => (1.0 - self.truth) / (1.0 - self.sampled),
        }
    }

    /// Both strata were sampled (a weight needs samples to carry it).
    fn applies(self) -> bool {
        self.sampled > 0.0 && self.sampled < 1.0
    }
}

/// The strata of the training thread `tid` of `rec`, when the kernel counted it over at
/// least half the window.
fn strata(
    rec: &ProcRecord,
    tid: Option<u64>,
    mine: &[&ThreadSample],
    window_s: f64,
) -> Option<Strata> {
    let (truth, span) = rec.runnable_share(tid?)?;
    if span < window_s / 2.0 || mine.is_empty() {
        return None;
    }
    let sampled = mine.iter().filter(|s| s.active).count() as f64 / mine.len() as f64;
    Some(Strata { truth, sampled })
}

/// What the rest of process `rec` did at each sample's tick, for the samples of its
/// training thread `thread`: whether threads that never ran Python in the window were
/// busy, whether a Python input producer ([`PRODUCER_FRAMES`]) was making a batch, and
/// whether another thread held the GIL.
pub fn context(rec: &ProcRecord, thread: u64) -> impl Fn(&ThreadSample) -> Context + '_ {
    let python: HashSet<u64> = rec.samples.iter().filter_map(|s| s.os_thread_id).collect();
    let producing = producing(rec, thread);
    let mut gil_elsewhere: HashSet<u32> = rec
        .samples
        .iter()
        .filter(|s| s.thread_id != thread && s.owns_gil)
        .map(|s| s.tick)
        .collect();
    // A GIL held now and then beside an idle step is the producer's moment while the
    // step waits for it; held most of the time, the step may be waiting for the GIL.
    if tick_share(rec, &gil_elsewhere) < th::ATTACH_GIL_CONTENDED {
        gil_elsewhere.clear();
    }
    let any_producer = !producing.is_empty();
    // A producer idle for part of the window had its buffer full: the step did not wait.
    let starved = tick_share(rec, &producing) >= th::ATTACH_PRODUCER_BUSY;
    move |s: &ThreadSample| Context {
        // Busy for at least half the look: a kernel running, not a pool worker waking
        // between ops.
        native_on_cpu: rec.running.get(&s.tick).map(|r| {
            let ns: u64 = r
                .iter()
                .filter(|(t, _)| !python.contains(t))
                .map(|(_, ns)| ns)
                .sum();
            ns as f64 >= RUNNING_LOOK.as_nanos() as f64 / 2.0
        }),
        producer_working: any_producer.then(|| starved && producing.contains(&s.tick)),
        gil_elsewhere: gil_elsewhere.contains(&s.tick),
    }
}

/// The Python input producers beside the training thread `thread` of `rec` (tf.data's
/// `py_func` threads, a Keras enqueuer's workers: [`PRODUCER_FRAMES`]): the share of the
/// ticks at which one was making a batch, and their hottest line of the user's own code.
/// `None` where none ran.
fn producers(rec: &ProcRecord, thread: u64) -> Option<(f64, Option<Site>)> {
    let producing = producing(rec, thread);
    if producing.is_empty() {
        return None;
    }
    let mut lines: HashMap<Site, usize> = HashMap::new();
    for s in rec.samples.iter().filter(|s| s.thread_id != thread) {
        if s.frames
            .iter()
            .any(|f| PRODUCER_FRAMES.iter().any(|p| f.filename.contains(p)))
            && let Some(f) = s.frames.iter().find(|f| is_user_file(&f.filename))
        {
            *lines.entry(Site::of(f)).or_default() += 1;
        }
    }
    let hot = lines
        .into_iter()
        .max_by_key(|(s, n)| (*n, std::cmp::Reverse(s.line)))
        .map(|(s, _)| s);
    Some((tick_share(rec, &producing), hot))
}

/// What the threads beside the training thread `thread` of rank `pid` said of its input:
/// the Python producers' share of the window and hottest line, and, where the samples sat
/// in a compiled step that pulls its input (Keras's, or the user's `tf.function` given an
/// iterator: `in_step`), how that step's idle moments were read. `None`
/// where there is nothing to say.
fn producer_sentence(
    rec: &ProcRecord,
    thread: u64,
    pid: u32,
    in_step: bool,
) -> Option<(String, Option<Site>)> {
    let Some((share, hot)) = producers(rec, thread) else {
        return in_step.then(|| {
            (format!(
                "PID {pid}: the compiled step (Keras's, or a tf.function given an iterator) runs the input's GetNext inside it, and no Python producer ran beside it (the input is TF ops, run by the same threads as the step's kernels)"
            ), None)
        });
    };
    let at = hot
        .as_ref()
        .map(|s| format!(", most often at {}", s.short()))
        .unwrap_or_default();
    let mut text = format!(
        "PID {pid}: the input's Python runs beside the training thread (tf.data's py_func threads, a Keras enqueuer) and made batches at {} of the ticks{at}",
        pct(share)
    );
    if in_step {
        text.push_str(&format!(
            "; the compiled step (Keras's, or a tf.function given an iterator) runs the input's GetNext inside it, so {} (from {} on, the producer is taken to be the bottleneck)",
            if share >= th::ATTACH_PRODUCER_BUSY {
                "the producer never caught up, and a moment of the step with no TF kernel busy is a wait for it"
            } else {
                "the producer idled with its prefetch buffer full, and the step did not wait for it"
            },
            pct(th::ATTACH_PRODUCER_BUSY)
        ));
    }
    Some((text, hot))
}

/// The share of `rec`'s ticks that are in `some`.
fn tick_share(rec: &ProcRecord, some: &HashSet<u32>) -> f64 {
    let ticks: HashSet<u32> = rec.samples.iter().map(|s| s.tick).collect();
    some.len() as f64 / ticks.len().max(1) as f64
}

/// The ticks of `rec` at which a thread other than `thread` was in a Python input
/// producer's frames ([`PRODUCER_FRAMES`]), or handing a batch over: a single tick without
/// them between two with them.
///
/// Between two batches a producer leaves Python for a moment (tf.data converts the batch
/// and calls the generator again in native code): a producer that never stops was seen in
/// its frames at 86-94 % of the ticks with one thread at 200 Hz (the truth loops of
/// `python/tests/test_attach.py`), and a step idle at those ticks is still waiting for it.
/// A producer idling with its buffer full is out of Python for the whole step it waits
/// on, many ticks.
fn producing(rec: &ProcRecord, thread: u64) -> HashSet<u32> {
    let mut ticks: HashSet<u32> = rec
        .samples
        .iter()
        .filter(|s| {
            s.thread_id != thread
                && s.frames
                    .iter()
                    .any(|f| PRODUCER_FRAMES.iter().any(|p| f.filename.contains(p)))
        })
        .map(|s| s.tick)
        .collect();
    let handovers: Vec<u32> = ticks
        .iter()
        .filter(|&&t| !ticks.contains(&(t + 1)) && ticks.contains(&(t + 2)))
        .map(|&t| t + 1)
        .collect();
    ticks.extend(handovers);
    ticks
}

/// Classifies the training thread's samples of one process into `tally`; the rank's
/// own shares.
fn tally_rank(
    rec: &ProcRecord,
    (thread, tid): (u64, Option<u64>),
    window_s: f64,
    src: &mut Sources,
    tally: &mut Tally,
) -> (usize, AttachShares, Option<Strata>) {
    let mine: Vec<&ThreadSample> = rec
        .samples
        .iter()
        .filter(|s| s.thread_id == thread)
        .collect();
    let strata = strata(rec, tid, &mine, window_s);
    let context = context(rec, thread);
    let mut own = Tally::default();
    let mut last_sync_tick: Option<u32> = None;
    for s in &mine {
        let pid = rec.pid;
        let d = classify_in(&s.frames, s.active, context(s), |f| src.line(pid, f));
        let w = strata.map_or(1.0, |st| st.weight(s.active));
        for t in [&mut *tally, &mut own] {
            *t.counts.entry(d.class).or_default() += w;
            t.n += 1;
            t.weight_sq += w * w;
            if let Some(r) = d.rule {
                *t.rules.entry(r).or_default() += w;
            }
        }
        if let Some(k) = key_frame(&s.frames) {
            let site = Site::of(k);
            if let Some(text) = src.line(pid, k) {
                tally.texts.entry(site.clone()).or_insert(text);
            }
            *tally
                .lines
                .entry(d.class)
                .or_default()
                .entry(site)
                .or_default() += 1;
        }
        if d.class == Class::DataWait {
            // The loop's line: the outermost user frame running `for`/`next(`.
            let looping = s.frames.iter().rev().find(|f| {
                is_user_file(&f.filename)
                    && src
                        .line(pid, f)
                        .is_some_and(|t| t.starts_with("for ") || t.contains("next("))
            });
            if let Some(f) = looping {
                let site = Site::of(f);
                if let Some(text) = src.line(pid, f) {
                    tally.texts.entry(site.clone()).or_insert(text);
                }
                *tally.loop_lines.entry(site).or_default() += 1;
            }
        }
        if d.class == Class::Sync {
            tally.sync_samples += 1;
            if last_sync_tick.is_none_or(|t| s.tick != t + 1) {
                tally.sync_runs += 1;
            }
            last_sync_tick = Some(s.tick);
        }
    }
    (mine.len(), own.shares(), strata)
}

/// The sampling error of the shares and how the instants were drawn.
fn sampling_sentence(tally: &Tally, rec: &Recording) -> String {
    let n_eff = sampling::effective_n(tally.weight(), tally.weight_sq);
    let margin = sampling::share_margin(n_eff);
    let priority = match rec.nice {
        _ if rec.realtime => "at real-time priority (SCHED_FIFO: a read due while the target's threads hold every core runs at once)".to_owned(),
        Some(n) if n < 0 => format!("at raised priority (nice {n}; real-time priority was not allowed, so reads due while the target's threads hold every core wait for one)"),
        _ => "at normal priority (raising it needs root or CAP_SYS_NICE; on a busy machine a late read shifts samples from compute to the wait that follows)".to_owned(),
    };
    format!(
        "each share is within ±{:.0} points (95 %, {:.0} effective samples at random instants, which no loop rhythm can lock onto); reads began {} late at p90, {priority}",
        (margin * 100.0).max(1.0),
        n_eff,
        gpufeed_stats::fmt::ms(rec.late_p90_s * 1e3)
    )
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// The workers' summary, their hottest frames pooled, and the evidence sentence.
fn workers(rec: &Recording) -> (Vec<AttachWorker>, Option<(String, Option<Site>)>) {
    let mut out = Vec::new();
    let mut pooled: HashMap<Site, usize> = HashMap::new();
    let mut pooled_n = 0;
    for w in &rec.workers {
        let mut counts: HashMap<Site, usize> = HashMap::new();
        let mut n = 0;
        // The worker's own working thread, found as the training thread is: a worker's
        // helper threads (a `multiprocessing` queue's feeder, a pin-memory thread) are
        // not where its time per item goes.
        let thread = training_thread(w).map(|(id, _, _)| id);
        for s in w
            .samples
            .iter()
            .filter(|s| s.active && thread.is_none_or(|t| s.thread_id == t))
        {
            if let Some(k) = key_frame(&s.frames) {
                *counts.entry(Site::of(k)).or_default() += 1;
                *pooled.entry(Site::of(k)).or_default() += 1;
                n += 1;
            }
        }
        pooled_n += n;
        out.push(AttachWorker {
            pid: w.pid,
            parent: w.parent.unwrap_or(0),
            cpu: w.cpu_cores(),
            top_frames: top(&counts, n),
        });
    }
    if out.is_empty() {
        return (out, None);
    }
    let busy = out.iter().map(|w| w.cpu).sum::<f64>() / out.len() as f64;
    let hot = pooled
        .iter()
        .max_by_key(|(s, n)| (**n, std::cmp::Reverse(s.line)))
        .map(|(s, n)| (s.clone(), *n as f64 / pooled_n.max(1) as f64));
    let mut text = format!(
        "{} worker{}, {} busy",
        out.len(),
        if out.len() == 1 { "" } else { "s" },
        pct(busy)
    );
    if let Some((s, share)) = &hot {
        text.push_str(&format!(", {} of it in {}", pct(*share), s.short()));
    }
    (out, Some((text, hot.map(|(s, _)| s))))
}

/// Whether the syncs starve the GPU, and the sentence saying how that was decided.
fn syncs_starve(rec: &Recording, tally: &Tally) -> (bool, String) {
    if let Some(gpus) = rec.gpus.as_ref().filter(|g| !g.is_empty()) {
        let util: Vec<f64> = gpus
            .iter()
            .filter_map(|g| g.process_util_pct.or(g.util_pct))
            .collect();
        let mean = util.iter().sum::<f64>() / util.len().max(1) as f64;
        let starved = mean < th::BUSY_UTIL_PCT;
        return (
            starved,
            format!(
                "GPU reading (NVML): the job's GPUs were {mean:.0} % busy while the host waited in syncs: {}",
                if starved {
                    "the GPU idles around the syncs"
                } else {
                    "the host waits for a busy GPU (compute-bound)"
                }
            ),
        );
    }
    // A process with no GPU driver computes on the CPU: a sync waits for that computation.
    let cpu_only: Vec<u32> = rec.ranks.iter().map(|r| r.pid).collect();
    if !cpu_only.is_empty()
        && cpu_only
            .iter()
            .all(|p| procs::gpu_driver_loaded(*p) == Some(false))
    {
        return (
            false,
            "no GPU driver in the training processes (no libcuda.so or libamdhip64.so in /proc/PID/maps): they compute on the CPU, so their syncs wait for that computation (compute-bound)".to_owned(),
        );
    }
    // Runs of consecutive sync samples. Samples falling at random at a share s would
    // give runs of 1 / (1 - s) on average even if each wait were shorter than a sample
    // period; only the excess over that measures how long one wait lasts.
    let runs = tally.sync_runs.max(1) as f64;
    let mean_run = tally.sync_samples as f64 / runs;
    let total = tally.n.max(1) as f64;
    let s = (tally.sync_samples as f64 / total).min(0.99);
    let excess = mean_run - 1.0 / (1.0 - s);
    let period_ms = rec.period_s * 1000.0;
    let wait_ms = period_ms * (1.0 + excess.max(0.0));
    let per_s = tally.sync_runs as f64 / rec.window_s.max(1e-9);
    let short = excess <= 0.0 || wait_ms < th::ATTACH_SYNC_SHORT_MS;
    let starved = short && per_s >= th::ATTACH_SYNC_FREQUENT_PER_S;
    let wait_text = if excess <= 0.0 {
        format!(
            "shorter than one sample period ({period_ms:.0} ms: runs of sync samples average {mean_run:.2}, as random samples at a {:.0} % share would)",
            s * 100.0
        )
    } else {
        format!("about {wait_ms:.0} ms each (runs of sync samples average {mean_run:.2})")
    };
    (
        starved,
        format!(
            "no GPU reading: sync waits are {wait_text}, seen {per_s:.1} times per second ({}: short below {} ms and frequent from {} per second)",
            if starved {
                "short and frequent, so the GPU runs dry between steps"
            } else {
                "not short and frequent, so the GPU had work queued"
            },
            th::ATTACH_SYNC_SHORT_MS,
            th::ATTACH_SYNC_FREQUENT_PER_S
        ),
    )
}

/// Each rank's training thread, tallied into `tally` (its samples' classes and lines) with
/// the sources read into `src`; and the corrections made where the kernel's count of the
/// thread's runnable time disagrees with the samples.
fn tally_ranks(
    target: &Target,
    rec: &Recording,
    src: &mut Sources,
    tally: &mut Tally,
) -> (Vec<AttachRank>, Vec<String>) {
    let mut ranks = Vec::new();
    let mut corrections = Vec::new();
    for (r, p) in target.ranks.iter().zip(&rec.ranks) {
        let (label, n, shares) = match training_thread(p) {
            Some((thread, tid, label)) => {
                let (n, shares, st) = tally_rank(p, (thread, tid), rec.window_s, src, tally);
                if let Some(st) = st.filter(|st| st.applies()) {
                    corrections.push(format!(
                        "PID {}: runnable {} of the window by the kernel's count (schedstat), {} of its samples; each sample weighted so that the two agree (samples are read when gpufeed gets a CPU, which on a busy machine is more often while the loop blocks)",
                        p.pid,
                        pct(st.truth),
                        pct(st.sampled)
                    ));
                }
                (label, n, shares)
            }
            None => ("none seen".to_owned(), 0, AttachShares::default()),
        };
        ranks.push(AttachRank {
            pid: p.pid,
            nspid: procs::nspid(p.pid),
            rank: r.rank,
            command: procs::cmdline(p.pid),
            training_thread: label,
            samples: n,
            torn: p.torn,
            shares,
            cpu: p.cpu_cores(),
            read_bytes: p.io.map(|(a, b)| b.saturating_sub(a)),
        });
    }
    (ranks, corrections)
}

/// The hottest lines of each class of the training thread's samples, each class's also
/// as a line of `evidence`.
fn class_lines(tally: &Tally, evidence: &mut Vec<String>) -> Vec<ClassLines> {
    let mut lines = Vec::new();
    for c in Class::ALL {
        let n: usize = tally.lines.get(&c).map_or(0, |l| l.values().sum());
        if n == 0 {
            continue;
        }
        let counts = tally.lines.get(&c).cloned().unwrap_or_default();
        let t = top(&counts, n);
        let listed: Vec<String> = t
            .iter()
            .map(|f| {
                let site = Site {
                    function: f.function.clone(),
                    file: f.file.clone(),
                    line: f.line,
                };
                format!("{}{} {}", site.short(), tally.text(&site), pct(f.share))
            })
            .collect();
        evidence.push(format!("{}: {}", c.key(), listed.join("; ")));
        lines.push(ClassLines {
            class: c.key().to_owned(),
            top: t,
        });
    }
    lines
}

/// Builds the document from what was sampled.
#[must_use]
pub fn judge(target: &Target, rec: &Recording, opts: &Options) -> Attach {
    let mut src = Sources::default();
    let mut tally = Tally::default();
    let mut evidence = Vec::new();
    let (ranks, corrections) = tally_ranks(target, rec, &mut src, &mut tally);
    let samples = tally.n;
    let torn: usize = rec.ranks.iter().chain(&rec.workers).map(|p| p.torn).sum();
    let shares = tally.shares();
    for r in &ranks {
        evidence.push(format!(
            "training thread of PID {}{}: {}; {} samples, {} torn (the stack changed under {TORN_TRIES} reads in a row, left out)",
            r.pid,
            r.rank.map(|k| format!(" (rank {k})")).unwrap_or_default(),
            r.training_thread,
            r.samples,
            r.torn
        ));
    }
    evidence.push(format!(
        "shares of the training thread's samples: data wait {}, sync {}, compute {}, checkpoint/logging {}, other {}",
        pct(shares.data_wait),
        pct(shares.sync),
        pct(shares.compute),
        pct(shares.checkpoint_logging),
        pct(shares.other)
    ));
    if samples > 0 {
        evidence.push(sampling_sentence(&tally, rec));
    }
    evidence.extend(corrections);
    let lines = class_lines(&tally, &mut evidence);
    let (workers, worker_text) = workers(rec);
    if let Some((t, _)) = &worker_text {
        evidence.push(t.clone());
    }
    let input = Level::of(
        shares.data_wait,
        th::INPUT_BOUND_MODERATE,
        th::INPUT_BOUND_HIGH,
    );
    let sync = Level::of(shares.sync, th::HOST_STALL_MODERATE, th::HOST_STALL_HIGH);
    let sync_starves = sync.map(|_| {
        let (s, text) = syncs_starve(rec, &tally);
        evidence.push(text);
        s
    });
    let (step_wait, undetermined) = (tally.step_input(true), tally.step_input(false));
    let mut producer_hot = None;
    for p in &rec.ranks {
        let Some((thread, _, _)) = training_thread(p) else {
            continue;
        };
        if let Some((text, hot)) =
            producer_sentence(p, thread, p.pid, step_wait + undetermined > 0.0)
        {
            evidence.push(text);
            producer_hot = producer_hot.or(hot);
        }
    }
    // Samples that may be waits or not: a verdict they could change is no verdict.
    let could_be_input = input.is_none()
        && undetermined > 0.0
        && shares.data_wait + undetermined >= th::INPUT_BOUND_MODERATE;
    if undetermined > 0.0 {
        evidence.push(format!(
            "{} of the samples sat in Keras's compiled step where sampling cannot tell a wait for input from a wait for the GIL (another thread held it) or from tf.data's own ops: counted as other; the data wait is between {} and {}",
            pct(undetermined),
            pct(shares.data_wait),
            pct(shares.data_wait + undetermined)
        ));
    }
    let (verdict, level) = if samples < MIN_SAMPLES {
        evidence.push(format!(
            "only {samples} samples of the training thread (at least {MIN_SAMPLES} needed for a verdict)"
        ));
        (AttachVerdict::Undetermined, None)
    } else if input.is_some() && (sync_starves != Some(true) || shares.data_wait >= shares.sync) {
        (AttachVerdict::InputBound, input)
    } else if could_be_input {
        (AttachVerdict::Undetermined, None)
    } else if sync_starves == Some(true) {
        (AttachVerdict::SyncBound, sync)
    } else if shares.compute + shares.sync >= shares.other + shares.checkpoint_logging {
        (AttachVerdict::ComputeBound, None)
    } else {
        (AttachVerdict::Undetermined, None)
    };
    evidence.push(format!(
        "input-bound at {} (moderate) / {} (high) of the samples waiting for data (TF Profiler input-pipeline analyzer); sync-bound at {} / {} in syncs while the GPU idles",
        pct(th::INPUT_BOUND_MODERATE),
        pct(th::INPUT_BOUND_HIGH),
        pct(th::HOST_STALL_MODERATE),
        pct(th::HOST_STALL_HIGH)
    ));
    if rec.exited {
        evidence.push(format!(
            "the target exited after {:.1} s: the report covers what was sampled",
            rec.window_s
        ));
    }
    let fix = fix(
        verdict,
        &tally,
        worker_text.as_ref().and_then(|w| w.1.as_ref()),
        producer_hot.as_ref(),
        could_be_input,
    );
    let (if_fixed, no_estimate) = estimate(verdict, &shares);
    let reads = rec.reads;
    Attach {
        schema_version: Attach::VERSION,
        pid: target.pid,
        python: rec.python.clone(),
        launcher: target.launcher.clone(),
        verdict,
        level,
        shares,
        samples,
        torn,
        window_s: rec.window_s,
        rate_hz: opts.rate_hz,
        exited: rec.exited,
        ranks,
        lines,
        workers,
        gpus: rec.gpus.clone(),
        evidence,
        fix,
        if_fixed,
        no_estimate,
        cost: AttachCost {
            reads,
            cpu_ms_per_read: rec.cpu_s * 1000.0 / reads.max(1) as f64,
        },
    }
}

/// What fixing the verdict's cause is worth, from its share of the training thread's
/// samples (docs/what-if.md, "Running jobs"): the loop's time is its shares' sum, so
/// removing one share gives `1 / (1 - share)` the steps per second.
fn estimate(
    verdict: AttachVerdict,
    shares: &AttachShares,
) -> (Option<SpeedupIfFixed>, Option<String>) {
    let est = match verdict {
        AttachVerdict::InputBound => SpeedupIfFixed::removing(
            shares.data_wait,
            "a fixed pipeline always has the next batch ready (workers or prefetch keep up), \
             and the loop's other work stays as it was sampled",
        ),
        AttachVerdict::SyncBound => SpeedupIfFixed::removing(
            shares.sync,
            "the GPU idles while the host waits in these syncs (the sync-bound rule), so \
             reading the values every N steps removes the waits and nothing else changes",
        ),
        AttachVerdict::ComputeBound => {
            return (
                None,
                Some(
                    "the loop computes (or waits on a busy GPU): no input or sync time to \
                     remove; `gpufeed profile step` or a profiler trace times each phase"
                        .to_owned(),
                ),
            );
        }
        AttachVerdict::Undetermined => {
            return (None, Some("no verdict, so no cause to estimate".to_owned()));
        }
    };
    match est {
        Some(e) => (Some(e), None),
        None => (
            None,
            Some("the cause's share is 0 or 1 of the samples".to_owned()),
        ),
    }
}

/// The change to try, naming the user's own line.
fn fix(
    verdict: AttachVerdict,
    tally: &Tally,
    worker_hot: Option<&Site>,
    producer_hot: Option<&Site>,
    could_be_input: bool,
) -> String {
    let loop_line = tally
        .loop_lines
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(s, _)| s);
    let at = |s: Option<&Site>| {
        s.map(|s| format!("{}{}", s.short(), tally.text(s)))
            .unwrap_or_else(|| "the loop".to_owned())
    };
    match verdict {
        AttachVerdict::InputBound => {
            let producer = tally
                .hottest(Class::DataWait)
                .filter(|p| Some(*p) != loop_line);
            // Keras's `fit` has no `for` line of its own: where it waits is its call.
            let waits_at = at(loop_line.or_else(|| tally.hottest(Class::DataWait)));
            match (worker_hot, producer) {
                (None, _) if let Some(p) = producer_hot => format!(
                    "the loop waits for data at {waits_at}: its input's Python runs in the framework's threads, most of the time in {}; make it cheaper (precompute it: `gpufeed precompute`), or run it in processes (keras.utils.PyDataset(workers=N, use_multiprocessing=True), a DataLoader's workers), where it does not share the training process's GIL",
                    p.short()
                ),
                (Some(w), _) => format!(
                    "the loop waits for data at {}: the workers spend their time in {}; make it cheaper (precompute it: `gpufeed precompute`), or add workers",
                    at(loop_line),
                    w.short()
                ),
                (None, Some(p)) => format!(
                    "the loop waits for data at {}, produced in its own process by {}: move the loading into worker processes (DataLoader num_workers, tf.data map num_parallel_calls=tf.data.AUTOTUNE and prefetch) or make it cheaper",
                    at(loop_line),
                    at(Some(p))
                ),
                (None, None) => format!(
                    "the loop waits for data at {}, inside a native iterator: raise its parallelism and prefetch (tf.data AUTOTUNE, gpufeed.Loader workers)",
                    at(loop_line)
                ),
            }
        }
        AttachVerdict::SyncBound => format!(
            "the sync at {} leaves the GPU idle: read the value every N steps, or accumulate it on the device and read it once",
            at(tally.hottest(Class::Sync))
        ),
        AttachVerdict::ComputeBound => format!(
            "the loop keeps the computation busy; its hottest line is {}: speed up the model itself (mixed precision, compilation, a larger batch; `gpufeed profile step` measures each phase)",
            at(tally.hottest(Class::Compute))
        ),
        AttachVerdict::Undetermined if could_be_input => format!(
            "the training thread may be waiting for its input or for the GIL its input's Python holds{}: either way that Python slows the step; run it in processes (keras.utils.PyDataset(workers=N, use_multiprocessing=True), a DataLoader's workers) or precompute it (`gpufeed precompute`); gpufeed.StepTimer or the TF Profiler's input-pipeline analyzer time the wait itself",
            producer_hot.map(|p| format!(" (most of the time in {})", p.short())).unwrap_or_default()
        ),
        AttachVerdict::Undetermined => {
            "sample longer while the job trains (`--duration 30s`), or time the loop with gpufeed.StepTimer".to_owned()
        }
    }
}

/// The rules' table as text lines, for `--help`-style listings.
#[must_use]
pub fn rules_table() -> Vec<String> {
    RULES
        .iter()
        .map(|r| format!("{}: {} ({})", r.class.key(), r.what, r.source))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn sample(tick: u32, thread_id: u64, file: &str) -> ThreadSample {
        ThreadSample {
            tick,
            thread_id,
            os_thread_id: Some(thread_id),
            name: None,
            active: thread_id != 1,
            owns_gil: false,
            frames: Arc::from(vec![Frame {
                name: "f".to_owned(),
                filename: file.to_owned(),
                module: None,
                short_filename: None,
                line: 1,
                locals: None,
                is_entry: true,
                is_shim_entry: false,
            }]),
        }
    }

    /// A record whose training thread (1) is read at ticks `0..n` and whose producer
    /// thread (2) is in `tf.data`'s `py_func` at the ticks of `busy`.
    fn record(n: u32, busy: &[u32]) -> ProcRecord {
        let step = "/venv/keras/src/backend/tensorflow/trainer.py";
        let producer = "/venv/tensorflow/python/ops/script_ops.py";
        let mut samples: Vec<ThreadSample> = (0..n).map(|t| sample(t, 1, step)).collect();
        samples.extend(busy.iter().map(|&t| sample(t, 2, producer)));
        ProcRecord {
            pid: 7,
            parent: None,
            samples,
            torn: 0,
            cpu: None,
            io: None,
            runnable: None,
            gone: false,
            running: HashMap::new(),
        }
    }

    #[test]
    fn a_producer_between_two_batches_is_handing_one_over() {
        // Out of Python for one tick between two batches: handing the batch over.
        let busy: Vec<u32> = (0..20).filter(|t| t % 4 != 3).collect();
        let got = producing(&record(20, &busy), 1);
        assert_eq!(got.len(), 19, "{got:?}");
        assert!(
            !got.contains(&19),
            "no batch after tick 19: not a hand-over"
        );
        // Out of Python for whole steps: idle, its buffer full.
        let busy = [0, 1, 6, 7, 12, 13];
        let got = producing(&record(20, &busy), 1);
        assert_eq!(got.len(), busy.len(), "{got:?}");
    }

    #[test]
    fn the_estimate_removes_the_causes_share() {
        let shares = AttachShares {
            data_wait: 0.6,
            sync: 0.1,
            compute: 0.3,
            ..AttachShares::default()
        };
        let (f, why) = estimate(AttachVerdict::InputBound, &shares);
        let f = f.unwrap_or_else(|| panic!("input-bound has an estimate"));
        assert!((f.speedup - 2.5).abs() < 1e-12, "{}", f.speedup);
        assert!(why.is_none());
        let (f, _) = estimate(AttachVerdict::SyncBound, &shares);
        assert!((f.map_or(0.0, |f| f.speedup) - 1.0 / 0.9).abs() < 1e-12);
        for v in [AttachVerdict::ComputeBound, AttachVerdict::Undetermined] {
            let (f, why) = estimate(v, &shares);
            assert!(f.is_none() && why.is_some(), "{v:?}");
        }
    }
}
