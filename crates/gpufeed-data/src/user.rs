//! Arrays a user's own function computes per item (codec tokens, speaker embeddings, a
//! teacher model's outputs), added to a cache without computing the rest again.
//!
//! [`add`] decodes every cached item's audio at the cache's sample rate (the samples its
//! mel was computed from), calls the function ([`UserArrays`]) on it, and writes what it
//! returns **beside** each shard, one safetensors file per shard and array:
//!
//! ```text
//! shard-00000-<hash>.safetensors               mel, tokens, the built-in arrays
//! shard-00000-<hash>.codes.0.safetensors       `codes` ([rows] or [rows, width]) and
//!                                              `codes_offsets` (int64, items + 1)
//! ```
//!
//! The trailing number is the array's generation: computing it again
//! ([`Existing::Replace`]) writes generation + 1 beside the old files, then the manifest,
//! then deletes the old ones, so a reader sees the old arrays or the new, never a mix. The
//! manifest ([`crate::cache::Manifest::user_arrays`]) lists each array with its dtype and
//! width and each file with its size and checksum; [`crate::cache::Cache`] maps them and
//! reads them zero-copy like the built-in ones, and the loader pads them to the longest in
//! the batch (their rows are their own: codec frames at their own rate, one row for an
//! embedding).
//!
//! A function that fails (or returns something a cache cannot hold) stops the run with an
//! error naming the item. Nothing of the manifest has changed then, so the cache reads as it
//! did; the files of the shards already done stay, and the next run with the same names
//! resumes from them (pass [`Existing::Replace`] to compute everything again).
//!
//! An array's identity is its name (with its dtype and width): the function itself cannot
//! be hashed, so after changing it, add the array again with [`Existing::Replace`] or under
//! another name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::DataError;
use crate::arrays::{ArraySpec, Dtype};
use crate::cache::{self, CachedItem, Manifest, ShardEntry};
use crate::fsx;
use crate::layout::{Layout, ReadOptions};
use crate::manifest::{Dataset, Item};
use crate::precompute::Progress;

/// One array a user's function returned for one item: `rows × width` elements of `dtype`,
/// little-endian bytes, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct UserArray {
    /// Its name (see [`check_name`]).
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Rows (the first dimension; 1 for a scalar).
    pub rows: usize,
    /// Elements per row (the second dimension; 1 for a 1-D array).
    pub width: usize,
    /// The elements.
    pub bytes: Vec<u8>,
}

/// A user's function of one item: its id, its audio at the cache's sample rate (mono,
/// float, the samples the mel was computed from) and that rate, to arrays by name. Called
/// from several threads at once (the decoding runs in parallel; a Python function holds the
/// GIL while it runs).
pub trait UserArrays: Sync {
    /// The arrays of one item.
    ///
    /// # Errors
    ///
    /// Why it failed, as text; [`add`] names the item.
    fn compute(
        &self,
        id: &str,
        samples: &[f32],
        sample_rate: u32,
    ) -> Result<Vec<UserArray>, String>;
}

/// A user array in the manifest: its spec (rows per frame 0: each item's rows are its own),
/// its generation, and one file per shard, in shard order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserArrayEntry {
    /// Name, dtype, width.
    pub spec: ArraySpec,
    /// How many times it was computed again ([`Existing::Replace`]); part of its files'
    /// names.
    pub generation: u32,
    /// Its file beside each shard, in the manifest's shard order.
    pub shards: Vec<ShardEntry>,
}

/// Names a user array may not take: the cache's own tensors and the batch's keys.
const RESERVED: [&str; 16] = [
    "mel", "tokens", "linear", "energy", "f0", "voiced", "wav", "pitch", "audio", "speaker",
    "speakers", "item", "items", "id", "ids", "text",
];

/// The longest name.
const MAX_NAME: usize = 64;

