//! Reader for `nvidia-smi --query-gpu` CSV logs.
//!
//! # Recording a log
//!
//! ```text
//! nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -lms 100 > gpu.csv
//! ```
//!
//! samples every GPU every 100 ms (`-l 1` samples every second). The output looks like
//!
//! ```text
//! timestamp, index, utilization.gpu [%], memory.used [MiB]
//! 2026/11/21 10:00:00.123, 0, 45 %, 1234 MiB
//! 2026/11/21 10:00:00.123, 1, 3 %, 800 MiB
//! ```
//!
//! # What is read
//!
//! - Fields are separated by `,`; whitespace around a field is ignored. Blank lines, `\r\n`
//!   line endings and a UTF-8 byte-order mark are fine, and so is a quoted field holding a
//!   line break (the record goes on over the next line).
//! - **Header** (the first non-empty line whose fields all start with a letter and none of
//!   which is a value, such as `utilization.gpu [%]` or `gpu_utilization[%]`): names are
//!   matched without case and without the bracketed unit, in any column order.
//!   Utilisation is `utilization.gpu`, else any name of one word starting with `util` and
//!   otherwise only `gpu`, `pct` or `percent` (`is_util_name`: `gpu_utilization`,
//!   `gpu_util`, `GPU-Util`, `util (%)`; not `utilization.memory` or `mem_util`). Times are
//!   `timestamp`, else a column named `time`, `ts`, `date`, `datetime`, `epoch`, `unix` or
//!   `elapsed` (alone or in a longer name such as `unix_time` or `elapsed_sec`). GPUs are told apart by `index` (or a
//!   column named `gpu`, `gpu_id`, `gpu_index`, `device`, `device_id`), else by `uuid` or
//!   `pci.bus_id` (numbered 0, 1, ... in order of first appearance), else everything is GPU
//!   0. One utilisation column per GPU (`gpu0_util,gpu1_util`, `GPU 1 Util [%]`, W&B's
//!   `system.gpu.0.gpu` from its API or `RUN - system/gpu.0.gpu` from a chart's CSV export;
//!   `per_gpu_util`) gives each GPU its series; a blank cell (W&B's rows of other
//!   metrics) is no sample. `Date` and `Time` in columns of their own are joined (dates
//!   `YYYY-MM-DD`, `YYYYMMDD`, `MM-DD-YYYY`, or `DD-MM-YYYY` when the day is above 12).
//!   Other columns (`memory.used`, ...) are ignored. A header that names a time, a GPU
//!   or an nvidia-smi property (a name with a `.`) but no utilisation is an error; a header
//!   that names nothing gpufeed knows is passed over and the file is read as if it had
//!   none. Copies of the header later in the file (two logs joined, or a logger that
//!   writes it before every sample) are skipped.
//! - **No header** (`--format=csv,noheader`): the columns are judged from the values of the
//!   first 256 rows, and the report says which column was taken for what. The timestamp is
//!   the field that looks like one (a calendar time, or a number of at least 1e9, a time
//!   since 1970). The GPU index is a small whole number that repeats with the GPUs' period
//!   (`0, 1, 2, 3, 0, ...`; a constant below 16 for one GPU), so a temperature (27-45) is
//!   never taken for one. Without a timestamp, a number that starts near 0 and grows every
//!   sample is the seconds since the start. Utilisation is the first field ending in `%`;
//!   without units (`nounits`), the first whole-number column within 0..=100 that does not
//!   move like a temperature (whole degrees between 15 and 95, changing by at most 5 a
//!   sample), so `temperature.gpu, utilization.gpu, ...` and `index, utilization.gpu,
//!   memory.used` are both read right. With too few rows to judge (a single row), the first
//!   whole number below 16 is the index, as nvidia-smi orders its columns. Record with the
//!   header when you can: a wrong guess usually shows as a utilisation outside 0..=100 %.
//! - `nounits` values (`45`) and values with units (`45 %`) are both read.
//! - Timestamps are `YYYY/MM/DD HH:MM:SS` (nvidia-smi) or `YYYY-MM-DD HH:MM:SS` /
//!   `YYYY-MM-DDTHH:MM:SS` (ISO 8601, as Python's `datetime` writes it; a `Z` or `+hh:mm`
//!   after it is ignored), Python's `time.ctime()` (`Thu Aug  8 15:42:09 2024`, also with
//!   a zone before the year as `date` writes it), or a date written `MM-DD-YYYY` or
//!   `DD-MM-YYYY` (also with `/` or `.`) before the time of day: day first when the first
//!   number is above 12, month first when the second is, and otherwise the order under
//!   which the log's first change of date is the next day (the other reading jumps by
//!   weeks), with optional fractional seconds, read as naive local time; or a
//!   bare number, a time since 1970 whose unit is the column name's (`time_ms`,
//!   `timestamp [s]`) or else its magnitude's ([`epoch_unit`]): below 1e11 seconds (1e11 s
//!   is the year 5138), below 1e14 milliseconds (1e11 ms was 3 March 1973), below 1e17
//!   microseconds, else nanoseconds. Only differences matter, so `t` counts seconds from
//!   the whole second of the file's first timestamp (which keeps millisecond steps exact
//!   in an f64, where seconds since 1970 would blur them at 1e-7 s). Without a timestamp
//!   column the time axis is the row number of each GPU and
//!   [`UtilTrace::has_timestamps`] is false (`gpufeed trace --interval` gives the
//!   interval).
//! - Utilisation values in square brackets (nvidia-smi's `[N/A]`, `[Not Supported]`,
//!   `[Unknown Error]`, ...) and `N/A` are skipped and counted in [`UtilTrace::skipped`];
//!   any other value that is not a number, or outside 0..=100, is an error naming the line.
//!   So is a row with a different number of fields than the header. [`read_skipping`]
//!   (for `monitor --replay`) skips such a line instead, reports it and reads on.
//!
//! Job output (LSF, Slurm) that holds `nvidia-smi` tables is read by [`job`], and
//! `nvidia-smi dmon` output by [`dmon`].
//!
//! The reader streams: one reused line buffer, no allocation per row, hand-written
//! timestamp parsing. Memory is the samples themselves, 16 bytes each.
//!
//! ```
//! use std::path::Path;
//! let log = "timestamp, index, utilization.gpu [%]\n\
//!            2026/11/21 10:00:00.100, 0, 45 %\n\
//!            2026/11/21 10:00:00.100, 1, [N/A]\n\
//!            2026/11/21 10:00:00.200, 0, 47 %\n";
//! let trace = gpufeed_telemetry::nvsmi::read(log.as_bytes(), Path::new("gpu.csv")).unwrap();
//! assert_eq!(trace.gpus[0].util, vec![45.0, 47.0]);
//! assert!((trace.gpus[0].t[1] - trace.gpus[0].t[0] - 0.1).abs() < 1e-6);
//! assert_eq!(trace.skipped, 1);
//! ```

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use crate::TraceError;
use crate::error::shown;
use crate::lines::LineReader;
use crate::trace::{Limits, SeriesBuilder, TraceFormat, UtilTrace};

