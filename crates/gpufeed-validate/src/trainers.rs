//! Whose config is this? One table of speech trainers, each with the keys that mark its
//! configs and the key names under which it sets what gpufeed understands (loader
//! workers, batch size, fixed or bucketed shapes, pinned memory, prefetch, mixed
//! precision, feature caching). MyXTTS' own configs (`model`, `data`, `training`) are
//! recognised here too and keep every rule they had (the crate docs list them).
//!
//! Recognition scores each trainer by its markers present in the file (2 points each) and
//! MyXTTS by its sections (1 point each) and the keys of its schema (1 point each); the
//! highest score wins, MyXTTS on a tie. MyXTTS needs as many of its own keys as others in
//! its sections, typos of its keys aside (its dataclasses refuse unknown keys, so a config
//! it ran has none): the same section names with mostly other keys are another trainer's.
//! A top-level `defaults` list, Hydra's, is in no MyXTTS config and makes the file a Hydra
//! application's whatever its `data` section holds. Another trainer needs 2 markers at
//! least, and is named only when the file has one of its own keys ([`Trainer::own`]): a
//! Lightning `trainer:` section is NeMo's, a Lightning CLI config's, a Hydra application's
//! and many
//! others', so it says that the file is some trainer's, not whose. Such a file, or one with
//! no trainer's markers and no MyXTTS section but a `DataLoader` argument somewhere, is
//! checked as [`UNKNOWN`]'s: its loader settings found by key name.
//!
//! Loader settings (`num_workers`, `batch_size`, `pin_memory`, `persistent_workers`,
//! `prefetch_factor`) not under the trainer's own key names are looked for by name at any
//! depth (`data.init_args.train_params.num_workers`), so that the file is never said not to
//! set what it sets; where several are found, those on a path with a `train` segment are
//! the training loader's (`train_ds`, `train_params`), else each is reported with its path.

use std::fmt::Write as _;
use std::path::Path;

use gpufeed_config::{OutlineValue, key_info, near_key};
use gpufeed_stats::thresholds::BATCH_SIZE_SMALL;

use super::Context;
use crate::keys::{Dialect, Keys};
use gpufeed_findings::finding::{Finding, Severity, TextEdit};
use gpufeed_findings::rules::finding;

/// What a setting tells gpufeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// Loader worker processes (an integer; 0 loads in the training process).
    Workers,
    /// Items per batch (an integer).
    BatchSize,
    /// How batches are shaped: bucketing or grouping by length (reported, not judged: a
    /// PyTorch step does not recompile for a new shape).
    Shapes,
    /// Every batch padded to one shape (a boolean; TensorFlow retraces otherwise).
    FixedShapes,
    /// Pinned host memory for the copy to the GPU (a boolean).
    PinMemory,
    /// Loader workers kept between epochs (a boolean; reported, not judged: no `validate`
    /// rule speaks of it yet).
    PersistentWorkers,
    /// Batches prepared ahead per worker (an integer; 0 prepares none).
    Prefetch,
    /// Mixed precision on or off (a boolean).
    MixedPrecision,
    /// Lightning's `precision` (`16`, `"16-mixed"`, `"bf16-mixed"`, `32`).
    Precision,
    /// Features or inputs cached after the first epoch, or read precomputed from disk (a
    /// boolean).
    FeatureCache,
    /// Steps between pauses of the training loop to validate, synthesise or checkpoint
    /// (reported, not judged: what a pause costs depends on the step time).
    Evaluation,
}

impl What {
    fn name(self) -> &'static str {
        match self {
            Self::Workers => "loader workers",
            Self::BatchSize => "batch size",
            Self::Shapes => "batch shapes",
            Self::FixedShapes => "fixed shapes",
            Self::PinMemory => "pinned memory",
            Self::PersistentWorkers => "persistent workers",
            Self::Prefetch => "prefetch",
            Self::MixedPrecision | Self::Precision => "mixed precision",
            Self::FeatureCache => "feature caching",
            Self::Evaluation => "steps between evaluation pauses",
        }
    }

    /// The PyTorch `DataLoader` argument this setting is, whoever's config it is: looked for
    /// by name at any depth when the trainer's own key names are not in the file.
    fn loader_arg(self) -> Option<&'static str> {
        match self {
            Self::Workers => Some("num_workers"),
            Self::BatchSize => Some("batch_size"),
            Self::PinMemory => Some("pin_memory"),
            Self::PersistentWorkers => Some("persistent_workers"),
            Self::Prefetch => Some("prefetch_factor"),
            _ => None,
        }
    }
}

/// One setting gpufeed understands, under the trainer's key names (the first the file
/// sets is read).
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// What it sets.
    pub what: What,
    /// The dotted key paths, in order of preference; empty: the `DataLoader` argument found
    /// by name (`num_workers`, `batch_size`, ...).
    pub keys: &'static [&'static str],
    /// The trainer's own advice when the setting is off, instead of turning it on (empty:
    /// turn it on).
    pub advice: &'static str,
}

/// One trainer.
#[derive(Debug, Clone, Copy)]
pub struct Trainer {
    /// Its name in messages.
    pub name: &'static str,
    /// Keys (dotted paths; `*` matches one segment) found in its configs and rarely in
    /// others'.
    pub markers: &'static [&'static str],
    /// Keys (as markers; `name[]`: a list) that only its configs have: it is named only when
    /// the file has one, since some of its markers may be shared (a Lightning `trainer:`
    /// section). Empty: its markers are its own.
    pub own: &'static [&'static str],
    /// What gpufeed reads, under its key names.
    pub settings: &'static [Setting],
    /// Where the loader settings are when the config does not hold them.
    pub note: &'static str,
    /// Where the key names come from.
    pub source: &'static str,
}

