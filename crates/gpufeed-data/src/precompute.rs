//! `gpufeed precompute`: compute every utterance's features once, in parallel, into the
//! cache (see [`crate::cache`] for the format).
//!
//! 1. Read the dataset in its layout ([`crate::layout`]); stat every audio file (path,
//!    size, mtime); clean every text once and build the dataset's symbol table from them
//!    (so every `--shard I/N` task builds the same one).
//! 2. The settings give the cache key, so the folder; the utterances, in the layout's
//!    order, are cut into shards of [`SHARD_ITEMS`]; each shard's name carries a hash of
//!    the symbol table and of its members (id, text, segment, speaker, language, source
//!    identity).
//! 3. If `manifest.json` lists exactly these shards and they all exist, the cache is
//!    complete: say so and stop (milliseconds).
//! 4. Otherwise build the missing shards: worker threads (all cores; one feature extractor
//!    and tokenizer each) take utterances in manifest order and decode, resample and turn
//!    them into mel frames and tokens; the calling thread puts the results back in order,
//!    packs them into the shard being built and writes each shard (direct I/O, checksum
//!    from memory) as soon as its last utterance is in. Workers never wait for a shard
//!    boundary, and packing and writing overlap the computing.
//! 5. When every shard exists, write `manifest.json` and `skipped.json` (atomically) and
//!    delete shards of older datasets states.
//!
//! `--shard I/N` builds only the shards whose index is I mod N, so N machines can share a
//! dataset on shared storage; each run writes the manifest if it finds every shard there,
//! so whichever finishes last merges them. `--shard auto` takes I and N from a Slurm or
//! Kubernetes array task ([`crate::array_job`]); [`merge_slices`] (`precompute --merge`),
//! run after the array, writes the manifest or names every shard no task wrote.
//! Shard writes are atomic and idempotent, so overlapping runs never corrupt the cache,
//! and a run deletes only the temporary files of dead runs, so tasks that finish at the
//! same moment never delete each other's copy of the manifest.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};
use std::time::Instant;

use serde::Serialize;

use gpufeed_config::{AudioSettings, TextSettings};

use crate::cache::{
    self, AudioFacts, CachedItem, FeatureSettings, Limits, MANIFEST, Manifest, SHARD_ITEMS,
    SKIPPED, ShardData, ShardEntry, ShardMeta, ShardWriter, Skipped, SourceId, Totals, WriteIo,
};
use crate::error::DataError;
use crate::fsx;
use crate::layout::ReadOptions;
use crate::manifest::{Dataset, Item, Member};

/// What to do with an utterance that cannot be processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Leave it out, list it in `skipped.json`, go on.
    #[default]
    Skip,
    /// Stop at the first one (exit 2); shards written so far stay valid.
    Fail,
}

/// A slice of the shards: those whose index is `index` mod `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShardSpec {
    /// This run's slice, `0..count`.
    pub index: usize,
    /// Number of slices.
    pub count: usize,
}

impl ShardSpec {
    /// Parses `I/N`.
    pub fn parse(spec: &str) -> Result<Self, DataError> {
        let bad = || DataError::ShardSpec {
            spec: spec.to_string(),
        };
        let (i, n) = spec.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    fn owns(self, shard: usize) -> bool {
        shard % self.count == self.index
    }
}

/// Options of a precompute run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Dataset folder or manifest.
    pub data: PathBuf,
    /// Cache root; the cache itself is `cache_root/<key>`.
    pub cache_root: PathBuf,
    /// Audio settings.
    pub audio: AudioSettings,
    /// Text settings.
    pub text: TextSettings,
    /// The arrays cached besides the mel and tokens (`--features`).
    pub arrays: crate::arrays::Arrays,
    /// Token cap: longer utterances are kept and counted (the loader applies its policy).
    pub max_text_length: Option<usize>,
    /// Frame cap: likewise.
    pub max_mel_frames: Option<usize>,
    /// Worker threads; all cores when `None`.
    pub jobs: Option<usize>,
    /// Bad utterances: skip or fail.
    pub on_error: OnError,
    /// Build only a slice of the shards.
    pub shard: Option<ShardSpec>,
    /// Utterances per shard ([`SHARD_ITEMS`]; tests use small shards).
    pub shard_items: usize,
    /// How shards are written (direct I/O where the file system allows).
    pub io: WriteIo,
    /// How the dataset is read: `--layout`, `--columns`, `--mic` (its
    /// `use_normalized_text` is taken from [`Options::text`]).
    pub read: ReadOptions,
    /// The largest share of the dataset's items that may be left out (bad lines, audio that
    /// does not decode) before the run is an error: 0.05 unless `--max-skipped` says
    /// otherwise; 1.0 accepts any number, but never zero items cached.
    pub max_skipped: f64,
}

/// The share of items a run may leave out by default ([`Options::max_skipped`]).
pub const MAX_SKIPPED: f64 = 0.05;

impl Options {
    /// Default options for a dataset and a cache root: default settings, all cores, skip
    /// bad utterances, every shard.
    #[must_use]
    pub fn new(data: impl Into<PathBuf>, cache_root: impl Into<PathBuf>) -> Self {
        Self {
            data: data.into(),
            cache_root: cache_root.into(),
            audio: AudioSettings::default(),
            text: TextSettings::default(),
            arrays: crate::arrays::Arrays::default(),
            max_text_length: None,
            max_mel_frames: None,
            jobs: None,
            on_error: OnError::Skip,
            shard: None,
            shard_items: SHARD_ITEMS,
            io: WriteIo::Direct,
            read: ReadOptions::default(),
            max_skipped: MAX_SKIPPED,
        }
    }
}

/// Progress callbacks (the CLI draws a bar on stderr; the library never prints).
pub trait Progress: Sync {
    /// Work is about to start: `total` utterances in this run's slice, `done` already cached.
    fn start(&self, total: u64, done: u64);
    /// `n` more utterances done.
    fn advance(&self, n: u64);
    /// All done.
    fn finish(&self);
}

