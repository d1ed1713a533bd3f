//! The frameworks check: TensorFlow, PyTorch and JAX, each probed in its own `python3`
//! process with a timeout, so what is reported is what a training process would see, and a
//! framework that hangs or crashes at import cannot take `doctor` with it.
//!
//! Each probe imports the framework only if `importlib.util.find_spec` finds it, then
//! reports, as one `GPUFEED_PROBE {json}` line on stdout: version, CUDA and cuDNN versions
//! of the build, the GPUs it sees (name, compute capability), whether XLA *compiles and
//! runs* a one-line function (not whether an API exists), and whether a float16 (bfloat16
//! for JAX) matrix product runs on the GPU. The probe's environment adds
//! `TF_CPP_MIN_LOG_LEVEL=2`, `TF_FORCE_GPU_ALLOW_GROWTH=true` and
//! `XLA_PYTHON_CLIENT_PREALLOCATE=false`, so a probe does not take the GPU's memory.
//!
//! A probe that does not answer within [`Probe::timeout`] is killed with its whole process
//! group and reported as a hang; `python3` missing and a framework not installed are info.
//! The parsing is a pure function ([`parse`]) tested on canned outputs; the hang path is
//! tested with a fake interpreter.
//!
//! ```
//! use gpufeed_doctor::frameworks::{ProbeOutcome, parse};
//!
//! let out = "noise\nGPUFEED_PROBE {\"installed\": false}\n";
//! assert_eq!(parse(out, "", Some(0)), ProbeOutcome::NotInstalled);
//! ```

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gpufeed_stats::thresholds::TENSOR_CORE_MIN_CC;
use serde_json::Value;

use super::fact;
use gpufeed_findings::constants::PROBE_TIMEOUT_S;
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// The line prefix of a probe's answer.
const MARKER: &str = "GPUFEED_PROBE ";
/// Output kept per stream (the tail).
const KEEP_BYTES: usize = 256 * 1024;

/// A framework `doctor` probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framework {
    /// TensorFlow.
    TensorFlow,
    /// PyTorch.
    PyTorch,
    /// JAX.
    Jax,
}

impl Framework {
    /// Every framework, in report order.
    pub const ALL: [Self; 3] = [Self::TensorFlow, Self::PyTorch, Self::Jax];

    /// Its name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::TensorFlow => "TensorFlow",
            Self::PyTorch => "PyTorch",
            Self::Jax => "JAX",
        }
    }

    /// The module imported.
    #[must_use]
    pub fn module(self) -> &'static str {
        match self {
            Self::TensorFlow => "tensorflow",
            Self::PyTorch => "torch",
            Self::Jax => "jax",
        }
    }

    /// The probe's Python source.
    #[must_use]
    pub fn script(self) -> String {
        let body = match self {
            Self::TensorFlow => TF,
            Self::PyTorch => TORCH,
            Self::Jax => JAX,
        };
        format!("{}{body}", HEAD.replace("MODULE", self.module()))
    }
}

const HEAD: &str = r#"import importlib.util, json, sys
def _out(d):
    sys.stdout.write("GPUFEED_PROBE " + json.dumps(d) + "\n")
    sys.stdout.flush()
def _err(e):
    return (type(e).__name__ + ": " + str(e))[:400]
if importlib.util.find_spec("MODULE") is None:
    _out({"installed": False})
    sys.exit(0)
d = {"installed": True, "gpus": []}
"#;

const TF: &str = r#"import tensorflow as tf
d["version"] = tf.__version__
try:
    info = tf.sysconfig.get_build_info()
    d["cuda"] = info.get("cuda_version")
    d["cudnn"] = info.get("cudnn_version")
    d["cuda_build"] = bool(info.get("is_cuda_build"))
except Exception:
    d["cuda_build"] = bool(tf.test.is_built_with_cuda())
