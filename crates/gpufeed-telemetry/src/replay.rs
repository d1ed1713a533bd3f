//! Replays a recording as if it were sampled now (`gpufeed monitor --replay FILE`).
//!
//! Reads a gpufeed JSONL recording (every reading, GPU and host) or an nvidia-smi CSV log
//! (utilisation only) with the readers of [`crate::jsonl`] and [`crate::nvsmi`], and hands
//! out each sample when the run's timeline reaches its time. Times are shifted so that
//! the first sample is at 0; only differences matter to the analysis, so a replayed run
//! gives the verdict and period of the original.
//!
//! A JSONL recording is streamed. A line that is not valid JSON, not a valid sample or
//! not UTF-8, or a utilisation outside 0..=100 %, is skipped with a
//! [`SourceWarning::SkippedLine`] naming the line, and the rest is replayed: a recording
//! cut off by a crash or with one damaged line is still worth analysing. A damaged header
//! or a read error stops the replay. An nvidia-smi log is read whole first, with
//! [`crate::nvsmi::read_skipping`]: a data line it cannot read is skipped the same way (a
//! damaged header, or a damaged first row in a log without one, stops the replay); it must
//! have a timestamp column. `gpufeed trace` reads both strictly: the first bad line is
//! the error.
//!
//! ```no_run
//! use gpufeed_telemetry::replay::ReplaySource;
//! use gpufeed_telemetry::source::Source;
//! let mut replay = ReplaySource::open("run.jsonl".as_ref())?;
//! let mut records = Vec::new();
//! replay.poll(f64::INFINITY, &mut records)?; // everything, at once
//! assert!(replay.finished());
//! # Ok::<(), gpufeed_telemetry::source::SourceError>(())
//! ```

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::TraceError;
use crate::jsonl::{GpuInfo, GpuSample, Header, Reader, Record};
use crate::source::{Source, SourceError, SourceWarning};
use crate::trace::{TraceFormat, UtilTrace, detect_kind};

/// The replay [`Source`].
#[derive(Debug)]
pub struct ReplaySource {
    path: PathBuf,
    format: TraceFormat,
    header: Option<Header>,
    gpus: Vec<GpuInfo>,
    inner: Inner,
    /// The next record, read but not yet due.
    pending: Option<Record>,
    /// Time of the first record; subtracted from every time.
    offset: f64,
    warnings: Vec<SourceWarning>,
    skipped_lines: usize,
}

enum Inner {
    Jsonl(Box<Reader<Box<dyn BufRead>>>),
    Csv { trace: UtilTrace, pos: Vec<usize> },
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inner::Jsonl(r) => f.debug_tuple("Jsonl").field(&r.line()).finish(),
            Inner::Csv { pos, .. } => f.debug_struct("Csv").field("pos", pos).finish(),
        }
    }
}

