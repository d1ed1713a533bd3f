//! Span-aware YAML reading: `saphyr-parser` events become a small node tree that keeps the
//! location of every key and value, and plain scalars are read twice, once by the YAML 1.2
//! core schema (what gpufeed uses) and once by PyYAML's YAML 1.1 rules (what the trainer
//! sees), so that the differences can be reported.
//!
//! Why an event parser and not a serde deserialiser: `serde_norway` reports a location only
//! for the first error and drops the spans of keys, comments and scalar styles. The config
//! needs the span of every key (unknown keys, semantic errors, `validate --fix` text edits)
//! and the style of every scalar (`1e-4` plain is a float for YAML 1.2 but a string for
//! PyYAML; `"1e-4"` quoted is a string for both).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span as PSpan, Tag};

use crate::source::Span;

/// Deepest nesting accepted. Configs nest three or four levels; the limit keeps a hostile
/// file from exhausting the stack in code that walks the tree recursively.
pub(crate) const MAX_DEPTH: usize = 100;

/// Most nodes that aliases may expand to, in total ("billion laughs" guard).
pub(crate) const MAX_ALIAS_NODES: usize = 100_000;
/// Most scalar bytes that aliases may expand to, in total: the same guard against few
/// aliases of one large scalar (4 000 aliases of 64 KiB would be 256 MiB).
pub(crate) const MAX_ALIAS_BYTES: usize = 1 << 20;

/// A YAML core tag on a node (`!!str`, `!!int`, ...); other tags are kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Other(String),
}

/// One node of the document with its extent in the source.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: NodeKind,
    pub span: Span,
    pub tag: Option<NodeTag>,
    /// This node is an alias (`*name`): its own span is the alias, the spans inside it
    /// point at the anchored text.
    pub alias: bool,
}

/// What a node holds.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Scalar { value: String, style: ScalarStyle },
    Sequence(Vec<Node>),
    Mapping(Vec<Entry>),
}

/// One `key: value` pair of a mapping.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: Node,
    pub value: Node,
    /// Brought in by a merge key (`<<: *anchor`) rather than written in this mapping.
    pub merged: bool,
}

/// A failure to read the document as YAML at all.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    pub span: Span,
    pub message: String,
    pub kind: SyntaxKind,
}

/// Why the document could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyntaxKind {
    /// The scanner or parser rejected the text.
    Syntax,
    /// More than one document in the stream.
    MultipleDocuments,
    /// Nesting or alias expansion beyond the limits.
    TooLarge,
    /// A key that is a list or a mapping.
    ComplexKey,
    /// `<<` with something other than mappings.
    BadMerge,
}

impl Node {
    /// The scalar text when this node is a scalar.
    pub fn scalar(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// True for a plain (unquoted, not block) scalar without a tag.
    pub fn is_plain(&self) -> bool {
        matches!(
            &self.kind,
            NodeKind::Scalar {
                style: ScalarStyle::Plain,
                ..
            }
        ) && self.tag.is_none()
    }

    /// True when the node reads as null under the YAML 1.2 core schema.
    pub fn is_null(&self) -> bool {
        match (&self.kind, &self.tag) {
            (NodeKind::Scalar { .. }, Some(NodeTag::Null)) => true,
            (NodeKind::Scalar { value, style }, None) => {
                *style == ScalarStyle::Plain && matches!(core(value), Core::Null)
            }
            _ => false,
        }
    }

    /// A short name of what this node is, for messages ("a list", "a mapping", "null").
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            NodeKind::Sequence(_) => "a list",
            NodeKind::Mapping(_) => "a mapping",
            NodeKind::Scalar { .. } if self.is_null() => "no value",
            NodeKind::Scalar { .. } => "a scalar",
        }
    }

    /// Number of nodes, height (a scalar is 1) and bytes of scalar text of this subtree.
    /// Recursive, but every stored tree is at most `MAX_DEPTH` deep.
    fn size(&self) -> (usize, usize, usize) {
        let children = |nodes: &mut dyn Iterator<Item = &Node>| {
            nodes.fold((1, 1, 0), |(count, height, bytes), n| {
                let (c, h, b) = n.size();
                (count + c, height.max(h + 1), bytes + b)
            })
        };
        match &self.kind {
            NodeKind::Scalar { value, .. } => (1, 1, value.len()),
            NodeKind::Sequence(items) => children(&mut items.iter()),
            NodeKind::Mapping(entries) => {
                children(&mut entries.iter().flat_map(|e| [&e.key, &e.value]))
            }
        }
    }
}

