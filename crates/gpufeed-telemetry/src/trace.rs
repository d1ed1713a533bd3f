//! What `gpufeed trace FILE [--kind util|steps]` reads: kind detection and [`read_trace`].
//!
//! # Detection
//!
//! With no `--kind`, the first non-empty line (after a UTF-8 byte-order mark) decides:
//!
//! | first non-empty line | read as |
//! |---|---|
//! | starts with `{` and declares `"format":"gpufeed-steps"` | a [step recording](crate::phase_steps) (step times with their phases) |
//! | starts with `{` otherwise | a [gpufeed JSONL recording](crate::jsonl) (utilisation) |
//! | contains `utilization.gpu` (any case), starts with a `YYYY/MM/DD` date, contains both `timestamp` and `index`, or has a field ending in `%` | an [nvidia-smi log](crate::nvsmi) (utilisation) |
//! | anything else | a [list of step times](crate::steps) |
//!
//! With `--kind`, the content is checked against it and a clear contradiction is an error
//! ([`TraceError::WrongKind`]): `--kind util` on a step recording; `--kind steps` on a
//! JSONL utilisation recording, on a line containing
//! `utilization.gpu` or on one starting with an nvidia-smi timestamp; `--kind util` on a
//! file whose first line is a single number, a `#` comment or a step-list header (a
//! header naming one step-time column, such as `step_time_ms`). Weaker hints give way to
//! the kind asked for: `--kind steps` reads a CSV whose header merely has `timestamp` and
//! `index` columns as a step list, and `--kind util` reads a headerless multi-column file
//! with neither timestamps nor units (such as `0, 45`) as an nvidia-smi log.
//!
//! ```
//! use gpufeed_telemetry::trace::{detect_kind, TraceFormat, TraceKind};
//! assert_eq!(
//!     detect_kind("timestamp, index, utilization.gpu [%]"),
//!     (TraceKind::Util, TraceFormat::NvidiaSmiCsv)
//! );
//! assert_eq!(detect_kind("12.5"), (TraceKind::Steps, TraceFormat::StepList));
//! ```

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Cursor, Read as _};
use std::path::Path;

use crate::lines::{MAX_LINE, is_blank, read_line};
use crate::phase_steps::PhaseStepTrace;
use crate::{TraceError, jsonl, nvsmi, phase_steps, steps};

/// What a trace measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// GPU utilisation over time.
    Util,
    /// Durations of training steps.
    Steps,
}

impl TraceKind {
    /// The name used on the command line: `util` or `steps`.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceKind::Util => "util",
            TraceKind::Steps => "steps",
        }
    }

    /// "a GPU utilisation log" or "a list of step times", for messages.
    pub fn describe(self) -> &'static str {
        match self {
            TraceKind::Util => "a GPU utilisation log",
            TraceKind::Steps => "a list of step times",
        }
    }
}

impl fmt::Display for TraceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The file format a trace was read from. Serialises as `nvidia_smi_csv`,
/// `gpufeed_jsonl`, `step_list` or `phase_steps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `nvidia-smi --query-gpu=... --format=csv` output, see [`crate::nvsmi`].
    NvidiaSmiCsv,
    /// gpufeed's own recording, see [`crate::jsonl`].
    GpufeedJsonl,
    /// Step times, one per line or a CSV column, see [`crate::steps`].
    StepList,
    /// Step times with their phases (the Python `StepTimer`), see [`crate::phase_steps`].
    PhaseSteps,
}

impl TraceFormat {
    /// The kind of trace this format holds.
    pub fn kind(self) -> TraceKind {
        match self {
            TraceFormat::NvidiaSmiCsv | TraceFormat::GpufeedJsonl => TraceKind::Util,
            TraceFormat::StepList | TraceFormat::PhaseSteps => TraceKind::Steps,
        }
    }

    /// "an nvidia-smi log", "a gpufeed JSONL recording", "a list of step times" or "a
    /// gpufeed step recording".
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::NvidiaSmiCsv => "an nvidia-smi log",
            TraceFormat::GpufeedJsonl => "a gpufeed JSONL recording",
            TraceFormat::StepList => "a list of step times",
            TraceFormat::PhaseSteps => "a gpufeed step recording",
        }
    }
}