const fn s(what: What, keys: &'static [&'static str]) -> Setting {
    Setting {
        what,
        keys,
        advice: "",
    }
}

/// A loader setting found by its `DataLoader` argument's name, at any depth.
const fn by_name(what: What) -> Setting {
    s(what, &[])
}

/// A setting whose fix is not just turning it on.
const fn advised(what: What, keys: &'static [&'static str], advice: &'static str) -> Setting {
    Setting { what, keys, advice }
}

use What::{
    BatchSize, Evaluation, FeatureCache, FixedShapes, MixedPrecision, PersistentWorkers, PinMemory,
    Precision, Prefetch, Shapes, Workers,
};

/// Every `DataLoader` setting, found by name.
const LOADER_BY_NAME: [Setting; 5] = [
    by_name(Workers),
    by_name(BatchSize),
    by_name(PinMemory),
    by_name(PersistentWorkers),
    by_name(Prefetch),
];

/// The config of a trainer gpufeed does not know: its loader settings, found by name.
pub static UNKNOWN: Trainer = Trainer {
    name: "a trainer gpufeed does not know",
    markers: &[],
    own: &[],
    settings: &LOADER_BY_NAME,
    note: "",
    source: "PyTorch's `DataLoader` arguments, found by name at any depth",
};

/// MyXTTS: the `model`/`data`/`training` sections of gpufeed's own schema.
pub const MYXTTS: &str = "MyXTTS";

