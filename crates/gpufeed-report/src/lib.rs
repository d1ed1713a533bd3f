//! gpufeed's one report: what `gpufeed analyze` writes.
//!
//! Collect → analyse → present, as everywhere in gpufeed: the binary runs the stages and
//! hands their documents over in a [`Collected`]; [`Report::build`] ranks the causes of
//! starvation ([`rank`]) and prepares the plotted series ([`series`], with the statistics
//! of `gpufeed-stats`); the renderers ([`render`]) only format a [`Report`]:
//!
//! | renderer | file | what |
//! |---|---|---|
//! | [`render::Markdown`] | `summary.md` | the verdict first: the ranked causes with their numbers and fixes, then the stages and the details |
//! | [`render::Html`] | `report.html` | one self-contained page (no network, no script, a Content-Security-Policy that forbids both) with inline SVG plots: GPU utilisation over time with its idle gaps, the batch and step times with their autocorrelation, the step phases, the benchmark grid as a heat map, a profiler trace's steps as stacked bars and its idle time per rank and stream (`--trace` with one), and the findings table |
//! | [`render::Json`] | `report.json` | everything, one document |
//!
//! Nothing here reads a file, prints or measures.
//!
//! ```
//! use gpufeed_report::model::{GpuUtil, Inputs, Stage, Telemetry, Util};
//! use gpufeed_report::render::{Markdown, Renderer};
//! use gpufeed_report::{Collected, Report, UtilSamples};
//! use gpufeed_stats::UtilVerdict;
//!
//! let util: Vec<f64> = (0..600).map(|i| if i % 15 < 7 { 40.0 } else { 2.0 }).collect();
//! let gpu = GpuUtil {
//!     gpu: 0,
//!     mean: 19.7,
//!     p5: 2.0,
//!     p95: 40.0,
//!     period_s: Some(1.5),
//!     period_strength: Some(0.9),
//!     verdict: UtilVerdict::Oscillating,
//!     ..GpuUtil::default()
//! };
//! let report = Report::build(Collected {
//!     stages: vec![Stage::ok("telemetry", 0.1, None)],
//!     telemetry: Some(Telemetry {
//!         source: "trace".into(),
//!         file: Some("gpu.csv".into()),
//!         util: Util { samples: 600, interval_s: 0.1, gpus: vec![gpu], ..Util::default() },
//!     }),
//!     util: vec![UtilSamples { gpu: 0, interval_s: 0.1, util }],
//!     ..Collected::new("0.1.0", Inputs::default())
//! });
//! assert_eq!(report.causes[0].id, "oscillating-utilisation");
//! let md = Markdown.render(&report);
//! assert!(md.contains("every 1.50 s"));
//! ```
//!
//! References: the thresholds and their sources are `gpufeed_stats::thresholds::TABLE`;
//! the documents embedded are those of docs/contract.md.
#![deny(missing_docs)]

pub mod model;
pub mod rank;
pub mod render;
pub mod series;

pub use model::Report;
use model::{
    DataProfile, DoctorSection, Inputs, Profiler, SCHEMA, Series, Stage, Status, StepPhases,
    Telemetry,
};

/// One GPU's raw utilisation samples, for the plot.
#[derive(Debug, Clone, Default)]
pub struct UtilSamples {
    /// GPU index.
    pub gpu: u32,
    /// Sampling interval, s.
    pub interval_s: f64,
    /// Utilisation, %, one per interval.
    pub util: Vec<f64>,
}