for g in tf.config.list_physical_devices("GPU"):
    det = {}
    try:
        det = tf.config.experimental.get_device_details(g)
    except Exception:
        pass
    cc = det.get("compute_capability")
    d["gpus"].append({"name": det.get("device_name", g.name), "cc": "%d.%d" % tuple(cc) if cc else None})
try:
    f = tf.function(lambda x: x * 2.0 + 1.0, jit_compile=True)
    d["xla"] = f(tf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 5.0]
except Exception as e:
    d["xla"] = False
    d["xla_error"] = _err(e)
if d["gpus"]:
    try:
        with tf.device("/GPU:0"):
            a = tf.ones((64, 64), tf.float16)
            b = tf.matmul(a, a)
        d["mixed_precision"] = b.dtype == tf.float16 and float(b[0, 0]) == 64.0
    except Exception as e:
        d["mixed_precision"] = False
        d["mixed_precision_error"] = _err(e)
_out(d)
"#;

const TORCH: &str = r#"import torch
d["version"] = torch.__version__
d["cuda"] = torch.version.cuda
d["cuda_build"] = torch.version.cuda is not None
try:
    v = torch.backends.cudnn.version()
    if v:
        d["cudnn"] = "%d.%d.%d" % ((v // 10000, v % 10000 // 100, v % 100) if v >= 10000 else (v // 1000, v % 1000 // 100, v % 100))
except Exception:
    pass
if torch.cuda.is_available():
    for i in range(torch.cuda.device_count()):
        d["gpus"].append({"name": torch.cuda.get_device_name(i), "cc": "%d.%d" % torch.cuda.get_device_capability(i)})
    try:
        a = torch.ones(64, 64, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            b = a @ a
        torch.cuda.synchronize()
        d["mixed_precision"] = b.dtype == torch.float16 and float(b[0, 0]) == 64.0
        d["bf16"] = bool(torch.cuda.is_bf16_supported())
    except Exception as e:
        d["mixed_precision"] = False
        d["mixed_precision_error"] = _err(e)
_out(d)
"#;

const JAX: &str = r#"import jax
import jax.numpy as jnp
d["version"] = jax.__version__
d["backend"] = jax.default_backend()
d["cuda_build"] = any(importlib.util.find_spec(m) is not None for m in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_cuda11_plugin"))
for x in jax.devices():
    if x.platform in ("gpu", "cuda"):
        cc = getattr(x, "compute_capability", None)
        d["gpus"].append({"name": x.device_kind, "cc": str(cc) if cc else None})
        d["cuda"] = getattr(getattr(x, "client", None), "platform_version", None)
try:
    r = jax.jit(lambda x: x * 2.0 + 1.0)(jnp.array([1.0, 2.0]))
    d["xla"] = [float(v) for v in r] == [3.0, 5.0]
except Exception as e:
    d["xla"] = False
    d["xla_error"] = _err(e)
if d["gpus"]:
    try:
        a = jnp.ones((64, 64), jnp.bfloat16)
        b = jax.jit(lambda a: a @ a)(a)
        b.block_until_ready()
        d["mixed_precision"] = b.dtype == jnp.bfloat16 and float(b[0, 0]) == 64.0
    except Exception as e:
        d["mixed_precision"] = False
        d["mixed_precision_error"] = _err(e)
_out(d)
"#;

/// A GPU as a framework sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProbeGpu {
    /// Device name.
    pub name: Option<String>,
    /// Compute capability, `8.0`.
    pub cc: Option<String>,
}

/// What a probe reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameworkInfo {
    /// Version.
    pub version: Option<String>,
    /// CUDA version of the build (or, for JAX, of the GPU platform).
    pub cuda: Option<String>,
    /// cuDNN version of the build.
    pub cudnn: Option<String>,
    /// Built with CUDA support.
    pub cuda_build: Option<bool>,
    /// The GPUs it sees.
    pub gpus: Vec<ProbeGpu>,
    /// XLA compiled and ran a function (`None`: not applicable, PyTorch).
    pub xla: Option<bool>,
    /// Why XLA failed.
    pub xla_error: Option<String>,
    /// A float16 (JAX: bfloat16) matrix product ran on the GPU (`None`: no GPU).
    pub mixed_precision: Option<bool>,
    /// Why it failed.
    pub mixed_precision_error: Option<String>,
    /// PyTorch: bfloat16 supported on the GPU.
    pub bf16: Option<bool>,
    /// JAX: default backend.
    pub backend: Option<String>,
}

/// The outcome of one probe.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeOutcome {
    /// The interpreter could not be started.
    PythonMissing {
        /// Why.
        reason: String,
    },
    /// `find_spec` did not find the module.
    NotInstalled,
    /// No answer within the timeout; the probe was killed.
    Hang {
        /// The timeout, seconds.
        after_s: f64,
    },
    /// The probe failed (import error, crash).
    Failed {
        /// Its exit code (`None`: killed by a signal).
        code: Option<i32>,
        /// The last lines of its stderr.
        detail: String,
    },
    /// The framework answered.
    Found(FrameworkInfo),
}

/// What the frameworks check found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameworkFacts {
    /// The interpreter used.
    pub python: String,
    /// One outcome per framework probed.
    pub probes: Vec<(Framework, ProbeOutcome)>,
}

