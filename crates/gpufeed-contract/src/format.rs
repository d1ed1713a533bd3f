//! The one trace-format enum: every file format `gpufeed trace` and `gpufeed analyze
//! --trace` read, logs and profiler traces alike.
//!
//! `gpufeed_analysis::detect` decides which format a path holds; gpufeed-telemetry reads
//! the logs, gpufeed-kineto the profiler traces. Adding a format means one variant here,
//! one arm in `detect`, and its reader.
//!
//! ```
//! use gpufeed_contract::format::{TraceFormat, TraceKind};
//!
//! assert_eq!(TraceFormat::NvidiaSmiDmon.kind(), TraceKind::Util);
//! assert_eq!(TraceFormat::Pytorch.describe(), "a PyTorch profiler trace");
//! assert_eq!(serde_json::to_value(TraceFormat::Tensorflow).unwrap(), "tensorflow");
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a trace measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// GPU utilisation over time.
    Util,
    /// Durations of training steps.
    Steps,
    /// A framework profiler's events (kernels, operators, steps).
    Profiler,
}

impl TraceKind {
    /// The name used on the command line: `util`, `steps` or `profiler`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TraceKind::Util => "util",
            TraceKind::Steps => "steps",
            TraceKind::Profiler => "profiler",
        }
    }

    /// "a GPU utilisation log", "a list of step times" or "a profiler trace", for messages.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            TraceKind::Util => "a GPU utilisation log",
            TraceKind::Steps => "a list of step times",
            TraceKind::Profiler => "a profiler trace",
        }
    }
}

impl fmt::Display for TraceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The file format a trace was read from. Serialises in snake case: `nvidia_smi_csv`,
/// `nvidia_smi_job`, `nvidia_smi_dmon`, `gpufeed_jsonl`, `step_list`, `phase_steps`,
/// `pytorch`, `tensorflow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `nvidia-smi --query-gpu=... --format=csv` output (gpufeed-telemetry's `nvsmi`).
    NvidiaSmiCsv,
    /// Job output (LSF, Slurm) holding `nvidia-smi` tables (`nvsmi::job`).
    NvidiaSmiJob,
    /// `nvidia-smi dmon` output (`nvsmi::dmon`).
    NvidiaSmiDmon,
    /// `dcgmi dmon` output (gpufeed-telemetry's `dcgm`).
    DcgmiDmon,
    /// A Prometheus range query of dcgm-exporter's metrics (`dcgm`).
    Prometheus,
    /// gpufeed's own recording (`jsonl`).
    GpufeedJsonl,
    /// Step times, one per line or a CSV column (`steps`).
    StepList,
    /// Step times with their phases, the Python `StepTimer`'s (`phase_steps`).
    PhaseSteps,
    /// PyTorch profiler (Kineto) Chrome trace (gpufeed-kineto).
    Pytorch,
    /// TensorFlow (or JAX) profiler trace: trace viewer JSON (`*.trace.json.gz`) or
    /// `*.xplane.pb` (gpufeed-kineto).
    Tensorflow,
}

impl TraceFormat {
    /// Every format, in declaration order.
    pub const ALL: [TraceFormat; 10] = [
        TraceFormat::NvidiaSmiCsv,
        TraceFormat::NvidiaSmiJob,
        TraceFormat::NvidiaSmiDmon,
        TraceFormat::DcgmiDmon,
        TraceFormat::Prometheus,
        TraceFormat::GpufeedJsonl,
        TraceFormat::StepList,
        TraceFormat::PhaseSteps,
        TraceFormat::Pytorch,
        TraceFormat::Tensorflow,
    ];

    /// The kind of trace this format holds.
    #[must_use]
    pub fn kind(self) -> TraceKind {
        match self {
            TraceFormat::NvidiaSmiCsv
            | TraceFormat::NvidiaSmiJob
            | TraceFormat::NvidiaSmiDmon
            | TraceFormat::DcgmiDmon
            | TraceFormat::Prometheus
            | TraceFormat::GpufeedJsonl => TraceKind::Util,
            TraceFormat::StepList | TraceFormat::PhaseSteps => TraceKind::Steps,
            TraceFormat::Pytorch | TraceFormat::Tensorflow => TraceKind::Profiler,
        }
    }

    /// Whether a framework profiler wrote it (gpufeed-kineto reads it).
    #[must_use]
    pub fn is_profiler(self) -> bool {
        self.kind() == TraceKind::Profiler
    }

