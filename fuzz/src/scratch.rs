//! A scratch folder per thread, reused by every run of a body that must give its reader a
//! path (the dataset manifest, the cache): a fresh temporary folder per run would cost more
//! than the read. Kept in `/dev/shm` when there is one, so runs touch no disk.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

thread_local! {
    static DIR: OnceCell<tempfile::TempDir> = const { OnceCell::new() };
}

/// Calls `f` with this thread's scratch folder (its name starts with `fuzz-`).
pub fn with_dir<T>(f: impl FnOnce(&Path) -> T) -> T {
    DIR.with(|cell| {
        let dir = cell.get_or_init(|| {
            let shm = Path::new("/dev/shm");
            let parent = if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            };
            match tempfile::Builder::new().prefix("fuzz-").tempdir_in(parent) {
                Ok(dir) => dir,
                Err(e) => panic!("cannot make a scratch folder: {e}"),
            }
        });
        f(dir.path())
    })
}

/// Writes `bytes` to `dir/name`, replacing what was there.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    #[allow(clippy::disallowed_methods)] // no fs-err here: a failure is a panic anyway
    if let Err(e) = std::fs::write(&path, bytes) {
        panic!("cannot write `{}`: {e}", path.display());
    }
    path
}
