//! Figures written for people: shares, durations and sizes, the same way in every
//! command's text and report.
//!
//! Where two behaviours are wanted they are two functions: [`pct`] gives a share the
//! digits it needs (`38 %`, `4.2 %`, `0.31 %`), for prose; [`pct1`] always one decimal
//! (`38.0 %`), for columns and verdict lines that are compared side by side.

/// `38 %`, `4.2 %`, `0.31 %`: a share (0..1) with the digits it needs; `n/a` when it is not
/// a number.
#[must_use]
pub fn pct(share: f64) -> String {
    let p = share * 100.0;
    if !p.is_finite() {
        "n/a".to_owned()
    } else if p.abs() >= 10.0 {
        format!("{p:.0} %")
    } else if p.abs() >= 1.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

/// `38.0 %`: a share (0..1) with one decimal. Never `-0.0 %` (the `-0.0` of an empty sum
/// prints as `0.0 %`).
#[must_use]
pub fn pct1(share: f64) -> String {
    format!("{:.1} %", 100.0 * share + 0.0)
}

/// `850 ms` or `1.50 s`; `n/a` when it is not a number.
#[must_use]
pub fn secs(s: f64) -> String {
    if !s.is_finite() {
        "n/a".to_owned()
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// `123 ms`, `12.3 ms`, `0.042 ms`: milliseconds with the digits they need; `n/a` when not
/// a number.
#[must_use]
pub fn ms(v: f64) -> String {
    if !v.is_finite() {
        "n/a".to_owned()
    } else if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.3} ms")
    }
}

/// `12.3 ms` or `1.50 s`: a duration given in microseconds (a profiler's unit), with one
/// decimal in ms, for columns of step and idle times.
#[must_use]
pub fn us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else {
        format!("{:.1} ms", us / 1e3)
    }
}

/// `1.5 GiB`, `12.0 MiB`, `800 KiB`, `12 B`: a size in binary units.
#[must_use]
#[allow(clippy::cast_precision_loss)] // sizes far below 2^52 bytes
pub fn bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let x = n as f64;
    if x >= K * K * K {
        format!("{:.1} GiB", x / (K * K * K))
    } else if x >= K * K {
        format!("{:.1} MiB", x / (K * K))
    } else if x >= K {
        format!("{:.0} KiB", x / K)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form() {
        assert_eq!(pct(0.384), "38 %");
        assert_eq!(pct(0.042), "4.2 %");
        assert_eq!(pct(0.0031), "0.31 %");
        assert_eq!(pct(f64::NAN), "n/a");
        assert_eq!(pct1(0.384), "38.4 %");
        assert_eq!(pct1(-0.0), "0.0 %");
        assert_eq!(secs(0.85), "850 ms");
        assert_eq!(secs(1.5), "1.50 s");
        assert_eq!(secs(f64::INFINITY), "n/a");
        assert_eq!(ms(123.4), "123 ms");
        assert_eq!(ms(12.34), "12.3 ms");
        assert_eq!(ms(0.0421), "0.042 ms");
        assert_eq!(us(12_345.0), "12.3 ms");
        assert_eq!(us(1_500_000.0), "1.50 s");
        assert_eq!(bytes(12), "12 B");
        assert_eq!(bytes(800 * 1024), "800 KiB");
        assert_eq!(bytes(12 * 1024 * 1024), "12.0 MiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024 / 2), "1.5 GiB");
    }
}