/// Character index → byte offset and line/column conversion for one source text.
#[derive(Debug)]
pub(crate) struct Positions {
    /// Byte offset of every character, plus one past the end.
    char_bytes: Vec<usize>,
}

impl Positions {
    pub fn new(text: &str) -> Self {
        let mut char_bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
        char_bytes.push(text.len());
        Self { char_bytes }
    }

    fn byte(&self, char_index: usize) -> usize {
        self.char_bytes
            .get(char_index)
            .or(self.char_bytes.last())
            .copied()
            .unwrap_or(0)
    }

    /// Converts a parser span (character indices, 0-based columns) into ours.
    pub fn span(&self, span: PSpan) -> Span {
        let start = self.byte(span.start.index());
        let end = self.byte(span.end.index()).max(start);
        Span {
            line: span.start.line().max(1),
            column: span.start.col() + 1,
            byte_start: start,
            byte_end: end,
        }
    }

    /// A span covering `start` to `end` (parser markers of two events).
    fn join(&self, start: PSpan, end: PSpan) -> Span {
        let mut span = self.span(start);
        span.byte_end = self.byte(end.end.index()).max(span.byte_start);
        span
    }
}

enum Frame {
    Sequence {
        anchor: usize,
        tag: Option<NodeTag>,
        start: PSpan,
        items: Vec<Node>,
    },
    Mapping {
        anchor: usize,
        tag: Option<NodeTag>,
        start: PSpan,
        entries: Vec<Entry>,
        key: Option<Node>,
    },
}

fn node_tag(tag: Option<&Tag>) -> Option<NodeTag> {
    let tag = tag?;
    if tag.is_yaml_core_schema() {
        Some(match tag.suffix.as_str() {
            "str" => NodeTag::Str,
            "int" => NodeTag::Int,
            "float" => NodeTag::Float,
            "bool" => NodeTag::Bool,
            "null" => NodeTag::Null,
            _ => NodeTag::Other(tag.to_string()),
        })
    } else if tag.handle == "!" && tag.suffix.is_empty() {
        // `!` alone: the non-specific tag, which forces a string.
        Some(NodeTag::Str)
    } else {
        Some(NodeTag::Other(tag.to_string()))
    }
}

/// Parses `text` into the root node of its single document; `None` when the stream holds
/// no document (an empty file or only comments).
pub(crate) fn parse(text: &str, pos: &Positions) -> Result<Option<Node>, SyntaxError> {
    let mut builder = Builder {
        text,
        pos,
        anchors: HashMap::new(),
        stack: Vec::new(),
        alias_nodes: 0,
        alias_bytes: 0,
        root: None,
        documents: 0,
    };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let marker = *e.marker();
            let mut span = pos.span(PSpan::empty(marker));
            // At the end of a text without a final line break the scanner counts one more
            // line ("line 4" of a 3-line file): name the end of the last line instead.
            // Lines as YAML counts them: `\r\n`, `\n` and a lone `\r` each end one.
            let breaks = text.matches('\n').count() + text.matches('\r').count()
                - text.matches("\r\n").count();
            if span.line > breaks + 1 {
                span.line = breaks + 1;
                let last = text.rsplit(['\r', '\n']).next().unwrap_or("");
                span.column = last.chars().count() + 1;
            }
            SyntaxError {
                span,
                message: e.info().to_owned(),
                kind: SyntaxKind::Syntax,
            }
        })?;
        builder.event(event, span)?;
    }
    Ok(builder.root)
}

