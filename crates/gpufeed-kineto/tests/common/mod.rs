//! The shared data set beside the repository, as the tests that read it list it.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;

use gpufeed_kineto::report::trace_files;

/// `shared/data/SUB`, which must exist.
pub fn shared(sub: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(sub);
    assert!(
        p.is_dir(),
        "`{}` is missing\n\nhint: these tests read the shared data set; check out shared/ \
         beside the repository (CI does)",
        p.display()
    );
    p
}

/// Every profiler trace folder of `kineto/` and `real-world/` (folders of GPU logs left
/// out), by name, with its trace files.
pub fn profiler_folders() -> Vec<(PathBuf, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for sub in ["kineto", "real-world"] {
        let mut dirs: Vec<PathBuf> = fs_err::read_dir(shared(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            if let Ok(files) = trace_files(&d) {
                out.push((d, files));
            }
        }
    }
    out
}
