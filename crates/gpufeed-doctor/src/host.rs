//! The host check: cores, memory against the data, swap, the CPU frequency governor and
//! what other processes use, from `/proc` and `/sys` (pure parsers over the files' text,
//! tested on fixtures; [`Roots`] points them elsewhere).
//!
//! Contention is judged over gpufeed's own run, never from the load average alone: the
//! 1-minute load still counts a build that ended seconds before gpufeed started (it decays
//! over minutes), so `cargo run -- doctor` would blame its own compilation. [`CpuSample`]
//! reads the host's jiffy counters and this process's own CPU time at the start of the run
//! and at its end; [`others_use`] is what the rest of the host used in between.
//!
//! ```
//! use gpufeed_doctor::host::{CpuSample, HostFacts, check, others_use};
//! use gpufeed_telemetry::host::CpuTime;
//!
//! // Two CPUs for 2 s (400 ticks): the host was busy 300 ticks, this process 100 of them.
//! let start = CpuSample { host: CpuTime { idle: 1000, ..CpuTime::default() }, cpus: 2, own_ticks: 50, seconds: 0.0 };
//! let end = CpuSample { host: CpuTime { user: 300, idle: 1100, ..CpuTime::default() }, cpus: 2, own_ticks: 150, seconds: 2.0 };
//! let others = others_use(&start, &end).unwrap();
//! assert_eq!(others.share, 0.5); // 200 of 400 ticks
//! let facts = HostFacts {
//!     cores: Some(2),
//!     load1: Some(0.2),
//!     others: Some(others),
//!     ..HostFacts::default()
//! };
//! let ids: Vec<&str> = check(&facts).iter().map(|f| f.id).collect();
//! assert_eq!(ids, ["host-summary", "host-load-high"]);
//! ```
//!
//! `cores vs num_workers` is `validate`'s `num-workers-above-cores` (it points at the line of
//! the config); the host summary repeats the figure.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpufeed_findings::constants::HOST_WINDOW_MIN_MS;
use gpufeed_stats::thresholds::{OTHERS_CPU_SHARE_HIGH, SWAP_IN_USE_MIB};
use gpufeed_telemetry::host::{CpuTime, parse_pid_stat, parse_stat};

use super::{fact, human_bytes};
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// Where `/proc` and `/sys` are (tests point them at fixtures).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// `/proc`.
    pub proc: PathBuf,
    /// `/sys`.
    pub sys: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Self {
            proc: PathBuf::from("/proc"),
            sys: PathBuf::from("/sys"),
        }
    }
}

/// `/proc/meminfo`, MiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meminfo {
    /// `MemTotal`.
    pub total_mib: Option<u64>,
    /// `MemAvailable`: what can be used without swapping, page cache included.
    pub available_mib: Option<u64>,
    /// `SwapTotal`.
    pub swap_total_mib: Option<u64>,
    /// `SwapFree`.
    pub swap_free_mib: Option<u64>,
}

/// Parses `/proc/meminfo` (kB values).
#[must_use]
pub fn parse_meminfo(text: &str) -> Meminfo {
    let mut m = Meminfo::default();
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        let (Some(key), Some(kb)) = (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        let mib = Some(kb / 1024);
        match key {
            "MemTotal:" => m.total_mib = mib,
            "MemAvailable:" => m.available_mib = mib,
            "SwapTotal:" => m.swap_total_mib = mib,
            "SwapFree:" => m.swap_free_mib = mib,
            _ => {}
        }
    }
    m
}

/// What the host check read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostFacts {
    /// Cores available to this process.
    pub cores: Option<usize>,
    /// Memory and swap.
    pub mem: Meminfo,
    /// `scaling_governor` → how many CPUs use it (empty: no cpufreq, as in most VMs).
    pub governors: BTreeMap<String, usize>,
    /// `scaling_driver` of cpu0 (`intel_pstate`, `acpi-cpufreq`, ...).
    pub cpufreq_driver: Option<String>,
    /// `energy_performance_preference` → how many CPUs use it.
    pub epp: BTreeMap<String, usize>,
    /// 1-minute load average (shown, not judged: it also counts the minutes before the run).
    pub load1: Option<f64>,
    /// What other processes used while gpufeed ran (`None`: not measured).
    pub others: Option<OthersUse>,
    /// The config's `num_workers` (its default when the file does not set it).
    pub num_workers: Option<usize>,
    /// Bytes in the data folder.
    pub data_bytes: Option<u64>,
    /// Bytes in the cache folder beside it.
    pub cache_bytes: Option<u64>,
}

