//! The default values a setting gets when nothing overrides it, over the project's files:
//! a command-line flag's (`add_argument("--num_workers", type=int, default=0)`), a
//! constructor parameter's (`def __init__(self, num_workers: int = 0)`, what Lightning's
//! `save_hyperparameters` puts in `self.hparams`) and a dataclass field's (`num_workers: int
//! = 0`). `DataLoader(num_workers=self.hparams.num_workers)` is judged by the default: the
//! loader has no workers unless the user passes some.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::ast::{self, text};

/// One `parser.add_argument(...)`: its destination name, `action=` and `default=`.
pub(crate) struct Argument<'t> {
    pub(crate) dest: String,
    pub(crate) action: Option<&'t str>,
    pub(crate) default: Option<Node<'t>>,
}

/// The `add_argument` calls of a file, and absl's `flags.DEFINE_*('name', default, ...)`.
/// The destination is `dest=`, else the long option with dashes made underscores
/// (`--sync-step` is `sync_step`), else the first short one (`-data_pkl`, `-b`), as
/// argparse names it; for absl, the flag's name.
///
/// One argument per destination, with the default argparse gives it: the first action's
/// (`--pin_mem` with `store_true` before `--no_pin_mem` with `store_false`,
/// `dest="pin_mem"`), unless `parser.set_defaults(pin_mem=True)` sets it, which wins over
/// every action's.
pub(crate) fn arguments<'t>(root: Node<'t>, src: &'t str) -> Vec<Argument<'t>> {
    // Per parser (the receiver: `parser`, `p`; absl's `flags`): two parsers of one file
    // that set the same name are two settings, which `resolved` does not pick between.
    let mut out: Vec<(&'t str, Argument<'t>)> = Vec::new();
    let mut parser_defaults: Vec<(&'t str, &'t str, Node<'t>)> = Vec::new();
    for (parser, a) in actions(root, src, &mut parser_defaults) {
        if !out.iter().any(|(p, o)| *p == parser && o.dest == a.dest) {
            out.push((parser, a));
        }
    }
    for (parser, dest, value) in parser_defaults {
        if let Some((_, a)) = out.iter_mut().find(|(p, a)| *p == parser && a.dest == dest) {
            a.default = Some(value);
        }
    }
    out.into_iter().map(|(_, a)| a).collect()
}

/// Every `add_argument` and absl `DEFINE_*` of a file in order (see [`arguments`]), each
/// with the text of its receiver, and the keywords of its `set_defaults(...)` calls into
/// `parser_defaults` (receiver, name, value).
fn actions<'t>(
    root: Node<'t>,
    src: &'t str,
    parser_defaults: &mut Vec<(&'t str, &'t str, Node<'t>)>,
) -> Vec<(&'t str, Argument<'t>)> {
    let receiver = |n: Node<'t>| ast::receiver(n).map_or("", |r| text(r, src));
    let unquote = |n: Node<'_>| text(n, src).trim_matches(|c| c == '"' || c == '\'');
    let mut out = Vec::new();
    ast::walk(root, &mut |n| {
        if n.kind() == "call"
            && ast::method(n, src) == Some("set_defaults")
            && let Some(args) = n.child_by_field_name("arguments")
        {
            let mut c = args.walk();
            for k in args.named_children(&mut c) {
                if k.kind() == "keyword_argument"
                    && let (Some(name), Some(value)) = (
                        k.child_by_field_name("name"),
                        k.child_by_field_name("value"),
                    )
                {
                    parser_defaults.push((receiver(n), text(name, src), value));
                }
            }
        }
        if n.kind() == "call" && ast::method(n, src) == Some("add_argument") {
            // argparse: the first long option, else the first short one (`-data_pkl`).
            let options: Vec<&str> = (0..3)
                .filter_map(|i| ast::positional(n, i))
                .map(unquote)
                .filter(|a| a.starts_with('-'))
                .collect();
            let long = options
                .iter()
                .find(|a| a.starts_with("--"))
                .or(options.first())
                .copied();
            let dest = ast::kwarg(n, "dest", src)
                .map(|d| unquote(d).to_owned())
                .or_else(|| long.map(|l| l.trim_start_matches('-').replace('-', "_")));
            if let Some(dest) = dest {
                out.push((
                    receiver(n),
                    Argument {
                        dest,
                        action: ast::kwarg(n, "action", src).map(|a| text(a, src)),
                        default: ast::kwarg(n, "default", src),
                    },
                ));
            }
        } else if n.kind() == "call"
            && ast::method(n, src).is_some_and(|m| m.starts_with("DEFINE_"))
            && let Some(name) = ast::positional(n, 0).or_else(|| ast::kwarg(n, "name", src))
            && name.kind() == "string"
        {
            out.push((
                receiver(n),
                Argument {
                    dest: unquote(name).to_owned(),
                    action: None,
                    default: ast::positional(n, 1).or_else(|| ast::kwarg(n, "default", src)),
                },
            ));
        }
        true
    });
    out
}

/// The callables that build a settings object from keywords.
const SETTINGS_OBJECTS: &[&str] = &[
    "HParams",
    "dict",
    "Namespace",
    "SimpleNamespace",
    "EasyDict",
    "edict",
    "Munch",
    "AttrDict",
    "DotMap",
];

/// A default and where it is set (`train.py:30`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DefaultValue {
    /// The literal as written (`0`, `False`); `None` when it is not a literal.
    pub(crate) value: Option<String>,
    pub(crate) at: String,
}

