//! The environment check: the variables that decide which GPUs a training sees and how the
//! frameworks use them and the CPU. The variables come in as a map, so tests never touch
//! the process's environment.
//!
//! | variable | rule |
//! |---|---|
//! | `CUDA_VISIBLE_DEVICES` | against the GPUs NVML lists: empty (or a first entry that names no GPU) hides all; an entry naming no GPU hides itself and every later one (CUDA stops reading there) |
//! | `TF_FORCE_GPU_ALLOW_GROWTH` | only `true`/`false` (lower case) are read; advice when TensorFlow is installed |
//! | `TF_GPU_THREAD_MODE` | `gpu_private` advised when TensorFlow is installed |
//! | `PYTORCH_CUDA_ALLOC_CONF` | `key:value` entries with keys PyTorch knows; `expandable_segments:True` advised when PyTorch is installed |
//! | `OMP_NUM_THREADS` | a positive integer; times `num_workers` (from the config) against the cores |
//!
//! ```
//! use gpufeed_doctor::env::{EnvFacts, check};
//!
//! let facts = EnvFacts {
//!     vars: [("CUDA_VISIBLE_DEVICES".to_owned(), "0,3".to_owned())].into(),
//!     gpus: Some(2),
//!     ..EnvFacts::default()
//! };
//! let ids: Vec<&str> = check(&facts).iter().map(|f| f.id).collect();
//! assert_eq!(ids, ["env-cuda-visible-devices-invalid"]);
//! ```

use std::collections::BTreeMap;

use super::frameworks::{Framework, FrameworkFacts};
use super::gpu::GpuFacts;
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// The variables the check reads.
pub const VARS: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_THREAD_MODE",
    "PYTORCH_CUDA_ALLOC_CONF",
    "OMP_NUM_THREADS",
];

/// Keys of `PYTORCH_CUDA_ALLOC_CONF` that PyTorch 2.x parses (c10 `CUDAAllocatorConfig`).
const ALLOC_KEYS: &[&str] = &[
    "backend",
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    "expandable_segments",
    "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register",
    "pinned_use_host_register",
    "pinned_num_register_threads",
    "pinned_use_background_threads",
    "per_process_memory_fraction",
    "graph_capture_record_stream_reuse",
];

/// What the environment check reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvFacts {
    /// The variables of [`VARS`] that are set.
    pub vars: BTreeMap<String, String>,
    /// GPUs NVML lists (`None`: unknown, no driver).
    pub gpus: Option<usize>,
    /// Their UUIDs.
    pub uuids: Vec<String>,
    /// Cores available.
    pub cores: Option<usize>,
    /// The config's `num_workers`.
    pub num_workers: Option<usize>,
    /// TensorFlow answered its probe.
    pub tensorflow: bool,
    /// PyTorch answered its probe.
    pub torch: bool,
}

