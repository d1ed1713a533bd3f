//! Loading: read the file, parse it, index every key, map it onto the schema, reconcile
//! the keys that MyXTTS kept in two places, and run the semantic checks.

use std::collections::HashMap;
use std::path::Path;

use gpufeed_text::Cleaner;

use crate::diag::{ConfigError, ErrorKind, Rejected, WarningKind};
use crate::read::{Reader, read_config};
use crate::schema::Config;
use crate::source::{EntrySpan, Loaded, Source, Span};
use crate::yaml::{self, Node, NodeKind, Positions, SyntaxKind};

/// The largest config file read: MyXTTS' `config.yaml` is about 2 KB, so 10 MiB is three
/// orders of magnitude above any training config, and stops a dataset or a checkpoint
/// passed by mistake (or `/dev/zero`) before it is read whole. The YAML positions table
/// costs 8 bytes a character, so a config at the cap takes about 100 MB to check.
pub const MAX_CONFIG_BYTES: u64 = 10 * 1024 * 1024;

/// Reads and checks a config file, returning every error when it is rejected.
///
/// # Errors
/// [`Rejected`] with the read failure, a file over [`MAX_CONFIG_BYTES`], or every error
/// found in the file.
pub fn check_file(path: &Path) -> Result<Loaded, Rejected> {
    let reject = |error: ConfigError| Rejected {
        errors: vec![error],
        warnings: Vec::new(),
        source: None,
    };
    let read_error = |error: std::io::Error| {
        let mut reason = error.to_string();
        let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(&error);
        while let Some(inner) = cause {
            reason = inner.to_string();
            cause = inner.source();
        }
        reject(ConfigError::Read {
            path: path.to_path_buf(),
            reason,
            error,
        })
    };
    let bytes = match read_capped(path, MAX_CONFIG_BYTES).map_err(read_error)? {
        Ok(bytes) => bytes,
        Err(size) => {
            let size = size.map_or_else(|| "more than that".to_owned(), |n| format!("{n} bytes"));
            return Err(reject(ConfigError::Invalid {
                path: path.to_path_buf(),
                line: 1,
                column: 1,
                key: None,
                kind: ErrorKind::TooLarge,
                message: format!(
                    "a config may have {} and this file has {size}, so it was not read; pass \
                     the training config (a YAML file of a few KB), not a dataset or a \
                     checkpoint",
                    mib(MAX_CONFIG_BYTES)
                ),
            }));
        }
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = String::from_utf8_lossy(&e.as_bytes()[..valid]);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        reject(ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            key: None,
            kind: ErrorKind::NotUtf8,
            message: "the file is not UTF-8 text (the byte here is not valid UTF-8); save it \
                      as UTF-8"
                .to_owned(),
        })
    })?;
    check(&text, path)
}