/// The utilisation samples of one GPU, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSeries {
    /// GPU index (`index` column or JSONL `gpu`; otherwise 0, 1, ... in order of first
    /// appearance of its UUID or PCI bus id).
    pub gpu: u32,
    /// Sample times in seconds, as read (any origin; only differences matter). Without
    /// timestamps ([`UtilTrace::has_timestamps`] false) the row number of the GPU: 0, 1, ...
    pub t: Vec<f64>,
    /// Utilisation in percent, 0..=100, one per entry of `t`.
    pub util: Vec<f64>,
}

/// A utilisation trace: one series per GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct UtilTrace {
    /// The format it was read from.
    pub format: TraceFormat,
    /// One series per GPU that has at least one sample, sorted by GPU index.
    pub gpus: Vec<GpuSeries>,
    /// Samples kept, all GPUs together.
    pub rows: usize,
    /// Values skipped because they were unavailable (`[N/A]` and the like in nvidia-smi
    /// logs, an absent `util` in JSONL). The caller should warn when this is not 0.
    pub skipped: usize,
    /// Whether `t` holds real times. False for an nvidia-smi log without a timestamp
    /// column: `t` is then the row number per GPU and the caller must know the interval.
    pub has_timestamps: bool,
}

/// Step times.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTrace {
    /// Step times in milliseconds, in file order.
    pub ms: Vec<f64>,
    /// The header name of the column read, if the file has a header.
    pub column: Option<String>,
    /// The unit the file uses (milliseconds when the header does not say).
    pub unit: TimeUnit,
}

/// A unit of step time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
    /// Microseconds.
    Microseconds,
    /// Nanoseconds (Python's `time.perf_counter_ns()`).
    Nanoseconds,
}

impl TimeUnit {
    /// How many milliseconds one of this unit is.
    pub fn to_ms(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1e3,
            TimeUnit::Milliseconds => 1.0,
            TimeUnit::Microseconds => 1e-3,
            TimeUnit::Nanoseconds => 1e-6,
        }
    }

    /// The symbol: `s`, `ms`, `us` or `ns`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Microseconds => "us",
            TimeUnit::Nanoseconds => "ns",
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A trace of either kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Trace {
    /// GPU utilisation.
    Util(UtilTrace),
    /// Step times.
    Steps(StepTrace),
    /// Step times with their phases (kind [`TraceKind::Steps`]).
    PhaseSteps(PhaseStepTrace),
}

impl Trace {
    /// The kind of trace.
    pub fn kind(&self) -> TraceKind {
        match self {
            Trace::Util(_) => TraceKind::Util,
            Trace::Steps(_) | Trace::PhaseSteps(_) => TraceKind::Steps,
        }
    }
}

/// Reads the trace in `path`, detecting its format (see the [module docs](self)); `kind`
/// is `--kind`, and content that contradicts it is [`TraceError::WrongKind`].
pub fn read_trace(path: &Path, kind: Option<TraceKind>) -> Result<Trace, TraceError> {
    // `TraceError::Io` names the path itself; fs-err would put it into the message a second
    // time, so this one open uses std directly.
    #[allow(clippy::disallowed_methods)]
    let file = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    read_trace_from(BufReader::with_capacity(256 * 1024, file), path, kind)
}

/// A reader with the bytes already read put back in front of it.
pub(crate) type Rewound<R> = std::io::Chain<Cursor<Vec<u8>>, R>;

/// Reads up to the first non-empty line (after a UTF-8 BOM) and returns it with a reader
/// that yields the whole input again from the start, so the format reader that follows
/// sees every line and its line numbers stay right. An empty input, an over-long line or
/// invalid UTF-8 in that line is the error naming the file.
pub(crate) fn peek_first_line<R: BufRead>(
    mut reader: R,
    path: &Path,
) -> Result<(String, Rewound<R>), TraceError> {
    let mut prefix = Vec::new();
    let mut line_no = 0;
    let first = loop {
        let start = prefix.len();
        let n = read_line(&mut reader, &mut prefix).map_err(|e| TraceError::io(path, e))?;
        if n == 0 {
            return Err(TraceError::Empty {
                path: path.to_owned(),
            });
        }
        line_no += 1;
        if n > MAX_LINE {
            return Err(TraceError::LineTooLong {
                path: path.to_owned(),
                line: line_no,
                limit: MAX_LINE,
            });
        }
        let mut line = &prefix[start..];
        if line_no == 1 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if !is_blank(line) {
            break std::str::from_utf8(line)
                .map_err(|_| TraceError::InvalidUtf8 {
                    path: path.to_owned(),
                    line: line_no,
                })?
                .to_owned();
        }
    };
    Ok((first, Cursor::new(prefix).chain(reader)))
}

