//! Spans: the part of a recording one dataset item is, in seconds, and the channel it takes.
//!
//! A Kaldi `segments` line, a NeMo manifest's `offset`/`duration`, a Lhotse supervision or
//! cut names a stretch of a longer recording (and Lhotse and Kaldi a channel of it). A
//! [`Span`] says the same to [`decode::load_span`](crate::decode::load_span); this module
//! turns its seconds into frames and checks them against the file. Decoding is
//! [`decode`](crate::decode)'s.

use std::fmt;

use serde::Serialize;

/// How far past the end of the file a span may end and still be cut at the end rather than
/// refused: 50 ms, seconds. A duration rounded to 10 ms is at most 5 ms long, and
/// segmentations exported at 20 ms frame steps up to 20 ms; 50 ms covers both with room, and
/// is still well under a syllable, so a span that is really misplaced (a recording cut short,
/// a segments file for another recording) is still caught.
pub const SPAN_END_TOLERANCE_S: f64 = 0.050;

/// The part of a file to decode: from `offset_s` seconds, for `duration_s` seconds (to the
/// end when `None`), channel `channel` (all channels averaged to mono when `None`).
///
/// `Span::default()` is the whole file mixed to mono.
///
/// # Frames
///
/// At the file's own rate `sr`, before any resampling: `start = round(sr · offset_s)` and
/// `end = start + round(sr · duration_s)`, the products taken in f64 and rounded half to
/// even (numpy's `np.round`). These are the formulas of `librosa.load`'s audioread loader
/// (`librosa/core/audio.py`, `__audioread_load`). Its soundfile loader, the one librosa
/// tries first (WAV, FLAC, Ogg, MP3 with libsndfile 1.1), truncates instead:
/// `int(offset * sr)` and `int(duration * sr)` frames. The two agree whenever the products
/// come out whole (offsets in milliseconds at 8, 16, 32 or 48 kHz, mostly); otherwise
/// rounding may start, or end, one frame later. Rounding is kept because the
/// product of a decimal offset and a rate is often a hair below the whole number it stands
/// for (`0.57 * 100` is `56.99999999999999`), which truncation turns into a frame too early.
///
/// # The end of the file
///
/// A span ending up to [`SPAN_END_TOLERANCE_S`] past the last frame is cut there; one
/// ending further past is refused, as is one starting at or past the end.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Span {
    /// Start, seconds from the start of the file; finite and `>= 0`.
    pub offset_s: f64,
    /// Length, seconds; `None` runs to the end of the file. Finite and `>= 0`.
    pub duration_s: Option<f64>,
    /// The channel to take (0 is the first); `None` averages all channels.
    pub channel: Option<u16>,
}

impl Span {
    /// Whether this is the whole file mixed to mono, the same as [`Span::default`].
    pub fn is_whole(&self) -> bool {
        self.covers_whole_file() && self.channel.is_none()
    }

    /// Whether the span runs from the start of the file to its end (whatever the channel).
    pub(crate) fn covers_whole_file(&self) -> bool {
        self.offset_s == 0.0 && self.duration_s.is_none()
    }

    /// Checks the offset and duration are finite and not negative.
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = |what: &str, v: f64| {
            (!v.is_finite() || v < 0.0).then(|| {
                format!("the {what} is {v} s; it must be a finite number of seconds, 0 or more")
            })
        };
        match bad("offset", self.offset_s).or_else(|| bad("duration", self.duration_s?)) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// The span's frames at `rate`: `(start, end)`, `end` `None` for "to the end of the file".
    /// Call [`Span::check`] first; a boundary too large for `u64` saturates (and so lies past
    /// the end of any file).
    pub(crate) fn frames(&self, rate: u32) -> (u64, Option<u64>) {
        let start = frames_at(self.offset_s, rate);
        let end = self
            .duration_s
            .map(|d| start.saturating_add(frames_at(d, rate)));
        (start, end)
    }
}

/// `round(rate · seconds)`, half to even, as a frame count (`seconds >= 0`).
fn frames_at(seconds: f64, rate: u32) -> u64 {
    // Float-to-int `as` saturates, and the product is >= 0 here.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let frames = (f64::from(rate) * seconds).round_ties_even() as u64;
    frames
}

/// "from 12.5 s for 3 s, channel 1", as error messages put it.
impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "from {} s ", self.offset_s)?;
        match self.duration_s {
            Some(d) => write!(f, "for {d} s")?,
            None => f.write_str("to the end")?,
        }
        if let Some(c) = self.channel {
            write!(f, ", channel {c}")?;
        }
        Ok(())
    }
}

/// Checks that `channel` (if any) is one of the file's `channels`.
pub(crate) fn check_channel(channel: Option<u16>, channels: u16) -> Result<(), String> {
    match channel {
        Some(c) if c >= channels => {
            let which = match channels {
                0 | 1 => "channel (0)".to_string(),
                2 => "channels (0 and 1)".to_string(),
                n => format!("channels (0 to {})", n - 1),
            };
            Err(format!(
                "channel {c} asked, the file has {channels} {which}"
            ))
        }
        _ => Ok(()),
    }
}