impl HostFacts {
    /// Reads the host's files under `roots`; `cores` is this process's parallelism.
    #[must_use]
    pub fn collect(roots: &Roots, cores: Option<usize>) -> Self {
        let read = |p: PathBuf| fs_err::read_to_string(p).ok();
        let mem = read(roots.proc.join("meminfo"))
            .map(|t| parse_meminfo(&t))
            .unwrap_or_default();
        let load1 = read(roots.proc.join("loadavg"))
            .and_then(|t| gpufeed_telemetry::host::parse_loadavg(&t));
        let cpu = roots.sys.join("devices/system/cpu");
        let mut governors = BTreeMap::new();
        let mut epp = BTreeMap::new();
        for dir in cpu_dirs(&cpu) {
            let freq = dir.join("cpufreq");
            if let Some(g) = read(freq.join("scaling_governor")) {
                *governors.entry(g.trim().to_owned()).or_insert(0) += 1;
            }
            if let Some(e) = read(freq.join("energy_performance_preference")) {
                *epp.entry(e.trim().to_owned()).or_insert(0) += 1;
            }
        }
        let cpufreq_driver =
            read(cpu.join("cpu0/cpufreq/scaling_driver")).map(|d| d.trim().to_owned());
        Self {
            cores,
            mem,
            governors,
            cpufreq_driver,
            epp,
            load1,
            ..Self::default()
        }
    }
}

/// One read of the host's CPU counters and of this process's own CPU time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuSample {
    /// The `cpu` line of `/proc/stat` (all CPUs together), in ticks.
    pub host: CpuTime,
    /// The `cpuN` lines: the host's online CPUs.
    pub cpus: usize,
    /// `utime + stime + cutime + cstime` of this process (`/proc/self/stat`): its threads
    /// and its reaped children (the framework probes), in the same ticks.
    pub own_ticks: u64,
    /// When it was read, in seconds from an origin shared by the samples compared.
    pub seconds: f64,
}

impl CpuSample {
    /// Reads `/proc/stat` and `/proc/self/stat` under `roots`; `None` where either is
    /// missing or unreadable (not Linux, or fixture roots without them).
    #[must_use]
    pub fn read(roots: &Roots, origin: Instant) -> Option<Self> {
        let stat = parse_stat(&fs_err::read_to_string(roots.proc.join("stat")).ok()?)?;
        let own = parse_pid_stat(&fs_err::read_to_string(roots.proc.join("self/stat")).ok()?)?;
        Some(Self {
            host: stat.total,
            cpus: stat.cores.len().max(1),
            own_ticks: own.cpu_ticks,
            seconds: origin.elapsed().as_secs_f64(),
        })
    }
}

/// What the rest of the host used between two [`CpuSample`]s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OthersUse {
    /// Seconds between the samples.
    pub seconds: f64,
    /// The host's online CPUs.
    pub cpus: usize,
    /// Other processes' busy ticks plus the hypervisor's steal, over all ticks.
    pub share: f64,
    /// The steal alone, over all ticks.
    pub steal_share: f64,
}

/// What other processes used between `start` and `end`: the host's busy ticks less this
/// process's own. `None` when no tick passed.
#[must_use]
pub fn others_use(start: &CpuSample, end: &CpuSample) -> Option<OthersUse> {
    let total = end.host.total().checked_sub(start.host.total())?;
    if total == 0 {
        return None;
    }
    let busy = end.host.busy().saturating_sub(start.host.busy());
    let own = end.own_ticks.saturating_sub(start.own_ticks);
    // A child reaped in the window brings its whole CPU time, some of it from before the
    // window: never below zero.
    let others = busy.saturating_sub(own);
    let steal = end.host.steal.saturating_sub(start.host.steal);
    Some(OthersUse {
        seconds: end.seconds - start.seconds,
        cpus: end.cpus,
        share: others as f64 / total as f64,
        steal_share: steal as f64 / total as f64,
    })
}

