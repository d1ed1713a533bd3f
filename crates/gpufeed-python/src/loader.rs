//! `Loader`: batches from the cache, built on Rust threads, handed to Python as numpy
//! arrays.
//!
//! - **Ownership.** A batch's mel array borrows the Rust batch's buffer (no copy); the
//!   buffer's owner, a [`BatchBuffers`] object, is the array's base, so the buffer goes
//!   back to the loader's pool only when Python has dropped every array and view of it
//!   (never on the next `next()`). Tokens, lengths and item indices come as int64 (the
//!   dtype embeddings and indexing take), converted on the worker threads into buffers
//!   of the same batch. Every buffer starts on a 64-byte boundary, so JAX and TensorFlow
//!   take it without a copy.
//! - **Threads.** The Rust stream's workers never call Python. `next()` takes a batch that
//!   is ready at once (the GIL held: nothing to wait for), else waits with the GIL
//!   released, in slices of [`WAIT_SLICE`], checking for signals between them: Ctrl-C raises
//!   `KeyboardInterrupt` at once and stops and joins the workers first (the position is
//!   kept, so iterating again resumes).
//! - **Epochs.** Iterating the loader yields the batches of the current epoch from the
//!   current position; after its last batch the loader moves to the next epoch by itself
//!   (so forgetting `set_epoch` never repeats an order). The stream runs across the epoch
//!   boundary: the next epoch's first batches are ready when it starts.
//! - **Resume.** `state_dict()` is the epoch and the batches Python has received in it
//!   (not those prefetched), with the cache's identity and the settings that shape the
//!   plan; `load_state_dict` checks both and seeks (nothing is replayed).
//! - **Fork.** Every call checks the process id: after `fork()` the worker threads do not
//!   exist in the child, so a use there raises instead of hanging, and the child never
//!   joins threads it does not have.

#![allow(unsafe_code)] // the mel array borrows the batch's buffer: see `batch_dict`.

use crate::features::ReadChoice;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, TryLockError};
use std::time::Duration;

use numpy::{PyArray, ndarray};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use gpufeed_data::aligned::AlignedVec;
use gpufeed_data::cache::Cache as RustCache;
use gpufeed_data::loader::{Batch, Epoch, Loader as RustLoader, LoaderConfig, Next, OverLength};
use gpufeed_data::settings::{
    Environment, Frontend, LoaderArgs, LoaderSettings, PadChoice, precompute_options,
};

use crate::cache::Cache;
use crate::errors;
use crate::features::{config_of, to_py};

/// How long `next()` waits with the GIL released before it checks for signals.
const WAIT_SLICE: Duration = Duration::from_millis(50);
/// `state_dict()`'s format and version.
const STATE_FORMAT: &str = "gpufeed-loader-state";
const STATE_VERSION: u64 = 1;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Loader>()?;
    m.add_class::<LoaderIter>()?;
    m.add_class::<BatchBuffers>()?;
    Ok(())
}

/// The owner of one batch's buffers: the base object of the batch's mel array. When Python
/// drops it, the buffers go back to the loader.
#[pyclass(frozen, module = "gpufeed._gpufeed")]
pub(crate) struct BatchBuffers {
    batch: Batch,
}

/// A value created in one process that must not be dropped in another (a forked child):
/// there it is leaked instead, since dropping a stream joins threads the child lacks.
struct ForkSafe<T> {
    value: ManuallyDrop<T>,
    pid: u32,
}

impl<T> ForkSafe<T> {
    fn new(value: T) -> Self {
        Self {
            value: ManuallyDrop::new(value),
            pid: std::process::id(),
        }
    }
}

