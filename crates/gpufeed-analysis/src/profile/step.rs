//! `gpufeed profile step`: the measurement and its JSON document.
//!
//! 1. The cache of `--data` (precomputed first when missing or stale) and the loader as the
//!    config sets it, streaming across epochs as in training.
//! 2. The model: the `--model` preset, with the widths, depths and heads the config's
//!    `model:` section sets (`text_encoder_*` for the encoder, `decoder_*` for the decoder);
//!    the vocabulary from the cache's symbol table, `n_mels` from the cache.
//! 3. `gpufeed_train::profile`: warm-up, timed steps phase by phase (device synchronised
//!    before each timer unless `--no-sync`), then untimed steps alternating with timed ones
//!    for the instrumentation overhead.
//! 4. Statistics from gpufeed-stats (the step series as `trace --kind steps`), the verdict
//!    from `gpufeed_train::verdict` with the thresholds table.

use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use gpufeed_contract::{Loss, Ordered, Phase, PhaseCategory, StepConfig, StepProfile};

use gpufeed_data::cache::Cache;
use gpufeed_data::loader::Loader;
use gpufeed_train::model::{Model, ModelConfig, Preset};
use gpufeed_train::profile::{self as train_profile, Options};
use gpufeed_train::train::Trainer;
use gpufeed_train::verdict::{self, LoaderSettings, Shares};
use gpufeed_train::{DeviceSpec, parse_dtype};

use super::{ensure_cache, loader_config};
use crate::Ui;
use crate::trace::StepReport;

/// Steps timed when `--steps` is absent.
const DEFAULT_STEPS: usize = 50;
/// Warm-up steps when `--warmup` is absent.
const DEFAULT_WARMUP: usize = 5;
/// Seed of the model's initial weights.
const SEED: u64 = 42;

/// `profile step`'s document ([`StepProfile`], gpufeed-contract) and each timed step's
/// time, which `analyze` plots.
#[derive(Debug, Clone)]
pub struct StepRun {
    /// The document.
    pub doc: StepProfile,
    /// Each timed step, ms.
    pub step_ms: Vec<f64>,
}

/// What `gpufeed profile step` measures: plain settings, filled by the command line.
#[derive(Debug, Clone)]
pub struct StepSettings {
    /// The dataset folder (precomputed first when needed).
    pub data: Option<std::path::PathBuf>,
    /// The training config, read once by the caller.
    pub config: crate::config::TrainingConfig,
    /// Model preset: `tiny` or `small`.
    pub model: String,
    /// The model's device: `cpu` or `cuda:N`.
    pub device: String,
    /// Where batches are prepared (the model's device when absent).
    pub data_device: Option<String>,
    /// Utterances per batch (the config's when absent).
    pub batch_size: Option<usize>,
    /// `f32`, `bf16` or `f16`.
    pub dtype: String,
    /// Steps to time (50 when absent).
    pub steps: Option<usize>,
    /// Warm-up steps (5 when absent).
    pub warmup: Option<usize>,
    /// Do not synchronise the device before each phase timer.
    pub no_sync: bool,
}

/// The model's sizes: the preset, then what the config's `model:` section sets.
fn model_config(
    preset: Preset,
    vocab: usize,
    n_mels: usize,
    source: Option<&gpufeed_config::Loaded>,
) -> ModelConfig {
    let mut m = ModelConfig::preset(preset, vocab, n_mels);
    if let Some(loaded) = source {
        let c = &loaded.config.model;
        let set = |key: &str| loaded.span_of(&format!("model.{key}")).is_some();
        let fields: [(&str, usize, &mut usize); 6] = [
            ("text_encoder_dim", c.text_encoder_dim, &mut m.encoder_dim),
            (
                "text_encoder_layers",
                c.text_encoder_layers,
                &mut m.encoder_layers,
            ),
            (
                "text_encoder_heads",
                c.text_encoder_heads,
                &mut m.encoder_heads,
            ),
            ("decoder_dim", c.decoder_dim, &mut m.decoder_dim),
            ("decoder_layers", c.decoder_layers, &mut m.decoder_layers),
            ("decoder_heads", c.decoder_heads, &mut m.decoder_heads),
        ];
        for (key, value, field) in fields {
            if set(key) {
                *field = value;
            }
        }
    }
    m
}

/// Ids the model's embedding needs: the reserved ids and the symbols of the cache's table;
/// the largest id in the cache + 1 when the table cannot be read.
fn vocab_of(cache: &Cache) -> usize {
    let symbols = &cache.manifest().symbols;
    let count = |k: &str| symbols.get(k).and_then(|v| v.as_array()).map(Vec::len);
    match (count("reserved"), count("symbols")) {
        (Some(r), Some(s)) => r + s,
        _ => (0..cache.len())
            .flat_map(|i| cache.tokens(i).iter().copied())
            .max()
            .map_or(1, |m| usize::try_from(m).unwrap_or(0) + 1),
    }
}

