//! The sampling loop and what it collects.
//!
//! A [`Sampler`] owns the [`Source`]s and a [`Clock`]: each [`tick`](Sampler::tick) waits
//! for the next multiple of the interval, asks every source for its samples and appends
//! them to one list of [`Record`]s. The caller hands those records to whoever needs them
//! (a [`JsonlWriter`](crate::jsonl::JsonlWriter), a [`Collector`], the live view), so all
//! of them see the same stream.
//!
//! Pacing: ticks sit on a fixed grid `0, interval, 2 × interval, ...` of clock time, so a
//! slow tick does not shift the ones after it; a tick that is more than one interval late
//! skips the grid points it missed instead of firing them in a burst. `speed` scales the
//! timeline the sources see (`--speed 10` replays ten seconds per second); with a
//! [`VirtualClock`](crate::source::VirtualClock) nothing waits at all.
//!
//! The sampler measures its own cost: the CPU time of the thread spent inside the sources'
//! `poll` ([`SamplerCost`]), the figure the issue asks to compare with `nvidia-smi`.
//!
//! A [`Collector`] keeps the utilisation series of every GPU and the host samples, and
//! turns them into a [`UtilTrace`], whole or over a sliding window, for `gpufeed-stats`.

use std::collections::BTreeMap;

use rustix::time::{ClockId, clock_gettime};

use crate::jsonl::{GpuInfo, GpuSample, HostSample, Record};
use crate::source::{Clock, Source, SourceError, SourceWarning};
use crate::trace::{GpuSeries, TraceFormat, UtilTrace};

/// The longest a real-clock wait sleeps before it checks the `stop` callback again, in
/// seconds: a signal is handled within this time.
const WAIT_SLICE_S: f64 = 0.02;

/// Polls sources on a clock.
#[derive(Debug)]
pub struct Sampler {
    sources: Vec<Box<dyn Source>>,
    clock: Box<dyn Clock>,
    interval: f64,
    speed: f64,
    end: Option<f64>,
    /// The grid point of the next tick: it is due at `next × interval`.
    next: u64,
    ticks: u64,
    poll_cpu_s: f64,
    cpu_start_s: f64,
    done: bool,
}

/// What one [`Sampler::tick`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TickOutcome {
    /// The sources were polled.
    Sampled(Tick),
    /// `stop` returned true while waiting; nothing was polled. Call `tick` again to go on.
    Interrupted,
    /// The run is over: a source finished or the end time was reached.
    Finished,
}

/// A tick that polled the sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    /// 0, 1, 2, ...
    pub index: u64,
    /// Time on the sources' timeline, seconds since the start.
    pub t: f64,
    /// Records appended by this tick.
    pub records: usize,
    /// This was the last tick: a source finished or the end time was reached.
    pub last: bool,
}

/// The sampler's own cost.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SamplerCost {
    /// Ticks done.
    pub ticks: u64,
    /// CPU time spent inside the sources' `poll`, seconds.
    pub poll_cpu_s: f64,
    /// CPU time of the sampling thread since the sampler was made (polls plus whatever the
    /// caller did between ticks on this thread), seconds.
    pub thread_cpu_s: f64,
    /// Clock time since the sampler was made, seconds.
    pub elapsed_s: f64,
}

impl SamplerCost {
    /// Mean CPU time of one poll round, microseconds (0 before the first tick).
    #[must_use]
    pub fn poll_us_per_tick(&self) -> f64 {
        if self.ticks == 0 {
            0.0
        } else {
            self.poll_cpu_s / self.ticks as f64 * 1e6
        }
    }
}

