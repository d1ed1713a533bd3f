//! Helpers over the tree-sitter-python syntax tree: dotted names resolved through the
//! file's imports, call arguments, the functions of the file, and tree walks that stop at
//! nested scopes.

use std::collections::HashMap;

use tree_sitter::Node;

/// The source text of a node (empty if the node does not fit the text).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// `a.b.c` for an identifier or a chain of attributes on an identifier.
pub(crate) fn dotted(node: Node<'_>, src: &str) -> Option<String> {
    // Iterative: generated code can chain attributes thousands deep.
    let mut parts = Vec::new();
    let mut n = node;
    loop {
        match n.kind() {
            "identifier" => {
                parts.push(text(n, src));
                break;
            }
            "attribute" => {
                parts.push(text(n.child_by_field_name("attribute")?, src));
                n = n.child_by_field_name("object")?;
            }
            _ => return None,
        }
    }
    parts.reverse();
    Some(parts.join("."))
}

/// Module aliases used when the file does not import the name (snippets and notebooks
/// exported to `.py` often rely on them).
const DEFAULT_ALIASES: &[(&str, &str)] = &[
    ("tf", "tensorflow"),
    ("np", "numpy"),
    ("sf", "soundfile"),
    ("tfds", "tensorflow_datasets"),
];

/// What each imported name stands for: `tf` -> `tensorflow`, `DataLoader` ->
/// `torch.utils.data.DataLoader`.
#[derive(Debug, Default)]
pub(crate) struct Names {
    aliases: HashMap<String, String>,
    /// True when the file imports anything from `torch`.
    pub(crate) imports_torch: bool,
    /// The modules the file imports everything from (`from tf2lib.utils import *`).
    pub(crate) star: Vec<String>,
}

impl Names {
    /// Collects every import of the file (at any depth: imports inside functions count).
    pub(crate) fn collect(root: Node<'_>, src: &str) -> Self {
        let mut names = Self::default();
        // `sync = torch.cuda.synchronize`: a name bound to an imported function, anywhere
        // in the file; `None` once the name is bound to anything else too.
        let mut bound: HashMap<&str, Option<String>> = HashMap::new();
        walk(root, &mut |n| {
            match n.kind() {
                "assignment" => {
                    if let Some(left) = n.child_by_field_name("left")
                        && left.kind() == "identifier"
                    {
                        let right = n
                            .child_by_field_name("right")
                            .filter(|r| r.kind() == "attribute")
                            .and_then(|r| dotted(r, src));
                        let slot = bound.entry(text(left, src)).or_insert(right.clone());
                        if *slot != right {
                            *slot = None;
                        }
                    }
                    return true;
                }
                "import_statement" => {
                    let mut c = n.walk();
                    for name in n.children_by_field_name("name", &mut c) {
                        names.import(name, None, src);
                    }
                }
                "import_from_statement" => {
                    let module = n
                        .child_by_field_name("module_name")
                        .map(|m| text(m, src).to_owned())
                        .unwrap_or_default();
                    let mut c = n.walk();
                    for name in n.children_by_field_name("name", &mut c) {
                        names.import(name, Some(&module), src);
                    }
                    let mut c = n.walk();
                    if n.children(&mut c).any(|w| w.kind() == "wildcard_import") {
                        names.star.push(module);
                    }
                }
                _ => return true,
            }
            false
        });
        for (name, target) in bound {
            if let Some(target) = target
                && !names.aliases.contains_key(name)
                && names.imports(target.split('.').next().unwrap_or(""))
            {
                let target = names.resolve(&target);
                names.aliases.insert(name.to_owned(), target);
            }
        }
        names
    }

    fn import(&mut self, name: Node<'_>, from: Option<&str>, src: &str) {
        let (full, alias) = match name.kind() {
            "aliased_import" => {
                let Some(n) = name.child_by_field_name("name") else {
                    return;
                };
                let alias = name
                    .child_by_field_name("alias")
                    .map(|a| text(a, src).to_owned());
                (text(n, src).to_owned(), alias)
            }
            _ => (text(name, src).to_owned(), None),
        };
        let full = match from {
            Some(module) => format!("{module}.{full}"),
            None => full,
        };
        if full.starts_with("torch") {
            self.imports_torch = true;
        }
        let (bound, target) = match (alias, from) {
            (Some(alias), _) => (alias, full),
            // `from a.b import c` binds `c` to `a.b.c`.
            (None, Some(_)) => (full.rsplit('.').next().unwrap_or(&full).to_owned(), full),
            // `import a.b.c` binds `a` to `a`.
            (None, None) => {
                let top = full.split('.').next().unwrap_or(&full).to_owned();
                (top.clone(), top)
            }
        };
        self.aliases.insert(bound, target);
    }

