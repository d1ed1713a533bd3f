//! What the benchmarks share: the clips, and a reference Python recipe run in a long-lived
//! process so that its passes alternate with gpufeed's.

#![allow(dead_code)] // each benchmark uses its part

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// `shared/data/ljspeech-mini/wavs`.
pub fn wav_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini/wavs");
    assert!(
        dir.is_dir(),
        "{} is missing: the benchmark needs shared/data/ljspeech-mini beside the repository",
        dir.display()
    );
    dir
}

/// `key`'s value as a number, else `default` (`GPUFEED_BENCH_ROUNDS`, `GPUFEED_BENCH_FILES`).
pub fn env_or(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Best wall time of `rounds` runs of `f`, after one warm-up run.
pub fn best_of(rounds: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The shortest of `times`.
pub fn best(times: &[f64]) -> f64 {
    times.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The per-round ratios `theirs / ours` (rounds run in alternation): lowest, median,
/// highest and how many.
pub fn spread(ours: &[f64], theirs: &[f64]) -> (f64, f64, f64, usize) {
    let mut r: Vec<f64> = ours.iter().zip(theirs).map(|(g, l)| l / g).collect();
    r.sort_by(f64::total_cmp);
    (r[0], r[r.len() / 2], r[r.len() - 1], r.len())
}

/// What every reference script ends with, after its `one_pass()` (which returns the
/// audio seconds of a pass): a warm-up pass, `ready SECONDS`, then one timed pass per line
/// read.
const PASS_LOOP: &str = r#"
import sys as _sys, time as _time
print("ready", one_pass(), flush=True)
for _line in _sys.stdin:
    _t = _time.perf_counter()
    one_pass()
    print(_time.perf_counter() - _t, flush=True)
"#;

/// The Python that runs the reference: `GPUFEED_BENCH_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("GPUFEED_BENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// A librosa recipe in a long-lived Python process on one thread: `script` is run with the
/// clips' folder as its argument, prints `ready SECONDS` after a warm-up pass over SECONDS
/// of audio, then times one pass per line it reads and prints its wall time.
pub struct Librosa {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Audio seconds in one pass.
    pub seconds: f64,
}

impl Librosa {
    /// Starts the script (which runs its warm-up pass) and waits until it is ready.
    pub fn start(script: &str, dir: &Path) -> Result<Self, String> {
        Self::start_with("librosa", script, dir)
    }

    /// As [`Librosa::start`] for a script that needs Python module `module` (`lhotse`).
    pub fn start_with(module: &str, script: &str, dir: &Path) -> Result<Self, String> {
        let python = python();
        let probe = Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .map_err(|e| format!("{python} not runnable: {e}"))?;
        if !probe.status.success() {
            return Err(format!(
                "`{python} -c \"import {module}\"` failed; pip install {module} (or point \
                 GPUFEED_BENCH_PYTHON at a Python that has it)"
            ));
        }
        let mut cmd = Command::new(&python);
        cmd.args(["-c", &format!("{script}{PASS_LOOP}")])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for var in [
            "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS",
            "NUMBA_NUM_THREADS",
        ] {
            cmd.env(var, "1");
        }
        let mut child = cmd.spawn().map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let line = read_line(&mut stdout)?;
        let seconds = line
            .strip_prefix("ready ")
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("unexpected output from the librosa script: {line}"))?;
        Ok(Self {
            child,
            stdin,
            stdout,
            seconds,
        })
    }

    /// One timed pass; its wall time in seconds.
    pub fn pass(&mut self) -> Result<f64, String> {
        writeln!(self.stdin, "pass").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        let line = read_line(&mut self.stdout)?;
        line.trim()
            .parse()
            .map_err(|_| format!("unexpected output from the librosa script: {line}"))
    }
}

impl Drop for Librosa {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_line(r: &mut impl BufRead) -> Result<String, String> {
    let mut line = String::new();
    match r.read_line(&mut line) {
        Ok(0) => Err("the librosa script ended early (run it by hand to see why)".into()),
        Ok(_) => Ok(line),
        Err(e) => Err(e.to_string()),
    }
}
