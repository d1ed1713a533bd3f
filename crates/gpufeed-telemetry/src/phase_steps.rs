//! gpufeed's step recording: where the time of each step of a training loop went, phase by
//! phase, as JSON Lines. The Python `gpufeed.StepTimer` writes it (`timer.save(PATH)`);
//! `gpufeed trace FILE` and `gpufeed analyze --trace FILE` read it. The analysis (shares,
//! statistics, the verdict) is `gpufeed::phase_steps`; this module is only the format.
//!
//! # Format (version 1)
//!
//! UTF-8 text, one JSON object per line: the header, then one line per step in the order
//! the loop ran them. Blank lines are ignored.
//!
//! ```text
//! {"format":"gpufeed-steps","version":1,"source":"python StepTimer","sync":true,"warmup":1,"batch_size":32}
//! {"step":0,"ms":12.5,"phases":{"data_wait":1.0,"forward":5.0,"backward":6.0},"items":32}
//! {"step":1,"ms":12.1,"phases":{"data_wait":0.8,"forward":5.1,"backward":5.9},"items":32}
//! ```
//!
//! Header (first non-empty line):
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `format` | string | always `"gpufeed-steps"` |
//! | `version` | integer | `1`; a reader refuses a version it does not know |
//! | `source` | string, optional | what timed the loop, such as `python StepTimer` (default `unknown`) |
//! | `sync` | bool, optional | a device synchronisation ran at each phase boundary, so a phase's time includes the device work it queued (default `false`) |
//! | `warmup` | integer, optional | leading steps left out of the statistics: allocation, compilation, the loader starting (default `0`) |
//! | `batch_size` | integer, optional | items per step, when every step has the same |
//!
//! Step line:
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `step` | integer, optional | the step's number; when present, numbers must increase down the file |
//! | `ms` | number | the whole step, in milliseconds: from one request for a batch to the next; finite and above 0 |
//! | `phases` | object, optional | phase name -> milliseconds, in the order the loop ran them; finite and not negative; a name the loop timed twice in one step (gradient accumulation) counts its total |
//! | `items` | integer, optional | items in this step's batch (overrides `batch_size`) |
//!
//! The phases of a step may add up to less than `ms` (code outside every phase: the rest is
//! reported as unaccounted), but not to more than `ms` plus [`SUM_TOLERANCE`] of it: a phase
//! lies within its step. Keys a reader does not know are ignored, so later versions can
//! add fields; a change older readers would misread raises `version`.
//!
//! # Reading
//!
//! [`read`] streams the file line by line. A last line cut off mid-JSON (the job was killed
//! while writing it) is skipped and its number returned in
//! [`PhaseStepTrace::truncated_line`], for the caller to warn about; every other bad line
//! is a [`TraceError`] naming the file and the line.
//!
//! ```
//! use gpufeed_telemetry::phase_steps::{Meta, StepRecord, read, write};
//! let meta = Meta { source: "test".into(), sync: true, warmup: 0, batch_size: Some(8) };
//! let step = StepRecord {
//!     total_ms: 10.0,
//!     phases: vec![("data_wait".into(), 1.0), ("forward".into(), 8.5)],
//!     items: None,
//! };
//! let mut file = Vec::new();
//! write(&mut file, &meta, &[step.clone()]).unwrap();
//! let read_back = read(file.as_slice(), "steps.jsonl".as_ref()).unwrap();
//! assert_eq!((read_back.meta, read_back.steps), (meta, vec![step]));
//! ```

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::TraceError;
use crate::lines::{LineReader, is_blank};
use crate::trace::{MAX_STEP_RECORD_BYTES, too_large};

/// The value of the header's `format` key.
pub const FORMAT: &str = "gpufeed-steps";

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// How far the phases of a step may add up beyond the step, as a share of it: timers read
/// at each boundary round, and a phase's end and the step's end may be read a tick apart.
/// One percent is far above a nanosecond clock's rounding and far below a real overlap.
pub const SUM_TOLERANCE: f64 = 0.01;

