//! Decoding real clips, the codec fixtures, and broken files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use gpufeed_audio::{AudioError, decode};

use crate::common::{assert_message, fixture, ljspeech_wav};
use crate::write::{crc, ogg_page, wav};

/// Writes `bytes` to `name` in a fresh temporary directory and loads it at 22050 Hz.
fn load_bytes(
    name: &str,
    bytes: &[u8],
) -> (
    tempfile::TempDir,
    PathBuf,
    Result<decode::Audio, AudioError>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs_err::write(&path, bytes).unwrap();
    let result = decode::load(&path, 22050);
    (dir, path, result)
}

#[test]
fn all_ljspeech_mini_clips() {
    // Figures from shared/data/README.md: 32 clips, 4,889,504 samples, peaks 16312..31705.
    let mut total = 0usize;
    for i in 1..=32 {
        let path = ljspeech_wav(&format!("LJ001-{i:04}.wav"));
        let a = decode::load(&path, 22050).unwrap();
        assert_eq!(
            (a.sample_rate, a.source_rate, a.channels),
            (22050, 22050, 1)
        );
        assert_eq!(a.info.duration_s, a.samples.len() as f64 / 22050.0);
        assert_eq!(a.info.clipped_samples, 0);
        let peak = a.info.peak * 32768.0;
        assert!(
            (16312.0..=31705.0).contains(&peak),
            "{}: peak {peak}",
            path.display()
        );
        assert!(
            (0.0..0.6).contains(&a.info.silence_fraction),
            "{}: silence {}",
            path.display(),
            a.info.silence_fraction
        );
        total += a.samples.len();
    }
    assert_eq!(total, 4_889_504);
}

#[test]
fn info_serialises() {
    let a = decode::load(&ljspeech_wav("LJ001-0008.wav"), 22050).unwrap();
    let json = serde_json::to_value(&a.info).unwrap();
    for key in ["duration_s", "peak", "clipped_samples", "silence_fraction"] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
}

/// The first 0.25 s of LJ001-0008, which the codec fixtures encode.
fn quarter_second() -> Vec<f32> {
    let mut x = decode::load(&ljspeech_wav("LJ001-0008.wav"), 22050)
        .unwrap()
        .samples;
    x.truncate(22050 / 4);
    x
}

#[test]
fn flac_is_lossless() {
    let a = decode::load(&fixture("codec_pcm16.flac"), 22050).unwrap();
    assert_eq!(a.samples, quarter_second());
}

#[test]
fn stereo_24_bit_flac_is_averaged() {
    // left = x, right = -x / 2, so the mean is x / 4, exactly (all values are k / 2^16).
    let a = decode::load(&fixture("codec_stereo24.flac"), 22050).unwrap();
    assert_eq!(a.channels, 2);
    let expect: Vec<f32> = quarter_second().iter().map(|v| v / 4.0).collect();
    assert_eq!(a.samples, expect);
}

/// Signal-to-noise ratio of `ours` against `reference` at the best lag in `0..max_lag`, dB.
fn best_snr(ours: &[f32], reference: &[f32], max_lag: usize) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for lag in 0..max_lag {
        let n = reference.len().min(ours.len().saturating_sub(lag));
        let (mut signal, mut noise) = (0.0f64, 0.0f64);
        for i in 0..n {
            let (a, b) = (f64::from(ours[i + lag]), f64::from(reference[i]));
            signal += b * b;
            noise += (a - b) * (a - b);
        }
        let snr = 10.0 * (signal / noise.max(1e-30)).log10();
        if snr > best.1 {
            best = (lag, snr);
        }
    }
    best
}

#[test]
fn ogg_vorbis_decodes() {
    let a = decode::load(&fixture("codec_vorbis.ogg"), 22050).unwrap();
    let x = quarter_second();
    assert_eq!((a.source_rate, a.channels), (22050, 1));
    assert_eq!(a.samples.len(), x.len());
    let (lag, snr) = best_snr(&a.samples, &x, 1);
    eprintln!("vorbis: snr {snr:.1} dB at lag {lag}");
    assert!(snr > 10.0, "vorbis snr {snr} dB");
}

