//! The loader: batches from the cache, always ahead of the consumer.
//!
//! - Reads the cache through its memory mapping ([`Cache::mel`] is a slice of the mapped
//!   shard): no per-item file opens, no parsing.
//! - `workers` threads assemble whole batches; batch `k` of an epoch is built by worker
//!   `k mod workers` and handed over through that worker's bounded queue, and the consumer
//!   takes batch `k` from queue `k mod workers`. So the order is fixed by the plan, never by
//!   which thread finished first, and `prefetch` batches (spread over the queues) wait
//!   ready while the consumer works. A worker that finds its queue full sleeps until the
//!   consumer has drained it to half, so most batches the consumer takes wake nobody (see
//!   `handoff`). With `workers = 0` the consumer assembles each batch itself (no threads;
//!   for debugging and for measuring the assembly alone).
//! - Buffers are reused: a [`Batch`] goes back to the workers when it is dropped.
//! - Workers write a batch of 1 MiB or more past the cache (non-temporal stores, see
//!   `stream_store`): it is read later, by another thread, after other batches.
//! - Shapes: with [`Padding::Fixed`] every batch is `tokens [B, max_text]`,
//!   `mels [B, max_frames, n_mels]` (static shapes: one graph, no recompilation); a short
//!   last batch is filled up with empty rows of length 0 unless `drop_last`. With
//!   [`Padding::Longest`] a batch is padded to its longest item, rounded up to a multiple
//!   if asked (fewer distinct shapes). True lengths always travel with the batch.
//! - Length bucketing: the shuffled order is cut into windows of `bucket_window` batches
//!   and sorted by length inside each window, so items of similar length share a batch and
//!   little is padding; the batches are then shuffled again. The padding share is counted.
//! - Over-long items (more tokens or frames than the fixed shape): `skip` or `truncate`, by
//!   [`OverLength`]; both are counted in [`Plan`], never silent.
//! - Deterministic: the plan depends on the seed and the epoch only, so the same seed gives
//!   the same batches in the same order whatever the number of workers.
//! - Distributed: with `world_size` > 1 every rank plans the same global order and takes
//!   every `world_size`-th item of it from its `rank` on, so the ranks' items are disjoint
//!   and cover the epoch. Every rank gets the same number of batches of the same sizes: a
//!   rank one item short ends its epoch with a filler row (length 0), counted in
//!   [`Plan::filler_rows`]; with `drop_last` the epoch is instead cut to a multiple of
//!   `world_size` items. Bucketing windows span all ranks, so batch `k` holds items of
//!   similar length on every rank.
//! - Resumable: [`Loader::epoch_from`] and [`Loader::stream_from`] start at any batch of an
//!   epoch without building the batches before it (the order is a function of seed and
//!   epoch, so resuming is a seek, not a replay).
//! - Dropping an [`Epoch`] stops its workers and joins them: no hang, no leaked thread.
//!
//! ```no_run
//! # use std::sync::Arc;
//! use gpufeed_data::cache::Cache;
//! use gpufeed_data::loader::{Loader, LoaderConfig};
//! let cache = Arc::new(Cache::open("cache/0123456789abcdef".as_ref())?);
//! let loader = Loader::new(cache, LoaderConfig { batch_size: 32, ..LoaderConfig::default() })?;
//! for batch in loader.epoch(0) {
//!     let batch = batch?;
//!     let (mels, [b, t, m]) = batch.mels();   // contiguous f32, row-major
//!     let (tokens, _) = batch.tokens();
//!     # let _ = (mels, tokens, b, t, m);
//! }
//! # Ok::<(), gpufeed_data::DataError>(())
//! ```

use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use serde::Serialize;

use crate::aligned::AlignedVec;
use crate::cache::{Cache, MelRef};
use crate::error::DataError;
use crate::rng::SplitMix64;
use crate::stream_store;

/// How batches are padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Padding {
    /// Static shapes: every batch is padded to these sizes.
    Fixed {
        /// Tokens per row.
        max_text: usize,
        /// Frames per row.
        max_frames: usize,
    },
    /// Pad to the longest item of the batch, rounded up to a multiple of this (1 = none).
    Longest {
        /// Round the padded length up to a multiple of this.
        multiple: usize,
    },
}

/// What to do with an item longer than the fixed shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OverLength {
    /// Leave it out of the epoch.
    #[default]
    Skip,
    /// Cut it to the shape (its length becomes the cap).
    Truncate,
}

/// Loader settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoaderConfig {
    /// Items per batch (when `batch_frames` is not set).
    pub batch_size: usize,
    /// Batches by duration: at most this many padded mel frames per batch (rows × the
    /// batch's longest item), `batch_size` and `bucket_window` ignored. The epoch is sorted
    /// by length, so a batch holds items of similar length (which items of equal length
    /// share a batch changes each epoch, and the batches' order); every epoch has the same
    /// number of batches, and so has every rank. An item longer than
    /// the budget is a batch of its own. Needs longest-item padding.
    pub batch_frames: Option<usize>,
    /// Worker threads (0: assemble on the consumer's thread).
    pub workers: usize,
    /// Batches kept ready ahead of the consumer (at least one per worker).
    pub prefetch: usize,
    /// Shuffle every epoch.
    pub shuffle: bool,
    /// Seed of the shuffles.
    pub seed: u64,
    /// Batches per bucketing window (1: no bucketing).
    pub bucket_window: usize,
    /// Drop a short last batch.
    pub drop_last: bool,
    /// Padding.
    pub padding: Padding,
    /// Over-long items, with fixed padding.
    pub over_length: OverLength,
    /// Also fill [`Batch::int64`]: tokens, lengths and item indices as 64-bit integers in
    /// 64-byte aligned buffers, the dtype Python frameworks index with (built on the
    /// worker threads and recycled with the batch, so the consumer converts nothing).
    pub int64: bool,
    /// This process's rank among `world_size` (0 when not distributed).
    pub rank: usize,
    /// Number of ranks sharing the epoch (1 when not distributed).
    pub world_size: usize,
}

/// The config schema's defaults, resolved as the command line resolves them with no config
/// file, no argument and no environment ([`crate::settings`]): one table of defaults.
impl Default for LoaderConfig {
    fn default() -> Self {
        let lc = crate::settings::LoaderSettings::resolve(
            &crate::settings::LoaderArgs::default(),
            &gpufeed_config::Config::default(),
            false,
            &crate::settings::Environment::default(),
            crate::settings::Frontend::Cli,
            || (1, 1),
        );
        // No argument is given, so nothing can be refused.
        lc.unwrap_or_else(|e| unreachable!("the defaults resolve: {e}"))
    }
}

/// The most padding a batch by duration takes on, as a share of its padded frames, on every
/// rank: a batch closes before a row that would pass it on any rank (see
/// `Loader::plan_by_duration`). Where lengths are sparse (the long tail, or many short
/// items in one batch) sorted items can still span a wide range; the cap bounds every
/// batch, at the cost of a few more, smaller batches there. On 12,000 LibriTTS-like
/// lengths and 20,000 frames a batch (the `tests`): 0.5 % padding on one rank, 3.2 % on
/// eight, batches 98 % and 91 % full.
pub const DURATION_MAX_PADDING: f64 = 0.10;

/// The item index of a filler row in a plan: a row of length 0 that evens out the ranks.
const FILLER: u32 = u32::MAX;

/// One batch: contiguous arrays with their shapes, true lengths and timings.
#[derive(Debug)]
pub struct Batch {
    tokens: Vec<i32>,
    /// 64-byte aligned, so frameworks take it without a copy (see [`AlignedVec`]).
    mels: AlignedVec<f32>,
    text_lengths: Vec<i32>,
    mel_lengths: Vec<i32>,
    items: Vec<u32>,
    speakers: AlignedVec<i64>,
    rows: usize,
    max_text: usize,
    max_frames: usize,
    n_mels: usize,
    /// Position of the batch in its epoch.
    pub index: usize,
    /// The epoch it belongs to.
    pub epoch: u64,
    /// Time spent copying the items out of the cache (page faults included), ns.
    pub read_ns: u64,
    /// Time spent on padding and lengths, ns.
    pub assemble_ns: u64,
    /// Bytes of real (unpadded) data.
    pub data_bytes: u64,
    /// Bytes of padding.
    pub pad_bytes: u64,
    int64: Int64,
    /// The cache's arrays beside the mel, padded like it.
    arrays: Vec<BatchArray>,
    recycle: Option<Sender<Batch>>,
}

