//! A made-up GPU with a named utilisation pattern, so that every command, the live view
//! and the analysis can be run and tested without a GPU (`--synthetic PATTERN`).
//!
//! # Patterns
//!
//! `NAME[:KEY=VALUE,...]`, for example `oscillating:period=1.5,low=2,high=40`:
//!
//! | name | shape | keys (default) | verdict `gpufeed-stats` gives |
//! |---|---|---|---|
//! | `stable` | flat, high | `level` (95) | `stable` |
//! | `oscillating` | square wave, like the seeds' starved TTS trainer | `period` s (1.5), `low` % (2), `high` % (40), `duty` busy share of a period (0.5) | `oscillating`, period = `period` |
//! | `bursty` | busy, with idle gaps of random length at random times | `high` (90), `low` (1), `busy_min`/`busy_max` s (1 / 8), `idle_min`/`idle_max` s (0.3 / 2.5) | `bursty` |
//! | `starved` | flat, low | `level` (30) | `starved` |
//! | `idle` | flat, near 0 | `level` (0) | `idle` |
//!
//! Every pattern also takes `noise` (standard deviation of Gaussian noise in percentage
//! points: 2, or 0.5 for `idle`), `gpus` (how many GPUs, 1) and `seed` (0). Utilisation is
//! a function of time, evaluated at each poll and rounded to a whole percent as NVML
//! reports it; the same pattern, seed and poll times give the same samples. GPU `i` draws
//! from its own random stream (`seed + i`); the schedule of bursty gaps and the noise are
//! separate streams, so the gaps do not depend on the sampling rate.
//!
//! The other readings are plausible, not measured: power follows utilisation
//! (70 W + 3.3 W per %), memory in use is constant, `gpu_idle` is the throttle reason
//! below 10 %, and the GPM fields are fixed fractions of utilisation.
//!
//! ```
//! use gpufeed_telemetry::source::Source;
//! use gpufeed_telemetry::synthetic::SyntheticSource;
//! let mut s = SyntheticSource::parse("oscillating:period=2,low=0,high=50,noise=0").unwrap();
//! let mut out = Vec::new();
//! s.poll(0.5, &mut out).unwrap(); // first half of the period: busy
//! s.poll(1.5, &mut out).unwrap(); // second half: idle
//! let util: Vec<_> = out.iter().map(|r| match r {
//!     gpufeed_telemetry::jsonl::Record::Gpu(g) => g.util.unwrap(),
//!     _ => unreachable!(),
//! }).collect();
//! assert_eq!(util, vec![50.0, 0.0]);
//! ```

use std::fmt::Write as _;

use crate::jsonl::{GpuInfo, GpuSample, Record};
use crate::source::{Source, SourceError};

/// The shape of a synthetic utilisation signal.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// A constant level.
    Flat {
        /// Which name it was given: `stable`, `starved` or `idle`.
        name: &'static str,
        /// Utilisation, %.
        level: f64,
    },
    /// A square wave.
    Oscillating {
        /// Seconds per cycle.
        period: f64,
        /// Utilisation while waiting, %.
        low: f64,
        /// Utilisation while busy, %.
        high: f64,
        /// Busy share of each cycle, 0 < duty < 1; the busy part comes first.
        duty: f64,
    },
    /// Busy stretches and idle gaps of uniformly random lengths.
    Bursty {
        /// Utilisation while busy, %.
        high: f64,
        /// Utilisation in a gap, %.
        low: f64,
        /// Shortest busy stretch, s.
        busy_min: f64,
        /// Longest busy stretch, s.
        busy_max: f64,
        /// Shortest gap, s.
        idle_min: f64,
        /// Longest gap, s.
        idle_max: f64,
    },
}

/// A parsed `--synthetic` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternSpec {
    /// The signal.
    pub pattern: Pattern,
    /// Standard deviation of the noise, percentage points.
    pub noise: f64,
    /// Number of GPUs.
    pub gpus: u32,
    /// Random seed.
    pub seed: u64,
}

/// The names `--synthetic` accepts.
pub const PATTERN_NAMES: [&str; 5] = ["stable", "oscillating", "bursty", "starved", "idle"];

const MAX_GPUS: u32 = 64;

