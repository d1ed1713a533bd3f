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
//! | a `#` line naming `gpu` and `sm` columns | [`nvidia-smi dmon` output](crate::nvsmi::dmon) (`pmon`'s is refused by its reader) |
//! | contains `utilization.gpu` (any case), has a column named like utilisation (`gpu_utilization`, `gpu_util [%]`, `util`: see `nvsmi::is_util_name`) or like one GPU's (`gpu0_util`, W&B's `system.gpu.0.gpu`: `nvsmi::per_gpu_util`), or starts with a `YYYY/MM/DD` date | an [nvidia-smi log](crate::nvsmi) (utilisation) |
//! | contains both `timestamp` and `index`, has a field ending in `%`, or is a row of several fields starting with a time since 1970 (`1764189075, 45`) | an [nvidia-smi log](crate::nvsmi) (utilisation), giving way to `--kind steps` |
//! | anything else | a [list of step times](crate::steps) |
//!
//! Before that, the first 256 KiB decide two layouts the first line cannot tell: `nvidia-smi`
//! tables in job output (LSF, Slurm; [`crate::nvsmi::job`]) and Huawei's `npu-smi` tables,
//! which are refused saying what they are ([`TraceError::Unsupported`]).
//!
//! With `--kind`, the content is checked against it and a clear contradiction is an error
//! ([`TraceError::WrongKind`]): `--kind util` on a step recording; `--kind steps` on a
//! JSONL utilisation recording, on a line containing
//! `utilization.gpu` or a column named like utilisation (never read as step times), or on
//! one starting with an nvidia-smi timestamp; `--kind util` on a
//! file whose first line is a single number, a `#` comment or a step-list header (a
//! header naming one step-time column, such as `step_time_ms`). Weaker hints give way to
//! the kind asked for: `--kind steps` reads a CSV whose header merely has `timestamp` and
//! `index` columns as a step list, and `--kind util` reads a headerless multi-column file
//! with neither timestamps nor units (such as `0, 45`) as an nvidia-smi log.
//!
//! # Bounded memory
//!
//! Every reader streams, a line at a time, and no line may be longer than 1 MiB. What a
//! trace keeps is bounded too, whatever the file's size: [`MAX_SAMPLES`] utilisation
//! samples (1 GiB) from [`MAX_GPUS`] GPUs at most, [`MAX_STEPS`] step times (1 GiB), and
//! [`MAX_STEP_RECORD_BYTES`] of a step recording's steps. A file past a limit is one
//! [`TraceError::TooLarge`] naming its line; rows without a value are counted, not kept,
//! so a log of them is read to the end in constant memory.
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

pub use gpufeed_contract::format::{TraceFormat, TraceKind};

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
    /// For a log without a header, what each column was taken for (`field 1 as
    /// timestamp, field 3 as utilization.gpu, ...`), for the reader to say.
    pub columns: Option<String>,
    /// What the reader chose that the caller should say: for DCGM's metrics, which one
    /// judged each GPU (see [`crate::dcgm`]).
    pub note: Option<String>,
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
    read_trace_from(open_log(path)?, path, kind)
}

/// A log file opened for its reader.
fn open_log(path: &Path) -> Result<BufReader<std::fs::File>, TraceError> {
    // `TraceError::Io` names the path itself; fs-err would put it into the message a second
    // time, so this one open uses std directly.
    #[allow(clippy::disallowed_methods)]
    let file = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    Ok(BufReader::with_capacity(256 * 1024, file))
}

/// A reader with the bytes already read put back in front of it.
pub(crate) type Rewound<R> = std::io::Chain<Cursor<Vec<u8>>, R>;