impl ReplaySource {
    /// Opens `path`, detecting its format from the first non-empty line.
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        // `TraceError::Io` names the path itself; see `trace::read_trace`.
        #[allow(clippy::disallowed_methods)]
        let file = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
        Self::from_reader(BufReader::with_capacity(256 * 1024, file), path)
    }

    /// [`open`](Self::open) on a reader; `path` is for messages.
    pub fn from_reader(reader: impl BufRead + 'static, path: &Path) -> Result<Self, SourceError> {
        let (first, reader) = crate::trace::peek_first_line(reader, path)?;
        let (_, format) = detect_kind(&first);
        let reader: Box<dyn BufRead> = Box::new(reader);
        let mut source = match format {
            TraceFormat::GpufeedJsonl => {
                let r = Reader::new(reader, path)?;
                let header = r.header().clone();
                ReplaySource {
                    path: path.to_owned(),
                    format,
                    gpus: header.gpus.clone(),
                    header: Some(header),
                    inner: Inner::Jsonl(Box::new(r)),
                    pending: None,
                    offset: 0.0,
                    warnings: Vec::new(),
                    skipped_lines: 0,
                }
            }
            TraceFormat::NvidiaSmiCsv => {
                let mut warnings = Vec::new();
                let trace = crate::nvsmi::read_skipping(reader, path, |e| {
                    warnings.push(SourceWarning::SkippedLine(e));
                })?;
                if !trace.has_timestamps {
                    return Err(SourceError::NoTimestamps {
                        path: path.to_owned(),
                    });
                }
                let gpus = trace
                    .gpus
                    .iter()
                    .map(|s| GpuInfo {
                        index: s.gpu,
                        name: None,
                        uuid: None,
                        memory_total_mib: None,
                    })
                    .collect();
                let pos = vec![0; trace.gpus.len()];
                ReplaySource {
                    path: path.to_owned(),
                    format,
                    header: None,
                    gpus,
                    inner: Inner::Csv { trace, pos },
                    pending: None,
                    offset: 0.0,
                    skipped_lines: warnings.len(),
                    warnings,
                }
            }
            // Job output is told by more than its first line, which `detect_kind` never
            // sees as such; replaying it is not supported.
            found @ (TraceFormat::StepList
            | TraceFormat::PhaseSteps
            | TraceFormat::NvidiaSmiJob
            | TraceFormat::NvidiaSmiDmon
            | TraceFormat::DcgmiDmon
            | TraceFormat::Prometheus
            | TraceFormat::Pytorch
            | TraceFormat::Tensorflow) => {
                return Err(SourceError::NotReplayable {
                    path: path.to_owned(),
                    found,
                });
            }
        };
        source.pending = source.next_record()?;
        source.offset = source.pending.as_ref().map_or(0.0, Record::t);
        if let Some(r) = &mut source.pending {
            shift(r, source.offset);
        }
        Ok(source)
    }

    /// The recording's header (JSONL only).
    #[must_use]
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The format of the file.
    #[must_use]
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines skipped so far because they could not be read.
    #[must_use]
    pub fn skipped_lines(&self) -> usize {
        self.skipped_lines
    }

    /// The next record in file order, skipping damaged lines.
    fn next_record(&mut self) -> Result<Option<Record>, SourceError> {
        match &mut self.inner {
            Inner::Jsonl(reader) => loop {
                match reader.next_record() {
                    Ok(Some(Record::Gpu(g)))
                        if g.util.is_some_and(|u| !(0.0..=100.0).contains(&u)) =>
                    {
                        self.skipped_lines += 1;
                        self.warnings.push(SourceWarning::SkippedLine(
                            TraceError::UtilOutOfRange {
                                path: self.path.clone(),
                                line: reader.line(),
                                value: g.util.unwrap_or_default(),
                                column: "util".to_owned(),
                                guessed: false,
                            },
                        ));
                    }
                    Ok(r) => return Ok(r),
                    Err(e @ (TraceError::Json { .. } | TraceError::InvalidUtf8 { .. })) => {
                        self.skipped_lines += 1;
                        self.warnings.push(SourceWarning::SkippedLine(e));
                    }
                    Err(e) => return Err(e.into()),
                }
            },
            Inner::Csv { trace, pos } => {
                // The GPU whose next sample is earliest (k-way merge of the series).
                let mut best: Option<(usize, f64)> = None;
                for (i, s) in trace.gpus.iter().enumerate() {
                    if let Some(&t) = s.t.get(pos[i])
                        && best.is_none_or(|(_, bt)| t < bt)
                    {
                        best = Some((i, t));
                    }
                }
                Ok(best.map(|(i, t)| {
                    let s = &trace.gpus[i];
                    let util = s.util[pos[i]];
                    pos[i] += 1;
                    Record::Gpu(GpuSample {
                        util: Some(util),
                        ..GpuSample::new(t, s.gpu)
                    })
                }))
            }
        }
    }
}

fn shift(r: &mut Record, offset: f64) {
    match r {
        Record::Gpu(g) => g.t -= offset,
        Record::Host(h) => h.t -= offset,
    }
}

impl Source for ReplaySource {
    fn name(&self) -> &str {
        "replay"
    }

    fn gpus(&self) -> &[GpuInfo] {
        &self.gpus
    }

    fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError> {
        while let Some(r) = self.pending.take() {
            if r.t() > now {
                self.pending = Some(r);
                break;
            }
            out.push(r);
            self.pending = self.next_record()?;
            if let Some(r) = &mut self.pending {
                shift(r, self.offset);
            }
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.pending.is_none()
    }

    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonl::{HostMetrics, HostSample, JsonlWriter};

    fn open(text: &str, name: &str) -> Result<ReplaySource, SourceError> {
        ReplaySource::from_reader(
            std::io::Cursor::new(text.as_bytes().to_vec()),
            Path::new(name),
        )
    }

    fn recording(n: usize) -> String {
        let mut w = JsonlWriter::new(
            Vec::new(),
            &Header::new("2026-11-21T10:00:00Z", 100, "nvml"),
        )
        .unwrap();
        for i in 0..n {
            let t = 5.0 + i as f64 * 0.1;
            w.write(&Record::Gpu(GpuSample {
                util: Some((i % 10) as f64),
                ..GpuSample::new(t, 0)
            }))
            .unwrap();
            w.write(&Record::Host(HostSample {
                t,
                host: HostMetrics {
                    cpu_pct: Some(50.0),
                    ..HostMetrics::default()
                },
            }))
            .unwrap();
        }
        String::from_utf8(w.into_inner()).unwrap()
    }

    #[test]
    fn jsonl_is_handed_out_on_time_from_zero() {
        let mut r = open(&recording(20), "rec.jsonl").unwrap();
        assert_eq!(r.header().unwrap().source, "nvml");
        let mut out = Vec::new();
        r.poll(0.0, &mut out).unwrap();
        assert_eq!(out.len(), 2, "the first GPU and host samples, shifted to 0");
        assert_eq!(out[0].t(), 0.0);
        r.poll(0.95, &mut out).unwrap();
        assert_eq!(out.len(), 20);
        assert!(!r.finished());
        r.poll(f64::INFINITY, &mut out).unwrap();
        assert_eq!(out.len(), 40);
        assert!(r.finished());
    }

    #[test]
    fn corrupt_line_in_the_middle_is_skipped_and_named() {
        let text = recording(10);
        let mut lines: Vec<&str> = text.lines().collect();
        lines[7] = "{\"t\":0.3,\"gpu\":0,\"util\":";
        lines.insert(12, "{\"t\":0.5,\"gpu\":0,\"util\":250}");
        let text = lines.join("\n");
        let mut r = open(&text, "rec.jsonl").unwrap();
        let mut out = Vec::new();
        r.poll(f64::INFINITY, &mut out).unwrap();
        assert_eq!(out.len(), 19);
        let w: Vec<String> = r.take_warnings().iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("`rec.jsonl` line 8 column 24: EOF while parsing a value"),
            "{}",
            w[0]
        );
        assert!(w[0].ends_with("skipped it, the other lines are analysed"));
        assert!(
            w[1].starts_with("`rec.jsonl` line 13: utilisation `250`"),
            "{}",
            w[1]
        );
        assert_eq!(r.skipped_lines(), 2);
        assert!(r.take_warnings().is_empty());
    }

