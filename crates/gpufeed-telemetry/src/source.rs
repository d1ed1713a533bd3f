//! Where samples come from: the [`Source`] trait, its errors and warnings, and the
//! [`Clock`] that paces a run.
//!
//! Every source, real or fake, answers the same question: "what was sampled up to time
//! `now`?", as [`Record`]s, the same records a recording holds. The [`Sampler`] asks each
//! source once per tick; the live view, `--record`, the Prometheus exporter and the end
//! report all consume that one stream, so a replayed or synthetic run goes through exactly
//! the code a GPU run does.
//!
//! | source | samples | module |
//! |---|---|---|
//! | NVML (`libnvidia-ml.so.1`, loaded at run time) | the GPUs of this machine | [`crate::nvml`] |
//! | a recording (gpufeed JSONL, nvidia-smi CSV) | the GPUs of the recording | [`crate::replay`] |
//! | a named pattern (`oscillating:period=1.5`) | made-up GPUs | [`crate::synthetic`] |
//! | `/proc` | this host: CPU, iowait, pressure, disks, a process tree | [`crate::host`] |
//!
//! Time is seconds since the start of the run. A [`RealClock`] sleeps; a [`VirtualClock`]
//! jumps, so that tests and `--speed max` run as fast as the machine can compute.
//!
//! ```
//! use gpufeed_telemetry::source::{Source, VirtualClock};
//! use gpufeed_telemetry::sampler::Sampler;
//! use gpufeed_telemetry::synthetic::SyntheticSource;
//! let source = SyntheticSource::parse("oscillating:period=1.5").unwrap();
//! let mut sampler = Sampler::new(vec![Box::new(source)], Box::new(VirtualClock::default()), 0.1);
//! let mut records = Vec::new();
//! for _ in 0..10 {
//!     sampler.tick(&mut records, &|| false).unwrap();
//! }
//! assert_eq!(records.len(), 10);
//! assert!((records[9].t() - 0.9).abs() < 1e-9);
//! ```
//!
//! [`Sampler`]: crate::sampler::Sampler

use std::fmt;
use std::time::{Duration, Instant};

use crate::TraceError;
use crate::jsonl::{GpuInfo, Record};

/// A producer of samples.
pub trait Source: fmt::Debug {
    /// What produces the samples, for the recording header's `source`: `nvml`, `replay`,
    /// `synthetic`, `host`.
    fn name(&self) -> &str;

    /// The GPUs this source reports; empty for a host-only source.
    fn gpus(&self) -> &[GpuInfo];

    /// Appends to `out`, in time order, every sample taken up to `now` (seconds since the
    /// start of the run) that was not returned before. A source that samples on demand
    /// (NVML, `/proc`, synthetic) samples now; a replay returns what its file holds up to
    /// `now`.
    fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError>;

    /// Whether the source has nothing more to give (the end of a replay). Live sources
    /// never finish.
    fn finished(&self) -> bool {
        false
    }

    /// Warnings since the last call, such as a corrupt line a replay skipped.
    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        Vec::new()
    }
}

/// Why a source could not start or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// NVML could not be loaded or initialised: no driver on this machine.
    #[error("no NVIDIA driver found ({reason})")]
    NoDriver {
        /// What failed, such as "libnvidia-ml.so.1 could not be loaded".
        reason: String,
    },

    /// The driver is there but reports no GPU.
    #[error("the NVIDIA driver reports no GPU")]
    NoGpu,

    /// An NVML call that the source cannot do without failed.
    #[error("NVML `{call}` failed: {message}")]
    Nvml {
        /// The NVML function.
        call: &'static str,
        /// NVML's message.
        message: String,
    },

    /// A replay file that cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),

    /// An nvidia-smi log without timestamps: it has no time axis to replay.
    #[error(
        "`{}` has no timestamp column, so it cannot be replayed; record with `{}`",
        path.display(),
        crate::NVSMI_RECORD_COMMAND
    )]
    NoTimestamps {
        /// The file.
        path: std::path::PathBuf,
    },

    /// A file that `--replay` cannot play: step times, or a utilisation format it does not
    /// stream (job output, `dmon`).
    #[error(
        "`{}` looks like {}; `--replay` takes a gpufeed JSONL recording or an nvidia-smi CSV \
         log (analyse {} with `gpufeed trace FILE`)",
        path.display(),
        found.describe(),
        if found.kind() == crate::trace::TraceKind::Steps { "step times" } else { "it" }
    )]
    NotReplayable {
        /// The file.
        path: std::path::PathBuf,
        /// What it looks like.
        found: crate::trace::TraceFormat,
    },

    /// A synthetic pattern that does not parse.
    #[error("synthetic pattern `{pattern}`: {message}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong and what is expected.
        message: String,
    },
}

