//! The GPUs of this machine, through NVML (`libnvidia-ml.so.1`, loaded at run time by
//! `nvml-wrapper`, so gpufeed builds and runs without a GPU and fails only here, with
//! [`SourceError::NoDriver`]).
//!
//! # What is read, and how often
//!
//! NVML calls are not free: they serialise on the driver's lock (a 25 ms poll held it
//! 10 s of every 15 s in MangoHud, flightlessmango/MangoHud#2104), and PCIe throughput
//! blocks for its 20 ms measuring window. So, from one thread, per GPU:
//!
//! | every tick with a new utilisation reading | every [`GPM_S`] | every [`PROC_S`] | every [`PCIE_S`] |
//! |---|---|---|---|
//! | utilisation from the driver's sample buffer, memory used, power, SM clock, temperature, throttle reasons, memory utilisation | GPM SM activity, occupancy, tensor and DRAM activity (Hopper and newer) | utilisation of the watched process tree | PCIe rx/tx |
//!
//! **Utilisation** comes from `nvmlDeviceGetSamples(GPU_UTILIZATION_SAMPLES, last_seen)`:
//! the driver keeps a ring buffer of readings at its own rate (1/6 s to 1 s, depending on
//! the product), each with a microsecond timestamp; passing the newest timestamp seen
//! returns only newer ones, so every reading is taken exactly once, with its own time,
//! whatever the polling interval. A tick that comes between two readings (gpufeed polls
//! every 100 ms, faster than the driver samples) finds nothing new and reads nothing else
//! of that GPU either: the plain rate would only repeat the last reading at the poll's
//! time. The buffer runs dry while the GPU idles (polarsignals/gpu-metrics-agent#37):
//! after [`DRY_PERIODS`] sample periods without a reading (the shortest step seen between
//! two readings, [`MAX_PERIOD_S`] until one is seen), the plain
//! `nvmlDeviceGetUtilizationRates` reading stands for each reading the driver did not
//! make, one per sample period, so an idle GPU reads 0 %, not nothing, and the series
//! keeps one step (on a GPU whose buffer has never given a reading: one per tick).
//! Driver timestamps are mapped to the run's timeline by one anchor, set by the first
//! non-empty read: the wall clock at that poll when the timestamps read as wall-clock
//! time, as the driver's are (within a year before the clock), else the newest timestamp
//! at that poll; after that only their differences are used. Readings older than the
//! start of the run are dropped, and a series never goes back in time.
//!
//! All readings of a tick that are not utilisation go onto the newest sample of that GPU
//! in the tick. A reading that fails is `None` (left out of the recording) and is reported
//! once per GPU as a [`SourceWarning::Unavailable`]; sampling goes on.
//!
//! Process ids come from the driver, which sees the host's PID namespace: inside a
//! container without `--pid=host` the watched tree's PIDs do not match and
//! `proc_util` stays 0.
//!
//! Set `GPUFEED_NVML_LIB` ([`LIB_ENV`]) to load NVML from another path
//! ([`NvmlSource::open_with_lib`] and [`gpu_inventory_with_lib`] take it as an argument).
//! `tests/fake_nvml/fake_nvml.c` is a fake NVML with two made-up GPUs, for testing this
//! module without a GPU.
//!
//! [`gpu_inventory`] reads, once, what `gpufeed doctor` checks (model, memory, driver and
//! CUDA version, PCIe link, persistence, power limit, clocks, throttle reasons, ECC, MIG,
//! processes) into a plain [`GpuInventory`].

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, Sampling, TemperatureSensor,
};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, GpmSample, Nvml};

use crate::jsonl::{GpuInfo, GpuSample, Record};
use crate::source::{Source, SourceError, SourceWarning};

/// Environment variable naming the NVML library to load instead of `libnvidia-ml.so.1`.
pub const LIB_ENV: &str = "GPUFEED_NVML_LIB";

/// Seconds between GPM readings: GPM compares two samples of the SM counters, and the
/// research suggests pairs 100-500 ms apart (research/gpu-tools.md section 9); the long
/// end keeps perturbation of a DCGM exporter reading the same counters low.
pub const GPM_S: f64 = 0.5;

/// Seconds between readings of the watched tree's utilisation (a process list call).
pub const PROC_S: f64 = 1.0;

/// Seconds between PCIe throughput readings: each of the two blocks for 20 ms
/// (NVML docs; zml/zml#766), so at most 0.25 Hz (research/gpu-tools.md section 9).
pub const PCIE_S: f64 = 4.0;

