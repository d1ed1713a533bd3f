//! `gpufeed demo-data`, `gpufeed precompute` (with `--shard auto` and `--merge` for array
//! jobs), `gpufeed mel`: the speech-feature commands.
//!
//! Thin: parse the config, call `gpufeed-data` / `gpufeed-audio`, draw the progress bar,
//! print the summary.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use gpufeed_analysis::config::TrainingConfig;
use gpufeed_analysis::profile::precompute_document;
use gpufeed_config::Config;
use gpufeed_contract::Document;
use gpufeed_data::array_job;
use gpufeed_data::layout::Columns;
use gpufeed_data::precompute::{self, OnError, Options, ShardSpec};
use gpufeed_data::settings::precompute_options;

use crate::cli::{DemoDataArgs, Format, MelArgs, PrecomputeArgs};
use crate::printer;
use crate::ui::Terminal;

/// `--config FILE` read once for the whole command, its warnings said once on stderr
/// (the defaults without one).
pub(crate) fn training_config(path: Option<&Path>) -> Result<TrainingConfig> {
    let (config, warnings) = TrainingConfig::read(path)?;
    for w in &warnings {
        printer::warn(w);
    }
    Ok(config)
}

/// Loads `--config FILE` (defaults without one) and prints its warnings.
pub fn load_config(path: Option<&Path>) -> Result<Config> {
    Ok(training_config(path)?.config())
}

/// Loads `--config FILE` as [`load_config`] does, and says once, on stderr, each key of it
/// whose behaviour the cache will not have (`use_phonemes: true`, `trim_silence: true`, ...:
/// `gpufeed_config::unhonoured`).
fn load_config_for_cache(path: Option<&Path>) -> Result<Config> {
    let config = training_config(path)?;
    config.unhonoured().iter().for_each(|w| printer::warn(w));
    Ok(config.config())
}

/// `gpufeed demo-data DIR [--clips N] [--seed S]`.
pub fn demo_data(args: &DemoDataArgs) -> Result<ExitCode> {
    let report =
        gpufeed_data::demo::generate(&args.dir, args.clips, args.seed).with_context(|| {
            format!(
                "cannot write the demo dataset into `{}`",
                args.dir.display()
            )
        })?;
    let doc = gpufeed_contract::DemoData {
        schema_version: <gpufeed_contract::DemoData as Document>::VERSION,
        dir: report.dir.display().to_string(),
        clips: report.clips,
        audio_s: report.audio_s,
        next: format!("gpufeed precompute --data {}", report.dir.display()),
    };
    printer::export(args.output.format, &doc, |d| {
        format!(
            "wrote {} clips ({:.0} s of audio) in LJSpeech layout to `{}`\nnext: {}\n",
            d.clips, d.audio_s, d.dir, d.next
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed precompute --data DIR ...`.
pub fn precompute(args: &PrecomputeArgs) -> Result<ExitCode> {
    let config = load_config_for_cache(args.config.as_deref())?;
    let on_error = match args.on_error.as_str() {
        "skip" => OnError::Skip,
        "fail" => OnError::Fail,
        other => anyhow::bail!("`--on-error {other}`: expected `skip` or `fail`"),
    };
    let shard = args.shard.as_deref().map(shard_spec).transpose()?;
    let mut defaults = precompute_options(&args.data, args.cache.as_deref(), &config)?;
    if let Some(layout) = args.layout.as_deref() {
        defaults.read.layout = Some(layout.parse()?);
    }
    if let Some(columns) = args.columns.as_deref() {
        defaults.read.columns = Columns::parse(columns)?;
    }
    defaults.read.mic.clone_from(&args.mic);
    if let Some(names) = args.features.as_deref() {
        defaults.arrays = gpufeed_data::settings::arrays_of(&config, Some(names))?;
    }
    let opts = Options {
        max_skipped: args.max_skipped.unwrap_or(defaults.max_skipped),
        jobs: args.jobs,
        on_error,
        shard,
        shard_items: args
            .shard_items
            .map_or(defaults.shard_items, |n| n as usize),
        ..defaults
    };
    let json = args.output.format == Format::Json;
    if args.merge {
        let report = precompute::merge_slices(&opts)?;
        if json {
            printer::export(Format::Json, &precompute_document(&report), |_| {
                String::new()
            })?;
            return Ok(ExitCode::SUCCESS);
        }
        let what = if report.was_complete {
            "was already complete"
        } else {
            "merged"
        };
        printer::data(&format!(
            "cache `{}` {what}: {} shard(s) of {} utterance(s), {} skipped (listed in `skipped.json`)\n",
            report.cache_dir.display(),
            report.shards_total,
            report.items,
            report.skipped.len()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let report = precompute::run(&opts, &Terminal::new())?;
    printer::export(args.output.format, &precompute_document(&report), |_| {
        report.summary() + "\n"
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed mel WAV --out FILE.npy [--config FILE]`.
pub fn mel(args: &MelArgs) -> Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let settings = config.data.audio();
    let audio = gpufeed_audio::decode::load(&args.wav, settings.sample_rate)?;
    let mut extractor = gpufeed_audio::mel::MelExtractor::new(&settings)?;
    let mel = extractor.compute(&audio.samples)?;
    gpufeed_audio::npy::write_f32(&args.out, &[mel.frames, mel.n_mels], &mel.data)?;
    let doc = gpufeed_contract::Mel {
        schema_version: <gpufeed_contract::Mel as Document>::VERSION,
        input: args.wav.display().to_string(),
        output: args.out.display().to_string(),
        frames: mel.frames,
        n_mels: mel.n_mels,
        sample_rate: settings.sample_rate,
        duration_s: audio.info.duration_s,
    };
    printer::export(args.output.format, &doc, |d| {
        format!(
            "wrote `{}`: float32 ({}, {}) from {:.2} s of audio\n",
            d.output, d.frames, d.n_mels, d.duration_s
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--shard I/N`, or `auto`: the slice of the array task this runs in (Slurm, Kubernetes),
/// said on stderr with the variables it came from. `precompute` and `trace` take the same.
pub fn shard_spec(spec: &str) -> Result<ShardSpec> {
    if spec != "auto" {
        return Ok(ShardSpec::parse(spec)?);
    }
    let task = array_job::detect(|k| std::env::var(k).ok())?;
    printer::note(&format!(
        "--shard auto: slice {}/{} from the {}",
        task.shard.index, task.shard.count, task.source
    ));
    Ok(task.shard)
}
