//! Telemetry for gpufeed: the data model of GPU and host samples, the sources that produce
//! them live (NVML, `/proc`) or offline (replay, synthetic), the sampler that paces them,
//! and readers for the recorded traces that `gpufeed trace FILE [--kind util|steps]`
//! analyses.
//!
//! This crate only turns hardware and files into plain structs; every statistic lives in
//! `gpufeed-stats`, and nothing here prints.
//!
//! Live telemetry (`gpufeed monitor`, `gpufeed watch`):
//!
//! | module | what |
//! |---|---|
//! | [`source`] | the [`Source`](source::Source) trait every source implements, and the clocks ([`RealClock`](source::RealClock), [`VirtualClock`](source::VirtualClock)) |
//! | [`nvml`] | the GPUs of this machine through NVML, loaded at run time |
//! | [`host`] | CPU, iowait, pressure, disks and a process tree from `/proc` |
//! | [`replay`] | a recording played back as if live |
//! | [`synthetic`] | made-up GPUs with named patterns (`oscillating:period=1.5`) |
//! | [`sampler`] | the loop that polls sources on a clock, and the [`Collector`](sampler::Collector) that keeps series for analysis |
//! | [`prometheus`] | the `/metrics` exporter: raw gauges and the window's derived figures |
//!
//! Recorded traces:
//!
//! | module | reads | into |
//! |---|---|---|
//! | [`nvsmi`] | `nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -lms 100` logs | [`UtilTrace`](trace::UtilTrace) |
//! | [`jsonl`] | gpufeed's own JSONL recordings (and writes them: [`JsonlWriter`](jsonl::JsonlWriter)) | [`UtilTrace`](trace::UtilTrace), [`Record`](jsonl::Record)s |
//! | [`steps`] | step times, one per line or a CSV column | [`StepTrace`](trace::StepTrace) |
//! | [`phase_steps`] | step recordings of the Python `StepTimer`: each step with its phases (and writes them) | [`PhaseStepTrace`](phase_steps::PhaseStepTrace) |
//! | [`trace`] | any of these, detected from the first line | [`Trace`](trace::Trace) |
//!
//! Each module's documentation is the reference for its format. Every reader streams
//! (`impl BufRead`) and takes the file's path for its messages; any input gives `Ok` or a
//! [`TraceError`] naming the file, the line and what to do, never a panic.
//!
//! ```no_run
//! use gpufeed_telemetry::trace::{read_trace, Trace};
//! match read_trace("gpu.csv".as_ref(), None)? {
//!     Trace::Util(util) => assert!(util.gpus.iter().all(|g| g.t.len() == g.util.len())),
//!     Trace::Steps(steps) => assert!(steps.ms.iter().all(|&ms| ms >= 0.0)),
//!     Trace::PhaseSteps(rec) => assert!(rec.steps.iter().all(|s| s.total_ms > 0.0)),
//! }
//! # Ok::<(), gpufeed_telemetry::TraceError>(())
//! ```

#![deny(missing_docs)]

pub mod dcgm;
pub mod host;
pub mod jsonl;
pub mod nvml;
pub mod nvsmi;
pub mod phase_steps;
pub mod prometheus;
pub mod replay;
pub mod sampler;
pub mod source;
pub mod steps;
pub mod synthetic;
pub mod trace;

mod error;
mod lines;

pub use error::{NVSMI_RECORD_COMMAND, TraceError};

#[cfg(test)]
pub(crate) mod test_util {
    /// What anyhow's `{:#}` prints: the message and every source, joined by ": ".
    pub(crate) fn chain(e: &dyn std::error::Error) -> String {
        let mut s = e.to_string();
        let mut cur = e.source();
        while let Some(c) = cur {
            s.push_str(": ");
            s.push_str(&c.to_string());
            cur = c.source();
        }
        s
    }
}
