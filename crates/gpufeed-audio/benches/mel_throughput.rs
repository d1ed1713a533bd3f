//! Mel-spectrogram throughput on one core, in audio-seconds per second, against librosa.
//!
//! ```text
//! cargo bench -p gpufeed-audio --bench mel_throughput
//! ```
//!
//! Over all clips of `shared/data/ljspeech-mini/wavs` (32 LJSpeech clips, 221.75 s), with
//! the default settings (Tacotron 2 / HiFi-GAN log-mel: 1024/256/1024, 80 mels, 0-8000 Hz,
//! magnitude, reflect padding, ln with floor 1e-5), one thread:
//!
//! - `gpufeed`: `decode::load` (read + WAV decode) then `MelExtractor::compute_into`,
//!   per file, one extractor and one output buffer for the whole run (as the precompute
//!   loop does), plus the decode and the mel part timed alone;
//! - `librosa` (when `python3 -c "import librosa"` works): the same files and settings in
//!   a Python subprocess with BLAS/OpenMP pinned to one thread: `librosa.load(sr=None)`
//!   then `np.log(np.maximum(mel_basis @ np.abs(librosa.stft(...)), 1e-5))`, the filterbank
//!   built once up front (librosa's most favourable case), timed after a warm-up pass.
//!
//! Each figure is the best of `GPUFEED_BENCH_ROUNDS` passes (default 5) after one warm-up
//! pass; the best pass is the least disturbed by other work on a shared machine.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gpufeed_audio::decode;
use gpufeed_audio::mel::MelExtractor;
use gpufeed_config::AudioSettings;

const LIBROSA_SCRIPT: &str = r#"
import glob, sys, time
import numpy as np
import librosa

files = sorted(glob.glob(sys.argv[1] + "/*.wav"))
rounds = int(sys.argv[2])
mel_basis = librosa.filters.mel(sr=22050, n_fft=1024, n_mels=80, fmin=0.0, fmax=8000.0)

def one_pass():
    seconds = 0.0
    for f in files:
        y, sr = librosa.load(f, sr=None)
        spec = np.abs(librosa.stft(y, n_fft=1024, hop_length=256, win_length=1024,
                                   window="hann", center=True, pad_mode="reflect"))
        np.log(np.maximum(mel_basis @ spec, 1e-5))
        seconds += len(y) / sr
    return seconds

one_pass()
best = float("inf")
for _ in range(rounds):
    t = time.perf_counter()
    seconds = one_pass()
    best = min(best, time.perf_counter() - t)
print(seconds, best)
"#;

fn wav_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini/wavs");
    assert!(
        dir.is_dir(),
        "{} is missing: the benchmark needs shared/data/ljspeech-mini beside the repository",
        dir.display()
    );
    dir
}

/// Best wall time of `rounds` runs of `f`, after one warm-up run.
fn best_of(rounds: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let rounds: usize = std::env::var("GPUFEED_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = wav_dir();
    let mut files: Vec<PathBuf> = fs_err::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    files.sort();

    let settings = AudioSettings::default();
    let rate = settings.sample_rate;
    let mut mel = MelExtractor::new(&settings).unwrap();
    let mut out = Vec::new();
    let decoded: Vec<Vec<f32>> = files
        .iter()
        .map(|f| decode::load(f, rate).unwrap().samples)
        .collect();
    let audio_s = decoded.iter().map(Vec::len).sum::<usize>() as f64 / f64::from(rate);
    let frames: usize = decoded.iter().map(|x| mel.frames_for(x.len())).sum();

    let full = best_of(rounds, || {
        for f in &files {
            let audio = decode::load(f, rate).unwrap();
            black_box(mel.compute_into(&audio.samples, &mut out).unwrap());
            black_box(&out);
        }
    });
    let decode_only = best_of(rounds, || {
        for f in &files {
            black_box(decode::load(f, rate).unwrap());
        }
    });
    let mel_only = best_of(rounds, || {
        for x in &decoded {
            black_box(mel.compute_into(x, &mut out).unwrap());
            black_box(&out);
        }
    });

    println!(
        "mel_throughput: {} files, {audio_s:.2} audio-s, {frames} frames; default settings \
         (1024/256/1024, 80 mels, 0-8000 Hz, magnitude, reflect, ln floor 1e-5); 1 thread; \
         best of {rounds}",
        files.len()
    );
    let rate_full = audio_s / full;
    println!(
        "gpufeed  load + mel + log : {:8.2} ms/pass  {rate_full:9.0} audio-s/s  {:6.0} files/s",
        full * 1e3,
        files.len() as f64 / full
    );
    println!(
        "gpufeed  load (decode)    : {:8.2} ms/pass  {:9.0} audio-s/s",
        decode_only * 1e3,
        audio_s / decode_only
    );
    println!(
        "gpufeed  mel + log only   : {:8.2} ms/pass  {:9.0} audio-s/s",
        mel_only * 1e3,
        audio_s / mel_only
    );

    match run_librosa(&dir, rounds) {
        Ok((seconds, best)) => {
            let rate_librosa = seconds / best;
            println!(
                "librosa  load + stft + mel + log : {:8.2} ms/pass  {rate_librosa:9.0} audio-s/s",
                best * 1e3
            );
            println!(
                "ratio gpufeed / librosa: {:.2}x (per core)",
                rate_full / rate_librosa
            );
        }
        Err(why) => println!("librosa: skipped ({why})"),
    }
}

/// Runs the librosa recipe in Python on one thread; returns (audio seconds, best pass s).
fn run_librosa(dir: &Path, rounds: usize) -> Result<(f64, f64), String> {
    let probe = Command::new("python3")
        .args(["-c", "import librosa"])
        .output()
        .map_err(|e| format!("python3 not runnable: {e}"))?;
    if !probe.status.success() {
        return Err("`python3 -c \"import librosa\"` failed; pip install librosa".into());
    }
    let mut cmd = Command::new("python3");
    cmd.args(["-c", LIBROSA_SCRIPT])
        .arg(dir)
        .arg(rounds.to_string());
    for var in [
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMBA_NUM_THREADS",
    ] {
        cmd.env(var, "1");
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "the librosa script failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    match (fields.next(), fields.next()) {
        (Some(Ok(seconds)), Some(Ok(best))) => Ok((seconds, best)),
        _ => Err(format!("unexpected output from the librosa script: {text}")),
    }
}
