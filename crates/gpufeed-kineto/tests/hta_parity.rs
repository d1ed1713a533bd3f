//! gpufeed against Holistic Trace Analysis 0.5.0 on the six real V100 traces of
//! `shared/data/kineto` (beside the repository, as CI has it).
//!
//! The reference figures were recorded by running HTA itself
//! (`python/bench/hta_bench.py DIR`, HTA 0.5.0 with pandas 3.1 and numpy 2.4) and are
//! copied here as HTA printed them; the Rust suite needs no Python. The contract is 0.5
//! percentage points per percentage; gpufeed follows HTA's rules exactly, so the test also
//! holds the microseconds to HTA's.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use gpufeed_kineto::{Options, analyze_path};

mod common;

fn data(case: &str) -> PathBuf {
    common::shared(&format!("kineto/{case}"))
}

/// HTA's temporal breakdown of one rank: span, idle, compute, non-compute (µs), then
/// idle, compute, non-compute (%).
type Temporal = (u32, [f64; 4], [f64; 3]);
/// HTA's idle breakdown of one stream: stream, host wait, kernel wait, other (µs).
type Idle = (i64, f64, f64, f64);

struct Hta {
    case: &'static str,
    temporal: &'static [Temporal],
    idle: &'static [(u32, &'static [Idle])],
    kernel_types: &'static [(&'static str, f64, f64)],
}

const HTA: &[Hta] = &[
    Hta {
        case: "sampled_2rank",
        temporal: &[
            (
                0,
                [600058.0, 321378.0, 106252.0, 172428.0],
                [53.56, 17.71, 28.74],
            ),
            (
                1,
                [600674.0, 328671.0, 135548.0, 136455.0],
                [54.72, 22.57, 22.72],
            ),
        ],
        idle: &[
            (
                0,
                &[
                    (23, 596037.0, 70.0, 34.0),
                    (84, 148934.0, 6.0, 0.0),
                    (25, 0.0, 9.0, 47865.0),
                    (7, 213825.0, 1985.0, 261740.0),
                    (203, 0.0, 0.0, 0.0),
                ],
            ),
            (
                1,
                &[
                    (23, 596313.0, 100.0, 0.0),
                    (25, 0.0, 9.0, 53028.0),
                    (7, 156827.0, 1816.0, 281064.0),
                    (84, 251860.0, 0.0, 23247.0),
                    (203, 0.0, 0.0, 0.0),
                ],
            ),
        ],
        kernel_types: &[
            ("COMMUNICATION", 305584.0, 55.5),
            ("COMPUTATION", 185023.0, 33.6),
            ("COMPUTATION overlapping COMMUNICATION", 56747.0, 10.3),
            ("MEMORY", 2288.0, 0.4),
            ("COMMUNICATION overlapping MEMORY", 1011.0, 0.2),
            ("COMPUTATION overlapping MEMORY", 18.0, 0.0),
            (
                "COMPUTATION overlapping COMMUNICATION overlapping MEMORY",
                12.0,
                0.0,
            ),
        ],
    },
    Hta {
        case: "resnet50_nw0",
        temporal: &[(
            0,
            [830494.0, 327463.0, 492891.0, 10140.0],
            [39.43, 59.35, 1.22],
        )],
        idle: &[(0, &[(7, 318934.0, 8529.0, 0.0)])],
        kernel_types: &[("COMPUTATION", 492891.0, 98.0), ("MEMORY", 10140.0, 2.0)],
    },
    Hta {
        case: "resnet50_nw4",
        temporal: &[(
            0,
            [677173.0, 164699.0, 495912.0, 16562.0],
            [24.32, 73.23, 2.45],
        )],
        idle: &[(0, &[(7, 154426.0, 8804.0, 1469.0)])],
        kernel_types: &[("COMPUTATION", 495912.0, 96.8), ("MEMORY", 16562.0, 3.2)],
    },
    Hta {
        case: "v100_memcpy",
        temporal: &[(
            1,
            [628371.0, 46910.0, 429216.0, 152245.0],
            [7.47, 68.31, 24.23],
        )],
        idle: &[(
            1,
            &[
                (16, 422925.0, 829.0, 0.0),
                (7, 2960.0, 42372.0, 41756.0),
                (15, 348483.0, 138.0, 38936.0),
                (14, 520794.0, 1087.0, 14536.0),
            ],
        )],
        kernel_types: &[
            ("COMPUTATION", 267839.0, 46.1),
            ("COMPUTATION overlapping COMMUNICATION", 129148.0, 22.2),
            ("MEMORY", 92887.0, 16.0),
            ("COMMUNICATION", 53846.0, 9.3),
            ("COMPUTATION overlapping MEMORY", 30501.0, 5.2),
            ("COMMUNICATION overlapping MEMORY", 5512.0, 0.9),
            (
                "COMPUTATION overlapping COMMUNICATION overlapping MEMORY",
                1728.0,
                0.3,
            ),
        ],
    },
    Hta {
        case: "v100_ns_floats",
        temporal: &[(
            0,
            [384634.0, 10113.0, 372150.0, 2371.0],
            [2.63, 96.75, 0.62],
        )],
        idle: &[(0, &[(7, 1709.0, 8404.0, 0.0)])],
        kernel_types: &[("COMPUTATION", 372150.0, 99.4), ("MEMORY", 2371.0, 0.6)],
    },
    Hta {
        case: "v100_large",
        temporal: &[(
            1,
            [1396669.0, 643612.0, 496485.0, 256572.0],
            [46.08, 35.55, 18.37],
        )],
        idle: &[(
            1,
            &[
                (7, 791330.0, 16727.0, 73829.0),
                (14, 933139.0, 5568.0, 4444.0),
            ],
        )],
        kernel_types: &[
            ("COMPUTATION", 496485.0, 65.9),
            ("COMMUNICATION", 238274.0, 31.6),
            ("MEMORY", 18298.0, 2.4),
        ],
    },
];

