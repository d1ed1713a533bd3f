//! Files written whole or not at all: gpufeed's one atomic write.
//!
//! Every file gpufeed writes (a feature cache's shards and manifest, a `.npy`, a fixed
//! config, a report, a published schema) goes through here: the bytes go to a temporary
//! file in the destination's folder, which is renamed over the destination once complete.
//! A rename within one file system is atomic, so a reader sees the old file or the new one,
//! never half of one, and an error or a panic before the rename removes the temporary file.
//!
//! [`write_atomic`] also syncs the file to the disk before the rename (`fsync`), so that a
//! power loss right after leaves the old file or the whole new one.
//! [`write_atomic_unsynced`] leaves the sync out: for files that are cheap to make again
//! and written by the thousand (precomputed `.npy` features), where a sync per file would
//! cost more than the work.
//!
//! Temporary files are named `.NAME.tmp-PID-XXXXXX` (hidden, never matching the
//! destination's pattern); [`temp_owner`] reads the destination's name and the writer's PID
//! back, so a tool can clean up what a killed run left behind.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("report.json");
//! gpufeed_fs::write_atomic(&path, |f| std::io::Write::write_all(f, b"{}\n"))?;
//! assert_eq!(std::fs::read(&path)?, b"{}\n");
//! # Ok(())
//! # }
//! ```

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A file being written under its temporary name: [`AtomicFile::commit`] renames it to its
/// real name; dropped without a commit (an error, a panic), it is removed.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: tempfile::NamedTempFile,
}

/// The folder a file of `path` is written in (`.` for a bare file name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

impl AtomicFile {
    /// Creates the temporary file for `path` in the same folder, readable by all
    /// (mode 0644, as a file written with `File::create` under the usual umask).
    ///
    /// # Errors
    ///
    /// The I/O error of creating it (a missing folder, no permission, a full disk).
    pub fn create(path: &Path) -> io::Result<Self> {
        let name = path
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy());
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}.tmp-{}-", std::process::id()))
            .suffix("")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .tempfile_in(folder(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
        })
    }

    /// The temporary file, to write into.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// The temporary file, shared (positioned writes with `FileExt::write_all_at`, flags).
    #[must_use]
    pub fn as_file(&self) -> &File {
        self.tmp.as_file()
    }

    /// The temporary file's path (for messages).
    #[must_use]
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// The destination.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the file the permissions of `like` (an edited file keeps its mode). Nothing
    /// happens when `like` cannot be read.
    ///
    /// # Errors
    ///
    /// The I/O error of setting them.
    pub fn set_permissions_like(&self, like: &Path) -> io::Result<()> {
        match std::fs::metadata(like) {
            Ok(meta) => self.tmp.as_file().set_permissions(meta.permissions()),
            Err(_) => Ok(()),
        }
    }

    /// Syncs the file to the disk, then renames it over the destination.
    ///
    /// # Errors
    ///
    /// The I/O error of the sync or the rename; the temporary file is removed.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.as_file().sync_all()?;
        self.commit_unsynced()
    }

    /// Renames the file over the destination without syncing it first (see the crate
    /// docs for when that is wanted).
    ///
    /// # Errors
    ///
    /// The I/O error of the rename; the temporary file is removed.
    pub fn commit_unsynced(self) -> io::Result<()> {
        self.tmp.persist(&self.path).map(drop).map_err(|e| e.error)
    }
}

/// Writes `path` through `write`, synced and renamed over `path` once whole (see the
/// crate docs).
///
/// # Errors
///
/// The first I/O error of creating, writing, syncing or renaming; `path` is then as it was.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    write(f.file())?;
    f.commit()
}

/// As [`write_atomic`], without the sync before the rename (see the crate docs).
///
/// # Errors
///
/// The first I/O error of creating, writing or renaming; `path` is then as it was.
pub fn write_atomic_unsynced(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    write(f.file())?;
    f.commit_unsynced()
}

/// For a temporary file's name (`.NAME.tmp-PID-XXXXXX`, or `.NAME.tmp-PID` as gpufeed
/// 0.1's cache writer named them), the destination's name and the PID of the process that
/// wrote it; `None` for any other name.
#[must_use]
pub fn temp_owner(file_name: &str) -> Option<(&str, u32)> {
    let (name, rest) = file_name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    let pid = rest.split_once('-').map_or(rest, |(pid, _random)| pid);
    Some((name, pid.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        fs_err::write(&path, "old").unwrap();
        let err = write_atomic(&path, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn both_variants_replace_the_file_whole_with_mode_0644() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        for (i, synced) in [true, false].into_iter().enumerate() {
            let path = dir.path().join(format!("f{i}"));
            let body = |f: &mut File| f.write_all(b"new");
            if synced {
                write_atomic(&path, body).unwrap();
            } else {
                write_atomic_unsynced(&path, body).unwrap();
            }
            assert_eq!(fs_err::read_to_string(&path).unwrap(), "new");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_temporary_name_tells_its_destination_and_writer() {
        let dir = tempfile::tempdir().unwrap();
        let f = AtomicFile::create(&dir.path().join("shard-00001.safetensors")).unwrap();
        let name = f.temp_path().file_name().unwrap().to_str().unwrap();
        assert_eq!(
            temp_owner(name),
            Some(("shard-00001.safetensors", std::process::id()))
        );
        assert_eq!(temp_owner("shard-00001.safetensors"), None);
        assert_eq!(
            temp_owner(".manifest.json.tmp-42"),
            Some(("manifest.json", 42))
        );
        assert_eq!(temp_owner(".x.tmp-notapid-abc"), None);
        drop(f);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn permissions_follow_the_file_they_are_like() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let like = dir.path().join("cfg.yaml");
        fs_err::write(&like, "a: 1").unwrap();
        std::fs::set_permissions(&like, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut f = AtomicFile::create(&like).unwrap();
        f.file().write_all(b"a: 2").unwrap();
        f.set_permissions_like(&like).unwrap();
        f.commit().unwrap();
        let mode = std::fs::metadata(&like).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
