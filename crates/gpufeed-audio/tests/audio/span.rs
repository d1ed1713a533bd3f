//! Spans of files (`decode::load_span`, `decode::decode_bytes_span`): sample-exact against
//! the whole-file decode for WAV and FLAC, close for MP3 and Vorbis; a WAV span read from a
//! file larger than the whole-file cap; channels; the 50 ms rule; bad spans.

use std::io::{Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use gpufeed_audio::decode::{self, MAX_AUDIO_FILE_BYTES, Span};
use gpufeed_audio::{Audio, AudioError};

use crate::common::{assert_message, fixture};
use crate::write::{verbatim, wav};

fn span(offset_s: f64, duration_s: Option<f64>) -> Span {
    Span {
        offset_s,
        duration_s,
        channel: None,
    }
}

/// `s` taking `channel`.
fn on(channel: Option<u16>, s: Span) -> Span {
    Span { channel, ..s }
}

/// `n` frames of `channels` deterministic pseudo-random 16-bit samples (xorshift), loud
/// enough that any misplaced sample shows.
fn noise(n: usize, channels: usize) -> Vec<i16> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n * channels)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 48) as i16
        })
        .collect()
}

fn pcm16(samples: &[i16]) -> Vec<u8> {
    samples.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs_err::write(&path, bytes).unwrap();
    path
}

/// A 16-bit WAV file `name` in `dir` of `frames` frames of [`noise`]: its path and samples.
fn noise_wav(
    dir: &Path,
    name: &str,
    channels: u16,
    rate: u32,
    frames: usize,
) -> (PathBuf, Vec<i16>) {
    let samples = noise(frames, usize::from(channels));
    let bytes = wav(1, channels, rate, 16, &pcm16(&samples));
    (write(dir, name, &bytes), samples)
}

/// The span's frames `[start, end)` at `rate`, by the rule the crate documents:
/// `round(rate · offset)` and `start + round(rate · duration)`, half to even.
fn bounds(s: &Span, rate: u32) -> (usize, Option<usize>) {
    let frames = |seconds: f64| (f64::from(rate) * seconds).round_ties_even() as usize;
    let start = frames(s.offset_s);
    (start, s.duration_s.map(|d| start + frames(d)))
}

/// Spans that fit a file of `seconds` seconds: from the start, inside, at an offset between
/// two samples, ending exactly at the end, to the end, and ending 30 ms past the end (cut).
fn spans_that_fit(seconds: f64) -> Vec<Span> {
    vec![
        span(0.0, Some(0.5)),
        span(0.25, Some(1.0)),
        span(1.000_03, Some(0.700_01)),
        span(seconds - 0.5, Some(0.5)),
        span(seconds - 0.75, None),
        span(seconds - 0.1, Some(0.13)),
    ]
}

/// Decodes every span of [`spans_that_fit`] from the file at `path` and from its bytes, at
/// the file's own rate, and checks each is exactly `whole[start..end]` of the whole decode
/// (mono or channel `channel`), with the measurements taken on the span.
fn assert_spans_exact(path: &Path, rate: u32, seconds: f64, channel: Option<u16>) {
    let whole = decode::load_span(path, rate, &on(channel, Span::default())).unwrap();
    assert_eq!(whole.samples.len(), (seconds * f64::from(rate)) as usize);
    let bytes = fs_err::read(path).unwrap();
    for s in spans_that_fit(seconds) {
        let s = on(channel, s);
        let (start, end) = bounds(&s, rate);
        let end = end.unwrap_or(usize::MAX).min(whole.samples.len());
        let expect = &whole.samples[start..end];
        let from_file = decode::load_span(path, rate, &s).unwrap();
        let from_bytes = decode::decode_bytes_span(&bytes, path, rate, &s).unwrap();
        for got in [&from_file, &from_bytes] {
            assert_eq!(got.samples.len(), expect.len(), "{s}");
            assert!(
                got.samples == expect,
                "{}: {s}: samples differ",
                path.display()
            );
            assert_eq!(got.info.duration_s, expect.len() as f64 / f64::from(rate));
            let peak = expect.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            // Mono: the peak of the channels, at least that of their mean.
            assert!(
                got.info.peak >= peak,
                "{s}: peak {} < {peak}",
                got.info.peak
            );
        }
    }
}