impl<T> Drop for ForkSafe<T> {
    fn drop(&mut self) {
        if std::process::id() == self.pid {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

/// A running Rust stream and where it started.
struct Stream {
    epochs: ForkSafe<Epoch>,
    first: u64,
}

impl Stream {
    /// (epoch, batch) the stream delivers next.
    fn at(&self, per_epoch: usize) -> (u64, usize) {
        let g = self.epochs.value.position();
        (self.first + (g / per_epoch) as u64, g % per_epoch)
    }
}

struct State {
    epoch: u64,
    position: usize,
    stream: Option<Stream>,
    closed: bool,
}

/// Batches from a gpufeed cache for a Python training loop.
#[pyclass(frozen, module = "gpufeed._gpufeed")]
pub(crate) struct Loader {
    loader: RustLoader,
    cache: Py<Cache>,
    per_epoch: usize,
    cache_hash: String,
    /// Every item's id, made once: a batch's `ids` list refers to these.
    ids: Vec<Py<PyString>>,
    no_id: Py<PyString>,
    state: Mutex<State>,
    pid: u32,
}

/// One pass over the loader's current epoch (what `iter(loader)` returns).
#[pyclass(module = "gpufeed._gpufeed")]
pub(crate) struct LoaderIter {
    loader: Py<Loader>,
    epoch: u64,
    done: bool,
}

/// The cache a `source` names: a `Cache`, a cache folder, or a dataset (precomputed first
/// when its cache is missing or stale).
fn open_source(
    py: Python<'_>,
    source: Option<&Bound<'_, PyAny>>,
    cache_root: Option<PathBuf>,
    config: &gpufeed_config::Config,
    config_path: Option<&Path>,
    read: ReadChoice,
) -> PyResult<Py<Cache>> {
    // No source: the config's `data.dataset_path`, as the trainer reads it.
    let path: PathBuf = match source {
        Some(source) => {
            if let Ok(c) = source.cast::<Cache>() {
                return Ok(c.clone().unbind());
            }
            source.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "source is a {}: pass a gpufeed.Cache, a cache folder or a dataset folder",
                    source
                        .get_type()
                        .name()
                        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
                ))
            })?
        }
        None => match (&config.data.dataset_path, config_path) {
            (Some(p), _) => p.clone(),
            (None, Some(c)) => {
                return Err(PyTypeError::new_err(format!(
                    "no source, and `{}` sets no `data.dataset_path`: pass the dataset, cache \
                     or gpufeed.Cache as the first argument, or set `data.dataset_path` there",
                    c.display()
                )));
            }
            (None, None) => {
                return Err(PyTypeError::new_err(
                    "no source: pass the dataset, cache or gpufeed.Cache as the first \
                     argument, or `config=` a YAML config whose `data.dataset_path` names the \
                     dataset",
                ));
            }
        },
    };
    // A cache folder is opened; anything else that exists is a dataset in some layout
    // (precomputed first; its reader says what it is, or why no layout fits).
    let is_cache = path.join(gpufeed_data::cache::MANIFEST).is_file();
    if is_cache || !path.exists() {
        return Py::new(py, Cache::open(py, &path)?);
    }
    let mut options =
        precompute_options(&path, cache_root.as_deref(), config).map_err(errors::data)?;
    read.apply(&mut options);
    let report = py
        .detach(move || gpufeed_data::precompute::run(&options, &gpufeed_data::precompute::Silent))
        .map_err(errors::data)?;
    Py::new(py, Cache::open(py, &report.cache_dir)?)
}

/// A hash of what the cache holds (its key and every shard's checksum): a state saved over
/// another cache is refused.
fn cache_hash(c: &RustCache) -> String {
    let m = c.manifest();
    let mut text = m.key.clone();
    for s in &m.shards {
        text.push(':');
        text.push_str(&s.xxh3);
    }
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()))
}

/// The settings that decide which items go into which batch, as `state_dict` records them.
fn plan_settings(c: &LoaderConfig) -> serde_json::Value {
    serde_json::json!({
        "batch_size": c.batch_size,
        "batch_frames": c.batch_frames,
        "shuffle": c.shuffle,
        "seed": c.seed,
        "bucket_window": c.bucket_window,
        "drop_last": c.drop_last,
        "padding": c.padding,
        "over_length": c.over_length,
        "rank": c.rank,
        "world_size": c.world_size,
    })
}

