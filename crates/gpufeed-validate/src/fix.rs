//! `validate --fix`: apply the findings' text edits to the file at the spans the parser
//! reported, never re-serialising the YAML, so comments, key order, quoting, blank lines and
//! unknown keys stay byte for byte as they were outside the changed values.
//!
//! ```
//! use std::path::Path;
//! use gpufeed_validate::fix::plan;
//! use gpufeed_validate::{Context, validate_text};
//!
//! let text = "training:\n  learning_rate: 1e-4   # peak\n";
//! let v = validate_text(text, Path::new("c.yaml"), &Context::default());
//! let p = plan(&v, &Context::default()).unwrap();
//! assert_eq!(p.fixed, "training:\n  learning_rate: 1.0e-4   # peak\n");
//! assert_eq!(p.applied.len(), 1);
//! ```
//!
//! Safety: only findings that carry an edit are fixed; those are gpufeed-config's spelling
//! fixes (a PyYAML trap rewritten so PyYAML and YAML 1.2 read the value the same way, a typo
//! key renamed to the one known key it is close to when that key is not already present).
//! None changes what a setting means. Every rule that would change the trainer's behaviour
//! (turning prefetch or graph mode on, the caps, the workers) is advice in the finding's
//! `fix`, not an edit. Each edit is kept only when the text with it (and the edits kept
//! before it) parses and has no error the original did not have; an edit that would add one
//! is left out and reported with that error, and the others still apply. So a typo key whose
//! value is invalid for the key it is close to keeps its name (the loader ignores an unknown
//! key; it refuses a known key with a bad value), and `--fix` says which value to correct.
//!
//! Writing ([`write()`]): the original is copied to `FILE.bak` first, then the new text goes
//! to a temporary file in the same folder that is renamed over the file (atomic on POSIX),
//! keeping the file's permissions; a symbolic link is followed and its target replaced.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::{Context, Validation, validate_text};
use gpufeed_findings::finding::{Finding, TextEdit};

/// The edits that `--fix` would make.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The file, as given.
    pub path: PathBuf,
    /// Its text before.
    pub original: String,
    /// Its text after every applied edit.
    pub fixed: String,
    /// The findings fixed.
    pub applied: Vec<Finding>,
    /// Findings with an edit that was not applied, and why (overlapping edits, two typos
    /// renamed to the same key, an edit that would add an error), ending with what to do.
    pub skipped: Vec<(Finding, String)>,
    /// The findings of the fixed text: what remains to do by hand.
    pub remaining: Vec<Finding>,
}

impl Plan {
    /// True when the fixes change the file.
    #[must_use]
    pub fn changes(&self) -> bool {
        self.original != self.fixed
    }
}