/// Every trainer besides MyXTTS. On equal markers the later entry is named, so the
/// families whose markers others share (Lightning CLI, Hydra) come first.
pub const TRAINERS: &[Trainer] = &[
    Trainer {
        name: "Lightning CLI",
        markers: &[
            "model.class_path",
            "data.class_path",
            "model.init_args",
            "data.init_args",
            "seed_everything",
            "optimizer.class_path",
            "lr_scheduler.class_path",
            "trainer.callbacks.class_path",
            "trainer.logger.class_path",
            "ckpt_path",
            "trainer.devices",
            "trainer.accelerator",
            "trainer.max_epochs",
            "trainer.precision",
        ],
        own: &[
            "model.class_path",
            "data.class_path",
            "optimizer.class_path",
            "lr_scheduler.class_path",
            "trainer.callbacks.class_path",
            "trainer.logger.class_path",
        ],
        settings: &[
            by_name(Workers),
            by_name(BatchSize),
            by_name(PinMemory),
            by_name(PersistentWorkers),
            by_name(Prefetch),
            s(Precision, &["trainer.precision"]),
        ],
        note: "the DataLoader arguments are the data module's own `init_args`, found by key name",
        source: "Lightning-AI/pytorch-lightning: LightningCLI (`--print_config`: \
                 `seed_everything`, `trainer`, `model` and `data` as `class_path` + `init_args`)",
    },
    Trainer {
        name: "Hydra",
        markers: &[
            "hydra",
            "defaults",
            "hydra.run.dir",
            "hydra.sweep.dir",
            "hydra.job",
            "hydra.searchpath",
            "hydra.output_subdir",
            "trainer._target_",
            "*._target_",
        ],
        own: &["defaults[]", "hydra"],
        settings: &[
            by_name(Workers),
            by_name(BatchSize),
            by_name(PinMemory),
            by_name(PersistentWorkers),
            by_name(Prefetch),
            s(Precision, &["trainer.precision"]),
        ],
        note: "the DataLoader arguments are the application's own, found by key name; Hydra \
               composes the `defaults` list when the job starts, so the configs it names were \
               not read",
        source: "facebookresearch/hydra: the defaults list and the `hydra:` node; PyTorch's \
                 `DataLoader` arguments by name",
    },
    Trainer {
        name: "Coqui TTS",
        markers: &[
            "run_name",
            "num_loader_workers",
            "num_eval_loader_workers",
            "num_val_loader_workers",
            "audio.fft_size",
            "audio.num_mels",
            "audio.do_trim_silence",
            "print_step",
            "use_phonemes",
            "phoneme_cache_path",
            "batch_group_size",
            "text_cleaner",
            "compute_input_seq_cache",
        ],
        own: &[],
        settings: &[
            s(Workers, &["num_loader_workers"]),
            s(BatchSize, &["batch_size"]),
            s(Shapes, &["batch_group_size"]),
            s(MixedPrecision, &["mixed_precision"]),
            s(FeatureCache, &["compute_input_seq_cache"]),
        ],
        note: "",
        source: "coqui-ai/TTS: TTS/config/shared_configs.py (BaseTrainingConfig), TTS/tts/configs/*.json",
    },
    Trainer {
        name: "ESPnet",
        markers: &[
            "batch_type",
            "batch_bins",
            "accum_grad",
            "max_epoch",
            "optim_conf",
            "scheduler_conf",
            "encoder_conf",
            "decoder_conf",
            "best_model_criterion",
            "keep_nbest_models",
            "frontend_conf",
            "specaug_conf",
            "tts_conf",
            "feats_extract_conf",
            "model_conf",
        ],
        own: &[],
        settings: &[
            s(Workers, &["num_workers"]),
            s(BatchSize, &["batch_size"]),
            s(Shapes, &["batch_type"]),
            s(MixedPrecision, &["use_amp"]),
        ],
        note: "ESPnet pins memory itself when it trains on GPUs",
        source: "espnet/espnet: espnet2/tasks/abs_task.py (--num_workers, --batch_type, --use_amp), egs2/*/conf/tuning/*.yaml",
    },
    Trainer {
        name: "NeMo (Hydra)",
        markers: &[
            "exp_manager",
            "trainer.devices",
            "trainer.precision",
            "trainer.accelerator",
            "trainer.max_epochs",
            "trainer.strategy",
            "model.train_ds",
            "model.validation_ds",
            "model.optim",
            "model.optim.sched",
        ],
        own: &[
            "exp_manager",
            "model.train_ds.manifest_filepath",
            "model.train_ds.dataset.manifest_filepath",
            "model.validation_ds.manifest_filepath",
            "model.validation_ds.dataset.manifest_filepath",
            "model.train_ds.tarred_audio_filepaths",
        ],
        settings: &[
            s(
                Workers,
                &[
                    "model.train_ds.dataloader_params.num_workers",
                    "model.train_ds.num_workers",
                ],
            ),
            s(
                BatchSize,
                &[
                    "model.train_ds.dataloader_params.batch_size",
                    "model.train_ds.batch_size",
                ],
            ),
            s(
                PinMemory,
                &[
                    "model.train_ds.dataloader_params.pin_memory",
                    "model.train_ds.pin_memory",
                ],
            ),
            s(
                Prefetch,
                &["model.train_ds.dataloader_params.prefetch_factor"],
            ),
            s(
                Shapes,
                &[
                    "model.train_ds.use_bucketing",
                    "model.train_ds.bucketing_strategy",
                ],
            ),
            s(Precision, &["trainer.precision"]),
        ],
        note: "",
        source: "NVIDIA/NeMo: examples/tts/conf/*.yaml, examples/asr/conf/**/*.yaml",
    },
    Trainer {
        name: "Lightning-Hydra (Matcha-TTS style)",
        markers: &[
            "_target_",
            "defaults",
            "task_name",
            "trainer._target_",
            "callbacks",
            "paths.root_dir",
            "train_filelist_path",
            "valid_filelist_path",
            "data_statistics",
            "data._target_",
            "data.train_filelist_path",
            "model._target_",
        ],
        own: &[
            "train_filelist_path",
            "valid_filelist_path",
            "data_statistics",
            "data.train_filelist_path",
            "data.valid_filelist_path",
            "data.data_statistics",
        ],
        settings: &[
            s(Workers, &["num_workers", "data.num_workers"]),
            s(BatchSize, &["batch_size", "data.batch_size"]),
            s(PinMemory, &["pin_memory", "data.pin_memory"]),
            s(Precision, &["precision", "trainer.precision"]),
        ],
        note: "",
        source: "shivammehta25/Matcha-TTS: configs/{data,trainer,model}/*.yaml (lightning-hydra-template)",
    },
    Trainer {
        name: "F5-TTS",
        markers: &[
            "datasets.batch_size_per_gpu",
            "datasets.batch_size_type",
            "datasets.max_samples",
            "model.mel_spec",
            "model.backbone",
            "ckpts.save_per_updates",
            "optim.num_warmup_updates",
            "optim.grad_accumulation_steps",
        ],
        own: &[],
        settings: &[
            s(Workers, &["datasets.num_workers"]),
            s(Shapes, &["datasets.batch_size_type"]),
        ],
        note: "`datasets.batch_size_per_gpu` counts frames with `batch_size_type: frame`, so it is \
               not judged as a batch size; mixed precision is set by `accelerate launch`",
        source: "SWivid/F5-TTS: src/f5_tts/configs/*.yaml",
    },
    Trainer {
        name: "TensorFlowTTS",
        markers: &[
            "hop_size",
            "format",
            "allow_cache",
            "remove_short_samples",
            "mel_length_threshold",
            "is_shuffle",
            "train_max_steps",
            "save_interval_steps",
            "eval_interval_steps",
            "log_interval_steps",
            "var_train_expr",
            "use_norm",
            "tacotron2_params",
            "fastspeech2_params",
            "fastspeech_params",
            "multiband_melgan_generator_params",
            "hifigan_generator_params",
        ],
        own: &[],
        settings: &[
            s(BatchSize, &["batch_size"]),
            s(FixedShapes, &["use_fixed_shapes"]),
            s(FeatureCache, &["allow_cache"]),
            s(Evaluation, &["eval_interval_steps"]),
        ],
        note: "its tf.data loader uses AUTOTUNE in the code; mixed precision is a command-line flag",
        source: "TensorSpeech/TensorFlowTTS: examples/*/conf/*.yaml",
    },
    Trainer {
        name: "FastSpeech2 (ming024 style)",
        markers: &[
            "path.ckpt_path",
            "path.log_path",
            "path.result_path",
            "path.preprocessed_path",
            "path.raw_path",
            "path.corpus_path",
            "optimizer.grad_acc_step",
            "optimizer.warm_up_step",
            "optimizer.anneal_steps",
            "optimizer.anneal_rate",
            "step.total_step",
            "step.log_step",
            "step.synth_step",
            "preprocessing.stft.filter_length",
            "preprocessing.mel.n_mel_channels",
            "preprocessing.pitch.feature",
            "preprocessing.energy.feature",
            "transformer.encoder_layer",
            "variance_predictor.filter_size",
            "variance_embedding.pitch_quantization",
        ],
        own: &[],
        settings: &[
            s(BatchSize, &["optimizer.batch_size"]),
            s(Evaluation, &["step.synth_step"]),
            s(Evaluation, &["step.val_step"]),
        ],
        note: "train.py stops training every `step.synth_step` steps to synthesise a sample \
               with the vocoder and log it, and every `step.val_step` steps to run the \
               validation set; its loader (workers, length grouping) is set in train.py, and \
               its features are precomputed by preprocess.py; `gpufeed lint` reads the code",
        source: "ming024/FastSpeech2: config/*/{preprocess,model,train}.yaml",
    },
    Trainer {
        name: "VITS",
        markers: &[
            "train.fp16_run",
            "train.segment_size",
            "train.c_mel",
            "train.c_kl",
            "train.log_interval",
            "data.training_files",
            "data.validation_files",
            "data.filter_length",
            "data.n_mel_channels",
            "data.add_blank",
            "data.cleaned_text",
            "model.inter_channels",
            "model.resblock_kernel_sizes",
            "model.upsample_rates",
        ],
        own: &[],
        settings: &[
            s(BatchSize, &["train.batch_size"]),
            s(MixedPrecision, &["train.fp16_run"]),
            s(Evaluation, &["train.eval_interval"]),
            advised(
                FeatureCache,
                &["data.load_mel_from_disk"],
                "compute each clip's mel once (`np.save` / `torch.save`), list those files in \
                 the filelists, then set data.load_mel_from_disk to true",
            ),
        ],
        note: "its loader (workers, bucket sampler) is set in train.py; `gpufeed lint` reads the code",
        source: "jaywalnut310/vits: configs/*.json; jaywalnut310/glow-tts: configs/*.json \
                 (`data.load_mel_from_disk`, read by data_utils.py)",
    },
    Trainer {
        name: "HiFi-GAN",
        markers: &[
            "resblock",
            "upsample_rates",
            "upsample_kernel_sizes",
            "upsample_initial_channel",
            "resblock_kernel_sizes",
            "resblock_dilation_sizes",
            "num_freq",
            "win_size",
            "adam_b1",
            "adam_b2",
            "lr_decay",
            "dist_config",
        ],
        own: &[],
        settings: &[
            s(Workers, &["num_workers"]),
            s(BatchSize, &["batch_size"]),
            s(Shapes, &["segment_size"]),
        ],
        note: "",
        source: "jik876/hifi-gan: config_v1.json",
    },
    Trainer {
        name: "StyleTTS2",
        markers: &[
            "log_dir",
            "first_stage_path",
            "epochs_1st",
            "epochs_2nd",
            "data_params.train_data",
            "data_params.root_path",
            "preprocess_params.spect_params",
            "model_params",
            "loss_params",
            "slmadv_params",
        ],
        own: &[],
        settings: &[s(BatchSize, &["batch_size"]), s(Shapes, &["max_len"])],
        note: "its loaders (workers) are set in train_first.py and train_second.py; `gpufeed lint` \
               reads the code",
        source: "yl4579/StyleTTS2: Configs/config.yml",
    },
    Trainer {
        name: "NVIDIA Tacotron 2 (hparams.py)",
        markers: &[
            "fp16_run",
            "dynamic_loss_scaling",
            "iters_per_checkpoint",
            "load_mel_from_disk",
            "n_frames_per_step",
            "symbols_embedding_dim",
            "encoder_kernel_size",
            "attention_rnn_dim",
            "attention_location_n_filters",
            "postnet_embedding_dim",
            "max_decoder_steps",
            "gate_threshold",
            "p_attention_dropout",
            "mask_padding",
            "use_saved_learning_rate",
            "cudnn_enabled",
        ],
        own: &[],
        settings: &[
            s(BatchSize, &["batch_size"]),
            s(MixedPrecision, &["fp16_run"]),
            advised(
                FeatureCache,
                &["load_mel_from_disk"],
                "compute each clip's mel once (`np.save`), list the `.npy` files in the \
                 filelists, then set load_mel_from_disk to True",
            ),
            s(Evaluation, &["iters_per_checkpoint"]),
        ],
        note: "upstream NVIDIA/tacotron2's train.py validates and saves a checkpoint every \
               `iters_per_checkpoint` iterations and sets the loader (`num_workers=1`, \
               `pin_memory=False`); gpufeed did not read your train.py: `gpufeed lint` reads \
               the code",
        source: "NVIDIA/tacotron2: hparams.py (`create_hparams()`: AttrDict or \
                 tf.contrib.training.HParams); NVIDIA/mellotron: hparams.py",
    },
    Trainer {
        name: "NVIDIA WaveGlow / Flowtron (config.json)",
        markers: &[
            "train_config.fp16_run",
            "train_config.iters_per_checkpoint",
            "train_config.output_directory",
            "train_config.checkpoint_path",
            "train_config.sigma",
            "data_config.training_files",
            "data_config.segment_length",
            "data_config.max_wav_value",
            "waveglow_config.n_flows",
            "waveglow_config.n_group",
            "waveglow_config.WN_config",
            "model_config.n_flows",
        ],
        own: &[],
        settings: &[
            s(BatchSize, &["train_config.batch_size"]),
            s(MixedPrecision, &["train_config.fp16_run"]),
            s(Shapes, &["data_config.segment_length"]),
            s(Evaluation, &["train_config.iters_per_checkpoint"]),
        ],
        note: "upstream NVIDIA/waveglow's train.py reads the `train_config` and `data_config` \
               sections and sets the loader (`num_workers=1`, `pin_memory=False`), and its \
               mel2samp.py computes each clip's mel per item; gpufeed did not read your code: \
               `gpufeed lint` reads it",
        source: "NVIDIA/waveglow: config.json; NVIDIA/flowtron: config.json",
    },
    Trainer {
        name: "Tacotron (keithito-style HParams)",
        markers: &[
            "outputs_per_step",
            "frame_length_ms",
            "frame_shift_ms",
            "preemphasis",
            "min_level_db",
            "ref_level_db",
            "griffin_lim_iters",
            "embed_depth",
            "prenet_depth1",
            "encoder_depth",
            "postnet_depth",
            "use_cmudict",
            "decay_learning_rate",
            "tacotron_batch_size",
            "wavenet_batch_size",
        ],
        own: &[],
        settings: &[s(BatchSize, &["batch_size", "tacotron_batch_size"])],
        note: "its input pipeline is code, not settings (keithito/tacotron: one Python thread \
               feeds a queue, datasets/datafeeder.py); `gpufeed lint` reads the code",
        source: "keithito/tacotron: hparams.py (tf.contrib.training.HParams); \
                 Rayhane-mamah/Tacotron-2: hparams.py",
    },
];