fn thread_cpu_s() -> f64 {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

impl Sampler {
    /// A sampler that polls `sources` every `interval_s` seconds of `clock` time, at
    /// speed 1 and with no end. `interval_s` must be positive.
    #[must_use]
    pub fn new(sources: Vec<Box<dyn Source>>, clock: Box<dyn Clock>, interval_s: f64) -> Self {
        Sampler {
            sources,
            clock,
            interval: interval_s,
            speed: 1.0,
            end: None,
            next: 0,
            ticks: 0,
            poll_cpu_s: 0.0,
            cpu_start_s: thread_cpu_s(),
            done: false,
        }
    }

    /// Sources see `speed` seconds of timeline per second of clock time.
    #[must_use]
    pub fn with_speed(mut self, speed: f64) -> Self {
        self.speed = speed;
        self
    }

    /// Stops at `end` seconds of timeline: the last tick polls at exactly `end`.
    #[must_use]
    pub fn with_end(mut self, end: f64) -> Self {
        self.end = Some(end);
        self
    }

    /// The GPUs of every source, in source order.
    #[must_use]
    pub fn gpus(&self) -> Vec<GpuInfo> {
        self.sources
            .iter()
            .flat_map(|s| s.gpus().iter().cloned())
            .collect()
    }

    /// The name of the first source (the GPU source, by convention).
    #[must_use]
    pub fn source_name(&self) -> &str {
        self.sources.first().map_or("none", |s| s.name())
    }

    /// Seconds of clock time between ticks.
    #[must_use]
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// The clock.
    #[must_use]
    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// What sampling has cost so far.
    #[must_use]
    pub fn cost(&self) -> SamplerCost {
        SamplerCost {
            ticks: self.ticks,
            poll_cpu_s: self.poll_cpu_s,
            thread_cpu_s: thread_cpu_s() - self.cpu_start_s,
            elapsed_s: self.clock.now(),
        }
    }

    /// Warnings of every source since the last call.
    pub fn take_warnings(&mut self) -> Vec<SourceWarning> {
        self.sources
            .iter_mut()
            .flat_map(|s| s.take_warnings())
            .collect()
    }

    /// Waits for the next tick, unless `stop` returns true first, then polls every source
    /// and appends their records to `out`.
    pub fn tick(
        &mut self,
        out: &mut Vec<Record>,
        stop: &dyn Fn() -> bool,
    ) -> Result<TickOutcome, SourceError> {
        if self.done {
            return Ok(TickOutcome::Finished);
        }
        loop {
            if stop() {
                return Ok(TickOutcome::Interrupted);
            }
            let wait = self.next as f64 * self.interval - self.clock.now();
            if wait <= 0.0 {
                break;
            }
            let slice = if self.clock.is_real() {
                wait.min(WAIT_SLICE_S)
            } else {
                wait
            };
            self.clock.sleep(slice);
        }
        let now = self.clock.now();
        let mut t = now * self.speed;
        // Within a nanosecond of the end is the end: `10 × 0.1` may land just below 1.
        if let Some(end) = self.end
            && t >= end - 1e-9
        {
            t = end;
            self.done = true;
        }
        let before = out.len();
        let cpu = thread_cpu_s();
        for source in &mut self.sources {
            source.poll(t, out)?;
        }
        self.poll_cpu_s += thread_cpu_s() - cpu;
        if self.sources.iter().any(|s| s.finished()) {
            self.done = true;
        }
        let index = self.ticks;
        self.ticks += 1;
        self.next += 1;
        if (self.next as f64) * self.interval <= now {
            // Late by more than an interval: skip the grid points already missed.
            self.next = (now / self.interval).floor() as u64 + 1;
        }
        Ok(TickOutcome::Sampled(Tick {
            index,
            t,
            records: out.len() - before,
            last: self.done,
        }))
    }
}

/// Keeps what a run sampled, for the end report, the sliding-window verdict and the live
/// view.
///
/// Memory: 16 bytes per utilisation sample plus the host samples; a day at 10 Hz is about
/// 14 MB per GPU.
#[derive(Debug, Default)]
pub struct Collector {
    series: BTreeMap<u32, GpuSeries>,
    latest: BTreeMap<u32, GpuSample>,
    host: Vec<HostSample>,
    rows: usize,
    skipped: usize,
}

impl Collector {
    /// An empty collector.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one record. A GPU sample without a valid utilisation (absent, or outside
    /// 0..=100) is counted as skipped, as the JSONL reader counts it; its other readings
    /// still update [`latest_gpu`](Self::latest_gpu).
    pub fn push(&mut self, record: &Record) {
        match record {
            Record::Gpu(s) => {
                match s.util {
                    Some(u) if (0.0..=100.0).contains(&u) && s.t.is_finite() => {
                        let series = self.series.entry(s.gpu).or_insert_with(|| GpuSeries {
                            gpu: s.gpu,
                            t: Vec::new(),
                            util: Vec::new(),
                        });
                        series.t.push(s.t);
                        series.util.push(u);
                        self.rows += 1;
                    }
                    _ => self.skipped += 1,
                }
                match self.latest.get_mut(&s.gpu) {
                    Some(latest) => merge(latest, s),
                    None => {
                        self.latest.insert(s.gpu, s.clone());
                    }
                }
            }
            Record::Host(h) => self.host.push(h.clone()),
        }
    }

    /// Every record of a slice, in order.
    pub fn extend<'a>(&mut self, records: impl IntoIterator<Item = &'a Record>) {
        for r in records {
            self.push(r);
        }
    }

    /// The whole run as a trace, or `None` before the first utilisation sample.
    #[must_use]
    pub fn trace(&self) -> Option<UtilTrace> {
        self.window(f64::INFINITY)
    }

    /// The last `seconds` of every GPU (measured back from each GPU's newest sample), or
    /// `None` before the first utilisation sample.
    #[must_use]
    pub fn window(&self, seconds: f64) -> Option<UtilTrace> {
        let mut rows = 0;
        let gpus: Vec<GpuSeries> = self
            .series
            .values()
            .filter_map(|s| {
                let last = *s.t.last()?;
                let from = if seconds.is_finite() {
                    s.t.partition_point(|&t| t <= last - seconds)
                } else {
                    0
                };
                rows += s.t.len() - from;
                Some(GpuSeries {
                    gpu: s.gpu,
                    t: s.t[from..].to_vec(),
                    util: s.util[from..].to_vec(),
                })
            })
            .collect();
        if gpus.is_empty() {
            return None;
        }
        Some(UtilTrace {
            format: TraceFormat::GpufeedJsonl,
            gpus,
            rows,
            skipped: if seconds.is_finite() { 0 } else { self.skipped },
            columns: None,
            note: None,
            has_timestamps: true,
        })
    }

    /// The utilisation series of one GPU.
    #[must_use]
    pub fn series(&self, gpu: u32) -> Option<&GpuSeries> {
        self.series.get(&gpu)
    }

    /// The newest reading of every GPU, by index: each field holds its newest value seen.
    pub fn latest_gpu(&self) -> impl Iterator<Item = &GpuSample> {
        self.latest.values()
    }

    /// Every host sample, in order.
    #[must_use]
    pub fn host(&self) -> &[HostSample] {
        &self.host
    }

    /// Utilisation samples kept, all GPUs together.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// GPU samples without a valid utilisation.
    #[must_use]
    pub fn skipped(&self) -> usize {
        self.skipped
    }
}

