//! `gpufeed lint`: Python training code parsed with tree-sitter-python and checked by the
//! rules of the crate docs (tf.data, DataLoader, training-loop and per-item decoding rules).
//!
//! ```
//! use std::path::Path;
//! use gpufeed_lint::lint_source;
//!
//! let code = "\
//! import tensorflow as tf
//! ds = tf.data.Dataset.from_tensor_slices(files)
//! ds = ds.map(load)  # sequential
//! s = 'ds.map(load) in a string is not code'
//! ";
//! let findings = lint_source(code, Path::new("input.py"));
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].id, "tf-map-sequential");
//! assert_eq!((findings[0].line, findings[0].column), (Some(3), Some(9)));
//! ```
//!
//! tree-sitter recovers from syntax errors: each error becomes a `syntax-error` finding
//! and the rest of the file is still linted; findings inside the broken region itself are
//! dropped (their structure is a guess). Where the grammar itself rejects valid Python (a
//! starred item in a bare expression list: `a, b = *(x), y`), the file is parsed again
//! around the gap, so working code is never a `syntax-error` for it. Dead code (after `return`/`raise`/`break`/
//! `continue` in the same block, under `if False:`/`if 0:`/`while False:`, the `else` of
//! `if True:`) is never reported, and neither is anything in a string or a comment, since
//! rules only look at code nodes.
//!
//! # `lint`: Python training code
//!
//! Rules work on the tree-sitter syntax tree, so strings, comments and docstrings never
//! match; code after `return`/`raise`/`break`/`continue` in a block and under
//! `if False:`/`if 0:`/`while False:` is dead and never reported. Names are resolved
//! through the file's imports (`import tensorflow as tf`, `from torch.utils.data import
//! DataLoader as DL`) and the names bound to an imported function (`sync =
//! torch.cuda.synchronize`), with the usual aliases (`tf`, `torch`, `np`) when not imported.
//! A *training loop* is the innermost `for`/`while` whose body (not a nested loop's or
//! function's) calls `.backward()`, `opt.step()` (a receiver named like an optimizer or
//! scaler, not a scheduler), `.apply_gradients()`, `tape.gradient()`, `.minimize()`,
//! `train_on_batch()`, `manual_backward()`, a `*train_step*` function or a helper given
//! the loss first and the optimizer (`loss_scaler(loss, optimizer)`, which runs the
//! backward pass inside), or a `for` loop over something named
//! like a loader or dataset whose calls reach such a call in the project's functions; the
//! body of a class's `training_step` method (PyTorch Lightning runs it for every batch) is
//! one too. Code under an `if` whose condition uses `%` (`if step % 100 == 0:`) runs every
//! N steps and is not reported by the loop rules, unless N's default is 1 (a flag, a
//! constructor or config field, or a config file's `log_interval: 1`: every step), or it is
//! a gradient-accumulation gate (its body steps an optimizer: `if (i + 1) % accum_grad ==
//! 0: optimizer.step()` runs at every optimizer step, every step with an accumulation of
//! 1), where that is the loop's one optimizer step; beside another step outside it, as a
//! GAN's generator under `% n_critic`, the gate is periodic. The body of an `if` that stops
//! the run (`raise`, `sys.exit`) runs at most once, its test every step. An evaluation
//! script (`eval_*.py`) is not the training run where another file trains. Nor is code under an `if` on
//! a command-line flag that is off unless given (`if args.sync_step:` with
//! `add_argument("--sync-step", action="store_true")`, or `default=False` / `None` / `0`,
//! alone or in an `and`), or on a constructor parameter or config-class field that is
//! `False` unless given and that no call turns on (`speed_perturb: bool = False`,
//! `add_zero_attn=False`): an opt-in path; a flag on by default still counts. A flag whose
//! default is `None` makes `if args.log_dir is not None:` opt-in, and so does a name bound
//! only when such a flag is on (`writer = SummaryWriter(d) if args.log_dir is not None else
//! None`, then `if writer is not None:`). A module constant set to a number (`log_interval
//! = 1`) is a default too, the script's own first, unless the script `exec`s a configurator. The per-item
//! rules and `host-tensor-in-forward` / `cache-key-never-hits` skip such paths too, and an
//! attribute that is such a flag under another name (`self.is_mixup = bool(mixup)`).
//!
//! **Config files.** The YAML and JSON files of a linted folder (`*.yaml`, `*.yml` up to
//! 256 KiB, `*.json` up to 64 KiB, 4 MiB in all; a stream of `---` documents read section
//! by section) give
//! defaults too, by key: `num_workers=hp.train.num_workers` or
//! `cfg["train"]["num_workers"]` is judged by the config's `train.num_workers` (the read's
//! own keys pick the section where sections disagree), `device: cuda` there makes the
//! project one that trains on CUDA, and `if hp.train.debug_sync:` with `false` there is
//! opt-in. **Classes built only off the default run**: a dataset or module built only
//! under an opt-in flag (`RawAudio(p) if args.raw_audio else Cached(p)`, the body of `if
//! args.trim:`) or only in the `else` of a setting true by default (`if
//! hp.data.data_preprocessed:` with `true` in the config) does not run with the defaults:
//! its per-item work is info, with why.
//!
//! **Run once, before training**: a script that writes its data out (a `TFRecordWriter`,
//! `tf.data.experimental.save`, `np.save`/`torch.save`/`soundfile.write` in a loop) and does
//! not train, a function that does so beside `train()`, a test, a benchmark or a
//! learning-rate range test (`lr_finder.py`, `find_lr.py`), and then every module-level
//! function or class whose every use (a call, or its name passed on: `ds.map(log_mel)`)
//! is in such code or in the body of an `if` on a flag off by default (`if
//! all((opt.train_path, opt.val_path)):`), to a fixed point: their findings are info, with
//! why.
//!
//! **The scripts the project says to run.** The root README (any `README*`), the shell
//! scripts and the Makefile of a linted folder are read for the scripts they name (`python
//! finetune/lora.py`, "launch `train.py`", `-m pkg.train`; `train.py` names the root's, a
//! subfolder's only where the root has none). Where what they run trains, another training
//! script none of them names (`finetune/full.py` beside the README's `finetune/lora.py`, an
//! optional vocoder's own `vocoder/train.py`) is an alternative: its findings, and those of
//! the modules only it imports, are info, saying which scripts the README runs. A module a
//! config builds by its dotted path (Hydra's `_target_: pkg.models.Net`) stays on the run.
//! Where the project trains (a loop, `fit`, Lightning's `training_step`), a module of
//! definitions only that no file imports and nothing names (a vendored `meldataset.py`) does
//! not run either, unless a computed import may load it: any module where a folder is
//! walked (`pkgutil`, `__import__`) or a whole name is built (`f"{pkg}.{name}"`), the
//! package's modules for `import_module(f"plugins.{name}")`, and what a config or string
//! names for `import_module(pkg)`; and a loader built in a function under
//! `@torch.inference_mode()` / `@torch.no_grad()`, or named for inference or synthesis
//! (`batched_synthesis`), feeds no training.
//!
//! **Arguments** are found by keyword or by position, from one table of the signatures of
//! the APIs the rules read (`Dataset.map`, `interleave`, `batch`, `DataLoader`,
//! `tf.numpy_function`, `tf.function`, ...; `lint/signatures.rs`, each with its source):
//! `ds.map(fn, tf.data.experimental.AUTOTUNE)` is parallel. **Order rules** follow control
//! flow: the branches of an `if`/`elif`/`else`, and a `try` body and its `except` handlers,
//! start from the pipeline before them and are neither before nor after each other.
//!
//! **Calls are followed across the linted files** (`lint/project.rs`): a call resolves to
//! the project's function through the file's definitions, its imports (a module is found by
//! its path inside the linted folder or a unique suffix of it; relative imports included;
//! where several files have it, as in a folder of projects each with its `losses.py`, the
//! one Python would import: under the closest folder that holds the importer, or at the
//! relative import's path),
//! `self.method` in the class and its bases, else a function name defined once in the
//! project (or once among the files the caller imports). From each training loop, the
//! per-step host syncs of the functions it calls are found (`MAX_CALL_DEPTH` calls deep,
//! `MAX_FUNCTIONS_PER_ROOT` functions per loop, cycles visited once), and the first sync of
//! each step is named as such (the first not under an `if`/`else`/`except` on the way,
//! which may not run every step; else the first); a parameter that receives a tensor, and the values of
//! `for k, v in losses.items()`, are tensors. From every `__getitem__`, the `__call__` of
//! `*Collate*` classes, every function or object given as `collate_fn`, functions
//! passed to `Dataset.map`, and a Python generator given to Keras (`fit_generator(gen())`), per-item decoding and features are found the same way. The
//! evidence shows the call chain: `train.py:11 trainer.train_step -> lib/trainer.py:16
//! log_losses -> lib/logs.py:6 scalar -> lib/logs.py:10 .item()`. Over `MAX_PROJECT_FILES`
//! files, each file is linted on its own.
//!
//! **Not the training path**: a finding inside `if __name__ == "__main__":` (unless that
//! block holds a training loop), in a test (`test_*.py`, `*_test.py`, `conftest.py`, a
//! `test`/`tests` folder) or in an example (an `example(s)`/`demo(s)` folder, unless a
//! training script of the same folder, `train*.py` / `*_train.py` with a training loop or a
//! `.fit(...)`, makes it a trainer, as TensorFlowTTS' `examples/tacotron2/`) or in a
//! benchmark (`bench.py`, `*benchmark*.py`, a `bench(es)`/`benchmark(s)` folder: nanoGPT's
//! `bench.py` times the model, it does not train it) or in an inference script (`infer`,
//! `inference`, `predict`, `demo`, `export`, `serve` in its name, and no training loop or
//! `.fit`) is info, and its
//! message says why; so is one reached through calls from a loop or per-item function there.
//! So are the findings on an **evaluation loader**: a `DataLoader` assigned to a name of an
//! evaluation split (`val_loader`, `validation_loader`, `testloader`, `self.eval_dl`, `dev`)
//! or built in a function named so (`validate()`, Lightning's `val_dataloader`; not one
//! whose name also says `train`/`fit`), unless a training loop of its file iterates it: it
//! runs at validation time, not every step. The same holds for a `tf.data` pipeline bound
//! to such a name (`val_dataset = val_dataset.map(f)`).
//!
//! | id | severity | fires on | why | fix |
//! |---|---|---|---|---|
//! | `tf-py-function-in-map` | warning | `tf.numpy_function`/`tf.py_function` inside a function passed to `.map` (lambda, function or method of the file, through `functools.partial`, following calls 3 deep) | Python under the GIL: the parallel map runs one item at a time | TensorFlow ops, or precompute |
//! | `tf-map-sequential` | warning | `.map` on a `tf.data` dataset without `num_parallel_calls` (keyword or second positional argument), or with `None`/`1` | one item at a time | `num_parallel_calls=tf.data.AUTOTUNE` |
//! | `tf-no-prefetch` | warning | a batched `tf.data` pipeline (`.batch`, `.padded_batch`, `bucket_by_sequence_length`, also through `.apply(...)`) with no `prefetch`, iterated (`for`, `iter`, `enumerate`, `.fit`, `.evaluate`, `.predict`, `experimental_distribute_dataset`) or returned without a caller in the file adding `prefetch` | input and compute never overlap | `.prefetch(tf.data.AUTOTUNE)` last |
//! | `tf-after-prefetch-to-device` | warning | any transformation after `prefetch_to_device`/`copy_to_device` on some path (not in an exclusive branch) | it must be the final one (TF docs) | move it last |
//! | `tf-cache-after-random` | warning | `.cache()` after `.shuffle()` or after a map whose function calls `tf.random.*`, `tf.image.random_*`, `np.random.*` or `random.*` | the first epoch's randomness is frozen | `.cache()` first |
//! | `tf-function-retracing` | warning | `@tf.function`/`tf.function(f)` on a function named like a train step (`*step*`, `*train*`) without `input_signature` or `reduce_retracing=True`; info where the project's batches come from `.batch()` and nothing pads or batches ragged elements (`padded_batch`, `ragged_batch`, `bucket_by_sequence_length`, `RaggedTensor`): at most two shapes, two traces | retraced (recompiled) for each new input shape | `input_signature=[...]` |
//! | `torch-loader-no-workers` | warning | `DataLoader(...)` without `num_workers` or with `num_workers=0` (also through a subclass of `DataLoader`: its call, or its `super().__init__(...)` when it has its own `__init__`; the other loader rules too); info where the items are already in memory (a `TensorDataset`, or a project dataset whose `__getitem__` only indexes and converts, with no `collate_fn` or one that only pads and stacks); torchtext's legacy `BucketIterator` / `Iterator` / `BPTTIterator` (`torchtext.data`, `torchtext.legacy.data`, their `.splits`), which build each batch in the training thread (info when bound to an evaluation name); also Hugging Face's `TrainingArguments(...)` without `dataloader_num_workers` (the `Trainer`'s loader), a warning where the file's dataset is transformed or its audio decoded when read (`set_transform`, `with_transform`, a `datasets.Audio` column), else info (a dataset tokenized beforehand is only collated) | loading between steps in the training process | `num_workers=8` |
//! | `torch-loader-no-pin-memory` | warning | `DataLoader` without `pin_memory=True` in a file that uses CUDA (`.cuda()`, `"cuda"` devices); also `pin_memory=True` over a `collate_fn` that returns NumPy arrays (it pins nothing) | the copy cannot overlap compute | `pin_memory=True`, `non_blocking=True`; first tensors from a `collate_fn` that builds NumPy arrays (it and the methods it calls on `self` call NumPy and no `torch`), since `pin_memory` pins only tensors |
//! | `torch-loader-no-persistent-workers` | info | `DataLoader` with workers but no `persistent_workers=True` | workers restart every epoch | `persistent_workers=True` |
//! | `torch-data-parallel` | warning (info as the `elif`/`else` fallback of a branch that wraps the model in `DistributedDataParallel`, any alias, unless a flag's default picks that branch: `--parallel-mode` with `default="dp"`; or under a test that the run was not launched for DDP, `rank == -1` or `not args.distributed`, in a file that wraps in `DistributedDataParallel` elsewhere) | `torch.nn.DataParallel(...)` | single-process scatter/gather every step | `DistributedDataParallel` |
//! | `host-sync-in-loop` | warning | `.item()`, `.numpy()`, `.cpu()`, `.tolist()`, `t.masked_select(m)`, `t.nonzero()`, `t.unique()`, `t[idx]` of a device tensor with a Python list (`random.sample(...)`, `[0] * n`, a list literal: a CPU index tensor copied with a blocking copy), `t[mask]` read with a boolean mask (a comparison, `~m`, `a & b`, `.bool()`, `dtype=torch.bool`, a name assigned one or given one, or called `*mask*` and assigned nothing else; not a store `t[mask] = 0`) (a result as large as the data says), `float(t)`/`int(t)`/`bool(t)`, `math.*(t)` (`math.isnan(grad_norm)`), `print(t)` (an f-string too), `"...".format(t)`, `"%.4f" % t` (also within a longer expression, and arithmetic on `t`), the builtin `max(1, D - t.max())` / `min(...)` of two or more values one of which is read from a device tensor, TensorBoard's `add_scalar(tag, t)`, JAX's `jax.device_get(x)`, `np.asarray(x)` / `np.array(x)` and `x.block_until_ready()` in a file that imports `jax` (with JAX's fix: metrics summed on the device, fetched every N steps), TensorFlow's `tf.summary.scalar` / `histogram` / `image` / `audio` of a tensor where the project makes a writer and never thins the writes with `record_if` (one warning per function that writes them), Lightning's `self.log(name, t, prog_bar=True)` / `self.log_dict({...}, prog_bar=True)` unless `on_step=False` (the progress bar turns it into a number every step: Lightning-AI/pytorch-lightning#21232, #12976; after an all-reduce with `sync_dist=True`), and a device reduction deciding an `if`/`elif`/`while`/`assert` (`if torch.min(y) < -1.:`, `if torch.isnan(loss).any():`) or a name holding a device tensor deciding one (`if iterator_stop > 0:` on a flag built with `torch.tensor(0).to(device)`, `torch.zeros(1, device=...)` or `.cuda()`, or the receiver of `.backward()`; not `is`/`in`), or a slice bound that is a tensor, an element of one or arithmetic on one (`x[i, :, s:e]` with `s = ids[i]`, VITS' `slice_segments`; `pred[:n]` with `n` from a loop over a tensor put on the GPU in the step, `for pred, n in zip(preds, lengths)`, StyleTTS2), or an f-string field holding a tensor (`f"{loss}"`, given to anything: a progress bar), `%` formatting of one (a starred tensor, `% (step, *mloss)`, and repeated formats), `pack_padded_sequence` given device lengths, a torch factory given a 0-d device tensor as a size (`torch.arange(lengths.max())`), `assert` on an element-wise comparison (`assert (out >= 0).all()`) in a training loop or in a function of the project it calls every step (the chain in the evidence; the first sync of each step says so); `t` is tensor-like: the receiver of `.backward()`, named like a loss/logits/output/prediction, assigned from a call of a model, net, criterion, loss, step or `clip_grad_norm_`, a tensor method of one (`y_hat.squeeze(1)`), a value of such a dict, a parameter given one, or a name accumulating one (`top1 += prec`; `x += t.item()` makes it a float whatever it is called) | the GPU queue drains every step | accumulate on the device; read every N steps |
//! | `cuda-sync-in-loop` | warning | `torch.cuda.synchronize()`, `torch.cuda.empty_cache()` in a training loop | drains the queue / re-allocates every step | delete it |
//! | `ddp-gloo-on-cuda` | warning | `torch.distributed.init_process_group("gloo", ...)` (or `backend="gloo"`) in a file that puts the model on CUDA (`.cuda()`, `.to(rank)` with `torch.cuda.set_device`, a `"cuda"` device, `DistributedDataParallel(..., device_ids=...)`) | every step's gradient all-reduce goes through host memory | `init_process_group("nccl")` |
//! | `anomaly-detection-on` | warning | `torch.autograd.set_detect_anomaly(True)` or `torch.autograd.detect_anomaly()` (a literal, not a flag) in training code | every step records forward tracebacks and checks gradients for NaN on the host | delete it, or put it behind a debug flag off by default |
//! | `sleep-in-loop` | warning | `time.sleep(...)` in a training loop | the GPU idles for the sleep | delete it |
//! | `decode-per-item` | warning | audio or image decoding, resampling or features (`librosa.load`/`stft`/`resample`/`feature.*`, `soundfile.read`, `torchaudio.load`, `torch.stft`, `torchaudio.functional.resample`, `pyworld`, zero-phase and biquad filters (`torchaudio.functional.lowpass_biquad`, `filtfilt`, `scipy.signal.filtfilt`; not a one-pass `lfilter`), `PIL.Image.open`, `cv2.imread`, ..., a transcript phonemized (`phonemizer.phonemize`, `phonemize` on a phonemizer backend object, also in a text cleaner picked by `getattr(cleaners, name)`); a call named like a feature, `*spectrogram*`, `*melspec*`, `stft`, `get_mel`, `wav2mel`, `*fbank*`, and an audio loader asked for a sample rate, `load_audio(p, sample_rate=16000)`, `load_wav(p, sr=...)`, when the code behind it is not in the linted files or holds none of these: a conv1d STFT module, an import) reached from `__getitem__`, a `collate_fn`, a mapped function, an iterator's `__next__`, a Keras generator, a loader thread's `run` or a `threading.Thread(target=...)`, through the project's functions. A plain `scipy.io.wavfile.read` is a read, not decoding. Work in the branch of `if os.path.exists(p)` that runs on a miss and saves (VITS' `.spec.pt`) is info: once per item, not every epoch. Work in a branch of a dataset shared by its splits that runs only for evaluation (`if self.split != "train":`, `if mode == "val":`, `if not self.training:`, the `else` of `if split == "train":`) is not per training item, nor a resample or feature whose arguments come from a random draw (`resample_poly(wav, random.choice(rates), sr)`, a cutoff scaled by `torch.FloatTensor(2).uniform_(...)` drawn in the function or one it is nested in: an augmentation, new every epoch) | the same work every epoch on the CPU | precompute; load arrays |
//! | `decode-per-item-few-workers` | warning | a `DataLoader` with `num_workers` 0, 1 or unset whose dataset's `__getitem__` (or `collate_fn`) reaches decoding or features, through the project's functions (the evidence names the heaviest: a mel over the WAV read before it); for an image decoded per item (`PIL.Image.open`, `cv2.imread`, torchvision's `ImageFolder`), fewer than `IMAGE_DECODE_WORKERS_LOW` (4) workers; Keras' `fit_generator` / `fit` over a Python generator (or a function returning one) with `workers` 0, 1 or unset while each batch decodes or computes features | one process does every item's work in turn | `num_workers=8`, or precompute |
//! | `subprocess-per-item` | warning | `os.system`, `os.popen`, `subprocess.run`/`call`/`check_call`/`check_output`/`Popen` reached from `__getitem__`, a `collate_fn` or a mapped function, through the project's functions | a process started for every item, every epoch | convert the files once, before training; or do it in Python |
//! | `cache-key-never-hits` | warning | `if K not in D:` whose body stores `D[...]` only under keys written otherwise than `K` (HiFi-GAN's `if fmax not in mel_basis: mel_basis[str(fmax)+'_'+str(y.device)] = ...`) | the test never finds the key: the work under it (a mel filterbank built and copied to the GPU) runs on every call | one key for the test and the store |
//! | `host-tensor-in-forward` | warning | in a class's `forward`, or in a function of the project that a `forward` or the training step calls (a helper, a loss; not the `forward` of a module whose objects are only built into names the project calls methods of, never calls, passes on or returns, with no subclass: glow-tts' STFT used through `.transform`, a frozen recogniser built as `ASR().cuda().eval()` and handed on positionally or as a keyword to be used through `.get_feature`, the decoder only such a `forward` calls, a module class nothing in a project of several files names; not the branch of a switch of its own that is off by default, `if reverse:` or the `else` of `if not reverse:` with `reverse=False`, or `if kwargs.get("infer", False):`, nor the evaluation path, `if not self.training:`, the `else` of `if self.training:` or what follows its `return`, nor one decorated with a cache, nor what a memo's first fill builds: `if key not in D: D[key] = ...`, `if not hasattr(self, "w")`, `if self.w is None`, what follows `if self.cache is not None and n <= len(self.cache): return` (rotary tables), unless the file empties the memo again outside `__init__`, as an attention's `reset_mem` every batch), a tensor built by a torch factory without `device=` (`torch.tensor`, `torch.arange`, `torch.from_numpy`, `torch.zeros`, ..., through tensor methods or a name) then moved with `.cuda()`, `.to(device)` or `.type_as(x)`, or set into a slice of a tensor built on the device (`gain[2:6] = torch.tensor(p.shape)[...]`) | a host allocation and a host-to-device copy in every call, every layer, every step | `device=x.device`, or `register_buffer` in `__init__` |
//! | `syntax-error` | error | a Python syntax error (up to 10 per file) | Python cannot run it; the rest was linted | correct it |
//! | `file-not-linted` | error | binary, not UTF-8, unreadable, or over 10 MiB | nothing was linted | pass Python sources |
//! | `ignore-unknown-rule` | warning | `# gpufeed: ignore[x]` with an unknown `x` | it silences nothing | a real id |
//!
//! `# gpufeed: ignore[RULE]` (several: `ignore[a, b]`) in a comment on the line a finding
//! starts silences it. Folders are walked for `*.py`, skipping hidden folders,
//! `__pycache__`, `node_modules`, `site-packages`, `venv`, `build` and `dist`; symbolic links
//! to folders are not followed. A file given by name is linted whatever its extension.