/// The longest sample period of the driver's utilisation buffer: 1/6 s to 1 s depending
/// on the product (NVML docs, `nvmlDeviceGetUtilizationRates`). Assumed until a GPU's own
/// period is seen.
pub const MAX_PERIOD_S: f64 = 1.0;

/// A buffer without a new reading for this many sample periods has run dry: the GPU
/// idles (polarsignals/gpu-metrics-agent#37), and the plain rate is read instead. One
/// period is the normal wait between readings; the second absorbs the driver's lag and
/// the poll's jitter.
pub const DRY_PERIODS: f64 = 2.0;

/// The longest gap of a dry buffer filled with one plain reading per sample period,
/// far above any tick (100 ms by default). A longer one (a stopped process, a sleeping
/// machine) gets a single plain reading: what the GPU did meanwhile is not known.
pub const MAX_FILL_S: f64 = 10.0;

const MIB: f64 = 1024.0 * 1024.0;

/// The library loaded when [`LIB_ENV`] is not set: found by the dynamic loader, as
/// `nvidia-smi` finds it.
pub const DEFAULT_LIB: &str = "libnvidia-ml.so.1";

/// NVML, initialised once per process and never shut down (the driver drops the
/// process's handle when it exits), with the library it was loaded from.
static NVML: OnceLock<(Nvml, OsString)> = OnceLock::new();

/// The library to load: [`LIB_ENV`], else [`DEFAULT_LIB`].
fn lib_from_env() -> OsString {
    std::env::var_os(LIB_ENV).unwrap_or_else(|| DEFAULT_LIB.into())
}

/// NVML from `lib` and the number of GPUs it lists, at least one.
fn nvml_with_gpus(lib: &OsStr) -> Result<(&'static Nvml, u32), SourceError> {
    let nvml = nvml(lib)?;
    let count = nvml.device_count().map_err(|e| SourceError::Nvml {
        call: "nvmlDeviceGetCount",
        message: e.to_string(),
    })?;
    if count == 0 {
        return Err(SourceError::NoGpu);
    }
    Ok((nvml, count))
}

/// NVML loaded from `lib`; the process keeps the first library it loads, so asking for
/// another one later is an error.
fn nvml(lib: &OsStr) -> Result<&'static Nvml, SourceError> {
    let (nvml, loaded) = match NVML.get() {
        Some(n) => n,
        None => {
            let n = Nvml::builder()
                .lib_path(lib)
                .init()
                .map_err(|e| init_error(&e, &lib.to_string_lossy()))?;
            NVML.get_or_init(|| (n, lib.to_owned()))
        }
    };
    if loaded != lib {
        return Err(SourceError::Nvml {
            call: "nvmlInit_v2",
            message: format!(
                "NVML is already loaded from `{}` in this process, so `{}` cannot be",
                loaded.to_string_lossy(),
                lib.to_string_lossy()
            ),
        });
    }
    Ok(nvml)
}

fn init_error(e: &NvmlError, lib: &str) -> SourceError {
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => SourceError::NoDriver {
            reason: format!("`{lib}` could not be loaded"),
        },
        NvmlError::DriverNotLoaded => SourceError::NoDriver {
            reason: "the NVIDIA kernel driver is not loaded".to_owned(),
        },
        NvmlError::FailedToLoadSymbol(s) => SourceError::NoDriver {
            // The loader's message repeats the library: `PATH: undefined symbol: NAME`.
            reason: format!(
                "`{lib}` lacks `{}`; the driver is too old",
                s.rsplit_once("undefined symbol: ")
                    .map_or(s.as_str(), |(_, name)| name)
            ),
        },
        other => SourceError::Nvml {
            call: "nvmlInit_v2",
            message: other.to_string(),
        },
    }
}

/// One GPU's state between polls.
#[derive(Debug)]
struct Gpu {
    index: u32,
    device: Device<'static>,
    /// Newest sample-buffer timestamp seen (driver µs).
    last_ts: Option<u64>,
    /// Driver timestamp ↔ run time, set by the first non-empty read.
    anchor: Option<(u64, f64)>,
    /// Time of the newest sample emitted.
    last_t: f64,
    /// Run time of the newest reading of the buffer (`-inf` before the first).
    last_reading_t: f64,
    /// The buffer's sample period, s: the shortest step seen between two readings.
    period: Option<f64>,
    /// The previous GPM sample, on GPUs that support GPM.
    gpm: Option<GpmSample<'static>>,
    last_proc_ts: Option<u64>,
    /// When GPM, the process utilisation and PCIe throughput were last read.
    last_gpm: f64,
    last_proc: f64,
    last_pcie: f64,
    warned: HashSet<&'static str>,
}