struct Builder<'p> {
    text: &'p str,
    pos: &'p Positions,
    anchors: HashMap<usize, Node>,
    stack: Vec<Frame>,
    alias_nodes: usize,
    alias_bytes: usize,
    root: Option<Node>,
    documents: usize,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, span: PSpan) -> Result<(), SyntaxError> {
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Ok(()),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(SyntaxError {
                        span: self.pos.span(span),
                        message: "a second YAML document starts here; the trainer reads one \
                                  document per file (PyYAML's `safe_load`), so delete this \
                                  `---` and what follows it or move it to another file"
                            .to_owned(),
                        kind: SyntaxKind::MultipleDocuments,
                    });
                }
                Ok(())
            }
            Event::Alias(id) => self.alias(id, span),
            Event::Scalar(value, style, anchor, tag) => {
                let mut node_span = self.pos.span(span);
                if node_span.byte_start == node_span.byte_end
                    && self
                        .text
                        .get(node_span.byte_start..)
                        .is_some_and(|t| t.starts_with(':'))
                {
                    // An empty value (`key:` then nothing) is reported at the colon; point
                    // just after it, where a value would be written.
                    node_span.byte_start += 1;
                    node_span.byte_end += 1;
                    node_span.column += 1;
                }
                if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) {
                    // The parser's end marker can run past trailing blanks and a comment;
                    // end the span at the closing quote.
                    if let Some(end) = closing_quote(self.text, node_span.byte_start, style) {
                        node_span.byte_end = end;
                    }
                }
                let node = Node {
                    kind: NodeKind::Scalar {
                        value: value.into_owned(),
                        style,
                    },
                    span: node_span,
                    tag: node_tag(tag.as_deref()),
                    alias: false,
                };
                if anchor > 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                self.complete(node)
            }
            Event::SequenceStart(anchor, tag) => self.push(
                Frame::Sequence {
                    anchor,
                    tag: node_tag(tag.as_deref()),
                    start: span,
                    items: Vec::new(),
                },
                span,
            ),
            Event::MappingStart(anchor, tag) => self.push(
                Frame::Mapping {
                    anchor,
                    tag: node_tag(tag.as_deref()),
                    start: span,
                    entries: Vec::new(),
                    key: None,
                },
                span,
            ),
            Event::SequenceEnd | Event::MappingEnd => self.end(span),
        }
    }

    /// An alias: the anchored node again, within the limits on depth and expansion that
    /// stop an alias bomb.
    fn alias(&mut self, id: usize, span: PSpan) -> Result<(), SyntaxError> {
        let Some(mut node) = self.anchors.get(&id).cloned() else {
            return Err(SyntaxError {
                span: self.pos.span(span),
                message: "this alias refers to an anchor that is not defined before \
                          it (or to the node that contains it); define `&name` first"
                    .to_owned(),
                kind: SyntaxKind::Syntax,
            });
        };
        let (count, height, bytes) = node.size();
        if self.stack.len() + height > MAX_DEPTH {
            // Aliases could otherwise stack nested anchors into a tree far deeper
            // than the text, and the recursive walks would overflow the stack.
            return Err(SyntaxError {
                span: self.pos.span(span),
                message: format!("this alias makes the nesting deeper than {MAX_DEPTH} levels"),
                kind: SyntaxKind::TooLarge,
            });
        }
        self.alias_nodes += count;
        self.alias_bytes += bytes;
        if self.alias_bytes > MAX_ALIAS_BYTES {
            return Err(SyntaxError {
                span: self.pos.span(span),
                message: format!(
                    "aliases expand to more than {} MiB of text; a config does not \
                     need that much, so this looks like an alias bomb",
                    MAX_ALIAS_BYTES >> 20
                ),
                kind: SyntaxKind::TooLarge,
            });
        }
        if self.alias_nodes > MAX_ALIAS_NODES {
            return Err(SyntaxError {
                span: self.pos.span(span),
                message: format!(
                    "aliases expand to more than {MAX_ALIAS_NODES} nodes; a config \
                     does not need that many, so this looks like an alias bomb"
                ),
                kind: SyntaxKind::TooLarge,
            });
        }
        node.span = self.pos.span(span);
        node.alias = true;
        self.complete(node)
    }

    /// The end of a sequence or a mapping: its node, completed (and anchored).
    fn end(&mut self, span: PSpan) -> Result<(), SyntaxError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let (node, anchor) = match frame {
            Frame::Sequence {
                anchor,
                tag,
                start,
                items,
            } => (
                Node {
                    kind: NodeKind::Sequence(items),
                    span: self.pos.join(start, span),
                    tag,
                    alias: false,
                },
                anchor,
            ),
            Frame::Mapping {
                anchor,
                tag,
                start,
                entries,
                key,
            } => {
                let mut entries = entries;
                if let Some(key) = key {
                    // A key without a value (cannot happen with a well-formed
                    // event stream); keep it with an empty value.
                    let value = Node {
                        kind: NodeKind::Scalar {
                            value: String::new(),
                            style: ScalarStyle::Plain,
                        },
                        span: Span {
                            byte_start: key.span.byte_end,
                            ..key.span
                        },
                        tag: None,
                        alias: false,
                    };
                    entries.push(Entry {
                        key,
                        value,
                        merged: false,
                    });
                }
                let entries = merge(entries)?;
                (
                    Node {
                        kind: NodeKind::Mapping(entries),
                        span: self.pos.join(start, span),
                        tag,
                        alias: false,
                    },
                    anchor,
                )
            }
        };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        self.complete(node)
    }

    fn push(&mut self, frame: Frame, span: PSpan) -> Result<(), SyntaxError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(SyntaxError {
                span: self.pos.span(span),
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
                kind: SyntaxKind::TooLarge,
            });
        }
        self.stack.push(frame);
        Ok(())
    }

    fn complete(&mut self, node: Node) -> Result<(), SyntaxError> {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
                Ok(())
            }
            Some(Frame::Sequence { items, .. }) => {
                items.push(node);
                Ok(())
            }
            Some(Frame::Mapping { entries, key, .. }) => {
                match key.take() {
                    None => {
                        if !matches!(node.kind, NodeKind::Scalar { .. }) {
                            return Err(SyntaxError {
                                span: node.span,
                                message: format!(
                                    "this key is {}; keys must be plain names (PyYAML cannot \
                                     use a list or a mapping as a key)",
                                    node.describe()
                                ),
                                kind: SyntaxKind::ComplexKey,
                            });
                        }
                        *key = Some(node);
                    }
                    Some(k) => entries.push(Entry {
                        key: k,
                        value: node,
                        merged: false,
                    }),
                }
                Ok(())
            }
        }
    }
}

