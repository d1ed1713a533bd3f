//! gpufeed's own recording format: JSON Lines, written by `gpufeed monitor --record FILE`
//! and `gpufeed watch --record FILE`, read by `gpufeed trace FILE` and
//! `gpufeed monitor --replay FILE`.
//!
//! # Format (version 1)
//!
//! UTF-8 text, one JSON object per line. The first line is the [`Header`]; every later
//! line is one sample ([`Record`]): a [`GpuSample`] if it has a `gpu` key, a
//! [`HostSample`] if it has a `host` key. Blank lines are ignored.
//!
//! ```text
//! {"format":"gpufeed-telemetry","version":1,"started_at":"2026-11-21T10:00:00Z","interval_ms":100,"source":"nvml","host":"node1","gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-5f0e...","memory_total_mib":81559}]}
//! {"t":0.0,"gpu":0,"util":37.0,"mem_util":12.0,"mem_used_mib":20480.0,"power_w":310.5,"sm_clock_mhz":1980,"temp_c":61,"throttle":["sw_power_cap"],"pcie_rx_kb_s":1200.0,"pcie_tx_kb_s":300.0}
//! {"t":0.0,"host":{"cpu_pct":85.0,"iowait_pct":4.0}}
//! ```
//!
//! Header (line 1):
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `format` | string | always `"gpufeed-telemetry"` |
//! | `version` | integer | format version, `1`; a reader refuses a version it does not know |
//! | `started_at` | string | wall-clock time of `t = 0`, RFC 3339 (`2026-11-21T10:00:00Z`) |
//! | `interval_ms` | integer | the sampling interval asked for, in milliseconds |
//! | `source` | string | where samples came from: `nvml`, `replay`, `synthetic`, ... |
//! | `host` | string, optional | host name |
//! | `gpus` | array | one [`GpuInfo`] per GPU: `index`; optional `name`, `uuid`, `memory_total_mib` (MiB) |
//!
//! GPU sample (`gpu` key):
//!
//! | key | type | unit, meaning |
//! |---|---|---|
//! | `t` | number | seconds since `started_at` |
//! | `gpu` | integer | GPU index, as in the header's `gpus` |
//! | `util` | number | % of time a kernel was running (NVML `utilization.gpu`), 0..=100 |
//! | `mem_util` | number | % of time device memory was read or written, 0..=100 |
//! | `mem_used_mib` | number | device memory in use, MiB |
//! | `power_w` | number | power draw, W |
//! | `sm_clock_mhz` | integer | SM clock, MHz |
//! | `temp_c` | integer | GPU temperature, °C |
//! | `throttle` | array of strings | active clock-throttle reasons (`gpu_idle`, `applications_clocks`, `sw_power_cap`, `hw_slowdown`, `sync_boost`, `sw_thermal`, `hw_thermal`, `hw_power_brake`, `display_clocks`); `[]` means none |
//! | `pcie_rx_kb_s` | number | PCIe receive throughput (host to GPU), KB/s as NVML reports it (1 KB = 1024 bytes) |
//! | `pcie_tx_kb_s` | number | PCIe transmit throughput (GPU to host), KB/s |
//! | `sm_active_pct` | number | GPM (Hopper and newer): % of time an SM had a warp resident, averaged over SMs (DCGM's SM activity) |
//! | `sm_occupancy_pct` | number | GPM: resident warps as % of the maximum, averaged over SMs |
//! | `tensor_active_pct` | number | GPM: % of time a tensor pipe was active |
//! | `dram_active_pct` | number | GPM: % of peak DRAM bandwidth used |
//! | `proc_util` | number | `gpufeed watch`: % of time kernels of the watched process tree ran (sum over its processes, at most 100) |
//!
//! Host sample (`host` key): `t` as above and `host`, an object ([`HostMetrics`]) with
//! `cpu_pct` (% of all CPU time busy, 0..=100), `iowait_pct` (% of CPU time waiting for
//! I/O), `cpu_cores_pct` (array, `cpu_pct` per core), `load_1m` (1-minute load average),
//! `mem_used_mib` (MiB), `disk_read_mib_s` and `disk_write_mib_s` (MiB/s, whole disks),
//! `psi_cpu_some_pct`, `psi_io_some_pct`, `psi_io_full_pct`, `psi_mem_some_pct`,
//! `psi_mem_full_pct` (pressure stall information: % of wall time over the interval in
//! which some / all runnable tasks stalled on that resource), and for `gpufeed watch`
//! `proc_cpu_pct` (CPU of the watched process tree, % of one core, so above 100 on
//! several cores) and `proc_count` (processes in the tree).
//!
//! Every sample field except `t` and `gpu` / `host` is optional: a value the source
//! could not read is left out, never written as 0. Keys a reader does not know are
//! ignored, so that later versions can add fields without breaking older readers; a
//! change that older readers would misread raises `version`.
//!
//! ```
//! use gpufeed_telemetry::jsonl::{GpuSample, Header, JsonlWriter, Record, read_util};
//! let header = Header::new("2026-11-21T10:00:00Z", 100, "synthetic");
//! let mut w = JsonlWriter::new(Vec::new(), &header).unwrap();
//! w.write(&Record::Gpu(GpuSample { util: Some(37.0), ..GpuSample::new(0.0, 0) })).unwrap();
//! let bytes = w.into_inner();
//! let trace = read_util(bytes.as_slice(), std::path::Path::new("rec.jsonl")).unwrap();
//! assert_eq!(trace.gpus[0].util, vec![37.0]);
//! ```

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::TraceError;
use crate::lines::LineReader;
use crate::trace::{Limits, SeriesBuilder, TraceFormat, UtilTrace};

