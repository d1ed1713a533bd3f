//! What `/proc` says about the target: whether it exists, is Python (and which version),
//! may be read, which of its descendants are the training processes (ranks under a
//! launcher) and their workers, and their CPU, I/O and PID-namespace ids.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use gpufeed_telemetry::host::{parse_pid_stat, process_tree};

use crate::AttachError;

fn proc_path(pid: u32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

/// A `/proc` file, or `None` when it cannot be read (a missing reading, not a failure).
fn read(pid: u32, file: &str) -> Option<String> {
    fs_err::read_to_string(proc_path(pid, file)).ok()
}

/// Whether process `pid` exists and has not exited (a zombie, exited but not yet reaped
/// by its parent, has no interpreter left to read).
#[must_use]
pub fn exists(pid: u32) -> bool {
    read(pid, "stat").is_some_and(|s| {
        let state = s
            .rfind(')')
            .and_then(|i| s[i + 1..].split_ascii_whitespace().next());
        !matches!(state, Some("Z" | "X" | "x"))
    })
}

/// The command name (`/proc/PID/comm`).
#[must_use]
pub fn comm(pid: u32) -> String {
    read(pid, "comm").map_or_else(|| "?".to_owned(), |s| s.trim().to_owned())
}

/// The command line, arguments joined by spaces.
#[must_use]
pub fn cmdline(pid: u32) -> String {
    fs_err::read(proc_path(pid, "cmdline"))
        .ok()
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The rank a launcher gave the process, from its environment.
#[must_use]
pub fn env_rank(pid: u32) -> Option<u32> {
    let env = fs_err::read(proc_path(pid, "environ")).ok()?;
    let env = String::from_utf8_lossy(&env);
    // torchrun/accelerate (RANK), Open MPI, MPICH/Intel MPI (PMI_RANK), Slurm's srun.
    ["RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|key| {
            env.split('\0')
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
        })
}

/// The process's ids in each PID namespace, outermost first (`NSpid` of
/// `/proc/PID/status`); `[pid]` when the kernel does not say.
#[must_use]
pub fn nspid(pid: u32) -> Vec<u32> {
    read(pid, "status")
        .and_then(|s| parse_nspid(&s))
        .unwrap_or_else(|| vec![pid])
}

/// The `NSpid:` line of a `/proc/PID/status` text.
#[must_use]
pub fn parse_nspid(status: &str) -> Option<Vec<u32>> {
    let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    let ids: Vec<u32> = line
        .split_ascii_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    (!ids.is_empty()).then_some(ids)
}

/// `utime + stime` (and reaped children's) in clock ticks.
#[must_use]
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    read(pid, "stat")
        .and_then(|s| parse_pid_stat(&s))
        .map(|s| s.cpu_ticks)
}

/// Per thread of `pid`: nanoseconds on the CPU and waiting on a run queue, from
/// `/proc/PID/task/TID/schedstat` (the kernel's scheduler accounting, `CONFIG_SCHED_INFO`;
/// absent on kernels without it, and then `None`). Their sum is the time the thread was
/// runnable, the state py-spy reports as `active`.
#[must_use]
pub fn thread_runnable_ns(pid: u32) -> Option<HashMap<u64, u64>> {
    per_thread(pid, "schedstat", parse_schedstat).filter(|m| !m.is_empty())
}

/// Per thread of `pid`: `parse` of its `/proc/PID/task/TID/FILE`, for the threads whose
/// file could be read and parsed (a thread may exit between the listing and the read).
/// `None` where the task list cannot be read.
fn per_thread(
    pid: u32,
    file: &str,
    parse: impl Fn(&str) -> Option<u64>,
) -> Option<HashMap<u64, u64>> {
    let mut out = HashMap::new();
    for entry in fs_err::read_dir(proc_path(pid, "task")).ok()?.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<u64>().ok())
        else {
            continue;
        };
        if let Ok(text) = fs_err::read_to_string(entry.path().join(file))
            && let Some(v) = parse(&text)
        {
            out.insert(tid, v);
        }
    }
    Some(out)
}