/// Every default of file `root` by name: flags, `__init__` parameters, class-level
/// annotated fields, the keywords of a settings object (`HParams(num_workers=0)`,
/// `dict(...)`) and module constants set to a number or a bool.
pub(crate) fn collect(root: Node<'_>, src: &str, file: &str) -> HashMap<String, Vec<DefaultValue>> {
    let mut out: HashMap<String, Vec<DefaultValue>> = HashMap::new();
    let mut add = |name: &str, value: Option<String>, at: String| {
        out.entry(name.to_owned())
            .or_default()
            .push(DefaultValue { value, at });
    };
    let literal = |v: Option<Node<'_>>| {
        v.filter(|v| is_literal(*v, src))
            .map(|v| text(v, src).to_owned())
    };
    let line = |at: Node<'_>| format!("{file}:{}", at.start_position().row + 1);
    // `@property def num_workers(self): return int(os.getenv(...))`: a value computed when
    // read, so no default of the name elsewhere (another class's `__init__` parameter)
    // says what `dataset.num_workers` is (FastDiff's `BaseDataset`).
    ast::walk(root, &mut |n| {
        if n.kind() == "decorated_definition" {
            let mut c = n.walk();
            let property = n
                .named_children(&mut c)
                .any(|d| d.kind() == "decorator" && text(d, src).trim() == "@property");
            if property
                && let Some(name) = n
                    .child_by_field_name("definition")
                    .and_then(|d| d.child_by_field_name("name"))
            {
                add(text(name, src), None, line(name));
            }
        }
        // Properties sit in class bodies: not inside a function's.
        n.kind() != "function_definition"
    });
    for a in arguments(root, src) {
        if let Some(d) = a.default {
            add(&a.dest, literal(Some(d)), line(d));
        } else if a.action.is_some_and(|x| x.contains("store_true")) {
            add(&a.dest, Some("False".to_owned()), file.to_owned());
        }
    }
    // `log_interval = 1` at the top of a script (lit-llama's settings): a module constant.
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        if stmt.kind() == "expression_statement"
            && let Some(a) = stmt.named_child(0).filter(|a| a.kind() == "assignment")
            && let (Some(left), Some(right)) = (
                a.child_by_field_name("left"),
                a.child_by_field_name("right"),
            )
            && left.kind() == "identifier"
            && matches!(right.kind(), "integer" | "true" | "false")
        {
            add(text(left, src), literal(Some(right)), line(a));
        }
    }
    ast::walk(root, &mut |n| {
        match n.kind() {
            "function_definition"
                if n.child_by_field_name("name")
                    .is_some_and(|x| text(x, src) == "__init__") =>
            {
                if let Some(params) = n.child_by_field_name("parameters") {
                    let mut c = params.walk();
                    for p in params.named_children(&mut c) {
                        if matches!(p.kind(), "default_parameter" | "typed_default_parameter")
                            && let Some(name) = p.child_by_field_name("name")
                        {
                            add(
                                text(name, src),
                                literal(p.child_by_field_name("value")),
                                line(p),
                            );
                        }
                    }
                }
            }
            // `hparams = HParams(batch_size=16, num_workers=0)` (SpeechSplit's settings),
            // `cfg = dict(...)`, `EasyDict(...)`, `Namespace(...)`: a settings object's
            // keywords.
            "assignment"
                if n.child_by_field_name("right").is_some_and(|r| {
                    r.kind() == "call"
                        && r.child_by_field_name("function").is_some_and(|f| {
                            let f = text(f, src);
                            SETTINGS_OBJECTS.contains(&f.rsplit('.').next().unwrap_or(f))
                        })
                }) =>
            {
                if let Some(args) = n
                    .child_by_field_name("right")
                    .and_then(|r| r.child_by_field_name("arguments"))
                {
                    let mut c = args.walk();
                    for k in args.named_children(&mut c) {
                        if k.kind() == "keyword_argument"
                            && let Some(name) = k.child_by_field_name("name")
                        {
                            add(
                                text(name, src),
                                literal(k.child_by_field_name("value")),
                                line(k),
                            );
                        }
                    }
                }
            }
            // `num_workers: int = 0` in a class body (a dataclass or a config class).
            "assignment"
                if n.child_by_field_name("type").is_some()
                    && n.parent()
                        .and_then(|s| s.parent())
                        .is_some_and(|b| b.kind() == "block")
                    && ast::enclosing(root, n, "function_definition").is_none()
                    && ast::enclosing(root, n, "class_definition").is_some() =>
            {
                if let Some(left) = n.child_by_field_name("left")
                    && left.kind() == "identifier"
                {
                    add(
                        text(left, src),
                        literal(n.child_by_field_name("right")),
                        line(n),
                    );
                }
            }
            _ => {}
        }
        true
    });
    out
}

