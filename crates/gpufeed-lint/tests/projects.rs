//! Small projects that reproduce patterns of public speech trainers (written for gpufeed,
//! not copied): `fixtures/projects/NAME/` is linted as one folder, and every file must
//! produce exactly the findings marked on its lines: `# expect: RULE[, RULE]` at the
//! rule's own severity, `# expect-info: RULE` lowered to info (a `__main__` self-test, a
//! test or an example: not the training path).

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gpufeed_findings::Severity;
use gpufeed_lint::lint_paths;

fn project(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/projects")
        .join(name)
}

/// `(file, rule, line, info)` marked in every `*.py` under `dir`.
fn expected(dir: &Path) -> BTreeSet<(String, String, usize, bool)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "py") {
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            let text = fs_err::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                for (marker, info) in [("# expect-info:", true), ("# expect:", false)] {
                    if let Some((_, ids)) = line.split_once(marker) {
                        for id in ids.split(',') {
                            out.insert((rel.clone(), id.trim().to_owned(), i + 1, info));
                        }
                    }
                }
            }
        }
    }
    out
}

fn found(dir: &Path) -> BTreeSet<(String, String, usize, bool)> {
    let outcome = lint_paths(&[dir.to_path_buf()]).unwrap();
    outcome
        .findings
        .into_iter()
        .map(|f| {
            let path = f.path.clone().unwrap_or_default();
            let rel = Path::new(&path)
                .strip_prefix(dir)
                .map_or(path.clone(), |p| p.display().to_string());
            (
                rel,
                f.id.to_owned(),
                f.line.unwrap_or(0),
                f.severity == Severity::Info && !is_info_rule(f.id),
            )
        })
        .collect()
}

/// Rules whose findings are info anyway (they are marked `# expect:`).
fn is_info_rule(id: &str) -> bool {
    gpufeed_findings::rules::rule_info(id).is_some_and(|r| r.severity == Severity::Info)
}

fn check(name: &str) {
    let dir = project(name);
    assert_eq!(found(&dir), expected(&dir), "{name}");
}

/// `model.train()` is the nn.Module method, not the script's own `def train(...)`: an
/// evaluation loop that switches the model back after each batch was taken for a
/// training loop (it "calls `model.train()`"), and its `.item()` flagged (issue 44).
#[test]
fn a_method_call_is_not_the_module_function_of_its_name() {
    check("method-not-function");
}

/// Floats read with `.item()` into a dict or list named like a loss, then logged with
/// `add_scalar`: the `.item()` calls are the syncs, the logging of the floats is not
/// (issue 44, pattern 5).
#[test]
fn floats_already_on_the_host_are_not_tensors() {
    check("host-values-logged");
}

/// `if args.sync_step:` on a flag that is off unless given (`store_true`, `default=False`)
/// is an opt-in path, not every step; a flag on by default still counts (issue 44,
/// pattern 3).
#[test]
fn syncs_under_an_opt_in_flag_are_not_every_step() {
    check("opt-in-flag");
}

/// A subclass of `DataLoader` is a loader: judged at each call when it keeps
/// `DataLoader`'s `__init__`, by its `super().__init__` call when it has its own (issue 44,
/// pattern 4).
#[test]
fn a_dataloader_subclass_is_a_loader() {
    check("loader-subclass");
}

/// A dataset shared by its splits: the work of its evaluation-only branches (`if
/// self.split != "train":`, the `else` of `split == "train"`) is not per training item
/// (issue 44, pattern 3).
#[test]
fn evaluation_only_branches_of_a_shared_dataset_are_not_per_item_training_work() {
    check("eval-branch");
}

/// `ds.map(fn, tf.data.experimental.AUTOTUNE)` is parallel; `DataLoader`'s sixth
/// positional argument is `num_workers`.
#[test]
fn positional_arguments() {
    check("positional-args");
}

/// A `prefetch` in an `except` handler or in the `else` of the `if` that holds
/// `prefetch_to_device` is not after it; one after the whole `if` is.
#[test]
fn exclusive_branches() {
    check("exclusive-branches");
}

/// `if __name__ == "__main__":` self-tests, tests, examples and benchmarks (nanoGPT's
/// `bench.py`, issue 44) are info, saying why; a
/// `__main__` block that trains is the training path.
#[test]
fn main_blocks_tests_and_examples() {
    check("main-block");
    let dir = project("main-block");
    let outcome = lint_paths(&[dir]).unwrap();
    for f in outcome
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
    {
        assert!(f.message.contains("not the training path"), "{}", f.message);
    }
}

/// A host sync two calls away from the loop, in another file, with the call chain.
#[test]
fn sync_two_calls_deep() {
    check("sync-two-calls-deep");
    let outcome = lint_paths(&[project("sync-two-calls-deep")]).unwrap();
    let f = outcome
        .findings
        .iter()
        .find(|f| f.id == "host-sync-in-loop")
        .unwrap();
    assert!(
        f.evidence.contains("train.py:11 trainer.train_step -> lib/trainer.py:16 log_losses -> lib/logs.py:6 scalar -> lib/logs.py:10 .cpu()"),
        "{}",
        f.evidence
    );
    assert!(f.message.contains("first host sync"), "{}", f.message);
}

/// `float(...)` of the step's losses: the first sync of each step is named as such.
#[test]
fn float_of_the_losses_is_the_first_sync() {
    check("float-first-sync");
    assert_eq!(first_sync_lines("float-first-sync"), vec![Some(9)]);
}

/// The lines of the findings named the first host sync of each step.
fn first_sync_lines(name: &str) -> Vec<Option<usize>> {
    let outcome = lint_paths(&[project(name)]).unwrap();
    outcome
        .findings
        .iter()
        .filter(|f| f.message.contains("first host sync"))
        .map(|f| f.line)
        .collect()
}

/// A sync under `if aux_head is not None:` (off by default) may not run every step, so
/// the first sync that surely does is named the first of each step.
#[test]
fn a_sync_on_a_branch_is_not_the_first_of_each_step() {
    check("rare-branch-sync");
    assert_eq!(first_sync_lines("rare-branch-sync"), vec![Some(14)]);
}