/// A [`Progress`] that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: u64, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The cache folder (`cache_root/<key>`).
    pub cache_dir: PathBuf,
    /// The key.
    pub key: String,
    /// Utterances in the dataset manifest (after malformed lines).
    pub items: usize,
    /// Shards of the whole cache.
    pub shards_total: usize,
    /// Shards this run built.
    pub shards_built: usize,
    /// Shards this run found already built.
    pub shards_reused: usize,
    /// Utterances this run computed.
    pub items_computed: usize,
    /// Audio seconds this run computed.
    pub audio_s_computed: f64,
    /// Utterances left out (bad audio, malformed lines), over the whole cache when complete.
    pub skipped: Vec<Skipped>,
    /// Whether every shard exists and the manifest is written.
    pub complete: bool,
    /// Whether the cache was already complete when the run started.
    pub was_complete: bool,
    /// Utterances with more tokens than `max_text_length`.
    pub over_text_length: usize,
    /// Utterances with more frames than `max_mel_frames`.
    pub over_mel_frames: usize,
    /// Wall time, seconds.
    pub elapsed_s: f64,
    /// Threads used.
    pub jobs: usize,
    /// The dataset's layout.
    pub layout: String,
    /// How it was chosen (`given`, or what detection saw).
    pub detected: String,
    /// What the reader chose that a user should know (text column, microphone, table).
    pub notes: Vec<String>,
    /// Distinct speakers of the dataset's items.
    pub speakers: usize,
    /// Distinct languages of the dataset's items.
    pub languages: usize,
    /// The cleaner (`data.cleaner`).
    pub cleaner: gpufeed_config::Cleaner,
    /// Items whose text the cleaner transliterated or dropped characters of (a warning:
    /// `cleaner: unicode` keeps every script).
    pub text_changed: usize,
    /// Those characters, each once (the first 24).
    pub text_lost: String,
    /// Distinct characters of the dataset's symbol table (ids from 4 on).
    pub symbols: usize,
    /// The arrays cached, as `--features` names them (`mel` first).
    pub arrays: Vec<String>,
    /// Bytes of the cache's shards, once complete.
    pub cache_bytes: u64,
    /// Seconds of audio the cache holds, once complete.
    pub cache_audio_s: f64,
}

impl Report {
    /// The cleaner's name in the config (`unicode`, `english`, ...).
    #[must_use]
    pub fn cleaner_name(&self) -> String {
        serde_json::to_value(self.cleaner)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// A one-paragraph summary for people.
    #[must_use]
    pub fn summary(&self) -> String {
        // A layout without the label (LJSpeech's speakers) says so: "0 speaker(s)" read as
        // a dataset whose speakers were lost.
        let labels = match (self.speakers, self.languages) {
            (0, 0) => "no speaker or language labels".to_owned(),
            (0, l) => format!("no speaker labels, {l} language(s)"),
            (s, 0) => format!("{s} speaker(s), no language labels"),
            (s, l) => format!("{s} speaker(s), {l} language(s)"),
        };
        let mut s = format!(
            "dataset: {} layout ({}); {labels}\n",
            self.layout, self.detected
        );
        for note in &self.notes {
            let _ = writeln!(s, "  {note}");
        }
        if self.text_changed > 0 {
            let _ = writeln!(
                s,
                "warning: the `{}` cleaner transliterated or dropped characters of {} item(s) ({}); `cleaner: unicode` keeps every script",
                self.cleaner_name(),
                self.text_changed,
                self.text_lost
                    .chars()
                    .map(String::from)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let _ = if self.was_complete {
            write!(
                s,
                "cache `{}` is complete: {} utterances, nothing to do",
                self.cache_dir.display(),
                self.items
            )
        } else {
            write!(
                s,
                "cache `{}`: built {} shard(s), reused {} of {}; {} utterances ({:.0} s of audio) in {:.1} s on {} thread(s)",
                self.cache_dir.display(),
                self.shards_built,
                self.shards_reused,
                self.shards_total,
                self.items_computed,
                self.audio_s_computed,
                self.elapsed_s,
                self.jobs
            )
        };
        if self.elapsed_s > 0.0 && self.audio_s_computed > 0.0 {
            let _ = write!(
                s,
                " ({:.0} audio-s/s)",
                self.audio_s_computed / self.elapsed_s
            );
        }
        if self.complete && self.cache_audio_s > 0.0 {
            let _ = write!(
                s,
                "\narrays: {}; {:.1} MB on disk, {:.0} MB per hour of audio",
                self.arrays.join(", "),
                self.cache_bytes as f64 / 1e6,
                self.bytes_per_hour() as f64 / 1e6
            );
        }
        if !self.skipped.is_empty() {
            let _ = write!(
                s,
                "\n{} utterance(s) skipped, listed in `{SKIPPED}`:",
                self.skipped.len()
            );
            for k in self.skipped.iter().take(10) {
                let _ = write!(
                    s,
                    "\n  line {}: {}: {}",
                    k.line,
                    k.id.as_deref().unwrap_or("?"),
                    k.reason
                );
            }
            if self.skipped.len() > 10 {
                let _ = write!(s, "\n  ... and {} more", self.skipped.len() - 10);
            }
        }
        if self.over_text_length + self.over_mel_frames > 0 {
            let _ = write!(
                s,
                "\n{} utterance(s) over max_text_length, {} over max_mel_frames: kept and flagged; the loader skips or truncates them as configured",
                self.over_text_length, self.over_mel_frames
            );
        }
        if !self.complete {
            let _ = write!(
                s,
                "\nnot complete yet: other `--shard` slices are missing; the run that completes the last one writes the manifest"
            );
        }
        s
    }
}

/// One shard's plan.
struct Plan {
    index: usize,
    file: String,
    items: Vec<usize>,
}

/// The outcome of one utterance.
enum Outcome {
    Done {
        record: Box<CachedItem>,
        mel: Vec<f32>,
        frames: usize,
        tokens: Vec<i32>,
        arrays: crate::arrays::ItemArrays,
    },
    Skipped(Skipped),
}

impl Outcome {
    /// `item` left out, for `reason`.
    fn skipped(item: &Item, reason: String) -> Self {
        Self::Skipped(Skipped {
            id: Some(item.id.clone()),
            line: item.line,
            audio: Some(item.audio.clone()),
            reason,
        })
    }
}

/// Runs a precompute.
pub fn run(opts: &Options, progress: &dyn Progress) -> Result<Report, DataError> {
    let started = Instant::now();
    let opened = open_dataset(opts)?;
    let Opened {
        dataset,
        key,
        dir,
        texts,
        specs,
        ..
    } = &opened;
    fsx::create_dir_all(dir)?;
    let _lock = Lock::acquire(dir, opts.shard)?;

    let (sources, plans) = plans_of(opts, dataset, key, texts);
    let jobs = opts
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let mut report = Report::new(&opened, opts, plans.len(), jobs);

    // Fast path: a complete cache for exactly these shards and length caps. (Other caps
    // need no new features, only new flags: the merge below rewrites the manifest.)
    if report.already_complete(&plans, opts, started) {
        return Ok(report);
    }

    let mine: Vec<&Plan> = plans
        .iter()
        .filter(|p| opts.shard.is_none_or(|s| s.owns(p.index)))
        .collect();
    let (todo, reused): (Vec<&Plan>, Vec<&Plan>) = mine
        .into_iter()
        .partition(|p| !cache::shard_is_sound(&dir.join(&p.file), mel_shape(opts), specs));
    report.shards_reused = reused.len();
    let total: usize = todo.iter().chain(&reused).map(|p| p.items.len()).sum();
    let done: usize = reused.iter().map(|p| p.items.len()).sum();
    progress.start(total as u64, done as u64);

    // Workers take utterances in manifest order from a shared counter and send what they
    // computed to this thread, which puts the outcomes back in order, packs them into the
    // shard being built and writes each shard when its last utterance arrives. No worker
    // ever waits for a shard to be complete (no barrier per shard, no serial packing
    // step), and the copy into the shard overlaps the computing.
    let order: Vec<usize> = todo.iter().flat_map(|p| p.items.iter().copied()).collect();
    let window = Window::new(WINDOW_PER_JOB * jobs);
    let (tx, rx) = mpsc::sync_channel::<(usize, Outcome)>(WINDOW_PER_JOB * jobs);
    let buffers = BufferPool::default();
    let next = AtomicUsize::new(0);
    let mut builder = Builder {
        key,
        dir,
        todo: &todo,
        n_mels: opts.audio.n_mels,
        on_error: opts.on_error,
        io: opts.io,
        buffers: &buffers,
        dataset,
        arrays: specs.len(),
        data: ShardData::with_arrays(specs).mel_as(opts.arrays.mel.dtype()),
        current: None,
        shard: 0,
        written: HashMap::new(),
        report: &mut report,
    };
    let built = std::thread::scope(|scope| -> Result<(), DataError> {
        for n in 0..jobs {
            let tx = tx.clone();
            let (window, next, order, buffers) = (&window, &next, &order, &buffers);
            let (dataset, sources) = (&dataset, &sources);
            std::thread::Builder::new()
                .name(format!("precompute-{n}"))
                .spawn_scoped(scope, move || {
                    let mut worker = Worker::new(opts, &texts.table);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= order.len() || !window.wait_for(k) {
                            break;
                        }
                        let i = order[k];
                        let item = &dataset.items[i];
                        // A panic is a bug in gpufeed, but it must not stop a 13,000-file
                        // run (nor hang it: the others would wait for this utterance
                        // forever): it becomes this utterance's error, and the worker's
                        // state, which it may have left half-updated, is rebuilt.
                        let run = std::panic::AssertUnwindSafe(|| {
                            worker.process(dataset, item, &texts.cleaned[i], &sources[i], buffers)
                        });
                        let out = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                            worker = Worker::new(opts, &texts.table);
                            Outcome::skipped(
                                item,
                                format!(
                                    "internal error ({}); please report it with this file",
                                    panic_message(panic.as_ref())
                                ),
                            )
                        });
                        progress.advance(1);
                        if tx.send((k, out)).is_err() {
                            break; // the writer stopped: its error is reported
                        }
                    }
                })
                .map_err(|e| {
                    window.stop();
                    DataError::Settings(format!("cannot start {jobs} worker threads: {e}"))
                })?;
        }
        drop(tx);
        let result = builder.run(rx, &window);
        // On an error, waiting workers wake and stop; the others stop at their next send.
        window.stop();
        result
    });
    progress.finish();
    built?;
    let written = std::mem::take(&mut builder.written);
    drop(builder);

