//! Fuzzing's regressions for the config reader: the seed corpus of the `config` fuzz target
//! (`fuzz/corpus/config`), replayed through the target's own body (`fuzz/src/config.rs`,
//! compiled here by path, so `cargo test` needs no libFuzzer), the inputs the fuzzer found,
//! and hostile sizes (alias bombs, deep nesting).

#[path = "../../../fuzz/src/config.rs"]
mod config;
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use std::path::Path;

use gpufeed_config::{ConfigError, ErrorKind};
use replay::{corpus_dir, replay};

const MIB: u64 = 1 << 20;

/// Checks `text` and returns its one error, with the growth of the peak resident memory.
fn one_error(text: &str) -> (ConfigError, Option<u64>) {
    let (result, growth) =
        memory::peak_growth(|| gpufeed_config::check(text, Path::new("bomb.yaml")));
    let Err(mut rejected) = result else {
        panic!("accepted");
    };
    assert_eq!(rejected.errors.len(), 1, "{:?}", rejected.errors);
    (rejected.errors.remove(0), growth)
}

#[test]
fn config_corpus_replays() {
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "config");
    assert!(replay(&dir, config::run) >= 10);
}

/// "Billion laughs": nine levels of ten aliases each would expand to 10^9 nodes. The reader
/// counts what aliases expand to and stops at its cap, naming the alias that crossed it,
/// in bounded memory and time.
#[test]
fn billion_laughs_alias_bomb_is_refused() {
    let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        let refs = vec![format!("*{prev}"); 10].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let (error, growth) = one_error(&text);
    eprintln!(
        "alias bomb of {} bytes: `{error}`; peak resident memory +{growth:?} bytes",
        text.len()
    );
    let ConfigError::Invalid { kind, line, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(*kind, ErrorKind::TooLarge, "{error}");
    // The cap (100 000 nodes in all) is crossed on line 5, by the ninth alias of `e`
    // (each `*d` is 1 111 nodes more than 10^4).
    assert_eq!(*line, 5, "{error}");
    assert!(error.to_string().contains("alias bomb"), "{error}");
    if let Some(growth) = growth {
        assert!(
            growth < 64 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// Nesting a million levels deep (flow sequences), or 500 (block mappings), is an error (the
/// parser's recursion limit or the depth cap), not a stack overflow.
#[test]
fn million_levels_of_nesting_are_refused() {
    let flow = "[".repeat(1_000_000);
    let mut block = String::new();
    for depth in 0..500 {
        block.push_str(&" ".repeat(depth));
        block.push_str("k:\n");
    }
    for text in [flow, block] {
        let (error, growth) = one_error(&text);
        eprintln!(
            "nesting, {} bytes: `{error}`; peak resident memory +{growth:?} bytes",
            text.len()
        );
        let ConfigError::Invalid { kind, .. } = &error else {
            panic!("{error}");
        };
        assert!(
            matches!(kind, ErrorKind::TooLarge | ErrorKind::Syntax),
            "{error}"
        );
        if let Some(growth) = growth {
            assert!(
                growth < 64 * MIB,
                "peak resident memory grew {growth} bytes"
            );
        }
    }
}

/// A fat alias bomb: few aliases (4 000, far below the node cap) of one 64 KiB scalar would
/// expand to 256 MiB of text. Refused for what the aliases expand to in bytes, in bounded
/// memory.
#[test]
fn aliases_of_a_large_scalar_are_refused() {
    let mut text = format!("a: &a {}\nb: [", "x".repeat(64 << 10));
    text.push_str(&vec!["*a"; 4000].join(", "));
    text.push_str("]\n");
    let (error, growth) = one_error(&text);
    eprintln!(
        "fat alias bomb of {} bytes: `{error}`; peak resident memory +{growth:?} bytes",
        text.len()
    );
    let ConfigError::Invalid { kind, line, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(*kind, ErrorKind::TooLarge, "{error}");
    assert_eq!(*line, 2, "{error}");
    if let Some(growth) = growth {
        assert!(
            growth < 64 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// Found by the `config` fuzz target: a syntax error at the end of a text without a final
/// line break was reported on a line after the last ("line 4" of a 3-line file). It is now
/// at the end of the last line.
#[test]
fn syntax_error_at_the_end_names_the_last_line() {
    let text = "model:\n  n_m 32els: 80\ndat*";
    let Err(rejected) = gpufeed_config::check(text, Path::new("c.yaml")) else {
        panic!("accepted");
    };
    let message = rejected.errors[0].to_string();
    assert!(
        message.starts_with("c.yaml:3:5: invalid YAML: "),
        "{message}"
    );
}

/// Found by the `config` fuzz target (a false alarm of the target's line count, kept as a
/// case): a lone `\r` ends a YAML line, so an error after it is on line 2. And the end of
/// a text whose last line break is a lone `\r` is on the line after it.
#[test]
fn lone_carriage_return_ends_a_line() {
    let message = |text: &str| match gpufeed_config::check(text, Path::new("c.yaml")) {
        Err(rejected) => rejected.errors[0].to_string(),
        Ok(_) => panic!("accepted: {text:?}"),
    };
    let m = message("data:\r  mat_xetlength");
    assert!(m.starts_with("c.yaml:2:3: `data` must be a mapping"), "{m}");
    let m = message("model:\r  n_m 32els: 80\r\ndat*");
    assert!(m.starts_with("c.yaml:3:5: invalid YAML: "), "{m}");
}

/// A config over `MAX_CONFIG_BYTES` (a dataset or a checkpoint passed by mistake) is refused
/// before it is read, and a device with no size (`/dev/zero`, endless) is read no further
/// than one byte past the cap: one error naming the file, in bounded memory.
#[test]
fn a_config_over_the_cap_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("model.ckpt");
    let file = fs_err::File::create(&big).unwrap();
    // Sparse: no disk space taken.
    file.set_len(gpufeed_config::MAX_CONFIG_BYTES + 1).unwrap();
    let (result, growth) = memory::peak_growth(|| gpufeed_config::check_file(&big));
    let rejected = result.expect_err("accepted");
    let [error] = rejected.errors.as_slice() else {
        panic!("{:?}", rejected.errors);
    };
    assert_eq!(error.kind(), Some(ErrorKind::TooLarge));
    let message = error.to_string();
    assert!(
        message.ends_with(
            "model.ckpt:1:1: a config may have 10 MiB and this file has 10485761 bytes, so it \
             was not read; pass the training config (a YAML file of a few KB), not a dataset \
             or a checkpoint"
        ),
        "{message}"
    );
    if let Some(growth) = growth {
        // Reading the file would add its 10 MiB; the unlocked tests running beside this one
        // have added about 1 MiB to the process's peak on their own (the cache twin, CI
        // stop 47), so the bound leaves them 4 MiB.
        assert!(growth < 4 * MIB, "peak resident memory grew {growth} bytes");
    }
    let zero = Path::new("/dev/zero");
    if zero.exists() {
        let (result, growth) = memory::peak_growth(|| gpufeed_config::check_file(zero));
        let rejected = result.expect_err("accepted");
        let message = rejected.errors[0].to_string();
        assert!(
            message.starts_with(
                "/dev/zero:1:1: a config may have 10 MiB and this file has more than that, so"
            ),
            "{message}"
        );
        if let Some(growth) = growth {
            assert!(
                growth < 32 * MIB,
                "peak resident memory grew {growth} bytes"
            );
        }
    }
}
