//! A Python hparams file (`hparams.py`) read for its literal settings, with tree-sitter's
//! Python grammar (as `gpufeed lint` reads training code), so that the trainer table
//! recognises and checks it like a YAML config. Nothing is run or imported.
//!
//! A setting is a name with a literal value (an int, a float, `True`/`False`, a string,
//! `None`; `-3` too) written as:
//! - a keyword argument of any call: `HParams(batch_size=32)`, `dict(fp16_run=False)`;
//! - a dict entry with a string key: `AttrDict({"batch_size": 64})`, `{"fp16_run": False}`;
//! - a module or class attribute: `batch_size = 32`, `batch_size: int = 32`;
//! - an argparse default: `add_argument("--batch-size", default=32)` is `batch_size`.
//!
//! A dict or call that is the value of a setting nests: `train=dict(batch_size=8)` is
//! `train.batch_size`. A setting whose value is not a literal (`len(symbols)`, a list) is a
//! key without a value, as a YAML list is. A name set twice is read where it is first set
//! to a literal.
//!
//! ```
//! use gpufeed_config::OutlineValue;
//! use gpufeed_validate::python::read;
//!
//! let k = read("hp = HParams(\n  batch_size=32,\n  fp16_run=False,\n)\n").unwrap();
//! assert_eq!(k.value("batch_size").map(|v| &v.value), Some(&OutlineValue::Int(32)));
//! assert_eq!(k.value("fp16_run").map(|v| v.span.line), Some(3));
//! ```

use std::collections::HashMap;
use std::path::Path;

use gpufeed_config::{EntrySpan, OutlineScalar, OutlineValue, Span};
use tree_sitter::{Node, Parser};

use gpufeed_findings::constants::MAX_NESTING;

use crate::keys::{Dialect, Keys, PyForm};

/// Why a Python file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// The parser refused it: the place of the first part that does not parse.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// That line, trimmed.
        text: String,
    },
    /// The grammar could not be loaded (a build problem, not the file's).
    Parser(String),
}

/// True when a config file is Python: by its `.py` extension, or, for a file that is not
/// named `.yaml`, `.yml` or `.json`, when it parses as Python and has a line that starts a
/// statement YAML has no use for (`import x`, `from x import y`, `def f(`, `class C`): such a
/// line is a YAML error, or a plain string where a YAML config has `key: value`.
#[must_use]
pub fn is_python(path: &Path, text: &str) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("py") => return true,
        Some("yaml" | "yml" | "json") => return false,
        _ => {}
    }
    let statement = text.lines().any(|l| {
        ["import ", "from ", "def ", "class "]
            .iter()
            .any(|s| l.starts_with(s))
    });
    statement && parse(text).is_ok_and(|t| !t.root_node().has_error())
}

fn parse(text: &str) -> Result<tree_sitter::Tree, Unreadable> {
    let mut parser = Parser::new();
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    parser
        .set_language(&language)
        .map_err(|e| Unreadable::Parser(e.to_string()))?;
    parser
        .parse(text, None)
        .ok_or_else(|| Unreadable::Parser("the parser gave no tree".to_owned()))
}

/// The literal settings of a Python file.
///
/// # Errors
/// [`Unreadable`] when the file does not parse as Python.
pub fn read(text: &str) -> Result<Keys, Unreadable> {
    let tree = parse(text)?;
    let root = tree.root_node();
    if root.has_error() {
        let bad = first_error(root).unwrap_or(root);
        let span = span(text, bad);
        return Err(Unreadable::Syntax {
            line: span.line,
            column: span.column,
            text: text
                .lines()
                .nth(span.line.saturating_sub(1))
                .unwrap_or("")
                .trim()
                .chars()
                .take(120)
                .collect(),
        });
    }
    let mut r = Reader {
        text,
        depth: 0,
        entries: Vec::new(),
        scalars: HashMap::new(),
        forms: HashMap::new(),
    };
    r.statements(root);
    Ok(Keys::new(
        text.to_owned(),
        r.entries,
        r.scalars,
        r.forms,
        Dialect::Python,
    ))
}

/// Where the file stops parsing: the first token the parser found missing (a comma, a
/// closing bracket), else the first part it could not place, depth first.
fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    first(node, &|n| n.is_missing()).or_else(|| first(node, &|n| n.is_error()))
}

