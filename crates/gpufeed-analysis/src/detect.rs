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

use std::io::{BufRead as _, Read as _};
use std::path::{Path, PathBuf};

use anyhow::Result;
use gpufeed_contract::format::{TraceFormat, TraceKind};
use gpufeed_telemetry::trace::detect_kind;

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
        /// Its format, from its first non-empty line (`None`: empty or unreadable, and
        /// the reader says why).
        format: Option<TraceFormat>,
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
    },
}

impl TraceSource {
    /// Whether it is a step recording of the user's own loop (`StepTimer.save`).
    #[must_use]
    pub fn is_step_recording(&self) -> bool {
        matches!(
            self,
            Self::Log {
                format: Some(TraceFormat::PhaseSteps),
                ..
            }
        )
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
            });
        }
        Some(Kind::Tensorflow) => {
            return Ok(TraceSource::Profiler {
                path: path.to_owned(),
                format: Some(TraceFormat::Tensorflow),
            });
        }
        None => None,
    };
    if path == Path::new("-") {
        return Ok(TraceSource::Stdin { kind: log_kind });
    }
    // The content first: a step recording saved as `steps.json` is still one.
    let format = if path.is_dir() {
        None
    } else {
        first_line(path).map(|l| detect_kind(&l).1)
    };
    // A Prometheus answer saved as `.json` is a utilisation log.
    let format = if !path.is_dir() && saved_range_query(path) {
        Some(TraceFormat::Prometheus)
    } else {
        format
    };
    if log_kind.is_none()
        && !matches!(
            format,
            Some(TraceFormat::PhaseSteps | TraceFormat::Prometheus)
        )
        && looks_like_profiler_trace(path)
    {
        return Ok(TraceSource::Profiler {
            path: path.to_owned(),
            format: None,
        });
    }
    Ok(TraceSource::Log {
        path: path.to_owned(),
        format,
        kind: log_kind,
    })
}

/// Whether the file's first 64 KiB hold a Prometheus range-query answer.
fn saved_range_query(path: &Path) -> bool {
    let mut head = Vec::new();
    fs_err::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .is_ok_and(|_| gpufeed_telemetry::dcgm::is_range_query(&head))
}

/// A folder, a name a profiler writes (`.json`, `.json.gz`, `.pb`), or gzip bytes.
fn looks_like_profiler_trace(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".pb") {
        return true;
    }
    let mut magic = [0u8; 2];
    fs_err::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == [0x1f, 0x8b])
}

/// The first non-empty line of a file (its first MiB), without a UTF-8 BOM; `None` when
/// it cannot be read or holds none.
pub fn first_line(path: &Path) -> Option<String> {
    let file = fs_err::File::open(path).ok()?;
    // A header is a few hundred bytes; a file whose first MiB is blank is no log. A read
    // error ends the search: `lines` would repeat it for ever (a folder opens on Linux, and
    // every read of it fails with EISDIR).
    let mut lines = std::io::BufReader::new(file.take(1 << 20))
        .lines()
        .map_while(Result::ok);
    lines
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim_start_matches('\u{feff}').to_owned())
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
            TraceSource::Log { format, .. } => format.map(|f| f.describe()),
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
        // `--kind` wins over the guess.
        assert_eq!(
            detect(&json, Some(Kind::Util)).unwrap(),
            TraceSource::Log {
                path: json.clone(),
                format: None,
                kind: Some(TraceKind::Util)
            }
            .with_format_of(&json)
        );
        assert_eq!(
            detect(&smi, Some(Kind::Tensorflow)).unwrap(),
            TraceSource::Profiler {
                path: smi.clone(),
                format: Some(TraceFormat::Tensorflow)
            }
        );
    }

    impl TraceSource {
        fn with_format_of(self, path: &Path) -> Self {
            match self {
                Self::Log { path: p, kind, .. } => Self::Log {
                    format: first_line(path).map(|l| detect_kind(&l).1),
                    path: p,
                    kind,
                },
                other => other,
            }
        }
    }
}
