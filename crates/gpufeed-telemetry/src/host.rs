//! Host metrics from `/proc`: what the CPU, the disks and a watched process tree were
//! doing while the GPU waited.
//!
//! | reading | file | how |
//! |---|---|---|
//! | CPU busy and iowait, total and per core | `/proc/stat` | difference of the jiffy counters between two reads: busy = all − idle − iowait ([proc(5)](https://man7.org/linux/man-pages/man5/proc_stat.5.html)) |
//! | pressure stall information | `/proc/pressure/{cpu,io,memory}` | difference of `total=` (µs stalled) over the wall time between reads, so a 100 ms tick sees 100 ms, where `avg10` would smear over 10 s ([PSI docs](https://docs.kernel.org/accounting/psi.html)) |
//! | disk read/write throughput | `/proc/diskstats` | difference of sectors (always 512 bytes) read/written, whole disks only (the names in `/sys/block`, without loop, RAM and device-mapper/RAID devices that would count the same bytes twice) |
//! | memory in use | `/proc/meminfo` | `MemTotal − MemAvailable` |
//! | load | `/proc/loadavg` | the 1-minute average |
//! | CPU of a process tree (`gpufeed watch`) | `/proc/<pid>/stat` | difference of `utime + stime + cutime + cstime` summed over the tree: a child that exited and was reaped moved its time into its parent's `c` fields, so it is still counted |
//!
//! Resolution: `/proc/stat` counts in jiffies of 1/`USER_HZ` s (100 on Linux), so over a
//! 100 ms tick a core's counters move by about 10: per-core figures come in 10 % steps,
//! the total over N cores in 10/N % steps. PSI and the process tree are counted in
//! microseconds and ticks of the same clock, diskstats in sectors.
//!
//! The parsers are pure functions over the files' text, tested on fixtures. [`ProcHost`]
//! reads the files and is a [`Source`] of [`HostSample`]s; a file the kernel does not
//! have (PSI before Linux 4.20, `/proc` outside Linux) makes its readings `None`, never an
//! error. The first poll only takes the baseline: rates need two reads.
//!
//! The tree is found by scanning every `/proc/<pid>/stat` for parent links, which costs a
//! few milliseconds on a busy machine, so it is done once a second
//! ([`TREE_REFRESH_S`]); the ticks between read only the tree's own files.
//!
//! ```
//! use gpufeed_telemetry::host::{cpu_usage, parse_stat};
//! let a = parse_stat("cpu  100 0 100 800 0 0 0 0 0 0\n").unwrap();
//! let b = parse_stat("cpu  150 0 150 850 50 0 0 0 0 0\n").unwrap();
//! let (busy, iowait) = cpu_usage(&a.total, &b.total).unwrap();
//! assert_eq!((busy, iowait), (50.0, 25.0));
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::jsonl::{GpuInfo, HostMetrics, HostSample, Record};
use crate::source::{Source, SourceError};

/// Seconds between two scans of `/proc` for the members of a watched process tree.
pub const TREE_REFRESH_S: f64 = 1.0;

/// Jiffy counters of one line of `/proc/stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// Normal processes in user mode (includes guest time).
    pub user: u64,
    /// Niced processes in user mode.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while I/O was outstanding.
    pub iowait: u64,
    /// Hard interrupts.
    pub irq: u64,
    /// Soft interrupts.
    pub softirq: u64,
    /// Stolen by the hypervisor.
    pub steal: u64,
}

impl CpuTime {
    /// Every jiffy counted (guest time is already in `user`).
    #[must_use]
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Busy jiffies: every one but idle and iowait (steal included: the CPU was not this
    /// guest's).
    #[must_use]
    pub fn busy(&self) -> u64 {
        self.total().saturating_sub(self.idle + self.iowait)
    }
}

/// `/proc/stat`: the `cpu` line and one per core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuStat {
    /// All CPUs together.
    pub total: CpuTime,
    /// One per `cpuN` line, in file order.
    pub cores: Vec<CpuTime>,
}

/// Parses `/proc/stat`; `None` without a `cpu` line.
#[must_use]
pub fn parse_stat(text: &str) -> Option<CpuStat> {
    let mut total = None;
    let mut cores = Vec::new();
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        let Some(name) = f.next() else { continue };
        if !name.starts_with("cpu") {
            continue;
        }
        let v: Vec<u64> = f.take(8).map_while(|x| x.parse().ok()).collect();
        if v.len() < 4 {
            continue;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let t = CpuTime {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        };
        if name == "cpu" {
            total = Some(t);
        } else {
            cores.push(t);
        }
    }
    Some(CpuStat {
        total: total?,
        cores,
    })
}