pub mod dmon;
pub mod job;

/// Reads an nvidia-smi CSV log; `path` is only used in messages. The first line that
/// cannot be read is the error.
pub fn read(reader: impl BufRead, path: &Path) -> Result<UtilTrace, TraceError> {
    read_with(reader, path, &mut Err, Limits::default())
}

/// [`read`], but a data line that cannot be read (not UTF-8, fields missing or extra, a
/// value that does not parse or is out of range) is handed to `skipped` and left out, and
/// the rest of the file is read: a log with a damaged line in the middle is still worth
/// replaying. The header, the first row of a file without one (its layout is guessed from
/// it), a line too long to be a row and a read error still stop the read.
pub fn read_skipping(
    reader: impl BufRead,
    path: &Path,
    mut skipped: impl FnMut(TraceError),
) -> Result<UtilTrace, TraceError> {
    read_with(
        reader,
        path,
        &mut |e| {
            skipped(e);
            Ok(())
        },
        Limits::default(),
    )
}

/// [`read`], with `bad` deciding whether a bad data line stops the read (`Err`) or is
/// skipped (`Ok`), keeping to `limits`.
pub(crate) fn read_with(
    reader: impl BufRead,
    path: &Path,
    bad: &mut dyn FnMut(TraceError) -> Result<(), TraceError>,
    limits: Limits,
) -> Result<UtilTrace, TraceError> {
    let mut lines = LineReader::csv_records(reader);
    let mut state;
    let mut unknown_header: Option<String> = None;
    loop {
        let Some((n, line)) = lines.next_str(path)? else {
            return Err(TraceError::Empty {
                path: path.to_owned(),
            });
        };
        if line.trim_ascii().is_empty() {
            continue;
        }
        if is_header(line) {
            match Layout::from_header(line, n, path)? {
                Some(layout) => state = State::new(layout, limits),
                None => {
                    // A header gpufeed does not know: read the rows as if it were not
                    // there, and skip its copies.
                    unknown_header = Some(line.trim_ascii().to_owned());
                    continue;
                }
            }
        } else {
            // No header: the columns are judged from the first rows' values.
            let mut sample: Vec<(usize, String)> = vec![(n, line.to_owned())];
            while sample.len() < GUESS_ROWS {
                match lines.next_str(path) {
                    Ok(Some((n, l))) if !l.trim_ascii().is_empty() => {
                        sample.push((n, l.to_owned()));
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e @ TraceError::InvalidUtf8 { .. }) => bad(e)?,
                    Err(e) => return Err(e),
                }
            }
            let mut layout = Layout::guess(&sample, path)?;
            if layout.header.is_none() {
                layout.header = unknown_header.take();
            }
            state = State::new(layout, limits);
            let mut rows = sample.iter();
            if let Some((n, l)) = rows.next() {
                state.row(*n, l, path)?;
            }
            for (n, l) in rows {
                match state.row(*n, l, path) {
                    Ok(()) => {}
                    Err(e @ TraceError::TooLarge { .. }) => return Err(e),
                    Err(e) => bad(e)?,
                }
            }
        }
        break;
    }
    loop {
        let (n, line) = match lines.next_str(path) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e @ TraceError::InvalidUtf8 { .. }) => {
                bad(e)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        if line.trim_ascii().is_empty() {
            continue;
        }
        match state.row(n, line, path) {
            Ok(()) => {}
            // The limit of what a trace keeps stops even a read that skips bad lines.
            Err(e @ TraceError::TooLarge { .. }) => return Err(e),
            Err(e) => bad(e)?,
        }
    }
    let has_timestamps = state.layout.time.is_some();
    let columns = state.layout.guessed.then(|| state.layout.describe());
    let mut trace = state.series.finish(
        path,
        TraceFormat::NvidiaSmiCsv,
        state.skipped,
        has_timestamps,
    )?;
    trace.columns = columns;
    Ok(trace)
}

/// Rows a headerless log's columns are judged from.
const GUESS_ROWS: usize = 256;

/// How GPUs are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// The `index` column.
    Index(usize),
    /// A `uuid` or `pci.bus_id` column, numbered in order of first appearance.
    Name(usize),
    /// Everything is GPU 0.
    None,
}

#[derive(Debug)]
struct Layout {
    fields: usize,
    util: usize,
    time: Option<usize>,
    /// The time of day, when `time` holds the date alone (`Date,Time,...` columns).
    clock: Option<usize>,
    /// One utilisation column per GPU (`gpu0_util,gpu1_util`, W&B's `system/gpu.N.gpu`):
    /// (GPU, column). Empty: the one `util` column, GPUs told apart by `key`.
    wide: Vec<(u32, usize)>,
    /// Seconds per unit of a numeric time column, when its name says (`time_ms`); `None`:
    /// decided by magnitude (see the module docs).
    time_unit: Option<f64>,
    key: Key,
    /// Column names for messages: as written in the header, or the guessed role.
    names: Vec<String>,
    /// The header as written, to skip a copy of it later in the file.
    header: Option<String>,
    /// No header: the columns were guessed.
    guessed: bool,
}

