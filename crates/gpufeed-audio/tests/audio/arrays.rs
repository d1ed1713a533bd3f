//! The cache's other arrays against librosa 0.11 (fixtures from
//! `tests/fixtures/make_array_fixtures.py`): the linear spectrogram and the frame energy from
//! the mel's STFT, and F0 by YIN.
//!
//! Tolerances:
//! - linear magnitude and energy: `1e-4 |b| + 1e-6 max|b|` per element, the power mel's
//!   tolerance (librosa's spectrum is complex64; ours is an f64 FFT rounded to f32);
//! - YIN: within 0.1 % of `librosa.yin` on at least 99 % of the frames of each clip
//!   (measured: every frame; YIN is f64 here, float32 in librosa, so a trough within
//!   rounding of the threshold could flip);
//! - against `librosa.pyin` (the bar): on the frames both call voiced, within 1 %
//!   on at least 95 % of them (measured: all 3,095, and the same voicing on all 4,338
//!   frames of the eight clips), and the voicing the same on at least 99 % of the frames.
//!
//! `cargo test -p gpufeed-audio --test audio arrays -- --nocapture` prints the figures.

use gpufeed_audio::mel::{MelExtractor, Spectra};
use gpufeed_audio::pitch::{PitchMethod, PitchSettings, PitchTracker};
use gpufeed_audio::{AudioSettings, decode};

use crate::common::{ljspeech_wav, read_fixture};

const CLIPS: [&str; 8] = [
    "LJ001-0001",
    "LJ001-0002",
    "LJ001-0003",
    "LJ001-0004",
    "LJ001-0005",
    "LJ001-0006",
    "LJ001-0007",
    "LJ001-0008",
];

fn samples(clip: &str) -> Vec<f32> {
    let audio = decode::load(&ljspeech_wav(&format!("{clip}.wav")), 22050).unwrap();
    assert_eq!(audio.source_rate, 22050);
    audio.samples
}

fn close(ours: &[f32], theirs: &[f32], what: &str, width: usize) {
    assert_eq!(ours.len(), theirs.len(), "{what}: length");
    let max = theirs.iter().fold(0.0f64, |m, &v| m.max(f64::from(v)));
    let mut worst = 0.0f64;
    for (i, (&a, &b)) in ours.iter().zip(theirs).enumerate() {
        let (a, b) = (f64::from(a), f64::from(b));
        let err = (a - b).abs();
        assert!(
            err <= 1e-4 * b.abs() + 1e-6 * max,
            "{what}: frame {} column {}: {a} vs librosa {b}",
            i / width,
            i % width
        );
        if b.abs() >= 1e-6 * max {
            worst = worst.max(err / b.abs());
        }
    }
    eprintln!("{what}: max rel {worst:.2e} (elements >= 1e-6 max)");
}

#[test]
fn linear_and_energy_match_librosa_from_the_mels_stft() {
    let mut x = samples("LJ001-0008");
    x.truncate(22050);
    let mut ex = MelExtractor::new(&AudioSettings::default()).unwrap();
    let (mut mel, mut linear, mut energy) = (Vec::new(), Vec::new(), Vec::new());
    let frames = ex
        .compute_with(
            &x,
            &mut mel,
            Spectra {
                linear: Some(&mut linear),
                energy: Some(&mut energy),
            },
        )
        .unwrap();
    let (shape, theirs) = read_fixture("linear_default.npy");
    assert_eq!(shape, [frames, 513]);
    close(&linear, &theirs, "linear", 513);
    let (shape, theirs) = read_fixture("energy_default.npy");
    assert_eq!(shape, [frames]);
    close(&energy, &theirs, "energy", 1);
    // The mel of the same call is the mel alone.
    let mut alone = Vec::new();
    ex.compute_into(&x, &mut alone).unwrap();
    assert_eq!(mel, alone);
}

#[test]
fn only_the_arrays_asked_for_are_computed() {
    let x = samples("LJ001-0002");
    let mut ex = MelExtractor::new(&AudioSettings::default()).unwrap();
    let (mut mel, mut energy) = (Vec::new(), Vec::new());
    let frames = ex
        .compute_with(
            &x,
            &mut mel,
            Spectra {
                linear: None,
                energy: Some(&mut energy),
            },
        )
        .unwrap();
    assert_eq!(energy.len(), frames);
    // The full-spectrum call left nothing behind for the next mel-only one.
    let mut again = Vec::new();
    ex.compute_into(&x, &mut again).unwrap();
    assert_eq!(mel, again);
}

/// F0 on the mel's grid (the same frame count) by `method`.
fn track(clip: &str, method: PitchMethod) -> (Vec<f32>, Vec<u8>) {
    let x = samples(clip);
    let settings = AudioSettings::default();
    let frames = MelExtractor::new(&settings).unwrap().frames_for(x.len());
    let pitch = PitchSettings {
        method,
        ..PitchSettings::default()
    };
    let mut yin = PitchTracker::new(&pitch, 22050, 256, 0).unwrap();
    let (mut f0, mut voiced) = (Vec::new(), Vec::new());
    yin.compute_into(&x, frames, &mut f0, &mut voiced);
    (f0, voiced)
}

