//! The per-item arrays a cache holds besides the mel and the tokens, chosen by name:
//! `features: [mel, linear, wav, energy, f0]` in the config, `--features` on the command
//! line, `features=` in Python.
//!
//! | name | tensors | dtype | rows per item | columns |
//! |---|---|---|---|---|
//! | `mel` | `mel` | f32 | frames | `n_mels` (always cached) |
//! | `mel:float16`, `mel:bfloat16` | `mel` | f16, bf16 | frames | the same in half precision: half the disk (batches widen it to f32) |
//! | `linear` | `linear` | f32 | frames | `n_fft / 2 + 1`: `\|STFT\|`, the mel's framing |
//! | `linear:float16`, `linear:bfloat16` | `linear` | f16, bf16 | frames | the same in half precision: half the disk |
//! | `energy` | `energy` | f32 | frames | 1: `sqrt(Σ_k \|X_t[k]\|²)`, FastSpeech 2's |
//! | `f0` | `f0`, `voiced` | f32, u8 | frames | 1: pYIN's F0 (Hz, 0 unvoiced) and voicing |
//! | `f0:yin` | `f0`, `voiced` | f32, u8 | frames | 1: YIN's F0, voiced where a trough < 0.1 |
//! | `wav` | `wav` | i16 | frames × hop | 1: the resampled audio, `x × 32768` clipped |
//! | `wav:float32` | `wav` | f32 | frames × hop | 1: the same as float |
//!
//! Every array comes from the one decode of the item, and `mel`, `linear` and `energy` from
//! one STFT. Frame-aligned arrays have the mel's frame count; `wav` is padded with zeros or
//! cut to exactly `frames × hop_length` samples, so that a vocoder's crop of mel frames
//! `[a, b)` is `wav[a·hop, b·hop)`. The set is part of the cache key: a cache is never
//! reused for arrays it does not hold.

use serde::{Deserialize, Serialize};

use gpufeed_audio::pitch::{PitchMethod, PitchSettings};
use gpufeed_config::AudioSettings;

use crate::DataError;

/// How the waveform is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WavDtype {
    /// 16-bit PCM, `round(x × 32768)` clipped to `[-32768, 32767]`: a 16-bit source at
    /// the cache's rate round-trips exactly (soundfile reads it as `x / 32768`).
    Int16,
    /// 32-bit float, as decoded and resampled.
    Float32,
}

/// How a spectrogram is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit float.
    #[default]
    Float32,
    /// IEEE half precision (numpy's `float16`): half the disk, 11 significant bits (a
    /// relative error under 4.9e-4), values from 6.1e-5 (normal) up to 65,504.
    Float16,
    /// bfloat16: half the disk, f32's range, 8 significant bits (a relative error under
    /// 3.9e-3); what mixed-precision training computes in.
    Bfloat16,
}

impl Precision {
    /// The element type it stores.
    #[must_use]
    pub fn dtype(self) -> Dtype {
        match self {
            Self::Float32 => Dtype::F32,
            Self::Float16 => Dtype::F16,
            Self::Bfloat16 => Dtype::Bf16,
        }
    }

    /// Whether it is [`Precision::Float32`] (the mel's default, left out of the key so
    /// that the caches built before the option keep theirs).
    #[must_use]
    pub fn is_float32(&self) -> bool {
        *self == Self::Float32
    }

    fn parse(option: &str) -> Option<Self> {
        match option {
            "" | "float32" => Some(Self::Float32),
            "float16" => Some(Self::Float16),
            "bfloat16" => Some(Self::Bfloat16),
            _ => None,
        }
    }

    /// The option a user writes after the array's name (`""` for float32).
    fn suffix(self) -> &'static str {
        match self {
            Self::Float32 => "",
            Self::Float16 => ":float16",
            Self::Bfloat16 => ":bfloat16",
        }
    }
}

/// Which arrays a cache holds besides `mel` and `tokens` (both always there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Arrays {
    /// How the mel is stored (it is computed in f32 either way).
    #[serde(default, skip_serializing_if = "Precision::is_float32")]
    pub mel: Precision,
    /// The linear (magnitude) spectrogram, and how it is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear: Option<Precision>,
    /// The frame energy.
    #[serde(default)]
    pub energy: bool,
    /// F0 and the voicing, with the tracker's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f0: Option<PitchSettings>,
    /// The waveform, hop-aligned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wav: Option<WavDtype>,
}