/// A span 200 ms past the end is refused, naming the file, the span and the file's end.
fn assert_past_the_end_refused(path: &Path, rate: u32, seconds: f64) {
    let s = span(seconds - 0.1, Some(0.3));
    let e = decode::load_span(path, rate, &s).unwrap_err();
    assert!(matches!(e, AudioError::Span { .. }), "{e}");
    assert_message(&e, path, &format!("{s}"));
    assert_message(&e, path, "200 ms past the end, more than the 50 ms");
    assert_message(&e, path, &format!("the file ends at {seconds:.3} s"));
    let s = span(seconds, Some(0.1));
    let e = decode::load_span(path, rate, &s).unwrap_err();
    assert_message(&e, path, "at or past the end");
    let s = span(seconds + 60.0, None);
    let e = decode::load_span(path, rate, &s).unwrap_err();
    assert_message(&e, path, "at or past the end");
}

#[test]
fn wav_spans_are_exact_mono() {
    let dir = tempfile::tempdir().unwrap();
    let (path, samples) = noise_wav(dir.path(), "mono.wav", 1, 16_000, 48_000);
    assert_spans_exact(&path, 16_000, 3.0, None);
    assert_past_the_end_refused(&path, 16_000, 3.0);
    // The samples are the file's: frame 16 000 is the first of a span at 1 s.
    let a = decode::load_span(&path, 16_000, &span(1.0, Some(0.001))).unwrap();
    let expect: Vec<f32> = samples[16_000..16_016]
        .iter()
        .map(|&v| f32::from(v) / 32768.0)
        .collect();
    assert_eq!(a.samples, expect);
}

#[test]
fn wav_spans_are_exact_stereo_and_per_channel() {
    let dir = tempfile::tempdir().unwrap();
    let (path, samples) = noise_wav(dir.path(), "stereo.wav", 2, 22_050, 2 * 22_050);
    assert_spans_exact(&path, 22_050, 2.0, None);
    assert_spans_exact(&path, 22_050, 2.0, Some(0));
    assert_spans_exact(&path, 22_050, 2.0, Some(1));
    // Channel 1 is the right channel as written, not a mix.
    let s = on(Some(1), span(0.5, Some(0.25)));
    let a = decode::load_span(&path, 22_050, &s).unwrap();
    let (start, end) = bounds(&s, 22_050);
    let right: Vec<f32> = samples[2 * start..2 * end.unwrap()]
        .chunks_exact(2)
        .map(|f| f32::from(f[1]) / 32768.0)
        .collect();
    assert_eq!(a.samples, right);
    assert_eq!(a.channels, 2);
    assert_eq!(
        a.info.peak,
        right.iter().fold(0.0, |m: f32, x| m.max(x.abs()))
    );
}

#[test]
fn flac_spans_are_exact() {
    // Blocks of 1000 frames (62.5 ms at 16 kHz): 48 frames in 3 s, 192 KB, enough for
    // symphonia's seek to bisect the file rather than scan it.
    let dir = tempfile::tempdir().unwrap();
    let samples = noise(48_000, 2);
    let bytes = verbatim(16_000, 2, 1000, &samples);
    let path = write(dir.path(), "stereo.flac", &bytes);
    // Verbatim frames: the whole decode is the samples written.
    let left = decode::load_span(&path, 16_000, &on(Some(0), Span::default())).unwrap();
    let written: Vec<f32> = samples
        .iter()
        .step_by(2)
        .map(|&v| f32::from(v) / 32768.0)
        .collect();
    assert_eq!(left.samples, written);
    assert_spans_exact(&path, 16_000, 3.0, None);
    assert_spans_exact(&path, 16_000, 3.0, Some(1));
    assert_past_the_end_refused(&path, 16_000, 3.0);
}

#[test]
fn flac_fixture_spans_are_exact() {
    // 24-bit stereo, 0.25 s, encoded by libFLAC (tests/fixtures/make_fixtures.py).
    let path = fixture("codec_stereo24.flac");
    let whole = decode::load(&path, 22_050).unwrap();
    for s in [
        span(0.1, Some(0.1)),
        span(0.2, None),
        span(0.123_45, Some(0.01)),
    ] {
        let (start, end) = bounds(&s, 22_050);
        let end = end.unwrap_or(whole.samples.len());
        let a = decode::load_span(&path, 22_050, &s).unwrap();
        assert!(a.samples == whole.samples[start..end], "{s}");
    }
}

