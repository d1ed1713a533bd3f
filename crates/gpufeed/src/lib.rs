//! gpufeed: find out why a GPU is starving during training, prove it with numbers, feed it.
//!
//! This crate is the command line: [`cli`] parses, [`main`] runs one command and maps the
//! outcome to an exit code, [`printer`] owns stdout and stderr. The work is done by the
//! library crates: `gpufeed-analysis` (the analyses behind the commands, the trace
//! detector, the document registry), which calls the readers and statistics below it.
//!
//! Exit codes (ruff's convention, docs/contract.md): 0 done and nothing at error
//! severity; 1 findings at error severity; 2 bad input, bad usage or internal failure.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

pub mod analyze;
pub mod attach;
pub mod cli;
pub mod compare;
pub mod doctor;
pub mod lint;
pub mod monitor;
pub mod precompute;
pub mod printer;
pub mod profile;
pub mod rules;
pub mod schema;
pub mod trace;
mod ui;
pub mod validate;

use cli::{Cli, Command, ProfileCommand};

/// Exit code for bad input, bad usage or an internal failure.
const EXIT_BAD_INPUT: u8 = 2;

/// Parses the command line, runs the command, returns the exit code.
#[must_use]
pub fn main() -> ExitCode {
    main_with(std::env::args_os())
}

fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_BAD_INPUT));
        }
    };
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` joins the context chain on one line: one clear message.
            printer::error(&format!("{e:#}"));
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Trace(args) => trace::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::DemoData(args) => precompute::demo_data(&args),
        Command::Precompute(args) => precompute::precompute(&args),
        Command::Mel(args) => precompute::mel(&args),
        Command::SynthTrace(args) => trace::write_synthetic(&args),
        Command::SynthJob(args) => trace::write_synthetic_job(&args),
        Command::Monitor(args) => monitor::monitor(&args),
        Command::Watch(args) => monitor::watch(&args),
        Command::Attach(args) => attach::attach(&args),
        Command::Validate(args) => validate::validate(&args),
        Command::Lint(args) => lint::lint(&args),
        Command::Profile(ProfileCommand::Data(args)) => profile::data(&args),
        Command::Profile(ProfileCommand::Step(args)) => profile::step(&args),
        Command::Doctor(args) => doctor::doctor(&args),
        Command::Analyze(args) => analyze::analyze(&args),
        Command::Schema(args) => schema::schema(&args),
        Command::Rules(args) => rules::rules(&args),
    }
}