/// The NVML [`Source`].
#[derive(Debug)]
pub struct NvmlSource {
    nvml: &'static Nvml,
    gpus: Vec<Gpu>,
    info: Vec<GpuInfo>,
    warnings: Vec<SourceWarning>,
    watch: Option<u32>,
    tree: HashSet<u32>,
    /// When the watched tree was last listed.
    last_tree: f64,
}

impl NvmlSource {
    /// Loads NVML ([`LIB_ENV`], else [`DEFAULT_LIB`]) and opens every GPU it lists.
    pub fn open() -> Result<Self, SourceError> {
        Self::open_with_lib(lib_from_env())
    }

    /// [`open`](Self::open) with NVML loaded from `lib`, a path or a name for the dynamic
    /// loader, whatever [`LIB_ENV`] says: the tests load a fake NVML this way
    /// (`tests/fake_nvml/`). A process loads one NVML library: once one is loaded, another
    /// `lib` is an error.
    pub fn open_with_lib(lib: impl AsRef<OsStr>) -> Result<Self, SourceError> {
        let (nvml, count) = nvml_with_gpus(lib.as_ref())?;
        let mut gpus = Vec::new();
        let mut info = Vec::new();
        let mut warnings = Vec::new();
        let (devices, unreachable) = open_devices(nvml, count)?;
        // A GPU the driver cannot open is left out with a warning, as nvidia-smi lists the
        // others: the rest are still watched.
        for u in unreachable {
            warnings.push(SourceWarning::Unavailable {
                gpu: u.index,
                what: "the GPU itself (nvmlDeviceGetHandleByIndex)",
                reason: u.reason,
            });
        }
        for (index, device) in devices {
            info.push(GpuInfo {
                index,
                name: device.name().ok(),
                uuid: device.uuid().ok(),
                memory_total_mib: device
                    .memory_info()
                    .ok()
                    .map(|m| (m.total as f64 / MIB).round() as u64),
            });
            // GPM needs a first sample to compare the next one with.
            let gpm = match device.gpm_support() {
                Ok(true) => match device.gpm_sample() {
                    Ok(s) => Some(s),
                    Err(e) => {
                        warnings.push(SourceWarning::Unavailable {
                            gpu: index,
                            what: "GPM metrics",
                            reason: e.to_string(),
                        });
                        None
                    }
                },
                // Not Hopper or newer: nothing to say.
                _ => None,
            };
            gpus.push(Gpu {
                index,
                device,
                last_ts: None,
                anchor: None,
                last_t: f64::NEG_INFINITY,
                last_reading_t: f64::NEG_INFINITY,
                period: None,
                gpm,
                last_proc_ts: None,
                last_gpm: 0.0,
                last_proc: f64::NEG_INFINITY,
                last_pcie: f64::NEG_INFINITY,
                warned: HashSet::new(),
            });
        }
        Ok(NvmlSource {
            nvml,
            gpus,
            info,
            warnings,
            watch: None,
            tree: HashSet::new(),
            last_tree: f64::NEG_INFINITY,
        })
    }

    /// Also reports the utilisation of `pid` and its descendants (`proc_util`).
    #[must_use]
    pub fn watch(mut self, pid: u32) -> Self {
        self.watch = Some(pid);
        self
    }
}

/// A reading, or `None` with a warning the first time it fails on this GPU.
fn field<T>(
    g: &mut Gpu,
    warnings: &mut Vec<SourceWarning>,
    what: &'static str,
    r: Result<T, NvmlError>,
) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if g.warned.insert(what) {
                warnings.push(SourceWarning::Unavailable {
                    gpu: g.index,
                    what,
                    reason: e.to_string(),
                });
            }
            None
        }
    }
}

fn sample_f64(v: &SampleValue) -> f64 {
    match *v {
        SampleValue::F64(x) => x,
        SampleValue::U32(x) => f64::from(x),
        SampleValue::U64(x) => x as f64,
        SampleValue::I64(x) => x as f64,
    }
}

/// Driver time (µs) ↔ run time, from the first read with a reading, at run time `now`,
/// whose newest reading is `newest`. The driver stamps readings with the wall clock
/// (Unix-epoch µs, as in Syllo/nvtop#110 and NVIDIA/go-nvml#51): when `newest` reads as
/// the wall clock (not after it, and within [`WALL_WINDOW_US`] before it), the wall clock
/// now is the anchor, so every reading keeps its age, even when the newest one is old (a
/// buffer that ran dry before the run). Otherwise the newest reading is taken to be from
/// `now`.
fn anchor(newest: u64, now: f64) -> (u64, f64) {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_micros()).ok());
    match wall {
        Some(w)
            if newest <= w.saturating_add(WALL_SLACK_US) && w - newest.min(w) <= WALL_WINDOW_US =>
        {
            (w, now)
        }
        _ => (newest, now),
    }
}