/// The keyword names a file passes a value other than `False`, `None` or `0` to
/// (`MultiheadAttention(..., add_zero_attn=True)`): a setting someone turns on. A flag off
/// unless given (`validate=args.validate` with `--validate` a `store_true`, in `off`), or a
/// setting whose default is off (`print_nan_grads=hparams['print_nan_grads']` with
/// `print_nan_grads: false` in the project's YAML), turns nothing on.
pub(crate) fn turned_on(root: Node<'_>, src: &str, off: &HashSet<String>) -> HashSet<String> {
    let mut out = HashSet::new();
    ast::walk(root, &mut |n| {
        if n.kind() == "keyword_argument"
            && let (Some(name), Some(value)) = (
                n.child_by_field_name("name"),
                n.child_by_field_name("value"),
            )
            && !ast::is_falsy_literal(value, src)
            && !(matches!(value.kind(), "attribute" | "identifier")
                && off.contains(text(value, src).rsplit('.').next().unwrap_or("")))
            && !read_setting(value, src).is_some_and(|k| off.contains(k))
        {
            out.insert(text(name, src).to_owned());
        }
        true
    });
    out
}

/// What a file assigns to attributes (`self.infer = False`, `model.infer = True`): for
/// each attribute name, whether every assignment is a falsy literal (`False`, `None`, `0`,
/// `''`), and whether one is `self`'s. `None` where the file sets attributes by a name it
/// computes (`setattr(self, k, v)`, `self.__dict__.update(...)`, `vars(self)[k] = v`),
/// which may set any of them.
///
/// An attribute the whole project only ever sets falsy is a switch nothing turns on: `if
/// self.infer:` with `self.infer = False` in `__init__` and no `model.infer = True`
/// anywhere is the inference path, not the step.
pub(crate) fn attribute_values(root: Node<'_>, src: &str) -> Option<HashMap<String, (bool, bool)>> {
    let mut out: HashMap<String, (bool, bool)> = HashMap::new();
    let mut dynamic = false;
    ast::walk(root, &mut |n| {
        match n.kind() {
            "assignment" | "augmented_assignment" => {
                let falsy = n.kind() == "assignment"
                    && n.child_by_field_name("right")
                        .is_some_and(|v| ast::is_falsy_literal(v, src));
                let Some(left) = n.child_by_field_name("left") else {
                    return true;
                };
                // `self.a, self.b = x, y` and `self.a = self.b = False` are set alike: only
                // a literal on the right is falsy.
                let mut targets = vec![left];
                if matches!(left.kind(), "pattern_list" | "tuple_pattern") {
                    let mut c = left.walk();
                    targets = left.named_children(&mut c).collect();
                }
                for t in targets {
                    if t.kind() == "attribute"
                        && let Some(a) = t.child_by_field_name("attribute")
                    {
                        let own = t
                            .child_by_field_name("object")
                            .is_some_and(|o| text(o, src) == "self");
                        let (only, mine) =
                            out.entry(text(a, src).to_owned()).or_insert((true, false));
                        *only &= falsy;
                        *mine |= own;
                    }
                    if t.kind() == "subscript"
                        && t.child_by_field_name("value").is_some_and(|v| {
                            let v = text(v, src);
                            v.contains("__dict__") || v.starts_with("vars(")
                        })
                    {
                        dynamic = true;
                    }
                }
            }
            "call" => {
                let f = n
                    .child_by_field_name("function")
                    .map_or("", |f| text(f, src));
                if f == "setattr" {
                    // `setattr(obj, "name", v)`: the name is the second argument.
                    if let Some(k) = n
                        .child_by_field_name("arguments")
                        .and_then(|a| a.named_child(1))
                        .filter(|k| k.kind() == "string")
                    {
                        let name = text(k, src).trim_matches(|c| c == '"' || c == '\'');
                        out.insert(name.to_owned(), (false, false));
                    } else {
                        dynamic = true;
                    }
                }
                if f.ends_with("__dict__.update")
                    || (f.starts_with("vars(") && f.ends_with(".update"))
                {
                    dynamic = true;
                }
            }
            _ => {}
        }
        true
    });
    (!dynamic).then_some(out)
}

