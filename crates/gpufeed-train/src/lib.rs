//! gpufeed's training side: a small, real TTS-like model in candle ([`model`]), its
//! trainer ([`train`]) and the step profiler behind `gpufeed profile step` ([`profile`]):
//! where each training step goes (data wait, host-to-device copy, forward, loss, backward,
//! optimizer), with the device synchronised before each timer is read, and what that means
//! ([`verdict`]: input-bound, transfer-bound, compute-bound or oscillating, with the
//! evidence and the change to try).
//!
//! CUDA sits behind the cargo feature `cuda` (default off): without it [`DeviceSpec::open`]
//! refuses `cuda:N` with a hint naming the feature, and everything else builds and runs on
//! the CPU.
//!
//! ```
//! use candle_core::{DType, Device};
//! use gpufeed_train::model::{Model, ModelConfig, Preset, stage};
//!
//! let config = ModelConfig::preset(Preset::Tiny, 40, 80);
//! let model = Model::new(config.clone(), DType::F32, &Device::Cpu, 1)?;
//! assert_eq!(model.parameter_count(), config.parameter_count());
//! // One utterance: 3 tokens, 8 mel frames.
//! let x = stage(&config, &[4, 5, 6], (1, 3), &[0.0; 8 * 80], 8, &[3], &[8], DType::F32, &Device::Cpu)?;
//! let loss = model.loss(&model.forward(&x)?, &x)?.to_scalar::<f32>()?;
//! assert!(loss.is_finite());
//! # Ok::<(), gpufeed_train::TrainError>(())
//! ```
#![deny(missing_docs)]

use candle_core::{DType, Device};

pub mod model;
pub mod profile;
pub mod train;
pub mod verdict;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A bad argument or a batch that does not fit the model.
    #[error("{0}")]
    Usage(String),
    /// A tensor or device failure inside candle.
    #[error("candle: {0}")]
    Candle(#[from] candle_core::Error),
    /// The loader failed.
    #[error(transparent)]
    Data(#[from] gpufeed_data::DataError),
}

/// A device named on the command line: `cpu`, `cuda` or `cuda:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The host.
    Cpu,
    /// A CUDA device by ordinal.
    Cuda(usize),
}

impl DeviceSpec {
    /// Parses `cpu`, `cuda` (= `cuda:0`) or `cuda:N`.
    ///
    /// # Errors
    /// [`TrainError::Usage`] naming what was expected.
    pub fn parse(s: &str) -> Result<Self, TrainError> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| {
                    TrainError::Usage(format!("device `{s}`: expected `cpu` or `cuda:N`"))
                }),
        }
    }

    /// Opens the device.
    ///
    /// # Errors
    /// `cuda:N` in a build without the `cuda` feature (with the command that builds one),
    /// or a CUDA device that cannot be opened.
    pub fn open(self) -> Result<Device, TrainError> {
        match self {
            Self::Cpu => Ok(Device::Cpu),
            Self::Cuda(n) => open_cuda(n),
        }
    }
}

impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cpu => f.write_str("cpu"),
            Self::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

#[cfg(feature = "cuda")]
fn open_cuda(n: usize) -> Result<Device, TrainError> {
    Device::new_cuda(n).map_err(|e| {
        TrainError::Usage(format!(
            "cannot open `cuda:{n}`: {e}; check `nvidia-smi` and CUDA_VISIBLE_DEVICES"
        ))
    })
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(n: usize) -> Result<Device, TrainError> {
    Err(TrainError::Usage(format!(
        "`cuda:{n}` needs a build with CUDA: `cargo build --release --features cuda` (the CUDA toolkit must be installed); this build runs on `cpu` only"
    )))
}

/// Parses `f32`, `bf16` or `f16`.
///
/// # Errors
/// [`TrainError::Usage`] for any other name.
pub fn parse_dtype(s: &str) -> Result<DType, TrainError> {
    match s {
        "f32" => Ok(DType::F32),
        "bf16" => Ok(DType::BF16),
        "f16" => Ok(DType::F16),
        other => Err(TrainError::Usage(format!(
            "`--dtype {other}`: expected `f32`, `bf16` or `f16`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse() {
        assert_eq!(DeviceSpec::parse("cpu").unwrap(), DeviceSpec::Cpu);
        assert_eq!(DeviceSpec::parse("cuda").unwrap(), DeviceSpec::Cuda(0));
        assert_eq!(DeviceSpec::parse("cuda:3").unwrap(), DeviceSpec::Cuda(3));
        assert!(DeviceSpec::parse("gpu").is_err());
        assert!(DeviceSpec::parse("cuda:x").is_err());
        assert_eq!(DeviceSpec::Cuda(1).to_string(), "cuda:1");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_names_the_feature() {
        let e = DeviceSpec::Cuda(0).open().unwrap_err().to_string();
        assert!(e.contains("--features cuda"), "{e}");
    }

    #[test]
    fn dtypes_parse() {
        assert_eq!(parse_dtype("bf16").unwrap(), DType::BF16);
        assert!(parse_dtype("f64").is_err());
    }
}
