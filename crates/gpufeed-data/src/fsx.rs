//! File operations whose errors carry the path, as [`DataError::Io`].
//!
//! The workspace prefers fs-err for this, but fs-err writes the path into the error's
//! message, and `DataError::Io` names it again; these thin wrappers over `std::fs` keep the
//! message to one path and the OS reason.
#![allow(clippy::disallowed_methods)]

use std::fs::{self, File, Metadata};
use std::path::Path;

use crate::error::DataError;

/// `fs::read`.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, DataError> {
    fs::read(path).map_err(|e| DataError::io(path, e))
}

/// `File::open`.
pub(crate) fn open(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|e| DataError::io(path, e))
}

/// `File::create`.
pub(crate) fn create(path: &Path) -> Result<File, DataError> {
    File::create(path).map_err(|e| DataError::io(path, e))
}

/// `fs::metadata`.
pub(crate) fn metadata(path: &Path) -> Result<Metadata, DataError> {
    fs::metadata(path).map_err(|e| DataError::io(path, e))
}

/// `fs::create_dir_all`.
pub(crate) fn create_dir_all(path: &Path) -> Result<(), DataError> {
    fs::create_dir_all(path).map_err(|e| DataError::io(path, e))
}

/// `fs::rename`, naming the destination.
pub(crate) fn rename(from: &Path, to: &Path) -> Result<(), DataError> {
    fs::rename(from, to).map_err(|e| DataError::io(to, e))
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed
/// over `path`. A crash leaves either the old file or the new one, never half of one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    use std::io::Write as _;
    write_atomic_with(path, |tmp| {
        let mut f = create(tmp)?;
        f.write_all(bytes).map_err(|e| DataError::io(tmp, e))
    })
}

/// Like [`write_atomic`], for a writer that creates the file at the path it is given.
/// The file is synced before the rename; on failure the temporary file is removed.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), DataError>,
) -> Result<(), DataError> {
    let tmp = tmp_name(path);
    let result = (|| {
        #[cfg(test)]
        if faults::disk_full(path) {
            // Some bytes land, then the disk is full: what a real ENOSPC looks like.
            let _ = fs::write(&tmp, b"partial");
            return Err(DataError::io(&tmp, std::io::Error::from_raw_os_error(28)));
        }
        write(&tmp)?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| DataError::io(&tmp, e))?;
        rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The temporary name used while `path` is being written: `.NAME.tmp-PID`, hidden and
/// never matching a cache file's pattern, so a reader cannot mistake it for a real one.
pub(crate) fn tmp_name(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Fault injection for tests: writes under a registered folder fail with ENOSPC.
#[cfg(test)]
pub(crate) mod faults {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static DISK_FULL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// Makes every atomic write under `dir` fail as if the disk were full.
    pub(crate) fn set_disk_full(dir: &Path) {
        DISK_FULL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(dir.to_path_buf());
    }

    pub(super) fn disk_full(path: &Path) -> bool {
        DISK_FULL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|d| path.starts_with(d))
    }
}