impl Layout {
    /// The layout a header names. `Ok(None)`: the header names none of the columns gpufeed
    /// knows (no utilisation, time or GPU column), so the file is read as if it had none.
    fn from_header(line: &str, n: usize, path: &Path) -> Result<Option<Layout>, TraceError> {
        let names: Vec<String> = line.split(',').map(|f| f.trim_ascii().to_owned()).collect();
        let norm: Vec<String> = names
            .iter()
            .map(|f| property(f).to_ascii_lowercase())
            .collect();
        let find = |wanted: &[&str]| {
            wanted
                .iter()
                .find_map(|w| norm.iter().position(|name| name == w))
        };
        let time = find(&["timestamp"]).or_else(|| names.iter().position(|f| is_time_name(f)));
        // `Date` and `Time` in columns of their own: the date is the time column, and the
        // time of day is read beside it.
        let clock = match (find(&["date"]), find(&["time"])) {
            (Some(d), Some(c)) if time == Some(d) || time == Some(c) => Some(c),
            _ => None,
        };
        let time = if clock.is_some() {
            find(&["date"])
        } else {
            time
        };
        let key = match (
            find(&["index"]).or_else(|| names.iter().position(|f| is_index_name(f))),
            find(&["uuid", "gpu_uuid"]),
            find(&["pci.bus_id"]),
        ) {
            (Some(i), _, _) => Key::Index(i),
            (None, Some(i), _) | (None, None, Some(i)) => Key::Name(i),
            (None, None, None) => Key::None,
        };
        let wide: Vec<(u32, usize)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, f)| per_gpu_util(f).map(|g| (g, i)))
            .collect();
        let wandb = names
            .iter()
            .any(|f| f.to_ascii_lowercase().contains("gpu."));
        let wide = if wide.len() >= 2 || (wandb && !wide.is_empty()) {
            wide
        } else {
            Vec::new()
        };
        let util = wide
            .first()
            .map(|&(_, i)| i)
            .or_else(|| find(&["utilization.gpu"]))
            .or_else(|| {
                // A name with `gpu` in it first: `gpu_util` beside a plain `util` of something else.
                let like: Vec<usize> = (0..names.len())
                    .filter(|&i| is_util_name(&names[i]))
                    .collect();
                like.iter()
                    .copied()
                    .find(|&i| words(&names[i]).any(|w| w.starts_with("gpu")))
                    .or_else(|| like.first().copied())
            });
        let Some(util) = util else {
            // An nvidia-smi property (`memory.used`), a time or a GPU column: the header is
            // understood, and it has no utilisation. Otherwise it is not one gpufeed knows.
            let known = time.is_some() || key != Key::None || norm.iter().any(|f| f.contains('.'));
            if !known {
                return Ok(None);
            }
            return Err(TraceError::NoUtilColumn {
                path: path.to_owned(),
                line: n,
                found: names.into_iter().filter(|s| !s.is_empty()).collect(),
            });
        };
        Ok(Some(Layout {
            fields: names.len(),
            util,
            time,
            clock,
            time_unit: time.and_then(|i| name_unit(&names[i])),
            key: if wide.is_empty() { key } else { Key::None },
            wide,
            names,
            header: Some(line.trim_ascii().to_owned()),
            guessed: false,
        }))
    }

    /// The layout of a file without a header, from its first rows (see the module docs).
    fn guess(rows: &[(usize, String)], path: &Path) -> Result<Layout, TraceError> {
        let (n, line) = (rows[0].0, rows[0].1.as_str());
        let fields: Vec<&str> = line.split(',').map(str::trim_ascii).collect();
        // The rows shaped like the first, split once.
        let table: Vec<Vec<&str>> = rows
            .iter()
            .map(|(_, l)| l.split(',').map(str::trim_ascii).collect::<Vec<_>>())
            .filter(|r| r.len() == fields.len() && !is_header(&r.join(",")))
            .collect();
        let column = |i: usize| Column::of(table.iter().map(|r| r[i]));
        let columns: Vec<Column> = (0..fields.len()).map(column).collect();
        // Without a header, a bare number is a time only if it is large enough to be one
        // since 1970 (after 2001 in seconds): a GPU index or a utilisation never is.
        let mut time = fields.iter().position(|f| {
            parse_timestamp(f.as_bytes()).is_some()
                || parse_number(f).is_some_and(|v| v >= GUESSED_EPOCH_MIN)
        });
        let others = |time: Option<usize>| (0..fields.len()).filter(move |&i| Some(i) != time);
        // The GPU index: a small whole number repeating with the GPUs' period (`0, 1, 2, 3,
        // 0, ...`), or constant below 16 for a log of one GPU. A temperature (27-45) or a
        // utilisation is neither.
        let periodic = others(time).find_map(|i| columns[i].index_period().map(|p| (i, p)));
        // Too few rows to see a period (job output holds one table a sample): the first
        // whole number below 16 that is not the utilisation, as nvidia-smi orders them.
        let few = table.len() < 8;
        let mut index = periodic.map(|(i, _)| i).or_else(|| {
            few.then(|| {
                others(time).find(|&i| {
                    !has_unit(fields[i]) && parse_index(fields[i]).is_some_and(|v| v < 16)
                })
            })
            .flatten()
        });
        let gpus = periodic.map_or(1, |(_, p)| p);
        // Seconds since the start: a number that starts near 0 and grows every sample.
        let mut elapsed = false;
        if time.is_none() && !few {
            time = others(None)
                .filter(|&i| Some(i) != index && !fields[i].ends_with('%'))
                .find(|&i| columns[i].is_elapsed(gpus));
            elapsed = time.is_some();
        }
        let percent = others(time).find(|&i| fields[i].ends_with('%') && Some(i) != index);
        let candidates: Vec<usize> = others(time)
            .filter(|&i| Some(i) != index && columns[i].is_percent_range())
            .collect();
        let util = match percent {
            Some(u) => u,
            None => match Column::pick_util(&columns, &candidates, gpus, index) {
                Some(u) => u,
                // No column within 0..=100 %: the first other number (whose values then
                // say the guess was wrong), else an index-like column alone is the
                // utilisation.
                None => match others(time).find(|&i| Some(i) != index && columns[i].numeric) {
                    Some(u) => u,
                    None => match index.take() {
                        Some(i) if columns[i].is_percent_range() => i,
                        _ => {
                            return Err(TraceError::NoUtilGuess {
                                path: path.to_owned(),
                                line: n,
                                values: fields.iter().map(|f| shown(f)).collect(),
                            });
                        }
                    },
                },
            },
        };
        let key = match index {
            Some(i) => Key::Index(i),
            None => others(time)
                .find(|&i| i != util && (is_uuid(fields[i]) || is_bus_id(fields[i])))
                .map_or(Key::None, Key::Name),
        };
        let names = (0..fields.len())
            .map(|i| {
                if Some(i) == time {
                    if elapsed {
                        "elapsed [s]".to_owned()
                    } else {
                        "timestamp".to_owned()
                    }
                } else if i == util {
                    "utilization.gpu".to_owned()
                } else if key == Key::Index(i) {
                    "index".to_owned()
                } else if key == Key::Name(i) {
                    if is_uuid(fields[i]) {
                        "uuid"
                    } else {
                        "pci.bus_id"
                    }
                    .to_owned()
                } else {
                    format!("field {}", i + 1)
                }
            })
            .collect();
        Ok(Layout {
            fields: fields.len(),
            util,
            time,
            clock: None,
            wide: Vec::new(),
            time_unit: elapsed.then_some(1.0),
            key,
            names,
            header: None,
            guessed: true,
        })
    }

    /// What each column of a guessed layout was taken for: `field 1 timestamp, field 3
    /// utilization.gpu, field 2 index; fields 4-7 ignored`.
    fn describe(&self) -> String {
        let mut taken: Vec<String> = Vec::new();
        let mut ignored: Vec<usize> = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            if name.starts_with("field ") {
                ignored.push(i + 1);
            } else {
                taken.push(format!("field {} as {name}", i + 1));
            }
        }
        if self.key == Key::None {
            taken.push("no GPU index (one GPU)".into());
        }
        let mut out = taken.join(", ");
        if !ignored.is_empty() {
            let list: Vec<String> = ignored.iter().map(ToString::to_string).collect();
            out.push_str(&format!("; field(s) {} ignored", list.join(", ")));
        }
        out
    }
}