/// The byte after the closing quote of the quoted scalar that starts at `start`.
fn closing_quote(text: &str, start: usize, style: ScalarStyle) -> Option<usize> {
    let body = text.get(start..)?;
    let mut chars = body.char_indices();
    let (_, open) = chars.next()?;
    if open != '"' && open != '\'' {
        return None;
    }
    let double = style == ScalarStyle::DoubleQuoted;
    while let Some((i, c)) = chars.next() {
        if double && c == '\\' {
            chars.next();
        } else if c == open {
            if !double && body[i + 1..].starts_with('\'') {
                chars.next();
                continue;
            }
            return Some(start + i + 1);
        }
    }
    None
}

/// Applies merge keys (`<<: *base` or `<<: [*a, *b]`) the way PyYAML does: keys written in
/// the mapping win over merged ones, and earlier merge sources win over later ones.
fn merge(entries: Vec<Entry>) -> Result<Vec<Entry>, SyntaxError> {
    let is_merge = |e: &Entry| e.key.is_plain() && e.key.scalar() == Some("<<");
    if !entries.iter().any(is_merge) {
        return Ok(entries);
    }
    let mut own = Vec::new();
    let mut sources = Vec::new();
    for entry in entries {
        if is_merge(&entry) {
            match entry.value.kind {
                NodeKind::Mapping(inner) => sources.push(inner),
                NodeKind::Sequence(items) => {
                    for item in items {
                        match item.kind {
                            NodeKind::Mapping(inner) => sources.push(inner),
                            _ => return Err(bad_merge(&item)),
                        }
                    }
                }
                NodeKind::Scalar { .. } => return Err(bad_merge(&entry.value)),
            }
        } else {
            own.push(entry);
        }
    }
    for source in sources {
        for mut entry in source {
            let taken = own
                .iter()
                .any(|e| e.key.scalar().is_some() && e.key.scalar() == entry.key.scalar());
            if !taken {
                entry.merged = true;
                own.push(entry);
            }
        }
    }
    Ok(own)
}