/// The `KEY=VALUE` pairs of a pattern's parameters, each key one that pattern `name` takes
/// (`keys`, and `noise`, `gpus`, `seed`), each value a finite number; a later pair wins.
fn key_values<'a>(
    params: &'a str,
    name: &str,
    keys: &[&str],
    fail: &dyn Fn(String) -> SourceError,
) -> Result<Vec<(&'a str, f64)>, SourceError> {
    let mut values: Vec<(&'a str, f64)> = Vec::new();
    for part in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(fail(format!(
                "`{}` is not KEY=VALUE; write e.g. `oscillating:period=1.5,low=2,high=40`",
                crate::error::shown(part)
            )));
        };
        let k = k.trim();
        if !keys.contains(&k) && !["noise", "gpus", "seed"].contains(&k) {
            let mut all: Vec<&str> = keys.to_vec();
            all.extend(["noise", "gpus", "seed"]);
            return Err(fail(format!(
                "`{name}` has no parameter `{}`; it takes {}",
                crate::error::shown(k),
                quoted(&all)
            )));
        }
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                fail(format!(
                    "`{k}` must be a number, not `{}`",
                    crate::error::shown(v.trim())
                ))
            })?;
        values.retain(|(key, _)| *key != k);
        values.push((k, v));
    }
    Ok(values)
}

impl PatternSpec {
    /// Parses `NAME[:KEY=VALUE,...]` (see the [module docs](self)).
    pub fn parse(spec: &str) -> Result<Self, SourceError> {
        let fail = |message: String| SourceError::Pattern {
            pattern: crate::error::shown(spec),
            message,
        };
        let (name, params) = match spec.split_once(':') {
            Some((n, p)) => (n.trim(), p),
            None => (spec.trim(), ""),
        };
        let keys: &[&str] = match name {
            "stable" | "starved" | "idle" => &["level"],
            "oscillating" => &["period", "low", "high", "duty"],
            "bursty" => &[
                "high", "low", "busy_min", "busy_max", "idle_min", "idle_max",
            ],
            _ => {
                return Err(fail(format!(
                    "unknown pattern `{}`; expected one of {}",
                    crate::error::shown(name),
                    quoted(&PATTERN_NAMES)
                )));
            }
        };
        let values = key_values(params, name, keys, &fail)?;
        let get = |k: &str, default: f64| {
            values
                .iter()
                .find(|(key, _)| *key == k)
                .map_or(default, |(_, v)| *v)
        };
        let percent = |k: &str, default: f64| {
            let v = get(k, default);
            if (0.0..=100.0).contains(&v) {
                Ok(v)
            } else {
                Err(fail(format!(
                    "`{k}` is a utilisation in 0..=100 %, not `{v}`"
                )))
            }
        };
        let seconds = |k: &str, default: f64| {
            let v = get(k, default);
            if v > 0.0 {
                Ok(v)
            } else {
                Err(fail(format!(
                    "`{k}` is a time in seconds above 0, not `{v}`"
                )))
            }
        };
        let pattern = match name {
            "stable" => Pattern::Flat {
                name: "stable",
                level: percent("level", 95.0)?,
            },
            "starved" => Pattern::Flat {
                name: "starved",
                level: percent("level", 30.0)?,
            },
            "idle" => Pattern::Flat {
                name: "idle",
                level: percent("level", 0.0)?,
            },
            "oscillating" => {
                let (low, high) = (percent("low", 2.0)?, percent("high", 40.0)?);
                if low > high {
                    return Err(fail(format!("`low` ({low}) is above `high` ({high})")));
                }
                let duty = get("duty", 0.5);
                if !(duty > 0.0 && duty < 1.0) {
                    return Err(fail(format!(
                        "`duty` is the busy share of a period, between 0 and 1, not `{duty}`"
                    )));
                }
                Pattern::Oscillating {
                    period: seconds("period", 1.5)?,
                    low,
                    high,
                    duty,
                }
            }
            _ => {
                let (low, high) = (percent("low", 1.0)?, percent("high", 90.0)?);
                if low > high {
                    return Err(fail(format!("`low` ({low}) is above `high` ({high})")));
                }
                let (busy_min, busy_max) = (seconds("busy_min", 1.0)?, seconds("busy_max", 8.0)?);
                let (idle_min, idle_max) = (seconds("idle_min", 0.3)?, seconds("idle_max", 2.5)?);
                if busy_min > busy_max || idle_min > idle_max {
                    return Err(fail(
                        "`busy_min`/`idle_min` must not be above `busy_max`/`idle_max`".to_owned(),
                    ));
                }
                Pattern::Bursty {
                    high,
                    low,
                    busy_min,
                    busy_max,
                    idle_min,
                    idle_max,
                }
            }
        };
        let noise = get("noise", if name == "idle" { 0.5 } else { 2.0 });
        if noise < 0.0 {
            return Err(fail(format!(
                "`noise` is a standard deviation, at least 0, not `{noise}`"
            )));
        }
        let gpus = get("gpus", 1.0);
        if gpus.fract() != 0.0 || !(1.0..=f64::from(MAX_GPUS)).contains(&gpus) {
            return Err(fail(format!(
                "`gpus` must be a whole number in 1..={MAX_GPUS}, not `{gpus}`"
            )));
        }
        let seed = get("seed", 0.0);
        if seed.fract() != 0.0 || !(0.0..=9.0e15).contains(&seed) {
            return Err(fail(format!(
                "`seed` must be a whole number at least 0, not `{seed}`"
            )));
        }
        Ok(PatternSpec {
            pattern,
            noise,
            gpus: gpus as u32,
            seed: seed as u64,
        })
    }