/// Why `--fix` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The file did not parse (or was not read), so there are no spans to edit.
    #[error("`{}` was not fixed: it does not parse; correct the errors first", path.display())]
    NotParsed {
        /// The file.
        path: PathBuf,
    },
    /// The edits would have broken the file (a safety net: every edit kept was checked
    /// already, so not expected).
    #[error(
        "`{}` was not fixed: the edited text would not load ({reason}); please report this",
        path.display()
    )]
    WouldBreak {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The backup or the new file could not be written.
    #[error("cannot write `{}`: {reason}", path.display())]
    Write {
        /// The file that could not be written.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
}

/// Plans the fixes of a validation.
///
/// # Errors
/// [`FixError::NotParsed`] when the file did not parse; [`FixError::WouldBreak`] when the
/// edited text would not load as well as the original (not expected: see the module docs).
pub fn plan(validation: &Validation, ctx: &Context) -> Result<Plan, FixError> {
    let path = validation.path.clone();
    let Some(original) = validation.text.clone().filter(|_| validation.parsed) else {
        return Err(FixError::NotParsed { path });
    };
    let errors = Errors::of(validation);
    let mut text = original.clone();
    let mut current = validation.clone();
    let mut applied = Vec::new();
    let mut skipped = Vec::new();
    // A fix can reveal another (a typo key renamed to `num_workers` whose value `010` PyYAML
    // reads as octal): repeat until nothing changes, so a second `--fix` has nothing to do.
    for _ in 0..MAX_ROUNDS {
        let round = round(&current, &text, ctx);
        skipped = round.skipped;
        let Some((fixed_text, validation)) = round.result else {
            break;
        };
        applied.extend(round.applied);
        text = fixed_text;
        current = validation;
        if let Some(reason) = errors.added_by(&current) {
            return Err(FixError::WouldBreak { path, reason });
        }
    }
    Ok(Plan {
        path,
        original,
        fixed: text,
        applied,
        skipped,
        remaining: current.findings,
    })
}

/// The findings of a validation as `validate` reports them without `--fix`, so that the
/// report promises only what `--fix` does: a finding whose edit [`plan`] would leave out
/// loses the edit and says why in [`Finding::not_fixed`] (a typo key whose value the key it
/// is close to refuses, two keys that would get the same name, a file `--fix` refuses).
/// A finding that keeps its edit is one `--fix` applies, or one that an edit it applies
/// resolves (an aliased value fixed once, at its anchor).
#[must_use]
pub fn preview(validation: &Validation, ctx: &Context) -> Vec<Finding> {
    let mut findings = validation.findings.clone();
    if findings.iter().all(|f| f.edit.is_none()) {
        return findings;
    }
    let plan = match plan(validation, ctx) {
        Ok(plan) => plan,
        Err(e) => {
            let why = match e {
                FixError::NotParsed { .. } => {
                    "`--fix` edits only a file that parses; correct the errors first".to_owned()
                }
                e => e.to_string(),
            };
            for f in findings.iter_mut().filter(|f| f.edit.is_some()) {
                f.edit = None;
                f.not_fixed = Some(why.clone());
            }
            return findings;
        }
    };
    // The first round works on these very findings, so an applied one is equal to its
    // original; a later round's are the findings of the edited text, whose places moved.
    // So they are matched by rule and message, which name the key.
    let same = |a: &Finding, b: &Finding| a.id == b.id && a.message == b.message;
    for f in findings.iter_mut().filter(|f| f.edit.is_some()) {
        if plan.applied.contains(f) {
            continue;
        }
        let why = plan
            .skipped
            .iter()
            .find(|(s, _)| same(s, f))
            .map(|(_, why)| why.clone())
            .or_else(|| {
                plan.remaining
                    .iter()
                    .any(|r| same(r, f))
                    .then(|| "`--fix` leaves it as it is; fix it by hand".to_owned())
            });
        if let Some(why) = why {
            f.edit = None;
            f.not_fixed = Some(why);
        }
    }
    findings
}

/// Rounds of fixes at most (each round fixes what the previous one revealed).
const MAX_ROUNDS: usize = 4;

/// What one round of fixes did.
struct Round {
    /// The text with the edits kept, and its validation; `None` when no edit was kept.
    result: Option<(String, Validation)>,
    /// The findings the kept edits fix.
    applied: Vec<Finding>,
    /// The findings whose edit was left out, with the reason.
    skipped: Vec<(Finding, String)>,
}

/// One round: the edits of `v` that are safe on `text`, tried one at a time in file order.
/// An edit is kept when the text with it and the edits kept before it parses and has no
/// error that `text` did not have. Counting errors is not enough: a rename to a known key
/// with a bad value adds a type error and hides the checks that need a loaded config, so
/// the count can stay the same while the file stops loading.
fn round(v: &Validation, text: &str, ctx: &Context) -> Round {
    let (groups, mut skipped) = choose(&v.findings, text);
    let before = Errors::of(v);
    let mut kept: Vec<TextEdit> = Vec::new();
    let mut result = None;
    let mut applied = Vec::new();
    for (edit, findings) in groups {
        kept.push(edit);
        let candidate = apply(text, &kept);
        let checked = validate_text(&candidate, &v.path, ctx);
        match before.added_by(&checked) {
            None => {
                applied.extend(findings);
                result = Some((candidate, checked));
            }
            Some(error) => {
                let Some(edit) = kept.pop() else { continue };
                for f in findings {
                    let why = if rename_parent(&f).is_some() {
                        format!(
                            "renamed to `{}`, the config would have a new error: {error}; \
                             correct the value, then rename the key",
                            edit.replacement
                        )
                    } else {
                        format!("the edit would make the config invalid: {error}; fix it by hand")
                    };
                    skipped.push((f, why));
                }
            }
        }
    }
    Round {
        result,
        applied,
        skipped,
    }
}

/// The errors of a validation, as a multiset of (rule id, message): where they are is left
/// out, since an edit on a line moves what follows it on that line.
struct Errors(HashMap<(&'static str, String), usize>);

impl Errors {
    fn of(v: &Validation) -> Self {
        let mut errors = HashMap::new();
        for f in v
            .findings
            .iter()
            .filter(|f| f.severity == gpufeed_findings::Severity::Error)
        {
            *errors.entry((f.id, f.message.clone())).or_default() += 1;
        }
        Self(errors)
    }

    /// The first error of `after` that is not one of these (`it does not parse` when it
    /// does not), or `None` when `after` has no new error.
    fn added_by(&self, after: &Validation) -> Option<String> {
        if !after.parsed {
            return Some(first_error(after));
        }
        let mut seen: HashMap<(&'static str, &str), usize> = HashMap::new();
        after
            .findings
            .iter()
            .filter(|f| f.severity == gpufeed_findings::Severity::Error)
            .find(|f| {
                let n = seen.entry((f.id, f.message.as_str())).or_default();
                *n += 1;
                *n > self.0.get(&(f.id, f.message.clone())).copied().unwrap_or(0)
            })
            .map(|f| f.message.clone())
    }
}

/// The message of the first error of a validation.
fn first_error(v: &Validation) -> String {
    v.findings
        .iter()
        .find(|f| f.severity == gpufeed_findings::Severity::Error)
        .map_or_else(|| "it does not parse".to_owned(), |f| f.message.clone())
}

/// Edits in file order with the findings each fixes.
type Groups = Vec<(TextEdit, Vec<Finding>)>;

/// The edits to apply: in file order, without duplicates (one anchored value reported
/// through several aliases), overlaps, or renames that would create a duplicate key.
fn choose(findings: &[Finding], text: &str) -> (Groups, Vec<(Finding, String)>) {
    let mut with_edit: Vec<(&Finding, &TextEdit)> = findings
        .iter()
        .filter_map(|f| f.edit.as_ref().map(|e| (f, e)))
        .filter(|(_, e)| {
            e.byte_start <= e.byte_end
                && text.is_char_boundary(e.byte_start)
                && text.is_char_boundary(e.byte_end)
                && e.byte_end <= text.len()
        })
        .collect();
    with_edit.sort_by_key(|(_, e)| (e.byte_start, e.byte_end));

    // Two unknown keys of one mapping renamed to the same key would collide.
    let mut renames: HashMap<(String, &str), usize> = HashMap::new();
    for (f, e) in &with_edit {
        if let Some(parent) = rename_parent(f) {
            *renames.entry((parent, e.replacement.as_str())).or_default() += 1;
        }
    }

    let mut groups: Groups = Vec::new();
    let mut skipped = Vec::new();
    for (f, e) in with_edit {
        if let Some(parent) = rename_parent(f)
            && renames
                .get(&(parent, e.replacement.as_str()))
                .is_some_and(|&n| n > 1)
        {
            skipped.push((
                f.clone(),
                format!(
                    "two keys would both become `{}`; rename the one you meant by hand",
                    e.replacement
                ),
            ));
            continue;
        }
        match groups.last_mut() {
            Some((last, fs)) if last == e => fs.push(f.clone()),
            Some((last, _)) if e.byte_start < last.byte_end => {
                skipped.push((f.clone(), "overlaps another fix; fix it by hand".to_owned()));
            }
            _ => groups.push((e.clone(), vec![f.clone()])),
        }
    }
    (groups, skipped)
}

/// For a key rename, the mapping the key is in (`data` for `data.num_worker`).
fn rename_parent(f: &Finding) -> Option<String> {
    if f.id != "config-unknown-key" {
        return None;
    }
    // The message names the full dotted key: "unknown key `data.num_worker`; ...".
    let key = f.message.split('`').nth(1)?;
    Some(key.rsplit_once('.').map_or("", |(p, _)| p).to_owned())
}

/// `text` with non-overlapping edits (sorted by start) applied.
fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.byte_start]);
        out.push_str(&e.replacement);
        at = e.byte_end;
    }
    out.push_str(&text[at..]);
    out
}

