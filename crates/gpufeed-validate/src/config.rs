//! `gpufeed-config`'s errors and warnings as findings: the id is the kind's id, the place is
//! the file:line:column the loader reports, the evidence is the offending line as written,
//! and a warning's ready text edit becomes the finding's `--fix` edit.

use std::path::Path;

use gpufeed_config::{ConfigError, ConfigWarning, Source, WarningKind};

use gpufeed_findings::finding::{Finding, Severity, TextEdit};
use gpufeed_findings::rules::rule_info;

/// The longest line quoted as evidence.
const EVIDENCE_CHARS: usize = 120;

/// The errors that stopped the load.
pub(super) fn errors(errors: &[ConfigError], text: &str, path: &Path) -> Vec<Finding> {
    errors
        .iter()
        .map(|error| match error {
            ConfigError::Invalid {
                line,
                column,
                key,
                kind,
                message,
                ..
            } => {
                let id = kind.id();
                let mut evidence = line_text(text, *line)
                    .map(|l| format!("line {line}: `{l}`"))
                    .unwrap_or_default();
                if let Some(key) = key {
                    if evidence.is_empty() {
                        evidence = format!("`{key}`");
                    } else {
                        evidence = format!("`{key}`, {evidence}");
                    }
                }
                Finding::new(id, Severity::Error, message.clone())
                    .at(path, *line, *column)
                    .evidence(evidence)
                    .fix(rule_info(id).map_or("", |r| r.fix))
            }
            // `check` never returns a read error (it gets text); stay total.
            ConfigError::Read { .. } => {
                Finding::new(error.id(), Severity::Error, error.to_string()).in_file(path)
            }
        })
        .collect()
}

/// The warnings of a load, with their edits.
pub(super) fn warnings(
    warnings: &[ConfigWarning],
    source: Option<&Source>,
    text: &str,
    path: &Path,
) -> Vec<Finding> {
    warnings
        .iter()
        .map(|w| {
            let id = w.id();
            let evidence = line_text(text, w.line)
                .map(|l| format!("line {}: `{l}`", w.line))
                .unwrap_or_else(|| format!("`{}`", w.key));
            // A rename `--fix` applies must not write a key the trainer rejects.
            let rejected = rejected_rename(w);
            let fix = match &rejected {
                Some(why) => why.clone(),
                None => warning_fix(w, source),
            };
            let mut f = Finding::new(id, Severity::Warning, w.message.clone())
                .at(path, w.line, w.column)
                .evidence(evidence)
                .fix(fix);
            if let Some(edit) = w.edit.as_ref().filter(|_| rejected.is_none()) {
                f = f.edit(TextEdit {
                    byte_start: edit.span.byte_start,
                    byte_end: edit.span.byte_end,
                    replacement: edit.replacement.clone(),
                });
            }
            f
        })
        .collect()
}

/// For an unknown key whose rename would write a key MyXTTS' dataclasses reject (a typo of
/// `mixed_precision` under `training`, which gpufeed knows but MyXTTS reads under `data`):
/// what to do instead, since `--fix` does not write it. `None` otherwise.
fn rejected_rename(w: &ConfigWarning) -> Option<String> {
    let edit = w.edit.as_ref()?;
    if !matches!(w.kind, WarningKind::UnknownKey { .. }) {
        return None;
    }
    let section = w.key.rsplit_once('.').map(|(s, _)| s)?;
    let target = format!("{section}.{}", edit.replacement);
    let gpufeed_config::Myxtts::NotAKey(note) = gpufeed_config::key_info(&target)?.myxtts else {
        return None;
    };
    let leaf = w.key.rsplit('.').next().unwrap_or(&w.key);
    Some(format!(
        "rename `{leaf}` by hand to the key your trainer reads: `--fix` does not write \
         `{target}`, which MyXTTS rejects ({note})"
    ))
}