/// Whether `name` can name a user array: 1 to 64 ASCII letters, digits and underscores, not
/// starting with a digit (a Python identifier, a dict key every framework takes), not one
/// of the cache's own names, and not ending in `_lengths` or `_offsets` (the batch's and
/// the shard's companion tensors).
///
/// # Errors
///
/// Why not, as text.
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if !valid {
        return Err(format!(
            "`{name}` is not a usable array name: use 1 to {MAX_NAME} ASCII letters, digits \
             and underscores, not starting with a digit (e.g. `codes`, `spk_emb`)"
        ));
    }
    if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "`{name}` is one of the cache's own names ({}); choose another",
            RESERVED.join(", ")
        ));
    }
    if name.ends_with("_lengths") || name.ends_with("_offsets") {
        return Err(format!(
            "`{name}` ends like the companion tensors (`NAME_lengths`, `NAME_offsets`); \
             choose another"
        ));
    }
    Ok(())
}

/// The file of user array `name`, generation `generation`, beside the shard `shard_file`.
#[must_use]
pub fn file_name(shard_file: &str, name: &str, generation: u32) -> String {
    let stem = shard_file
        .strip_suffix(".safetensors")
        .unwrap_or(shard_file);
    format!("{stem}.{name}.{generation}.safetensors")
}

/// Whether `file` is a user array's file beside the shard `shard_file`.
#[must_use]
pub fn is_beside(file: &str, shard_file: &str) -> bool {
    let stem = shard_file
        .strip_suffix(".safetensors")
        .unwrap_or(shard_file);
    file.len() > stem.len() + 1
        && file.starts_with(stem)
        && file.as_bytes()[stem.len()] == b'.'
        && file.ends_with(".safetensors")
        && file != shard_file
}

/// The spec a user array is stored with.
fn spec_of(a: &UserArray) -> ArraySpec {
    ArraySpec {
        name: a.name.clone(),
        dtype: a.dtype,
        width: a.width,
        rows_per_frame: 0,
    }
}

/// Checks one item's arrays against the names and specs expected (`None`: the first item,
/// which sets them): each named once, a usable name, bytes that are `rows × width`
/// elements, width within the cache's bound.
fn check_item(arrays: &[UserArray], expected: Option<&[ArraySpec]>) -> Result<(), String> {
    if arrays.is_empty() {
        return Err("the function returned no array (a dict of name to numpy array)".into());
    }
    for (k, a) in arrays.iter().enumerate() {
        check_name(&a.name)?;
        if arrays[..k].iter().any(|b| b.name == a.name) {
            return Err(format!("`{}` is returned twice", a.name));
        }
        if a.width == 0 || a.width > cache::MAX_ARRAY_WIDTH {
            return Err(format!(
                "`{}` has rows of {} elements; a cache holds 1 to {} per row (reshape it to \
                 (rows, width))",
                a.name,
                a.width,
                cache::MAX_ARRAY_WIDTH
            ));
        }
        if a.bytes.len() != a.rows * a.width * a.dtype.size() {
            return Err(format!(
                "`{}`: {} bytes for {} × {} {}",
                a.name,
                a.bytes.len(),
                a.rows,
                a.width,
                a.dtype.numpy()
            ));
        }
    }
    let Some(expected) = expected else {
        return Ok(());
    };
    for spec in expected {
        let Some(a) = arrays.iter().find(|a| a.name == spec.name) else {
            return Err(format!(
                "`{}` is missing (the first item returned {})",
                spec.name,
                names(expected)
            ));
        };
        if a.dtype != spec.dtype || a.width != spec.width {
            return Err(format!(
                "`{}` is {} with rows of {}, where the first item's was {} with rows of {}: \
                 every item's must have the same dtype and width",
                a.name,
                a.dtype.numpy(),
                a.width,
                spec.dtype.numpy(),
                spec.width
            ));
        }
    }
    if let Some(extra) = arrays
        .iter()
        .find(|a| !expected.iter().any(|s| s.name == a.name))
    {
        return Err(format!(
            "`{}` was not returned for the first item (it returned {})",
            extra.name,
            names(expected)
        ));
    }
    Ok(())
}

