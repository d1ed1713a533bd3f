//! Mapping the YAML tree onto the typed schema: one conversion per Rust type, with the
//! errors and the YAML 1.1 / 1.2 warnings of each value, and unknown keys with a
//! did-you-mean.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpufeed_audio::{LogKind, MelNorm, MelScale, PadMode};
use gpufeed_text::Cleaner;
use saphyr_parser::ScalarStyle;

use crate::diag::{ConfigError, ConfigWarning, Edit, ErrorKind, WarningKind};
use crate::schema::{Config, OverLength, PreprocessingMode, SECTIONS, Value, section_keys};
use crate::source::Span;
use crate::yaml::{Core, Node, NodeKind, NodeTag, PyYaml, core, pyyaml};

/// Collects errors and warnings while values are read.
#[derive(Debug)]
pub(crate) struct Reader<'s> {
    path: &'s Path,
    text: &'s str,
    pub errors: Vec<ConfigError>,
    pub warnings: Vec<ConfigWarning>,
}

/// Why a value could not be read.
pub(crate) enum Mismatch {
    /// Not the expected type; the reader reports "`key` must be EXPECT, found ..." and
    /// appends the hint (which starts with "; " when not empty).
    Expected(String),
    /// Already reported (an item of a list).
    Reported,
}

fn expected() -> Mismatch {
    Mismatch::Expected(String::new())
}

const NULL_HINT: &str = "; write a value, or delete the line to use the default";
const QUOTE_HINT: &str = "; quoted values are strings, for the trainer too: remove the quotes";

impl<'s> Reader<'s> {
    pub fn new(path: &'s Path, text: &'s str) -> Self {
        Self {
            path,
            text,
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn error(&mut self, span: Span, key: Option<&str>, kind: ErrorKind, message: String) {
        self.errors.push(ConfigError::Invalid {
            path: self.path.to_path_buf(),
            line: span.line,
            column: span.column,
            key: key.map(str::to_owned),
            kind,
            message,
        });
    }

    pub fn warn(
        &mut self,
        span: Span,
        key: &str,
        kind: WarningKind,
        message: String,
        edit: Option<Edit>,
    ) {
        self.warnings.push(ConfigWarning {
            path: self.path.to_path_buf(),
            line: span.line,
            column: span.column,
            key: key.to_owned(),
            kind,
            message,
            edit,
        });
    }

    /// The text of a span as written, on one line and at most 40 characters; a control
    /// character is escaped (`\u{10}`), so a message never carries one to the terminal.
    pub fn written(&self, span: Span) -> String {
        let raw = self.text.get(span.byte_start..span.byte_end).unwrap_or("");
        let first = raw.lines().next().unwrap_or("").trim_end();
        let shown: String = first.chars().take(40).collect();
        let mut out = String::with_capacity(shown.len());
        for c in shown.chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        if shown.len() < raw.trim_end().len() {
            out.push('…');
        }
        out
    }

    /// How a value is shown after "found": the text as written in backticks, or what it is.
    pub fn found(&self, node: &Node) -> String {
        match &node.kind {
            NodeKind::Scalar { value, .. } if value.is_empty() && node.is_plain() => {
                "no value".to_owned()
            }
            NodeKind::Scalar { .. } => format!("`{}`", self.written(node.span)),
            NodeKind::Sequence(_) => "a list".to_owned(),
            NodeKind::Mapping(_) => "a mapping".to_owned(),
        }
    }

    /// Reads a value of type `T`, reporting a type error under `path`.
    pub fn read<T: FromNode>(
        &mut self,
        node: &Node,
        path: &str,
        expect: Option<&'static str>,
    ) -> Option<T> {
        match T::from_node(node, self, path) {
            Ok(v) => Some(v),
            Err(Mismatch::Reported) => None,
            Err(Mismatch::Expected(hint)) => {
                let expect = expect.unwrap_or(T::EXPECT);
                let found = self.found(node);
                self.error(
                    node.span,
                    Some(path),
                    ErrorKind::WrongType,
                    format!("`{path}` must be {expect}, found {found}{hint}"),
                );
                None
            }
        }
    }
}

/// A Rust type that can be read from a YAML node.
pub(crate) trait FromNode: Sized {
    /// What the value must be, for messages ("an integer").
    const EXPECT: &'static str;
    /// For `Option<T>`: an empty string also means "unset" (paths: `dataset_path: ""`).
    const EMPTY_IS_NONE: bool = false;
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch>;
}

/// A scalar and how it should be read.
enum Scalar<'a> {
    /// Plain and untagged: resolved by the schemas.
    Plain(&'a str),
    /// Quoted, block or `!!str`: a string.
    Text(&'a str),
    /// Tagged `!!int`, `!!float`, `!!bool`, `!!null`.
    Tagged(&'a NodeTag, &'a str),
}

fn scalar(node: &Node) -> Option<Scalar<'_>> {
    let NodeKind::Scalar { value, style } = &node.kind else {
        return None;
    };
    Some(match &node.tag {
        None if *style == ScalarStyle::Plain => Scalar::Plain(value),
        None | Some(NodeTag::Str | NodeTag::Other(_)) => Scalar::Text(value),
        Some(tag) => Scalar::Tagged(tag, value),
    })
}

/// A number read from a scalar.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn int_text(v: i128) -> String {
    v.to_string()
}

fn float_text(v: f64) -> String {
    if v.is_nan() {
        return ".nan".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let s = format!("{v:?}");
    // Rust prints `1e-5` for small numbers; give the PyYAML-safe spelling.
    pyyaml_safe_float(&s).unwrap_or(s)
}

/// Rewrites a float so that PyYAML reads it as a float too: a dot in the mantissa and a
/// sign on the exponent (`1e-4` → `1.0e-4`, `2E5` → `2.0E+5`, `-.5` → `-0.5`).
pub(crate) fn pyyaml_safe_float(text: &str) -> Option<String> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some((&text[i..=i], &text[i + 1..]))),
        None => (text, None),
    };
    let (sign, digits) = match mantissa.as_bytes().first() {
        Some(b'-' | b'+') => mantissa.split_at(1),
        _ => ("", mantissa),
    };
    let mut out = String::from(sign);
    if digits.starts_with('.') {
        out.push('0');
    }
    out.push_str(digits);
    if !digits.contains('.') {
        out.push_str(".0");
    }
    if let Some((e, exp)) = exponent {
        out.push_str(e);
        if !exp.starts_with(['-', '+']) {
            out.push('+');
        }
        out.push_str(exp);
    }
    let same = match (core(&out), pyyaml(&out), core(text)) {
        (Core::Float(a), PyYaml::Float(b), Core::Float(c)) => a == b && a == c,
        _ => false,
    };
    same.then_some(out)
}

