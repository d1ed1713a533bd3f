//! Fuzzing's regressions for the config reader: the seed corpus of the `config` fuzz target
//! (`fuzz/corpus/config`), replayed through the target's own body (`fuzz/src/config.rs`,
//! compiled here by path, so `cargo test` needs no libFuzzer), the inputs the fuzzer found,
//! and hostile sizes (alias bombs, deep nesting).

#[path = "../../../fuzz/src/config.rs"]
mod config;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use replay::{corpus_dir, replay};

#[test]
fn config_corpus_replays() {
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "config");
    assert!(replay(&dir, config::run) >= 10);
}
