//! Reader for `nvidia-smi dmon` output: one whitespace-separated row per GPU per second,
//! under `#` header lines.
//!
//! ```text
//! # gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk
//! # Idx      W      C      C      %      %      %      %    MHz    MHz
//!     0     72     38      -     67     40      0      0   2619   1980
//!     1     70     36      -     57     35      0      0   2619   1980
//! ```
//!
//! # What is read
//! - **The header**: the first `#` line naming a `gpu` column; the `#` line under it gives
//!   the units and is passed over, as are the copies dmon writes again every screenful.
//!   A later `#` header with other columns (two recordings joined) replaces it.
//! - **Utilisation** is the `sm` column (the share of time a kernel ran, what
//!   `utilization.gpu` reads); `-` there (a value dmon could not read) is skipped and
//!   counted. A header without `sm` (`dmon -s p` records power only) is an error saying
//!   to record with `-s u`.
//! - **GPUs** are the `gpu` column (`Idx`).
//! - **Times**: `-o DT` writes `Date` (`YYYYMMDD`) and `Time` (`HH:MM:SS`), `-o T` the time
//!   alone (a time that goes back more than 12 hours starts the next day). Without them,
//!   dmon writes no time, [`UtilTrace::has_timestamps`] is false and the row number per
//!   GPU is the time axis: dmon samples every [`DEFAULT_INTERVAL_S`] unless given `-d`,
//!   which the file does not record (`gpufeed trace` assumes the default and says so).
//! - `nvidia-smi pmon` output (one row per process, `pid` and `command` columns) is an
//!   error saying to record `dmon` or `--query-gpu` instead: its rows cannot be told apart
//!   into instants without a time column.
//!
//! ```
//! use std::path::Path;
//! let log = "# gpu     sm    mem    enc    dec\n\
//!            ## Idx      %      %      %      %\n\
//!                0     67     40      0      0\n\
//!                0     57     35      0      0\n";
//! let t = gpufeed_telemetry::nvsmi::dmon::read(log.as_bytes(), Path::new("dmon.log")).unwrap();
//! assert_eq!(t.gpus[0].util, vec![67.0, 57.0]);
//! assert!(!t.has_timestamps);
//! ```

use std::io::BufRead;
use std::path::Path;

use super::{days_from_civil, seconds_of_day};
use crate::TraceError;
use crate::error::shown;
use crate::lines::LineReader;
use crate::trace::{Limits, SeriesBuilder, TraceFormat, UtilTrace};

/// `nvidia-smi dmon`'s sampling interval when not given `-d`, s.
pub const DEFAULT_INTERVAL_S: f64 = 1.0;

/// Whether `line` (a file's first non-empty line) is a `dmon` or `pmon` header: a `#` line
/// whose words include `gpu` and `sm`.
pub(crate) fn is_header(line: &str) -> bool {
    header_words(line).is_some_and(|w| w.iter().any(|x| x == "gpu") && w.iter().any(|x| x == "sm"))
}

/// The lowercased words of a `#` line.
fn header_words(line: &str) -> Option<Vec<String>> {
    let rest = line.trim_ascii().strip_prefix('#')?;
    Some(
        rest.split_ascii_whitespace()
            .map(str::to_ascii_lowercase)
            .collect(),
    )
}

#[derive(Debug)]
struct Columns {
    count: usize,
    gpu: usize,
    sm: usize,
    date: Option<usize>,
    time: Option<usize>,
    names: Vec<String>,
}

impl Columns {
    fn from_header(words: Vec<String>, n: usize, path: &Path) -> Result<Self, TraceError> {
        let find = |w: &str| words.iter().position(|x| x == w);
        if find("pid").is_some() || find("command").is_some() {
            return Err(TraceError::Unsupported {
                path: path.to_owned(),
                line: n,
                what: "`nvidia-smi pmon` output (one row per process, with no way to tell \
                       the instants apart)"
                    .to_owned(),
                instead:
                    "gpufeed does not read it: record `nvidia-smi dmon -s u -o DT` or `nvidia-smi \
                          --query-gpu=timestamp,index,utilization.gpu --format=csv -l 1`"
                        .to_owned(),
            });
        }
        let (Some(gpu), Some(sm)) = (find("gpu"), find("sm")) else {
            return Err(TraceError::Unsupported {
                path: path.to_owned(),
                line: n,
                what: format!(
                    "`nvidia-smi dmon` output without the `sm` (utilisation) column (columns: {})",
                    words.join(", ")
                ),
                instead: "gpufeed reads utilisation: record with `-s u`, e.g. `nvidia-smi dmon -s u -o DT`"
                    .to_owned(),
            });
        };
        Ok(Columns {
            count: words.len(),
            gpu,
            sm,
            date: find("date"),
            time: find("time"),
            names: words,
        })
    }
}

