//! 24 kHz FLAC to a 22.05 kHz log-mel on one core, in audio-seconds per second, against
//! librosa and Lhotse: the decode-and-resample path of a corpus recorded at another rate
//! (LibriTTS, VCTK, most codec datasets are 24 kHz or 48 kHz).
//!
//! ```text
//! GPUFEED_BENCH_PYTHON=/path/to/python cargo bench -p gpufeed-audio --bench resample_throughput
//! ```
//!
//! The clips are the 32 LJSpeech clips of `shared/data/ljspeech-mini`, resampled to 24 kHz
//! (soxr HQ) and written as 16-bit FLAC by the benchmark's Python (soundfile) into
//! `target/bench-flac24k` once. One thread each:
//!
//! - `gpufeed`: `decode::load(path, 22050)` (read, FLAC decode, resample) then
//!   `MelExtractor::compute_into`, per file, as precompute does; plus the decode and the
//!   resampling timed alone;
//! - `librosa`: `librosa.load(path, sr=22050)` (soxr HQ, its default) then the log-mel of
//!   the mel benchmark, the filterbank built once;
//! - `Lhotse` (when `import lhotse` works): a `CutSet` of the same files,
//!   `.resample(22050)`, `compute_and_store_features(Fbank(config), storage, num_jobs=1)`
//!   with the mel's framing (1024/256 samples, 80 bands), as its documentation's recipe
//!   does, torch on one thread.
//!
//! Timed in alternation (a gpufeed pass, then each reference's), best pass of
//! `GPUFEED_BENCH_ROUNDS` (default 5), with the spread of the per-round ratios.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{Librosa, best, best_of, env_or, spread, wav_dir};

use gpufeed_audio::mel::MelExtractor;
use gpufeed_audio::{AudioSettings, decode};

const MAKE_FLAC: &str = r#"
import glob, os, sys
import librosa, soundfile as sf
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for f in sorted(glob.glob(src + "/*.wav")):
    y, sr = sf.read(f, dtype="float32")
    y = librosa.resample(y, orig_sr=sr, target_sr=24000, res_type="soxr_hq")
    sf.write(os.path.join(dst, os.path.basename(f)[:-4] + ".flac"), y, 24000, subtype="PCM_16")
"#;

const LIBROSA_SCRIPT: &str = r#"
import glob, sys, time
import numpy as np
import librosa

files = sorted(glob.glob(sys.argv[1] + "/*.flac"))
mel_basis = librosa.filters.mel(sr=22050, n_fft=1024, n_mels=80, fmin=0.0, fmax=8000.0)

def one_pass():
    seconds = 0.0
    for f in files:
        y, sr = librosa.load(f, sr=22050)
        spec = np.abs(librosa.stft(y, n_fft=1024, hop_length=256, win_length=1024,
                                   window="hann", center=True, pad_mode="reflect"))
        np.log(np.maximum(mel_basis @ spec, 1e-5))
        seconds += len(y) / sr
    return seconds

"#;

const LHOTSE_SCRIPT: &str = r#"
import logging, shutil, sys, tempfile, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
import torch
from lhotse import CutSet, Fbank, FbankConfig, RecordingSet

torch.set_num_threads(1)
# The mel's framing (1024/256 at 22.05 kHz, 80 bands); Lhotse's default 25/10 ms is not a
# whole number of samples at 22.05 kHz, which it refuses.
config = FbankConfig(sampling_rate=22050, frame_length=1024 / 22050, frame_shift=256 / 22050,
                     num_mel_bins=80)
recordings = RecordingSet.from_dir(sys.argv[1], pattern="*.flac", num_jobs=1)

def one_pass():
    storage = tempfile.mkdtemp()
    try:
        cuts = CutSet.from_manifests(recordings=recordings).resample(22050)
        cuts = cuts.compute_and_store_features(
            extractor=Fbank(config), storage_path=storage, num_jobs=1, progress_bar=False
        )
        return sum(c.duration for c in cuts)
    finally:
        shutil.rmtree(storage)

"#;

