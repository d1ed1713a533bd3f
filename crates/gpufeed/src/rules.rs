//! `gpufeed rules [ID]`: every finding `validate`, `lint` and `doctor` can give, or one of
//! them explained (gpufeed-app's `rules`), as text or the `rules` document.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::RulesArgs;
use crate::printer;

/// `gpufeed rules`: one line per rule; `gpufeed rules ID`: the rule in full. With
/// `--format json`, the `rules` document (every rule, or the one asked for).
pub fn rules(args: &RulesArgs) -> Result<ExitCode> {
    let (doc, text) = gpufeed_app::rules::rules(args.id.as_deref())?;
    printer::export(args.output.format, &doc, |_| text)?;
    Ok(ExitCode::SUCCESS)
}
