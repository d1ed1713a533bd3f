//! The one trace-format detector: what a path given to `gpufeed trace` or
//! `gpufeed analyze --trace` holds, and which reader reads it.
//!
//! | what | how it is recognised | reader |
//! |---|---|---|
//! | `-` | standard input, a log | gpufeed-telemetry |
//! | a folder | per-rank profiler traces, a TensorFlow run or log folder | gpufeed-kineto |
//! | a step recording (its first line declares `gpufeed-steps`), whatever its name | the user's own steps | gpufeed-telemetry |
//! | `*.json`, `*.json.gz`, `*.pb`, gzip bytes | a profiler trace | gpufeed-kineto |
//! | anything else | its first non-empty line: an nvidia-smi log (any header naming utilisation), a gpufeed JSONL recording, a step recording (`gpufeed-steps`), a step-time list; or `nvidia-smi` tables in its first 256 KiB: job output (LSF, Slurm) | gpufeed-telemetry |
//!
//! `--kind` overrides the guess ([`Kind`]). Adding a format means one arm in [`detect`]
//! plus its reader.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use gpufeed_contract::format::{TraceFormat, TraceKind};
use gpufeed_kineto::tf::{self, Classified};
use gpufeed_telemetry::trace::{SNIFF_BYTES, Sniffed, sniff_head};

/// What the user says a trace holds (`--kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GPU utilisation samples.
    Util,
    /// Step times (or a step recording's step times alone).
    Steps,
    /// A PyTorch profiler trace or a folder of them.
    Pytorch,
    /// A TensorFlow (or JAX) profile.
    Tensorflow,
}

/// Where a trace comes from and which reader takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceSource {
    /// A line-oriented log on standard input (`nvidia-smi ... | gpufeed trace -`).
    Stdin {
        /// `--kind util|steps`, when given.
        kind: Option<TraceKind>,
    },
    /// A line-oriented log file, read by gpufeed-telemetry.
    Log {
        /// The file.
        path: PathBuf,
        /// What its head said (its format, from its first non-empty line), passed to the
        /// reader so that it does not look again; `None`: empty, unreadable or refused,
        /// and the reader says why.
        sniffed: Option<Sniffed>,
        /// `--kind util|steps`, when given.
        kind: Option<TraceKind>,
    },
    /// A profiler trace, a folder of per-rank traces, or a TensorFlow run or log folder,
    /// read by gpufeed-kineto.
    Profiler {
        /// The file or folder.
        path: PathBuf,
        /// `--kind pytorch|tensorflow`, when given (detected from the content otherwise).
        format: Option<TraceFormat>,
        /// What a file's head says it is (TensorFlow's files that hold no trace among
        /// them), from the head detection read: the reader does not open it again to
        /// sniff. `None` for a folder, or a kind given with `--kind`.
        classified: Option<Classified>,
    },
}

impl TraceSource {
    /// Whether it is a step recording of the user's own loop (`StepTimer.save`).
    #[must_use]
    pub fn is_step_recording(&self) -> bool {
        self.log_format() == Some(TraceFormat::PhaseSteps)
    }

    /// A log's format, as its head says (`None` for a profiler trace, standard input, or
    /// a log whose head says nothing).
    #[must_use]
    pub fn log_format(&self) -> Option<TraceFormat> {
        match self {
            Self::Log { sniffed, .. } => sniffed.map(|s| s.format),
            _ => None,
        }
    }
}

