//! Errors and warnings. Each names the file, line and column of the offending key or value,
//! says what was expected, and what to do.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::source::{Source, Span};

/// What kind of error stopped the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The file is not valid YAML.
    Syntax,
    /// The file is not UTF-8.
    NotUtf8,
    /// The file holds more than one YAML document.
    MultipleDocuments,
    /// Nesting or alias expansion beyond sane limits, or a file over
    /// [`MAX_CONFIG_BYTES`](crate::MAX_CONFIG_BYTES).
    TooLarge,
    /// The top of the file, or a section, is not a mapping.
    NotAMapping,
    /// The same key twice in one mapping.
    DuplicateKey,
    /// A key that is a list or a mapping.
    ComplexKey,
    /// A merge key (`<<`) whose value is not a mapping.
    BadMerge,
    /// A value of the wrong type (`batch_size: "32x"`).
    WrongType,
    /// A value out of range or inconsistent with another (`win_length > n_fft`).
    InvalidValue,
}

impl ErrorKind {
    /// A stable identifier for reports (`config-wrong-type`).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Syntax => "config-syntax",
            Self::NotUtf8 => "config-not-utf8",
            Self::MultipleDocuments => "config-multiple-documents",
            Self::TooLarge => "config-too-large",
            Self::NotAMapping => "config-not-a-mapping",
            Self::DuplicateKey => "config-duplicate-key",
            Self::ComplexKey => "config-complex-key",
            Self::BadMerge => "config-bad-merge",
            Self::WrongType => "config-wrong-type",
            Self::InvalidValue => "config-invalid-value",
        }
    }
}

/// An error that stops a config from loading.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file `{}`: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason (innermost error), for the message.
        reason: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file was read but is not a valid config.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Line of the offending key or value, from 1.
        line: usize,
        /// Column, from 1, in characters.
        column: usize,
        /// Dotted path of the offending key (`data.batch_size`), when the error is tied to
        /// one.
        key: Option<String>,
        /// What went wrong.
        kind: ErrorKind,
        /// The message without the location: what was found, what was expected, what to
        /// do.
        message: String,
    },
}

impl ConfigError {
    /// The line of the error (from 1), if it is tied to a place in the file.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Read { .. } => None,
            Self::Invalid { line, .. } => Some(*line),
        }
    }

    /// The column of the error (from 1), if it is tied to a place in the file.
    #[must_use]
    pub fn column(&self) -> Option<usize> {
        match self {
            Self::Read { .. } => None,
            Self::Invalid { column, .. } => Some(*column),
        }
    }

    /// The dotted key the error is about, if any.
    #[must_use]
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Read { .. } => None,
            Self::Invalid { key, .. } => key.as_deref(),
        }
    }

    /// The kind of error; `None` for a read failure.
    #[must_use]
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Self::Read { .. } => None,
            Self::Invalid { kind, .. } => Some(*kind),
        }
    }

    /// A stable identifier for reports (`config-wrong-type`, `config-read`).
    #[must_use]
    pub fn id(&self) -> &'static str {
        self.kind().map_or("config-read", ErrorKind::id)
    }
}

/// Every error found in a config, with the warnings gathered on the way.
#[derive(Debug)]
pub struct Rejected {
    /// The errors, in file order; never empty.
    pub errors: Vec<ConfigError>,
    /// The warnings, in file order.
    pub warnings: Vec<ConfigWarning>,
    /// The file text and spans, when the file could be read and parsed.
    pub source: Option<Box<Source>>,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rejected {}

impl From<Rejected> for ConfigError {
    /// The first error (in file order).
    fn from(rejected: Rejected) -> Self {
        let mut errors = rejected.errors;
        if errors.is_empty() {
            // Not built by this crate with no errors, but stay total.
            return ConfigError::Invalid {
                path: rejected
                    .source
                    .map(|s| s.path().to_path_buf())
                    .unwrap_or_default(),
                line: 1,
                column: 1,
                key: None,
                kind: ErrorKind::InvalidValue,
                message: "the config was rejected".to_owned(),
            };
        }
        errors.swap_remove(0)
    }
}

/// A text edit that resolves a warning: replace `span` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// What to replace.
    pub span: Span,
    /// The new text.
    pub replacement: String,
}