/// One of the cache's arrays beside the mel ([`crate::arrays`]) in a batch: row-major
/// `[rows, max_rows, width]` (`[rows, max_rows]` when `width` is 1) of its dtype, padded
/// with zeros, where `max_rows` is the batch's padded frames times the array's rows per
/// frame (so `wav` is `max_frames × hop` samples), with each row's true length.
#[derive(Debug, Default)]
pub struct BatchArray {
    spec: Option<crate::arrays::ArraySpec>,
    data: AlignedVec<u8>,
    lengths: AlignedVec<i64>,
    max_rows: usize,
}

impl BatchArray {
    /// Its name, dtype, width and rows per frame.
    ///
    /// # Panics
    ///
    /// Never for an array of a batch the loader gave.
    #[must_use]
    pub fn spec(&self) -> &crate::arrays::ArraySpec {
        self.spec
            .as_ref()
            .unwrap_or_else(|| unreachable!("set when assembled"))
    }

    /// The padded bytes, little-endian; the first is 64-byte aligned.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// `[rows, max_rows, width]`.
    #[must_use]
    pub fn shape(&self) -> [usize; 3] {
        let width = self.spec.as_ref().map_or(1, |s| s.width);
        let row = self.max_rows * width * self.spec.as_ref().map_or(1, |s| s.dtype.size());
        [self.data.len() / row.max(1), self.max_rows, width]
    }

    /// Each row's true length, in the array's rows (0 for filler rows).
    #[must_use]
    pub fn lengths(&self) -> &[i64] {
        self.lengths.as_slice()
    }
}

/// A batch's integers as `i64`, 64-byte aligned ([`LoaderConfig::int64`]).
#[derive(Debug, Default)]
pub struct Int64 {
    /// `[rows, max_text]`, as [`Batch::tokens`].
    pub tokens: AlignedVec<i64>,
    /// `[rows]`, as [`Batch::text_lengths`].
    pub text_lengths: AlignedVec<i64>,
    /// `[rows]`, as [`Batch::mel_lengths`].
    pub mel_lengths: AlignedVec<i64>,
    /// `[rows]`: each row's cache index, -1 for filler rows.
    pub items: AlignedVec<i64>,
}

impl Batch {
    fn empty() -> Self {
        Self {
            tokens: Vec::new(),
            mels: AlignedVec::new(),
            text_lengths: Vec::new(),
            mel_lengths: Vec::new(),
            items: Vec::new(),
            speakers: AlignedVec::new(),
            int64: Int64::default(),
            arrays: Vec::new(),
            rows: 0,
            max_text: 0,
            max_frames: 0,
            n_mels: 0,
            index: 0,
            epoch: 0,
            read_ns: 0,
            assemble_ns: 0,
            data_bytes: 0,
            pad_bytes: 0,
            recycle: None,
        }
    }

    /// Rows (the batch dimension).
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Token ids, row-major `[rows, max_text]`, padded with 0 (the pad id).
    #[must_use]
    pub fn tokens(&self) -> (&[i32], [usize; 2]) {
        (&self.tokens, [self.rows, self.max_text])
    }

    /// Mel frames, row-major `[rows, max_frames, n_mels]`, padded with 0.0; the first value
    /// is 64-byte aligned.
    #[must_use]
    pub fn mels(&self) -> (&[f32], [usize; 3]) {
        (
            self.mels.as_slice(),
            [self.rows, self.max_frames, self.n_mels],
        )
    }

    /// True token counts per row (0 for filler rows).
    #[must_use]
    pub fn text_lengths(&self) -> &[i32] {
        &self.text_lengths
    }

    /// True frame counts per row (0 for filler rows).
    #[must_use]
    pub fn mel_lengths(&self) -> &[i32] {
        &self.mel_lengths
    }

    /// Cache indices of the rows' items (filler rows have none).
    #[must_use]
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// Each row's speaker, `[rows]`: its index into the cache's speaker table
    /// ([`Cache::speaker_table`]), -1 for an item without a speaker and for filler rows.
    #[must_use]
    pub fn speakers(&self) -> &[i64] {
        self.speakers.as_slice()
    }

    /// The cache's arrays beside the mel, in the manifest's order, padded to this batch's
    /// frames.
    #[must_use]
    pub fn arrays(&self) -> &[BatchArray] {
        &self.arrays
    }

    /// The integers as `i64` when the loader was asked for them ([`LoaderConfig::int64`]).
    #[must_use]
    pub fn int64(&self) -> Option<&Int64> {
        (self.int64.items.len() == self.rows && self.rows > 0).then_some(&self.int64)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(tx) = self.recycle.take() {
            let mut spare = Batch::empty();
            std::mem::swap(&mut spare.tokens, &mut self.tokens);
            std::mem::swap(&mut spare.mels, &mut self.mels);
            std::mem::swap(&mut spare.text_lengths, &mut self.text_lengths);
            std::mem::swap(&mut spare.mel_lengths, &mut self.mel_lengths);
            std::mem::swap(&mut spare.items, &mut self.items);
            std::mem::swap(&mut spare.speakers, &mut self.speakers);
            std::mem::swap(&mut spare.int64, &mut self.int64);
            std::mem::swap(&mut spare.arrays, &mut self.arrays);
            // The loader may be gone already; then the buffers are simply freed.
            let _ = tx.send(spare);
        }
    }
}

/// An epoch's plan: which items go into which batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Item indices per batch, in order.
    pub batches: Vec<Vec<u32>>,
    /// Items left out because they are over the fixed shape (skip policy).
    pub skipped_over_length: usize,
    /// Items cut to the fixed shape (truncate policy).
    pub truncated: usize,
    /// Items left out by `drop_last` (on every rank together when distributed).
    pub dropped_last: usize,
    /// Filler rows (length 0) that give this rank as many rows as the others.
    pub filler_rows: usize,
}

/// The loader over one cache.
#[derive(Debug)]
pub struct Loader {
    cache: Arc<Cache>,
    config: LoaderConfig,
}

impl Loader {
    /// A loader; checks the settings.
    pub fn new(cache: Arc<Cache>, config: LoaderConfig) -> Result<Self, DataError> {
        let bad = |why: &str| Err(DataError::Loader(why.to_string()));
        if config.batch_size == 0 {
            return bad("`batch_size` must be at least 1");
        }
        if let Padding::Fixed {
            max_text,
            max_frames,
        } = config.padding
            && (max_text == 0 || max_frames == 0)
        {
            return bad("fixed padding needs `max_text_length` and `max_mel_frames` of at least 1");
        }
        if let Padding::Longest { multiple: 0 } = config.padding {
            return bad("`pad_to_multiple_of` must be at least 1");
        }
        if config.world_size == 0 {
            return bad("`world_size` must be at least 1");
        }
        if config.batch_frames == Some(0) {
            return bad("`batch_frames` must be at least 1");
        }
        if config.batch_frames.is_some() && matches!(config.padding, Padding::Fixed { .. }) {
            return bad(
                "`batch_frames` batches by duration, so batches have different shapes: use \
                 longest-item padding (pad='longest', or no pad_to_fixed_length)",
            );
        }
        if config.rank >= config.world_size {
            return Err(DataError::Loader(format!(
                "`rank` {} is out of range for `world_size` {}: ranks run from 0 to {}",
                config.rank,
                config.world_size,
                config.world_size - 1
            )));
        }
        if cache.is_empty() {
            return bad("the cache holds no utterance");
        }
        Ok(Self { cache, config })
    }