#[test]
fn mp3_decodes() {
    let a = decode::load(&fixture("codec_mp3.mp3"), 22050).unwrap();
    let x = quarter_second();
    assert_eq!((a.source_rate, a.channels), (22050, 1));
    // MP3 adds encoder delay and padding (up to a few frames of 576 samples).
    assert!(a.samples.len() >= x.len() && a.samples.len() < x.len() + 4 * 1152);
    let (lag, snr) = best_snr(&a.samples, &x, 3000);
    eprintln!("mp3: snr {snr:.1} dB at lag {lag}");
    assert!(snr > 10.0, "mp3 snr {snr} dB");
}

#[test]
fn opus_is_unsupported() {
    let path = fixture("codec_opus.ogg");
    let e = decode::load(&path, 22050).unwrap_err();
    assert!(matches!(e, AudioError::Unsupported { .. }), "{e}");
    assert_message(&e, &path, "unsupported");
    assert_message(&e, &path, "Opus");
}

/// Opus's identification header (RFC 7845 section 5.1): mono, 312 samples of pre-skip,
/// recorded at 48 kHz, no gain, channel mapping family 0.
fn opus_head() -> Vec<u8> {
    let mut p = b"OpusHead".to_vec();
    p.push(1); // version
    p.push(1); // channels
    p.extend_from_slice(&312u16.to_le_bytes());
    p.extend_from_slice(&48_000u32.to_le_bytes());
    p.extend_from_slice(&0i16.to_le_bytes());
    p.push(0);
    p
}

#[test]
fn ogg_crc_matches_a_real_page() {
    // The first page of the Vorbis fixture, CRC zeroed and computed again.
    let file = fs_err::read(fixture("codec_vorbis.ogg")).unwrap();
    let len = 27
        + usize::from(file[26])
        + file[27..27 + usize::from(file[26])]
            .iter()
            .map(|&l| usize::from(l))
            .sum::<usize>();
    let mut page = file[..len].to_vec();
    page[22..26].fill(0);
    assert_eq!(crc(32, 0x04C1_1DB7, &page).to_le_bytes(), file[22..26]);
}

/// An Ogg stream whose first packet is `OpusHead` is refused as Opus whatever its name, and
/// any `.opus` file is; the message says so and gives the command that converts it.
#[test]
fn opus_is_refused_by_name_with_the_command_to_convert_it() {
    let page = ogg_page(&opus_head());
    for name in ["speech.ogg", "speech.bin", "speech"] {
        let (_dir, path, r) = load_bytes(name, &page);
        let e = r.unwrap_err();
        assert!(matches!(e, AudioError::Unsupported { .. }), "{e}");
        assert_message(
            &e,
            &path,
            "it is Opus audio, which gpufeed does not decode yet",
        );
        let flac = path.with_extension("flac");
        let command = format!(
            "`ffmpeg -i {} -ar 48000 {}`",
            path.display(),
            flac.display()
        );
        assert_message(&e, &path, &command);
        assert_message(
            &e,
            &path,
            r#"`for f in *.opus; do ffmpeg -i "$f" -ar 48000 "${f%.opus}.flac"; done`"#,
        );
        // A span of it, and the bytes in memory, are refused the same way.
        let span = decode::Span {
            offset_s: 0.5,
            ..decode::Span::default()
        };
        let e = decode::load_span(&path, 22050, &span).unwrap_err();
        assert_message(&e, &path, "it is Opus audio");
        let e = decode::decode_bytes_span(&page, &path, 22050, &span).unwrap_err();
        assert_message(&e, &path, "it is Opus audio");
    }
    // A `.opus` file is refused by its name, before its bytes are looked at.
    let data: Vec<u8> = (0..64i16).flat_map(|v| v.to_le_bytes()).collect();
    let (_dir, path, r) = load_bytes("speech.OPUS", &wav(1, 1, 16000, 16, &data));
    assert_message(&r.unwrap_err(), &path, "it is Opus audio");
    // A name the shell would split is quoted in the command.
    let (_dir, path, r) = load_bytes("it's here.ogg", &page);
    assert_message(&r.unwrap_err(), &path, r"`ffmpeg -i '");
    assert!(path.display().to_string().contains("it's"));
}

#[test]
fn missing_file() {
    let path = Path::new("/nonexistent/dir/LJ999-0001.wav");
    let e = decode::load(path, 22050).unwrap_err();
    assert!(matches!(e, AudioError::NotFound { .. }), "{e}");
    assert_message(&e, path, "does not exist");
}

