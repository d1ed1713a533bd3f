//! Durations as people type them: `100ms`, `1s`, `60s`, `2m`, `0.5s`, or plain seconds
//! (`60`, `0.1`). The one parser of `--interval` for `trace`, `monitor` and `watch`.
//!
//! Written by hand rather than with `humantime`: that crate refuses plain seconds (`60`)
//! and fractions (`0.5s`), both of which people write for a sampling interval, and this is
//! a dozen lines.
//!
//! ```
//! use gpufeed_stats::duration::parse_duration;
//! assert_eq!(parse_duration("100ms").unwrap(), 0.1);
//! assert_eq!(parse_duration("60").unwrap(), 60.0);
//! assert_eq!(parse_duration("2m").unwrap(), 120.0);
//! assert!(parse_duration("fast").is_err());
//! ```

use std::fmt;

/// Why a duration does not parse. Its message names the text and the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not a number followed by an optional unit.
    Invalid(String),
    /// Zero or negative.
    NotPositive(String),
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Invalid(s) => write!(
                f,
                "`{s}` is not a duration: write a number with a unit, such as `100ms`, `1s`, \
                 `60s`, `2m` (units: ns, us, ms, s, m, h), or plain seconds such as `0.5`"
            ),
            DurationError::NotPositive(s) => {
                write!(
                    f,
                    "`{s}` is not a positive duration: it must be more than 0"
                )
            }
        }
    }
}

impl std::error::Error for DurationError {}

/// Seconds in `text`: a non-negative decimal number, optionally followed (spaces allowed)
/// by a unit `ns`, `us` (`µs`), `ms`, `s` (`sec`), `m` (`min`) or `h`; no unit means
/// seconds. Zero, negative, infinite and malformed values are errors.
pub fn parse_duration(text: &str) -> Result<f64, DurationError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let invalid = || DurationError::Invalid(text.to_owned());
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" | "mins" => 60.0,
        "h" | "hr" => 3600.0,
        _ => return Err(invalid()),
    };
    let s = value * scale;
    if !s.is_finite() {
        return Err(invalid());
    }
    if s <= 0.0 {
        return Err(DurationError::NotPositive(text.to_owned()));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn forms_people_write() {
        for (text, s) in [
            ("100ms", 0.1),
            ("1s", 1.0),
            ("60s", 60.0),
            ("60", 60.0),
            ("0.5", 0.5),
            ("1.5 s", 1.5),
            ("2m", 120.0),
            ("1h", 3600.0),
            ("250us", 250e-6),
            (" 10MS ", 0.01),
        ] {
            assert!((parse_duration(text).unwrap() - s).abs() < 1e-12, "{text}");
        }
    }

    #[test]
    fn bad_forms_are_named() {
        for text in [
            "",
            "ms",
            "fast",
            "1 fortnight",
            "1s2",
            "--1",
            "inf",
            "1e999",
        ] {
            let e = parse_duration(text).unwrap_err();
            assert!(e.to_string().contains(&format!("`{text}`")), "{e}");
        }
        assert_eq!(
            parse_duration("0s").unwrap_err(),
            DurationError::NotPositive("0s".into())
        );
        assert!(matches!(
            parse_duration("-1"),
            Err(DurationError::NotPositive(_))
        ));
    }

    proptest! {
        /// Milliseconds written as `Nms` and as seconds agree.
        #[test]
        fn units_agree(ms in 1u32..10_000_000) {
            let a = parse_duration(&format!("{ms}ms")).unwrap();
            let b = parse_duration(&format!("{}", f64::from(ms) / 1e3)).unwrap();
            prop_assert!((a - b).abs() <= 1e-9 * b);
        }

        /// Any text: an answer or an error, never a panic, and an answer is positive.
        #[test]
        fn never_panics(text in "\\PC{0,12}") {
            if let Ok(s) = parse_duration(&text) {
                prop_assert!(s > 0.0 && s.is_finite());
            }
        }
    }
}
