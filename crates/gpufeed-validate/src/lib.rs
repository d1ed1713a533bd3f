//! `gpufeed validate`: the trainer's YAML checked by `gpufeed-config` (every load error and
//! warning becomes a finding) and by the data-pipeline and GPU rules listed in the crate docs.
//!
//! ```
//! use std::path::Path;
//! use gpufeed_validate::{Context, CoresOf, validate_text};
//!
//! let text = "data:\n  num_workers: 0\ntraining:\n  learning_rate: 1e-4\n";
//! let v = validate_text(text, Path::new("c.yaml"), &Context::new(Some(8), CoresOf::TrainingMachine));
//! let ids: Vec<&str> = v.findings.iter().map(|f| f.id).collect();
//! assert!(ids.contains(&"loader-in-main-thread"));
//! assert!(ids.contains(&"config-float-is-string-for-pyyaml"));
//! assert!(v.parsed);
//! ```
//!
//! A file that cannot be read at all (missing, a folder, no permission) is a
//! [`ValidateError`]: bad input, exit code 2. Everything about the file's *content* (not
//! YAML, a list at the top, duplicate keys, too large, not UTF-8) is a finding.
//!
//! # `validate`: whose config is it
//!
//! [`validate::trainers`] holds one table of trainers, each with the keys that mark its
//! configs, the key names under which it sets what gpufeed understands, and their source.
//! A file is read as YAML or JSON (`//` comments blanked, spans kept;
//! `gpufeed_config::outline`), or, when it is Python (`hparams.py`; [`python`]), for its
//! literal settings: keyword arguments (`HParams(batch_size=32)`), dict entries
//! (`AttrDict({"fp16_run": False})`), module and class attributes (`batch_size = 32`) and
//! argparse defaults, never run and never edited by `--fix`. Either way it is scored: 2 points per marker of a trainer (2 markers at
//! least), 1 per MyXTTS section (`model`, `data`, `training`) and per key of MyXTTS'
//! schema; the highest wins, MyXTTS on a tie, and an empty file is MyXTTS' defaults. A
//! trainer is named only when the file has one of its own keys (NeMo: `exp_manager`, a
//! `manifest_filepath` under `model.train_ds`; Lightning CLI: `class_path`; Hydra: a
//! `defaults` list or `hydra:`); a file with markers several trainers share (a Lightning
//! `trainer:` section) and none of their own keys, or a YAML file with no trainer's markers
//! and no MyXTTS section that sets a `DataLoader` argument, is an unknown trainer's config.
//! Loader settings (`num_workers`, `batch_size`, `pin_memory`, `persistent_workers`,
//! `prefetch_factor`) not under a trainer's own key names are found by name at any depth,
//! the training loader's when a path segment says `train`, and judged by the same rules. A
//! MyXTTS config gets every rule below. Another trainer's config gets only the rules on its
//! own keys (`loader-in-main-thread`, `num-workers-above-cores`, `num-workers-low`,
//! `batch-size-small`, `dynamic-shapes`, `pin-memory-off`, `prefetch-disabled`,
//! `mixed-precision-off`, `feature-cache-off`, `config-yaml11-boolean`) and one
//! `config-trainer` info line, which also reports how often the loop pauses to validate or
//! synthesise where the config sets it; a file with no trainer's keys gets one
//! `config-unrecognised`. MyXTTS reads YAML only, so a Python file is never MyXTTS'.
//!
//! Findings about cores are judged against [`validate::Context`]'s cores: the training
//! machine's (`validate --cores N`, and `doctor`, which measures the machine it runs on)
//! give warnings; this machine's, without `--cores`, give info saying it is an assumption,
//! and advise no worker count: a linting laptop's cores say nothing about the training
//! server's, so they ask for `--cores N` instead of `num_workers: 2`.
//!
//! # `validate`: loading (from `gpufeed-config`)
//!
//! | id | severity | why | fix |
//! |---|---|---|---|
//! | `config-syntax` | error | not valid YAML | correct the YAML at the line shown |
//! | `config-not-utf8` | error | YAML is UTF-8 text | save as UTF-8 |
//! | `config-multiple-documents` | error | the trainer reads one document | delete the `---` separators |
//! | `config-too-large` | error | over 10 MiB, too deeply nested, or too many aliases: not a training config | pass the config file |
//! | `config-not-a-mapping` | error | the top, and each section, must be a mapping (a YAML list is not a config) | write `section:` mappings |
//! | `config-duplicate-key` | error | PyYAML silently keeps the last of two equal keys | delete one |
//! | `config-complex-key` | error | a key must be a plain name | write a plain name |
//! | `config-bad-merge` | error | `<<` must point at a mapping | point it at a mapping anchor |
//! | `config-wrong-type` | error | the trainer's dataclasses do not convert types | write a value of the named type |
//! | `config-invalid-value` | error | out of range or inconsistent (`win_length > n_fft`, `data_gpu == model_gpu`, ...) | as the message says |
//! | `config-unknown-key` | warning | MyXTTS rejects unknown keys, gpufeed ignores them: a typo leaves the default in force | rename to the suggestion (**`--fix`** when the suggestion is in the same section, not already set, takes the key's value and is not a key MyXTTS rejects; else the finding says why not) |
//! | `config-float-is-string-for-pyyaml` | warning | PyYAML reads `1e-4` as a string | `1.0e-4` (**`--fix`**) |
//! | `config-number-differs-in-pyyaml` | warning | `010` is octal for PyYAML | a spelling both read alike (**`--fix`**) |
//! | `config-yaml11-boolean` | warning | `yes`/`no`/`on`/`off` are booleans only for PyYAML | `true`/`false` (**`--fix`**) |
//! | `config-not-a-string-for-pyyaml` | warning | `language: no` is False for PyYAML | quote it (**`--fix`**) |
//! | `config-sections-disagree` | warning | one setting, two values in two sections | make them equal |
//! | `config-empty-mel-filters` | warning | more mel bands than FFT bins | lower `n_mels` or raise `n_fft` |
//! | `config-two-text-caps` | warning | MyXTTS cuts at one cap and pads to another | set both equal |
//! | `config-splits-overlap` | warning | splits add up to more than 1 | make them sum to at most 1 |
//! | `config-heads-do-not-divide` | warning | attention splits the width across heads | a multiple of the heads |
//! | `config-cleaners` | warning | gpufeed and the trainer clean text differently | make them agree |
//! | `config-min-learning-rate` | warning | the floor is above the peak | lower the floor |
//!
//! # `validate`: data pipeline and GPU settings
//!
//! | id | severity | fires when | why | fix (advice; never applied by `--fix`) |
//! |---|---|---|---|---|
//! | `config-trainer` | info | the file is another trainer's config (markers of `validate::trainers::TRAINERS`: Lightning CLI, Hydra, Coqui TTS, ESPnet, NeMo, Lightning-Hydra, F5-TTS, TensorFlowTTS, FastSpeech2, VITS, HiFi-GAN, StyleTTS2, NVIDIA Tacotron 2 `hparams.py`, NVIDIA WaveGlow / Flowtron `config.json`, keithito-style Tacotron `HParams`), or an unknown trainer's (`validate::trainers::UNKNOWN`: loader keys found by name) | says which trainer, what was checked under its key names (evaluation pauses included: FastSpeech2's `synth_step`, Tacotron 2's `iters_per_checkpoint`), and that MyXTTS' rules do not apply | - |
//! | `config-unrecognised` | info | no trainer's markers and no MyXTTS section (a Python file: no trainer's settings among its literals) | nothing was checked (exit 0) | pass the training config |
//! | `config-python-unreadable` | info | a Python config (`.py`, or Python content) does not parse | no setting was read (exit 0) | correct the Python at the line shown |
//! | `persistent-workers-without-workers` | error | a loader's `persistent_workers` is true and its `num_workers` (the key beside it) is 0 | PyTorch's DataLoader raises before the first batch | workers, or `persistent_workers: false` |
//! | `pin-memory-off` | info | another trainer's `pin_memory` key is false | the copy to the GPU cannot overlap compute | `true` |
//! | `feature-cache-off` | info | another trainer's cache key is false (`allow_cache`, `compute_input_seq_cache`, Tacotron 2's and Glow-TTS' `load_mel_from_disk`) | recomputed every epoch, per item | `true` (Tacotron 2: save the mels first) |
//! | `tf-native-loading-off` | warning | `data.use_tf_native_loading: false` | MyXTTS decodes with librosa inside `tf.numpy_function`, under the GIL, one item at a time (the seeds' 2-40 % oscillation) | `gpufeed precompute`, or `use_tf_native_loading: true` (its features differ: HTK, [0, 1]) |
//! | `gpu-prefetch-off` | warning | one GPU and `prefetch_to_gpu` or `enhanced_gpu_prefetch` false | no `prefetch_to_device`: the copy does not overlap the step | both `true` |
//! | `loader-in-main-thread` | warning | `data.num_workers: 0` | batches are built between steps | `num_workers: N` |
//! | `num-workers-above-cores` | warning (info when the cores are only this machine's: no `--cores`, not `doctor`) | `num_workers` above the training machine's cores | threads time-slice the CPU (PyTorch's DataLoader warns too) | at most the cores; without `--cores`, no count: pass `--cores N` |
//! | `num-workers-low` | info | `num_workers` below 8 and below the cores | may not keep up (seeds' minimum 8; measure with `profile data --benchmark`) | 8, up to the cores; without `--cores`, pass `--cores N` first |
//! | `prefetch-disabled` | warning | `prefetch_buffer_size: 0` (gpufeed) or `pipeline_buffer_size: 0` (MyXTTS) | no read-ahead: loading and compute never overlap | delete the key |
//! | `dynamic-shapes` | warning | `pad_to_fixed_length` false, no `pad_to_multiple_of`, graph mode or XLA on | a new shape almost every step: retrace / recompile while the GPU waits | `pad_to_fixed_length: true` |
//! | `text-cap-mismatch` | error | `pad_to_fixed_length: true` and `max_text_tokens` (unset: 1024) above `max_text_length` | MyXTTS' `padded_batch` fails on the first longer text | `max_text_tokens:` = `max_text_length` |
//! | `batch-size-small` | info | `batch_size` below 16 | launch and input overheads dominate (seeds' threshold) | 32 if memory allows |
//! | `two-gpu-half-set` | warning | one of `data_gpu`, `model_gpu` | MyXTTS silently trains on one GPU | set both, or neither |
//! | `gpu-index-out-of-range` | error | `data_gpu`/`model_gpu` ≥ the GPUs in `training.visible_gpus` | the GPU does not exist in the process | an index into the visible GPUs |
//! | `two-gpu-data-gpu-idle` | info | both set and different | MyXTTS' data GPU only holds prefetched batches | one GPU, or data parallel |
//! | `mixed-precision-off` | info | mixed precision off | no Tensor Core float16/bfloat16 paths (NVIDIA: up to 3x) | `mixed_precision: true` |
//! | `xla-without-graph-mode` | error | the file sets `enable_xla_compilation: true`, graph mode off | XLA compiles the graph step; eager ignores it | `enable_graph_mode: true` |
//! | `eager-train-step` | warning | `enable_graph_mode: false` | Python dispatches every op; the GPU waits for the host | `enable_graph_mode: true` |
//! | `eager-debug-on` | warning | `enable_eager_debug: true` | tf.functions run eagerly | `false` |
//! | `xla-off` | info | static shapes, graph mode, no XLA | XLA would compile once and fuse | `enable_xla_compilation: true` |
//! | `myxtts-unread-key` | info | a key MyXTTS never reads (`prefetch_buffer_size`, `pin_memory`, ...) | changing it changes nothing in the trainer | change the key it reads |
//! | `myxtts-rejects-key` | info | keys MyXTTS' dataclasses lack (`data.n_mels`, gpufeed's own keys) | `DataConfig(**yaml['data'])` raises TypeError | keep them out of MyXTTS' copy |
//! | `config-unhonoured-key` | warning (info when only MyXTTS' default asks, or the key changes nothing in gpufeed) | a `data` key asks for what gpufeed's precompute and loader do not do: `use_phonemes`, `trim_silence`, `normalize_audio`, `enable_loudness_normalization`, `enable_vad`, `enable_pitch_shift`, `enable_noise_mixing`, `enable_multilingual`, `enable_phone_normalization`, `speaker_id_pattern`, `train_split` below 1; `enable_multispeaker` (info: gpufeed keeps the dataset's speakers, set or not). Written with the value that asks, or not written in a MyXTTS config whose default asks (`use_phonemes`; on MyXTTS' librosa path, trimming, normalisation, VAD) | the cache is built without it, unlike the trainer's data (the table: `gpufeed_config::unhonoured`) | do it beforehand (the fix says how: phonemes in the manifest, `sox` to trim, augment in the training step), or set the key to what the cache holds |
//!
//! `--fix` applies only the edits marked **`--fix`** above: they change how a value is
//! spelled, never what it means, so they are safe without asking. Rules that change what
//! the trainer does (prefetch, graph mode, caps, workers) stay advice: the user decides.

