//! Any trainer's config read as a tree of keys with spans, without MyXTTS' schema: what
//! `gpufeed validate` needs to recognise whose config a file is (ESPnet, NeMo, Coqui, ...)
//! and to read the few settings it understands under that trainer's own key names.
//!
//! JSON is read as YAML 1.2 (JSON is its flow style). Coqui-style `config.json` files
//! carry `//` and `/* */` comments, which JSON and YAML both reject: [`outline`] blanks
//! them out first (with spaces, so every span still points into the file as written).
//!
//! ```
//! use std::path::Path;
//! use gpufeed_config::{OutlineValue, outline};
//!
//! let text = "{\n  // loader\n  \"num_loader_workers\": 4,\n  \"audio\": {\"num_mels\": 80}\n}\n";
//! let o = outline(text, Path::new("config.json")).unwrap();
//! assert_eq!(o.value("num_loader_workers").map(|v| &v.value), Some(&OutlineValue::Int(4)));
//! assert!(o.has("audio.num_mels"));
//! assert_eq!(o.span_of("num_loader_workers").unwrap().line, 3);
//! ```

use std::collections::HashMap;
use std::path::Path;

use crate::diag::{ConfigError, Edit, ErrorKind};
use crate::source::{EntrySpan, Source, Span};
use crate::yaml::{self, Core, Node, NodeKind, NodeTag, Positions, PyYaml};

/// A scalar as the trainer reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum OutlineValue {
    /// `true`/`false` (and, read by PyYAML, `yes`/`no`/`on`/`off`).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string: quoted, or plain text that is no other type, such as `${model.n_fft}`.
    Str(String),
    /// `null`, `~` or nothing.
    Null,
}

/// One scalar at a dotted path.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineScalar {
    /// What it reads as.
    pub value: OutlineValue,
    /// Where the value is written.
    pub span: Span,
    /// The spelling that reads the same for YAML 1.2 and PyYAML, when this one differs
    /// (`yes` -> `true`); `None` for JSON and for spellings both read alike.
    pub pyyaml_fix: Option<Edit>,
}

/// A config file's keys, values and spans.
#[derive(Debug, Clone)]
pub struct Outline {
    /// The text (comments kept) and the span of every key and list item.
    pub source: Source,
    scalars: HashMap<String, OutlineScalar>,
    json: bool,
}

impl Outline {
    /// True when the file sets this dotted path (`model.train_ds.batch_size`).
    #[must_use]
    pub fn has(&self, path: &str) -> bool {
        self.source.entry(path).is_some()
    }

    /// The scalar at a dotted path, if the path holds one.
    #[must_use]
    pub fn value(&self, path: &str) -> Option<&OutlineScalar> {
        self.scalars.get(path)
    }

    /// The span of the value at a dotted path.
    #[must_use]
    pub fn span_of(&self, path: &str) -> Option<Span> {
        self.source.entry(path).map(|e| e.value)
    }

    /// The top-level keys, in file order.
    #[must_use]
    pub fn top_keys(&self) -> Vec<&str> {
        self.source
            .entries()
            .iter()
            .filter(|e| e.depth == 1 && e.key.is_some())
            .map(|e| e.path.as_str())
            .collect()
    }

    /// True when the file was JSON (it started with `{`).
    #[must_use]
    pub fn is_json(&self) -> bool {
        self.json
    }
}

/// Reads any trainer's config (YAML, or JSON with or without `//` comments).
///
/// # Errors
/// [`ConfigError::Invalid`] when the text is not YAML or JSON at all.
pub fn outline(text: &str, path: &Path) -> Result<Outline, ConfigError> {
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{');
    let cleaned = if json {
        blank_comments(text)
    } else {
        text.to_owned()
    };
    let positions = Positions::new(&cleaned);
    let root = yaml::parse(&cleaned, &positions).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        line: e.span.line,
        column: e.span.column,
        key: None,
        kind: ErrorKind::Syntax,
        message: format!("not YAML or JSON: {}", e.message),
    })?;
    let mut entries = Vec::new();
    let mut scalars = HashMap::new();
    if let Some(root) = &root {
        walk(root, "", 1, json, &mut entries, &mut scalars);
    }
    Ok(Outline {
        source: Source::new(path, text.to_owned(), entries),
        scalars,
        json,
    })
}