/// A unified diff with 3 lines of context, empty when the texts are equal. A relative path
/// gets git's `a/` and `b/` prefixes (`git apply`, `patch -p1`); an absolute path is written
/// as it is (`patch -p0`).
#[must_use]
pub fn unified_diff(path: &Path, original: &str, fixed: &str) -> String {
    if original == fixed {
        return String::new();
    }
    let name = path.display().to_string();
    let (old, new) = if path.is_absolute() {
        (name.clone(), name)
    } else {
        let name = name.trim_start_matches("./");
        (format!("a/{name}"), format!("b/{name}"))
    };
    similar::TextDiff::from_lines(original, fixed)
        .unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}

/// The backup path: `FILE.bak` beside the file.
#[must_use]
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

/// Writes a plan: `FILE.bak` with the original first, then the fixed text atomically.
/// Writes nothing when the plan changes nothing. Returns the backup path when it wrote.
///
/// # Errors
/// [`FixError::Write`] when the backup or the file cannot be written; the file is then
/// unchanged.
pub fn write(plan: &Plan) -> Result<Option<PathBuf>, FixError> {
    if !plan.changes() {
        return Ok(None);
    }
    let write_error = |path: &Path, e: &dyn std::fmt::Display| FixError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    // Replace the target of a link, not the link.
    let target = fs_err::canonicalize(&plan.path).map_err(|e| write_error(&plan.path, &e))?;
    let current = fs_err::read(&target).map_err(|e| write_error(&target, &e))?;
    if current != plan.original.as_bytes() {
        return Err(FixError::Write {
            path: plan.path.clone(),
            reason: "the file changed while it was being checked; run again".to_owned(),
        });
    }
    let backup = backup_path(&plan.path);
    atomic_write(&backup, plan.original.as_bytes(), &target)?;
    atomic_write(&target, plan.fixed.as_bytes(), &target)?;
    Ok(Some(backup))
}