/// How far before the wall clock a reading may be and still read as wall-clock time, µs: a
/// year, so that a buffer that ran dry days ago still counts, while a clock counting from
/// boot (a few days of µs: a date in January 1970) never does.
const WALL_WINDOW_US: u64 = 365 * 86_400 * 1_000_000;

/// How far after the wall clock a reading may be: the skew of two reads of the clock.
const WALL_SLACK_US: u64 = 1_000_000;

/// The throttle reasons as the recording names them (see [`crate::jsonl`]).
#[must_use]
pub fn throttle_names(r: ThrottleReasons) -> Vec<String> {
    [
        (ThrottleReasons::GPU_IDLE, "gpu_idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal"),
        (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake"),
        (ThrottleReasons::DISPLAY_CLOCK_SETTING, "display_clocks"),
    ]
    .into_iter()
    .filter(|(bit, _)| r.contains(*bit))
    .map(|(_, name)| name.to_owned())
    .collect()
}

impl Gpu {
    /// Utilisation readings from the driver's buffer newer than the last seen, mapped to
    /// run time, oldest first.
    fn buffered_util(&mut self, now: f64, warnings: &mut Vec<SourceWarning>) -> Vec<(f64, f64)> {
        let samples = match self.device.samples(Sampling::GpuUtilization, self.last_ts) {
            Ok(s) => s,
            // An empty buffer: the GPU is idle.
            Err(NvmlError::NotFound) => Vec::new(),
            Err(e) => {
                let _ = field::<()>(self, warnings, "utilisation sample buffer", Err(e));
                Vec::new()
            }
        };
        let mut readings: Vec<(u64, f64)> = samples
            .iter()
            .filter(|s| self.last_ts.is_none_or(|last| s.timestamp > last))
            .map(|s| (s.timestamp, sample_f64(&s.value)))
            .collect();
        readings.sort_by_key(|&(ts, _)| ts);
        let Some(&(newest, _)) = readings.last() else {
            return Vec::new();
        };
        let mut prev = self.last_ts;
        for &(ts, _) in &readings {
            // Steps under a millisecond are a driver glitch, not its sample period.
            let step = prev.map_or(0.0, |p| ts.saturating_sub(p) as f64 / 1e6);
            if step >= 1e-3 {
                self.period = Some(self.period.map_or(step, |p| p.min(step)));
            }
            prev = Some(ts);
        }
        self.last_ts = Some(newest);
        let (ats, at) = *self.anchor.get_or_insert_with(|| anchor(newest, now));
        self.last_reading_t = at + (newest as f64 - ats as f64) / 1e6;
        let mut out = Vec::new();
        for (ts, util) in readings {
            let t = at + (ts as f64 - ats as f64) / 1e6;
            // Older than the run, out of order, or not a percentage (seen in the wild,
            // Syllo/nvtop#110): dropped.
            if t >= 0.0 && t > self.last_t && (0.0..=100.0).contains(&util) {
                self.last_t = t;
                out.push((t, util));
            }
        }
        out
    }

    /// Whether the buffer has run dry (the GPU idles): no reading for [`DRY_PERIODS`] of
    /// its sample periods. Until then, a poll that finds no new reading just came
    /// between two readings of a busy GPU.
    fn buffer_dry(&self, now: f64) -> bool {
        now - self.last_reading_t > DRY_PERIODS * self.period.unwrap_or(MAX_PERIOD_S)
    }

    /// Times for the plain reading while the buffer is dry. On a GPU whose buffer has
    /// given readings, it stands for each reading the driver did not make: one per sample
    /// period after the last reading or sample, up to `now` and not before the run, so
    /// the series keeps one step, busy or idle (the analysis takes samples as evenly
    /// spaced). After a gap of more than [`MAX_FILL_S`] (a stopped process), only the
    /// newest. On a GPU whose buffer never gave a reading: one at `now`.
    fn plain_times(&self, now: f64) -> Vec<f64> {
        let base = self.last_t.max(self.last_reading_t);
        let Some(p) = self.period.filter(|_| base.is_finite()) else {
            return vec![now.max(self.last_t)];
        };
        let last = ((now - base) / p).floor();
        let first = if now - base > MAX_FILL_S {
            last
        } else {
            (-base / p).ceil().max(1.0)
        };
        if last < first {
            return Vec::new();
        }
        // Whole numbers from 1 up, so the casts are exact.
        (first as u64..=last as u64)
            .map(|k| base + k as f64 * p)
            .collect()
    }
}

impl Source for NvmlSource {
    fn name(&self) -> &str {
        "nvml"
    }

    fn gpus(&self) -> &[GpuInfo] {
        &self.info
    }

    fn poll(&mut self, now: f64, out: &mut Vec<Record>) -> Result<(), SourceError> {
        if let Some(root) = self.watch
            && now - self.last_tree >= PROC_S
        {
            self.last_tree = now;
            self.tree = crate::host::process_tree(std::path::Path::new("/proc"), root)
                .into_iter()
                .collect();
        }
        let w = &mut self.warnings;
        for g in &mut self.gpus {
            let buffered = g.buffered_util(now, w);
            // Polled between two readings of a busy GPU: nothing new (the plain rate would
            // repeat the last reading at the poll's time), so the GPU's other readings wait
            // for its next utilisation reading too.
            let plain_at = match (buffered.is_empty(), g.buffer_dry(now)) {
                (true, true) => g.plain_times(now),
                _ => Vec::new(),
            };
            if buffered.is_empty() && plain_at.is_empty() {
                continue;
            }
            let gpm_due = g.gpm.is_some() && now - g.last_gpm >= GPM_S;
            let proc_due = self.watch.is_some() && now - g.last_proc >= PROC_S;
            let pcie_due = now - g.last_pcie >= PCIE_S;
            if gpm_due {
                g.last_gpm = now;
            }
            if proc_due {
                g.last_proc = now;
            }
            if pcie_due {
                g.last_pcie = now;
            }
            let rates = g.device.utilization_rates();
            let rates = field(g, w, "utilisation", rates).map(|r| (r.gpu, r.memory));
            let readings: Vec<(f64, Option<f64>)> = if buffered.is_empty() {
                // The buffer ran dry (idle GPU): the plain reading.
                let plain = rates.map(|(gpu, _)| f64::from(gpu));
                g.last_t = plain_at.last().copied().unwrap_or(g.last_t);
                plain_at.into_iter().map(|t| (t, plain)).collect()
            } else {
                buffered.into_iter().map(|(t, u)| (t, Some(u))).collect()
            };
            let Some((&(t, util), older)) = readings.split_last() else {
                continue;
            };
            for &(t, util) in older {
                out.push(Record::Gpu(GpuSample {
                    util,
                    ..GpuSample::new(t, g.index)
                }));
            }
            let mut sample = GpuSample {
                util,
                ..GpuSample::new(t, g.index)
            };
            sample.mem_util = rates.map(|(_, mem)| f64::from(mem));
            let mem = g.device.memory_info();
            sample.mem_used_mib = field(g, w, "memory", mem).map(|m| (m.used as f64 / MIB).round());
            let power = g.device.power_usage();
            sample.power_w = field(g, w, "power", power).map(|mw| f64::from(mw) / 1000.0);
            let clock = g.device.clock_info(Clock::SM);
            sample.sm_clock_mhz = field(g, w, "SM clock", clock);
            let temp = g.device.temperature(TemperatureSensor::Gpu);
            sample.temp_c = field(g, w, "temperature", temp);
            let throttle = g.device.current_throttle_reasons();
            sample.throttle = field(g, w, "throttle reasons", throttle).map(throttle_names);
            if gpm_due && g.gpm.is_some() {
                let cur = g.device.gpm_sample();
                if let Some(cur) = field(g, w, "GPM metrics", cur) {
                    if let Some(prev) = &g.gpm {
                        let ids = [
                            GpmMetricId::SmUtil,
                            GpmMetricId::SmOccupancy,
                            GpmMetricId::AnyTensorUtil,
                            GpmMetricId::DramBwUtil,
                        ];
                        let got = nvml_wrapper::gpm::gpm_metrics_get(self.nvml, prev, &cur, &ids);
                        if let Some(results) = field(g, w, "GPM metrics", got) {
                            let v: Vec<Option<f64>> = results
                                .into_iter()
                                .map(|r| r.ok().map(|m| m.value).filter(|v| v.is_finite()))
                                .collect();
                            sample.sm_active_pct = v.first().copied().flatten();
                            sample.sm_occupancy_pct = v.get(1).copied().flatten();
                            sample.tensor_active_pct = v.get(2).copied().flatten();
                            sample.dram_active_pct = v.get(3).copied().flatten();
                        }
                    }
                    g.gpm = Some(cur);
                }
            }
            if proc_due {
                let stats = match g.device.process_utilization_stats(g.last_proc_ts) {
                    // No process used this GPU since the last call.
                    Err(NvmlError::NotFound) => Ok(Vec::new()),
                    other => other,
                };
                if let Some(stats) = field(g, w, "per-process utilisation", stats) {
                    if let Some(newest) = stats.iter().map(|s| s.timestamp).max() {
                        g.last_proc_ts = Some(newest);
                    }
                    // Mean per process over the readings since the last call, summed over
                    // the tree; readings above 100 % are driver noise (Syllo/nvtop#110).
                    let mut per_pid: std::collections::HashMap<u32, (f64, u32)> =
                        std::collections::HashMap::new();
                    for s in stats
                        .iter()
                        .filter(|s| self.tree.contains(&s.pid) && s.sm_util <= 100)
                    {
                        let e = per_pid.entry(s.pid).or_default();
                        e.0 += f64::from(s.sm_util);
                        e.1 += 1;
                    }
                    // A fold from 0, not `sum()`, which starts from -0 and would record
                    // `-0.0` for an empty tree.
                    let total = per_pid
                        .values()
                        .fold(0.0, |total, (sum, n)| total + sum / f64::from(*n));
                    sample.proc_util = Some(total.min(100.0));
                }
            }
            if pcie_due {
                let rx = g.device.pcie_throughput(PcieUtilCounter::Receive);
                sample.pcie_rx_kb_s = field(g, w, "PCIe throughput", rx).map(f64::from);
                let tx = g.device.pcie_throughput(PcieUtilCounter::Send);
                sample.pcie_tx_kb_s = field(g, w, "PCIe throughput", tx).map(f64::from);
            }
            out.push(Record::Gpu(sample));
        }
        Ok(())
    }

    fn take_warnings(&mut self) -> Vec<SourceWarning> {
        std::mem::take(&mut self.warnings)
    }
}

/// What `gpufeed doctor` reads about the GPUs, once: plain data, so that its rules are
/// pure functions tested on made-up inventories (the fake of this source). Every field the
/// driver does not report (`NotSupported` on consumer cards, no permission) is `None`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GpuInventory {
    /// Driver version, such as `550.54.15`.
    pub driver_version: Option<String>,
    /// The newest CUDA version the driver supports, such as `12.4`.
    pub cuda_version: Option<String>,
    /// Every GPU NVML lists and opens, by index.
    pub gpus: Vec<GpuDetails>,
    /// GPUs NVML lists but cannot open (`nvmlDeviceGetHandleByIndex` fails: a card fallen
    /// off the bus, `GPU is lost`); the others are still read.
    pub unreachable: Vec<UnreachableGpu>,
}