/// What the first rows of a headerless log hold in one column.
#[derive(Debug, Default)]
struct Column {
    /// Every value, when all are numbers (units such as `%` and `MiB` stripped; missing
    /// markers left out).
    values: Vec<f64>,
    /// Whether every field was a number or a missing marker.
    numeric: bool,
    /// Whether every value is a whole number.
    whole: bool,
    /// Whether any field carried a unit (`%`, `MiB`): a measurement, never a GPU index.
    units: bool,
}

impl Column {
    fn of<'a>(fields: impl Iterator<Item = &'a str>) -> Column {
        let mut c = Column {
            numeric: true,
            whole: true,
            ..Column::default()
        };
        for f in fields {
            c.units |= has_unit(f);
            let f = f.strip_suffix("MiB").map_or(f, str::trim_ascii_end);
            match parse_util(f) {
                Some(Util::Value(v)) => {
                    c.whole &= v.fract() == 0.0 && !f.contains('.');
                    c.values.push(v);
                }
                Some(Util::Missing) => {}
                None => c.numeric = false,
            }
        }
        c.numeric &= !c.values.is_empty();
        c
    }

    /// As a GPU index, the number of GPUs `P`: whole numbers below 64, the smallest below
    /// 16 (a temperature is not an index), the first `P` distinct and the rest repeating
    /// them, with at least one repeat seen, or exactly `0, 1, ..., P - 1` (one whole round
    /// of `P` GPUs); for `P = 1`, a constant; never with a unit (`0 MiB`, `3 %`). `None`:
    /// not an index.
    fn index_period(&self) -> Option<usize> {
        let v = &self.values;
        if !self.numeric
            || !self.whole
            || self.units
            || v.iter().any(|&x| !(0.0..64.0).contains(&x))
            || v.iter().copied().fold(f64::INFINITY, f64::min) >= 16.0
        {
            return None;
        }
        let period = (1..=v.len().min(64)).find(|&p| v[p..].iter().zip(v).all(|(a, b)| a == b))?;
        let mut head: Vec<u64> = v[..period].iter().map(|&x| x as u64).collect();
        head.sort_unstable();
        head.dedup();
        let distinct = head.len() == period;
        let counted = v.iter().enumerate().all(|(k, &x)| x == k as f64);
        (distinct && (v.len() > period || (counted && period >= 2))).then_some(period)
    }

    /// Seconds since the start: non-negative, growing from each sample of the `gpus` GPUs
    /// to the next, starting within ten steps of 0.
    fn is_elapsed(&self, gpus: usize) -> bool {
        let v = &self.values;
        if !self.numeric || v.len() < 2 * gpus.max(1) + 1 || v[0] < 0.0 {
            return false;
        }
        let g = gpus.max(1);
        let grows = v[g..].iter().zip(v).all(|(a, b)| a > b);
        let mut steps: Vec<f64> = v[g..].iter().zip(v).map(|(a, b)| a - b).collect();
        steps.sort_by(f64::total_cmp);
        let step = steps[steps.len() / 2];
        grows && v[0] <= 10.0 * step
    }

    /// Values all within 0..=100 %.
    fn is_percent_range(&self) -> bool {
        self.numeric && self.values.iter().all(|v| (0.0..=100.0).contains(v))
    }

    /// Values that move like a GPU temperature: whole degrees between 15 and 95, changing
    /// by at most 5 from one sample of a GPU to its next.
    fn looks_like_temperature(&self, gpus: usize) -> bool {
        let g = gpus.max(1);
        self.whole
            && self.values.iter().all(|v| (15.0..=95.0).contains(v))
            && self.values[g.min(self.values.len())..]
                .iter()
                .zip(&self.values)
                .all(|(a, b)| (a - b).abs() <= 5.0)
    }

    /// Mean change from one sample of a GPU to its next.
    fn mean_step(&self, gpus: usize) -> f64 {
        let g = gpus.max(1).min(self.values.len());
        let d: Vec<f64> = self.values[g..]
            .iter()
            .zip(&self.values)
            .map(|(a, b)| (a - b).abs())
            .collect();
        if d.is_empty() {
            0.0
        } else {
            d.iter().sum::<f64>() / d.len() as f64
        }
    }

    /// The utilisation among `candidates` (columns within 0..=100): nvidia-smi writes it as
    /// a whole number, so whole columns first (a power draw of `63.45` is not it); a column
    /// that moves like a temperature only when no other is left, and of several such, the
    /// one that moves most. `index`: the GPU index column, never the utilisation.
    fn pick_util(
        columns: &[Column],
        candidates: &[usize],
        gpus: usize,
        index: Option<usize>,
    ) -> Option<usize> {
        let whole: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&i| columns[i].whole && Some(i) != index)
            .collect();
        let pool = if whole.is_empty() {
            candidates.to_vec()
        } else {
            whole
        };
        pool.iter()
            .copied()
            .find(|&i| !columns[i].looks_like_temperature(gpus))
            .or_else(|| {
                pool.iter().copied().max_by(|&a, &b| {
                    columns[a]
                        .mean_step(gpus)
                        .total_cmp(&columns[b].mean_step(gpus))
                })
            })
    }
}

impl Layout {
    /// The utilisation in `field` (column `col`, line `n`): the value, `None` for a missing
    /// marker (`[N/A]`), or the error naming the line and the column.
    #[inline]
    fn util_value(
        &self,
        field: &str,
        col: usize,
        n: usize,
        path: &Path,
    ) -> Result<Option<f64>, TraceError> {
        match parse_util(field) {
            Some(Util::Value(v)) if (0.0..=100.0).contains(&v) => Ok(Some(v)),
            Some(Util::Value(v)) => Err(TraceError::UtilOutOfRange {
                path: path.to_owned(),
                line: n,
                value: v,
                column: self.names[col].clone(),
                guessed: self.guessed,
            }),
            Some(Util::Missing) => Ok(None),
            None => Err(TraceError::NotANumber {
                path: path.to_owned(),
                line: n,
                value: shown(field.trim_ascii()),
                column: Some(self.names[col].clone()),
            }),
        }
    }
}

struct State {
    layout: Layout,
    series: SeriesBuilder,
    skipped: usize,
    /// UUID or bus id -> GPU number, for [`Key::Name`].
    named: HashMap<Box<str>, u32>,
    timestamps: Timestamps,
}

impl State {
    fn new(layout: Layout, limits: Limits) -> State {
        let layout_unit = layout.time_unit;
        State {
            layout,
            series: SeriesBuilder::with_limits(limits),
            skipped: 0,
            named: HashMap::new(),
            timestamps: Timestamps::relative(layout_unit),
        }
    }

