//! `gpufeed profile data` and `gpufeed profile step`, measured: how fast and how steadily
//! the loader delivers batches, and where a training step's time goes ([`step`]).
//!
//! 1. The cache: `--cache DIR` (a cache folder, or a cache root with one cache in it), or
//!    `--data DIR`, precomputed first when the cache is missing or stale.
//! 2. Cold reads: the shards' page cache is dropped (`posix_fadvise`), and a few batches
//!    are read from disk; when the kernel refuses, the report says so.
//! 3. Warm-up batches, reported apart, then `--batches N` batches, each timed as the
//!    consumer sees it: the wait for the next batch. With `--consumer-ms X` the consumer
//!    "computes" X ms per batch, the way a GPU step looks to the loader.
//! 4. Statistics, period and verdict come from gpufeed-stats (as `trace --kind steps`),
//!    over whole batches only (an epoch's short last batch is named and left out). *What*
//!    they judge depends on the consumer ([`Judged`]): with `--consumer-ms X` the waits, as
//!    a training step would see them, and the input-bound share by TF Profiler's
//!    thresholds; without one, the time a worker takes to make each batch. A consumer that
//!    takes batches as fast as they come sees `workers` batches finish together, then waits
//!    for the next round: its waits cycle every round whatever the loader does, so they
//!    only give the throughput.
//! 5. `--benchmark`: a grid of batch sizes × workers, each cell a fresh loader with its own
//!    warm-up, scored by samples per second among the stable cells; the best becomes a
//!    `data:` block to paste into the config.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use gpufeed_config::Config;
pub use gpufeed_contract::Judged;
use gpufeed_contract::{self as contract, Breakdown, Cell, Document, Recommendation, Steps};
use gpufeed_data::cache::{self, Cache};
use gpufeed_data::loader::{Loader, LoaderConfig, OverLength};
use gpufeed_data::settings::{self, Environment, Frontend, LoaderArgs, LoaderSettings};
use gpufeed_stats::thresholds::{INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE, STEP_CV_UNSTABLE};

use crate::Ui;

pub mod step;
pub mod step_text;
pub use step::{StepRun, StepSettings, step_profile};

/// The `precompute` document of a run's report.
#[must_use]
pub fn precompute_document(r: &gpufeed_data::precompute::Report) -> contract::Precompute {
    contract::Precompute {
        schema_version: contract::Precompute::VERSION,
        cache_dir: r.cache_dir.display().to_string(),
        key: r.key.clone(),
        dataset: contract::DatasetRead {
            layout: r.layout.clone(),
            detected: r.detected.clone(),
            notes: r.notes.clone(),
            items: r.items,
            speakers: r.speakers,
            languages: r.languages,
            cleaner: r.cleaner_name(),
            text_changed: r.text_changed,
            text_lost: r.text_lost.clone(),
            symbols: r.symbols,
        },
        shards_total: r.shards_total,
        shards_built: r.shards_built,
        shards_reused: r.shards_reused,
        items_computed: r.items_computed,
        audio_s_computed: r.audio_s_computed,
        skipped: r
            .skipped
            .iter()
            .map(|s| contract::LeftOut {
                id: s.id.clone(),
                line: s.line,
                reason: s.reason.clone(),
            })
            .collect(),
        complete: r.complete,
        was_complete: r.was_complete,
        over_text_length: r.over_text_length,
        over_mel_frames: r.over_mel_frames,
        elapsed_s: r.elapsed_s,
        jobs: r.jobs,
        arrays: r.arrays.clone(),
        cache_bytes: r.cache_bytes,
        bytes_per_hour: r.bytes_per_hour(),
    }
}

/// Makes sure the cache of dataset `data` is complete for `config`'s settings, building
/// what is missing (its progress and summary through `ui`); returns the cache folder.
///
/// # Errors
///
/// A dataset that cannot be read, or a cache left incomplete (items that failed).
pub fn ensure_cache(
    data: &Path,
    cache: Option<&Path>,
    config: &Config,
    ui: &dyn Ui,
) -> Result<PathBuf> {
    let report =
        gpufeed_data::precompute::run(&settings::precompute_options(data, cache, config)?, ui)?;
    ui.note(&report.summary());
    if !report.complete {
        anyhow::bail!("the cache `{}` is not complete", report.cache_dir.display());
    }
    Ok(report.cache_dir)
}