mod ast;
mod configs;
mod decode;
mod defaults;
pub mod examples;
mod flow;
mod grammar;
mod loops;
mod model;
mod project;
mod rundocs;
mod signatures;
mod tfdata;
mod torch;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tree_sitter::{Node, Parser};

use gpufeed_findings::constants::{MAX_SOURCE_BYTES, MAX_SYNTAX_ERRORS};
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::{finding, is_lint_rule};

/// The findings of a lint run and how many files were read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LintOutcome {
    /// Every finding, in no particular order (a [`gpufeed_findings::Report`] sorts them).
    pub findings: Vec<Finding>,
    /// Files linted (or reported as not lintable).
    pub files: usize,
}

/// A path given to `lint` that does not exist: bad input (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// The path does not exist or cannot be looked at.
    #[error("cannot lint `{}`: {reason}", path.display())]
    NotFound {
        /// The path as given.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
}

/// Folders never walked into (besides hidden ones): caches, environments and build output,
/// as ruff's default excludes.
const SKIPPED_DIRS: &[&str] = &[
    "__pycache__",
    "__pypackages__",
    "node_modules",
    "site-packages",
    "venv",
    "build",
    "dist",
    "_build",
    "buck-out",
];

/// Lints files and folders (folders are walked for `*.py`). The files are linted together:
/// calls are followed from one file into the functions of another (a training loop in
/// `train.py` into `utils.py`), and findings in a folder's files name them relative to it
/// for tests and examples.
///
/// # Errors
/// [`LintError::NotFound`] for a path that does not exist; nothing is linted then.
pub fn lint_paths(paths: &[PathBuf]) -> Result<LintOutcome, LintError> {
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut config_files: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut docs = rundocs::RunDocs::default();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| LintError::NotFound {
            path: path.clone(),
            reason: innermost(&e),
        })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            let mut settings = Vec::new();
            let mut shell = Vec::new();
            walk_dir(path, &mut found, &mut settings, &mut shell);
            let read = rundocs::RunDocs::read(path, &shell);
            docs.docs.extend(read.docs);
            docs.scripts.extend(read.scripts);
            docs.other_docs.extend(read.other_docs);
            docs.other_scripts.extend(read.other_scripts);
            docs.flags.extend(read.flags);
            let relative = |f: PathBuf| {
                let rel = f
                    .strip_prefix(path)
                    .map_or_else(|_| f.clone(), Path::to_path_buf);
                (f, rel)
            };
            files.extend(found.into_iter().map(relative));
            config_files.extend(settings.into_iter().map(relative));
        } else {
            files.push((path.clone(), named(path)));
        }
    }
    let mut seen = HashSet::new();
    files.retain(|(f, _)| seen.insert(f.clone()));
    let mut outcome = LintOutcome {
        files: files.len(),
        ..LintOutcome::default()
    };
    let mut inputs = Vec::new();
    for (path, rel) in files {
        match read_source(&path) {
            Ok(text) => inputs.push(Input { path, rel, text }),
            Err(f) => outcome.findings.extend(f),
        }
    }
    let configs = configs::Configs::read(&config_files);
    outcome
        .findings
        .extend(lint_inputs(&inputs, &configs, &docs));
    Ok(outcome)
}

