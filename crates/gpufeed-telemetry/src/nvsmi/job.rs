//! Reader for job output that holds `nvidia-smi` tables: what an LSF or Slurm job writes
//! when its script runs `date; nvidia-smi` (and often an `nvidia-smi --query-gpu` loop)
//! beside the training's own output.
//!
//! ```text
//! Tue Nov 26 10:00:00 UTC 2024
//! +-----------------------------------------------------------------------------------------+
//! | NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
//! |-----------------------------------------+------------------------+----------------------+
//! | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
//! | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
//! |                                         |                        |               MIG M. |
//! |=========================================+========================+======================|
//! |   0  NVIDIA A100-SXM4-40GB          On  |   00000000:07:00.0 Off |                    0 |
//! | N/A   34C    P0             58W /  400W |       4MiB /  40960MiB |      0%      Default |
//! |                                         |                        |             Disabled |
//! +-----------------------------------------+------------------------+----------------------+
//! ```
//!
//! # What is read
//! - **Date lines**, as `date` and `nvidia-smi` itself write them in the C locale
//!   (`Tue Nov 26 10:00:00 2024`, `Tue Feb  2 15:05:43 UTC 2021`): the time of the samples
//!   that follow, until the next one. The zone is ignored (only differences matter).
//! - **Tables**: the header line naming `GPU-Util` gives the column (the `|`-separated
//!   cell that holds it); below the `|===` line each GPU is a group of rows: the first
//!   starts with the GPU's index, the next holds its utilisation (`37%`) in that cell.
//!   The table ends at its `Processes:` or `MIG devices:` section. This layout is the same
//!   from driver 418 to 595 (column widths change, the cells do not).
//! - **Query rows** (`nvidia-smi --query-gpu=... --format=csv` output, with or without a
//!   header, padded with spaces as LSF writes them): read as [`crate::nvsmi`] reads a log,
//!   each timed by its own timestamp, or else by the date line above it. Only rows that
//!   carry nvidia-smi's marks (a `%` value, a `YYYY/MM/DD` timestamp, or a header naming a
//!   utilisation column) are taken for query rows.
//! - Every other line (the training's output, LSF's summary) is passed over.
//!
//! A sample is timed by a date line or a timestamp; when some GPU has two samples under
//! one date line and no timestamps of their own, the log has no usable times, and the
//! time axis is the row number ([`UtilTrace::has_timestamps`] false: give `--interval`).

use std::io::BufRead;
use std::path::Path;

use super::{Layout, State, Timestamps, days_from_civil, parse_util, seconds_of_day};
use crate::TraceError;
use crate::lines::LineReader;
use crate::trace::{Limits, SeriesBuilder, TraceFormat, UtilTrace};

/// Whether `text` (the first lines of a file) holds an `nvidia-smi` table: a line naming
/// `GPU-Util` and the `| NVIDIA-SMI` banner.
pub(crate) fn holds_table(text: &[u8]) -> bool {
    let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    has(b"GPU-Util") && has(b"NVIDIA-SMI")
}

/// Seconds since 1970 (naive) of a C-locale date line: `Tue Nov 26 10:00:00 2024`, with an
/// optional zone before the year (`UTC`, `CET`).
pub(crate) fn parse_date_line(line: &str) -> Option<f64> {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let w: Vec<&str> = line.split_ascii_whitespace().collect();
    let (wday, month, day, time, year) = match w.as_slice() {
        [a, b, c, d, y] | [a, b, c, d, _, y] => (*a, *b, *c, *d, *y),
        _ => return None,
    };
    if !DAYS.contains(&wday) {
        return None;
    }
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    let day: u32 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let year: u32 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let of_day = seconds_of_day(time)?;
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + i64::from(of_day)) as f64)
}

/// Where the reader is inside a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// Not in a table's GPU rows.
    Outside,
    /// Past the header: the cell of `GPU-Util`, waiting for `|===`.
    Header(usize),
    /// In the GPU rows; the GPU whose first row was read, waiting for its utilisation.
    Rows(usize, Option<u32>),
}

