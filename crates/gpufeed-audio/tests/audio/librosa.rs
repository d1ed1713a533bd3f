//! Mel spectrograms and filterbanks against librosa 0.11 (fixtures from
//! `tests/fixtures/make_fixtures.py`, on the first 1.0 s of LJ001-0008).
//!
//! Tolerances:
//! - power / magnitude mels: the issue's `|a - b| <= 1e-4 |b| + 1e-6 max|b|` for every
//!   element, and, as a regression guard, a max relative error of 1e-5 over the elements
//!   `>= 1e-6 max|b|` (measured: 3.6e-7 at most, over all non-zero elements too);
//! - log mels: 1e-5 absolute (nats or decades) on every element (measured: 9.5e-7, one f32
//!   ulp at ln 1e-5);
//! - filterbanks: `1e-8 + 2^-23 |b|` per weight, i.e. librosa's own float32 rounding
//!   (measured: 1.5e-9 Slaney-normalised, 3e-8 on the height-1 HTK triangles).
//!
//! `cargo test -p gpufeed-audio --test audio -- --nocapture` prints the measured errors.

use gpufeed_audio::mel::MelExtractor;
use gpufeed_audio::{AudioSettings, LogKind, MelNorm, MelScale, decode};

use crate::common::{diff, ljspeech_wav, read_fixture};

/// The fixtures' input: the first 22050 samples of LJ001-0008 at its native 22050 Hz.
fn clip() -> Vec<f32> {
    let audio = decode::load(&ljspeech_wav("LJ001-0008.wav"), 22050).unwrap();
    assert_eq!(audio.source_rate, 22050);
    let mut x = audio.samples;
    x.truncate(22050);
    x
}

fn librosa_power() -> AudioSettings {
    AudioSettings::librosa_melspectrogram()
}

/// Compares a power (or magnitude) mel with the tolerance; returns the errors.
fn check_power(fixture: &str, settings: &AudioSettings, input: &[f32]) {
    let (shape, theirs) = read_fixture(fixture);
    let ours = MelExtractor::new(settings).unwrap().compute(input).unwrap();
    assert_eq!(shape, ours.shape().to_vec(), "{fixture}: shape");
    let max = theirs.iter().fold(0.0f64, |m, &v| m.max(f64::from(v)));
    for (i, (&a, &b)) in ours.data.iter().zip(&theirs).enumerate() {
        let (a, b) = (f64::from(a), f64::from(b));
        assert!(
            (a - b).abs() <= 1e-4 * b.abs() + 1e-6 * max,
            "{fixture}: frame {} band {}: {a} vs librosa {b}",
            i / shape[1],
            i % shape[1]
        );
    }
    let d = diff(&ours.data, &theirs, 1e-6 * max);
    let all = diff(&ours.data, &theirs, f64::MIN_POSITIVE);
    eprintln!(
        "{fixture}: max abs {:.2e} (max value {max:.3e}), max rel {:.2e} (elements >= 1e-6 \
         max), {:.2e} (all non-zero elements)",
        d.max_abs, d.max_rel, all.max_rel
    );
    assert!(
        d.max_rel <= 1e-5,
        "{fixture}: max relative error {:.2e}",
        d.max_rel
    );
}

/// Compares a log mel, absolute tolerance 1e-5.
fn check_log(fixture: &str, settings: &AudioSettings, input: &[f32]) {
    let (shape, theirs) = read_fixture(fixture);
    let ours = MelExtractor::new(settings).unwrap().compute(input).unwrap();
    assert_eq!(shape, ours.shape().to_vec(), "{fixture}: shape");
    let d = diff(&ours.data, &theirs, f64::INFINITY);
    eprintln!("{fixture}: max abs {:.2e} (log domain)", d.max_abs);
    assert!(
        d.max_abs <= 1e-5,
        "{fixture}: max abs error {:.2e}",
        d.max_abs
    );
}

