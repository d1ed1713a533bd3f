//! `gpufeed rules [ID]`'s document and text: every finding `validate`, `lint` and `doctor`
//! can give, and one of them explained with its fix and, for a lint rule, the code that
//! fires it and the code that does not (as `ruff rule` does).

use std::fmt::Write as _;

use anyhow::{Result, bail};
use gpufeed_contract::{Document as _, RuleEntry, RuleExample, Rules};
use gpufeed_findings::{Origin, RULES, Rule, rule_info};

/// The command that gives a rule's findings: "validate", "lint", "doctor (storage)".
fn command(r: &Rule) -> String {
    match r.origin {
        Origin::Config | Origin::Validate => "validate".to_owned(),
        Origin::Lint => "lint".to_owned(),
        Origin::Doctor(check) => format!("doctor ({})", check.title().to_lowercase()),
    }
}

/// The `rules` document: every rule, or the one named `id` with its examples, and its
/// text (`gpufeed rules` / `gpufeed rules ID`).
///
/// # Errors
///
/// No rule named `id`, with the nearest id when it looks like a typo.
pub fn rules(id: Option<&str>) -> Result<(Rules, String)> {
    let Some(id) = id else {
        let doc = Rules {
            schema_version: Rules::VERSION,
            rules: RULES.iter().map(|r| entry(r, false)).collect(),
        };
        return Ok((doc, list()));
    };
    let Some(rule) = rule_info(id) else {
        let near = closest(id);
        bail!(
            "no rule `{id}`{}; `gpufeed rules` lists them",
            near.map_or_else(String::new, |n| format!(" (did you mean `{n}`?)"))
        );
    };
    let doc = Rules {
        schema_version: Rules::VERSION,
        rules: vec![entry(rule, true)],
    };
    Ok((doc, explain(rule)))
}

/// A rule as the `rules` document gives it; with its examples when asked for by id.
fn entry(r: &Rule, examples: bool) -> RuleEntry {
    RuleEntry {
        id: r.id.to_owned(),
        severity: r.severity.as_str().to_owned(),
        command: command(r),
        why: r.why.to_owned(),
        fix: r.fix.to_owned(),
        example: examples
            .then(|| gpufeed_lint::examples::example(r.id))
            .flatten()
            .map(|e| RuleExample {
                fires_on: e.bad.to_owned(),
                not_on: e.good.to_owned(),
            }),
    }
}

/// Every rule: id, severity, command, why.
fn list() -> String {
    let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut o = String::new();
    for r in RULES {
        let _ = writeln!(
            o,
            "{:<width$}  {:<7}  {:<22}  {}",
            r.id,
            r.severity.as_str(),
            command(r),
            r.why
        );
    }
    let _ = writeln!(
        o,
        "\n{} rules; `gpufeed rules ID` explains one, with its fix",
        RULES.len()
    );
    o
}

/// One rule in full.
fn explain(r: &Rule) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} ({}, from `gpufeed {}`)",
        r.id,
        r.severity,
        command(r)
    );
    let _ = writeln!(o, "\nwhy: {}", r.why);
    let _ = writeln!(o, "fix: {}", r.fix);
    if let Some(e) = gpufeed_lint::examples::example(r.id) {
        let _ = writeln!(o, "\nfires on (the marked line):\n");
        indented(&mut o, e.bad);
        let _ = writeln!(o, "\nnot on:\n");
        indented(&mut o, e.good);
    }
    if matches!(r.origin, Origin::Lint) {
        let _ = writeln!(
            o,
            "\nsilence it on one line with `# gpufeed: ignore[{}]`",
            r.id
        );
    }
    o
}

/// `code` indented by four spaces, blank lines left blank.
fn indented(o: &mut String, code: &str) {
    for line in code.lines() {
        if line.trim().is_empty() {
            o.push('\n');
        } else {
            let _ = writeln!(o, "    {line}");
        }
    }
}

/// The rule id nearest to `id` by edit distance, if near enough to be a typo.
fn closest(id: &str) -> Option<&'static str> {
    RULES
        .iter()
        .map(|r| (strsim::levenshtein(id, r.id), r.id))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, id)| id)
}
