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

/// Found by the `validate_fix` fuzz target (a false alarm of the target, kept as a case):
/// a lone `\r` is a YAML line break, so a key after it on the same `\n`-line is a key, not
/// part of the comment before it, and `--fix` renames it; the comment stays as it was.
#[test]
fn lone_carriage_return_starts_a_new_yaml_line() {
    use gpufeed_doctor::fix::plan;
    use gpufeed_doctor::validate::{Context, validate_text};
    let text = "model:\n  n_mels: 100   # differs\r  text/_encoder_dim: 500   # heads\n";
    let ctx = Context::default();
    let p = plan(
        &validate_text(text, std::path::Path::new("c.yaml"), &ctx),
        &ctx,
    )
    .unwrap();
    assert_eq!(
        p.fixed,
        "model:\n  n_mels: 100   # differs\r  text_encoder_dim: 500   # heads\n"
    );
    validate_fix::run(text.as_bytes());
}