fn first<'t>(node: Node<'t>, wanted: &dyn Fn(Node<'t>) -> bool) -> Option<Node<'t>> {
    // Depth first in source order, with a stack of its own: a file nested thousands of
    // brackets deep must not exhaust the thread's.
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if wanted(n) {
            return Some(n);
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'t>> = n.children(&mut cursor).filter(|c| c.has_error()).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

/// Where a node is: 1-based line, column in characters.
fn span(text: &str, node: Node<'_>) -> Span {
    let start = node.start_byte();
    let point = node.start_position();
    let line_start = start.saturating_sub(point.column);
    let column = text
        .get(line_start..start)
        .map_or(point.column, |s| s.chars().count());
    Span {
        line: point.row + 1,
        column: column + 1,
        byte_start: start,
        byte_end: node.end_byte(),
    }
}

struct Reader<'t> {
    text: &'t str,
    /// How deep `statements` and `container` are: settings nested deeper than
    /// `MAX_NESTING` are not read (no hparams file nests so; a generated one must not
    /// exhaust the stack).
    depth: u64,
    entries: Vec<EntrySpan>,
    scalars: HashMap<String, OutlineScalar>,
    forms: HashMap<String, PyForm>,
}

impl Reader<'_> {
    fn source(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    /// Walks the whole file: module and class attributes are settings; every call and
    /// every dict not already read as a setting's value holds settings at the top level.
    fn statements(&mut self, node: Node<'_>) {
        if self.depth >= MAX_NESTING {
            return;
        }
        self.depth += 1;
        self.statements_within(node);
        self.depth -= 1;
    }

    fn statements_within(&mut self, node: Node<'_>) {
        match node.kind() {
            "assignment" if attribute_level(node) => {
                let (Some(left), Some(right)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return;
                };
                if left.kind() == "identifier" {
                    let name = self.source(left).to_owned();
                    if literal(self.text, right).is_some() {
                        self.setting("", &name, left, right, PyForm::Assignment);
                        return;
                    }
                }
                self.statements(right);
            }
            "call" => {
                if let Some(f) = node.child_by_field_name("function") {
                    self.statements(f);
                }
                if let Some(args) = node.child_by_field_name("arguments")
                    && !self.argparse(node, args)
                {
                    self.container("", args);
                }
            }
            "dictionary" => self.container("", node),
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.statements(child);
                }
            }
        }
    }

    /// The keyword arguments of a call, or the entries of a dict, under `prefix`. Values
    /// that are not settings (positional arguments, lambdas) are walked for calls and
    /// dicts of their own.
    fn container(&mut self, prefix: &str, node: Node<'_>) {
        if self.depth >= MAX_NESTING {
            return;
        }
        self.depth += 1;
        self.container_within(prefix, node);
        self.depth -= 1;
    }

    fn container_within(&mut self, prefix: &str, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            let named = match child.kind() {
                "keyword_argument" => child
                    .child_by_field_name("name")
                    .zip(child.child_by_field_name("value"))
                    .map(|(k, v)| (self.source(k).to_owned(), k, v, PyForm::Keyword)),
                "pair" => child
                    .child_by_field_name("key")
                    .zip(child.child_by_field_name("value"))
                    .and_then(|(k, v)| match literal(self.text, k) {
                        Some(OutlineValue::Str(s)) => Some((s, k, v, PyForm::DictEntry)),
                        _ => None,
                    }),
                _ => None,
            };
            match named {
                Some((name, key, value, form)) => self.setting(prefix, &name, key, value, form),
                None => self.statements(child),
            }
        }
    }

    /// One setting; a dict or call as its value nests under its name.
    fn setting(&mut self, prefix: &str, name: &str, key: Node<'_>, value: Node<'_>, form: PyForm) {
        if name.is_empty() || name.contains(['.', '[', ']']) {
            return;
        }
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}.{name}")
        };
        let value_span = span(self.text, value);
        self.entries.push(EntrySpan {
            path: path.clone(),
            key: Some(span(self.text, key)),
            value: value_span,
            depth: path.split('.').count(),
            inherited: false,
        });
        if let Some(v) = literal(self.text, value) {
            if !self.scalars.contains_key(&path) {
                self.scalars.insert(
                    path.clone(),
                    OutlineScalar {
                        value: v,
                        span: value_span,
                        pyyaml_fix: None,
                    },
                );
                self.forms.insert(path, form);
            }
            return;
        }
        match value.kind() {
            "dictionary" => self.container(&path, value),
            "call" => {
                if let Some(args) = value.child_by_field_name("arguments") {
                    self.container(&path, args);
                }
            }
            _ => self.statements(value),
        }
    }

    /// `parser.add_argument("--batch-size", type=int, default=32)`: the setting
    /// `batch_size` (argparse's `dest`, or the `dest=` given) at the default. True when the
    /// call is an `add_argument` with a `--flag`, read or not.
    fn argparse(&mut self, call: Node<'_>, args: Node<'_>) -> bool {
        let is_add = call
            .child_by_field_name("function")
            .is_some_and(|f| f.kind() == "attribute" && self.source(f).ends_with(".add_argument"));
        if !is_add {
            return false;
        }
        let mut cursor = args.walk();
        let children: Vec<Node<'_>> = args.named_children(&mut cursor).collect();
        let flag = children.iter().find_map(|c| match literal(self.text, *c) {
            Some(OutlineValue::Str(s)) if s.starts_with("--") => Some((s, *c)),
            _ => None,
        });
        let Some((flag, flag_node)) = flag else {
            return false;
        };
        let keyword = |name: &str| {
            children.iter().find_map(|c| {
                (c.kind() == "keyword_argument"
                    && c.child_by_field_name("name")
                        .is_some_and(|n| self.source(n) == name))
                .then(|| c.child_by_field_name("value"))
                .flatten()
            })
        };
        let dest = keyword("dest")
            .and_then(|d| match literal(self.text, d) {
                Some(OutlineValue::Str(s)) => Some(s),
                _ => None,
            })
            .unwrap_or_else(|| flag.trim_start_matches('-').replace('-', "_"));
        if let Some(default) = keyword("default") {
            self.setting("", &dest, flag_node, default, PyForm::Keyword);
        }
        true
    }
}

