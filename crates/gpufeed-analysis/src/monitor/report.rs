//! The end report of `monitor` and `watch`: the `trace` util report of the run, plus
//! `host` (and `exit_code` for `watch`), as docs/contract.md says.
//!
//! Every figure comes from `gpufeed-stats` through [`crate::trace::analyze_util_trace`]
//! (GPUs) and [`gpufeed_stats::summarize`] (host series); nothing is computed twice.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use gpufeed_contract::{Attach, Host, Monitor, Sampler, Stat};
use gpufeed_stats::summarize;
use gpufeed_telemetry::jsonl::HostSample;
use gpufeed_telemetry::sampler::{Collector, SamplerCost};
use gpufeed_telemetry::trace::{TraceFormat, UtilTrace};
use serde::Serialize;

use crate::trace::{TraceReport, UtilReport, analyze_util_trace, render_text};

/// The end report of `monitor` and `watch`. It serialises as the `monitor` document
/// ([`Monitor`], gpufeed-contract).
#[derive(Debug, Clone, Serialize)]
#[serde(into = "Monitor")]
pub struct MonitorReport {
    /// The `trace --kind util` report of the whole run.
    pub util: UtilReport,
    /// Host figures over the run.
    pub host: Host,
    /// `watch`: the command's exit code (128 + N when signal N killed it).
    pub exit_code: Option<i32>,
    /// `watch`: the command's stacks sampled over its run.
    pub attach: Option<Box<Attach>>,
}

impl From<MonitorReport> for Monitor {
    fn from(r: MonitorReport) -> Self {
        Monitor {
            attach: r.attach,
            ..Monitor::new(r.util.document(), r.host, r.exit_code)
        }
    }
}

fn stat(values: &[f64]) -> Option<Stat> {
    summarize(values).map(|s| Stat {
        mean: s.mean,
        p95: s.p95,
        max: s.max,
    })
}

fn series(host: &[HostSample], f: impl Fn(&HostSample) -> Option<f64>) -> Option<Stat> {
    let v: Vec<f64> = host
        .iter()
        .filter_map(f)
        .filter(|v| v.is_finite())
        .collect();
    stat(&v)
}

/// Summarises the host samples of a run.
#[must_use]
pub fn host_report(host: &[HostSample], cost: &SamplerCost, interval_s: f64, real: bool) -> Host {
    let process_cpu_s = host
        .windows(2)
        .filter_map(|w| Some(w[1].host.proc_cpu_pct? / 100.0 * (w[1].t - w[0].t)))
        .reduce(|a, b| a + b);
    Host {
        samples: host.len(),
        cpu_pct: series(host, |h| h.host.cpu_pct),
        iowait_pct: series(host, |h| h.host.iowait_pct),
        busiest_core_pct: series(host, |h| {
            h.host
                .cpu_cores_pct
                .as_ref()?
                .iter()
                .copied()
                .reduce(f64::max)
        }),
        psi_cpu_some_pct: series(host, |h| h.host.psi_cpu_some_pct),
        psi_io_some_pct: series(host, |h| h.host.psi_io_some_pct),
        psi_io_full_pct: series(host, |h| h.host.psi_io_full_pct),
        psi_mem_some_pct: series(host, |h| h.host.psi_mem_some_pct),
        disk_read_mib_s: series(host, |h| h.host.disk_read_mib_s),
        disk_write_mib_s: series(host, |h| h.host.disk_write_mib_s),
        process_cpu_pct: series(host, |h| h.host.proc_cpu_pct),
        process_cpu_s,
        sampler: Sampler {
            ticks: cost.ticks,
            interval_s,
            poll_us_per_tick: cost.poll_us_per_tick(),
            cpu_pct: (real && cost.elapsed_s >= 1.0)
                .then(|| cost.thread_cpu_s / cost.elapsed_s * 100.0),
        },
    }
}

/// GPUs of a trace that can be analysed (two distinct timestamps at least), and a
/// message for each one that cannot.
fn analysable(trace: &UtilTrace) -> (UtilTrace, Vec<String>) {
    let mut notes = Vec::new();
    let mut kept = trace.clone();
    kept.gpus.retain(|s| {
        let ok = gpufeed_stats::util::sampling_interval(&s.t).is_some();
        if !ok {
            notes.push(format!(
                "GPU {}: {} sample(s) in the run, too few to analyse; run longer",
                s.gpu,
                s.util.len()
            ));
        }
        ok
    });
    kept.rows = kept.gpus.iter().map(|s| s.util.len()).sum();
    (kept, notes)
}

