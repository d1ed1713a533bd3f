//! The Python lint (`gpufeed lint`): [`gpufeed_lint::lint_source`], tree-sitter's
//! parser and every rule over its tree.

use std::path::Path;

/// Lints `data` as a Python file (invalid UTF-8 replaced, as no reader of source does, but
/// so that every input reaches the parser).
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines = text.split('\n').count();
    for finding in gpufeed_lint::lint_source(&text, Path::new("fuzz-train.py")) {
        assert_eq!(
            finding.path.as_deref(),
            Some("fuzz-train.py"),
            "{}",
            finding.id
        );
        if let Some(line) = finding.line {
            assert!(
                (1..=lines).contains(&line),
                "`{}` at line {line} of {lines}",
                finding.id
            );
        }
    }
}