/// Reads `nvidia-smi dmon` output; `path` is only used in messages.
pub fn read(reader: impl BufRead, path: &Path) -> Result<UtilTrace, TraceError> {
    read_with(reader, path, &mut Err, Limits::default())
}

/// [`read`], with `bad` deciding whether a bad data line stops the read (`Err`) or is
/// skipped (`Ok`).
pub(crate) fn read_with(
    reader: impl BufRead,
    path: &Path,
    bad: &mut dyn FnMut(TraceError) -> Result<(), TraceError>,
    limits: Limits,
) -> Result<UtilTrace, TraceError> {
    let mut lines = LineReader::new(reader);
    let mut cols: Option<Columns> = None;
    let mut series = SeriesBuilder::with_limits(limits);
    let mut skipped = 0;
    let mut clock = Clock::default();
    while let Some((n, line)) = lines.next_str(path)? {
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Some(words) = header_words(line) {
            // The units line (`# Idx  W  C ...`) and repeated headers are passed over.
            if words.iter().any(|w| w == "gpu") && cols.as_ref().is_none_or(|c| c.names != words) {
                cols = Some(Columns::from_header(words, n, path)?);
            }
            continue;
        }
        let Some(c) = cols.as_ref() else {
            return Err(TraceError::Unsupported {
                path: path.to_owned(),
                line: n,
                what: "a row before any `# gpu ...` header".to_owned(),
                instead: "keep dmon's header lines at the top of the file".to_owned(),
            });
        };
        match row(c, n, line, path, &mut clock) {
            Ok(Some((gpu, t, util))) => {
                series.room(path, n)?;
                let slot = series.slot(gpu);
                let k = series.tick(slot);
                series.push(slot, t.unwrap_or(k as f64), util);
            }
            Ok(None) => skipped += 1,
            Err(e) => bad(e)?,
        }
    }
    let timed = cols.as_ref().is_some_and(|c| c.time.is_some());
    series.finish(path, TraceFormat::NvidiaSmiDmon, skipped, timed)
}

/// A data row: (GPU, time when the file has one, utilisation), or `None` for `-`.
fn row(
    c: &Columns,
    n: usize,
    line: &str,
    path: &Path,
    clock: &mut Clock,
) -> Result<Option<(u32, Option<f64>, f64)>, TraceError> {
    let f: Vec<&str> = line.split_ascii_whitespace().collect();
    if f.len() != c.count {
        return Err(TraceError::FieldCount {
            path: path.to_owned(),
            line: n,
            found: f.len(),
            expected: c.count,
            headerless: false,
        });
    }
    let gpu: u32 = f[c.gpu].parse().map_err(|_| TraceError::InvalidGpuIndex {
        path: path.to_owned(),
        line: n,
        value: shown(f[c.gpu]),
        column: "gpu".to_owned(),
    })?;
    let t = match c.time {
        Some(i) => Some(clock.read(c.date.map(|d| f[d]), f[i]).ok_or_else(|| {
            TraceError::InvalidTimestamp {
                path: path.to_owned(),
                line: n,
                value: shown(
                    &c.date
                        .map_or(f[i].to_owned(), |d| format!("{} {}", f[d], f[i])),
                ),
                column: "Date/Time".to_owned(),
            }
        })?),
        None => None,
    };
    let sm = f[c.sm];
    if sm == "-" {
        return Ok(None);
    }
    let util: f64 = sm.parse().map_err(|_| TraceError::NotANumber {
        path: path.to_owned(),
        line: n,
        value: shown(sm),
        column: Some("sm".to_owned()),
    })?;
    if !(0.0..=100.0).contains(&util) {
        return Err(TraceError::UtilOutOfRange {
            path: path.to_owned(),
            line: n,
            value: util,
            column: "sm".to_owned(),
            guessed: false,
        });
    }
    Ok(Some((gpu, t, util)))
}