/// The effective loader settings of the command line: the config (or the defaults), the
/// environment (`RANK`, `WORLD_SIZE`), then `batch_size` and `workers` when given
/// ([`gpufeed_data::settings`]).
///
/// # Errors
///
/// A setting refused by [`LoaderSettings::resolve`].
pub fn loader_config(
    config: &Config,
    batch_size: Option<usize>,
    workers: Option<usize>,
) -> Result<LoaderConfig> {
    let args = LoaderArgs {
        batch_size,
        workers,
        ..LoaderArgs::default()
    };
    Ok(LoaderSettings::resolve(
        &args,
        config,
        true,
        &Environment::of_process()?,
        Frontend::Cli,
        || (1, 1),
    )?)
}

/// Finds the cache folder: a `<key>` folder itself, or the one cache under a root. With
/// several under a root, the one matching the config's feature settings.
fn find_cache(dir: &Path, config: &Config) -> Result<PathBuf> {
    if dir.join(cache::MANIFEST).is_file() {
        return Ok(dir.to_path_buf());
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the cache folder `{}`", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(cache::MANIFEST).is_file())
        .collect();
    found.sort();
    let wanted = gpufeed_data::settings::feature_settings(config)?.key();
    match found.len() {
        0 => bail!(
            "`{}` holds no complete cache; build one with `gpufeed precompute --data DIR --cache {}`",
            dir.display(),
            dir.display()
        ),
        1 => Ok(found.remove(0)),
        _ => found.into_iter().find(|p| p.ends_with(&wanted)).with_context(|| {
            format!(
                "`{}` holds several caches and none matches the config's feature settings (key `{wanted}`); pass the cache folder itself",
                dir.display()
            )
        }),
    }
}

/// What one loader run measured.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// The consumer's wait for each timed batch, ms.
    pub waits_ms: Vec<f64>,
    /// Utterances in each timed batch (filler rows not counted).
    pub items: Vec<usize>,
    read_ms: Vec<f64>,
    assemble_ms: Vec<f64>,
    /// The time one worker took to make each timed batch (read + assemble), ms.
    pub work_ms: Vec<f64>,
    /// Utterances in the timed batches.
    pub samples: usize,
    batch_bytes: u64,
    data_bytes: u64,
    /// Wall time of the timed batches, s.
    pub elapsed_s: f64,
}

/// Batches to take untimed before timing a loader: enough that every buffer of its pool has
/// been filled once. A batch built into a fresh buffer pays the first touch of its pages (a
/// `[32, 800, 80]` float32 batch: 2,000 page faults, 5 to 7 ms on the development VM, ten
/// times a warm batch), a one-time cost of the loader's start, not its steady rate: timed,
/// those few batches made the demo's loader look unstable (p99 ten times the median, cv above
/// 1). The pool holds what is queued (`prefetch`, rounded up to whole queues per worker), a
/// batch per worker being built and the consumer's; a worker that finds the pool empty for a
/// moment allocates one more, hence the slack of 2.
pub fn warmup_batches(lc: &LoaderConfig) -> usize {
    let w = lc.workers.max(1);
    let queued = lc.prefetch.div_ceil(w).max(1) * w;
    (queued + w + 1 + 2).max(4)
}

/// Pulls `warmup` untimed then `batches` timed batches from a stream of epochs (the
/// loader prepares across epoch boundaries, as in training).
pub fn measure(loader: &Loader, warmup: usize, batches: usize, consumer: Duration) -> Result<Run> {
    let mut run = Run::default();
    let mut stream = loader.stream(0);
    if stream.plan().batches.is_empty() {
        bail!(
            "the loader plans no batch: every utterance is over the length caps (see `over_length`)"
        );
    }
    let mut started = Instant::now();
    for seen in 0..warmup + batches {
        if seen == warmup {
            started = Instant::now();
        }
        let t = Instant::now();
        let batch = stream.next().context("the loader stream ended")??;
        let wait = t.elapsed();
        if seen >= warmup {
            run.waits_ms.push(wait.as_secs_f64() * 1e3);
            run.read_ms.push(batch.read_ns as f64 / 1e6);
            run.assemble_ms.push(batch.assemble_ns as f64 / 1e6);
            run.work_ms
                .push((batch.read_ns + batch.assemble_ns) as f64 / 1e6);
            run.items.push(batch.items().len());
            run.samples += batch.items().len();
            run.batch_bytes += batch.data_bytes + batch.pad_bytes;
            run.data_bytes += batch.data_bytes;
        }
        drop(batch);
        if !consumer.is_zero() {
            std::thread::sleep(consumer);
        }
    }
    run.elapsed_s = started.elapsed().as_secs_f64();
    Ok(run)
}