/// True for an assignment that sets a module or class attribute (not a local variable).
fn attribute_level(assignment: Node<'_>) -> bool {
    let Some(statement) = assignment.parent() else {
        return false;
    };
    if statement.kind() != "expression_statement" {
        return false;
    }
    match statement.parent() {
        Some(p) if p.kind() == "module" => true,
        Some(p) if p.kind() == "block" => {
            p.parent().is_some_and(|c| c.kind() == "class_definition")
        }
        _ => false,
    }
}

/// A literal's value: numbers (with a sign), `True`/`False`, `None`, plain strings (no
/// f-string, no implicit concatenation).
fn literal(text: &str, node: Node<'_>) -> Option<OutlineValue> {
    // `((32))`, `-(-2)`: parentheses and signs are unwrapped in a loop, not by recursion
    // (a generated file may nest them thousands deep).
    let (mut node, mut negative, mut signed) = (node, false, false);
    for _ in 0..MAX_NESTING {
        match node.kind() {
            "parenthesized_expression" => {
                let mut cursor = node.walk();
                let inner: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                match inner.as_slice() {
                    [one] => node = *one,
                    _ => return None,
                }
            }
            "unary_operator" => {
                let src = node.utf8_text(text.as_bytes()).ok()?;
                negative ^= src.trim_start().starts_with('-');
                signed = true;
                node = node.child_by_field_name("argument")?;
            }
            _ => break,
        }
    }
    match (plain_literal(text, node)?, signed) {
        (OutlineValue::Int(i), _) if negative => Some(OutlineValue::Int(-i)),
        (OutlineValue::Float(f), _) if negative => Some(OutlineValue::Float(-f)),
        (v @ (OutlineValue::Int(_) | OutlineValue::Float(_)), true) => Some(v),
        (_, true) => None,
        (v, false) => Some(v),
    }
}