    // Merge: the manifest is written once every shard of the cache exists.
    if let Some(manifest) = merge(&opened, &plans, written, opts)? {
        write_manifest(dir, &plans, manifest, &mut report, opts.max_skipped)?;
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// How the cache of `opts` stores the mel.
fn mel_shape(opts: &Options) -> cache::MelShape {
    cache::MelShape {
        n_mels: opts.audio.n_mels,
        dtype: opts.arrays.mel.dtype(),
    }
}

/// Opens the dataset of `opts` in its layout (refusing a bad line under `--on-error fail`,
/// and a dataset without items), checks the feature settings, cleans every text and builds
/// the dataset's symbol table; returns them with the settings' key and the cache folder.
fn open_dataset(opts: &Options) -> Result<Opened, DataError> {
    let read = ReadOptions {
        use_normalized_text: opts.text.use_normalized_text,
        ..opts.read.clone()
    };
    let dataset = crate::layout::open(&opts.data, &read)?;
    if let (OnError::Fail, Some(p)) = (opts.on_error, dataset.problems.first()) {
        return Err(DataError::BadLine {
            path: dataset.manifest.clone(),
            line: p.line,
            reason: p.reason.clone(),
        });
    }
    if dataset.items.is_empty() {
        let first = dataset.problems.first();
        return Err(DataError::NoItems {
            path: dataset.manifest.clone(),
            problems: dataset.problems.len(),
            first_line: first.map_or(0, |p| p.line),
            first_reason: first
                .map_or_else(|| "the file has no lines".into(), |p| p.reason.clone()),
        });
    }
    // Validate the settings before any work, with the extractors' own checks.
    crate::arrays::Extractor::new(&opts.arrays, &opts.audio).map_err(DataError::Settings)?;
    let settings = FeatureSettings::new(opts.audio.clone(), opts.text.clone())
        .with_arrays(opts.arrays.clone());
    let specs = opts.arrays.specs(&opts.audio);
    let key = settings.key();
    let dir = opts.cache_root.join(&key);
    let texts = Texts::of(&dataset, &opts.text);
    Ok(Opened {
        dataset,
        settings,
        key,
        dir,
        texts,
        specs,
    })
}

/// A dataset opened for a run: its items, the feature settings and their key, the cache
/// folder, and every item's text as it is tokenised.
struct Opened {
    dataset: Dataset,
    settings: FeatureSettings,
    key: String,
    dir: PathBuf,
    texts: Texts,
    /// The arrays beside the mel, in storage order.
    specs: Vec<crate::arrays::ArraySpec>,
}

/// Every item's text as it is tokenised, and the symbol table built from all of them.
struct Texts {
    /// Per item: its text cleaned by the configured cleaner, or its given tokens
    /// (`phonemes`) as they are.
    cleaned: Vec<String>,
    /// The dataset's characters: the English table first (English datasets keep their ids),
    /// then every other character of `cleaned` by code point.
    table: gpufeed_text::SymbolTable,
    /// Items whose text the cleaner transliterated or dropped characters of.
    changed: usize,
    /// Those characters, each once, in order of first appearance (at most [`LOST_SHOWN`]).
    lost: Vec<char>,
}

/// The most lost characters a report lists.
const LOST_SHOWN: usize = 24;

impl Texts {
    fn of(dataset: &Dataset, settings: &gpufeed_config::TextSettings) -> Self {
        let mut changed = 0;
        let mut lost: Vec<char> = Vec::new();
        let cleaned: Vec<String> = dataset
            .items
            .iter()
            .map(|item| {
                if let Some(tokens) = &item.tokens {
                    return tokens.trim().to_owned();
                }
                let checked = gpufeed_text::clean_checked(&item.text, settings.cleaner);
                if !checked.lost.is_empty() {
                    changed += 1;
                    for c in checked.lost {
                        if lost.len() < LOST_SHOWN && !lost.contains(&c) {
                            lost.push(c);
                        }
                    }
                }
                checked.text
            })
            .collect();
        let table = gpufeed_text::SymbolTable::from_texts(cleaned.iter().map(String::as_str));
        Self {
            cleaned,
            table,
            changed,
            lost,
        }
    }

    /// The table as the manifest stores it (and the shards' names hash it).
    fn table_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.table).unwrap_or_default()
    }
}