/// The value of the header's `format` key.
pub const FORMAT: &str = "gpufeed-telemetry";

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// The first line of a recording (less `format` and `version`, which the writer adds and
/// the reader checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Wall-clock time of `t = 0`, RFC 3339.
    pub started_at: String,
    /// The sampling interval asked for, in milliseconds.
    pub interval_ms: u64,
    /// Where the samples came from: `nvml`, `replay`, `synthetic`, ...
    pub source: String,
    /// Host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The GPUs sampled.
    #[serde(default)]
    pub gpus: Vec<GpuInfo>,
}

impl Header {
    /// A header with no host name and no GPUs.
    pub fn new(started_at: impl Into<String>, interval_ms: u64, source: impl Into<String>) -> Self {
        Header {
            started_at: started_at.into(),
            interval_ms,
            source: source.into(),
            host: None,
            gpus: Vec::new(),
        }
    }
}

/// A GPU as listed in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// GPU index, as in samples' `gpu`.
    pub index: u32,
    /// Product name, such as `NVIDIA H100 80GB HBM3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `GPU-...` UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Total device memory, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_mib: Option<u64>,
}

/// One sample of one GPU. Fields the source could not read are `None` and left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSample {
    /// Seconds since the header's `started_at`.
    pub t: f64,
    /// GPU index.
    pub gpu: u32,
    /// % of time a kernel was running, 0..=100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util: Option<f64>,
    /// % of time device memory was read or written, 0..=100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_util: Option<f64>,
    /// Device memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_used_mib: Option<f64>,
    /// Power draw, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// SM clock, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<u32>,
    /// GPU temperature, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_c: Option<u32>,
    /// Active clock-throttle reasons (see the module docs); empty when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Vec<String>>,
    /// PCIe receive throughput, host to GPU, KB/s (1 KB = 1024 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_rx_kb_s: Option<f64>,
    /// PCIe transmit throughput, GPU to host, KB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_tx_kb_s: Option<f64>,
    /// GPM SM activity: % of time an SM had a warp resident, averaged over SMs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_active_pct: Option<f64>,
    /// GPM SM occupancy: resident warps as % of the maximum, averaged over SMs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_occupancy_pct: Option<f64>,
    /// GPM tensor activity: % of time any tensor pipe was active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_active_pct: Option<f64>,
    /// GPM DRAM activity: % of peak DRAM bandwidth used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_active_pct: Option<f64>,
    /// Utilisation by the watched process tree, 0..=100 (`gpufeed watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_util: Option<f64>,
}

impl GpuSample {
    /// A sample at `t` of GPU `gpu` with every reading absent.
    pub fn new(t: f64, gpu: u32) -> Self {
        GpuSample {
            t,
            gpu,
            util: None,
            mem_util: None,
            mem_used_mib: None,
            power_w: None,
            sm_clock_mhz: None,
            temp_c: None,
            throttle: None,
            pcie_rx_kb_s: None,
            pcie_tx_kb_s: None,
            sm_active_pct: None,
            sm_occupancy_pct: None,
            tensor_active_pct: None,
            dram_active_pct: None,
            proc_util: None,
        }
    }
}