impl Loader {
    fn check_process(&self) -> PyResult<()> {
        errors::same_process("Loader", self.pid)
    }

    /// The state, closed or not, or an error when another thread is inside the loader
    /// (waiting on it with the GIL held could deadlock with that thread, which needs the GIL
    /// to return); `fix` ends that error.
    fn lock(&self, fix: &str) -> PyResult<std::sync::MutexGuard<'_, State>> {
        self.check_process()?;
        match self.state.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
                "the Loader is in use by another thread: {fix}"
            ))),
        }
    }

    /// The state of an open loader (see [`Loader::lock`]).
    fn state(&self) -> PyResult<std::sync::MutexGuard<'_, State>> {
        let guard = self.lock("give each thread its own Loader")?;
        if guard.closed {
            return Err(PyRuntimeError::new_err(
                "the Loader is closed: create a new one (its state_dict() resumes where this one stopped)",
            ));
        }
        Ok(guard)
    }

    /// The next batch of the current epoch, or `None` when `epoch` is over.
    fn next_batch<'py>(&self, py: Python<'py>, epoch: u64) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut state = self.state()?;
        if state.epoch != epoch {
            return Ok(None);
        }
        let want = (state.epoch, state.position);
        if state
            .stream
            .as_ref()
            .is_none_or(|s| s.at(self.per_epoch) != want)
        {
            state.stream = None; // stops and joins the old workers first
            state.stream = Some(Stream {
                epochs: ForkSafe::new(self.loader.stream_from(want.0, want.1)),
                first: want.0,
            });
        }
        // With no workers the batch is built on this thread: never with the GIL held.
        let mut ready_only = self.loader.config().workers > 0;
        let batch = loop {
            let Some(stream) = state.stream.as_mut() else {
                return Err(PyRuntimeError::new_err("the loader lost its stream"));
            };
            let epochs = &mut *stream.epochs.value;
            // A batch already waiting is taken with the GIL held: releasing and taking it
            // back costs more than the take, and the workers never need the GIL, so they
            // cannot wait on this thread. Otherwise the wait runs with the GIL released.
            let got = if ready_only {
                epochs.next_timeout(Duration::ZERO)
            } else {
                py.detach(|| epochs.next_timeout(WAIT_SLICE))
            };
            let ready_missed = std::mem::replace(&mut ready_only, false);
            match got {
                Next::Batch(b) => break b.map_err(errors::data)?,
                Next::End => return Err(PyRuntimeError::new_err("the loader's stream ended")),
                Next::TimedOut if ready_missed => {}
                Next::TimedOut => {
                    if let Err(e) = py.check_signals() {
                        // Ctrl-C (or another signal's exception): stop and join the
                        // workers before it propagates. The position stays.
                        state.stream = None;
                        return Err(e);
                    }
                }
            }
        };
        state.position += 1;
        if state.position == self.per_epoch {
            state.epoch += 1;
            state.position = 0;
        }
        drop(state);
        self.batch_dict(py, batch).map(Some)
    }

    /// The Python dict of one batch: every array a view of the batch's own buffers (the
    /// int64 ones filled by the workers), so nothing is converted or allocated here but the
    /// Python objects.
    fn batch_dict<'py>(&self, py: Python<'py>, batch: Batch) -> PyResult<Bound<'py, PyDict>> {
        let rows = batch.rows();
        // Filler rows (past the items) have no id.
        let items = batch.items();
        let ids = PyList::new(
            py,
            (0..rows).map(|r| match items.get(r) {
                Some(&i) => self.ids[i as usize].bind(py),
                None => self.no_id.bind(py),
            }),
        )?;
        let (epoch, index) = (batch.epoch, batch.index);
        let owner = Bound::new(py, BatchBuffers { batch })?;
        let b = &owner.get().batch;
        let Some(wide) = b.int64() else {
            return Err(PyRuntimeError::new_err("the loader gave no int64 arrays"));
        };
        let (mels, [_, t, m]) = b.mels();
        let (_, [_, width]) = b.tokens();
        let shape_error = |e: ndarray::ShapeError| PyValueError::new_err(e.to_string());
        let mel = ndarray::ArrayView3::from_shape((rows, t, m), mels).map_err(shape_error)?;
        let tokens = ndarray::ArrayView2::from_shape((rows, width), wide.tokens.as_slice())
            .map_err(shape_error)?;
        // Interned keys: made once, their hashes cached, so no string is built per batch.
        let d = PyDict::new(py);
        d.set_item(intern!(py, "mel"), borrow(&owner, &mel))?;
        d.set_item(
            intern!(py, "mel_lengths"),
            borrow(&owner, &view1(&wide.mel_lengths)),
        )?;
        d.set_item(intern!(py, "tokens"), borrow(&owner, &tokens))?;
        d.set_item(
            intern!(py, "token_lengths"),
            borrow(&owner, &view1(&wide.text_lengths)),
        )?;
        d.set_item(intern!(py, "ids"), ids)?;
        d.set_item(intern!(py, "items"), borrow(&owner, &view1(&wide.items)))?;
        d.set_item(
            intern!(py, "speakers"),
            borrow(&owner, &ndarray::ArrayView1::from(b.speakers())),
        )?;
        for array in b.arrays() {
            let spec = array.spec();
            let name = &spec.name;
            let [rows, max_rows, width] = array.shape();
            let shape: &[usize] = if width == 1 {
                &[rows, max_rows]
            } else {
                &[rows, max_rows, width]
            };
            let v = crate::cache::dtype_view(
                owner.clone().into_any(),
                array.bytes(),
                shape,
                spec.dtype,
                name,
                false,
            )?;
            d.set_item(name, v)?;
            d.set_item(
                format!("{name}_lengths"),
                borrow(&owner, &ndarray::ArrayView1::from(array.lengths())),
            )?;
        }
        d.set_item(intern!(py, "epoch"), epoch)?;
        d.set_item(intern!(py, "index"), index)?;
        Ok(d)
    }
}

