//! Fuzzing's regressions for audio decoding: the seed corpus of the `audio` fuzz target
//! (`fuzz/corpus/audio`: WAV, FLAC, MP3 and Ogg, each after the byte that picks the file
//! name's extension), replayed through the target's own body (`fuzz/src/audio.rs`, compiled
//! here by path, so `cargo test` needs no libFuzzer), and the inputs the fuzzer found.

#[path = "../../../fuzz/src/audio.rs"]
mod audio;
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

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