/// Reads a number from a node. `int`: an integer is required.
fn number(node: &Node, r: &mut Reader<'_>, path: &str, int: bool) -> Result<Num, Mismatch> {
    let Some(s) = scalar(node) else {
        return Err(expected());
    };
    let num = match s {
        Scalar::Text(text) => {
            let hint = match core(text.trim()) {
                Core::Int(_) | Core::Float(_) => QUOTE_HINT.to_owned(),
                _ => String::new(),
            };
            return Err(Mismatch::Expected(hint));
        }
        Scalar::Tagged(NodeTag::Int | NodeTag::Float, text) => match (core(text), pyyaml(text)) {
            (Core::Int(Some(v)), _) | (_, PyYaml::Int(Some(v))) => Num::Int(v),
            (Core::Float(v), _) | (_, PyYaml::Float(v)) => Num::Float(v),
            _ => return Err(expected()),
        },
        Scalar::Tagged(NodeTag::Null, _) => return Err(Mismatch::Expected(NULL_HINT.into())),
        Scalar::Tagged(..) => return Err(expected()),
        Scalar::Plain(text) => plain_number(node, r, path, text)?,
    };
    match num {
        Num::Float(v) if !v.is_finite() => Err(Mismatch::Expected(
            "; infinite and NaN values are not allowed".into(),
        )),
        Num::Float(_) if int => Err(expected()),
        n => Ok(n),
    }
}