/// `if attn_example in ids:` with `ids` bound by the loop and the item chosen outside it
/// holds for the batches with that item, about once an epoch: not every step (issue 44, the
/// ninth held-out set: WaveRNN's attention plot).
#[test]
fn a_chosen_item_in_the_batch_is_not_every_step() {
    check("rare-membership");
}

/// A mel spectrogram computed in a `collate_fn` (a class with `__call__`) for each item.
#[test]
fn mel_in_collate_fn() {
    check("collate-mel");
}

/// `__getitem__` decodes, resamples and computes an STFT through two wrappers, with one
/// loader worker. (The resample, under `if native != rate:`, is info since session 27: a
/// corpus at the target rate never runs it.)
#[test]
fn decode_through_wrappers_with_one_worker() {
    check("decode-wrappers-one-worker");
    let outcome = lint_paths(&[project("decode-wrappers-one-worker")]).unwrap();
    let few = outcome
        .findings
        .iter()
        .find(|f| f.id == "decode-per-item-few-workers")
        .unwrap();
    // The heaviest call names the work: the STFT, not the read before it.
    assert!(few.evidence.contains("librosa.stft"), "{}", few.evidence);
}

/// A torchaudio transform object (module level, and `self.x` set in `__init__`) called
/// per item.
#[test]
fn transform_objects_called_per_item() {
    check("transform-object");
}

/// A `Dataset.map` function imported from another file reaches `tf.numpy_function` and
/// librosa there.
#[test]
fn imported_map_function() {
    check("tf-map-imported");
}

/// Loaders that serve evaluation (named for a split, or built in `validate()`) and are not
/// iterated by the training loop are info; the training loader keeps its warnings.
#[test]
fn evaluation_loaders_are_not_the_training_path() {
    check("eval-loaders");
}

/// Syncs other than `.item()`: a device reduction deciding an `if` in a helper the loop
/// calls, `math.isnan` of the clipped gradient norm, `"...".format` of it, TensorBoard's
/// `add_scalar` of it in a helper, `if torch.isnan(loss).any()`, `assert (loss >= 0).all()`
/// (an element-wise comparison of a tensor gives a tensor), an f-string field holding a
/// tensor given to a progress bar, `%` formatting of a starred tensor (`% (step,
/// *mloss)`) with a repeated format, `pack_padded_sequence` given device lengths, a factory
/// given a 0-d device tensor as a size (`torch.arange(lengths.max())`); none under `step %
/// N`.
#[test]
fn implicit_syncs() {
    check("implicit-syncs");
}

/// A bare name deciding a branch syncs when it holds a device tensor: a flag built on the
/// device before the loop and all-reduced each step (ESPnet's `iterator_stop`), the loss
/// after `backward()` (one finding for a condition that names it twice); not a CPU tensor,
/// not `is None` / `in`, not under `step % N`.
#[test]
fn device_flags() {
    check("device-flags");
}

/// A slice bound that is an element of a tensor (VITS' `slice_segments`: each row's random
/// offset, on the GPU) reads it on the host once per row, in a helper the loop calls; an
/// `int` width and a `len()` bound read nothing.
#[test]
fn slice_bounds() {
    check("slice-bounds");
}

/// A loader whose `collate_fn` builds NumPy arrays (a method of its dataset, with the
/// method it calls on `self`: FastSpeech2's `collate_fn` and `reprocess`) still lacks
/// pinned memory, but the fix is to return tensors first: `pin_memory` pins only tensors.
/// A collate function that builds tensors keeps the plain fix.
#[test]
fn numpy_collate() {
    check("numpy-collate");
    let outcome = lint_paths(&[project("numpy-collate")]).unwrap();
    let pins: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.id == "torch-loader-no-pin-memory")
        .map(|f| (f.line, f.fix.as_str(), f.message.as_str()))
        .collect();
    assert_eq!(pins.len(), 3, "{pins:?}");
    for (line, fix, message) in pins {
        assert_eq!(
            fix.contains("torch.from_numpy"),
            matches!(line, Some(12 | 24)),
            "line {line:?}: {fix}"
        );
        // Asked for, and pinning nothing: the loader over NumPy batches.
        assert_eq!(
            message.contains("`pin_memory=True` pins nothing here"),
            line == Some(24),
            "line {line:?}: {message}"
        );
    }
}

/// A feature computed only when its cached file is missing, then saved (VITS' `.spec.pt`,
/// univnet's `.mel` in an `except FileNotFoundError:` that saves),
/// is info; one computed every epoch beside an unrelated save is not; a plain WAV read
/// is not heavy work.
#[test]
fn features_behind_a_file_cache() {
    check("cached-features");
}

/// A mel computed by the project's own conv1d STFT module, or by a function of an import
/// outside the linted files, is per-item feature work by its name; the few-workers finding
/// names it, not the WAV read before it (a plain read is not heavy).
#[test]
fn mel_by_name() {
    check("custom-mel");
    let outcome = lint_paths(&[project("custom-mel")]).unwrap();
    let few = outcome
        .findings
        .iter()
        .find(|f| f.id == "decode-per-item-few-workers")
        .unwrap();
    assert!(few.message.contains("mel_spectrogram"), "{}", few.message);
}

/// A folder under `examples/` with a training script (`train_*.py` that fits) is a trainer:
/// its dataset module keeps its warnings. Another example folder stays info.
#[test]
fn a_trainer_kept_under_examples() {
    check("examples-trainer");
}

/// A `% accum_grad` gate around `optimizer.step()` runs every optimizer step (every step
/// with the usual accumulation of 1), unlike a `% 100` logging gate; Lightning's
/// `training_step` runs every step, `validation_step` does not.
#[test]
fn accumulation_gates_and_lightning_training_step() {
    check("accum-and-lightning");
}

/// `DataParallel` as the fallback after a `DistributedDataParallel` branch (an import
/// alias of it) is info; on its own, or as the mode a flag's default picks
/// (`--parallel-mode` with `default="dp"`, OpenTransformer in the fifth held-out set), it
/// is a warning.
#[test]
fn data_parallel_as_the_fallback_of_ddp() {
    check("ddp-fallback");
}

/// Vocoders, waveform models and image classifiers train on what they read: the read of a
/// waveform (or image) that the item returns is no feature cost; the features computed
/// from it, and a read used only to compute them, are (issue 44, pattern 2).
#[test]
fn reading_the_waveform_the_model_trains_on_is_not_a_feature_cost() {
    check("waveform-target");
}