/// The util report of a run (empty `gpus` when nothing could be analysed), and notes
/// for the user about GPUs left out or holes in the series.
pub fn util_report(
    collector: &Collector,
    label: &str,
    interval_s: f64,
) -> Result<(UtilReport, Vec<String>)> {
    let empty = || UtilReport {
        samples: 0,
        interval_s,
        gpus: Vec::new(),
        format: TraceFormat::GpufeedJsonl,
        skipped: collector.skipped(),
    };
    let Some(trace) = collector.trace() else {
        return Ok((empty(), Vec::new()));
    };
    let (trace, mut notes) = analysable(&trace);
    if trace.gpus.is_empty() {
        return Ok((empty(), notes));
    }
    let report = analyze_util_trace(Path::new(label), &trace)?;
    for g in report.gpus.iter().filter(|g| g.holes > 0) {
        notes.push(format!(
            "GPU {} has {} hole(s) longer than {} sampling intervals; the analysis treats \
             samples as evenly spaced, so idle gaps and the period are approximate",
            g.gpu,
            g.holes,
            crate::trace::HOLE_FACTOR
        ));
    }
    Ok((report, notes))
}

/// The verdict over the last `seconds` of the run, for the live views. A GPU is left out
/// until the window holds `min_samples` of its samples spanning `min_span_s` seconds:
/// earlier, a cycle has not repeated often enough to be told from a trend, and the
/// verdict would flicker between `starved` and `bursty`.
#[must_use]
pub fn window_report(
    collector: &Collector,
    seconds: f64,
    min_samples: usize,
    min_span_s: f64,
) -> Option<UtilReport> {
    let mut trace = collector.window(seconds)?;
    trace.gpus.retain(|s| {
        let span = s.t.last().zip(s.t.first()).map_or(0.0, |(b, a)| b - a);
        s.util.len() >= min_samples && span >= min_span_s
    });
    let (trace, _) = analysable(&trace);
    if trace.gpus.is_empty() {
        return None;
    }
    analyze_util_trace(Path::new("window"), &trace).ok()
}

fn fmt_stat(o: &mut String, name: &str, s: Option<Stat>, unit: &str) -> bool {
    let Some(s) = s else { return false };
    let _ = write!(
        o,
        "  {name} mean {:.1}{unit} (p95 {:.1}, max {:.1})",
        s.mean, s.p95, s.max
    );
    true
}

/// The human end report: the `trace` report under a first line naming the run, then
/// the host and, for `watch`, the command.
#[must_use]
pub fn render(report: &MonitorReport, title: &str, command: Option<&str>) -> String {
    let mut o = String::new();
    let u = &report.util;
    let per_gpu = u.gpus.first().map_or(0, |g| g.samples);
    if u.gpus.is_empty() {
        let _ = writeln!(o, "{title}: no GPU utilisation to analyse");
    } else {
        let _ = writeln!(
            o,
            "{title}: {} GPU{}, {} samples every {:.0} ms ({:.1} s per GPU)",
            u.gpus.len(),
            if u.gpus.len() == 1 { "" } else { "s" },
            u.samples,
            u.interval_s * 1e3,
            per_gpu as f64 * u.interval_s,
        );
        // The trace report's own first line names a file; the title above replaces it.
        let text = render_text(Path::new(title), &TraceReport::Util(u.clone()));
        let body = text.split_once('\n').map_or("", |(_, rest)| rest);
        o.push_str(body);
    }
    let h = &report.host;
    let _ = writeln!(o);
    if let Some(cmd) = command {
        let code = report.exit_code.unwrap_or_default();
        let how = if code > 128 {
            format!("was killed by signal {} (exit code {code})", code - 128)
        } else {
            format!("exited with {code}")
        };
        let _ = write!(o, "command `{cmd}` {how}");
        if let (Some(s), Some(p)) = (h.process_cpu_s, h.process_cpu_pct) {
            let _ = write!(
                o,
                "; its processes used {s:.1} s of CPU, {:.2} cores on average (peak {:.2})",
                p.mean / 100.0,
                p.max / 100.0
            );
        }
        let _ = writeln!(o);
    }
    let mut line = String::new();
    let mut any = fmt_stat(&mut line, "cpu", h.cpu_pct, " %");
    any |= fmt_stat(&mut line, "busiest core", h.busiest_core_pct, " %");
    any |= fmt_stat(&mut line, "iowait", h.iowait_pct, " %");
    if any {
        let _ = writeln!(o, "host{line}");
    }
    let mut line = String::new();
    let mut any = fmt_stat(&mut line, "cpu", h.psi_cpu_some_pct, " %");
    any |= fmt_stat(&mut line, "io", h.psi_io_some_pct, " %");
    any |= fmt_stat(&mut line, "memory", h.psi_mem_some_pct, " %");
    if any {
        let _ = writeln!(o, "pressure (share of time stalled){line}");
    }
    let mut line = String::new();
    if fmt_stat(&mut line, "read", h.disk_read_mib_s, " MiB/s") {
        let _ = writeln!(o, "disks{line}");
    }
    if h.samples == 0 && command.is_none() {
        let _ = writeln!(
            o,
            "host  not sampled (replayed or virtual-time run without host samples)"
        );
    }
    let s = &h.sampler;
    let _ = writeln!(
        o,
        "sampler  {} ticks, {:.1} µs of CPU per poll{}",
        s.ticks,
        s.poll_us_per_tick,
        s.cpu_pct
            .map(|p| format!(", gpufeed used {p:.2} % of one core"))
            .unwrap_or_default()
    );
    if let Some(a) = &report.attach {
        let _ = writeln!(o, "\nthe command's Python stacks (as `gpufeed attach`):");
        o.push_str(&gpufeed_attach::render(a));
    }
    o
}

