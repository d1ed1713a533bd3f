//! A training step phase by phase: the `profile-step` document (`gpufeed profile step`,
//! gpufeed's own model on the user's data) and the `phase-steps` document (the user's own
//! loop: `gpufeed trace` of a `StepTimer` recording, and `StepTimer.report()` in Python).
//!
//! Both carry the same figures under the same names: `phases` (name → [`Phase`], in the
//! loop's order), `step` (a [`Steps`] document), `steps_per_s`, `samples_per_s`,
//! `verdict`, `level`, `evidence`, `fix` and `unaccounted_share`; [`StepPhases`] reads
//! either, which is how `gpufeed analyze` treats both alike.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use gpufeed_stats::thresholds::Level;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Document, IfFixed, LoaderSettings, Steps};

/// What the step is bound by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseVerdict {
    /// The step waits for the loader.
    InputBound,
    /// The step waits for copies between memories.
    TransferBound,
    /// The device's work is the step.
    ComputeBound,
    /// The step time repeats a cycle.
    Oscillating,
    /// The user's loop timed no wait for data and nothing else could be said
    /// (`phase-steps` only).
    Undetermined,
}

impl PhaseVerdict {
    /// As in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputBound => "input-bound",
            Self::TransferBound => "transfer-bound",
            Self::ComputeBound => "compute-bound",
            Self::Oscillating => "oscillating",
            Self::Undetermined => "undetermined",
        }
    }
}

impl fmt::Display for PhaseVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a phase does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PhaseCategory {
    /// Waiting for the next batch: `data_wait`.
    Input,
    /// Moving the batch between memories.
    Copy,
    /// The device's (or the host's) own work.
    Compute,
}

impl PhaseCategory {
    /// The category of a phase name: `data_wait` is input; `h2d_copy`, `device_copy` and
    /// any name containing `copy`, `h2d`, `to_device` or `transfer` (any case) are copies;
    /// everything else is compute.
    #[must_use]
    pub fn of(name: &str) -> Self {
        let lower = name.to_ascii_lowercase();
        if lower == "data_wait" {
            Self::Input
        } else if ["copy", "h2d", "to_device", "transfer"]
            .iter()
            .any(|k| lower.contains(k))
        {
            Self::Copy
        } else {
            Self::Compute
        }
    }

    /// `input`, `copy` or `compute`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Copy => "copy",
            Self::Compute => "compute",
        }
    }
}

/// One phase's figures over the steps analysed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Position in the loop, from 0.
    pub order: usize,
    /// What the phase does.
    pub category: PhaseCategory,
    /// Mean time per step, ms (0 in the steps it did not run).
    pub mean_ms: f64,
    /// Population standard deviation, ms.
    pub std_ms: f64,
    /// Mean time over the mean step.
    pub share: f64,
    /// Steps analysed in which the phase ran.
    pub steps: usize,
}

/// Name → value in the loop's order, a JSON object in that order.
// By hand: serde_json's map would sort the names (or need its `preserve_order` feature for
// the whole workspace), and the loop's order is part of the document.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered<V>(pub Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> Ordered<V> {
    /// The value of `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&V> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    /// Name and value, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }
}

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            m.serialize_entry(name, value)?;
        }
        m.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Of<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Of<V> {
            type Value = Ordered<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<V>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8).min(64));
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Of(std::marker::PhantomData))
    }
}

/// The schema of a JSON object of `V`s, as for a map.
impl<V: JsonSchema> JsonSchema for Ordered<V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <BTreeMap<String, V>>::json_schema(generator)
    }
}

/// Loss of the first and last timed steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Loss {
    /// First timed step's loss.
    pub first: f32,
    /// Last timed step's loss.
    pub last: f32,
}