/// One sample of the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// Seconds since the header's `started_at`.
    pub t: f64,
    /// The readings.
    pub host: HostMetrics,
}

/// Host readings. Fields the source could not read are `None` and left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostMetrics {
    /// % of all CPU time busy (not idle, not iowait), 0..=100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    /// % of all CPU time waiting for I/O, 0..=100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iowait_pct: Option<f64>,
    /// 1-minute load average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
    /// Memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_used_mib: Option<f64>,
    /// Disk reads, MiB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_read_mib_s: Option<f64>,
    /// Disk writes, MiB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_write_mib_s: Option<f64>,
    /// `cpu_pct` of each core, in `/proc/stat` order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores_pct: Option<Vec<f64>>,
    /// % of wall time some runnable task waited for a CPU (PSI `cpu some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_cpu_some_pct: Option<f64>,
    /// % of wall time some task stalled on I/O (PSI `io some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_io_some_pct: Option<f64>,
    /// % of wall time all non-idle tasks stalled on I/O at once (PSI `io full`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_io_full_pct: Option<f64>,
    /// % of wall time some task stalled on memory (PSI `memory some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_mem_some_pct: Option<f64>,
    /// % of wall time all non-idle tasks stalled on memory at once (PSI `memory full`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_mem_full_pct: Option<f64>,
    /// CPU of the watched process tree, % of one core (`gpufeed watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_cpu_pct: Option<f64>,
    /// Processes in the watched tree (`gpufeed watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_count: Option<u32>,
}

/// One sample line: a GPU sample or a host sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A line with a `gpu` key.
    Gpu(GpuSample),
    /// A line with a `host` key.
    Host(HostSample),
}

impl Record {
    /// Seconds since the header's `started_at`.
    pub fn t(&self) -> f64 {
        match self {
            Record::Gpu(s) => s.t,
            Record::Host(s) => s.t,
        }
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Record::Gpu(s) => s.serialize(serializer),
            Record::Host(s) => s.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawRecord::deserialize(deserializer)?
            .into_record()
            .map_err(serde::de::Error::custom)
    }
}

/// Every key a sample line may have, to decide in one pass which sample it is.
#[derive(Deserialize)]
struct RawRecord {
    t: f64,
    gpu: Option<u32>,
    host: Option<HostMetrics>,
    util: Option<f64>,
    mem_util: Option<f64>,
    mem_used_mib: Option<f64>,
    power_w: Option<f64>,
    sm_clock_mhz: Option<u32>,
    temp_c: Option<u32>,
    throttle: Option<Vec<String>>,
    pcie_rx_kb_s: Option<f64>,
    pcie_tx_kb_s: Option<f64>,
    sm_active_pct: Option<f64>,
    sm_occupancy_pct: Option<f64>,
    tensor_active_pct: Option<f64>,
    dram_active_pct: Option<f64>,
    proc_util: Option<f64>,
}

impl RawRecord {
    fn into_record(self) -> Result<Record, &'static str> {
        match (self.gpu, self.host) {
            (Some(gpu), None) => Ok(Record::Gpu(GpuSample {
                t: self.t,
                gpu,
                util: self.util,
                mem_util: self.mem_util,
                mem_used_mib: self.mem_used_mib,
                power_w: self.power_w,
                sm_clock_mhz: self.sm_clock_mhz,
                temp_c: self.temp_c,
                throttle: self.throttle,
                pcie_rx_kb_s: self.pcie_rx_kb_s,
                pcie_tx_kb_s: self.pcie_tx_kb_s,
                sm_active_pct: self.sm_active_pct,
                sm_occupancy_pct: self.sm_occupancy_pct,
                tensor_active_pct: self.tensor_active_pct,
                dram_active_pct: self.dram_active_pct,
                proc_util: self.proc_util,
            })),
            (None, Some(host)) => Ok(Record::Host(HostSample { t: self.t, host })),
            (None, None) => Err("sample has neither `gpu` nor `host`"),
            (Some(_), Some(_)) => Err("sample has both `gpu` and `host`; write them as two lines"),
        }
    }
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    format: &'static str,
    version: u32,
    #[serde(flatten)]
    header: &'a Header,
}