/// The statistics and verdict of a run with this consumer: of [`judged_of`] its series,
/// on whole batches (an epoch's short last batch is no cycle).
fn judge(run: &Run, consumer: Duration) -> Result<(Judged, Steps)> {
    let judged = judged_of(consumer);
    let (analysis, partial) = gpufeed_stats::analyze_batches(series(judged, run), &run.items)
        .context("no batch was timed")?;
    Ok((judged, Steps::new(&analysis, partial)))
}

/// The series a run with this consumer judges: with none, the workers' time per batch
/// (its waits only show the workers' batches arriving in rounds); else the waits.
pub fn judged_of(consumer: Duration) -> Judged {
    if consumer.is_zero() {
        Judged::Work
    } else {
        Judged::Wait
    }
}

/// Series `judged` of `run`.
pub fn series(judged: Judged, run: &Run) -> &[f64] {
    match judged {
        Judged::Work => &run.work_ms,
        Judged::Wait => &run.waits_ms,
    }
}

fn mean(v: &[f64]) -> f64 {
    gpufeed_stats::summary::mean(v)
}

/// A `profile data` measurement: its document, and what `analyze` plots and quotes.
#[derive(Debug)]
pub struct DataProfile {
    /// The JSON document.
    pub doc: contract::DataProfile,
    /// The judged series for each timed batch, ms (for plots; not in the JSON contract).
    pub series_ms: Vec<f64>,
    /// The loader settings measured.
    pub loader: LoaderConfig,
}

/// What `gpufeed profile data` measures: plain settings, filled by the command line.
#[derive(Debug, Clone, Default)]
pub struct DataSettings {
    /// A dataset folder, precomputed first when its cache is missing or stale.
    pub data: Option<PathBuf>,
    /// A cache folder (or a cache root with one cache in it).
    pub cache: Option<PathBuf>,
    /// The training config, read once by the caller.
    pub config: crate::config::TrainingConfig,
    /// Batch size, over the config's.
    pub batch_size: Option<usize>,
    /// Loader workers, over the config's.
    pub workers: Option<usize>,
    /// Batches to time (200 when absent).
    pub batches: Option<usize>,
    /// Run the batch size x workers grid.
    pub benchmark: bool,
    /// A consumer that computes this many ms per batch.
    pub consumer_ms: f64,
}

/// Measures the loader as `gpufeed profile data` does; the precompute's progress goes to
/// `ui` (the config's warnings are its reader's to say).
///
/// # Errors
///
/// A bad setting (named, with what to pass), a dataset or cache that cannot be read, or a
/// loader that plans no batch.
pub fn data_profile(args: &DataSettings, ui: &dyn Ui) -> Result<DataProfile> {
    let config = args.config.config();
    // Usage errors before any work (a precompute can take minutes).
    if args.batch_size == Some(0) {
        bail!("`--batch-size 0`: a batch needs at least one item");
    }
    if args.batches == Some(0) {
        bail!("`--batches 0`: time at least one batch");
    }
    if args.consumer_ms < 0.0 || !args.consumer_ms.is_finite() {
        bail!(
            "`--consumer-ms {}`: expected a duration of at least 0",
            args.consumer_ms
        );
    }
    let dir = match (&args.cache, &args.data) {
        (Some(c), _) => find_cache(c, &config)?,
        (None, Some(d)) => ensure_cache(d, None, &config, ui)?,
        (None, None) => bail!(
            "pass `--data DIR` (a dataset, precomputed first if needed) or `--cache DIR`; `gpufeed demo-data DIR` makes a dataset to try"
        ),
    };
    let lc = loader_config(&config, args.batch_size, args.workers)?;
    let consumer = Duration::from_secs_f64(args.consumer_ms / 1e3);
    let batches = args.batches.unwrap_or(200);
    let warmup = warmup_batches(&lc);

    // Cold reads first, before this process maps the cache.
    let (read_cold_ms, cold_note) = match cache::drop_page_cache(&dir) {
        Ok(_) => {
            let cache = Arc::new(Cache::open(&dir)?);
            let loader = Loader::new(cache, lc.clone())?;
            let cold = measure(&loader, 0, 4, Duration::ZERO)?;
            (Some(mean(&cold.read_ms)), None)
        }
        Err(e) => (None, Some(format!("could not drop the page cache: {e}"))),
    };
    let cache = Arc::new(Cache::open(&dir)?);
    // Every byte is read once here, against the manifest's checksums: a damaged shard stops the
    // profile with its name rather than skewing it.
    cache.verify()?;
    let loader = Loader::new(Arc::clone(&cache), lc.clone())?;
    let plan = loader.plan(0);
    let run = measure(&loader, warmup, batches, consumer)?;
    let (judged, report) = judge(&run, consumer)?;
    let breakdown = Breakdown {
        read_cold_ms,
        read_warm_ms: mean(&run.read_ms),
        assemble_ms: mean(&run.assemble_ms),
        queue_wait_ms: mean(&run.waits_ms),
        cold_note,
        padding_share: 1.0 - run.data_bytes as f64 / run.batch_bytes.max(1) as f64,
    };
    let (grid, recommendation) = if args.benchmark {
        let current = (run.samples as f64 / run.elapsed_s, mean(&run.waits_ms));
        let (g, r) = benchmark(&cache, &lc, consumer, current)?;
        (Some(g), Some(r))
    } else {
        (None, None)
    };
    let over_length = match lc.over_length {
        OverLength::Skip => "skip",
        OverLength::Truncate => "truncate",
    };
    let doc = contract::DataProfile {
        schema_version: <contract::DataProfile as Document>::VERSION,
        config: contract::DataConfig {
            cache: dir.display().to_string(),
            items: cache.len(),
            loader: serde_json::to_value(&lc)?,
            batches,
            warmup_batches: warmup,
            consumer_ms: args.consumer_ms,
            over_length: contract::OverLengthCount {
                policy: over_length.to_owned(),
                skipped: plan.skipped_over_length,
                truncated: plan.truncated,
            },
            dropped_last: plan.dropped_last,
        },
        samples_per_s: run.samples as f64 / run.elapsed_s,
        bytes_per_s: run.batch_bytes as f64 / run.elapsed_s,
        judged,
        batches: report,
        breakdown,
        grid,
        recommendation,
    };
    let profile = DataProfile {
        doc,
        series_ms: series(judged, &run).to_vec(),
        loader: lc,
    };
    Ok(profile)
}

