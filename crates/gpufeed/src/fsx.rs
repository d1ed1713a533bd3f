//! Files written whole or not at all.

use std::fs::File;
use std::path::Path;

use anyhow::{Context as _, Result};

/// Writes `path` through `write` into a temporary file in the same folder (mode 0644),
/// synced and renamed over `path` once whole (atomic on one file system): a failure never
/// leaves a half-written file, and the old one stays until the new one is complete.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let context = || format!("cannot write `{}`", path.display());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
        .with_context(context)?;
    write(tmp.as_file_mut()).with_context(context)?;
    tmp.as_file().sync_all().with_context(context)?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(context)?;
    Ok(())
}