/// An image decoded per item (a project dataset's `Image.open`, or torchvision's
/// `ImageFolder`) with 2 or 3 loader workers: fewer than the reference ImageNet trainers ship
/// with (issue 44, pattern 6).
#[test]
fn image_decoding_with_few_workers() {
    check("image-workers");
    // The fix for images is workers or GPU decoding: gpufeed's cache holds speech
    // features. The speech dataset's fix still names the cache.
    let outcome = lint_paths(&[project("image-workers")]).unwrap();
    let fixes: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.id == "decode-per-item-few-workers")
        .map(|f| {
            (
                f.message.contains("PIL") || f.message.contains("Image"),
                f.fix.as_str(),
            )
        })
        .collect();
    assert!(fixes.iter().any(|(image, _)| *image), "{fixes:?}");
    for (image, fix) in fixes {
        assert_eq!(fix.contains("decode_jpeg"), image, "{fix}");
        assert_eq!(fix.contains("gpufeed precompute"), !image, "{fix}");
    }
}

/// Loader settings read from a constructor's parameters (Lightning's `self.hparams`) or a
/// flag are judged by their defaults: `num_workers` 0 by default is no workers, with no
/// advice of `persistent_workers`; `pin_memory` False by default, in a data module whose
/// project trains on the GPU, is no pinned memory (issue 44, pattern 4).
#[test]
fn loader_settings_are_judged_by_their_defaults() {
    check("settings-defaults");
}

/// A folder of several projects, each with its own `losses.py` and `dataset.py`: imports
/// resolve to the importer's own module, as Python's do, so nothing reached through them
/// is lost (issue 44, pattern 7).
#[test]
fn imports_resolve_by_package_path_in_a_folder_of_projects() {
    check("several-projects");
}

/// The elements of a CUDA tensor iterated in the step (`zip(preds, lengths)`,
/// `enumerate(lengths)`) used as slice bounds: one host read per row; CPU lengths and a
/// `.tolist()` read cost nothing of the kind. The parts of a batch moved as a list and then
/// unpacked are device tensors too (issue 44, pattern 5; the ninth held-out set: StyleTTS).
#[test]
fn elements_of_a_cuda_tensor_as_slice_bounds_are_syncs() {
    check("iterated-lengths");
}

/// A `tf.data` pipeline returned by a function of another module, or passed to one as a
/// parameter, is still a pipeline there: its sequential maps and missing prefetch are
/// found (issue 44, pattern 4).
#[test]
fn a_tf_data_pipeline_is_followed_across_functions_and_modules() {
    check("tf-pipeline-across");
}

/// A constructor parameter or config field `False` unless given, that no call turns on,
/// gates an opt-in path (`if self.aug.speed_perturb:`, `if self.add_zero_attn:`): per-item
/// work and `forward`'s copies under it do not run with the defaults; one a call turns on
/// does (issue 44, pattern 3).
#[test]
fn paths_behind_a_setting_off_by_default_are_opt_in() {
    check("opt-in-config");
}

/// A method called on an object whose constructor is known (`model = Acoustic().cuda()`,
/// `self.net = Acoustic()`) is that class's, even where another class has a method of the
/// same name, and a class re-exported by a package's `__init__.py` is found (issue 44,
/// pattern 1; Grad-TTS' `compute_loss`).
#[test]
fn a_method_is_resolved_through_its_receivers_class() {
    check("receiver-class");
}

/// Calling an object runs its class's `__call__` or `forward` (`self(x)` in
/// `training_step`, `self.metric(...)`), and a module's `if not self.training:` branch is
/// not the step (issue 44; deepspeech.pytorch, kospeech).
#[test]
fn calling_an_object_runs_its_call_or_forward() {
    check("implicit-calls");
}

/// A flag compared with a value other than its default (`if FLAGS.mode == "eager_tf":` with
/// absl's `DEFINE_enum("mode", "fit", ...)`, `if args.mode != "train":` with `default=
/// "train"`) guards a path the defaults do not take: its loop is not the training that runs
/// (issue 44; yolov3-tf2's eager loop).
#[test]
fn a_loop_on_a_flag_value_other_than_the_default_is_not_the_training() {
    check("flag-values");
}

/// Per-item work reached from a Python iterator's `__next__` or a loader thread's `run`
/// (issue 44; kospeech's `threading.Thread` loader).
#[test]
fn iterators_and_loader_threads_are_per_item() {
    check("iterator-roots");
}

/// An inference script (`inference.py`, `predict.py`, `export_*.py`, an inferencer's
/// `base_inferencer.py`, ... with no training loop) does not train: its findings are info
/// (issue 44; audioset_tagging_cnn, FullSubNet).
#[test]
fn an_inference_script_is_not_the_training_path() {
    check("inference-script");
}

/// A loader factory with a training flag (`make_loader(files, train)`) and a dataset whose
/// `__getitem__` returns early when `self.train`: the other loader and the code after the
/// early return serve evaluation only (maum-ai/voicefilter's shape, from a held-out
/// scouting).
#[test]
fn a_training_flag_decides_the_evaluation_loader() {
    check("train-flag-factory");
}

/// A module built only by an inference script: its `forward` does not run in training.
#[test]
fn a_module_built_only_for_inference_is_off_the_path() {
    check("forward-off-path");
}

/// Host tensors built and copied in the training loop's own body (PyTorch-GAN's `Tensor =
/// torch.cuda.FloatTensor` labels, an index from `torch.arange`) and in methods `forward`
/// calls (moco's shuffle index, a NumPy mask, `x.new_tensor(list(permutations(...)))` of
/// Conv-TasNet's PIT loss), also through a dispatch table (`table[name](...)` with `table =
/// {"sizes": self.loss_sizes, ...}`, DETR's `get_loss`).
#[test]
fn host_tensors_in_the_loop_body_and_in_what_forward_calls() {
    check("host-tensor-loop-body");
    check("host-tensor-helper");
}

/// `masked_select`, `nonzero` and boolean-mask indexing (`x[mask]`, `sim[~eye]`, a mask
/// given as an argument) on a device tensor return as many elements as the data holds, so
/// the host reads the count every step; on a host tensor they are no sync, nor is a store
/// through a mask (issue 44, the fourth held-out set: SimCLR, VITS).
#[test]
fn data_sized_results_are_syncs() {
    check("data-sized-results");
}

