//! The checks of `doctor`: each rule's section in the doctor's report.

use std::fmt;

use crate::rules::{Origin, rule_info};

/// The checks of `doctor`, in the order the text report lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// The GPUs, through NVML.
    Gpu,
    /// CPU, memory, swap, load.
    Host,
    /// The data and cache folders' storage.
    Storage,
    /// TensorFlow, PyTorch and JAX.
    Frameworks,
    /// Environment variables.
    Environment,
    /// The training config (`validate`).
    Config,
    /// The training code (`lint`).
    Code,
    /// A short loader run.
    Runtime,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Self; 8] = [
        Self::Gpu,
        Self::Host,
        Self::Storage,
        Self::Frameworks,
        Self::Environment,
        Self::Config,
        Self::Code,
        Self::Runtime,
    ];

    /// The heading of its section.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Gpu => "GPU",
            Self::Host => "Host",
            Self::Storage => "Storage",
            Self::Frameworks => "Frameworks",
            Self::Environment => "Environment",
            Self::Config => "Config",
            Self::Code => "Code",
            Self::Runtime => "Runtime",
        }
    }

    /// The check a rule id belongs to (through the rule registry); `None` for an unknown id.
    #[must_use]
    pub fn of(id: &str) -> Option<Self> {
        Some(match rule_info(id)?.origin {
            Origin::Config | Origin::Validate => Self::Config,
            Origin::Lint => Self::Code,
            Origin::Doctor(check) => check,
        })
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}
