//! Reader for lists of step times (`gpufeed trace FILE --kind steps`).
//!
//! # What is read
//!
//! Either one number per line:
//!
//! ```text
//! 412.5
//! 398.1
//! 1650.0
//! ```
//!
//! or a CSV with a header line, one column of which holds step times:
//!
//! ```text
//! step,loss,step_time_ms
//! 1,2.31,412.5
//! 2,2.29,398.1
//! ```
//!
//! Rules:
//!
//! - Blank lines, `\r\n` endings and a UTF-8 byte-order mark are fine; lines starting with
//!   `#` are comments.
//! - The first line that is neither is the header if it is not numeric. Fields are
//!   separated by `,`, or by tabs when the first line has no comma.
//! - **Column**: a single column is read whatever its name. With several, the step-time
//!   column is the one whose name contains `time`, `duration`, `elapsed` or `latency`
//!   (but is not a wall-clock time: names with the word `timestamp`, `date` or `wall` do
//!   not count); if no name does, the one whose name ends in a unit (`step_ms`,
//!   `fwd (s)`). If several names qualify and exactly one of them has a word starting
//!   with `step` (`step_time` beside `data_time`), that one is read. Otherwise it is an
//!   error listing the columns: keep a single column. Several columns without a header
//!   are an error too.
//! - **Unit**: milliseconds, unless a word of the column name is a unit: `s`, `sec`,
//!   `secs`, `second(s)` → seconds; `ms`, `msec(s)`, `millis`, `millisecond(s)` →
//!   milliseconds; `us`, `µs`, `usec(s)`, `micros`, `microsecond(s)` → microseconds;
//!   `ns`, `nsec(s)`, `nanos`, `nanosecond(s)` → nanoseconds. Words are split at anything
//!   that is not a letter or digit, so `step_time_s`, `time (s)` and `latency[us]` all
//!   work. Values are converted to milliseconds.
//! - Every value must be a finite number, not negative; anything else is an error naming
//!   the line (and the column). A row with a different number of fields than the header
//!   is an error. A header with no values after it is an error.
//!
//! ```
//! use gpufeed_telemetry::{steps, trace::TimeUnit};
//! let csv = "step\tstep_time_s\n1\t0.41\n2\t0.40\n";
//! let t = steps::read(csv.as_bytes(), std::path::Path::new("steps.tsv")).unwrap();
//! assert_eq!(t.unit, TimeUnit::Seconds);
//! assert_eq!(t.column.as_deref(), Some("step_time_s"));
//! assert!((t.ms[0] - 410.0).abs() < 1e-9);
//! ```

use std::io::BufRead;
use std::path::Path;

use crate::TraceError;
use crate::error::shown;
use crate::lines::LineReader;
use crate::trace::{MAX_STEPS, StepTrace, TimeUnit, too_large};

/// Reads a list of step times; `path` is only used in messages.
pub fn read(reader: impl BufRead, path: &Path) -> Result<StepTrace, TraceError> {
    read_with(reader, path, MAX_STEPS)
}