/// Every name `--features` takes, for messages.
pub const NAMES: &str = "mel (mel:float16, mel:bfloat16), linear (linear:float16, \
     linear:bfloat16), energy, f0 (f0:pyin, f0:yin), wav (wav:int16, wav:float32)";

impl Arrays {
    /// The set named by `names` (each `mel`, `linear`, `energy`, `f0[:pyin|:yin]`,
    /// `wav[:int16|:float32]`, case-insensitive), with F0 searched between `f0_range`
    /// (Hz). `mel` may be named or not: it is always cached.
    ///
    /// # Errors
    ///
    /// [`DataError::Settings`] naming an unknown array or option, or an array named twice
    /// with different options.
    pub fn parse<S: AsRef<str>>(names: &[S], f0_range: (f64, f64)) -> Result<Self, DataError> {
        let mut arrays = Self::default();
        let bad = |what: String| {
            DataError::Settings(format!(
                "features: {what}; the arrays are {NAMES}, e.g. `--features mel,energy,f0`"
            ))
        };
        for raw in names {
            let raw = raw.as_ref().trim();
            if raw.is_empty() {
                continue;
            }
            let lower = raw.to_ascii_lowercase();
            let (name, option) = lower.split_once(':').unwrap_or((lower.as_str(), ""));
            match (name, option) {
                ("mel", "" | "float32" | "float16" | "bfloat16") => {
                    let precision = Precision::parse(option).unwrap_or_default();
                    if !arrays.mel.is_float32() && arrays.mel != precision {
                        return Err(bad(format!("`{raw}` names mel a second time, differently")));
                    }
                    arrays.mel = precision;
                }
                ("linear", "" | "float32" | "float16" | "bfloat16") => {
                    let precision = Precision::parse(option).unwrap_or_default();
                    if arrays.linear.is_some_and(|p| p != precision) {
                        return Err(bad(format!(
                            "`{raw}` names linear a second time, differently"
                        )));
                    }
                    arrays.linear = Some(precision);
                }
                ("energy", "") => arrays.energy = true,
                ("f0" | "pitch", "" | "pyin" | "yin") => {
                    let method = if option == "yin" {
                        PitchMethod::Yin
                    } else {
                        PitchMethod::Pyin
                    };
                    let settings = PitchSettings {
                        method,
                        fmin: f0_range.0,
                        fmax: f0_range.1,
                        ..PitchSettings::default()
                    };
                    if arrays.f0.is_some_and(|s| s.method != method) {
                        return Err(bad(format!("`{raw}` names f0 a second time, differently")));
                    }
                    arrays.f0 = Some(settings);
                }
                ("wav" | "audio", "" | "int16" | "float32") => {
                    let dtype = if option == "float32" {
                        WavDtype::Float32
                    } else {
                        WavDtype::Int16
                    };
                    if arrays.wav.is_some_and(|d| d != dtype) {
                        return Err(bad(format!("`{raw}` names wav a second time, differently")));
                    }
                    arrays.wav = Some(dtype);
                }
                ("mel" | "linear" | "energy" | "f0" | "pitch" | "wav" | "audio", _) => {
                    return Err(bad(format!("`{raw}`: `{name}` has no option `{option}`")));
                }
                _ => return Err(bad(format!("`{raw}` is not an array gpufeed computes"))),
            }
        }
        Ok(arrays)
    }

    /// Whether only the mel (and tokens) are cached.
    #[must_use]
    pub fn is_mel_only(&self) -> bool {
        *self == Self::default()
    }

