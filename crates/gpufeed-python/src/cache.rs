//! `Cache`: a precomputed feature cache, its items as read-only numpy views into the mapped
//! shards.

#![allow(unsafe_code)] // numpy views of memory owned by a Python object: see `view`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use numpy::{PyArray, PyArray1, PyArrayMethods as _, ndarray};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use gpufeed_data::cache::{Cache as RustCache, MANIFEST};

use gpufeed_data::user::Existing;

use crate::errors;
use crate::features::to_py;
use crate::user::{AddArgs, PyFn};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Cache>()?;
    Ok(())
}

/// A complete feature cache, opened read-only and mapped.
#[pyclass(frozen, module = "gpufeed._gpufeed")]
pub(crate) struct Cache {
    /// The cache as last opened: `add` opens it again with the new arrays.
    current: std::sync::RwLock<Arc<RustCache>>,
    /// Every cache this object held before: numpy views of an item borrow their mapping
    /// and name this object as their base, so a mapping lives as long as the object.
    retired: std::sync::Mutex<Vec<Arc<RustCache>>>,
    /// What `precompute` did when it returned this cache.
    report: Option<Py<PyAny>>,
}

/// The cache folder `path` names: a folder holding `manifest.json`, or a cache root holding
/// exactly one such folder.
pub(crate) fn resolve(path: &Path) -> PyResult<PathBuf> {
    if path.join(MANIFEST).is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.exists() {
        return Err(errors::missing(
            path,
            "no such cache",
            "build it with `gpufeed.precompute(DATASET)` (or `gpufeed precompute --data DATASET`)",
        ));
    }
    let candidates: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("`{}`: {e}", path.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(errors::missing(
            &path.join(MANIFEST),
            "not a gpufeed cache (no manifest.json here or in a folder below)",
            "pass the folder `gpufeed.precompute` returned, or a dataset to `gpufeed.Loader`",
        )),
        many => Err(PyValueError::new_err(format!(
            "`{}` holds {} caches (one per feature setting): pass one of {}",
            path.display(),
            many.len(),
            many.iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

impl Cache {
    /// The cache as it is now.
    pub(crate) fn inner(&self) -> Arc<RustCache> {
        Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    pub(crate) fn open(py: Python<'_>, path: &Path) -> PyResult<Self> {
        let dir = resolve(path)?;
        let inner = py.detach(|| RustCache::open(&dir)).map_err(errors::data)?;
        Ok(Self {
            current: std::sync::RwLock::new(Arc::new(inner)),
            retired: std::sync::Mutex::new(Vec::new()),
            report: None,
        })
    }

    /// A count of every item, in cache order, as int64.
    fn per_item<'py>(
        &self,
        py: Python<'py>,
        f: fn(&gpufeed_data::cache::CachedItem) -> u32,
    ) -> Bound<'py, PyArray1<i64>> {
        let cache = self.inner();
        let items = &cache.manifest().items;
        PyArray1::from_vec(py, items.iter().map(|it| i64::from(f(it))).collect())
    }

    fn index(&self, i: isize) -> PyResult<usize> {
        let n = self.inner().len();
        let j = if i < 0 { i + n as isize } else { i };
        usize::try_from(j).ok().filter(|&j| j < n).ok_or_else(|| {
            PyIndexError::new_err(format!(
                "index {i} is out of range for a cache of {n} items"
            ))
        })
    }
}

/// A read-only numpy view of `data` with `shape`, kept alive by `owner`.
///
/// Safety: `data` lies in memory that `owner` owns and never moves or frees while it lives
/// (the cache's mapped shards behind an `Arc`; a batch's buffers in a frozen object), and
/// nothing writes it: the view is marked read-only (the shards are mapped read-only, so a
/// write would fault).
fn view<'py, T: numpy::Element, D: ndarray::Dimension>(
    owner: Bound<'py, PyAny>,
    data: ndarray::ArrayView<'_, T, D>,
) -> Bound<'py, PyArray<T, D>> {
    // SAFETY: see above; `owner` becomes the array's base object.
    let array = unsafe { PyArray::borrow_from_array(&data, owner) };
    array.readwrite().make_nonwriteable();
    array
}

/// A numpy view of `bytes` as `dtype` elements of `shape` (`name` for the error), with
/// `owner` as its base; read-only when asked. The one dtype dispatch of the arrays beside
/// the mel, for a cache's item ([`Cache`]) and a loader's batch.
///
/// Safety, as [`view`]: `bytes` lies in memory `owner` owns and never moves or frees while
/// it lives, and nothing else writes it while the array lives (a cache's mapping is
/// read-only; a batch's buffers are the batch's alone until Python drops it).
pub(crate) fn dtype_view<'py>(
    owner: Bound<'py, PyAny>,
    bytes: &[u8],
    shape: &[usize],
    dtype: gpufeed_data::arrays::Dtype,
    name: &str,
    read_only: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use gpufeed_data::arrays::Dtype;
    fn typed<'py, T: numpy::Element + bytemuck::Pod>(
        owner: Bound<'py, PyAny>,
        bytes: &[u8],
        shape: &[usize],
        name: &str,
        read_only: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data: &[T] = bytemuck::try_cast_slice(bytes)
            .map_err(|e| PyValueError::new_err(format!("array `{name}`: {e}")))?;
        let v = ndarray::ArrayViewD::from_shape(ndarray::IxDyn(shape), data)
            .map_err(|e| PyValueError::new_err(format!("array `{name}`: {e}")))?;
        // SAFETY: see the function's docs; `owner` becomes the array's base.
        let array = unsafe { PyArray::borrow_from_array(&v, owner) };
        if read_only {
            array.readwrite().make_nonwriteable();
        }
        Ok(array.into_any())
    }
    match dtype {
        Dtype::F32 => typed::<f32>(owner, bytes, shape, name, read_only),
        Dtype::F16 => typed::<half::f16>(owner, bytes, shape, name, read_only),
        Dtype::I16 => typed::<i16>(owner, bytes, shape, name, read_only),
        Dtype::U8 => typed::<u8>(owner, bytes, shape, name, read_only),
        Dtype::F64 => typed::<f64>(owner, bytes, shape, name, read_only),
        Dtype::I64 => typed::<i64>(owner, bytes, shape, name, read_only),
        Dtype::I32 => typed::<i32>(owner, bytes, shape, name, read_only),
        Dtype::I8 => typed::<i8>(owner, bytes, shape, name, read_only),
        Dtype::U64 => typed::<u64>(owner, bytes, shape, name, read_only),
        Dtype::U32 => typed::<u32>(owner, bytes, shape, name, read_only),
        Dtype::U16 => typed::<u16>(owner, bytes, shape, name, read_only),
        // numpy's bool is one byte, 0 or 1: the bytes' view, retyped.
        Dtype::Bool => {
            typed::<u8>(owner, bytes, shape, name, read_only)?.call_method1("view", ("bool",))
        }
        // numpy has no bfloat16 of its own: `ml_dtypes`' (which JAX and TensorFlow
        // install) when it is there, else the raw 16-bit words (`torch.from_numpy(a)
        // .view(torch.bfloat16)` reads them).
        Dtype::Bf16 => {
            let words = typed::<u16>(owner, bytes, shape, name, read_only)?;
            match words.py().import("ml_dtypes") {
                Ok(m) => words.call_method1("view", (m.getattr("bfloat16")?,)),
                Err(_) => Ok(words),
            }
        }
    }
}