    /// The cache.
    #[must_use]
    pub fn cache(&self) -> &Arc<Cache> {
        &self.cache
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &LoaderConfig {
        &self.config
    }

    /// The plan of epoch `epoch`: deterministic in (seed, epoch).
    #[must_use]
    pub fn plan(&self, epoch: u64) -> Plan {
        let c = &self.config;
        let mut skipped = 0;
        let mut truncated = 0;
        let mut order: Vec<u32> = Vec::with_capacity(self.cache.len());
        for i in 0..self.cache.len() {
            let it = self.cache.item(i);
            let over = match c.padding {
                Padding::Fixed {
                    max_text,
                    max_frames,
                } => it.text_tokens as usize > max_text || it.mel_frames as usize > max_frames,
                Padding::Longest { .. } => false,
            };
            match (over, c.over_length) {
                (true, OverLength::Skip) => skipped += 1,
                (true, OverLength::Truncate) => {
                    truncated += 1;
                    order.push(i as u32);
                }
                (false, _) => order.push(i as u32),
            }
        }
        let mut rng = SplitMix64(c.seed ^ epoch.wrapping_mul(0xA24B_AED4_963E_E407));
        if c.shuffle {
            rng.shuffle(&mut order);
        }
        let world = c.world_size.max(1);
        let mut dropped_last = 0;
        if world > 1 && c.drop_last {
            // Every rank must get as many items: cut the epoch to a multiple of the ranks.
            let keep = order.len() - order.len() % world;
            dropped_last += order.len() - keep;
            order.truncate(keep);
        }
        if let Some(budget) = c.batch_frames {
            let (batches, filler_rows) = self.plan_by_duration(order, budget, &mut rng);
            return Plan {
                batches,
                skipped_over_length: skipped,
                truncated,
                dropped_last,
                filler_rows,
            };
        }
        let window = c.bucket_window.max(1) * c.batch_size * world;
        if c.bucket_window > 1 {
            for w in order.chunks_mut(window) {
                w.sort_by_key(|&i| self.cache.item(i as usize).mel_frames);
            }
        }
        let per_rank = order.len().div_ceil(world);
        let mut mine: Vec<u32> = order.iter().skip(c.rank).step_by(world).copied().collect();
        let filler_rows = per_rank - mine.len();
        mine.resize(per_rank, FILLER);
        let mut batches: Vec<Vec<u32>> = mine.chunks(c.batch_size).map(<[u32]>::to_vec).collect();
        if c.drop_last && batches.last().is_some_and(|b| b.len() < c.batch_size) {
            // The same cut on every rank: count the items of all of them.
            dropped_last += batches.pop().map_or(0, |b| b.len()) * world;
        }
        if c.shuffle && c.bucket_window > 1 {
            // Bucketing sorted each window; shuffle the batches so the epoch does not run
            // from short to long within every window. Every rank has as many batches and
            // the same generator state, so all ranks shuffle alike.
            rng.shuffle(&mut batches);
        }
        Plan {
            batches,
            skipped_over_length: skipped,
            truncated,
            dropped_last,
            filler_rows,
        }
    }

    /// The batches of [`Loader::plan`] when batching by duration, and this rank's filler
    /// rows: `order` (shuffled, over-long items out, cut to a multiple of the ranks under
    /// `drop_last`) into batches of at most `budget` padded frames per rank.
    ///
    /// The order is sorted by length (stably, so that equal lengths keep the epoch's
    /// shuffle). Items are taken `world` at a time (a row: one item per rank), and rows join a batch while `(rows + 1) × longest ≤ budget` and the batch's
    /// padding stays within [`DURATION_MAX_PADDING`]. Rank `r` takes
    /// item `r` of every row, so every rank has the same number of batches and rows, each
    /// within the budget. The batches are then shuffled with the epoch's generator, the
    /// same on every rank.
    fn plan_by_duration(
        &self,
        order: Vec<u32>,
        budget: usize,
        rng: &mut SplitMix64,
    ) -> (Vec<Vec<u32>>, usize) {
        let c = &self.config;
        let world = c.world_size.max(1);
        let frames = |i: u32| self.cache.item(i as usize).mel_frames as usize;
        let mut batches: Vec<Vec<u32>> = Vec::new();
        let mut filler_rows = 0;
        // The whole epoch sorted by length. The sort is stable over the shuffled order, so
        // equal lengths come in a new order each epoch while the sequence of lengths, and so
        // every batch boundary, is the same: every epoch has as many batches, which resuming
        // and streaming across epochs count on.
        let mut sorted = order;
        sorted.sort_by_key(|&i| frames(i));
        let mut batch: Vec<u32> = Vec::new();
        let mut rows = 0usize;
        // Each rank's frames and longest item in the batch being built.
        let (mut real, mut longest) = (vec![0usize; world], vec![0usize; world]);
        for row in sorted.chunks(world) {
            let len = |r: usize| row.get(r).map_or(0, |&i| frames(i));
            // Full, or the row would pad some rank's batch beyond the cap: where lengths
            // are sparse (the long tail, or many short items) a batch of sorted items can
            // still span a wide range.
            let full =
                (0..world).any(|r| (rows + 1).saturating_mul(longest[r].max(len(r))) > budget);
            let over_cap = (0..world).any(|r| {
                let padded = (rows + 1).saturating_mul(longest[r].max(len(r)));
                let pad = padded.saturating_sub(real[r] + len(r));
                pad as f64 > DURATION_MAX_PADDING * padded as f64
            });
            if rows > 0 && (full || over_cap) {
                batches.push(std::mem::take(&mut batch));
                rows = 0;
                real.fill(0);
                longest.fill(0);
            }
            for r in 0..world {
                real[r] += len(r);
                longest[r] = longest[r].max(len(r));
            }
            // Rank `rank`'s item of the row; a short last row gives the others filler.
            match row.get(c.rank) {
                Some(&i) => batch.push(i),
                None => {
                    batch.push(FILLER);
                    filler_rows += 1;
                }
            }
            rows += 1;
        }
        if !batch.is_empty() {
            batches.push(batch);
        }
        if c.shuffle {
            rng.shuffle(&mut batches);
        }
        (batches, filler_rows)
    }

    /// Runs epoch `epoch`: an iterator of batches in plan order.
    #[must_use]
    pub fn epoch(&self, epoch: u64) -> Epoch {
        Epoch::start(self, epoch, 0, Some(1))
    }

    /// Runs epoch `epoch` from its batch `start` on (a resumed epoch): the batches before it
    /// are not built. A `start` at or past the end gives an empty iterator.
    #[must_use]
    pub fn epoch_from(&self, epoch: u64, start: usize) -> Epoch {
        Epoch::start(self, epoch, start, Some(1))
    }
}

/// Batches whose mel buffer is at least this large are written by the workers with
/// non-temporal stores ([`stream_store`]). A smaller batch may still sit in the shared cache
/// when the consumer takes it (a few of them fit in an L2 of 0.5 to 2 MB, and in any L3), and
/// reading it from there is faster than from memory.
const STREAM_MIN_BYTES: usize = 1 << 20;

type CopyFn = fn(&mut [f32], &[f32]);
type ZeroFn = fn(&mut [f32]);

/// The shape of one planned batch: its rows, and the token and frame lengths every row
/// is padded to (fixed, or the longest item's rounded up to the padding's multiple).
fn batch_shape(cache: &Cache, config: &LoaderConfig, items: &[u32]) -> (usize, usize, usize) {
    match config.padding {
        Padding::Fixed {
            max_text,
            max_frames,
        } => (config.batch_size, max_text, max_frames),
        Padding::Longest { multiple } => {
            let round = |n: usize| n.div_ceil(multiple) * multiple;
            let real = || items.iter().filter(|&&i| i != FILLER);
            let t = real()
                .map(|&i| cache.item(i as usize).text_tokens as usize)
                .max();
            let f = real()
                .map(|&i| cache.item(i as usize).mel_frames as usize)
                .max();
            (
                items.len(),
                round(t.unwrap_or(0).max(1)),
                round(f.unwrap_or(0).max(1)),
            )
        }
    }
}

/// The batch's tokens, lengths and item indices widened to `int64` (`LoaderConfig::int64`).
fn widen_int64(batch: &mut Batch, rows: usize) {
    let w = &mut batch.int64;
    w.tokens.resize(batch.tokens.len());
    for (d, &t) in w.tokens.as_mut_slice().iter_mut().zip(&batch.tokens) {
        *d = i64::from(t);
    }
    for (dst, src) in [
        (&mut w.text_lengths, &batch.text_lengths),
        (&mut w.mel_lengths, &batch.mel_lengths),
    ] {
        dst.resize(rows);
        for (d, &n) in dst.as_mut_slice().iter_mut().zip(src) {
            *d = i64::from(n);
        }
    }
    w.items.resize(rows);
    for (r, d) in w.items.as_mut_slice().iter_mut().enumerate() {
        *d = batch.items.get(r).map_or(-1, |&i| i64::from(i));
    }
}

/// Fills `batch` with the items of one planned batch.
fn assemble(cache: &Cache, config: &LoaderConfig, items: &[u32], index: usize, batch: &mut Batch) {
    let n_mels = cache.n_mels();
    let started = Instant::now();
    let (rows, max_text, max_frames) = batch_shape(cache, config, items);
    batch.rows = rows;
    batch.max_text = max_text;
    batch.max_frames = max_frames;
    batch.n_mels = n_mels;
    batch.index = index;
    batch.items.clear();
    // Filler rows come last in a plan's batch: `items` holds the real rows only.
    batch
        .items
        .extend(items.iter().copied().filter(|&i| i != FILLER));
    batch.speakers.resize(rows);
    for (r, d) in batch.speakers.as_mut_slice().iter_mut().enumerate() {
        *d = match items.get(r) {
            Some(&i) if i != FILLER => cache.speaker(i as usize),
            _ => -1,
        };
    }
    batch.text_lengths.clear();
    batch.mel_lengths.clear();
    // Reused buffers: resize without reallocating once they have reached this shape.
    batch.tokens.resize(rows * max_text, 0);
    batch.mels.resize(rows * max_frames * n_mels);
    let mut read_ns = 0u64;
    let mut data = 0u64;
    // A worker's batch is read later, by another thread, after the worker has written
    // others: stream it past the cache. The consumer's own batch (no workers) is read at
    // once, from the cache.
    let streaming = config.workers > 0 && batch.mels.len() * 4 >= STREAM_MIN_BYTES;
    let (copy_mel, zero_mel): (CopyFn, ZeroFn) = if streaming {
        (stream_store::copy, stream_store::zero)
    } else {
        (<[f32]>::copy_from_slice, |d| d.fill(0.0))
    };
    for r in 0..rows {
        let trow = &mut batch.tokens[r * max_text..(r + 1) * max_text];
        let mrow =
            &mut batch.mels.as_mut_slice()[r * max_frames * n_mels..(r + 1) * max_frames * n_mels];
        let (t_len, f_len) = match items.get(r).filter(|&&i| i != FILLER) {
            Some(&i) => {
                let t0 = Instant::now();
                let tok = cache.tokens(i as usize);
                let mel = cache.mel_ref(i as usize);
                let t_len = tok.len().min(max_text);
                let f_len = (mel.len() / n_mels).min(max_frames);
                trow[..t_len].copy_from_slice(&tok[..t_len]);
                match mel {
                    MelRef::F32(mel) => {
                        copy_mel(&mut mrow[..f_len * n_mels], &mel[..f_len * n_mels]);
                    }
                    // A half-precision cache: widened into the f32 batch.
                    half => half.widen(&mut mrow[..f_len * n_mels]),
                }
                read_ns += t0.elapsed().as_nanos() as u64;
                data += (t_len * 4 + f_len * n_mels * 4) as u64;
                (t_len, f_len)
            }
            None => (0, 0),
        };
        trow[t_len..].fill(0);
        zero_mel(&mut mrow[f_len * n_mels..]);
        batch.text_lengths.push(t_len as i32);
        batch.mel_lengths.push(f_len as i32);
    }
    if config.int64 {
        widen_int64(batch, rows);
    }
    let mut extra_total = 0u64;
    batch
        .arrays
        .resize_with(cache.arrays().len(), BatchArray::default);
    for (spec, out) in cache.arrays().iter().zip(&mut batch.arrays) {
        // Frame-aligned arrays follow the mel's padded length. A user array of its own
        // length (rows per frame 0) is padded to the longest in the cache under fixed
        // shapes (every batch the same shape), to the longest in the batch otherwise.
        let max_rows =
            if spec.rows_per_frame == 0 && matches!(config.padding, Padding::Fixed { .. }) {
                cache.max_rows(&spec.name).unwrap_or(0)
            } else if spec.rows_per_frame == 0 {
                items
                    .iter()
                    .filter(|&&i| i != FILLER)
                    .filter_map(|&i| cache.array(&spec.name, i as usize))
                    .map(|a| a.rows)
                    .max()
                    .unwrap_or(0)
            } else {
                max_frames * spec.rows_per_frame
            };
        let row_bytes = spec.row_bytes();
        out.spec = Some(spec.clone());
        out.max_rows = max_rows;
        out.data.resize(rows * max_rows * row_bytes);
        out.lengths.resize(rows);
        let dst_all = out.data.as_mut_slice();
        for r in 0..rows {
            let dst = &mut dst_all[r * max_rows * row_bytes..(r + 1) * max_rows * row_bytes];
            let len = match items.get(r).filter(|&&i| i != FILLER) {
                Some(&i) => {
                    let t0 = Instant::now();
                    let n = cache.array(&spec.name, i as usize).map_or(0, |a| {
                        let n = a.rows.min(max_rows);
                        dst[..n * row_bytes].copy_from_slice(&a.bytes[..n * row_bytes]);
                        n
                    });
                    read_ns += t0.elapsed().as_nanos() as u64;
                    data += (n * row_bytes) as u64;
                    n
                }
                None => 0,
            };
            dst[len * row_bytes..].fill(0);
            out.lengths.as_mut_slice()[r] = len as i64;
        }
        extra_total += (rows * max_rows * row_bytes) as u64;
    }
    if streaming {
        // Before the batch leaves this thread (see `stream_store`).
        stream_store::fence();
    }
    let total = (rows * max_text * 4 + rows * max_frames * n_mels * 4) as u64 + extra_total;
    batch.read_ns = read_ns;
    batch.assemble_ns = (started.elapsed().as_nanos() as u64).saturating_sub(read_ns);
    batch.data_bytes = data;
    batch.pad_bytes = total - data;
}

/// Plans of the epochs a stream is in, shared by its workers (each epoch planned once).
#[derive(Debug)]
struct Plans {
    loader: Loader,
    done: Mutex<Vec<(u64, Arc<Plan>)>>,
}

impl Plans {
    fn get(&self, epoch: u64) -> Arc<Plan> {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, p)) = done.iter().find(|(e, _)| *e == epoch) {
            return Arc::clone(p);
        }
        let plan = Arc::new(self.loader.plan(epoch));
        // Workers are at most an epoch apart; keep the last few plans.
        if done.len() >= 4 {
            done.remove(0);
        }
        done.push((epoch, Arc::clone(&plan)));
        plan
    }
}