fn check(h: &Hta) {
    let r = analyze_path(&data(h.case), Options::default()).unwrap();
    assert_eq!(r.ranks.len(), h.temporal.len(), "{}: ranks", h.case);
    for &(rank, us, pct) in h.temporal {
        let got = r.ranks.iter().find(|x| x.rank == rank).unwrap();
        let t = got.temporal.unwrap();
        let g_pct = [t.idle_pct, t.compute_pct, t.non_compute_pct];
        for (a, b) in g_pct.iter().zip(pct) {
            assert!(
                (a - b).abs() <= 0.5,
                "{} rank {rank}: % {g_pct:?} vs HTA {pct:?}",
                h.case
            );
        }
        assert_eq!(
            [t.span_us, t.idle_us, t.compute_us, t.non_compute_us],
            us,
            "{} rank {rank}: temporal µs",
            h.case
        );
        assert_eq!(g_pct, pct, "{} rank {rank}: temporal %", h.case);
    }
    for &(rank, streams) in h.idle {
        let got = r.ranks.iter().find(|x| x.rank == rank).unwrap();
        let g: Vec<Idle> = got
            .idle_breakdown
            .iter()
            .map(|s| (s.stream, s.host_wait_us, s.kernel_wait_us, s.other_us))
            .collect();
        // Each category's share of the stream's idle time, within 0.5 points.
        for (a, b) in g.iter().zip(streams) {
            assert_eq!(a.0, b.0, "{} rank {rank}: stream order {g:?}", h.case);
            let (ta, tb) = (a.1 + a.2 + a.3, b.1 + b.2 + b.3);
            if tb > 0.0 {
                for (x, y) in [(a.1, b.1), (a.2, b.2), (a.3, b.3)] {
                    assert!(
                        (100.0 * x / ta - 100.0 * y / tb).abs() <= 0.5,
                        "{} rank {rank} stream {}: {a:?} vs HTA {b:?}",
                        h.case,
                        a.0
                    );
                }
            }
        }
        assert_eq!(
            g,
            streams.to_vec(),
            "{} rank {rank}: idle breakdown µs",
            h.case
        );
    }
    let kt: Vec<(&str, f64, f64)> = r
        .kernel_types
        .iter()
        .map(|k| (k.label.as_str(), k.us, k.pct))
        .collect();
    for &(label, us, pct) in h.kernel_types {
        let got = kt.iter().find(|k| k.0 == label);
        assert_eq!(
            got,
            Some(&(label, us, pct)),
            "{}: kernel type {label}; all {kt:?}",
            h.case
        );
    }
    assert_eq!(kt.len(), h.kernel_types.len(), "{}: {kt:?}", h.case);
}

#[test]
fn sampled_2rank() {
    check(&HTA[0]);
}

#[test]
fn resnet50_nw0() {
    check(&HTA[1]);
}

#[test]
fn resnet50_nw4() {
    check(&HTA[2]);
}

#[test]
fn v100_memcpy() {
    check(&HTA[3]);
}

#[test]
fn v100_ns_floats() {
    check(&HTA[4]);
}

#[test]
fn v100_large() {
    check(&HTA[5]);
}
