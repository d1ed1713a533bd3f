//! `gpufeed demo-data`: a small LJSpeech-format dataset generated on the spot, so that every
//! command has a default on a fresh machine with no data.
//!
//! The audio is speech-like, not speech: each word is one or more syllables, each a voiced
//! segment whose harmonics (fundamental 170-230 Hz with slow drift and vibrato) are shaped by
//! three formant resonances that glide between vowel targets, with an attack and decay;
//! some syllables start with a burst of shaped noise (a fricative); words are separated by
//! short pauses and utterances start and end with low-level room noise. This gives spectra,
//! silences and lengths like real read speech, which is what the feature code, the cache and
//! the loader care about. Durations follow the text at LJSpeech's speaking rate (about 15
//! characters per second; LJSpeech clips are 1-10 s, 6.6 s on average).
//!
//! Transcripts are sentences of Abraham Lincoln's Gettysburg Address (1863) and the opening
//! of the US Declaration of Independence (1776), both in the public domain, cycled in order.
//!
//! ```text
//! DIR/metadata.csv           DEMO-0001|text|text
//! DIR/wavs/DEMO-0001.wav     22050 Hz, mono, 16-bit PCM
//! ```

use std::f64::consts::TAU;
use std::path::{Path, PathBuf};

use crate::error::DataError;
use crate::fsx;
use crate::rng::SplitMix64;

/// Sample rate of the generated audio (LJSpeech's).
pub const SAMPLE_RATE: u32 = 22050;
/// Characters per second of LJSpeech's reader (1,308,674 characters in 86,117 s).
const CHARS_PER_SECOND: f64 = 15.2;

const TEXT: &str = "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in Liberty, and dedicated to the proposition that all men are created equal. \
Now we are engaged in a great civil war, testing whether that nation, or any nation so conceived and so dedicated, can long endure. \
We are met on a great battle-field of that war. \
We have come to dedicate a portion of that field, as a final resting place for those who here gave their lives that that nation might live. \
It is altogether fitting and proper that we should do this. \
But, in a larger sense, we can not dedicate, we can not consecrate, we can not hallow this ground. \
The brave men, living and dead, who struggled here, have consecrated it, far above our poor power to add or detract. \
The world will little note, nor long remember what we say here, but it can never forget what they did here. \
It is for us the living, rather, to be dedicated here to the unfinished work which they who fought here have thus far so nobly advanced. \
It is rather for us to be here dedicated to the great task remaining before us. \
When in the Course of human events, it becomes necessary for one people to dissolve the political bands which have connected them with another. \
We hold these truths to be self-evident, that all men are created equal. \
That they are endowed by their Creator with certain unalienable Rights. \
That among these are Life, Liberty and the pursuit of Happiness. \
That to secure these rights, Governments are instituted among Men, deriving their just powers from the consent of the governed. \
Prudence, indeed, will dictate that Governments long established should not be changed for light and transient causes. \
Let facts be submitted to a candid world.";

