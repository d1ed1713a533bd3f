//! Fuzzing's regressions for audio decoding: the seed corpus of the `audio` fuzz target
//! (`fuzz/corpus/audio`: WAV, FLAC, MP3 and Ogg, each after the byte that picks the file
//! name's extension), replayed through the target's own body (`fuzz/src/audio.rs`, compiled
//! here by path, so `cargo test` needs no libFuzzer), and the inputs the fuzzer found.

#[path = "../../../fuzz/src/audio.rs"]
mod audio;
// The file writers of the `audio` tests; only the FLAC frames are used here.
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[allow(dead_code)]
#[path = "audio/write.rs"]
mod write;

use std::path::Path;

use gpufeed_audio::decode::decode_bytes;
use gpufeed_audio::{Audio, AudioError};
use replay::{corpus_dir, replay};

const MIB: u64 = 1 << 20;

/// A 16-bit mono PCM WAV at `rate` Hz whose `data` chunk claims `claimed` bytes and holds
/// `samples`.
fn wav(rate: u32, claimed: u32, samples: &[i16]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(b"RIFF");
    f.extend_from_slice(&claimed.saturating_add(36).to_le_bytes());
    f.extend_from_slice(b"WAVEfmt ");
    f.extend_from_slice(&16_u32.to_le_bytes());
    f.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    f.extend_from_slice(&1_u16.to_le_bytes()); // mono
    f.extend_from_slice(&rate.to_le_bytes());
    f.extend_from_slice(&(rate * 2).to_le_bytes());
    f.extend_from_slice(&2_u16.to_le_bytes());
    f.extend_from_slice(&16_u16.to_le_bytes());
    f.extend_from_slice(b"data");
    f.extend_from_slice(&claimed.to_le_bytes());
    for s in samples {
        f.extend_from_slice(&s.to_le_bytes());
    }
    f
}

fn decode(bytes: &[u8]) -> (Result<Audio, AudioError>, Option<u64>) {
    memory::peak_growth(|| decode_bytes(bytes, Path::new("claim.wav"), 22_050))
}

#[test]
fn audio_corpus_replays() {
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "audio");
    assert!(replay(&dir, audio::run) >= 6);
}