    /// The names a user writes for this set, `mel` first (`["mel", "energy", "f0"]`).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![format!("mel{}", self.mel.suffix())];
        if let Some(p) = self.linear {
            names.push(format!("linear{}", p.suffix()));
        }
        if self.energy {
            names.push("energy".into());
        }
        if let Some(f0) = &self.f0 {
            names.push(match f0.method {
                PitchMethod::Pyin => "f0".into(),
                PitchMethod::Yin => "f0:yin".into(),
            });
        }
        match self.wav {
            Some(WavDtype::Int16) => names.push("wav".into()),
            Some(WavDtype::Float32) => names.push("wav:float32".into()),
            None => {}
        }
        names
    }

    /// The tensors of this set besides `mel` and `tokens`, in the order the shard stores
    /// them (widest elements first, so that every tensor is aligned with no gap).
    #[must_use]
    pub fn specs(&self, audio: &AudioSettings) -> Vec<ArraySpec> {
        let mut specs = Vec::new();
        let frame = |name: &str, dtype: Dtype, width: usize| ArraySpec {
            name: name.into(),
            dtype,
            width,
            rows_per_frame: 1,
        };
        if let Some(precision) = self.linear {
            specs.push(frame("linear", precision.dtype(), audio.n_fft / 2 + 1));
        }
        if self.energy {
            specs.push(frame("energy", Dtype::F32, 1));
        }
        if self.f0.is_some() {
            specs.push(frame("f0", Dtype::F32, 1));
        }
        if let Some(dtype) = self.wav {
            specs.push(ArraySpec {
                name: "wav".into(),
                dtype: match dtype {
                    WavDtype::Int16 => Dtype::I16,
                    WavDtype::Float32 => Dtype::F32,
                },
                width: 1,
                rows_per_frame: audio.hop_length,
            });
        }
        if self.f0.is_some() {
            specs.push(frame("voiced", Dtype::U8, 1));
        }
        specs.sort_by_key(|s| std::cmp::Reverse(s.dtype.size()));
        specs
    }
}

/// An element type of a cached array: those gpufeed computes (`f32`, `f16`, `i16`, `u8`)
/// and those a user's function may return (every numpy integer, float and bool type with a
/// safetensors equivalent, `bfloat16` as `ml_dtypes` names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 64-bit float.
    F64,
    /// 32-bit float.
    F32,
    /// IEEE half precision.
    F16,
    /// bfloat16 (the upper half of an f32).
    Bf16,
    /// 64-bit signed integer.
    I64,
    /// 32-bit signed integer.
    I32,
    /// 16-bit signed integer.
    I16,
    /// 8-bit signed integer.
    I8,
    /// 64-bit unsigned integer.
    U64,
    /// 32-bit unsigned integer.
    U32,
    /// 16-bit unsigned integer.
    U16,
    /// 8-bit unsigned integer.
    U8,
    /// Boolean, one byte (0 or 1).
    Bool,
}

/// Every dtype with its numpy name, for the conversions both ways.
const DTYPES: [(Dtype, &str); 13] = [
    (Dtype::F64, "float64"),
    (Dtype::F32, "float32"),
    (Dtype::F16, "float16"),
    (Dtype::Bf16, "bfloat16"),
    (Dtype::I64, "int64"),
    (Dtype::I32, "int32"),
    (Dtype::I16, "int16"),
    (Dtype::I8, "int8"),
    (Dtype::U64, "uint64"),
    (Dtype::U32, "uint32"),
    (Dtype::U16, "uint16"),
    (Dtype::U8, "uint8"),
    (Dtype::Bool, "bool"),
];

impl Dtype {
    /// Bytes per element.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            Self::F64 | Self::I64 | Self::U64 => 8,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F16 | Self::Bf16 | Self::I16 | Self::U16 => 2,
            Self::I8 | Self::U8 | Self::Bool => 1,
        }
    }

    /// numpy's name for it (`float32`, `int16`, `uint8`, `bfloat16`...).
    #[must_use]
    pub fn numpy(self) -> &'static str {
        DTYPES
            .iter()
            .find(|(d, _)| *d == self)
            .map_or("", |(_, n)| n)
    }

    /// The dtype numpy calls `name`; `None` for one a cache cannot hold (complex, object,
    /// strings, datetimes).
    #[must_use]
    pub fn from_numpy(name: &str) -> Option<Self> {
        DTYPES.iter().find(|(_, n)| *n == name).map(|(d, _)| *d)
    }

    /// safetensors' dtype.
    #[must_use]
    pub fn safetensors(self) -> safetensors::Dtype {
        use safetensors::Dtype as S;
        match self {
            Self::F64 => S::F64,
            Self::F32 => S::F32,
            Self::F16 => S::F16,
            Self::Bf16 => S::BF16,
            Self::I64 => S::I64,
            Self::I32 => S::I32,
            Self::I16 => S::I16,
            Self::I8 => S::I8,
            Self::U64 => S::U64,
            Self::U32 => S::U32,
            Self::U16 => S::U16,
            Self::U8 => S::U8,
            Self::Bool => S::BOOL,
        }
    }
}