impl FrameworkFacts {
    /// Whether `fw` answered.
    #[must_use]
    pub fn found(&self, fw: Framework) -> bool {
        self.probes
            .iter()
            .any(|(f, o)| *f == fw && matches!(o, ProbeOutcome::Found(_)))
    }
}

/// How frameworks are probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The interpreter (`python3`, found on `PATH`).
    pub python: OsString,
    /// How long a probe may take.
    pub timeout: Duration,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            python: OsString::from("python3"),
            timeout: Duration::from_secs(PROBE_TIMEOUT_S),
        }
    }
}

impl Probe {
    /// Probes every framework, in parallel.
    #[must_use]
    pub fn run_all(&self) -> FrameworkFacts {
        let probes = std::thread::scope(|s| {
            let handles: Vec<_> = Framework::ALL
                .iter()
                .map(|&fw| (fw, s.spawn(move || self.run(fw))))
                .collect();
            handles
                .into_iter()
                .map(|(fw, h)| {
                    let outcome = h.join().unwrap_or_else(|_| ProbeOutcome::Failed {
                        code: None,
                        detail: "the probe thread panicked".to_owned(),
                    });
                    (fw, outcome)
                })
                .collect()
        });
        FrameworkFacts {
            python: self.python.to_string_lossy().into_owned(),
            probes,
        }
    }

    /// Probes one framework in its own process.
    #[must_use]
    pub fn run(&self, fw: Framework) -> ProbeOutcome {
        let mut cmd = Command::new(&self.python);
        cmd.arg("-c")
            .arg(fw.script())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("TF_CPP_MIN_LOG_LEVEL", "2")
            .env("TF_FORCE_GPU_ALLOW_GROWTH", "true")
            .env("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            // Its own process group, so a hang is killed with every child it started.
            .process_group(0);
        let mut child = match spawn(&mut cmd) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return ProbeOutcome::PythonMissing {
                    reason: format!("`{}` not found on PATH", self.python.to_string_lossy()),
                };
            }
            Err(e) => {
                return ProbeOutcome::PythonMissing {
                    reason: format!("`{}` cannot run: {e}", self.python.to_string_lossy()),
                };
            }
        };
        let (tx, rx) = mpsc::channel();
        for (which, pipe) in [
            (
                0,
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
            (
                1,
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
        ] {
            let tx = tx.clone();
            if let Some(pipe) = pipe {
                std::thread::spawn(move || {
                    let _ = tx.send((which, read_tail(pipe)));
                });
            }
        }
        drop(tx);
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() >= self.timeout => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break None,
            }
        };
        let Some(status) = status else {
            let pid = rustix::process::Pid::from_child(&child);
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = child.kill();
            let _ = child.wait();
            return ProbeOutcome::Hang {
                after_s: self.timeout.as_secs_f64(),
            };
        };
        // The pipes close when the probe exits, unless a child it left behind holds them.
        let mut out = [String::new(), String::new()];
        let deadline = Instant::now() + Duration::from_secs(1);
        while let Ok((which, text)) =
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if let Some(slot) = out.get_mut(which) {
                *slot = text;
            }
        }
        parse(&out[0], &out[1], status.code())
    }
}