/// A literal without parentheses or a sign.
fn plain_literal(text: &str, node: Node<'_>) -> Option<OutlineValue> {
    let src = node.utf8_text(text.as_bytes()).ok()?;
    match node.kind() {
        "integer" => {
            let digits = src.replace('_', "");
            let v = if let Some(h) = digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                i64::from_str_radix(h, 16).ok()
            } else if let Some(o) = digits.strip_prefix("0o").or(digits.strip_prefix("0O")) {
                i64::from_str_radix(o, 8).ok()
            } else if let Some(b) = digits.strip_prefix("0b").or(digits.strip_prefix("0B")) {
                i64::from_str_radix(b, 2).ok()
            } else {
                digits.parse().ok()
            };
            Some(v.map_or_else(|| OutlineValue::Str(src.to_owned()), OutlineValue::Int))
        }
        "float" => src.replace('_', "").parse().ok().map(OutlineValue::Float),
        "true" => Some(OutlineValue::Bool(true)),
        "false" => Some(OutlineValue::Bool(false)),
        "none" => Some(OutlineValue::Null),
        "string" => {
            let mut cursor = node.walk();
            let mut content = String::new();
            for part in node.named_children(&mut cursor) {
                match part.kind() {
                    "string_start" => {
                        let start = part.utf8_text(text.as_bytes()).ok()?;
                        if start.contains(['f', 'F', 'b', 'B']) {
                            return None;
                        }
                    }
                    "string_content" | "escape_sequence" => {
                        content.push_str(part.utf8_text(text.as_bytes()).ok()?);
                    }
                    "string_end" => {}
                    _ => return None,
                }
            }
            Some(OutlineValue::Str(content))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(k: &Keys, path: &str) -> Option<OutlineValue> {
        k.value(path).map(|v| v.value.clone())
    }

    fn keys(text: &str) -> Keys {
        read(text).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn keyword_arguments_dict_entries_and_attributes() {
        let k = keys(
            "import tf\nBATCH = 4\nclass C:\n    workers: int = 2\n\
             def f():\n    local = 5\n    return AttrDict({\"fp16_run\": False, 'lr': 1e-3, \
             \"n\": len(s), \"neg\": -100})\n\
             hp = tf.contrib.training.HParams(\n  batch_size=32,  # comment\n  name='x',\n  none=None,\n)\n",
        );
        assert_eq!(value(&k, "BATCH"), Some(OutlineValue::Int(4)));
        assert_eq!(value(&k, "workers"), Some(OutlineValue::Int(2)));
        assert!(!k.has("local"), "a local variable is not a setting");
        assert_eq!(value(&k, "fp16_run"), Some(OutlineValue::Bool(false)));
        assert_eq!(value(&k, "lr"), Some(OutlineValue::Float(1e-3)));
        assert!(k.has("n") && k.value("n").is_none());
        assert_eq!(value(&k, "neg"), Some(OutlineValue::Int(-100)));
        assert_eq!(value(&k, "batch_size"), Some(OutlineValue::Int(32)));
        assert_eq!(value(&k, "name"), Some(OutlineValue::Str("x".into())));
        assert_eq!(value(&k, "none"), Some(OutlineValue::Null));
        let span = k.value("batch_size").map(|v| v.span);
        assert_eq!(span.map(|s| (s.line, s.column)), Some((9, 14)));
        assert_eq!(span.map(|s| k.slice(s)), Some("32"));
        assert_eq!(k.setting("fp16_run", "true"), "\"fp16_run\": True");
        assert_eq!(k.setting("batch_size", "32  # x"), "batch_size=32  # x");
        assert_eq!(k.setting("BATCH", "8"), "BATCH = 8");
    }

    #[test]
    fn nested_values_and_argparse_defaults() {
        let k = keys(
            "cfg = dict(train=dict(batch_size=8), data={\"loader\": {\"num_workers\": 0}})\n\
             p.add_argument('--pin-memory', action='store_true', default=False)\n\
             p.add_argument('-w', '--workers', type=int, default=4, dest='num_workers')\n",
        );
        assert_eq!(value(&k, "train.batch_size"), Some(OutlineValue::Int(8)));
        assert_eq!(
            value(&k, "data.loader.num_workers"),
            Some(OutlineValue::Int(0))
        );
        assert_eq!(
            k.entries()
                .iter()
                .find(|e| e.path == "train.batch_size")
                .map(|e| e.depth),
            Some(2)
        );
        assert_eq!(value(&k, "pin_memory"), Some(OutlineValue::Bool(false)));
        assert!(!k.has("action") && !k.has("type"));
        assert_eq!(value(&k, "num_workers"), Some(OutlineValue::Int(4)));
    }

    #[test]
    fn the_first_literal_wins() {
        let k = keys("DataLoader(ds, batch_size=hp.batch_size)\nhp = HParams(batch_size=16)\n");
        let v = k
            .value("batch_size")
            .map(|v| (v.value.clone(), v.span.line));
        assert_eq!(v, Some((OutlineValue::Int(16), 2)));
    }

    #[test]
    fn a_syntax_error_says_where() {
        // A missing comma: the next argument is where it stops parsing.
        let e = read("hp = HParams(\n  batch_size=32\n  fp16_run=False,\n)\n").err();
        let Some(Unreadable::Syntax { line, text, .. }) = e else {
            panic!("{e:?}");
        };
        assert_eq!((line, text.as_str()), (3, "fp16_run=False,"));
    }

    #[test]
    fn python_is_known_by_extension_or_by_content() {
        let py = "import x\nhp = dict(batch_size=2)\n";
        assert!(is_python(Path::new("hparams.py"), "a: 1\n"));
        assert!(!is_python(Path::new("c.yaml"), py));
        // YAML reads this as one plain string; it is Python.
        assert!(is_python(Path::new("hparams"), py));
        // YAML with `key: value` lines, or broken YAML, is not Python.
        assert!(!is_python(Path::new("c"), "import: x\n"));
        assert!(!is_python(Path::new("c"), "data: [1, 2\n"));
        assert!(!is_python(Path::new("c"), "x = 1\n"));
    }
}