/// The instrumentation's cost and the overlap the syncs remove.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overhead {
    /// Pairs measured.
    pub pairs: usize,
    /// Median step with one clock reading per step and no sync, ms.
    pub untimed_median_ms: f64,
    /// Median step with the phase timers and no sync, ms.
    pub timed_median_ms: f64,
    /// `timed / untimed - 1`: the phase timers' cost.
    pub timer_share: f64,
    /// Median step with the phase timers and a sync before each (only when `sync` is on),
    /// ms.
    pub synced_median_ms: Option<f64>,
    /// `synced / untimed - 1`: the overlap of host and device work that the syncs remove
    /// (about 0 on a CPU, where each op finishes before the next starts).
    pub sync_share: Option<f64>,
}

/// What `profile step` ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// The feature cache.
    pub cache: String,
    /// Utterances in the cache.
    pub items: usize,
    /// The loader's settings (`gpufeed_data::loader::LoaderConfig`): `batch_size`,
    /// `workers`, `prefetch` and the padding, shuffling and sharding settings.
    pub loader: serde_json::Value,
    /// The model: `preset`, `parameters` and `sizes` (`gpufeed_train::model::ModelConfig`).
    pub model: serde_json::Value,
    /// The device of the model (`cpu`, `cuda:0`).
    pub device: String,
    /// The device the batches were copied to first.
    pub data_device: String,
    /// `f32`, `bf16` or `f16`.
    pub dtype: String,
    /// Steps timed.
    pub steps: usize,
    /// Steps run before the timing.
    pub warmup_steps: usize,
    /// The devices were synchronised before each phase timer.
    pub sync: bool,
}

/// `gpufeed profile step --format json`: gpufeed's model trained on the user's data,
/// phase by phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepProfile {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// What ran.
    pub config: StepConfig,
    /// Per phase, in step order (`data_wait`, `h2d_copy`, `device_copy`, `forward`,
    /// `loss`, `backward`, `optimizer`; those that ran).
    pub phases: Ordered<Phase>,
    /// The step times of whole batches (a step on an epoch's short last batch is left out
    /// and counted in `partial_batches`).
    pub step: Steps,
    /// Steps per second over the timed steps.
    pub steps_per_s: f64,
    /// Utterances per second over the timed steps.
    pub samples_per_s: f64,
    /// `input-bound`, `transfer-bound`, `compute-bound` or `oscillating`.
    pub verdict: PhaseVerdict,
    /// `moderate` or `high` for input- and transfer-bound.
    pub level: Option<Level>,
    /// The figures behind the verdict, one sentence each.
    pub evidence: Vec<String>,
    /// The change to try.
    pub fix: String,
    /// Share of the step outside every phase (cleanup after the optimizer).
    pub unaccounted_share: f64,
    /// Loss of the first and last timed steps.
    pub loss: Loss,
    /// The instrumentation's cost; `null` when not measured.
    pub overhead: Option<Overhead>,
}

impl Default for StepProfile {
    /// An empty, `compute-bound` document of this version (for tests that fill in a few
    /// fields).
    fn default() -> Self {
        Self {
            schema_version: Self::VERSION,
            config: StepConfig::default(),
            phases: Ordered::default(),
            step: Steps::default(),
            steps_per_s: 0.0,
            samples_per_s: 0.0,
            verdict: PhaseVerdict::ComputeBound,
            level: None,
            evidence: Vec::new(),
            fix: String::new(),
            unaccounted_share: 0.0,
            loss: Loss::default(),
            overhead: None,
        }
    }
}

impl Document for StepProfile {
    const NAME: &'static str = "profile-step";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed profile step";
}

/// Always `phase-steps`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PhaseStepsKind {
    /// A phase-steps document.
    #[default]
    #[serde(rename = "phase-steps")]
    PhaseSteps,
}

/// The steps analysed, for plots.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseSeries {
    /// Each step's time, ms.
    pub total_ms: Vec<f64>,
    /// Each phase's time per step, ms (0 in a step it did not run).
    pub phases: Ordered<Vec<f64>>,
}