    fn row(&mut self, n: usize, line: &str, path: &Path) -> Result<(), TraceError> {
        let layout = &self.layout;
        if layout.header.as_deref() == Some(line.trim_ascii()) {
            // A copy of the header: two logs joined into one file.
            return Ok(());
        }
        if !layout.wide.is_empty() {
            return self.row_wide(n, line, path);
        }
        let time_at = layout.time.unwrap_or(usize::MAX);
        let clock_at = layout.clock.unwrap_or(usize::MAX);
        let key_at = match layout.key {
            Key::Index(i) | Key::Name(i) => i,
            Key::None => usize::MAX,
        };
        let (mut util, mut time, mut key, mut clock) = ("", "", "", "");
        // A byte loop: fields are short, so this beats `str::split` (memchr per field).
        let mut count = 0;
        let mut start = 0;
        let ends = line
            .bytes()
            .enumerate()
            .filter_map(|(i, c)| (c == b',').then_some(i));
        for end in ends.chain(std::iter::once(line.len())) {
            // `start..end` lies between ASCII commas, so it is on char boundaries.
            let field = line.get(start..end).unwrap_or_default();
            if count == layout.util {
                util = field;
            } else if count == time_at {
                time = field;
            } else if count == key_at {
                key = field;
            } else if count == clock_at {
                clock = field;
            }
            count += 1;
            start = end + 1;
        }
        if count != layout.fields {
            return Err(TraceError::FieldCount {
                path: path.to_owned(),
                line: n,
                found: count,
                expected: layout.fields,
                headerless: layout.guessed,
            });
        }
        // Every field is checked before anything is recorded, so that a line that fails
        // leaves no trace: no GPU numbered after a damaged UUID, no row counted, no time
        // origin (a replay skips the line and reads on).
        let index = match layout.key {
            Key::Index(i) => Some(parse_index(key).ok_or_else(|| TraceError::InvalidGpuIndex {
                path: path.to_owned(),
                line: n,
                value: shown(key.trim_ascii()),
                column: layout.names[i].clone(),
            })?),
            Key::Name(_) | Key::None => None,
        };
        let value = layout.util_value(util, layout.util, n, path)?;
        let mut joined = [0u8; 40];
        let stamp = match layout.clock {
            Some(_) => date_and_clock(time, clock, &mut joined).unwrap_or(b""),
            None => time.as_bytes(),
        };
        let t = match (layout.time, value) {
            (Some(i), Some(_)) => Some(self.timestamps.parse(stamp).ok_or_else(|| {
                TraceError::InvalidTimestamp {
                    path: path.to_owned(),
                    line: n,
                    value: shown(
                        [time.trim_ascii(), clock.trim_ascii()]
                            .join(" ")
                            .trim_ascii(),
                    ),
                    column: match layout.clock {
                        Some(c) => format!("{}, {}", layout.names[i], layout.names[c]),
                        None => layout.names[i].clone(),
                    },
                }
            })?),
            // Times count from the file's first timestamp, `[N/A]` rows included (as
            // documented); a bad timestamp on such a row is not worth an error.
            (Some(_), None) => {
                let _ = self.timestamps.parse(stamp);
                None
            }
            (None, _) => None,
        };
        self.series.room(path, n)?;
        let gpu = match (layout.key, index) {
            (Key::Index(_), Some(g)) => g,
            (Key::Name(_), _) => {
                let name = key.trim_ascii();
                match self.named.get(name) {
                    Some(&g) => g,
                    None => {
                        // At most one name per row, so the count fits a u32 for any file
                        // this reader can hold in memory.
                        let g = u32::try_from(self.named.len()).unwrap_or(u32::MAX);
                        self.named.insert(name.into(), g);
                        g
                    }
                }
            }
            _ => 0,
        };
        let slot = self.series.slot(gpu);
        let row = self.series.tick(slot);
        let Some(value) = value else {
            self.skipped += 1;
            return Ok(());
        };
        self.series.push(slot, t.unwrap_or(row as f64), value);
        Ok(())
    }
}

impl State {
    /// A row of a log with one utilisation column per GPU: a sample of each GPU whose
    /// column holds one (W&B leaves a column blank in the rows of other metrics).
    fn row_wide(&mut self, n: usize, line: &str, path: &Path) -> Result<(), TraceError> {
        let layout = &self.layout;
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != layout.fields {
            return Err(TraceError::FieldCount {
                path: path.to_owned(),
                line: n,
                found: fields.len(),
                expected: layout.fields,
                headerless: false,
            });
        }
        let mut values = Vec::with_capacity(layout.wide.len());
        for &(gpu, col) in &layout.wide {
            let f = fields[col].trim_ascii().trim_matches('"');
            let v = if f.is_empty() || f.eq_ignore_ascii_case("nan") {
                None
            } else {
                layout.util_value(f, col, n, path)?
            };
            values.push((gpu, v));
        }
        if values.iter().all(|(_, v)| v.is_none()) {
            // A row of other metrics only: nothing of the GPUs' to count.
            return Ok(());
        }
        let t = match layout.time {
            Some(i) => {
                let time = fields[i].trim_ascii().trim_matches('"');
                Some(self.timestamps.parse(time.as_bytes()).ok_or_else(|| {
                    TraceError::InvalidTimestamp {
                        path: path.to_owned(),
                        line: n,
                        value: shown(time),
                        column: layout.names[i].clone(),
                    }
                })?)
            }
            None => None,
        };
        for (gpu, v) in values {
            self.series.room(path, n)?;
            let slot = self.series.slot(gpu);
            let row = self.series.tick(slot);
            match v {
                Some(v) => self.series.push(slot, t.unwrap_or(row as f64), v),
                None => self.skipped += 1,
            }
        }
        Ok(())
    }
}

enum Util {
    Value(f64),
    /// `[N/A]` and the like.
    Missing,
}

/// A utilisation field: `45`, `45 %`, `45.5`, or a missing marker. `None`: not a number.
#[inline]
fn parse_util(field: &str) -> Option<Util> {
    let f = field.trim_ascii();
    let f = f.strip_suffix('%').map_or(f, str::trim_ascii_end);
    let b = f.as_bytes();
    // Fast path: nvidia-smi writes whole percentages.
    if !b.is_empty() && b.len() <= 3 && b.iter().all(u8::is_ascii_digit) {
        let v = b.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
        return Some(Util::Value(f64::from(v)));
    }
    if (f.starts_with('[') && f.ends_with(']')) || f.eq_ignore_ascii_case("n/a") {
        return Some(Util::Missing);
    }
    f.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Util::Value)
}

/// Whether a field carries a unit as nvidia-smi writes them (`30 %`, `0 MiB`).
fn has_unit(field: &str) -> bool {
    let f = field.trim_ascii_end();
    f.ends_with('%') || f.ends_with("MiB")
}

/// A GPU index: a whole number.
#[inline]
fn parse_index(field: &str) -> Option<u32> {
    let b = field.trim_ascii().as_bytes();
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
}

fn is_uuid(field: &str) -> bool {
    field.len() > 4 && (field.starts_with("GPU-") || field.starts_with("MIG-"))
}

