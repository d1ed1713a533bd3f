//! Rust errors as Python exceptions. The classes are those of `gpufeed.errors` (a Python
//! module, so that each keeps the builtin base it had before: `DataError` is a
//! `ValueError`, `DataNotFoundError` also a `FileNotFoundError`); the message is the Rust
//! one (it names the file, line or value and the fix), except where that one speaks in
//! command-line flags: there it names the keyword argument instead ([`python_terms`]).

use std::path::Path;

use pyo3::PyErr;
use pyo3::exceptions::PyRuntimeError;

use gpufeed_data::DataError;

/// The classes of `gpufeed.errors`, imported when first raised.
mod py {
    pyo3::import_exception!(gpufeed.errors, DataError);
    pyo3::import_exception!(gpufeed.errors, DataNotFoundError);
    pyo3::import_exception!(gpufeed.errors, DataIOError);
    pyo3::import_exception!(gpufeed.errors, ConfigError);
    pyo3::import_exception!(gpufeed.errors, ConfigNotFoundError);
    pyo3::import_exception!(gpufeed.errors, TraceError);
    pyo3::import_exception!(gpufeed.errors, AttachError);
}

/// A data error: a missing file is `DataNotFoundError`, other I/O `DataIOError`, a bad
/// setting of the run (`shard=`, `features=`, the loader's settings) `ConfigError`, anything
/// else `DataError`.
pub(crate) fn data(e: DataError) -> PyErr {
    let message = python_terms(&e).unwrap_or_else(|| keywords(&e.to_string()));
    classify(&e, message)
}

/// An `anyhow` error from the CLI's library code, its context chain on one line; classed
/// as [`data`] classes a data error inside it, else as `DataError`.
pub(crate) fn any(e: &anyhow::Error) -> PyErr {
    let message = keywords(&format!("{e:#}"));
    match e.downcast_ref::<DataError>() {
        Some(d) => classify(d, message),
        None => py::DataError::new_err(message),
    }
}

/// A config file or setting that gpufeed refuses.
pub(crate) fn config(message: impl Into<String>) -> PyErr {
    py::ConfigError::new_err(message.into())
}

/// A recording or log that cannot be replayed.
pub(crate) fn trace(message: impl Into<String>) -> PyErr {
    py::TraceError::new_err(message.into())
}

/// A process `gpufeed.attach` cannot sample (the one option it checks, the rate, named as
/// the keyword argument).
pub(crate) fn attach(e: &gpufeed_attach::AttachError) -> PyErr {
    let message = match e {
        gpufeed_attach::AttachError::Usage(m) => m.replace("--rate", "rate"),
        other => other.to_string(),
    };
    py::AttachError::new_err(message)
}

fn classify(e: &DataError, message: String) -> PyErr {
    match e {
        DataError::NotFound { .. } | DataError::NoManifest { .. } => {
            py::DataNotFoundError::new_err(message)
        }
        DataError::Io { cause, .. } if cause.kind() == std::io::ErrorKind::NotFound => {
            py::DataNotFoundError::new_err(message)
        }
        DataError::Io { .. } => py::DataIOError::new_err(message),
        DataError::ShardSpec { .. }
        | DataError::ArrayJob { .. }
        | DataError::Settings(_)
        | DataError::Loader(_) => py::ConfigError::new_err(message),
        _ => py::DataError::new_err(message),
    }
}

/// The message of a data error whose CLI text names a flag, with the keyword argument of
/// `gpufeed.precompute` / `gpufeed.Loader` instead; `None` where the CLI text is right for
/// Python too.
fn python_terms(e: &DataError) -> Option<String> {
    Some(match e {
        DataError::UnknownLayout {
            path,
            what,
            layouts,
        } => format!(
            "`{}` is {what}; gpufeed reads the layouts {layouts}; if it is one of them, say \
             which with `layout=\"NAME\"` (and `columns=` for a table)",
            path.display()
        ),
        DataError::AmbiguousLayout {
            path,
            first,
            second,
        } => format!(
            "`{}` fits two dataset layouts equally, `{first}` and `{second}`; say which with \
             `layout=\"{first}\"` or `layout=\"{second}\"`",
            path.display()
        ),
        DataError::TooManySkipped {
            skipped,
            total,
            percent,
            allowed,
            list,
            first,
        } => format!(
            "{skipped} of {total} items ({percent:.1} %) were left out, more than the \
             {allowed:.0} % allowed; the cache is not marked complete. They are listed in \
             `{}`; first: {first}. Fix them, or pass `max_skipped={:.2}` to accept this",
            list.display(),
            (percent / 100.0 + 0.005).min(1.0)
        ),
        DataError::Locked { dir, holder } => format!(
            "the cache `{}` is being built by another run ({holder}); wait for it, or pass \
             another `cache=`",
            dir.display()
        ),
        DataError::Corrupt { path, reason } => format!(
            "`{}` is not a valid gpufeed cache file: {reason}; delete it and run \
             gpufeed.precompute again",
            path.display()
        ),
        DataError::ShardSpec { spec } => {
            format!("shard=`{spec}`: expected \"I/N\" or (I, N) with 0 <= I < N, e.g. shard=(0, 4)")
        }
        DataError::ArrayJob { message } => format!(
            "shard=\"auto\": {}",
            message.replace("pass `--shard I/N`", "pass shard=(I, N)")
        ),
        DataError::Settings(m) if m.contains("`--features") => format!(
            "invalid feature settings: {}",
            m.replace(
                "`--features mel,energy,f0`",
                "features=[\"mel\", \"energy\", \"f0\"]"
            )
        ),
        _ => return None,
    })
}

