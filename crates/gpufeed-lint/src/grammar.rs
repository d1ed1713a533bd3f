//! Parsing with tree-sitter-python, around the grammar's gaps on valid Python.
//!
//! tree-sitter-python (0.25) rejects a starred item that is not a name, a call, an
//! attribute or a subscript in a bare expression list: `a, b = *(x), y`, `return *[a], b`,
//! `for v in *(a), b:`, `x = *-y, z`. Python accepts them all (PEP 448's unpacking in
//! expression lists, Python 3.5 on; in `return` and `yield` from 3.8), and linting such a
//! file reported a `syntax-error` (exit 1) on working code. Where a parse has errors,
//! [`parse`] parses again with each unary `*` at or inside an error region blanked to a
//! space: one byte for one, so every offset and the text of every node but the splat stay
//! those of the file, and the rules read the file's own text. The second tree is kept only
//! where it has fewer errors, so a real syntax error is still reported. No crate fixes the
//! grammar; a fork of the grammar would be the alternative, and is far more to keep.

use tree_sitter::{Node, Parser, Tree};

/// Parses `src`; `None` where the parser gives up (a timeout or cancellation, neither of
/// which gpufeed sets).
pub(crate) fn parse(parser: &mut Parser, src: &str) -> Option<Tree> {
    let tree = parser.parse(src, None)?;
    if !tree.root_node().has_error() {
        return Some(tree);
    }
    let stars = stars_near_errors(tree.root_node(), src);
    if stars.is_empty() {
        return Some(tree);
    }
    let mut bytes = src.as_bytes().to_vec();
    for &s in &stars {
        bytes[s] = b' ';
    }
    // An ASCII byte for an ASCII byte: still UTF-8.
    let Ok(patched) = String::from_utf8(bytes) else {
        return Some(tree);
    };
    match parser.parse(&patched, None) {
        Some(again) if errors(again.root_node()) < errors(tree.root_node()) => Some(again),
        _ => Some(tree),
    }
}

/// The broken regions and missing tokens of a tree.
fn errors(root: Node<'_>) -> usize {
    let mut n = 0;
    crate::ast::walk(root, &mut |node| {
        if node.is_error() || node.is_missing() {
            n += 1;
            return false;
        }
        node.has_error()
    });
    n
}

/// The byte offsets of the unary `*`s inside an error region, or just before one (the
/// region then starts at the starred item).
fn stars_near_errors(root: Node<'_>, src: &str) -> Vec<usize> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    crate::ast::walk(root, &mut |node| {
        if !node.is_error() {
            return node.has_error();
        }
        let before = bytes[..node.start_byte()]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .filter(|&i| bytes[i] == b'*');
        out.extend(before);
        out.extend((node.start_byte()..node.end_byte()).filter(|&i| bytes[i] == b'*'));
        false
    });
    out.retain(|&i| unary(bytes, i));
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether the `*` at `i` unpacks (`= *x`, `, *x`, `return *x`), rather than multiplies
/// (`a * x`) or is half of `**`.
fn unary(bytes: &[u8], i: usize) -> bool {
    if bytes.get(i + 1) == Some(&b'*') || (i > 0 && bytes[i - 1] == b'*') {
        return false;
    }
    let head = &bytes[..i];
    let Some(end) = head.iter().rposition(|b| *b != b' ' && *b != b'\t') else {
        return true;
    };
    match head[end] {
        b'=' | b',' | b'(' | b'[' | b'{' | b':' | b';' | b'\n' => true,
        b if b.is_ascii_alphanumeric() || b == b'_' => {
            let start = head[..end]
                .iter()
                .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .map_or(0, |s| s + 1);
            matches!(&head[start..=end], b"return" | b"yield" | b"in" | b"else")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax_errors(src: &str) -> usize {
        let mut p = Parser::new();
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        assert!(p.set_language(&lang).is_ok());
        let tree = parse(&mut p, src).unwrap_or_else(|| panic!("no tree"));
        errors(tree.root_node())
    }

    #[test]
    fn starred_items_of_a_bare_expression_list_parse() {
        for src in [
            "a, b = *(x), y\n",
            "a = x, *(y)\n",
            "a = *[x],\n",
            "a = *-x, y\n",
            "a = *\"ab\", x\n",
            "return *(x), y\n",
            "x = yield *(a), b\n",
            "for a in *(x), y:\n    pass\n",
            "a[*(x), y]\n",
            "def f():\n    a, b = *(x + 1), y\n    return a * (b), c\n",
        ] {
            assert_eq!(syntax_errors(src), 0, "{src}");
        }
    }

    #[test]
    fn real_syntax_errors_stay() {
        for src in [
            "a = (1,\n",
            "a = *(x\n",
            "def f(:\n    pass\n",
            "a = b * * (c), d\n",
            "a = x ** (y), z +\n",
        ] {
            assert!(syntax_errors(src) > 0, "{src}");
        }
    }

    #[test]
    fn a_multiplication_is_not_blanked() {
        let src = b"a = b * (c)";
        assert!(!unary(src, 6));
        assert!(unary(b"a = *(c)", 4));
        assert!(unary(b"return *(c), d", 7));
        assert!(!unary(b"a = x ** (c)", 6));
        assert!(!unary(b"a = x ** (c)", 7));
    }
}