/// Every `*.py` under `dir`, sorted, the config files (`*.yaml`, `*.yml`, `*.json`) into
/// `settings` and the shell scripts (`*.sh`) into `shell`; unreadable folders are skipped.
fn walk_dir(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    settings: &mut Vec<PathBuf>,
    shell: &mut Vec<PathBuf>,
) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(fs_err::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // `file_type` does not follow links: a link to a folder is not walked (no cycles).
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref()) {
                walk_dir(&path, out, settings, shell);
            }
        } else if path.extension().is_some_and(|e| e == "py") && (kind.is_file() || path.is_file())
        {
            out.push(path);
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            && kind.is_file()
        {
            settings.push(path);
        } else if path.extension().is_some_and(|e| e == "sh") && kind.is_file() {
            shell.push(path);
        }
    }
}

/// Lints one file: reads it, refuses binary, non-UTF-8 and oversized files with a
/// `file-not-linted` finding, and lints the text.
#[must_use]
pub fn lint_file(path: &Path) -> Vec<Finding> {
    match read_source(path) {
        Ok(text) => lint_inputs(
            &[Input {
                path: path.to_path_buf(),
                rel: named(path),
                text,
            }],
            &configs::Configs::default(),
            &rundocs::RunDocs::default(),
        ),
        Err(findings) => findings,
    }
}