fn plain_number(node: &Node, r: &mut Reader<'_>, path: &str, text: &str) -> Result<Num, Mismatch> {
    let (c, p) = (core(text), pyyaml(text));
    let written = r.written(node.span);
    let differs = |r: &mut Reader<'_>, pyyaml: String, yaml12: String, fix: String| {
        let message = format!(
            "`{path}: {written}` is {yaml12} for YAML 1.2 (and gpufeed) but {pyyaml} for \
             PyYAML; write `{fix}` so that both read the same value"
        );
        r.warn(
            node.span,
            path,
            WarningKind::NumberDiffersInPyYaml {
                written: written.clone(),
                pyyaml,
                yaml12,
                fix: fix.clone(),
            },
            message,
            Some(Edit {
                span: node.span,
                replacement: fix,
            }),
        );
    };
    match c {
        Core::Int(None) => Err(Mismatch::Expected("; the number is too large".into())),
        Core::Int(Some(v)) => {
            match p {
                PyYaml::Int(Some(pv)) if pv == v => {}
                PyYaml::Int(Some(pv)) => differs(
                    r,
                    format!("the integer {pv} (a leading 0 means octal)"),
                    format!("the integer {v}"),
                    int_text(v),
                ),
                _ => differs(
                    r,
                    format!("the string \"{text}\""),
                    format!("the integer {v}"),
                    int_text(v),
                ),
            }
            Ok(Num::Int(v))
        }
        Core::Float(v) => {
            match p {
                PyYaml::Float(pv) if pv == v || (pv.is_nan() && v.is_nan()) => {}
                PyYaml::Str => {
                    let fix = pyyaml_safe_float(text).unwrap_or_else(|| float_text(v));
                    let message = format!(
                        "`{path}: {written}` is read as the string \"{text}\" by PyYAML (YAML \
                         1.1 floats need a dot and a signed exponent), so the trainer gets a \
                         string; gpufeed reads {v:e}; write `{fix}`"
                    );
                    r.warn(
                        node.span,
                        path,
                        WarningKind::FloatIsStringForPyYaml {
                            written: written.clone(),
                            fix: fix.clone(),
                        },
                        message,
                        Some(Edit {
                            span: node.span,
                            replacement: fix,
                        }),
                    );
                }
                _ => differs(
                    r,
                    "another value".to_owned(),
                    format!("the float {v:e}"),
                    float_text(v),
                ),
            }
            Ok(Num::Float(v))
        }
        Core::Str => match p {
            PyYaml::Int(Some(v)) => {
                differs(
                    r,
                    format!("the integer {v}"),
                    format!("the string \"{text}\""),
                    int_text(v),
                );
                Ok(Num::Int(v))
            }
            PyYaml::Float(v) => {
                differs(
                    r,
                    format!("the float {v:e}"),
                    format!("the string \"{text}\""),
                    float_text(v),
                );
                Ok(Num::Float(v))
            }
            _ => Err(expected()),
        },
        Core::Null => Err(Mismatch::Expected(NULL_HINT.into())),
        Core::Bool(_) => Err(expected()),
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl FromNode for $t {
            const EXPECT: &'static str = "a non-negative integer";
            fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
                match number(node, r, path, true)? {
                    Num::Int(v) if v < 0 => Err(Mismatch::Expected(String::new())),
                    Num::Int(v) => <$t>::try_from(v).map_err(|_| {
                        Mismatch::Expected(format!("; the largest allowed is {}", <$t>::MAX))
                    }),
                    Num::Float(_) => Err(expected()),
                }
            }
        }
    )*};
}
unsigned!(u32, u64, usize);

impl FromNode for f64 {
    const EXPECT: &'static str = "a number";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        Ok(match number(node, r, path, false)? {
            // Config integers are far below 2^53, where f64 starts to round.
            Num::Int(v) => v as f64,
            Num::Float(v) => v,
        })
    }
}