/// A running stream of batches: one epoch ([`Loader::epoch`]) or epochs back to back
/// ([`Loader::stream`]). Iterating yields the batches in plan order; the workers prepare
/// across epoch boundaries, so a new epoch does not start with an empty queue. Dropping it
/// stops and joins the workers.
#[derive(Debug)]
pub struct Epoch {
    plans: Arc<Plans>,
    first: u64,
    per_epoch: usize,
    /// Batches to deliver in all, counted from the epoch's first (`None`: endless).
    limit: Option<usize>,
    next: usize,
    /// The global batch the stream started at (a resumed epoch starts past 0).
    start: usize,
    queues: Vec<Arc<handoff::Handoff<Batch>>>,
    workers: Vec<JoinHandle<()>>,
    recycle_tx: Sender<Batch>,
    recycle_rx: Arc<Mutex<Receiver<Batch>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Loader {
    /// Epochs `first`, `first + 1`, ... back to back, endless; each batch says its epoch.
    /// Profilers and steady-state training use this: the queues never drain between epochs.
    #[must_use]
    pub fn stream(&self, first: u64) -> Epoch {
        Epoch::start(self, first, 0, None)
    }

    /// As [`Loader::stream`], from batch `start` of epoch `first` on (a resumed run).
    #[must_use]
    pub fn stream_from(&self, first: u64, start: usize) -> Epoch {
        Epoch::start(self, first, start, None)
    }
}

impl Epoch {
    fn start(loader: &Loader, first: u64, start: usize, epochs: Option<u64>) -> Self {
        let plans = Arc::new(Plans {
            loader: Loader {
                cache: Arc::clone(&loader.cache),
                config: loader.config.clone(),
            },
            done: Mutex::new(Vec::new()),
        });
        // Every epoch has the same number of batches: the plan only reorders the items.
        let per_epoch = plans.get(first).batches.len();
        let limit = epochs.map(|e| per_epoch * usize::try_from(e).unwrap_or(usize::MAX));
        let (recycle_tx, recycle_rx) = channel::<Batch>();
        let recycle_rx = Arc::new(Mutex::new(recycle_rx));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let config = &loader.config;
        let workers_n = if per_epoch == 0 { 0 } else { config.workers };
        // Worker `w` builds global batches `start + w`, `start + w + workers`, ...
        let start = start.min(limit.unwrap_or(usize::MAX));
        let mut queues = Vec::with_capacity(workers_n);
        let mut workers = Vec::with_capacity(workers_n);
        // The prefetch depth spread over the workers' queues, at least one slot each.
        let depth = config.prefetch.div_ceil(workers_n.max(1)).max(1);
        for w in 0..workers_n {
            let queue = Arc::new(handoff::Handoff::new(depth));
            let tx = Arc::clone(&queue);
            queues.push(queue);
            let plans = Arc::clone(&plans);
            let (recycle_tx, recycle_rx, stop) = (
                recycle_tx.clone(),
                Arc::clone(&recycle_rx),
                Arc::clone(&stop),
            );
            workers.push(std::thread::spawn(move || {
                // Tells the consumer when this thread ends, by return or by panic.
                let _done = handoff::Producer(&*tx);
                let mut g = start + w;
                while limit.is_none_or(|l| g < l) {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    let batch = produce(&plans, first, per_epoch, g, &recycle_rx, &recycle_tx);
                    if tx.push(batch).is_err() {
                        return; // the stream was dropped
                    }
                    g += workers_n;
                }
            }));
        }
        Self {
            plans,
            first,
            per_epoch,
            limit,
            next: start,
            start,
            queues,
            workers,
            recycle_tx,
            recycle_rx,
            stop,
        }
    }