/// A GPU of a [`GpuInventory`] that NVML lists but cannot open.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnreachableGpu {
    /// NVML index.
    pub index: u32,
    /// The driver's error.
    pub reason: String,
}

/// One GPU of a [`GpuInventory`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GpuDetails {
    /// NVML index (the order of `nvidia-smi`, not necessarily CUDA's).
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// `GPU-...` UUID.
    pub uuid: Option<String>,
    /// Total memory, MiB.
    pub memory_total_mib: Option<u64>,
    /// Memory in use, MiB.
    pub memory_used_mib: Option<u64>,
    /// PCIe generation the link runs at now (it drops while the GPU idles).
    pub pcie_gen: Option<u32>,
    /// Highest PCIe generation of the GPU and its slot.
    pub pcie_gen_max: Option<u32>,
    /// PCIe lanes the link runs with now.
    pub pcie_width: Option<u32>,
    /// Most PCIe lanes of the GPU and its slot.
    pub pcie_width_max: Option<u32>,
    /// Persistence mode (Linux): the driver stays loaded while no process uses the GPU.
    pub persistence_mode: Option<bool>,
    /// Power limit in force, W.
    pub power_limit_w: Option<f64>,
    /// The board's default power limit, W.
    pub power_limit_default_w: Option<f64>,
    /// SM clock now, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Highest SM clock, MHz.
    pub sm_clock_max_mhz: Option<u32>,
    /// Memory clock now, MHz.
    pub mem_clock_mhz: Option<u32>,
    /// Highest memory clock, MHz.
    pub mem_clock_max_mhz: Option<u32>,
    /// Active clock throttle reasons, named as in the recordings ([`throttle_names`]).
    pub throttle: Option<Vec<String>>,
    /// ECC mode in force.
    pub ecc_enabled: Option<bool>,
    /// Uncorrected ECC errors since the driver loaded.
    pub ecc_uncorrected: Option<u64>,
    /// Corrected ECC errors since the driver loaded.
    pub ecc_corrected: Option<u64>,
    /// MIG mode in force.
    pub mig_enabled: Option<bool>,
    /// Processes holding memory on this GPU (compute and graphics); `None` when the
    /// driver does not say.
    pub processes: Option<Vec<GpuProcess>>,
}