/// What `path` holds (see the [module docs](self)); `kind` is `--kind`.
///
/// # Errors
///
/// None today: a file that cannot be read is detected as a log, whose reader names the
/// problem. The `Result` leaves room for formats whose detection can fail.
pub fn detect(path: &Path, kind: Option<Kind>) -> Result<TraceSource> {
    let log_kind = match kind {
        Some(Kind::Util) => Some(TraceKind::Util),
        Some(Kind::Steps) => Some(TraceKind::Steps),
        Some(Kind::Pytorch) => {
            return Ok(TraceSource::Profiler {
                path: path.to_owned(),
                format: Some(TraceFormat::Pytorch),
                classified: None,
            });
        }
        Some(Kind::Tensorflow) => {
            return Ok(TraceSource::Profiler {
                path: path.to_owned(),
                format: Some(TraceFormat::Tensorflow),
                classified: None,
            });
        }
        None => None,
    };
    if path == Path::new("-") {
        return Ok(TraceSource::Stdin { kind: log_kind });
    }
    if path.is_dir() {
        return Ok(if log_kind.is_some() {
            TraceSource::Log {
                path: path.to_owned(),
                sniffed: None,
                kind: log_kind,
            }
        } else {
            TraceSource::Profiler {
                path: path.to_owned(),
                format: None,
                classified: None,
            }
        });
    }
    // The file is opened once here: its head says everything detection needs.
    let head = read_head(path);
    // The content first: a step recording saved as `steps.json` is still one, and a
    // Prometheus answer saved as `.json` is a utilisation log.
    let (sniffed, refused) = match (&head, head.as_deref().and_then(first_line_of)) {
        (Some(h), Some((first, end))) => {
            let window = &h[..h.len().min(end + SNIFF_BYTES as usize)];
            // A refused format (Huawei's tables) is the reader's to say, with its line.
            if gpufeed_telemetry::trace::refuse_head(window, path).is_err() {
                (None, true)
            } else {
                (Some(sniff_head(&first, window)), false)
            }
        }
        _ => (None, false),
    };
    let format = sniffed.map(|s| s.format);
    let gzip = head
        .as_deref()
        .is_some_and(|h| h.starts_with(&[0x1f, 0x8b]));
    if log_kind.is_none()
        && !refused
        && !matches!(
            format,
            Some(TraceFormat::PhaseSteps | TraceFormat::Prometheus)
        )
        && (profiler_name(path) || gzip)
    {
        let head = head.as_deref().unwrap_or_default();
        return Ok(TraceSource::Profiler {
            path: path.to_owned(),
            format: None,
            classified: Some(Classified(tf::classify(
                path,
                &head[..head.len().min(tf::CLASSIFY_HEAD)],
            ))),
        });
    }
    Ok(TraceSource::Log {
        path: path.to_owned(),
        sniffed,
        kind: log_kind,
    })
}

/// The first bytes of a file, as far as detection looks (the first non-empty line within
/// its first MiB, and [`SNIFF_BYTES`] past it); `None` when it cannot be read.
fn read_head(path: &Path) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    fs_err::File::open(path)
        .and_then(|f| f.take((1 << 20) + SNIFF_BYTES).read_to_end(&mut head))
        .ok()?;
    Some(head)
}

/// The first non-empty line of a head (in its first MiB), without a UTF-8 BOM, and the
/// byte where it ends; `None` when it holds none, or the lines before it are not UTF-8.
fn first_line_of(head: &[u8]) -> Option<(String, usize)> {
    let limit = head.len().min(1 << 20);
    let mut start = 0;
    while start < limit {
        let end = head[start..limit]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(limit, |i| start + i + 1);
        let line = std::str::from_utf8(&head[start..end]).ok()?;
        let line = line.trim_end_matches(['\n', '\r']);
        if !line.trim().is_empty() {
            return Some((line.trim_start_matches('\u{feff}').to_owned(), end));
        }
        start = end;
    }
    None
}

/// A name a profiler writes: `.json`, `.json.gz`, `.pb`.
fn profiler_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".pb")
}

