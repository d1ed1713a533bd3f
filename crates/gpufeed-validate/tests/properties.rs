//! Properties: validate never panics on arbitrary input, and `--fix` changes nothing
//! outside the values it rewrites and has nothing left to do the second time.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use gpufeed_validate::fix::plan;
use gpufeed_validate::{Context, validate_text};
use proptest::prelude::*;

/// A value as a trainer's YAML may spell it, PyYAML traps included.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("1e-4".to_owned()),
        Just("1.0e-4".to_owned()),
        Just("5e3".to_owned()),
        Just("010".to_owned()),
        Just("yes".to_owned()),
        Just("off".to_owned()),
        Just("'quoted'".to_owned()),
        Just("[a, b]".to_owned()),
        (0u32..5000).prop_map(|n| n.to_string()),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("learning_rate".to_owned()),
        Just("min_learning_rate".to_owned()),
        Just("num_worker".to_owned()),
        Just("batch_sise".to_owned()),
        Just("language".to_owned()),
        Just("mystery".to_owned()),
        Just("epochs".to_owned()),
    ]
}

fn config() -> impl Strategy<Value = String> {
    let line = (
        key(),
        value(),
        prop::option::of("[ a-z#]{0,12}"),
        any::<bool>(),
    );
    (
        prop::sample::select(vec!["data", "training", "model"]),
        prop::collection::vec(line, 0..8),
        any::<bool>(),
    )
        .prop_map(|(section, lines, crlf)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut out = format!("# header{nl}{section}:{nl}");
            let mut seen = std::collections::HashSet::new();
            for (k, v, comment, blank) in lines {
                if !seen.insert(k.clone()) {
                    continue; // duplicate keys are an error; keep the file loadable
                }
                out.push_str(&format!("  {k}: {v}"));
                if let Some(c) = comment {
                    out.push_str(&format!("  # {c}"));
                }
                out.push_str(nl);
                if blank {
                    out.push_str(nl);
                }
            }
            out
        })
}

proptest! {
    #[test]
    fn validate_never_panics(src in "\\PC{0,300}") {
        let _ = validate_text(&src, Path::new("c.yaml"), &Context::new(Some(4), gpufeed_validate::CoresOf::TrainingMachine));
    }

    #[test]
    fn fix_keeps_the_rest_and_is_idempotent(text in config()) {
        let ctx = Context::default();
        let v = validate_text(&text, Path::new("c.yaml"), &ctx);
        prop_assume!(v.parsed);
        let p = plan(&v, &ctx).unwrap();
        // Comments, blank lines, line endings and line count are kept.
        prop_assert_eq!(p.fixed.lines().count(), text.lines().count());
        prop_assert_eq!(p.fixed.matches("\r\n").count(), text.matches("\r\n").count());
        prop_assert_eq!(p.fixed.matches('#').count(), text.matches('#').count());
        for (a, b) in text.lines().zip(p.fixed.lines()) {
            // Each line keeps its indentation and its comment.
            let indent = |s: &str| s.len() - s.trim_start().len();
            prop_assert_eq!(indent(a), indent(b));
            prop_assert_eq!(a.split_once('#').map(|x| x.1), b.split_once('#').map(|x| x.1));
        }
        let again = plan(&validate_text(&p.fixed, Path::new("c.yaml"), &ctx), &ctx).unwrap();
        prop_assert!(!again.changes(), "second run changed:\n{}\n->\n{}", p.fixed, again.fixed);
    }
}

/// A Python hparams file nested 50,000 deep (brackets, calls, dicts, signs) is read
/// without exhausting the stack: settings below `MAX_NESTING` levels are not read.
#[test]
fn deep_python_does_not_exhaust_the_stack() {
    let n = 50_000;
    for src in [
        format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n)),
        format!("x = {}1{}\n", "dict(a=".repeat(n), ")".repeat(n)),
        format!("x = {}1{}\n", "{\"a\": ".repeat(n), "}".repeat(n)),
        format!("x = {}1{}\n", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1\n", "-".repeat(n)),
        format!("x = {}1\n", "(".repeat(n)),
    ] {
        let v = validate_text(&src, Path::new("hparams.py"), &Context::default());
        assert!(!v.findings.is_empty());
    }
}