/// How long each thread of `pid` was on a CPU during a short look (the growth of its
/// on-CPU nanoseconds in `/proc/PID/task/TID/schedstat` over `look`), for the threads
/// that ran: what [`crate::sample`] reads at a tick where the training thread sits in a
/// compiled TensorFlow function, to tell its wait for input from its compute (TF's
/// kernels run on threads that never run Python). Neither the state letter `R` nor "ran
/// at all" would do: `R` also counts a thread queued for a CPU (on a machine whose cores
/// are all busy, and the sampler's read takes one, most of them), and a thread pool's
/// workers wake for a few microseconds between ops many times a step. `None` where the
/// task list cannot be read.
#[must_use]
pub fn cpu_during(pid: u32, look: std::time::Duration) -> Option<Vec<(u64, u64)>> {
    let before = on_cpu_ns(pid)?;
    std::thread::sleep(look);
    let after = on_cpu_ns(pid)?;
    Some(
        after
            .into_iter()
            .filter_map(|(tid, ns)| {
                let grew = ns.saturating_sub(*before.get(&tid)?);
                (grew > 0).then_some((tid, grew))
            })
            .collect(),
    )
}

/// Whether process `pid` has a GPU driver loaded (CUDA's `libcuda.so` or ROCm's
/// `libamdhip64.so` in `/proc/PID/maps`): a framework loads it when it first uses a GPU,
/// so without it the process computes on the CPU. `None` where the map cannot be read.
#[must_use]
pub fn gpu_driver_loaded(pid: u32) -> Option<bool> {
    let maps = read(pid, "maps")?;
    Some(
        maps.lines()
            .any(|l| l.contains("/libcuda.so") || l.contains("/libamdhip64.so")),
    )
}

/// The name of thread `tid` of `pid` (`/proc/PID/task/TID/comm`), when it can be read.
#[must_use]
pub fn thread_name(pid: u32, tid: u64) -> Option<String> {
    fs_err::read_to_string(proc_path(pid, &format!("task/{tid}/comm")))
        .ok()
        .map(|n| n.trim_end().to_owned())
}

/// Each thread's on-CPU nanoseconds (the first field of its schedstat).
fn on_cpu_ns(pid: u32) -> Option<HashMap<u64, u64>> {
    per_thread(pid, "schedstat", |text| {
        text.split_whitespace().next()?.parse().ok()
    })
}

/// `ON_CPU_NS RUNQUEUE_NS TIMESLICES` → on-CPU plus run-queue nanoseconds.
#[must_use]
pub fn parse_schedstat(text: &str) -> Option<u64> {
    let mut it = text.split_whitespace().map(str::parse::<u64>);
    let on_cpu = it.next()?.ok()?;
    let queued = it.next()?.ok()?;
    Some(on_cpu.saturating_add(queued))
}

/// Clock ticks per second of `/proc/PID/stat` times.
#[must_use]
pub fn ticks_per_s() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

/// Bytes the process caused to be read from storage (`read_bytes` of `/proc/PID/io`).
#[must_use]
pub fn read_bytes(pid: u32) -> Option<u64> {
    read(pid, "io")?
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))?
        .trim()
        .parse()
        .ok()
}

/// What the memory maps of a process say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A CPython process; the version when a file name gives it (`libpython3.11.so`,
    /// `python3.11`).
    Python(Option<(u32, u32)>),
    /// No Python interpreter is mapped.
    NotPython,
    /// The maps may not be read: another user's process, or ptrace is forbidden.
    Denied,
    /// The process is gone.
    Gone,
}

/// Reads `/proc/PID/maps` (and `exe`) to tell what the process is.
#[must_use]
pub fn kind(pid: u32) -> Kind {
    match fs_err::read_to_string(proc_path(pid, "maps")) {
        Ok(maps) => {
            let exe = fs_err::read_link(proc_path(pid, "exe"))
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            kind_of(&maps, &exe)
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => Kind::Denied,
        Err(_) => Kind::Gone,
    }
}

/// [`kind`] from the text of the maps and the executable's path.
#[must_use]
pub fn kind_of(maps: &str, exe: &str) -> Kind {
    let paths = maps
        .lines()
        .filter_map(|l| l.split_ascii_whitespace().nth(5))
        .chain(std::iter::once(exe));
    let mut python = false;
    let mut version = None;
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        let rest = name
            .strip_prefix("libpython")
            .or_else(|| name.strip_prefix("python"));
        let Some(rest) = rest else { continue };
        // `python`, `python3`, `python3.11`, `python3.11d`, `libpython3.11.so.1.0`.
        if !(rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit())) {
            continue;
        }
        python = true;
        if version.is_none() {
            version = parse_version(rest);
        }
    }
    if python {
        Kind::Python(version)
    } else {
        Kind::NotPython
    }
}

