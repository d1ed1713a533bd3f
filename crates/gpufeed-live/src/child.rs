//! `watch`'s command: started from argv (no shell), its signals, its exit code.
//!
//! SIGINT and SIGTERM sent to gpufeed are caught (so gpufeed lives on to print the
//! report) and forwarded to the command. One exception, as uv does it: when the command
//! is in the terminal's foreground process group, a Ctrl-C typed in the terminal reached
//! it already, so SIGINT is not sent a second time (a second SIGINT would interrupt a
//! Python program's clean-up). The exit code is the command's, or `128 + N` when signal
//! `N` ended it, as shells report it.

use std::io;
use std::os::fd::AsFd as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use rustix::process::{Pid, Signal, getpgid, kill_process};
use signal_hook::consts::{SIGINT, SIGTERM};

/// The exit code a shell reports for a status: the code, or 128 + the signal number.
#[must_use]
pub fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Starts `argv` with gpufeed's standard streams; with `stdout_to_stderr` its standard
/// output goes to gpufeed's standard error, so that gpufeed's own stdout carries only
/// the JSON report.
pub fn spawn(argv: &[String], stdout_to_stderr: bool) -> Result<std::process::Child> {
    let (program, args) = argv
        .split_first()
        .context("no command given; write it after `--`: `gpufeed watch -- python train.py`")?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    if stdout_to_stderr {
        let fd = io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .context("failed to duplicate standard error for the command's output")?;
        cmd.stdout(Stdio::from(fd));
    }
    cmd.spawn()
        .with_context(|| format!("failed to run `{program}`"))
}

/// SIGINT and SIGTERM caught since the last [`take`](Signals::take).
#[derive(Debug, Clone)]
pub struct Signals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn catch() -> Result<Self> {
        let s = Signals {
            int: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        };
        signal_hook::flag::register(SIGINT, Arc::clone(&s.int))
            .context("failed to catch SIGINT")?;
        signal_hook::flag::register(SIGTERM, Arc::clone(&s.term))
            .context("failed to catch SIGTERM")?;
        Ok(s)
    }

    /// Whether a signal is waiting.
    #[must_use]
    pub fn pending(&self) -> bool {
        self.int.load(Ordering::Relaxed) || self.term.load(Ordering::Relaxed)
    }

    /// The signals waiting (SIGINT first), clearing them.
    pub fn take(&self) -> Vec<Signal> {
        let mut out = Vec::new();
        if self.int.swap(false, Ordering::Relaxed) {
            out.push(Signal::INT);
        }
        if self.term.swap(false, Ordering::Relaxed) {
            out.push(Signal::TERM);
        }
        out
    }
}

/// Whether `pid` is in the process group in the foreground of our terminal (so a Ctrl-C
/// typed there reached it already). False without a terminal.
fn in_terminal_foreground(pid: Pid) -> bool {
    let Ok(fg) = rustix::termios::tcgetpgrp(io::stdin()) else {
        return false;
    };
    getpgid(Some(pid)).is_ok_and(|pg| pg == fg)
}

/// Sends `signal` to the command, unless it is a SIGINT the terminal already delivered.
/// A command that has exited (ESRCH) is not an error.
pub fn forward(child: &std::process::Child, signal: Signal) -> Result<()> {
    let pid = Pid::from_child(child);
    if signal == Signal::INT && in_terminal_foreground(pid) {
        return Ok(());
    }
    match kill_process(pid, signal) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(e) => Err(io::Error::from(e)).context("failed to forward a signal to the command"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(argv: &[&str]) -> i32 {
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
        exit_code(spawn(&argv, false).unwrap().wait().unwrap())
    }

    #[test]
    fn exit_codes_as_a_shell_reports_them() {
        assert_eq!(run(&["sh", "-c", "exit 0"]), 0);
        assert_eq!(run(&["sh", "-c", "exit 3"]), 3);
        assert_eq!(run(&["sh", "-c", "kill -KILL $$"]), 137);
        assert_eq!(run(&["sh", "-c", "kill -TERM $$"]), 143);
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let e = spawn(&["gpufeed-no-such-program".to_owned()], false).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("failed to run `gpufeed-no-such-program`: "),
            "{e:#}"
        );
        assert!(spawn(&[], false).is_err());
    }

    #[test]
    fn forwarding_to_an_exited_child_is_fine() {
        let mut c = spawn(&["true".to_owned()], false).unwrap();
        c.wait().unwrap();
        forward(&c, Signal::TERM).unwrap();
    }
}
