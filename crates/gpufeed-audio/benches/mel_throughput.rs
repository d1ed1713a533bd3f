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
//!   one long-lived Python process with BLAS/OpenMP pinned to one thread:
//!   `librosa.load(sr=None)` then `np.log(np.maximum(mel_basis @ np.abs(librosa.stft(...)),
//!   1e-5))`, the filterbank built once up front (librosa's most favourable case), after a
//!   warm-up pass.
//!
//! The two are timed **in alternation**: each round is one gpufeed pass then one librosa
//! pass, so a burst of other work on a shared machine slows both sides of a round rather
//! than one side of the whole comparison. Reported: the best pass of each over
//! `GPUFEED_BENCH_ROUNDS` rounds (default 10) and their ratio, and the spread of the
//! per-round ratios (lowest, median, highest).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use common::{Librosa, best, best_of, env_or, spread, wav_dir};

use gpufeed_audio::mel::MelExtractor;
use gpufeed_audio::{AudioSettings, decode};

const LIBROSA_SCRIPT: &str = r#"
import glob, sys, time
import numpy as np
import librosa

files = sorted(glob.glob(sys.argv[1] + "/*.wav"))
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

"#;

fn main() {
    let rounds = env_or("GPUFEED_BENCH_ROUNDS", 10);
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

    let mut librosa = Librosa::start(LIBROSA_SCRIPT, &dir);
    if let Err(why) = &librosa {
        println!("librosa: skipped ({why})");
    }
    // Warm-up pass, then the rounds: gpufeed, then librosa on the same files.
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
    let mut reference = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        full.push(full_pass());
        if let Ok(lib) = &mut librosa {
            match lib.pass() {
                Ok(t) => reference.push(t),
                Err(why) => {
                    println!("librosa: stopped ({why})");
                    librosa = Err(why);
                }
            }
        }
    }
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
    let best_full = best(&full);
    let rate_full = audio_s / best_full;
    println!(
        "gpufeed  load + mel + log : {:8.2} ms/pass  {rate_full:9.0} audio-s/s  {:6.0} files/s",
        best_full * 1e3,
        files.len() as f64 / best_full
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
    if let (Ok(lib), false) = (&librosa, reference.is_empty()) {
        let best = best(&reference);
        let rate_librosa = lib.seconds / best;
        println!(
            "librosa  load + stft + mel + log : {:8.2} ms/pass  {rate_librosa:9.0} audio-s/s",
            best * 1e3
        );
        let (lowest, median, highest, n) = spread(&full, &reference);
        println!(
            "ratio gpufeed / librosa: {:.2}x (per core; best pass against best pass); per round: \
             lowest {:.2}x, median {:.2}x, highest {:.2}x over {} rounds",
            rate_full / rate_librosa,
            lowest,
            median,
            highest,
            n
        );
    }
}