/// A process with a context on a GPU.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GpuProcess {
    /// Process id, in the host's PID namespace.
    pub pid: u32,
    /// Its name, when the driver gives it.
    pub name: Option<String>,
    /// GPU memory it holds, MiB (`None`: not reported, as under some containers).
    pub used_mib: Option<u64>,
    /// `compute` or `graphics`.
    pub kind: &'static str,
}

/// Reads the [`GpuInventory`] of this machine through NVML, once.
///
/// # Errors
/// [`SourceError::NoDriver`] without a driver, [`SourceError::NoGpu`] when it lists no GPU,
/// [`SourceError::Nvml`] when listing the GPUs fails. A field that cannot be read is `None`.
pub fn gpu_inventory() -> Result<GpuInventory, SourceError> {
    gpu_inventory_with_lib(lib_from_env())
}

/// [`gpu_inventory`] with NVML loaded from `lib`, as [`NvmlSource::open_with_lib`].
///
/// # Errors
/// As [`gpu_inventory`]; also [`SourceError::Nvml`] when this process has already loaded
/// another NVML library.
pub fn gpu_inventory_with_lib(lib: impl AsRef<OsStr>) -> Result<GpuInventory, SourceError> {
    let (nvml, count) = nvml_with_gpus(lib.as_ref())?;
    let cuda_version = nvml.sys_cuda_driver_version().ok().map(|v| {
        format!(
            "{}.{}",
            nvml_wrapper::cuda_driver_version_major(v),
            nvml_wrapper::cuda_driver_version_minor(v)
        )
    });
    let (devices, unreachable) = open_devices(nvml, count)?;
    let gpus = devices
        .iter()
        .map(|(index, device)| gpu_details(nvml, device, *index))
        .collect();
    Ok(GpuInventory {
        driver_version: nvml.sys_driver_version().ok(),
        cuda_version,
        gpus,
        unreachable,
    })
}

