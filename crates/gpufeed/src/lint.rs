//! `gpufeed lint`: findings about training code. The rules (tree-sitter) live in
//! `gpufeed-doctor`; this module runs them over the paths and prints the report as
//! `validate` does (exit 0 clean or warnings only, 1 any error-severity finding, 2 a path
//! that cannot be read).

use std::process::ExitCode;

use anyhow::Result;
use gpufeed_findings::Report;

use crate::cli::LintArgs;
use crate::printer;
use crate::validate::report;

/// `gpufeed lint PATH...`.
pub fn lint(args: &LintArgs) -> Result<ExitCode> {
    let outcome = gpufeed_lint::lint_paths(&args.paths)?;
    if outcome.files == 0 {
        printer::warn("no Python files (`*.py`) found in the given folders");
    }
    let files = outcome.files;
    let summary = format!("linted {files} file{}\n", if files == 1 { "" } else { "s" });
    report(Report::new(outcome.findings), args.format, Some(&summary))
}