fn names(specs: &[ArraySpec]) -> String {
    specs
        .iter()
        .map(|s| format!("`{}`", s.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`add`] does with an array the cache already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Keep it when its dtype and width are the function's (what `precompute(extra=)`
    /// does on a cache built before); compute the names it lacks.
    Keep,
    /// Refuse: an error naming it (what `Cache.add` does by default).
    Refuse,
    /// Compute it again, as a new generation.
    Replace,
}

/// Options of [`add`].
#[derive(Debug, Clone)]
pub struct AddOptions {
    /// Worker threads; all cores when `None`.
    pub jobs: Option<usize>,
    /// Arrays the cache already holds.
    pub existing: Existing,
    /// The dataset, when it is no longer where the manifest says (`Manifest::dataset`).
    pub data: Option<PathBuf>,
    /// How the dataset is read (`columns`, `mic`); the layout and the text choice come
    /// from the manifest.
    pub read: ReadOptions,
}

impl Default for AddOptions {
    fn default() -> Self {
        Self {
            jobs: None,
            existing: Existing::Refuse,
            data: None,
            read: ReadOptions::default(),
        }
    }
}

/// What [`add`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AddReport {
    /// The arrays the function returns, in its order.
    pub names: Vec<String>,
    /// Those computed by this run.
    pub computed: Vec<String>,
    /// Those the cache already held and kept ([`Existing::Keep`]).
    pub kept: Vec<String>,
    /// Items computed.
    pub items: usize,
    /// Shards whose files were computed.
    pub shards_computed: usize,
    /// Shards whose files an earlier, interrupted run had written.
    pub shards_reused: usize,
    /// Bytes of the files of the arrays computed.
    pub bytes: u64,
    /// Wall time.
    pub elapsed_s: f64,
}

