//! A Python function of one item as [`UserArrays`]: `fn(id, audio, sr)` returning a dict of
//! numpy arrays (or one array, for `Cache.add(name, fn)`), called on the Rust worker
//! threads with the GIL taken for the call only (the decoding runs in parallel around it).

use std::path::PathBuf;
use std::sync::Mutex;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use gpufeed_data::arrays::Dtype;
use gpufeed_data::user::{UserArray, UserArrays};

/// The user's function, and the first exception it raised (chained to the error `add`
/// raises, so that the traceback shows where it failed).
pub(crate) struct PyFn {
    f: Py<PyAny>,
    /// `Cache.add(name, fn)`: the function returns one array, stored under `name`.
    name: Option<String>,
    pub(crate) first_error: Mutex<Option<PyErr>>,
}

impl PyFn {
    pub(crate) fn new(f: Py<PyAny>, name: Option<String>) -> Self {
        Self {
            f,
            name,
            first_error: Mutex::new(None),
        }
    }

    fn call(
        &self,
        py: Python<'_>,
        id: &str,
        samples: &[f32],
        sr: u32,
    ) -> Result<Vec<UserArray>, String> {
        let audio = PyArray1::from_slice(py, samples);
        let out = self
            .f
            .bind(py)
            .call1((id, audio, sr))
            .map_err(|e| self.keep(py, e))?;
        let pairs: Vec<(String, Bound<'_, PyAny>)> = match (&self.name, out.cast::<PyDict>()) {
            (None, Ok(d)) => d
                .iter()
                .map(|(k, v)| {
                    k.extract::<String>()
                        .map(|k| (k, v))
                        .map_err(|_| format!("a key of the dict it returned is not a str: {k}"))
                })
                .collect::<Result<_, _>>()?,
            (None, Err(_)) => {
                return Err(format!(
                    "it returned {}, not a dict of name to numpy array",
                    type_name(&out)
                ));
            }
            (Some(_), Ok(_)) => {
                return Err(
                    "it returned a dict: `Cache.add(name, fn)` stores the one array `fn` \
                     returns; `precompute(extra=fn)` takes a function returning a dict"
                        .into(),
                );
            }
            (Some(name), Err(_)) => vec![(name.clone(), out)],
        };
        pairs
            .into_iter()
            .map(|(name, value)| array_of(py, name, &value).map_err(|e| self.keep(py, e)))
            .collect()
    }

    /// Keeps the first exception; its text (`TypeError: ...`, with where it was raised).
    fn keep(&self, py: Python<'_>, e: PyErr) -> String {
        let text = describe(py, &e);
        if let Ok(mut first) = self.first_error.lock()
            && first.is_none()
        {
            *first = Some(e);
        }
        text
    }
}

impl UserArrays for PyFn {
    fn compute(&self, id: &str, samples: &[f32], sr: u32) -> Result<Vec<UserArray>, String> {
        Python::attach(|py| self.call(py, id, samples, sr))
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// `value` (a numpy array, or anything `numpy.asarray` takes: a CPU tensor, a list) as a
/// cache array: 0-D is one row of one, 1-D `n` rows of one, 2-D `(rows, width)`.
fn array_of(py: Python<'_>, name: String, value: &Bound<'_, PyAny>) -> PyResult<UserArray> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(format!("`{name}`: {m}"));
    let np = py.import("numpy")?;
    let mut arr = np.call_method1("ascontiguousarray", (value,))?;
    let dtype = arr.getattr("dtype")?;
    if dtype.getattr("byteorder")?.extract::<String>()? == ">" {
        arr = arr.call_method1("astype", (dtype.call_method1("newbyteorder", ("<",))?,))?;
    }
    let dname: String = arr.getattr("dtype")?.getattr("name")?.extract()?;
    let dtype = Dtype::from_numpy(&dname).ok_or_else(|| {
        bad(format!(
            "dtype {dname} cannot be cached; use a numeric or bool dtype (float32, int64, \
             float16, uint8...)"
        ))
    })?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let (rows, width) = match shape.as_slice() {
        [] => (1, 1),
        [n] => (*n, 1),
        [r, w] => (*r, *w),
        _ => {
            return Err(bad(format!(
                "shape {shape:?}: a cache holds 1-D or 2-D arrays per item; reshape it to \
                 (rows, width)"
            )));
        }
    };
    let bytes = arr.call_method0("tobytes")?;
    let bytes = bytes
        .cast::<PyBytes>()
        .map_err(PyErr::from)?
        .as_bytes()
        .to_vec();
    Ok(UserArray {
        name,
        dtype,
        rows,
        width,
        bytes,
    })
}

/// `TypeError: message (at file.py:12)`.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let mut text = e.to_string();
    let mut tb = e.traceback(py).map(Bound::into_any);
    let mut last = None;
    while let Some(t) = tb {
        let at = (|| -> PyResult<(String, u32)> {
            let file: String = t
                .getattr("tb_frame")?
                .getattr("f_code")?
                .getattr("co_filename")?
                .extract()?;
            Ok((file, t.getattr("tb_lineno")?.extract()?))
        })();
        last = at.ok().or(last);
        tb = t.getattr("tb_next").ok().filter(|n| !n.is_none());
    }
    if let Some((file, line)) = last {
        text.push_str(&format!(" (at {file}:{line})"));
    }
    text
}

/// What `Cache._add` was given besides the function.
pub(crate) struct AddArgs {
    pub(crate) existing: gpufeed_data::user::Existing,
    pub(crate) jobs: Option<usize>,
    pub(crate) data: Option<PathBuf>,
    pub(crate) read: gpufeed_data::layout::ReadOptions,
}