/// The grid: batch sizes × workers sized to the machine; each cell a fresh loader with its
/// own warm-up. The winner has the most samples per second among cells whose cv (of the
/// judged series, [`Judged`]) is below [`STEP_CV_UNSTABLE`] (all cells when none is).
/// Where it is not faster than `current` (the settings as configured: the profile's own
/// run, samples per second and mean wait), the recommendation is to keep them: a
/// recommended setting is never slower than the current one.
fn benchmark(
    cache: &Arc<Cache>,
    base: &LoaderConfig,
    consumer: Duration,
    current: (f64, f64),
) -> Result<(Vec<Cell>, Recommendation)> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut workers: Vec<usize> = vec![1, cores.div_ceil(2), cores, 2 * cores];
    workers.sort_unstable();
    workers.dedup();
    let sizes: Vec<usize> = [8, 16, 32, 64]
        .into_iter()
        .filter(|&b| b <= cache.len().max(8))
        .collect();
    let mut grid = Vec::new();
    for &b in &sizes {
        for &w in &workers {
            let lc = LoaderConfig {
                batch_size: b,
                workers: w,
                prefetch: 2 * w,
                ..base.clone()
            };
            let warmup = warmup_batches(&lc);
            let loader = Loader::new(Arc::clone(cache), lc)?;
            let run = measure(&loader, warmup, 60, consumer)?;
            // Steadiness as the main run judges it: of whole batches, and with no consumer
            // of the workers' time (the waits of several workers cycle by construction).
            let (_, judged) = judge(&run, consumer)?;
            grid.push(Cell {
                batch_size: b,
                workers: w,
                samples_per_s: run.samples as f64 / run.elapsed_s,
                mean_wait_ms: mean(&run.waits_ms),
                cv: judged.cv,
            });
        }
    }
    let rec = recommend(&grid, base, current)?;
    Ok((grid, rec))
}