/// [`peek_first_line`], and the first [`HEAD_BYTES`] of the input (a cheap look further
/// than the first line, for job output whose `nvidia-smi` tables come after the job's own
/// lines), with a reader that yields the whole input again.
fn peek_head<R: BufRead>(
    reader: R,
    path: &Path,
) -> Result<(String, Vec<u8>, Rewound<R>), TraceError> {
    let (first, reader) = peek_first_line(reader, path)?;
    // Up to HEAD_BYTES more, for a format the first line cannot tell (job output).
    let (cursor, mut inner) = reader.into_inner();
    let mut head = cursor.into_inner();
    (&mut inner)
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| TraceError::io(path, e))?;
    Ok((first, head.clone(), Cursor::new(head).chain(inner)))
}

/// The line number of an `npu-smi` table's banner (`| npu-smi 24.1.rc3  Version: ...`)
/// in the first lines of a file.
fn npu_smi_banner(head: &[u8]) -> Option<usize> {
    head.split(|&b| b == b'\n')
        .position(|l| {
            let l = l.trim_ascii();
            l.strip_prefix(b"|")
                .is_some_and(|rest| rest.trim_ascii_start().starts_with(b"npu-smi"))
        })
        .map(|i| i + 1)
}

/// How much of a file [`peek_head`] reads to detect job output: its first `nvidia-smi`
/// table, after the job's own start-up lines.
const HEAD_BYTES: u64 = 256 * 1024;

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
    let (first, head, reader) = peek_head(reader, path)?;
    refuse_head(&head, path)?;
    read_sniffed(reader, path, kind, sniff_head(&first, &head))
}

/// What a log's first lines say it is: its format, and whether that is sure enough to
/// refuse a `--kind` that contradicts it. Found once, by [`sniff_head`], and passed to
/// [`read_trace_as`] so that the file is not looked at twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// The format.
    pub format: TraceFormat,
    /// The evidence is strong enough to refuse a contradicting `--kind`.
    pub strong: bool,
}

/// The format a log has, from its first non-empty line (BOM and blank lines before it
/// skipped) and `head`, the input's start up to [`HEAD_BYTES`] past that line: a Prometheus
/// answer by its keys, job output (LSF, Slurm) by the `nvidia-smi` tables in it.
#[must_use]
pub fn sniff_head(first: &str, head: &[u8]) -> Sniffed {
    let mut sniff = sniff(first);
    // A Prometheus answer is JSON too, pretty-printed or not: its keys decide.
    if crate::dcgm::is_range_query(head) {
        sniff = Sniff {
            format: TraceFormat::Prometheus,
            strong: true,
        };
    }
    // Job output (LSF, Slurm) starts with anything: its `nvidia-smi` tables decide.
    if (!sniff.strong || nvsmi::job::parse_date_line(first).is_some())
        && nvsmi::job::holds_table(head)
    {
        sniff = Sniff {
            format: TraceFormat::NvidiaSmiJob,
            strong: true,
        };
    }
    Sniffed {
        format: sniff.format,
        strong: sniff.strong,
    }
}

/// How far past the first non-empty line [`sniff_head`] looks.
pub const SNIFF_BYTES: u64 = HEAD_BYTES;

/// The input formats gpufeed refuses from their first lines, with what to do: Huawei's
/// `npu-smi` tables.
///
/// # Errors
/// [`TraceError::Unsupported`] naming the line.
pub fn refuse_head(head: &[u8], path: &Path) -> Result<(), TraceError> {
    if let Some(line) = npu_smi_banner(head) {
        return Err(TraceError::Unsupported {
            path: path.to_owned(),
            line,
            what: "Huawei `npu-smi` tables (Ascend NPUs)".to_owned(),
            instead:
                "gpufeed reads NVIDIA GPU logs (`nvidia-smi --query-gpu`, `nvidia-smi` tables, \
                      `dmon`, its own recordings) and step times; Ascend's `AICore(%)` is not \
                      read yet"
                    .to_owned(),
        });
    }
    Ok(())
}