/// `3.11` from `3.11`, `3.11d`, `3.11.so.1.0`.
fn parse_version(s: &str) -> Option<(u32, u32)> {
    let (major, rest) = s.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// A Python `(major, minor)`.
pub type Version = (u32, u32);

/// The Python versions py-spy 0.4 reads (its `python_bindings`: 2.3-2.7 share 2.7's
/// layout, 3.3 to 3.15 each have their own).
pub const READABLE: &[(Version, Version)] = &[((2, 3), (2, 7)), ((3, 3), (3, 15))];

/// `Ok` when py-spy reads Python `major.minor`, else the error naming the version.
pub fn check_version(pid: u32, major: u32, minor: u32) -> Result<(), AttachError> {
    if READABLE
        .iter()
        .any(|&(lo, hi)| (major, minor) >= lo && (major, minor) <= hi)
    {
        Ok(())
    } else {
        Err(AttachError::UnsupportedPython {
            pid,
            version: format!("{major}.{minor}"),
        })
    }
}

/// Launchers that start the training processes as their children: the program (or
/// Python module) name, and the launcher it is.
const LAUNCHERS: &[(&str, &str)] = &[
    ("torchrun", "torchrun"),
    ("torch.distributed.run", "torchrun"),
    ("torch.distributed.launch", "torchrun"),
    ("accelerate", "accelerate"),
    ("accelerate-launch", "accelerate"),
    ("deepspeed", "deepspeed"),
    ("mpirun", "mpirun"),
    ("mpiexec", "mpirun"),
    ("orterun", "mpirun"),
    ("prterun", "mpirun"),
    ("srun", "srun"),
];

/// The launcher a command line runs, if any: its program, or the script or module the
/// Python interpreter runs (`python /venv/bin/torchrun`, `python -m torch.distributed.run`).
#[must_use]
pub fn launcher_of(cmdline: &str) -> Option<&'static str> {
    let words: Vec<&str> = cmdline.split_ascii_whitespace().collect();
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    let program = base(words.first()?);
    let name = if program.starts_with("python") {
        match words.get(1).copied() {
            Some("-m") => words.get(2).map(|m| (*m).to_owned())?,
            Some(script) => base(script),
            None => return None,
        }
    } else {
        program
    };
    LAUNCHERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, launcher)| *launcher)
}

/// A training process to sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankProc {
    /// Its PID.
    pub pid: u32,
    /// Its rank, from its environment.
    pub rank: Option<u32>,
}

/// What `gpufeed attach PID` samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The PID given.
    pub pid: u32,
    /// The launcher followed, when the PID was not itself the training process.
    pub launcher: Option<String>,
    /// The training processes.
    pub ranks: Vec<RankProc>,
}

/// Processes that are children of a Python training process without being its workers.
fn is_helper(cmdline: &str) -> bool {
    ["resource_tracker", "semaphore_tracker", "forkserver"]
        .iter()
        .any(|h| cmdline.contains(h))
}

/// Resolves the PID given to the processes to sample, or says why it cannot be.
pub fn resolve(pid: u32) -> Result<Target, AttachError> {
    if !exists(pid) {
        return Err(AttachError::NoSuchProcess { pid });
    }
    let root = kind(pid);
    if root == Kind::Denied {
        return Err(AttachError::permission(pid));
    }
    let tree = process_tree(Path::new("/proc"), pid);
    let below: Vec<u32> = tree.iter().copied().filter(|&p| p != pid).collect();
    let cmd = cmdline(pid);
    let named = launcher_of(&cmd);
    // Descendants a launcher gave a rank, when the root has none itself.
    let ranked: Vec<RankProc> = if env_rank(pid).is_none() {
        below
            .iter()
            .filter_map(|&p| env_rank(p).map(|r| (p, r)))
            .filter(|&(p, _)| matches!(kind(p), Kind::Python(_)))
            .map(|(p, r)| RankProc {
                pid: p,
                rank: Some(r),
            })
            .collect()
    } else {
        Vec::new()
    };
    let (launcher, mut ranks) = if !ranked.is_empty() {
        // A rank's own workers inherit its RANK: keep the topmost of each.
        let pids: Vec<u32> = ranked.iter().map(|r| r.pid).collect();
        let top = ranked
            .into_iter()
            .filter(|r| {
                let parent = read(r.pid, "stat")
                    .and_then(|s| parse_pid_stat(&s))
                    .map(|s| s.ppid);
                !parent.is_some_and(|pp| pids.contains(&pp))
            })
            .collect();
        (Some(named.map_or_else(|| comm(pid), str::to_owned)), top)
    } else if matches!(root, Kind::Python(_)) && named.is_none() {
        (
            None,
            vec![RankProc {
                pid,
                rank: env_rank(pid),
            }],
        )
    } else {
        // A launcher or wrapper (`sh -c`, mpirun) without rank variables: its topmost
        // Python descendants.
        let python: Vec<u32> = below
            .iter()
            .copied()
            .filter(|&p| matches!(kind(p), Kind::Python(_)) && !is_helper(&cmdline(p)))
            .collect();
        let top: Vec<RankProc> = python
            .iter()
            .copied()
            .filter(|&p| {
                let parent = read(p, "stat")
                    .and_then(|s| parse_pid_stat(&s))
                    .map(|s| s.ppid);
                !parent.is_some_and(|pp| python.contains(&pp))
            })
            .map(|p| RankProc {
                pid: p,
                rank: env_rank(p),
            })
            .collect();
        if top.is_empty() {
            if matches!(root, Kind::Python(_)) {
                (None, vec![RankProc { pid, rank: None }])
            } else {
                return Err(AttachError::NotPython {
                    pid,
                    name: comm(pid),
                });
            }
        } else {
            (Some(named.map_or_else(|| comm(pid), str::to_owned)), top)
        }
    };
    ranks.sort_by_key(|r| (r.rank, r.pid));
    for r in &ranks {
        match kind(r.pid) {
            Kind::Python(Some((major, minor))) => check_version(r.pid, major, minor)?,
            Kind::Denied => return Err(AttachError::permission(r.pid)),
            _ => {}
        }
    }
    Ok(Target {
        pid,
        launcher,
        ranks,
    })
}