mod config;
pub mod fix;
pub mod keys;
pub mod python;
mod rules;
pub mod trainers;

use std::path::{Path, PathBuf};

use gpufeed_stats::fmt::bytes;

use gpufeed_findings::constants::MAX_CONFIG_BYTES;
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// What the rules may know about the machine the trainer runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Context {
    /// Cores of the machine the findings about cores are judged against; `None` skips
    /// those rules.
    pub cores: Option<usize>,
    /// Whose cores these are.
    pub cores_of: CoresOf,
}

/// Whose cores [`Context::cores`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoresOf {
    /// The machine running `validate` (`std::thread::available_parallelism`): an assumption
    /// about the training machine, so findings about cores are info and say so.
    #[default]
    ThisMachine,
    /// The training machine: `validate --cores N`, or `doctor`, which runs on it.
    TrainingMachine,
}

impl Context {
    /// A context with `cores` of the machine `of`.
    #[must_use]
    pub fn new(cores: Option<usize>, of: CoresOf) -> Self {
        Self {
            cores,
            cores_of: of,
        }
    }

    /// The training machine's `cores` when given (`--cores N`), else this machine's, named
    /// as an assumption.
    #[must_use]
    pub fn for_cores(cores: Option<u32>) -> Self {
        match cores {
            Some(n) => Self::new(usize::try_from(n).ok(), CoresOf::TrainingMachine),
            None => Self::new(
                std::thread::available_parallelism().ok().map(usize::from),
                CoresOf::ThisMachine,
            ),
        }
    }

