//! Fuzzing's regressions for the Python lint: the seed corpus of the `lint` fuzz target
//! (`fuzz/corpus/lint`) and the lint's own fixtures, replayed through the target's own body
//! (`fuzz/src/lint.rs`, compiled here by path, so `cargo test` needs no libFuzzer).

#[path = "../../../fuzz/src/lint.rs"]
mod lint;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use replay::{corpus_dir, replay};

fn corpus(target: &str) -> std::path::PathBuf {
    corpus_dir(env!("CARGO_MANIFEST_DIR"), target)
}

#[test]
fn lint_corpus_replays() {
    assert!(replay(&corpus("lint"), lint::run) >= 1);
    // The lint's own fixtures are seeds too (`scripts/fuzz` passes their folder).
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint");
    assert!(replay(&fixtures, lint::run) >= 10);
}