impl FromNode for bool {
    const EXPECT: &'static str = "`true` or `false`";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        match scalar(node).ok_or_else(expected)? {
            Scalar::Plain(text) => match (core(text), pyyaml(text)) {
                (Core::Bool(b), _) => Ok(b),
                (Core::Str, PyYaml::Bool(b)) => {
                    let written = r.written(node.span);
                    r.warn(
                        node.span,
                        path,
                        WarningKind::Yaml11Boolean {
                            written: written.clone(),
                            value: b,
                        },
                        format!(
                            "`{path}: {written}` is the boolean {b} for PyYAML (and gpufeed) but \
                             the string \"{written}\" for YAML 1.2 readers, where it counts as \
                             true; write `{b}`"
                        ),
                        Some(Edit {
                            span: node.span,
                            replacement: b.to_string(),
                        }),
                    );
                    Ok(b)
                }
                (Core::Null, _) => Err(Mismatch::Expected(NULL_HINT.into())),
                _ => Err(expected()),
            },
            Scalar::Tagged(NodeTag::Bool, text) => match pyyaml(text) {
                PyYaml::Bool(b) => Ok(b),
                _ => Err(expected()),
            },
            Scalar::Text(text) => match pyyaml(text) {
                PyYaml::Bool(_) => Err(Mismatch::Expected(QUOTE_HINT.into())),
                _ => Err(expected()),
            },
            Scalar::Tagged(..) => Err(expected()),
        }
    }
}

fn quote(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

impl FromNode for String {
    const EXPECT: &'static str = "a string";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        match scalar(node).ok_or_else(expected)? {
            Scalar::Text(text) => Ok(text.to_owned()),
            Scalar::Tagged(NodeTag::Null, _) => Err(Mismatch::Expected(NULL_HINT.into())),
            Scalar::Tagged(_, text) => Ok(text.to_owned()),
            Scalar::Plain(text) => {
                let pyyaml_reads = match pyyaml(text) {
                    PyYaml::Null => return Err(Mismatch::Expected(NULL_HINT.into())),
                    PyYaml::Str => None,
                    PyYaml::Bool(b) => {
                        Some(format!("the boolean {}", if b { "True" } else { "False" }))
                    }
                    PyYaml::Int(_) => Some("an integer".to_owned()),
                    PyYaml::Float(_) => Some("a float".to_owned()),
                };
                if let Some(pyyaml_reads) = pyyaml_reads {
                    let written = r.written(node.span);
                    let fix = quote(text);
                    r.warn(
                        node.span,
                        path,
                        WarningKind::NotAStringForPyYaml {
                            written: written.clone(),
                            pyyaml: pyyaml_reads.clone(),
                        },
                        format!(
                            "`{path}: {written}` is {pyyaml_reads} for PyYAML, not the text \
                             \"{text}\"; quote it: `{fix}`"
                        ),
                        Some(Edit {
                            span: node.span,
                            replacement: fix,
                        }),
                    );
                }
                Ok(text.to_owned())
            }
        }
    }
}

impl FromNode for PathBuf {
    const EXPECT: &'static str = "a path";
    const EMPTY_IS_NONE: bool = true;
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        String::from_node(node, r, path).map(PathBuf::from)
    }
}

impl<T: FromNode> FromNode for Option<T> {
    const EXPECT: &'static str = T::EXPECT;
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        if node.is_null() {
            return Ok(None);
        }
        if T::EMPTY_IS_NONE && node.scalar() == Some("") {
            return Ok(None);
        }
        T::from_node(node, r, path).map(Some)
    }
}

impl<T: FromNode> FromNode for Vec<T> {
    const EXPECT: &'static str = "a list";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        let NodeKind::Sequence(items) = &node.kind else {
            let hint = if node.is_null() {
                NULL_HINT
            } else {
                "; write `[a, b]` or one `- item` per line"
            };
            return Err(Mismatch::Expected(hint.into()));
        };
        let mut out = Vec::with_capacity(items.len());
        let mut failed = false;
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            match r.read::<T>(item, &item_path, None) {
                Some(v) => out.push(v),
                None => failed = true,
            }
        }
        if failed {
            Err(Mismatch::Reported)
        } else {
            Ok(out)
        }
    }
}