/// Spawns, retrying briefly on `ETXTBSY` (an interpreter written a moment ago, as tests do,
/// can still be open for writing in a process another thread just forked).
fn spawn(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Reads a pipe to its end, keeping the last [`KEEP_BYTES`].
fn read_tail(mut r: impl Read) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * KEEP_BYTES {
                    kept.drain(..kept.len() - KEEP_BYTES);
                }
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Turns a probe's output into its outcome.
#[must_use]
pub fn parse(stdout: &str, stderr: &str, code: Option<i32>) -> ProbeOutcome {
    let answer = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(MARKER))
        .and_then(|j| serde_json::from_str::<Value>(j).ok());
    if let Some(v) = answer {
        if v["installed"] == Value::Bool(false) {
            return ProbeOutcome::NotInstalled;
        }
        return ProbeOutcome::Found(info(&v));
    }
    // A shell wrapper (pyenv's shim) that finds no interpreter exits with 127.
    if code == Some(127) && !stderr.contains("Traceback") {
        return ProbeOutcome::PythonMissing {
            reason: tail(stderr, 2),
        };
    }
    ProbeOutcome::Failed {
        code,
        detail: tail(stderr, 6),
    }
}

fn info(v: &Value) -> FrameworkInfo {
    let s = |k: &str| match &v[k] {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let b = |k: &str| v[k].as_bool();
    FrameworkInfo {
        version: s("version"),
        cuda: s("cuda"),
        cudnn: s("cudnn"),
        cuda_build: b("cuda_build"),
        gpus: v["gpus"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|g| ProbeGpu {
                        name: g["name"].as_str().map(str::to_owned),
                        cc: g["cc"].as_str().map(str::to_owned),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        xla: b("xla"),
        xla_error: s("xla_error"),
        mixed_precision: b("mixed_precision"),
        mixed_precision_error: s("mixed_precision_error"),
        bf16: b("bf16"),
        backend: s("backend"),
    }
}

/// The last `n` non-empty lines, at most 800 characters.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let t = lines[lines.len().saturating_sub(n)..].join("\n");
    let chars: Vec<char> = t.chars().collect();
    chars[chars.len().saturating_sub(800)..].iter().collect()
}

/// The rules over the probes. `nvml_gpus`: the GPUs the driver lists (`None`: none or
/// unknown), to tell "sees no GPU" from "there is none".
#[must_use]
pub fn check(facts: &FrameworkFacts, nvml_gpus: Option<usize>) -> Vec<Finding> {
    let fix = |id: &str| gpufeed_findings::rules::rule_info(id).map_or("", |r| r.fix);
    let mut out = Vec::new();
    let py = if facts.python.is_empty() {
        "python3"
    } else {
        facts.python.as_str()
    };
    if let Some(reason) = facts.probes.iter().find_map(|(_, o)| match o {
        ProbeOutcome::PythonMissing { reason } => Some(reason),
        _ => None,
    }) {
        out.push(
            finding(
                "framework-python-missing",
                &format!("no Python interpreter to probe the frameworks with (`{py}`)"),
            )
            .evidence(reason.clone())
            .fix(fix("framework-python-missing")),
        );
    }
    let absent: Vec<&str> = facts
        .probes
        .iter()
        .filter(|(_, o)| *o == ProbeOutcome::NotInstalled)
        .map(|(f, _)| f.name())
        .collect();
    if !absent.is_empty() {
        out.push(
            fact(
                "framework-not-installed",
                format!("not installed in `{py}`: {}", absent.join(", ")),
            )
            .evidence(format!(
                "importlib.util.find_spec found no {}",
                facts
                    .probes
                    .iter()
                    .filter(|(_, o)| *o == ProbeOutcome::NotInstalled)
                    .map(|(f, _)| format!("`{}`", f.module()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .fix(fix("framework-not-installed")),
        );
    }
    for (fw, outcome) in &facts.probes {
        match outcome {
            ProbeOutcome::PythonMissing { .. } | ProbeOutcome::NotInstalled => {}
            ProbeOutcome::Hang { after_s } => out.push(
                finding(
                    "framework-probe-hang",
                    &format!(
                        "the {} probe did not answer within {after_s:.0} s",
                        fw.name()
                    ),
                )
                .evidence(format!(
                    "`{py} -c 'import {}; ...'` killed after {after_s:.0} s",
                    fw.module()
                ))
                .fix(format!(
                    "{py} -X importtime -c 'import {}'  # shows where the import stops",
                    fw.module()
                )),
            ),
            ProbeOutcome::Failed { code, detail } => out.push(
                finding(
                    "framework-probe-failed",
                    &format!(
                        "the {} probe failed ({})",
                        fw.name(),
                        code.map_or_else(
                            || "killed by a signal".to_owned(),
                            |c| format!("exit code {c}")
                        )
                    ),
                )
                .evidence(if detail.is_empty() {
                    "no error output".to_owned()
                } else {
                    detail.clone()
                })
                .fix(format!("{py} -c 'import {}'", fw.module())),
            ),
            ProbeOutcome::Found(i) => found(*fw, i, py, nvml_gpus, &mut out),
        }
    }
    out
}

fn found(
    fw: Framework,
    i: &FrameworkInfo,
    py: &str,
    nvml_gpus: Option<usize>,
    out: &mut Vec<Finding>,
) {
    let fix = |id: &str| gpufeed_findings::rules::rule_info(id).map_or("", |r| r.fix);
    let q = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_owned());
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    let gpus: Vec<String> = i
        .gpus
        .iter()
        .map(|g| format!("{} (cc {})", q(&g.name), q(&g.cc)))
        .collect();
    let mut ev = vec![
        format!("CUDA {}, cuDNN {}", q(&i.cuda), q(&i.cudnn)),
        format!("built with CUDA: {}", yes_no(i.cuda_build)),
    ];
    if fw != Framework::PyTorch {
        ev.push(format!("XLA compiles and runs: {}", yes_no(i.xla)));
    }
    ev.push(format!(
        "mixed precision on the GPU: {}",
        yes_no(i.mixed_precision)
    ));
    if let Some(bf16) = i.bf16 {
        ev.push(format!("bfloat16: {}", yes_no(Some(bf16))));
    }
    if let Some(b) = &i.backend {
        ev.push(format!("default backend {b}"));
    }
    ev.push(format!("probed with `{py}`"));
    out.push(
        fact(
            "framework-found",
            format!(
                "{} {}: {}",
                fw.name(),
                q(&i.version),
                if gpus.is_empty() {
                    "no GPU".to_owned()
                } else {
                    format!("{} GPU(s): {}", gpus.len(), gpus.join(", "))
                }
            ),
        )
        .evidence(ev.join("; ")),
    );
    if let Some(n) = nvml_gpus
        && n > 0
        && i.gpus.is_empty()
    {
        out.push(
            finding(
                "framework-no-gpu",
                &format!("{} sees no GPU; the driver lists {n}", fw.name()),
            )
            .evidence(format!(
                "{} {}: built with CUDA {}, CUDA {}",
                fw.name(),
                q(&i.version),
                yes_no(i.cuda_build),
                q(&i.cuda)
            ))
            .fix(fix("framework-no-gpu")),
        );
    }
    if i.xla == Some(false) {
        out.push(
            finding(
                "framework-xla-broken",
                &format!("{} could not compile a function with XLA", fw.name()),
            )
            .evidence(q(&i.xla_error))
            .fix(fix("framework-xla-broken")),
        );
    }
    if i.mixed_precision == Some(false) {
        out.push(
            finding(
                "framework-probe-failed",
                &format!(
                    "{} could not run a half-precision matrix product on the GPU",
                    fw.name()
                ),
            )
            .evidence(q(&i.mixed_precision_error))
            .fix(format!("{py} -c 'import {}'", fw.module())),
        );
    }
    let old: Vec<String> = i
        .gpus
        .iter()
        .filter(|g| {
            g.cc.as_deref()
                .and_then(|c| c.parse::<f64>().ok())
                .is_some_and(|c| c < TENSOR_CORE_MIN_CC)
        })
        .map(|g| format!("{} (cc {})", q(&g.name), q(&g.cc)))
        .collect();
    if !old.is_empty() {
        out.push(
            finding(
                "framework-no-tensor-cores",
                &format!("{}: no Tensor Cores on {}", fw.name(), old.join(", ")),
            )
            .evidence(format!("compute capability below {TENSOR_CORE_MIN_CC:.1}"))
            .fix(fix("framework-no-tensor-cores")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TORCH_OK: &str = r#"GPUFEED_PROBE {"installed": true, "gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"}], "version": "2.3.0+cu121", "cuda": "12.1", "cuda_build": true, "cudnn": "8.9.2", "mixed_precision": true, "bf16": true}"#;

    fn facts(probes: Vec<(Framework, ProbeOutcome)>) -> FrameworkFacts {
        FrameworkFacts {
            python: "python3".into(),
            probes,
        }
    }

    fn ids(f: &FrameworkFacts, nvml: Option<usize>) -> Vec<&'static str> {
        check(f, nvml).iter().map(|f| f.id).collect()
    }

    #[test]
    fn parses_an_answer_among_noise() {
        let out = format!("2024-01-01 W some log\n{TORCH_OK}\n");
        let ProbeOutcome::Found(i) = parse(&out, "warnings", Some(0)) else {
            panic!("not found");
        };
        assert_eq!(i.version.as_deref(), Some("2.3.0+cu121"));
        assert_eq!(i.gpus.len(), 1);
        assert_eq!(i.gpus[0].cc.as_deref(), Some("9.0"));
        assert_eq!(i.cudnn.as_deref(), Some("8.9.2"));
        assert_eq!(i.mixed_precision, Some(true));
        assert_eq!(i.xla, None);
        // TensorFlow's build info may give numbers.
        let ProbeOutcome::Found(i) = parse(
            r#"GPUFEED_PROBE {"installed": true, "gpus": [], "cuda": 12.3, "xla": false, "xla_error": "InternalError: ptxas not found"}"#,
            "",
            Some(0),
        ) else {
            panic!("not found");
        };
        assert_eq!(i.cuda.as_deref(), Some("12.3"));
        assert_eq!(i.xla, Some(false));
    }

    #[test]
    fn parses_failures() {
        let tb = "Traceback (most recent call last):\n  File \"<string>\", line 11\nImportError: libcudart.so.11.0: cannot open shared object file\n";
        match parse("", tb, Some(1)) {
            ProbeOutcome::Failed { code, detail } => {
                assert_eq!(code, Some(1));
                assert!(
                    detail.ends_with("cannot open shared object file"),
                    "{detail}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse("", "pyenv: python3: command not found", Some(127)),
            ProbeOutcome::PythonMissing { .. }
        ));
        assert!(matches!(
            parse("GPUFEED_PROBE {not json", "", Some(0)),
            ProbeOutcome::Failed { .. }
        ));
    }

    #[test]
    fn rules_over_outcomes() {
        let ok = parse(TORCH_OK, "", Some(0));
        let f = facts(vec![
            (Framework::TensorFlow, ProbeOutcome::NotInstalled),
            (Framework::PyTorch, ok.clone()),
            (Framework::Jax, ProbeOutcome::NotInstalled),
        ]);
        assert_eq!(
            ids(&f, Some(1)),
            ["framework-not-installed", "framework-found"]
        );
        let all = check(&f, Some(1));
        assert_eq!(
            all[0].message,
            "not installed in `python3`: TensorFlow, JAX"
        );
        assert!(all[1].message.starts_with("PyTorch 2.3.0+cu121: 1 GPU(s)"));
        // No GPU seen while the driver lists one.
        let cpu_only = ProbeOutcome::Found(FrameworkInfo {
            version: Some("2.3.0+cpu".into()),
            cuda_build: Some(false),
            ..FrameworkInfo::default()
        });
        let f = facts(vec![(Framework::PyTorch, cpu_only)]);
        assert!(ids(&f, Some(2)).contains(&"framework-no-gpu"));
        assert!(!ids(&f, None).contains(&"framework-no-gpu"));
        // XLA, half precision, Tensor Cores.
        let broken = ProbeOutcome::Found(FrameworkInfo {
            gpus: vec![ProbeGpu {
                name: Some("Tesla P100".into()),
                cc: Some("6.0".into()),
            }],
            xla: Some(false),
            xla_error: Some("ptxas not found".into()),
            mixed_precision: Some(false),
            mixed_precision_error: Some("CUDA error".into()),
            ..FrameworkInfo::default()
        });
        let f = facts(vec![(Framework::TensorFlow, broken)]);
        let got = ids(&f, Some(1));
        for id in [
            "framework-xla-broken",
            "framework-probe-failed",
            "framework-no-tensor-cores",
        ] {
            assert!(got.contains(&id), "{id}: {got:?}");
        }
        let f = facts(vec![
            (Framework::TensorFlow, ProbeOutcome::Hang { after_s: 20.0 }),
            (
                Framework::PyTorch,
                ProbeOutcome::PythonMissing {
                    reason: "`python3` not found on PATH".into(),
                },
            ),
        ]);
        assert_eq!(
            ids(&f, None),
            ["framework-python-missing", "framework-probe-hang"]
        );
    }

    /// A fake interpreter: a shell script that runs `body` whatever its arguments.
    fn fake_python(dir: &std::path::Path, body: &str) -> OsString {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join("python3");
        fs_err::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.into_os_string()
    }

    #[test]
    fn a_hanging_probe_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        // `sleep` is a child of the shell, holding the pipes: the group is killed.
        let probe = Probe {
            python: fake_python(dir.path(), "sleep 30"),
            timeout: Duration::from_millis(300),
        };
        let started = Instant::now();
        let outcome = probe.run(Framework::PyTorch);
        assert_eq!(outcome, ProbeOutcome::Hang { after_s: 0.3 });
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn fake_interpreters_answer_fail_and_go_missing() {
        let dir = tempfile::tempdir().unwrap();
        let probe = Probe {
            python: fake_python(dir.path(), &format!("echo '{TORCH_OK}'")),
            timeout: Duration::from_secs(10),
        };
        let facts = probe.run_all();
        assert_eq!(facts.probes.len(), 3);
        assert!(facts.found(Framework::PyTorch));
        let probe = Probe {
            python: fake_python(dir.path(), "echo 'ImportError: no' >&2; exit 1"),
            timeout: Duration::from_secs(10),
        };
        assert!(matches!(
            probe.run(Framework::Jax),
            ProbeOutcome::Failed { code: Some(1), .. }
        ));
        let probe = Probe {
            python: dir.path().join("no-such-python").into_os_string(),
            timeout: Duration::from_secs(10),
        };
        assert!(matches!(
            probe.run(Framework::Jax),
            ProbeOutcome::PythonMissing { .. }
        ));
    }

    #[test]
    fn scripts_name_their_module() {
        for fw in Framework::ALL {
            let s = fw.script();
            assert!(s.contains(&format!("find_spec(\"{}\")", fw.module())));
            assert!(s.contains(&format!("import {}", fw.module())));
            assert!(s.trim_end().ends_with("_out(d)"));
        }
    }
}