/// Something a source could not do, reported once; sampling goes on without it.
#[derive(Debug)]
#[non_exhaustive]
pub enum SourceWarning {
    /// A replay line that could not be read; it is skipped and the rest is used.
    SkippedLine(TraceError),
    /// A reading a GPU does not give (unsupported, no permission, ...); left out.
    Unavailable {
        /// GPU index.
        gpu: u32,
        /// The reading, such as `power` or `GPM metrics`.
        what: &'static str,
        /// Why, as the driver says.
        reason: String,
    },
}

impl fmt::Display for SourceWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceWarning::SkippedLine(e) => {
                write!(f, "{e}; skipped it, the other lines are analysed")
            }
            SourceWarning::Unavailable { gpu, what, reason } => {
                write!(
                    f,
                    "GPU {gpu}: {what} is not available ({reason}); it is left out"
                )
            }
        }
    }
}

/// The time of a run, in seconds since its start.
pub trait Clock: fmt::Debug {
    /// Seconds since the clock started.
    fn now(&self) -> f64;
    /// Waits `seconds`: a real clock sleeps, a virtual one moves forward at once.
    fn sleep(&mut self, seconds: f64);
    /// Whether time passes by itself (false for a [`VirtualClock`]).
    fn is_real(&self) -> bool;
}

/// Wall-clock time from a monotonic [`Instant`].
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    start: Instant,
}

impl RealClock {
    /// A clock at 0 now.
    #[must_use]
    pub fn start() -> Self {
        RealClock {
            start: Instant::now(),
        }
    }
}

impl Clock for RealClock {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn sleep(&mut self, seconds: f64) {
        if seconds > 0.0 && seconds.is_finite() {
            std::thread::sleep(Duration::from_secs_f64(seconds));
        }
    }

    fn is_real(&self) -> bool {
        true
    }
}

/// Time that passes only when someone sleeps: tests and `--speed max` run without waiting.
#[derive(Debug, Clone, Copy, Default)]
pub struct VirtualClock {
    now: f64,
}

impl Clock for VirtualClock {
    fn now(&self) -> f64 {
        self.now
    }

    fn sleep(&mut self, seconds: f64) {
        if seconds > 0.0 && seconds.is_finite() {
            self.now += seconds;
        }
    }

    fn is_real(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_jumps() {
        let mut c = VirtualClock::default();
        c.sleep(1.5);
        c.sleep(-1.0);
        c.sleep(f64::NAN);
        assert_eq!(c.now(), 1.5);
        assert!(!c.is_real());
    }

    #[test]
    fn real_clock_moves() {
        let mut c = RealClock::start();
        let a = c.now();
        c.sleep(0.002);
        assert!(c.now() >= a + 0.002);
        assert!(c.is_real());
    }

    #[test]
    fn warnings_read_well() {
        let w = SourceWarning::Unavailable {
            gpu: 1,
            what: "power",
            reason: "not supported".to_owned(),
        };
        assert_eq!(
            w.to_string(),
            "GPU 1: power is not available (not supported); it is left out"
        );
    }
}