#[test]
fn f0_matches_librosa_yin() {
    for clip in CLIPS {
        let (f0, _) = track(clip, PitchMethod::Yin);
        let (shape, theirs) = read_fixture(&format!("yin_{clip}.npy"));
        assert_eq!(shape, [f0.len()], "{clip}: frames");
        let off: Vec<usize> = (0..f0.len())
            .filter(|&t| (f64::from(f0[t]) / f64::from(theirs[t]) - 1.0).abs() > 1e-3)
            .collect();
        eprintln!(
            "{clip}: {} of {} frames differ from librosa.yin by more than 0.1 %: {:?}",
            off.len(),
            f0.len(),
            off.iter()
                .map(|&t| (t, f0[t], theirs[t]))
                .take(5)
                .collect::<Vec<_>>()
        );
        assert!(
            off.len() * 100 <= f0.len(),
            "{clip}: {} of {} frames off",
            off.len(),
            f0.len()
        );
    }
}

#[test]
fn f0_agrees_with_librosa_pyin_on_frames_both_call_voiced() {
    let (mut frames, mut both, mut within, mut flags_differ) = (0usize, 0usize, 0usize, 0usize);
    for clip in CLIPS {
        let (f0, voiced) = track(clip, PitchMethod::Pyin);
        let (shape, theirs) = read_fixture(&format!("pyin_{clip}.npy"));
        assert_eq!(shape, [f0.len(), 2], "{clip}: frames");
        let (mut b, mut w, mut d) = (0, 0, 0);
        for (t, row) in theirs.chunks_exact(2).enumerate() {
            let theirs_voiced = row[1] == 1.0;
            if (voiced[t] == 1) != theirs_voiced {
                d += 1;
            }
            if voiced[t] == 1 && theirs_voiced {
                b += 1;
                if (f64::from(f0[t]) / f64::from(row[0]) - 1.0).abs() <= 0.01 {
                    w += 1;
                }
            } else if voiced[t] == 0 {
                assert_eq!(f0[t], 0.0, "{clip}: frame {t}: unvoiced F0 is 0");
            }
        }
        eprintln!(
            "{clip}: {b} frames voiced in both of {}, {d} with another voicing; within 1 % \
             on {w}",
            f0.len()
        );
        frames += f0.len();
        both += b;
        within += w;
        flags_differ += d;
    }
    eprintln!(
        "all clips: within 1 % of pyin on {within} of {both} frames both call voiced; \
         voicing differs on {flags_differ} of {frames} frames"
    );
    // pyin calls about two thirds of LJSpeech's frames voiced.
    assert!(both * 2 > frames, "{both} of {frames} voiced in both");
    assert!(within * 100 >= both * 95, "{within} of {both}");
    assert!(flags_differ * 100 <= frames, "{flags_differ} of {frames}");
}

#[test]
fn pitch_settings_out_of_range_are_refused_by_name() {
    let bad = |s: PitchSettings| {
        PitchTracker::new(&s, 22050, 256, 0)
            .unwrap_err()
            .to_string()
    };
    let d = PitchSettings::default();
    assert!(bad(PitchSettings { fmin: 0.0, ..d }).contains("`f0_min`"));
    assert!(bad(PitchSettings { fmax: 20000.0, ..d }).contains("`f0_max`"));
    assert!(bad(PitchSettings { fmax: 50.0, ..d }).contains("`f0_max`"));
    let msg = bad(PitchSettings {
        fmin: 5.0,
        frame_length: 16,
        ..d
    });
    assert!(msg.contains("`f0_frame_length`"), "{msg}");
}

#[test]
fn a_pure_tone_gives_its_frequency_and_silence_is_unvoiced() {
    let sr = 22050.0f32;
    let mut x: Vec<f32> = (0..22050)
        .map(|i| (2.0 * std::f32::consts::PI * 220.0 * i as f32 / sr).sin() * 0.5)
        .collect();
    x.extend(std::iter::repeat_n(0.0, 22050));
    let mut yin = PitchTracker::new(&PitchSettings::default(), 22050, 256, 0).unwrap();
    let (mut f0, mut voiced) = (Vec::new(), Vec::new());
    yin.compute_into(&x, 1 + x.len() / 256, &mut f0, &mut voiced);
    // Frames wholly inside the tone.
    for (t, (&v, &hz)) in voiced.iter().zip(&f0).enumerate().take(70).skip(8) {
        assert_eq!(v, 1, "frame {t}");
        // pYIN's bins are 10 cents apart: within 0.3 %.
        assert!((hz - 220.0).abs() < 0.7, "frame {t}: {hz}");
    }
    // Frames wholly inside the silence.
    for (t, &v) in voiced.iter().enumerate().take(170).skip(95) {
        assert_eq!(v, 0, "frame {t}");
    }
}