fn view1(v: &AlignedVec<i64>) -> ndarray::ArrayView1<'_, i64> {
    ndarray::ArrayView1::from(v.as_slice())
}

/// A numpy array of `view`, whose memory `owner` holds, with `owner` as its base.
fn borrow<'py, T: numpy::Element, D: ndarray::Dimension>(
    owner: &Bound<'py, BatchBuffers>,
    view: &ndarray::ArrayView<'_, T, D>,
) -> Bound<'py, PyArray<T, D>> {
    // SAFETY: `view` lies in buffers of `owner`, a frozen object that never hands out a
    // mutable reference to them and frees (or recycles) them only when it is dropped;
    // `owner` becomes the array's base, so it lives as long as the array and every view or
    // DLPack export of it.
    unsafe { PyArray::borrow_from_array(view, owner.clone().into_any()) }
}

#[pymethods]
impl Loader {
    #[new]
    #[pyo3(signature = (
        source = None, *, batch_size = None, workers = None, prefetch = None, shuffle = None, seed = None,
        pad = None, max_text_length = None, max_mel_frames = None, pad_to_multiple = None,
        bucket_window = None, drop_last = None, over_length = None, rank = None,
        world_size = None, epoch = 0, cache = None, config = None, layout = None,
        columns = None, batch_frames = None, batch_seconds = None
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments
    fn new(
        py: Python<'_>,
        source: Option<&Bound<'_, PyAny>>,
        batch_size: Option<usize>,
        workers: Option<usize>,
        prefetch: Option<usize>,
        shuffle: Option<bool>,
        seed: Option<u64>,
        pad: Option<String>,
        max_text_length: Option<usize>,
        max_mel_frames: Option<usize>,
        pad_to_multiple: Option<usize>,
        bucket_window: Option<usize>,
        drop_last: Option<bool>,
        over_length: Option<String>,
        rank: Option<usize>,
        world_size: Option<usize>,
        epoch: u64,
        cache: Option<PathBuf>,
        config: Option<PathBuf>,
        layout: Option<String>,
        columns: Option<String>,
        batch_frames: Option<usize>,
        batch_seconds: Option<f64>,
    ) -> PyResult<Self> {
        if batch_frames.is_some() && batch_seconds.is_some() {
            return Err(PyValueError::new_err(
                "batch_frames and batch_seconds are the same budget: pass one",
            ));
        }
        if batch_seconds.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
            return Err(PyValueError::new_err(
                "batch_seconds: pass a positive number of seconds of audio per batch",
            ));
        }
        // Seconds of audio as mel frames at `audio`'s rate and hop.
        let frames_of = |audio: &gpufeed_config::AudioSettings| {
            batch_frames.or_else(|| {
                batch_seconds.map(|s| {
                    (s * f64::from(audio.sample_rate) / audio.hop_length.max(1) as f64).ceil()
                        as usize
                })
            })
        };
        let env = Environment::of_process().map_err(|e| {
            errors::config(format!(
                "{e}; unset it or pass `rank=` / `world_size=` explicitly"
            ))
        })?;
        let over_length = match over_length.as_deref() {
            None => None,
            Some("skip") => Some(OverLength::Skip),
            Some("truncate") => Some(OverLength::Truncate),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "over_length='{other}': expected 'skip' (leave longer items out) or 'truncate' (cut them to the shape)"
                )));
            }
        };
        let pad = match pad.as_deref() {
            None => None,
            Some("static") => Some(PadChoice::Static),
            Some("longest") => Some(PadChoice::Longest),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "pad='{other}': expected 'static' (every batch one shape: one graph, no retracing) \
                     or 'longest' (pad to the batch's longest item)"
                )));
            }
        };
        let mut args = LoaderArgs {
            batch_size,
            batch_frames: None,
            workers,
            prefetch,
            shuffle,
            seed,
            bucket_window,
            drop_last,
            pad,
            pad_to_multiple,
            max_text_length,
            max_mel_frames,
            over_length,
            rank,
            world_size,
        };
        let has_config = config.is_some();
        let cfg = config_of(py, config.clone())?;
        args.batch_frames = frames_of(&cfg.data.audio());
        // Refused settings before a precompute that can take minutes.
        LoaderSettings::resolve(&args, &cfg, has_config, &env, Frontend::Python, || (1, 1))
            .map_err(|e| errors::config(e.to_string()))?;
        let read = crate::features::read_options(layout.as_deref(), columns.as_deref(), None)?;
        // The config read once (above): its warnings said once, its values passed on.
        let cache_obj = open_source(py, source, cache, &cfg, config.as_deref(), read)?;
        let rust_cache = cache_obj.get().inner();
        // The cache's own rate and hop, which a cache given directly may not share with the
        // config.
        args.batch_frames = frames_of(&rust_cache.manifest().settings.audio);
        // The one resolution of the command line's and Python's settings
        // (`gpufeed_data::settings`); the dataset's longest item is the static shape when
        // nothing sets one.
        let longest = || {
            let items = &rust_cache.manifest().items;
            let max = |f: fn(&gpufeed_data::cache::CachedItem) -> u32| {
                items.iter().map(|i| f(i) as usize).max().unwrap_or(1)
            };
            (max(|i| i.text_tokens), max(|i| i.mel_frames))
        };
        let lc = LoaderSettings::resolve(&args, &cfg, has_config, &env, Frontend::Python, longest)
            .map_err(|e| errors::config(e.to_string()))?;
        let loader = RustLoader::new(rust_cache, lc).map_err(errors::data)?;
        let per_epoch = loader.plan(0).batches.len();
        if per_epoch == 0 {
            return Err(PyValueError::new_err(format!(
                "the loader plans no batch: {} items, every one over the static shape or dropped by \
                 drop_last; raise max_text_length / max_mel_frames, use over_length='truncate', or drop_last=False",
                loader.cache().len()
            )));
        }
        let hash = cache_hash(loader.cache());
        let ids = loader
            .cache()
            .manifest()
            .items
            .iter()
            .map(|it| PyString::new(py, &it.id).unbind())
            .collect();
        Ok(Self {
            loader,
            cache: cache_obj,
            per_epoch,
            cache_hash: hash,
            ids,
            no_id: PyString::new(py, "").unbind(),
            state: Mutex::new(State {
                epoch,
                position: 0,
                stream: None,
                closed: false,
            }),
            pid: std::process::id(),
        })
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<LoaderIter> {
        let epoch = slf.get().state()?.epoch;
        Ok(LoaderIter {
            loader: slf.clone().unbind(),
            epoch,
            done: false,
        })
    }

    /// Batches per epoch on this rank.
    fn __len__(&self) -> usize {
        self.per_epoch
    }

    /// The epoch the next batch belongs to.
    #[getter]
    fn epoch(&self) -> PyResult<u64> {
        Ok(self.state()?.epoch)
    }

    /// Batches Python has received in the current epoch.
    #[getter]
    fn position(&self) -> PyResult<usize> {
        Ok(self.state()?.position)
    }

    /// This loader's rank.
    #[getter]
    fn rank(&self) -> usize {
        self.loader.config().rank
    }

    /// The number of ranks.
    #[getter]
    fn world_size(&self) -> usize {
        self.loader.config().world_size
    }

    /// Items per batch.
    #[getter]
    fn batch_size(&self) -> usize {
        self.loader.config().batch_size
    }

    /// The cache the batches come from.
    #[getter]
    fn cache(&self, py: Python<'_>) -> Py<Cache> {
        self.cache.clone_ref(py)
    }

    /// The settings in force (after the config and the defaults), as a dict.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.loader.config())
    }

    /// What epoch `epoch`'s plan leaves out or adds on this rank: `skipped_over_length`,
    /// `truncated`, `dropped_last`, `filler_rows` (rows of length 0 that give every rank
    /// as many rows), and `batches`.
    #[pyo3(signature = (epoch = None))]
    fn plan_stats<'py>(&self, py: Python<'py>, epoch: Option<u64>) -> PyResult<Bound<'py, PyAny>> {
        let e = match epoch {
            Some(e) => e,
            None => self.state()?.epoch,
        };
        let p = self.loader.plan(e);
        to_py(
            py,
            &serde_json::json!({
                "batches": p.batches.len(),
                "skipped_over_length": p.skipped_over_length,
                "truncated": p.truncated,
                "dropped_last": p.dropped_last,
                "filler_rows": p.filler_rows,
            }),
        )
    }

    /// Starts epoch `epoch` from its first batch (the order depends only on seed and epoch).
    fn set_epoch(&self, epoch: u64) -> PyResult<()> {
        let mut s = self.state()?;
        if s.epoch != epoch || s.position != 0 {
            s.epoch = epoch;
            s.position = 0;
        }
        Ok(())
    }

    /// Where the loader is: load it into a new loader over the same cache with the same
    /// settings to get exactly the batches an uninterrupted run would have given next.
    fn state_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.state()?;
        to_py(
            py,
            &serde_json::json!({
                "format": STATE_FORMAT,
                "version": STATE_VERSION,
                "epoch": s.epoch,
                "position": s.position,
                "batches_per_epoch": self.per_epoch,
                "cache_key": self.loader.cache().manifest().key,
                "cache_hash": self.cache_hash,
                "settings": plan_settings(self.loader.config()),
            }),
        )
    }

    /// Resumes from `state_dict()`. Refused, naming the difference, when it comes from
    /// another cache or from settings that plan other batches.
    fn load_state_dict(&self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = crate::features::to_json(state)?;
        let field = |k: &str| v.get(k);
        if field("format").and_then(|f| f.as_str()) != Some(STATE_FORMAT) {
            return Err(PyValueError::new_err(
                "not a gpufeed Loader state: pass what Loader.state_dict() returned",
            ));
        }
        let version = field("version")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        if version != STATE_VERSION {
            return Err(PyValueError::new_err(format!(
                "Loader state version {version}: this gpufeed reads version {STATE_VERSION}"
            )));
        }
        if field("cache_hash").and_then(|h| h.as_str()) != Some(self.cache_hash.as_str()) {
            return Err(PyValueError::new_err(format!(
                "this state was saved over another cache (key {}, hash {}); this loader reads cache \
                 {} (hash {}): resume over the same cache, or start the new one from epoch 0",
                field("cache_key").and_then(|k| k.as_str()).unwrap_or("?"),
                field("cache_hash").and_then(|k| k.as_str()).unwrap_or("?"),
                self.loader.cache().manifest().key,
                self.cache_hash
            )));
        }
        let ours = plan_settings(self.loader.config());
        let theirs = field("settings").cloned().unwrap_or_default();
        if let (Some(a), Some(b)) = (ours.as_object(), theirs.as_object()) {
            let differ: Vec<String> = a
                .iter()
                // A setting the saved state predates (`batch_frames`) was unset then.
                .filter(|(k, val)| b.get(*k).unwrap_or(&serde_json::Value::Null) != *val)
                .map(|(k, val)| {
                    format!(
                        "{k}: saved {}, now {val}",
                        b.get(k)
                            .map_or_else(|| "nothing".to_owned(), ToString::to_string)
                    )
                })
                .collect();
            if !differ.is_empty() {
                return Err(PyValueError::new_err(format!(
                    "this state was saved with other loader settings, which plan other batches ({}): \
                     create the loader with the saved settings",
                    differ.join("; ")
                )));
            }
        } else {
            return Err(PyValueError::new_err(
                "the state has no `settings`: pass what Loader.state_dict() returned",
            ));
        }
        let epoch = field("epoch").and_then(serde_json::Value::as_u64);
        let position = field("position").and_then(serde_json::Value::as_u64);
        let (Some(epoch), Some(position)) = (epoch, position) else {
            return Err(PyValueError::new_err(
                "the state lacks `epoch` or `position`",
            ));
        };
        let position = usize::try_from(position).unwrap_or(usize::MAX);
        if position > self.per_epoch {
            return Err(PyValueError::new_err(format!(
                "position {position} is past the {} batches of an epoch",
                self.per_epoch
            )));
        }
        let mut s = self.state()?;
        if position == self.per_epoch {
            (s.epoch, s.position) = (epoch + 1, 0);
        } else {
            (s.epoch, s.position) = (epoch, position);
        }
        Ok(())
    }

    /// Stops and joins the worker threads. Batches already received stay valid.
    fn close(&self) -> PyResult<()> {
        let mut s = self.lock("close it from that thread")?;
        s.stream = None;
        s.closed = true;
        Ok(())
    }

    /// Whether `close()` was called. Never waits: a loader another thread is inside (which
    /// holds the state while it waits for a batch, the GIL released) is open.
    #[getter]
    fn closed(&self) -> bool {
        match self.state.try_lock() {
            Ok(s) => s.closed,
            Err(TryLockError::Poisoned(p)) => p.into_inner().closed,
            Err(TryLockError::WouldBlock) => false,
        }
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        drop(slf.get().state()?);
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let c = self.loader.config();
        format!(
            "gpufeed.Loader(items={}, batch_size={}, workers={}, batches_per_epoch={}, rank={}, world_size={})",
            self.loader.cache().len(),
            c.batch_size,
            c.workers,
            self.per_epoch,
            c.rank,
            c.world_size
        )
    }
}

#[pymethods]
impl LoaderIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.done {
            return Ok(None);
        }
        let batch = self.loader.get().next_batch(py, self.epoch)?;
        if batch.is_none() {
            self.done = true;
        }
        Ok(batch)
    }

    fn __len__(&self) -> usize {
        self.loader.get().per_epoch
    }
}