/// Writes `skipped.json` and then `manifest.json` (each atomically), deletes what earlier
/// dataset states and dead runs left, and marks `report` complete.
fn write_manifest(
    dir: &Path,
    plans: &[Plan],
    manifest: Manifest,
    report: &mut Report,
    max_skipped: f64,
) -> Result<(), DataError> {
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| DataError::Corrupt {
        path: dir.join(MANIFEST),
        reason: e.to_string(),
    })?;
    let skipped = serde_json::to_vec_pretty(&manifest.skipped).map_err(|e| DataError::Corrupt {
        path: dir.join(SKIPPED),
        reason: e.to_string(),
    })?;
    fsx::write_atomic(&dir.join(SKIPPED), &skipped)?;
    // A cache of nothing, or of a dataset most of which was left out, is not "done": the
    // manifest is not written (the shards stay, so a run with `--max-skipped` finishes
    // at once), and the error names the first reasons.
    too_many_skipped(dir, &manifest, max_skipped)?;
    fsx::write_atomic(&dir.join(MANIFEST), &json)?;
    remove_stale(dir, plans);
    report.complete = true;
    count_over(report, &manifest.items);
    report.sized(&manifest);
    report.skipped = manifest.skipped;
    Ok(())
}

/// [`DataError::NothingCached`] when no item was cached, [`DataError::TooManySkipped`]
/// when more than `max_skipped` of them were left out.
fn too_many_skipped(dir: &Path, manifest: &Manifest, max_skipped: f64) -> Result<(), DataError> {
    let (cached, skipped) = (manifest.items.len(), manifest.skipped.len());
    let total = cached + skipped;
    let first = || {
        let mut reasons: Vec<String> = Vec::new();
        for s in &manifest.skipped {
            // One example per distinct reason start, three at most.
            let head: String = s.reason.chars().take(40).collect();
            if reasons.len() < 3 && !reasons.iter().any(|r| r.contains(&head)) {
                reasons.push(format!(
                    "line {}: {}: {}",
                    s.line,
                    s.id.as_deref().unwrap_or("?"),
                    s.reason
                ));
            }
        }
        reasons.join("; ")
    };
    if cached == 0 {
        return Err(DataError::NothingCached {
            skipped,
            list: dir.join(SKIPPED),
            first: first(),
        });
    }
    #[allow(clippy::cast_precision_loss)] // a share
    let share = skipped as f64 / total as f64;
    if share > max_skipped {
        return Err(DataError::TooManySkipped {
            skipped,
            total,
            percent: share * 100.0,
            allowed: max_skipped * 100.0,
            list: dir.join(SKIPPED),
            first: first(),
        });
    }
    Ok(())
}

/// The merge step after an array job (`gpufeed precompute --merge`): checks that every
/// shard of the cache is there and sound, and writes the manifest; computes nothing.
/// Shards missing or damaged are an error that names each one (index, file, and the
/// `--shard I/N` slice that builds it when the slices' lock files tell N), never skipped.
pub fn merge_slices(opts: &Options) -> Result<Report, DataError> {
    let started = Instant::now();
    let opened = open_dataset(opts)?;
    let Opened {
        dataset,
        key,
        dir,
        texts,
        specs,
        ..
    } = &opened;
    let (_, plans) = plans_of(opts, dataset, key, texts);
    if !dir.is_dir() {
        return Err(DataError::MissingShards {
            list: "the folder does not exist, so no slice has run on it (is `--cache` the \
                   folder the array tasks were given, with the same `--config`?)"
                .to_owned(),
            dir: dir.clone(),
            missing: plans.len(),
            total: plans.len(),
        });
    }
    let _lock = Lock::acquire(dir, None)?;
    let slices = slice_counts(dir);
    let mut missing = Vec::new();
    for plan in &plans {
        let path = dir.join(&plan.file);
        let what = if !path.is_file() {
            "missing".to_owned()
        } else if let Err(e) = cache::check_shard(&path, mel_shape(opts), specs) {
            format!("damaged: {e}")
        } else {
            continue;
        };
        let slice = match slices.as_slice() {
            [n] => format!(", slice `--shard {}/{n}`", plan.index % n),
            _ => String::new(),
        };
        missing.push(format!(
            "shard {} (`{}`{slice}) {what}",
            plan.index, plan.file
        ));
    }
    if !missing.is_empty() {
        const SHOWN: usize = 10;
        let mut list = missing[..missing.len().min(SHOWN)].join("; ");
        if missing.len() > SHOWN {
            let _ = write!(list, "; and {} more", missing.len() - SHOWN);
        }
        return Err(DataError::MissingShards {
            dir: dir.clone(),
            missing: missing.len(),
            total: plans.len(),
            list,
        });
    }
    let mut report = Report::new(&opened, opts, plans.len(), 1);
    report.shards_reused = plans.len();
    if report.already_complete(&plans, opts, started) {
        return Ok(report);
    }
    let manifest =
        merge(&opened, &plans, HashMap::new(), opts)?.ok_or_else(|| DataError::MissingShards {
            dir: dir.clone(),
            missing: 1,
            total: plans.len(),
            list: "a shard was deleted while merging".to_owned(),
        })?;
    write_manifest(dir, &plans, manifest, &mut report, opts.max_skipped)?;
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The slice counts N of the `--shard I/N` runs that locked `dir` (their lock files stay).
fn slice_counts(dir: &Path) -> Vec<usize> {
    let mut counts: Vec<usize> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (_, n) = name.strip_prefix(".lock-shard-")?.split_once("-of-")?;
            n.parse().ok()
        })
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