/// Reads job output with `nvidia-smi` tables (see the module docs).
pub(crate) fn read(
    reader: impl BufRead,
    path: &Path,
    limits: Limits,
) -> Result<UtilTrace, TraceError> {
    let mut lines = LineReader::new(reader);
    // (gpu, time, value): value None for `N/A`.
    let mut samples: Vec<(u32, Option<f64>, Option<f64>)> = Vec::new();
    let mut date: Option<f64> = None;
    let mut table = Table::Outside;
    let mut query: Option<State> = None;
    // GPUs sampled under the current date line, to tell whether it can time them.
    let mut under_date: Vec<u32> = Vec::new();
    let mut untimed = false;
    while let Some((n, bytes)) = lines.next_line(path)? {
        // Job output mixes everything; a line that is not UTF-8 is not one of ours.
        let Ok(line) = std::str::from_utf8(bytes) else {
            continue;
        };
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if let Some(t) = parse_date_line(line) {
            date = Some(t);
            under_date.clear();
            continue;
        }
        if line.starts_with('|') || line.starts_with('+') {
            let cells: Vec<&str> = line.split('|').collect();
            table = match table {
                _ if line.contains("Processes:") || line.contains("MIG devices:") => Table::Outside,
                _ if line.contains("GPU-Util") => cells
                    .iter()
                    .position(|c| c.contains("GPU-Util"))
                    .map_or(Table::Outside, Table::Header),
                Table::Header(cell) if line.starts_with("|=") => Table::Rows(cell, None),
                Table::Rows(cell, None) => {
                    let gpu = cells
                        .get(1)
                        .and_then(|c| c.split_ascii_whitespace().next())
                        .and_then(|w| w.parse::<u32>().ok());
                    Table::Rows(cell, gpu)
                }
                Table::Rows(cell, Some(gpu)) => {
                    let value = cells
                        .get(cell)
                        .and_then(|c| c.split_ascii_whitespace().next())
                        .and_then(|w| match parse_util(w) {
                            Some(super::Util::Value(v)) if (0.0..=100.0).contains(&v) => {
                                Some(Some(v))
                            }
                            Some(super::Util::Missing) => Some(None),
                            _ => None,
                        });
                    if let Some(value) = value {
                        if samples.len() >= limits.samples {
                            return Err(crate::trace::too_large(
                                path,
                                n,
                                format!("{} samples", limits.samples),
                                limits.samples * 16,
                            ));
                        }
                        if date.is_none() || under_date.contains(&gpu) {
                            untimed = true;
                        }
                        under_date.push(gpu);
                        samples.push((gpu, date, value));
                    }
                    Table::Rows(cell, None)
                }
                other => other,
            };
            continue;
        }
        // A query row, or a header of them.
        let marked = line.contains("%")
            || super::starts_with_date(line.as_bytes())
            || line.split(',').any(super::is_util_name);
        if !marked || (!line.contains(',') && !line.ends_with('%')) {
            continue;
        }
        if query.is_none() {
            let layout = if super::is_header(line) {
                match Layout::from_header(line, n, path) {
                    Ok(Some(l)) => l,
                    _ => continue,
                }
            } else {
                match Layout::guess(&[(n, line.to_owned())], path) {
                    Ok(l) => l,
                    Err(_) => continue,
                }
            };
            // Absolute times (no origin), to be merged with the tables' date lines.
            let unit = layout.time_unit;
            let mut state = State::new(layout, limits);
            state.timestamps = Timestamps {
                unit,
                ..Timestamps::default()
            };
            query = Some(state);
            if super::is_header(line) {
                continue;
            }
        }
        if let Some(q) = query.as_mut() {
            let before = q.series.kept();
            // A row that does not read is the job's own output: passed over.
            if q.row(n, line, path).is_err() {
                continue;
            }
            if q.layout.time.is_none() && q.series.kept() > before {
                // Timed by the date line above it, if it is the only row of its GPU there.
                let gpu = q.series.retime_last(date.unwrap_or(0.0));
                if date.is_none() || under_date.contains(&gpu) {
                    untimed = true;
                }
                under_date.push(gpu);
            }
        }
    }
    assemble(samples, query, untimed, limits, path)
}