/// Adds the arrays `f` computes for every item to the complete cache in `dir` (a `<key>`
/// folder), without computing anything else again: see the [module docs](self).
///
/// # Errors
///
/// - [`DataError::Locked`] while another run builds the cache;
/// - [`DataError::Item`] naming the item whose audio no longer decodes, which the dataset no
///   longer has, or on which `f` failed or returned what a cache cannot hold;
/// - [`DataError::Settings`] for a name the cache already holds under
///   [`Existing::Refuse`];
/// - the I/O errors of reading the dataset and writing the files.
pub fn add(
    dir: &Path,
    f: &dyn UserArrays,
    opts: &AddOptions,
    progress: &dyn Progress,
) -> Result<AddReport, DataError> {
    let started = Instant::now();
    let _lock = crate::precompute::Lock::acquire(dir, None)?;
    let mut manifest = cache::read_manifest(dir)?;
    let dataset = reopen(&manifest, opts)?;
    let items = match_items(&manifest, &dataset)?;
    let rate = manifest.settings.audio.sample_rate;
    let first = manifest
        .items
        .first()
        .ok_or_else(|| DataError::Settings("the cache has no item".into()))?;

    // The first item says which arrays the function returns, and their types.
    let probe = call(f, first, &dataset, items[0], rate)?;
    check_item(&probe, None).map_err(|reason| item_error(first, &dataset, items[0], reason))?;
    let specs: Vec<ArraySpec> = probe.iter().map(spec_of).collect();
    let mut report = AddReport {
        names: specs.iter().map(|s| s.name.clone()).collect(),
        ..AddReport::default()
    };
    let todo = to_compute(dir, &manifest, &specs, opts.existing, &mut report.kept)?;
    if todo.is_empty() {
        report.elapsed_s = started.elapsed().as_secs_f64();
        return Ok(report);
    }

    let jobs = opts
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let total: usize = manifest.shards.iter().map(|s| s.items).sum();
    progress.start(total as u64, 0);
    let mut entries: Vec<Vec<ShardEntry>> = vec![Vec::new(); todo.len()];
    let mut start = 0;
    let result = (|| -> Result<(), DataError> {
        for (k, shard) in manifest.shards.iter().enumerate() {
            let rows = start..start + shard.items;
            start += shard.items;
            let files: Vec<String> = todo
                .iter()
                .map(|(s, g)| file_name(&shard.file, &s.name, *g))
                .collect();
            // Resume: every file of this shard written by an earlier run that stopped.
            let done: Option<Vec<ShardEntry>> = todo
                .iter()
                .zip(&files)
                .map(|((spec, _), file)| {
                    open_file(&dir.join(file), spec, shard.items).ok()?;
                    ShardEntry::of(dir, file, shard.items).ok()
                })
                .collect();
            if let Some(done) = done {
                for (e, d) in entries.iter_mut().zip(done) {
                    e.push(d);
                }
                report.shards_reused += 1;
                progress.advance(shard.items as u64);
                continue;
            }
            let computed = compute_shard(
                f,
                &manifest.items[rows.clone()],
                &dataset,
                &items[rows],
                rate,
                &specs,
                jobs,
                progress,
            )?;
            for (t, (spec, _)) in todo.iter().enumerate() {
                let parts: Vec<&UserArray> = computed
                    .iter()
                    .map(|arrays| arrays.iter().find(|a| a.name == spec.name))
                    .collect::<Option<_>>()
                    .unwrap_or_default();
                let entry = write_file(dir, &files[t], spec, &manifest.key, k, &parts)?;
                report.bytes += entry.bytes;
                entries[t].push(entry);
            }
            report.items += shard.items;
            report.shards_computed += 1;
        }
        Ok(())
    })();
    progress.finish();
    result?;

    // The manifest last: until it is written, readers see the cache as it was.
    for ((spec, generation), shards) in todo.into_iter().zip(entries) {
        report.computed.push(spec.name.clone());
        let entry = UserArrayEntry {
            spec,
            generation,
            shards,
        };
        match manifest
            .user_arrays
            .iter_mut()
            .find(|u| u.spec.name == entry.spec.name)
        {
            Some(old) => *old = entry,
            None => manifest.user_arrays.push(entry),
        }
    }
    cache::write_manifest_file(dir, &manifest)?;
    remove_unlisted(dir, &manifest, &report.computed);
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The arrays of `specs` to compute, each with its generation: a new name, or one the
/// cache holds that `existing` says to replace; those kept as they are go into `kept`.
fn to_compute(
    dir: &Path,
    manifest: &Manifest,
    specs: &[ArraySpec],
    existing: Existing,
    kept: &mut Vec<String>,
) -> Result<Vec<(ArraySpec, u32)>, DataError> {
    let mut todo: Vec<(ArraySpec, u32)> = Vec::new();
    for spec in specs {
        match manifest
            .user_arrays
            .iter()
            .find(|u| u.spec.name == spec.name)
        {
            None => todo.push((spec.clone(), 0)),
            Some(u) if existing == Existing::Keep && u.spec == *spec => {
                kept.push(spec.name.clone());
            }
            Some(u) if existing == Existing::Refuse => {
                return Err(DataError::Settings(format!(
                    "the cache `{}` already holds `{}` ({} with rows of {}); pass \
                     replace=True (`Existing::Replace`) to compute it again, or choose \
                     another name",
                    dir.display(),
                    u.spec.name,
                    u.spec.dtype.numpy(),
                    u.spec.width
                )));
            }
            Some(u) => todo.push((spec.clone(), u.generation + 1)),
        }
    }
    Ok(todo)
}

/// Removes the old generation's files of the arrays just `computed`, and any other file
/// of these names the manifest does not list (an older generation whose array a precompute
/// over changed data dropped).
fn remove_unlisted(dir: &Path, manifest: &Manifest, computed: &[String]) {
    let listed: std::collections::HashSet<&str> =
        manifest.files().map(|f| f.file.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = computed.iter().any(|n| {
                manifest
                    .shards
                    .iter()
                    .any(|s| is_beside(&name, &s.file) && name.contains(&format!(".{n}.")))
            });
            if ours && !listed.contains(name.as_str()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Opens the cache's dataset again, in the layout and with the text choice it was built
/// with.
fn reopen(manifest: &Manifest, opts: &AddOptions) -> Result<Dataset, DataError> {
    let path = opts
        .data
        .clone()
        .unwrap_or_else(|| manifest.dataset.clone());
    let layout = manifest.layout.parse::<Layout>().ok();
    let read = ReadOptions {
        layout: opts.read.layout.or(layout),
        use_normalized_text: manifest.settings.text.use_normalized_text,
        ..opts.read.clone()
    };
    crate::layout::open(&path, &read).map_err(|e| match e {
        DataError::NotFound { path } => DataError::Settings(format!(
            "the dataset the cache was built from, `{}`, is gone; pass where it is now \
             (`data=`)",
            path.display()
        )),
        e => e,
    })
}

/// For every cached item, its index in the dataset; an error names the first item the
/// dataset no longer has, or whose audio changed since the cache was built.
fn match_items(manifest: &Manifest, dataset: &Dataset) -> Result<Vec<usize>, DataError> {
    let by_id: HashMap<&str, usize> = dataset
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.id.as_str(), i))
        .collect();
    let root = dataset.root.as_path();
    manifest
        .items
        .iter()
        .map(|it| {
            let Some(&i) = by_id.get(it.id.as_str()) else {
                return Err(DataError::Item {
                    id: it.id.clone(),
                    audio: it.source.path.clone(),
                    line: it.line,
                    reason: format!(
                        "the dataset `{}` no longer has it; precompute the cache again first",
                        dataset.manifest.display()
                    ),
                });
            };
            let now = cache::SourceId::of(root, &dataset.items[i].audio);
            if now != it.source {
                return Err(item_error(
                    it,
                    dataset,
                    i,
                    "its audio changed since the cache was built; precompute the cache again \
                     first"
                        .into(),
                ));
            }
            Ok(i)
        })
        .collect()
}

fn item_error(it: &CachedItem, dataset: &Dataset, i: usize, reason: String) -> DataError {
    DataError::Item {
        id: it.id.clone(),
        audio: dataset.audio_path(&dataset.items[i]),
        line: it.line,
        reason,
    }
}

/// Decodes item `i` of `dataset` (cached as `it`) and calls `f` on it.
fn call(
    f: &dyn UserArrays,
    it: &CachedItem,
    dataset: &Dataset,
    i: usize,
    rate: u32,
) -> Result<Vec<UserArray>, DataError> {
    let item: &Item = &dataset.items[i];
    let audio = crate::precompute::read_audio(&dataset.audio_path(item), item, rate)
        .map_err(|reason| item_error(it, dataset, i, reason))?;
    // A panic in the function (a bug in a binding) is this item's error, not the process's.
    let run = std::panic::AssertUnwindSafe(|| f.compute(&it.id, &audio.samples, rate));
    match std::panic::catch_unwind(run) {
        Ok(Ok(arrays)) => Ok(arrays),
        Ok(Err(e)) => Err(item_error(
            it,
            dataset,
            i,
            format!("the function failed: {e}"),
        )),
        Err(_) => Err(item_error(it, dataset, i, "the function panicked".into())),
    }
}

/// The arrays of one shard's items, in row order, on `jobs` threads.
#[allow(clippy::too_many_arguments)]
fn compute_shard(
    f: &dyn UserArrays,
    cached: &[CachedItem],
    dataset: &Dataset,
    items: &[usize],
    rate: u32,
    specs: &[ArraySpec],
    jobs: usize,
    progress: &dyn Progress,
) -> Result<Vec<Vec<UserArray>>, DataError> {
    let next = AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    type Slot = Option<Result<Vec<UserArray>, DataError>>;
    let out: Mutex<Vec<Slot>> = Mutex::new((0..cached.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(cached.len()) {
            scope.spawn(|| {
                loop {
                    let r = next.fetch_add(1, Ordering::Relaxed);
                    if r >= cached.len() || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let it = &cached[r];
                    let result = call(f, it, dataset, items[r], rate).and_then(|arrays| {
                        check_item(&arrays, Some(specs))
                            .map(|()| arrays)
                            .map_err(|reason| item_error(it, dataset, items[r], reason))
                    });
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    progress.advance(1);
                    if let Ok(mut out) = out.lock() {
                        out[r] = Some(result);
                    }
                }
            });
        }
    });
    let out = out.into_inner().unwrap_or_default();
    // The first failure in row order, so that the error names the same item every run.
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(DataError::Settings("stopped".into()))))
        .collect::<Result<Vec<_>, _>>()
}