/// About a recording: its header, less `format` and `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// What timed the loop, such as `python StepTimer`.
    pub source: String,
    /// A device synchronisation ran at each phase boundary.
    pub sync: bool,
    /// Leading steps left out of the statistics.
    pub warmup: usize,
    /// Items per step, when every step has the same.
    pub batch_size: Option<u64>,
}

/// One timed step of a loop.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The whole step, ms.
    pub total_ms: f64,
    /// The phases in the order the loop ran them, ms each. A name may come more than once
    /// (a loop that runs `forward` per micro-batch); its times add up.
    pub phases: Vec<(String, f64)>,
    /// Items in this step's batch, when known.
    pub items: Option<u64>,
}

/// What is wrong with one step record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StepProblem {
    /// The step time is not a finite number above 0.
    BadTotal {
        /// The step time, ms.
        value: f64,
    },
    /// A phase time that is negative or not finite.
    BadPhase {
        /// The phase.
        name: String,
        /// Its time, ms.
        value: f64,
    },
    /// A phase with an empty name.
    EmptyName,
    /// The phases add up to more than the step (beyond [`SUM_TOLERANCE`]).
    PhasesOverStep {
        /// The phases' total, ms.
        sum: f64,
        /// The step, ms.
        total: f64,
    },
}

impl fmt::Display for StepProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadTotal { value } => write!(
                f,
                "step time `{value}` ms is not a number above 0; a step's time runs from one \
                 request for a batch to the next"
            ),
            Self::BadPhase { name, value } => write!(
                f,
                "phase `{}` is `{value}` ms; phase times must be finite and not negative",
                crate::error::shown(name)
            ),
            Self::EmptyName => write!(f, "a phase has an empty name; name every phase"),
            Self::PhasesOverStep { sum, total } => write!(
                f,
                "the phases add up to {sum:.3} ms, more than the step's {total:.3} ms (beyond \
                 {:.0} % rounding); a phase must lie within its step: were two phases timed at \
                 once, or one across two steps?",
                100.0 * SUM_TOLERANCE
            ),
        }
    }
}

impl std::error::Error for StepProblem {}

impl StepRecord {
    /// Checks the record: a step time above 0, phase times finite and not negative, names
    /// not empty, the phases within the step (up to [`SUM_TOLERANCE`]).
    pub fn check(&self) -> Result<(), StepProblem> {
        if !(self.total_ms.is_finite() && self.total_ms > 0.0) {
            return Err(StepProblem::BadTotal {
                value: self.total_ms,
            });
        }
        let mut sum = 0.0;
        for (name, ms) in &self.phases {
            if name.is_empty() {
                return Err(StepProblem::EmptyName);
            }
            if !(ms.is_finite() && *ms >= 0.0) {
                return Err(StepProblem::BadPhase {
                    name: name.clone(),
                    value: *ms,
                });
            }
            sum += ms;
        }
        if sum > self.total_ms * (1.0 + SUM_TOLERANCE) {
            return Err(StepProblem::PhasesOverStep {
                sum,
                total: self.total_ms,
            });
        }
        Ok(())
    }

    /// About what the record takes in memory: the record, its phases and their names.
    fn memory(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .phases
                .iter()
                .map(|(name, _)| std::mem::size_of::<(String, f64)>() + name.capacity())
                .sum::<usize>()
    }

    /// The phases with each name once, in order of first appearance, the times of a name
    /// that came more than once added up.
    pub fn merged_phases(&self) -> Vec<(&str, f64)> {
        let mut out: Vec<(&str, f64)> = Vec::with_capacity(self.phases.len());
        for (name, ms) in &self.phases {
            match out.iter_mut().find(|(n, _)| *n == name.as_str()) {
                Some((_, total)) => *total += ms,
                None => out.push((name.as_str(), *ms)),
            }
        }
        out
    }
}