/// A helper given the batch (`to_device(batch, device)`) that unpacks it and converts each
/// part to a GPU tensor copies the data, as the loop itself converting it does: no
/// finding. A table sized by the batch in the same helper still is one.
#[test]
fn a_helper_moving_the_batch_to_the_gpu_moves_data() {
    check("batch-helper");
}

/// `.item()` of a tensor built on the CPU (`torch.rand(1)`, no `device=`) is no GPU sync;
/// Python's `max` over a device tensor is one (the elements are compared on the host).
#[test]
fn host_and_device_values_in_the_loop() {
    check("cpu-tensor-item");
    check("builtins-on-device");
}

/// `collate_fn=functools.partial(collate, n_mels=40)` runs `collate` for every batch.
#[test]
fn a_partial_collate_is_followed() {
    check("collate-partial");
}

/// A loader without workers over items already in memory (token lists read in `__init__`,
/// a `TensorDataset`) loses nothing: info, with why. One that reads a file per item keeps
/// its warning.
#[test]
fn no_workers_over_items_in_memory_is_info() {
    check("in-memory-items");
}

/// A `tf.function` step without `input_signature` fed by `.batch()` of one-shape elements
/// traces at most twice (the last batch partial): info. Fed by `padded_batch`, every batch
/// may have its own shape: a warning.
#[test]
fn retracing_depends_on_how_the_batches_are_made() {
    check("one-shape-batches");
    check("padded-batches");
    // The pipeline in another module than the step (calmiLovesAI/TensorFlow2.0_ResNet).
    check("batches-elsewhere");
}

/// A module's buffers and parameters live on its device: `int(self.ptr)` in a method that
/// `forward` calls reads the GPU every step (MoCo's queue pointer), and so does a buffer as
/// a slice bound (`x[:, :, :self.r]`, WaveRNN's Tacotron decoder; the ninth held-out set).
#[test]
fn a_modules_buffers_are_device_tensors() {
    check("module-buffers");
}

/// A Keras metric's `result()` is a tensor: formatting it every step reads the GPU. A
/// future's `result()` is not.
#[test]
fn a_keras_metric_read_every_step_is_a_sync() {
    check("keras-metric-result");
}

/// What a memo's first fill builds (`if key not in D: D[key] = ...`, `if not hasattr(self,
/// "w")`, `if self.w is None`, a table grown when an input outgrows it) runs once per key,
/// not every step; a guard on a local name, a memo emptied every batch and a guard against
/// the step count are no memo (issue 44, the fourth held-out set: VITS' mel basis;
/// WaveGrad in Coqui TTS).
#[test]
fn what_a_memo_fill_builds_is_not_built_every_step() {
    check("memo-fills");
}

/// A model made by a factory in another module (`model, opt = get_model(...)` returning
/// `model, opt` with `model = Net().to(device)`) is followed into its `forward` (issue 44,
/// the fourth held-out set: FastSpeech2's `LengthRegulator`).
#[test]
fn a_model_returned_by_a_factory_is_followed() {
    check("factory-model");
}

/// `if max_len is None:` in a helper is the fallback for callers that leave `max_len` out:
/// not run where the step passes it, run where it does not (issue 44: FastSpeech2's
/// `get_mask_from_lengths`).
#[test]
fn a_fallback_for_an_argument_the_caller_gives_does_not_run() {
    check("given-fallback");
}

/// A model given to the loop function as a parameter (packed in a list, unpacked there:
/// VITS' `train_and_evaluate`) is followed into its `forward`; a helper the step reaches
/// first without a tensor argument and then with one is judged with it (issue 44, the
/// fourth held-out set: VITS' `maximum_path`).
#[test]
fn a_model_given_as_a_parameter_is_followed() {
    check("model-parameter");
}

/// `"%.4f" % loss` and the builtin `max(1, D - lens.max())` read a device tensor on the
/// host; a tensor's size or a step count does not (issue 44, the fourth held-out set:
/// ECAPA-TDNN).
#[test]
fn percent_formatting_and_builtin_comparisons_of_tensors() {
    check("format-and-builtins");
}

/// A module-level helper that nothing in the linted files calls or names (a docstring
/// does not count) is not the training path: its findings are info, saying why; one named
/// in a string stays on the path (issue 44, the fourth held-out set: pytorch-cifar's
/// `get_mean_and_std`, SGMSE's copied `create_model`).
#[test]
fn helpers_nothing_calls_are_not_the_training_path() {
    check("uncalled-helpers");
}

/// `torch.tensor(k, device=x.device)` of a NumPy array made in the call (through a helper
/// of the file) is a host-to-device copy every call; a buffer made in `__init__` is not
/// (issue 44, the fourth held-out set: SGMSE's up/down-sampling kernels).
#[test]
fn numpy_arrays_copied_to_the_device_in_forward() {
    check("numpy-to-device");
}

/// `self.log(..., prog_bar=True)` of a tensor in `training_step` is read on the host at
/// every step for the progress bar; `on_step=False`, no bar, or `validation_step` are not
/// (issue 44, the fourth held-out set: SGMSE).
#[test]
fn lightning_progress_bar_values_are_read_every_step() {
    check("lightning-progress-bar");
}

/// The modules a `forward` iterates (an `nn.ModuleList` filled with `.append` or from a
/// comprehension, through `reversed`, `enumerate` or a local name) and a function called
/// through a local name given one on each branch are followed; a store of a tensor through
/// a boolean mask counts as a read does, a store of a number does not (issue 44, the
/// fourth held-out set: VITS' flows and splines).
#[test]
fn module_containers_and_function_aliases_are_followed() {
    check("module-containers");
}

/// The branch of a function's own switch that is off by default (`if reverse:`, the
/// `else` of `if not reverse:` with `reverse=False`) is not the training step, nor, for a
/// host tensor, the fallback of an optional argument (`if mask is None:`); the branch
/// that runs by default is (issue 44, the fourth held-out set: VITS' inference noise).
#[test]
fn branches_of_switches_off_by_default_are_not_the_step() {
    check("off-switches");
}