impl Cache {
    /// Runs `gpufeed_data::user::add` with the GIL released, then opens the cache again so
    /// that this object serves the new arrays (the old mapping is kept for the views of it
    /// still alive). The function's first exception is the error's cause.
    fn run_add<'py>(
        &self,
        py: Python<'py>,
        f: &PyFn,
        args: AddArgs,
    ) -> PyResult<Bound<'py, PyAny>> {
        if args.jobs == Some(0) {
            return Err(PyValueError::new_err(
                "jobs=0: pass at least 1, or None for every core",
            ));
        }
        let dir = self.inner().dir().to_path_buf();
        let opts = gpufeed_data::user::AddOptions {
            jobs: args.jobs,
            existing: args.existing,
            data: args.data,
            read: args.read,
        };
        let result = py
            .detach(|| gpufeed_data::user::add(&dir, f, &opts, &gpufeed_data::precompute::Silent));
        let report = match result {
            Ok(r) => r,
            Err(e) => {
                let err = errors::data(e);
                let cause = f.first_error.lock().ok().and_then(|mut c| c.take());
                if let Some(cause) = cause {
                    err.set_cause(py, Some(cause));
                }
                return Err(err);
            }
        };
        if !report.computed.is_empty() {
            let fresh = py.detach(|| RustCache::open(&dir)).map_err(errors::data)?;
            let mut current = self
                .current
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let old = std::mem::replace(&mut *current, Arc::new(fresh));
            self.retired
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(old);
        }
        to_py(py, &report)
    }
}

