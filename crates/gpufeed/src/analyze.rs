//! `gpufeed analyze`: the arguments resolved into [`AnalyzeSettings`], the stages run by
//! `gpufeed-app` (its crate docs say what each does) with a spinner on stderr, and the
//! report printed: its summary, or with `--format json` the document of `report.json`.
//!
//! Exit codes (docs/contract.md): 0 done; 1 the doctor found something at error severity
//! or a stage failed (the report is written all the same); 2 bad usage (a path that does not
//! exist) or a report that cannot be written.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use gpufeed_analysis::Ui;
use gpufeed_app::Stages;
use gpufeed_app::analyze::{AnalyzeSettings, document, summary_text};

use crate::cli::AnalyzeArgs;
use crate::printer;
use crate::ui::Terminal;

/// `gpufeed analyze [--data DIR] [--config FILE] [--code DIR] [--out DIR] [--quick] [--trace FILE]`.
pub fn analyze(args: &AnalyzeArgs) -> Result<ExitCode> {
    let settings = AnalyzeSettings {
        data: args.inputs.data.clone(),
        config: args.inputs.config.clone(),
        code: args.inputs.code.clone(),
        trace: args.trace.clone(),
        attach: args.attach,
        attach_duration: args.attach_duration,
        quick: args.quick,
        demo: args.demo,
        out: args.out.clone(),
    };
    let report = gpufeed_app::analyze::analyze(&settings, &Spinner::new())?;
    // The document written to `report.json`, the same on stdout with `--format json`.
    let doc = document(&report)?;
    printer::export(args.output.format, &doc, |_| {
        summary_text(&report, &args.out)
    })?;
    Ok(ExitCode::from(report.exit_code()))
}

/// The one progress display of `analyze` on stderr: a spinner with the stage and the time
/// so far on a terminal, a line per stage otherwise.
struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} analyze [{pos}/{len}] {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Self { bar }
    }
}

impl Stages for Spinner {
    fn begin(&self, stages: u64) {
        self.bar.set_length(stages);
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }

    /// A line that stays: above the spinner on a terminal, on stderr otherwise.
    fn line(&self, text: &str) {
        let text = format!("analyze: {text}");
        if self.bar.is_hidden() {
            printer::note(&text);
        } else {
            self.bar.println(text);
        }
    }

    fn detail(&self, text: &str) {
        self.bar.set_message(text.to_owned());
    }

    fn advance(&self) {
        self.bar.inc(1);
    }

    // Nothing that draws this bar may run inside `suspend` (it holds the draw lock).
    fn aside(&self, f: &mut dyn FnMut()) {
        self.bar.suspend(f);
    }

    fn ui(&self) -> Box<dyn Ui + '_> {
        Box::new(Terminal::new())
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
