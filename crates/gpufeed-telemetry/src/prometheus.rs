//! A Prometheus exporter (`gpufeed monitor --prometheus ADDR`), so that a fleet is
//! watched by Prometheus itself: raw gauges of every GPU and the host, plus the derived
//! figures of the sliding window (oscillation period, idle fraction, verdict).
//!
//! The exposition is the [text format 0.0.4](https://prometheus.io/docs/instrumenting/exposition_formats/),
//! served at `/metrics` by one thread with `std::net` (a scrape every few seconds needs
//! no HTTP framework). The sampling thread renders the page with [`render`] and hands it
//! over with [`Exporter::publish`]; a scrape returns the latest page, so scraping never
//! waits on NVML.
//!
//! Why the derived figures matter: utilisation is a gauge over the driver's short sample
//! period, so a 15 s scrape of a GPU that alternates 1 s busy / 1 s idle reads 100 % or
//! 0 % at random (mindprince/nvidia_gpu_prometheus_exporter#12). `gpufeed_gpu_idle_ratio`
//! and `gpufeed_gpu_oscillation_period_seconds` are computed from every sample of the
//! window, so they survive any scrape interval.
//!
//! Metric names follow the Prometheus conventions (base units: bytes, seconds, hertz,
//! ratios for fractions; percentages keep the `_percent` suffix as NVML reports them).
//!
//! # Labels
//!
//! Every series of a GPU carries dcgm-exporter's labels for it: `gpu` (the NVML index),
//! `UUID`, `modelName` and `Hostname` (this machine's name, as dcgm-exporter's), so that
//! gpufeed's series join NVIDIA's in one query or dashboard (`on(UUID)`, or
//! `on(Hostname, gpu)`). A label whose value is unknown (a synthetic GPU has no UUID) is
//! left out. The host's series carry `Hostname`. (Before: `gpufeed_gpu_info` had
//! lowercase `uuid` and `name`, now `UUID` and `modelName`, and other series only `gpu`.)
//!
//! ```
//! use gpufeed_telemetry::prometheus::{Derived, render};
//! use gpufeed_telemetry::jsonl::{GpuInfo, GpuSample};
//! let info = GpuInfo { index: 0, name: Some("NVIDIA H100".into()), uuid: Some("GPU-1".into()),
//!                      memory_total_mib: None };
//! let g = GpuSample { util: Some(37.0), ..GpuSample::new(0.0, 0) };
//! let d = Derived { gpu: 0, verdict: "oscillating", period_s: Some(1.5), idle_ratio: 0.47,
//!                   busy_ratio: 0.0, idle_gaps: 20, mean_percent: 22.0 };
//! let page = render(&[info], &[g], None, &[d], 30.0, Some("node1"));
//! let gpu0 = r#"gpu="0",UUID="GPU-1",modelName="NVIDIA H100",Hostname="node1""#;
//! assert!(page.contains(&format!("gpufeed_gpu_utilization_percent{{{gpu0}}} 37\n")));
//! assert!(page.contains(&format!("gpufeed_gpu_verdict{{{gpu0},verdict=\"oscillating\"}} 1\n")));
//! ```

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::jsonl::{GpuInfo, GpuSample, HostMetrics};

/// The verdicts a GPU can have, each a label value of `gpufeed_gpu_verdict`.
pub const VERDICTS: [&str; 6] = [
    "stable",
    "starved",
    "oscillating",
    "bursty",
    "idle",
    "too_short",
];

/// The throttle reasons, each a label value of `gpufeed_gpu_throttle`.
pub const THROTTLE_REASONS: [&str; 9] = [
    "gpu_idle",
    "applications_clocks",
    "sw_power_cap",
    "hw_slowdown",
    "sync_boost",
    "sw_thermal",
    "hw_thermal",
    "hw_power_brake",
    "display_clocks",
];

/// What the sliding window says about one GPU (computed by `gpufeed-stats`).
#[derive(Debug, Clone, PartialEq)]
pub struct Derived<'a> {
    /// GPU index.
    pub gpu: u32,
    /// One of [`VERDICTS`].
    pub verdict: &'a str,
    /// Period of the oscillation, seconds.
    pub period_s: Option<f64>,
    /// Share of samples idle.
    pub idle_ratio: f64,
    /// Share of samples busy.
    pub busy_ratio: f64,
    /// Idle gaps in the window.
    pub idle_gaps: usize,
    /// Mean utilisation over the window, %.
    pub mean_percent: f64,
}