/// Reads a log file whose format [`sniff_head`] already found: the file is read once, by
/// its reader, with no second look at its head.
///
/// # Errors
/// As [`read_trace`].
pub fn read_trace_as(
    path: &Path,
    kind: Option<TraceKind>,
    sniffed: Sniffed,
) -> Result<Trace, TraceError> {
    read_sniffed(open_log(path)?, path, kind, sniffed)
}

/// The reader of the format `sniff` found, or `--kind` asked for where it can.
fn read_sniffed(
    reader: impl BufRead,
    path: &Path,
    kind: Option<TraceKind>,
    sniff: Sniffed,
) -> Result<Trace, TraceError> {
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
        Some(requested @ TraceKind::Profiler) => {
            return Err(TraceError::WrongKind {
                path: path.to_owned(),
                found: sniff.format,
                requested,
            });
        }
    };
    Ok(match format {
        TraceFormat::NvidiaSmiCsv => Trace::Util(nvsmi::read(reader, path)?),
        TraceFormat::NvidiaSmiJob => {
            Trace::Util(nvsmi::job::read(reader, path, Limits::default())?)
        }
        TraceFormat::NvidiaSmiDmon => Trace::Util(nvsmi::dmon::read(reader, path)?),
        TraceFormat::DcgmiDmon => Trace::Util(crate::dcgm::read_dmon(reader, path)?),
        TraceFormat::Prometheus => Trace::Util(crate::dcgm::read_range_json(reader, path)?),
        TraceFormat::GpufeedJsonl => Trace::Util(jsonl::read_util(reader, path)?),
        TraceFormat::StepList => Trace::Steps(steps::read(reader, path)?),
        TraceFormat::PhaseSteps => Trace::PhaseSteps(phase_steps::read(reader, path)?),
        // `sniff` never gives these: profiler traces are told apart, and read, by
        // gpufeed-kineto.
        TraceFormat::Pytorch | TraceFormat::Tensorflow => {
            return Err(TraceError::Unsupported {
                path: path.to_owned(),
                line: 1,
                what: format.describe().to_owned(),
                instead: "`gpufeed trace FILE` reads profiler traces".to_owned(),
            });
        }
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
    if crate::dcgm::is_dmon_header(line) {
        return Sniff {
            format: TraceFormat::DcgmiDmon,
            strong: true,
        };
    }
    if nvsmi::dmon::is_header(line) {
        return Sniff {
            format: TraceFormat::NvidiaSmiDmon,
            strong: true,
        };
    }
    let lower = line.to_ascii_lowercase();
    // A column named like utilisation (`gpu_utilization`, `util [%]`, `GPU_Usage`) is never
    // a step time, and beside it a bare time (`Time`, `elapsed_sec`) is the log's time
    // axis. A step list whose header names its steps (`step_time_ms`, `iter_s`) beside a
    // utilisation column stays a step list, and its reader never picks the utilisation
    // column.
    let util_column = line
        .split(',')
        .any(|f| nvsmi::is_util_name(f) || nvsmi::per_gpu_util(f).is_some())
        && !steps::names_step_times(line);
    if lower.contains("utilization.gpu")
        || util_column
        || nvsmi::starts_with_date(line.as_bytes())
        || (line.contains(',') && nvsmi::starts_with_timestamp(line))
    {
        return Sniff {
            format: TraceFormat::NvidiaSmiCsv,
            strong: true,
        };
    }
    // A field ending in `%` is nvidia-smi's unit (`45 %`); step lists have none.
    let percent = line.split(',').any(|f| f.trim_ascii().ends_with('%'));
    // Four or more numbers and no header (`--format=csv,noheader,nounits` of several
    // properties): a step list that wide is refused anyway, and the utilisation reader
    // judges the columns from their values and says which it took.
    let fields: Vec<&str> = line.split(',').map(str::trim_ascii).collect();
    let numbers = fields.iter().all(|f| f.parse::<f64>().is_ok());
    let whole_percent = fields
        .iter()
        .any(|f| f.parse::<u8>().is_ok_and(|v| v <= 100));
    if fields.len() >= 4 && numbers && whole_percent {
        return Sniff {
            format: TraceFormat::NvidiaSmiCsv,
            strong: false,
        };
    }
    // A row that starts with a time since 1970 (`1764189075, 45`): a headerless log.
    let epoch_row = line.contains(',') && nvsmi::starts_with_epoch(line);
    if percent || epoch_row || (lower.contains("timestamp") && lower.contains("index")) {
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

/// The most utilisation samples a reader keeps from one trace, all GPUs together: 16 bytes
/// each, 1 GiB. A sample every 100 ms of 8 GPUs for 24 hours is 6.9 million; a log past the
/// limit is [`TraceError::TooLarge`], so memory stays bounded however large the file.
pub const MAX_SAMPLES: usize = 1 << 26;

/// The most GPUs (series) a reader keeps from one trace: a log naming more is not one run's.
pub const MAX_GPUS: usize = 1 << 16;

/// The most step times a step list keeps: 8 bytes each, 1 GiB.
pub const MAX_STEPS: usize = 1 << 27;

/// The most memory a step recording's steps may take (the steps, their phases and the
/// phases' names): 1 GiB.
pub const MAX_STEP_RECORD_BYTES: usize = 1 << 30;

/// The limits a reader keeps to: the constants above, smaller in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// [`MAX_SAMPLES`].
    pub(crate) samples: usize,
    /// [`MAX_GPUS`].
    pub(crate) gpus: usize,
    /// [`MAX_STEPS`].
    pub(crate) steps: usize,
    /// [`MAX_STEP_RECORD_BYTES`].
    pub(crate) record_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            samples: MAX_SAMPLES,
            gpus: MAX_GPUS,
            steps: MAX_STEPS,
            record_bytes: MAX_STEP_RECORD_BYTES,
        }
    }
}