/// The bytes of `path`, or, when it has more than `cap`, its size: `None` for a file whose
/// size is not known before reading (a pipe, a device). Never reads more than `cap + 1`
/// bytes.
///
/// # Errors
/// The I/O error of opening or reading the file.
pub fn read_capped(path: &Path, cap: u64) -> std::io::Result<Result<Vec<u8>, Option<u64>>> {
    use std::io::Read as _;
    let file = fs_err::File::open(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > cap {
        return Ok(Err(Some(len)));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok(Err(None));
    }
    Ok(Ok(bytes))
}

/// `n` bytes in MiB, one decimal (`10 MiB`, `12.5 MiB`).
#[allow(clippy::cast_precision_loss)] // a size in words
fn mib(n: u64) -> String {
    let m = n as f64 / (1024.0 * 1024.0);
    if m.fract() == 0.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

/// Checks config text; `path` names the file in messages.
///
/// # Errors
/// [`Rejected`] with every error found, and the warnings.
pub fn check(text: &str, path: &Path) -> Result<Loaded, Rejected> {
    let positions = Positions::new(text);
    let root = yaml::parse(text, &positions).map_err(|e| {
        let kind = match e.kind {
            SyntaxKind::Syntax => ErrorKind::Syntax,
            SyntaxKind::MultipleDocuments => ErrorKind::MultipleDocuments,
            SyntaxKind::TooLarge => ErrorKind::TooLarge,
            SyntaxKind::ComplexKey => ErrorKind::ComplexKey,
            SyntaxKind::BadMerge => ErrorKind::BadMerge,
        };
        let message = if kind == ErrorKind::Syntax {
            format!(
                "invalid YAML: {}; check the indentation (spaces, not tabs) and the quotes on \
                 this line and the one before",
                e.message
            )
        } else {
            e.message
        };
        Rejected {
            errors: vec![ConfigError::Invalid {
                path: path.to_path_buf(),
                line: e.span.line,
                column: e.span.column,
                key: None,
                kind,
                message,
            }],
            warnings: Vec::new(),
            source: None,
        }
    })?;

    let mut r = Reader::new(path, text);
    let mut entries = Vec::new();
    if let Some(root) = &root {
        index(&mut r, root, "", 1, false, &mut entries);
    }
    let mut config = read_config(&mut r, root.as_ref());
    let source = Source::new(path, text.to_owned(), entries);
    reconcile(&mut r, &mut config, &source);
    if r.errors.is_empty() {
        for violation in config.violations() {
            let span = locate(&source, &violation.keys);
            let key = violation.keys.first().copied();
            match violation.warning {
                None => r.error(span, key, ErrorKind::InvalidValue, violation.message),
                Some(kind) => r.warn(span, key.unwrap_or(""), kind, violation.message, None),
            }
        }
    }

    let mut errors = r.errors;
    let mut warnings = r.warnings;
    errors.sort_by_key(|e| (e.line(), e.column()));
    warnings.sort_by_key(|w| (w.line, w.column));
    if errors.is_empty() {
        Ok(Loaded {
            config,
            warnings,
            source,
        })
    } else {
        Err(Rejected {
            errors,
            warnings,
            source: Some(Box::new(source)),
        })
    }
}

/// Records the span of every key and list item (document order) and reports duplicate
/// keys with both lines.
fn index(
    r: &mut Reader<'_>,
    node: &Node,
    prefix: &str,
    depth: usize,
    inherited: bool,
    out: &mut Vec<EntrySpan>,
) {
    let inside = inherited || node.alias;
    match &node.kind {
        NodeKind::Mapping(entries) => {
            let mut seen: HashMap<&str, Span> = HashMap::new();
            for entry in entries {
                let name = entry.key.scalar().unwrap_or_default();
                let path = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}.{name}")
                };
                if !entry.merged {
                    if let Some(first) = seen.get(name) {
                        r.error(
                            entry.key.span,
                            Some(&path),
                            ErrorKind::DuplicateKey,
                            format!(
                                "duplicate key `{path}` (lines {} and {}): PyYAML silently keeps \
                                 the last one; delete one of them",
                                first.line, entry.key.span.line
                            ),
                        );
                    } else {
                        seen.insert(name, entry.key.span);
                    }
                }
                let inherited = inside || entry.merged;
                out.push(EntrySpan {
                    path: path.clone(),
                    key: Some(entry.key.span),
                    value: entry.value.span,
                    depth,
                    inherited,
                });
                index(r, &entry.value, &path, depth + 1, inherited, out);
            }
        }
        NodeKind::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("{prefix}[{i}]");
                out.push(EntrySpan {
                    path: path.clone(),
                    key: None,
                    value: item.span,
                    depth,
                    inherited: inside,
                });
                index(r, item, &path, depth + 1, inside, out);
            }
        }
        NodeKind::Scalar { .. } => {}
    }
}

/// Where a violation points: the value of the first involved key the file sets, else the
/// section it belongs to, else the start of the file.
fn locate(source: &Source, keys: &[&str]) -> Span {
    keys.iter()
        .find_map(|k| source.entry(k))
        .map(|e| e.value)
        .or_else(|| {
            keys.iter().find_map(|k| {
                let section = k.split('.').next()?;
                source.entry(section).and_then(|e| e.key)
            })
        })
        .unwrap_or(Span {
            line: 1,
            column: 1,
            byte_start: 0,
            byte_end: 0,
        })
}

/// The span to point at for `path`: its value if the file sets it.
fn value_span(source: &Source, path: &str) -> Option<Span> {
    source.entry(path).map(|e| e.value)
}

/// MyXTTS kept some settings in two sections, and named the text cleaners differently;
/// gpufeed reads both and says when they disagree.
fn reconcile(r: &mut Reader<'_>, config: &mut Config, source: &Source) {
    let shared: [(&str, u64, u64); 5] = [
        (
            "sample_rate",
            u64::from(config.model.sample_rate),
            u64::from(config.data.sample_rate),
        ),
        (
            "n_mels",
            config.model.n_mels as u64,
            config.data.n_mels as u64,
        ),
        ("n_fft", config.model.n_fft as u64, config.data.n_fft as u64),
        (
            "hop_length",
            config.model.hop_length as u64,
            config.data.hop_length as u64,
        ),
        (
            "win_length",
            config.model.win_length as u64,
            config.data.win_length as u64,
        ),
    ];
    for (name, model, data) in shared {
        if model == data {
            continue;
        }
        let model_key = format!("model.{name}");
        let data_key = format!("data.{name}");
        // Only when the file sets both: a config that sets `data.sample_rate` alone is
        // not asking about the model's default.
        let (Some(data_span), Some(model_span)) = (
            value_span(source, &data_key),
            value_span(source, &model_key),
        ) else {
            continue;
        };
        r.warn(
            data_span,
            &data_key,
            WarningKind::SectionsDisagree {
                other: model_key,
                other_line: Some(model_span.line),
            },
            format!(
                "`data.{name}` ({data}) and `model.{name}` ({model}, line {}) differ; features \
                 use data.{name}, so the model would get features it does not expect; make \
                 them equal",
                model_span.line
            ),
            None,
        );
    }

    if let (Some(training), Some(data_span)) = (
        config.training.mixed_precision,
        value_span(source, "data.mixed_precision"),
    ) && training != config.data.mixed_precision
    {
        let span = value_span(source, "training.mixed_precision").unwrap_or(data_span);
        r.warn(
            span,
            "training.mixed_precision",
            WarningKind::SectionsDisagree {
                other: "data.mixed_precision".to_owned(),
                other_line: Some(data_span.line),
            },
            format!(
                "`training.mixed_precision` ({training}) and `data.mixed_precision` ({}, \
                     line {}) differ; gpufeed uses the training one, MyXTTS the data one; keep \
                     one of them",
                config.data.mixed_precision, data_span.line
            ),
            None,
        );
    }

    reconcile_cleaners(r, config, source);
}