/// Writes `bytes` to `path` atomically (gpufeed-fs: a temporary file in the same folder,
/// synced, renamed), with the permissions of `like`.
fn atomic_write(path: &Path, bytes: &[u8], like: &Path) -> Result<(), FixError> {
    let err = |e: &dyn std::fmt::Display| FixError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut tmp = gpufeed_fs::AtomicFile::create(path).map_err(|e| err(&e))?;
    tmp.file().write_all(bytes).map_err(|e| err(&e))?;
    tmp.set_permissions_like(like).map_err(|e| err(&e))?;
    tmp.commit().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(text: &str) -> Plan {
        let v = validate_text(text, Path::new("c.yaml"), &Context::default());
        match plan(&v, &Context::default()) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn keeps_everything_outside_the_values() {
        let text = "# top comment\r\ndata:   # data\r\n  num_worker: 4     # typo\r\n  \
                    language: no\r\n  mystery: {a: 1}\r\ntraining:\r\n  learning_rate: 1e-4 # lr\r\n  \
                    min_learning_rate: '1e-6'\r\n";
        let p = plan_of(text);
        assert_eq!(
            p.fixed,
            "# top comment\r\ndata:   # data\r\n  num_workers: 4     # typo\r\n  \
             language: \"no\"\r\n  mystery: {a: 1}\r\ntraining:\r\n  learning_rate: 1.0e-4 # lr\r\n  \
             min_learning_rate: '1e-6'\r\n"
        );
        assert_eq!(p.applied.len(), 3);
        // Idempotent: the fixed text has nothing left to fix.
        let again = plan_of(&p.fixed);
        assert!(!again.changes(), "{}", again.fixed);
    }

    #[test]
    fn an_edit_that_adds_an_error_is_left_out() {
        // Renaming the typo makes `num_workers: 1e-4`, a type error; the float is still fixed.
        let p = plan_of("data:\n  num_worker: 1e-4\ntraining:\n  learning_rate: 1e-4\n");
        assert_eq!(
            p.fixed,
            "data:\n  num_worker: 1e-4\ntraining:\n  learning_rate: 1.0e-4\n"
        );
        assert_eq!(p.skipped.len(), 1);
        assert!(
            p.skipped[0].1.contains("`data.num_workers`"),
            "{}",
            p.skipped[0].1
        );
    }

    #[test]
    fn a_rename_that_trades_one_error_for_another_is_left_out() {
        // The config has one error (padding shorter than the token cap). Renaming the typo
        // gives `shuffle_buffer_multiplier: two`, a type error that stops the config from
        // loading and hides the padding check: still one error, but a new one. The rename
        // is left out with the bad value named; the other rename applies.
        let text = "data:\n  pad_to_fixed_length: true\n  max_text_length: 200\n  \
                    shuffle_buffer_multiplie: two   # typo\n  num_worker: 2\n";
        let p = plan_of(text);
        assert_eq!(
            p.fixed,
            "data:\n  pad_to_fixed_length: true\n  max_text_length: 200\n  \
             shuffle_buffer_multiplie: two   # typo\n  num_workers: 2\n"
        );
        assert_eq!(p.applied.len(), 1);
        assert_eq!(p.skipped.len(), 1, "{:?}", p.skipped);
        let why = &p.skipped[0].1;
        assert!(
            why.contains("renamed to `shuffle_buffer_multiplier`")
                && why.contains("`data.shuffle_buffer_multiplier` must be")
                && why.contains("`two`"),
            "{why}"
        );
        // The typo is still reported, and the padding error is still there.
        assert!(p.remaining.iter().any(|f| f.id == "config-unknown-key"));
        assert!(p.remaining.iter().any(|f| f.id == "text-cap-mismatch"));
        assert!(!plan_of(&p.fixed).changes());
    }

    /// `validate` without `--fix` says `--fix applies it` only of the edits `--fix` applies;
    /// of the others, that it does not, and why.
    #[test]
    fn preview_says_what_fix_does() {
        let preview_of = |text: &str| {
            let v = validate_text(text, Path::new("c.yaml"), &Context::default());
            preview(&v, &Context::default())
        };
        let typo = |findings: &[Finding]| {
            findings
                .iter()
                .find(|f| f.id == "config-unknown-key")
                .cloned()
                .unwrap_or_else(|| panic!("no typo finding in {findings:?}"))
        };
        // The value is valid for the key it is close to: `--fix` renames it.
        let f = typo(&preview_of("data:\n  num_worker: 2\n"));
        assert!(f.edit.is_some() && f.not_fixed.is_none(), "{f:?}");
        assert_eq!(plan_of("data:\n  num_worker: 2\n").applied, vec![f]);
        // The value is not: `--fix` leaves the key as it is, and the finding says so.
        let text = "data:\n  num_worker: 1e-4\n";
        let f = typo(&preview_of(text));
        assert!(f.edit.is_none(), "{f:?}");
        let why = f.not_fixed.unwrap_or_default();
        assert!(
            why.starts_with("renamed to `num_workers`, the config would have a new error: ")
                && why.contains("`data.num_workers`")
                && why.ends_with("correct the value, then rename the key"),
            "{why}"
        );
        assert!(plan_of(text).applied.is_empty());
        // Two keys that would get one name: neither is renamed.
        let both = preview_of("data:\n  num_worker: 1\n  num_workerss: 2\n");
        assert!(
            both.iter()
                .filter(|f| f.id == "config-unknown-key")
                .all(|f| f.edit.is_none()
                    && f.not_fixed
                        .as_deref()
                        .is_some_and(|w| w.starts_with("two keys"))),
            "{both:?}"
        );
    }

    #[test]
    fn colliding_renames_are_skipped() {
        let p = plan_of("data:\n  num_worker: 1\n  num_workerss: 2\n");
        assert!(!p.changes(), "{}", p.fixed);
        assert_eq!(p.skipped.len(), 2);
    }

    #[test]
    fn a_fix_revealed_by_a_fix_is_applied_too() {
        let p = plan_of("data:\n  num_worker: 010\n");
        assert_eq!(p.fixed, "data:\n  num_workers: 10\n");
        assert_eq!(p.applied.len(), 2);
    }

    #[test]
    fn aliased_value_is_fixed_once() {
        let text = "base: &lr 1e-4\ntraining:\n  learning_rate: *lr\n  min_learning_rate: *lr\n";
        let v = validate_text(text, Path::new("c.yaml"), &Context::default());
        let p = plan(&v, &Context::default());
        // Either fixed once at the anchor, or refused; never a corrupted file.
        if let Ok(p) = p {
            assert_eq!(
                p.fixed.matches("1.0e-4").count(),
                p.fixed.matches("1e-4").count() + 1
            );
            assert!(validate_text(&p.fixed, Path::new("c.yaml"), &Context::default()).parsed);
        }
    }

    #[test]
    fn unparsed_file_is_not_fixed() {
        let v = validate_text("data: [\n", Path::new("c.yaml"), &Context::default());
        assert!(matches!(
            plan(&v, &Context::default()),
            Err(FixError::NotParsed { .. })
        ));
    }

    #[test]
    fn diff_is_unified() {
        let d = unified_diff(Path::new("./c.yaml"), "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            d,
            "--- a/c.yaml\n+++ b/c.yaml\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(unified_diff(Path::new("c.yaml"), "x", "x"), "");
        let abs = unified_diff(Path::new("/etc/c.yaml"), "a\n", "b\n");
        assert!(
            abs.starts_with("--- /etc/c.yaml\n+++ /etc/c.yaml\n"),
            "{abs}"
        );
    }

    #[test]
    fn backup_name() {
        assert_eq!(
            backup_path(Path::new("cfg/c.yaml")),
            Path::new("cfg/c.yaml.bak")
        );
    }
}