/// The Python child processes of a training process (DataLoader workers, pools), without
/// multiprocessing's helpers.
#[must_use]
pub fn workers(rank: u32) -> Vec<u32> {
    process_tree(Path::new("/proc"), rank)
        .into_iter()
        .filter(|&p| p != rank)
        .filter(|&p| matches!(kind(p), Kind::Python(_)) && !is_helper(&cmdline(p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_is_on_cpu_plus_queued() {
        assert_eq!(parse_schedstat("139696835 14922254 244\n"), Some(154619089));
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_schedstat(""), None);
        // This process's own threads are readable.
        let own = thread_runnable_ns(std::process::id()).unwrap();
        assert!(own.contains_key(&u64::from(std::process::id())));
    }

    #[test]
    fn python_and_its_version_from_the_maps() {
        let maps = "7f0-7f1 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\n\
                    7f2-7f3 r-xp 0 08:01 2 /usr/lib/libc.so.6\n";
        assert_eq!(
            kind_of(maps, "/usr/bin/python3"),
            Kind::Python(Some((3, 12)))
        );
        assert_eq!(
            kind_of("", "/root/.pyenv/versions/3.11.7/bin/python3.11"),
            Kind::Python(Some((3, 11)))
        );
        assert_eq!(kind_of("", "/usr/bin/python3"), Kind::Python(None));
        assert_eq!(kind_of("", "/usr/bin/bash"), Kind::NotPython);
        assert_eq!(kind_of("", "/usr/bin/pythonista"), Kind::NotPython);
    }

    /// The version check itself: only one Python is at hand, so the versions py-spy cannot
    /// read are tested here.
    #[test]
    fn versions_py_spy_cannot_read_are_named() {
        assert!(check_version(1, 3, 11).is_ok());
        assert!(check_version(1, 3, 15).is_ok());
        assert!(check_version(1, 2, 7).is_ok());
        for (major, minor) in [(3, 16), (3, 2), (2, 2), (4, 0)] {
            let e = check_version(7, major, minor).unwrap_err().to_string();
            assert!(e.contains(&format!("Python {major}.{minor}")), "{e}");
            assert!(e.contains("StepTimer"), "{e}");
        }
    }

    #[test]
    fn launchers_by_command_line() {
        assert_eq!(
            launcher_of("/usr/bin/python3 /venv/bin/torchrun --nproc-per-node 2 train.py"),
            Some("torchrun")
        );
        assert_eq!(
            launcher_of("python -m torch.distributed.run train.py"),
            Some("torchrun")
        );
        assert_eq!(
            launcher_of("/venv/bin/python /venv/bin/accelerate launch train.py"),
            Some("accelerate")
        );
        assert_eq!(launcher_of("mpirun -np 4 python train.py"), Some("mpirun"));
        assert_eq!(launcher_of("python train.py --launcher torchrun"), None);
    }

    #[test]
    fn nspid_of_a_container_process() {
        let status = "Name:\tpython\nNSpid:\t48213\t1\nPPid:\t0\n";
        assert_eq!(parse_nspid(status), Some(vec![48213, 1]));
        assert_eq!(parse_nspid("Name:\tx\n"), None);
    }
}