    /// What the file's imported names stand for (`lib.trainer.Trainer`, `utils`).
    pub(crate) fn targets(&self) -> impl Iterator<Item = &str> {
        self.aliases.values().map(String::as_str)
    }

    /// True when `head` is a name the file imports (or a usual alias: `tf`, `np`).
    pub(crate) fn imports(&self, head: &str) -> bool {
        self.aliases.contains_key(head) || DEFAULT_ALIASES.iter().any(|(a, _)| *a == head)
    }

    /// The canonical dotted name: the first segment replaced by what it was imported as.
    pub(crate) fn resolve(&self, dotted: &str) -> String {
        let (head, rest) = dotted.split_once('.').map_or((dotted, ""), |(h, r)| (h, r));
        let target = self.aliases.get(head).map(String::as_str).or_else(|| {
            DEFAULT_ALIASES
                .iter()
                .find(|(alias, _)| *alias == head)
                .map(|(_, module)| *module)
        });
        match (target, rest.is_empty()) {
            (Some(t), true) => t.to_owned(),
            (Some(t), false) => format!("{t}.{rest}"),
            (None, _) => dotted.to_owned(),
        }
    }

    /// The canonical name of a call's function, when it is a dotted name.
    pub(crate) fn callee(&self, call: Node<'_>, src: &str) -> Option<String> {
        let function = call.child_by_field_name("function")?;
        dotted(function, src).map(|d| self.resolve(&d))
    }
}

/// For `x.m(...)`: `m`.
pub(crate) fn method<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    let function = call.child_by_field_name("function")?;
    (function.kind() == "attribute")
        .then(|| function.child_by_field_name("attribute"))
        .flatten()
        .map(|a| text(a, src))
}

/// For `x.m(...)`: `x`.
pub(crate) fn receiver(call: Node<'_>) -> Option<Node<'_>> {
    let function = call.child_by_field_name("function")?;
    (function.kind() == "attribute")
        .then(|| function.child_by_field_name("object"))
        .flatten()
}

/// The value of keyword argument `name`.
pub(crate) fn kwarg<'t>(call: Node<'t>, name: &str, src: &str) -> Option<Node<'t>> {
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    args.named_children(&mut c)
        .filter(|a| a.kind() == "keyword_argument")
        .find(|a| {
            a.child_by_field_name("name")
                .is_some_and(|n| text(n, src) == name)
        })
        .and_then(|a| a.child_by_field_name("value"))
}

/// The `i`-th positional argument.
pub(crate) fn positional(call: Node<'_>, i: usize) -> Option<Node<'_>> {
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    args.named_children(&mut c)
        .filter(|a| {
            !matches!(
                a.kind(),
                "keyword_argument" | "comment" | "list_splat" | "dictionary_splat"
            )
        })
        .nth(i)
}

/// The keyword names a call passes (`sr` of `load(p, sr=22050)`).
pub(crate) fn keywords<'s>(call: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let Some(args) = call.child_by_field_name("arguments") else {
        return Vec::new();
    };
    let mut c = args.walk();
    args.named_children(&mut c)
        .filter(|a| a.kind() == "keyword_argument")
        .filter_map(|a| a.child_by_field_name("name").map(|n| text(n, src)))
        .collect()
}

/// True when some argument of the call (positional, or a keyword's value) satisfies `f`.
pub(crate) fn args_any(call: Node<'_>, mut f: impl FnMut(Node<'_>) -> bool) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut c = args.walk();
    args.named_children(&mut c).any(|a| match a.kind() {
        "keyword_argument" => a.child_by_field_name("value").is_some_and(&mut f),
        "comment" | "list_splat" | "dictionary_splat" => false,
        _ => f(a),
    })
}