/// Writes a recording: the header line on creation, then one line per [`Record`].
///
/// Each line goes to the writer in one `write_all`, so wrapping a file in a `BufWriter`
/// is optional; call [`flush`](Self::flush) to make samples visible to a reader.
/// Non-finite readings are written as `null` and read back as absent.
#[derive(Debug)]
pub struct JsonlWriter<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> JsonlWriter<W> {
    /// Writes the header line to `out`.
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        let mut w = JsonlWriter {
            out,
            line: Vec::with_capacity(512),
        };
        w.write_line(&HeaderLine {
            format: FORMAT,
            version: VERSION,
            header,
        })?;
        Ok(w)
    }

    /// Writes one sample line. A non-finite `t` is an `InvalidInput` error.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        if !record.t().is_finite() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("sample time `{}` is not finite", record.t()),
            ));
        }
        self.write_line(record)
    }

    fn write_line(&mut self, value: &impl Serialize) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Streams a recording: the header on creation, then one [`Record`] per sample line.
/// Stop at the first error; later lines are not reliable after one.
#[derive(Debug)]
pub struct Reader<R> {
    lines: LineReader<R>,
    path: PathBuf,
    header: Header,
}

impl<R: BufRead> Reader<R> {
    /// Reads and checks the header (the first non-empty line); `path` is for messages.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Result<Self, TraceError> {
        let path = path.into();
        let mut lines = LineReader::new(reader);
        let header = loop {
            let Some((n, line)) = lines.next_str(&path)? else {
                return Err(TraceError::Empty { path });
            };
            if !line.trim_ascii().is_empty() {
                break parse_header(line, n, &path)?;
            }
        };
        Ok(Reader {
            lines,
            path,
            header,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The 1-based number of the last line read.
    pub fn line(&self) -> usize {
        self.lines.line()
    }

    /// The next sample, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            let Some((n, line)) = self.lines.next_str(&self.path)? else {
                return Ok(None);
            };
            if line.trim_ascii().is_empty() {
                continue;
            }
            return serde_json::from_str(line)
                .map(Some)
                .map_err(|e| json_error(&self.path, n, &e));
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// Reads the utilisation series of every GPU from a recording; host samples are skipped,
/// GPU samples without `util` are counted in [`UtilTrace::skipped`]. `path` is for
/// messages.
pub fn read_util(reader: impl BufRead, path: &Path) -> Result<UtilTrace, TraceError> {
    read_util_with(reader, path, Limits::default())
}

/// [`read_util`], keeping to `limits`.
pub(crate) fn read_util_with(
    reader: impl BufRead,
    path: &Path,
    limits: Limits,
) -> Result<UtilTrace, TraceError> {
    let mut records = Reader::new(reader, path)?;
    let mut series = SeriesBuilder::with_limits(limits);
    let mut skipped = 0;
    while let Some(record) = records.next_record()? {
        let Record::Gpu(sample) = record else {
            continue;
        };
        series.room(path, records.line())?;
        let slot = series.slot(sample.gpu);
        series.tick(slot);
        match sample.util {
            None => skipped += 1,
            Some(u) if (0.0..=100.0).contains(&u) => series.push(slot, sample.t, u),
            Some(u) => {
                return Err(TraceError::UtilOutOfRange {
                    path: path.to_owned(),
                    line: records.line(),
                    value: u,
                    column: "util".to_owned(),
                    guessed: false,
                });
            }
        }
    }
    series.finish(path, TraceFormat::GpufeedJsonl, skipped, true)
}

fn parse_header(line: &str, n: usize, path: &Path) -> Result<Header, TraceError> {
    let not_a_header = || TraceError::NotAHeader {
        path: path.to_owned(),
        line: n,
    };
    let value: serde_json::Value = serde_json::from_str(line).map_err(|_| not_a_header())?;
    if value.get("format").and_then(serde_json::Value::as_str) != Some(FORMAT) {
        return Err(not_a_header());
    }
    crate::error::check_version(&value, VERSION, path, n, not_a_header)?;
    Header::deserialize(&value).map_err(|e| json_error(path, n, &e))
}

/// serde_json's message without its own "at line 1 column N" (each JSONL line is parsed
/// on its own, so its line is always 1); the column is kept as a field.
pub(crate) fn json_error(path: &Path, line: usize, e: &serde_json::Error) -> TraceError {
    let full = e.to_string();
    let column = (e.line() > 0).then_some(e.column());
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    TraceError::Json {
        path: path.to_owned(),
        line,
        column,
        message: crate::error::shown_max(message, 200),
    }
}

#[cfg(test)]
mod tests;