/// The fix of a warning: the edit as YAML when there is one, else the rule's advice.
fn warning_fix(w: &ConfigWarning, source: Option<&Source>) -> String {
    let leaf = w.key.rsplit('.').next().unwrap_or(&w.key);
    let entry = source.and_then(|s| s.entry(&w.key));
    match (&w.edit, &w.kind) {
        (Some(edit), _) if entry.and_then(|e| e.key) == Some(edit.span) => {
            format!("rename `{leaf}` to `{}`", edit.replacement)
        }
        (Some(edit), _) => format!("{leaf}: {}", edit.replacement),
        (
            None,
            WarningKind::UnknownKey {
                suggestion: Some(s),
            },
        ) if s.contains('.') => format!("move the key to `{s}`, or delete it"),
        (
            None,
            WarningKind::UnknownKey {
                suggestion: Some(s),
            },
        ) => format!("delete it, or rename it to `{s}` and delete the `{s}` already set"),
        _ => rule_info(w.id()).map_or("", |r| r.fix).to_owned(),
    }
}

/// Line `line` (1-based) of the source, trimmed and shortened for evidence.
pub(super) fn line_text(text: &str, line: usize) -> Option<String> {
    let text = text.lines().nth(line.checked_sub(1)?)?.trim();
    if text.is_empty() {
        return None;
    }
    let mut out: String = text.chars().take(EVIDENCE_CHARS).collect();
    if text.chars().count() > EVIDENCE_CHARS {
        out.push_str("...");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(text: &str) -> Vec<Finding> {
        match gpufeed_config::check(text, Path::new("c.yaml")) {
            Ok(l) => warnings(&l.warnings, Some(&l.source), text, Path::new("c.yaml")),
            Err(r) => {
                let mut f = errors(&r.errors, text, Path::new("c.yaml"));
                f.extend(warnings(
                    &r.warnings,
                    r.source.as_deref(),
                    text,
                    Path::new("c.yaml"),
                ));
                f
            }
        }
    }

    /// `training.mixed_precison` was renamed by `--fix` to `training.mixed_precision`, a key
    /// gpufeed knows and MyXTTS' TrainingConfig rejects, so that the next `validate` said
    /// MyXTTS rejects the key `--fix` had just written (issue 41). No edit now, and why.
    #[test]
    fn a_rename_to_a_key_the_trainer_rejects_is_not_applied() {
        let f = findings("training:\n  mixed_precison: true\n");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].id, "config-unknown-key");
        assert!(f[0].edit.is_none(), "{f:?}");
        assert!(
            f[0].fix.contains("by hand") && f[0].fix.contains("MyXTTS rejects"),
            "{}",
            f[0].fix
        );
    }

    #[test]
    fn typo_key_gets_a_rename_edit() {
        let f = findings("data:\n  num_worker: 8  # typo\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, "config-unknown-key");
        assert_eq!((f[0].line, f[0].column), (Some(2), Some(3)));
        assert_eq!(f[0].fix, "rename `num_worker` to `num_workers`");
        assert_eq!(f[0].evidence, "line 2: `num_worker: 8  # typo`");
        let edit = f[0].edit.clone().unwrap_or(TextEdit {
            byte_start: 0,
            byte_end: 0,
            replacement: String::new(),
        });
        assert_eq!((edit.byte_start, edit.byte_end), (8, 18));
    }

    #[test]
    fn float_spelling_fix_is_yaml() {
        let f = findings("training:\n  learning_rate: 1e-4\n");
        assert_eq!(f[0].fix, "learning_rate: 1.0e-4");
        assert!(f[0].edit.is_some());
    }

    #[test]
    fn duplicate_key_is_an_error_with_evidence() {
        let f = findings("data:\n  batch_size: 8\n  batch_size: 16\n");
        let dup: Vec<_> = f
            .iter()
            .filter(|f| f.id == "config-duplicate-key")
            .collect();
        assert_eq!(dup.len(), 1);
        assert_eq!(dup[0].severity, Severity::Error);
        assert_eq!(dup[0].line, Some(3));
        assert!(
            dup[0].evidence.contains("batch_size: 16"),
            "{}",
            dup[0].evidence
        );
    }

    #[test]
    fn list_at_top_is_an_error() {
        let f = findings("- a\n- b\n");
        assert_eq!(f[0].id, "config-not-a-mapping");
    }
}
