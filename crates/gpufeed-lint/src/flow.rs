//! Where a value goes inside one function: whether the result of a call reaches the
//! function's `return` (or `yield`), through assignments, containers and calls, but not
//! through a call that turns it into something else (a feature computed from a waveform).
//!
//! `decode-per-item` asks this of every read: a waveform (or an image) that the item
//! returns is what the model trains on, so reading it per item is not a feature cost that
//! precomputing would save. Written by hand: no crate does data flow over tree-sitter's
//! Python tree, and a name-level pass (no aliasing, no fields) is all the rule needs.

use std::collections::HashSet;

use tree_sitter::Node;

use crate::ast::{text, walk};

/// True when the value of `start` (a call inside `def`) reaches what `def` returns. A call
/// for which `kills` is true ends the flow through its arguments (the value that comes out
/// is not the one that went in). `def` is a `function_definition` or a `lambda`.
pub(crate) fn reaches_return<'t>(
    def: Node<'t>,
    start: Node<'t>,
    src: &str,
    kills: &mut dyn FnMut(Node<'t>) -> bool,
) -> bool {
    let Some(body) = def.child_by_field_name("body") else {
        return false;
    };
    let mut tainted: HashSet<&str> = HashSet::new();
    if def.kind() == "lambda" {
        return carries(body, start, &tainted, src, kills);
    }
    // Two passes: a name tainted late in a loop's body reaches the loop's earlier lines.
    for _ in 0..2 {
        let mut found = false;
        walk(body, &mut |n| {
            if found {
                return false;
            }
            // The fields of what binds a value to a target.
            let fields = match n.kind() {
                "function_definition" | "class_definition" | "lambda" => return false,
                "return_statement" | "yield" => {
                    found = carries(n, start, &tainted, src, kills);
                    return !found;
                }
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                    ("left", "right")
                }
                "named_expression" => ("name", "value"),
                _ => return true,
            };
            if let (Some(target), Some(value)) = (
                n.child_by_field_name(fields.0),
                n.child_by_field_name(fields.1),
            ) && carries(value, start, &tainted, src, kills)
            {
                bind(target, src, &mut tainted);
            }
            true
        });
        if found {
            return true;
        }
    }
    false
}

/// Marks the names an assignment target binds: `a`, `a, b`, `[a, *b]`, and the object of
/// `a[k] = ...` or `a.k = ...` (the container now holds the value).
fn bind<'s>(target: Node<'_>, src: &'s str, tainted: &mut HashSet<&'s str>) {
    // A stack, not recursion: generated code nests patterns thousands deep.
    let mut stack = vec![target];
    while let Some(t) = stack.pop() {
        match t.kind() {
            "identifier" => {
                tainted.insert(text(t, src));
            }
            "subscript" => stack.extend(t.child_by_field_name("value")),
            "attribute" => stack.extend(t.child_by_field_name("object")),
            _ => {
                let mut c = t.walk();
                stack.extend(t.named_children(&mut c));
            }
        }
    }
}

/// True when `expr` holds `start` or a tainted name, with no killing call between it and
/// `expr`.
fn carries<'t>(
    expr: Node<'t>,
    start: Node<'t>,
    tainted: &HashSet<&str>,
    src: &str,
    kills: &mut dyn FnMut(Node<'t>) -> bool,
) -> bool {
    let mut leaves = Vec::new();
    walk(expr, &mut |n| {
        if n.id() == start.id() {
            leaves.push(n);
            return false;
        }
        if matches!(n.kind(), "lambda" | "function_definition") {
            return false;
        }
        if n.kind() == "identifier" && is_read(n) && tainted.contains(text(n, src)) {
            leaves.push(n);
        }
        true
    });
    leaves.into_iter().any(|leaf| {
        let mut n = leaf;
        while n.id() != expr.id() {
            let Some(p) = n.parent() else { break };
            if p.kind() == "call" && p.child_by_field_name("function") != Some(n) && kills(p) {
                return false;
            }
            n = p;
        }
        true
    })
}

/// An identifier that reads a variable: not the field name of `x.name`, nor the name of
/// a keyword argument.
fn is_read(id: Node<'_>) -> bool {
    let Some(p) = id.parent() else { return true };
    match p.kind() {
        "attribute" => p.child_by_field_name("attribute") != Some(id),
        "keyword_argument" => p.child_by_field_name("name") != Some(id),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Whether the first call named `read` in the first function reaches its return, with
    /// calls named `mel*` killing the flow.
    fn reaches(code: &str) -> bool {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(code, None).unwrap();
        let mut def = None;
        let mut start = None;
        walk(tree.root_node(), &mut |n| {
            if def.is_none() && matches!(n.kind(), "function_definition" | "lambda") {
                def = Some(n);
            }
            if start.is_none()
                && n.kind() == "call"
                && n.child_by_field_name("function")
                    .is_some_and(|f| text(f, code) == "read")
            {
                start = Some(n);
            }
            true
        });
        let mut kills = |c: Node<'_>| {
            c.child_by_field_name("function")
                .is_some_and(|f| text(f, code).starts_with("mel"))
        };
        reaches_return(def.unwrap(), start.unwrap(), code, &mut kills)
    }

    #[test]
    fn a_value_is_followed_to_the_return() {
        // Returned through assignments, methods, slices, containers and calls.
        assert!(reaches(
            "def f(p):\n    w, sr = read(p)\n    w = w[:100]\n    a = torch.from_numpy(w).float()\n    return {'audio': a.unsqueeze(0)}\n"
        ));
        assert!(reaches(
            "def f(p):\n    return torch.from_numpy(read(p)[0])\n"
        ));
        assert!(reaches(
            "def f(p):\n    out = {}\n    out['wav'] = read(p)\n    return out\n"
        ));
        assert!(reaches(
            "def f(p):\n    w = read(p)\n    m = mel(w)\n    return m, w\n"
        ));
        assert!(reaches("f = lambda p: norm(read(p))\n"));
        assert!(reaches(
            "def f(ps):\n    for p in ps:\n        yield read(p)\n"
        ));
        // Only a feature of it is returned, or nothing of it.
        assert!(!reaches(
            "def f(p):\n    w = read(p)\n    m = mel(w)\n    return m\n"
        ));
        assert!(!reaches(
            "def f(p):\n    w = read(p)\n    return mel_spec(torch.tensor(w))\n"
        ));
        assert!(!reaches(
            "def f(p):\n    w = read(p)\n    print(w.shape)\n    return p\n"
        ));
        // `self.wav` is not the local `wav`, nor is the keyword `wav=`.
        assert!(!reaches(
            "def f(self, p):\n    wav = read(p)\n    return self.wav, g(wav=1)\n"
        ));
    }
}
