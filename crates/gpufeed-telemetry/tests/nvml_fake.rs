//! The NVML source and `gpu_inventory` against a fake `libnvidia-ml.so.1`
//! (`tests/fake_nvml/fake_nvml.c`, compiled here with the system C compiler): the code that
//! otherwise runs only on a machine with an NVIDIA GPU, through the real nvml-wrapper and
//! the real NVML ABI. The C file's header lists what each of its two GPUs reports.
//!
//! One test process loads one NVML library, so every test here loads the same fake.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gpufeed_telemetry::jsonl::{GpuInfo, GpuSample, Record};
use gpufeed_telemetry::nvml::{
    GpuDetails, GpuInventory, GpuProcess, NvmlSource, gpu_inventory_with_lib,
};
use gpufeed_telemetry::source::{Source, SourceError, SourceWarning};

include!("fake_nvml/builder.rs");

/// GPU 0 of the fake: a reading every 1/6 s in its buffer while busy.
const READING_S: f64 = 1.0 / 6.0;

/// What one source sampled in real time.
#[derive(Debug)]
struct Run {
    info: Vec<GpuInfo>,
    /// Times of the polls.
    polls: Vec<f64>,
    gpu0: Vec<GpuSample>,
    gpu1: Vec<GpuSample>,
    /// (GPU, reading, reason) of every warning.
    warnings: Vec<(u32, &'static str, String)>,
}

/// Polls `source` every `every` seconds for `seconds` of real time.
fn sample(mut source: NvmlSource, seconds: f64, every: f64) -> Run {
    let mut polls = Vec::new();
    let mut out = Vec::new();
    let start = Instant::now();
    loop {
        let now = start.elapsed().as_secs_f64();
        if now > seconds {
            break;
        }
        source.poll(now, &mut out).unwrap();
        polls.push(now);
        std::thread::sleep(Duration::from_secs_f64(every));
    }
    let of = |gpu: u32| -> Vec<GpuSample> {
        out.iter()
            .filter_map(|r| match r {
                Record::Gpu(g) if g.gpu == gpu => Some(g.clone()),
                Record::Gpu(_) => None,
                Record::Host(h) => panic!("NVML gave a host sample: {h:?}"),
            })
            .collect()
    };
    let warnings = source
        .take_warnings()
        .into_iter()
        .map(|w| match w {
            SourceWarning::Unavailable { gpu, what, reason } => (gpu, what, reason),
            other => panic!("{other}"),
        })
        .collect();
    Run {
        info: source.gpus().to_vec(),
        polls,
        gpu0: of(0),
        gpu1: of(1),
        warnings,
    }
}

/// 2.6 s polled every 50 ms, shared by the tests: faster than the driver's 1/6 s, as
/// gpufeed's default 100 ms is.
fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| sample(NvmlSource::open_with_lib(fake_nvml()).unwrap(), 2.6, 0.05))
}

#[test]
fn inventory_has_every_field_of_both_gpus() {
    let inv = gpu_inventory_with_lib(fake_nvml()).unwrap();
    let process = |pid, name: Option<&str>, used_mib, kind| GpuProcess {
        pid,
        name: name.map(str::to_owned),
        used_mib,
        kind,
    };
    let gpu0 = GpuDetails {
        index: 0,
        name: Some("Fake GPU 0".into()),
        uuid: Some("GPU-fa4e0000-0000-4000-8000-000000000000".into()),
        memory_total_mib: Some(81920),
        memory_used_mib: Some(12345),
        pcie_gen: Some(3),
        pcie_gen_max: Some(4),
        pcie_width: Some(8),
        pcie_width_max: Some(16),
        persistence_mode: Some(true),
        power_limit_w: Some(300.0),
        power_limit_default_w: Some(350.0),
        sm_clock_mhz: Some(1410),
        sm_clock_max_mhz: Some(1980),
        mem_clock_mhz: Some(1593),
        mem_clock_max_mhz: Some(2619),
        throttle: Some(vec!["sw_power_cap".into(), "hw_slowdown".into()]),
        ecc_enabled: Some(true),
        ecc_uncorrected: Some(0),
        ecc_corrected: Some(3),
        mig_enabled: Some(false),
        // 4242 holds a compute and a graphics context: listed once, as compute. 4243's
        // memory is not available (NVML_VALUE_NOT_AVAILABLE), nor is its name.
        processes: Some(vec![
            process(4242, Some("fake_trainer"), Some(2048), "compute"),
            process(4243, None, None, "compute"),
            process(777, Some("Xorg"), Some(64), "graphics"),
        ]),
    };
    let gpu1 = GpuDetails {
        index: 1,
        name: Some("Fake GPU 1".into()),
        uuid: Some("GPU-fa4e0000-0000-4000-8000-000000000001".into()),
        memory_total_mib: Some(24576),
        memory_used_mib: Some(1),
        pcie_gen: Some(4),
        pcie_gen_max: Some(4),
        pcie_width: Some(16),
        pcie_width_max: Some(16),
        persistence_mode: Some(false),
        power_limit_w: Some(450.0),
        power_limit_default_w: Some(450.0),
        sm_clock_mhz: Some(2520),
        sm_clock_max_mhz: Some(2520),
        mem_clock_mhz: Some(10501),
        mem_clock_max_mhz: Some(10501),
        throttle: Some(vec!["gpu_idle".into()]),
        // Not supported on this card: absent, not an error.
        ecc_enabled: None,
        ecc_uncorrected: None,
        ecc_corrected: None,
        mig_enabled: None,
        processes: Some(vec![]),
    };
    assert_eq!(
        inv,
        GpuInventory {
            unreachable: vec![],
            driver_version: Some("550.54.15".into()),
            cuda_version: Some("12.4".into()),
            gpus: vec![gpu0, gpu1],
        }
    );
}