/// A step recording as read.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseStepTrace {
    /// The header.
    pub meta: Meta,
    /// Every step, warm-up included, in file order.
    pub steps: Vec<StepRecord>,
    /// The line of a last step cut off mid-line (a killed job), which was skipped. The
    /// caller should warn when this is set.
    pub truncated_line: Option<usize>,
}

impl PhaseStepTrace {
    /// The step times after the warm-up, ms: the series `gpufeed trace --kind steps`
    /// analyses on a step recording.
    pub fn analysed_totals(&self) -> Vec<f64> {
        self.steps
            .iter()
            .skip(self.meta.warmup)
            .map(|s| s.total_ms)
            .collect()
    }
}

/// Writes a recording: the header, then one line per step. Every record is checked first
/// ([`StepRecord::check`]); a bad one is an `InvalidInput` error naming the step (from 0),
/// and nothing is written. `out` should be a temporary file renamed when this returns
/// `Ok`, so that a recording is never half-written.
pub fn write(mut out: impl Write, meta: &Meta, steps: &[StepRecord]) -> io::Result<()> {
    for (i, s) in steps.iter().enumerate() {
        s.check()
            .map_err(|p| io::Error::new(io::ErrorKind::InvalidInput, format!("step {i}: {p}")))?;
    }
    let mut line = Vec::with_capacity(256);
    serde_json::to_writer(
        &mut line,
        &HeaderOut {
            format: FORMAT,
            version: VERSION,
            source: &meta.source,
            sync: meta.sync,
            warmup: meta.warmup,
            batch_size: meta.batch_size,
        },
    )?;
    line.push(b'\n');
    out.write_all(&line)?;
    for (i, s) in steps.iter().enumerate() {
        line.clear();
        serde_json::to_writer(
            &mut line,
            &StepOut {
                step: i,
                ms: s.total_ms,
                phases: PhasesOut(s.merged_phases()),
                items: s.items,
            },
        )?;
        line.push(b'\n');
        out.write_all(&line)?;
    }
    out.flush()
}

#[derive(Serialize)]
struct HeaderOut<'a> {
    format: &'static str,
    version: u32,
    source: &'a str,
    sync: bool,
    warmup: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    batch_size: Option<u64>,
}

#[derive(Serialize)]
struct StepOut<'a> {
    step: usize,
    ms: f64,
    phases: PhasesOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    items: Option<u64>,
}

/// Phases as a JSON object, in order.
struct PhasesOut<'a>(Vec<(&'a str, f64)>);

impl Serialize for PhasesOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, ms) in &self.0 {
            m.serialize_entry(name, ms)?;
        }
        m.end()
    }
}

/// The header's fields (`format` and `version` are checked before).
#[derive(Deserialize)]
struct HeaderIn {
    #[serde(default = "unknown_source")]
    source: String,
    #[serde(default)]
    sync: bool,
    #[serde(default)]
    warmup: usize,
    #[serde(default)]
    batch_size: Option<u64>,
}

fn unknown_source() -> String {
    "unknown".to_owned()
}

/// A step line. `ms` is optional here so that a line without it gets a message of ours,
/// and a second header is recognised as one.
#[derive(Deserialize)]
struct StepIn {
    #[serde(default)]
    format: Option<IgnoredAny>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    ms: Option<f64>,
    #[serde(default)]
    phases: PhasesIn,
    #[serde(default)]
    items: Option<u64>,
}

/// A JSON object of phase times read in file order (serde_json's own map sorts its keys).
#[derive(Default)]
struct PhasesIn(Vec<(String, f64)>);