/// Ends the window opened by `start`: waits until it is at least `HOST_WINDOW_MIN_MS`
/// long, then reads the end. `None` where `start` is.
#[must_use]
pub fn close_window(
    start: Option<&CpuSample>,
    roots: &Roots,
    origin: Instant,
) -> Option<OthersUse> {
    let start = start?;
    let min = Duration::from_millis(HOST_WINDOW_MIN_MS).as_secs_f64();
    let waited = origin.elapsed().as_secs_f64() - start.seconds;
    if waited < min {
        std::thread::sleep(Duration::from_secs_f64(min - waited));
    }
    others_use(start, &CpuSample::read(roots, origin)?)
}

/// `cpuN` folders under `/sys/devices/system/cpu`.
fn cpu_dirs(cpu: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cpu) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.strip_prefix("cpu")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// Drivers whose `powersave` governor is dynamic scaling guided by the energy preference
/// (intel_pstate and amd-pstate in active mode), not "lowest clock".
const EPP_DRIVERS: &[&str] = &["intel_pstate", "amd-pstate-epp"];

/// The rules over the host facts.
#[must_use]
pub fn check(h: &HostFacts) -> Vec<Finding> {
    let mut out = vec![summary(h)];
    let epp_driver = h
        .cpufreq_driver
        .as_deref()
        .is_some_and(|d| EPP_DRIVERS.contains(&d));
    let powersave = h.governors.get("powersave").copied().unwrap_or(0);
    let power_epp = h.epp.get("power").copied().unwrap_or(0);
    let slow = if epp_driver { power_epp } else { powersave };
    if slow > 0 {
        let total: usize = h.governors.values().sum();
        let what = if epp_driver {
            format!("energy_performance_preference `power` on {slow} of {total} CPUs")
        } else {
            format!("governor `powersave` on {slow} of {total} CPUs")
        };
        out.push(
            finding("host-cpu-powersave", &format!("the CPUs run at low clocks: {what}"))
                .evidence(format!(
                    "scaling_driver {}; governors {}; energy preferences {}",
                    h.cpufreq_driver.as_deref().unwrap_or("?"),
                    counts(&h.governors),
                    counts(&h.epp)
                ))
                .fix(if epp_driver {
                    "echo balance_performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference"
                } else {
                    "sudo cpupower frequency-set -g performance"
                }),
        );
    }
    if let (Some(total), Some(free)) = (h.mem.swap_total_mib, h.mem.swap_free_mib) {
        let used = total.saturating_sub(free);
        if used as f64 > SWAP_IN_USE_MIB {
            out.push(
                finding("host-swap-in-use", &format!("{used} MiB of swap in use"))
                    .evidence(format!(
                        "swap {used} of {total} MiB used; memory available {} MiB (reported above {SWAP_IN_USE_MIB:.0} MiB of swap)",
                        h.mem.available_mib.map_or_else(|| "?".to_owned(), |a| a.to_string())
                    ))
                    .fix(gpufeed_findings::rules::rule_info("host-swap-in-use").map_or("", |r| r.fix)),
            );
        }
    }
    if let Some(o) = &h.others
        && o.share >= OTHERS_CPU_SHARE_HIGH
    {
        out.push(
            finding(
                "host-load-high",
                &format!(
                    "other processes used {:.1} of {} CPUs while gpufeed ran",
                    o.share * o.cpus as f64,
                    o.cpus
                ),
            )
            .evidence(others_evidence(o, h.load1))
            .fix(gpufeed_findings::rules::rule_info("host-load-high").map_or("", |r| r.fix)),
        );
    }
    // What an epoch reads: the cache when there is one, else the raw data.
    let epoch = h.cache_bytes.or(h.data_bytes);
    if let (Some(bytes), Some(avail)) = (epoch, h.mem.available_mib)
        && bytes / (1024 * 1024) > avail
    {
        let what = if h.cache_bytes.is_some() {
            "the precomputed cache"
        } else {
            "the dataset"
        };
        out.push(
            finding(
                "host-ram-below-data",
                &format!(
                    "{what} ({}) is larger than the memory available ({avail} MiB)",
                    human_bytes(bytes)
                ),
            )
            .evidence(format!(
                "data {}, cache {}; memory total {} MiB, available {avail} MiB",
                h.data_bytes.map_or_else(|| "-".to_owned(), human_bytes),
                h.cache_bytes.map_or_else(|| "-".to_owned(), human_bytes),
                h.mem
                    .total_mib
                    .map_or_else(|| "?".to_owned(), |t| t.to_string()),
            ))
            .fix(gpufeed_findings::rules::rule_info("host-ram-below-data").map_or("", |r| r.fix)),
        );
    }
    out
}