/// The lossy codecs' spans against their whole decode: `(max |difference|, length)`.
fn lossy_span(path: &Path, s: &Span) -> (f32, usize, usize) {
    let whole = decode::load(path, 22_050).unwrap();
    let a = decode::load_span(path, 22_050, s).unwrap();
    let (start, end) = bounds(s, 22_050);
    let end = end.unwrap_or(whole.samples.len()).min(whole.samples.len());
    let expect = &whole.samples[start..end];
    let worst = a
        .samples
        .iter()
        .zip(expect)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    (worst, a.samples.len(), expect.len())
}

#[test]
fn mp3_and_vorbis_spans_match_the_whole_decode() {
    // 0.25 s fixtures at 22.05 kHz: MP3 frames of 576 samples (MPEG-2), Vorbis blocks.
    for name in ["codec_mp3.mp3", "codec_vorbis.ogg"] {
        let path = fixture(name);
        for s in [
            span(0.0, Some(0.05)),
            span(0.1, Some(0.05)),
            span(0.15, None),
            span(0.2, Some(0.03)),
            span(0.06, Some(0.1)),
        ] {
            let (worst, len, expect) = lossy_span(&path, &s);
            eprintln!("{name} {s}: {len} samples, max |difference| {worst:e}");
            assert_eq!(len, expect, "{name} {s}");
            assert_eq!(worst, 0.0, "{name} {s}");
        }
    }
}

/// A span of a WAV larger than the whole-file cap: the header claims (and the file has,
/// sparse) 640 MiB of 16 kHz mono, 5.8 hours; `load` refuses the file, a 0.5 s span an
/// hour in decodes from the bytes there, read without reading the rest.
#[test]
fn wav_span_reads_only_its_part_of_a_large_file() {
    const RATE: u32 = 16_000;
    let data_len: u32 = 640 << 20;
    assert!(u64::from(data_len) > MAX_AUDIO_FILE_BYTES);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.wav");
    let mut header = wav(1, 1, RATE, 16, &[]);
    header[4..8].copy_from_slice(&(36 + data_len).to_le_bytes());
    header[40..44].copy_from_slice(&data_len.to_le_bytes());
    let mut file = fs_err::File::create(&path).unwrap();
    file.write_all(&header).unwrap();
    file.set_len(44 + u64::from(data_len)).unwrap();
    // A marker one hour in: 800 frames (50 ms) of known samples, zeros (holes) around it.
    let marker = noise(800, 1);
    let at = 44 + 2 * 3600 * u64::from(RATE);
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&pcm16(&marker)).unwrap();
    drop(file);

    let e = decode::load(&path, RATE).unwrap_err();
    assert!(matches!(e, AudioError::TooLong { .. }), "{e}");
    let a: Audio = decode::load_span(&path, RATE, &span(3599.9, Some(0.5))).unwrap();
    assert_eq!(a.samples.len(), 8000);
    assert!(a.samples[..1600].iter().all(|&x| x == 0.0));
    let expect: Vec<f32> = marker.iter().map(|&v| f32::from(v) / 32768.0).collect();
    assert_eq!(a.samples[1600..2400], expect[..]);
    assert!(a.samples[2400..].iter().all(|&x| x == 0.0));
    // Measured on the span: 0.5 s, 90 % of it silent (the 10 ms blocks of zeros).
    assert_eq!(a.info.duration_s, 0.5);
    assert_eq!(a.info.silence_fraction, 0.9);
    // The end of the file is found from the header: 5.8 hours.
    let e = decode::load_span(&path, RATE, &span(30_000.0, Some(1.0))).unwrap_err();
    assert_message(
        &e,
        &path,
        "the file ends at 20971.520 s (335544320 frames at 16000 Hz)",
    );
    // A span is held to MAX_SAMPLES (70 minutes here), before anything is read.
    let e = decode::load_span(&path, RATE, &span(0.0, Some(4200.0))).unwrap_err();
    assert!(matches!(e, AudioError::TooLong { .. }), "{e}");
    assert_message(
        &e,
        &path,
        "the span is 67200000 frames of 1 channel(s), more than the",
    );
}