/// `00000000:01:00.0`
fn is_bus_id(field: &str) -> bool {
    let parts: Vec<&str> = field.split([':', '.']).collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `line` is a header: every field (empty ones aside) starts with a letter (or `_`) and
/// none is a value (`N/A`, `45 %`) or a timestamp. So `utilization.gpu [%]`,
/// `gpu_utilization[%]` and `GPU Util (%)` are headers, and `Tesla T4, 45 %` is a row.
fn is_header(line: &str) -> bool {
    let mut names = 0;
    for field in line.split(',') {
        let field = field.trim_ascii();
        if field.is_empty() {
            continue;
        }
        // `_` too: W&B's own columns (`_step`, `_runtime`, `_timestamp`).
        let starts_with_letter = field
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        if !starts_with_letter
            || parse_util(field).is_some()
            || (is_uuid(field) && !is_util_name(field))
        {
            return false;
        }
        names += 1;
    }
    names > 0
}

/// The lower-case words of a column name, split at anything that is not a letter or a
/// digit: `GPU-Util [%]` -> `gpu`, `util`.
pub(crate) fn words(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

/// Whether a column name means GPU utilisation: one word starting with `util`
/// (`utilization`, `utilisation`, `util`) or `usage`, and otherwise only `gpu`, `gpu0`,
/// ..., `pct` or `percent`, in any case, order and punctuation, with or without a unit: so
/// `utilization.gpu [%]`, `gpu_utilization[%]`, `gpu_util`, `GPU-Util`, `util (%)`,
/// `GPU_Usage`, but not `utilization.memory`, `mem_util`, `memory_usage` or `cpu_util`.
pub(crate) fn is_util_name(name: &str) -> bool {
    let mut util = 0;
    for w in words(name) {
        // `usage` as loggers write it (`GPU_Usage`, `gpu usage %`).
        if w.starts_with("util") || w == "usage" {
            util += 1;
        } else if !(w == "pct" || w == "percent" || is_gpu_word(&w)) {
            return false;
        }
    }
    util == 1
}

/// The GPU that a per-GPU utilisation column names: `gpu0_util`, `GPU 1 Util [%]`,
/// `gpu_2_utilization`, or W&B's `system/gpu.0.gpu` (`system.gpu.0.gpu` from its API,
/// `RUN - system/gpu.0.gpu` in a chart's CSV export; not its `__MIN` / `__MAX` companions,
/// nor `gpu.0.memory`, which is memory).
pub(crate) fn per_gpu_util(name: &str) -> Option<u32> {
    let lower = name.trim_ascii().to_ascii_lowercase();
    if let Some(i) = lower.find("gpu.") {
        let rest = &lower[i + 4..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && &rest[digits..] == ".gpu" {
            return rest[..digits].parse().ok();
        }
    }
    let w: Vec<String> = words(&lower).collect();
    let mut gpu = None;
    let mut rest = Vec::with_capacity(w.len());
    let mut i = 0;
    while i < w.len() {
        if let Some(n) = w[i].strip_prefix("gpu") {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                gpu = n.parse().ok();
            } else if n.is_empty()
                && w.get(i + 1)
                    .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
            {
                gpu = w[i + 1].parse().ok();
                i += 1;
            }
        } else {
            rest.push(w[i].as_str());
        }
        i += 1;
    }
    let util = rest
        .iter()
        .filter(|w| w.starts_with("util") || **w == "usage")
        .count();
    let others = rest
        .iter()
        .all(|w| w.starts_with("util") || matches!(*w, "usage" | "pct" | "percent"));
    gpu.filter(|_| util == 1 && others)
}

/// `gpu`, `gpu0`, `gpu12`.
fn is_gpu_word(w: &str) -> bool {
    w.strip_prefix("gpu")
        .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a column name is a time: a word `timestamp`, `time`, `ts`, `date`, `datetime`,
/// `epoch` or `unix`, or `elapsed` (time since the logger started: `elapsed_sec`, as
/// loggers that count from their start write it; only differences matter), other than a
/// per-row duration (`time_delta`, `duration`).
fn is_time_name(name: &str) -> bool {
    let w: Vec<String> = words(name).collect();
    w.iter().any(|w| {
        matches!(
            w.as_str(),
            "timestamp" | "time" | "ts" | "date" | "datetime" | "epoch" | "unix" | "elapsed"
        )
    }) && !w.iter().any(|w| matches!(w.as_str(), "delta" | "duration"))
}

/// Whether a column name is a GPU index: `gpu`, `gpu_id`, `gpu_index`, `device`,
/// `device_id` (any case and punctuation).
fn is_index_name(name: &str) -> bool {
    let w: Vec<String> = words(name).collect();
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    matches!(
        w.as_slice(),
        ["gpu"] | ["gpu", "id" | "index" | "idx"] | ["device"] | ["device", "id" | "index"]
    )
}

/// Seconds per unit that a time column's name states (`time_ms`, `timestamp [s]`).
fn name_unit(name: &str) -> Option<f64> {
    words(name).find_map(|w| match w.as_str() {
        "s" | "sec" | "secs" | "seconds" => Some(1.0),
        "ms" | "millis" | "milliseconds" => Some(1e-3),
        "us" | "micros" | "microseconds" => Some(1e-6),
        "ns" | "nanos" | "nanoseconds" => Some(1e-9),
        _ => None,
    })
}

/// A finite, non-negative decimal number (`1764189075`, `1764189075.25`).
fn parse_number(field: &str) -> Option<f64> {
    let f = field.trim_ascii();
    let plain = !f.is_empty()
        && f.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && f.bytes().next().is_some_and(|b| b.is_ascii_digit());
    f.parse::<f64>().ok().filter(|v| plain && v.is_finite())
}

/// Whether `line`'s first field is a bare number that reads as a time since 1970 without
/// a header (at least [`GUESSED_EPOCH_MIN`]).
pub(crate) fn starts_with_epoch(line: &str) -> bool {
    line.split(',')
        .next()
        .and_then(parse_number)
        .is_some_and(|v| v >= GUESSED_EPOCH_MIN)
}

/// Without a header, a number at least this large is read as a time since 1970 (in
/// seconds, 2001-09-09 on; in milliseconds, any date since 1970-01-12).
const GUESSED_EPOCH_MIN: f64 = 1e9;

/// Seconds per unit of a bare-number time since 1970, by its magnitude: below 1e11 it is
/// seconds (1e11 s is the year 5138), below 1e14 milliseconds (1e11 ms is 1973-03-03,
/// 1e14 ms the year 5138), below 1e17 microseconds, else nanoseconds. The ranges touch but
/// never overlap for any date from 1973 to 5138.
#[must_use]
pub fn epoch_unit(value: f64) -> f64 {
    if value < 1e11 {
        1.0
    } else if value < 1e14 {
        1e-3
    } else if value < 1e17 {
        1e-6
    } else {
        1e-9
    }
}

/// A header field without its bracketed unit: `utilization.gpu [%]` -> `utilization.gpu`.
fn property(field: &str) -> &str {
    match field.find('[') {
        Some(i) if field.ends_with(']') => field[..i].trim_ascii_end(),
        _ => field,
    }
}

/// Whether `b` starts with a `YYYY/MM/DD` date.
pub(crate) fn starts_with_date(b: &[u8]) -> bool {
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'/'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'/'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// Seconds since 1970-01-01 00:00:00 of a naive calendar timestamp (nvidia-smi's, ISO
/// 8601, `time.ctime()`'s, `MM-DD-YYYY HH:MM:SS`; surrounding whitespace allowed), or
/// `None` if it is not one or not a real date.
pub(crate) fn parse_timestamp(b: &[u8]) -> Option<f64> {
    let b = b.trim_ascii();
    let mut t = Timestamps::default();
    t.parse_calendar(b).or_else(|| t.parse_written(b))
}

/// Whether the line's first field is a calendar timestamp ([`parse_timestamp`]).
pub(crate) fn starts_with_timestamp(line: &str) -> bool {
    let first = line.split(',').next().unwrap_or_default();
    first.bytes().any(|c| c == b':') && parse_timestamp(first.as_bytes()).is_some()
}

/// Timestamp parser that remembers the last date: in a log the date changes once a day,
/// so the calendar arithmetic runs once a day and each row parses only its time of day.
#[derive(Debug, Default)]
pub(crate) struct Timestamps {
    date: [u8; 10],
    days: i64,
    known: bool,
    /// With [`Timestamps::relative`]: subtract the first timestamp's whole seconds.
    relative: bool,
    origin: Option<i64>,
    /// Seconds per unit of a numeric time, when the column's name says.
    unit: Option<f64>,
    /// `03-11-2026`: month first or day first, once the data has told.
    order: DateOrder,
    /// The first ambiguous date (`a`, `b`, year) and the days it was read as, while the
    /// order is undecided.
    pending: Option<((u32, u32, u32), i64)>,
    /// Days added to every later date once the order is decided, so that the times read
    /// before under the provisional (month-first) reading continue without a jump.
    shift_days: i64,
}

/// How a date written `A-B-YYYY` is read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum DateOrder {
    /// Not known yet: month first until the data says (a number above 12, or which
    /// reading makes the next date the next day).
    #[default]
    Unknown,
    MonthFirst,
    DayFirst,
}

const POW10: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

impl Timestamps {
    /// A parser whose results count from the whole second of the first timestamp parsed;
    /// `unit`: seconds per unit of a numeric time, `None` to judge by magnitude.
    pub(crate) fn relative(unit: Option<f64>) -> Self {
        Self {
            relative: true,
            unit,
            ..Self::default()
        }
    }

    /// Seconds of a timestamp in any form the module docs list.
    #[inline]
    pub(crate) fn parse(&mut self, b: &[u8]) -> Option<f64> {
        let b = b.trim_ascii();
        if let Some(t) = self.parse_calendar(b) {
            return Some(t);
        }
        if let Some(t) = self.parse_written(b) {
            return Some(t);
        }
        let v = parse_number(std::str::from_utf8(b).ok()?)?;
        let unit = self.unit.unwrap_or_else(|| epoch_unit(v));
        // Whole seconds and the rest apart, in the file's unit, so that milliseconds since
        // 1970 (1.7e12, exact in an f64) keep their last digit.
        let per_second = (1.0 / unit).round().max(1.0);
        let whole = (v / per_second).floor();
        // Whole seconds since 1970 fit an i64 for any f64 below 9.2e18.
        if !(0.0..9.2e18).contains(&whole) {
            return None;
        }
        let rest = (v - whole * per_second) * unit;
        Some(self.since_origin(whole as i64) as f64 + rest)
    }

    fn since_origin(&mut self, secs: i64) -> i64 {
        if self.relative {
            secs - *self.origin.get_or_insert(secs)
        } else {
            secs
        }
    }

    /// `YYYY/MM/DD HH:MM:SS[.f]` (nvidia-smi) or `YYYY-MM-DD[T ]HH:MM:SS[.f]` (ISO 8601, as
    /// Python's `datetime` writes it), with an optional `Z` or offset after an ISO time,
    /// which is ignored like the naive local time of nvidia-smi.
    #[inline]
    fn parse_calendar(&mut self, b: &[u8]) -> Option<f64> {
        if b.len() < 19 || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let iso = b[4] == b'-' && b[7] == b'-';
        if !(b[10] == b' ' || (iso && b[10] == b'T')) {
            return None;
        }
        let b = if iso { strip_zone(b) } else { b };
        let days = if self.known && b[..10] == self.date {
            self.days
        } else {
            let days = parse_date(&b[..10])?;
            self.date.copy_from_slice(&b[..10]);
            self.days = days;
            self.known = true;
            days
        };
        let (hour, minute, second) = (two(b, 11)?, two(b, 14)?, two(b, 17)?);
        if hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        let fraction = match &b[19..] {
            [] => 0.0,
            [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
                let v = digits
                    .iter()
                    .try_fold(0u32, |acc, &c| Some(acc * 10 + digit(c)?))?;
                f64::from(v) / POW10[digits.len()]
            }
            _ => return None,
        };
        let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
        Some(self.since_origin(secs) as f64 + fraction)
    }
}

impl Timestamps {
    /// The timestamps people write besides nvidia-smi's and ISO 8601 (see the module
    /// docs): Python's `time.ctime()` (`Thu Aug  8 15:42:09 2024`, also with a zone before
    /// the year, as `date` writes it) and dates written `MM-DD-YYYY` / `DD-MM-YYYY` (or
    /// with `/` or `.`) before the time of day.
    fn parse_written(&mut self, b: &[u8]) -> Option<f64> {
        let text = std::str::from_utf8(b).ok()?;
        let words: Vec<&str> = text.split_ascii_whitespace().collect();
        let (days, clock) = match words.as_slice() {
            [_, month, day, clock, year] | [_, month, day, clock, _, year]
                if month.len() == 3 && month.bytes().all(|c| c.is_ascii_alphabetic()) =>
            {
                let month = month_number(month)?;
                let (day, year) = (day.parse().ok()?, year.parse().ok()?);
                (civil_days(year, month, day)?, *clock)
            }
            [date, clock] => (self.numeric_date(date)?, *clock),
            [stamp] if stamp.len() > 11 && stamp.as_bytes()[10] == b'T' => {
                (self.numeric_date(&stamp[..10])?, &stamp[11..])
            }
            _ => return None,
        };
        let (whole, fraction) = match clock.split_once('.') {
            Some((w, f)) if (1..=9).contains(&f.len()) && f.bytes().all(|c| c.is_ascii_digit()) => {
                (w, f.parse::<u32>().ok()? as f64 / POW10[f.len()])
            }
            Some(_) => return None,
            None => (clock, 0.0),
        };
        let secs = (days + self.shift_days) * 86_400 + i64::from(seconds_of_day(whole)?);
        Some(self.since_origin(secs) as f64 + fraction)
    }

    /// Days since 1970 of `A-B-YYYY` (or `/`, `.`): day first when `A` is above 12, month
    /// first when `B` is; otherwise as the data decides (see [`DateOrder`]).
    fn numeric_date(&mut self, date: &str) -> Option<i64> {
        let parts: Vec<&str> = date.split(['-', '/', '.']).collect();
        let [a, b, y] = parts.as_slice() else {
            return None;
        };
        if y.len() != 4 || a.is_empty() || a.len() > 2 || b.is_empty() || b.len() > 2 {
            return None;
        }
        let (a, b, y): (u32, u32, u32) = (a.parse().ok()?, b.parse().ok()?, y.parse().ok()?);
        let month_first = civil_days(y, a, b);
        let day_first = civil_days(y, b, a);
        let read = |order: DateOrder| match order {
            DateOrder::DayFirst => day_first,
            _ => month_first,
        };
        let decided = match (month_first, day_first) {
            (Some(_), None) => Some(DateOrder::MonthFirst),
            (None, Some(_)) => Some(DateOrder::DayFirst),
            (None, None) => return None,
            (Some(m), Some(d)) if m == d => None, // 01-01: either way
            (Some(m), Some(d)) => match (self.order, self.pending) {
                (DateOrder::Unknown, Some((first, first_days))) if first != (a, b, y) => {
                    // The first date change: the reading under which this is the next
                    // day (or close after) is the file's.
                    let (fm, fd) = (
                        civil_days(first.2, first.0, first.1)?,
                        civil_days(first.2, first.1, first.0)?,
                    );
                    let (step_m, step_d) = (m - fm, d - fd);
                    let order = match (step_m >= 0, step_d >= 0) {
                        (true, false) => DateOrder::MonthFirst,
                        (false, true) => DateOrder::DayFirst,
                        _ if step_d.abs() < step_m.abs() => DateOrder::DayFirst,
                        _ => DateOrder::MonthFirst,
                    };
                    // Times before were read month first: keep them continuous.
                    let first_now = if order == DateOrder::DayFirst { fd } else { fm };
                    self.shift_days = first_days - first_now;
                    Some(order)
                }
                (DateOrder::Unknown, None) => {
                    self.pending = Some(((a, b, y), m));
                    None
                }
                _ => None,
            },
        };
        if let Some(order) = decided
            && self.order == DateOrder::Unknown
        {
            if let Some((first, first_days)) = self.pending.take()
                && self.shift_days == 0
            {
                let now = match order {
                    DateOrder::DayFirst => civil_days(first.2, first.1, first.0),
                    _ => civil_days(first.2, first.0, first.1),
                };
                self.shift_days = first_days - now.unwrap_or(first_days);
            }
            self.order = order;
        }
        read(self.order)
    }
}

/// January is 1, from the English three-letter name (any case).
fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == lower)
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// Days since 1970 of a real date.
fn civil_days(year: u32, month: u32, day: u32) -> Option<i64> {
    ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month))
        .then(|| days_from_civil(year, month, day))
}

