//! Sizes as people type them: `64MB`, `1GiB`, `4096` (bytes). The one parser of
//! `synth-job --rank-size`.
//!
//! Written by hand: a dozen lines, where a crate (`bytesize`, `parse-size`) would be a
//! dependency for one flag.
//!
//! ```
//! use gpufeed_stats::size::parse_size;
//! assert_eq!(parse_size("64MB").unwrap(), 64_000_000);
//! assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
//! assert_eq!(parse_size("4096").unwrap(), 4096);
//! assert!(parse_size("big").is_err());
//! assert!(parse_size("3 parsecs").is_err());
//! ```

/// A size in bytes: a number with an optional unit, `B`, `KB`/`MB`/`GB` (powers of 1000)
/// or `KiB`/`MiB`/`GiB` (of 1024).
///
/// # Errors
///
/// Text that is not a number with one of those units, named.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a size, rounded down
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as `64MB` or `1GiB`"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(format!(
                "`{u}` is not a unit: B, KB, MB, GB, KiB, MiB or GiB"
            ));
        }
    };
    Ok((n * scale) as u64)
}