/// Busy and iowait shares of CPU time between two reads, in %; `None` when no time
/// passed. Counters that went backwards (iowait can, on some kernels) count as 0.
#[must_use]
pub fn cpu_usage(prev: &CpuTime, cur: &CpuTime) -> Option<(f64, f64)> {
    let total = cur.total().saturating_sub(prev.total());
    if total == 0 {
        return None;
    }
    let idle = cur.idle.saturating_sub(prev.idle);
    let iowait = cur.iowait.saturating_sub(prev.iowait);
    let busy = total.saturating_sub(idle + iowait);
    let pct = |x: u64| x as f64 / total as f64 * 100.0;
    Some((pct(busy), pct(iowait)))
}

/// One `/proc/pressure/*` file: microseconds stalled since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pressure {
    /// `some`: at least one task stalled.
    pub some_us: u64,
    /// `full`: all non-idle tasks stalled at once (absent for `cpu` before Linux 5.13).
    pub full_us: Option<u64>,
}

/// Parses a `/proc/pressure/*` file; `None` without a `some` line.
#[must_use]
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        let kind = f.next();
        let total = f
            .find_map(|kv| kv.strip_prefix("total="))
            .and_then(|v| v.parse::<u64>().ok());
        match kind {
            Some("some") => some = total,
            Some("full") => full = total,
            _ => {}
        }
    }
    Some(Pressure {
        some_us: some?,
        full_us: full,
    })
}

/// Sectors read and written, summed over the disks counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskTotals {
    /// Sectors read (512 bytes each, whatever the device's sector size).
    pub read_sectors: u64,
    /// Sectors written.
    pub write_sectors: u64,
}

/// Bytes in a `/proc/diskstats` sector.
pub const SECTOR_BYTES: f64 = 512.0;

/// Parses `/proc/diskstats`, summing the devices for which `count(name)` is true; `None`
/// when no line parses.
#[must_use]
pub fn parse_diskstats(text: &str, count: impl Fn(&str) -> bool) -> Option<DiskTotals> {
    let mut totals = DiskTotals::default();
    let mut any = false;
    for line in text.lines() {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        // major minor name reads merged sectors_read ms writes merged sectors_written ...
        if f.len() < 10 {
            continue;
        }
        let (Ok(read), Ok(written)) = (f[5].parse::<u64>(), f[9].parse::<u64>()) else {
            continue;
        };
        any = true;
        if count(f[2]) {
            totals.read_sectors += read;
            totals.write_sectors += written;
        }
    }
    any.then_some(totals)
}

/// Whether a name in `/sys/block` is a disk whose bytes are not counted elsewhere:
/// not a loop, RAM or zram device, and not a device-mapper or software-RAID device
/// (they sit on top of disks that are counted).
#[must_use]
pub fn is_counted_disk(name: &str) -> bool {
    !["loop", "ram", "zram", "dm-", "md"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Memory in use from `/proc/meminfo`, MiB: `MemTotal − MemAvailable`.
#[must_use]
pub fn parse_meminfo(text: &str) -> Option<f64> {
    let mut total = None;
    let mut available = None;
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        match (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) {
            (Some("MemTotal:"), Some(kb)) => total = Some(kb),
            (Some("MemAvailable:"), Some(kb)) => available = Some(kb),
            _ => {}
        }
    }
    Some(total?.saturating_sub(available?) as f64 / 1024.0)
}

/// The 1-minute load average from `/proc/loadavg`.
#[must_use]
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

/// The fields of `/proc/<pid>/stat` gpufeed uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidStat {
    /// Process id.
    pub pid: u32,
    /// Parent's id.
    pub ppid: u32,
    /// `utime + stime + cutime + cstime`, clock ticks: this process and its reaped
    /// children.
    pub cpu_ticks: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may hold
/// spaces and parentheses itself, so fields are counted from the last `)`.
#[must_use]
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    // After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
    let rest: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).copied();
    let ppid = field(4)?.parse().ok()?;
    let mut cpu_ticks = 0u64;
    for n in 14..=17 {
        // cutime/cstime are signed in the kernel's format; negative never happens in
        // practice, and would count as 0.
        let v: i64 = field(n)?.parse().ok()?;
        cpu_ticks += v.max(0) as u64;
    }
    Some(PidStat {
        pid,
        ppid,
        cpu_ticks,
    })
}