/// The grid's winner (see [`benchmark`]), or the settings as configured where it is not
/// faster than they ran (`current`: samples per second and mean wait).
fn recommend(grid: &[Cell], base: &LoaderConfig, current: (f64, f64)) -> Result<Recommendation> {
    let stable: Vec<&Cell> = grid.iter().filter(|c| c.cv < STEP_CV_UNSTABLE).collect();
    let pool: Vec<&Cell> = if stable.is_empty() {
        grid.iter().collect()
    } else {
        stable
    };
    let best = pool
        .into_iter()
        .max_by(|a, b| a.samples_per_s.total_cmp(&b.samples_per_s))
        .context("the benchmark grid is empty")?;
    Ok(if best.samples_per_s > current.0 {
        let prefetch = 2 * best.workers;
        Recommendation {
            batch_size: best.batch_size,
            num_workers: best.workers,
            prefetch_buffer_size: prefetch,
            samples_per_s: best.samples_per_s,
            mean_wait_ms: best.mean_wait_ms,
            yaml: data_yaml(best.batch_size, best.workers, prefetch),
            keep_current: false,
        }
    } else {
        Recommendation {
            batch_size: base.batch_size,
            num_workers: base.workers,
            prefetch_buffer_size: base.prefetch,
            samples_per_s: current.0,
            mean_wait_ms: current.1,
            yaml: data_yaml(base.batch_size, base.workers, base.prefetch),
            keep_current: true,
        }
    })
}

/// The `data:` block of loader settings to paste into the config.
fn data_yaml(batch_size: usize, workers: usize, prefetch: usize) -> String {
    format!(
        "data:\n  batch_size: {batch_size}\n  num_workers: {workers}\n  prefetch_buffer_size: {prefetch}\n"
    )
}