    /// True when the cores are the training machine's.
    #[must_use]
    pub fn cores_of_training_machine(&self) -> bool {
        self.cores_of == CoresOf::TrainingMachine
    }

    /// `the training machine has 16 cores (--cores)`, for evidence.
    #[must_use]
    pub fn describe(&self) -> String {
        match (self.cores, self.cores_of) {
            (None, _) => "cores unknown".to_owned(),
            (Some(c), CoresOf::TrainingMachine) => format!("the training machine has {c} cores"),
            (Some(c), CoresOf::ThisMachine) => format!(
                "this machine has {c} cores (an assumption about the training machine; \
                 `--cores N` gives its count)"
            ),
        }
    }
}

/// The outcome of validating one config.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// The file, as given.
    pub path: PathBuf,
    /// Its text, when it was read as UTF-8.
    pub text: Option<String>,
    /// True when the YAML parsed, so the spans of the edits are valid (`--fix` needs it).
    pub parsed: bool,
    /// Every finding, in file order.
    pub findings: Vec<Finding>,
}

impl Validation {
    /// How many findings have error severity.
    #[must_use]
    pub fn error_count(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == gpufeed_findings::Severity::Error)
            .count()
    }
}

/// A config file that could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The path is missing or unreadable.
    #[error("cannot read config file `{}`: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The path is a folder.
    #[error("`{}` is a folder; `validate` takes the training config file (YAML)", path.display())]
    NotAFile {
        /// The folder.
        path: PathBuf,
    },
}