impl FromNode for Value {
    const EXPECT: &'static str = "a value";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        Ok(match &node.kind {
            NodeKind::Sequence(items) => Value::Sequence(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| Value::from_node(item, r, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            NodeKind::Mapping(_) => Value::Mapping(BTreeMap::from_node(node, r, path)?),
            NodeKind::Scalar { value, .. } => match scalar(node) {
                Some(Scalar::Plain(text)) => match core(text) {
                    Core::Null => Value::Null,
                    Core::Bool(b) => Value::Bool(b),
                    Core::Int(Some(v)) => {
                        i64::try_from(v).map_or_else(|_| Value::Float(v as f64), Value::Int)
                    }
                    Core::Float(v) => Value::Float(v),
                    Core::Int(None) | Core::Str => Value::String(text.to_owned()),
                },
                _ => Value::String(value.clone()),
            },
        })
    }
}

impl FromNode for BTreeMap<String, Value> {
    const EXPECT: &'static str = "a mapping";
    fn from_node(node: &Node, r: &mut Reader<'_>, path: &str) -> Result<Self, Mismatch> {
        match &node.kind {
            NodeKind::Mapping(entries) => {
                let mut out = BTreeMap::new();
                for entry in entries {
                    let key = entry.key.scalar().unwrap_or_default().to_owned();
                    let value = Value::from_node(&entry.value, r, &format!("{path}.{key}"))?;
                    out.insert(key, value);
                }
                Ok(out)
            }
            _ if node.is_null() => Ok(BTreeMap::new()),
            _ => Err(expected()),
        }
    }
}

/// An enum read from one of its names.
trait Named: Copy + 'static {
    const NAMES: &'static [(&'static str, Self)];
}

macro_rules! named {
    ($t:ty, $expect:literal, [$(($name:literal, $v:expr)),* $(,)?]) => {
        impl Named for $t {
            const NAMES: &'static [(&'static str, Self)] = &[$(($name, $v)),*];
        }
        impl FromNode for $t {
            const EXPECT: &'static str = $expect;
            fn from_node(node: &Node, _r: &mut Reader<'_>, _path: &str) -> Result<Self, Mismatch> {
                from_name::<$t>(node)
            }
        }
    };
}

fn from_name<T: Named>(node: &Node) -> Result<T, Mismatch> {
    let Some(text) = node.scalar() else {
        return Err(expected());
    };
    if let Some((_, v)) = T::NAMES.iter().find(|(n, _)| *n == text) {
        return Ok(*v);
    }
    let names: Vec<&str> = T::NAMES.iter().map(|(n, _)| *n).collect();
    let hint = closest(text, &names)
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    Err(Mismatch::Expected(hint))
}

named!(
    MelScale,
    "one of `slaney`, `htk`",
    [("slaney", MelScale::Slaney), ("htk", MelScale::Htk)]
);
named!(
    MelNorm,
    "one of `slaney`, `none`",
    [("slaney", MelNorm::Slaney), ("none", MelNorm::None)]
);
named!(
    PadMode,
    "one of `reflect`, `constant`",
    [
        ("reflect", PadMode::Reflect),
        ("constant", PadMode::Constant),
    ]
);
named!(
    LogKind,
    "one of `ln`, `log10`, `none`",
    [
        ("ln", LogKind::Ln),
        ("log10", LogKind::Log10),
        ("none", LogKind::None),
    ]
);
named!(
    Cleaner,
    "one of `unicode`, `english`, `basic`, `none`",
    [
        ("unicode", Cleaner::Unicode),
        ("english", Cleaner::English),
        ("basic", Cleaner::Basic),
        ("none", Cleaner::None),
    ]
);
named!(
    OverLength,
    "one of `skip`, `truncate`",
    [
        ("skip", OverLength::Skip),
        ("truncate", OverLength::Truncate),
    ]
);
named!(
    PreprocessingMode,
    "one of `auto`, `precompute`, `runtime`",
    [
        ("auto", PreprocessingMode::Auto),
        ("precompute", PreprocessingMode::Precompute),
        ("runtime", PreprocessingMode::Runtime),
    ]
);

