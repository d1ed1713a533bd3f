//! `mel` and `precompute`: the speech features from Python.

use std::path::PathBuf;

use numpy::{PyArray2, PyArrayMethods as _, PyUntypedArrayMethods as _, ndarray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use gpufeed_config::{AudioSettings, Config};
use gpufeed_data::precompute::{self, OnError, ShardSpec, Silent};

use crate::errors;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mel, m)?)?;
    m.add_function(wrap_pyfunction!(precompute_run, m)?)?;
    m.add_function(wrap_pyfunction!(load_config, m)?)?;
    Ok(())
}

/// A Python object as JSON, through Python's `json` module (settings are small).
pub(crate) fn to_json(value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let py = value.py();
    let text: String = py
        .import("json")?
        .call_method1("dumps", (value,))?
        .extract()?;
    serde_json::from_str(&text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// JSON as a Python object, through Python's `json` module.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Loads a config file as the CLI's `--config` does; its warnings become Python warnings.
pub(crate) fn config_of(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Config> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    if !path.exists() {
        return Err(errors::missing_config(
            &path,
            "pass the path of your YAML config, or leave `config` out for the defaults",
        ));
    }
    let loaded = gpufeed_config::load(&path).map_err(|e| errors::config(e.to_string()))?;
    let warnings = py.import("warnings")?;
    for w in &loaded.warnings {
        warnings.call_method1("warn", (w.to_string(),))?;
    }
    Ok(loaded.config)
}

/// The config file as the dict gpufeed reads (defaults filled in), for inspection.
#[pyfunction]
#[pyo3(signature = (path))]
fn load_config(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let config = config_of(py, Some(path))?;
    to_py(py, &config)
}

/// The audio settings: a preset, then the keyword arguments over it. Unknown names are an
/// error listing the known ones (serde would silently ignore them).
///
/// - `tts`: the log mel of Tacotron 2 / HiFi-GAN ([`AudioSettings::default`]);
/// - `librosa`: exactly `librosa.feature.melspectrogram(y=y, sr=sr)`, every default
///   ([`AudioSettings::librosa_defaults`]);
/// - `librosa-tts`: librosa's power mel on the `tts` frames and filterbank
///   ([`AudioSettings::librosa_melspectrogram`]), what `librosa` meant before it gave
///   librosa's own defaults.
fn audio_settings(
    preset: &str,
    sr: u32,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<AudioSettings> {
    let base = match preset {
        "tts" => AudioSettings::default(),
        "librosa" => AudioSettings::librosa_defaults(),
        "librosa-tts" => AudioSettings::librosa_melspectrogram(),
        other => {
            return Err(PyValueError::new_err(format!(
                "preset='{other}': expected 'tts' (log mel of Tacotron 2 / HiFi-GAN), 'librosa' \
                 (librosa.feature.melspectrogram(y=y, sr=sr) with every default: n_fft 2048, \
                 hop 512, 128 mels, power 2, no log) or 'librosa-tts' (the same power mel on \
                 the tts frames: n_fft 1024, hop 256, 80 mels up to 8 kHz)"
            )));
        }
    };
    let mut json = serde_json::to_value(&base).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let serde_json::Value::Object(fields) = &mut json else {
        return Err(PyValueError::new_err("audio settings are not an object"));
    };
    if let Some(kwargs) = settings {
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            if key == "sample_rate" {
                return Err(PyValueError::new_err(
                    "sample_rate: pass the audio's rate as `sr`; the features are computed at it",
                ));
            }
            if !fields.contains_key(&key) {
                let mut known: Vec<&String> =
                    fields.keys().filter(|k| *k != "sample_rate").collect();
                known.sort();
                return Err(errors::config(format!(
                    "unknown mel setting `{key}`; known: {}",
                    known
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            fields.insert(key, to_json(&value)?);
        }
    }
    fields.insert("sample_rate".into(), sr.into());
    serde_json::from_value(json).map_err(|e| errors::config(format!("mel settings: {e}")))
}

/// The samples of a 1-D float array, copied (so the GIL can be released while they are
/// used); any other dtype or rank is a `ValueError` saying what to do.
fn samples_of(audio: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    if let Ok(a) = audio.cast::<numpy::PyArrayDyn<f32>>() {
        return one_d(a.ndim(), a.shape())
            .map(|()| a.readonly().as_array().iter().copied().collect());
    }
    if let Ok(a) = audio.cast::<numpy::PyArrayDyn<f64>>() {
        return one_d(a.ndim(), a.shape())
            .map(|()| a.readonly().as_array().iter().map(|&x| x as f32).collect());
    }
    if let Ok(a) = audio.cast::<numpy::PyUntypedArray>() {
        let dtype = a.dtype().str()?.to_string();
        return Err(PyValueError::new_err(format!(
            "audio has dtype {dtype}: mel needs float32 or float64 samples in [-1, 1]; \
             for 16-bit PCM use `audio.astype(np.float32) / 32768`"
        )));
    }
    Err(PyTypeError::new_err(format!(
        "audio is a {}: pass a 1-D numpy array of float32 samples",
        audio.get_type().name()?
    )))
}

fn one_d(ndim: usize, shape: &[usize]) -> PyResult<()> {
    match ndim {
        1 => Ok(()),
        2 => Err(PyValueError::new_err(format!(
            "audio has shape {shape:?}: mel needs one channel; average the channels first \
             (`audio.mean(axis=0)` for (channels, samples), `axis=1` for (samples, channels))"
        ))),
        _ => Err(PyValueError::new_err(format!(
            "audio has shape {shape:?}: mel needs a 1-D array of samples"
        ))),
    }
}

/// The mel spectrogram of `audio` (1-D float samples at `sr` Hz) as float32
/// `[frames, n_mels]`, the layout of the cache and the loader (librosa's is its transpose).
/// The GIL is released while it is computed.
#[pyfunction]
#[pyo3(signature = (audio, sr, *, preset = "tts", **settings))]
fn mel<'py>(
    py: Python<'py>,
    audio: &Bound<'py, PyAny>,
    sr: u32,
    preset: &str,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    if sr == 0 {
        return Err(PyValueError::new_err(
            "sr=0: pass the audio's sample rate in Hz, e.g. 22050",
        ));
    }
    let settings = audio_settings(preset, sr, settings)?;
    let samples = samples_of(audio)?;
    let result = py.detach(move || {
        let mut extractor = gpufeed_audio::mel::MelExtractor::new(&settings)?;
        extractor.compute(&samples)
    });
    let mel = result.map_err(|e| match e {
        gpufeed_audio::AudioError::InvalidSettings { .. } => errors::config(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    })?;
    let array = ndarray::Array2::from_shape_vec((mel.frames, mel.n_mels), mel.data)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(numpy::IntoPyArray::into_pyarray(array, py))
}

/// Runs `precompute` as the CLI does and returns its report as a dict. The GIL is released
/// for the run.
#[pyfunction]
#[pyo3(signature = (
    data, cache = None, jobs = None, shard = None, on_error = "skip", config = None,
    layout = None, columns = None, mic = None, max_skipped = None, features = None
))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments
fn precompute_run<'py>(
    py: Python<'py>,
    data: PathBuf,
    cache: Option<PathBuf>,
    jobs: Option<usize>,
    shard: Option<&Bound<'py, PyAny>>,
    on_error: &str,
    config: Option<PathBuf>,
    layout: Option<String>,
    columns: Option<String>,
    mic: Option<String>,
    max_skipped: Option<f64>,
    features: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let read = read_options(layout.as_deref(), columns.as_deref(), mic)?;
    if max_skipped.is_some_and(|x| !(0.0..=1.0).contains(&x)) {
        return Err(PyValueError::new_err(
            "max_skipped: pass a share between 0 and 1, e.g. 0.1 for 10 %",
        ));
    }
    let on_error = match on_error {
        "skip" => OnError::Skip,
        "fail" => OnError::Fail,
        other => {
            return Err(PyValueError::new_err(format!(
                "on_error='{other}': expected 'skip' (list bad utterances in skipped.json) or 'fail'"
            )));
        }
    };
    if jobs == Some(0) {
        return Err(PyValueError::new_err(
            "jobs=0: pass at least 1, or None for every core",
        ));
    }
    let shard = match shard {
        None => None,
        // "auto": the array job's task, from Slurm's or Kubernetes' variables, as the CLI's
        // `--shard auto` (it was parsed as "I/N" and refused).
        Some(s) if s.is_instance_of::<PyString>() && s.extract::<String>()? == "auto" => Some(
            gpufeed_data::array_job::detect(|k| std::env::var(k).ok())
                .map_err(errors::data)?
                .shard,
        ),
        Some(s) if s.is_instance_of::<PyString>() => {
            Some(ShardSpec::parse(&s.extract::<String>()?).map_err(errors::data)?)
        }
        Some(s) => {
            let (index, count): (usize, usize) = s.extract().map_err(|_| {
                PyValueError::new_err("shard: pass 'I/N' or a tuple (I, N), e.g. (0, 4)")
            })?;
            Some(ShardSpec::parse(&format!("{index}/{count}")).map_err(errors::data)?)
        }
    };
    if !data.exists() {
        return Err(errors::missing(
            &data,
            "no such dataset",
            "pass a dataset folder in LJSpeech layout (metadata.csv + wavs/) or a manifest",
        ));
    }
    let config = config_of(py, config)?;
    let mut options = precompute::Options {
        jobs,
        on_error,
        shard,
        ..gpufeed_data::settings::precompute_options(&data, cache.as_deref(), &config)
            .map_err(errors::data)?
    };
    read.apply(&mut options);
    if let Some(names) = features.as_deref() {
        options.arrays =
            gpufeed_data::settings::arrays_of(&config, Some(names)).map_err(errors::data)?;
    }
    if let Some(share) = max_skipped {
        options.max_skipped = share;
    }
    let report = py
        .detach(move || precompute::run(&options, &Silent))
        .map_err(errors::data)?;
    let dict = to_py(py, &report)?;
    dict.set_item("summary", errors::keywords(&report.summary()))?;
    Ok(dict)
}

/// The dataset-reading options given in Python (`layout=`, `columns=`, `mic=`): each
/// overrides the config's.
#[derive(Debug, Default)]
pub(crate) struct ReadChoice {
    layout: Option<gpufeed_data::layout::Layout>,
    columns: Option<gpufeed_data::layout::Columns>,
    mic: Option<String>,
}

impl ReadChoice {
    /// Sets what was given on `options`.
    pub(crate) fn apply(self, options: &mut precompute::Options) {
        self.apply_read(&mut options.read);
    }

    /// Sets what was given on `read`.
    pub(crate) fn apply_read(self, read: &mut gpufeed_data::layout::ReadOptions) {
        if let Some(layout) = self.layout {
            read.layout = Some(layout);
        }
        if let Some(columns) = self.columns {
            read.columns = columns;
        }
        if self.mic.is_some() {
            read.mic = self.mic;
        }
    }
}

/// Parses `layout=` and `columns=` (`"audio=path,text=sentence"` or a dict
/// `{"audio": "path"}` turned into that string by the Python wrapper).
pub(crate) fn read_options(
    layout: Option<&str>,
    columns: Option<&str>,
    mic: Option<String>,
) -> PyResult<ReadChoice> {
    Ok(ReadChoice {
        layout: layout.map(str::parse).transpose().map_err(errors::data)?,
        columns: columns
            .map(gpufeed_data::layout::Columns::parse)
            .transpose()
            .map_err(errors::data)?,
        mic,
    })
}
