//! A config's keys, values and spans, whatever it is written in: YAML or JSON (read by
//! `gpufeed_config::outline`) or a Python hparams file (read by [`crate::python`]). The
//! trainer table ([`crate::trainers`]) recognises and checks a config through this one view.
//!
//! ```
//! use std::path::Path;
//! use gpufeed_config::{OutlineValue, outline};
//! use gpufeed_validate::keys::Keys;
//!
//! let o = outline("train:\n  batch_size: 8\n", Path::new("c.yaml")).unwrap();
//! let k = Keys::from_outline(&o);
//! assert_eq!(k.value("train.batch_size").map(|v| &v.value), Some(&OutlineValue::Int(8)));
//! assert_eq!(k.setting("train.batch_size", "32"), "train.batch_size: 32");
//! ```

use std::collections::HashMap;

use gpufeed_config::{EntrySpan, Outline, OutlineScalar, Span};

/// What the config is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// YAML (and JSON, its flow style).
    Yaml,
    /// Python: literal settings of an hparams module.
    Python,
}

/// How a Python setting is written, so that advice is written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyForm {
    /// `batch_size=32` (a keyword argument, or an argparse `--batch_size` default).
    Keyword,
    /// `"batch_size": 32` (a dict entry).
    DictEntry,
    /// `batch_size = 32` (a module or class attribute).
    Assignment,
}

/// A config's keys (dotted paths), their spans, and the scalars among their values.
#[derive(Debug, Clone)]
pub struct Keys {
    text: String,
    entries: Vec<EntrySpan>,
    scalars: HashMap<String, OutlineScalar>,
    forms: HashMap<String, PyForm>,
    index: HashMap<String, usize>,
    dialect: Dialect,
}

impl Keys {
    /// The keys of a YAML or JSON outline.
    #[must_use]
    pub fn from_outline(o: &Outline) -> Self {
        let entries = o.source.entries().to_vec();
        let scalars = entries
            .iter()
            .filter_map(|e| o.value(&e.path).map(|v| (e.path.clone(), v.clone())))
            .collect();
        Self::new(
            o.source.text().to_owned(),
            entries,
            scalars,
            HashMap::new(),
            Dialect::Yaml,
        )
    }

    /// Keys read some other way. A path set twice is found at its first entry that holds
    /// a scalar (else its first entry): a Python file may pass `batch_size=hp.batch_size`
    /// to a loader before it sets `batch_size=32`.
    pub(crate) fn new(
        text: String,
        entries: Vec<EntrySpan>,
        scalars: HashMap<String, OutlineScalar>,
        forms: HashMap<String, PyForm>,
        dialect: Dialect,
    ) -> Self {
        let mut index: HashMap<String, usize> = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let first = *index.entry(e.path.clone()).or_insert(i);
            let first_has_scalar =
                scalars.get(&e.path).map(|s| s.span) == Some(entries[first].value);
            if !first_has_scalar && scalars.get(&e.path).map(|s| s.span) == Some(e.value) {
                index.insert(e.path.clone(), i);
            }
        }
        Self {
            text,
            entries,
            scalars,
            forms,
            index,
            dialect,
        }
    }

    /// Every key and list item, in file order.
    #[must_use]
    pub fn entries(&self) -> &[EntrySpan] {
        &self.entries
    }

    /// True when the file sets this dotted path.
    #[must_use]
    pub fn has(&self, path: &str) -> bool {
        self.index.contains_key(path)
    }

    /// The scalar at a dotted path, if the path holds one.
    #[must_use]
    pub fn value(&self, path: &str) -> Option<&OutlineScalar> {
        self.scalars.get(path)
    }

    /// The text of a span as written (empty if it does not fit the text).
    #[must_use]
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.byte_start..span.byte_end).unwrap_or("")
    }

    /// The top-level keys, in file order, each once.
    #[must_use]
    pub fn top_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for e in self
            .entries
            .iter()
            .filter(|e| e.depth == 1 && e.key.is_some())
        {
            if !keys.contains(&e.path.as_str()) {
                keys.push(&e.path);
            }
        }
        keys
    }

    /// What the config is written in.
    #[must_use]
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// `key` set to `value` (YAML spelling: `true`, `null`, a number, maybe a `#` comment)
    /// as this config writes it: `key: true` in YAML; `key=True`, `"key": True` or
    /// `key = True` in Python, as the file wrote that key.
    #[must_use]
    pub fn setting(&self, key: &str, value: &str) -> String {
        if self.dialect == Dialect::Yaml {
            return format!("{key}: {value}");
        }
        let (head, comment) = match value.split_once('#') {
            Some((v, c)) => (v.trim_end(), format!("  #{c}")),
            None => (value, String::new()),
        };
        let head = match head {
            "true" => "True",
            "false" => "False",
            "null" => "None",
            v => v,
        };
        let name = key.rsplit('.').next().unwrap_or(key);
        match self.forms.get(key) {
            Some(PyForm::DictEntry) => format!("\"{name}\": {head}{comment}"),
            Some(PyForm::Assignment) => format!("{name} = {head}{comment}"),
            Some(PyForm::Keyword) | None => format!("{name}={head}{comment}"),
        }
    }
}