impl<'de> Deserialize<'de> for PhasesIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PhasesIn;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of phase name -> milliseconds")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PhasesIn, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some((name, ms)) = map.next_entry::<String, f64>()? {
                    out.push((name, ms));
                }
                Ok(PhasesIn(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads a step recording (see the [module docs](self)); `path` is for messages.
pub fn read(reader: impl BufRead, path: &Path) -> Result<PhaseStepTrace, TraceError> {
    read_with(reader, path, MAX_STEP_RECORD_BYTES)
}

/// [`read`], keeping at most `max_bytes` of steps.
pub(crate) fn read_with(
    reader: impl BufRead,
    path: &Path,
    max_bytes: usize,
) -> Result<PhaseStepTrace, TraceError> {
    let mut lines = LineReader::new(reader);
    let meta = loop {
        let Some((n, line)) = lines.next_line(path)? else {
            return Err(TraceError::Empty {
                path: path.to_owned(),
            });
        };
        if !is_blank(line) {
            break parse_header(line, n, path)?;
        }
    };
    let mut steps = Vec::new();
    // What the steps kept take in memory, bounded by `max_bytes`.
    let mut kept = 0usize;
    let mut last_number: Option<u64> = None;
    // A line that ended mid-JSON: an error unless nothing but blank lines follows it.
    let mut cut: Option<(usize, serde_json::Error)> = None;
    while let Some((n, line)) = lines.next_line(path)? {
        if is_blank(line) {
            continue;
        }
        if let Some((m, e)) = cut.take() {
            return Err(json_error(path, m, &e));
        }
        let bad = |message: String| TraceError::InvalidStep {
            path: path.to_owned(),
            line: n,
            message,
        };
        // serde would take an array as the struct's fields in order.
        if line.trim_ascii_start().first() != Some(&b'{') {
            return Err(bad(
                "not a JSON object; a step line is an object such as `{\"ms\":12.5}`".to_owned(),
            ));
        }
        let parsed: StepIn = match serde_json::from_slice(line) {
            Ok(p) => p,
            Err(e) if e.is_eof() => {
                cut = Some((n, e));
                continue;
            }
            Err(e) => return Err(json_error(path, n, &e)),
        };
        if parsed.format.is_some() {
            return Err(bad(
                "a second header: two recordings were joined into one file".to_owned(),
            ));
        }
        let Some(total_ms) = parsed.ms else {
            return Err(bad(
                "no `ms`: every step line needs the step's time in milliseconds".to_owned(),
            ));
        };
        if let Some(k) = parsed.step {
            if let Some(prev) = last_number.filter(|&p| k <= p) {
                return Err(bad(format!(
                    "step `{k}` after step `{prev}`: step numbers must increase; were two \
                     recordings joined?"
                )));
            }
            last_number = Some(k);
        }
        let record = StepRecord {
            total_ms,
            phases: parsed.phases.0,
            items: parsed.items,
        };
        record.check().map_err(|p| bad(p.to_string()))?;
        kept += record.memory();
        if kept > max_bytes {
            let what = format!("{} steps", steps.len());
            return Err(too_large(path, n, what, max_bytes));
        }
        steps.push(record);
    }
    Ok(PhaseStepTrace {
        meta,
        steps,
        truncated_line: cut.map(|(n, _)| n),
    })
}

fn parse_header(line: &[u8], n: usize, path: &Path) -> Result<Meta, TraceError> {
    let not_a_header = |found: Option<String>| TraceError::NotAStepsHeader {
        path: path.to_owned(),
        line: n,
        found,
    };
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|_| not_a_header(None))?;
    match value.get("format") {
        Some(serde_json::Value::String(f)) if f == FORMAT => {}
        Some(serde_json::Value::String(f)) => {
            return Err(not_a_header(Some(crate::error::shown(f))));
        }
        _ => return Err(not_a_header(None)),
    }
    crate::error::check_version(&value, VERSION, path, n, || not_a_header(None))?;
    let h: HeaderIn = serde_json::from_slice(line).map_err(|e| json_error(path, n, &e))?;
    Ok(Meta {
        source: h.source,
        sync: h.sync,
        warmup: h.warmup,
        batch_size: h.batch_size,
    })
}

fn json_error(path: &Path, line: usize, e: &serde_json::Error) -> TraceError {
    crate::jsonl::json_error(path, line, e)
}

#[cfg(test)]
mod tests;
