//! The rule registry: every finding id gpufeed emits, with its severity, why it matters and
//! the usual fix. The crate documentation is the user reference built from the same facts;
//! a test keeps the two in step.

use crate::check::Check;
use crate::finding::{Finding, Severity};

/// Which command emits a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `gpufeed-config` while loading the file (`validate`).
    Config,
    /// A data-pipeline or GPU rule on the loaded config (`validate`).
    Validate,
    /// A Python lint rule (`lint`).
    Lint,
    /// A check of `doctor` on the machine, the data or the environment.
    Doctor(Check),
}

/// One rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, as in the findings.
    pub id: &'static str,
    /// Severity of its findings.
    pub severity: Severity,
    /// Which command emits it.
    pub origin: Origin,
    /// Why it matters: one sentence, lowercase, no final period; appended to messages.
    pub why: &'static str,
    /// The usual fix.
    pub fix: &'static str,
}

const fn rule(
    id: &'static str,
    severity: Severity,
    origin: Origin,
    why: &'static str,
    fix: &'static str,
) -> Rule {
    Rule {
        id,
        severity,
        origin,
        why,
        fix,
    }
}

use Origin::{Config, Doctor, Lint, Validate};
use Severity::{Error, Info, Warning};

/// Every rule, grouped by origin.
pub const RULES: &[Rule] = &[
    // ---- gpufeed-config: loading errors ----
    rule(
        "config-syntax",
        Error,
        Config,
        "the trainer cannot read a file that is not valid YAML",
        "correct the YAML at the line shown (indent with spaces, close quotes and brackets)",
    ),
    rule(
        "config-not-utf8",
        Error,
        Config,
        "YAML files are UTF-8 text; the trainer's reader fails on other bytes",
        "save the file as UTF-8",
    ),
    rule(
        "config-multiple-documents",
        Error,
        Config,
        "the trainer reads one YAML document; the others are ignored or rejected",
        "keep one document (delete the `---` separators)",
    ),
    rule(
        "config-too-large",
        Error,
        Config,
        "a file this large or this deeply nested is not a training config (a dataset or checkpoint passed by mistake?)",
        "pass the training config file",
    ),
    rule(
        "config-not-a-mapping",
        Error,
        Config,
        "the trainer reads `model`, `data` and `training` from a mapping at the top of the file",
        "write the config as `section:` mappings of `key: value` lines",
    ),
    rule(
        "config-duplicate-key",
        Error,
        Config,
        "PyYAML silently keeps the last of two equal keys, so the first one is ignored",
        "delete one of the two keys",
    ),
    rule(
        "config-complex-key",
        Error,
        Config,
        "a key must be a plain name",
        "write the key as a plain name",
    ),
    rule(
        "config-bad-merge",
        Error,
        Config,
        "a merge key (`<<`) must point at a mapping",
        "point `<<` at a mapping anchor",
    ),
    rule(
        "config-wrong-type",
        Error,
        Config,
        "the trainer's dataclasses do not convert types, so a value of the wrong type fails or misbehaves at run time",
        "write a value of the type the message names",
    ),
    rule(
        "config-invalid-value",
        Error,
        Config,
        "the value cannot work (out of range, or inconsistent with another key)",
        "change the value as the message says",
    ),
    // ---- gpufeed-config: warnings ----
    rule(
        "config-unknown-key",
        Warning,
        Config,
        "MyXTTS' dataclasses reject unknown keys (TypeError) and gpufeed ignores them, so a typo silently leaves the default in force",
        "rename the key to the suggestion, or delete it",
    ),
    rule(
        "config-float-is-string-for-pyyaml",
        Warning,
        Config,
        "PyYAML (YAML 1.1) reads `1e-4` as the string \"1e-4\", so the trainer gets text where it expects a number",
        "write the mantissa with a dot and the exponent with a sign (`1.0e-4`); `--fix` does it",
    ),
    rule(
        "config-number-differs-in-pyyaml",
        Warning,
        Config,
        "PyYAML and YAML 1.2 read this number differently (a leading zero is octal for PyYAML)",
        "write the number as both read it; `--fix` does it",
    ),
    rule(
        "config-yaml11-boolean",
        Warning,
        Config,
        "`yes`/`no`/`on`/`off` are booleans for PyYAML but strings for YAML 1.2 readers",
        "write `true` or `false`; `--fix` does it",
    ),
    rule(
        "config-not-a-string-for-pyyaml",
        Warning,
        Config,
        "PyYAML reads this plain value as another type (`language: no` is False)",
        "quote the value; `--fix` does it",
    ),
    rule(
        "config-sections-disagree",
        Warning,
        Config,
        "the same setting in two sections with different values: one part of the trainer uses one, another the other",
        "make the two values equal",
    ),
    rule(
        "config-empty-mel-filters",
        Warning,
        Config,
        "more mel bands than FFT bins leaves some mel filters empty",
        "lower `n_mels` or raise `n_fft`",
    ),
    rule(
        "config-two-text-caps",
        Warning,
        Config,
        "MyXTTS cuts tokens at `max_text_tokens` but pads to `max_text_length`",
        "set both to the same value",
    ),
    rule(
        "config-splits-overlap",
        Warning,
        Config,
        "train and validation splits add up to more than the data",
        "make `train_split + val_split` at most 1",
    ),
    rule(
        "config-heads-do-not-divide",
        Warning,
        Config,
        "attention splits the width evenly across heads",
        "make the width a multiple of the heads",
    ),
    rule(
        "config-cleaners",
        Warning,
        Config,
        "gpufeed and the trainer would clean text differently, so tokens differ",
        "make `cleaner` and `text_cleaners` agree",
    ),
    rule(
        "config-min-learning-rate",
        Warning,
        Config,
        "a floor above the peak makes the schedule raise the rate",
        "lower `min_learning_rate` below `learning_rate`",
    ),
    // ---- validate: data pipeline and GPU ----
    rule(
        "config-trainer",
        Info,
        Validate,
        "gpufeed checks another trainer's config only for the loader, batch, shape, memory, precision and caching settings it understands, and reports how often the loop pauses to evaluate, under that trainer's key names (or, for a trainer it does not know, the `DataLoader` arguments' names wherever they are)",
        "nothing to do; `gpufeed lint` checks the training code",
    ),
    rule(
        "config-unrecognised",
        Info,
        Validate,
        "gpufeed recognises a config by the keys of the trainers it knows, and this file has none of them",
        "pass the trainer's training config",
    ),
    rule(
        "config-python-unreadable",
        Info,
        Validate,
        "gpufeed reads a Python hparams file's literal settings with a Python 3 parser, and gets none from a file it cannot parse",
        "correct the Python at the line shown",
    ),
    rule(
        "persistent-workers-without-workers",
        Error,
        Validate,
        "PyTorch's DataLoader refuses `persistent_workers=True` with `num_workers=0` (\"persistent_workers option needs num_workers > 0\"): training stops before its first batch",
        "give the loader workers (`num_workers: N`), or set `persistent_workers: false`",
    ),
    rule(
        "pin-memory-off",
        Info,
        Validate,
        "without pinned host memory the copy of each batch to the GPU cannot overlap compute (PyTorch's DataLoader docs)",
        "set the trainer's `pin_memory` to true when it trains on CUDA",
    ),
    rule(
        "feature-cache-off",
        Info,
        Validate,
        "the trainer computes again every epoch what it could cache after the first",
        "turn the trainer's cache on, or precompute the features (`gpufeed precompute`)",
    ),
    rule(
        "tf-native-loading-off",
        Warning,
        Validate,
        "MyXTTS then decodes every clip with librosa inside `tf.numpy_function`, which holds the Python GIL, so the parallel map runs one item at a time; the seeds measured 2-40 % GPU utilisation this way",
        "precompute the features once (`gpufeed precompute --data DIR`), or `data: {use_tf_native_loading: true}` (note: MyXTTS' TF-native features are HTK mel scaled to [0, 1], unlike its librosa path)",
    ),
    rule(
        "gpu-prefetch-off",
        Warning,
        Validate,
        "MyXTTS then builds no `prefetch_to_device` stage: each batch is copied to the GPU only when the step asks for it, so the copy does not overlap the previous step",
        "data: {prefetch_to_gpu: true, enhanced_gpu_prefetch: true}",
    ),
    rule(
        "loader-in-main-thread",
        Warning,
        Validate,
        "with no loader workers every batch is read and padded in the training thread, between steps, while the GPU waits",
        "data: {num_workers: N} with N up to the number of cores (delete the key for one per core)",
    ),
    rule(
        "num-workers-above-cores",
        Warning,
        Validate,
        "more loader threads than cores time-slice the CPU with each other and with the training process's own threads (PyTorch's DataLoader warns for the same reason)",
        "data: {num_workers: CORES} or fewer",
    ),
    rule(
        "num-workers-low",
        Info,
        Validate,
        "few loader workers on a machine with more cores may not keep up with the GPU (the seeds' minimum is 8; `gpufeed profile data --benchmark` measures what is needed)",
        "data: {num_workers: 8} or more, up to the number of cores",
    ),
    rule(
        "prefetch-disabled",
        Warning,
        Validate,
        "with a prefetch depth of 0 no batch is prepared while the GPU computes, so loading and compute never overlap",
        "delete the key (gpufeed: 2 per worker; MyXTTS: 50), or set it to 2 or more",
    ),
    rule(
        "dynamic-shapes",
        Warning,
        Validate,
        "batches padded to their own longest item have a new shape almost every step, and a graph-mode or XLA step is traced and compiled again for each new shape while the GPU waits (MyXTTS' profiler retraced every step)",
        "data: {pad_to_fixed_length: true} (one static shape; check the caps with `gpufeed precompute`), or gpufeed's `pad_to_multiple_of: 64` to bound the number of shapes",
    ),
    rule(
        "text-cap-mismatch",
        Error,
        Validate,
        "MyXTTS truncates tokens at `max_text_tokens` but pads to `max_text_length`, so `padded_batch` fails with \"Attempted to pad to a smaller size\" on the first longer sentence; with blanks most LJSpeech sentences are over 200 tokens (research/myxtts.md section 3.5)",
        "data: {max_text_tokens: <max_text_length>}, or raise max_text_length above the longest tokenised text",
    ),
    rule(
        "batch-size-small",
        Info,
        Validate,
        "a small batch gives the GPU little work per step, so per-step launch and input overheads dominate (MyXTTS' validator warned below 16; `gpufeed profile step` shows samples/s)",
        "data: {batch_size: 32} if memory allows, or gradient accumulation",
    ),
    rule(
        "two-gpu-half-set",
        Warning,
        Validate,
        "two-GPU mode needs both `data_gpu` and `model_gpu`; with one set MyXTTS silently trains on one GPU",
        "set both to different GPUs, or delete both",
    ),
    rule(
        "gpu-index-out-of-range",
        Error,
        Validate,
        "a GPU index beyond the GPUs listed in `training.visible_gpus` does not exist inside the process (MyXTTS logs an error and falls back to one GPU)",
        "use indices 0..N-1 of the visible GPUs",
    ),
    rule(
        "two-gpu-data-gpu-idle",
        Info,
        Validate,
        "in MyXTTS' two-GPU mode the data GPU only holds prefetched batches: decoding and mel run on CPU tf.data threads, and with `--grad-accum 2` (the CLI default) the step runs eagerly under the data GPU (research/myxtts.md sections 0 and 4)",
        "train on one GPU (delete `data_gpu` and `model_gpu`), or use data parallelism over both",
    ),
    rule(
        "mixed-precision-off",
        Info,
        Validate,
        "float32 training does not use the Tensor Cores' float16/bfloat16 paths, which NVIDIA's mixed-precision guide reports up to 3x faster on Volta and later",
        "data: {mixed_precision: true} (where MyXTTS reads it)",
    ),
    rule(
        "xla-without-graph-mode",
        Error,
        Validate,
        "XLA compiles the graph-mode step; with graph mode off the step runs eagerly and `enable_xla_compilation` does nothing",
        "training: {enable_graph_mode: true}, or set enable_xla_compilation: false to say what runs",
    ),
    rule(
        "eager-train-step",
        Warning,
        Validate,
        "an eager train step dispatches every operation from Python, so the GPU waits for the host between kernels (TensorFlow guide: Better performance with tf.function)",
        "training: {enable_graph_mode: true}",
    ),
    rule(
        "eager-debug-on",
        Warning,
        Validate,
        "eager debugging runs every tf.function eagerly, which costs the speed of graph mode",
        "training: {enable_eager_debug: false}",
    ),
    rule(
        "xla-off",
        Info,
        Validate,
        "with static shapes XLA compiles the step once and fuses its element-wise operations, fewer kernel launches and memory round trips (TensorFlow XLA guide)",
        "training: {enable_xla_compilation: true}",
    ),
    rule(
        "myxtts-unread-key",
        Info,
        Validate,
        "changing a key the trainer never reads changes nothing in training (the seeds' tools checked and \"fixed\" such keys)",
        "change the key the trainer reads (the message names it), or delete this one",
    ),
    rule(
        "myxtts-rejects-key",
        Info,
        Validate,
        "MyXTTS builds its dataclasses with `DataConfig(**yaml['data'])`, which raises TypeError on a key it does not define (the shipped config crashed on `data.n_mels`)",
        "keep these keys out of the copy of the config MyXTTS reads",
    ),
    rule(
        "config-unhonoured-key",
        Warning,
        Validate,
        "gpufeed's precompute and loader do not read this key, so the feature cache is the same whatever it says, which can differ from what the trainer would build from it",
        "do beforehand what the key asks (the finding says how), or set the key to what the cache holds",
    ),
    // ---- lint ----
    rule(
        "tf-py-function-in-map",
        Warning,
        Lint,
        "`tf.numpy_function`/`tf.py_function` run Python under the GIL, so a parallel `Dataset.map` calling them processes one item at a time",
        "use TensorFlow ops in the map function (`tf.io.read_file`, `tf.audio.decode_wav`, `tf.signal.stft`), or precompute the features and load arrays",
    ),
    rule(
        "tf-map-sequential",
        Warning,
        Lint,
        "`Dataset.map` without `num_parallel_calls` runs the function on one item at a time (tf.data performance guide)",
        "ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    rule(
        "tf-no-prefetch",
        Warning,
        Lint,
        "without `prefetch` at the end of a pipeline the next batch is produced only when the step asks for it, so input and compute never overlap (tf.data performance guide)",
        "ds = ds.prefetch(tf.data.AUTOTUNE)  # last",
    ),
    rule(
        "tf-after-prefetch-to-device",
        Warning,
        Lint,
        "`prefetch_to_device` must be the final transformation (TensorFlow docs); a transformation after it runs on the host again and undoes the device prefetch",
        "move `prefetch_to_device` to the end of the pipeline",
    ),
    rule(
        "tf-cache-after-random",
        Warning,
        Lint,
        "`cache()` after a random transformation stores the first epoch's random result, so every later epoch sees the same augmentation or order (tf.data performance guide: cache before random transformations)",
        "call `.cache()` before `.shuffle()` and before random augmentation maps",
    ),
    rule(
        "tf-function-retracing",
        Warning,
        Lint,
        "a `tf.function` train step without `input_signature` is traced again (and with `jit_compile` compiled again) for every new input shape, so variable-length batches retrace while the GPU waits",
        "@tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32), ...]) or reduce_retracing=True",
    ),
    rule(
        "torch-loader-no-workers",
        Warning,
        Lint,
        "a DataLoader without workers (`num_workers=0`, the default) loads every batch in the training process, between steps, while the GPU waits",
        "DataLoader(..., num_workers=8)  # up to the number of cores",
    ),
    rule(
        "torch-loader-no-pin-memory",
        Warning,
        Lint,
        "without pinned memory the host-to-GPU copy goes through a staging buffer and cannot overlap compute (`non_blocking=True` needs pinned memory)",
        "DataLoader(..., pin_memory=True) and batch.to(device, non_blocking=True)",
    ),
    rule(
        "torch-loader-no-persistent-workers",
        Info,
        Lint,
        "without `persistent_workers` the worker processes are started again at every epoch, so each epoch begins with a stall",
        "DataLoader(..., persistent_workers=True)",
    ),
    rule(
        "torch-data-parallel",
        Warning,
        Lint,
        "`DataParallel` is single-process: one Python thread scatters inputs and gathers outputs every step; PyTorch recommends DistributedDataParallel even on one node",
        "torch.nn.parallel.DistributedDataParallel (one process per GPU, `torchrun`)",
    ),
    rule(
        "host-sync-in-loop",
        Warning,
        Lint,
        "`.item()`, `.numpy()`, `.cpu()`, `.tolist()`, `float(t)`, `math.isnan(t)`, `print(t)`, `\"{}\".format(t)`, `\"%f\" % t`, `max(1, t.max())`, `writer.add_scalar(tag, t)`, `if` on a tensor and results as large as the data says (`t.masked_select(m)`, `t.nonzero()`, `t[mask]`) wait for the GPU to finish and copy to the host, so every step drains the GPU queue",
        "keep values on the device (`total += loss.detach()`) and read them every N steps (`if step % 100 == 0:`)",
    ),
    rule(
        "cuda-sync-in-loop",
        Warning,
        Lint,
        "`torch.cuda.synchronize()` drains the GPU queue and `torch.cuda.empty_cache()` returns cached memory that the next step must allocate again, every step",
        "delete it from the loop (synchronize only around timing code, every N steps)",
    ),
    rule(
        "anomaly-detection-on",
        Warning,
        Lint,
        "autograd's anomaly mode records a traceback for every operation of the forward pass and checks every gradient of the backward pass for NaN on the host, which makes each step several times slower (PyTorch docs: \"only enable it for debugging\")",
        "remove `set_detect_anomaly(True)` / `detect_anomaly()` from training, or put it behind a debug flag that is off by default",
    ),
    rule(
        "ddp-gloo-on-cuda",
        Warning,
        Lint,
        "the gloo backend all-reduces CUDA tensors through host memory (a copy to the host, TCP between the processes, a copy back) at every step's gradient synchronisation; NCCL moves them between the GPUs directly (PyTorch's distributed docs: \"use the NCCL backend for distributed GPU training\")",
        "`dist.init_process_group(\"nccl\", ...)` for CUDA tensors; keep gloo for CPU training",
    ),
    rule(
        "sleep-in-loop",
        Warning,
        Lint,
        "`time.sleep` in the training loop leaves the GPU idle for the whole sleep, every step",
        "delete the sleep",
    ),
    rule(
        "decode-per-item",
        Warning,
        Lint,
        "decoding audio or images and computing features in `__getitem__`, a map function, an iterator's `__next__` or a loader thread repeats the same work every epoch on the CPU",
        "precompute once (`gpufeed precompute`) and load arrays (`np.load`, safetensors) per item",
    ),
    rule(
        "decode-per-item-few-workers",
        Warning,
        Lint,
        "with 0 or 1 loader workers one process decodes and transforms every item in turn, so the GPU waits for it (for images decoded per item, fewer than 4 workers: decoding and augmenting an image takes milliseconds of CPU)",
        "`num_workers=8` (up to the cores) with `persistent_workers=True`, or precompute the features (`gpufeed precompute`)",
    ),
    rule(
        "subprocess-per-item",
        Warning,
        Lint,
        "a process started for every item, every epoch (`os.system`, `subprocess.run`): its start-up alone costs milliseconds, and the loader waits for it",
        "convert the files once, before training (one command over the folder), or do the work in Python (`soundfile`, `librosa`) inside the worker",
    ),
    rule(
        "cache-key-never-hits",
        Warning,
        Lint,
        "the memo is tested with one key and filled under another, so the test never finds it and the work it guards (a mel filterbank built and copied to the GPU) runs on every call",
        "compute the key once and use it for both: `key = f\"{fmax}_{y.device}\"; if key not in cache: cache[key] = ...`",
    ),
    rule(
        "host-tensor-in-forward",
        Warning,
        Lint,
        "a tensor built on the CPU inside `forward` (or the training loop, or a helper or loss they call) and copied to the GPU costs a host allocation and a host-to-device copy in every call, every layer, every step",
        "create it on the device (`torch.arange(n, device=x.device)`), or once in `__init__` with `self.register_buffer(...)`",
    ),
    rule(
        "syntax-error",
        Error,
        Lint,
        "Python cannot run the file; the rest of it was still linted",
        "correct the syntax at the place shown",
    ),
    rule(
        "file-not-linted",
        Error,
        Lint,
        "the file could not be linted (binary, not UTF-8, unreadable or too large)",
        "pass Python source files",
    ),
    rule(
        "ignore-unknown-rule",
        Warning,
        Lint,
        "a `# gpufeed: ignore[...]` comment names a rule that does not exist, so it silences nothing",
        "use a rule id from `gpufeed lint` output",
    ),
    // ---- doctor ----
    rule(
        "gpu-no-driver",
        Info,
        Doctor(Check::Gpu),
        "without an NVIDIA driver no framework can use a GPU; the other GPU checks were skipped",
        "install the NVIDIA driver (`nvidia-smi` lists the GPUs when it works); nothing to do on a machine without NVIDIA GPUs",
    ),
    rule(
        "gpu-not-found",
        Info,
        Doctor(Check::Gpu),
        "the driver is loaded but lists no GPU, so training runs on the CPU",
        "check `nvidia-smi` and `dmesg` for a GPU that fell off the bus; in a container, pass the GPUs (`docker run --gpus all`)",
    ),
    rule(
        "gpu-nvml-error",
        Warning,
        Doctor(Check::Gpu),
        "NVML failed, so the GPU checks could not run (frameworks use the same driver)",
        "run `nvidia-smi`; a driver/library version mismatch after an upgrade needs a reboot",
    ),
    rule(
        "gpu-inventory",
        Info,
        Doctor(Check::Gpu),
        "what the GPU checks read",
        "nothing to change",
    ),
    rule(
        "gpu-pcie-degraded",
        Warning,
        Doctor(Check::Gpu),
        "a link with fewer lanes or an older generation than the card and slot support caps host-to-GPU copies (x16 gen4 moves about 32 GB/s, x4 gen1 about 1 GB/s), so every batch copy takes longer",
        "seat the card in a x16 slot wired to the CPU (not the chipset or a riser), check the BIOS PCIe settings, and confirm under load with `nvidia-smi -q -d PCIE`",
    ),
    rule(
        "gpu-unreachable",
        Error,
        Doctor(Check::Gpu),
        "a GPU the driver lists but cannot open runs nothing: a job placed on it fails at start, and a job that spans all GPUs fails with it",
        "`dmesg | grep -i xid` names the cause; `sudo nvidia-smi -r -i N` or a reboot, and CUDA_VISIBLE_DEVICES without it meanwhile",
    ),
    rule(
        "gpu-persistence-off",
        Info,
        Doctor(Check::Gpu),
        "without persistence mode the driver tears the GPU state down whenever no process uses it, so each start pays seconds of initialisation (NVIDIA driver persistence documentation)",
        "sudo nvidia-smi -pm 1  # or enable the nvidia-persistenced service",
    ),
    rule(
        "gpu-power-limit-low",
        Warning,
        Doctor(Check::Gpu),
        "a power limit below the board's default makes the GPU lower its clocks earlier under load",
        "sudo nvidia-smi -i N -pl DEFAULT_WATTS",
    ),
    rule(
        "gpu-throttled",
        Warning,
        Doctor(Check::Gpu),
        "the GPU holds its clocks down for a reason other than idling (power cap, heat, clock settings), so every step takes longer",
        "`nvidia-smi -q -d PERFORMANCE` names the reason: cooling for thermal, the power limit for power, `sudo nvidia-smi -rac` for application clocks",
    ),
    rule(
        "gpu-ecc-errors",
        Error,
        Doctor(Check::Gpu),
        "uncorrected ECC errors mean the GPU memory returned wrong data, so results may be corrupt",
        "nvidia-smi -q -d ECC,PAGE_RETIREMENT; drain the machine, reset the GPU (`sudo nvidia-smi -r -i N`), replace it if the errors come back",
    ),
    rule(
        "gpu-mig-enabled",
        Warning,
        Doctor(Check::Gpu),
        "with MIG on, a process gets one GPU instance (a fraction of the SMs and memory), and CUDA_VISIBLE_DEVICES must name a MIG instance",
        "sudo nvidia-smi -i N -mig 0  # when no instance is in use; or size the batch for the instance",
    ),
    rule(
        "gpu-memory-held",
        Warning,
        Doctor(Check::Gpu),
        "memory held by other processes is not available to the training, and their kernels share the SMs",
        "stop them (`nvidia-smi` lists them), or train on another GPU",
    ),
    rule(
        "host-summary",
        Info,
        Doctor(Check::Host),
        "what the host checks read",
        "nothing to change",
    ),
    rule(
        "host-ram-below-data",
        Warning,
        Doctor(Check::Host),
        "data larger than the memory available cannot stay in the page cache, so every epoch reads it again from storage at the speed the storage check measures",
        "precompute into a smaller cache (`gpufeed precompute`), add memory, or keep the data on faster storage",
    ),
    rule(
        "host-swap-in-use",
        Warning,
        Doctor(Check::Host),
        "swapped-out pages are read back from disk when touched, stalling the thread that touches them",
        "use less memory (fewer loader workers, a smaller prefetch) or add RAM; `vmstat 1` shows swapping (si/so)",
    ),
    rule(
        "host-cpu-powersave",
        Warning,
        Doctor(Check::Host),
        "the `powersave` governor (or the `power` energy preference) keeps the cores at low clocks, so the loader's per-item work takes longer",
        "sudo cpupower frequency-set -g performance",
    ),
    rule(
        "host-load-high",
        Warning,
        Doctor(Check::Host),
        "their work competes with the loader threads for the cores",
        "find them with `top`; if your training is running, this is its own load: run `gpufeed doctor` with it stopped",
    ),
    rule(
        "storage-summary",
        Info,
        Doctor(Check::Storage),
        "what the storage check read",
        "nothing to change",
    ),
    rule(
        "storage-rotational",
        Warning,
        Doctor(Check::Storage),
        "a hard disk seeks for every file and every random read (75-200 per second), so shuffled reads of many files starve the loader",
        "copy the data, or its `gpufeed precompute` cache, to an SSD",
    ),
    rule(
        "storage-network-fs",
        Warning,
        Doctor(Check::Storage),
        "a network or FUSE file system pays a round trip per open and per read, and its throughput depends on the network and other clients",
        "copy the dataset, or its `gpufeed precompute` cache, to a local disk before training",
    ),
    rule(
        "storage-slow-sequential",
        Warning,
        Doctor(Check::Storage),
        "reads from this folder, with the page cache bypassed, are too slow to feed a GPU from raw files in the first epoch (or every epoch when the data does not fit in memory)",
        "keep the data on a local SSD; `gpufeed precompute` makes a smaller cache to read instead",
    ),
    rule(
        "storage-slow-random",
        Warning,
        Doctor(Check::Storage),
        "random reads from this folder, with the page cache bypassed, come at a seeking disk's rate, and a shuffled epoch reads items in random order",
        "keep the data on an SSD; `gpufeed precompute` packs the items into shards read in large blocks",
    ),
    rule(
        "storage-not-measured",
        Info,
        Doctor(Check::Storage),
        "a read that may come from the page cache measures memory, not the disk, so no throughput is reported",
        "measure with `fio --direct=1 --rw=randread --bs=4k` on a file of the folder",
    ),
    rule(
        "storage-many-small-files",
        Warning,
        Doctor(Check::Storage),
        "many small files cost an open, a stat and a read each, which per-file overhead (and on network storage a round trip) dominates",
        "gpufeed precompute --data DIR  # features in shards of 256 items, read in large blocks",
    ),
    rule(
        "framework-python-missing",
        Info,
        Doctor(Check::Frameworks),
        "the frameworks are probed through `python3`, and none ran",
        "activate the training environment (venv, conda) and run `gpufeed doctor` again, or set GPUFEED_PYTHON to its interpreter",
    ),
    rule(
        "framework-not-installed",
        Info,
        Doctor(Check::Frameworks),
        "this Python cannot import it; nothing to check",
        "nothing to do unless the training uses it",
    ),
    rule(
        "framework-found",
        Info,
        Doctor(Check::Frameworks),
        "what the framework reports about itself and the GPUs, from its own process",
        "nothing to change",
    ),
    rule(
        "framework-probe-hang",
        Warning,
        Doctor(Check::Frameworks),
        "importing the framework and touching the GPU did not finish; a training run may hang the same way at its start",
        "run the probe's import by hand (`python3 -c 'import torch'`) to see where it stops: a stuck driver call, a lock file, network access at import",
    ),
    rule(
        "framework-probe-failed",
        Warning,
        Doctor(Check::Frameworks),
        "importing the framework or its first GPU call failed, so training with it fails the same way",
        "run the import shown in the evidence; a missing libcudart or libcudnn means the wheel and the CUDA libraries do not match",
    ),
    rule(
        "framework-no-gpu",
        Warning,
        Doctor(Check::Frameworks),
        "the framework sees no GPU while the driver lists one, so it trains on the CPU",
        "install the CUDA build matching the driver (`pip install tensorflow[and-cuda]`, the CUDA wheel of torch from pytorch.org, `pip install jax[cuda12]`) and check CUDA_VISIBLE_DEVICES",
    ),
    rule(
        "framework-xla-broken",
        Warning,
        Doctor(Check::Frameworks),
        "compiling a one-line function with XLA failed, so `jit_compile=True` and `jax.jit` fail or fall back",
        "the error is in the evidence; a missing `ptxas` needs the CUDA toolkit (`XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda`)",
    ),
    rule(
        "framework-no-tensor-cores",
        Info,
        Doctor(Check::Frameworks),
        "below compute capability 7.0 a GPU has no Tensor Cores, so mixed precision saves memory but does not speed up matrix math (TensorFlow mixed precision guide)",
        "for speed, a GPU of compute capability 7.0 or newer",
    ),
    rule(
        "env-cuda-visible-devices-empty",
        Error,
        Doctor(Check::Environment),
        "CUDA_VISIBLE_DEVICES hides every GPU, so CUDA programs see none and frameworks fall back to the CPU",
        "unset CUDA_VISIBLE_DEVICES  # or export CUDA_VISIBLE_DEVICES=0",
    ),
    rule(
        "env-cuda-visible-devices-invalid",
        Error,
        Doctor(Check::Environment),
        "CUDA stops reading CUDA_VISIBLE_DEVICES at the first entry that names no GPU, so the GPUs listed after it are hidden (CUDA Programming Guide, CUDA environment variables)",
        "list GPUs that exist: export CUDA_VISIBLE_DEVICES=0,1",
    ),
    rule(
        "env-tf-allow-growth-invalid",
        Warning,
        Doctor(Check::Environment),
        "TensorFlow accepts only `true` or `false`, in lower case, and otherwise logs an error and ignores the variable",
        "export TF_FORCE_GPU_ALLOW_GROWTH=true",
    ),
    rule(
        "env-tf-allow-growth-off",
        Info,
        Doctor(Check::Environment),
        "TensorFlow reserves almost all GPU memory at start, so a second process on the same GPU (evaluation, a data-GPU process, another framework) runs out of memory",
        "export TF_FORCE_GPU_ALLOW_GROWTH=true  # when the GPU is shared",
    ),
    rule(
        "env-tf-gpu-thread-mode",
        Info,
        Doctor(Check::Environment),
        "with the default `global` mode TensorFlow launches GPU kernels from the threads the input pipeline also uses, so a busy pipeline delays launches; `gpu_private` gives each GPU its own launch threads (TensorFlow GPU performance guide)",
        "export TF_GPU_THREAD_MODE=gpu_private",
    ),
    rule(
        "env-pytorch-alloc-conf-invalid",
        Warning,
        Doctor(Check::Environment),
        "PyTorch reads PYTORCH_CUDA_ALLOC_CONF at the first CUDA allocation and stops with an error on an entry it does not know",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    ),
    rule(
        "env-pytorch-expandable-segments",
        Info,
        Doctor(Check::Environment),
        "variable-length batches fragment PyTorch's caching allocator (reserved memory grows past allocated memory until out-of-memory); expandable segments grow blocks in place instead (PyTorch CUDA semantics documentation)",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    ),
    rule(
        "env-omp-invalid",
        Warning,
        Doctor(Check::Environment),
        "OpenMP ignores a value that is not a positive integer and starts one thread per core",
        "export OMP_NUM_THREADS=1",
    ),
    rule(
        "env-omp-oversubscribed",
        Warning,
        Doctor(Check::Environment),
        "each loader worker may run OMP_NUM_THREADS OpenMP threads, and more threads than cores time-slice the CPU",
        "export OMP_NUM_THREADS=$(( $(nproc) / NUM_WORKERS ))",
    ),
    rule(
        "runtime-no-cache",
        Info,
        Doctor(Check::Runtime),
        "the short loader run needs a precomputed cache, and `doctor` does not start a long precompute",
        "gpufeed precompute --data DIR  # then run gpufeed doctor again",
    ),
    rule(
        "runtime-loader-stable",
        Info,
        Doctor(Check::Runtime),
        "the loader's workers took about the same time for every batch",
        "nothing to change",
    ),
    rule(
        "runtime-loader-oscillating",
        Warning,
        Doctor(Check::Runtime),
        "the time to make a batch cycles (a slow batch every few), the pattern behind GPU utilisation that swings between high and low",
        "gpufeed profile data --data DIR --benchmark  # measures workers and prefetch, prints the settings to use",
    ),
    rule(
        "runtime-loader-unstable",
        Info,
        Doctor(Check::Runtime),
        "the time to make a batch varies without a cycle; this matters only when the GPU step is shorter than the slow batches",
        "gpufeed profile data --data DIR --consumer-ms STEP_MS  # with your step time",
    ),
    rule(
        "runtime-failed",
        Warning,
        Doctor(Check::Runtime),
        "the loader could not run on the cache",
        "gpufeed precompute --data DIR  # rebuilds damaged or stale shards",
    ),
];