/// Metadata of a user array's file.
#[derive(Debug, Serialize, Deserialize)]
struct FileMeta {
    format: String,
    version: u32,
    key: String,
    shard: usize,
    array: String,
    items: usize,
}

/// Writes one user array's file beside shard `shard` (atomically) and returns its entry.
fn write_file(
    dir: &Path,
    file: &str,
    spec: &ArraySpec,
    key: &str,
    shard: usize,
    parts: &[&UserArray],
) -> Result<ShardEntry, DataError> {
    let path = dir.join(file);
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.clone(),
        reason,
    };
    let mut offsets: Vec<i64> = Vec::with_capacity(parts.len() + 1);
    offsets.push(0);
    let mut bytes = Vec::with_capacity(parts.iter().map(|p| p.bytes.len()).sum());
    for p in parts {
        bytes.extend_from_slice(&p.bytes);
        offsets.push(offsets[offsets.len() - 1] + p.rows as i64);
    }
    let rows = offsets[offsets.len() - 1] as usize;
    let shape = if spec.width == 1 {
        vec![rows]
    } else {
        vec![rows, spec.width]
    };
    let offsets_bytes: &[u8] = bytemuck::cast_slice(&offsets);
    let view = |dtype, shape, data| {
        safetensors::tensor::TensorView::new(dtype, shape, data).map_err(|e| corrupt(e.to_string()))
    };
    let tensors = vec![
        (
            spec.offsets_name(),
            view(safetensors::Dtype::I64, vec![offsets.len()], offsets_bytes)?,
        ),
        (
            spec.name.clone(),
            view(spec.dtype.safetensors(), shape, &bytes)?,
        ),
    ];
    let meta = FileMeta {
        format: cache::FORMAT.into(),
        version: cache::VERSION,
        key: key.into(),
        shard,
        array: spec.name.clone(),
        items: parts.len(),
    };
    let meta = serde_json::to_string(&meta).map_err(|e| corrupt(e.to_string()))?;
    let data = safetensors::serialize(
        tensors,
        Some(HashMap::from([("gpufeed".to_string(), meta)])),
    )
    .map_err(|e| corrupt(e.to_string()))?;
    fsx::write_atomic(&path, &data)?;
    Ok(ShardEntry {
        file: file.to_string(),
        items: parts.len(),
        bytes: data.len() as u64,
        xxh3: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&data)),
    })
}

