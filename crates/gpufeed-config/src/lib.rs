//! The gpufeed config: the trainer's YAML with the sections `model`, `data` and `training`,
//! read into one typed schema that the loader, the profilers, the doctor and the validator
//! share.
//!
//! ```
//! use std::path::Path;
//!
//! let text = "\
//! data:
//!   batch_size: 32
//!   num_worker: 8        # a typo
//! training:
//!   learning_rate: 1e-4  # a string for PyYAML
//! ";
//! let loaded = gpufeed_config::from_str(text, Path::new("config.yaml")).unwrap();
//! assert_eq!(loaded.config.data.batch_size, 32);
//! assert_eq!(loaded.config.training.learning_rate, 1e-4);
//! let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
//! assert_eq!(
//!     messages[0],
//!     "config.yaml:3:3: unknown key `data.num_worker`; did you mean `num_workers`?"
//! );
//! assert!(messages[1].starts_with(
//!     "config.yaml:5:18: `training.learning_rate: 1e-4` is read as the string \"1e-4\" by PyYAML"
//! ));
//! assert_eq!(loaded.span_of("data.batch_size").unwrap().line, 2);
//!
//! let err = gpufeed_config::from_str("data:\n  batch_size: \"32x\"\n", Path::new("config.yaml"))
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "config.yaml:2:15: `data.batch_size` must be a positive integer, found `\"32x\"`"
//! );
//! ```
//!
//! # Reading
//!
//! [`load`] reads a file, [`from_str`] reads text; both return the first error.
//! [`check`] and [`check_file`] return every error ([`Rejected`]). A [`Loaded`] config holds
//! the typed [`Config`], the [`ConfigWarning`]s and the [`Source`]: the text and the span of
//! every key and value ([`Loaded::span_of`]), for edits that keep comments and unknown keys.
//!
//! - Every error and warning names `file:line:column` (1-based; columns count characters)
//!   of the offending key or value, what was expected and what to do.
//! - A missing key or section takes its default; an empty file is all defaults. A file that
//!   is not a mapping at the top, a section that is not a mapping, a second YAML document,
//!   and a duplicate key (PyYAML silently keeps the last one) are errors.
//! - Unknown keys are warnings with a did-you-mean (same section first, then the key in the
//!   section it belongs to: `training.batch_size` → `data.batch_size`).
//! - Values are typed strictly, like the trainer's dataclasses: `"32"` (quoted) is a string,
//!   not a number, and is an error where a number is expected.
//! - **YAML 1.1 vs 1.2.** gpufeed reads YAML 1.2 (core schema); the trainer reads YAML 1.1
//!   through PyYAML. Where they disagree on a plain value, gpufeed takes the value the
//!   author meant and warns: `1e-4` is a float for YAML 1.2 but the *string* `"1e-4"` for
//!   PyYAML, which needs a dot and a signed exponent (`1.0e-4`); `010` is 8 (octal) for
//!   PyYAML; `1_000` is a string for YAML 1.2; `yes`/`no`/`on`/`off` are booleans only for
//!   PyYAML; `language: no` is `False` for PyYAML. Each warning carries an [`Edit`] with the
//!   spelling both read the same way.
//! - Anchors, aliases and merge keys (`<<: *base`) work as in PyYAML.
//! - Semantic errors (`win_length > n_fft`, `hop_length: 0`, `fmax` above half the sample
//!   rate, `fmin >= fmax`, `n_mels: 0`, `log_floor <= 0` with a log, `batch_size: 0`,
//!   `max_text_length: 0`, ...) point at the value of the offending key;
//!   [`Config::violations`] runs the same checks on a config built in code.
//! - `model` and `data` both have `sample_rate`, `n_mels`, `n_fft`, `hop_length` and
//!   `win_length` (MyXTTS' model config had them; its data config crashed on `n_mels`).
//!   Both are accepted; features use the `data` values and a warning says when the two
//!   differ.
//! - MyXTTS' `data.text_cleaners` sets `data.cleaner` when `cleaner` is not written
//!   (`english_cleaners` and Coqui's `transliteration_cleaners` → `english`,
//!   `basic_cleaners` → `basic`, `multilingual_cleaners` → `unicode`, `[]` → `none`); with
//!   neither written the cleaner is `unicode`.
//!
//! # YAML library
//!
//! The file is parsed with [`saphyr_parser`], a YAML 1.2 event parser that gives the span of
//! every event (key, value, list, mapping) and the style of every scalar (plain, quoted,
//! block). Events become a small node tree (the private `yaml` module) that is mapped onto
//! the schema by hand. `serde_norway` (the `serde_yaml` fork) was not used: it gives a
//! location only with the first deserialisation error, none for keys, unknown keys or
//! semantic errors, and hides whether `1e-4` was quoted, which the PyYAML check needs.
//!
//! # Keys
//!
//! Types: *integer* is a non-negative integer, *number* an integer or a float, *path* a
//! string, *list* a YAML list (`[a, b]` or `- a` lines). "unset" means `null` (or the key
//! absent). Every key of MyXTTS' `configs/config.yaml` and its dataclasses is known; keys
//! marked MyXTTS are read by the trainer, not by gpufeed, and [`keys`] / [`key_info`] say
//! which of them MyXTTS itself never read.
//!
//! ### `data`: audio features
//!
//! These are the fields of [`AudioSettings`] ([`DataConfig::audio`]), which gpufeed-audio
//! owns and this crate re-exports; the defaults are the NVIDIA Tacotron 2 / HiFi-GAN
//! convention. With `power: 2`, `log: none`, `pad_mode: constant` the mel spectrogram
//! equals `librosa.feature.melspectrogram`.
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `sample_rate` | integer, Hz | `22050` | rate features are computed at; other files are resampled |
//! | `n_fft` | integer, samples | `1024` | FFT size |
//! | `hop_length` | integer, samples | `256` | hop between frames; > 0 |
//! | `win_length` | integer, samples | `1024` | window length; ≤ `n_fft` |
//! | `n_mels` | integer | `80` | mel bands; > 0 |
//! | `fmin` | number, Hz | `0` | lowest filter edge; < fmax |
//! | `fmax` | number, Hz, or null | `8000` | highest filter edge; ≤ sample_rate / 2; `null`: sample_rate / 2 |
//! | `mel_scale` | `slaney` \| `htk` | `slaney` | mel scale |
//! | `mel_norm` | `slaney` \| `none` | `slaney` | filter normalisation (area / peak 1) |
//! | `power` | number | `1` | magnitude exponent: 1 magnitude, 2 power |
//! | `center` | bool | `true` | centre frames (pad `n_fft / 2` each side) |
//! | `pad_mode` | `reflect` \| `constant` | `reflect` | padding when centred |
//! | `log` | `ln` \| `log10` \| `none` | `ln` | compression |
//! | `log_floor` | number | `1.0e-5` | floor before the log; > 0 unless `log: none` |
//!
//! ### `data`: text
//!
//! The fields of [`TextSettings`] ([`DataConfig::text`]), which gpufeed-text owns and this
//! crate re-exports.
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `cleaner` | `unicode` \| `english` \| `basic` \| `none` | `unicode` | cleaning: `unicode` keeps every script (NFC, lowercase), `english` transliterates to ASCII and reads numbers; unset: from `text_cleaners` |
//! | `add_blank` | bool | `false` | blank token between symbols (MyXTTS defaulted to true) |
//! | `add_eos` | bool | `true` | append end-of-sequence |
//! | `use_normalized_text` | bool | `true` | LJSpeech: read the normalised (third) column |
//!
//! ### `data`: loader
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `dataset_path` | path | unset | dataset folder; relative to the working directory; unset: `--data` |
//! | `layout` | string | unset | dataset layout (`ljspeech`, `libritts`, `vctk`, `common_voice`, `nemo`, `kaldi`, `lhotse`, `webdataset`, `huggingface`, `table`, `gpufeed`); unset: detected |
//! | `columns` | string | unset | which column holds what (`audio=path,text=sentence` or `id,text,speaker`) |
//! | `features` | list | unset | arrays `precompute` caches: `mel` (always; `mel:float16`, `mel:bfloat16`), `linear` (`linear:float16`, `linear:bfloat16`), `energy`, `f0` (`f0:yin`), `wav` (`wav:float32`); unset: the mel |
//! | `f0_min` | float | `65.0` | lowest F0 the `f0` array searches, Hz |
//! | `f0_max` | float | `1000.0` | highest F0 the `f0` array searches, Hz |
//! | `cache_dir` | path | unset | feature cache folder; unset: the tool's default |
//! | `batch_size` | integer | `56` | items per batch; > 0 |
//! | `batch_frames` | integer | unset | batches by duration: padded mel frames per batch instead of `batch_size` items |
//! | `num_workers` | integer | unset | loader threads; unset: the number of cores; 0: the calling thread |
//! | `prefetch_buffer_size` | integer, batches | unset | batches prepared ahead; unset: 2 × workers (≥ 2). MyXTTS never read it |
//! | `pad_to_fixed_length` | bool | `false` | pad every batch to the caps (one static shape) |
//! | `max_text_length` | integer, tokens | `200` | the one text cap (after blanks, EOS) = padded length; > 0 |
//! | `max_mel_frames` | integer, frames | `1024` | audio cap (× hop / sample_rate = seconds); > 0 |
//! | `pad_to_multiple_of` | integer | unset | round padded lengths up to a multiple; unset: no rounding |
//! | `over_length` | `skip` \| `truncate` | `skip` | items over a cap: left out or cut (counted either way) |
//! | `shuffle` | bool | `true` | reshuffle every epoch |
//! | `bucket_window` | integer, batches | `1` | sort this many batches' items by length before batching; 1: off |
//! | `seed` | integer | `42` | seed of the shuffle |
//! | `drop_last` | bool | `false` | drop the partial last batch (static batch dimension) |
//!
//! ### `data`: MyXTTS
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `dataset_name` | string | `ljspeech` | dataset name |
//! | `metadata_train_file` | path | unset | custom train metadata |
//! | `metadata_eval_file` | path | unset | custom eval metadata |
//! | `wavs_train_dir` | path | unset | wavs of the custom train metadata |
//! | `wavs_eval_dir` | path | unset | wavs of the custom eval metadata |
//! | `trim_silence` | bool | `true` | trim silence (librosa path only) |
//! | `normalize_audio` | bool | `true` | normalise loudness (librosa path only) |
//! | `text_cleaners` | list of strings | unset | MyXTTS cleaners, mapped onto `cleaner`; unset: `cleaner`'s default (MyXTTS' was `[english_cleaners]`) |
//! | `language` | string | `en` | text language |
//! | `use_phonemes` | bool | `true` | phonemise with espeak |
//! | `phoneme_language` | string | unset | phonemiser language |
//! | `enable_phone_normalization` | bool | `false` | phone-level normalisation |
//! | `enable_multilingual` | bool | `false` | per-item language detection |
//! | `supported_languages` | list of strings | unset | detectable languages; unset: 16 codes |
//! | `language_detection_method` | string | `metadata` | `metadata`, `filename` or `auto` |
//! | `enable_multispeaker` | bool | `false` | several speakers |
//! | `speaker_id_pattern` | string | unset | regex; group 1 is the speaker id |
//! | `max_speakers` | integer | `1000` | most speakers (never read) |
//! | `enable_loudness_normalization` | bool | `true` | loudness normalisation (librosa path) |
//! | `target_loudness_lufs` | number, LUFS | `-23.0` | target loudness (stored only) |
//! | `enable_vad` | bool | `true` | voice activity detection |
//! | `enable_pitch_shift` | bool | `false` | pitch-shift augmentation |
//! | `pitch_shift_range` | list of 2 numbers, semitones | `[-2.0, 2.0]` | pitch shift range |
//! | `enable_noise_mixing` | bool | `false` | noise augmentation |
//! | `noise_mixing_probability` | number, 0..1 | `0.3` | probability of noise |
//! | `noise_mixing_snr_range` | list of 2 numbers, dB | `[10.0, 30.0]` | noise SNR range |
//! | `train_split` | number, 0..1 | `0.9` | train fraction |
//! | `val_split` | number, 0..1 | `0.1` | validation fraction; train + val ≤ 1 |
//! | `train_subset_fraction` | number, (0, 1] | `1.0` | train subset (never read) |
//! | `eval_subset_fraction` | number, (0, 1] | `1.0` | eval subset (never read) |
//! | `subset_seed` | integer | `42` | subset seed (never read) |
//! | `max_text_tokens` | integer, tokens | unset | MyXTTS' token cap (its default 1024); a value ≠ `max_text_length` is a warning |
//! | `shuffle_buffer_multiplier` | integer | `30` | MyXTTS shuffle buffer = batch × this; gpufeed shuffles whole epochs |
//! | `enable_memory_mapping` | bool | `true` | (never read) |
//! | `cache_verification` | bool | `true` | (never read) |
//! | `auto_rebuild_token_cache` | bool | unset | (never read) |
//! | `auto_rebuild_mel_cache` | bool | unset | (never read) |
//! | `pin_memory` | bool | `true` | (never read) |
//! | `persistent_workers` | bool | `true` | (never read) |
//! | `prefetch_to_gpu` | bool | `true` | `prefetch_to_device` |
//! | `enhanced_gpu_prefetch` | bool | `true` | extra GPU prefetch stage |
//! | `optimize_cpu_gpu_overlap` | bool | `true` | tf.data threading options |
//! | `auto_tune_performance` | bool | `true` | prefetch "auto-tune" (a no-op) |
//! | `use_tf_native_loading` | bool | `true` | tf.data file loading |
//! | `enable_xla` | bool | `true` | process-wide XLA (`set_jit`) |
//! | `mixed_precision` | bool | `true` | mixed precision (MyXTTS reads it here) |
//! | `enable_tensorrt` | bool | `false` | TensorRT (never read) |
//! | `preprocessing_mode` | `auto` \| `precompute` \| `runtime` | `precompute` | when features are computed |
//! | `reference_audio_length` | number, s | `3.0` | reference audio (inference only) |
//! | `max_audio_length` | number, s | `11.0` | longest kept audio (inference only) |
//! | `data_gpu` | integer | unset | two-GPU mode: the data GPU |
//! | `model_gpu` | integer | unset | two-GPU mode: the model GPU; ≠ `data_gpu` |
//! | `pipeline_buffer_size` | integer, batches | `50` | MyXTTS' real prefetch depth |
//! | `model_start_delay` | number, s | `2.0` | two-GPU start delay |
//!
//! ### `model`
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `text_encoder_dim` | integer | `512` | text encoder width |
//! | `text_encoder_layers` | integer | `8` | text encoder blocks |
//! | `text_encoder_heads` | integer | `8` | text encoder heads; divides the width |
//! | `text_vocab_size` | integer | `256256` | embedding table size |
//! | `audio_encoder_dim` | integer | `768` | audio encoder width |
//! | `audio_encoder_layers` | integer | `8` | audio encoder blocks |
//! | `audio_encoder_heads` | integer | `12` | audio encoder heads; divides the width |
//! | `decoder_dim` | integer | `1536` | decoder width |
//! | `decoder_layers` | integer | `16` | decoder blocks |
//! | `decoder_heads` | integer | `24` | decoder heads; divides the width |
//! | `n_mels` | integer | `80` | mel bands the model predicts; compared with `data.n_mels` |
//! | `n_fft` | integer, samples | `1024` | compared with `data.n_fft` (MyXTTS ignored it) |
//! | `hop_length` | integer, samples | `256` | compared with `data.hop_length` (ignored) |
//! | `win_length` | integer, samples | `1024` | compared with `data.win_length` (ignored) |
//! | `sample_rate` | integer, Hz | `22050` | compared with `data.sample_rate` |
//! | `speaker_embedding_dim` | integer | `512` | speaker embedding width |
//! | `use_voice_conditioning` | bool | `true` | voice conditioning |
//! | `voice_conditioning_layers` | integer | `4` | voice conditioning layers |
//! | `voice_similarity_threshold` | number | `0.75` | voice cloning similarity floor |
//! | `enable_voice_adaptation` | bool | `true` | adaptive voice conditioning |
//! | `voice_encoder_dropout` | number | `0.1` | voice encoder dropout |
//! | `decoder_strategy` | string | `autoregressive` | or `non_autoregressive` |
//! | `use_duration_predictor` | bool | `true` | duration head |
//! | `vocoder_type` | string | `griffin_lim` | `griffin_lim`, `hifigan`, `bigvgan` |
//! | `vocoder_upsample_rates` | list of integers | unset | unset: `[8, 8, 2, 2]` |
//! | `vocoder_upsample_kernel_sizes` | list of integers | unset | unset: `[16, 16, 4, 4]` |
//! | `vocoder_resblock_kernel_sizes` | list of integers | unset | unset: `[3, 7, 11]` |
//! | `vocoder_resblock_dilation_sizes` | list of lists of integers | unset | unset: `[[1, 3, 5]] × 3` |
//! | `vocoder_initial_channel` | integer | `512` | vocoder input channels |
//! | `languages` | list of strings | unset | unset: 16 codes (`en` ... `ko`) |
//! | `max_text_length` | integer, tokens | `500` | positional-encoding length (not the loader cap) |
//! | `tokenizer_type` | string | `nllb` | `custom` or `nllb` |
//! | `tokenizer_model` | string | `facebook/nllb-200-distilled-600M` | NLLB tokenizer |
//! | `enable_speaker_interpolation` | bool | `true` | blend voices |
//! | `voice_cloning_temperature` | number | `0.7` | cloning temperature |
//! | `voice_conditioning_strength` | number | `1.0` | conditioning strength |
//! | `max_reference_audio_length` | number, s | `10` | longest reference audio |
//! | `min_reference_audio_length` | number, s | `2.0` | shortest reference audio |
//! | `voice_feature_dim` | integer | `256` | voice feature width |
//! | `enable_voice_denoising` | bool | `true` | denoise reference audio |
//! | `voice_cloning_loss_weight` | number | `2.0` | voice similarity loss weight |
//! | `use_pretrained_speaker_encoder` | bool | `false` | pretrained speaker encoder |
//! | `pretrained_speaker_encoder_path` | path | unset | its weights |
//! | `freeze_speaker_encoder` | bool | `true` | freeze it |
//! | `speaker_encoder_type` | string | `ecapa_tdnn` | or `resemblyzer` |
//! | `contrastive_loss_temperature` | number | `0.1` | contrastive loss temperature |
//! | `contrastive_loss_margin` | number | `0.2` | contrastive loss margin |
//! | `enable_gradient_checkpointing` | bool | `false` | recompute activations |
//! | `max_attention_sequence_length` | integer | `512` | attention length |
//! | `use_memory_efficient_attention` | bool | `true` | memory-efficient attention |
//! | `use_gst` | bool | unset | global style tokens; unset: the trainer's default |
//! | `gst_num_style_tokens` | integer | unset | style tokens (trainer: 10) |
//! | `gst_style_token_dim` | integer | unset | token width (trainer: 256) |
//! | `gst_style_embedding_dim` | integer | unset | embedding width (trainer: 256) |
//! | `gst_num_heads` | integer | unset | style attention heads (trainer: 4) |
//! | `gst_reference_encoder_dim` | integer | unset | reference encoder width (trainer: 128) |
//!
//! ### `training`
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `epochs` | integer | `1000` | passes over the data; > 0 |
//! | `learning_rate` | number | `1.0e-4` | peak rate; > 0. Write `1.0e-4`, not `1e-4` |
//! | `warmup_steps` | integer | `4000` | warm-up steps |
//! | `weight_decay` | number | `1.0e-6` | weight decay |
//! | `gradient_clip_norm` | number | `1.0` | clip to this global norm |
//! | `gradient_accumulation_steps` | integer | `1` | micro-batches per step; > 0 |
//! | `max_memory_fraction` | number, (0, 1] | `0.9` | GPU memory share |
//! | `enable_memory_cleanup` | bool | `true` | free memory between epochs |
//! | `optimizer` | string | `adamw` | optimiser |
//! | `beta1` | number | `0.9` | Adam β1 |
//! | `beta2` | number | `0.999` | Adam β2 |
//! | `eps` | number | `1.0e-8` | Adam ε |
//! | `scheduler` | string | `noam` | schedule |
//! | `scheduler_params` | mapping | `{}` | schedule parameters, kept as written |
//! | `mel_loss_weight` | number | `2.5` | mel loss weight |
//! | `kl_loss_weight` | number | `1.0` | KL loss weight |
//! | `duration_loss_weight` | number | `0.1` | duration loss weight |
//! | `attention_loss_weight` | number | `0.1` | attention loss weight |
//! | `voice_similarity_loss_weight` | number | `3.0` | voice similarity loss weight |
//! | `speaker_classification_loss_weight` | number | `1.5` | speaker loss weight |
//! | `voice_reconstruction_loss_weight` | number | `2.0` | voice reconstruction weight |
//! | `prosody_matching_loss_weight` | number | `1.0` | prosody matching weight |
//! | `spectral_consistency_loss_weight` | number | `1.5` | spectral consistency weight |
//! | `pitch_loss_weight` | number | unset | pitch loss weight |
//! | `energy_loss_weight` | number | unset | energy loss weight |
//! | `prosody_pitch_loss_weight` | number | unset | prosody pitch weight |
//! | `prosody_energy_loss_weight` | number | unset | prosody energy weight |
//! | `speaking_rate_loss_weight` | number | unset | speaking rate weight |
//! | `use_adaptive_loss_weights` | bool | `true` | adaptive loss weights |
//! | `loss_smoothing_factor` | number | `0.1` | loss smoothing |
//! | `max_loss_spike_threshold` | number | `2.0` | largest loss spike, × smoothed loss |
//! | `gradient_norm_threshold` | number | `5.0` | gradient norm warning level |
//! | `use_label_smoothing` | bool | `true` | label smoothing |
//! | `mel_label_smoothing` | number | `0.05` | mel label smoothing |
//! | `stop_label_smoothing` | number | `0.1` | stop-token label smoothing |
//! | `use_huber_loss` | bool | `true` | Huber mel loss |
//! | `huber_delta` | number | `1.0` | Huber δ |
//! | `stop_token_positive_weight` | number | `5.0` | positive stop-token weight |
//! | `use_warmup_cosine_schedule` | bool | `true` | cosine schedule with warm-up |
//! | `cosine_restarts` | bool | `false` | cosine restarts |
//! | `min_learning_rate` | number | `1.0e-6` | learning-rate floor; ≥ 0 |
//! | `early_stopping_patience` | integer | `25` | epochs without improvement |
//! | `early_stopping_min_delta` | number | `0.0005` | smallest improvement |
//! | `save_step` | integer | `25000` | checkpoint interval, steps |
//! | `checkpoint_dir` | path | `./checkpoints` | checkpoint folder |
//! | `val_step` | integer | `5000` | validation interval, steps |
//! | `log_step` | integer | `100` | log interval, steps |
//! | `use_wandb` | bool | `false` | Weights & Biases |
//! | `wandb_project` | string | `myxtts` | W&B project |
//! | `multi_gpu` | bool | `false` | MirroredStrategy |
//! | `visible_gpus` | string | unset | `CUDA_VISIBLE_DEVICES`, e.g. `"0,1"` |
//! | `enable_graph_mode` | bool | `true` | train step as a graph |
//! | `enable_xla_compilation` | bool | `true` | XLA-compile the train step |
//! | `enable_eager_debug` | bool | `false` | eager debugging |
//! | `mixed_precision` | bool | unset | unset: `data.mixed_precision` (where MyXTTS reads it) |
#![deny(missing_docs)]