fn summary(h: &HostFacts) -> Finding {
    let q =
        |v: Option<u64>| v.map_or_else(|| "?".to_owned(), |v| format!("{:.1}", v as f64 / 1024.0));
    let mut head = format!(
        "{} cores, {} GiB RAM ({} GiB available)",
        h.cores.map_or_else(|| "?".to_owned(), |c| c.to_string()),
        q(h.mem.total_mib),
        q(h.mem.available_mib)
    );
    if let Some(w) = h.num_workers {
        let _ = write!(head, ", num_workers {w}");
    }
    let mut ev = Vec::new();
    if let (Some(t), Some(f)) = (h.mem.swap_total_mib, h.mem.swap_free_mib) {
        ev.push(format!("swap {} of {t} MiB used", t.saturating_sub(f)));
    }
    ev.push(if h.governors.is_empty() {
        "no cpufreq governor (a virtual machine, or no frequency driver)".to_owned()
    } else {
        format!(
            "governor {} (driver {})",
            counts(&h.governors),
            h.cpufreq_driver.as_deref().unwrap_or("?")
        )
    });
    match (&h.others, h.load1) {
        (Some(o), load) => ev.push(others_evidence(o, load)),
        (None, Some(l)) => ev.push(format!(
            "1-minute load average {l:.2} (other processes' use over this run not measured)"
        )),
        (None, None) => {}
    }
    if let Some(d) = h.data_bytes {
        ev.push(format!("data {}", human_bytes(d)));
    }
    if let Some(c) = h.cache_bytes {
        ev.push(format!("cache {}", human_bytes(c)));
    }
    fact("host-summary", head).evidence(ev.join("; "))
}

/// `others 55 % of the host's CPU time over 1.2 s (steal 3 %; reported from 50 %); ...`
fn others_evidence(o: &OthersUse, load1: Option<f64>) -> String {
    let mut s = format!(
        "others {:.0} % of the host's CPU time over {:.1} s of this run (steal {:.0} %; reported from {:.0} %)",
        o.share * 100.0,
        o.seconds,
        o.steal_share * 100.0,
        OTHERS_CPU_SHARE_HIGH * 100.0
    );
    if let Some(l) = load1 {
        let _ = write!(
            s,
            "; 1-minute load average {l:.2}, which also counts the minute before the run"
        );
    }
    s
}