/// [`read`], keeping at most `max_steps` step times.
pub(crate) fn read_with(
    reader: impl BufRead,
    path: &Path,
    max_steps: usize,
) -> Result<StepTrace, TraceError> {
    let mut lines = LineReader::new(reader);
    let mut comments = false;
    // A header that does not name step times, until the first row confirms it.
    let mut header: Option<(usize, String)> = None;
    let mut state = loop {
        let Some((n, line)) = lines.next_str(path)? else {
            return Err(if comments {
                TraceError::NoSteps {
                    path: path.to_owned(),
                }
            } else {
                TraceError::Empty {
                    path: path.to_owned(),
                }
            });
        };
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            comments = true;
            continue;
        }
        let sep = separator(line);
        let fields: Vec<&str> = split(line, sep).collect();
        if fields.iter().all(|f| f.parse::<f64>().is_ok()) {
            if fields.len() > 1 {
                return Err(TraceError::StepColumnsWithoutHeader {
                    path: path.to_owned(),
                    line: n,
                    count: fields.len(),
                });
            }
            let mut state = State {
                sep,
                fields: 1,
                column: 0,
                name: None,
                unit: TimeUnit::Milliseconds,
                ms: Vec::new(),
                max_steps,
            };
            state.row(n, line, path)?;
            break state;
        }
        let column = pick_column(&fields).map_err(|candidates| TraceError::StepColumn {
            path: path.to_owned(),
            line: n,
            columns: fields.iter().map(|f| shown(f)).collect(),
            candidates: candidates.iter().map(|&i| shown(fields[i])).collect(),
        })?;
        let name = fields[column];
        if !names_step_times(line) {
            header = Some((n, line.to_owned()));
        }
        break State {
            sep,
            fields: fields.len(),
            column,
            name: Some(name.to_owned()),
            unit: unit_of(name).unwrap_or(TimeUnit::Milliseconds),
            ms: Vec::new(),
            max_steps,
        };
    };
    while let Some((n, line)) = lines.next_str(path)? {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match (state.row(n, line, path), header.take()) {
            (Ok(()), _) => {}
            // Neither line is what a step list holds: most often training output.
            (
                Err(TraceError::NotANumber { .. } | TraceError::FieldCount { .. }),
                Some((h, text)),
            ) => {
                return Err(TraceError::Unsupported {
                    path: path.to_owned(),
                    line: h,
                    what: format!(
                        "none of the formats gpufeed reads: `{}` names no step times and line \
                         {n}, `{}`, holds none (training output?)",
                        shown(&text),
                        shown(line)
                    ),
                    instead: "give gpufeed a GPU log (`nvidia-smi --query-gpu=timestamp,index,\
                              utilization.gpu --format=csv -l 1`, `nvidia-smi dmon -o DT`), a \
                              profiler trace, or step times one per line"
                        .to_owned(),
                });
            }
            (Err(e), _) => return Err(e),
        }
    }
    if state.ms.is_empty() {
        return Err(TraceError::NoSteps {
            path: path.to_owned(),
        });
    }
    Ok(StepTrace {
        ms: state.ms,
        column: state.name,
        unit: state.unit,
    })
}

struct State {
    sep: Option<char>,
    fields: usize,
    column: usize,
    name: Option<String>,
    unit: TimeUnit,
    ms: Vec<f64>,
    max_steps: usize,
}

impl State {
    fn row(&mut self, n: usize, line: &str, path: &Path) -> Result<(), TraceError> {
        let mut value = "";
        let mut count = 0;
        for (i, field) in split(line, self.sep).enumerate() {
            if i == self.column {
                value = field;
            }
            count += 1;
        }
        if count != self.fields {
            return Err(TraceError::FieldCount {
                path: path.to_owned(),
                line: n,
                found: count,
                expected: self.fields,
                headerless: false,
            });
        }
        let v: f64 = value.parse().map_err(|_| TraceError::NotANumber {
            path: path.to_owned(),
            line: n,
            value: shown(value),
            column: self.name.clone(),
        })?;
        let ms = v * self.unit.to_ms();
        // `v >= 0.0` is false for NaN; `+ 0.0` turns -0 into 0.
        if !(v >= 0.0 && ms.is_finite()) {
            return Err(TraceError::InvalidStepTime {
                path: path.to_owned(),
                line: n,
                value: shown(value),
                column: self.name.clone(),
            });
        }
        let max = self.max_steps;
        if self.ms.len() >= max {
            return Err(too_large(path, n, format!("{max} step times"), max * 8));
        }
        self.ms.push(ms + 0.0);
        Ok(())
    }
}

/// `,` if the line has one, else a tab if it has one, else none (a single column).
fn separator(line: &str) -> Option<char> {
    if line.contains(',') {
        Some(',')
    } else if line.contains('\t') {
        Some('\t')
    } else {
        None
    }
}

