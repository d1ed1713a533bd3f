//! The `attach` document: `gpufeed attach PID`, the Python stacks of a running training
//! job sampled for a window, classified sample by sample, with a verdict in the vocabulary
//! of `StepTimer` and `trace`.

use std::fmt;

use gpufeed_stats::thresholds::Level;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;
use crate::estimate::SpeedupIfFixed;

/// What the training loop is bound by, as seen from its stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AttachVerdict {
    /// The loop waits for its data.
    InputBound,
    /// The loop waits in host-device synchronisations while the GPU idles.
    SyncBound,
    /// The loop computes (or waits for a busy GPU).
    ComputeBound,
    /// Too few samples of the training thread, or most of them in nothing known.
    Undetermined,
}

impl AttachVerdict {
    /// As in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputBound => "input-bound",
            Self::SyncBound => "sync-bound",
            Self::ComputeBound => "compute-bound",
            Self::Undetermined => "undetermined",
        }
    }
}

impl fmt::Display for AttachVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fractions of the training thread's samples per class; they sum to 1 (all 0 without
/// samples).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachShares {
    /// Waiting for the next batch (a data loader's or iterator's `__next__`, a generator
    /// driving the loop).
    pub data_wait: f64,
    /// Host-device synchronisation (`.item()`, `.cpu()`, `torch.cuda.synchronize`, ...).
    pub sync: f64,
    /// Forward, backward, optimizer, or the user's own code running.
    pub compute: f64,
    /// Saving checkpoints, logging.
    pub checkpoint_logging: f64,
    /// Anything else (idle outside every known wait).
    pub other: f64,
}

/// One line of code and how often it was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopFrame {
    /// The function.
    pub function: String,
    /// Its file, as the target sees it.
    pub file: String,
    /// The line being run.
    pub line: u32,
    /// Fraction of the samples counted (of the class, or of the worker's busy samples).
    pub share: f64,
}

/// A training process (one per rank under a launcher).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachRank {
    /// Its PID as gpufeed sees it.
    pub pid: u32,
    /// Its PIDs in each PID namespace, outermost first (`/proc/PID/status` `NSpid`); the
    /// first is the one NVML reports when gpufeed runs on the host.
    pub nspid: Vec<u32>,
    /// The rank from its environment (`RANK`, `OMPI_COMM_WORLD_RANK`, `PMI_RANK`), if set.
    pub rank: Option<u32>,
    /// Its command line.
    pub command: String,
    /// The thread classified: `main thread`, or the thread's name, with its OS id.
    pub training_thread: String,
    /// Samples of the training thread.
    pub samples: usize,
    /// Stacks that could not be read whole (the target ran on while being read).
    pub torn: usize,
    /// Per class, over this rank's training thread.
    pub shares: AttachShares,
    /// CPU use over the window, in cores (1.0 = one core busy).
    pub cpu: f64,
    /// Bytes read from storage over the window (`/proc/PID/io` `read_bytes`), if readable.
    pub read_bytes: Option<u64>,
}

/// The classified lines of one class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassLines {
    /// `data_wait`, `sync`, `compute`, `checkpoint_logging` or `other`.
    pub class: String,
    /// The user's own lines most often seen in it (the innermost frame outside libraries),
    /// with their share of the class's samples.
    pub top: Vec<TopFrame>,
}

/// A child process of a training process (a DataLoader worker, a pool process).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachWorker {
    /// Its PID.
    pub pid: u32,
    /// The PID of the training process it belongs to.
    pub parent: u32,
    /// CPU use over the time it was seen, in cores (1.0 = one core busy).
    pub cpu: f64,
    /// Where its busy samples were, innermost frame of the user's code first if any.
    pub top_frames: Vec<TopFrame>,
}

/// One GPU used by the job, from NVML.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuUse {
    /// NVML index.
    pub index: u32,
    /// Mean utilisation of the whole GPU over the window, %.
    pub util_pct: Option<f64>,
    /// Mean SM utilisation of the job's processes (NVML per-process samples), %.
    pub process_util_pct: Option<f64>,
}

/// What the sampling cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachCost {
    /// Stack reads made (every process, every tick).
    pub reads: usize,
    /// gpufeed's own CPU time per read, ms.
    pub cpu_ms_per_read: f64,
}

/// `gpufeed attach PID`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attach {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// The PID given.
    pub pid: u32,
    /// The Python version read in the target (`3.11.7`).
    pub python: String,
    /// The launcher followed (`torchrun`, `mpirun`, ...), when the PID was one.
    pub launcher: Option<String>,
    /// `input-bound`, `sync-bound`, `compute-bound` or `undetermined`.
    pub verdict: AttachVerdict,
    /// `moderate` or `high` for input- and sync-bound (TF Profiler's 5 % / 20 %).
    pub level: Option<Level>,
    /// Per class, over every rank's training-thread samples.
    pub shares: AttachShares,
    /// Training-thread samples, all ranks.
    pub samples: usize,
    /// Stacks that could not be read whole (non-blocking reads of a running target).
    pub torn: usize,
    /// Seconds sampled (less than asked when the target exited).
    pub window_s: f64,
    /// Samples asked per second.
    pub rate_hz: f64,
    /// Whether the target exited during the window.
    pub exited: bool,
    /// The training processes.
    pub ranks: Vec<AttachRank>,
    /// The top lines of each class seen.
    pub lines: Vec<ClassLines>,
    /// Child processes of the training processes.
    pub workers: Vec<AttachWorker>,
    /// The GPUs the job used, when NVML was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<Vec<GpuUse>>,
    /// The figures behind the verdict, one sentence each.
    pub evidence: Vec<String>,
    /// The change to try, naming the user's own line.
    pub fix: String,
    /// What fixing the verdict's cause is worth: the steps per second after over before,
    /// from its share of the samples (docs/what-if.md); `null` with `no_estimate` for a
    /// `compute-bound` or `undetermined` job.
    pub if_fixed: Option<SpeedupIfFixed>,
    /// Why `if_fixed` is `null`.
    pub no_estimate: Option<String>,
    /// What the sampling cost gpufeed.
    pub cost: AttachCost,
}

impl Document for Attach {
    const NAME: &'static str = "attach";
    /// 2: `if_fixed` and `no_estimate` (issue 29).
    const VERSION: u32 = 2;
    const WRITER: &'static str = "gpufeed attach";
}
