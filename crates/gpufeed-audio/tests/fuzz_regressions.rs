//! Fuzzing's regressions for audio decoding: the seed corpus of the `audio` fuzz target
//! (`fuzz/corpus/audio`: WAV, FLAC, MP3 and Ogg, each after the byte that picks the file
//! name's extension), replayed through the target's own body (`fuzz/src/audio.rs`, compiled
//! here by path, so `cargo test` needs no libFuzzer), and the inputs the fuzzer found.

#[path = "../../../fuzz/src/audio.rs"]
mod audio;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use replay::{corpus_dir, replay};

#[test]
fn audio_corpus_replays() {
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "audio");
    assert!(replay(&dir, audio::run) >= 6);
}
