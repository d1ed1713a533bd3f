//! The loaded file: its text and the span of every key and value, for messages and for
//! text edits that keep comments and unknown keys (`gpufeed validate --fix`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diag::ConfigWarning;
use crate::schema::Config;

/// A region of the config text.
///
/// `line` and `column` are 1-based and count characters (what editors show);
/// `byte_start..byte_end` index the UTF-8 text, so `&text[span.byte_start..span.byte_end]`
/// is exactly the key or value as written (quotes included, trailing comment excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// Line of the first character, from 1.
    pub line: usize,
    /// Column of the first character, from 1, in characters.
    pub column: usize,
    /// Byte offset of the first character.
    pub byte_start: usize,
    /// Byte offset one past the last character.
    pub byte_end: usize,
}

/// Where one key and its value are in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntrySpan {
    /// Dotted path: `data.num_workers`; list items get `[i]`: `model.languages[3]`.
    pub path: String,
    /// The key as written; `None` for list items.
    pub key: Option<Span>,
    /// The value: a scalar as written, or the whole nested mapping or list. An empty value
    /// (`num_workers:` with nothing after it) has an empty span where the value would go.
    pub value: Span,
    /// Nesting depth: 1 for a section (`data`), 2 for its keys.
    pub depth: usize,
    /// True when the entry comes from a merge key (`<<: *anchor`) or an alias, so its spans
    /// point at the anchored text, not at this path's own line.
    pub inherited: bool,
}

/// The text of a config file and the spans of everything in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    path: PathBuf,
    text: String,
    entries: Vec<EntrySpan>,
    index: HashMap<String, usize>,
}

impl Source {
    pub(crate) fn new(path: &Path, text: String, entries: Vec<EntrySpan>) -> Self {
        let mut index = HashMap::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            // The first occurrence wins; a duplicate key is reported as an error anyway.
            index.entry(entry.path.clone()).or_insert(i);
        }
        Self {
            path: path.to_path_buf(),
            text,
            entries,
            index,
        }
    }

    /// The path the config was read from (as given).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The full text of the file.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every key and list item of the file, in document order, unknown ones included.
    #[must_use]
    pub fn entries(&self) -> &[EntrySpan] {
        &self.entries
    }

    /// The entry at a dotted path (`data.num_workers`), if the file has it.
    #[must_use]
    pub fn entry(&self, path: &str) -> Option<&EntrySpan> {
        self.index.get(path).and_then(|&i| self.entries.get(i))
    }

    /// The text of a span (empty if the span does not fit the text).
    #[must_use]
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.byte_start..span.byte_end).unwrap_or("")
    }
}

/// A config read from YAML: the typed values, the warnings, and the file with its spans.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The typed config; keys absent from the file hold their defaults.
    pub config: Config,
    /// Everything worth telling the user that did not stop the load, in file order.
    pub warnings: Vec<ConfigWarning>,
    /// The file text and the location of every key and value.
    pub source: Source,
}

impl Loaded {
    /// The span of the value at a dotted path (`data.num_workers`): what an edit replaces.
    /// For a section (`data`) it covers the whole nested mapping.
    #[must_use]
    pub fn span_of(&self, path: &str) -> Option<Span> {
        self.source.entry(path).map(|e| e.value)
    }

    /// The span of the key at a dotted path (`data.num_workers`), where messages point.
    #[must_use]
    pub fn key_span_of(&self, path: &str) -> Option<Span> {
        self.source.entry(path).and_then(|e| e.key)
    }

    /// True when the file sets this dotted path (the value may still be null).
    #[must_use]
    pub fn is_set(&self, path: &str) -> bool {
        self.source.entry(path).is_some()
    }
}