/// Whose config a file is.
#[derive(Debug, Clone, Copy)]
pub enum Whose {
    /// MyXTTS (gpufeed's schema): today's rules, all of them.
    Myxtts,
    /// Another trainer of [`TRAINERS`], or [`UNKNOWN`] when the file is some trainer's but
    /// no trainer's own keys say whose.
    Other(&'static Trainer),
    /// No trainer gpufeed knows, and no loader setting.
    Unknown,
}

/// True when `path` (a config's dotted key) matches `pattern` (`*` = one segment; list
/// indices are ignored, except that `name[]` matches only an item of the list `name`).
fn matches(pattern: &str, path: &str) -> bool {
    let mut p = pattern.split('.');
    let mut k = path.split('.');
    loop {
        match (p.next(), k.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) => {
                let same = match a.strip_suffix("[]") {
                    Some(list) => b.strip_prefix(list).is_some_and(|i| i.starts_with('[')),
                    None => a == "*" || a == b.split('[').next().unwrap_or(b),
                };
                if !same {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// The patterns of `patterns` that the file has (a list item matches `name[]`, a key any
/// other pattern).
fn found(o: &Keys, patterns: &'static [&'static str]) -> Vec<&'static str> {
    patterns
        .iter()
        .copied()
        .filter(|m| {
            o.entries()
                .iter()
                .any(|e| (e.key.is_some() || m.ends_with("[]")) && matches(m, &e.path))
        })
        .collect()
}

/// The markers of `t` that the file has.
pub fn markers_found(o: &Keys, t: &Trainer) -> Vec<&'static str> {
    found(o, t.markers)
}

/// True when the file has one of `t`'s own keys, or `t` has none (its markers suffice).
fn is_named(o: &Keys, t: &Trainer) -> bool {
    t.own.is_empty() || !found(o, t.own).is_empty()
}

/// The trainers with 2 markers or more in the file, and how many.
fn candidates(o: &Keys) -> Vec<(&'static Trainer, usize)> {
    TRAINERS
        .iter()
        .map(|t| (t, markers_found(o, t).len()))
        .filter(|(_, n)| *n >= 2)
        .collect()
}

/// Recognises the trainer by the table's markers, and names it by its own keys.
pub fn whose(o: &Keys) -> Whose {
    let entries = o.entries();
    if entries.is_empty() {
        return Whose::Myxtts; // an empty file: MyXTTS' defaults, as before
    }
    let sections = ["model", "data", "training"];
    let mut myxtts = 0usize;
    let (mut known, mut unknown) = (0usize, 0usize);
    for e in entries {
        let top = e.path.split('.').next().unwrap_or("");
        if !sections.contains(&top) {
            continue;
        }
        if e.depth == 1 && o.value(&e.path).is_none() {
            myxtts += 1; // a section that is a mapping
        } else if e.depth == 2 && e.key.is_some() {
            if key_info(&e.path).is_some() {
                myxtts += 1;
                known += 1;
            } else if !near_key(&e.path) {
                unknown += 1;
            }
        }
    }
    let candidates = candidates(o);
    // Whether the file is another trainer's is decided by all the markers, shared or not;
    // whose it is, by the trainers' own keys.
    if candidates.iter().any(|(_, n)| 2 * n > myxtts) {
        let named = candidates
            .iter()
            .filter(|(t, _)| is_named(o, t))
            .max_by_key(|(_, n)| *n);
        return Whose::Other(named.map_or(&UNKNOWN, |(t, _)| *t));
    }
    // Hydra's defaults list (`defaults: [model: resnet, _self_]`) is in no MyXTTS config,
    // and decides the file is a Hydra application's whatever its `data` section holds.
    if !found(o, &["defaults[]"]).is_empty()
        && let Some(hydra) = TRAINERS.iter().find(|t| t.name == "Hydra")
    {
        return Whose::Other(hydra);
    }
    // MyXTTS' dataclasses refuse a key they do not define (TypeError), so a config it ran
    // has none, and one with a typo a few (near a key of its own: not counted): sections
    // where most keys are not MyXTTS' are another trainer's `model`/`data`/`training` (a
    // common layout).
    if myxtts > 0 && unknown <= known {
        return Whose::Myxtts;
    }
    // A Python file's names are code's as much as settings: only YAML is read this way.
    let loader_keys = LOADER_BY_NAME
        .iter()
        .filter_map(|s| s.what.loader_arg())
        .any(|arg| !loader_keys(o, arg).is_empty());
    if o.dialect() == Dialect::Yaml && loader_keys {
        return Whose::Other(&UNKNOWN);
    }
    Whose::Unknown
}

/// The keys named `arg` (a `DataLoader` argument) at any depth that hold a value: those of
/// the training loader when a path says so (a segment containing `train`: `train_ds`,
/// `train_params`) and others do not, else all of them, in file order.
fn loader_keys(o: &Keys, arg: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for e in o.entries() {
        let named = e.key.is_some() && e.path.rsplit('.').next() == Some(arg);
        if named && o.value(&e.path).is_some() && !all.contains(&e.path) {
            all.push(e.path.clone());
        }
    }
    let train: Vec<String> = all
        .iter()
        .filter(|p| {
            p.split('.')
                .rev()
                .skip(1)
                .any(|segment| segment.to_ascii_lowercase().contains("train"))
        })
        .cloned()
        .collect();
    if train.is_empty() { all } else { train }
}

/// Where the file sets a setting: the first of its key names the file has, else (a loader
/// setting) every key of its `DataLoader` argument's name, found by [`loader_keys`]. True
/// with the keys found by name.
fn locate(o: &Keys, setting: &Setting) -> (Vec<String>, bool) {
    if let Some(key) = setting.keys.iter().find(|k| o.has(k)) {
        return (vec![(*key).to_owned()], false);
    }
    match setting.what.loader_arg() {
        Some(arg) => (loader_keys(o, arg), true),
        None => (Vec::new(), false),
    }
}

/// The findings for another trainer's config: the settings gpufeed understands, judged
/// under the trainer's key names (or found by name), and one info line saying what was
/// checked.
pub fn check(o: &Keys, t: &'static Trainer, ctx: &Context, path: &Path) -> Vec<Finding> {
    let mut judge = Judge {
        o,
        t,
        ctx,
        path,
        out: Vec::new(),
        checked: Vec::new(),
        judged: Vec::new(),
        no_workers: Vec::new(),
        persistent: Vec::new(),
    };
    let mut not_set: Vec<&str> = Vec::new();
    for setting in t.settings {
        let (keys, by_name) = locate(o, setting);
        if keys.is_empty() {
            let read_elsewhere = t
                .settings
                .iter()
                .any(|other| other.what == setting.what && !locate(o, other).0.is_empty());
            if !read_elsewhere && !not_set.contains(&setting.what.name()) {
                not_set.push(setting.what.name());
            }
            continue;
        }
        for key in &keys {
            judge.setting(setting, key, by_name);
        }
    }
    let Judge {
        mut out,
        checked,
        no_workers,
        persistent,
        ..
    } = judge;
    // `persistent_workers: true` beside `num_workers: 0` (the same loader: the same parent
    // key) is refused by PyTorch's DataLoader.
    let parent = |key: &str| key.rsplit_once('.').map_or("", |(p, _)| p).to_owned();
    for (key, line, column) in &persistent {
        if let Some(workers) = no_workers.iter().find(|w| parent(w) == parent(key)) {
            out.push(
                finding(
                    "persistent-workers-without-workers",
                    &format!("`{key}` is true, but `{workers}` is 0"),
                )
                .at(path, *line, *column)
                .evidence(format!(
                    "`{}` and `{}`; PyTorch raises \"persistent_workers option needs \
                     num_workers > 0\"",
                    o.setting(key, "true"),
                    o.setting(workers, "0")
                ))
                .fix(o.setting(key, "false")),
            );
        }
    }
    let unknown = std::ptr::eq(t, &UNKNOWN);
    let mut message = if unknown {
        format!(
            "`{}` is the config of {} ({}); gpufeed checked the loader settings it found by \
             key name: ",
            path.display(),
            t.name,
            why_unknown(o)
        )
    } else {
        let mut seen = found(o, t.own);
        seen.extend(markers_found(o, t));
        format!(
            "`{}` looks like {} {} config ({}); gpufeed checked ",
            path.display(),
            article(t.name),
            t.name,
            shown_keys(&seen, 4)
        )
    };
    match (checked.is_empty(), unknown) {
        (true, true) => message.push_str("none (the file sets none)"),
        (true, false) => message.push_str("nothing it understands (the file sets none of it)"),
        (false, _) => {
            let read: Vec<String> = checked
                .iter()
                .map(|(what, keys)| format!("{} ({})", what.name(), keys.join(", ")))
                .collect();
            message.push_str(&read.join(", "));
        }
    }
    if !not_set.is_empty() {
        let _ = write!(message, "; not set here: {}", not_set.join(", "));
    }
    if !t.note.is_empty() {
        let _ = write!(message, "; {}", t.note);
    }
    if o.dialect() == Dialect::Python {
        message.push_str(
            "; read as Python: only settings written as literals (`name=32`, `\"name\": 32`, \
             `NAME = 32`) were read, nothing was run, and `--fix` leaves a Python file as it is",
        );
    }
    // A family whose loader keys are found by name (Hydra, Lightning CLI) has no key names of
    // its own for the rest either: they are the application's.
    if t.settings.iter().any(|s| s.keys.is_empty()) {
        message.push_str("; its other keys were not checked, and MyXTTS' rules do not apply");
    } else {
        let _ = write!(
            message,
            "; its other keys are {}'s own and were not checked, and MyXTTS' rules do not apply",
            t.name
        );
    }
    out.push(
        finding("config-trainer", &message)
            .in_file(path)
            .evidence(format!("key names from {}", t.source))
            .fix("nothing to do; `gpufeed lint` checks the training code"),
    );
    out
}

/// Why a file is [`UNKNOWN`]'s: the markers it shares with trainers whose own keys it
/// lacks, or none at all.
fn why_unknown(o: &Keys) -> String {
    let candidates = candidates(o);
    let Some((best, _)) = candidates.iter().max_by_key(|(_, n)| *n) else {
        return "it has no trainer's keys, and sets `DataLoader` arguments".to_owned();
    };
    let lacking: Vec<String> = candidates
        .iter()
        .map(|(t, _)| format!("{}'s", t.name))
        .collect();
    format!(
        "its keys {} are shared by several trainers, and it has none of the keys that only {} \
         configs have",
        shown_keys(&markers_found(o, best), 4),
        lacking.join(" or ")
    )
}

/// The first `n` of `keys` (patterns), each once, as `` `a`, `b` `` (`name[]` as `name`).
fn shown_keys(keys: &[&str], n: usize) -> String {
    let mut shown: Vec<&str> = Vec::new();
    for k in keys {
        let k = k.strip_suffix("[]").unwrap_or(k);
        if !shown.contains(&k) {
            shown.push(k);
        }
    }
    shown
        .iter()
        .take(n)
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Judges the settings of one file, each key once.
struct Judge<'a> {
    o: &'a Keys,
    t: &'static Trainer,
    ctx: &'a Context,
    path: &'a Path,
    out: Vec<Finding>,
    /// What was read, by what it sets: `steps between evaluation pauses (`a: 1`, `b: 2`)`.
    checked: Vec<(What, Vec<String>)>,
    judged: Vec<String>,
    /// The keys of loaders without workers (`num_workers: 0`).
    no_workers: Vec<String>,
    /// The keys (with their line and column) of `persistent_workers: true`.
    persistent: Vec<(String, usize, usize)>,
}

impl Judge<'_> {
    /// The rules on `setting` written at `key` (found by name when `by_name`).
    fn setting(&mut self, setting: &Setting, key: &str, by_name: bool) {
        if self.judged.iter().any(|k| k == key) {
            return;
        }
        self.judged.push(key.to_owned());
        let (o, ctx, path) = (self.o, self.ctx, self.path);
        let Some(v) = o.value(key) else {
            self.checked
                .push((setting.what, vec![format!("`{key}` is not a single value")]));
            return;
        };
        let written = o.slice(v.span);
        let as_written = o.setting(key, written);
        match self.checked.iter_mut().find(|(w, _)| *w == setting.what) {
            Some((_, keys)) => keys.push(format!("`{as_written}`")),
            None => self
                .checked
                .push((setting.what, vec![format!("`{as_written}`")])),
        }
        let at = |f: Finding| f.at(path, v.span.line, v.span.column);
        let whose = if std::ptr::eq(self.t, &UNKNOWN) {
            format!("{}, found by key name", self.t.name)
        } else if by_name && !setting.keys.is_empty() {
            format!(
                "{}, found by key name, not under its key names",
                self.t.name
            )
        } else if by_name {
            format!("{}, found by key name", self.t.name)
        } else {
            self.t.name.to_owned()
        };
        let shown = format!("`{as_written}` (line {}); {whose}", v.span.line);
        let fix = |value: &str| {
            if setting.advice.is_empty() {
                o.setting(key, value)
            } else {
                setting.advice.to_owned()
            }
        };
        let out = &mut self.out;
        if let Some(edit) = &v.pyyaml_fix {
            out.push(
                at(finding(
                    "config-yaml11-boolean",
                    &format!(
                        "`{key}: {written}` is the boolean {} for PyYAML but the string \
                         \"{written}\" for YAML 1.2 readers",
                        edit.replacement
                    ),
                ))
                .evidence(shown.clone())
                .fix(format!("{key}: {}", edit.replacement))
                .edit(TextEdit {
                    byte_start: edit.span.byte_start,
                    byte_end: edit.span.byte_end,
                    replacement: edit.replacement.clone(),
                }),
            );
        }
        match (setting.what, &v.value) {
            (Workers, OutlineValue::Int(0)) => self.no_workers.push(key.to_owned()),
            (PersistentWorkers, OutlineValue::Bool(true)) => {
                self.persistent
                    .push((key.to_owned(), v.span.line, v.span.column));
            }
            _ => {}
        }
        match (setting.what, &v.value) {
            (Workers, OutlineValue::Int(n)) => workers(out, *n, key, &shown, ctx, o, &at),
            (BatchSize, OutlineValue::Int(n)) if *n > 0 && (*n as f64) < BATCH_SIZE_SMALL => {
                out.push(
                    at(finding("batch-size-small", &format!("`{key}` is {n}")))
                        .evidence(shown)
                        .fix(fix("32  # if GPU memory allows")),
                );
            }
            (FixedShapes, OutlineValue::Bool(false)) => out.push(
                at(finding(
                    "dynamic-shapes",
                    &format!("`{key}` is false: batches are padded to their longest item"),
                ))
                .evidence(shown)
                .fix(fix("true")),
            ),
            (PinMemory, OutlineValue::Bool(false)) => out.push(
                at(finding("pin-memory-off", &format!("`{key}` is false")))
                    .evidence(shown)
                    .fix(fix("true")),
            ),
            (Prefetch, OutlineValue::Int(0)) => out.push(
                at(finding(
                    "prefetch-disabled",
                    &format!("`{key}` is 0, so no batch is prepared ahead"),
                ))
                .evidence(shown)
                .fix(fix("2")),
            ),
            (MixedPrecision, OutlineValue::Bool(false)) => out.push(
                at(finding("mixed-precision-off", &format!("`{key}` is false")))
                    .evidence(shown)
                    .fix(fix("true")),
            ),
            (Precision, value) if full_precision(value) => out.push(
                at(finding(
                    "mixed-precision-off",
                    &format!("`{key}` is {written}: full float32 precision"),
                ))
                .evidence(shown)
                .fix(fix("bf16-mixed  # or 16-mixed on GPUs without bfloat16")),
            ),
            (FeatureCache, OutlineValue::Bool(false)) => out.push(
                at(finding(
                    "feature-cache-off",
                    &format!(
                        "`{key}` is false: the features are computed from the raw inputs for \
                         every item, every epoch, in the loader"
                    ),
                ))
                .evidence(shown)
                .fix(fix("true")),
            ),
            _ => {}
        }
    }
}

/// Lightning's precision values that mean float32.
fn full_precision(v: &OutlineValue) -> bool {
    match v {
        OutlineValue::Int(32 | 64) => true,
        OutlineValue::Str(s) => matches!(s.as_str(), "32" | "32-true" | "64" | "64-true"),
        _ => false,
    }
}

/// The worker rules on another trainer's key.
fn workers(
    out: &mut Vec<Finding>,
    n: i64,
    key: &str,
    shown: &str,
    ctx: &Context,
    o: &Keys,
    at: &dyn Fn(Finding) -> Finding,
) {
    let Ok(n) = usize::try_from(n) else {
        return;
    };
    let spell = |value: &str| o.setting(key, value);
    if n == 0 {
        out.push(
            at(finding(
                "loader-in-main-thread",
                &format!("`{key}` is 0: batches are built in the training process"),
            ))
            .evidence(shown.to_owned())
            .fix(spell(&super::rules::workers_instead_of_none(ctx))),
        );
        return;
    }
    if let Some(f) = super::rules::cores_finding(key, n, ctx, &spell) {
        out.push(at(f).evidence(format!("{shown}; {}", ctx.describe())));
    }
}

/// One info line for a file gpufeed does not recognise.
pub fn unrecognised(o: &Keys, path: &Path) -> Finding {
    let known: Vec<&str> = std::iter::once(MYXTTS)
        .chain(TRAINERS.iter().map(|t| t.name))
        .collect();
    let keys: Vec<String> = o
        .top_keys()
        .iter()
        .take(5)
        .map(|k| format!("`{k}`"))
        .collect();
    finding(
        "config-unrecognised",
        &format!(
            "`{}` does not look like the config of a trainer gpufeed knows ({}); nothing was \
             checked",
            path.display(),
            known.join(", ")
        ),
    )
    .in_file(path)
    .evidence(match (o.dialect(), keys.is_empty()) {
        (Dialect::Python, true) => "read as Python: no literal settings (`name=32`, \
                                    `\"name\": 32`, `NAME = 32`)"
            .to_owned(),
        (Dialect::Python, false) => format!("read as Python; settings: {}", keys.join(", ")),
        (Dialect::Yaml, _) => format!("top-level keys: {}", keys.join(", ")),
    })
    .fix("pass the trainer's training config; `gpufeed lint` checks the training code whatever the trainer")
}

/// Lowers a finding about the machine to info when the cores are this machine's, not the
/// training machine's.
pub(super) fn assumed(mut f: Finding, ctx: &Context) -> Finding {
    if !ctx.cores_of_training_machine() && f.severity > Severity::Info {
        f.severity = Severity::Info;
    }
    f
}

/// "a" or "an" before a trainer's name, by its sound: "an ESPnet", "an F5-TTS" (an
/// initialism read letter by letter), "a NeMo", "a HiFi-GAN".
fn article(name: &str) -> &'static str {
    let mut chars = name.chars();
    let first = chars.next().unwrap_or(' ');
    let second = chars.next().unwrap_or(' ');
    let vowel = "AEIOUaeiou".contains(first);
    let spelled =
        "FHLMNRSX".contains(first) && (second.is_ascii_digit() || second.is_ascii_uppercase());
    if vowel || spelled { "an" } else { "a" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_match_segments() {
        assert!(matches("trainer.precision", "trainer.precision"));
        assert!(matches("*.precision", "trainer.precision"));
        assert!(!matches("trainer", "trainer.precision"));
        assert!(matches("datasets.name", "datasets[0].name"));
    }

    fn keys(text: &str) -> Keys {
        let outline = gpufeed_config::outline(text, Path::new("c.yaml"));
        Keys::from_outline(&outline.unwrap_or_else(|e| panic!("{e:?}")))
    }

    #[test]
    fn a_list_pattern_matches_only_list_items() {
        assert!(matches("defaults[]", "defaults[0]"));
        assert!(!matches("defaults[]", "defaults"));
        assert!(!matches("defaults[]", "defaults_x[0]"));
        let o = keys("defaults:\n  - _self_\n");
        assert_eq!(found(&o, &["defaults[]"]), ["defaults[]"]);
        let o = keys("defaults:\n  lr: 1\n");
        assert!(found(&o, &["defaults[]"]).is_empty());
    }

    #[test]
    fn loader_keys_are_the_training_loaders_when_a_path_says_so() {
        let o =
            keys("model:\n  validation_ds:\n    num_workers: 0\n  train_ds:\n    num_workers: 4\n");
        assert_eq!(
            loader_keys(&o, "num_workers"),
            ["model.train_ds.num_workers"]
        );
        // No path names the training loader: each is reported.
        let o = keys("loaders:\n  a:\n    num_workers: 2\n  b:\n    num_workers: 4\n");
        assert_eq!(
            loader_keys(&o, "num_workers"),
            ["loaders.a.num_workers", "loaders.b.num_workers"]
        );
        // A mapping of that name is not a setting.
        let o = keys("batch_size:\n  train: 8\n");
        assert!(loader_keys(&o, "batch_size").is_empty());
    }

    #[test]
    fn loader_keys_without_any_trainers_keys_are_checked() {
        let text = "dataloader:\n  num_workers: 0\n  batch_size: 4\noptimizer:\n  lr: 0.1\n";
        let o = keys(text);
        let Whose::Other(t) = whose(&o) else {
            panic!("{:?}", whose(&o))
        };
        assert!(std::ptr::eq(t, &UNKNOWN));
        let ctx = Context::new(Some(8), crate::CoresOf::TrainingMachine);
        let f = check(&o, t, &ctx, Path::new("c.yaml"));
        let got: Vec<_> = f.iter().map(|f| (f.id, f.line)).collect();
        assert_eq!(
            got,
            [
                ("loader-in-main-thread", Some(2)),
                ("batch-size-small", Some(3)),
                ("config-trainer", None)
            ]
        );
        assert!(
            f[2].message.starts_with(
                "`c.yaml` is the config of a trainer gpufeed does not know (it has no trainer's \
                 keys, and sets `DataLoader` arguments)"
            ),
            "{}",
            f[2].message
        );
        // No loader setting: nothing is checked, as before; `data` alone is MyXTTS'.
        assert!(matches!(
            whose(&keys("name: CI\non: [push]\n")),
            Whose::Unknown
        ));
        assert!(matches!(
            whose(&keys("data:\n  num_workers: 0\n")),
            Whose::Myxtts
        ));
    }

    #[test]
    fn the_table_is_well_formed() {
        for t in TRAINERS {
            assert!(t.markers.len() >= 4, "{}", t.name);
            assert!(!t.source.is_empty(), "{}", t.name);
            assert!(!t.settings.is_empty(), "{}", t.name);
        }
    }
}
