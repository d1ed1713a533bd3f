//! Float32 arrays in numpy's `.npy` format (C order, little-endian), so features written
//! here load with `np.load` and librosa's outputs load here.
//!
//! The format (numpy `lib/format.py`, "NPY format version 1.0"): the 6 bytes `\x93NUMPY`,
//! the version `1 0` (or `2 0` when the header needs more than 65535 bytes, with a 4-byte
//! length), a little-endian header length, then an ASCII Python dict
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (frames, n_mels), }` padded with
//! spaces and ended by `\n` so the data starts on a 64-byte boundary, then the values.
//!
//! [`write_f32`] is atomic: it writes a temporary file in the destination's directory and
//! renames it over the destination, so a reader never sees a half-written array, even if
//! the process dies mid-write. It does not `fsync`; a cache that must survive power loss
//! syncs once at the end (for example before writing its completion marker).
//!
//! # Example
//!
//! ```
//! use gpufeed_audio::npy;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("mel.npy");
//! npy::write_f32(&path, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])?;
//! let (shape, data) = npy::read_f32(&path)?;
//! assert_eq!(shape, vec![2, 3]);
//! assert_eq!(data[4], 4.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{Read as _, Write as _};
use std::path::Path;

use crate::AudioError;

const MAGIC: &[u8] = b"\x93NUMPY";
/// numpy pads the header so the data is aligned to this many bytes (`ARRAY_ALIGN`).
const ALIGN: usize = 64;

/// The header bytes (magic to final `\n`) for a float32 C-order array of `shape`.
fn header(shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [] => String::new(),
        [n] => format!("{n},"),
        _ => shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}");
    // Version 1.0 has a 2-byte length (prefix 10 bytes), 2.0 a 4-byte one (prefix 12).
    let padded_len = |prefix: usize| (prefix + dict.len() + 1).div_ceil(ALIGN) * ALIGN - prefix;
    let fits_v1 = padded_len(10) <= usize::from(u16::MAX);
    let prefix = if fits_v1 { 10 } else { 12 };
    let total = prefix + padded_len(prefix);
    while prefix + dict.len() + 1 < total {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    if fits_v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Writes `data` as a float32 array of `shape` (C order) to `path`, atomically.
///
/// # Errors
///
/// [`AudioError::ShapeMismatch`] when the product of `shape` is not `data.len()`;
/// [`AudioError::Io`] when the temporary file cannot be created, written or renamed.
pub fn write_f32(path: &Path, shape: &[usize], data: &[f32]) -> Result<(), AudioError> {
    let expected = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if expected != Some(data.len()) {
        return Err(AudioError::ShapeMismatch {
            path: path.to_path_buf(),
            shape: shape.to_vec(),
            expected: expected.unwrap_or(usize::MAX),
            actual: data.len(),
        });
    }
    // Unsynced (gpufeed-fs): a `.npy` is cheap to compute again, and `precompute --npy`
    // writes thousands; the rename alone keeps a reader from seeing half of one.
    gpufeed_fs::write_atomic_unsynced(path, |file| {
        file.write_all(&header(shape))?;
        if cfg!(target_endian = "little") {
            file.write_all(bytemuck::cast_slice(data))
        } else {
            let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
            file.write_all(&bytes)
        }
    })
    .map_err(|e| AudioError::io("write", path, e))?;
    Ok(())
}

/// Reads a float32 C-order `.npy` file: its shape and its values.
///
/// # Errors
///
/// [`AudioError::NotFound`] or [`AudioError::Io`] when the file cannot be read;
/// [`AudioError::Npy`] when it is not a `.npy` file, holds another dtype, is in Fortran
/// order, or its data is shorter or longer than its shape says.
pub fn read_f32(path: &Path) -> Result<(Vec<usize>, Vec<f32>), AudioError> {
    let mut file = crate::decode::open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| AudioError::io("read", path, e))?;
    parse(&bytes).map_err(|reason| AudioError::Npy {
        path: path.to_path_buf(),
        reason,
    })
}