/// An ISO time without its `Z` or `+hh:mm` / `-hh:mm` suffix.
fn strip_zone(b: &[u8]) -> &[u8] {
    if let Some(rest) = b.strip_suffix(b"Z") {
        return rest;
    }
    match b.len().checked_sub(6) {
        Some(i) if i >= 19 && matches!(b[i], b'+' | b'-') && b[i + 3] == b':' => &b[..i],
        _ => b,
    }
}

/// A date column and a time-of-day column written as one ISO timestamp into `out`: the
/// date as `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYYMMDD`, or `MM-DD-YYYY` / `DD-MM-YYYY` (also
/// with `/` or `.`; day first when the first number is above 12, else month first, as
/// `%m-%d-%Y` and `date +%D` write it). `None` when the date is none of these.
fn date_and_clock<'a>(date: &str, clock: &str, out: &'a mut [u8; 40]) -> Option<&'a [u8]> {
    let (d, c) = (date.trim_ascii().as_bytes(), clock.trim_ascii().as_bytes());
    let num = |b: &[u8]| -> Option<u32> {
        (!b.is_empty() && b.len() <= 4 && b.iter().all(u8::is_ascii_digit))
            .then(|| b.iter().fold(0, |a, x| a * 10 + u32::from(x - b'0')))
    };
    let parts: Vec<&[u8]> = d.split(|b| matches!(b, b'-' | b'/' | b'.')).collect();
    let head = match parts.as_slice() {
        [y, m, day] if y.len() == 4 => format!("{:04}-{:02}-{:02} ", num(y)?, num(m)?, num(day)?),
        // Month or day first: kept as written, for the timestamp reader to decide the
        // order from the data, as it does for a date and time in one column.
        [a, b, y] if y.len() == 4 => {
            let (a, b, y) = (num(a)?, num(b)?, num(y)?);
            format!("{a:02}-{b:02}-{y:04} ")
        }
        [ymd] if ymd.len() == 8 => format!(
            "{:04}-{:02}-{:02} ",
            num(&ymd[..4])?,
            num(&ymd[4..6])?,
            num(&ymd[6..])?
        ),
        _ => return None,
    };
    let len = head.len() + c.len();
    if len > out.len() {
        return None;
    }
    out[..head.len()].copy_from_slice(head.as_bytes());
    out[head.len()..len].copy_from_slice(c);
    Some(&out[..len])
}