/// A GPU the driver opened, with its NVML index.
type Opened = (u32, Device<'static>);

/// Opens GPUs `0..count`: those the driver opens, by index, and those it lists but cannot
/// open (`nvmlDeviceGetHandleByIndex` fails: a card fallen off the bus, `GPU is lost`),
/// which callers leave out while reading the others.
///
/// # Errors
/// [`SourceError::Nvml`] naming the first GPU when none of them opens.
fn open_devices(
    nvml: &'static Nvml,
    count: u32,
) -> Result<(Vec<Opened>, Vec<UnreachableGpu>), SourceError> {
    let mut devices = Vec::new();
    let mut unreachable = Vec::new();
    for index in 0..count {
        match nvml.device_by_index(index) {
            Ok(device) => devices.push((index, device)),
            Err(e) => unreachable.push(UnreachableGpu {
                index,
                reason: e.to_string(),
            }),
        }
    }
    if devices.is_empty()
        && let Some(u) = unreachable.first()
    {
        return Err(SourceError::Nvml {
            call: "nvmlDeviceGetHandleByIndex",
            message: format!("GPU {}: {}", u.index, u.reason),
        });
    }
    Ok((devices, unreachable))
}

fn gpu_details(nvml: &Nvml, d: &Device<'_>, index: u32) -> GpuDetails {
    let mib = |bytes: u64| (bytes as f64 / MIB).round() as u64;
    let memory = d.memory_info().ok();
    let mut processes: Option<Vec<GpuProcess>> = None;
    for (kind, list) in [
        ("compute", d.running_compute_processes()),
        ("graphics", d.running_graphics_processes()),
    ] {
        let Ok(list) = list else { continue };
        let all = processes.get_or_insert_with(Vec::new);
        for p in list {
            // A process with both contexts is listed once, as compute.
            if all.iter().any(|q| q.pid == p.pid) {
                continue;
            }
            all.push(GpuProcess {
                pid: p.pid,
                name: nvml.sys_process_name(p.pid, 64).ok(),
                used_mib: match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Some(mib(b)),
                    UsedGpuMemory::Unavailable => None,
                },
                kind,
            });
        }
    }
    GpuDetails {
        index,
        name: d.name().ok(),
        uuid: d.uuid().ok(),
        memory_total_mib: memory.as_ref().map(|m| mib(m.total)),
        memory_used_mib: memory.as_ref().map(|m| mib(m.used)),
        pcie_gen: d.current_pcie_link_gen().ok(),
        pcie_gen_max: d.max_pcie_link_gen().ok(),
        pcie_width: d.current_pcie_link_width().ok(),
        pcie_width_max: d.max_pcie_link_width().ok(),
        persistence_mode: d.is_in_persistent_mode().ok(),
        power_limit_w: d
            .power_management_limit()
            .ok()
            .map(|mw| f64::from(mw) / 1000.0),
        power_limit_default_w: d
            .power_management_limit_default()
            .ok()
            .map(|mw| f64::from(mw) / 1000.0),
        sm_clock_mhz: d.clock_info(Clock::SM).ok(),
        sm_clock_max_mhz: d.max_clock_info(Clock::SM).ok(),
        mem_clock_mhz: d.clock_info(Clock::Memory).ok(),
        mem_clock_max_mhz: d.max_clock_info(Clock::Memory).ok(),
        throttle: d.current_throttle_reasons().ok().map(throttle_names),
        ecc_enabled: d.is_ecc_enabled().ok().map(|e| e.currently_enabled),
        ecc_uncorrected: d
            .total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile)
            .ok(),
        ecc_corrected: d
            .total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile)
            .ok(),
        mig_enabled: d.mig_mode().ok().map(|m| m.current != 0),
        processes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_bits_have_the_documented_names() {
        let r = ThrottleReasons::GPU_IDLE | ThrottleReasons::SW_POWER_CAP;
        assert_eq!(throttle_names(r), vec!["gpu_idle", "sw_power_cap"]);
        assert!(throttle_names(ThrottleReasons::NONE).is_empty());
    }

    #[test]
    fn init_errors_read_well() {
        let e = init_error(&NvmlError::DriverNotLoaded, "libnvidia-ml.so.1");
        assert_eq!(
            e.to_string(),
            "no NVIDIA driver found (the NVIDIA kernel driver is not loaded)"
        );
        let e = init_error(&NvmlError::LibraryNotFound, "libnvidia-ml.so.1");
        assert_eq!(
            e.to_string(),
            "no NVIDIA driver found (`libnvidia-ml.so.1` could not be loaded)"
        );
        let e = init_error(
            &NvmlError::FailedToLoadSymbol(
                "/usr/lib/libnvidia-ml.so.1: undefined symbol: nvmlInit_v2".into(),
            ),
            "/usr/lib/libnvidia-ml.so.1",
        );
        assert_eq!(
            e.to_string(),
            "no NVIDIA driver found (`/usr/lib/libnvidia-ml.so.1` lacks `nvmlInit_v2`; the \
             driver is too old)"
        );
        let e = init_error(&NvmlError::NoPermission, "x");
        assert!(
            e.to_string().starts_with("NVML `nvmlInit_v2` failed"),
            "{e}"
        );
    }

    #[test]
    fn sample_values_of_every_type() {
        assert_eq!(sample_f64(&SampleValue::U32(37)), 37.0);
        assert_eq!(sample_f64(&SampleValue::U64(5)), 5.0);
        assert_eq!(sample_f64(&SampleValue::I64(-1)), -1.0);
        assert_eq!(sample_f64(&SampleValue::F64(2.5)), 2.5);
    }

    #[test]
    fn gpu_inventory_is_a_list_or_no_driver() {
        match gpu_inventory() {
            Ok(inv) => {
                assert!(!inv.gpus.is_empty());
                assert!(
                    inv.gpus
                        .iter()
                        .enumerate()
                        .all(|(i, g)| g.index as usize == i)
                );
            }
            Err(SourceError::NoDriver { .. } | SourceError::NoGpu) => {}
            Err(e) => panic!("{e}"),
        }
    }

    /// Needs an NVIDIA GPU and driver: `cargo test -p gpufeed-telemetry -- --ignored nvml`.
    #[test]
    #[ignore = "needs an NVIDIA GPU and driver"]
    fn nvml_samples_a_real_gpu() {
        let mut s = NvmlSource::open().expect("an NVIDIA driver and GPU");
        assert!(!s.gpus().is_empty());
        let mut out = Vec::new();
        let start = std::time::Instant::now();
        for i in 0..30 {
            s.poll(f64::from(i) * 0.1, &mut out).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let cost = start.elapsed();
        let gpu0: Vec<&GpuSample> = out
            .iter()
            .filter_map(|r| match r {
                Record::Gpu(g) if g.gpu == 0 => Some(g),
                _ => None,
            })
            .collect();
        assert!(gpu0.len() >= 30, "{}", gpu0.len());
        assert!(
            gpu0.iter()
                .all(|g| g.util.is_some_and(|u| (0.0..=100.0).contains(&u)))
        );
        assert!(gpu0.windows(2).all(|w| w[0].t <= w[1].t));
        assert!(gpu0.iter().any(|g| g.power_w.is_some()));
        for w in s.take_warnings() {
            eprintln!("warning: {w}");
        }
        eprintln!("30 polls in {cost:?}; last sample {:?}", gpu0.last());
    }
}