/// The first non-empty line of a file (its first MiB), without a UTF-8 BOM; `None` when
/// it cannot be read or holds none.
pub fn first_line(path: &Path) -> Option<String> {
    read_head(path).and_then(|h| first_line_of(&h).map(|(l, _)| l))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
        let p = dir.join(name);
        fs_err::write(&p, text).unwrap();
        p
    }

    #[test]
    fn each_kind_of_input_goes_to_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let smi = write(d, "gpu.csv", b"timestamp, index, utilization.gpu [%]\n");
        let rec = write(d, "steps.jsonl", b"\n{\"format\":\"gpufeed-steps\"}\n");
        let list = write(d, "steps.txt", b"12.5\n13.0\n");
        let gz = write(d, "trace", &[0x1f, 0x8b, 8, 0]);
        let json = write(d, "w0.pt.trace.json", b"{}");
        let fmt = |p: &Path| match detect(p, None).unwrap() {
            source @ TraceSource::Log { .. } => source.log_format().map(|f| f.describe()),
            TraceSource::Profiler { .. } => Some("profiler"),
            TraceSource::Stdin { .. } => Some("stdin"),
        };
        assert_eq!(fmt(&smi), Some(TraceFormat::NvidiaSmiCsv.describe()));
        assert_eq!(fmt(&rec), Some(TraceFormat::PhaseSteps.describe()));
        assert!(detect(&rec, None).unwrap().is_step_recording());
        assert_eq!(fmt(&list), Some(TraceFormat::StepList.describe()));
        assert_eq!(fmt(&gz), Some("profiler"));
        assert_eq!(fmt(&json), Some("profiler"));
        assert_eq!(fmt(d), Some("profiler"));
        assert_eq!(fmt(Path::new("-")), Some("stdin"));
        assert_eq!(fmt(&d.join("missing.csv")), None);
        // `--kind` wins over the guess; what the head says is still passed on.
        let TraceSource::Log {
            path,
            sniffed,
            kind,
        } = detect(&json, Some(Kind::Util)).unwrap()
        else {
            panic!("a log");
        };
        assert_eq!(
            (path, sniffed.map(|s| s.format), kind),
            (
                json.clone(),
                Some(TraceFormat::GpufeedJsonl),
                Some(TraceKind::Util)
            )
        );
        assert_eq!(
            detect(&smi, Some(Kind::Tensorflow)).unwrap(),
            TraceSource::Profiler {
                path: smi.clone(),
                format: Some(TraceFormat::Tensorflow),
                classified: None,
            }
        );
    }

    #[test]
    fn a_profiler_trace_is_read_as_detection_found_it() {
        // Detection classifies a profiler file from the head it read, and the reader takes
        // that class: it does not open the file again to sniff.
        use gpufeed_kineto::synth::{Case, generate};
        let dir = tempfile::tempdir().unwrap();
        let memory = write(
            dir.path(),
            "host.json",
            br#"{"memoryProfilePerAllocator": {}}"#,
        );
        let trace = write(
            dir.path(),
            "w0.pt.trace.json",
            &generate(&Case::input_bound(), 0),
        );
        let classified = |p: &Path| match detect(p, None).unwrap() {
            TraceSource::Profiler { classified, .. } => classified,
            other => panic!("a profiler trace: {other:?}"),
        };
        assert_eq!(
            classified(&memory),
            Some(Classified(Some(tf::TfFile::MemoryProfile)))
        );
        assert_eq!(
            classified(&trace),
            Some(Classified(Some(tf::TfFile::TraceJson)))
        );
        assert_eq!(
            classified(dir.path()),
            None,
            "a folder is listed, not sniffed"
        );
        let read = |p: &Path, told| {
            crate::profiler::analyze(p, crate::profiler::options(None, told)).map(|(r, _)| r)
        };
        let refused = read(&memory, classified(&memory)).unwrap_err().to_string();
        assert!(refused.contains("memory profile"), "{refused}");
        assert!(read(&trace, classified(&trace)).is_ok());
        // Told otherwise, the reader believes what it is told: it did not look again.
        let told = Some(Classified(Some(tf::TfFile::MemoryProfile)));
        assert!(read(&trace, told).is_err(), "read as a memory profile");
    }

    #[test]
    fn a_log_is_read_as_detection_found_it() {
        // The reader takes the format detection passed down: it does not sniff again.
        let dir = tempfile::tempdir().unwrap();
        let list = write(dir.path(), "steps.txt", b"12.5\n13.0\n12.9\n13.1\n");
        let source = detect(&list, None).unwrap();
        let (report, _) = crate::trace::analyze_source(&source, None).unwrap();
        assert!(matches!(report, crate::trace::TraceReport::Steps(_)));
        let TraceSource::Log { path, kind, .. } = source else {
            panic!("a log");
        };
        let told = TraceSource::Log {
            path,
            sniffed: Some(Sniffed {
                format: TraceFormat::NvidiaSmiCsv,
                strong: true,
            }),
            kind,
        };
        assert!(
            crate::trace::analyze_source(&told, None).is_err(),
            "read as a utilisation log"
        );
    }
}