/// Validates config text; `path` names the file in findings.
#[must_use]
pub fn validate_text(text: &str, path: &Path, ctx: &Context) -> Validation {
    let done = |findings: Vec<Finding>, parsed: bool| Validation {
        path: path.to_path_buf(),
        text: Some(text.to_owned()),
        parsed,
        findings,
    };
    // Whose config is it? MyXTTS' keeps every rule below; another trainer's is checked
    // under its own key names; a file that is neither says so once. A Python hparams file
    // is read for its literal settings, never as YAML.
    if python::is_python(path, text) {
        let (findings, parsed) = python_hparams(text, path, ctx);
        return done(findings, parsed);
    }
    if let Ok(outline) = gpufeed_config::outline(text, path) {
        let keys = keys::Keys::from_outline(&outline);
        let findings = match trainers::whose(&keys) {
            trainers::Whose::Myxtts => None,
            trainers::Whose::Other(t) => Some(trainers::check(&keys, t, ctx, path)),
            // A file with no top-level keys (a list, a scalar, nothing) is no trainer's
            // config: the checks below say what is wrong with it.
            trainers::Whose::Unknown if keys.top_keys().is_empty() => None,
            trainers::Whose::Unknown => Some(vec![trainers::unrecognised(&keys, path)]),
        };
        if let Some(findings) = findings {
            return done(findings, true);
        }
    }
    let (mut findings, parsed) = match gpufeed_config::check(text, path) {
        Ok(loaded) => {
            let mut findings = config::warnings(&loaded.warnings, Some(&loaded.source), text, path);
            findings.extend(rules::check(&loaded, ctx, path));
            (findings, true)
        }
        Err(rejected) => {
            let source = rejected.source.as_deref();
            let mut findings = config::errors(&rejected.errors, text, path);
            findings.extend(config::warnings(&rejected.warnings, source, text, path));
            (findings, source.is_some())
        }
    };
    // `text-cap-mismatch` is the sharper form of gpufeed-config's `config-two-text-caps`.
    if findings.iter().any(|f| f.id == "text-cap-mismatch") {
        findings.retain(|f| f.id != "config-two-text-caps");
    }
    done(findings, parsed)
}