/// Newer values over older ones, field by field; absent fields keep the older value.
fn merge(into: &mut GpuSample, new: &GpuSample) {
    macro_rules! take {
        ($($f:ident),*) => { $( if new.$f.is_some() { into.$f = new.$f.clone(); } )* };
    }
    into.t = new.t;
    take!(
        util,
        mem_util,
        mem_used_mib,
        power_w,
        sm_clock_mhz,
        temp_c,
        throttle,
        pcie_rx_kb_s,
        pcie_tx_kb_s,
        sm_active_pct,
        sm_occupancy_pct,
        tensor_active_pct,
        dram_active_pct,
        proc_util
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonl::HostMetrics;
    use crate::source::{RealClock, VirtualClock};

    /// Emits one sample per poll with `util = 10 × poll number`; finishes after `n`.
    #[derive(Debug)]
    struct Counter {
        polls: u32,
        n: u32,
        gpus: Vec<GpuInfo>,
    }

    impl Counter {
        fn new(n: u32) -> Self {
            Counter {
                polls: 0,
                n,
                gpus: vec![GpuInfo {
                    index: 0,
                    name: None,
                    uuid: None,
                    memory_total_mib: None,
                }],
            }
        }
    }

    impl Source for Counter {
        fn name(&self) -> &str {
            "counter"
        }
        fn gpus(&self) -> &[GpuInfo] {
            &self.gpus
        }
        fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError> {
            out.push(Record::Gpu(GpuSample {
                util: Some(f64::from(self.polls % 11) * 10.0),
                ..GpuSample::new(now, 0)
            }));
            self.polls += 1;
            Ok(())
        }
        fn finished(&self) -> bool {
            self.polls >= self.n
        }
    }

    fn run(sampler: &mut Sampler) -> Vec<Record> {
        let mut out = Vec::new();
        while let TickOutcome::Sampled(_) = sampler.tick(&mut out, &|| false).unwrap() {}
        out
    }

    #[test]
    fn virtual_ticks_are_exact_and_end_at_end() {
        let mut s = Sampler::new(
            vec![Box::new(Counter::new(1000))],
            Box::new(VirtualClock::default()),
            0.1,
        )
        .with_end(1.0);
        let out = run(&mut s);
        let t: Vec<f64> = out.iter().map(Record::t).collect();
        assert_eq!(t.len(), 11);
        for (i, t) in t.iter().enumerate() {
            assert!((t - i as f64 * 0.1).abs() < 1e-9, "{t}");
        }
        assert_eq!(*t.last().unwrap(), 1.0);
        assert_eq!(
            s.tick(&mut Vec::new(), &|| false).unwrap(),
            TickOutcome::Finished
        );
        assert_eq!(s.cost().ticks, 11);
    }

    #[test]
    fn a_finished_source_ends_the_run() {
        let mut s = Sampler::new(
            vec![Box::new(Counter::new(3))],
            Box::new(VirtualClock::default()),
            0.5,
        );
        assert_eq!(run(&mut s).len(), 3);
    }

    #[test]
    fn speed_scales_the_timeline() {
        let mut s = Sampler::new(
            vec![Box::new(Counter::new(5))],
            Box::new(VirtualClock::default()),
            0.1,
        )
        .with_speed(10.0);
        let out = run(&mut s);
        assert!((out[4].t() - 4.0).abs() < 1e-9);
    }

    #[test]
    fn stop_interrupts_a_wait() {
        let mut s = Sampler::new(
            vec![Box::new(Counter::new(100))],
            Box::new(RealClock::start()),
            60.0,
        );
        let mut out = Vec::new();
        assert!(matches!(
            s.tick(&mut out, &|| false).unwrap(),
            TickOutcome::Sampled(Tick { index: 0, .. })
        ));
        // The next tick is a minute away; stop returns at once.
        assert_eq!(
            s.tick(&mut out, &|| true).unwrap(),
            TickOutcome::Interrupted
        );
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn late_ticks_skip_missed_grid_points() {
        let mut clock = VirtualClock::default();
        clock.sleep(0.0);
        let mut s = Sampler::new(vec![Box::new(Counter::new(100))], Box::new(clock), 0.1);
        let mut out = Vec::new();
        s.tick(&mut out, &|| false).unwrap();
        // Simulate a slow caller: the clock moves 0.35 s before the next tick.
        s.clock.sleep(0.35);
        s.tick(&mut out, &|| false).unwrap();
        s.tick(&mut out, &|| false).unwrap();
        let t: Vec<f64> = out.iter().map(Record::t).collect();
        assert!((t[1] - 0.35).abs() < 1e-9);
        assert!((t[2] - 0.4).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn collector_windows_and_merges() {
        let mut c = Collector::new();
        for i in 0..100 {
            let t = f64::from(i) * 0.1;
            c.push(&Record::Gpu(GpuSample {
                util: Some(f64::from(i % 10)),
                power_w: (i == 3).then_some(250.0),
                ..GpuSample::new(t, 1)
            }));
        }
        c.push(&Record::Gpu(GpuSample::new(10.0, 1)));
        c.push(&Record::Host(HostSample {
            t: 0.0,
            host: HostMetrics::default(),
        }));
        let all = c.trace().unwrap();
        assert_eq!(all.rows, 100);
        assert_eq!(all.skipped, 1);
        let w = c.window(1.0).unwrap();
        assert_eq!(w.gpus[0].t.len(), 10);
        assert!((w.gpus[0].t[0] - 9.0).abs() < 1e-9);
        let latest = c.latest_gpu().next().unwrap();
        assert_eq!(latest.power_w, Some(250.0));
        assert_eq!(latest.util, Some(9.0));
        assert_eq!(c.host().len(), 1);
        assert!(Collector::new().trace().is_none());
    }

    #[test]
    fn collector_rejects_out_of_range() {
        let mut c = Collector::new();
        c.push(&Record::Gpu(GpuSample {
            util: Some(101.0),
            ..GpuSample::new(0.0, 0)
        }));
        assert!(c.trace().is_none());
        assert_eq!(c.skipped(), 1);
    }
}