/// The sentences transcripts are drawn from, in order.
fn sentences() -> Vec<&'static str> {
    TEXT.split_inclusive(". ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Vowel formant targets (F1, F2, F3 in Hz), roughly those of an adult female voice.
const VOWELS: [[f64; 3]; 5] = [
    [850.0, 1220.0, 2810.0],
    [390.0, 2300.0, 2850.0],
    [310.0, 2790.0, 3310.0],
    [560.0, 920.0, 2830.0],
    [370.0, 950.0, 2670.0],
];

/// Gain of a resonance at `f` for a formant at `fc` with bandwidth `bw` (a second-order
/// resonator's magnitude response, normalised to 1 at the peak).
fn resonance(f: f64, fc: f64, bw: f64) -> f64 {
    let x = (f * f - fc * fc) / (f * bw);
    1.0 / (1.0 + x * x).sqrt()
}

/// Harmonics below 5 kHz at the lowest fundamental.
const MAX_HARMONICS: usize = 40;

/// Appends one syllable of `dur` seconds.
fn syllable(out: &mut Vec<f32>, rng: &mut SplitMix64, dur: f64, f0: f64, level: f64) {
    let sr = f64::from(SAMPLE_RATE);
    let n = (dur * sr) as usize;
    let (a, b) = (
        VOWELS[rng.next_u64() as usize % 5],
        VOWELS[rng.next_u64() as usize % 5],
    );
    let fricative = rng.uniform() < 0.35;
    let fric_len = if fricative {
        (rng.range(0.04, 0.09) * sr) as usize
    } else {
        0
    };
    let fric_center = rng.range(3500.0, 6500.0);
    let vibrato = rng.range(4.0, 6.0);
    let mut phase = 0.0f64;
    let mut gains = [0.0f64; MAX_HARMONICS];
    let mut harmonics = 0usize;
    // A one-pole band-ish filter for the fricative noise, centred roughly on fric_center.
    let mut lp = 0.0f64;
    let alpha = (TAU * fric_center / sr).min(1.0);
    for i in 0..n + fric_len {
        let mut s = 0.0;
        if i < fric_len {
            let noise = rng.range(-1.0, 1.0);
            lp += alpha * (noise - lp);
            let env = (i as f64 / fric_len as f64 * std::f64::consts::PI).sin();
            s += 0.25 * level * (noise - lp) * env;
        } else {
            let j = i - fric_len;
            let t = j as f64 / sr;
            let u = j as f64 / n as f64;
            let f = f0 * (1.0 + 0.02 * (TAU * vibrato * t).sin()) * (1.0 - 0.08 * u);
            phase += TAU * f / sr;
            // Formants glide slowly: the harmonic gains are recomputed every 64 samples.
            if j % 64 == 0 {
                let formants: [f64; 3] = std::array::from_fn(|k| a[k] + (b[k] - a[k]) * u);
                harmonics = 0;
                while harmonics < MAX_HARMONICS && (harmonics + 1) as f64 * f < 5000.0 {
                    let h = (harmonics + 1) as f64;
                    let fh = h * f;
                    gains[harmonics] = (resonance(fh, formants[0], 90.0)
                        + 0.6 * resonance(fh, formants[1], 110.0)
                        + 0.3 * resonance(fh, formants[2], 170.0))
                        / h.sqrt();
                    harmonics += 1;
                }
            }
            // sin(h x) by the recurrence sin((h+1)x) = 2 cos(x) sin(hx) - sin((h-1)x).
            let (s1, c1) = phase.sin_cos();
            let (mut prev, mut cur) = (0.0, s1);
            let mut v = 0.0;
            for g in &gains[..harmonics] {
                v += g * cur;
                let next = 2.0 * c1 * cur - prev;
                prev = cur;
                cur = next;
            }
            let attack = (u / 0.12).min(1.0);
            let decay = ((1.0 - u) / 0.25).min(1.0);
            s += 0.12 * level * v * attack * decay;
        }
        out.push(s as f32);
    }
}

fn silence(out: &mut Vec<f32>, rng: &mut SplitMix64, dur: f64) {
    let n = (dur * f64::from(SAMPLE_RATE)) as usize;
    out.extend((0..n).map(|_| (rng.range(-1.0, 1.0) * 3e-4) as f32));
}

/// Synthesises an utterance for `text` lasting about `seconds`.
fn synthesize(text: &str, seconds: f64, rng: &mut SplitMix64) -> Vec<f32> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let letters: usize = words.iter().map(|w| w.len()).sum::<usize>().max(1);
    let lead = rng.range(0.1, 0.3);
    let tail = rng.range(0.1, 0.3);
    let speech = (seconds - lead - tail).max(0.5);
    let f0 = rng.range(170.0, 230.0);
    let mut out = Vec::with_capacity((seconds * f64::from(SAMPLE_RATE)) as usize + 4096);
    silence(&mut out, rng, lead);
    for (k, w) in words.iter().enumerate() {
        let share = w.len() as f64 / letters as f64;
        let pause = if w.ends_with([',', '.', ';']) {
            0.18
        } else {
            0.05
        };
        let word_dur = (speech * share - pause).max(0.08);
        let syllables = (w.len() / 3).clamp(1, 4);
        let level = rng.range(0.6, 1.0);
        for _ in 0..syllables {
            let drift = 1.0 - 0.1 * k as f64 / words.len() as f64;
            syllable(
                &mut out,
                rng,
                word_dur / syllables as f64,
                f0 * drift,
                level,
            );
        }
        silence(&mut out, rng, pause);
    }
    silence(&mut out, rng, tail);
    // Normalise to a peak of 0.8 like a mastered recording.
    let peak = out.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(1e-9);
    for x in &mut out {
        *x *= 0.8 / peak;
    }
    out
}