/// What gpufeed reads MyXTTS' `multilingual_cleaners` as (research notes, `myxtts.md` 3.3).
const MULTILINGUAL_CLEANERS: &str = "gpufeed has no `multilingual_cleaners` (MyXTTS: \
    lowercase, expand English abbreviations, strip accents); it reads it as `cleaner: \
    unicode` (NFC, lowercase, collapse whitespace), which keeps every script and its accents \
    and expands nothing; set `data.cleaner` to choose";

/// What gpufeed reads Coqui's (and Keith Ito's) `transliteration_cleaners` as.
const TRANSLITERATION_CLEANERS: &str = "gpufeed has no `transliteration_cleaners` (Coqui, \
    Keith Ito: to ASCII, lowercase, collapse whitespace); it reads it as `cleaner: english`, \
    which also spells out numbers, abbreviations and `& %` as English words; set \
    `data.cleaner` to choose";

/// Maps MyXTTS' `text_cleaners` onto gpufeed's `cleaner`: `english_cleaners` → `english`,
/// `basic_cleaners` → `basic`, `multilingual_cleaners` → `unicode` (keeps every script, as
/// MyXTTS' did; a warning says what differs), Coqui's `transliteration_cleaners` →
/// `english` (a warning says it also reads numbers), `[]` → `none`. Unset, nothing is
/// mapped and `cleaner`'s default (`unicode`) stays.
fn reconcile_cleaners(r: &mut Reader<'_>, config: &mut Config, source: &Source) {
    let Some(names) = config.data.text_cleaners.clone() else {
        return;
    };
    let list_span = value_span(source, "data.text_cleaners");
    let mut mapped: Option<Cleaner> = if names.is_empty() {
        Some(Cleaner::None)
    } else {
        None
    };
    for (i, name) in names.iter().enumerate() {
        let item = format!("data.text_cleaners[{i}]");
        let span = value_span(source, &item).or(list_span);
        let (this, note) = match name.as_str() {
            "english_cleaners" => (Cleaner::English, None),
            "basic_cleaners" => (Cleaner::Basic, None),
            "multilingual_cleaners" => (Cleaner::Unicode, Some(MULTILINGUAL_CLEANERS)),
            "transliteration_cleaners" => (Cleaner::English, Some(TRANSLITERATION_CLEANERS)),
            other => {
                if let Some(span) = span {
                    r.warn(
                        span,
                        &item,
                        WarningKind::Cleaners,
                        format!(
                            "unknown cleaner `{other}`; MyXTTS knows `english_cleaners`, \
                             `basic_cleaners` and `multilingual_cleaners` (gpufeed also reads \
                             `transliteration_cleaners`); gpufeed ignores it"
                        ),
                        None,
                    );
                }
                continue;
            }
        };
        if let (Some(note), Some(span)) = (note, span) {
            r.warn(span, &item, WarningKind::Cleaners, note.to_owned(), None);
        }
        // English includes what basic and unicode do; the strongest cleaner in the list
        // wins, else the last one.
        mapped = Some(match (mapped, this) {
            (Some(Cleaner::English), _) | (_, Cleaner::English) => Cleaner::English,
            _ => this,
        });
    }
    let Some(mapped) = mapped else {
        return;
    };
    match value_span(source, "data.cleaner") {
        None => config.data.cleaner = mapped,
        Some(span) if config.data.cleaner != mapped => {
            let name = |c: Cleaner| match c {
                Cleaner::Unicode => "unicode",
                Cleaner::English => "english",
                Cleaner::Basic => "basic",
                Cleaner::None => "none",
            };
            r.warn(
                span,
                "data.cleaner",
                WarningKind::Cleaners,
                format!(
                    "`data.cleaner: {}` differs from what `data.text_cleaners` means \
                     (`{}`{}); gpufeed uses `cleaner`, the trainer `text_cleaners`, so the \
                     tokens differ; make them agree",
                    name(config.data.cleaner),
                    name(mapped),
                    list_span.map_or_else(String::new, |s| format!(", line {}", s.line)),
                ),
                None,
            );
        }
        Some(_) => {}
    }
}