impl EnvFacts {
    /// The relevant variables of `env`, with what the GPU and framework checks found.
    #[must_use]
    pub fn new(env: &BTreeMap<String, String>, gpu: &GpuFacts, fw: &FrameworkFacts) -> Self {
        Self {
            vars: env
                .iter()
                .filter(|(k, _)| VARS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            gpus: gpu.gpu_count(),
            uuids: gpu.uuids(),
            tensorflow: fw.found(Framework::TensorFlow),
            torch: fw.found(Framework::PyTorch),
            ..Self::default()
        }
    }
}

/// The rules over the environment.
#[must_use]
pub fn check(e: &EnvFacts) -> Vec<Finding> {
    let fix = |id: &str| gpufeed_findings::rules::rule_info(id).map_or("", |r| r.fix);
    let get = |k: &str| e.vars.get(k).map(String::as_str);
    let mut out = Vec::new();
    if let (Some(v), Some(n)) = (get("CUDA_VISIBLE_DEVICES"), e.gpus)
        && n > 0
    {
        visible_devices(v, n, &e.uuids, &mut out);
    }
    match get("TF_FORCE_GPU_ALLOW_GROWTH") {
        // TensorFlow compares with `strcmp`: `True` is not `true`.
        Some(v) if !matches!(v, "true" | "false") => out.push(
            finding(
                "env-tf-allow-growth-invalid",
                &format!("TF_FORCE_GPU_ALLOW_GROWTH={v:?} is neither `true` nor `false`"),
            )
            .evidence(format!("TF_FORCE_GPU_ALLOW_GROWTH={v}"))
            .fix(fix("env-tf-allow-growth-invalid")),
        ),
        v if e.tensorflow && v.is_none_or(|v| v == "false") => out.push(
            finding(
                "env-tf-allow-growth-off",
                "TensorFlow will reserve almost all GPU memory at start",
            )
            .evidence(v.map_or_else(
                || "TF_FORCE_GPU_ALLOW_GROWTH not set".to_owned(),
                |v| format!("TF_FORCE_GPU_ALLOW_GROWTH={v}"),
            ))
            .fix(fix("env-tf-allow-growth-off")),
        ),
        _ => {}
    }
    let mode = get("TF_GPU_THREAD_MODE");
    if e.tensorflow && mode != Some("gpu_private") {
        let known = matches!(mode, None | Some("global" | "gpu_shared"));
        out.push(
            finding(
                "env-tf-gpu-thread-mode",
                &match mode {
                    None => "TF_GPU_THREAD_MODE is not set (TensorFlow uses `global`)".to_owned(),
                    Some(m) if known => format!("TF_GPU_THREAD_MODE={m}"),
                    Some(m) => format!(
                        "TF_GPU_THREAD_MODE={m:?} is not a mode (global, gpu_private, gpu_shared)"
                    ),
                },
            )
            .evidence(mode.map_or_else(
                || "TF_GPU_THREAD_MODE not set".to_owned(),
                |m| format!("TF_GPU_THREAD_MODE={m}"),
            ))
            .fix(fix("env-tf-gpu-thread-mode")),
        );
    }
    match get("PYTORCH_CUDA_ALLOC_CONF") {
        Some(conf) => {
            let bad: Vec<&str> = conf
                .split(',')
                .map(str::trim)
                .filter(|entry| {
                    !entry.is_empty()
                        && entry.split_once(':').is_none_or(|(k, v)| {
                            !ALLOC_KEYS.contains(&k.trim()) || v.trim().is_empty()
                        })
                })
                .collect();
            if !bad.is_empty() {
                out.push(
                    finding(
                        "env-pytorch-alloc-conf-invalid",
                        &format!(
                            "PYTORCH_CUDA_ALLOC_CONF has entries PyTorch does not know: {}",
                            bad.join(", ")
                        ),
                    )
                    .evidence(format!(
                        "PYTORCH_CUDA_ALLOC_CONF={conf}; entries are `key:value` with keys {}",
                        ALLOC_KEYS.join(", ")
                    ))
                    .fix(fix("env-pytorch-alloc-conf-invalid")),
                );
            }
        }
        None if e.torch => out.push(
            finding(
                "env-pytorch-expandable-segments",
                "PYTORCH_CUDA_ALLOC_CONF is not set",
            )
            .evidence("PYTORCH_CUDA_ALLOC_CONF not set")
            .fix(fix("env-pytorch-expandable-segments")),
        ),
        None => {}
    }
    if let Some(v) = get("OMP_NUM_THREADS") {
        // A list (`4,2`) sets nested levels; the first is the outer one.
        match v
            .split(',')
            .next()
            .map(str::trim)
            .and_then(|t| t.parse::<usize>().ok())
        {
            Some(t) if t > 0 => {
                if let (Some(w), Some(c)) = (e.num_workers, e.cores)
                    && t * w.max(1) > c
                {
                    out.push(
                        finding(
                            "env-omp-oversubscribed",
                            &format!(
                                "OMP_NUM_THREADS={t} with {w} loader worker(s) is {} threads on {c} cores",
                                t * w.max(1)
                            ),
                        )
                        .evidence(format!(
                            "OMP_NUM_THREADS={v}; num_workers {w} (config); {c} cores"
                        ))
                        .fix(format!(
                            "export OMP_NUM_THREADS={}",
                            (c / w.max(1)).max(1)
                        )),
                    );
                }
            }
            _ => out.push(
                finding(
                    "env-omp-invalid",
                    &format!("OMP_NUM_THREADS={v:?} is not a positive integer"),
                )
                .evidence(format!("OMP_NUM_THREADS={v}"))
                .fix(fix("env-omp-invalid")),
            ),
        }
    }
    out
}

/// `CUDA_VISIBLE_DEVICES` against `n` GPUs (CUDA Programming Guide, "CUDA Environment
/// Variables": indices or `GPU-`/`MIG-` UUID prefixes; CUDA stops at the first invalid one).
fn visible_devices(value: &str, n: usize, uuids: &[String], out: &mut Vec<Finding>) {
    let entries: Vec<&str> = value.split(',').map(str::trim).collect();
    let valid = |e: &str| -> bool {
        if let Ok(i) = e.parse::<usize>() {
            return i < n;
        }
        if e.starts_with("MIG-") {
            return true; // MIG instances are not listed by the inventory
        }
        e.starts_with("GPU-") && (uuids.is_empty() || uuids.iter().any(|u| u.starts_with(e)))
    };
    let first_bad = entries.iter().position(|e| !valid(e));
    let Some(bad) = first_bad else { return };
    let evidence = format!(
        "CUDA_VISIBLE_DEVICES={value:?}; NVML lists {n} GPU(s) (indices 0-{})",
        n - 1
    );
    if value.trim().is_empty() || bad == 0 {
        out.push(
            finding(
                "env-cuda-visible-devices-empty",
                &format!("CUDA_VISIBLE_DEVICES={value:?} hides every GPU from CUDA programs"),
            )
            .evidence(evidence)
            .fix(
                gpufeed_findings::rules::rule_info("env-cuda-visible-devices-empty")
                    .map_or("", |r| r.fix),
            ),
        );
    } else {
        let kept = entries[..bad].join(",");
        let hidden = entries[bad..].join(",");
        out.push(
            finding(
                "env-cuda-visible-devices-invalid",
                &format!(
                    "CUDA_VISIBLE_DEVICES entry `{}` names no GPU, so CUDA sees only `{kept}` and hides `{hidden}`",
                    entries[bad]
                ),
            )
            .evidence(evidence)
            .fix(format!(
                "export CUDA_VISIBLE_DEVICES={}",
                (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(e: &EnvFacts) -> Vec<&'static str> {
        check(e).iter().map(|f| f.id).collect()
    }

    fn with(vars: &[(&str, &str)]) -> EnvFacts {
        EnvFacts {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            gpus: Some(2),
            uuids: vec!["GPU-aaaa-1111".into(), "GPU-bbbb-2222".into()],
            cores: Some(16),
            num_workers: Some(8),
            tensorflow: false,
            torch: false,
        }
    }

    #[test]
    fn clean_environment_has_no_finding() {
        assert!(ids(&with(&[])).is_empty());
        assert!(ids(&EnvFacts::default()).is_empty());
        let e = with(&[
            ("CUDA_VISIBLE_DEVICES", "1,0"),
            ("OMP_NUM_THREADS", "2"),
            (
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments:True,max_split_size_mb:128",
            ),
            ("TF_FORCE_GPU_ALLOW_GROWTH", "true"),
        ]);
        assert!(ids(&e).is_empty(), "{:?}", ids(&e));
    }

    #[test]
    fn visible_devices() {
        for v in ["", "-1", "5", "GPU-zzzz"] {
            assert_eq!(
                ids(&with(&[("CUDA_VISIBLE_DEVICES", v)])),
                ["env-cuda-visible-devices-empty"],
                "{v:?}"
            );
        }
        let f = check(&with(&[("CUDA_VISIBLE_DEVICES", "0,2,1")]));
        assert_eq!(f[0].id, "env-cuda-visible-devices-invalid");
        assert!(
            f[0].message.contains("sees only `0` and hides `2,1`"),
            "{}",
            f[0].message
        );
        assert!(ids(&with(&[("CUDA_VISIBLE_DEVICES", "GPU-bbbb,MIG-x")])).is_empty());
        // No driver: nothing to compare with.
        let e = EnvFacts {
            gpus: None,
            ..with(&[("CUDA_VISIBLE_DEVICES", "")])
        };
        assert!(ids(&e).is_empty());
    }

    #[test]
    fn tensorflow_variables() {
        for v in ["1", "True"] {
            assert_eq!(
                ids(&with(&[("TF_FORCE_GPU_ALLOW_GROWTH", v)])),
                ["env-tf-allow-growth-invalid"],
                "{v:?}"
            );
        }
        let tf = EnvFacts {
            tensorflow: true,
            ..with(&[])
        };
        assert_eq!(
            ids(&tf),
            ["env-tf-allow-growth-off", "env-tf-gpu-thread-mode"]
        );
        let tf = EnvFacts {
            tensorflow: true,
            ..with(&[
                ("TF_FORCE_GPU_ALLOW_GROWTH", "true"),
                ("TF_GPU_THREAD_MODE", "gpu_private"),
            ])
        };
        assert!(ids(&tf).is_empty());
    }

    #[test]
    fn pytorch_allocator() {
        assert_eq!(
            ids(&with(&[(
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segment:True"
            )])),
            ["env-pytorch-alloc-conf-invalid"]
        );
        assert_eq!(
            ids(&with(&[("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb")])),
            ["env-pytorch-alloc-conf-invalid"]
        );
        let torch = EnvFacts {
            torch: true,
            ..with(&[])
        };
        assert_eq!(ids(&torch), ["env-pytorch-expandable-segments"]);
    }

    #[test]
    fn omp_threads() {
        assert_eq!(
            ids(&with(&[("OMP_NUM_THREADS", "4")])),
            ["env-omp-oversubscribed"]
        );
        let f = check(&with(&[("OMP_NUM_THREADS", "4")]));
        assert_eq!(f[0].fix, "export OMP_NUM_THREADS=2");
        for v in ["0", "abc", ""] {
            assert_eq!(
                ids(&with(&[("OMP_NUM_THREADS", v)])),
                ["env-omp-invalid"],
                "{v:?}"
            );
        }
        // Without the config's workers there is nothing to multiply.
        let e = EnvFacts {
            num_workers: None,
            ..with(&[("OMP_NUM_THREADS", "64")])
        };
        assert!(ids(&e).is_empty());
    }
}