impl Report {
    /// A run on cache folder `dir` that has done nothing yet.
    fn new(opened: &Opened, opts: &Options, shards_total: usize, jobs: usize) -> Self {
        let Opened {
            dataset,
            key,
            dir,
            texts,
            ..
        } = opened;
        Self {
            cleaner: opts.text.cleaner,
            text_changed: texts.changed,
            text_lost: texts.lost.iter().collect(),
            symbols: texts.table.symbols().len(),
            cache_dir: dir.to_path_buf(),
            key: key.to_owned(),
            items: dataset.items.len(),
            layout: dataset.layout.name().to_owned(),
            detected: dataset.detected.clone(),
            notes: dataset.notes.clone(),
            speakers: dataset.speakers().len(),
            languages: dataset.languages().len(),
            shards_total,
            shards_built: 0,
            shards_reused: 0,
            items_computed: 0,
            audio_s_computed: 0.0,
            skipped: Vec::new(),
            complete: false,
            was_complete: false,
            over_text_length: 0,
            over_mel_frames: 0,
            elapsed_s: 0.0,
            jobs,
            arrays: opts.arrays.names(),
            cache_bytes: 0,
            cache_audio_s: 0.0,
        }
    }

    /// The cache's size per hour of audio, bytes (0 until it is complete).
    #[must_use]
    pub fn bytes_per_hour(&self) -> u64 {
        if self.cache_audio_s > 0.0 {
            (self.cache_bytes as f64 * 3600.0 / self.cache_audio_s).round() as u64
        } else {
            0
        }
    }

    /// The size figures of a complete cache.
    fn sized(&mut self, manifest: &Manifest) {
        self.cache_bytes = manifest.shards.iter().map(|s| s.bytes).sum();
        self.cache_audio_s = manifest.totals.audio_s;
    }

    /// Whether the cache folder is already complete for `plans` under `opts`' length caps;
    /// if so, the report says so (what the manifest lists, the time since `started`).
    fn already_complete(&mut self, plans: &[Plan], opts: &Options, started: Instant) -> bool {
        let Some(existing) = complete_manifest(&self.cache_dir, plans, &limits(opts)) else {
            return false;
        };
        self.was_complete = true;
        self.complete = true;
        count_over(self, &existing.items);
        self.sized(&existing);
        self.skipped = existing.skipped;
        self.elapsed_s = started.elapsed().as_secs_f64();
        true
    }
}

/// The length caps of `opts`.
fn limits(opts: &Options) -> Limits {
    Limits {
        max_text_length: opts.max_text_length,
        max_mel_frames: opts.max_mel_frames,
    }
}

/// The manifest of `dir` when it lists exactly `plans`' shards, each there with the size
/// it had when written, under the same length caps; `None` otherwise.
fn complete_manifest(dir: &Path, plans: &[Plan], limits: &Limits) -> Option<Manifest> {
    let existing = cache::read_manifest(dir).ok()?;
    let whole = existing.limits == *limits
        && existing.shards.len() == plans.len()
        && existing.shards.iter().zip(plans).all(|(s, p)| {
            // Same name and same size: a truncated or replaced shard is rebuilt.
            s.file == p.file
                && std::fs::metadata(dir.join(&s.file)).is_ok_and(|m| m.len() == s.bytes)
        });
    whole.then_some(existing)
}

fn count_over(report: &mut Report, items: &[CachedItem]) {
    report.over_text_length = items.iter().filter(|i| i.over_text_length).count();
    report.over_mel_frames = items.iter().filter(|i| i.over_mel_frames).count();
}

/// The source identity of every utterance of `dataset`, and its shards under `key`.
fn plans_of(
    opts: &Options,
    dataset: &Dataset,
    key: &str,
    texts: &Texts,
) -> (Vec<SourceId>, Vec<Plan>) {
    let sources: Vec<SourceId> = dataset
        .items
        .iter()
        .map(|it| SourceId::of(&dataset.root, &it.audio))
        .collect();
    // The symbol table is the dataset's: a new character anywhere changes ids everywhere,
    // so every shard's name covers it.
    let salted = format!("{key} {}", texts.table_json());
    let plans = plan_shards(&salted, &dataset.items, &sources, opts.shard_items.max(1));
    (sources, plans)
}

/// Cuts the utterances into shards and names each after a hash of its members.
fn plan_shards(key: &str, items: &[Item], sources: &[SourceId], per_shard: usize) -> Vec<Plan> {
    (0..items.len())
        .collect::<Vec<_>>()
        .chunks(per_shard)
        .enumerate()
        .map(|(index, members)| {
            let mut h = blake3::Hasher::new();
            h.update(key.as_bytes());
            for &i in members {
                let (it, src) = (&items[i], &sources[i]);
                for field in [
                    it.id.as_bytes(),
                    it.text.as_bytes(),
                    src.path.as_os_str().as_encoded_bytes(),
                ] {
                    h.update(&(field.len() as u64).to_le_bytes());
                    h.update(field);
                }
                h.update(&src.size.to_le_bytes());
                h.update(&src.mtime_ns.to_le_bytes());
                h.update(&(it.line as u64).to_le_bytes());
                // What else the shard stores of the item, or reads of its source.
                let rest = serde_json::to_vec(&(
                    &it.speaker,
                    &it.language,
                    &it.tokens,
                    it.offset_s,
                    it.duration_s,
                    it.channel,
                    &it.member,
                    &it.fields,
                ))
                .unwrap_or_default();
                h.update(&(rest.len() as u64).to_le_bytes());
                h.update(&rest);
            }
            let hash = h.finalize().to_hex();
            Plan {
                index,
                file: format!("shard-{index:05}-{}.safetensors", &hash[..12]),
                items: members.to_vec(),
            }
        })
        .collect()
}

/// Per-thread state: one feature extractor and one tokenizer, reused for every utterance.
struct Worker {
    features: Result<crate::arrays::Extractor, String>,
    tokenizer: gpufeed_text::Tokenizer,
    sample_rate: u32,
}

impl Worker {
    fn new(opts: &Options, table: &gpufeed_text::SymbolTable) -> Self {
        Self {
            features: crate::arrays::Extractor::new(&opts.arrays, &opts.audio),
            tokenizer: gpufeed_text::Tokenizer::with_symbols(&opts.text, table.clone()),
            sample_rate: opts.audio.sample_rate,
        }
    }