fn split(line: &str, sep: Option<char>) -> impl Iterator<Item = &str> {
    let (single, many) = match sep {
        Some(c) => (None, Some(line.split(c))),
        None => (Some(line), None),
    };
    single
        .into_iter()
        .chain(many.into_iter().flatten())
        .map(str::trim_ascii)
}

/// The words of a column name, lowercased: `Step Time (ms)` -> `step`, `time`, `ms`.
fn words(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn unit_word(word: &str) -> Option<TimeUnit> {
    Some(match word {
        "s" | "sec" | "secs" | "second" | "seconds" => TimeUnit::Seconds,
        "ms" | "msec" | "msecs" | "millis" | "millisecond" | "milliseconds" => {
            TimeUnit::Milliseconds
        }
        "us" | "µs" | "μs" | "usec" | "usecs" | "micros" | "microsecond" | "microseconds" => {
            TimeUnit::Microseconds
        }
        "ns" | "nsec" | "nsecs" | "nanos" | "nanosecond" | "nanoseconds" => TimeUnit::Nanoseconds,
        _ => return None,
    })
}

/// The unit a column name states: its last word that is a unit.
fn unit_of(name: &str) -> Option<TimeUnit> {
    words(name)
        .collect::<Vec<_>>()
        .iter()
        .rev()
        .find_map(|w| unit_word(w))
}

/// Whether the name says it holds a duration (see the module docs).
fn is_time_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    let wall_clock = words(name).any(|w| {
        w.contains("timestamp") || w == "date" || w == "datetime" || w.starts_with("wall")
    });
    !wall_clock
        && ["time", "duration", "elapsed", "latency"]
            .iter()
            .any(|k| lower.contains(k))
}

/// Whether the name ends in a unit word, like `step_ms`.
fn has_unit_suffix(name: &str) -> bool {
    words(name).last().is_some_and(|w| unit_word(&w).is_some())
}

/// The step-time column of a header, or the candidates if there is not exactly one.
fn pick_column(names: &[&str]) -> Result<usize, Vec<usize>> {
    if names.len() == 1 {
        return Ok(0);
    }
    // A column named like utilisation (`gpu_util [%]`) is never a step time.
    let matching = |pred: fn(&str) -> bool| -> Vec<usize> {
        (0..names.len())
            .filter(|&i| pred(names[i]) && !crate::nvsmi::is_util_name(names[i]))
            .collect()
    };
    let mut candidates = matching(is_time_name);
    if candidates.is_empty() {
        candidates = matching(has_unit_suffix);
    }
    if let [one] = candidates.as_slice() {
        return Ok(*one);
    }
    let steps: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| words(names[i]).any(|w| w.starts_with("step")))
        .collect();
    match steps.as_slice() {
        [one] => Ok(*one),
        _ => Err(candidates),
    }
}

/// Whether a header names a column of step times as such: a time or a unit-suffixed name
/// with a word starting `step`, `iter` or `batch` (`step_time_ms`, `iter_s`,
/// `batch_time`), not a bare `time` or `elapsed_sec`, which beside a utilisation column is
/// a log's time axis.
pub(crate) fn names_step_times(line: &str) -> bool {
    split(line.trim_ascii(), separator(line)).any(|f| {
        (is_time_name(f) || has_unit_suffix(f))
            && words(f)
                .any(|w| w.starts_with("step") || w.starts_with("iter") || w.starts_with("batch"))
    })
}

/// Whether a first line clearly belongs to a step list: a single number, a `#` comment,
/// or a header naming a step-time column. Used to refuse `--kind util` on such a file.
pub(crate) fn looks_like_steps(line: &str) -> bool {
    let line = line.trim_ascii();
    if line.starts_with('#') {
        return true;
    }
    let fields: Vec<&str> = split(line, separator(line)).collect();
    match fields.as_slice() {
        [one] if one.parse::<f64>().is_ok() => true,
        _ => {
            fields.iter().any(|f| f.parse::<f64>().is_err())
                && fields.iter().any(|f| is_time_name(f) || has_unit_suffix(f))
        }
    }
}

#[cfg(test)]
mod tests;