/// A Python hparams file: its trainer's settings checked, or one info line saying why
/// nothing was. It parsed when Python read it (`--fix` then finds no edit to make: it
/// never edits Python).
fn python_hparams(text: &str, path: &Path, ctx: &Context) -> (Vec<Finding>, bool) {
    match python::read(text) {
        Ok(keys) => {
            let findings = match trainers::whose(&keys) {
                trainers::Whose::Other(t) => trainers::check(&keys, t, ctx, path),
                // MyXTTS reads YAML only: `model`/`data`/`training` names in Python are
                // someone else's.
                trainers::Whose::Myxtts | trainers::Whose::Unknown => {
                    vec![trainers::unrecognised(&keys, path)]
                }
            };
            (findings, true)
        }
        Err(python::Unreadable::Syntax { line, column, text }) => (
            vec![
                finding(
                    "config-python-unreadable",
                    &format!(
                        "`{}` is Python, and could not be read as Python hparams: line {line} \
                         does not parse; nothing was checked",
                        path.display()
                    ),
                )
                .at(path, line, column)
                .evidence(format!("line {line}: `{text}`"))
                .fix("correct the Python at the line shown (a Python 2 file is not read)"),
            ],
            false,
        ),
        Err(python::Unreadable::Parser(reason)) => (
            vec![
                finding(
                    "config-python-unreadable",
                    &format!(
                        "`{}` is Python, and gpufeed's Python parser could not start ({reason}); \
                         nothing was checked",
                        path.display()
                    ),
                )
                .in_file(path)
                .fix("please report this: the parser is built into gpufeed"),
            ],
            false,
        ),
    }
}