    fn process(
        &mut self,
        dataset: &Dataset,
        item: &Item,
        cleaned: &str,
        source: &SourceId,
        buffers: &BufferPool,
    ) -> Outcome {
        #[cfg(test)]
        if item.id == tests::PANICS {
            panic!("injected for a test");
        }
        let skipped = |reason: String| Outcome::skipped(item, reason);
        let features = match &mut self.features {
            Ok(m) => m,
            Err(e) => return skipped(e.clone()),
        };
        let audio = match read_audio(&dataset.audio_path(item), item, self.sample_rate) {
            Ok(a) => a,
            Err(e) => return skipped(e),
        };
        let mut frames_buf = buffers.take();
        let mut arrays = crate::arrays::ItemArrays::default();
        let frames = match features.compute(&audio.samples, &mut frames_buf, &mut arrays) {
            Ok(f) => f,
            Err(e) => {
                buffers.give(frames_buf);
                return skipped(e);
            }
        };
        let tokens: Vec<i32> = self
            .tokenizer
            .encode(cleaned)
            .into_iter()
            .map(|t| i32::try_from(t).unwrap_or(i32::MAX))
            .collect();
        if tokens.is_empty() {
            return skipped("the text is empty after cleaning".into());
        }
        let record = CachedItem {
            id: item.id.clone(),
            text: item.text.clone(),
            line: item.line,
            shard: 0,
            row: 0,
            mel_frames: u32::try_from(frames).unwrap_or(u32::MAX),
            text_tokens: u32::try_from(tokens.len()).unwrap_or(u32::MAX),
            audio: AudioFacts {
                duration_s: audio.info.duration_s,
                source_rate: audio.source_rate,
                peak: audio.info.peak,
                clipped_samples: audio.info.clipped_samples,
                silence_fraction: audio.info.silence_fraction,
            },
            source: source.clone(),
            offset_s: item.offset_s,
            segment_s: item.duration_s,
            speaker: item.speaker.clone(),
            language: item.language.clone(),
            fields: item.fields.clone(),
            over_text_length: false,
            over_mel_frames: false,
        };
        Outcome::Done {
            record: Box::new(record),
            mel: frames_buf,
            frames,
            tokens,
            arrays,
        }
    }
}

/// Decodes `item`'s audio at `rate`: its file, or its bytes inside an archive.
pub(crate) fn read_audio(
    path: &Path,
    item: &Item,
    rate: u32,
) -> Result<gpufeed_audio::decode::Audio, String> {
    match &item.member {
        None => {
            gpufeed_audio::decode::load_span(path, rate, &item.span()).map_err(|e| e.to_string())
        }
        Some(Member::Tar { name, offset, size }) => {
            let bytes = read_at(path, *offset, *size)?;
            let name = PathBuf::from(format!("{}:{name}", path.display()));
            gpufeed_audio::decode::decode_bytes_span(&bytes, &name, rate, &item.span())
                .map_err(|e| e.to_string())
        }
        Some(member @ Member::Row { .. }) => {
            let (bytes, name) = crate::layout::row_bytes(path, member)?;
            let name = PathBuf::from(format!("{}:{name}", path.display()));
            gpufeed_audio::decode::decode_bytes_span(&bytes, &name, rate, &item.span())
                .map_err(|e| e.to_string())
        }
    }
}

/// `size` bytes of `path` from `offset` (a member of an archive), with one positioned read.
fn read_at(path: &Path, offset: u64, size: u64) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::FileExt as _;
    if size > gpufeed_audio::decode::MAX_AUDIO_FILE_BYTES {
        return Err(format!(
            "`{}`: a member of {size} bytes, more than the {} MiB gpufeed reads",
            path.display(),
            gpufeed_audio::decode::MAX_AUDIO_FILE_BYTES >> 20
        ));
    }
    let file = fsx::open(path).map_err(|e| e.to_string())?;
    let mut bytes = vec![0; usize::try_from(size).unwrap_or(usize::MAX)];
    file.read_exact_at(&mut bytes, offset).map_err(|e| {
        format!(
            "`{}`: reading a member at byte {offset}: {e}",
            path.display()
        )
    })?;
    Ok(bytes)
}

/// The message of a panic payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Per-utterance mel buffers, reused across utterances and shards.
#[derive(Default)]
struct BufferPool(Mutex<Vec<Vec<f32>>>);

impl BufferPool {
    fn take(&self) -> Vec<f32> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    fn give(&self, mut buffer: Vec<f32>) {
        buffer.clear();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buffer);
    }
}

/// How far (in utterances, per worker) the workers may run ahead of the oldest utterance
/// not yet back: it bounds the outcomes held in memory while one slow utterance is out.
const WINDOW_PER_JOB: usize = 64;

/// The workers' window: utterance `k` may start once every utterance before
/// `k - size` is back, so memory stays bounded whatever order they finish in. Utterances
/// are taken in order, so the one the window waits for is always being computed.
struct Window {
    /// Utterances back in order; `usize::MAX` once the run stops.
    back: Mutex<usize>,
    moved: Condvar,
    size: usize,
}

impl Window {
    fn new(size: usize) -> Self {
        Self {
            back: Mutex::new(0),
            moved: Condvar::new(),
            size: size.max(1),
        }
    }

    /// Waits until utterance `k` may start; false when the run has stopped.
    fn wait_for(&self, k: usize) -> bool {
        let mut back = self.back.lock().unwrap_or_else(PoisonError::into_inner);
        while *back != usize::MAX && k >= *back + self.size {
            back = self
                .moved
                .wait(back)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *back != usize::MAX
    }

    fn advance(&self, back: usize) {
        let mut b = self.back.lock().unwrap_or_else(PoisonError::into_inner);
        if *b != usize::MAX {
            *b = back;
        }
        self.moved.notify_all();
    }

    fn stop(&self) {
        *self.back.lock().unwrap_or_else(PoisonError::into_inner) = usize::MAX;
        self.moved.notify_all();
    }
}

/// The writing side of a run: puts outcomes back in order and builds and writes shards.
struct Builder<'a> {
    key: &'a str,
    dir: &'a Path,
    /// The shards to build, in order; their utterances are the workers' order.
    todo: &'a [&'a Plan],
    n_mels: usize,
    on_error: OnError,
    io: WriteIo,
    buffers: &'a BufferPool,
    dataset: &'a Dataset,
    /// Arrays beside the mel.
    arrays: usize,
    /// The shard being built (its buffers are reused for every shard).
    data: ShardData,
    /// Its metadata and its file, from its first utterance on.
    current: Option<(ShardMeta, ShardWriter)>,
    /// Index into `todo` of the shard being built.
    shard: usize,
    /// The shards written, with their entries and metadata (the merge needs not read
    /// them back).
    written: HashMap<String, (ShardEntry, ShardMeta)>,
    report: &'a mut Report,
}