    /// The pattern's name: `stable`, `oscillating`, ...
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self.pattern {
            Pattern::Flat { name, .. } => name,
            Pattern::Oscillating { .. } => "oscillating",
            Pattern::Bursty { .. } => "bursty",
        }
    }
}

fn quoted(names: &[&str]) -> String {
    let mut s = String::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "`{n}`");
    }
    s
}

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast, and good enough for test signals.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed ^ 0x853C_49E6_748F_EA9B)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// One synthetic GPU's state.
#[derive(Debug, Clone)]
struct Gpu {
    noise: Rng,
    schedule: Rng,
    /// Bursty: start of the current busy stretch, start of its gap, end of the gap.
    segment: (f64, f64, f64),
}

/// The synthetic [`Source`].
#[derive(Debug, Clone)]
pub struct SyntheticSource {
    spec: PatternSpec,
    gpus: Vec<GpuInfo>,
    state: Vec<Gpu>,
    last_t: f64,
}

impl SyntheticSource {
    /// A source for a parsed pattern.
    #[must_use]
    pub fn new(spec: PatternSpec) -> Self {
        let gpus = (0..spec.gpus)
            .map(|index| GpuInfo {
                index,
                name: Some(format!("synthetic ({})", spec.name())),
                uuid: None,
                memory_total_mib: Some(81_559),
            })
            .collect();
        let state = (0..spec.gpus)
            .map(|i| {
                let seed = spec.seed.wrapping_add(u64::from(i));
                let mut g = Gpu {
                    noise: Rng::new(seed),
                    schedule: Rng::new(seed ^ 0x5EED_5EED_5EED_5EED),
                    segment: (0.0, 0.0, 0.0),
                };
                if let Pattern::Bursty { .. } = spec.pattern {
                    g.segment = next_segment(&spec.pattern, &mut g.schedule, 0.0);
                }
                g
            })
            .collect();
        SyntheticSource {
            spec,
            gpus,
            state,
            last_t: f64::NEG_INFINITY,
        }
    }

    /// [`PatternSpec::parse`] then [`new`](Self::new).
    pub fn parse(spec: &str) -> Result<Self, SourceError> {
        PatternSpec::parse(spec).map(Self::new)
    }

    /// The pattern.
    #[must_use]
    pub fn spec(&self) -> &PatternSpec {
        &self.spec
    }
}

/// The bursty segment starting at `start`: (start, gap start, gap end).
fn next_segment(p: &Pattern, rng: &mut Rng, start: f64) -> (f64, f64, f64) {
    let Pattern::Bursty {
        busy_min,
        busy_max,
        idle_min,
        idle_max,
        ..
    } = *p
    else {
        return (start, f64::INFINITY, f64::INFINITY);
    };
    let busy = busy_min + (busy_max - busy_min) * rng.uniform();
    let idle = idle_min + (idle_max - idle_min) * rng.uniform();
    (start, start + busy, start + busy + idle)
}