/// The trace from the tables' samples (`(gpu, time, value)`, value `None` for `N/A`) and
/// the query rows read: in time order counted from the first, or numbered in order where a
/// date line cannot time them (`untimed`).
fn assemble(
    samples: Vec<(u32, Option<f64>, Option<f64>)>,
    query: Option<State>,
    untimed: bool,
    limits: Limits,
    path: &Path,
) -> Result<UtilTrace, TraceError> {
    let skipped_query = query.as_ref().map_or(0, |q| q.skipped);
    let mut builder = SeriesBuilder::with_limits(limits);
    let mut skipped = skipped_query;
    for (gpu, t, value) in samples {
        let slot = builder.slot(gpu);
        let row = builder.tick(slot);
        match value {
            Some(v) => builder.push(slot, t.unwrap_or(row as f64), v),
            None => skipped += 1,
        }
    }
    if let Some(q) = query {
        for s in q.series.into_series() {
            let slot = builder.slot(s.gpu);
            for (t, v) in s.t.into_iter().zip(s.util) {
                let row = builder.tick(slot);
                builder.push(slot, if untimed { row as f64 } else { t }, v);
            }
        }
    }
    let mut trace = builder.finish(path, TraceFormat::NvidiaSmiJob, skipped, !untimed)?;
    if !untimed {
        // Samples from tables and from query rows, in time order, counted from the first.
        let origin = trace
            .gpus
            .iter()
            .filter_map(|s| s.t.iter().copied().reduce(f64::min))
            .reduce(f64::min)
            .unwrap_or(0.0);
        for s in &mut trace.gpus {
            let mut pairs: Vec<(f64, f64)> =
                s.t.iter()
                    .map(|t| t - origin)
                    .zip(s.util.iter().copied())
                    .collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            (s.t, s.util) = pairs.into_iter().unzip();
        }
    } else {
        for s in &mut trace.gpus {
            s.t = (0..s.util.len()).map(|i| i as f64).collect();
        }
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Trace, read_trace};

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    fn util(name: &str) -> UtilTrace {
        match read_trace(&fixture(name), None) {
            Ok(Trace::Util(t)) => t,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn date_lines() {
        let t = parse_date_line("Tue Nov 26 10:00:00 2024").unwrap();
        assert_eq!(parse_date_line("Tue Nov 26 10:00:00 UTC 2024"), Some(t));
        assert_eq!(
            parse_date_line("Tue Nov 26 10:00:01 CET 2024"),
            Some(t + 1.0)
        );
        assert_eq!(
            parse_date_line("Tue Feb  2 15:05:43 2021"),
            parse_date_line("Tue Feb 2 15:05:43 2021")
        );
        for bad in [
            "Epoch 1 of 10 done 2024",
            "Tue Nov 26 25:00:00 2024",
            "Tue Foo 26 10:00:00 2024",
            "Nov 26 10:00:00 2024",
            "",
        ] {
            assert_eq!(parse_date_line(bad), None, "{bad}");
        }
    }

    /// Issue 26: LSF job output, `date; nvidia-smi` every minute between the training's
    /// lines: one sample per GPU per table, timed by the date lines, 60 s apart.
    #[test]
    fn lsf_output_with_a_table_a_minute() {
        let t = util("lsf_job_tables.out");
        assert_eq!(t.format, TraceFormat::NvidiaSmiJob);
        assert!(t.has_timestamps);
        assert_eq!(t.gpus.len(), 2);
        let g0 = &t.gpus[0];
        assert_eq!(g0.util.len(), 19);
        assert_eq!(&g0.util[..4], &[0.0, 0.0, 85.0, 97.0]);
        assert_eq!(g0.t[1] - g0.t[0], 60.0);
        assert_eq!(&t.gpus[1].util[2..5], &[30.0, 34.0, 31.0]);
    }

    /// Issue 26: Slurm-style output, a table, then timestamped query rows padded with
    /// thousands of spaces, repeated after a restart: all in time order.
    #[test]
    fn slurm_output_with_padded_query_rows() {
        let t = util("slurm_job_query_rows.out");
        assert_eq!(t.format, TraceFormat::NvidiaSmiJob);
        assert!(t.has_timestamps);
        let g = &t.gpus[0];
        assert_eq!(g.util.len(), 62);
        assert!(g.t.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(&g.util[..5], &[0.0, 0.0, 0.0, 20.0, 60.0]);
    }

    /// Rows without timestamps under one date line cannot be timed: the log then needs
    /// `--interval`, and the time axis is the row number.
    #[test]
    fn untimed_rows_need_an_interval() {
        let text = "Tue Nov 26 10:00:00 2024\n| NVIDIA-SMI 535 |\n\
                    | Fan  Temp | Memory-Usage | GPU-Util  Compute M. |\n\
                    |===|===|===|\n| 0  A100 | x | 0 |\n| N/A | 4MiB | 7% Default |\n\
                    +---+\n45 %\n47 %\n";
        let t = read(text.as_bytes(), Path::new("job.out"), Limits::default()).unwrap();
        assert!(!t.has_timestamps);
        assert_eq!(t.gpus[0].util, vec![7.0, 45.0, 47.0]);
        assert_eq!(t.gpus[0].t, vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn table_marks() {
        assert!(holds_table(b"x\n| NVIDIA-SMI 470 |\n| GPU-Util |"));
        assert!(!holds_table(b"gpu_util\n45\n"));
    }
}