/// One user array's file, mapped: the array's byte range and its row offsets.
#[derive(Debug)]
pub(crate) struct UserView {
    pub(crate) mmap: memmap2::Mmap,
    pub(crate) range: std::ops::Range<usize>,
    pub(crate) offsets: Vec<i64>,
}

/// Maps a user array's file and checks it against its spec and the shard's item count.
pub(crate) fn open_file(
    path: &Path,
    spec: &ArraySpec,
    items: usize,
) -> Result<UserView, DataError> {
    let file = fsx::open(path)?;
    let mmap = cache::map(&file, path)?;
    let (range, offsets) = {
        let tensors = cache::Tensors::read(&mmap, path)?;
        let range = tensors.range(&spec.name, spec.dtype.safetensors())?;
        let offsets: Vec<i64> = bytemuck::pod_collect_to_vec(
            &mmap[tensors.range(&spec.offsets_name(), safetensors::Dtype::I64)?],
        );
        if offsets.len() != items + 1 {
            return Err(DataError::Corrupt {
                path: path.to_path_buf(),
                reason: format!(
                    "`{}` has {} offsets for a shard of {items} items",
                    spec.offsets_name(),
                    offsets.len()
                ),
            });
        }
        tensors.check_offsets(&offsets, range.len() / spec.row_bytes().max(1), &spec.name)?;
        (range, offsets)
    };
    Ok(UserView {
        mmap,
        range,
        offsets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_identifiers_and_not_the_caches_own() {
        for ok in ["codes", "spk_emb", "_x", "A1"] {
            check_name(ok).unwrap();
        }
        for bad in [
            "",
            "1st",
            "a.b",
            "a-b",
            "spk emb",
            "mel",
            "Tokens",
            "wav",
            "codes_lengths",
            "x_offsets",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_name(&"x".repeat(65)).is_err());
    }

    #[test]
    fn files_are_named_beside_their_shard() {
        let f = file_name("shard-00003-abc.safetensors", "codes", 2);
        assert_eq!(f, "shard-00003-abc.codes.2.safetensors");
        assert!(is_beside(&f, "shard-00003-abc.safetensors"));
        assert!(!is_beside(&f, "shard-00003-abd.safetensors"));
        assert!(!is_beside(
            "shard-00003-abc.safetensors",
            "shard-00003-abc.safetensors"
        ));
    }

    fn arr(name: &str, dtype: Dtype, rows: usize, width: usize) -> UserArray {
        UserArray {
            name: name.into(),
            dtype,
            rows,
            width,
            bytes: vec![0; rows * width * dtype.size()],
        }
    }

    #[test]
    fn every_item_must_return_what_the_first_did() {
        let first = vec![
            arr("codes", Dtype::I64, 10, 8),
            arr("spk", Dtype::F32, 1, 4),
        ];
        check_item(&first, None).unwrap();
        let specs: Vec<ArraySpec> = first.iter().map(spec_of).collect();
        // Rows may differ per item.
        check_item(
            &[arr("codes", Dtype::I64, 3, 8), arr("spk", Dtype::F32, 1, 4)],
            Some(&specs),
        )
        .unwrap();
        let e = check_item(
            &[arr("codes", Dtype::I32, 3, 8), arr("spk", Dtype::F32, 1, 4)],
            Some(&specs),
        )
        .unwrap_err();
        assert!(e.contains("int32") && e.contains("int64"), "{e}");
        let e = check_item(&[arr("codes", Dtype::I64, 3, 8)], Some(&specs)).unwrap_err();
        assert!(e.contains("`spk` is missing"), "{e}");
        let e = check_item(
            &[
                arr("codes", Dtype::I64, 3, 8),
                arr("spk", Dtype::F32, 1, 4),
                arr("z", Dtype::U8, 1, 1),
            ],
            Some(&specs),
        )
        .unwrap_err();
        assert!(e.contains("`z` was not returned"), "{e}");
        let e = check_item(&[], None).unwrap_err();
        assert!(e.contains("no array"), "{e}");
        let mut short = arr("codes", Dtype::I64, 3, 8);
        short.bytes.pop();
        assert!(
            check_item(&[short], None)
                .unwrap_err()
                .contains("bytes for 3 × 8 int64")
        );
    }
}