/// What the stages produced: the input of [`Report::build`].
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// The gpufeed version.
    pub gpufeed: String,
    /// What was asked.
    pub inputs: Inputs,
    /// Every stage, in the order it ran.
    pub stages: Vec<Stage>,
    /// The doctor's findings.
    pub doctor: Option<DoctorSection>,
    /// `profile data`'s document.
    pub data: Option<DataProfile>,
    /// Its judged series per batch (`DataProfile::judged`), ms.
    pub batch_ms: Vec<f64>,
    /// `profile step`'s document, or the phase-steps document of the user's own loop.
    pub step: Option<StepPhases>,
    /// Its step times, ms.
    pub step_ms: Vec<f64>,
    /// GPU utilisation analysed.
    pub telemetry: Option<Telemetry>,
    /// The samples behind it.
    pub util: Vec<UtilSamples>,
    /// The user's profiler trace analysed (`analyze --trace` with one).
    pub profiler: Option<Profiler>,
    /// The user's running job sampled (`analyze --attach PID`).
    pub attach: Option<gpufeed_contract::Attach>,
}

impl Collected {
    /// Nothing collected yet.
    #[must_use]
    pub fn new(gpufeed: &str, inputs: Inputs) -> Self {
        Self {
            gpufeed: gpufeed.to_owned(),
            inputs,
            ..Self::default()
        }
    }
}

impl Report {
    /// A note, when the loader and step figures come from gpufeed's generated demo dataset
    /// rather than the user's data.
    #[must_use]
    pub fn demo_note(&self) -> Option<String> {
        let data = self.inputs.data.as_deref().filter(|_| self.inputs.demo)?;
        // With a profiler trace (or a step recording) the steps are the user's own.
        let own_steps =
            self.profiler.is_some() || self.profile_step.as_ref().is_some_and(|s| s.is_own_loop());
        let figures = if own_steps {
            "the loader figures come"
        } else {
            "the loader and training-step figures come"
        };
        Some(format!(
            "{figures} from gpufeed's generated demo dataset (`{data}`), not from your data: \
             pass `--data DIR` (and `--config FILE`) to measure yours"
        ))
    }

    /// Ranks the causes and prepares the plotted series. Pure: the same input gives the same
    /// report.
    #[must_use]
    pub fn build(c: Collected) -> Self {
        let precomputed = c
            .stages
            .iter()
            .any(|s| s.name == "precompute" && s.status == Status::Ok);
        let evidence = rank::Evidence {
            doctor: c.doctor.as_ref(),
            data: c.data.as_ref(),
            step: c.step.as_ref(),
            telemetry: c.telemetry.as_ref(),
            profiler: c.profiler.as_ref(),
            attach: c.attach.as_ref(),
            precomputed,
            demo: c.inputs.demo,
            own_config: c.inputs.config.is_some(),
        };
        let causes = rank::rank(&evidence);
        let mut verdict = rank::verdict(&evidence, &causes);
        let failed: Vec<&str> = c
            .stages
            .iter()
            .filter(|s| s.status == Status::Failed)
            .map(|s| s.name.as_str())
            .collect();
        if !failed.is_empty() {
            verdict.push_str(&format!(
                " Not measured, because the stage failed: {}.",
                failed.join(", ")
            ));
        }
        let thresholds = rank::cited_thresholds(&causes);
        let series = Series {
            util: c
                .util
                .iter()
                .map(|u| series::util_series(u.gpu, u.interval_s, &u.util))
                .collect(),
            batch_ms: (!c.batch_ms.is_empty()).then(|| series::acf_series(&c.batch_ms)),
            step_ms: (!c.step_ms.is_empty()).then(|| series::acf_series(&c.step_ms)),
        };
        Self {
            schema_version: SCHEMA,
            gpufeed: c.gpufeed,
            inputs: c.inputs,
            verdict,
            causes,
            stages: c.stages,
            doctor: c.doctor,
            profile_data: c.data,
            profile_step: c.step,
            telemetry: c.telemetry,
            profiler: c.profiler,
            attach: c.attach,
            series,
            thresholds,
        }
    }

    /// The exit code of `analyze` (docs/contract.md): 1 when the doctor found anything
    /// at error severity or a stage failed (the report is whole otherwise), else 0. The 2 of
    /// bad usage, or of a report that cannot be written, is the binary's.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        let errors = self.doctor.as_ref().map_or(0, DoctorSection::errors);
        let failed = self.stages.iter().any(|s| s.status == Status::Failed);
        u8::from(errors > 0 || failed)
    }
}