#[test]
fn the_source_lists_both_gpus() {
    let info = &run().info;
    assert_eq!(
        info,
        &vec![
            GpuInfo {
                index: 0,
                name: Some("Fake GPU 0".into()),
                uuid: Some("GPU-fa4e0000-0000-4000-8000-000000000000".into()),
                memory_total_mib: Some(81920),
            },
            GpuInfo {
                index: 1,
                name: Some("Fake GPU 1".into()),
                uuid: Some("GPU-fa4e0000-0000-4000-8000-000000000001".into()),
                memory_total_mib: Some(24576),
            },
        ]
    );
}

/// The lengths of the runs of equal values.
fn runs(values: &[f64]) -> Vec<usize> {
    let mut runs: Vec<usize> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match runs.last_mut() {
            Some(n) if values[i - 1] == *v => *n += 1,
            _ => runs.push(1),
        }
    }
    runs
}

#[test]
fn utilisation_comes_from_the_sample_buffer_each_reading_once() {
    let r = run();
    let g = &r.gpu0;
    let util: Vec<f64> = g.iter().map(|s| s.util.unwrap()).collect();
    // The fake's square wave: 95 % with a reading in the buffer every 1/6 s, then 5 %
    // with the buffer dry, one second each.
    assert!(util.iter().all(|&u| u == 5.0 || u == 95.0), "{util:?}");
    let runs = runs(&util);
    assert!(runs.len() >= 3, "{util:?}");
    // Six readings a second; one more or less at the edges, where a plain reading and the
    // buffer's time (mapped onto the run's) meet.
    assert!(
        runs[1..runs.len() - 1].iter().all(|n| (5..=7).contains(n)),
        "{runs:?}: {util:?}"
    );
    assert!(runs[0] <= 7 && runs[runs.len() - 1] <= 7, "{runs:?}");
    // Busy, each reading of the buffer is taken once with its own time; idle, a plain
    // reading stands for each reading the driver did not make. So samples are 1/6 s
    // apart, never the poll's 50 ms: at most one step of two at each edge, where the
    // first reading after a dry spell comes after the last plain one was due.
    let mut doubles = 0;
    for w in g.windows(2) {
        let steps = (w[1].t - w[0].t) / READING_S;
        assert!(
            (steps - steps.round()).abs() < 1e-4,
            "{steps} steps in {w:#?}"
        );
        match steps.round() as i64 {
            1 => {}
            2 => doubles += 1,
            _ => panic!("{steps} steps in {w:#?}"),
        }
    }
    assert!(doubles < runs.len(), "{doubles} double steps, {runs:?}");
    let span = r.polls.last().unwrap() - r.polls[0];
    let expected = span / READING_S;
    let covered = (g.last().unwrap().t - g[0].t) / READING_S;
    assert!(
        (covered - expected).abs() <= 2.5,
        "{covered:.1} steps in {span:.2} s of polls, about {expected:.1} expected"
    );
}

#[test]
fn every_reading_of_a_tick_goes_onto_its_sample() {
    let g = &run().gpu0;
    let (full, bare): (Vec<&GpuSample>, Vec<&GpuSample>) =
        g.iter().partition(|s| s.power_w.is_some());
    // The newest reading of a tick carries the tick's readings; the older ones of a tick
    // (two plain readings when the buffer is found dry, or buffered readings when a poll
    // comes late) carry utilisation only.
    assert!(full.len() >= g.len() / 2, "{} of {}", full.len(), g.len());
    for s in &bare {
        assert_eq!(
            **s,
            GpuSample {
                util: s.util,
                ..GpuSample::new(s.t, 0)
            }
        );
    }
    for s in &full {
        assert_eq!(s.mem_util, Some(30.0), "{s:?}");
        assert_eq!(s.mem_used_mib, Some(12345.0), "{s:?}");
        assert_eq!(s.power_w, Some(287.5), "{s:?}");
        assert_eq!(s.sm_clock_mhz, Some(1410), "{s:?}");
        assert_eq!(s.temp_c, Some(61), "{s:?}");
        assert_eq!(
            s.throttle,
            Some(vec!["sw_power_cap".to_owned(), "hw_slowdown".to_owned()])
        );
        assert_eq!(s.proc_util, None, "no process is watched");
    }
    // PCIe every 4 s: once in this run, on the first tick.
    let pcie: Vec<(f64, f64)> = g
        .iter()
        .filter_map(|s| Some((s.pcie_rx_kb_s?, s.pcie_tx_kb_s?)))
        .collect();
    assert_eq!(pcie, vec![(123456.0, 65432.0)]);
    assert!(full[0].pcie_rx_kb_s.is_some());
    // GPM every 0.5 s, from 0.5 s on.
    let gpm: Vec<&GpuSample> = g.iter().filter(|s| s.sm_active_pct.is_some()).collect();
    assert!((3..=6).contains(&gpm.len()), "{gpm:?}");
    for s in gpm {
        // On the tick at 0.5 s or later, whose newest reading may be up to one step older.
        assert!(s.t >= 0.5 - READING_S, "{s:?}");
        assert_eq!(
            (
                s.sm_active_pct,
                s.sm_occupancy_pct,
                s.tensor_active_pct,
                s.dram_active_pct
            ),
            (Some(37.5), Some(22.5), Some(12.5), Some(55.0))
        );
    }
}