impl Builder<'_> {
    /// Takes outcomes until the workers are done or one fails the run.
    fn run(
        &mut self,
        rx: mpsc::Receiver<(usize, Outcome)>,
        window: &Window,
    ) -> Result<(), DataError> {
        let mut pending: HashMap<usize, Outcome> = HashMap::new();
        let mut back = 0;
        for (k, outcome) in rx {
            pending.insert(k, outcome);
            while let Some(outcome) = pending.remove(&back) {
                self.take(outcome)?;
                back += 1;
                window.advance(back);
            }
        }
        Ok(())
    }

    /// Adds the next outcome (in order) to the shard being built; writes the shard when
    /// it was its last utterance. Under `--on-error fail` a skipped utterance is the error.
    fn take(&mut self, outcome: Outcome) -> Result<(), DataError> {
        let Some(plan) = self.todo.get(self.shard) else {
            return Ok(());
        };
        let (meta, writer) = self.current.get_or_insert_with(|| {
            let strings: usize = plan
                .items
                .iter()
                .map(|&i| {
                    let it = &self.dataset.items[i];
                    it.id.len() + it.text.len() + it.audio.as_os_str().len()
                })
                .sum();
            let meta = ShardMeta {
                format: cache::FORMAT.into(),
                version: cache::VERSION,
                key: self.key.into(),
                shard: u32::try_from(plan.index).unwrap_or(u32::MAX),
                items: Vec::new(),
                skipped: Vec::new(),
            };
            let writer = ShardWriter::new(
                &self.dir.join(&plan.file),
                self.n_mels,
                self.io,
                cache::head_reserve(plan.items.len(), strings, self.arrays),
            );
            (meta, writer)
        });
        match outcome {
            Outcome::Done {
                mut record,
                mel,
                frames,
                tokens,
                arrays,
            } => {
                record.shard = meta.shard;
                record.row = u32::try_from(meta.items.len()).unwrap_or(u32::MAX);
                self.report.items_computed += 1;
                self.report.audio_s_computed += record.audio.duration_s;
                let pushed = self.data.push(&mel, frames, &tokens);
                self.buffers.give(mel);
                pushed?;
                self.data.push_arrays(&arrays)?;
                writer.write_ready(&self.data)?;
                meta.items.push(*record);
            }
            Outcome::Skipped(s) => {
                if self.on_error == OnError::Fail {
                    return Err(DataError::Item {
                        id: s.id.unwrap_or_default(),
                        audio: s.audio.unwrap_or_default(),
                        line: s.line,
                        reason: s.reason,
                    });
                }
                meta.skipped.push(s);
            }
        }
        if meta.items.len() + meta.skipped.len() == plan.items.len()
            && let Some((meta, writer)) = self.current.take()
        {
            let entry = writer.finish(&mut self.data, &meta)?;
            self.report.shards_built += 1;
            self.data.clear();
            self.written.insert(entry.file.clone(), (entry, meta));
            self.shard += 1;
        }
        Ok(())
    }
}

/// The manifest, if every shard exists; `None` while some are missing.
fn merge(
    opened: &Opened,
    plans: &[Plan],
    mut written: HashMap<String, (ShardEntry, ShardMeta)>,
    opts: &Options,
) -> Result<Option<Manifest>, DataError> {
    let Opened {
        dataset,
        settings,
        key,
        dir,
        texts,
        specs,
    } = opened;
    let mut items = Vec::with_capacity(dataset.items.len());
    let mut skipped: Vec<Skipped> = dataset
        .problems
        .iter()
        .map(|p| Skipped {
            id: p.id.clone(),
            line: p.line,
            audio: None,
            reason: p.reason.clone(),
        })
        .collect();
    let mut shards = Vec::with_capacity(plans.len());
    let mut totals = Totals::default();
    for plan in plans {
        let path = dir.join(&plan.file);
        if !path.is_file() {
            return Ok(None);
        }
        // Shards this run wrote were hashed by the writer, from memory; others (reused
        // from an earlier run, or built by another `--shard I/N` machine) are read and
        // hashed here.
        let (entry, meta) = match written.remove(&plan.file) {
            Some(done) => done,
            None => {
                let meta = cache::read_shard_meta(&path)?;
                (ShardEntry::of(dir, &plan.file, meta.items.len())?, meta)
            }
        };
        for it in &meta.items {
            totals.mel_frames += u64::from(it.mel_frames);
            totals.tokens += u64::from(it.text_tokens);
            totals.audio_s += it.audio.duration_s;
        }
        shards.push(entry);
        items.extend(meta.items);
        skipped.extend(meta.skipped);
    }
    skipped.sort_by_key(|s| s.line);
    let limits = limits(opts);
    limits.flag(&mut items);
    totals.items = items.len();
    totals.skipped = skipped.len();
    let symbols = texts.table_json();
    Ok(Some(Manifest {
        format: cache::FORMAT.into(),
        version: cache::VERSION,
        key: key.into(),
        settings: settings.clone(),
        symbols,
        limits,
        dataset: dataset.manifest.clone(),
        layout: dataset.layout.name().to_owned(),
        speakers: distinct(items.iter().filter_map(|i| i.speaker.clone())),
        languages: distinct(items.iter().filter_map(|i| i.language.clone())),
        arrays: specs.clone(),
        user_arrays: carried_user_arrays(dir, &shards),
        written_by: concat!("gpufeed ", env!("CARGO_PKG_VERSION")).into(),
        shards,
        items,
        skipped,
        totals,
    }))
}

/// The user arrays of the cache's last manifest whose every file is beside one of
/// `shards` (the user arrays survive a run that changed nothing, or only the length caps);
/// those of a cache whose shards changed are left out, and `Cache.add` computes them
/// again.
fn carried_user_arrays(dir: &Path, shards: &[ShardEntry]) -> Vec<crate::user::UserArrayEntry> {
    let Ok(old) = cache::read_manifest(dir) else {
        return Vec::new();
    };
    old.user_arrays
        .into_iter()
        .filter(|u| {
            u.shards.len() == shards.len()
                && u.shards
                    .iter()
                    .zip(shards)
                    .all(|(f, s)| crate::user::is_beside(&f.file, &s.file) && f.items == s.items)
        })
        .collect()
}