/// A host table stays on the host through `torch.cat`, comparisons and casts until it is
/// moved (SimCLR's labels); joined with the batch or converted from the data it is the
/// data's move, once moved it is on the device, and an assignment on one branch says
/// nothing of the other (issue 44, the fourth held-out set).
#[test]
fn host_tables_through_operations_before_their_move() {
    check("host-ops-before-move");
}

/// A TensorFlow summary of a tensor written every step under a writer is a sync, found
/// through a package's star imports, one warning per summary helper; thinned out with
/// `record_if` it is not (issue 44, the fourth held-out set: CycleGAN-Tensorflow-2).
#[test]
fn tensorflow_summaries_every_step() {
    check("tf-summaries");
    check("tf-summaries-record-if");
}

/// `TrainingArguments` without `dataloader_num_workers`: Hugging Face's `Trainer` loads in
/// the training process; a warning where items are decoded or transformed when read (an
/// `Audio` column, `set_transform`), info for a dataset tokenized beforehand.
#[test]
fn hugging_face_trainer_without_loader_workers() {
    check("hf-trainer");
}

/// JAX's host reads every step (`jax.device_get`, `np.asarray`, `block_until_ready()`) are
/// syncs, with JAX's fix; every N steps they are not.
#[test]
fn jax_host_reads_every_step() {
    check("jax-host-reads");
}

/// Preprocessing that writes its data out and does not train (a script writing a
/// `TFRecordWriter`, a `precompute()` saving arrays in a loop beside `train()`), and every
/// function and class only it uses, run once before training: its per-item work is info;
/// a helper that training also uses still counts (issue 44, the fifth held-out set:
/// rnnt-speech-recognition's `preprocess_*.py`).
#[test]
fn one_off_preprocessing_is_not_the_training_path() {
    check("one-off-preprocessing");
}

/// A dataset class built only under a flag off unless given (`A() if args.raw_audio else
/// B()`, the body of `if args.trim:`), and an attribute that is such a flag under another
/// name (`self.is_mixup = bool(mixup)`), are not the default run; a flag on by default is
/// (issue 44, the fifth held-out set: PyTorch_Speaker_Verification, OpenTransformer).
#[test]
fn classes_and_attributes_behind_flags_off_by_default() {
    check("flag-gated-classes");
}

/// A learning-rate range test (`lr_finder.py`, `find_lr.py`) is a tool run by hand before
/// training: its syncs are info; the training script's stay (issue 44, the fifth held-out
/// set: pytorch-cifar100).
#[test]
fn a_learning_rate_finder_is_not_the_training_run() {
    check("lr-finder");
}

/// Settings kept in the project's YAML or JSON config files (several `---` documents, read
/// as `hp.train.num_workers` or `cfg["train"]["num_workers"]`) are judged by their values:
/// no workers where the config gives training 0 (its test section's 8 are not training's),
/// a CUDA device named only there, the `else` of a setting true there and the body of one
/// false there are not the default run (issue 44, the fifth held-out set:
/// PyTorch_Speaker_Verification).
#[test]
fn settings_from_the_projects_config_files() {
    check("config-settings");
}

/// A host tensor moved to the device of another host tensor (`.to(coin.device)`,
/// `.type_as(coin)` with `coin` drawn on the CPU) stays on the host; a torch function of a
/// host tensor (`torch.sigmoid(torch.arange(n))`) is one, and its `.cuda()` is a copy
/// (issue 44, the fifth held-out set: pytorch-cifar100's stochastic depth).
#[test]
fn a_move_to_a_host_tensors_device_is_no_copy() {
    check("host-to-host");
}

/// A device tensor indexed with a Python list (`batch[perm]` with `perm =
/// random.sample(...)`, `[0] * n`, a list literal) copies a CPU index tensor to the GPU
/// with a blocking copy every step; an index built on the device, and a list into a host
/// tensor, do not (issue 44, the fifth held-out set: PyTorch_Speaker_Verification).
#[test]
fn a_python_list_index_into_a_device_tensor_is_a_blocking_copy() {
    check("list-index");
}

/// A period whose default is 1 (`step % FLAGS.steps_per_log` with an absl default of 1, a
/// config class's `log_interval: int = 1`) is every step, another is not; a gradient norm
/// given to TensorBoard (`add_scalar(tag, p.grad.norm(), step)`) is read on the host
/// (issue 44, the fifth held-out set: rnnt-speech-recognition, pytorch-cifar100).
#[test]
fn periods_of_one_and_gradient_norms_logged_every_step() {
    check("periods-of-one");
}

/// A module whose objects are never called (only its methods: `self.stft.analyse(x)`) runs
/// no `forward`, so what its `forward` calls is not every step; a module called itself, or
/// handed to a container, does run it (issue 44, the fifth held-out set: glow-tts' STFT).
#[test]
fn a_module_never_called_runs_no_forward() {
    check("uncalled-forward");
}

/// torchtext's legacy iterators build each batch in the training thread (no workers); the
/// one built only by a function that an `if` on a flag off by default calls (`-bpe_cache`,
/// argparse naming it by its short option) is off the default run; where the run must
/// choose a source (`if all((a, b)): ... elif c: ... else: raise`) each is the training
/// path; a validation iterator is read at validation time (issue 44, the fifth held-out
/// set: attention-is-all-you-need-pytorch).
#[test]
fn text_iterators_and_functions_only_opt_in_code_calls() {
    check("opt-in-callers");
}

/// A fixed zero-phase or biquad filter per item (`lowpass_biquad`, `filtfilt`) is a
/// derived input computed again every epoch; with a parameter drawn per item (in the
/// function the filter is nested in, `torch.FloatTensor(2).uniform_(...)`) it is an
/// augmentation; a pre-emphasis `lfilter` is one cheap pass (issue 44, the fifth held-out
/// set: eben).
#[test]
fn fixed_filters_per_item_and_random_ones() {
    check("filters-per-item");
}

/// A generator updated under `% n_critic` beside a discriminator stepped every iteration
/// is periodic (its logging every 5th step); a gate that holds the loop's one optimizer
/// step is gradient accumulation, every optimizer step (issue 44, the sixth held-out set:
/// stargan).
#[test]
fn a_critic_gate_beside_another_step_is_periodic() {
    check("critic-steps");
}