/// Checks a span of frames `[start, end)` against a file of `total` frames at `rate`: `Ok`
/// with the end to cut at (`total` for a span to the end, or one ending at most
/// [`SPAN_END_TOLERANCE_S`] past it), or why the span does not fit.
pub(crate) fn fit(start: u64, end: Option<u64>, total: u64, rate: u32) -> Result<u64, String> {
    if start >= total {
        return Err(starts_past_end(start, total, rate));
    }
    match end {
        Some(end) if end > total && seconds(end - total, rate) > SPAN_END_TOLERANCE_S => {
            Err(format!(
                "it ends at {:.3} s, {:.0} ms past the end, more than the {:.0} ms a span may \
                 run over and be cut; {}",
                seconds(end, rate),
                seconds(end - total, rate) * 1000.0,
                SPAN_END_TOLERANCE_S * 1000.0,
                file_ends(total, rate)
            ))
        }
        Some(end) => Ok(end.min(total)),
        None => Ok(total),
    }
}

/// Why a span starting at frame `start` does not fit a file of `total` frames at `rate`.
pub(crate) fn starts_past_end(start: u64, total: u64, rate: u32) -> String {
    format!(
        "it starts at {:.3} s (frame {start}), at or past the end; {}",
        seconds(start, rate),
        file_ends(total, rate)
    )
}

fn file_ends(total: u64, rate: u32) -> String {
    format!(
        "the file ends at {:.3} s ({total} frames at {rate} Hz)",
        seconds(total, rate)
    )
}

fn seconds(frames: u64, rate: u32) -> f64 {
    frames as f64 / f64::from(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(offset_s: f64, duration_s: Option<f64>) -> Span {
        Span {
            offset_s,
            duration_s,
            channel: None,
        }
    }

    #[test]
    fn default_is_whole() {
        assert!(Span::default().is_whole());
        assert!(!span(0.5, None).is_whole());
        assert!(!span(0.0, Some(1.0)).is_whole());
        let channel = Span {
            channel: Some(0),
            ..Span::default()
        };
        assert!(!channel.is_whole() && channel.covers_whole_file());
    }

    #[test]
    fn boundaries_round_half_to_even() {
        // 16 kHz: 1.5 ms is 24 frames; 100.03 ms is 1600.48 frames, so 1600.
        assert_eq!(span(0.0015, Some(0.25)).frames(16_000), (24, Some(4024)));
        assert_eq!(span(0.10003, None).frames(16_000), (1600, None));
        // Exact halves (at 2 Hz, a quarter second is half a frame): to the even frame.
        assert_eq!(span(0.25, None).frames(2), (0, None));
        assert_eq!(span(0.75, None).frames(2), (2, None));
        // The end is start + round(duration): 2.5 -> 2, then 0.5 -> 0 more.
        assert_eq!(span(1.25, Some(0.25)).frames(2), (2, Some(2)));
        // 0.57 s at 100 Hz is 56.99999999999999 in f64: rounded, not truncated.
        assert_eq!(span(0.57, Some(0.57)).frames(100), (57, Some(114)));
        // 22.05 kHz, 10 ms = 220.5 frames: ties to even.
        assert_eq!(span(0.010, Some(0.030)).frames(22_050), (220, Some(882)));
    }

    #[test]
    fn huge_durations_saturate() {
        assert_eq!(
            span(1.0, Some(1e300)).frames(48_000),
            (48_000, Some(u64::MAX))
        );
    }

    #[test]
    fn negative_and_non_finite_values_are_refused() {
        for bad in [
            span(-0.1, None),
            span(f64::NAN, None),
            span(f64::INFINITY, None),
            span(0.0, Some(-1.0)),
            span(0.0, Some(f64::NAN)),
        ] {
            let e = bad.check().unwrap_err();
            assert!(e.contains("finite number of seconds, 0 or more"), "{e}");
        }
        assert!(span(0.0, Some(0.0)).check().is_ok());
    }

    #[test]
    fn display_names_offset_duration_and_channel() {
        assert_eq!(span(12.5, Some(3.0)).to_string(), "from 12.5 s for 3 s");
        let s = Span {
            channel: Some(1),
            ..span(0.0, None)
        };
        assert_eq!(s.to_string(), "from 0 s to the end, channel 1");
    }

    #[test]
    fn channels_are_named() {
        assert!(check_channel(None, 2).is_ok());
        assert!(check_channel(Some(1), 2).is_ok());
        assert_eq!(
            check_channel(Some(2), 2).unwrap_err(),
            "channel 2 asked, the file has 2 channels (0 and 1)"
        );
        assert_eq!(
            check_channel(Some(1), 1).unwrap_err(),
            "channel 1 asked, the file has 1 channel (0)"
        );
        assert_eq!(
            check_channel(Some(7), 6).unwrap_err(),
            "channel 7 asked, the file has 6 channels (0 to 5)"
        );
    }

    #[test]
    fn fit_cuts_up_to_the_tolerance() {
        // 16 kHz, 1 s file: 50 ms is 800 frames.
        assert_eq!(fit(0, None, 16_000, 16_000), Ok(16_000));
        assert_eq!(fit(100, Some(16_000), 16_000, 16_000), Ok(16_000));
        assert_eq!(fit(100, Some(16_800), 16_000, 16_000), Ok(16_000));
        let e = fit(100, Some(16_801), 16_000, 16_000).unwrap_err();
        assert!(e.contains("50 ms past the end, more than the 50 ms"), "{e}");
        let e = fit(16_000, Some(16_100), 16_000, 16_000).unwrap_err();
        assert!(e.contains("at or past the end"), "{e}");
        assert!(
            e.contains("the file ends at 1.000 s (16000 frames at 16000 Hz)"),
            "{e}"
        );
    }
}