mod check;
mod diag;
mod load;
mod outline;
mod read;
mod schema;
mod source;
pub mod unhonoured;
mod yaml;

use std::path::Path;

pub use check::Violation;
pub use diag::{ConfigError, ConfigWarning, Edit, ErrorKind, Rejected, WarningKind};
pub use load::{MAX_CONFIG_BYTES, check, check_file, read_capped};
pub use outline::{Outline, OutlineScalar, OutlineValue, outline};
pub use read::near_key;
pub use schema::{
    Config, DataConfig, KeyInfo, ModelConfig, Myxtts, OverLength, PreprocessingMode, SECTIONS,
    TrainingConfig, Value, key_info, keys,
};
// Owned by the crates that compute features; the schema maps the `data` keys onto them.
pub use gpufeed_audio::{AudioSettings, LogKind, MelNorm, MelScale, PadMode};
pub use gpufeed_text::{Cleaner, TextSettings};
pub use source::{EntrySpan, Loaded, Source, Span};

/// Reads a config file.
///
/// # Errors
/// The read failure, or the first error in the file (use [`check_file`] for all of them).
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    check_file(path).map_err(ConfigError::from)
}

/// Reads config text; `path` names the file in messages.
///
/// # Errors
/// The first error in the text (use [`check`] for all of them).
pub fn from_str(text: &str, path: &Path) -> Result<Loaded, ConfigError> {
    check(text, path).map_err(ConfigError::from)
}