    /// The plan of the epoch this stream starts with.
    #[must_use]
    pub fn plan(&self) -> Arc<Plan> {
        self.plans.get(self.first)
    }
}

/// Builds global batch `g` of a stream starting at epoch `first`.
fn produce(
    plans: &Plans,
    first: u64,
    per_epoch: usize,
    g: usize,
    recycle_rx: &Mutex<Receiver<Batch>>,
    recycle_tx: &Sender<Batch>,
) -> Batch {
    let epoch = first + (g / per_epoch) as u64;
    let plan = plans.get(epoch);
    let index = g % per_epoch;
    let mut batch = take_spare(recycle_rx);
    assemble(
        &plans.loader.cache,
        &plans.loader.config,
        &plan.batches[index],
        index,
        &mut batch,
    );
    batch.epoch = epoch;
    batch.recycle = Some(recycle_tx.clone());
    batch
}

fn take_spare(recycle: &Mutex<Receiver<Batch>>) -> Batch {
    match recycle
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .try_recv()
    {
        Ok(b) => b,
        Err(TryRecvError::Empty | TryRecvError::Disconnected) => Batch::empty(),
    }
}

/// What [`Epoch::next_timeout`] got.
#[derive(Debug)]
// A batch is moved to the caller as the iterator's items are: boxing it would allocate
// once per batch for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Next {
    /// The next batch in plan order.
    Batch(Result<Batch, DataError>),
    /// No batch within the time: nothing was consumed, ask again.
    TimedOut,
    /// The stream has delivered all its batches.
    End,
}

impl Epoch {
    /// The next batch, waiting at most `timeout` for it: a caller that must stay responsive
    /// (to Ctrl-C, say) waits in slices. With no worker threads the batch is built on the
    /// calling thread, whatever the timeout.
    pub fn next_timeout(&mut self, timeout: std::time::Duration) -> Next {
        let g = self.next;
        if self.per_epoch == 0 || self.limit.is_some_and(|l| g >= l) {
            return Next::End;
        }
        if self.queues.is_empty() {
            self.next += 1;
            let (rx, tx) = (&self.recycle_rx, &self.recycle_tx);
            return Next::Batch(Ok(produce(
                &self.plans,
                self.first,
                self.per_epoch,
                g,
                rx,
                tx,
            )));
        }
        let w = (g - self.start) % self.queues.len();
        match self.queues[w].pop(timeout) {
            handoff::Pop::Item(b) => {
                self.next += 1;
                Next::Batch(Ok(b))
            }
            handoff::Pop::TimedOut => Next::TimedOut,
            handoff::Pop::Done => {
                self.next += 1;
                Next::Batch(Err(DataError::Settings(format!(
                    "loader worker {w} stopped unexpectedly"
                ))))
            }
        }
    }

    /// Batches this stream has delivered, counted from the first epoch's batch 0 (a
    /// resumed stream starts past 0).
    #[must_use]
    pub fn position(&self) -> usize {
        self.next
    }

    /// Batches in each epoch.
    #[must_use]
    pub fn batches_per_epoch(&self) -> usize {
        self.per_epoch
    }
}

impl Iterator for Epoch {
    type Item = Result<Batch, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_timeout(std::time::Duration::from_secs(3600)) {
                Next::Batch(b) => return Some(b),
                Next::End => return None,
                Next::TimedOut => {}
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.limit {
            Some(l) => (l - self.next, Some(l - self.next)),
            None => (usize::MAX, None),
        }
    }
}