/// `root` and every process below it, from (pid, ppid) pairs; `root` first.
#[must_use]
pub fn descendants(procs: &[(u32, u32)], root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(pid, ppid) in procs {
        if pid != ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut seen = HashSet::from([root]);
    let mut i = 0;
    while let Some(&p) = out.get(i) {
        for &c in children.get(&p).into_iter().flatten() {
            if seen.insert(c) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// `root` and its descendants, root first, from every `<proc>/<pid>/stat`; empty when
/// `root` does not exist (or `proc` cannot be listed).
#[must_use]
pub fn process_tree(proc: &Path, root: u32) -> Vec<u32> {
    #[allow(clippy::disallowed_methods)]
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let procs: Vec<(u32, u32)> = dir
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| read(&proc.join(format!("{pid}/stat"))))
        .filter_map(|s| parse_pid_stat(&s))
        .map(|s| (s.pid, s.ppid))
        .collect();
    if !procs.iter().any(|&(pid, _)| pid == root) {
        return Vec::new();
    }
    descendants(&procs, root)
}

/// Reads a file of `/proc` or `/sys`; `None` for any error: a missing reading, not a
/// failure, and the path would add nothing a user can act on.
#[allow(clippy::disallowed_methods)]
fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The host name, from `/proc/sys/kernel/hostname`.
#[must_use]
pub fn hostname() -> Option<String> {
    read(Path::new("/proc/sys/kernel/hostname"))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// What one read of the files gave.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    t: f64,
    cpu: Option<CpuStat>,
    psi: [Option<Pressure>; 3],
    disk: Option<DiskTotals>,
    tree: Option<(u64, u32)>,
}

/// The `/proc` [`Source`]: one [`HostSample`] per poll from the second poll on.
#[derive(Debug)]
pub struct ProcHost {
    proc: PathBuf,
    disks: Option<HashSet<String>>,
    prev: Option<Snapshot>,
    watch: Option<u32>,
    tree: Vec<u32>,
    tree_at: f64,
    ticks_per_s: f64,
}

impl ProcHost {
    /// Reads `/proc` and `/sys/block`.
    #[must_use]
    pub fn new() -> Self {
        Self::with_roots(Path::new("/proc"), Path::new("/sys/block"))
    }

    /// Reads another `/proc` and `/sys/block` (tests use fixture folders).
    #[must_use]
    pub fn with_roots(proc: &Path, sys_block: &Path) -> Self {
        #[allow(clippy::disallowed_methods)]
        let disks = std::fs::read_dir(sys_block).ok().map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| is_counted_disk(n))
                .collect()
        });
        ProcHost {
            proc: proc.to_owned(),
            disks,
            prev: None,
            watch: None,
            tree: Vec::new(),
            tree_at: f64::NEG_INFINITY,
            ticks_per_s: rustix::param::clock_ticks_per_second() as f64,
        }
    }

    /// Also reports the CPU of `pid` and its descendants.
    #[must_use]
    pub fn watch(mut self, pid: u32) -> Self {
        self.watch = Some(pid);
        self
    }

    /// The members of the watched tree at the last scan, root first.
    #[must_use]
    pub fn tree(&self) -> &[u32] {
        &self.tree
    }

    fn snapshot(&mut self, t: f64) -> Snapshot {
        let p = |rel: &str| self.proc.join(rel);
        let cpu = read(&p("stat")).and_then(|s| parse_stat(&s));
        let psi = ["pressure/cpu", "pressure/io", "pressure/memory"]
            .map(|f| read(&p(f)).and_then(|s| parse_pressure(&s)));
        let disk = self.disks.as_ref().and_then(|disks| {
            read(&p("diskstats")).and_then(|s| parse_diskstats(&s, |n| disks.contains(n)))
        });
        let tree = self.watch.and_then(|root| self.tree_cpu(root, t));
        Snapshot {
            t,
            cpu,
            psi,
            disk,
            tree,
        }
    }

    /// Ticks and member count of the watched tree; `None` once the root is gone.
    fn tree_cpu(&mut self, root: u32, t: f64) -> Option<(u64, u32)> {
        if t - self.tree_at >= TREE_REFRESH_S || self.tree.is_empty() {
            self.tree_at = t;
            self.tree = self.scan_tree(root);
        }
        let mut ticks = 0;
        let mut count = 0;
        let mut root_alive = false;
        for &pid in &self.tree {
            if let Some(s) =
                read(&self.proc.join(format!("{pid}/stat"))).and_then(|s| parse_pid_stat(&s))
            {
                ticks += s.cpu_ticks;
                count += 1;
                root_alive |= pid == root;
            }
        }
        root_alive.then_some((ticks, count))
    }

    fn scan_tree(&self, root: u32) -> Vec<u32> {
        process_tree(&self.proc, root)
    }

    fn metrics(&self, prev: &Snapshot, cur: &Snapshot) -> HostMetrics {
        let dt = cur.t - prev.t;
        let round = |x: f64| (x * 100.0).round() / 100.0;
        let mut m = HostMetrics::default();
        if let (Some(a), Some(b)) = (&prev.cpu, &cur.cpu) {
            if let Some((busy, iowait)) = cpu_usage(&a.total, &b.total) {
                m.cpu_pct = Some(round(busy));
                m.iowait_pct = Some(round(iowait));
            }
            if a.cores.len() == b.cores.len() && !a.cores.is_empty() {
                m.cpu_cores_pct = a
                    .cores
                    .iter()
                    .zip(&b.cores)
                    .map(|(a, b)| cpu_usage(a, b).map(|(busy, _)| (busy * 10.0).round() / 10.0))
                    .collect();
            }
        }
        let stall = |a: Option<u64>, b: Option<u64>| {
            let (a, b) = (a?, b?);
            Some(round(
                (b.saturating_sub(a) as f64 / 1e6 / dt * 100.0).min(100.0),
            ))
        };
        let [cpu, io, mem] = [0, 1, 2].map(|i| (prev.psi[i], cur.psi[i]));
        m.psi_cpu_some_pct = stall(cpu.0.map(|p| p.some_us), cpu.1.map(|p| p.some_us));
        m.psi_io_some_pct = stall(io.0.map(|p| p.some_us), io.1.map(|p| p.some_us));
        m.psi_io_full_pct = stall(io.0.and_then(|p| p.full_us), io.1.and_then(|p| p.full_us));
        m.psi_mem_some_pct = stall(mem.0.map(|p| p.some_us), mem.1.map(|p| p.some_us));
        m.psi_mem_full_pct = stall(mem.0.and_then(|p| p.full_us), mem.1.and_then(|p| p.full_us));
        if let (Some(a), Some(b)) = (prev.disk, cur.disk) {
            let mib_s =
                |x: u64, y: u64| round(y.saturating_sub(x) as f64 * SECTOR_BYTES / 1048576.0 / dt);
            m.disk_read_mib_s = Some(mib_s(a.read_sectors, b.read_sectors));
            m.disk_write_mib_s = Some(mib_s(a.write_sectors, b.write_sectors));
        }
        if let (Some((a, _)), Some((b, n))) = (prev.tree, cur.tree) {
            m.proc_cpu_pct = Some(round(
                b.saturating_sub(a) as f64 / self.ticks_per_s / dt * 100.0,
            ));
            m.proc_count = Some(n);
        }
        m.load_1m = read(&self.proc.join("loadavg")).and_then(|s| parse_loadavg(&s));
        m.mem_used_mib = read(&self.proc.join("meminfo"))
            .and_then(|s| parse_meminfo(&s))
            .map(f64::round);
        m
    }
}

impl Default for ProcHost {
    fn default() -> Self {
        Self::new()
    }
}

impl Source for ProcHost {
    fn name(&self) -> &str {
        "host"
    }

    fn gpus(&self) -> &[GpuInfo] {
        &[]
    }

    /// `now` must advance in real seconds: rates divide by it.
    fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError> {
        if self.prev.as_ref().is_some_and(|p| now <= p.t) {
            return Ok(());
        }
        let cur = self.snapshot(now);
        if let Some(prev) = &self.prev {
            out.push(Record::Host(HostSample {
                t: now,
                host: self.metrics(prev, &cur),
            }));
        }
        self.prev = Some(cur);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