/// [`TraceError::TooLarge`]: more than `what` (`67108864 samples`), which take `bytes`.
pub(crate) fn too_large(path: &Path, line: usize, what: String, bytes: usize) -> TraceError {
    TraceError::TooLarge {
        path: path.to_owned(),
        line,
        what,
        memory: format!("{} MiB", bytes >> 20),
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
    limits: Limits,
    /// The slot of the last sample pushed.
    last: usize,
}

const SMALL_INDEX: u32 = 4096;

impl SeriesBuilder {
    pub(crate) fn with_limits(limits: Limits) -> Self {
        SeriesBuilder {
            limits,
            ..Self::default()
        }
    }

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

    /// Whether one more row fits: [`MAX_SAMPLES`] samples kept and [`MAX_GPUS`] series at
    /// most (by default). Call before [`slot`](Self::slot) for the row's GPU.
    pub(crate) fn room(&self, path: &Path, line: usize) -> Result<(), TraceError> {
        let Limits { samples, gpus, .. } = self.limits;
        if self.rows >= samples {
            return Err(too_large(
                path,
                line,
                format!("{samples} samples"),
                samples * 16,
            ));
        }
        if self.gpus.len() > gpus {
            // A series and its index entry: about 100 bytes, before any sample.
            return Err(too_large(path, line, format!("{gpus} GPUs"), gpus * 100));
        }
        Ok(())
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
        self.last = slot;
    }

    /// Samples kept so far.
    pub(crate) fn kept(&self) -> usize {
        self.rows
    }

    /// Sets the time of the last sample pushed and returns its GPU.
    pub(crate) fn retime_last(&mut self, t: f64) -> u32 {
        let s = &mut self.gpus[self.last];
        if let Some(last) = s.t.last_mut() {
            *last = t;
        }
        s.gpu
    }

    /// The series as collected, in order of first appearance.
    pub(crate) fn into_series(self) -> Vec<GpuSeries> {
        self.gpus
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
            columns: None,
            note: None,
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
    fn files_of_other_kinds_are_refused_saying_what_they_are() {
        // Huawei's npu-smi after a `date` line (a real Ascend 910B job log's layout).
        let npu = "Mon Feb  9 00:37:31 CST 2026\n\
                   +------------------------------------------------+\n\
                   | npu-smi 24.1.rc3          Version: 24.1.rc3    |\n\
                   | NPU   Name     | Health   | Power(W)  Temp(C)  |\n";
        let e = read(npu, None).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("npu-smi"), "{e}");
        // A training script's own output.
        let out = "number of train dataset: 50000\nnumber of test dataset: 10000\n\
                   After update 10 times, the loss is 2.1\n";
        let e = read(out, None).unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("none of the formats"),
            "{e}"
        );
        assert!(
            e.contains("training output?") && e.contains("nvidia-smi"),
            "{e}"
        );
        // A step list whose header names its column keeps the precise error.
        let e = read("step_time_ms\n12.5\nabc\n", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("not a number"), "{e}");
        // A one-column list whose header names nothing is still read.
        assert!(read("latency\n12.5\n13.0\n", None).is_ok());
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
            // Loggers' own headers (real files: a GPGPU project, Ember, DCConv).
            ("Time,GPU_Usage", NvidiaSmiCsv),
            ("Time,GPU_ID,Utilization", NvidiaSmiCsv),
            ("elapsed_sec,gpu_util_pct,mem_used_mb,power_w", NvidiaSmiCsv),
            ("step,step_time_ms,gpu_util", StepList),
            ("iter_time_s,memory_usage", StepList),
            // One column per GPU; W&B's API and chart exports.
            ("timestamp,gpu0_util,gpu1_util", NvidiaSmiCsv),
            (
                "_timestamp,_runtime,system.gpu.0.gpu,system.gpu.0.memory",
                NvidiaSmiCsv,
            ),
            (
                "Relative Time (Process),run-1 - system/gpu.0.gpu",
                NvidiaSmiCsv,
            ),
            // nvidia-smi dmon (default, `-s u`, `-o DT`) and pmon (refused by its reader).
            (
                "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec",
                NvidiaSmiDmon,
            ),
            ("#Date       Time        gpu     sm    mem", NvidiaSmiDmon),
            (
                "# gpu        pid  type    sm   mem   enc   dec   command",
                NvidiaSmiDmon,
            ),
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

    /// Issue 26: a column named like utilisation is never read as step times, alone (once
    /// read as step times in ms) or beside others; a step list with one beside its
    /// step-time column still reads its step times.
    #[test]
    fn utilisation_columns_are_never_step_times() {
        for header in [
            "gpu_utilization",
            "gpu_util",
            "util",
            "GPU-Util [%]",
            "gpu_utilization[%]",
        ] {
            assert_eq!(detect_kind(header).1, TraceFormat::NvidiaSmiCsv, "{header}");
            let e = read(&format!("{header}\n45\n"), Some(TraceKind::Steps)).unwrap_err();
            assert!(matches!(e, TraceError::WrongKind { .. }), "{header}: {e}");
        }
        let Trace::Util(u) = read("gpu_utilization\n45\n47\n", None).unwrap() else {
            panic!("not read as utilisation")
        };
        assert_eq!(u.gpus[0].util, vec![45.0, 47.0]);
        let Trace::Steps(s) =
            read("step,step_time_ms,gpu_util\n1,120,45\n2,130,47\n", None).unwrap()
        else {
            panic!("not read as steps")
        };
        assert_eq!(
            (s.column.as_deref(), s.ms.clone()),
            (Some("step_time_ms"), vec![120.0, 130.0])
        );
        // A headerless row starting with a time since 1970 is a utilisation log.
        assert_eq!(
            detect_kind("1764189075, 0, 45").1,
            TraceFormat::NvidiaSmiCsv
        );
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

    /// Every reader stops at its limit with one error naming the file and the first line
    /// over it, so memory stays bounded however large the file (the limits are small here;
    /// the real ones are the `MAX_*` constants).
    #[test]
    fn readers_stop_at_what_they_keep() {
        use crate::jsonl::{GpuSample, Header, JsonlWriter, Record};
        use crate::phase_steps::{Meta, StepRecord};
        let limits = Limits {
            samples: 3,
            gpus: 2,
            steps: 3,
            record_bytes: 500,
        };
        let path = Path::new("big.log");
        let full = |e: TraceError, line: usize| {
            assert!(
                matches!(e, TraceError::TooLarge { line: l, .. } if l == line),
                "{e:?}"
            );
            e.to_string()
        };
        // nvidia-smi: the fourth sample (line 5, after the header) is one too many, also
        // for a read that skips bad lines.
        let mut log = "timestamp, index, utilization.gpu [%]\n".to_owned();
        for s in 0..6 {
            log.push_str(&format!("2026/11/21 10:00:0{s}.000, 0, 45 %\n"));
        }
        let e = crate::nvsmi::read_with(log.as_bytes(), path, &mut Err, limits).unwrap_err();
        assert_eq!(
            full(e, 5),
            "`big.log` line 5: more than 3 samples, the most gpufeed keeps from one trace (0 \
             MiB in memory); cut the file into parts (the hours you want to look at) and pass one"
        );
        let e = crate::nvsmi::read_with(log.as_bytes(), path, &mut |_| Ok(()), limits);
        full(e.unwrap_err(), 5);
        // Rows of new GPUs, with no value kept: the series are counted.
        let gpus = "index, utilization.gpu [%]\n0, [N/A]\n1, [N/A]\n2, [N/A]\n3, [N/A]\n";
        let e = crate::nvsmi::read_with(gpus.as_bytes(), path, &mut Err, limits).unwrap_err();
        assert!(full(e, 5).contains("more than 2 GPUs"));
        // A JSONL recording: header, then one sample a line.
        let header = Header::new("2026-11-21T10:00:00Z", 100, "test");
        let mut w = JsonlWriter::new(Vec::new(), &header).unwrap();
        for s in 0..5 {
            let sample = GpuSample {
                util: Some(37.0),
                ..GpuSample::new(f64::from(s), 0)
            };
            w.write(&Record::Gpu(sample)).unwrap();
        }
        let bytes = w.into_inner();
        let e = crate::jsonl::read_util_with(bytes.as_slice(), path, limits).unwrap_err();
        full(e, 5);
        // A step list.
        let e = crate::steps::read_with("1\n2\n3\n4\n5\n".as_bytes(), path, 3).unwrap_err();
        assert!(full(e, 4).contains("more than 3 step times"));
        // A step recording: the steps and their phases' names are counted.
        let meta = Meta {
            source: "test".into(),
            sync: true,
            warmup: 0,
            batch_size: None,
        };
        let step = StepRecord {
            total_ms: 10.0,
            phases: vec![("data_wait".into(), 1.0), ("forward".into(), 8.5)],
            items: None,
        };
        let mut file = Vec::new();
        crate::phase_steps::write(&mut file, &meta, &vec![step; 10]).unwrap();
        let e = crate::phase_steps::read_with(file.as_slice(), path, 500).unwrap_err();
        // About 130 bytes a step: three fit, the fourth (line 5, after the header) does not.
        let message = full(e, 5);
        assert!(message.contains("more than 3 steps"), "{message}");
        // Under the limits, the same inputs read.
        let roomy = Limits::default();
        assert!(crate::nvsmi::read_with(log.as_bytes(), path, &mut Err, roomy).is_ok());
        assert!(crate::jsonl::read_util_with(bytes.as_slice(), path, roomy).is_ok());
        assert!(crate::phase_steps::read_with(file.as_slice(), path, 1 << 20).is_ok());
    }
}