#[test]
fn a_directory_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = decode::load(dir.path(), 22050).unwrap_err();
    assert!(matches!(e, AudioError::Io { .. }), "{e}");
    assert_message(&e, dir.path(), "failed to read");
}

#[test]
fn zero_byte_file() {
    let (_dir, path, r) = load_bytes("empty.wav", &[]);
    let e = r.unwrap_err();
    assert!(matches!(e, AudioError::EmptyFile { .. }), "{e}");
    assert_message(&e, &path, "0 bytes");
}

#[test]
fn truncated_header() {
    let full = fs_err::read(ljspeech_wav("LJ001-0008.wav")).unwrap();
    for cut in [4, 12, 20, 30, 40] {
        let (_dir, path, r) = load_bytes("cut.wav", &full[..cut]);
        let e = r.unwrap_err();
        assert!(
            matches!(e, AudioError::Truncated { .. }),
            "cut at {cut}: {e}"
        );
        assert_message(&e, &path, "truncated");
    }
}

#[test]
fn truncated_data_keeps_what_is_there() {
    // The header promises 1000 bytes of data; 10 are present (5 samples), as when a copy
    // was interrupted. soundfile reads the 5 samples too.
    let mut bytes = wav(1, 1, 22050, 16, &[0; 1000]);
    bytes.truncate(44 + 10);
    let (_dir, _path, r) = load_bytes("short.wav", &bytes);
    assert_eq!(r.unwrap().samples.len(), 5);
}

#[test]
fn text_file_is_not_audio() {
    let text = b"LJ001-0001|Printing, in the only sense with which we are at present concerned\n";
    let (_dir, path, r) = load_bytes("metadata.wav", text);
    let e = r.unwrap_err();
    assert!(matches!(e, AudioError::NotAudio { .. }), "{e}");
    assert_message(&e, &path, "not an audio file");
}

#[test]
fn unsupported_wav_codecs() {
    // MPEG layer 3 inside WAV (format tag 0x0055), and an unknown tag.
    for tag in [0x0055u16, 0x1234] {
        let (_dir, path, r) = load_bytes("mp3-in-wav.wav", &wav(tag, 1, 22050, 16, &[0; 64]));
        let e = r.unwrap_err();
        assert!(
            matches!(e, AudioError::Unsupported { .. }),
            "tag {tag:#x}: {e}"
        );
        assert_message(&e, &path, "unsupported");
    }
}

#[test]
fn zero_length_audio() {
    let (_dir, path, r) = load_bytes("silent.wav", &wav(1, 1, 22050, 16, &[]));
    let e = r.unwrap_err();
    assert!(matches!(e, AudioError::NoSamples { .. }), "{e}");
    assert_message(&e, &path, "no audio samples");
}

/// Damaged copies of every fixture format: each decodes or errors, and no decoder panics
/// (a panic would be caught and turned into `Corrupt`, so the hook counts them).
#[test]
fn damaged_files_never_panic() {
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    // The hook is global; count only this test's thread (others run in parallel).
    let me = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == me {
            PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
    let files = [
        fixture("codec_pcm16.flac"),
        fixture("codec_stereo24.flac"),
        fixture("codec_vorbis.ogg"),
        fixture("codec_mp3.mp3"),
        fixture("codec_opus.ogg"),
        fixture("resample_16k.wav"),
    ];
    // A small deterministic generator, so a failure is reproducible.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for file in &files {
        let original = fs_err::read(file).unwrap();
        for round in 0..150 {
            let mut bytes = original.clone();
            // Flip a few bytes, mostly near the start where the headers are.
            for _ in 0..1 + round % 4 {
                let span = if round % 2 == 0 {
                    256.min(bytes.len())
                } else {
                    bytes.len()
                };
                let at = (next() as usize) % span;
                bytes[at] = next() as u8;
            }
            if round % 3 == 0 {
                let keep = (next() as usize) % bytes.len();
                bytes.truncate(keep);
            }
            let _ = decode::decode_bytes(&bytes, file, 22050);
        }
    }
    assert_eq!(
        PANICS.load(Ordering::SeqCst),
        0,
        "a decoder panicked on damaged input"
    );
}
