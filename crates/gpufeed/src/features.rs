//! `gpufeed demo-data`, `gpufeed precompute` (with `--shard auto` and `--merge` for array
//! jobs), `gpufeed mel`: the speech-feature commands.
//!
//! Thin: parse the config, call `gpufeed-data` / `gpufeed-audio`, draw the progress bar,
//! print the summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use gpufeed_config::Config;
use gpufeed_data::array_job;
use gpufeed_data::precompute::{self, OnError, Options, Progress, ShardSpec};

use crate::cli::{DemoDataArgs, MelArgs, PrecomputeArgs};
use crate::printer;

/// Loads `--config FILE` (defaults without one) and prints its warnings.
pub fn load_config(path: Option<&Path>) -> Result<Config> {
    Ok(load_config_source(path)?.map_or_else(Config::default, |l| l.config))
}

/// As [`load_config`], keeping the file's text and spans (which keys the file sets); `None`
/// without a file.
pub fn load_config_source(path: Option<&Path>) -> Result<Option<gpufeed_config::Loaded>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let loaded = gpufeed_config::load(path)?;
    for w in &loaded.warnings {
        printer::warn(&w.to_string());
    }
    Ok(Some(loaded))
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
    printer::data(&format!(
        "wrote {} clips ({:.0} s of audio) in LJSpeech layout to `{}`\nnext: gpufeed precompute --data {}\n",
        report.clips,
        report.audio_s,
        report.dir.display(),
        report.dir.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The progress bar on stderr: items/s and ETA. Hidden when stderr is not a terminal.
struct Bar(ProgressBar);

impl Bar {
    fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} utterances  {per_sec}  ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix("precompute");
        Self(bar)
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, done: u64) {
        self.0.set_length(total);
        self.0.set_position(done);
        self.0.reset_eta();
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The cache root: `--cache`, else `data.cache_dir` of the config, else `DATA/.gpufeed-cache`.
pub fn cache_root(cli: Option<&Path>, config: &Config, data: &Path) -> PathBuf {
    cli.map(Path::to_path_buf)
        .or_else(|| config.data.cache_dir.clone())
        .unwrap_or_else(|| {
            let dir = if data.is_dir() {
                data
            } else {
                data.parent().unwrap_or(Path::new("."))
            };
            dir.join(".gpufeed-cache")
        })
}

/// Precompute options for dataset `data` with `config`'s feature settings and length caps.
pub fn precompute_options(data: &Path, cache: Option<&Path>, config: &Config) -> Options {
    Options {
        audio: config.data.audio(),
        text: config.data.text(),
        max_text_length: Some(config.data.max_text_length),
        max_mel_frames: Some(config.data.max_mel_frames),
        ..Options::new(data, cache_root(cache, config, data))
    }
}

/// Makes sure the cache of dataset `data` is complete for `config`'s settings, building
/// what is missing with the progress bar (summary on stderr: stdout carries the caller's
/// report); returns the cache folder.
pub fn ensure_cache(data: &Path, cache: Option<&Path>, config: &Config) -> Result<PathBuf> {
    let report = precompute::run(&precompute_options(data, cache, config), &Bar::new())?;
    printer::note(&report.summary());
    if !report.complete {
        anyhow::bail!("the cache `{}` is not complete", report.cache_dir.display());
    }
    Ok(report.cache_dir)
}

/// `gpufeed precompute --data DIR ...`.
pub fn precompute(args: &PrecomputeArgs) -> Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let on_error = match args.on_error.as_str() {
        "skip" => OnError::Skip,
        "fail" => OnError::Fail,
        other => anyhow::bail!("`--on-error {other}`: expected `skip` or `fail`"),
    };
    let shard = match args.shard.as_deref() {
        Some("auto") => {
            let task = array_job::detect(|k| std::env::var(k).ok())?;
            printer::note(&format!(
                "--shard auto: slice {}/{} from the {}",
                task.shard.index, task.shard.count, task.source
            ));
            Some(task.shard)
        }
        other => other.map(ShardSpec::parse).transpose()?,
    };
    let defaults = precompute_options(&args.data, args.cache.as_deref(), &config);
    let opts = Options {
        jobs: args.jobs,
        on_error,
        shard,
        shard_items: args
            .shard_items
            .map_or(defaults.shard_items, |n| n as usize),
        ..defaults
    };
    if args.merge {
        let report = precompute::merge_slices(&opts)?;
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
    let report = precompute::run(&opts, &Bar::new())?;
    printer::data(&(report.summary() + "\n"))?;
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
    printer::data(&format!(
        "wrote `{}`: float32 ({}, {}) from {:.2} s of audio\n",
        args.out.display(),
        mel.frames,
        mel.n_mels,
        audio.info.duration_s
    ))?;
    Ok(ExitCode::SUCCESS)
}