/// An evaluation script (`eval_linear.py`) fitting a head after training, and what only it
/// calls, is not the training run where another file trains (issue 44, the sixth held-out
/// set: dino).
#[test]
fn evaluation_scripts_are_not_the_training_run() {
    check("eval-scripts");
}

/// A method called only on branches the flags' defaults do not take (an `elif` on another
/// `--dataset` value, the `else` after the default's own test) runs a training loop of
/// another mode, not the default run's (issue 44, the sixth held-out set: stargan's
/// `train_multi`).
#[test]
fn loops_of_modes_the_defaults_do_not_take() {
    check("flag-modes");
}

/// The body of a guard that stops the run (`if not math.isfinite(loss.item()): ...;
/// sys.exit(1)`, `raise`) runs at most once; its test runs every step (issue 44, the sixth
/// held-out set: dino).
#[test]
fn a_guard_that_stops_the_run_reads_only_its_test_every_step() {
    check("exit-branch");
}

/// `num_workers` passed down as a parameter of the loader's builder is judged by the
/// flag of that name where the parameter's own default agrees (one worker decoding every
/// image); where they disagree it is left unjudged (issue 44, the sixth held-out set:
/// stargan's `get_loader`).
#[test]
fn workers_through_a_builders_parameter() {
    check("workers-parameter");
}

/// A script that trains nothing with its defaults (`--mode` defaulting to `test`): the
/// branch the user picks to train is the training run, not a mode the defaults leave out.
#[test]
fn a_mode_the_run_must_pick_to_train_is_the_training() {
    check("mode-required");
}

/// Batches made through `Dataset.apply(tf.data.experimental.bucket_by_sequence_length(...))`
/// are batches: iterated without `prefetch`, the pipeline is reported; with it, not
/// (issue 44, the sixth held-out set: TransformerTTS).
#[test]
fn batches_made_through_apply_are_batches() {
    check("tf-apply-batch");
}

/// A module whose `forward` no step reaches: a frozen model used only through a method
/// after `.cuda().eval()`, the decoder that only its `forward` calls, an augmentation class
/// nothing builds or names. One built into a list, named in a registry or in a config's
/// `_target_` may run (issue 44, the seventh held-out set: StarGANv2-VC).
#[test]
fn modules_no_step_reaches_run_no_forward() {
    check("unreached-modules");
}

/// A training script that the README, the shell scripts and the Makefile do not name,
/// beside the ones they do (`finetune/full.py` next to the README's `python
/// finetune/lora.py`; an optional vocoder's own `train.py`), is an alternative: its
/// findings, and those of what only it imports, are info. What the named scripts import,
/// and a module a config builds by name, stay on the default run. A script named for
/// training that runs a framework's trainer (`trainer.train()`, detectron2's) trains too
/// (issue 44, the seventh and ninth held-out sets: lit-llama, StableTTS, DETR's `d2/`).
#[test]
fn training_scripts_the_readme_does_not_run_are_alternatives() {
    check("entry-points");
}

/// The project's documents are its README and the pages beside it (a `PRETRAIN.md` the
/// README points to), with the shell scripts they name; a shell script none of them names
/// (a scratch `script.sh` of notes), a script only mentioned in prose or in a listing of
/// the tree (`├── chat_rl.py`, nanochat), and a variant a page offers ("run `large.py`
/// instead", Wav2Lip's HQ trainer) count only where they name nothing that trains. Before,
/// only the README and every shell script were read, so the scratch script's variant was
/// the default run and the documented one an alternative (issue 44, the ninth held-out set:
/// TinyLlama).
#[test]
fn the_pages_beside_the_readme_say_the_default_run() {
    check("doc-pages");
}

/// A module built only under flags off by default (`if args.masks:` then `if
/// args.dataset_file == "coco_panoptic":`, default `coco`) or only by torch.hub's
/// `hubconf.py`: its `forward` runs on no default step; a module built on every run keeps
/// its finding (issue 44, the ninth held-out set: DETR's panoptic post-processor).
#[test]
fn modules_built_only_off_the_default_run() {
    check("gated-modules");
}

/// Functions a step reaches through a base class's attribute (`self.torch_stft =
/// partial(stft, ...)`, set whatever the settings) and through a star import (`from utils
/// import *`, the module's own functions, never a method of one of its classes); a function
/// an attribute is set to only for one config value is not known to run (issue 44, the
/// ninth held-out set: FullSubNet, StyleTTS).
#[test]
fn helpers_reached_through_partials_and_star_imports() {
    check("helper-routes");
}

/// A tensor computed on the device from one built there (a comparison, then a reduction)
/// is on the device: its `.tolist()` every step is a sync; a CPU tensor's is not. A torch
/// operation on tensors (`torch.cdist`) gives a tensor, whose `.cpu()` waits even where
/// the name is assigned the copy (`C = C.view(...).cpu()`); a fill by a mask with a number
/// in a name and an optimizer state given a tensor are no syncs (issue 44, the ninth
/// held-out set: SpeechSplit, DETR's matcher).
#[test]
fn tensors_computed_from_device_tensors_are_on_the_device() {
    check("device-derived");
}

/// The keywords of a settings object (`hparams = HParams(num_workers=0, ...)`, `dict(...)`,
/// `EasyDict(...)`) are the defaults of the names read from it: a loader given
/// `num_workers=hparams.num_workers` has none (issue 44, the ninth held-out set: SpeechSplit).
#[test]
fn a_settings_objects_keywords_are_defaults() {
    check("settings-object");
}

/// `init_process_group("gloo")` where the project's model trains on CUDA (here in another
/// file, the trainer's): every step's gradient all-reduce goes through host memory (issue
/// 44, the ninth held-out set: FullSubNet).
#[test]
fn gloo_for_a_model_on_cuda() {
    check("ddp-gloo");
}

/// A `__main__` block that calls the script's own `train()`, where the loop is, is the
/// training run: its loader keeps its findings (issue 44, the tenth held-out set: Wav2Lip's
/// `wav2lip_train.py`, whose loader was taken for a self-test's).
#[test]
fn a_main_block_that_calls_the_training_function_trains() {
    check("main-calls-train");
}

