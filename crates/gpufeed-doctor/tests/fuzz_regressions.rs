//! Fuzzing's regressions for `validate --fix` and the Python lint: the seed corpora of the
//! `validate_fix` and `lint` fuzz targets (`fuzz/corpus/`), replayed through the targets'
//! own bodies (`fuzz/src/`, compiled here by path, so `cargo test` needs no libFuzzer), and
//! the inputs the fuzzers found.

#[path = "../../../fuzz/src/lint.rs"]
mod lint;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/validate_fix.rs"]
mod validate_fix;

use replay::{corpus_dir, replay};

fn corpus(target: &str) -> std::path::PathBuf {
    corpus_dir(env!("CARGO_MANIFEST_DIR"), target)
}

#[test]
fn validate_fix_corpus_replays() {
    assert!(replay(&corpus("validate_fix"), validate_fix::run) >= 4);
}

#[test]
fn lint_corpus_replays() {
    assert!(replay(&corpus("lint"), lint::run) >= 1);
    // The lint's own fixtures are seeds too (`scripts/fuzz` passes their folder).
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint");
    assert!(replay(&fixtures, lint::run) >= 10);
}
