//! `validate --fix` on arbitrary text ([`gpufeed_validate::fix::plan`]): when it plans a fix,
//! the fixed text parses again, keeps every comment and line, and is a fixed point (a
//! second `--fix` changes nothing); and `validate` without `--fix`
//! ([`gpufeed_validate::fix::preview`]) says `--fix applies it` only of what `--fix` fixes.

use std::path::Path;

use gpufeed_findings::Finding;
use gpufeed_validate::fix::{FixError, Plan, plan, preview};
use gpufeed_validate::{Context, Validation, validate_text};

/// Validates `data` as a config and checks what `--fix` would write.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz-config.yaml");
    // With the cores known, so that the rules comparing with them run too.
    let ctx = Context::new(Some(4), gpufeed_validate::CoresOf::TrainingMachine);
    let validation = validate_text(text, path, &ctx);
    for finding in &validation.findings {
        if let Some(p) = &finding.path {
            assert_eq!(
                p, "fuzz-config.yaml",
                "finding `{}` names another file",
                finding.id
            );
        }
    }
    let fixed = match plan(&validation, &ctx) {
        Ok(p) => p,
        Err(FixError::NotParsed { .. }) => {
            assert!(
                !validation.parsed,
                "a parsed config was refused as not parsed"
            );
            return;
        }
        Err(e) => panic!("--fix would break the config: {e}\n--- input:\n{text}"),
    };
    says_what_fix_does(&validation, &fixed, &ctx);
    let after = validate_text(&fixed.fixed, path, &ctx);
    assert!(
        after.parsed,
        "the fixed text does not parse:\n{}",
        fixed.fixed
    );
    keeps_comments(text, &fixed.fixed);
    let again = match plan(&after, &ctx) {
        Ok(p) => p,
        Err(e) => panic!(
            "a second --fix failed: {e}\n--- fixed text:\n{}",
            fixed.fixed
        ),
    };
    assert!(
        !again.changes(),
        "a second --fix changed the text:\n{}\n--- to:\n{}",
        fixed.fixed,
        again.fixed
    );
}

/// The fix edits values and keys, never lines: every line is still there, and each line's
/// comment (from a `#` at the start of the line or after a blank, to the end of the line)
/// ends the same line after the fix. Lines as YAML reads them: a lone `\r` breaks a line
/// too (a `\r\n` counts as two breaks, on both sides alike).
fn keeps_comments(before: &str, after: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (
        before.split(['\r', '\n']).collect(),
        after.split(['\r', '\n']).collect(),
    );
    assert_eq!(
        a.len(),
        b.len(),
        "--fix changed the number of lines:\n{before}\n--- to:\n{after}"
    );
    for (old, new) in a.iter().zip(&b) {
        if let Some(comment) = comment(old) {
            assert!(
                new.ends_with(comment),
                "--fix lost the comment `{comment}`: `{old}` became `{new}`"
            );
        }
    }
}

/// What `validate` says of each fix without `--fix` is what `--fix` does: a finding shown
/// with its edit is fixed (applied, or gone after the fix), one shown without the edit it
/// has says why and is still there after `--fix`; nothing else changes.
fn says_what_fix_does(validation: &Validation, plan: &Plan, ctx: &Context) {
    let shown = preview(validation, ctx);
    assert_eq!(shown.len(), validation.findings.len());
    for (f, had) in shown.iter().zip(&validation.findings) {
        let unchanged = Finding {
            edit: had.edit.clone(),
            not_fixed: None,
            ..f.clone()
        };
        assert_eq!(
            &unchanged, had,
            "`validate` changed a finding beyond its edit"
        );
        let remains = plan
            .remaining
            .iter()
            .any(|r| r.id == f.id && r.message == f.message);
        if f.edit.is_some() {
            assert!(
                f.not_fixed.is_none() && (plan.applied.contains(f) || !remains),
                "`validate` says --fix applies `{}`, which --fix leaves",
                f.message
            );
        } else if had.edit.is_some() {
            assert!(
                f.not_fixed.is_some() && remains,
                "`validate` says --fix does not apply `{}` ({:?}), which --fix fixes",
                f.message,
                f.not_fixed
            );
        } else {
            assert!(
                f.not_fixed.is_none(),
                "a finding without an edit is `not_fixed`"
            );
        }
    }
}

fn comment(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let start = (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t')))?;
    Some(&line[start..])
}
