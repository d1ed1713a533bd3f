//! The GPU check: what NVML says about each GPU ([`GpuInventory`]), judged by pure rules.
//!
//! No driver is one `gpu-no-driver` info finding, never an error: gpufeed runs on machines
//! without a GPU. A field the driver does not report is left out of the evidence and never
//! triggers a rule.
//!
//! ```
//! use gpufeed_doctor::gpu::{GpuFacts, check};
//! use gpufeed_telemetry::nvml::{GpuDetails, GpuInventory};
//!
//! let gpu = GpuDetails {
//!     index: 0,
//!     pcie_width: Some(4),
//!     pcie_width_max: Some(16),
//!     ..GpuDetails::default()
//! };
//! let facts = GpuFacts::Found(GpuInventory { gpus: vec![gpu], ..GpuInventory::default() });
//! let ids: Vec<&str> = check(&facts).iter().map(|f| f.id).collect();
//! assert_eq!(ids, ["gpu-inventory", "gpu-pcie-degraded"]);
//! ```

use std::fmt::Write as _;

use gpufeed_stats::thresholds::POWER_LIMIT_LOW_RATIO;
use gpufeed_telemetry::nvml::{GpuDetails, GpuInventory};
use gpufeed_telemetry::source::SourceError;

use super::fact;
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// What the GPU check found.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuFacts {
    /// NVML could not be loaded: no NVIDIA driver.
    NoDriver {
        /// Why, as NVML's loader said.
        reason: String,
    },
    /// The driver lists no GPU.
    NoGpu,
    /// NVML failed.
    Error {
        /// The failure.
        message: String,
    },
    /// The GPUs.
    Found(GpuInventory),
}

impl Default for GpuFacts {
    fn default() -> Self {
        Self::NoDriver {
            reason: "not checked".to_owned(),
        }
    }
}

impl GpuFacts {
    /// Reads the inventory through NVML.
    #[must_use]
    pub fn collect() -> Self {
        match gpufeed_telemetry::nvml::gpu_inventory() {
            Ok(inventory) => Self::Found(inventory),
            Err(SourceError::NoDriver { reason }) => Self::NoDriver { reason },
            Err(SourceError::NoGpu) => Self::NoGpu,
            Err(e) => Self::Error {
                message: e.to_string(),
            },
        }
    }

    /// How many GPUs the driver lists; `None` when unknown (no driver, NVML failed).
    #[must_use]
    pub fn gpu_count(&self) -> Option<usize> {
        match self {
            Self::Found(inv) => Some(inv.gpus.len()),
            Self::NoGpu => Some(0),
            Self::NoDriver { .. } | Self::Error { .. } => None,
        }
    }

