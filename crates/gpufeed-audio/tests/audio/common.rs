//! Paths and comparison helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use gpufeed_audio::{AudioError, npy};

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `shared/data/ljspeech-mini/wavs/<name>`; fails with a clear message when the shared
/// data folder is not beside the repository.
pub fn ljspeech_wav(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini/wavs");
    assert!(
        dir.is_dir(),
        "{} is missing: these tests need the shared test data (shared/data/ljspeech-mini) \
         checked out beside the repository, as CI does",
        dir.display()
    );
    dir.join(name)
}

/// The message is one line and names the file.
pub fn assert_message(e: &AudioError, path: &Path, needle: &str) {
    let msg = e.to_string();
    eprintln!("message: {msg}");
    assert!(!msg.contains('\n'), "multi-line message: {msg}");
    assert!(
        msg.contains(&path.display().to_string()),
        "no file name in: {msg}"
    );
    assert!(msg.contains(needle), "`{needle}` not in: {msg}");
}

/// A fixture array with its shape.
pub fn read_fixture(name: &str) -> (Vec<usize>, Vec<f32>) {
    npy::read_f32(&fixture(name))
        .unwrap_or_else(|e| panic!("{e} (regenerate with tests/fixtures/make_fixtures.py)"))
}

/// Largest absolute and relative differences between `ours` and `theirs`, the relative one
/// over elements `>= floor`.
#[derive(Debug, Clone, Copy)]
pub struct Diff {
    pub max_abs: f64,
    pub max_rel: f64,
}

pub fn diff(ours: &[f32], theirs: &[f32], floor: f64) -> Diff {
    assert_eq!(ours.len(), theirs.len(), "lengths differ");
    let mut d = Diff {
        max_abs: 0.0,
        max_rel: 0.0,
    };
    for (&a, &b) in ours.iter().zip(theirs) {
        let (a, b) = (f64::from(a), f64::from(b));
        let e = (a - b).abs();
        d.max_abs = d.max_abs.max(e);
        if b.abs() >= floor {
            d.max_rel = d.max_rel.max(e / b.abs());
        }
    }
    d
}