/// Every key and list item under `node`, and every scalar's value.
fn walk(
    node: &Node,
    prefix: &str,
    depth: usize,
    json: bool,
    entries: &mut Vec<EntrySpan>,
    scalars: &mut HashMap<String, OutlineScalar>,
) {
    let mut visit = |path: String, key: Option<Span>, value: &Node, inherited: bool| {
        entries.push(EntrySpan {
            path: path.clone(),
            key,
            value: value.span,
            depth,
            inherited,
        });
        if let Some(s) = scalar(value, json) {
            scalars.entry(path.clone()).or_insert(s);
        }
        walk(value, &path, depth + 1, json, entries, scalars);
    };
    match &node.kind {
        NodeKind::Mapping(items) => {
            for item in items {
                let name = item.key.scalar().unwrap_or_default();
                let path = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}.{name}")
                };
                visit(
                    path,
                    Some(item.key.span),
                    &item.value,
                    item.merged || node.alias,
                );
            }
        }
        NodeKind::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                visit(format!("{prefix}[{i}]"), None, item, node.alias);
            }
        }
        NodeKind::Scalar { .. } => {}
    }
}

/// What a scalar node reads as; PyYAML's reading for plain YAML scalars.
fn scalar(node: &Node, json: bool) -> Option<OutlineScalar> {
    let text = node.scalar()?;
    let span = node.span;
    let plain = node.is_plain();
    let value = match (&node.tag, plain) {
        (Some(NodeTag::Str), _) | (None, false) => OutlineValue::Str(text.to_owned()),
        (Some(NodeTag::Null), _) => OutlineValue::Null,
        _ => from_core(text),
    };
    let mut fix = None;
    let value = if plain && !json {
        match (value, yaml::pyyaml(text)) {
            (OutlineValue::Str(_), PyYaml::Bool(b)) => {
                fix = Some(Edit {
                    span,
                    replacement: b.to_string(),
                });
                OutlineValue::Bool(b)
            }
            (v, _) => v,
        }
    } else {
        value
    };
    Some(OutlineScalar {
        value,
        span,
        pyyaml_fix: fix,
    })
}

fn from_core(text: &str) -> OutlineValue {
    match yaml::core(text) {
        Core::Null => OutlineValue::Null,
        Core::Bool(b) => OutlineValue::Bool(b),
        Core::Int(Some(v)) => {
            i64::try_from(v).map_or(OutlineValue::Str(text.to_owned()), OutlineValue::Int)
        }
        Core::Float(v) => OutlineValue::Float(v),
        Core::Int(None) | Core::Str => OutlineValue::Str(text.to_owned()),
    }
}

/// `//` and `/* */` comments outside strings replaced by spaces (newlines kept), so the
/// text parses as JSON and every byte stays where it was. Written by hand: the JSON-with-
/// comments crates parse into their own trees and lose the spans `--fix` edits need.
fn blank_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let start = i;
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                let end = (i + 2).min(bytes.len());
                for o in &mut out[start..end] {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced, by ASCII spaces: still UTF-8. A
    // multi-byte character inside a comment is blanked byte by byte, also ASCII.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_comments_keeps_spans() {
        let text = "{\n  \"a\": 1, // one\n  /* two\n  lines */ \"b\": \"x // not a comment\",\n\t\"c\": {\"d\": true}\n}\n";
        let o = outline(text, Path::new("c.json")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.value("a").map(|v| v.value.clone()),
            Some(OutlineValue::Int(1))
        );
        assert_eq!(
            o.value("b").map(|v| v.value.clone()),
            Some(OutlineValue::Str("x // not a comment".into()))
        );
        assert_eq!(
            o.value("c.d").map(|v| v.value.clone()),
            Some(OutlineValue::Bool(true))
        );
        let span = o.span_of("c.d").unwrap_or_else(|| panic!("no span"));
        assert_eq!(&text[span.byte_start..span.byte_end], "true");
        assert!(o.is_json());
        assert_eq!(o.top_keys(), vec!["a", "b", "c"]);
    }

    #[test]
    fn yaml_values_as_pyyaml_reads_them() {
        let text = "trainer:\n  precision: 16\n  pin: yes\nlr: 1.0e-3\nx: ${a.b}\nq: \"3\"\n";
        let o = outline(text, Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.value("trainer.precision").map(|v| v.value.clone()),
            Some(OutlineValue::Int(16))
        );
        let pin = o.value("trainer.pin").unwrap_or_else(|| panic!("no pin"));
        assert_eq!(pin.value, OutlineValue::Bool(true));
        assert_eq!(
            pin.pyyaml_fix.as_ref().map(|e| e.replacement.as_str()),
            Some("true")
        );
        assert_eq!(
            o.value("x").map(|v| v.value.clone()),
            Some(OutlineValue::Str("${a.b}".into()))
        );
        assert_eq!(
            o.value("q").map(|v| v.value.clone()),
            Some(OutlineValue::Str("3".into()))
        );
        assert!(outline("a: [1\n", Path::new("c.yaml")).is_err());
    }
}