/// [`read_trace`] on an open reader; `path` is only used in messages.
pub fn read_trace_from(
    reader: impl BufRead,
    path: &Path,
    kind: Option<TraceKind>,
) -> Result<Trace, TraceError> {
    let (first, reader) = peek_first_line(reader, path)?;
    let sniff = sniff(&first);
    let format = match kind {
        None => sniff.format,
        Some(k) if k == sniff.format.kind() => sniff.format,
        Some(k) if sniff.strong => {
            return Err(TraceError::WrongKind {
                path: path.to_owned(),
                found: sniff.format,
                requested: k,
            });
        }
        Some(TraceKind::Util) => TraceFormat::NvidiaSmiCsv,
        Some(TraceKind::Steps) => TraceFormat::StepList,
    };
    Ok(match format {
        TraceFormat::NvidiaSmiCsv => Trace::Util(nvsmi::read(reader, path)?),
        TraceFormat::GpufeedJsonl => Trace::Util(jsonl::read_util(reader, path)?),
        TraceFormat::StepList => Trace::Steps(steps::read(reader, path)?),
        TraceFormat::PhaseSteps => Trace::PhaseSteps(phase_steps::read(reader, path)?),
    })
}

/// The kind and format a file has, judged from its first non-empty line (see the
/// [module docs](self)).
pub fn detect_kind(first_nonempty_line: &str) -> (TraceKind, TraceFormat) {
    let format = sniff(first_nonempty_line).format;
    (format.kind(), format)
}

struct Sniff {
    format: TraceFormat,
    /// The evidence is strong enough to refuse a contradicting `--kind`.
    strong: bool,
}

fn sniff(line: &str) -> Sniff {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line).trim();
    if line.starts_with('{') {
        return Sniff {
            format: if declares_phase_steps(line) {
                TraceFormat::PhaseSteps
            } else {
                TraceFormat::GpufeedJsonl
            },
            strong: true,
        };
    }
    let lower = line.to_ascii_lowercase();
    if lower.contains("utilization.gpu") || nvsmi::starts_with_date(line.as_bytes()) {
        return Sniff {
            format: TraceFormat::NvidiaSmiCsv,
            strong: true,
        };
    }
    // A field ending in `%` is nvidia-smi's unit (`45 %`); step lists have none.
    let percent = line.split(',').any(|f| f.trim_ascii().ends_with('%'));
    if percent || (lower.contains("timestamp") && lower.contains("index")) {
        return Sniff {
            format: TraceFormat::NvidiaSmiCsv,
            strong: false,
        };
    }
    Sniff {
        format: TraceFormat::StepList,
        strong: steps::looks_like_steps(line),
    }
}

/// Whether a JSON line declares `"format":"gpufeed-steps"`; a header that is not valid
/// JSON but names the format is a damaged step recording, and its reader says so.
fn declares_phase_steps(line: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(v) => v.get("format").and_then(serde_json::Value::as_str) == Some(phase_steps::FORMAT),
        Err(_) => line.contains(&format!("\"{}\"", phase_steps::FORMAT)),
    }
}

/// Collects samples into one series per GPU.
#[derive(Debug, Default)]
pub(crate) struct SeriesBuilder {
    gpus: Vec<GpuSeries>,
    /// Rows seen per GPU, kept or skipped: the time axis when there are no timestamps.
    seen: Vec<u64>,
    /// GPU index -> position in `gpus` + 1, for small indices (the usual case): one array
    /// lookup per row.
    small: Vec<u32>,
    large: HashMap<u32, usize>,
    rows: usize,
}

const SMALL_INDEX: u32 = 4096;

impl SeriesBuilder {
    /// The position of `gpu`'s series, created on first use.
    #[inline]
    pub(crate) fn slot(&mut self, gpu: u32) -> usize {
        if gpu < SMALL_INDEX {
            let i = gpu as usize;
            if let Some(&p) = self.small.get(i) {
                if p != 0 {
                    return p as usize - 1;
                }
            } else {
                self.small.resize(i + 1, 0);
            }
            let p = self.push_series(gpu);
            // `p` < number of distinct indices below SMALL_INDEX, so it fits a u32.
            self.small[i] = p as u32 + 1;
            p
        } else if let Some(&p) = self.large.get(&gpu) {
            p
        } else {
            let p = self.push_series(gpu);
            self.large.insert(gpu, p);
            p
        }
    }