#[pymethods]
impl Cache {
    /// Adds array `name`, computed by `fn(id, audio, sr)` for every item (its audio decoded
    /// again at the cache's rate: the samples its mel came from), to this cache, without
    /// computing anything else again; returns what was done (a dict).
    #[pyo3(signature = (name, r#fn, *, replace = false, jobs = None, data = None))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        name: String,
        r#fn: Py<PyAny>,
        replace: bool,
        jobs: Option<usize>,
        data: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        gpufeed_data::user::check_name(&name).map_err(PyValueError::new_err)?;
        let f = PyFn::new(r#fn, Some(name));
        let existing = if replace {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        self.run_add(
            py,
            &f,
            AddArgs {
                existing,
                jobs,
                data,
                read: gpufeed_data::layout::ReadOptions::default(),
            },
        )
    }

    /// `precompute(extra=fn)`: the arrays of the dict `fn` returns, those the cache lacks.
    #[pyo3(signature = (r#fn, *, jobs = None, data = None, layout = None, columns = None, mic = None))]
    #[allow(clippy::too_many_arguments)]
    fn _add_extra<'py>(
        &self,
        py: Python<'py>,
        r#fn: Py<PyAny>,
        jobs: Option<usize>,
        data: Option<PathBuf>,
        layout: Option<String>,
        columns: Option<String>,
        mic: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut read = gpufeed_data::layout::ReadOptions::default();
        crate::features::read_options(layout.as_deref(), columns.as_deref(), mic)?
            .apply_read(&mut read);
        let f = PyFn::new(r#fn, None);
        self.run_add(
            py,
            &f,
            AddArgs {
                existing: Existing::Keep,
                jobs,
                data,
                read,
            },
        )
    }

    /// Opens the cache in `path`: a folder with `manifest.json`, or a cache root holding one.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        Self::open(py, &path)
    }

    /// Opens the cache `precompute` built, keeping its report.
    #[staticmethod]
    fn _with_report(py: Python<'_>, path: PathBuf, report: Py<PyAny>) -> PyResult<Self> {
        let mut c = Self::open(py, &path)?;
        c.report = Some(report);
        Ok(c)
    }

    /// What `gpufeed.precompute` did (built, reused, skipped...) when it returned this
    /// cache; `None` for a cache opened directly.
    #[getter]
    fn report(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.report.as_ref().map(|r| r.clone_ref(py))
    }

    fn __len__(&self) -> usize {
        self.inner().len()
    }