/// The 24 kHz FLAC clips, made once.
fn flac_dir() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-flac24k");
    let count = |d: &Path| {
        std::fs::read_dir(d).map_or(0, |r| {
            r.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "flac"))
            })
            .count()
        })
    };
    if count(&dir) > 0 {
        return Ok(dir);
    }
    let python = std::env::var("GPUFEED_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args(["-c", MAKE_FLAC])
        .arg(wav_dir())
        .arg(&dir)
        .status()
        .map_err(|e| format!("{python}: {e}"))?;
    if !status.success() || count(&dir) == 0 {
        return Err(format!(
            "{python} could not write the FLAC clips (it needs librosa and soundfile)"
        ));
    }
    Ok(dir)
}

fn main() {
    let rounds = env_or("GPUFEED_BENCH_ROUNDS", 5);
    let dir = match flac_dir() {
        Ok(d) => d,
        Err(why) => {
            println!("resample_throughput: skipped ({why})");
            return;
        }
    };
    let mut files: Vec<PathBuf> = fs_err::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "flac"))
        .collect();
    files.sort();

    let settings = AudioSettings::default();
    let rate = settings.sample_rate;
    let mut mel = MelExtractor::new(&settings).unwrap();
    let mut out = Vec::new();
    let native: Vec<Vec<f32>> = files
        .iter()
        .map(|f| decode::load(f, 24000).unwrap().samples)
        .collect();
    let audio_s = native.iter().map(Vec::len).sum::<usize>() as f64 / 24000.0;

    let mut references: Vec<(&str, Result<Librosa, String>, Vec<f64>)> = vec![
        ("librosa", Librosa::start(LIBROSA_SCRIPT, &dir), Vec::new()),
        (
            "lhotse",
            Librosa::start_with("lhotse", LHOTSE_SCRIPT, &dir),
            Vec::new(),
        ),
    ];
    let mut full_pass = || {
        let t = Instant::now();
        for f in &files {
            let audio = decode::load(f, rate).unwrap();
            black_box(mel.compute_into(&audio.samples, &mut out).unwrap());
            black_box(&out);
        }
        t.elapsed().as_secs_f64()
    };
    full_pass();
    let mut full = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        full.push(full_pass());
        for (name, reference, times) in &mut references {
            if let Ok(r) = reference {
                match r.pass() {
                    Ok(t) => times.push(t),
                    Err(why) => {
                        println!("{name}: stopped ({why})");
                        *reference = Err(why);
                    }
                }
            }
        }
    }
    let decode_only = best_of(rounds, || {
        for f in &files {
            black_box(decode::load(f, 24000).unwrap());
        }
    });
    let resample_only = best_of(rounds, || {
        for x in &native {
            black_box(decode::resample(x, 24000, rate, Path::new("x")).unwrap());
        }
    });

    println!(
        "resample_throughput: {} FLAC files at 24 kHz, {audio_s:.2} audio-s, to 22.05 kHz and \
         the default log-mel; 1 thread; best of {rounds}",
        files.len()
    );
    let best_full = best(&full);
    let rate_full = audio_s / best_full;
    println!(
        "gpufeed  load + resample + mel : {:8.2} ms/pass  {rate_full:9.0} audio-s/s",
        best_full * 1e3
    );
    println!(
        "gpufeed  FLAC decode only      : {:8.2} ms/pass  {:9.0} audio-s/s",
        decode_only * 1e3,
        audio_s / decode_only
    );
    println!(
        "gpufeed  resample only         : {:8.2} ms/pass  {:9.0} audio-s/s",
        resample_only * 1e3,
        audio_s / resample_only
    );
    for (name, reference, times) in &references {
        match reference {
            Err(why) => println!("{name}: skipped ({why})"),
            Ok(r) if !times.is_empty() => {
                let best = best(times);
                let rate_ref = r.seconds / best;
                let (lowest, median, highest, _) = spread(&full, times);
                println!(
                    "{name:8} reference             : {:8.2} ms/pass  {rate_ref:9.0} audio-s/s  \
                     ratio {:.2}x (per round: lowest {:.2}x, median {:.2}x, highest {:.2}x)",
                    best * 1e3,
                    rate_full / rate_ref,
                    lowest,
                    median,
                    highest
                );
            }
            Ok(_) => {}
        }
    }
}