/// True when the call passes `*args` or `**kwargs` (its arguments cannot be known).
pub(crate) fn has_splat(call: Node<'_>) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut c = args.walk();
    args.named_children(&mut c)
        .any(|a| matches!(a.kind(), "list_splat" | "dictionary_splat"))
}

/// The number of arguments of a call.
pub(crate) fn arg_count(call: Node<'_>) -> usize {
    call.child_by_field_name("arguments").map_or(0, |a| {
        let mut c = a.walk();
        a.named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .count()
    })
}

/// `False`, `0` or `None` written literally.
pub(crate) fn is_falsy_literal(node: Node<'_>, src: &str) -> bool {
    match node.kind() {
        "false" | "none" => true,
        "integer" => text(node, src).trim_start_matches('0').is_empty(),
        "string" => matches!(text(node, src), "''" | "\"\""),
        _ => false,
    }
}

/// `True` written literally.
pub(crate) fn is_true(node: Node<'_>) -> bool {
    node.kind() == "true"
}

/// Pre-order walk; `visit` returns whether to descend into the node's children. One tree
/// cursor, no allocation per node (linting a repository is mostly these walks).
pub(crate) fn walk<'t>(node: Node<'t>, visit: &mut impl FnMut(Node<'t>) -> bool) {
    let mut cursor = node.walk();
    let mut descend = visit(node);
    // The depth below the start node, kept here: tree-sitter's `TreeCursor::depth` walks
    // the cursor's whole stack, which made this walk quadratic in the nesting (50,000
    // nested parentheses took minutes).
    let mut depth = 0usize;
    loop {
        if descend && cursor.goto_first_child() {
            depth += 1;
            descend = visit(cursor.node());
            continue;
        }
        // Next sibling, else up until a node has one; the start node's siblings are not
        // part of the walk.
        loop {
            if depth == 0 {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = visit(cursor.node());
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}

/// True for nodes that open a new scope (their bodies run elsewhere, later, or never).
pub(crate) fn is_scope(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "function_definition" | "class_definition" | "lambda" | "decorated_definition"
    )
}

/// Every call under `node`, not descending into nested functions, classes or lambdas.
pub(crate) fn calls_in<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    walk(node, &mut |n| {
        if n.id() != node.id() && is_scope(n) {
            return false;
        }
        if n.kind() == "call" {
            out.push(n);
        }
        true
    });
    out
}

/// Every function definition of the file by name (methods included).
pub(crate) fn functions<'t>(root: Node<'t>, src: &str) -> HashMap<String, Vec<Node<'t>>> {
    let mut out: HashMap<String, Vec<Node<'t>>> = HashMap::new();
    walk(root, &mut |n| {
        if n.kind() == "function_definition"
            && let Some(name) = n.child_by_field_name("name")
        {
            out.entry(text(name, src).to_owned()).or_default().push(n);
        }
        true
    });
    out
}

/// Every class definition of the file by name.
pub(crate) fn classes<'t>(root: Node<'t>, src: &str) -> HashMap<String, Vec<Node<'t>>> {
    let mut out: HashMap<String, Vec<Node<'t>>> = HashMap::new();
    walk(root, &mut |n| {
        if n.kind() == "class_definition"
            && let Some(name) = n.child_by_field_name("name")
        {
            out.entry(text(name, src).to_owned()).or_default().push(n);
        }
        true
    });
    out
}

/// The methods named `name` defined directly in class `class`.
pub(crate) fn methods<'t>(class: Node<'t>, name: &str, src: &str) -> Vec<Node<'t>> {
    let Some(body) = class.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut c = body.walk();
    body.named_children(&mut c)
        .filter_map(|n| match n.kind() {
            "function_definition" => Some(n),
            "decorated_definition" => n.child_by_field_name("definition"),
            _ => None,
        })
        .filter(|d| {
            d.child_by_field_name("name")
                .is_some_and(|x| text(x, src) == name)
        })
        .collect()
}