/// The text report of `profile data`: verdict first, then the figures behind it.
#[must_use]
pub fn render(p: &contract::DataProfile, consumer_ms: f64, lc: &LoaderConfig) -> String {
    let mut o = String::new();
    let b = &p.batches;
    let _ = writeln!(
        o,
        "loader: batch {}, {} worker(s), prefetch {}, {} batches timed after {} warm-up",
        lc.batch_size, lc.workers, lc.prefetch, b.samples, p.config.warmup_batches
    );
    let (skipped, truncated) = (p.config.over_length.skipped, p.config.over_length.truncated);
    if skipped + truncated > 0 {
        let _ = writeln!(
            o,
            "over the length caps: {skipped} utterance(s) skipped, {truncated} truncated per epoch (`data.over_length`)"
        );
    }
    let _ = writeln!(o);
    if consumer_ms > 0.0 {
        let share = b.mean_ms / (b.mean_ms + consumer_ms);
        let level = if share >= INPUT_BOUND_HIGH {
            "highly input-bound"
        } else if share >= INPUT_BOUND_MODERATE {
            "moderately input-bound"
        } else {
            "not input-bound"
        };
        let _ = writeln!(
            o,
            "{level}: the consumer waits {:.2} ms per {consumer_ms} ms step ({:.1} % of the step; TF Profiler: >= {:.0} % moderate, >= {:.0} % high)",
            b.mean_ms,
            share * 100.0,
            INPUT_BOUND_MODERATE * 100.0,
            INPUT_BOUND_HIGH * 100.0
        );
    }
    let _ = writeln!(
        o,
        "{}: {:.0} samples/s, {:.0} MB/s of batches; {} mean {:.3} ms, p95 {:.3}, p99 {:.3}, max {:.3}, cv {:.2}",
        b.verdict.as_str(),
        p.samples_per_s,
        p.bytes_per_s / 1e6,
        p.judged.what(),
        b.mean_ms,
        b.p95_ms,
        b.p99_ms,
        b.max_ms,
        b.cv
    );
    if let (Some(period), Some(r)) = (b.period_steps, b.period_strength) {
        let _ = writeln!(
            o,
            "  a cycle every {period} batches (autocorrelation {r:.2}): compare with the number of workers"
        );
    }
    if p.judged == Judged::Work {
        let _ = writeln!(
            o,
            "  judged: the time a worker takes to make each batch; with no consumer the waits ({:.3} ms mean) only show {} worker(s)' batches arriving in rounds (`--consumer-ms STEP_MS` judges the waits a training step would see)",
            p.breakdown.queue_wait_ms, lc.workers
        );
    }
    if let Some(note) = b.partial_note() {
        let _ = writeln!(o, "  {note}");
    }
    let _ = writeln!(o, "  outliers {} of {}", b.outliers, b.samples);
    let k = &p.breakdown;
    let _ = writeln!(o, "\nper batch:");
    match k.read_cold_ms {
        Some(c) => {
            let _ = writeln!(o, "  read, cold page cache  {c:>9.3} ms");
        }
        None => {
            let _ = writeln!(
                o,
                "  read, cold page cache  n/a ({})",
                k.cold_note.as_deref().unwrap_or("")
            );
        }
    }
    let _ = writeln!(o, "  read, warm page cache  {:>9.3} ms", k.read_warm_ms);
    let _ = writeln!(
        o,
        "  assemble and pad       {:>9.3} ms ({:.1} % of the bytes are padding)",
        k.assemble_ms,
        k.padding_share * 100.0
    );
    let _ = writeln!(o, "  consumer's wait        {:>9.3} ms", k.queue_wait_ms);
    if let (Some(grid), Some(r)) = (&p.grid, &p.recommendation) {
        let _ = writeln!(
            o,
            "\nbenchmark (samples/s; mean wait; cv of the {}):",
            p.judged.what()
        );
        for c in grid {
            let _ = writeln!(
                o,
                "  batch {:>3}  workers {:>2}  {:>9.0} samples/s  wait {:>8.3} ms  cv {:.2}",
                c.batch_size, c.workers, c.samples_per_s, c.mean_wait_ms, c.cv
            );
        }
        let keep = r.keep_words();
        let _ = writeln!(
            o,
            "\nrecommended ({:.0} samples/s, wait {:.3} ms per batch{keep}):\n{}",
            r.samples_per_s, r.mean_wait_ms, r.yaml
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpufeed_stats::StepVerdict;

    /// What `analyze` once reported on its own demo: with no consumer, two workers'
    /// batches arrive in rounds (a long wait, then one at once), so the waits cycle every
    /// round though every batch took the same work.
    fn rounds(workers: usize) -> Run {
        let n = 120;
        Run {
            waits_ms: (0..n)
                .map(|i| if i % workers == 0 { 6.0 } else { 0.02 })
                .collect(),
            work_ms: (0..n).map(|i| 6.0 + 0.05 * ((i * 7) % 5) as f64).collect(),
            items: vec![56; n],
            ..Run::default()
        }
    }

    /// The demo's loader at batch 56 and 2 workers made 111k samples/s; the grid's best
    /// cell (batch 32) 65k. It was "recommended" (issue 41): a recommendation is never
    /// slower than the settings as configured, so they are kept, and said so.
    #[test]
    fn a_grid_slower_than_the_current_settings_recommends_keeping_them() {
        let cell = |b: usize, w: usize, sps: f64| Cell {
            batch_size: b,
            workers: w,
            samples_per_s: sps,
            mean_wait_ms: 1.0,
            cv: 0.05,
        };
        let grid = vec![cell(8, 1, 20_000.0), cell(32, 2, 65_000.0)];
        let base = LoaderConfig {
            batch_size: 56,
            workers: 2,
            prefetch: 4,
            ..LoaderConfig::default()
        };
        let r = recommend(&grid, &base, (111_000.0, 0.3)).unwrap();
        assert!(r.keep_current);
        assert_eq!(
            (r.batch_size, r.num_workers, r.prefetch_buffer_size),
            (56, 2, 4)
        );
        assert!((r.samples_per_s - 111_000.0).abs() < 1e-9);
        assert!(r.keep_words().contains("keep the current settings"));
        let faster = recommend(&grid, &base, (50_000.0, 0.3)).unwrap();
        assert!(!faster.keep_current);
        assert_eq!((faster.batch_size, faster.num_workers), (32, 2));
    }

    #[test]
    fn with_no_consumer_the_workers_are_judged_not_their_rounds() {
        for workers in [2, 3, 4] {
            let run = rounds(workers);
            let (judged, report) = judge(&run, Duration::ZERO).unwrap();
            assert_eq!(judged, Judged::Work);
            assert_eq!(report.verdict, StepVerdict::Stable, "{workers} workers");
            assert!((report.mean_ms - 6.1).abs() < 0.1, "{}", report.mean_ms);
            // The same run judged by its waits, as a consumer with a step would be: the
            // rounds are a cycle there.
            let (judged, report) = judge(&run, Duration::from_millis(1)).unwrap();
            assert_eq!(judged, Judged::Wait);
            assert_eq!(
                report.verdict,
                StepVerdict::Oscillating,
                "{workers} workers"
            );
            assert_eq!(report.period_steps, Some(workers));
        }
    }

    /// A worker that stalls on every 5th batch is still a cycle with no consumer.
    #[test]
    fn with_no_consumer_a_stalling_worker_is_still_a_cycle() {
        let mut run = rounds(2);
        for (i, w) in run.work_ms.iter_mut().enumerate() {
            if i % 5 == 0 {
                *w = 40.0;
            }
        }
        let (_, report) = judge(&run, Duration::ZERO).unwrap();
        assert_eq!(report.verdict, StepVerdict::Oscillating);
        assert_eq!(report.period_steps, Some(5));
    }
}
