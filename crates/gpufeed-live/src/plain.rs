//! `--plain`: one line per interval, for logs.
//!
//! ```text
//!    12.3 s  gpu0  38 %  20480 MiB  195 W  oscillating 1.50 s idle 47 %  |  cpu 85 %  iowait 4.0 %
//! ```
//!
//! Per GPU: the newest utilisation, memory in use and power, then the verdict over the
//! sliding window with the period (oscillating) or the idle share; `warming up` until the
//! window holds enough samples. A reading the source does not give is `-`.

use std::fmt::Write as _;

use gpufeed_stats::UtilVerdict;
use gpufeed_telemetry::sampler::Collector;

use gpufeed_analysis::trace::UtilReport;

/// The line for time `t`, without a newline.
#[must_use]
pub fn line(t: f64, collector: &Collector, window: Option<&UtilReport>) -> String {
    let mut o = format!("{t:>7.1} s");
    let opt =
        |v: Option<f64>, unit: &str| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}{unit}"));
    for g in collector.latest_gpu() {
        let _ = write!(
            o,
            "  gpu{} {:>3} {:>9} {:>5}",
            g.gpu,
            opt(g.util, " %"),
            opt(g.mem_used_mib, " MiB"),
            opt(g.power_w, " W"),
        );
        match window.and_then(|w| w.gpus.iter().find(|r| r.gpu == g.gpu)) {
            None => o.push_str("  warming up"),
            Some(r) => {
                let _ = write!(o, "  {}", r.verdict.as_str());
                match (r.verdict, r.period_s) {
                    (UtilVerdict::Oscillating, Some(p)) => {
                        let _ = write!(o, " {p:.2} s");
                    }
                    _ => {
                        let _ = write!(o, " idle {:.0} %", r.idle_fraction * 100.0);
                    }
                }
            }
        }
    }
    if let Some(h) = collector.host().last() {
        o.push_str("  |");
        if let Some(c) = h.host.cpu_pct {
            let _ = write!(o, "  cpu {c:.0} %");
        }
        if let Some(w) = h.host.iowait_pct {
            let _ = write!(o, "  iowait {w:.1} %");
        }
        if let Some(p) = h.host.proc_cpu_pct {
            let _ = write!(o, "  command {:.2} cores", p / 100.0);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use gpufeed_telemetry::jsonl::{GpuSample, HostMetrics, HostSample, Record};

    use super::*;

    #[test]
    fn a_line_per_interval() {
        let mut c = Collector::new();
        c.push(&Record::Gpu(GpuSample {
            util: Some(38.0),
            mem_used_mib: Some(20480.0),
            ..GpuSample::new(12.3, 0)
        }));
        c.push(&Record::Host(HostSample {
            t: 12.3,
            host: HostMetrics {
                cpu_pct: Some(85.2),
                iowait_pct: Some(4.04),
                ..HostMetrics::default()
            },
        }));
        assert_eq!(
            line(12.3, &c, None),
            "   12.3 s  gpu0 38 % 20480 MiB     -  warming up  |  cpu 85 %  iowait 4.0 %"
        );
    }
}