/// What a warning is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WarningKind {
    /// A key gpufeed does not know; it is left in the file untouched.
    UnknownKey {
        /// A close known key (`num_workers`, or `data.batch_size` when it belongs to
        /// another section).
        suggestion: Option<String>,
    },
    /// A number YAML 1.2 reads as a float but PyYAML (YAML 1.1) reads as a string: the
    /// mantissa has no dot or the exponent no sign (`1e-4`, `1.0e4`).
    FloatIsStringForPyYaml {
        /// The value as written.
        written: String,
        /// The same number in a form both read as a float (`1.0e-4`).
        fix: String,
    },
    /// An integer PyYAML reads differently from YAML 1.2: a leading zero (octal for
    /// PyYAML), underscores, `0b`, `0o` or base 60 (`1:30`).
    NumberDiffersInPyYaml {
        /// The value as written.
        written: String,
        /// What PyYAML reads.
        pyyaml: String,
        /// What gpufeed (YAML 1.2) reads, and uses.
        yaml12: String,
        /// A spelling both read the same way.
        fix: String,
    },
    /// `yes`/`no`/`on`/`off`: a boolean for PyYAML, a string for YAML 1.2 readers.
    Yaml11Boolean {
        /// The value as written.
        written: String,
        /// The boolean PyYAML reads, and gpufeed uses.
        value: bool,
    },
    /// A string value that PyYAML reads as another type (`language: no` is `False`).
    NotAStringForPyYaml {
        /// The value as written.
        written: String,
        /// What PyYAML reads.
        pyyaml: String,
    },
    /// The same setting in `model` and `data` (or `training`) with different values.
    SectionsDisagree {
        /// The other key (`model.n_mels`).
        other: String,
        /// Its line, when the file sets it (else it holds its default).
        other_line: Option<usize>,
    },
    /// More mel bands than FFT bins: some mel filters are empty.
    EmptyMelFilters,
    /// `max_text_tokens` differs from `max_text_length`.
    TwoTextCaps,
    /// `train_split + val_split > 1`.
    SplitsOverlap,
    /// A model width that the number of attention heads does not divide.
    HeadsDoNotDivide {
        /// The heads key (`model.decoder_heads`).
        heads_key: String,
    },
    /// `text_cleaners` (MyXTTS) and `cleaner` (gpufeed) disagree, or a cleaner has no
    /// gpufeed equivalent.
    Cleaners,
    /// `min_learning_rate` above `learning_rate`.
    MinLearningRateAboveLearningRate,
}

impl WarningKind {
    /// A stable identifier for reports (`config-unknown-key`).
    #[must_use]
    pub fn id(&self) -> &'static str {
        match self {
            Self::UnknownKey { .. } => "config-unknown-key",
            Self::FloatIsStringForPyYaml { .. } => "config-float-is-string-for-pyyaml",
            Self::NumberDiffersInPyYaml { .. } => "config-number-differs-in-pyyaml",
            Self::Yaml11Boolean { .. } => "config-yaml11-boolean",
            Self::NotAStringForPyYaml { .. } => "config-not-a-string-for-pyyaml",
            Self::SectionsDisagree { .. } => "config-sections-disagree",
            Self::EmptyMelFilters => "config-empty-mel-filters",
            Self::TwoTextCaps => "config-two-text-caps",
            Self::SplitsOverlap => "config-splits-overlap",
            Self::HeadsDoNotDivide { .. } => "config-heads-do-not-divide",
            Self::Cleaners => "config-cleaners",
            Self::MinLearningRateAboveLearningRate => "config-min-learning-rate",
        }
    }
}

/// Something worth telling the user that does not stop the load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigWarning {
    /// The file.
    pub path: PathBuf,
    /// Line of the key or value concerned, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
    /// Dotted path of the key concerned (`data.num_worker`).
    pub key: String,
    /// What the warning is about, with its details.
    pub kind: WarningKind,
    /// The message without the location.
    pub message: String,
    /// A text edit that resolves the warning, when one is safe to apply mechanically.
    pub edit: Option<Edit>,
}

impl ConfigWarning {
    /// A stable identifier for reports (`config-unknown-key`).
    #[must_use]
    pub fn id(&self) -> &'static str {
        self.kind.id()
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}