#[test]
fn clip_decodes_like_soundfile() {
    // soundfile/librosa read 16-bit PCM as x / 32768: every sample is a multiple of 2^-15.
    let x = clip();
    assert_eq!(x.len(), 22050);
    assert!(
        x.iter()
            .all(|&v| (v * 32768.0).fract() == 0.0 && (-1.0..1.0).contains(&v))
    );
}

#[test]
fn librosa_melspectrogram_power() {
    check_power("mel_librosa_power.npy", &librosa_power(), &clip());
}

#[test]
fn default_settings_log_mel() {
    check_log("mel_default_log.npy", &AudioSettings::default(), &clip());
}

#[test]
fn htk_scale_without_norm() {
    let s = AudioSettings {
        mel_scale: MelScale::Htk,
        mel_norm: MelNorm::None,
        ..librosa_power()
    };
    check_power("mel_htk_nonorm.npy", &s, &clip());
}

#[test]
fn window_shorter_than_fft() {
    let s = AudioSettings {
        win_length: 800,
        hop_length: 200,
        ..librosa_power()
    };
    check_power("mel_win800_hop200.npy", &s, &clip());
}

#[test]
fn fmax_none_is_nyquist() {
    let s = AudioSettings {
        fmin: 20.0,
        fmax: None,
        ..librosa_power()
    };
    check_power("mel_fmax_none.npy", &s, &clip());
}

#[test]
fn uncentred_log10() {
    let s = AudioSettings {
        center: false,
        log: LogKind::Log10,
        ..AudioSettings::default()
    };
    check_log("mel_uncentred_log10.npy", &s, &clip());
}

#[test]
fn signal_shorter_than_the_padding_reflects_repeatedly() {
    let x = clip();
    check_log(
        "mel_short_reflect.npy",
        &AudioSettings::default(),
        &x[..300],
    );
}

fn check_filterbank(name: &str, settings: &AudioSettings) {
    let (span_shape, spans) = read_fixture(&format!("fb_{name}_spans.npy"));
    let (_, weights) = read_fixture(&format!("fb_{name}_weights.npy"));
    let m = MelExtractor::new(settings).unwrap();
    assert_eq!(span_shape, vec![settings.n_mels, 2]);
    let n_bins = m.n_bins();
    let mut offset = 0;
    let mut max_abs = 0.0f64;
    for (row_index, (row, span)) in m
        .filterbank()
        .chunks_exact(n_bins)
        .zip(spans.chunks_exact(2))
        .enumerate()
    {
        let (start, len) = (span[0] as usize, span[1] as usize);
        for (k, &w) in row.iter().enumerate() {
            let theirs = if (start..start + len).contains(&k) {
                f64::from(weights[offset + k - start])
            } else {
                0.0
            };
            let e = (w - theirs).abs();
            max_abs = max_abs.max(e);
            assert!(
                e <= 1e-8 + theirs.abs() / f64::from(1u32 << 23),
                "{name}: filter {row_index} bin {k}: {w} vs librosa {theirs}"
            );
            assert_eq!(
                w > 0.0,
                theirs > 0.0,
                "{name}: support of filter {row_index}"
            );
        }
        offset += len;
    }
    assert_eq!(offset, weights.len());
    eprintln!("fb_{name}: max abs {max_abs:.2e}");
}

#[test]
fn filterbanks_match_librosa_filters_mel() {
    check_filterbank("default", &AudioSettings::default());
    check_filterbank(
        "htk_nonorm",
        &AudioSettings {
            mel_scale: MelScale::Htk,
            mel_norm: MelNorm::None,
            ..AudioSettings::default()
        },
    );
    check_filterbank(
        "fmax_none",
        &AudioSettings {
            fmin: 20.0,
            fmax: None,
            ..AudioSettings::default()
        },
    );
    check_filterbank(
        "slaney_16k_512_40",
        &AudioSettings {
            sample_rate: 16000,
            n_fft: 512,
            win_length: 512,
            n_mels: 40,
            fmax: None,
            ..AudioSettings::default()
        },
    );
}