/// Why the exporter could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExporterError {
    /// The address does not parse or resolve.
    #[error(
        "`--prometheus {addr}` is not an address; write a port (`9400`, bound to 127.0.0.1) \
         or HOST:PORT (`0.0.0.0:9400` to serve every interface)"
    )]
    BadAddress {
        /// As given.
        addr: String,
    },
    /// Binding failed: the port is taken, or needs privileges.
    #[error("cannot serve Prometheus metrics on `{addr}`{}", hint(source))]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
}

fn hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::AddrInUse {
        " (another program uses the port; pick another one)"
    } else {
        ""
    }
}

/// Parses `--prometheus`: a port alone binds 127.0.0.1 (loopback, so nothing is exposed
/// by accident); `HOST:PORT` binds that.
pub fn parse_addr(addr: &str) -> Result<SocketAddr, ExporterError> {
    let bad = || ExporterError::BadAddress {
        addr: crate::error::shown(addr),
    };
    let a = addr.trim();
    if let Ok(port) = a.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(sa) = a.parse::<SocketAddr>() {
        return Ok(sa);
    }
    a.to_socket_addrs()
        .map_err(|_| bad())?
        .next()
        .ok_or_else(bad)
}

/// The serving thread's handle: publish pages to it.
#[derive(Debug, Clone)]
pub struct Exporter {
    addr: SocketAddr,
    page: Arc<Mutex<String>>,
}

impl Exporter {
    /// Binds `addr` and serves `/metrics` from a background thread until the process
    /// exits. The page is empty until the first [`publish`](Self::publish).
    pub fn bind(addr: SocketAddr) -> Result<Self, ExporterError> {
        let listener =
            TcpListener::bind(addr).map_err(|source| ExporterError::Bind { addr, source })?;
        let addr = listener.local_addr().unwrap_or(addr);
        let page = Arc::new(Mutex::new(String::new()));
        let shared = Arc::clone(&page);
        std::thread::Builder::new()
            .name("gpufeed-prometheus".to_owned())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    // A client that misbehaves gets dropped; the next scrape is served.
                    let _ = serve(stream, &shared);
                }
            })
            .map_err(|source| ExporterError::Bind { addr, source })?;
        Ok(Exporter { addr, page })
    }

    /// The address served (with the port the system chose for port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the page scrapes get.
    pub fn publish(&self, page: String) {
        *self.page.lock().unwrap_or_else(PoisonError::into_inner) = page;
    }
}

fn serve(mut stream: TcpStream, page: &Mutex<String>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    // The request line is all that matters; read until the end of the headers.
    let mut req = Vec::with_capacity(512);
    let mut buf = [0u8; 512];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 8192 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = req
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, path) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let path = path.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, body) = match (method, path) {
        (b"GET" | b"HEAD", b"/metrics") => (
            "200 OK",
            page.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        ),
        (b"GET" | b"HEAD", _) => ("404 Not Found", "gpufeed serves /metrics\n".to_owned()),
        _ => ("405 Method Not Allowed", String::new()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if method != b"HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

/// Writes the families of the page one by one: `# HELP`, `# TYPE`, then the samples.
struct Page(String);

impl Page {
    fn family(&mut self, name: &str, help: &str, samples: impl IntoIterator<Item = (String, f64)>) {
        let samples: Vec<(String, f64)> =
            samples.into_iter().filter(|(_, v)| v.is_finite()).collect();
        if samples.is_empty() {
            return;
        }
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} gauge");
        for (labels, v) in samples {
            let _ = writeln!(self.0, "{name}{labels} {v}");
        }
    }
}

/// The labels of each GPU's series, built once per page.
struct GpuLabels {
    /// GPU index and its `gpu="0",UUID="...",modelName="...",Hostname="..."`.
    known: Vec<(u32, String)>,
    /// `,Hostname="..."`, or nothing when the name is unknown.
    host: String,
}

impl GpuLabels {
    fn new(info: &[GpuInfo], hostname: Option<&str>) -> Self {
        let host = hostname
            .filter(|h| !h.is_empty())
            .map(|h| format!(",Hostname=\"{}\"", escape(h)))
            .unwrap_or_default();
        let known = info
            .iter()
            .map(|g| {
                let mut l = format!("gpu=\"{}\"", g.index);
                for (name, v) in [("UUID", &g.uuid), ("modelName", &g.name)] {
                    if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                        let _ = write!(l, ",{name}=\"{}\"", escape(v));
                    }
                }
                l.push_str(&host);
                (g.index, l)
            })
            .collect();
        Self { known, host }
    }

    /// `{...}` of GPU `gpu`, with `extra` (`,reason="..."`) after its labels.
    fn of(&self, gpu: u32, extra: &str) -> String {
        match self.known.iter().find(|(i, _)| *i == gpu) {
            Some((_, l)) => format!("{{{l}{extra}}}"),
            None => format!("{{gpu=\"{gpu}\"{}{extra}}}", self.host),
        }
    }

    /// `{Hostname="..."}` for the host's series; empty without a name.
    fn host(&self) -> String {
        match self.host.strip_prefix(',') {
            Some(h) => format!("{{{h}}}"),
            None => String::new(),
        }
    }
}