/// One cached array beside the mel: tensor `name` of shape `[rows, width]` (`[rows]` when
/// `width` is 1) in each shard, and `name_offsets` (int64, items + 1) saying which rows are
/// whose. An item has `rows_per_frame × mel_frames` rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArraySpec {
    /// Tensor name.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Elements per row.
    pub width: usize,
    /// Rows per mel frame: 1, or `hop_length` for the waveform; 0 for an array of its own
    /// length (a user's: codec tokens at their own rate, an embedding), which batches pad
    /// to the longest in the batch.
    pub rows_per_frame: usize,
}

impl ArraySpec {
    /// The name of its offsets tensor.
    #[must_use]
    pub fn offsets_name(&self) -> String {
        format!("{}_offsets", self.name)
    }

    /// Bytes per row.
    #[must_use]
    pub fn row_bytes(&self) -> usize {
        self.width * self.dtype.size()
    }
}

/// The arrays of one item, computed from its one decode, in the order of
/// [`Arrays::specs`]: raw little-endian bytes, ready for the shard.
#[derive(Debug, Default)]
pub struct ItemArrays(pub Vec<Vec<u8>>);

/// Computes the arrays of [`Arrays`] for one item at a time; one per worker thread.
#[derive(Debug)]
pub struct Extractor {
    specs: Vec<ArraySpec>,
    mel: gpufeed_audio::MelExtractor,
    pitch: Option<gpufeed_audio::PitchTracker>,
    hop: usize,
    linear: Vec<f32>,
    energy: Vec<f32>,
    f0: Vec<f32>,
    voiced: Vec<u8>,
}

impl Extractor {
    /// An extractor of `arrays` with the mel of `audio`.
    ///
    /// # Errors
    ///
    /// The settings' error (an out-of-range mel or F0 setting), as text.
    pub fn new(arrays: &Arrays, audio: &AudioSettings) -> Result<Self, String> {
        let mel = gpufeed_audio::MelExtractor::new(audio).map_err(|e| e.to_string())?;
        let pitch = arrays
            .f0
            .as_ref()
            .map(|p| {
                let centre = if audio.center { 0 } else { audio.n_fft / 2 };
                gpufeed_audio::PitchTracker::new(p, audio.sample_rate, audio.hop_length, centre)
            })
            .transpose()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            specs: arrays.specs(audio),
            mel,
            pitch,
            hop: audio.hop_length,
            linear: Vec::new(),
            energy: Vec::new(),
            f0: Vec::new(),
            voiced: Vec::new(),
        })
    }

    /// The mel of `samples` into `mel` and the other arrays into `out`; returns the frame
    /// count.
    ///
    /// # Errors
    ///
    /// The mel's error (empty, too short, not finite), as text.
    pub fn compute(
        &mut self,
        samples: &[f32],
        mel: &mut Vec<f32>,
        out: &mut ItemArrays,
    ) -> Result<usize, String> {
        let wants = |name: &str| self.specs.iter().any(|s| s.name == name);
        let spectra = gpufeed_audio::Spectra {
            linear: wants("linear").then_some(&mut self.linear),
            energy: wants("energy").then_some(&mut self.energy),
        };
        let frames = self
            .mel
            .compute_with(samples, mel, spectra)
            .map_err(|e| e.to_string())?;
        if let Some(pitch) = &mut self.pitch {
            pitch.compute_into(samples, frames, &mut self.f0, &mut self.voiced);
        }
        out.0.clear();
        for spec in &self.specs {
            let bytes: Vec<u8> = match spec.name.as_str() {
                "linear" => narrow(&self.linear, spec.dtype),
                "energy" => bytemuck::cast_slice(&self.energy).to_vec(),
                "f0" => bytemuck::cast_slice(&self.f0).to_vec(),
                "voiced" => self.voiced.clone(),
                "wav" => wav_bytes(samples, frames * self.hop, spec.dtype),
                _ => Vec::new(),
            };
            out.0.push(bytes);
        }
        Ok(frames)
    }
}

/// `values` as `dtype` (f32, f16 or bf16, rounded to nearest even) bytes.
pub(crate) fn narrow(values: &[f32], dtype: Dtype) -> Vec<u8> {
    let mut half = Vec::new();
    if narrow_half(values, dtype, &mut half) {
        bytemuck::cast_slice(&half).to_vec()
    } else {
        bytemuck::cast_slice(values).to_vec()
    }
}

