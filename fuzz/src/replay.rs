//! Replays a seed corpus (`fuzz/corpus/<target>/`) through a target's body: what CI runs in
//! `cargo test`, so that an input that once crashed a reader fails the build if it ever
//! crashes it again.

use std::path::{Path, PathBuf};

/// The seed corpus of `target`, from a crate's `CARGO_MANIFEST_DIR` (`crates/<crate>`).
#[must_use]
pub fn corpus_dir(manifest_dir: &str, target: &str) -> PathBuf {
    Path::new(manifest_dir)
        .join("../../fuzz/corpus")
        .join(target)
}

/// Runs `body` on every file of `dir` (sorted, so a failure names the same file each
/// time) and returns how many there were. Panics when the folder cannot be read or holds no
/// file: a corpus that went missing must fail the test, not pass it silently.
#[allow(clippy::print_stderr, clippy::disallowed_methods)] // a test's log; the error names the path
pub fn replay(dir: &Path, body: fn(&[u8])) -> usize {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => panic!("cannot read the corpus `{}`: {e}", dir.display()),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus `{}` is empty", dir.display());
    for file in &files {
        let data = match std::fs::read(file) {
            Ok(data) => data,
            Err(e) => panic!("cannot read `{}`: {e}", file.display()),
        };
        // Name the input before running it: a panic inside `body` then says which file.
        eprintln!("replay {}", file.display());
        body(&data);
    }
    files.len()
}