/// A GPU gauge: its name, its help line, and its reading of a sample.
type Field = fn(&GpuSample) -> Option<f64>;

/// The GPU gauges of the page, from the newest sample of each GPU.
const GPU_GAUGES: [(&str, &str, Field); 12] = [
    (
        "gpufeed_gpu_utilization_percent",
        "Percent of time a kernel ran (NVML utilization.gpu).",
        |g| g.util,
    ),
    (
        "gpufeed_gpu_memory_utilization_percent",
        "Percent of time device memory was read or written.",
        |g| g.mem_util,
    ),
    (
        "gpufeed_gpu_memory_used_bytes",
        "Device memory in use.",
        |g| g.mem_used_mib.map(|m| m * 1048576.0),
    ),
    ("gpufeed_gpu_power_watts", "Power draw.", |g| g.power_w),
    ("gpufeed_gpu_sm_clock_hertz", "SM clock.", |g| {
        g.sm_clock_mhz.map(|c| f64::from(c) * 1e6)
    }),
    ("gpufeed_gpu_temperature_celsius", "GPU temperature.", |g| {
        g.temp_c.map(f64::from)
    }),
    (
        "gpufeed_gpu_pcie_rx_bytes_per_second",
        "PCIe receive (host to GPU) throughput.",
        |g| g.pcie_rx_kb_s.map(|k| k * 1024.0),
    ),
    (
        "gpufeed_gpu_pcie_tx_bytes_per_second",
        "PCIe transmit (GPU to host) throughput.",
        |g| g.pcie_tx_kb_s.map(|k| k * 1024.0),
    ),
    (
        "gpufeed_gpu_sm_active_percent",
        "GPM: percent of time an SM had a warp resident.",
        |g| g.sm_active_pct,
    ),
    (
        "gpufeed_gpu_sm_occupancy_percent",
        "GPM: resident warps as percent of the maximum.",
        |g| g.sm_occupancy_pct,
    ),
    (
        "gpufeed_gpu_tensor_active_percent",
        "GPM: percent of time a tensor pipe was active.",
        |g| g.tensor_active_pct,
    ),
    (
        "gpufeed_gpu_dram_active_percent",
        "GPM: percent of peak DRAM bandwidth used.",
        |g| g.dram_active_pct,
    ),
];

/// A host gauge: its name, its help line, and its reading of the host's metrics.
type HostField = fn(&HostMetrics) -> Option<f64>;

/// The host gauges of the page.
const HOST_GAUGES: [(&str, &str, HostField); 8] = [
    (
        "gpufeed_host_cpu_percent",
        "Percent of all CPU time busy.",
        |h| h.cpu_pct,
    ),
    (
        "gpufeed_host_iowait_percent",
        "Percent of all CPU time waiting for I/O.",
        |h| h.iowait_pct,
    ),
    (
        "gpufeed_host_busiest_core_percent",
        "Busy percent of the busiest core.",
        |h| h.cpu_cores_pct.as_ref()?.iter().copied().reduce(f64::max),
    ),
    (
        "gpufeed_host_psi_cpu_some_percent",
        "Percent of time some task waited for a CPU.",
        |h| h.psi_cpu_some_pct,
    ),
    (
        "gpufeed_host_psi_io_some_percent",
        "Percent of time some task stalled on I/O.",
        |h| h.psi_io_some_pct,
    ),
    (
        "gpufeed_host_psi_memory_some_percent",
        "Percent of time some task stalled on memory.",
        |h| h.psi_mem_some_pct,
    ),
    (
        "gpufeed_host_disk_read_bytes_per_second",
        "Disk read throughput, whole disks.",
        |h| h.disk_read_mib_s.map(|m| m * 1048576.0),
    ),
    ("gpufeed_host_load1", "1-minute load average.", |h| {
        h.load_1m
    }),
];

