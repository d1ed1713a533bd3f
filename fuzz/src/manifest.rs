//! Dataset manifests ([`gpufeed_data::manifest::Dataset::open`]): LJSpeech `metadata.csv`,
//! `manifest.jsonl` and `manifest.csv`.
//!
//! Input: one byte choosing the file (bits 0-1: 0 `metadata.csv`, 1 `manifest.jsonl`,
//! otherwise `manifest.csv`; bit 2: use the normalised text), then the file's bytes.

use std::path::{Component, Path, PathBuf};

use gpufeed_data::manifest::Dataset;

use crate::scratch;

/// Reads `data` as a dataset manifest.
pub fn run(data: &[u8]) {
    let Some((&choice, bytes)) = data.split_first() else {
        return;
    };
    let name = match choice & 3 {
        0 => "metadata.csv",
        1 => "manifest.jsonl",
        _ => "manifest.csv",
    };
    let normalized = choice & 4 != 0;
    scratch::with_dir(|dir| {
        let path = scratch::write(dir, name, bytes);
        match Dataset::open(&path, normalized) {
            Ok(dataset) => {
                for item in &dataset.items {
                    // The promise of the module: audio paths stay inside the dataset folder.
                    assert!(
                        inside(&dataset.audio_path(item), dir),
                        "line {}: audio path `{}` leaves the dataset folder",
                        item.line,
                        item.audio.display()
                    );
                    assert!(
                        !item.id.is_empty() && !item.text.trim().is_empty(),
                        "line {}: an item without id or text",
                        item.line
                    );
                }
                for problem in &dataset.problems {
                    assert!(problem.line >= 1);
                }
            }
            Err(e) => {
                let message = e.to_string();
                assert!(
                    message.contains(name),
                    "the error does not name the file: {message}"
                );
            }
        }
    });
}

/// Whether `path`, with its `.` and `..` resolved as text (no link followed), is a file
/// below `dir`.
fn inside(path: &Path, dir: &Path) -> bool {
    let mut resolved = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !resolved.pop() {
                    return false;
                }
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved.starts_with(dir) && resolved != dir
}