fn normalise(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The candidate closest to `name`: the same name up to case and `-`/`_`, else the one at
/// the smallest Damerau-Levenshtein distance within a limit that grows with the length
/// (1 edit up to 4 characters, 2 up to 10, 3 beyond), else a long shared prefix
/// (Jaro-Winkler ≥ 0.93, so `prefetch_buffer` finds `prefetch_buffer_size`).
pub(crate) fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let wanted = normalise(name);
    if let Some(c) = candidates.iter().find(|c| normalise(c) == wanted) {
        return Some(c);
    }
    let n = wanted.chars().count();
    let limit = match n {
        0..=4 => 1,
        5..=10 => 2,
        _ => 3,
    };
    candidates
        .iter()
        .filter_map(|&c| {
            let d = strsim::damerau_levenshtein(&wanted, c);
            let jw = strsim::jaro_winkler(&wanted, c);
            (d <= limit || (n >= 6 && jw >= 0.93)).then_some((d, jw, c))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)))
        .map(|(_, _, c)| c)
}

/// A suggestion for an unknown key: `Same("num_workers")` in its own section, or
/// `Elsewhere("data.batch_size")` in another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Suggestion {
    Same(&'static str),
    Elsewhere(String),
}

/// Suggests a known key for an unknown `key` in `section` (`None`: at the top level).
pub(crate) fn suggest(section: Option<&str>, key: &str) -> Option<Suggestion> {
    let Some(section) = section else {
        if let Some(s) = closest(key, SECTIONS) {
            return Some(Suggestion::Same(s));
        }
        // A known key at the top level: it belongs in a section.
        return SECTIONS.iter().find_map(|s| {
            let keys = section_keys(s)?;
            keys.iter()
                .find(|k| normalise(k) == normalise(key))
                .map(|k| Suggestion::Elsewhere(format!("{s}.{k}")))
        });
    };
    let own = section_keys(section)?;
    let wanted = normalise(key);
    if let Some(k) = own.iter().find(|k| normalise(k) == wanted) {
        return Some(Suggestion::Same(k));
    }
    let others = || SECTIONS.iter().filter(|s| **s != section);
    for other in others() {
        if let Some(k) = section_keys(other)?.iter().find(|k| normalise(k) == wanted) {
            return Some(Suggestion::Elsewhere(format!("{other}.{k}")));
        }
    }
    if let Some(k) = closest(key, own) {
        return Some(Suggestion::Same(k));
    }
    others().find_map(|other| {
        closest(key, section_keys(other)?).map(|k| Suggestion::Elsewhere(format!("{other}.{k}")))
    })
}

/// True when `path` (`data.num_worker`) is not a MyXTTS key but near one, in its section
/// or another (a typo gpufeed would suggest a fix for).
#[must_use]
pub fn near_key(path: &str) -> bool {
    let (section, name) = path
        .split_once('.')
        .map_or((None, path), |(s, n)| (Some(s), n));
    suggest(section, name).is_some()
}

/// Reports an unknown key. `siblings`: the other keys of the same mapping (no rename edit
/// when the suggested key is already there).
fn unknown_key(r: &mut Reader<'_>, section: Option<&str>, key: &Node, siblings: &[&str]) {
    let name = key.scalar().unwrap_or_default();
    let full = match section {
        Some(s) => format!("{s}.{name}"),
        None => name.to_owned(),
    };
    let suggestion = suggest(section, name);
    let (message, edit, shown) = match &suggestion {
        Some(Suggestion::Same(s)) => (
            format!("unknown key `{full}`; did you mean `{s}`?"),
            (!siblings.contains(s)).then(|| Edit {
                span: key.span,
                replacement: (*s).to_owned(),
            }),
            Some((*s).to_owned()),
        ),
        Some(Suggestion::Elsewhere(s)) => {
            let (sec, _) = s.split_once('.').unwrap_or((s.as_str(), ""));
            (
                format!("unknown key `{full}`; did you mean `{s}`? (it belongs in `{sec}`)"),
                None,
                Some(s.clone()),
            )
        }
        None => (
            format!("unknown key `{full}`; gpufeed ignores it and leaves it in the file"),
            None,
            None,
        ),
    };
    r.warn(
        key.span,
        &full,
        WarningKind::UnknownKey { suggestion: shown },
        message,
        edit,
    );
}