/// A literal a default is read from: a number, a bool, `None`, or an empty string (`noise_dir:
/// str = ''`, a path that turns a feature on when given).
fn is_literal(n: Node<'_>, src: &str) -> bool {
    matches!(n.kind(), "integer" | "true" | "false" | "none")
        || (n.kind() == "string" && is_empty_string(text(n, src)))
}

/// `''` or `""`.
pub(crate) fn is_empty_string(literal: &str) -> bool {
    matches!(literal, "''" | "\"\"")
}

/// The one default of `name` over the project, when every place that sets one agrees.
pub(crate) fn resolved<'d>(
    defaults: &'d HashMap<String, Vec<DefaultValue>>,
    name: &str,
) -> Option<&'d DefaultValue> {
    let all = defaults.get(name)?;
    let first = all.first()?;
    first.value.as_ref()?;
    all.iter().all(|d| d.value == first.value).then_some(first)
}

/// The setting's name an argument reads, when it reads one through an object:
/// `self.hparams.num_workers`, `args.num_workers`, `cfg.data.num_workers`,
/// `self.num_workers`, `cfg["train"]["num_workers"]` give `num_workers`. A bare name is left alone: a function's own
/// parameter is set by its callers.
pub(crate) fn read_setting<'s>(arg: Node<'_>, src: &'s str) -> Option<&'s str> {
    match arg.kind() {
        "attribute" => arg.child_by_field_name("attribute").map(|a| text(a, src)),
        // `cfg["train"]["num_workers"]`: a config read as a mapping.
        "subscript" => arg
            .child_by_field_name("subscript")
            .filter(|k| k.kind() == "string")
            .map(|k| {
                text(k, src)
                    .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                    .trim_matches(|c| c == '"' || c == '\'')
            })
            .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')),
        _ => None,
    }
}

/// The names a read of a setting goes through, outermost first, without `self`:
/// `hp.train.num_workers` and `self.cfg["train"]["num_workers"]` give `["hp", "train",
/// "num_workers"]` and `["cfg", "train", "num_workers"]`; anything else (a call, an index
/// that is not a string) gives nothing.
pub(crate) fn setting_keys<'s>(arg: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let mut keys = Vec::new();
    let mut n = arg;
    for _ in 0..16 {
        match n.kind() {
            "attribute" | "subscript" => {
                let Some(key) = read_setting(n, src) else {
                    return Vec::new();
                };
                keys.push(key);
                let Some(inner) = n
                    .child_by_field_name("object")
                    .or_else(|| n.child_by_field_name("value"))
                else {
                    return Vec::new();
                };
                n = inner;
            }
            "identifier" => {
                let name = text(n, src);
                if name != "self" {
                    keys.push(name);
                }
                keys.reverse();
                return keys;
            }
            _ => return Vec::new(),
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn defaults(code: &str) -> HashMap<String, Vec<DefaultValue>> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(code, None).unwrap();
        collect(tree.root_node(), code, "t.py")
    }

    #[test]
    fn defaults_of_flags_constructors_and_fields() {
        let d = defaults(
            "\
p.add_argument('--num-workers', type=int, default=0)
p.add_argument('--fast', action='store_true')
class DM:
    def __init__(self, pin_memory: bool = False, batch_size=32, root=ROOT):
        self.save_hyperparameters()
@dataclass
class Cfg:
    prefetch: int = 2
    def f(self, x: int = 5):
        y: int = 3
",
        );
        let v = |n: &str| resolved(&d, n).and_then(|d| d.value.clone());
        assert_eq!(v("num_workers").as_deref(), Some("0"));
        assert_eq!(v("fast").as_deref(), Some("False"));
        assert_eq!(v("pin_memory").as_deref(), Some("False"));
        assert_eq!(v("batch_size").as_deref(), Some("32"));
        assert_eq!(v("prefetch").as_deref(), Some("2"));
        assert_eq!(resolved(&d, "pin_memory").unwrap().at, "t.py:4");
        // Not a literal, not an __init__, not a class field.
        assert_eq!(v("root"), None);
        assert_eq!(v("x"), None);
        assert_eq!(v("y"), None);
        // Two places that disagree: no default.
        let d = defaults("p.add_argument('--n', default=0)\nq.add_argument('--n', default=4)\n");
        assert!(resolved(&d, "n").is_none());
    }
}
