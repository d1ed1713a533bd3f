//! Properties: the lint never panics on arbitrary input, however deep it nests.

use std::path::Path;

use gpufeed_lint::lint_source;
use proptest::prelude::*;

proptest! {
    #[test]
    fn lint_never_panics(src in "\\PC{0,400}") {
        let _ = lint_source(&src, Path::new("p.py"));
    }

    #[test]
    fn lint_never_panics_on_python_like_text(
        src in "((import|for|while|if|def|class|return|lambda|tf|torch|\\.|map|batch|item|\\(|\\)|:|\\n|    |x|=|,|#|'|\")){0,80}"
    ) {
        let _ = lint_source(&src, Path::new("p.py"));
    }
}

#[test]
fn deep_nesting_does_not_exhaust_the_stack() {
    let n = 50_000;
    for src in [
        format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n)),
        format!("x = {}{}\n", "f(".repeat(n), ")".repeat(n)),
        format!("x = a{}\n", ".b".repeat(n)),
        format!("x = {}{}\n", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1\n", "lambda: ".repeat(5_000)),
        // A tensor method chain inside a training loop (the sync rules follow it).
        format!(
            "for b in loader:\n    loss = model(b)\n    loss.backward()\n    print(float(loss{}))\n",
            ".squeeze()".repeat(n)
        ),
    ] {
        let _ = lint_source(&src, Path::new("deep.py"));
    }
}