impl Drop for Epoch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Closing the queues wakes any worker waiting on a full one.
        for q in self.queues.drain(..) {
            q.close();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// The bounded queue between one worker and the consumer.
///
/// A channel (std's `sync_channel`, crossbeam's `bounded`) wakes a sender blocked on a full
/// queue at every receive, so with the queues full (the consumer slower than the workers,
/// the case prefetching is for) every batch the consumer takes costs it a futex wake of a
/// sleeping worker: tens of microseconds on a VM, a third of a Python `next()`. No channel
/// crate offers hysteresis, hence this one: a worker that finds its queue full sleeps until
/// the consumer has drained it to the low-water mark ([`Handoff::low_water`]), so only one
/// receive in `depth - low_water` wakes anyone; the worker then refills the queue. Each side
/// notifies only when it knows the other sleeps (std's `Condvar::notify_*` makes a syscall
/// even with no waiter).
mod handoff {
    use std::collections::VecDeque;
    use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
    use std::time::{Duration, Instant};

    #[derive(Debug)]
    struct Slots<T> {
        items: VecDeque<T>,
        /// The consumer has gone: producers stop.
        closed: bool,
        /// The producer has gone (finished or panicked): nothing more will come.
        done: bool,
        producer_sleeps: bool,
        consumer_sleeps: bool,
    }

    /// One producer, one consumer, at most `depth` items waiting.
    #[derive(Debug)]
    pub(super) struct Handoff<T> {
        slots: Mutex<Slots<T>>,
        not_full: Condvar,
        not_empty: Condvar,
        depth: usize,
    }

    /// What [`Handoff::pop`] got.
    pub(super) enum Pop<T> {
        Item(T),
        TimedOut,
        /// The producer has gone and the queue is empty.
        Done,
    }

    impl<T> Handoff<T> {
        pub(super) fn new(depth: usize) -> Self {
            let depth = depth.max(1);
            Self {
                slots: Mutex::new(Slots {
                    items: VecDeque::with_capacity(depth),
                    closed: false,
                    done: false,
                    producer_sleeps: false,
                    consumer_sleeps: false,
                }),
                not_full: Condvar::new(),
                not_empty: Condvar::new(),
                depth,
            }
        }

        /// A sleeping producer is woken when the queue holds fewer than this: half the
        /// depth, rounded up (depth 2: when it is empty; depth 4: at one left). The items
        /// left cover the time the producer takes to wake and build the next one.
        fn low_water(&self) -> usize {
            self.depth.div_ceil(2)
        }

        fn lock(&self) -> MutexGuard<'_, Slots<T>> {
            self.slots.lock().unwrap_or_else(PoisonError::into_inner)
        }

        /// Adds `item`, waiting while the queue is full; gives it back when the consumer
        /// has gone.
        pub(super) fn push(&self, item: T) -> Result<(), T> {
            let mut s = self.lock();
            while s.items.len() >= self.depth && !s.closed {
                s.producer_sleeps = true;
                s = self
                    .not_full
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            s.producer_sleeps = false;
            if s.closed {
                return Err(item);
            }
            s.items.push_back(item);
            if s.consumer_sleeps {
                s.consumer_sleeps = false;
                self.not_empty.notify_one();
            }
            Ok(())
        }

        /// The oldest item, waiting at most `timeout` for one.
        pub(super) fn pop(&self, timeout: Duration) -> Pop<T> {
            let mut s = self.lock();
            let mut deadline = None;
            loop {
                if let Some(item) = s.items.pop_front() {
                    if s.producer_sleeps && s.items.len() < self.low_water() {
                        s.producer_sleeps = false;
                        self.not_full.notify_one();
                    }
                    return Pop::Item(item);
                }
                if s.done {
                    return Pop::Done;
                }
                let now = Instant::now();
                let end = *deadline.get_or_insert(now + timeout);
                if now >= end {
                    s.consumer_sleeps = false;
                    return Pop::TimedOut;
                }
                s.consumer_sleeps = true;
                s = self
                    .not_empty
                    .wait_timeout(s, end - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        }

        /// The consumer has gone: a producer waiting on a full queue wakes and stops.
        pub(super) fn close(&self) {
            let mut s = self.lock();
            s.closed = true;
            s.items.clear();
            drop(s);
            self.not_full.notify_all();
        }

        /// The producer has gone: a consumer waiting on the empty queue wakes.
        pub(super) fn finish(&self) {
            self.lock().done = true;
            self.not_empty.notify_all();
        }
    }

    /// Marks the queue finished when the producer's thread ends, by return or by panic.
    pub(super) struct Producer<'a, T>(pub(super) &'a Handoff<T>);

    impl<T> Drop for Producer<'_, T> {
        fn drop(&mut self) {
            self.0.finish();
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn items_come_in_order_and_the_queue_ends() {
            let q = std::sync::Arc::new(Handoff::new(2));
            let p = std::sync::Arc::clone(&q);
            let t = std::thread::spawn(move || {
                let _done = Producer(&*p);
                for i in 0..100 {
                    p.push(i).map_err(|_| ()).expect("consumer alive");
                }
            });
            let mut got = Vec::new();
            loop {
                match q.pop(Duration::from_secs(60)) {
                    Pop::Item(i) => got.push(i),
                    Pop::TimedOut => {}
                    Pop::Done => break,
                }
            }
            t.join().expect("producer");
            assert_eq!(got, (0..100).collect::<Vec<_>>());
        }

        #[test]
        fn close_wakes_a_producer_on_a_full_queue() {
            let q = std::sync::Arc::new(Handoff::new(1));
            let p = std::sync::Arc::clone(&q);
            let t = std::thread::spawn(move || {
                let _done = Producer(&*p);
                let mut pushed = 0;
                while p.push(pushed).is_ok() {
                    pushed += 1;
                }
                pushed
            });
            assert!(matches!(q.pop(Duration::from_secs(60)), Pop::Item(0)));
            q.close();
            assert!(t.join().expect("producer") >= 1);
        }

        #[test]
        fn an_empty_queue_times_out() {
            let q: Handoff<u8> = Handoff::new(1);
            assert!(matches!(q.pop(Duration::from_millis(1)), Pop::TimedOut));
            q.finish();
            assert!(matches!(q.pop(Duration::from_millis(1)), Pop::Done));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 items: frames 10..=59 (item i has 10 + (i * 7) % 50), tokens 3 + i % 9.
    fn cache(dir: &std::path::Path) -> Arc<Cache> {
        let lengths: Vec<(u32, u32)> = (0..50u32).map(|i| (10 + (i * 7) % 50, 3 + i % 9)).collect();
        Arc::new(crate::cache::synthetic(dir, &lengths, 4, 16))
    }

    fn config(workers: usize) -> LoaderConfig {
        LoaderConfig {
            batch_size: 8,
            workers,
            prefetch: 4,
            ..LoaderConfig::default()
        }
    }

    fn collect(loader: &Loader, epoch: u64) -> Vec<(Vec<u32>, Vec<f32>, Vec<i32>)> {
        loader
            .epoch(epoch)
            .map(|b| {
                let b = b.unwrap();
                (
                    b.items().to_vec(),
                    b.mels().0.to_vec(),
                    b.tokens().0.to_vec(),
                )
            })
            .collect()
    }

    #[test]
    fn batches_streamed_past_the_cache_equal_the_consumers_own() {
        // 8 rows of 700 frames x 80 mels = 1.8 MB per batch: the workers write it with
        // non-temporal stores (`STREAM_MIN_BYTES`), the consumer alone with ordinary ones.
        let tmp = tempfile::tempdir().unwrap();
        let lengths: Vec<(u32, u32)> = (0..40u32).map(|i| (50 + (i * 37) % 640, 5)).collect();
        let c = Arc::new(crate::cache::synthetic(tmp.path(), &lengths, 80, 16));
        let config = |workers| LoaderConfig {
            padding: Padding::Fixed {
                max_text: 8,
                max_frames: 700,
            },
            ..config(workers)
        };
        const { assert!(8 * 700 * 80 * 4 >= STREAM_MIN_BYTES) };
        let mine = Loader::new(Arc::clone(&c), config(0)).unwrap();
        let theirs = Loader::new(Arc::clone(&c), config(2)).unwrap();
        // Three epochs: reused buffers hold the last batch's frames, which padding rows
        // must overwrite with zeros.
        for epoch in 0..3 {
            let reference = collect(&mine, epoch);
            assert!(
                reference
                    .iter()
                    .any(|(_, m, _)| m.iter().any(|&x| x != 0.0))
            );
            assert_eq!(collect(&theirs, epoch), reference, "epoch {epoch}");
        }
    }

    #[test]
    fn same_seed_same_batches_whatever_the_workers() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let reference = collect(&Loader::new(Arc::clone(&c), config(0)).unwrap(), 3);
        for workers in [1, 2, 3, 7] {
            let got = collect(&Loader::new(Arc::clone(&c), config(workers)).unwrap(), 3);
            assert_eq!(got, reference, "{workers} workers");
        }
        let other_epoch = collect(&Loader::new(Arc::clone(&c), config(2)).unwrap(), 4);
        assert_ne!(other_epoch, reference);
        let other_seed = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                seed: 1,
                ..config(2)
            },
        )
        .unwrap();
        assert_ne!(collect(&other_seed, 3), reference);
    }

    #[test]
    fn every_item_once_per_epoch_and_contents_right() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let loader = Loader::new(Arc::clone(&c), config(2)).unwrap();
        let mut seen = vec![0; 50];
        for b in loader.epoch(0) {
            let b = b.unwrap();
            let (mels, [rows, frames, m]) = b.mels();
            let (tokens, [_, width]) = b.tokens();
            assert_eq!(rows, b.items().len());
            assert_eq!(
                frames as i32,
                *b.mel_lengths().iter().max().unwrap(),
                "padded to the longest"
            );
            for (r, &i) in b.items().iter().enumerate() {
                seen[i as usize] += 1;
                let it = c.item(i as usize);
                assert_eq!(b.mel_lengths()[r] as u32, it.mel_frames);
                assert_eq!(b.text_lengths()[r] as u32, it.text_tokens);
                let row = &mels[r * frames * m..(r + 1) * frames * m];
                let real = it.mel_frames as usize * m;
                assert!(row[..real].iter().all(|&v| v == i as f32 + 0.5));
                assert!(row[real..].iter().all(|&v| v == 0.0), "padding is zero");
                let trow = &tokens[r * width..(r + 1) * width];
                assert!(
                    trow[..it.text_tokens as usize]
                        .iter()
                        .all(|&t| t == i as i32 + 4)
                );
                assert!(trow[it.text_tokens as usize..].iter().all(|&t| t == 0));
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    }

    #[test]
    fn static_shapes_skip_or_truncate_and_fill_the_last_batch() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let fixed = Padding::Fixed {
            max_text: 8,
            max_frames: 40,
        };
        let skip = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                padding: fixed,
                ..config(2)
            },
        )
        .unwrap();
        let plan = skip.plan(0);
        let over = (0..50).filter(|&i| {
            let it = c.item(i);
            it.mel_frames > 40 || it.text_tokens > 8
        });
        assert_eq!(plan.skipped_over_length, over.count());
        let kept: usize = plan.batches.iter().map(Vec::len).sum();
        assert_eq!(kept + plan.skipped_over_length, 50);
        for b in skip.epoch(0) {
            let b = b.unwrap();
            assert_eq!(b.mels().1, [8, 40, 4], "every batch has the static shape");
            assert_eq!(b.tokens().1, [8, 8]);
            assert_eq!(b.mel_lengths().len(), 8);
        }
        let cut = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                padding: fixed,
                over_length: OverLength::Truncate,
                ..config(2)
            },
        )
        .unwrap();
        let p = cut.plan(0);
        assert_eq!(
            (p.truncated, p.skipped_over_length),
            (plan.skipped_over_length, 0)
        );
        for b in cut.epoch(0) {
            let b = b.unwrap();
            assert!(b.mel_lengths().iter().all(|&l| l <= 40));
            assert!(b.text_lengths().iter().all(|&l| l <= 8));
        }
        // 50 items in batches of 8: one batch (anywhere: batches are shuffled after
        // bucketing) holds 2 items and 6 empty rows.
        let short: Vec<Batch> = cut
            .epoch(0)
            .map(Result::unwrap)
            .filter(|b| b.items().len() < 8)
            .collect();
        assert_eq!(short.len(), 1);
        assert_eq!(short[0].items().len(), 2);
        assert_eq!(&short[0].mel_lengths()[2..], &[0; 6]);
        let dropped = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                padding: fixed,
                over_length: OverLength::Truncate,
                drop_last: true,
                ..config(2)
            },
        )
        .unwrap();
        assert_eq!(dropped.plan(0).dropped_last, 2);
        assert_eq!(dropped.epoch(0).count(), 6);
    }

    #[test]
    fn bucketing_reduces_padding() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let padding = |window| {
            let l = Loader::new(
                Arc::clone(&c),
                LoaderConfig {
                    bucket_window: window,
                    ..config(2)
                },
            )
            .unwrap();
            let (mut pad, mut data) = (0u64, 0u64);
            for b in l.epoch(0) {
                let b = b.unwrap();
                pad += b.pad_bytes;
                data += b.data_bytes;
            }
            pad as f64 / (pad + data) as f64
        };
        let (none, bucketed) = (padding(1), padding(8));
        assert!(
            bucketed < none * 0.5,
            "bucketed {bucketed:.3} vs none {none:.3}"
        );
    }

    #[test]
    fn rounding_to_a_multiple() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let l = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                padding: Padding::Longest { multiple: 16 },
                ..config(1)
            },
        )
        .unwrap();
        for b in l.epoch(0) {
            let b = b.unwrap();
            assert_eq!(b.mels().1[1] % 16, 0);
            assert_eq!(b.tokens().1[1] % 16, 0);
        }
    }

    #[test]
    fn dropping_an_epoch_early_stops_its_workers() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let l = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                batch_size: 1,
                workers: 4,
                prefetch: 4,
                ..config(4)
            },
        )
        .unwrap();
        let mut e = l.epoch(0);
        let first = e.next().unwrap().unwrap();
        drop(e); // workers blocked on full queues must wake and exit; join must not hang
        drop(first); // a batch outliving its epoch is fine
        // Buffers come back: a long epoch allocates only about as many batches as in flight.
        assert_eq!(l.epoch(1).count(), 50);
    }

    #[test]
    fn a_stream_is_the_epochs_back_to_back() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let l = Loader::new(Arc::clone(&c), config(3)).unwrap();
        let mut want: Vec<(u64, Vec<u32>)> = Vec::new();
        for e in 5..8 {
            want.extend(l.epoch(e).map(|b| (e, b.unwrap().items().to_vec())));
        }
        let got: Vec<(u64, Vec<u32>)> = l
            .stream(5)
            .take(want.len())
            .map(|b| {
                let b = b.unwrap();
                (b.epoch, b.items().to_vec())
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn int64_views_match_the_batch() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let l = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                int64: true,
                padding: Padding::Fixed {
                    max_text: 12,
                    max_frames: 64,
                },
                ..config(2)
            },
        )
        .unwrap();
        assert!(
            Loader::new(Arc::clone(&c), config(1))
                .unwrap()
                .epoch(0)
                .next()
                .unwrap()
                .unwrap()
                .int64()
                .is_none()
        );
        for b in l.epoch(0) {
            let b = b.unwrap();
            let w = b.int64().expect("asked for");
            let widen = |v: &[i32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<_>>();
            assert_eq!(w.tokens.as_slice(), widen(b.tokens().0));
            assert_eq!(w.text_lengths.as_slice(), widen(b.text_lengths()));
            assert_eq!(w.mel_lengths.as_slice(), widen(b.mel_lengths()));
            let mut items: Vec<i64> = b.items().iter().map(|&i| i64::from(i)).collect();
            items.resize(b.rows(), -1);
            assert_eq!(w.items.as_slice(), items);
            assert_eq!(
                w.tokens.as_slice().as_ptr() as usize % crate::aligned::ALIGN,
                0
            );
        }
    }

    fn items_of(loader: &Loader, epoch: u64) -> Vec<Vec<u32>> {
        loader
            .epoch(epoch)
            .map(|b| b.unwrap().items().to_vec())
            .collect()
    }

    #[test]
    fn ranks_are_disjoint_cover_the_epoch_and_get_as_many_batches() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        // 50 items: 3 ranks of 17, 17 and 16 (+1 filler); 4 ranks of 13, 13, 12, 12.
        for (world, bucket_window, drop_last) in [
            (3, 1, false),
            (3, 8, false),
            (4, 2, false),
            (4, 1, true),
            (7, 8, true),
            (2, 1, false),
        ] {
            let mut seen = vec![0; 50];
            let mut shapes = Vec::new();
            let mut dropped = Vec::new();
            for rank in 0..world {
                let l = Loader::new(
                    Arc::clone(&c),
                    LoaderConfig {
                        bucket_window,
                        drop_last,
                        rank,
                        world_size: world,
                        ..config(2)
                    },
                )
                .unwrap();
                let plan = l.plan(5);
                dropped.push(plan.dropped_last);
                let batches: Vec<Batch> = l.epoch(5).map(Result::unwrap).collect();
                shapes.push(batches.iter().map(Batch::rows).collect::<Vec<_>>());
                for b in &batches {
                    for &i in b.items() {
                        seen[i as usize] += 1;
                    }
                    // Filler rows have length 0 and come after the real ones.
                    let real = b.items().len();
                    assert!(b.mel_lengths()[..real].iter().all(|&n| n > 0));
                    assert!(b.mel_lengths()[real..].iter().all(|&n| n == 0));
                }
            }
            let case = format!("world {world}, window {bucket_window}, drop_last {drop_last}");
            assert!(
                shapes.windows(2).all(|w| w[0] == w[1]),
                "{case}: every rank gets the same batches: {shapes:?}"
            );
            assert!(dropped.windows(2).all(|w| w[0] == w[1]), "{case}");
            assert!(seen.iter().all(|&n| n <= 1), "{case}: disjoint: {seen:?}");
            let covered = seen.iter().filter(|&&n| n == 1).count();
            assert_eq!(covered + dropped[0], 50, "{case}: the epoch is covered");
            if !drop_last {
                assert_eq!(dropped[0], 0, "{case}");
            }
        }
    }

    #[test]
    fn one_rank_of_one_is_the_plain_plan() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let l = Loader::new(Arc::clone(&c), config(2)).unwrap();
        let p = l.plan(2);
        assert_eq!(p.filler_rows, 0);
        assert_eq!(p.batches.iter().map(Vec::len).sum::<usize>(), 50);
    }

    #[test]
    fn rank_out_of_range_is_refused_with_the_range() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        let e = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                rank: 4,
                world_size: 4,
                ..config(1)
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("from 0 to 3"), "{e}");
        let zero = LoaderConfig {
            world_size: 0,
            ..config(1)
        };
        assert!(Loader::new(Arc::clone(&c), zero).is_err());
    }

    #[test]
    fn a_resumed_epoch_is_the_rest_of_the_uninterrupted_one() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        for workers in [0, 1, 3] {
            let l = Loader::new(Arc::clone(&c), config(workers)).unwrap();
            let full = items_of(&l, 4);
            for start in [0, 1, 3, full.len() - 1, full.len(), full.len() + 2] {
                let rest: Vec<Vec<u32>> = l
                    .epoch_from(4, start)
                    .map(|b| b.unwrap().items().to_vec())
                    .collect();
                assert_eq!(
                    rest,
                    full[start.min(full.len())..].to_vec(),
                    "{workers} workers, start {start}"
                );
            }
            // A stream resumed mid-epoch runs on into the next epochs.
            let mut want: Vec<(u64, Vec<u32>)> = full[3..].iter().map(|b| (4, b.clone())).collect();
            want.extend(items_of(&l, 5).into_iter().map(|b| (5, b)));
            let got: Vec<(u64, Vec<u32>)> = l
                .stream_from(4, 3)
                .take(want.len())
                .map(|b| {
                    let b = b.unwrap();
                    (b.epoch, b.items().to_vec())
                })
                .collect();
            assert_eq!(got, want, "{workers} workers");
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        for cfg in [
            LoaderConfig {
                batch_size: 0,
                ..config(1)
            },
            LoaderConfig {
                padding: Padding::Fixed {
                    max_text: 0,
                    max_frames: 5,
                },
                ..config(1)
            },
            LoaderConfig {
                padding: Padding::Longest { multiple: 0 },
                ..config(1)
            },
        ] {
            assert!(Loader::new(Arc::clone(&c), cfg).is_err());
        }
        // More workers than batches: fine, the idle ones exit at once.
        let many = Loader::new(
            Arc::clone(&c),
            LoaderConfig {
                workers: 64,
                ..config(64)
            },
        )
        .unwrap();
        assert_eq!(many.epoch(0).count(), 7);
    }

    /// Utterance lengths spread as LibriTTS's (`train-clean-100`: 1 to 30 s, median about
    /// 5 s, a long right tail): log-normal around 5 s with sigma 0.7, clipped to 1-30 s, in
    /// frames of 256 samples at 22.05 kHz.
    fn libritts_like(n: usize) -> Vec<(u32, u32)> {
        let mut rng = SplitMix64(7);
        (0..n)
            .map(|_| {
                let (u, v) = (rng.uniform().max(1e-12), rng.uniform());
                let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                let seconds = (5.0f64.ln() + 0.7 * z).exp().clamp(1.0, 30.0);
                ((seconds * 22050.0 / 256.0).round() as u32, 20)
            })
            .collect()
    }

    #[test]
    fn batches_by_duration_pad_little_and_give_every_rank_as_many_batches() {
        let tmp = tempfile::tempdir().unwrap();
        let lengths = libritts_like(12_000);
        let c = Arc::new(crate::cache::synthetic(tmp.path(), &lengths, 1, 512));
        let budget = 20_000;
        for world in [1, 2, 3, 8] {
            let plans: Vec<Plan> = (0..world)
                .map(|rank| {
                    let loader = Loader::new(
                        Arc::clone(&c),
                        LoaderConfig {
                            batch_frames: Some(budget),
                            rank,
                            world_size: world,
                            ..config(0)
                        },
                    )
                    .unwrap();
                    loader.plan(3)
                })
                .collect();
            let count = plans[0].batches.len();
            // Every epoch has as many batches: streaming and resuming count on it.
            let again = Loader::new(
                Arc::clone(&c),
                LoaderConfig {
                    batch_frames: Some(budget),
                    world_size: world,
                    ..config(0)
                },
            )
            .unwrap();
            for epoch in [0, 1, 7] {
                assert_eq!(
                    again.plan(epoch).batches.len(),
                    count,
                    "world {world}, epoch {epoch}"
                );
            }
            let (mut real, mut padded) = (0usize, 0usize);
            let mut seen = vec![0u8; lengths.len()];
            for plan in &plans {
                assert_eq!(plan.batches.len(), count, "world {world}: batches per rank");
                for batch in &plan.batches {
                    let frames: Vec<usize> = batch
                        .iter()
                        .map(|&i| {
                            if i == FILLER {
                                0
                            } else {
                                lengths[i as usize].0 as usize
                            }
                        })
                        .collect();
                    let longest = frames.iter().copied().max().unwrap_or(0);
                    assert!(
                        batch.len() == 1 || batch.len() * longest <= budget,
                        "world {world}: {} rows of {longest} frames",
                        batch.len()
                    );
                    let batch_real = frames.iter().sum::<usize>();
                    if !batch.contains(&FILLER) {
                        assert!(
                            batch_real as f64 >= 0.9 * (batch.len() * longest) as f64,
                            "world {world}: a batch padded beyond 10 %: {frames:?}"
                        );
                    }
                    real += batch_real;
                    padded += batch.len() * longest;
                    for &i in batch.iter().filter(|&&i| i != FILLER) {
                        seen[i as usize] += 1;
                    }
                }
            }
            // The ranks' batches of one step have as many rows.
            for k in 0..count {
                let rows: Vec<usize> = plans.iter().map(|p| p.batches[k].len()).collect();
                assert!(
                    rows.iter().all(|&r| r == rows[0]),
                    "world {world}, batch {k}: {rows:?}"
                );
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "world {world}: every item once"
            );
            let padding = 1.0 - real as f64 / padded as f64;
            eprintln!(
                "world {world}: {count} batches per rank, padding {:.2} % of the padded frames, \
                 batches {:.0} % full on average",
                100.0 * padding,
                100.0 * padded as f64 / (world * count * budget) as f64
            );
            assert!(padding <= 0.10, "world {world}: padding {padding}");
        }
    }

    #[test]
    fn batches_by_duration_resume_mid_epoch_and_refuse_static_shapes() {
        let tmp = tempfile::tempdir().unwrap();
        let c = Arc::new(crate::cache::synthetic(
            tmp.path(),
            &libritts_like(300),
            2,
            64,
        ));
        let cfg = LoaderConfig {
            batch_frames: Some(4000),
            ..config(2)
        };
        let loader = Loader::new(Arc::clone(&c), cfg.clone()).unwrap();
        let all: Vec<Vec<u32>> = loader
            .epoch(1)
            .map(|b| b.unwrap().items().to_vec())
            .collect();
        assert_eq!(all, loader.plan(1).batches);
        assert!(all.len() > 10);
        let resumed: Vec<Vec<u32>> = loader
            .epoch_from(1, 7)
            .map(|b| b.unwrap().items().to_vec())
            .collect();
        assert_eq!(resumed, all[7..]);
        // Another epoch, another order.
        assert_ne!(loader.plan(2).batches, all);
        for bad in [
            LoaderConfig {
                batch_frames: Some(0),
                ..cfg.clone()
            },
            LoaderConfig {
                padding: Padding::Fixed {
                    max_text: 100,
                    max_frames: 3000,
                },
                ..cfg.clone()
            },
        ] {
            let e = Loader::new(Arc::clone(&c), bad).unwrap_err().to_string();
            assert!(e.contains("batch_frames"), "{e}");
        }
    }
}