/// The names of a function's parameters in order, a method's `self` / `cls` left out:
/// the names positional arguments bind to (`*args`, `**kwargs` and the bare `*` are not).
pub(crate) fn param_names<'s>(def: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let Some(params) = def.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut c = params.walk();
    let mut names: Vec<&str> = params
        .named_children(&mut c)
        .filter_map(|p| match p.kind() {
            "identifier" => Some(text(p, src)),
            "default_parameter" | "typed_parameter" | "typed_default_parameter" => p
                .child_by_field_name("name")
                .or_else(|| p.named_child(0))
                .map(|n| text(n, src)),
            _ => None,
        })
        .collect();
    if names.first().is_some_and(|n| matches!(*n, "self" | "cls")) {
        names.remove(0);
    }
    names
}

/// The operators of a comparison or a boolean operation, in order: `["is", "not"]` for
/// `x is not None`, `["=="]` for `a == b`.
pub(crate) fn operators<'s>(node: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let mut c = node.walk();
    node.children(&mut c)
        .filter(|o| !o.is_named())
        .map(|o| text(o, src))
        .collect()
}

/// The name of a function's `**kwargs` parameter, if it has one.
pub(crate) fn dict_splat_param<'s>(def: Node<'_>, src: &'s str) -> Option<&'s str> {
    let params = def.child_by_field_name("parameters")?;
    let mut c = params.walk();
    params
        .named_children(&mut c)
        .find(|p| p.kind() == "dictionary_splat_pattern")
        .and_then(|p| p.named_child(0))
        .map(|n| text(n, src))
}

/// The innermost node of `kind` (a class, a function) that `node` is inside, if any.
///
/// Found from `root` down: tree-sitter finds a node's parent from the root, so climbing
/// with `parent()` costs the square of the depth, minutes for a call at the bottom of a
/// generated chain 50,000 calls long.
pub(crate) fn enclosing<'t>(root: Node<'t>, node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut found = None;
    let mut n = root;
    while n.id() != node.id() {
        if n.kind() == kind {
            found = Some(n);
        }
        n = n.child_with_descendant(node)?;
    }
    found
}

/// An expression without the parentheses around it; `None` for parentheses that hold
/// nothing.
pub(crate) fn unparenthesized(node: Node<'_>) -> Option<Node<'_>> {
    let mut n = node;
    while n.kind() == "parenthesized_expression" {
        n = n.named_child(0)?;
    }
    Some(n)
}

/// An `if`'s (or `elif`'s, `while`'s) condition without the parentheses around it.
pub(crate) fn bare_condition(node: Node<'_>) -> Option<Node<'_>> {
    unparenthesized(node.child_by_field_name("condition")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        assert!(p.set_language(&lang).is_ok());
        p.parse(src, None).unwrap_or_else(|| panic!("no tree"))
    }

    #[test]
    fn imports_resolve() {
        let src = "import tensorflow as tf\nimport torch.nn\nfrom torch.utils.data import DataLoader as DL\n\
                   from torch import nn\nimport os.path\n";
        let tree = parse(src);
        let names = Names::collect(tree.root_node(), src);
        assert_eq!(names.resolve("tf.data.Dataset"), "tensorflow.data.Dataset");
        assert_eq!(names.resolve("DL"), "torch.utils.data.DataLoader");
        assert_eq!(names.resolve("nn.DataParallel"), "torch.nn.DataParallel");
        assert_eq!(
            names.resolve("torch.nn.DataParallel"),
            "torch.nn.DataParallel"
        );
        assert_eq!(names.resolve("np.load"), "numpy.load");
        assert_eq!(names.resolve("os.path.join"), "os.path.join");
        assert_eq!(names.resolve("x.y"), "x.y");
        assert!(names.imports_torch);
    }

    #[test]
    fn arguments() {
        let src = "DataLoader(ds, 32, True, None, None, 4, pin_memory=False)\n";
        let tree = parse(src);
        let mut call = None;
        walk(tree.root_node(), &mut |n| {
            if n.kind() == "call" {
                call = Some(n);
            }
            true
        });
        let call = call.unwrap_or_else(|| panic!("no call"));
        assert_eq!(
            crate::signatures::arg(call, "torch.utils.data.DataLoader", "num_workers", src)
                .map(|n| text(n, src)),
            Some("4")
        );
        assert!(kwarg(call, "pin_memory", src).is_some_and(|n| is_falsy_literal(n, src)));
        assert_eq!(arg_count(call), 7);
        assert!(!has_splat(call));
    }
}
