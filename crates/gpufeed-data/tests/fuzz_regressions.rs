//! Fuzzing's regressions for the dataset manifests and the feature cache: the seed corpora
//! of the `manifest` and `cache` fuzz targets (`fuzz/corpus/`), replayed through the
//! targets' own bodies (`fuzz/src/`, compiled here by path, so `cargo test` needs no
//! libFuzzer), the inputs the fuzzers found, and hostile sizes (a shard header claiming
//! 2^40 rows).

#[path = "../../../fuzz/src/cache.rs"]
mod cache;
#[path = "../../../fuzz/src/manifest.rs"]
mod manifest;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/scratch.rs"]
mod scratch;

use replay::{corpus_dir, replay};

fn corpus(target: &str) -> std::path::PathBuf {
    corpus_dir(env!("CARGO_MANIFEST_DIR"), target)
}

#[test]
fn manifest_corpus_replays() {
    assert!(replay(&corpus("manifest"), manifest::run) >= 4);
}

#[test]
fn cache_corpus_replays() {
    assert!(replay(&corpus("cache"), cache::run) >= 1);
}