#[test]
fn a_buffer_that_never_gave_a_reading_gives_the_plain_rate_at_each_poll() {
    let r = run();
    let g = &r.gpu1;
    let times: Vec<f64> = g.iter().map(|s| s.t).collect();
    assert_eq!(times, r.polls);
    for s in g {
        assert_eq!((s.util, s.mem_util), (Some(42.0), Some(17.0)), "{s:?}");
        assert_eq!(s.power_w, Some(75.0), "{s:?}");
        assert_eq!(s.sm_clock_mhz, Some(2520), "{s:?}");
        assert_eq!(s.throttle, Some(vec!["gpu_idle".to_owned()]), "{s:?}");
        // Failing (temperature), not supported (PCIe) or not there (GPM): absent.
        assert_eq!(s.temp_c, None, "{s:?}");
        assert_eq!((s.pcie_rx_kb_s, s.pcie_tx_kb_s), (None, None), "{s:?}");
        assert_eq!(s.sm_active_pct, None, "{s:?}");
    }
}

#[test]
fn a_failing_reading_is_one_warning_and_sampling_goes_on() {
    let r = run();
    // Temperature fails on every poll of GPU 1, PCIe rx and tx are not supported there:
    // one warning each. GPM not supported (a GPU older than Hopper) is no warning.
    assert_eq!(
        r.warnings,
        vec![
            (
                1,
                "temperature",
                "an internal driver error occurred".to_owned()
            ),
            (
                1,
                "PCIe throughput",
                "the requested operation is not available on the target device".to_owned()
            ),
        ]
    );
    assert!(r.polls.len() >= 20, "{}", r.polls.len());
    assert_eq!(r.gpu1.len(), r.polls.len());
    let w = SourceWarning::Unavailable {
        gpu: 1,
        what: r.warnings[0].1,
        reason: r.warnings[0].2.clone(),
    };
    assert_eq!(
        w.to_string(),
        "GPU 1: temperature is not available (an internal driver error occurred); it is left out"
    );
}

#[test]
fn the_watched_tree_gets_its_share() {
    // The fake reports this process at 40 % of GPU 0 and process 4242 (not in the tree)
    // at 90 %; GPU 1 has no process. GPU 0 gives its first sample within two of its
    // steps (later if its buffer ran dry just before the run).
    let mut s = NvmlSource::open_with_lib(fake_nvml())
        .unwrap()
        .watch(std::process::id());
    let mut out = Vec::new();
    let start = Instant::now();
    while !out
        .iter()
        .any(|r| matches!(r, Record::Gpu(g) if g.gpu == 0))
    {
        assert!(start.elapsed() < Duration::from_secs(2), "{out:?}");
        s.poll(start.elapsed().as_secs_f64(), &mut out).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let proc: Vec<(u32, Option<f64>)> = out
        .iter()
        .filter_map(|r| match r {
            Record::Gpu(g) if g.power_w.is_some() => Some((g.gpu, g.proc_util)),
            _ => None,
        })
        .collect();
    // Read once a second per GPU: on GPU 1's first sample, and GPU 0's.
    assert_eq!(
        proc.iter().filter(|(gpu, _)| *gpu == 0).count(),
        1,
        "{proc:?}"
    );
    for (gpu, util) in &proc {
        match gpu {
            0 => assert_eq!(*util, Some(40.0)),
            _ => assert!(
                util.is_none_or(|u| u == 0.0 && u.is_sign_positive()),
                "{util:?}"
            ),
        }
    }
    assert_eq!(proc[0], (1, Some(0.0)));
}

#[test]
fn a_second_library_is_refused() {
    gpu_inventory_with_lib(fake_nvml()).unwrap();
    let e = NvmlSource::open_with_lib("/nonexistent/libnvidia-ml.so.1").unwrap_err();
    assert!(matches!(e, SourceError::Nvml { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "NVML `nvmlInit_v2` failed: NVML is already loaded from `{}` in this process, so \
             `/nonexistent/libnvidia-ml.so.1` cannot be",
            fake_nvml().display()
        )
    );
}