/// `values` rounded (to nearest even) into `out` as `dtype`'s 16-bit words, when `dtype`
/// is f16 or bf16; false (and `out` untouched) for any other dtype.
pub(crate) fn narrow_half(values: &[f32], dtype: Dtype, out: &mut Vec<u16>) -> bool {
    use half::slice::HalfFloatSliceExt as _;
    match dtype {
        Dtype::F16 => {
            out.resize(values.len(), 0);
            bytemuck::cast_slice_mut::<u16, half::f16>(out).convert_from_f32_slice(values);
            true
        }
        Dtype::Bf16 => {
            out.resize(values.len(), 0);
            bytemuck::cast_slice_mut::<u16, half::bf16>(out).convert_from_f32_slice(values);
            true
        }
        _ => false,
    }
}

/// `samples` padded with zeros or cut to `len`, as `dtype` bytes.
fn wav_bytes(samples: &[f32], len: usize, dtype: Dtype) -> Vec<u8> {
    let kept = &samples[..samples.len().min(len)];
    let pad = len - kept.len();
    match dtype {
        Dtype::I16 => {
            let v: Vec<i16> = kept
                .iter()
                .map(|&x| (f64::from(x) * 32768.0).round().clamp(-32768.0, 32767.0) as i16)
                .chain(std::iter::repeat_n(0, pad))
                .collect();
            bytemuck::cast_slice(&v).to_vec()
        }
        _ => {
            let v: Vec<f32> = kept
                .iter()
                .copied()
                .chain(std::iter::repeat_n(0.0, pad))
                .collect();
            bytemuck::cast_slice(&v).to_vec()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_options_and_refuse_the_unknown() {
        let a = Arrays::parse(
            &["mel", "Linear", "energy", "f0:yin", "wav:float32"],
            (65.0, 1000.0),
        )
        .unwrap();
        assert!(a.linear == Some(Precision::Float32) && a.energy);
        assert_eq!(a.f0.unwrap().method, PitchMethod::Yin);
        assert_eq!(a.wav, Some(WavDtype::Float32));
        assert_eq!(
            a.names(),
            ["mel", "linear", "energy", "f0:yin", "wav:float32"]
        );
        assert!(
            Arrays::parse(&["mel"], (65.0, 1000.0))
                .unwrap()
                .is_mel_only()
        );
        let e = Arrays::parse(&["mel", "pitchh"], (65.0, 1000.0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`pitchh` is not an array") && e.contains("f0:yin"),
            "{e}"
        );
        let e = Arrays::parse(&["wav:int8"], (65.0, 1000.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no option `int8`"), "{e}");
        let e = Arrays::parse(&["f0", "f0:yin"], (65.0, 1000.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("second time"), "{e}");
    }

    #[test]
    fn specs_are_stored_widest_first() {
        let a = Arrays::parse(&["wav", "f0", "linear"], (65.0, 1000.0)).unwrap();
        let specs = a.specs(&AudioSettings::default());
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["linear", "f0", "wav", "voiced"]);
        assert_eq!(specs[0].width, 513);
        assert_eq!(specs[2].rows_per_frame, 256);
        // Half-precision linear: 2-byte elements, stored after the 4-byte ones.
        let a = Arrays::parse(&["linear:float16", "energy"], (65.0, 1000.0)).unwrap();
        let specs = a.specs(&AudioSettings::default());
        assert_eq!(
            specs
                .iter()
                .map(|s| (s.name.as_str(), s.dtype))
                .collect::<Vec<_>>(),
            [("energy", Dtype::F32), ("linear", Dtype::F16)]
        );
        assert_eq!(a.names(), ["mel", "linear:float16", "energy"]);
    }

    #[test]
    fn the_waveform_is_exactly_frames_times_hop_and_int16_round_trips() {
        let x: Vec<f32> = (-5..5).map(|k| k as f32 / 32768.0).collect();
        let b = wav_bytes(&x, 12, Dtype::I16);
        let v: Vec<i16> = bytemuck::pod_collect_to_vec(&b);
        assert_eq!(v, [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 0, 0]);
        let b = wav_bytes(&[1.5, -2.0, 0.25], 2, Dtype::I16);
        assert_eq!(bytemuck::pod_collect_to_vec::<u8, i16>(&b), [32767, -32768]);
        let b = wav_bytes(&[0.5, 0.25], 3, Dtype::F32);
        assert_eq!(
            bytemuck::pod_collect_to_vec::<u8, f32>(&b),
            [0.5, 0.25, 0.0]
        );
    }
}