/// Measures training steps as `gpufeed profile step` does; warnings and the precompute's
/// progress go to `ui`.
///
/// # Errors
///
/// A bad setting (named), a dataset that cannot be read, a device that cannot be opened,
/// or a loader that plans no batch.
pub fn step_profile(args: &StepSettings, ui: &dyn Ui) -> Result<StepRun> {
    // Usage errors before any work (a precompute can take minutes).
    let preset = Preset::parse(&args.model)?;
    let device_spec = DeviceSpec::parse(&args.device)?;
    let data_spec = match &args.data_device {
        Some(d) => DeviceSpec::parse(d)?,
        None => device_spec,
    };
    let dtype = parse_dtype(&args.dtype)?;
    let steps = args.steps.unwrap_or(DEFAULT_STEPS);
    if steps == 0 {
        bail!("`--steps 0`: time at least one step");
    }
    let warmup = args.warmup.unwrap_or(DEFAULT_WARMUP);
    let device = device_spec.open()?;
    let data_device = data_spec.open()?;
    let source = args.config.loaded();
    let config = args.config.config();
    let Some(data) = &args.data else {
        bail!(
            "pass `--data DIR` (a dataset, precomputed first if needed); `gpufeed demo-data DIR` makes a dataset to try"
        );
    };
    let dir = ensure_cache(data, None, &config, ui)?;
    let cache = Arc::new(Cache::open(&dir)?);
    let lc = loader_config(&config, args.batch_size, None)?;
    let model_config = model_config(preset, vocab_of(&cache), cache.n_mels(), source);
    let model = Model::new(model_config.clone(), dtype, &device, SEED)?;
    let parameters = model.parameter_count();
    let mut trainer = Trainer::new(model)?;
    let loader = Loader::new(Arc::clone(&cache), lc.clone())?;
    let mut stream = loader.stream(0);
    if stream.plan().batches.is_empty() {
        bail!(
            "the loader plans no batch: every utterance is over the length caps (see `over_length`)"
        );
    }
    let options = Options {
        warmup,
        steps,
        sync: !args.no_sync,
        compare_pairs: (steps / 4).clamp(5, 25),
    };
    let p = train_profile::profile(&mut trainer, &mut stream, &data_device, options)
        .with_context(|| format!("profiling the `{}` model on {device_spec}", preset.name()))?;
    if !(p.loss_first.is_finite() && p.loss_last.is_finite()) {
        ui.warn(&format!(
            "the loss is not finite ({} then {}) with `--dtype {}`: the timings stand, but this training diverged",
            p.loss_first, p.loss_last, args.dtype
        ));
    }
    // Judged on whole batches: the step on an epoch's short last batch is no cycle.
    let step = StepReport::of_batches(&p.step_ms, &p.samples).context("no step was timed")?;
    let analysis = &step.analysis;
    let step_mean = analysis.summary.mean;
    // The phases of the same whole-batch steps, so that their shares add up.
    let whole = gpufeed_stats::whole_batches(&p.samples);
    let mut means = Vec::new();
    let mut phases = Vec::new();
    for (order, (phase, v)) in p.phases.iter().enumerate() {
        let kept: Vec<f64> = v
            .iter()
            .zip(&whole)
            .filter(|&(_, &k)| k)
            .map(|(&ms, _)| ms)
            .collect();
        let s = gpufeed_stats::summarize(&kept).context("no step was timed")?;
        means.push((*phase, s.mean));
        phases.push((
            phase.name().to_owned(),
            Phase {
                order,
                category: PhaseCategory::of(phase.name()),
                mean_ms: s.mean,
                std_ms: s.std,
                share: s.mean / step_mean,
                steps: kept.len(),
            },
        ));
    }
    let judged = verdict::judge(
        Shares::of(&means, step_mean),
        analysis,
        Some(LoaderSettings {
            workers: lc.workers,
            prefetch: lc.prefetch,
        }),
    );
    let samples: usize = p.samples.iter().sum();
    let unaccounted: f64 = p.unaccounted_ms.iter().sum();
    let doc = StepProfile {
        schema_version: <StepProfile as gpufeed_contract::Document>::VERSION,
        config: StepConfig {
            cache: dir.display().to_string(),
            items: cache.len(),
            loader: serde_json::to_value(&lc)?,
            model: serde_json::json!({
                "preset": preset.name(),
                "parameters": parameters,
                "sizes": model_config,
            }),
            device: device_spec.to_string(),
            data_device: data_spec.to_string(),
            dtype: args.dtype.clone(),
            steps,
            warmup_steps: warmup,
            sync: options.sync,
        },
        phases: Ordered(phases),
        steps_per_s: p.step_ms.len() as f64 / p.elapsed_s,
        samples_per_s: samples as f64 / p.elapsed_s,
        step: step.doc,
        verdict: judged.bottleneck,
        level: judged.level,
        evidence: judged.evidence,
        fix: judged.fix,
        unaccounted_share: unaccounted / p.step_ms.iter().sum::<f64>(),
        loss: Loss {
            first: p.loss_first,
            last: p.loss_last,
        },
        overhead: p.overhead,
    };
    Ok(StepRun {
        doc,
        step_ms: p.step_ms,
    })
}