fn parse(bytes: &[u8]) -> Result<(Vec<usize>, Vec<f32>), String> {
    if !bytes.starts_with(MAGIC) {
        return Err("it does not start with the .npy magic `\\x93NUMPY`".into());
    }
    let (len, start) = match bytes.get(6..8) {
        Some([1, 0]) => match bytes.get(8..10) {
            Some(b) => (usize::from(u16::from_le_bytes([b[0], b[1]])), 10),
            None => return Err("the header is truncated".into()),
        },
        Some([2 | 3, 0]) => match bytes.get(8..12) {
            Some(b) => (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12),
            None => return Err("the header is truncated".into()),
        },
        Some(v) => return Err(format!("unknown format version {}.{}", v[0], v[1])),
        None => return Err("the header is truncated".into()),
    };
    let dict = bytes
        .get(start..start + len)
        .ok_or("the header is truncated")?;
    let dict = std::str::from_utf8(dict).map_err(|_| "the header is not text")?;
    let descr = dict_value(dict, "descr").ok_or("the header has no `descr`")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    if descr != "<f4" {
        return Err(format!(
            "dtype `{descr}`, expected `<f4` (little-endian float32)"
        ));
    }
    match dict_value(dict, "fortran_order") {
        Some("False") => {}
        Some(other) => return Err(format!("fortran_order is `{other}`, expected C order")),
        None => return Err("the header has no `fortran_order`".into()),
    }
    let shape_text = dict_value(dict, "shape").ok_or("the header has no `shape`")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("shape `{shape_text}` is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("shape `{shape_text}` is not a tuple of sizes"))?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("shape `{shape_text}` is too large"))?;
    let data = &bytes[start + len..];
    if Some(data.len()) != count.checked_mul(4) {
        return Err(format!(
            "shape `{shape_text}` needs {count} values ({} bytes) but the file has {} bytes of data",
            count.saturating_mul(4),
            data.len()
        ));
    }
    let values = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((shape, values))
}

/// The text of `'key': value` in a numpy header dict, up to the next top-level comma
/// (a tuple's commas are inside parentheses).
fn dict_value<'a>(dict: &'a str, key: &str) -> Option<&'a str> {
    let at = dict
        .find(&format!("'{key}'"))
        .or_else(|| dict.find(&format!("\"{key}\"")))?;
    let rest = dict[at + key.len() + 2..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(rest[..=i].trim());
                }
            }
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_matches_numpy() {
        // np.save of np.zeros((87, 80), np.float32) starts with exactly these 128 bytes.
        let h = header(&[87, 80]);
        assert_eq!(h.len(), 128);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (87, 80), }"));
        assert!(text.ends_with(" \n"));
        assert_eq!(&h[..10], b"\x93NUMPY\x01\x00\x76\x00");
        assert!(header(&[5]).windows(4).any(|w| w == b"(5,)"));
        assert!(header(&[]).windows(2).any(|w| w == b"()"));
        assert_eq!(header(&[]).len() % ALIGN, 0);
    }

    #[test]
    fn round_trip_and_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        write_f32(&path, &[2, 2], &[1.0, -2.0, 3.5, f32::MIN_POSITIVE]).unwrap();
        write_f32(&path, &[3], &[7.0, 8.0, 9.0]).unwrap();
        assert_eq!(read_f32(&path).unwrap(), (vec![3], vec![7.0, 8.0, 9.0]));
        // Only the destination remains: the temporary file was renamed, not left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn shape_mismatch_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let e = write_f32(&path, &[2, 3], &[1.0; 5]).unwrap_err();
        assert!(matches!(
            e,
            AudioError::ShapeMismatch {
                expected: 6,
                actual: 5,
                ..
            }
        ));
        assert!(e.to_string().contains("a.npy"));
        assert!(!path.exists());
    }

    #[test]
    fn rejects_other_files() {
        assert!(parse(b"hello").unwrap_err().contains("magic"));
        let mut f8 = header(&[1]);
        let at = f8.windows(3).position(|w| w == b"<f4").unwrap();
        f8[at + 2] = b'8';
        f8.extend_from_slice(&[0; 8]);
        assert!(parse(&f8).unwrap_err().contains("<f8"));
        let mut short = header(&[4]);
        short.extend_from_slice(&[0; 12]);
        assert!(parse(&short).unwrap_err().contains("needs 4 values"));
        let e = read_f32(Path::new("/nonexistent/x.npy")).unwrap_err();
        assert!(matches!(e, AudioError::NotFound { .. }));
    }

    #[test]
    fn reads_a_numpy_written_header_with_double_quotes_and_spacing() {
        let dict = "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": ( 2 , 1 ) }\n";
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        b.extend_from_slice(dict.as_bytes());
        b.extend_from_slice(&1.5f32.to_le_bytes());
        b.extend_from_slice(&(-1.0f32).to_le_bytes());
        assert_eq!(parse(&b).unwrap(), (vec![2, 1], vec![1.5, -1.0]));
    }

    proptest! {
        #[test]
        fn header_round_trips(shape in proptest::collection::vec(0usize..50, 0..4)) {
            let n: usize = shape.iter().product();
            let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
            let mut bytes = header(&shape);
            prop_assert_eq!(bytes.len() % ALIGN, 0);
            bytes.extend(data.iter().flat_map(|v| v.to_le_bytes()));
            prop_assert_eq!(parse(&bytes).unwrap(), (shape, data));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&bytes);
        }
    }
}