/// Reads and validates a config file.
///
/// # Errors
/// [`ValidateError`] when the file cannot be read at all.
pub fn validate_file(path: &Path, ctx: &Context) -> Result<Validation, ValidateError> {
    let read_error = |e: &std::io::Error| ValidateError::Read {
        path: path.to_path_buf(),
        reason: innermost(e),
    };
    let meta = std::fs::metadata(path).map_err(|e| read_error(&e))?;
    if meta.is_dir() {
        return Err(ValidateError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let unreadable = |f: Finding| Validation {
        path: path.to_path_buf(),
        text: None,
        parsed: false,
        findings: vec![f],
    };
    // Read at most one byte over the cap: a pipe or a device (`/dev/zero`) has no size to
    // check first.
    let bytes = match gpufeed_config::read_capped(path, MAX_CONFIG_BYTES) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => {
            let (size, evidence) = match size {
                Some(n) => (bytes(n), format!("file size {n} bytes")),
                None => (
                    format!("more than {}", bytes(MAX_CONFIG_BYTES)),
                    format!("more than {MAX_CONFIG_BYTES} bytes read (a pipe or a device)"),
                ),
            };
            return Ok(unreadable(
                finding(
                    "config-too-large",
                    &format!(
                        "`{}` is {size}, more than the {} a config may have; it was not parsed",
                        path.display(),
                        bytes(MAX_CONFIG_BYTES)
                    ),
                )
                .in_file(path)
                .evidence(evidence)
                .fix("pass the training config (a YAML file of a few KB)"),
            ));
        }
        Err(e) => return Err(read_error(&e)),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(validate_text(&text, path, ctx)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&e.as_bytes()[..valid]);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Ok(unreadable(
                finding(
                    "config-not-utf8",
                    &format!("`{}` is not UTF-8 text", path.display()),
                )
                .at(path, line, column)
                .evidence(format!(
                    "byte {valid} (0x{:02x}) is not valid UTF-8",
                    e.as_bytes().get(valid).copied().unwrap_or(0)
                ))
                .fix("save the file as UTF-8 (or pass the YAML config, not a binary file)"),
            ))
        }
    }
}

/// The reason of an I/O error. Metadata comes from `std::fs` (its message is the operating
/// system's, without a path, since ours names it); reads go through fs-err, whose message
/// names the file and the operation.
fn innermost(error: &std::io::Error) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate docs are the reference of its rules: every one registered for it is there.
    #[test]
    fn crate_docs_list_every_rule_of_validate() {
        use gpufeed_findings::{Origin, rules::missing_from_docs};
        let missing = missing_from_docs(include_str!("lib.rs"), |o| {
            matches!(o, Origin::Config | Origin::Validate)
        });
        assert_eq!(missing, Some(Vec::new()), "lib.rs docs miss these rules");
    }

    #[test]
    fn a_config_over_the_cap_is_a_finding_not_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("c.yaml");
        let file = fs_err::File::create(&big).unwrap();
        file.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        // `/dev/zero` has no size and no end: read no further than the cap.
        for (path, evidence) in [
            (big.as_path(), "file size 10485761 bytes"),
            (
                Path::new("/dev/zero"),
                "more than 10485760 bytes read (a pipe or a device)",
            ),
        ] {
            if !path.exists() {
                continue;
            }
            let v = validate_file(path, &Context::default()).unwrap();
            assert!(!v.parsed);
            let [f] = v.findings.as_slice() else {
                panic!("{:?}", v.findings);
            };
            assert_eq!(f.id, "config-too-large");
            assert!(
                f.message
                    .contains("more than the 10.0 MiB a config may have"),
                "{}",
                f.message
            );
            assert_eq!(f.evidence, evidence);
        }
    }

    #[test]
    fn rejected_config_keeps_warnings_and_spans() {
        let v = validate_text(
            "data:\n  batch_size: \"32x\"\ntraining:\n  learning_rate: 1e-4\n",
            Path::new("c.yaml"),
            &Context::default(),
        );
        assert!(v.parsed);
        let ids: Vec<_> = v.findings.iter().map(|f| (f.id, f.line)).collect();
        assert!(ids.contains(&("config-wrong-type", Some(2))), "{ids:?}");
        assert!(
            ids.contains(&("config-float-is-string-for-pyyaml", Some(4))),
            "{ids:?}"
        );
        assert_eq!(v.error_count(), 1);
    }

    #[test]
    fn syntax_error_is_not_parsed() {
        let v = validate_text("data: [1, 2\n", Path::new("c.yaml"), &Context::default());
        assert!(!v.parsed);
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].id, "config-syntax");
        assert!(v.findings[0].line.is_some());
    }
}