    /// Item `i`: `mel` float32 `[frames, n_mels]`, `tokens` int32 `[n]` and each other
    /// array the cache holds (`linear`, `energy`, `f0`, `voiced`, `wav`), read-only views
    /// into the mapped shards (no copy), and its `id`, `text` and `index`.
    fn __getitem__<'py>(slf: &Bound<'py, Self>, i: isize) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let this = slf.get();
        let i = this.index(i)?;
        let c = &this.inner();
        let item = c.item(i);
        // The mel as stored: float32, or float16 / bfloat16 for a half-precision cache.
        let mel = dtype_view(
            slf.clone().into_any(),
            c.mel_ref(i).bytes(),
            &[item.mel_frames as usize, c.n_mels()],
            c.mel_dtype(),
            "mel",
            true,
        )?;
        let tokens = ndarray::ArrayView1::from(c.tokens(i));
        let d = PyDict::new(py);
        d.set_item("mel", mel)?;
        d.set_item("tokens", view(slf.clone().into_any(), tokens))?;
        for spec in c.arrays() {
            if let Some(array) = c.array(&spec.name, i) {
                let shape: &[usize] = if spec.width == 1 {
                    &[array.rows]
                } else {
                    &[array.rows, spec.width]
                };
                let v = dtype_view(
                    slf.clone().into_any(),
                    array.bytes,
                    shape,
                    spec.dtype,
                    &spec.name,
                    true,
                )?;
                d.set_item(&spec.name, v)?;
            }
        }
        d.set_item("id", &item.id)?;
        d.set_item("text", &item.text)?;
        d.set_item("speaker", &item.speaker)?;
        d.set_item("language", &item.language)?;
        d.set_item("index", i)?;
        Ok(d)
    }

    /// The folder.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner().dir().to_path_buf()
    }

    /// The cache's key: a hash of the format version and the feature settings (the folder
    /// name under the cache root; the dataset is identified by its own root).
    #[getter]
    fn key(&self) -> String {
        self.inner().manifest().key.clone()
    }

    /// Mel bands per frame.
    #[getter]
    fn n_mels(&self) -> usize {
        self.inner().n_mels()
    }

    /// The items' ids, in cache order.
    #[getter]
    fn ids(&self) -> Vec<String> {
        self.inner()
            .manifest()
            .items
            .iter()
            .map(|it| it.id.clone())
            .collect()
    }

    /// The items' transcripts, in cache order.
    #[getter]
    fn texts(&self) -> Vec<String> {
        self.inner()
            .manifest()
            .items
            .iter()
            .map(|it| it.text.clone())
            .collect()
    }

    /// Each item's speaker, int64: its index into [`speaker_table`](Self::speaker_table),
    /// -1 for an item without one.
    #[getter]
    fn speakers<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let n = self.inner().len();
        PyArray1::from_vec(py, (0..n).map(|i| self.inner().speaker(i)).collect())
    }

    /// The speakers, sorted: a speaker's index is its place in this list.
    #[getter]
    fn speaker_table(&self) -> Vec<String> {
        self.inner().speaker_table().to_vec()
    }

    /// Each item's language as the dataset writes it, `None` where it gives none.
    #[getter]
    fn languages(&self) -> Vec<Option<String>> {
        self.inner()
            .manifest()
            .items
            .iter()
            .map(|it| it.language.clone())
            .collect()
    }

    /// The dataset's layout (`ljspeech`, `libritts`, `nemo`, ...).
    #[getter]
    fn layout(&self) -> String {
        self.inner().manifest().layout.clone()
    }

    /// The arrays each item has besides `mel` and `tokens`, with their dtype, columns,
    /// rows per mel frame (0 for a user's array of its own length) and the most rows of
    /// one item: `[{"name": "f0", "dtype": "float32", "width": 1, "rows_per_frame": 1,
    /// "max_rows": 812}, ...]`.
    #[getter]
    fn arrays<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let cache = self.inner();
        cache
            .arrays()
            .iter()
            .map(|a| {
                let d = PyDict::new(py);
                d.set_item("name", &a.name)?;
                d.set_item("dtype", a.dtype.numpy())?;
                d.set_item("width", a.width)?;
                d.set_item("rows_per_frame", a.rows_per_frame)?;
                d.set_item("max_rows", cache.max_rows(&a.name).unwrap_or(0))?;
                Ok(d)
            })
            .collect()
    }

    /// Frames per item, int64.
    #[getter]
    fn mel_lengths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.per_item(py, |it| it.mel_frames)
    }

    /// Tokens per item, int64.
    #[getter]
    fn token_lengths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.per_item(py, |it| it.text_tokens)
    }

    /// The feature settings the cache was built with (audio and text), as a dict.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner().manifest().settings)
    }

    /// The symbol table the tokens index (`reserved` ids first, then `symbols`).
    #[getter]
    fn symbols<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner().manifest().symbols)
    }

    /// The utterances left out when the cache was built, with the reason for each.
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner().manifest().skipped)
    }

    /// Totals: items, skipped, mel frames, tokens, audio seconds.
    #[getter]
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner().manifest().totals)
    }

    /// Checks every shard against its checksum (reads every byte); `ValueError` naming the
    /// shard on a mismatch.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.inner();
        py.detach(move || c.verify()).map_err(errors::data)
    }

    fn __repr__(&self) -> String {
        format!(
            "gpufeed.Cache('{}', items={}, n_mels={})",
            self.inner().dir().display(),
            self.inner().len(),
            self.inner().n_mels()
        )
    }
}