/// A flag a loop sets only every N steps (`do_eval = True` under `if step % n == 0:`),
/// passed to a function's switch, leaves the switch's branch off on most steps; a flag set
/// every step does not (issue 44, the tenth held-out set: wavenet_vocoder's online
/// decoding).
#[test]
fn a_flag_set_every_n_steps_is_periodic() {
    check("periodic-flag");
}

/// What runs only with an optional argument the step leaves out (`model(x, y)` into
/// `forward(idx, targets=None, kv_cache=None)`: `if kv_cache is not None:`, the `else` arm
/// of `0 if kv_cache is None else kv_cache.get_pos()`) does not run in training (issue 44,
/// the tenth held-out set: nanochat's KV cache).
#[test]
fn branches_for_an_argument_the_step_leaves_out() {
    check("left-out");
}

/// The options the README's command gives (`--encoder conformer_cat --aux_loss`) are the
/// run's settings over the parser's defaults: the encoder it chooses runs, the others do
/// not, the switch it turns on is on; an option only a variant command gives (`--log_every
/// 1` on a CPU) is not (issue 44, the tenth held-out set: mfa_conformer).
#[test]
fn the_readmes_command_sets_the_flags() {
    check("readme-flags");
}

/// The `else` of `if not validate:`, with `validate=args.validate` from a `store_true`, is
/// opt-in: a flag off unless given turns no switch on (issue 44, the tenth held-out set:
/// image-segmentation-keras).
#[test]
fn the_else_of_a_negated_opt_in_flag_is_opt_in() {
    check("keras-validate");
}

/// What a flag's `None` default leaves off: a writer built only with `--log_dir` (`X if
/// args.log_dir is not None else None`, then `if writer is not None:`), a crop taken only
/// with `--crop`; a flag with a default runs its path; a module constant of 1
/// (`LOG_EVERY = 1`) makes `step % LOG_EVERY == 0` every step (issue 44, the seventh
/// held-out set: ConvNeXt, Matcha-TTS, lit-llama).
#[test]
fn none_defaults_and_module_constants() {
    check("none-defaults");
}

/// `DataParallel` where the script itself shows one GPU (`CUDA_VISIBLE_DEVICES` set to
/// `--gpu_id`, default "0") calls the module directly: info; with two by default it
/// scatters and gathers every step; under `if args.num_gpu > 1:` with `default=1` it is not
/// the default run's (issue 44, the seventh and tenth held-out sets: DeepLabV3Plus,
/// FloWaveNet).
#[test]
fn data_parallel_over_one_visible_gpu() {
    check("single-gpu");
}

/// A `DataLoader` subclass imported by a module name that only `PYTHONPATH` resolves (`from
/// speech import FrameLoader` with `src/data/speech.py`) is found by the unique module that
/// ends so (issue 44, the seventh held-out set: Speech-Transformer).
#[test]
fn loader_subclass_imported_through_pythonpath() {
    check("pythonpath-loader");
}

/// A Python generator given to Keras (`model.fit_generator(gen.batches())`, `model.fit(x)`
/// with `x` bound to a generator call, or a wrapper returning one) makes every batch in the
/// training process: its per-item decoding and features are every epoch's, and in one
/// thread where `workers` is left at 1; a generator over arrays in memory is not (issue 44,
/// the seventh and ninth held-out sets: KerasDeepSpeech, keras-yolo3).
#[test]
fn keras_python_generators_run_per_item() {
    check("keras-generator");
}

/// In a project that trains (here with Lightning: `training_step`, `Trainer.fit`), a
/// module of definitions only that no file imports or names (a vendored vocoder's
/// `meldataset.py`) does not run, and a loader built in a function named for synthesis or
/// inference (`batched_synthesis`) feeds no training (issue 44, the seventh held-out set:
/// Matcha-TTS).
#[test]
fn unused_modules_and_synthesis_loaders() {
    check("unused-modules");
}

/// Values a loss helper hands back already on the host (`return loss, to_cpu(stack)`, the
/// `.cpu()` being the one copy) are host values in the loop: `float(parts[0])` copies
/// nothing; parts left on the device sync every step (issue 44, the seventh held-out set:
/// PyTorch-YOLOv3).
#[test]
fn values_returned_on_the_host() {
    check("host-results");
}

/// A transcript phonemized in `__getitem__` (`backend.phonemize(...)` on a phonemizer
/// `EspeakBackend`, also in a cleaner picked by `getattr(cleaners, name)`) is the same work
/// every epoch; phonemes written once and read per item are not, nor is a cleaner in the
/// `else` of a setting the config turns on (VITS' `if self.cleaned_text:` with
/// `cleaned_text: true`) (issue 44, the seventh held-out set: Matcha-TTS; VITS).
#[test]
fn phonemes_computed_per_item() {
    check("phonemes-per-item");
}

/// Where the project loads modules by a computed name (`importlib.import_module(f"plugins.
/// {kind}")`), a module nothing imports by name may still run: its findings stay.
#[test]
fn modules_loaded_by_computed_names_stay_on_the_run() {
    check("dynamic-modules");
}

/// A slice of a device tensor set from a host tensor (`gain[2:6] = torch.tensor(p.shape)[...]`
/// with `gain = torch.ones(7, device=d)`, or its `.long()` cast) copies it to the GPU every
/// step; a shape read to
/// build it is no data of the step's; a host tensor set from one copies nothing (issue 44,
/// the seventh held-out set: PyTorch-YOLOv3).
#[test]
fn slices_of_device_tensors_set_from_host_tensors() {
    check("slice-copies");
}

/// A flag's default is argparse's: `parser.set_defaults(pin_mem=True)` wins over a
/// `store_true` flag's False, and without it the first action of a destination sets it
/// (issue 44, the eighth held-out set: MAE's `--pin_mem` / `--no_pin_mem`).
#[test]
fn flag_defaults_are_argparse_s() {
    check("parser-defaults");
}

/// A loop whose call steps with no loop on the way is the training loop (`for j in
/// range(n): agent.update(x)`); an epoch loop, whose callee loops over the data, is not.
/// The class the flags' default picks is the one that runs, and a loader built under an
/// opt-in flag is off the default run (issue 44, the eighth held-out set:
/// pytorch-a2c-ppo-acktr-gail, improved-diffusion).
#[test]
fn a_loop_that_steps_through_a_call_is_the_training_loop() {
    check("step-callees");
}