/// The user's own training loop, phase by phase: `gpufeed trace --format json` of a step
/// recording, and what the Python `StepTimer.report()` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseSteps {
    /// Always `phase-steps`.
    pub kind: PhaseStepsKind,
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// What timed the loop (`python StepTimer`).
    pub source: String,
    /// A device synchronisation ran at each phase boundary.
    pub sync: bool,
    /// Leading steps left out of the statistics.
    pub warmup: usize,
    /// Items per step, when the recording gave one size for all.
    pub batch_size: Option<u64>,
    /// Per phase, in the loop's order.
    pub phases: Ordered<Phase>,
    /// Share of the step outside every phase.
    pub unaccounted_share: f64,
    /// The step times as `gpufeed trace --kind steps` reports them.
    pub step: Steps,
    /// Steps per second (the steps' own times: the loop's rate while it ran).
    pub steps_per_s: f64,
    /// Items per second, when every step's count is known (its `items`, else the
    /// recording's `batch_size`).
    pub samples_per_s: Option<f64>,
    /// `input-bound`, `transfer-bound`, `compute-bound`, `oscillating` or `undetermined`.
    pub verdict: PhaseVerdict,
    /// `moderate` or `high` for input- and transfer-bound.
    pub level: Option<Level>,
    /// The figures behind the verdict, one sentence each.
    pub evidence: Vec<String>,
    /// The change to try.
    pub fix: String,
    /// The input and copy phases at or past the moderate input threshold, each with what
    /// removing it is worth (`if_fixed`), the largest gain first.
    #[serde(default)]
    pub causes: Vec<PhaseCause>,
    /// The steps analysed, for plots (`analyze` leaves it out of its report, which plots
    /// the steps itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<PhaseSeries>,
}

/// A cause of a `phase-steps` document: the wait for data, or the copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseCause {
    /// `input-bound` (the `input` phases) or `transfer-bound` (the `copy` phases).
    pub cause: PhaseVerdict,
    /// The phases it is made of, in the loop's order.
    pub phases: Vec<String>,
    /// Their share of the mean step.
    pub share: f64,
    /// Past the moderate or the high input threshold.
    pub level: Level,
    /// The expected median step without those phases.
    pub if_fixed: Option<IfFixed>,
}

impl Document for PhaseSteps {
    const NAME: &'static str = "phase-steps";
    /// 2: `causes`, each with its `if_fixed` (issue 29).
    const VERSION: u32 = 2;
    const WRITER: &'static str = "gpufeed trace STEP-RECORDING";
}

/// Either step document, as `gpufeed analyze` holds it: gpufeed's model on the user's data,
/// or the user's own loop (`analyze --trace` of a step recording).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StepPhases {
    /// The user's own loop (`kind: "phase-steps"`).
    OwnLoop(Box<PhaseSteps>),
    /// `gpufeed profile step`.
    Model(Box<StepProfile>),
}

impl StepPhases {
    /// Whether these are the steps of the user's own loop, not of gpufeed's model.
    #[must_use]
    pub fn is_own_loop(&self) -> bool {
        matches!(self, Self::OwnLoop(_))
    }

    /// What timed the user's own loop (`python StepTimer`).
    #[must_use]
    pub fn own_source(&self) -> Option<&str> {
        match self {
            Self::OwnLoop(d) => Some(&d.source),
            Self::Model(_) => None,
        }
    }

    /// Whether the devices were synchronised at each phase boundary.
    #[must_use]
    pub fn sync(&self) -> bool {
        match self {
            Self::OwnLoop(d) => d.sync,
            Self::Model(d) => d.config.sync,
        }
    }

    /// `profile step`'s configuration.
    #[must_use]
    pub fn config(&self) -> Option<&StepConfig> {
        match self {
            Self::OwnLoop(_) => None,
            Self::Model(d) => Some(&d.config),
        }
    }