/// Days since 1970-01-01 of `YYYY/MM/DD` or `YYYY-MM-DD`, if it is a real date.
fn parse_date(b: &[u8]) -> Option<i64> {
    let dashed = b.len() >= 10 && b[4] == b'-' && b[7] == b'-';
    if !starts_with_date(b) && !dashed {
        return None;
    }
    let year = two(b, 0)? * 100 + two(b, 2)?;
    let (month, day) = (two(b, 5)?, two(b, 8)?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

#[inline]
fn digit(c: u8) -> Option<u32> {
    let d = c.wrapping_sub(b'0');
    (d < 10).then_some(u32::from(d))
}

/// The two-digit number at `b[i..i + 2]`; the caller has checked the length.
#[inline]
fn two(b: &[u8], i: usize) -> Option<u32> {
    Some(digit(*b.get(i)?)? * 10 + digit(*b.get(i + 1)?)?)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date: Howard Hinnant's
/// `days_from_civil` (<https://howardhinnant.github.io/date_algorithms.html>). Years
/// start in March so that the leap day is the last day of the year.
/// Seconds since midnight of `HH:MM:SS` (a leap second allowed).
fn seconds_of_day(time: &str) -> Option<u32> {
    let hms: Vec<u32> = time
        .split(':')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    if *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    Some(h * 3600 + m * 60 + s)
}

fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
