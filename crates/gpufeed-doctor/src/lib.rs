//! gpufeed's checks: every check yields [`Finding`]s with a stable rule id, a severity, the
//! place, the evidence, why it matters and the fix. `gpufeed validate` checks the trainer's
//! YAML ([`validate`], [`fix`]); `gpufeed lint` checks Python training code with a real
//! parser ([`lint`]); `gpufeed doctor` checks the GPUs, the host, the data's storage, the
//! frameworks, the environment and a short loader run, plus both of the others
//! ([`doctor`]); [`render`] formats a [`Report`] as text, JSON or Markdown.
//!
//! ```
//! use std::path::Path;
//! use gpufeed_doctor::render::{Json, Renderer};
//! use gpufeed_doctor::{Report, lint, validate};
//!
//! let code = "\
//! import torch
//! from torch.utils.data import DataLoader
//! loader = DataLoader(ds, batch_size=32)
//! for batch in loader:
//!     loss = model(batch)
//!     loss.backward()
//!     print(loss.item())
//! ";
//! let findings = lint::lint_source(code, Path::new("train.py"));
//! let ids: Vec<&str> = findings.iter().map(|f| f.id).collect();
//! assert!(ids.contains(&"torch-loader-no-workers"));
//! assert!(ids.contains(&"host-sync-in-loop"));
//!
//! let v = validate::validate_text("data:\n  num_workers: 0\n", Path::new("c.yaml"),
//!     &validate::Context::default());
//! let report = Report::new(v.findings);
//! assert_eq!(report.exit_code(), 0); // warnings only
//! assert!(Json.render(&report).starts_with("{\"schema_version\":1,\"findings\":["));
//! ```
//!
//! Exit codes (docs/contract.md, ruff's convention): [`Report::exit_code`] is 1 when any
//! finding has error severity, else 0; a file that cannot be read at all is the binary's
//! exit code 2.
//!
//! # Rules
//!
//! Ids are stable (scripts and `# gpufeed: ignore[...]` comments name them). Each finding's
//! message says what was found and why it matters; `evidence` holds the values or code seen;
//! `fix` is YAML to paste (config), code (lint), or a command. The thresholds the rules
//! compare with are in gpufeed's one table, `gpufeed_stats::thresholds`; the checkers'
//! input limits and MyXTTS' defaults are in [`constants::TABLE`], each with its source.
//!
//! ## `validate`: whose config is it
//!
//! [`validate::trainers`] holds one table of trainers, each with the keys that mark its
//! configs, the key names under which it sets what gpufeed understands, and their source.
//! A file is read as YAML or JSON (`//` comments blanked, spans kept;
//! `gpufeed_config::outline`) and scored: 2 points per marker of a trainer (2 markers at
//! least), 1 per MyXTTS section (`model`, `data`, `training`) and per key of MyXTTS'
//! schema; the highest wins, MyXTTS on a tie, and an empty file is MyXTTS' defaults. A
//! MyXTTS config gets every rule below. Another trainer's config gets only the rules on its
//! own keys (`loader-in-main-thread`, `num-workers-above-cores`, `num-workers-low`,
//! `batch-size-small`, `dynamic-shapes`, `pin-memory-off`, `prefetch-disabled`,
//! `mixed-precision-off`, `feature-cache-off`, `config-yaml11-boolean`) and one
//! `config-trainer` info line; a file with no trainer's keys gets one `config-unrecognised`.
//!
//! Findings about cores are judged against [`validate::Context`]'s cores: the training
//! machine's (`validate --cores N`, and `doctor`, which measures the machine it runs on)
//! give warnings; this machine's, without `--cores`, give info saying it is an assumption.
//!
//! ## `validate`: loading (from `gpufeed-config`)
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
//! | `config-unknown-key` | warning | MyXTTS rejects unknown keys, gpufeed ignores them: a typo leaves the default in force | rename to the suggestion (**`--fix`** when the suggestion is in the same section, not already set, and takes the key's value; else the finding says why not) |
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
//! ## `validate`: data pipeline and GPU settings
//!
//! | id | severity | fires when | why | fix (advice; never applied by `--fix`) |
//! |---|---|---|---|---|
//! | `config-trainer` | info | the file is another trainer's config (markers of `validate::trainers::TRAINERS`: Coqui TTS, ESPnet, NeMo, Lightning-Hydra, F5-TTS, TensorFlowTTS, FastSpeech2, VITS, HiFi-GAN, StyleTTS2) | says which trainer, what was checked under its key names, and that MyXTTS' rules do not apply | - |
//! | `config-unrecognised` | info | no trainer's markers and no MyXTTS section | nothing was checked (exit 0) | pass the training config |
//! | `pin-memory-off` | info | another trainer's `pin_memory` key is false | the copy to the GPU cannot overlap compute | `true` |
//! | `feature-cache-off` | info | another trainer's cache key is false (`allow_cache`, `compute_input_seq_cache`) | recomputed every epoch | `true` |
//! | `tf-native-loading-off` | warning | `data.use_tf_native_loading: false` | MyXTTS decodes with librosa inside `tf.numpy_function`, under the GIL, one item at a time (the seeds' 2-40 % oscillation) | `gpufeed precompute`, or `use_tf_native_loading: true` (its features differ: HTK, [0, 1]) |
//! | `gpu-prefetch-off` | warning | one GPU and `prefetch_to_gpu` or `enhanced_gpu_prefetch` false | no `prefetch_to_device`: the copy does not overlap the step | both `true` |
//! | `loader-in-main-thread` | warning | `data.num_workers: 0` | batches are built between steps | `num_workers: N` |
//! | `num-workers-above-cores` | warning (info when the cores are only this machine's: no `--cores`, not `doctor`) | `num_workers` above the training machine's cores | threads time-slice the CPU (PyTorch's DataLoader warns too) | at most the cores |
//! | `num-workers-low` | info | `num_workers` below 8 and below the cores | may not keep up (seeds' minimum 8; measure with `profile data --benchmark`) | 8, up to the cores |
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
//!
//! `--fix` applies only the edits marked **`--fix`** above: they change how a value is
//! spelled, never what it means, so they are safe without asking. Rules that change what
//! the trainer does (prefetch, graph mode, caps, workers) stay advice: the user decides.
//!
//! ## `lint`: Python training code
//!
//! Rules work on the tree-sitter syntax tree, so strings, comments and docstrings never
//! match; code after `return`/`raise`/`break`/`continue` in a block and under
//! `if False:`/`if 0:`/`while False:` is dead and never reported. Names are resolved
//! through the file's imports (`import tensorflow as tf`, `from torch.utils.data import
//! DataLoader as DL`), with the usual aliases (`tf`, `torch`, `np`) when not imported.
//! A *training loop* is the innermost `for`/`while` whose body (not a nested loop's or
//! function's) calls `.backward()`, `opt.step()` (a receiver named like an optimizer or
//! scaler, not a scheduler), `.apply_gradients()`, `tape.gradient()`, `.minimize()`,
//! `train_on_batch()` or a `*train_step*` function, or a `for` loop over something named
//! like a loader or dataset whose calls reach such a call in the project's functions; code
//! under an `if` whose condition uses `%` (`if step % 100 == 0:`) runs every N steps and is
//! not reported by the loop rules.
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
//! its path inside the linted folder or a unique suffix of it; relative imports included),
//! `self.method` in the class and its bases, else a function name defined once in the
//! project (or once among the files the caller imports). From each training loop, the
//! per-step host syncs of the functions it calls are found (`MAX_CALL_DEPTH` calls deep,
//! `MAX_FUNCTIONS_PER_ROOT` functions per loop, cycles visited once), and the first sync of
//! each step is named as such; a parameter that receives a tensor, and the values of
//! `for k, v in losses.items()`, are tensors. From every `__getitem__`, the `__call__` of
//! `*Collate*` classes, every function or object given as `collate_fn`, and functions
//! passed to `Dataset.map`, per-item decoding and features are found the same way. The
//! evidence shows the call chain: `train.py:11 trainer.train_step -> lib/trainer.py:16
//! log_losses -> lib/logs.py:6 scalar -> lib/logs.py:10 .item()`. Over `MAX_PROJECT_FILES`
//! files, each file is linted on its own.
//!
//! **Not the training path**: a finding inside `if __name__ == "__main__":` (unless that
//! block holds a training loop), in a test (`test_*.py`, `*_test.py`, `conftest.py`, a
//! `test`/`tests` folder) or in an example (an `example(s)`/`demo(s)` folder) is info, and its
//! message says why; so is one reached through calls from a loop or per-item function there.
//!
//! | id | severity | fires on | why | fix |
//! |---|---|---|---|---|
//! | `tf-py-function-in-map` | warning | `tf.numpy_function`/`tf.py_function` inside a function passed to `.map` (lambda, function or method of the file, through `functools.partial`, following calls 3 deep) | Python under the GIL: the parallel map runs one item at a time | TensorFlow ops, or precompute |
//! | `tf-map-sequential` | warning | `.map` on a `tf.data` dataset without `num_parallel_calls` (keyword or second positional argument), or with `None`/`1` | one item at a time | `num_parallel_calls=tf.data.AUTOTUNE` |
//! | `tf-no-prefetch` | warning | a batched `tf.data` pipeline with no `prefetch`, iterated (`for`, `iter`, `enumerate`, `.fit`, `.evaluate`, `.predict`, `experimental_distribute_dataset`) or returned without a caller in the file adding `prefetch` | input and compute never overlap | `.prefetch(tf.data.AUTOTUNE)` last |
//! | `tf-after-prefetch-to-device` | warning | any transformation after `prefetch_to_device`/`copy_to_device` on some path (not in an exclusive branch) | it must be the final one (TF docs) | move it last |
//! | `tf-cache-after-random` | warning | `.cache()` after `.shuffle()` or after a map whose function calls `tf.random.*`, `tf.image.random_*`, `np.random.*` or `random.*` | the first epoch's randomness is frozen | `.cache()` first |
//! | `tf-function-retracing` | warning | `@tf.function`/`tf.function(f)` on a function named like a train step (`*step*`, `*train*`) without `input_signature` or `reduce_retracing=True` | retraced (recompiled) for each new input shape | `input_signature=[...]` |
//! | `torch-loader-no-workers` | warning | `DataLoader(...)` without `num_workers` or with `num_workers=0` | loading between steps in the training process | `num_workers=8` |
//! | `torch-loader-no-pin-memory` | warning | `DataLoader` without `pin_memory=True` in a file that uses CUDA (`.cuda()`, `"cuda"` devices) | the copy cannot overlap compute | `pin_memory=True`, `non_blocking=True` |
//! | `torch-loader-no-persistent-workers` | info | `DataLoader` with workers but no `persistent_workers=True` | workers restart every epoch | `persistent_workers=True` |
//! | `torch-data-parallel` | warning | `torch.nn.DataParallel(...)` | single-process scatter/gather every step | `DistributedDataParallel` |
//! | `host-sync-in-loop` | warning | `.item()`, `.numpy()`, `.cpu()`, `.tolist()`, `float(t)`, `print(t)` (an f-string too) in a training loop or in a function of the project it calls every step (the chain in the evidence; the first sync of each step says so); `t` is tensor-like: the receiver of `.backward()`, named like a loss/logits/output/prediction, assigned from a call of a model, net, criterion, loss or step, a value of such a dict, or a parameter given one | the GPU queue drains every step | accumulate on the device; read every N steps |
//! | `cuda-sync-in-loop` | warning | `torch.cuda.synchronize()`, `torch.cuda.empty_cache()` in a training loop | drains the queue / re-allocates every step | delete it |
//! | `sleep-in-loop` | warning | `time.sleep(...)` in a training loop | the GPU idles for the sleep | delete it |
//! | `decode-per-item` | warning | audio or image decoding, resampling or features (`librosa.load`/`stft`/`resample`/`feature.*`, `soundfile.read`, `torchaudio.load`, `torch.stft`, `torchaudio.functional.resample`, `scipy.io.wavfile.read`, `pyworld`, `PIL.Image.open`, `cv2.imread`, ...) reached from `__getitem__`, a `collate_fn` or a mapped function, through the project's functions | the same work every epoch on the CPU | precompute; load arrays |
//! | `decode-per-item-few-workers` | warning | a `DataLoader` with `num_workers` 0, 1 or unset whose dataset's `__getitem__` (or `collate_fn`) reaches decoding or features, through the project's functions | one process does every item's work in turn | `num_workers=8`, or precompute |
//! | `syntax-error` | error | a Python syntax error (up to 10 per file) | Python cannot run it; the rest was linted | correct it |
//! | `file-not-linted` | error | binary, not UTF-8, unreadable, or over 10 MiB | nothing was linted | pass Python sources |
//! | `ignore-unknown-rule` | warning | `# gpufeed: ignore[x]` with an unknown `x` | it silences nothing | a real id |
//!
//! `# gpufeed: ignore[RULE]` (several: `ignore[a, b]`) in a comment on the line a finding
//! starts silences it. Folders are walked for `*.py`, skipping hidden folders,
//! `__pycache__`, `node_modules`, `site-packages`, `venv`, `build` and `dist`; symbolic links
//! to folders are not followed. A file given by name is linted whatever its extension.
//!
//! ## `doctor`: the machine, the data and the environment
//!
//! Each check collects facts, then pure rules judge them (see [`doctor`]). Every check
//! reports what it read as an info finding (`gpu-inventory`, `host-summary`,
//! `storage-summary`, `framework-found`, `runtime-loader-stable`), so the report shows what
//! was measured even when nothing is wrong. Thresholds are in `gpufeed_stats::thresholds`
//! (`POWER_LIMIT_LOW_RATIO`, `LOAD_PER_CORE_HIGH`, `SWAP_IN_USE_MIB`, `SEQ_READ_SLOW_MB_S`,
//! `RANDOM_READ_IOPS_LOW`, `MANY_FILES`, `SMALL_FILE_MEAN_KIB`, `TENSOR_CORE_MIN_CC`); the
//! measuring budgets (bytes and seconds read, probe timeout) in [`constants::TABLE`].
//!
//! | id | severity | fires when | fix |
//! |---|---|---|---|
//! | `gpu-no-driver` | info | NVML cannot be loaded (no NVIDIA driver) | install the driver, or nothing on a machine without NVIDIA GPUs |
//! | `gpu-not-found` | info | the driver lists no GPU | `nvidia-smi`, `dmesg`; `--gpus all` in a container |
//! | `gpu-nvml-error` | warning | NVML fails after loading | `nvidia-smi`; reboot after a driver upgrade |
//! | `gpu-inventory` | info | always, per GPU: model, memory, driver, CUDA, PCIe, persistence, power, clocks, throttle, ECC, MIG, processes | - |
//! | `gpu-pcie-degraded` | warning | fewer PCIe lanes than the maximum, or (not idle) an older generation | a x16 slot wired to the CPU; BIOS settings |
//! | `gpu-unreachable` | error | NVML lists a GPU but cannot open it (`GPU is lost`) | `dmesg` for Xid; `nvidia-smi -r`; reboot |
//! | `gpu-persistence-off` | info | persistence mode off | `nvidia-smi -pm 1` |
//! | `gpu-power-limit-low` | warning | power limit below `POWER_LIMIT_LOW_RATIO` of the default | `nvidia-smi -pl DEFAULT` |
//! | `gpu-throttled` | warning | an active throttle reason other than `gpu_idle` | as the reason says |
//! | `gpu-ecc-errors` | error | uncorrected (volatile) ECC errors | reset or replace the GPU |
//! | `gpu-mig-enabled` | warning | MIG mode on | `nvidia-smi -mig 0`, or size for the instance |
//! | `gpu-memory-held` | warning | another process has a compute context holding memory | stop it, or another GPU |
//! | `host-summary` | info | always: cores, RAM, swap, governor, load, data and cache sizes | - |
//! | `host-ram-below-data` | warning | what an epoch reads (the cache, else the data) exceeds `MemAvailable` | a smaller cache, more RAM, faster storage |
//! | `host-swap-in-use` | warning | swap in use above `SWAP_IN_USE_MIB` | use less memory |
//! | `host-cpu-powersave` | warning | governor `powersave` (or, with intel_pstate/amd-pstate-epp, energy preference `power`) | `cpupower frequency-set -g performance` |
//! | `host-load-high` | warning | 1-minute load at or above `LOAD_PER_CORE_HIGH` per core | find the load; stop the training before running doctor |
//! | `storage-summary` | info | always, per folder: files, mount, device, sequential MB/s, random 4 KiB reads/s, bypass method | - |
//! | `storage-rotational` | warning | `queue/rotational` is 1, unless measured random reads reach `RANDOM_READ_IOPS_LOW` (virtual disks are often marked rotational) | an SSD |
//! | `storage-network-fs` | warning | nfs, cifs/smb, 9p, ceph, lustre, virtiofs, `fuse.*`, ... | copy to a local disk |
//! | `storage-slow-sequential` | warning | cold sequential reads below `SEQ_READ_SLOW_MB_S` (at least 16 MiB read) | a local SSD; precompute |
//! | `storage-slow-random` | warning | cold random 4 KiB reads below `RANDOM_READ_IOPS_LOW` per second (at least 32 reads) | an SSD; precompute |
//! | `storage-not-measured` | info | neither `O_DIRECT` nor `posix_fadvise` works, or no file to read | `fio --direct=1` |
//! | `storage-many-small-files` | warning | at least `MANY_FILES` files, mean below `SMALL_FILE_MEAN_KIB`, no cache beside | `gpufeed precompute` |
//! | `framework-python-missing` | info | `python3` (or `GPUFEED_PYTHON`) cannot be started | activate the environment |
//! | `framework-not-installed` | info | `find_spec` finds no `tensorflow` / `torch` / `jax` | - |
//! | `framework-found` | info | a probe answered: version, GPUs, CUDA/cuDNN, XLA, mixed precision | - |
//! | `framework-probe-hang` | warning | a probe does not answer within `PROBE_TIMEOUT_S` (killed) | `python3 -X importtime -c 'import X'` |
//! | `framework-probe-failed` | warning | a probe's import fails, or its half-precision product on the GPU fails | run the import |
//! | `framework-no-gpu` | warning | a framework sees no GPU while NVML lists one | the CUDA build of the framework |
//! | `framework-xla-broken` | warning | a one-line XLA function fails to compile and run (TensorFlow, JAX) | the CUDA toolkit's `ptxas` |
//! | `framework-no-tensor-cores` | info | a GPU below compute capability `TENSOR_CORE_MIN_CC` | - |
//! | `env-cuda-visible-devices-empty` | error | `CUDA_VISIBLE_DEVICES` empty, or its first entry names no GPU (with GPUs present) | unset it |
//! | `env-cuda-visible-devices-invalid` | error | a later entry names no GPU (CUDA hides it and the rest) | list GPUs that exist |
//! | `env-tf-allow-growth-invalid` | warning | `TF_FORCE_GPU_ALLOW_GROWTH` neither `true` nor `false` | `true` |
//! | `env-tf-allow-growth-off` | info | TensorFlow installed, allow-growth unset or `false` | `true` when the GPU is shared |
//! | `env-tf-gpu-thread-mode` | info | TensorFlow installed, `TF_GPU_THREAD_MODE` not `gpu_private` | `gpu_private` |
//! | `env-pytorch-alloc-conf-invalid` | warning | a `PYTORCH_CUDA_ALLOC_CONF` entry that is not `known_key:value` | `expandable_segments:True` |
//! | `env-pytorch-expandable-segments` | info | PyTorch installed, `PYTORCH_CUDA_ALLOC_CONF` unset | `expandable_segments:True` |
//! | `env-omp-invalid` | warning | `OMP_NUM_THREADS` not a positive integer | a positive integer |
//! | `env-omp-oversubscribed` | warning | `OMP_NUM_THREADS` × the config's `num_workers` above the cores | cores / workers |
//! | `runtime-no-cache` | info | `--data` has no complete precomputed cache | `gpufeed precompute --data DIR`, then doctor again |
//! | `runtime-loader-stable` | info | the short loader run is `stable` | - |
//! | `runtime-loader-oscillating` | warning | a worker's time per batch is `oscillating` (a cycle) | `gpufeed profile data --benchmark` |
//! | `runtime-loader-unstable` | info | a worker's time per batch is `unstable` (no cycle) | `gpufeed profile data --consumer-ms STEP` |
//! | `runtime-failed` | warning | the loader fails on the cache | `gpufeed precompute` rebuilds it |
//!
//! `doctor --config FILE` adds every `validate` finding and `--code DIR` every `lint`
//! finding; `cores vs num_workers` is `validate`'s `num-workers-above-cores`.

pub mod constants;
pub mod doctor;
pub mod finding;
pub mod fix;
pub mod lint;
pub mod render;
pub mod rules;
pub mod validate;

pub use finding::{Counts, Finding, Report, Severity, TextEdit};
pub use rules::{Origin, RULES, Rule, rule_info};