    /// The loader settings of the run: gpufeed's loader in `profile step`; none for the
    /// user's own loop, whose loader gpufeed does not know.
    #[must_use]
    pub fn loader(&self) -> Option<LoaderSettings> {
        serde_json::from_value(self.config()?.loader.clone()).ok()
    }

    /// The phases in step order.
    #[must_use]
    pub fn phases(&self) -> &Ordered<Phase> {
        match self {
            Self::OwnLoop(d) => &d.phases,
            Self::Model(d) => &d.phases,
        }
    }

    /// The step times.
    #[must_use]
    pub fn step(&self) -> &Steps {
        match self {
            Self::OwnLoop(d) => &d.step,
            Self::Model(d) => &d.step,
        }
    }

    /// The step times, to change (tests).
    pub fn step_mut(&mut self) -> &mut Steps {
        match self {
            Self::OwnLoop(d) => &mut d.step,
            Self::Model(d) => &mut d.step,
        }
    }

    /// Steps per second.
    #[must_use]
    pub fn steps_per_s(&self) -> f64 {
        match self {
            Self::OwnLoop(d) => d.steps_per_s,
            Self::Model(d) => d.steps_per_s,
        }
    }

    /// Items per second, when known.
    #[must_use]
    pub fn samples_per_s(&self) -> Option<f64> {
        match self {
            Self::OwnLoop(d) => d.samples_per_s,
            Self::Model(d) => Some(d.samples_per_s),
        }
    }

    /// The verdict.
    #[must_use]
    pub fn verdict(&self) -> PhaseVerdict {
        match self {
            Self::OwnLoop(d) => d.verdict,
            Self::Model(d) => d.verdict,
        }
    }

    /// Its level, for input- and transfer-bound.
    #[must_use]
    pub fn level(&self) -> Option<Level> {
        match self {
            Self::OwnLoop(d) => d.level,
            Self::Model(d) => d.level,
        }
    }

    /// The figures behind the verdict.
    #[must_use]
    pub fn evidence(&self) -> &[String] {
        match self {
            Self::OwnLoop(d) => &d.evidence,
            Self::Model(d) => &d.evidence,
        }
    }

    /// The change to try.
    #[must_use]
    pub fn fix(&self) -> &str {
        match self {
            Self::OwnLoop(d) => &d.fix,
            Self::Model(d) => &d.fix,
        }
    }

    /// The user's loop's causes with their estimates (`phase-steps`' `causes`); none for
    /// gpufeed's model, whose step is not the user's.
    #[must_use]
    pub fn causes(&self) -> &[PhaseCause] {
        match self {
            Self::OwnLoop(d) => &d.causes,
            Self::Model(_) => &[],
        }
    }

    /// Share of the step outside every phase.
    #[must_use]
    pub fn unaccounted_share(&self) -> f64 {
        match self {
            Self::OwnLoop(d) => d.unaccounted_share,
            Self::Model(d) => d.unaccounted_share,
        }
    }

    /// The phases sorted by their `order` (then name): the loop's order, however a reader
    /// of the JSON object ordered its keys.
    #[must_use]
    pub fn ordered_phases(&self) -> Vec<(String, Phase)> {
        let mut v: Vec<(String, Phase)> = self.phases().0.clone();
        v.sort_by(|a, b| a.1.order.cmp(&b.1.order).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// Share of the step spent in phases of these categories.
    #[must_use]
    pub fn share_of(&self, categories: &[PhaseCategory]) -> f64 {
        self.phases()
            .iter()
            .filter(|(_, p)| categories.contains(&p.category))
            .map(|(_, p)| p.share)
            .filter(|s| s.is_finite())
            .sum()
    }

    /// Share of the step spent waiting for data.
    #[must_use]
    pub fn data_wait_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Input])
    }

    /// Share of the step spent copying.
    #[must_use]
    pub fn copy_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Copy])
    }

    /// Data wait plus copies: TF Profiler's input time over the step.
    #[must_use]
    pub fn input_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Input, PhaseCategory::Copy])
    }
}