/// A WAV whose `data` chunk claims 4 GiB (2^31 samples) and holds 1 000: nothing is
/// allocated for the claim; what is there is decoded, or the file is called truncated.
#[test]
fn wav_claiming_4_gib_of_samples_is_bounded() {
    let samples: Vec<i16> = (0..1000).map(|i| (i * 30) as i16).collect();
    let file = wav(16_000, u32::MAX - 64, &samples);
    let (result, growth) = decode(&file);
    eprintln!(
        "WAV claiming 4 GiB in {} bytes: {:?}; peak resident memory +{growth:?} bytes",
        file.len(),
        result
            .as_ref()
            .map(|a| a.samples.len())
            .map_err(ToString::to_string)
    );
    match result {
        Ok(audio) => assert!(
            audio.samples.len() < 2000,
            "{} samples",
            audio.samples.len()
        ),
        Err(e) => assert!(e.to_string().contains("claim.wav"), "{e}"),
    }
    if let Some(growth) = growth {
        assert!(
            growth < 16 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// A WAV at 1 Hz: resampled to 22 050 Hz, each sample would become 22 050 (this 8 KB file,
/// 88 million samples and 3 GB resident before the fix). Refused, naming the file and the
/// rate, before anything is resampled.
#[test]
fn wav_at_one_hertz_is_refused() {
    let samples: Vec<i16> = (0..4000).map(|i| (i * 7) as i16).collect();
    let file = wav(1, 8000, &samples);
    let (result, growth) = decode(&file);
    eprintln!(
        "WAV at 1 Hz: {:?}; peak resident memory +{growth:?} bytes",
        result
            .as_ref()
            .map(|a| a.samples.len())
            .map_err(ToString::to_string)
    );
    let Err(
        e @ AudioError::Resample {
            from: 1,
            to: 22_050,
            ..
        },
    ) = result
    else {
        panic!("not refused: {result:?}");
    };
    assert!(
        e.to_string().contains("claim.wav")
            && e.to_string().contains("1 Hz is not an audio sample rate"),
        "{e}"
    );
    if let Some(growth) = growth {
        assert!(
            growth < 16 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
    // 2 kHz to 22 050 Hz (11 x) is still resampled.
    let file = wav(2000, 8000, &samples);
    let audio = decode(&file).0.unwrap();
    assert_eq!(audio.samples.len(), (4000_usize * 22_050).div_ceil(2000));
}

/// A FLAC of `frames` blocks of 65 535 samples, 16-bit mono at 44.1 kHz, each block one
/// constant subframe (the value 1000): 14 bytes a block, a decompression ratio of about
/// 18 000.
fn flac_of_constant_blocks(frames: u32) -> Vec<u8> {
    const BLOCK: u16 = 65_535;
    write::flac(
        44_100,
        1,
        BLOCK,
        0,
        (0..frames).map(|_| (BLOCK, vec![0x00, 0x03, 0xE8])),
    )
}

/// A decompression bomb, found by reading the decoder, not by the fuzzer (its inputs are
/// a few KB, too small to expand past its 2 GiB cap): FLAC blocks of one constant value
/// take 14 bytes for 65 535 samples. 2 000 of them (28 KB) took 2.4 GB resident and 110 s
/// in a debug build before the fix; a 1 MB file would decode to 20 GB. Refused once the
/// samples decoded pass `MAX_SAMPLES`, naming the file, in bounded memory; a short file of
/// such blocks (a clip of silence) still decodes.
#[test]
fn flac_of_constant_blocks_is_a_bomb_refused() {
    use gpufeed_audio::decode::MAX_SAMPLES;
    let bomb = flac_of_constant_blocks(2050);
    assert!(bomb.len() < 30_000, "{}", bomb.len());
    let (result, growth) =
        memory::peak_growth(|| decode_bytes(&bomb, Path::new("bomb.flac"), 22_050));
    let e = result.expect_err("decoded");
    assert!(matches!(e, AudioError::TooLong { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "`bomb.flac` is too long for a training clip: it decodes to more than {MAX_SAMPLES} \
             samples (25.4 minutes at 44100 Hz, 1 channel), the most gpufeed decodes from one \
             file; cut it into clips"
        )
    );
    eprintln!("29 KB FLAC bomb: {e}; peak resident memory +{growth:?} bytes");
    if let Some(growth) = growth {
        // The samples decoded up to the limit (256 MiB of f32), and the vector's doubling.
        assert!(
            growth < 600 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
    let silence = decode_bytes(&flac_of_constant_blocks(3), Path::new("quiet.flac"), 22_050);
    assert_eq!(silence.unwrap().source_rate, 44_100);
    // Resampling is bounded the same way: 6.2 million samples at 2 kHz (12 MB of WAV)
    // would be 68 million at 22 050 Hz.
    let samples = vec![100_i16; 6_200_000];
    let file = wav(2000, 12_400_000, &samples);
    let e = decode(&file).0.expect_err("resampled");
    assert!(
        e.to_string().contains(
            "resampled from 2000 Hz to 22050 Hz it would have 68355000 samples, more than the \
             67108864"
        ),
        "{e}"
    );
}

/// Found by the `audio` fuzz target (its second 10-minute run, after 87 657 inputs): a WAV
/// header 101 bytes into a file (after junk, which symphonia's probe skips) whose `fmt `
/// chunk gives 64 785 channels of 16-bit samples. Symphonia multiplies them in `u16`: a
/// panic with overflow checks (caught by the decoder's last line of defence in gpufeed,
/// an abort under libFuzzer), a wrong block size without. The header check that refuses such
/// a chunk at the start of a file now finds it wherever the probe does.
#[test]
fn wav_header_after_junk_with_overflowing_channels_is_corrupt() {
    let path = corpus_dir(env!("CARGO_MANIFEST_DIR"), "audio")
        .join("regression-riff-after-junk-channel-overflow.bin");
    let data = fs_err::read(&path).unwrap();
    audio::run(&data);
    // The first byte picks the name's extension (2: `.mp3`).
    let e = decode_bytes(&data[1..], Path::new("junk.mp3"), 22_050).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`junk.mp3` is corrupt: the WAV header gives 64785 channels of 16-bit samples, more \
         than a frame can hold"
    );
}