    /// Every reading of a replay, as (time rounded to 0.1 s, GPU, utilisation).
    fn all_gpu_readings(r: &mut ReplaySource) -> Vec<(f64, u32, f64)> {
        let mut out = Vec::new();
        r.poll(f64::INFINITY, &mut out).unwrap();
        out.iter()
            .map(|r| match r {
                Record::Gpu(g) => ((g.t * 10.0).round() / 10.0, g.gpu, g.util.unwrap()),
                Record::Host(_) => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn nvidia_smi_csv_is_merged_in_time_order() {
        let csv = "timestamp, index, utilization.gpu [%]\n\
                   2026/11/21 10:00:01.000, 0, 10 %\n\
                   2026/11/21 10:00:01.000, 1, 90 %\n\
                   2026/11/21 10:00:01.100, 1, 91 %\n\
                   2026/11/21 10:00:01.100, 0, 11 %\n";
        let mut r = open(csv, "gpu.csv").unwrap();
        assert_eq!(r.gpus().len(), 2);
        assert_eq!(r.format(), TraceFormat::NvidiaSmiCsv);
        let got = all_gpu_readings(&mut r);
        assert_eq!(
            got,
            vec![
                (0.0, 0, 10.0),
                (0.0, 1, 90.0),
                (0.1, 0, 11.0),
                (0.1, 1, 91.0)
            ]
        );
        assert!(r.finished());
    }

    #[test]
    fn nvidia_smi_csv_corrupt_line_in_the_middle_is_skipped_and_named() {
        let csv = "timestamp, index, utilization.gpu [%]\n\
                   2026/11/21 10:00:01.000, 0, 10 %\n\
                   2026/11/21 10:00:01.000, 1, 90 %\n\
                   2026/11/21 10:00:01.100, 0, 1\u{0}1 %\n\
                   2026/11/21 10:00:01.1, 1\n\
                   2026/11/21 10:00:01.100, 1, 91 %\n\
                   2026/11/21 10:00:01.200, 0, 12 %\n";
        let mut r = open(csv, "gpu.csv").unwrap();
        assert_eq!(r.gpus().len(), 2);
        let w: Vec<String> = r.take_warnings().iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("`gpu.csv` line 4: `1\\u{0}1 %` is not a number"),
            "{}",
            w[0]
        );
        assert!(w[1].starts_with("`gpu.csv` line 5: 2 fields"), "{}", w[1]);
        assert!(w[1].ends_with("skipped it, the other lines are analysed"));
        assert_eq!(r.skipped_lines(), 2);
        let got = all_gpu_readings(&mut r);
        assert_eq!(
            got,
            vec![
                (0.0, 0, 10.0),
                (0.0, 1, 90.0),
                (0.1, 1, 91.0),
                (0.2, 0, 12.0)
            ]
        );
        assert!(r.take_warnings().is_empty());
    }

    #[test]
    fn unreplayable_inputs() {
        let e = open("12.5\n13\n", "steps.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`steps.txt` looks like a list of step times; `--replay` takes a gpufeed JSONL \
             recording or an nvidia-smi CSV log (analyse step times with `gpufeed trace FILE`)"
        );
        let e = open("# gpu sm mem\n# Idx % %\n 0 45 10\n", "dmon.log").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`dmon.log` looks like nvidia-smi dmon output; `--replay` takes a gpufeed JSONL \
             recording or an nvidia-smi CSV log (analyse it with `gpufeed trace FILE`)"
        );
        let e = open("0, 45 %\n0, 46 %\n", "nots.csv").unwrap_err();
        assert!(e.to_string().contains("has no timestamp column"), "{e}");
        let e = open("\n\n", "empty.jsonl").unwrap_err();
        assert!(e.to_string().contains("is empty"), "{e}");
        let e = open("{\"format\":\"other\"}\n", "x.jsonl").unwrap_err();
        assert!(
            e.to_string().contains("not a gpufeed recording header"),
            "{e}"
        );
    }

    #[test]
    fn header_only_recording_finishes_at_once() {
        let text = recording(0);
        let r = open(&text, "rec.jsonl").unwrap();
        assert!(r.finished());
    }
}