#[cfg(test)]
mod tests {
    use gpufeed_telemetry::jsonl::{GpuSample, HostMetrics, Record};

    use super::*;

    fn cost() -> SamplerCost {
        SamplerCost {
            ticks: 10,
            poll_cpu_s: 0.001,
            thread_cpu_s: 0.01,
            elapsed_s: 1.0,
        }
    }

    #[test]
    fn host_figures_and_process_cpu_time() {
        let host: Vec<HostSample> = (0..5)
            .map(|i| HostSample {
                t: f64::from(i) * 0.5,
                host: HostMetrics {
                    cpu_pct: Some(f64::from(i) * 10.0),
                    cpu_cores_pct: Some(vec![10.0, 90.0 + f64::from(i)]),
                    proc_cpu_pct: Some(200.0),
                    ..HostMetrics::default()
                },
            })
            .collect();
        let r = host_report(&host, &cost(), 0.1, true);
        assert_eq!(r.samples, 5);
        assert_eq!(r.cpu_pct.unwrap().mean, 20.0);
        assert_eq!(r.busiest_core_pct.unwrap().max, 94.0);
        // 2 cores for 2 s.
        assert!((r.process_cpu_s.unwrap() - 4.0).abs() < 1e-9);
        assert!(r.iowait_pct.is_none());
        assert!((r.sampler.cpu_pct.unwrap() - 1.0).abs() < 1e-9);
        assert!((r.sampler.poll_us_per_tick - 100.0).abs() < 1e-9);
        let virt = host_report(&host, &cost(), 0.1, false);
        assert_eq!(virt.sampler.cpu_pct, None);
    }

    #[test]
    fn too_short_runs_are_notes_not_errors() {
        let mut c = Collector::new();
        c.push(&Record::Gpu(GpuSample {
            util: Some(50.0),
            ..GpuSample::new(0.0, 0)
        }));
        let (r, notes) = util_report(&c, "run", 0.1).unwrap();
        assert!(r.gpus.is_empty());
        assert_eq!(r.interval_s, 0.1);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let (r, notes) = util_report(&Collector::new(), "run", 0.1).unwrap();
        assert!(r.gpus.is_empty() && notes.is_empty());
        assert!(window_report(&c, 30.0, 1, 0.0).is_none());
    }

    #[test]
    fn json_has_the_contract_fields_and_host() {
        let mut c = Collector::new();
        for i in 0..100 {
            c.push(&Record::Gpu(GpuSample {
                util: Some(if i % 10 < 5 { 40.0 } else { 2.0 }),
                ..GpuSample::new(f64::from(i) * 0.1, 0)
            }));
        }
        let (util, _) = util_report(&c, "run", 0.1).unwrap();
        let report = MonitorReport {
            util,
            host: host_report(&[], &cost(), 0.1, false),
            exit_code: Some(1),
            attach: None,
        };
        let v: serde_json::Value = serde_json::to_value(&report).unwrap();
        assert_eq!(v["kind"], "util");
        assert_eq!(v["samples"], 100);
        assert_eq!(v["gpus"][0]["verdict"], "oscillating");
        assert_eq!(v["host"]["cpu_pct"], serde_json::Value::Null);
        assert_eq!(v["exit_code"], 1);
        let text = render(&report, "watch", Some("sh -c 'exit 1'"));
        assert!(
            text.starts_with("watch: 1 GPU, 100 samples every 100 ms"),
            "{text}"
        );
        assert!(text.contains("GPU 0  oscillating"), "{text}");
        assert!(
            text.contains("command `sh -c 'exit 1'` exited with 1"),
            "{text}"
        );
    }
}