/// The page: gauges of the newest sample of every GPU and of the host, and the derived
/// figures of the window (`window_s` seconds), labelled as dcgm-exporter labels its series
/// (`hostname` is this machine's name; see the [module docs](self)). Absent readings are
/// left out.
#[must_use]
pub fn render(
    info: &[GpuInfo],
    latest: &[GpuSample],
    host: Option<&HostMetrics>,
    derived: &[Derived],
    window_s: f64,
    hostname: Option<&str>,
) -> String {
    let labels = GpuLabels::new(info, hostname);
    let gpu_label = |gpu: u32| labels.of(gpu, "");
    let mut p = Page(String::with_capacity(1024 + 4096 * info.len().max(1)));
    p.family(
        "gpufeed_gpu_info",
        "GPU identity (dcgm-exporter's labels); always 1.",
        info.iter().map(|g| (gpu_label(g.index), 1.0)),
    );
    for (name, help, f) in GPU_GAUGES {
        p.family(
            name,
            help,
            latest
                .iter()
                .filter_map(|g| Some((gpu_label(g.gpu), f(g)?))),
        );
    }
    p.family(
        "gpufeed_gpu_throttle",
        "1 while the clock-throttle reason is active.",
        latest.iter().flat_map(|g| {
            let active = g.throttle.clone();
            let labels = &labels;
            THROTTLE_REASONS.iter().filter_map(move |r| {
                let on = active.as_ref()?.iter().any(|a| a == r);
                Some((
                    labels.of(g.gpu, &format!(",reason=\"{r}\"")),
                    f64::from(u8::from(on)),
                ))
            })
        }),
    );
    p.family(
        "gpufeed_window_seconds",
        "Length of the sliding window the gpufeed_gpu_* figures below are computed over.",
        [(String::new(), window_s)],
    );
    p.family(
        "gpufeed_gpu_verdict",
        "1 for the GPU's current verdict over the window, 0 for the others.",
        derived.iter().flat_map(|d| {
            let labels = &labels;
            VERDICTS.iter().map(move |v| {
                (
                    labels.of(d.gpu, &format!(",verdict=\"{v}\"")),
                    f64::from(u8::from(d.verdict == *v)),
                )
            })
        }),
    );
    p.family(
        "gpufeed_gpu_oscillation_period_seconds",
        "Period of the utilisation cycle over the window; absent without one.",
        derived
            .iter()
            .filter_map(|d| Some((gpu_label(d.gpu), d.period_s?))),
    );
    p.family(
        "gpufeed_gpu_idle_ratio",
        "Share of the window's samples below the idle level (10 %).",
        derived.iter().map(|d| (gpu_label(d.gpu), d.idle_ratio)),
    );
    p.family(
        "gpufeed_gpu_busy_ratio",
        "Share of the window's samples at or above the busy level (80 %).",
        derived.iter().map(|d| (gpu_label(d.gpu), d.busy_ratio)),
    );
    p.family(
        "gpufeed_gpu_idle_gaps",
        "Idle gaps in the window.",
        derived
            .iter()
            .map(|d| (gpu_label(d.gpu), d.idle_gaps as f64)),
    );
    p.family(
        "gpufeed_gpu_utilization_window_mean_percent",
        "Mean utilisation over the window.",
        derived.iter().map(|d| (gpu_label(d.gpu), d.mean_percent)),
    );
    if let Some(h) = host {
        for (name, help, f) in HOST_GAUGES {
            p.family(name, help, f(h).map(|v| (labels.host(), v)));
        }
    }
    p.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_published_page_on_loopback() {
        let e = Exporter::bind(parse_addr("127.0.0.1:0").unwrap()).unwrap();
        let addr = e.local_addr();
        assert!(addr.ip().is_loopback() && addr.port() != 0);
        let r = scrape(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(
            r.ends_with("\r\n\r\n"),
            "empty before the first publish: {r}"
        );
        e.publish("gpufeed_x 1\n".to_owned());
        let r = scrape(addr, "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
        assert!(r.contains("Content-Type: text/plain; version=0.0.4"), "{r}");
        assert!(r.ends_with("\r\n\r\ngpufeed_x 1\n"), "{r}");
        assert!(scrape(addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(scrape(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let head = scrape(addr, "HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        // Garbage and an early close do not stop the server.
        drop(TcpStream::connect(addr).unwrap());
        assert!(scrape(addr, "\x00\x01garbage\r\n\r\n").starts_with("HTTP/1.1 405"));
        assert!(scrape(addr, "GET /metrics HTTP/1.1\r\n\r\n").contains("gpufeed_x 1"));
    }

    #[test]
    fn a_port_in_use_is_a_clear_error() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = Exporter::bind(addr).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cannot serve Prometheus metrics on `{addr}` (another program uses the port; \
                 pick another one)"
            )
        );
    }

    #[test]
    fn addresses() {
        assert_eq!(
            parse_addr("9400").unwrap(),
            "127.0.0.1:9400".parse().unwrap()
        );
        assert_eq!(
            parse_addr(":9400").unwrap(),
            "127.0.0.1:9400".parse().unwrap()
        );
        assert_eq!(
            parse_addr("0.0.0.0:9400").unwrap(),
            "0.0.0.0:9400".parse().unwrap()
        );
        assert_eq!(
            parse_addr("[::1]:9400").unwrap(),
            "[::1]:9400".parse().unwrap()
        );
        assert!(parse_addr("localhost:9400").unwrap().ip().is_loopback());
        for bad in ["", "nope", "99999", "1.2.3.4"] {
            let e = parse_addr(bad).unwrap_err().to_string();
            assert!(e.contains("is not an address"), "{bad}: {e}");
        }
    }

    #[test]
    fn page_has_gauges_verdicts_and_escaped_labels() {
        let info = [GpuInfo {
            index: 0,
            name: Some("A \"quoted\" GPU".to_owned()),
            uuid: Some("GPU-1".to_owned()),
            memory_total_mib: None,
        }];
        let g = GpuSample {
            util: Some(37.0),
            mem_used_mib: Some(2.0),
            sm_clock_mhz: Some(1980),
            throttle: Some(vec!["sw_power_cap".to_owned()]),
            power_w: Some(f64::NAN),
            ..GpuSample::new(0.0, 0)
        };
        let d = Derived {
            gpu: 0,
            verdict: "bursty",
            period_s: None,
            idle_ratio: 0.25,
            busy_ratio: 0.7,
            idle_gaps: 4,
            mean_percent: 70.0,
        };
        let host = HostMetrics {
            cpu_pct: Some(85.5),
            cpu_cores_pct: Some(vec![10.0, 99.0]),
            ..HostMetrics::default()
        };
        let page = render(&info, &[g], Some(&host), &[d], 30.0, Some("node-7"));
        let gpu0 = r#"gpu="0",UUID="GPU-1",modelName="A \"quoted\" GPU",Hostname="node-7""#;
        for want in [
            format!("gpufeed_gpu_info{{{gpu0}}} 1\n"),
            "# TYPE gpufeed_gpu_utilization_percent gauge\n".to_owned(),
            format!("gpufeed_gpu_memory_used_bytes{{{gpu0}}} 2097152\n"),
            format!("gpufeed_gpu_sm_clock_hertz{{{gpu0}}} 1980000000\n"),
            format!("gpufeed_gpu_throttle{{{gpu0},reason=\"sw_power_cap\"}} 1\n"),
            format!("gpufeed_gpu_throttle{{{gpu0},reason=\"gpu_idle\"}} 0\n"),
            format!("gpufeed_gpu_verdict{{{gpu0},verdict=\"bursty\"}} 1\n"),
            format!("gpufeed_gpu_verdict{{{gpu0},verdict=\"stable\"}} 0\n"),
            format!("gpufeed_gpu_idle_ratio{{{gpu0}}} 0.25\n"),
            "gpufeed_window_seconds 30\n".to_owned(),
            "gpufeed_host_cpu_percent{Hostname=\"node-7\"} 85.5\n".to_owned(),
            "gpufeed_host_busiest_core_percent{Hostname=\"node-7\"} 99\n".to_owned(),
        ] {
            assert!(page.contains(&want), "{want}\n{page}");
        }
        // Without identity or host name: only what is known.
        let g3 = GpuSample {
            util: Some(5.0),
            ..GpuSample::new(0.0, 3)
        };
        let bare = render(&[], &[g3], None, &[], 30.0, None);
        assert!(
            bare.contains("gpufeed_gpu_utilization_percent{gpu=\"3\"} 5\n"),
            "{bare}"
        );
        // Absent or non-finite readings are left out, families without samples too.
        assert!(!page.contains("power_watts"), "{page}");
        assert!(!page.contains("oscillation_period"), "{page}");
        assert!(!page.contains("iowait"), "{page}");
        // Every sample line belongs to a declared family.
        for line in page.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(page.contains(&format!("# TYPE {name} gauge")), "{line}");
        }
    }
}