    fn push_series(&mut self, gpu: u32) -> usize {
        self.gpus.push(GpuSeries {
            gpu,
            t: Vec::new(),
            util: Vec::new(),
        });
        self.seen.push(0);
        self.gpus.len() - 1
    }

    /// Counts a row of the GPU at `slot` and returns its row number (from 0).
    #[inline]
    pub(crate) fn tick(&mut self, slot: usize) -> u64 {
        let n = self.seen[slot];
        self.seen[slot] += 1;
        n
    }

    #[inline]
    pub(crate) fn push(&mut self, slot: usize, t: f64, util: f64) {
        let s = &mut self.gpus[slot];
        s.t.push(t);
        s.util.push(util);
        self.rows += 1;
    }

    /// The trace, or [`TraceError::NoSamples`] when no sample was kept.
    pub(crate) fn finish(
        self,
        path: &Path,
        format: TraceFormat,
        skipped: usize,
        has_timestamps: bool,
    ) -> Result<UtilTrace, TraceError> {
        let mut gpus: Vec<GpuSeries> = self
            .gpus
            .into_iter()
            .filter(|s| !s.util.is_empty())
            .map(|mut s| {
                s.t.shrink_to_fit();
                s.util.shrink_to_fit();
                s
            })
            .collect();
        if gpus.is_empty() {
            return Err(TraceError::NoSamples {
                path: path.to_owned(),
                skipped,
            });
        }
        gpus.sort_by_key(|s| s.gpu);
        Ok(UtilTrace {
            format,
            gpus,
            rows: self.rows,
            skipped,
            has_timestamps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::chain;

    fn read(input: &str, kind: Option<TraceKind>) -> Result<Trace, TraceError> {
        read_trace_from(input.as_bytes(), Path::new("run.csv"), kind)
    }

    #[test]
    fn detection_table() {
        use TraceFormat::*;
        let cases = [
            ("{\"format\":\"gpufeed-telemetry\"}", GpufeedJsonl),
            ("{\"format\":\"gpufeed-steps\",\"version\":1}", PhaseSteps),
            ("{\"format\": \"gpufeed-steps\", \"version\"", PhaseSteps),
            ("{\"source\":\"gpufeed-steps\"}", GpufeedJsonl),
            ("timestamp, index, utilization.gpu [%]", NvidiaSmiCsv),
            ("UTILIZATION.GPU", NvidiaSmiCsv),
            ("2026/11/21 10:00:00.123, 0, 45 %", NvidiaSmiCsv),
            ("Timestamp,Index,memory.used", NvidiaSmiCsv),
            ("12.5", StepList),
            ("step,step_time_ms", StepList),
            ("# step times", StepList),
            ("0, 45 %", NvidiaSmiCsv),
            ("0, 45", StepList),
        ];
        for (line, format) in cases {
            assert_eq!(detect_kind(line), (format.kind(), format), "{line}");
        }
    }

    #[test]
    fn reads_each_format() {
        let util = read(
            "timestamp, index, utilization.gpu [%]\n2026/11/21 10:00:00.000, 0, 5 %\n",
            None,
        );
        assert!(matches!(
            util,
            Ok(Trace::Util(UtilTrace {
                format: TraceFormat::NvidiaSmiCsv,
                ..
            }))
        ));
        let steps = read("\n\n10\n12\n", None).unwrap();
        assert_eq!(steps.kind(), TraceKind::Steps);
        let Trace::Steps(s) = steps else {
            unreachable!()
        };
        assert_eq!(s.ms, vec![10.0, 12.0]);
        let json = "{\"format\":\"gpufeed-telemetry\",\"version\":1,\"started_at\":\"x\",\
                    \"interval_ms\":100,\"source\":\"nvml\",\"gpus\":[]}\n\
                    {\"t\":0.0,\"gpu\":0,\"util\":5}\n";
        assert!(matches!(
            read(json, None),
            Ok(Trace::Util(UtilTrace {
                format: TraceFormat::GpufeedJsonl,
                ..
            }))
        ));
    }

    #[test]
    fn blank_lines_before_content_keep_line_numbers() {
        let e = read(
            "\n\n  \ntimestamp, index, utilization.gpu\n2026/11/21 10:00:00, 0, x\n",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`run.csv` line 5: `x` is not a number (column `utilization.gpu`)"
        );
    }

    #[test]
    fn empty_and_whitespace_only() {
        for input in ["", "\n\n", "  \r\n\t\n", "\u{feff}\n"] {
            let e = read(input, None).unwrap_err();
            assert_eq!(
                e.to_string(),
                "`run.csv` is empty: expected an nvidia-smi CSV log, a gpufeed JSONL recording \
                 or a list of step times"
            );
        }
    }

    #[test]
    fn wrong_kind_steps_on_nvsmi() {
        let input = "timestamp, index, utilization.gpu [%]\n";
        let e = read_trace_from(
            input.as_bytes(),
            Path::new("gpu.csv"),
            Some(TraceKind::Steps),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`gpu.csv` looks like an nvidia-smi log, not a list of step times; drop `--kind \
             steps` or pass `--kind util`"
        );
    }

    #[test]
    fn wrong_kind_util_on_numbers_and_steps_on_jsonl() {
        let e = read("12.5\n13\n", Some(TraceKind::Util)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`run.csv` looks like a list of step times, not a GPU utilisation log; drop `--kind \
             util` or pass `--kind steps`"
        );
        let e = read("step,step_time_ms\n1,2\n", Some(TraceKind::Util)).unwrap_err();
        assert!(matches!(
            e,
            TraceError::WrongKind {
                found: TraceFormat::StepList,
                ..
            }
        ));
        let e = read("{\"format\":\"gpufeed-telemetry\"}", Some(TraceKind::Steps)).unwrap_err();
        assert!(
            e.to_string()
                .contains("looks like a gpufeed JSONL recording"),
            "{e}"
        );
    }

    #[test]
    fn weak_hints_give_way_to_kind() {
        // A step list whose header happens to have `timestamp` and `index`.
        let t = read(
            "timestamp,index,step_time_ms\n1,0,12\n2,1,14\n",
            Some(TraceKind::Steps),
        )
        .unwrap();
        let Trace::Steps(s) = t else { unreachable!() };
        assert_eq!(s.ms, vec![12.0, 14.0]);
        // A headerless nvidia-smi log without timestamps or units.
        let t = read("0, 45\n1, 50\n", Some(TraceKind::Util)).unwrap();
        let Trace::Util(u) = t else { unreachable!() };
        assert_eq!(u.gpus.len(), 2);
        assert!(!u.has_timestamps);
    }

    #[test]
    fn matching_kind_is_fine() {
        assert!(read("1\n2\n", Some(TraceKind::Steps)).is_ok());
    }

    #[test]
    fn missing_file_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.csv");
        let e = read_trace(&path, None).unwrap_err();
        assert_eq!(
            chain(&e),
            format!(
                "failed to read `{}`: {}",
                path.display(),
                std::io::Error::from_raw_os_error(2)
            )
        );
    }

    #[test]
    fn reads_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.txt");
        fs_err::write(&path, "# step times\n100\n110\n").unwrap();
        let t = read_trace(&path, None).unwrap();
        assert_eq!(
            t,
            Trace::Steps(StepTrace {
                ms: vec![100.0, 110.0],
                column: None,
                unit: TimeUnit::Milliseconds
            })
        );
    }

    #[test]
    fn invalid_utf8_first_line() {
        let e = read_trace_from(&b"\n\xff\xfe\n"[..], Path::new("x.bin"), None).unwrap_err();
        assert!(
            e.to_string().starts_with("`x.bin` line 2: not valid UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn series_builder_groups_and_sorts() {
        let mut b = SeriesBuilder::default();
        for (gpu, u) in [(3, 1.0), (0, 2.0), (5000, 3.0), (3, 4.0)] {
            let s = b.slot(gpu);
            let n = b.tick(s);
            b.push(s, n as f64, u);
        }
        let t = b
            .finish(Path::new("x"), TraceFormat::GpufeedJsonl, 0, true)
            .unwrap();
        let ids: Vec<u32> = t.gpus.iter().map(|s| s.gpu).collect();
        assert_eq!(ids, vec![0, 3, 5000]);
        assert_eq!(t.gpus[1].util, vec![1.0, 4.0]);
        assert_eq!(t.gpus[1].t, vec![0.0, 1.0]);
        assert_eq!(t.rows, 4);
    }

    #[test]
    fn format_serialises_snake_case() {
        assert_eq!(
            serde_json::to_string(&TraceFormat::NvidiaSmiCsv).unwrap(),
            "\"nvidia_smi_csv\""
        );
    }
}