    /// Its name without an article, for headings: "nvidia-smi log", "PyTorch profiler
    /// trace", ...
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::NvidiaSmiCsv => "nvidia-smi log",
            TraceFormat::NvidiaSmiJob => "job output with nvidia-smi tables",
            TraceFormat::NvidiaSmiDmon => "nvidia-smi dmon output",
            TraceFormat::DcgmiDmon => "dcgmi dmon output",
            TraceFormat::Prometheus => "Prometheus range query (DCGM)",
            TraceFormat::GpufeedJsonl => "gpufeed recording",
            TraceFormat::StepList => "step-time list",
            TraceFormat::PhaseSteps => "step recording",
            TraceFormat::Pytorch => "PyTorch profiler trace",
            // TensorFlow's and JAX's profilers write the same XSpace and trace viewer JSON.
            TraceFormat::Tensorflow => "TensorFlow / JAX profiler trace",
        }
    }

    /// Its name with an article, for messages: "an nvidia-smi log", "a gpufeed JSONL
    /// recording", "a PyTorch profiler trace", ...
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::NvidiaSmiCsv => "an nvidia-smi log",
            TraceFormat::NvidiaSmiJob => "job output with nvidia-smi tables",
            TraceFormat::NvidiaSmiDmon => "nvidia-smi dmon output",
            TraceFormat::DcgmiDmon => "dcgmi dmon output",
            TraceFormat::Prometheus => "a Prometheus range query of DCGM's metrics",
            TraceFormat::GpufeedJsonl => "a gpufeed JSONL recording",
            TraceFormat::StepList => "a list of step times",
            TraceFormat::PhaseSteps => "a gpufeed step recording",
            TraceFormat::Pytorch => "a PyTorch profiler trace",
            TraceFormat::Tensorflow => "a TensorFlow / JAX profiler trace",
        }
    }

    /// The framework whose profiler wrote it: "PyTorch" or "TensorFlow / JAX" (one format);
    /// `None` for a log.
    #[must_use]
    pub fn framework(self) -> Option<&'static str> {
        match self {
            TraceFormat::Pytorch => Some("PyTorch"),
            TraceFormat::Tensorflow => Some("TensorFlow / JAX"),
            _ => None,
        }
    }

    /// Its serialised name (`nvidia_smi_csv`, `pytorch`, ...).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::NvidiaSmiCsv => "nvidia_smi_csv",
            TraceFormat::NvidiaSmiJob => "nvidia_smi_job",
            TraceFormat::NvidiaSmiDmon => "nvidia_smi_dmon",
            TraceFormat::DcgmiDmon => "dcgmi_dmon",
            TraceFormat::Prometheus => "prometheus",
            TraceFormat::GpufeedJsonl => "gpufeed_jsonl",
            TraceFormat::StepList => "step_list",
            TraceFormat::PhaseSteps => "phase_steps",
            TraceFormat::Pytorch => "pytorch",
            TraceFormat::Tensorflow => "tensorflow",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The JSON Schema of a field that holds a profiler's format (the `profiler` document's
/// `format`): a reference to `$defs/TraceFormat`, which lists only the profiler formats,
/// since no other can appear there. Use as `#[schemars(schema_with =
/// "gpufeed_contract::format::profiler_format_schema")]`.
pub fn profiler_format_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let one_of: Vec<serde_json::Value> = TraceFormat::ALL
        .into_iter()
        .filter(|f| f.is_profiler())
        .map(|f| {
            serde_json::json!({
                "const": f.as_str(),
                "description": profiler_description(f),
                "type": "string",
            })
        })
        .collect();
    let def = serde_json::json!({
        "description": "Which profiler wrote the trace.",
        "oneOf": one_of,
    });
    generator
        .definitions_mut()
        .insert("TraceFormat".to_owned(), def);
    schemars::json_schema!({ "$ref": "#/$defs/TraceFormat" })
}

fn profiler_description(f: TraceFormat) -> &'static str {
    match f {
        TraceFormat::Tensorflow => "TensorFlow profiler trace viewer JSON (`*.trace.json.gz`).",
        _ => "PyTorch profiler (Kineto) Chrome trace.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialised_names_are_serdes() {
        for f in TraceFormat::ALL {
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
            let back: TraceFormat = serde_json::from_value(f.as_str().into()).unwrap();
            assert_eq!(back, f);
        }
    }

    #[test]
    fn profiler_schema_lists_the_profiler_formats_only() {
        let mut g = schemars::SchemaGenerator::default();
        let s = profiler_format_schema(&mut g);
        assert_eq!(s.get("$ref").unwrap(), "#/$defs/TraceFormat");
        let def = g.definitions().get("TraceFormat").unwrap();
        let consts: Vec<&str> = def["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["const"].as_str().unwrap())
            .collect();
        assert_eq!(consts, ["pytorch", "tensorflow"]);
    }
}