/// Times of `-o DT` (date and time) or `-o T` (time of day alone, rolled over at
/// midnight).
#[derive(Debug, Default)]
struct Clock {
    /// Seconds of day of the last time-only row, and the days added so far.
    last: Option<(f64, f64)>,
}

impl Clock {
    fn read(&mut self, date: Option<&str>, time: &str) -> Option<f64> {
        let of_day = f64::from(seconds_of_day(time)?);
        match date {
            Some(d) => {
                let b = d.as_bytes();
                if b.len() != 8 || !b.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                let year: u32 = d[..4].parse().ok()?;
                let month: u32 = d[4..6].parse().ok().filter(|m| (1..=12).contains(m))?;
                let day: u32 = d[6..].parse().ok().filter(|d| (1..=31).contains(d))?;
                Some(days_from_civil(year, month, day) as f64 * 86_400.0 + of_day)
            }
            None => {
                let days = match self.last {
                    Some((prev, days)) if of_day < prev - 43_200.0 => days + 1.0,
                    Some((_, days)) => days,
                    None => 0.0,
                };
                self.last = Some((of_day, days));
                Some(days * 86_400.0 + of_day)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<UtilTrace, TraceError> {
        read(text.as_bytes(), Path::new("dmon.log"))
    }

    #[test]
    fn default_columns_two_gpus_and_repeated_headers() {
        let t = parse(
            "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n\
             # Idx      W      C      C      %      %      %      %    MHz    MHz\n\
             \x20   0     72     38      -     67     40      0      0   2619   1980\n\
             \x20   1     70     36      -     10     35      0      0   2619   1980\n\
             # gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n\
             # Idx      W      C      C      %      %      %      %    MHz    MHz\n\
             \x20   0     72     38      -     57     40      0      0   2619   1980\n\
             \x20   1     70     36      -      -     35      0      0   2619   1980\n",
        )
        .unwrap();
        assert_eq!(t.format, TraceFormat::NvidiaSmiDmon);
        assert_eq!(t.gpus.len(), 2);
        assert_eq!(t.gpus[0].util, vec![67.0, 57.0]);
        assert_eq!(t.gpus[0].t, vec![0.0, 1.0]);
        assert_eq!(t.gpus[1].util, vec![10.0]);
        assert_eq!(t.skipped, 1);
        assert!(!t.has_timestamps);
    }

    #[test]
    fn date_and_time_columns_time_the_rows() {
        let t = parse(
            "#Date       Time        gpu     sm    mem    enc    dec\n\
             #YYYYMMDD   HH:MM:SS    Idx      %      %      %      %\n\
             \x2020241231   23:59:59      0     90     40      0      0\n\
             \x2020250101   00:00:01      0     80     40      0      0\n",
        )
        .unwrap();
        assert!(t.has_timestamps);
        assert_eq!(t.gpus[0].t[1] - t.gpus[0].t[0], 2.0);
    }

    #[test]
    fn a_time_column_alone_rolls_over_at_midnight() {
        let t = parse(
            "#Time        gpu     sm\n\
             #HH:MM:SS    Idx      %\n\
             \x2023:59:59      0     90\n\
             \x2000:00:00      0     80\n",
        )
        .unwrap();
        assert_eq!(t.gpus[0].t[1] - t.gpus[0].t[0], 1.0);
    }

    #[test]
    fn pmon_and_power_only_recordings_are_refused_with_what_to_record() {
        let e = parse("# gpu        pid  type    sm   mem   enc   dec   command\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("pmon") && e.contains("dmon -s u"), "{e}");
        let e = parse("# gpu    pwr  gtemp  mtemp\n# Idx W C C\n 0 72 38 -\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`sm`") && e.contains("-s u"), "{e}");
    }

    #[test]
    fn a_bad_row_names_its_line() {
        let e = parse("# gpu sm mem\n# Idx % %\n 0 67 40\n 0 abc 40\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4") && e.contains("abc"), "{e}");
        let e = parse("# gpu sm mem\n 0 67\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("2 fields"), "{e}");
    }
}