fn bad_merge(node: &Node) -> SyntaxError {
    SyntaxError {
        span: node.span,
        message: format!(
            "the merge key `<<` needs a mapping or a list of mappings (usually an alias like \
             `*defaults`), found {}",
            node.describe()
        ),
        kind: SyntaxKind::BadMerge,
    }
}

/// A plain scalar as the YAML 1.2 core schema reads it (spec 1.2.2, section 10.3.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Core {
    Null,
    Bool(bool),
    /// An integer; `None` when it does not fit in an `i128`.
    Int(Option<i128>),
    Float(f64),
    Str,
}

/// A plain scalar as PyYAML (YAML 1.1, `yaml.safe_load`) reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyYaml {
    Null,
    Bool(bool),
    Int(Option<i128>),
    Float(f64),
    Str,
}

fn all(s: &str, f: impl Fn(u8) -> bool) -> bool {
    !s.is_empty() && s.bytes().all(f)
}

fn strip_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

fn int_radix(digits: &str, radix: u32, negative: bool) -> Option<i128> {
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if negative { -v } else { v })
}

/// Reads a plain scalar by the YAML 1.2 core schema.
pub(crate) fn core(s: &str) -> Core {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Core::Null,
        "true" | "True" | "TRUE" => return Core::Bool(true),
        "false" | "False" | "FALSE" => return Core::Bool(false),
        ".nan" | ".NaN" | ".NAN" => return Core::Float(f64::NAN),
        _ => {}
    }
    if let Some(hex) = s.strip_prefix("0x") {
        if all(hex, |b| b.is_ascii_hexdigit()) {
            return Core::Int(int_radix(hex, 16, false));
        }
        return Core::Str;
    }
    if let Some(oct) = s.strip_prefix("0o") {
        if all(oct, |b| (b'0'..=b'7').contains(&b)) {
            return Core::Int(int_radix(oct, 8, false));
        }
        return Core::Str;
    }
    let (negative, body) = strip_sign(s);
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return Core::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if all(body, |b| b.is_ascii_digit()) {
        return Core::Int(int_radix(body, 10, negative));
    }
    if is_core_float(body)
        && let Ok(v) = s.parse::<f64>()
    {
        return Core::Float(v);
    }
    Core::Str
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` without the sign.
fn is_core_float(body: &str) -> bool {
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => all(frac, |b| b.is_ascii_digit()),
        Some((int, frac)) => {
            all(int, |b| b.is_ascii_digit()) && frac.bytes().all(|b| b.is_ascii_digit())
        }
        None => all(mantissa, |b| b.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let (_, digits) = strip_sign(e);
        all(digits, |b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

/// Reads a plain scalar the way PyYAML's `SafeLoader` resolves implicit types
/// (`yaml/resolver.py`: bool, float, int, null; timestamps are left as strings here).
pub(crate) fn pyyaml(s: &str) -> PyYaml {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return PyYaml::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return PyYaml::Bool(true);
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return PyYaml::Bool(false);
        }
        ".nan" | ".NaN" | ".NAN" => return PyYaml::Float(f64::NAN),
        _ => {}
    }
    if let Some(v) = pyyaml_float(s) {
        return PyYaml::Float(v);
    }
    if let Some(v) = pyyaml_int(s) {
        return PyYaml::Int(v);
    }
    PyYaml::Str
}

/// PyYAML's float regex:
/// `[-+]?([0-9][0-9_]*)\.[0-9_]*([eE][-+][0-9]+)?` | `\.[0-9_]+([eE][-+][0-9]+)?` |
/// `[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*` | `[-+]?\.(inf|Inf|INF)` | `\.(nan|NaN|NAN)`.
/// The mantissa needs a dot and the exponent needs a sign: `1e-4` and `1.0e4` are strings.
fn pyyaml_float(s: &str) -> Option<f64> {
    let (negative, body) = strip_sign(s);
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        matches!(e.as_bytes().first(), Some(b'-' | b'+')) && all(&e[1..], |b| b.is_ascii_digit())
    });
    if !exponent_ok {
        return None;
    }
    let (int, frac) = mantissa.split_once('.')?;
    let digits_ = |x: &str| x.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if int.is_empty() {
        // `\.[0-9_]+`: no sign allowed on this form.
        if negative || s.starts_with('+') || frac.is_empty() || !digits_(frac) {
            return None;
        }
    } else if int.contains(':') {
        // Sexagesimal (base 60) float, e.g. `1:30.5`; no exponent on this form.
        if exponent.is_some() || !digits_(frac) {
            return None;
        }
        let mut parts = int.split(':');
        let head = parts.next()?;
        if !head.as_bytes().first()?.is_ascii_digit() || !digits_(head) {
            return None;
        }
        let mut value: f64 = head.replace('_', "").parse().ok()?;
        for part in parts {
            if part.is_empty() || part.len() > 2 || !all(part, |b| b.is_ascii_digit()) {
                return None;
            }
            let v: f64 = part.parse().ok()?;
            if v >= 60.0 {
                return None;
            }
            value = value * 60.0 + v;
        }
        let f: f64 = format!("0.{}", frac.replace('_', ""))
            .parse()
            .unwrap_or(0.0);
        let v = value + f;
        return Some(if negative { -v } else { v });
    } else if !int.as_bytes().first()?.is_ascii_digit() || !digits_(int) || !digits_(frac) {
        return None;
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    let cleaned = if cleaned.ends_with('.') || cleaned.contains(".e") || cleaned.contains(".E") {
        cleaned.replacen('.', ".0", 1)
    } else {
        cleaned
    };
    cleaned.parse().ok()
}

/// PyYAML's int regex: `[-+]?0b[0-1_]+` | `[-+]?0[0-7_]+` | `[-+]?(0|[1-9][0-9_]*)` |
/// `[-+]?0x[0-9a-fA-F_]+` | `[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`. A leading 0 means octal.
fn pyyaml_int(s: &str) -> Option<Option<i128>> {
    let (negative, body) = strip_sign(s);
    let clean = |x: &str| x.replace('_', "");
    if let Some(bin) = body.strip_prefix("0b") {
        return all(bin, |b| matches!(b, b'0' | b'1' | b'_'))
            .then(|| int_radix(&clean(bin), 2, negative));
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return all(hex, |b| b.is_ascii_hexdigit() || b == b'_')
            .then(|| int_radix(&clean(hex), 16, negative));
    }
    if body == "0" {
        return Some(Some(0));
    }
    if let Some(oct) = body.strip_prefix('0') {
        return all(oct, |b| (b'0'..=b'7').contains(&b) || b == b'_')
            .then(|| int_radix(&clean(oct), 8, negative));
    }
    let first = *body.as_bytes().first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    if body.contains(':') {
        let mut parts = body.split(':');
        let head = parts.next()?;
        if !all(head, |b| b.is_ascii_digit() || b == b'_') {
            return None;
        }
        let mut value = int_radix(&clean(head), 10, false);
        for part in parts {
            if part.is_empty() || part.len() > 2 || !all(part, |b| b.is_ascii_digit()) {
                return None;
            }
            let v: i128 = part.parse().ok()?;
            if v >= 60 {
                return None;
            }
            value = value.and_then(|x| x.checked_mul(60)?.checked_add(v));
        }
        return Some(value.map(|v| if negative { -v } else { v }));
    }
    all(body, |b| b.is_ascii_digit() || b == b'_').then(|| int_radix(&clean(body), 10, negative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        let pos = Positions::new(text);
        parse(text, &pos).unwrap().unwrap()
    }

    fn entries(node: &Node) -> &[Entry] {
        match &node.kind {
            NodeKind::Mapping(e) => e,
            _ => panic!("not a mapping"),
        }
    }

    #[test]
    fn core_schema() {
        assert_eq!(core("1e-4"), Core::Float(1e-4));
        assert_eq!(core("1.0e-4"), Core::Float(1e-4));
        assert_eq!(core("010"), Core::Int(Some(10)));
        assert_eq!(core("0o17"), Core::Int(Some(15)));
        assert_eq!(core("0x1F"), Core::Int(Some(31)));
        assert_eq!(core("-3"), Core::Int(Some(-3)));
        assert_eq!(core("1_000"), Core::Str);
        assert_eq!(core("yes"), Core::Str);
        assert_eq!(core("~"), Core::Null);
        assert_eq!(core(""), Core::Null);
        assert_eq!(core("-.inf"), Core::Float(f64::NEG_INFINITY));
        assert_eq!(core(".5"), Core::Float(0.5));
        assert_eq!(core("5."), Core::Float(5.0));
        assert_eq!(core("1e"), Core::Str);
        assert_eq!(core("e5"), Core::Str);
        assert_eq!(core("."), Core::Str);
        assert_eq!(core("+"), Core::Str);
        assert_eq!(core("32x"), Core::Str);
        assert_eq!(
            core("99999999999999999999999999999999999999999"),
            Core::Int(None)
        );
    }

    #[test]
    fn pyyaml_rules() {
        // The trap of the original config: no dot, or an unsigned exponent, is a string.
        assert_eq!(pyyaml("1e-4"), PyYaml::Str);
        assert_eq!(pyyaml("1.0e4"), PyYaml::Str);
        assert_eq!(pyyaml("1.0e-4"), PyYaml::Float(1e-4));
        assert_eq!(pyyaml("1.e-4"), PyYaml::Float(1e-4));
        assert_eq!(pyyaml("5."), PyYaml::Float(5.0));
        assert_eq!(pyyaml(".5"), PyYaml::Float(0.5));
        assert_eq!(pyyaml("-.5"), PyYaml::Str);
        assert_eq!(pyyaml("0.0005"), PyYaml::Float(0.0005));
        assert_eq!(pyyaml("1_000.5"), PyYaml::Float(1000.5));
        assert_eq!(pyyaml("1:30.5"), PyYaml::Float(90.5));
        assert_eq!(pyyaml("010"), PyYaml::Int(Some(8)));
        assert_eq!(pyyaml("08"), PyYaml::Str);
        assert_eq!(pyyaml("1_000"), PyYaml::Int(Some(1000)));
        assert_eq!(pyyaml("0b101"), PyYaml::Int(Some(5)));
        assert_eq!(pyyaml("0x_1f"), PyYaml::Int(Some(31)));
        assert_eq!(pyyaml("1:30"), PyYaml::Int(Some(90)));
        assert_eq!(pyyaml("0o17"), PyYaml::Str);
        assert_eq!(pyyaml("56"), PyYaml::Int(Some(56)));
        assert_eq!(pyyaml("-0"), PyYaml::Int(Some(0)));
        assert_eq!(pyyaml("no"), PyYaml::Bool(false));
        assert_eq!(pyyaml("On"), PyYaml::Bool(true));
        assert_eq!(pyyaml("y"), PyYaml::Str);
        assert_eq!(pyyaml("~"), PyYaml::Null);
    }

    #[test]
    fn spans_of_keys_and_values() {
        let text = "# comment\ndata:\n  batch_size: \"32x\"   # note\n  é: 7\n  n: 1e-4   # c\n  q: 'it''s'  # c\n  d: \"a\\\"b\"  # c\n";
        let node = root(text);
        let data = &entries(&node)[0];
        assert_eq!(data.key.scalar(), Some("data"));
        assert_eq!((data.key.span.line, data.key.span.column), (2, 1));
        let inner = entries(&data.value);
        let bs = &inner[0];
        assert_eq!((bs.key.span.line, bs.key.span.column), (3, 3));
        assert_eq!((bs.value.span.line, bs.value.span.column), (3, 15));
        assert_eq!(
            &text[bs.value.span.byte_start..bs.value.span.byte_end],
            "\"32x\""
        );
        let e = &inner[1];
        assert_eq!(&text[e.key.span.byte_start..e.key.span.byte_end], "é");
        assert_eq!(&text[e.value.span.byte_start..e.value.span.byte_end], "7");
        assert_eq!((e.value.span.line, e.value.span.column), (4, 6));
        let n = &inner[2];
        assert_eq!(
            &text[n.value.span.byte_start..n.value.span.byte_end],
            "1e-4"
        );
        assert!(n.value.is_plain());
        let q = &inner[3];
        assert_eq!(
            &text[q.value.span.byte_start..q.value.span.byte_end],
            "'it''s'"
        );
        let d = &inner[4];
        assert_eq!(
            &text[d.value.span.byte_start..d.value.span.byte_end],
            "\"a\\\"b\""
        );
    }

    #[test]
    fn merge_keys_follow_pyyaml() {
        let text = "base: &b\n  x: 1\n  y: 2\nthing:\n  <<: *b\n  y: 3\n";
        let node = root(text);
        let thing = &entries(&node)[1];
        let inner = entries(&thing.value);
        let pairs: Vec<_> = inner
            .iter()
            .map(|e| (e.key.scalar().unwrap(), e.value.scalar().unwrap(), e.merged))
            .collect();
        assert_eq!(pairs, vec![("y", "3", false), ("x", "1", true)]);
    }

    #[test]
    fn limits_and_documents() {
        let pos_err = |text: &str| {
            let pos = Positions::new(text);
            parse(text, &pos).unwrap_err()
        };
        let deep = "[".repeat(MAX_DEPTH + 5);
        assert_eq!(pos_err(&deep).kind, SyntaxKind::TooLarge);
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
                    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
                    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
        assert_eq!(pos_err(bomb).kind, SyntaxKind::TooLarge);
        let mut nested = String::from("a0: &a0 [x]\n");
        for i in 1..60 {
            nested.push_str(&format!("a{i}: &a{i} [[[[[[*a{}]]]]]]\n", i - 1));
        }
        assert_eq!(pos_err(&nested).kind, SyntaxKind::TooLarge);
        let two = "a: 1\n---\nb: 2\n";
        let err = pos_err(two);
        assert_eq!(err.kind, SyntaxKind::MultipleDocuments);
        assert_eq!(err.span.line, 2);
        let pos = Positions::new("# only a comment\n");
        assert!(parse("# only a comment\n", &pos).unwrap().is_none());
    }
}