/// The distinct values, sorted.
fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Seconds a temporary file other than a shard's must be left alone before it counts as a
/// dead run's: array tasks on other machines write their copy of the manifest at the same
/// moment as this run, and their process ids mean nothing here.
const TMP_GRACE_S: u64 = 60;

/// Whether `.NAME.tmp-PID-XXXXXX` (gpufeed-fs) was left by a dead run: its process is not alive on this
/// machine and, unless it is a shard's, it is older than [`TMP_GRACE_S`]. A live run's
/// temporary file (another array task finishing at the same moment) is kept.
fn dead_tmp(entry: &std::fs::DirEntry, name: &str) -> bool {
    let Some((file, pid)) = gpufeed_fs::temp_owner(name) else {
        return false;
    };
    let alive = pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists();
    let old = entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age.as_secs() >= TMP_GRACE_S);
    !alive && (file.starts_with("shard-") || old)
}

/// Deletes shard files of earlier dataset states and temporary files of dead runs.
fn remove_stale(dir: &Path, plans: &[Plan]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // A user array's file beside a shard of the plan stays (listed in the manifest, or
        // left by an interrupted `Cache.add`, which resumes from it).
        let stale_shard = name.starts_with("shard-")
            && name.ends_with(".safetensors")
            && !plans
                .iter()
                .any(|p| p.file == name || crate::user::is_beside(&name, &p.file));
        let stale_tmp = dead_tmp(&entry, &name);
        if stale_shard || stale_tmp {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// An exclusive lock on a cache folder, released when dropped (or when the process dies:
/// it is an OS file lock, not a marker file).
pub(crate) struct Lock {
    _file: std::fs::File,
}

impl Lock {
    pub(crate) fn acquire(dir: &Path, shard: Option<ShardSpec>) -> Result<Self, DataError> {
        use std::io::{Read as _, Seek as _, Write as _};
        let name = shard.map_or_else(
            || ".lock".to_string(),
            |s| format!(".lock-shard-{}-of-{}", s.index, s.count),
        );
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| DataError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(DataError::Locked {
                    dir: dir.to_path_buf(),
                    holder: holder.trim().to_string(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(DataError::io(&path, e)),
        }
        let host = fsx::read(Path::new("/proc/sys/kernel/hostname"))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "pid {} on {}", std::process::id(), host.trim());
        let _ = file.flush();
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An utterance with this id panics in [`Worker::process`].
    pub(super) const PANICS: &str = "PANIC-0002";

    #[test]
    fn a_panic_on_one_utterance_is_its_error_not_the_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        crate::demo::generate(&data, 4, 1).unwrap();
        let meta = data.join("metadata.csv");
        let text = String::from_utf8(fsx::read(&meta).unwrap()).unwrap();
        fsx::write_atomic(&meta, text.replace("DEMO-0002", PANICS).as_bytes()).unwrap();
        std::fs::rename(
            data.join("wavs/DEMO-0002.wav"),
            data.join(format!("wavs/{PANICS}.wav")),
        )
        .unwrap();
        let o = Options {
            jobs: Some(2),
            shard_items: 2,
            // One of four left out is over the default 5 %.
            max_skipped: 0.25,
            ..Options::new(&data, tmp.path().join("cache"))
        };
        let r = run(&o, &Silent).unwrap();
        assert!(r.complete);
        assert_eq!(r.items_computed, 3);
        assert_eq!(r.skipped.len(), 1);
        let k = &r.skipped[0];
        assert_eq!((k.id.as_deref(), k.line), (Some(PANICS), 2));
        assert!(
            k.reason.contains("internal error (injected for a test)"),
            "{}",
            k.reason
        );
        let cache = crate::cache::Cache::open(&r.cache_dir).unwrap();
        assert_eq!(cache.len(), 3);

        let fail = Options {
            on_error: OnError::Fail,
            ..o
        };
        std::fs::remove_dir_all(tmp.path().join("cache")).unwrap();
        let msg = run(&fail, &Silent).unwrap_err().to_string();
        assert!(
            msg.contains(PANICS) && msg.contains("internal error"),
            "{msg}"
        );
    }

    #[test]
    fn shard_specs() {
        assert_eq!(
            ShardSpec::parse("1/4").unwrap(),
            ShardSpec { index: 1, count: 4 }
        );
        for bad in ["4/4", "1", "a/b", "1/0", "-1/2"] {
            assert!(ShardSpec::parse(bad).is_err(), "{bad}");
        }
        let s = ShardSpec { index: 1, count: 3 };
        assert_eq!((0..7).filter(|&i| s.owns(i)).collect::<Vec<_>>(), [1, 4]);
    }

    #[test]
    fn plans_change_only_where_the_data_changed() {
        let items: Vec<Item> = (0..600)
            .map(|i| {
                Item::new(
                    format!("u{i}"),
                    format!("wavs/u{i}.wav").into(),
                    "hi".into(),
                    i + 1,
                )
            })
            .collect();
        let sources: Vec<SourceId> = items
            .iter()
            .map(|it| SourceId {
                path: it.audio.clone(),
                size: 10,
                mtime_ns: 1,
            })
            .collect();
        let a = plan_shards("k", &items, &sources, SHARD_ITEMS);
        assert_eq!(a.len(), 3);
        assert_eq!(a[2].items.len(), 600 - 2 * SHARD_ITEMS);
        let mut touched = sources.clone();
        touched[300].mtime_ns = 2;
        let b = plan_shards("k", &items, &touched, SHARD_ITEMS);
        assert_eq!(a[0].file, b[0].file);
        assert_ne!(a[1].file, b[1].file);
        assert_eq!(a[2].file, b[2].file);
        assert_ne!(
            plan_shards("other", &items, &sources, SHARD_ITEMS)[0].file,
            a[0].file
        );
    }

    #[test]
    fn a_full_disk_is_an_error_and_leaves_no_partial_file() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        crate::demo::generate(&data, 3, 1).unwrap();
        let cache = tmp.path().join("cache");
        crate::fsx::faults::set_disk_full(&cache);
        let o = Options {
            jobs: Some(1),
            shard_items: 2,
            ..Options::new(&data, &cache)
        };
        let msg = run(&o, &Silent).unwrap_err().to_string();
        assert!(
            msg.contains("shard-00000") && msg.contains("os error 28"),
            "{msg}"
        );
        let dir = std::fs::read_dir(&cache)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [".lock"], "no shard, no temporary file, no manifest");
    }
}