/// `text` with each command-line flag in backquotes written as the keyword argument of
/// `gpufeed.precompute` / `gpufeed.Loader` it matches: `` `--max-skipped 0.30` `` becomes
/// `` `max_skipped=0.30` ``, `` `--layout kaldi` `` `` `layout="kaldi"` ``, `` `--shard I/N` ``
/// `` `shard=(I, N)` ``, `` `--features mel,f0` `` `` `features=["mel", "f0"]` ``, and
/// `` `gpufeed precompute ...` `` `` `gpufeed.precompute(...)` ``. For the messages the Rust
/// code shares with the CLI that [`python_terms`] does not rewrite whole (hand-written: no
/// crate maps one program's flags to another's keywords).
pub(crate) fn keywords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        let span = &rest[open + 1..open + 1 + len];
        out.push_str(&rest[..open]);
        out.push('`');
        out.push_str(&keyword(span).unwrap_or_else(|| span.to_owned()));
        out.push('`');
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

/// One backquoted span as Python, or `None` where it is not a gpufeed flag.
fn keyword(span: &str) -> Option<String> {
    if let Some(args) = span.strip_prefix("gpufeed precompute") {
        let args = args.trim();
        return Some(if args.starts_with("--shard") {
            "gpufeed.precompute_shard(..., shard=(I, N))".to_owned()
        } else {
            "gpufeed.precompute(...)".to_owned()
        });
    }
    let flag = span.strip_prefix("--")?;
    let (name, value) = match flag.split_once([' ', '=']) {
        Some((n, v)) => (n, v.trim()),
        None => (flag, ""),
    };
    // Only `gpufeed precompute`'s own flags: `--array=0-7` in a message is sbatch's.
    const FLAGS: [&str; 11] = [
        "shard",
        "features",
        "columns",
        "data",
        "layout",
        "cache",
        "config",
        "max-skipped",
        "mic",
        "jobs",
        "on-error",
    ];
    if !FLAGS.contains(&name) {
        return None;
    }
    let name = name.replace('-', "_");
    let value = match (name.as_str(), value) {
        (_, "") => String::new(),
        ("shard", v) => match v.split_once('/') {
            Some((i, n)) => format!("({i}, {n})"),
            None => format!("\"{v}\""),
        },
        ("features", v) => format!(
            "[{}]",
            v.split(',')
                .map(|f| format!("\"{}\"", f.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (_, v) if v.parse::<f64>().is_ok() => v.to_owned(),
        (_, v) => format!("\"{v}\""),
    };
    Some(format!("{name}={value}"))
}

/// `DataNotFoundError` for a dataset or cache path that should exist.
pub(crate) fn missing(path: &Path, what: &str, fix: &str) -> PyErr {
    py::DataNotFoundError::new_err(format!("`{}`: {what}; {fix}", path.display()))
}

/// `ConfigNotFoundError` for a config file that should exist.
pub(crate) fn missing_config(path: &Path, fix: &str) -> PyErr {
    py::ConfigNotFoundError::new_err(format!("`{}`: no such config file; {fix}", path.display()))
}

/// Ok in the process that created the object (`created`), else the error of [`forked`]:
/// after `fork()` the object's Rust threads do not exist.
pub(crate) fn same_process(what: &str, created: u32) -> Result<(), PyErr> {
    if std::process::id() == created {
        Ok(())
    } else {
        Err(forked(what, created))
    }
}

/// An object used in a process it was not created in (after `fork()`).
fn forked(what: &str, created: u32) -> PyErr {
    PyRuntimeError::new_err(format!(
        "this {what} was created in process {created} and is used in process {} after \
         fork(): its Rust threads do not exist here, so it would hang. Create the {what} in \
         the process that uses it (after the fork, e.g. inside the worker function), or use \
         the 'spawn' start method",
        std::process::id()
    ))
}
