//! gpufeed's JSON contract: each `--format json` document defined once.
//!
//! A document is a serde type that implements [`Document`]: its writer serialises it, the
//! report of `gpufeed analyze` and the tests deserialise the same type, and its JSON Schema
//! is derived from it ([`schema_of`]), published by `gpufeed schema NAME` and under
//! `docs/schemas/`. Every document carries `schema_version`, its [`Document::VERSION`]; a
//! test in the `gpufeed` crate fails when a schema changes while its version does not.
//!
//! The documents of this crate are the ones more than one crate reads. Documents that only
//! their writer builds (`report.json`, the profiler-trace report, ...) derive their schema
//! where they are defined, and `gpufeed schema` lists all of them.
//!
//! ```
//! use gpufeed_contract::{Document, Steps};
//!
//! let a = gpufeed_stats::analyze_steps(&[10.0, 10.5, 9.8, 10.1]).unwrap();
//! let doc = Steps::new(&a, None);
//! let json = serde_json::to_value(&doc).unwrap();
//! assert_eq!(json["schema_version"], Steps::VERSION);
//! assert_eq!(json["verdict"], "stable");
//! let schema = gpufeed_contract::schema_of::<Steps>();
//! assert_eq!(schema["properties"]["schema_version"]["const"], Steps::VERSION);
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

pub mod attach;
pub mod compare;
pub mod data;
pub mod estimate;
pub mod findings;
pub mod format;
pub mod phases;
pub mod precompute;
pub mod registry;
pub mod steps;
pub mod tools;
pub mod util;

pub use attach::{
    Attach, AttachCost, AttachRank, AttachShares, AttachVerdict, AttachWorker, ClassLines, GpuUse,
    TopFrame,
};
pub use compare::{
    Compare, CompareKind, CompareSide, ComparedKind, Prediction, ShareChange, SpeedupBy,
};
pub use data::{
    Breakdown, Cell, DataConfig, DataProfile, Judged, LoaderSettings, OverLengthCount,
    Recommendation,
};
pub use estimate::{IfFixed, SpeedupIfFixed};
pub use findings::{Finding, Findings, Severity};
pub use format::{TraceFormat, TraceKind};
pub use phases::{
    Loss, Ordered, Overhead, Phase, PhaseCategory, PhaseCause, PhaseSeries, PhaseSteps,
    PhaseStepsKind, PhaseVerdict, StepConfig, StepPhases, StepProfile,
};
pub use precompute::{DatasetRead, LeftOut, Precompute};
pub use steps::{Steps, StepsKind};
pub use tools::{DemoData, Mel, RuleEntry, RuleExample, Rules};
pub use util::{GpuUtil, Host, Monitor, Sampler, Stat, TrainingPhase, Util, UtilKind};

/// A `--format json` document.
pub trait Document: Serialize + DeserializeOwned + schemars::JsonSchema {
    /// Its name for `gpufeed schema NAME` and its file `docs/schemas/NAME.json`.
    const NAME: &'static str;
    /// Its `schema_version`: raised whenever a field is added, removed, renamed or changes
    /// type or meaning.
    const VERSION: u32;
    /// Which command writes it.
    const WRITER: &'static str;
}

/// The JSON Schema (draft 2020-12) of document `D`, as published: titled with its name,
/// described by its writer, and with `schema_version` pinned to its version.
#[must_use]
pub fn schema_of<D: Document>() -> serde_json::Value {
    let schema = schemars::schema_for!(D);
    let mut value = schema.to_value();
    if let Some(map) = value.as_object_mut() {
        map.insert("title".to_owned(), D::NAME.into());
        map.insert(
            "description".to_owned(),
            format!(
                "{} (version {}), written by `{}`",
                D::NAME,
                D::VERSION,
                D::WRITER
            )
            .into(),
        );
        if let Some(v) = map
            .get_mut("properties")
            .and_then(|p| p.get_mut("schema_version"))
            .and_then(serde_json::Value::as_object_mut)
        {
            v.insert("const".to_owned(), D::VERSION.into());
        }
    }
    value
}