#[test]
fn a_span_is_resampled_like_a_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = noise_wav(dir.path(), "a.wav", 1, 16_000, 16_000);
    let a = decode::load_span(&path, 22_050, &span(0.25, Some(0.5))).unwrap();
    assert_eq!((a.sample_rate, a.source_rate), (22_050, 16_000));
    assert_eq!(a.samples.len(), 11_025);
    // The same as resampling the span's source samples.
    let source = decode::load_span(&path, 16_000, &span(0.25, Some(0.5))).unwrap();
    let expect = decode::resample(&source.samples, 16_000, 22_050, &path).unwrap();
    assert_eq!(a.samples, expect);
}

#[test]
fn bad_spans_are_refused_naming_the_file_and_span() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = noise_wav(dir.path(), "s.wav", 2, 8000, 8000);
    let refused = |s: Span, needle: &str| {
        let e = decode::load_span(&path, 8000, &s).unwrap_err();
        assert!(matches!(e, AudioError::Span { .. }), "{e}");
        assert_message(&e, &path, &s.to_string());
        assert_message(&e, &path, needle);
        let bytes = fs_err::read(&path).unwrap();
        let e = decode::decode_bytes_span(&bytes, &path, 8000, &s).unwrap_err();
        assert_message(&e, &path, needle);
    };
    let finite = "a finite number of seconds, 0 or more";
    refused(
        span(-0.5, Some(0.1)),
        &format!("the offset is -0.5 s; it must be {finite}"),
    );
    refused(span(f64::NAN, None), "the offset is NaN s");
    refused(span(0.1, Some(-1.0)), "the duration is -1 s");
    refused(span(0.1, Some(f64::INFINITY)), "the duration is inf s");
    refused(span(0.5, Some(0.0)), "it holds no samples at 8000 Hz");
    refused(
        span(1.0, Some(0.1)),
        "it starts at 1.000 s (frame 8000), at or past the end",
    );
    refused(span(5.0, None), "at or past the end");
    let channel = |c: u16| on(Some(c), span(0.1, Some(0.1)));
    refused(
        channel(2),
        "channel 2 asked, the file has 2 channels (0 and 1)",
    );
    // The whole file with a channel the file lacks, too.
    let e = decode::load_span(&path, 8000, &on(Some(5), Span::default())).unwrap_err();
    assert_message(&e, &path, "channel 5 asked");
    // A negative offset is refused before the file is looked at.
    let missing = dir.path().join("missing.wav");
    let e = decode::load_span(&missing, 8000, &span(-1.0, None)).unwrap_err();
    assert!(matches!(e, AudioError::Span { .. }), "{e}");
}

#[test]
fn spans_of_broken_files_are_the_whole_files_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = span(0.1, Some(0.1));
    let empty = write(dir.path(), "empty.wav", &[]);
    let e = decode::load_span(&empty, 8000, &s).unwrap_err();
    assert!(matches!(e, AudioError::EmptyFile { .. }), "{e}");
    let text = write(
        dir.path(),
        "text.wav",
        b"not audio at all, just a line of text\n",
    );
    let e = decode::load_span(&text, 8000, &s).unwrap_err();
    assert!(matches!(e, AudioError::NotAudio { .. }), "{e}");
    let e = decode::load_span(&dir.path().join("none.wav"), 8000, &s).unwrap_err();
    assert!(matches!(e, AudioError::NotFound { .. }), "{e}");
    // A WAV whose data ends early: the span is checked against the samples there.
    let mut bytes = wav(1, 1, 8000, 16, &pcm16(&noise(8000, 1)));
    bytes.truncate(44 + 2 * 4000);
    let short = write(dir.path(), "short.wav", &bytes);
    assert_eq!(
        decode::load_span(&short, 8000, &span(0.25, Some(0.25)))
            .unwrap()
            .samples
            .len(),
        2000
    );
    let e = decode::load_span(&short, 8000, &span(0.25, Some(0.5))).unwrap_err();
    assert_message(
        &e,
        &short,
        "the file ends at 0.500 s (4000 frames at 8000 Hz)",
    );
}
