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

/// The bytes of `path`, or, when it has more than `cap`, its size in words (`N bytes`, or
/// `more than C MiB` for a file whose size is not known before reading: a pipe, a device).
/// Never reads more than `cap + 1` bytes.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<Result<Vec<u8>, String>, DataError> {
    use std::io::Read as _;
    let file = open(path)?;
    let len = file.metadata().map_or(0, |m| m.len());
    if len > cap {
        return Ok(Err(format!("{len} bytes")));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| DataError::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Ok(Err(format!("more than {} MiB", cap >> 20)));
    }
    Ok(Ok(bytes))
}

/// `File::open`.
pub(crate) fn open(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|e| DataError::io(path, e))
}

/// `File::create` (the tests' sparse files).
#[cfg(test)]
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

/// Writes `bytes` to `path` atomically (gpufeed-fs): a temporary file beside it, synced,
/// then renamed over `path`. A crash leaves either the old file or the new one, never half
/// of one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    use std::io::Write as _;
    let pending = PendingFile::create(path)?;
    pending
        .file()
        .write_all(bytes)
        .map_err(|e| DataError::io(pending.tmp(), e))?;
    pending.commit()
}

/// A file being written under its temporary name (gpufeed-fs's `.NAME.tmp-PID-XXXXXX`,
/// hidden and never matching a cache file's pattern): [`PendingFile::commit`] syncs it and
/// renames it to its real name; dropped without a commit (an error, a panic), it is
/// removed, so a reader never sees half of it.
#[derive(Debug)]
pub(crate) struct PendingFile(gpufeed_fs::AtomicFile);

impl PendingFile {
    /// Creates the temporary file for `path`.
    pub(crate) fn create(path: &Path) -> Result<Self, DataError> {
        #[cfg(test)]
        if faults::disk_full(path) {
            // Some bytes land, then the disk is full: what a real ENOSPC looks like.
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let tmp = path.with_file_name(format!(
                ".{}.tmp-{}",
                name.unwrap_or_default(),
                std::process::id()
            ));
            let _ = fs::write(&tmp, b"partial");
            let _ = fs::remove_file(&tmp);
            return Err(DataError::io(&tmp, std::io::Error::from_raw_os_error(28)));
        }
        gpufeed_fs::AtomicFile::create(path)
            .map(Self)
            .map_err(|e| DataError::io(path, e))
    }

    pub(crate) fn file(&self) -> &File {
        self.0.as_file()
    }

    /// The temporary path, for error messages.
    pub(crate) fn tmp(&self) -> &Path {
        self.0.temp_path()
    }

    /// Syncs the file and renames it over its real name.
    pub(crate) fn commit(self) -> Result<(), DataError> {
        let path = self.0.path().to_path_buf();
        self.0.commit().map_err(|e| DataError::io(&path, e))
    }
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