    /// The GPUs' UUIDs, in NVML order (those NVML reported).
    #[must_use]
    pub fn uuids(&self) -> Vec<String> {
        match self {
            Self::Found(inv) => inv.gpus.iter().filter_map(|g| g.uuid.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

/// The rules over the GPU facts. Processes of this process are not "other processes".
#[must_use]
pub fn check(facts: &GpuFacts) -> Vec<Finding> {
    let inv = match facts {
        GpuFacts::NoDriver { reason } => {
            return vec![
                finding("gpu-no-driver", "no NVIDIA driver found")
                    .evidence(format!("NVML: {reason}"))
                    .fix(fix_of("gpu-no-driver")),
            ];
        }
        GpuFacts::NoGpu => {
            return vec![
                finding("gpu-not-found", "the NVIDIA driver lists no GPU")
                    .evidence("NVML: nvmlDeviceGetCount = 0")
                    .fix(fix_of("gpu-not-found")),
            ];
        }
        GpuFacts::Error { message } => {
            return vec![
                finding("gpu-nvml-error", "NVML failed")
                    .evidence(message.clone())
                    .fix(fix_of("gpu-nvml-error")),
            ];
        }
        GpuFacts::Found(inv) => inv,
    };
    let own = std::process::id();
    let mut out = Vec::new();
    for u in &inv.unreachable {
        out.push(
            finding(
                "gpu-unreachable",
                &format!("GPU {}: the driver lists it but cannot open it", u.index),
            )
            .evidence(format!(
                "NVML: nvmlDeviceGetHandleByIndex({}) failed: {}",
                u.index, u.reason
            ))
            .fix(format!(
                "`dmesg | grep -i xid` says why (Xid 79: fallen off the bus); `sudo nvidia-smi -r -i {}` or a reboot brings it back; until then leave it out with CUDA_VISIBLE_DEVICES",
                u.index
            )),
        );
    }
    for g in &inv.gpus {
        gpu_findings(inv, g, own, &mut out);
    }
    out
}

/// The findings of one GPU of the inventory: what it is, its link, persistence, power
/// limit, throttling, ECC errors, MIG, and memory that other processes (not `own`) hold.
fn gpu_findings(inv: &GpuInventory, g: &GpuDetails, own: u32, out: &mut Vec<Finding>) {
    out.push(inventory(inv, g));
    pcie(g, out);
    if g.persistence_mode == Some(false) {
        out.push(
            finding(
                "gpu-persistence-off",
                &format!("GPU {}: persistence mode is off", g.index),
            )
            .evidence("nvidia-smi: Persistence-M Off")
            .fix(format!("sudo nvidia-smi -i {} -pm 1", g.index)),
        );
    }
    if let (Some(limit), Some(default)) = (g.power_limit_w, g.power_limit_default_w)
        && limit < default * POWER_LIMIT_LOW_RATIO
    {
        out.push(
            finding(
                "gpu-power-limit-low",
                &format!(
                    "GPU {}: power limit {limit:.0} W is below the default {default:.0} W",
                    g.index
                ),
            )
            .evidence(format!(
                "power limit {limit:.0} W = {:.0} % of the default {default:.0} W (reported below {:.0} %)",
                100.0 * limit / default,
                100.0 * POWER_LIMIT_LOW_RATIO
            ))
            .fix(format!("sudo nvidia-smi -i {} -pl {default:.0}", g.index)),
        );
    }
    let active: Vec<&str> = g
        .throttle
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|r| *r != "gpu_idle")
        .collect();
    if !active.is_empty() {
        let mut ev = format!("active throttle reasons: {}", active.join(", "));
        if let (Some(c), Some(m)) = (g.sm_clock_mhz, g.sm_clock_max_mhz) {
            let _ = write!(ev, "; SM clock {c} of {m} MHz");
        }
        out.push(
            finding(
                "gpu-throttled",
                &format!("GPU {} is throttled ({})", g.index, active.join(", ")),
            )
            .evidence(ev)
            .fix(fix_of("gpu-throttled")),
        );
    }
    if let Some(n) = g.ecc_uncorrected.filter(|&n| n > 0) {
        out.push(
            finding(
                "gpu-ecc-errors",
                &format!(
                    "GPU {}: {n} uncorrected ECC error(s) since the driver loaded",
                    g.index
                ),
            )
            .evidence(format!(
                "volatile ECC errors: {n} uncorrected, {} corrected",
                g.ecc_corrected
                    .map_or_else(|| "?".to_owned(), |c| c.to_string())
            ))
            .fix(format!(
                "nvidia-smi -q -d ECC,PAGE_RETIREMENT -i {i}; drain the machine, reset the GPU (`sudo nvidia-smi -r -i {i}`), replace it if the errors come back",
                i = g.index
            )),
        );
    }
    if g.mig_enabled == Some(true) {
        out.push(
            finding("gpu-mig-enabled", &format!("GPU {}: MIG mode is on", g.index))
                .evidence("nvmlDeviceGetMigMode: current = enabled")
                .fix(format!(
                    "sudo nvidia-smi -i {} -mig 0  # when no instance is in use; or list the instances with `nvidia-smi -L` and size the batch for one",
                    g.index
                )),
        );
    }
    let others: Vec<_> = g
        .processes
        .iter()
        .flatten()
        .filter(|p| p.kind == "compute" && p.pid != own)
        .collect();
    if !others.is_empty() {
        let held: u64 = others.iter().filter_map(|p| p.used_mib).sum();
        let list: Vec<String> = others
            .iter()
            .map(|p| {
                format!(
                    "pid {} {}{}",
                    p.pid,
                    p.name.as_deref().unwrap_or("?"),
                    p.used_mib
                        .map_or_else(String::new, |m| format!(" ({m} MiB)"))
                )
            })
            .collect();
        out.push(
            finding(
                "gpu-memory-held",
                &format!(
                    "GPU {}: {} other process(es) hold {held} MiB",
                    g.index,
                    others.len()
                ),
            )
            .evidence(list.join("; "))
            .fix(fix_of("gpu-memory-held")),
        );
    }
}

/// `gpu-pcie-degraded`: fewer lanes than the maximum, always; an older generation only when
/// the GPU is not idle (the link drops to gen 1 to save power while idle, by design).
fn pcie(g: &GpuDetails, out: &mut Vec<Finding>) {
    let idle = g.throttle.iter().flatten().any(|r| r == "gpu_idle");
    let narrow = matches!((g.pcie_width, g.pcie_width_max), (Some(c), Some(m)) if c < m);
    let slow = !idle && matches!((g.pcie_gen, g.pcie_gen_max), (Some(c), Some(m)) if c < m);
    if !(narrow || slow) {
        return;
    }
    let mut what = Vec::new();
    if narrow {
        what.push(format!(
            "x{} of x{}",
            g.pcie_width.unwrap_or(0),
            g.pcie_width_max.unwrap_or(0)
        ));
    }
    if slow {
        what.push(format!(
            "gen {} of gen {}",
            g.pcie_gen.unwrap_or(0),
            g.pcie_gen_max.unwrap_or(0)
        ));
    }
    out.push(
        finding(
            "gpu-pcie-degraded",
            &format!(
                "GPU {}: the PCIe link runs at {}",
                g.index,
                what.join(" and ")
            ),
        )
        .evidence(format!(
            "{}{}",
            link(g),
            if idle {
                " (the GPU is idle: its generation drops while idle, so only the width is judged)"
            } else {
                ""
            }
        ))
        .fix(fix_of("gpu-pcie-degraded")),
    );
}

/// `gen 4/4 x16/16`, with `?` for what the driver did not say.
fn link(g: &GpuDetails) -> String {
    let q = |v: Option<u32>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!(
        "PCIe gen {}/{} x{}/{} (now/max)",
        q(g.pcie_gen),
        q(g.pcie_gen_max),
        q(g.pcie_width),
        q(g.pcie_width_max)
    )
}

/// `gpu-inventory`: one line per fact read, so the report shows what was checked.
fn inventory(inv: &GpuInventory, g: &GpuDetails) -> Finding {
    let mut head = format!(
        "GPU {}: {}",
        g.index,
        g.name.as_deref().unwrap_or("unknown")
    );
    if let Some(m) = g.memory_total_mib {
        let _ = write!(head, ", {:.1} GiB", m as f64 / 1024.0);
    }
    let mut ev = Vec::new();
    ev.push(format!(
        "driver {}, CUDA {}",
        inv.driver_version.as_deref().unwrap_or("?"),
        inv.cuda_version.as_deref().unwrap_or("?")
    ));
    if let (Some(used), Some(total)) = (g.memory_used_mib, g.memory_total_mib) {
        ev.push(format!("memory used {used} of {total} MiB"));
    }
    ev.push(link(g));
    if let Some(p) = g.persistence_mode {
        ev.push(format!("persistence mode {}", on_off(p)));
    }
    if let (Some(l), Some(d)) = (g.power_limit_w, g.power_limit_default_w) {
        ev.push(format!("power limit {l:.0} W (default {d:.0} W)"));
    }
    if let (Some(c), Some(m)) = (g.sm_clock_mhz, g.sm_clock_max_mhz) {
        ev.push(format!("SM clock {c}/{m} MHz"));
    }
    if let (Some(c), Some(m)) = (g.mem_clock_mhz, g.mem_clock_max_mhz) {
        ev.push(format!("memory clock {c}/{m} MHz"));
    }
    if let Some(t) = &g.throttle {
        ev.push(if t.is_empty() {
            "no throttle reason".to_owned()
        } else {
            format!("throttle: {}", t.join(", "))
        });
    }
    match (g.ecc_enabled, g.ecc_uncorrected) {
        (Some(true), Some(u)) => ev.push(format!("ECC on, {u} uncorrected error(s)")),
        (Some(e), _) => ev.push(format!("ECC {}", on_off(e))),
        _ => {}
    }
    if let Some(m) = g.mig_enabled {
        ev.push(format!("MIG {}", on_off(m)));
    }
    if let Some(ps) = &g.processes {
        ev.push(format!("{} process(es) with a context", ps.len()));
    }
    fact("gpu-inventory", head).evidence(ev.join("; "))
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// The registry's fix for a rule.
fn fix_of(id: &str) -> &'static str {
    gpufeed_findings::rules::rule_info(id).map_or("", |r| r.fix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpufeed_telemetry::nvml::GpuProcess;

    /// A healthy H100 at full link, default power, no throttle beyond idle.
    fn healthy() -> GpuDetails {
        GpuDetails {
            index: 0,
            name: Some("NVIDIA H100 80GB HBM3".into()),
            uuid: Some("GPU-1234".into()),
            memory_total_mib: Some(81559),
            memory_used_mib: Some(1),
            pcie_gen: Some(5),
            pcie_gen_max: Some(5),
            pcie_width: Some(16),
            pcie_width_max: Some(16),
            persistence_mode: Some(true),
            power_limit_w: Some(700.0),
            power_limit_default_w: Some(700.0),
            sm_clock_mhz: Some(345),
            sm_clock_max_mhz: Some(1980),
            mem_clock_mhz: Some(2619),
            mem_clock_max_mhz: Some(2619),
            throttle: Some(vec!["gpu_idle".into()]),
            ecc_enabled: Some(true),
            ecc_uncorrected: Some(0),
            ecc_corrected: Some(0),
            mig_enabled: Some(false),
            processes: Some(vec![]),
        }
    }

    fn ids_of(g: GpuDetails) -> Vec<&'static str> {
        let facts = GpuFacts::Found(GpuInventory {
            driver_version: Some("550.54.15".into()),
            cuda_version: Some("12.4".into()),
            gpus: vec![g],
            unreachable: vec![],
        });
        check(&facts).iter().map(|f| f.id).collect()
    }

    #[test]
    fn a_gpu_that_cannot_be_opened_is_an_error_and_the_others_are_checked() {
        let facts = GpuFacts::Found(GpuInventory {
            gpus: vec![healthy()],
            unreachable: vec![gpufeed_telemetry::nvml::UnreachableGpu {
                index: 1,
                reason: "GPU is lost".into(),
            }],
            ..GpuInventory::default()
        });
        let f = check(&facts);
        let ids: Vec<&str> = f.iter().map(|f| f.id).collect();
        assert_eq!(ids, ["gpu-unreachable", "gpu-inventory"]);
        assert_eq!(f[0].severity, gpufeed_findings::Severity::Error);
        assert!(f[0].message.starts_with("GPU 1: "), "{}", f[0].message);
        assert!(f[0].evidence.contains("GPU is lost"), "{}", f[0].evidence);
        // Every GPU opened: no such finding.
        assert!(!ids_of(healthy()).contains(&"gpu-unreachable"));
    }

    #[test]
    fn healthy_gpu_only_reports_its_inventory() {
        assert_eq!(ids_of(healthy()), ["gpu-inventory"]);
        // Nothing known: nothing judged.
        assert_eq!(ids_of(GpuDetails::default()), ["gpu-inventory"]);
    }

    #[test]
    fn no_driver_is_one_info_finding() {
        let f = check(&GpuFacts::NoDriver {
            reason: "`libnvidia-ml.so.1` could not be loaded".into(),
        });
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, "gpu-no-driver");
        assert_eq!(f[0].severity, gpufeed_findings::Severity::Info);
        assert!(f[0].message.starts_with("no NVIDIA driver found"));
        assert_eq!(check(&GpuFacts::NoGpu)[0].id, "gpu-not-found");
        let e = check(&GpuFacts::Error {
            message: "boom".into(),
        });
        assert_eq!(e[0].id, "gpu-nvml-error");
    }

    #[test]
    fn pcie_width_and_generation() {
        let x4 = GpuDetails {
            pcie_width: Some(4),
            ..healthy()
        };
        assert!(ids_of(x4).contains(&"gpu-pcie-degraded"));
        // Gen 1 while idle is power saving, not a fault.
        let gen1_idle = GpuDetails {
            pcie_gen: Some(1),
            ..healthy()
        };
        assert!(!ids_of(gen1_idle).contains(&"gpu-pcie-degraded"));
        let gen1_busy = GpuDetails {
            pcie_gen: Some(1),
            throttle: Some(vec![]),
            ..healthy()
        };
        assert!(ids_of(gen1_busy).contains(&"gpu-pcie-degraded"));
    }

    #[test]
    fn persistence_power_throttle_ecc_mig() {
        let g = GpuDetails {
            persistence_mode: Some(false),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-persistence-off"));
        let g = GpuDetails {
            power_limit_w: Some(500.0),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-power-limit-low"));
        // A few watts off the default is rounding, not a cap.
        let g = GpuDetails {
            power_limit_w: Some(690.0),
            ..healthy()
        };
        assert!(!ids_of(g).contains(&"gpu-power-limit-low"));
        let g = GpuDetails {
            throttle: Some(vec!["gpu_idle".into(), "hw_thermal".into()]),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-throttled"));
        let g = GpuDetails {
            ecc_uncorrected: Some(3),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-ecc-errors"));
        let g = GpuDetails {
            mig_enabled: Some(true),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-mig-enabled"));
    }

    #[test]
    fn other_processes_holding_memory() {
        let p = |pid, kind| GpuProcess {
            pid,
            name: Some("python".into()),
            used_mib: Some(2048),
            kind,
        };
        let g = GpuDetails {
            processes: Some(vec![p(4242, "compute")]),
            ..healthy()
        };
        assert!(ids_of(g).contains(&"gpu-memory-held"));
        // This process itself, and a display server, are not reported.
        let g = GpuDetails {
            processes: Some(vec![p(std::process::id(), "compute"), p(1, "graphics")]),
            ..healthy()
        };
        assert!(!ids_of(g).contains(&"gpu-memory-held"));
    }

    #[test]
    fn counts_and_uuids() {
        let facts = GpuFacts::Found(GpuInventory {
            gpus: vec![healthy()],
            ..GpuInventory::default()
        });
        assert_eq!(facts.gpu_count(), Some(1));
        assert_eq!(facts.uuids(), ["GPU-1234"]);
        assert_eq!(GpuFacts::default().gpu_count(), None);
    }
}