/// The rule with this id.
#[must_use]
pub fn rule_info(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The rules among those `mine` selects (by origin) that `docs`, a checking crate's
/// reference, does not name in backticks; `None` when `mine` selects none. Each checking
/// crate's test runs it on its own `lib.rs`.
#[must_use]
pub fn missing_from_docs(docs: &str, mine: impl Fn(Origin) -> bool) -> Option<Vec<&'static str>> {
    let selected: Vec<&Rule> = RULES.iter().filter(|r| mine(r.origin)).collect();
    (!selected.is_empty()).then(|| {
        selected
            .into_iter()
            .filter(|r| !docs.contains(&format!("`{}`", r.id)))
            .map(|r| r.id)
            .collect()
    })
}

/// The ids of the lint rules, for `# gpufeed: ignore[...]` checks.
pub fn is_lint_rule(id: &str) -> bool {
    RULES.iter().any(|r| r.id == id && r.origin == Origin::Lint)
}

/// A finding of a registered rule: its severity, and `specific; why` as the message.
///
/// # Panics
/// Never in release; in debug builds when `id` is not registered (a programming error a
/// test catches).
pub fn finding(id: &'static str, specific: &str) -> Finding {
    let info = rule_info(id);
    debug_assert!(info.is_some(), "unregistered rule `{id}`");
    match info {
        Some(r) => Finding::new(r.id, r.severity, format!("{specific}; {}", r.why)),
        None => Finding::new(id, Severity::Warning, specific),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case() {
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        for r in RULES {
            assert!(
                r.id.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                r.id
            );
            assert!(!r.why.ends_with('.') && !r.why.is_empty(), "{}", r.id);
            assert!(!r.fix.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn config_kinds_are_registered() {
        use gpufeed_config::{ErrorKind, WarningKind};
        for kind in [
            ErrorKind::Syntax,
            ErrorKind::NotUtf8,
            ErrorKind::MultipleDocuments,
            ErrorKind::TooLarge,
            ErrorKind::NotAMapping,
            ErrorKind::DuplicateKey,
            ErrorKind::ComplexKey,
            ErrorKind::BadMerge,
            ErrorKind::WrongType,
            ErrorKind::InvalidValue,
        ] {
            assert_eq!(rule_info(kind.id()).map(|r| r.severity), Some(Error));
        }
        for kind in [
            WarningKind::UnknownKey { suggestion: None },
            WarningKind::EmptyMelFilters,
            WarningKind::TwoTextCaps,
            WarningKind::SplitsOverlap,
            WarningKind::Cleaners,
            WarningKind::MinLearningRateAboveLearningRate,
            WarningKind::HeadsDoNotDivide {
                heads_key: String::new(),
            },
            WarningKind::SectionsDisagree {
                other: String::new(),
                other_line: None,
            },
            WarningKind::Yaml11Boolean {
                written: String::new(),
                value: true,
            },
            WarningKind::NotAStringForPyYaml {
                written: String::new(),
                pyyaml: String::new(),
            },
            WarningKind::FloatIsStringForPyYaml {
                written: String::new(),
                fix: String::new(),
            },
            WarningKind::NumberDiffersInPyYaml {
                written: String::new(),
                pyyaml: String::new(),
                yaml12: String::new(),
                fix: String::new(),
            },
        ] {
            assert_eq!(rule_info(kind.id()).map(|r| r.severity), Some(Warning));
        }
    }
}