/// The text of a Python file, or the `file-not-linted` finding that says why not.
fn read_source(path: &Path) -> Result<String, Vec<Finding>> {
    let not_linted = |why: &str, evidence: String| {
        vec![
            finding(
                "file-not-linted",
                &format!("`{}` was not linted: {why}", path.display()),
            )
            .in_file(path)
            .evidence(evidence)
            .fix("pass Python source files (UTF-8 text)"),
        ]
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_SOURCE_BYTES => {
            return Err(not_linted(
                &format!("it is larger than {} MiB", MAX_SOURCE_BYTES / (1024 * 1024)),
                format!("file size {} bytes", meta.len()),
            ));
        }
        Ok(_) => {}
        Err(e) => return Err(not_linted("it cannot be read", innermost(&e))),
    }
    // At most one byte past the cap: a device (`gpufeed lint /dev/zero`) has no size.
    let bytes = match gpufeed_config::read_capped(path, MAX_SOURCE_BYTES) {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return Err(not_linted(
                &format!("it is larger than {} MiB", MAX_SOURCE_BYTES / (1024 * 1024)),
                format!("more than {MAX_SOURCE_BYTES} bytes read (a pipe or a device)"),
            ));
        }
        Err(e) => return Err(not_linted("it cannot be read", innermost(&e))),
    };
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(not_linted(
            "it is a binary file, not Python source",
            format!("a NUL byte at offset {at}"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        not_linted(
            "it is not UTF-8 text (Python 3 source is UTF-8)",
            format!("byte {at} is not valid UTF-8"),
        )
    })
}

