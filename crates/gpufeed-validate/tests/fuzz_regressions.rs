//! Fuzzing's regressions for `validate --fix`: the seed corpus of the `validate_fix` fuzz
//! target (`fuzz/corpus/`), replayed through the targets'
//! own bodies (`fuzz/src/`, compiled here by path, so `cargo test` needs no libFuzzer), and
//! the inputs the fuzzers found.

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

/// Found by the `validate_fix` fuzz target (a false alarm of the target, kept as a case):
/// a lone `\r` is a YAML line break, so a key after it on the same `\n`-line is a key, not
/// part of the comment before it, and `--fix` renames it; the comment stays as it was.
#[test]
fn lone_carriage_return_starts_a_new_yaml_line() {
    use gpufeed_validate::fix::plan;
    use gpufeed_validate::{Context, validate_text};
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

/// Found by the `validate_fix` fuzz target: two typo keys (`shuffle_buffer(multiplier`,
/// `enabje_xla`) are each close to a known key whose value they fail (`2` and a control
/// character, `NULLtrue`). `--fix` refused the whole file (`WouldBreak`, "please report
/// this"): one rename alone kept the error count (a type error replaced the padding error
/// that only a loaded config shows), both together added one. Now each rename that would
/// add an error the file did not have is left out, named with the bad value; every other
/// fix still applies, and the errors of the file stay what they were.
#[test]
fn typo_key_renamed_to_a_key_its_value_fails_is_left_out() {
    use gpufeed_validate::fix::plan;
    use gpufeed_validate::{Context, validate_text};
    let file = corpus("validate_fix").join("regression-typo-key-rename-reveals-bad-value.yaml");
    let data = fs_err::read(&file).unwrap();
    let text = std::str::from_utf8(&data).unwrap();
    let ctx = Context::new(Some(4), gpufeed_validate::CoresOf::TrainingMachine);
    let before = validate_text(text, std::path::Path::new("c.yaml"), &ctx);
    let p = plan(&before, &ctx).unwrap();
    // Neither rename applies: the file keeps its two typos and loads as it did.
    assert!(!p.changes(), "{}", p.fixed);
    let skipped: Vec<&str> = p.skipped.iter().map(|(_, why)| why.as_str()).collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0].starts_with(
            "renamed to `shuffle_buffer_multiplier`, the config would have a new error: "
        ) && skipped[0].contains("`data.shuffle_buffer_multiplier` must be a non-negative integer"),
        "{}",
        skipped[0]
    );
    // The value's control character is escaped, not sent to the terminal.
    assert!(skipped[0].contains("found `2\\u{10}`"), "{}", skipped[0]);
    assert!(
        skipped[1].contains("`data.enable_xla` must be `true` or `false`, found `NULLtrue`")
            && skipped[1].ends_with("correct the value, then rename the key"),
        "{}",
        skipped[1]
    );
    // `validate` without `--fix` says of each that `--fix` does not apply it, and why.
    let shown = gpufeed_validate::fix::preview(&before, &ctx);
    let not_fixed: Vec<&str> = shown
        .iter()
        .filter_map(|f| f.not_fixed.as_deref())
        .collect();
    assert_eq!(not_fixed, skipped);
    assert!(shown.iter().all(|f| f.edit.is_none()), "{shown:?}");
    // What remains is what the file had: its error, and the typos to correct by hand.
    let ids = |fs: &[gpufeed_findings::Finding]| fs.iter().map(|f| f.id).collect::<Vec<_>>();
    assert_eq!(ids(&p.remaining), ids(&before.findings));
    validate_fix::run(&data);
}