/// `performance ×8, powersave ×4`.
fn counts(m: &BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return "-".to_owned();
    }
    m.iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(h: &HostFacts) -> Vec<&'static str> {
        check(h).iter().map(|f| f.id).collect()
    }

    fn healthy() -> HostFacts {
        HostFacts {
            cores: Some(16),
            mem: Meminfo {
                total_mib: Some(64 * 1024),
                available_mib: Some(60 * 1024),
                swap_total_mib: Some(2048),
                swap_free_mib: Some(2040),
            },
            governors: [("performance".to_owned(), 16)].into(),
            cpufreq_driver: Some("acpi-cpufreq".into()),
            epp: BTreeMap::new(),
            load1: Some(0.5),
            others: None,
            num_workers: Some(8),
            data_bytes: Some(10 << 30),
            cache_bytes: None,
        }
    }

    #[test]
    fn meminfo_is_parsed() {
        let m = parse_meminfo(
            "MemTotal:       24681984 kB\nMemFree:  1 kB\nMemAvailable:   24120000 kB\nSwapTotal:  2097148 kB\nSwapFree:   1048576 kB\n",
        );
        assert_eq!(m.total_mib, Some(24103));
        assert_eq!(m.available_mib, Some(23554));
        assert_eq!(m.swap_total_mib, Some(2047));
        assert_eq!(m.swap_free_mib, Some(1024));
        assert_eq!(parse_meminfo("garbage"), Meminfo::default());
    }

    #[test]
    fn healthy_host_only_reports_its_summary() {
        assert_eq!(ids(&healthy()), ["host-summary"]);
        assert_eq!(ids(&HostFacts::default()), ["host-summary"]);
    }

    #[test]
    fn powersave_governor() {
        let h = HostFacts {
            governors: [("powersave".to_owned(), 16)].into(),
            ..healthy()
        };
        assert!(ids(&h).contains(&"host-cpu-powersave"));
        // intel_pstate's powersave scales dynamically: judged by the energy preference.
        let h = HostFacts {
            governors: [("powersave".to_owned(), 16)].into(),
            cpufreq_driver: Some("intel_pstate".into()),
            epp: [("balance_performance".to_owned(), 16)].into(),
            ..healthy()
        };
        assert!(!ids(&h).contains(&"host-cpu-powersave"));
        let h = HostFacts {
            epp: [("power".to_owned(), 16)].into(),
            ..h
        };
        assert!(ids(&h).contains(&"host-cpu-powersave"));
    }

    #[test]
    fn swap_load_and_ram() {
        let h = HostFacts {
            mem: Meminfo {
                swap_free_mib: Some(100),
                ..healthy().mem
            },
            ..healthy()
        };
        assert!(ids(&h).contains(&"host-swap-in-use"));
        let h = HostFacts {
            others: Some(OthersUse {
                seconds: 3.0,
                cpus: 16,
                share: 0.6,
                steal_share: 0.0,
            }),
            ..healthy()
        };
        assert!(ids(&h).contains(&"host-load-high"));
        let h = HostFacts {
            data_bytes: Some(100 << 30),
            ..healthy()
        };
        assert!(ids(&h).contains(&"host-ram-below-data"));
        // A cache that fits is what an epoch reads, whatever the raw data's size.
        let h = HostFacts {
            data_bytes: Some(100 << 30),
            cache_bytes: Some(20 << 30),
            ..healthy()
        };
        assert!(!ids(&h).contains(&"host-ram-below-data"));
    }

    /// `cargo run -- doctor` right after a build: the 1-minute load is high, but during
    /// gpufeed's own run the other processes were nearly idle. The load alone is not
    /// judged (it was, and the report blamed gpufeed's own build).
    #[test]
    fn contention_is_judged_over_the_run_not_from_the_load_average() {
        let sample = |user: u64, idle: u64, steal: u64, own: u64, seconds: f64| CpuSample {
            host: CpuTime {
                user,
                idle,
                steal,
                ..CpuTime::default()
            },
            cpus: 2,
            own_ticks: own,
            seconds,
        };
        // 3 s on 2 CPUs (600 ticks): 330 busy, of which gpufeed's own 300.
        let quiet = others_use(
            &sample(10_000, 5_000, 0, 100, 0.5),
            &sample(10_330, 5_270, 0, 400, 3.5),
        )
        .unwrap();
        assert_eq!(quiet.share, 0.05);
        assert_eq!(quiet.seconds, 3.0);
        let after_a_build = HostFacts {
            cores: Some(2),
            load1: Some(2.9),
            others: Some(quiet),
            ..HostFacts::default()
        };
        let found = check(&after_a_build);
        assert_eq!(
            found.iter().map(|f| f.id).collect::<Vec<_>>(),
            ["host-summary"]
        );
        let ev = &found[0].evidence;
        assert!(
            ev.contains("others 5 % of the host's CPU time over 3.0 s of this run")
                && ev.contains("load average 2.90, which also counts the minute before the run"),
            "{ev}"
        );
        // Others busy (and the hypervisor stealing) during the run: reported, in CPUs.
        let busy = others_use(
            &sample(0, 1_000, 0, 0, 0.0),
            &sample(300, 1_200, 100, 100, 3.0),
        )
        .unwrap();
        // 600 ticks: 400 busy (steal included), 100 of them ours.
        assert_eq!(busy.share, 0.5);
        let h = HostFacts {
            cores: Some(2),
            others: Some(busy),
            ..HostFacts::default()
        };
        let found = check(&h);
        let high = found.iter().find(|f| f.id == "host-load-high").unwrap();
        assert_eq!(
            high.message,
            "other processes used 1.0 of 2 CPUs while gpufeed ran; their work competes with \
             the loader threads for the cores"
        );
        assert!(high.evidence.contains("(steal 17 %; reported from 50 %)"));
        // A child reaped in the window can bring more ticks than the window had.
        let reaped = others_use(
            &sample(0, 1_000, 0, 0, 0.0),
            &sample(100, 1_100, 0, 900, 1.0),
        )
        .unwrap();
        assert_eq!(reaped.share, 0.0);
        // No tick passed: nothing to say.
        assert_eq!(
            others_use(&sample(0, 1, 0, 0, 0.0), &sample(0, 1, 0, 0, 0.0)),
            None
        );
    }

    #[test]
    fn a_sample_reads_the_host_and_this_process() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        fs_err::create_dir_all(proc.join("self")).unwrap();
        let roots = Roots {
            proc: proc.clone(),
            sys: dir.path().join("sys"),
        };
        let origin = Instant::now();
        assert_eq!(CpuSample::read(&roots, origin), None);
        fs_err::write(
            proc.join("stat"),
            "cpu  100 2 30 5000 7 0 1 9 0 0\ncpu0 50 1 15 2500 3 0 0 4 0 0\ncpu1 50 1 15 2500 4 0 1 5 0 0\nintr 1\n",
        )
        .unwrap();
        // The name holds a space and a parenthesis; utime..cstime are 11 + 4 + 2 + 1.
        fs_err::write(
            proc.join("self/stat"),
            "4242 (gpu feed) R 1 4242 4242 0 -1 4194304 100 0 0 0 11 4 2 1 20 0 3 0 100 0 0\n",
        )
        .unwrap();
        let s = CpuSample::read(&roots, origin).unwrap();
        assert_eq!(s.cpus, 2);
        assert_eq!(s.own_ticks, 18);
        assert_eq!(s.host.steal, 9);
        assert_eq!(s.host.busy(), 100 + 2 + 30 + 1 + 9);
        // On this machine's own /proc the window closes after at least a second.
        let live = Roots::default();
        if let Some(start) = CpuSample::read(&live, origin) {
            let o = close_window(Some(&start), &live, origin).unwrap();
            assert!(o.seconds >= 1.0, "{o:?}");
            assert!((0.0..=1.0).contains(&o.share), "{o:?}");
        }
    }

    #[test]
    fn collects_from_fixture_roots() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        let cpu = dir.path().join("sys/devices/system/cpu");
        for n in 0..2 {
            fs_err::create_dir_all(cpu.join(format!("cpu{n}/cpufreq"))).unwrap();
            fs_err::write(
                cpu.join(format!("cpu{n}/cpufreq/scaling_governor")),
                "powersave\n",
            )
            .unwrap();
        }
        fs_err::write(cpu.join("cpu0/cpufreq/scaling_driver"), "acpi-cpufreq\n").unwrap();
        fs_err::create_dir_all(cpu.join("cpufreq")).unwrap(); // not a CPU
        fs_err::create_dir_all(&proc).unwrap();
        fs_err::write(proc.join("loadavg"), "0.84 1.65 2.04 2/81 29313\n").unwrap();
        fs_err::write(proc.join("meminfo"), "MemTotal: 2048 kB\n").unwrap();
        let roots = Roots {
            proc,
            sys: dir.path().join("sys"),
        };
        let h = HostFacts::collect(&roots, Some(2));
        assert_eq!(h.governors.get("powersave"), Some(&2));
        assert_eq!(h.cpufreq_driver.as_deref(), Some("acpi-cpufreq"));
        assert_eq!(h.load1, Some(0.84));
        assert_eq!(h.mem.total_mib, Some(2));
        assert!(ids(&h).contains(&"host-cpu-powersave"));
    }
}
