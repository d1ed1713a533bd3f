//! Why a target cannot be sampled, each with what to do.

/// Why `gpufeed attach` cannot sample a process.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// No such process.
    #[error("no process {pid}: check the PID (`pgrep -af python` lists the Python processes)")]
    NoSuchProcess {
        /// The PID given.
        pid: u32,
    },
    /// Neither the process nor any process below it runs Python.
    #[error(
        "process {pid} ({name}) is not Python, and no Python process runs below it: give the PID of the training script (`pgrep -af python`)"
    )]
    NotPython {
        /// The PID given.
        pid: u32,
        /// Its command name.
        name: String,
    },
    /// A Python version py-spy cannot read.
    #[error(
        "process {pid} runs Python {version}, which gpufeed's stack reader (py-spy 0.4) cannot read (it reads 2.3-2.7 and 3.3-3.15): time the loop with gpufeed.StepTimer instead"
    )]
    UnsupportedPython {
        /// The process.
        pid: u32,
        /// `major.minor`.
        version: String,
    },
    /// The process may not be read.
    #[error(
        "permission denied reading the memory of process {pid}: run gpufeed as the same user as the job, or with sudo; in a container, start it with --cap-add SYS_PTRACE; {yama}"
    )]
    PermissionDenied {
        /// The process.
        pid: u32,
        /// What `kernel.yama.ptrace_scope` is and allows.
        yama: String,
    },
    /// gpufeed's own process.
    #[error(
        "process {pid} is this process: attach samples another process; to time your own loop, use gpufeed.StepTimer"
    )]
    OwnProcess {
        /// The PID given.
        pid: u32,
    },
    /// A bad option.
    #[error("{0}")]
    Usage(String),
    /// py-spy could not read the interpreter's state.
    #[error("could not read the Python stacks of process {pid}: {reason}")]
    Unreadable {
        /// The process.
        pid: u32,
        /// py-spy's error, all its causes.
        reason: String,
    },
}

impl AttachError {
    /// Permission denied on `pid`, saying what Yama allows on this machine.
    #[must_use]
    pub fn permission(pid: u32) -> Self {
        let yama = match fs_err::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
            .ok()
            .and_then(|s| s.trim().parse::<u8>().ok())
        {
            Some(0) => "kernel.yama.ptrace_scope is 0 (no extra restriction)".to_owned(),
            Some(n) => format!(
                "kernel.yama.ptrace_scope is {n}: `sudo sysctl kernel.yama.ptrace_scope=0` lets a user read its own non-child processes"
            ),
            None => {
                "kernel.yama.ptrace_scope (if the kernel has Yama) may also forbid it".to_owned()
            }
        };
        Self::PermissionDenied { pid, yama }
    }
}
