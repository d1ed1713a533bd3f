//! Every frame-aligned array of the cache on one core, in audio-seconds per second, against
//! librosa computing the same.
//!
//! ```text
//! cargo bench -p gpufeed-audio --bench arrays_throughput
//! GPUFEED_BENCH_PYTHON=/path/to/python   # a Python with librosa, if python3 has none
//! ```
//!
//! On the first `GPUFEED_BENCH_FILES` clips (default 8) of `shared/data/ljspeech-mini/wavs`,
//! default settings, one thread:
//!
//! - `gpufeed`: decode, then from one STFT the log mel, the linear (magnitude) spectrogram
//!   and the frame energy (`MelExtractor::compute_with`), then F0 and voicing by pYIN
//!   (`PitchTracker`, 65-1000 Hz): what `precompute --features mel,linear,energy,f0`
//!   computes per item;
//! - `librosa`: `load(sr=None)`, `stft` (reflect), `np.abs`, the mel basis product and log,
//!   `np.linalg.norm` over the bins, and `pyin(fmin=65, fmax=1000, frame_length=2048,
//!   hop_length=256)`, in one long-lived process with every thread pool at one thread,
//!   after a warm-up pass (numba's compile is not timed).
//!
//! Passes alternate (gpufeed, then librosa, each round); reported: the best pass of each
//! over `GPUFEED_BENCH_ROUNDS` rounds (default 3), their ratio and the per-round spread.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use common::{Librosa, best, env_or, spread, wav_dir};
use gpufeed_audio::mel::{MelExtractor, Spectra};
use gpufeed_audio::pitch::{PitchSettings, PitchTracker};
use gpufeed_audio::{AudioSettings, decode};

const LIBROSA_SCRIPT: &str = r#"
import glob, os, sys, time
import numpy as np
import librosa

files = sorted(glob.glob(sys.argv[1] + "/*.wav"))[: int(os.environ.get("GPUFEED_BENCH_FILES", "8"))]
mel_basis = librosa.filters.mel(sr=22050, n_fft=1024, n_mels=80, fmin=0.0, fmax=8000.0)

def one_pass():
    seconds = 0.0
    for f in files:
        y, sr = librosa.load(f, sr=None)
        mag = np.abs(librosa.stft(y, n_fft=1024, hop_length=256, win_length=1024,
                                  window="hann", center=True, pad_mode="reflect"))
        np.log(np.maximum(mel_basis @ mag, 1e-5))
        np.linalg.norm(mag, axis=0)
        librosa.pyin(y, fmin=65.0, fmax=1000.0, sr=sr, frame_length=2048, hop_length=256)
        seconds += len(y) / sr
    return seconds

"#;

fn main() {
    let rounds = env_or("GPUFEED_BENCH_ROUNDS", 3);
    let count = env_or("GPUFEED_BENCH_FILES", 8);
    let dir = wav_dir();
    let mut files: Vec<PathBuf> = fs_err::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    files.sort();
    files.truncate(count);
    let settings = AudioSettings::default();
    let rate = settings.sample_rate;
    let mut mel = MelExtractor::new(&settings).unwrap();
    let mut pitch = PitchTracker::new(&PitchSettings::default(), rate, 256, 0).unwrap();
    let (mut m, mut linear, mut energy, mut f0, mut voiced) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut audio_s = 0.0;
    let mut pass = |split: &mut [f64; 3]| {
        let t = Instant::now();
        audio_s = 0.0;
        for f in &files {
            let t0 = Instant::now();
            let audio = decode::load(f, rate).unwrap();
            let t1 = Instant::now();
            let frames = mel
                .compute_with(
                    &audio.samples,
                    &mut m,
                    Spectra {
                        linear: Some(&mut linear),
                        energy: Some(&mut energy),
                    },
                )
                .unwrap();
            let t2 = Instant::now();
            pitch.compute_into(&audio.samples, frames, &mut f0, &mut voiced);
            black_box((&m, &linear, &energy, &f0, &voiced));
            split[0] += (t1 - t0).as_secs_f64();
            split[1] += (t2 - t1).as_secs_f64();
            split[2] += t2.elapsed().as_secs_f64();
            audio_s += audio.samples.len() as f64 / f64::from(rate);
        }
        t.elapsed().as_secs_f64()
    };
    let mut split = [0.0; 3];
    pass(&mut split);
    let mut librosa = Librosa::start(LIBROSA_SCRIPT, &dir);
    if let Err(why) = &librosa {
        println!("librosa: skipped ({why})");
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut split = [0.0; 3];
    for _ in 0..rounds {
        ours.push(pass(&mut split));
        if let Ok(lib) = &mut librosa {
            match lib.pass() {
                Ok(t) => theirs.push(t),
                Err(why) => {
                    println!("librosa: stopped ({why})");
                    librosa = Err(why);
                }
            }
        }
    }
    let best = best(&ours);
    let total: f64 = split.iter().sum();
    println!(
        "arrays_throughput: {} files, {audio_s:.2} audio-s; mel + linear + energy + f0 (pYIN, \
         65-1000 Hz); 1 thread; best of {rounds}",
        files.len()
    );
    println!(
        "gpufeed  decode + one STFT (mel, linear, energy) + pYIN : {:8.1} ms/pass  {:7.0} \
         audio-s/s  (decode {:.0} %, STFT arrays {:.0} %, pYIN {:.0} %)",
        best * 1e3,
        audio_s / best,
        100.0 * split[0] / total,
        100.0 * split[1] / total,
        100.0 * split[2] / total
    );
    if let (Ok(lib), false) = (&librosa, theirs.is_empty()) {
        let best_lib = common::best(&theirs);
        println!(
            "librosa  load + stft + mel + norm + pyin               : {:8.1} ms/pass  {:7.1} \
             audio-s/s",
            best_lib * 1e3,
            lib.seconds / best_lib
        );
        let (lowest, median, highest, n) = spread(&ours, &theirs);
        println!(
            "ratio gpufeed / librosa: {:.1}x (best pass against best pass); per round: lowest \
             {:.1}x, median {:.1}x, highest {:.1}x over {} rounds",
            (audio_s / best) / (lib.seconds / best_lib),
            lowest,
            median,
            highest,
            n
        );
    }
}
