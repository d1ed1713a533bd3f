//! Audio decoding ([`gpufeed_audio::decode::decode_bytes`]): WAV, FLAC, MP3 and Ogg
//! (Vorbis), through symphonia, then the mix to mono and the resampler.
//!
//! Input: one byte choosing the file name's extension (the container probe's hint: 0 `wav`,
//! 1 `flac`, 2 `mp3`, 3 `ogg`, modulo 4), then the file's bytes.

use std::path::Path;

/// The sample rate the default config asks for.
const TARGET_RATE: u32 = 22_050;

/// Decodes the file in `data`.
pub fn run(data: &[u8]) {
    let Some((&hint, bytes)) = data.split_first() else {
        return;
    };
    let name = match hint % 4 {
        0 => "fuzz-audio.wav",
        1 => "fuzz-audio.flac",
        2 => "fuzz-audio.mp3",
        _ => "fuzz-audio.ogg",
    };
    match gpufeed_audio::decode::decode_bytes(bytes, Path::new(name), TARGET_RATE) {
        Ok(audio) => {
            assert_eq!(audio.sample_rate, TARGET_RATE);
            assert!(!audio.samples.is_empty());
            assert!(
                audio.samples.iter().all(|x| x.is_finite()),
                "non-finite output"
            );
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains(name),
                "the error does not name the file: {message}"
            );
        }
    }
}