/// Reads one section mapping with `read_key` (the section's generated reader).
fn read_section(
    r: &mut Reader<'_>,
    section: &str,
    node: &Node,
    mut read_key: impl FnMut(&str, &Node, &mut Reader<'_>) -> bool,
) {
    match &node.kind {
        NodeKind::Mapping(entries) => {
            let siblings: Vec<&str> = entries.iter().filter_map(|e| e.key.scalar()).collect();
            for entry in entries {
                let Some(name) = entry.key.scalar() else {
                    continue;
                };
                if !read_key(name, &entry.value, r) {
                    unknown_key(r, Some(section), &entry.key, &siblings);
                }
            }
        }
        _ if node.is_null() => {}
        _ => {
            let found = r.found(node);
            r.error(
                node.span,
                Some(section),
                ErrorKind::NotAMapping,
                format!(
                    "`{section}` must be a mapping (`{section}:` then indented `key: value` \
                     lines), found {found}"
                ),
            );
        }
    }
}

/// Reads the whole config from the root node (`None`: an empty document).
pub(crate) fn read_config(r: &mut Reader<'_>, root: Option<&Node>) -> Config {
    let mut config = Config::default();
    let Some(root) = root else {
        return config;
    };
    match &root.kind {
        NodeKind::Mapping(entries) => {
            let siblings: Vec<&str> = entries.iter().filter_map(|e| e.key.scalar()).collect();
            for entry in entries {
                let value = &entry.value;
                match entry.key.scalar().unwrap_or_default() {
                    "model" => {
                        read_section(r, "model", value, |k, n, r| config.model.read_key(k, n, r))
                    }
                    "data" => {
                        read_section(r, "data", value, |k, n, r| config.data.read_key(k, n, r))
                    }
                    "training" => read_section(r, "training", value, |k, n, r| {
                        config.training.read_key(k, n, r)
                    }),
                    _ => unknown_key(r, None, &entry.key, &siblings),
                }
            }
        }
        _ if root.is_null() => {}
        _ => {
            let found = r.found(root);
            r.error(
                root.span,
                None,
                ErrorKind::NotAMapping,
                format!(
                    "the file must be a mapping with the sections `model`, `data` and \
                     `training`, found {found}"
                ),
            );
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names() {
        let keys = ["num_workers", "batch_size", "prefetch_buffer_size", "seed"];
        assert_eq!(closest("num_worker", &keys), Some("num_workers"));
        assert_eq!(closest("Num-Workers", &keys), Some("num_workers"));
        assert_eq!(closest("nmu_workers", &keys), Some("num_workers"));
        assert_eq!(
            closest("prefetch_buffer", &keys),
            Some("prefetch_buffer_size")
        );
        assert_eq!(closest("batchsize", &keys), Some("batch_size"));
        assert_eq!(closest("sed", &keys), Some("seed"));
        assert_eq!(closest("zzzz", &keys), None);
        assert_eq!(closest("learning", &keys), None);
    }

    #[test]
    fn suggestions_across_sections() {
        assert_eq!(
            suggest(Some("data"), "num_worker"),
            Some(Suggestion::Same("num_workers"))
        );
        assert_eq!(
            suggest(Some("training"), "batch_size"),
            Some(Suggestion::Elsewhere("data.batch_size".into()))
        );
        assert_eq!(
            suggest(Some("data"), "enable_xla_compilaton"),
            Some(Suggestion::Elsewhere(
                "training.enable_xla_compilation".into()
            ))
        );
        assert_eq!(suggest(None, "trainig"), Some(Suggestion::Same("training")));
        assert_eq!(
            suggest(None, "batch_size"),
            Some(Suggestion::Elsewhere("data.batch_size".into()))
        );
        assert_eq!(suggest(Some("data"), "completely_unrelated_thing"), None);
    }

    #[test]
    fn pyyaml_safe_floats() {
        assert_eq!(pyyaml_safe_float("1e-4").as_deref(), Some("1.0e-4"));
        assert_eq!(pyyaml_safe_float("1E4").as_deref(), Some("1.0E+4"));
        assert_eq!(pyyaml_safe_float("1.5e4").as_deref(), Some("1.5e+4"));
        assert_eq!(pyyaml_safe_float("-.5").as_deref(), Some("-0.5"));
        assert_eq!(pyyaml_safe_float("+3e-2").as_deref(), Some("+3.0e-2"));
        assert_eq!(float_text(1e-5), "1.0e-5");
        assert_eq!(float_text(0.5), "0.5");
    }
}