/// The noiseless level of GPU `g` at time `t` (t never decreases between calls).
fn level(p: &Pattern, g: &mut Gpu, t: f64) -> f64 {
    match *p {
        Pattern::Flat { level, .. } => level,
        Pattern::Oscillating {
            period,
            low,
            high,
            duty,
        } => {
            // Snap times a rounding error below a cycle boundary onto it, so that
            // `i × 0.1` s samples of a 0.8 s wave repeat exactly.
            let cycles = t / period;
            let phase = (cycles - (cycles + 1e-9).floor()).max(0.0);
            if phase < duty { high } else { low }
        }
        Pattern::Bursty { high, low, .. } => {
            while t >= g.segment.2 {
                g.segment = next_segment(p, &mut g.schedule, g.segment.2);
            }
            if t >= g.segment.1 { low } else { high }
        }
    }
}

impl Source for SyntheticSource {
    fn name(&self) -> &str {
        "synthetic"
    }

    fn gpus(&self) -> &[GpuInfo] {
        &self.gpus
    }

    /// One sample per GPU at `now`; a `now` not after the previous one gives nothing.
    fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError> {
        if now.is_nan() || now <= self.last_t {
            return Ok(());
        }
        self.last_t = now;
        for (i, g) in self.state.iter_mut().enumerate() {
            let base = level(&self.spec.pattern, g, now);
            let util = (base + self.spec.noise * g.noise.normal())
                .clamp(0.0, 100.0)
                .round();
            out.push(Record::Gpu(GpuSample {
                util: Some(util),
                mem_util: Some((util * 0.3).round()),
                mem_used_mib: Some(20_480.0),
                power_w: Some((70.0 + 3.3 * util).round()),
                sm_clock_mhz: Some(1980),
                temp_c: Some(40 + (util / 4.0) as u32),
                throttle: Some(if util < 10.0 {
                    vec!["gpu_idle".to_owned()]
                } else {
                    Vec::new()
                }),
                sm_active_pct: Some((util * 0.7).round()),
                sm_occupancy_pct: Some((util * 0.3).round()),
                tensor_active_pct: Some((util * 0.4).round()),
                dram_active_pct: Some((util * 0.25).round()),
                ..GpuSample::new(now, i as u32)
            }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use gpufeed_stats::util::{UtilVerdict, analyze_util};

    use super::*;

    /// `seconds` of samples every `dt`, the first GPU's utilisation.
    fn run(spec: &str, seconds: f64, dt: f64) -> Vec<f64> {
        let mut s = SyntheticSource::parse(spec).unwrap();
        let mut out = Vec::new();
        let n = (seconds / dt).round() as usize;
        for i in 0..n {
            s.poll(i as f64 * dt, &mut out).unwrap();
        }
        out.iter()
            .filter_map(|r| match r {
                Record::Gpu(g) if g.gpu == 0 => g.util,
                _ => None,
            })
            .collect()
    }

    fn verdict(spec: &str, seconds: f64) -> (UtilVerdict, Option<f64>) {
        let a = analyze_util(&run(spec, seconds, 0.1), 0.1).unwrap();
        (a.verdict, a.period_s)
    }

    #[test]
    fn every_pattern_gives_its_verdict() {
        for seed in 0..5 {
            let s = |p: &str| format!("{p}:seed={seed}");
            assert_eq!(verdict(&s("stable"), 60.0).0, UtilVerdict::Stable);
            assert_eq!(verdict(&s("starved"), 60.0).0, UtilVerdict::Starved);
            assert_eq!(verdict(&s("idle"), 60.0).0, UtilVerdict::Idle);
            assert_eq!(
                verdict(&s("bursty"), 60.0).0,
                UtilVerdict::Bursty,
                "seed {seed}"
            );
            let (v, p) = verdict(&s("oscillating"), 60.0);
            assert_eq!(v, UtilVerdict::Oscillating);
            let p = p.unwrap();
            assert!((p - 1.5).abs() < 0.05, "period {p}");
        }
    }

    /// Over 300 s, always bursty. Over 30 s, bursty, or too short to tell where the
    /// random stalls happened to come only 3 or 4 times, evenly spaced (a cycle could not
    /// show yet); never a cycle or a steady GPU.
    #[test]
    fn bursty_holds_over_a_short_window_and_a_long_run() {
        let mut too_short = 0;
        for seed in 0..20 {
            let (v, _) = verdict(&format!("bursty:seed={seed}"), 300.0);
            assert_eq!(v, UtilVerdict::Bursty, "seed {seed}, 300 s");
            let (v, _) = verdict(&format!("bursty:seed={seed}"), 30.0);
            assert!(
                matches!(v, UtilVerdict::Bursty | UtilVerdict::TooShort),
                "seed {seed}, 30 s: {v:?}"
            );
            too_short += usize::from(v == UtilVerdict::TooShort);
        }
        assert!(
            too_short <= 4,
            "{too_short} of 20 windows of 30 s too short"
        );
    }

    #[test]
    fn oscillating_parameters_are_honoured() {
        for (spec, want) in [
            ("oscillating:period=3,low=5,high=70", 3.0),
            ("oscillating:period=0.8,duty=0.3", 0.8),
            ("oscillating:period=10", 10.0),
        ] {
            let (v, p) = verdict(spec, 120.0);
            assert_eq!(v, UtilVerdict::Oscillating, "{spec}");
            let p = p.unwrap();
            assert!((p - want).abs() < want * 0.03, "{spec}: {p}");
        }
        let u = run("oscillating:period=1,low=10,high=60,noise=0", 2.0, 0.25);
        assert_eq!(u, vec![60.0, 60.0, 10.0, 10.0, 60.0, 60.0, 10.0, 10.0]);
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(
            run("bursty:seed=3", 20.0, 0.1),
            run("bursty:seed=3", 20.0, 0.1)
        );
        assert_ne!(
            run("bursty:seed=3", 20.0, 0.1),
            run("bursty:seed=4", 20.0, 0.1)
        );
        // The gap schedule does not depend on the sampling rate.
        let fine = run("bursty:seed=3,noise=0", 20.0, 0.05);
        let coarse = run("bursty:seed=3,noise=0", 20.0, 0.1);
        let every_other: Vec<f64> = fine.iter().step_by(2).copied().collect();
        assert_eq!(every_other, coarse);
    }

    #[test]
    fn several_gpus_and_repeated_times() {
        let mut s = SyntheticSource::parse("stable:gpus=3").unwrap();
        assert_eq!(s.gpus().len(), 3);
        let mut out = Vec::new();
        s.poll(0.0, &mut out).unwrap();
        s.poll(0.0, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        let gpus: Vec<u32> = out
            .iter()
            .map(|r| match r {
                Record::Gpu(g) => g.gpu,
                Record::Host(_) => 99,
            })
            .collect();
        assert_eq!(gpus, vec![0, 1, 2]);
    }

    #[test]
    fn bad_patterns_say_what_to_write() {
        let e = |s: &str| PatternSpec::parse(s).unwrap_err().to_string();
        assert_eq!(
            e("wobbly"),
            "synthetic pattern `wobbly`: unknown pattern `wobbly`; expected one of `stable`, \
             `oscillating`, `bursty`, `starved`, `idle`"
        );
        assert_eq!(
            e("oscillating:perod=2"),
            "synthetic pattern `oscillating:perod=2`: `oscillating` has no parameter `perod`; \
             it takes `period`, `low`, `high`, `duty`, `noise`, `gpus`, `seed`"
        );
        assert!(e("oscillating:period=abc").contains("`period` must be a number, not `abc`"));
        assert!(e("oscillating:period=0").contains("above 0"));
        assert!(e("oscillating:low=50,high=10").contains("above `high`"));
        assert!(e("stable:level=150").contains("0..=100"));
        assert!(e("stable:gpus=0").contains("`gpus`"));
        assert!(e("stable:gpus=1.5").contains("`gpus`"));
        assert!(e("oscillating:duty=1").contains("`duty`"));
        assert!(e("idle:noise=-1").contains("`noise`"));
        assert!(e("stable:level").contains("not KEY=VALUE"));
        assert!(e("oscillating:period=inf").contains("must be a number"));
    }

    #[test]
    fn spaces_and_repeats_are_fine() {
        let s = PatternSpec::parse(" oscillating : period = 2 , period=3 ").unwrap();
        assert_eq!(s.name(), "oscillating");
        assert!(matches!(s.pattern, Pattern::Oscillating { period, .. } if period == 3.0));
    }
}