/// What `demo-data` wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DemoReport {
    /// The dataset folder.
    pub dir: PathBuf,
    /// Clips written.
    pub clips: usize,
    /// Total audio, seconds.
    pub audio_s: f64,
}

/// Writes a demo dataset of `clips` utterances into `dir` (created if needed). Files are
/// written atomically; an existing dataset is overwritten clip by clip.
pub fn generate(dir: &Path, clips: usize, seed: u64) -> Result<DemoReport, DataError> {
    let wavs = dir.join("wavs");
    fsx::create_dir_all(&wavs)?;
    let sentences = sentences();
    let mut rng = SplitMix64(seed ^ 0x0067_7075_6665_6564);
    let mut metadata = String::new();
    let mut audio_s = 0.0;
    for k in 0..clips {
        let text = sentences[k % sentences.len()];
        let id = format!("DEMO-{:04}", k + 1);
        let seconds = (text.len() as f64 / CHARS_PER_SECOND * rng.range(0.9, 1.1)).clamp(1.0, 10.0);
        let samples = synthesize(text, seconds, &mut rng);
        audio_s += samples.len() as f64 / f64::from(SAMPLE_RATE);
        write_wav(&wavs.join(format!("{id}.wav")), &samples)?;
        metadata.push_str(&format!("{id}|{text}|{text}\n"));
    }
    fsx::write_atomic(&dir.join("metadata.csv"), metadata.as_bytes())?;
    Ok(DemoReport {
        dir: dir.to_path_buf(),
        clips,
        audio_s,
    })
}

/// Writes 16-bit PCM mono WAV atomically.
fn write_wav(path: &Path, samples: &[f32]) -> Result<(), DataError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::with_capacity(44 + samples.len() * 2));
    let err = |e: hound::Error| DataError::io(path, std::io::Error::other(e.to_string()));
    let mut w = hound::WavWriter::new(&mut bytes, spec).map_err(err)?;
    for &s in samples {
        w.write_sample((s.clamp(-1.0, 1.0) * 32767.0).round() as i16)
            .map_err(err)?;
    }
    w.finalize().map_err(err)?;
    fsx::write_atomic(path, bytes.get_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_many_and_clean() {
        let s = sentences();
        assert!(s.len() >= 15, "{}", s.len());
        assert!(s.iter().all(|x| !x.contains('|') && x.len() > 10));
    }

    #[test]
    fn audio_is_speech_like() {
        let mut rng = SplitMix64(1);
        let text = sentences()[0];
        let secs = text.len() as f64 / CHARS_PER_SECOND;
        let y = synthesize(text, secs, &mut rng);
        let dur = y.len() as f64 / f64::from(SAMPLE_RATE);
        assert!((dur - secs).abs() / secs < 0.35, "{dur} vs {secs}");
        let peak = y.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!((peak - 0.8).abs() < 1e-3);
        // Pauses: a good share of 10 ms blocks are near silent, and most are not.
        let quiet = y
            .chunks(220)
            .filter(|c| (c.iter().map(|x| x * x).sum::<f32>() / c.len() as f32).sqrt() < 0.01)
            .count() as f64
            / (y.len() / 220) as f64;
        assert!((0.05..0.6).contains(&quiet), "quiet share {quiet}");
    }

    #[test]
    fn deterministic() {
        let d1 = tempfile::tempdir().unwrap();
        let d2 = tempfile::tempdir().unwrap();
        generate(d1.path(), 3, 7).unwrap();
        generate(d2.path(), 3, 7).unwrap();
        for f in ["metadata.csv", "wavs/DEMO-0002.wav"] {
            assert_eq!(
                fsx::read(&d1.path().join(f)).unwrap(),
                fsx::read(&d2.path().join(f)).unwrap()
            );
        }
    }
}