/// Arithmetic on a host value is a host value (`lossf = loss.item() * accum`), and so is
/// what a helper returns when it returns the host value it was given (`all_reduce_mean(
/// loss_value)` on one rank), and a loop's counter: logging them copies nothing. A read
/// under a tensor test (`if isinstance(v, torch.Tensor): v = v.item()`) copies only what
/// callers give as tensors (issue 44, the seventh and eighth held-out sets: llama2.c, MAE,
/// ConvNeXt).
#[test]
fn host_arithmetic_and_host_values_passed_through_stay_on_the_host() {
    check("host-floats");
}

/// A function's own switches left at their defaults keep their branches off: a loader
/// built only under `if deterministic:` with `deterministic=False` is info, and a read
/// under `if norm_type == inf:` with `norm_type=2.0` is not every step; a caller that turns
/// the switch on turns the branch on (issue 44, the eighth held-out set: improved-diffusion,
/// MAE).
#[test]
fn a_function_s_own_switches_keep_their_branches_off() {
    check("switch-defaults");
}

/// A resample under `if sr != SAMPLE_RATE:` runs only for files at another rate: info,
/// saying when it costs; one that always runs is every item's (issue 44, the fifth and
/// eighth held-out sets: eben, SpeechTokenizer).
#[test]
fn a_resample_guarded_by_the_rate_is_info() {
    check("resample-guard");
}

/// An `elif` with a period of its own is periodic too; the `else` after it runs on most
/// steps (issue 44, the eighth held-out set: EasyLM's checkpoint gates).
#[test]
fn an_elif_with_its_own_period_is_periodic() {
    check("periodic-elif");
}

/// A class a package re-exports (`from .ppo import PPO` in `algo/__init__.py`) and a file
/// builds as `algo.PPO(...)` only on a branch the flags' defaults do not take is off the
/// default run, its methods with it (issue 44, the eighth held-out set:
/// pytorch-a2c-ppo-acktr-gail).
#[test]
fn a_class_built_through_its_package_only_off_the_default_run_is_off_it() {
    check("package-classes");
}

/// A loop whose backward pass and optimizer step run in a helper given the loss first and
/// the optimizer (`loss_scaler(loss, optimizer, ...)`, timm's and DeiT's `NativeScaler`)
/// is the training loop, iterated through a logger's wrapper
/// (`metric_logger.log_every(data_loader, ...)`); an epoch loop that saves a checkpoint
/// given the loss after the optimizer is not.
#[test]
fn backward_helper() {
    check("backward-helper");
}

/// A training step runs the model in training mode: the host tensors of `forward`'s
/// evaluation path (`if not self.training:`, the `else` of `if self.training:`, after the
/// training path's `return`) are not every step; the training path's still is (issue 44,
/// pattern 3).
#[test]
fn the_evaluation_path_of_forward_is_not_every_step() {
    check("eval-mode-branches");
}

/// `kwargs.get("infer", False)` on a function's `**kwargs` is a switch off unless the
/// caller gives it, as a parameter `infer=False` is: `forward`'s sampler is not every
/// step, a helper's logging that the step switches on is (issue 44, pattern 3).
#[test]
fn a_switch_read_from_kwargs_is_off_unless_given() {
    check("kwargs-switch");
}

/// An attribute the project only ever sets falsy (`self.infer = False`, never `True`) is a
/// switch nothing turns on: its branch is not every step; one the training script sets
/// `True` is (issue 44, pattern 3).
#[test]
fn an_attribute_nothing_turns_on_is_off() {
    check("attribute-switch");
}

/// A helper of the file that builds a table on the host and returns it, copied to the GPU
/// by `forward` (`causal_mask(n).cuda()`, `self.positions(n).to(x.device)`), every call;
/// not a helper that builds on the device, converts the data it is given, or returns
/// something else on one of its paths (issue 44, a miss of the eleventh scouting set).
#[test]
fn a_host_table_returned_by_a_helper_and_moved_is_every_call() {
    check("host-table-returned");
}

/// A boolean mask applied to each row of a device tensor in a comprehension (`[y[y !=
/// PAD] for y in padded]`) counts each row on the host, every step; the same over a list
/// of host arrays does not (issue 44, a miss of the eleventh scouting set).
#[test]
fn a_mask_per_row_of_a_device_tensor_is_a_sync() {
    check("mask-per-row");
}

/// A switch given from the project's YAML (`print_nan_grads=hparams["print_nan_grads"]`
/// with `print_nan_grads: false`) turns nothing on: the trainer's branch on it is not every
/// step; one the YAML turns on is (issue 44, pattern 3).
#[test]
fn a_switch_the_config_leaves_off_is_off() {
    check("config-switch");
}

/// `if hyp["loss_ota"] == 1: ... else: ...` with every config of the project at 1 (or
/// `if opt.aux == "flat":` with that default): the step runs the branch the defaults
/// take, not the other (yolov7's `ComputeLoss`, the eleventh scouting set; issue 44,
/// pattern 3).
#[test]
fn only_the_branch_the_defaults_take_runs_in_the_step() {
    check("default-branch");
}

/// A benchmarking helper's loop (`profile()` timing forward and backward with syncs, no
/// optimizer step) is no training loop; a timed loop that steps an optimizer is (issue 44,
/// the eleventh scouting set's yolov7).
#[test]
fn a_benchmark_helper_is_no_training_loop() {
    check("benchmark-helper");
}

/// `num_workers=dataset.num_workers` where the project defines `num_workers` as a
/// property (computed when read) is not judged by another class's `num_workers=None`
/// parameter; a setting with only such a default still is (issue 44, pattern 4; FastDiff,
/// the eleventh scouting set).
#[test]
fn a_property_has_no_default_elsewhere() {
    check("property-setting");
}

/// `importlib.import_module` does not make every module possibly run: a name built from
/// a literal package (`f"plugins.{name}"`) loads that package's modules, a name read whole
/// (`import_module(pkg)` from a config) loads what a config or string names; a module
/// outside both that nothing imports is off the path (issue 44; FastDiff's
/// `utils/torch_stft.py`, the eleventh scouting set).
#[test]
fn a_computed_import_loads_only_what_it_can_name() {
    check("dynamic-imports");
}