/// One source to lint.
struct Input {
    /// Where it was read from (findings name it).
    path: PathBuf,
    /// Its path inside the folder given to `lint` (module names, tests and examples).
    rel: PathBuf,
    text: String,
}

/// What a rule found, before placing and filtering.
#[derive(Debug)]
pub(crate) struct Hit {
    pub(crate) id: &'static str,
    /// Start byte of the offending node: its line and column, and the dead-code, broken
    /// region and suppression checks.
    pub(crate) byte: usize,
    /// What was found (the rule's why is appended).
    pub(crate) specific: String,
    /// Context beyond the offending line (`in the training loop at line 4`).
    pub(crate) context: Option<String>,
    /// The fix, as code.
    pub(crate) fix: String,
    /// Where a finding reached through calls starts (file index, byte): a training loop or
    /// a per-item function. It is not on the training path when its start is not.
    pub(crate) root: Option<(usize, usize)>,
    /// Why the finding is only info although its rule is not (a feature behind a file
    /// cache: computed once per item, not every epoch).
    pub(crate) info: Option<String>,
}

/// One parsed file, shared by the rules.
pub(crate) struct File<'t> {
    pub(crate) src: &'t str,
    pub(crate) root: Node<'t>,
    /// The file's path inside the linted folder.
    pub(crate) rel: &'t Path,
    pub(crate) names: ast::Names,
    pub(crate) functions: HashMap<String, Vec<Node<'t>>>,
    pub(crate) classes: HashMap<String, Vec<Node<'t>>>,
    /// Functions passed to `Dataset.map`, with where: they run once per item.
    pub(crate) item_roots: Vec<(Node<'t>, String)>,
    /// Arguments of `Dataset.map` that name no function of this file (the project pass
    /// resolves them across files).
    pub(crate) map_args: Vec<(Node<'t>, String)>,
    /// Byte ranges of the training loops (found by the project pass).
    pub(crate) training_loops: Vec<(usize, usize)>,
    /// The file's `DataLoader(...)` calls (found by the torch rules).
    pub(crate) loaders: Vec<Node<'t>>,
    /// True when the file trains on CUDA (`.cuda()`, a `"cuda"` device, Lightning's
    /// `accelerator="gpu"`; found by the torch rules).
    pub(crate) uses_cuda: bool,
    /// `init_process_group("gloo")` calls of a file that puts nothing on CUDA itself: the
    /// project pass judges them by the project's device (found by the torch rules).
    pub(crate) gloo: Vec<Node<'t>>,
    /// True when the file trains on CUDA, or puts a distributed run there
    /// (`torch.cuda.set_device(rank)`, `DistributedDataParallel(..., device_ids=[rank])`;
    /// found by the torch rules), tests and examples included.
    pub(crate) cuda_ranks: bool,
    /// `DataLoader` calls that serve evaluation (byte range, why; the project pass).
    pub(crate) eval_loaders: Vec<(usize, usize, String)>,
    /// Code run once before training, and what only it uses (byte range, why; the project
    /// pass).
    pub(crate) one_off: Vec<(usize, usize, String)>,
    /// Why the whole file is not the default run: only a training script the project's
    /// README and scripts do not name runs it (the project pass).
    pub(crate) not_run: Option<String>,
    /// True when a config file builds something of this module by its dotted path
    /// (`_target_: pkg.models.Net`; the project pass).
    pub(crate) config_named: bool,
    pub(crate) hits: Vec<Hit>,
}

impl<'t> File<'t> {
    pub(crate) fn hit(
        &mut self,
        id: &'static str,
        node: Node<'_>,
        specific: impl Into<String>,
        context: Option<String>,
        fix: impl Into<String>,
    ) {
        self.hits.push(Hit {
            id,
            byte: node.start_byte(),
            specific: specific.into(),
            context,
            fix: fix.into(),
            root: None,
            info: None,
        });
    }

    /// The function a call argument names: a lambda, a function or method of this file
    /// (`load`, `self.load`), or the function inside `functools.partial(f, ...)`.
    pub(crate) fn function_of(&self, arg: Node<'t>) -> Option<Node<'t>> {
        match arg.kind() {
            "lambda" => Some(arg),
            "identifier" | "attribute" => {
                let name = ast::dotted(arg, self.src)?;
                let last = name.rsplit('.').next().unwrap_or(&name);
                self.functions
                    .get(last)
                    .and_then(|defs| defs.first().copied())
            }
            "call" => {
                let callee = self.names.callee(arg, self.src)?;
                if callee == "functools.partial" || callee == "partial" {
                    self.function_of(signatures::arg(arg, "functools.partial", "func", self.src)?)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Calls inside `function` (a definition or lambda) whose canonical name matches, and
    /// inside the functions of this file it calls, up to `MAX_CALL_DEPTH` deep.
    pub(crate) fn calls_reaching(
        &self,
        function: Node<'t>,
        matches: &dyn Fn(&str) -> bool,
    ) -> Vec<(Node<'t>, String)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        self.reach(function, matches, 0, &mut seen, &mut out);
        out
    }

    fn reach(
        &self,
        function: Node<'t>,
        matches: &dyn Fn(&str) -> bool,
        depth: u64,
        seen: &mut HashSet<usize>,
        out: &mut Vec<(Node<'t>, String)>,
    ) {
        if !seen.insert(function.id()) {
            return;
        }
        let body = function.child_by_field_name("body").unwrap_or(function);
        // Nested helper functions of the mapped function count: they run per item too.
        let mut calls = Vec::new();
        ast::walk(body, &mut |n| {
            if n.kind() == "call" {
                calls.push(n);
            }
            !matches!(n.kind(), "class_definition")
        });
        for call in calls {
            let Some(name) = self.names.callee(call, self.src) else {
                continue;
            };
            if matches(&name) {
                out.push((call, name.clone()));
            }
            // The Python callback of `tf.numpy_function(f, ...)` runs per item too.
            if tfdata::is_py_function(&name)
                && depth < gpufeed_findings::constants::MAX_CALL_DEPTH
                && let Some(f) = signatures::arg(call, "tf.numpy_function", "func", self.src)
                    .and_then(|a| self.function_of(a))
                    .filter(|f| f.kind() != "lambda")
            {
                self.reach(f, matches, depth + 1, seen, out);
            }
            if matches(&name) {
                continue;
            }
            if depth < gpufeed_findings::constants::MAX_CALL_DEPTH {
                let last = name.rsplit('.').next().unwrap_or(&name);
                let local = name == last || name.starts_with("self.") || name.starts_with("cls.");
                if local && let Some(defs) = self.functions.get(last) {
                    for def in defs.clone() {
                        self.reach(def, matches, depth + 1, seen, out);
                    }
                }
            }
        }
    }
}

/// Lints Python source; `path` names the file in findings.
#[must_use]
pub fn lint_source(text: &str, path: &Path) -> Vec<Finding> {
    lint_inputs(
        &[Input {
            path: path.to_path_buf(),
            rel: named(path),
            text: text.to_owned(),
        }],
        &configs::Configs::default(),
        &rundocs::RunDocs::default(),
    )
}

/// How a file named on the command line counts for tests and examples: by its name only
/// (`test_data.py`), not by the folders above it, which are the user's, not the project's.
fn named(path: &Path) -> PathBuf {
    path.file_name()
        .map_or_else(|| path.to_path_buf(), PathBuf::from)
}

/// Parses every source, runs the rules of each file, follows calls across them, and turns
/// the hits into findings.
fn lint_inputs(
    inputs: &[Input],
    configs: &configs::Configs,
    docs: &rundocs::RunDocs,
) -> Vec<Finding> {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    // Parsing and the per-file rules run on every core (one parser per thread, as
    // ripgrep searches files); following calls across files needs them all, so it runs
    // once, after. Results keep the inputs' order.
    let trees: Vec<Option<tree_sitter::Tree>> = inputs
        .par_iter()
        .map_init(
            || {
                let mut parser = Parser::new();
                let ready = parser.set_language(&language).is_ok();
                (parser, ready)
            },
            |(parser, ready), input| {
                if *ready {
                    grammar::parse(parser, source_of(input))
                } else {
                    None
                }
            },
        )
        .collect();
    let mut findings = Vec::new();
    let mut parsed = Vec::new();
    for (input, tree) in inputs.iter().zip(trees) {
        match tree {
            Some(tree) => parsed.push((input, source_of(input), tree)),
            None => findings.push(
                finding("file-not-linted", "the Python parser gave up on this file")
                    .in_file(&input.path)
                    .fix("report this file to gpufeed"),
            ),
        }
    }
    let none = tfdata::Outside::default();
    let mut files: Vec<File<'_>> = parsed
        .par_iter()
        .map(|(input, src, tree)| {
            let root = tree.root_node();
            File {
                src,
                root,
                rel: &input.rel,
                names: ast::Names::collect(root, src),
                functions: ast::functions(root, src),
                classes: ast::classes(root, src),
                item_roots: Vec::new(),
                map_args: Vec::new(),
                training_loops: Vec::new(),
                loaders: Vec::new(),
                uses_cuda: false,
                gloo: Vec::new(),
                cuda_ranks: false,
                eval_loaders: Vec::new(),
                one_off: Vec::new(),
                not_run: None,
                config_named: false,
                hits: Vec::new(),
            }
        })
        .collect();
    // Each file's `DataLoader` subclasses, and all of them by their qualified names
    // (`pkg.loader.AudioLoader`): a file that imports one builds loaders with it.
    let own: Vec<Vec<(String, bool)>> = files.par_iter().map(torch::loader_subclasses).collect();
    let subclasses: Vec<(String, bool)> = files
        .iter()
        .zip(&own)
        .flat_map(|(f, own)| {
            let module = project::module_path(f.rel);
            own.iter()
                .map(move |(name, has_init)| (format!("{module}.{name}"), *has_init))
        })
        .collect();
    let mut tf: Vec<(tfdata::Exports, Vec<Hit>)> = files
        .par_iter_mut()
        .zip(&own)
        .map(|(file, own)| {
            let exports = tfdata::check(file, &none);
            let tf_hits = std::mem::take(&mut file.hits);
            torch::check(file, own, &subclasses);
            model::check(file);
            (exports, tf_hits)
        })
        .collect();
    // A pipeline built in one file and transformed in another: a file that imports a
    // function returning one, or defines a function another file passes one to, is
    // checked again with what the others told, its first tf.data findings replaced; again
    // while that tells something new (a pipeline handed through several modules).
    let mut told: Vec<Option<tfdata::Outside>> = vec![None; files.len()];
    for _ in 0..4 {
        let outside = tfdata::across(&files, tf.iter().map(|(e, _)| e));
        let changed: Vec<bool> = outside
            .iter()
            .zip(&told)
            .map(|(now, before)| {
                now.as_ref().map(tfdata::Outside::keys)
                    != before.as_ref().map(tfdata::Outside::keys)
            })
            .collect();
        if !changed.contains(&true) {
            break;
        }
        files
            .par_iter_mut()
            .zip(&mut tf)
            .zip(&outside)
            .zip(&changed)
            .for_each(|(((file, (exports, tf_hits)), outside), changed)| {
                if let (Some(outside), true) = (outside, changed) {
                    file.item_roots.clear();
                    file.map_args.clear();
                    let others = std::mem::take(&mut file.hits);
                    *exports = tfdata::check(file, outside);
                    *tf_hits = std::mem::replace(&mut file.hits, others);
                }
            });
        told = outside;
    }
    for (file, (_, tf_hits)) in files.iter_mut().zip(tf) {
        file.hits.extend(tf_hits);
    }
    project::check(&mut files, configs, docs);
    let paths = project::off_path(&files);
    let placed: Vec<Vec<Finding>> = files
        .par_iter_mut()
        .enumerate()
        .map(|(i, file)| {
            let hits = std::mem::take(&mut file.hits);
            place(file, i, &parsed[i].0.path, hits, &paths)
        })
        .collect();
    findings.extend(placed.into_iter().flatten());
    findings
}

/// The text tree-sitter parses: the input without a byte-order mark.
fn source_of(input: &Input) -> &str {
    input.text.strip_prefix('\u{feff}').unwrap_or(&input.text)
}

/// Findings from the hits of one file: dead code, broken regions, suppressions and
/// duplicates dropped; findings off the training path lowered to info.
fn place(
    file: &File<'_>,
    me: usize,
    path: &Path,
    hits: Vec<Hit>,
    paths: &project::OffPath,
) -> Vec<Finding> {
    let (src, root) = (file.src, file.root);
    let lines = LineIndex::new(src);
    let dead = dead_ranges(root, src);
    let broken = broken_ranges(root);
    let (ignores, mut findings) = suppressions(root, src, path, &lines);
    let mut placed = HashSet::new();
    for hit in hits {
        let inside =
            |ranges: &[(usize, usize)]| ranges.iter().any(|&(s, e)| s <= hit.byte && hit.byte < e);
        if inside(&dead) || inside(&broken) {
            continue;
        }
        let (line, column) = lines.place(src, hit.byte);
        if ignores.get(&line).is_some_and(|ids| ids.contains(hit.id)) {
            continue;
        }
        if !placed.insert((hit.id, line)) {
            continue;
        }
        let mut evidence = format!("`{}`", statement_text(root, src, hit.byte, &lines, line));
        if let Some(context) = hit.context {
            evidence.push_str("; ");
            evidence.push_str(&context);
        }
        let mut f = finding(hit.id, &hit.specific)
            .at(path, line, column)
            .evidence(evidence)
            .fix(hit.fix);
        // Why the finding is only info: the hit's own reason (a cached feature), else why
        // its place (or the loop it was reached from) is not the training path.
        let info = hit.info.clone().or_else(|| {
            paths
                .why(me, hit.byte)
                .or_else(|| hit.root.and_then(|(i, b)| paths.why(i, b)))
                .map(|why| format!("{why}, not the training path"))
        });
        if let Some(why) = info
            && f.severity > gpufeed_findings::Severity::Info
        {
            f.severity = gpufeed_findings::Severity::Info;
            f.message.push_str(&format!("; reported as info: {why}"));
        }
        findings.push(f);
    }
    for f in syntax_errors(root, src, path, &lines) {
        let silenced = f.line.is_some_and(|l| {
            ignores
                .get(&l)
                .is_some_and(|ids| ids.contains("syntax-error"))
        });
        if !silenced {
            findings.push(f);
        }
    }
    findings
}

/// Byte offsets of line starts, for 1-based line and character columns.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    /// 1-based line and character column of a byte offset.
    fn place(&self, src: &str, byte: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= byte).max(1);
        let start = self.starts[line - 1];
        let column = src.get(start..byte).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    /// Line `line` (1-based), trimmed and shortened for evidence.
    fn line_text(&self, src: &str, line: usize) -> String {
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let end = self.starts.get(line).copied().unwrap_or(src.len());
        let text = src.get(start..end).unwrap_or("").trim();
        let mut out: String = text.chars().take(120).collect();
        if text.chars().count() > 120 {
            out.push_str("...");
        }
        out
    }
}

/// The code a finding quotes: its line, or, where the simple statement it is in runs over
/// several lines (`DataLoader(\n    ds, num_workers=0)`, a call whose `.type_as(x)` is two
/// lines down), the whole statement on one line; at most 160 characters.
fn statement_text(
    root: Node<'_>,
    src: &str,
    byte: usize,
    lines: &LineIndex,
    line: usize,
) -> String {
    const COMPOUND: &[&str] = &[
        "if_statement",
        "for_statement",
        "while_statement",
        "with_statement",
        "try_statement",
        "function_definition",
        "class_definition",
        "decorated_definition",
        "match_statement",
    ];
    let mut n = root.descendant_for_byte_range(byte, byte);
    for _ in 0..64 {
        let Some(node) = n else { break };
        let Some(parent) = node.parent() else { break };
        if matches!(parent.kind(), "block" | "module") {
            if COMPOUND.contains(&node.kind())
                || node.start_position().row == node.end_position().row
            {
                break;
            }
            let joined = node
                .utf8_text(src.as_bytes())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("( ", "(")
                .replace(" )", ")")
                .replace("[ ", "[")
                .replace(" ]", "]");
            let mut out: String = joined.chars().take(160).collect();
            if joined.chars().count() > 160 {
                out.push_str("...");
            }
            return out;
        }
        n = Some(parent);
    }
    lines.line_text(src, line)
}

/// Byte ranges of code that never runs.
fn dead_ranges(root: Node<'_>, src: &str) -> Vec<(usize, usize)> {
    let mut dead = Vec::new();
    ast::walk(root, &mut |n| {
        match n.kind() {
            "block" | "module" => {
                let mut c = n.walk();
                let stmts: Vec<_> = n
                    .named_children(&mut c)
                    .filter(|s| s.kind() != "comment")
                    .collect();
                if let Some(i) = stmts.iter().position(|s| {
                    matches!(
                        s.kind(),
                        "return_statement"
                            | "raise_statement"
                            | "break_statement"
                            | "continue_statement"
                    )
                }) && let (Some(first), Some(last)) = (stmts.get(i + 1), stmts.last())
                {
                    dead.push((first.start_byte(), last.end_byte()));
                }
            }
            "if_statement" | "while_statement" => {
                let cond = n.child_by_field_name("condition");
                let is_false = cond.is_some_and(|c| ast::is_falsy_literal(c, src));
                let is_true = cond.is_some_and(ast::is_true);
                if is_false
                    && let Some(body) = n
                        .child_by_field_name("consequence")
                        .or_else(|| n.child_by_field_name("body"))
                {
                    dead.push((body.start_byte(), body.end_byte()));
                }
                if is_true && n.kind() == "if_statement" {
                    let mut c = n.walk();
                    for alt in n.children_by_field_name("alternative", &mut c) {
                        dead.push((alt.start_byte(), alt.end_byte()));
                    }
                }
            }
            _ => {}
        }
        true
    });
    dead
}

/// Byte ranges of the regions the parser could not make sense of.
fn broken_ranges(root: Node<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if !root.has_error() {
        return out;
    }
    ast::walk(root, &mut |n| {
        if n.is_error() {
            out.push((n.start_byte(), n.end_byte()));
            return false;
        }
        n.has_error()
    });
    out
}

/// One `syntax-error` per broken region or missing token, at most `MAX_SYNTAX_ERRORS`.
fn syntax_errors(root: Node<'_>, src: &str, path: &Path, lines: &LineIndex) -> Vec<Finding> {
    let mut errors: Vec<(usize, String)> = Vec::new();
    if !root.has_error() {
        return Vec::new();
    }
    ast::walk(root, &mut |n| {
        if n.is_error() {
            let snippet: String = ast::text(n, src)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .chars()
                .take(40)
                .collect();
            errors.push((
                n.start_byte(),
                format!("syntax error: unexpected `{snippet}`"),
            ));
            return false;
        }
        if n.is_missing() {
            errors.push((
                n.start_byte(),
                format!("syntax error: missing `{}`", n.kind()),
            ));
            return false;
        }
        n.has_error()
    });
    let total = errors.len();
    let mut out: Vec<Finding> = errors
        .into_iter()
        .take(MAX_SYNTAX_ERRORS as usize)
        .map(|(byte, message)| {
            let (line, column) = lines.place(src, byte);
            finding("syntax-error", &message)
                .at(path, line, column)
                .evidence(format!("`{}`", lines.line_text(src, line)))
                .fix("correct the syntax here; the rest of the file was linted")
        })
        .collect();
    let shown = out.len();
    if total > shown
        && let Some(last) = out.last_mut()
    {
        last.message.push_str(&format!(
            " ({} more syntax errors after this one)",
            total - shown
        ));
    }
    out
}

/// `# gpufeed: ignore[a, b]` comments: the ids silenced on each line, and a finding for
/// each id that is not a lint rule.
fn suppressions(
    root: Node<'_>,
    src: &str,
    path: &Path,
    lines: &LineIndex,
) -> (HashMap<usize, HashSet<String>>, Vec<Finding>) {
    let mut map: HashMap<usize, HashSet<String>> = HashMap::new();
    let mut unknown = Vec::new();
    ast::walk(root, &mut |n| {
        if n.kind() != "comment" {
            return true;
        }
        let comment = ast::text(n, src);
        let Some(ids) = ignore_ids(comment) else {
            return false;
        };
        let (line, column) = lines.place(src, n.start_byte());
        for id in ids {
            if !is_lint_rule(&id) {
                unknown.push(
                    finding(
                        "ignore-unknown-rule",
                        &format!("`# gpufeed: ignore[{id}]` names no lint rule"),
                    )
                    .at(path, line, column)
                    .evidence(format!("`{}`", comment.trim()))
                    .fix("use an id from `gpufeed lint` output (see `gpufeed lint --help`)"),
                );
            }
            map.entry(line).or_default().insert(id);
        }
        false
    });
    (map, unknown)
}

/// The ids of a `gpufeed: ignore[...]` comment (spaces allowed around the colon).
fn ignore_ids(comment: &str) -> Option<Vec<String>> {
    let at = comment.find("gpufeed")?;
    let rest = comment[at + "gpufeed".len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix("ignore")?.trim_start();
    let rest = rest.strip_prefix('[')?;
    let end = rest.find(']')?;
    Some(
        rest[..end]
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
    )
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
    fn crate_docs_list_every_rule_of_lint() {
        use gpufeed_findings::{Origin, rules::missing_from_docs};
        let missing = missing_from_docs(include_str!("lib.rs"), |o| o == Origin::Lint);
        assert_eq!(missing, Some(Vec::new()), "lib.rs docs miss these rules");
    }

    pub(super) fn ids(src: &str) -> Vec<(&'static str, usize)> {
        let mut v: Vec<_> = lint_source(src, Path::new("t.py"))
            .into_iter()
            .map(|f| (f.id, f.line.unwrap_or(0)))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn a_device_is_read_no_further_than_the_cap() {
        let zero = Path::new("/dev/zero");
        if !zero.exists() {
            return;
        }
        let findings = lint_file(zero);
        let [f] = findings.as_slice() else {
            panic!("{findings:?}");
        };
        assert_eq!(f.id, "file-not-linted");
        assert!(f.message.contains("larger than 10 MiB"), "{}", f.message);
    }

    #[test]
    fn ignore_comment_forms() {
        assert_eq!(
            ignore_ids("# gpufeed: ignore[a, b]"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(ignore_ids("#gpufeed:ignore[a]"), Some(vec!["a".into()]));
        assert_eq!(ignore_ids("# gpufeed ignore a"), None);
        assert_eq!(ignore_ids("# noqa"), None);
    }

    #[test]
    fn suppression_and_unknown_ids() {
        let src = "import time\nfor b in loader:\n    loss.backward()\n    time.sleep(1)  # gpufeed: ignore[sleep-in-loop]\n";
        assert_eq!(ids(src), vec![]);
        let src = "import time\nfor b in loader:\n    loss.backward()\n    time.sleep(1)  # gpufeed: ignore[sleep]\n";
        assert_eq!(
            ids(src),
            vec![("ignore-unknown-rule", 4), ("sleep-in-loop", 4)]
        );
        // A string that looks like the comment silences nothing.
        let src = "import time\nfor b in loader:\n    loss.backward()\n    time.sleep(1); s = '# gpufeed: ignore[sleep-in-loop]'\n";
        assert_eq!(ids(src), vec![("sleep-in-loop", 4)]);
    }

    #[test]
    fn dead_code_and_strings_never_trigger() {
        let src = "\
import time
def f():
    return 1
    time.sleep(1)
for b in loader:
    loss.backward()
    if False:
        time.sleep(1)
    if 0:
        print(loss.item())
    '''time.sleep(1) in a docstring'''
    # time.sleep(1)
    continue
    time.sleep(2)
";
        assert_eq!(ids(src), vec![]);
    }

    #[test]
    fn syntax_errors_are_reported_and_the_rest_linted() {
        let src = "\
import time
x = = 1
def broken(:
    pass
for b in loader:
    loss.backward()
    time.sleep(1)
";
        assert_eq!(
            ids(src),
            vec![
                ("sleep-in-loop", 7),
                ("syntax-error", 2),
                ("syntax-error", 3)
            ]
        );
        // An unclosed bracket swallows the rest of the file (Python too says the bracket
        // "was never closed"): one error, and nothing inside it is reported.
        let src =
            "import time\nx = (1 +\nfor b in loader:\n    loss.backward()\n    time.sleep(1)\n";
        assert_eq!(ids(src), vec![("syntax-error", 2)]);
    }

    #[test]
    fn evidence_quotes_a_whole_statement_over_several_lines() {
        let code = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(\n    ds,\n    batch_size=8,\n)\n";
        let f = lint_source(code, Path::new("t.py"));
        let workers = f
            .iter()
            .find(|f| f.id == "torch-loader-no-workers")
            .map(|f| f.evidence.clone())
            .unwrap_or_default();
        assert!(
            workers.starts_with("`loader = DataLoader(ds, batch_size=8,)`"),
            "{workers}"
        );
    }

    #[test]
    fn columns_count_characters() {
        let src = "import time\nfor é in loader:\n    loss.backward(); é = 'é'; time.sleep(1)\n";
        let f = lint_source(src, Path::new("t.py"));
        assert_eq!((f[0].line, f[0].column), (Some(3), Some(31)));
    }

    #[test]
    fn bom_is_skipped() {
        let src = "\u{feff}import time\nfor b in l:\n    loss.backward()\n    time.sleep(1)\n";
        assert_eq!(ids(src), vec![("sleep-in-loop", 4)]);
    }
}
