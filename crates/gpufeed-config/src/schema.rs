//! The typed schema: [`Config`] with the sections [`ModelConfig`], [`DataConfig`] and
//! [`TrainingConfig`]. Every key the trainer's YAML may hold is a field with its default;
//! the crate documentation lists them as a table.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gpufeed_audio::{AudioSettings, LogKind, MelNorm, MelScale, PadMode};
use gpufeed_text::{Cleaner, TextSettings};
use serde::{Deserialize, Serialize};

use crate::read::Reader;
use crate::yaml::Node;

/// Declares one section: the struct (serde names = YAML keys), its `Default`, the list of its
/// keys and the function that reads one key from the YAML tree. One declaration, so the
/// struct, the defaults, the known-key list and the reader cannot drift apart.
///
/// `=> "a positive integer"` overrides the "must be ..." phrase of type errors.
macro_rules! section {
    (@expect) => { None };
    (@expect $e:literal) => { Some($e) };
    (
        $(#[$smeta:meta])*
        $name:ident = $section:literal {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $default:expr $(=> $expect:literal)? ;
            )*
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $name {
            /// The YAML name of this section.
            pub const SECTION: &'static str = $section;

            /// The keys of this section, in declaration order.
            pub const KEYS: &'static [&'static str] = &[ $( stringify!($field), )* ];

            /// Reads `key` from `node` into its field; `false` if the key is unknown.
            pub(crate) fn read_key(&mut self, key: &str, node: &Node, r: &mut Reader<'_>) -> bool {
                match key {
                    $(
                        stringify!($field) => {
                            let path = concat!($section, ".", stringify!($field));
                            let expect = section!(@expect $($expect)?);
                            if let Some(v) = r.read::<$ty>(node, path, expect) {
                                self.$field = v;
                            }
                            true
                        }
                    )*
                    _ => false,
                }
            }
        }
    };
}

/// What the loader does with an item longer than `max_text_length` tokens or
/// `max_mel_frames` frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OverLength {
    /// Leave the item out (and count it in the report). Text and audio stay aligned.
    #[default]
    Skip,
    /// Cut the tokens and the frames to the caps (and count it). The cut text and the cut
    /// audio no longer say the same thing, which is what the original trainer did silently.
    Truncate,
}

/// MyXTTS' `preprocessing_mode`: when the trainer computes features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PreprocessingMode {
    /// Use cached features when present, else compute on the fly.
    Auto,
    /// Compute every feature once, before training (the MyXTTS default).
    #[default]
    Precompute,
    /// Compute features in the input pipeline, every epoch.
    Runtime,
}

/// A value kept as written, for keys gpufeed knows but does not interpret
/// (`training.scheduler_params`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// `null`, `~` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    String(String),
    /// A list.
    Sequence(Vec<Value>),
    /// A mapping (keys as written).
    Mapping(BTreeMap<String, Value>),
}

/// The whole config: the trainer's YAML sections.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The `model` section.
    pub model: ModelConfig,
    /// The `data` section: features, text, loader.
    pub data: DataConfig,
    /// The `training` section.
    pub training: TrainingConfig,
}

impl Config {
    /// Whether training runs in mixed precision: `training.mixed_precision` when set, else
    /// `data.mixed_precision` (where MyXTTS reads it).
    #[must_use]
    pub fn mixed_precision(&self) -> bool {
        self.training
            .mixed_precision
            .unwrap_or(self.data.mixed_precision)
    }
}

section! {
    /// The `model` section. gpufeed's own model reads the widths, depths and heads; the
    /// other keys belong to MyXTTS and are known so that they are not reported as unknown.
    ModelConfig = "model" {
        /// Width of the text encoder (model dimension).
        text_encoder_dim: usize = 512 => "a positive integer";
        /// Transformer blocks in the text encoder.
        text_encoder_layers: usize = 8;
        /// Attention heads in the text encoder; must divide `text_encoder_dim`.
        text_encoder_heads: usize = 8 => "a positive integer";
        /// Size of the token embedding table (256 256 = NLLB-200's vocabulary).
        text_vocab_size: usize = 256_256 => "a positive integer";
        /// Width of the audio (voice-conditioning) encoder.
        audio_encoder_dim: usize = 768 => "a positive integer";
        /// Transformer blocks in the audio encoder.
        audio_encoder_layers: usize = 8;
        /// Attention heads in the audio encoder; must divide `audio_encoder_dim`.
        audio_encoder_heads: usize = 12 => "a positive integer";
        /// Width of the mel decoder.
        decoder_dim: usize = 1536 => "a positive integer";
        /// Blocks in the mel decoder.
        decoder_layers: usize = 16;
        /// Attention heads in the decoder; must divide `decoder_dim`.
        decoder_heads: usize = 24 => "a positive integer";
        /// Mel bands the model predicts. Also a `data` key: when only one is set the other
        /// follows it; when both are set and differ, a warning (features use `data.n_mels`).
        n_mels: usize = 80 => "a positive integer";
        /// FFT size, samples (mirrors `data.n_fft` like `n_mels`).
        n_fft: usize = 1024 => "a positive integer";
        /// Hop, samples (mirrors `data.hop_length`).
        hop_length: usize = 256 => "a positive integer";
        /// Window, samples (mirrors `data.win_length`).
        win_length: usize = 1024 => "a positive integer";
        /// Sample rate, Hz (mirrors `data.sample_rate`).
        sample_rate: u32 = 22050 => "a positive integer (Hz)";
        /// Width of the speaker embedding.
        speaker_embedding_dim: usize = 512;
        /// Condition the decoder on a reference voice.
        use_voice_conditioning: bool = true;
        /// Layers dedicated to voice conditioning.
        voice_conditioning_layers: usize = 4;
        /// Minimum similarity for voice cloning, 0..1.
        voice_similarity_threshold: f64 = 0.75;
        /// Adaptive voice conditioning.
        enable_voice_adaptation: bool = true;
        /// Dropout of the voice encoder, 0..1.
        voice_encoder_dropout: f64 = 0.1;
        /// `autoregressive` or `non_autoregressive`.
        decoder_strategy: String = "autoregressive".to_owned();
        /// Predict durations from text.
        use_duration_predictor: bool = true;
        /// `griffin_lim`, `hifigan` or `bigvgan`.
        vocoder_type: String = "griffin_lim".to_owned();
        /// Upsampling factors of the vocoder (unset: the trainer's `[8, 8, 2, 2]`; their
        /// product should equal `hop_length`).
        vocoder_upsample_rates: Option<Vec<usize>> = None;
        /// Upsampling kernel sizes (unset: `[16, 16, 4, 4]`).
        vocoder_upsample_kernel_sizes: Option<Vec<usize>> = None;
        /// Residual block kernel sizes (unset: `[3, 7, 11]`).
        vocoder_resblock_kernel_sizes: Option<Vec<usize>> = None;
        /// Residual block dilations (unset: `[[1, 3, 5], [1, 3, 5], [1, 3, 5]]`).
        vocoder_resblock_dilation_sizes: Option<Vec<Vec<usize>>> = None;
        /// Channels at the vocoder input.
        vocoder_initial_channel: usize = 512;
        /// Language codes the model supports (unset: the trainer's 16 codes, `en` ... `ko`).
        languages: Option<Vec<String>> = None;
        /// Longest text the model's positional encoding covers, tokens. Not the loader's
        /// cap: that is `data.max_text_length`.
        max_text_length: usize = 500 => "a positive integer";
        /// `custom` or `nllb`.
        tokenizer_type: String = "nllb".to_owned();
        /// Hugging Face name of the NLLB tokenizer.
        tokenizer_model: String = "facebook/nllb-200-distilled-600M".to_owned();
        /// Allow blending voices.
        enable_speaker_interpolation: bool = true;
        /// Sampling temperature for voice cloning.
        voice_cloning_temperature: f64 = 0.7;
        /// Strength of voice conditioning.
        voice_conditioning_strength: f64 = 1.0;
        /// Longest reference audio, seconds.
        max_reference_audio_length: f64 = 10.0;
        /// Shortest reference audio, seconds.
        min_reference_audio_length: f64 = 2.0;
        /// Width of extracted voice features.
        voice_feature_dim: usize = 256;
        /// Denoise reference audio.
        enable_voice_denoising: bool = true;
        /// Weight of the voice-similarity loss.
        voice_cloning_loss_weight: f64 = 2.0;
        /// Use a pretrained speaker encoder.
        use_pretrained_speaker_encoder: bool = false;
        /// Weights of the pretrained speaker encoder.
        pretrained_speaker_encoder_path: Option<PathBuf> = None;
        /// Freeze the pretrained speaker encoder.
        freeze_speaker_encoder: bool = true;
        /// `ecapa_tdnn` or `resemblyzer`.
        speaker_encoder_type: String = "ecapa_tdnn".to_owned();
        /// Temperature of the contrastive speaker loss.
        contrastive_loss_temperature: f64 = 0.1;
        /// Margin of the contrastive speaker loss.
        contrastive_loss_margin: f64 = 0.2;
        /// Recompute activations in the backward pass to save memory.
        enable_gradient_checkpointing: bool = false;
        /// Longest sequence attention is sized for, tokens or frames.
        max_attention_sequence_length: usize = 512 => "a positive integer";
        /// Memory-efficient attention kernels.
        use_memory_efficient_attention: bool = true;
        /// Global style tokens (unset: the trainer's default).
        use_gst: Option<bool> = None;
        /// Number of style tokens (unset: the trainer's default, 10).
        gst_num_style_tokens: Option<usize> = None;
        /// Width of a style token (unset: the trainer's default, 256).
        gst_style_token_dim: Option<usize> = None;
        /// Width of the style embedding (unset: the trainer's default, 256).
        gst_style_embedding_dim: Option<usize> = None;
        /// Heads of the style attention (unset: the trainer's default, 4).
        gst_num_heads: Option<usize> = None;
        /// Width of the GST reference encoder (unset: the trainer's default, 128).
        gst_reference_encoder_dim: Option<usize> = None;
    }
}

section! {
    /// The `data` section: the audio feature keys (flat; [`DataConfig::audio`] gathers
    /// them into [`AudioSettings`]), the text keys ([`DataConfig::text`]), the loader's
    /// keys, and MyXTTS' data keys.
    DataConfig = "data" {
        // ---- audio features (AudioSettings) ----
        /// Sample rate features are computed at, Hz; files at another rate are resampled.
        sample_rate: u32 = AudioSettings::default().sample_rate => "a positive integer (Hz)";
        /// FFT size, samples.
        n_fft: usize = AudioSettings::default().n_fft => "a positive integer";
        /// Hop between frames, samples.
        hop_length: usize = AudioSettings::default().hop_length => "a positive integer";
        /// Window length, samples; at most `n_fft` (the window is centred in the frame).
        win_length: usize = AudioSettings::default().win_length => "a positive integer";
        /// Mel bands.
        n_mels: usize = AudioSettings::default().n_mels => "a positive integer";
        /// Lowest filter edge, Hz.
        fmin: f64 = AudioSettings::default().fmin => "a number (Hz)";
        /// Highest filter edge, Hz; `null` means `sample_rate / 2`.
        fmax: Option<f64> = AudioSettings::default().fmax => "a number (Hz) or null";
        /// `slaney` or `htk`.
        mel_scale: MelScale = AudioSettings::default().mel_scale;
        /// `slaney` (area-normalised filters) or `none` (peak 1).
        mel_norm: MelNorm = AudioSettings::default().mel_norm;
        /// Exponent of the magnitude: 1 = magnitude, 2 = power.
        power: f64 = AudioSettings::default().power => "a positive number";
        /// Centre frames on `t × hop` by padding `n_fft / 2` on both sides.
        center: bool = AudioSettings::default().center;
        /// `reflect` or `constant` (zeros), used when centred.
        pad_mode: PadMode = AudioSettings::default().pad_mode;
        /// `ln`, `log10` or `none`.
        log: LogKind = AudioSettings::default().log;
        /// Floor applied before the logarithm; must be positive unless `log: none`.
        log_floor: f64 = AudioSettings::default().log_floor => "a positive number";

        // ---- text (TextSettings) ----
        /// `unicode`, `english`, `basic` or `none`. When unset, derived from MyXTTS'
        /// `text_cleaners`, else `unicode`.
        cleaner: Cleaner = TextSettings::default().cleaner;
        /// Intersperse the blank token between symbols. (MyXTTS defaulted to true; gpufeed
        /// to false: set it explicitly when comparing with the trainer.)
        add_blank: bool = TextSettings::default().add_blank;
        /// Append the end-of-sequence token.
        add_eos: bool = TextSettings::default().add_eos;
        /// LJSpeech: read the normalised (third) metadata column when present.
        use_normalized_text: bool = TextSettings::default().use_normalized_text;

        // ---- gpufeed loader ----
        /// Dataset folder (`metadata.csv` + `wavs/`), as written: a relative path is
        /// relative to the working directory, like the trainer. Unset: give `--data`.
        dataset_path: Option<PathBuf> = None;
        /// Dataset layout: `ljspeech`, `libritts`, `vctk`, `common_voice`, `nemo`, `kaldi`,
        /// `lhotse`, `webdataset`, `huggingface`, `table` or `gpufeed`. Unset: detected from
        /// what the dataset path holds (`--layout` overrides it).
        layout: Option<String> = None;
        /// Which column of the dataset's manifest holds what: by name
        /// (`audio=path,text=sentence,speaker=client_id`) or by position for a headerless
        /// file (`id,text,speaker`). Unset: the layout's own names (`--columns` overrides it).
        columns: Option<String> = None;
        /// Arrays `precompute` caches per item: `mel` (always), `linear`, `energy`, `f0`
        /// (pYIN F0 and voicing; `f0:yin` for YIN), `wav` (16-bit; `wav:float32`). Unset:
        /// `[mel]` (`--features` overrides it).
        features: Option<Vec<String>> = None;
        /// Lowest F0 the `f0` array searches, Hz (librosa's C2 is 65.4).
        f0_min: f64 = 65.0 => "a number (Hz)";
        /// Highest F0 the `f0` array searches, Hz.
        f0_max: f64 = 1000.0 => "a number (Hz)";
        /// Feature cache folder. Unset: the tool's default cache location.
        cache_dir: Option<PathBuf> = None;
        /// Items per batch.
        batch_size: usize = 56 => "a positive integer";
        /// Batches by duration: at most this many padded mel frames per batch (items ×
        /// the batch's longest), instead of `batch_size` items. Unset: `batch_size`.
        batch_frames: Option<usize> = None => "a positive integer or null";
        /// Loader threads. Unset: the number of cores. 0: load on the calling thread.
        num_workers: Option<usize> = None => "a non-negative integer or null";
        /// Batches prepared ahead of the consumer. Unset: 2 × workers (at least 2).
        /// (MyXTTS' pipeline never read this key; its real knob was `pipeline_buffer_size`.)
        prefetch_buffer_size: Option<usize> = None => "a non-negative integer or null";
        /// Pad every batch to `max_text_length` tokens and `max_mel_frames` frames (one
        /// static shape, no retracing) instead of the longest item of the batch.
        pad_to_fixed_length: bool = false;
        /// Longest text, tokens (after cleaning, blanks and EOS): the one text cap, equal
        /// to the padded length.
        max_text_length: usize = 200 => "a positive integer";
        /// Longest audio, mel frames (`max_mel_frames × hop_length / sample_rate` seconds).
        max_mel_frames: usize = 1024 => "a positive integer";
        /// Round padded batch lengths up to a multiple of this (bounds the number of
        /// distinct shapes; 8 suits tensor cores). Unset: no rounding.
        pad_to_multiple_of: Option<usize> = None => "a positive integer or null";
        /// `skip` or `truncate` items over `max_text_length` / `max_mel_frames`.
        over_length: OverLength = OverLength::Skip;
        /// Shuffle the item order every epoch (seeded by `seed` and the epoch).
        shuffle: bool = true;
        /// Length bucketing: items of this many batches are sorted by length together and
        /// cut into batches, which are then shuffled. 1: no bucketing.
        bucket_window: usize = 1 => "a positive integer";
        /// Seed of the shuffle (and of anything else random in the loader).
        seed: u64 = 42 => "a non-negative integer";
        /// Drop the last, partial batch of an epoch (keeps the batch dimension static).
        drop_last: bool = false;

        // ---- MyXTTS data keys ----
        /// Dataset name (`ljspeech`).
        dataset_name: String = "ljspeech".to_owned();
        /// Custom train metadata file (MyXTTS "custom metadata" mode).
        metadata_train_file: Option<PathBuf> = None;
        /// Custom eval metadata file.
        metadata_eval_file: Option<PathBuf> = None;
        /// Wav folder of the custom train metadata.
        wavs_train_dir: Option<PathBuf> = None;
        /// Wav folder of the custom eval metadata.
        wavs_eval_dir: Option<PathBuf> = None;
        /// Trim leading and trailing silence (MyXTTS' librosa path only).
        trim_silence: bool = true;
        /// Normalise loudness (MyXTTS' librosa path only).
        normalize_audio: bool = true;
        /// MyXTTS cleaner names, applied in order. gpufeed maps them to `cleaner` when
        /// `cleaner` is not set; unset, `cleaner`'s default (`unicode`) applies (MyXTTS'
        /// own default was `[english_cleaners]`).
        text_cleaners: Option<Vec<String>> = None;
        /// Language code of the text.
        language: String = "en".to_owned();
        /// Phonemise text with espeak.
        use_phonemes: bool = true;
        /// Phonemiser language (unset: from `language`).
        phoneme_language: Option<String> = None;
        /// Phone-level normalisation.
        enable_phone_normalization: bool = false;
        /// Detect the language per item.
        enable_multilingual: bool = false;
        /// Languages the detector may return (unset: the trainer's 16 codes).
        supported_languages: Option<Vec<String>> = None;
        /// `metadata`, `filename` or `auto`.
        language_detection_method: String = "metadata".to_owned();
        /// Several speakers.
        enable_multispeaker: bool = false;
        /// Regex whose group 1 is the speaker id in a file name.
        speaker_id_pattern: Option<String> = None;
        /// Most speakers (not read by MyXTTS' loader).
        max_speakers: usize = 1000;
        /// Loudness normalisation (MyXTTS' librosa path only).
        enable_loudness_normalization: bool = true;
        /// Target loudness, LUFS (stored only by MyXTTS: its RMS target was hard-coded).
        target_loudness_lufs: f64 = -23.0;
        /// Voice activity detection (Silero; MyXTTS disabled it silently at 22050 Hz).
        enable_vad: bool = true;
        /// Random pitch shift (augmentation, train only).
        enable_pitch_shift: bool = false;
        /// Pitch shift range `[low, high]`, semitones.
        pitch_shift_range: Vec<f64> = vec![-2.0, 2.0] => "a list of two numbers";
        /// Mix in white noise (augmentation, train only).
        enable_noise_mixing: bool = false;
        /// Probability of noise mixing, 0..1.
        noise_mixing_probability: f64 = 0.3;
        /// Signal-to-noise range `[low, high]` of noise mixing, dB.
        noise_mixing_snr_range: Vec<f64> = vec![10.0, 30.0] => "a list of two numbers";
        /// Fraction of items for training, 0..1 (the rest: validation, then test).
        train_split: f64 = 0.9;
        /// Fraction of items for validation, 0..1.
        val_split: f64 = 0.1;
        /// Fraction of the train split to use, 0..1 (never read by MyXTTS).
        train_subset_fraction: f64 = 1.0;
        /// Fraction of the eval split to use, 0..1 (never read by MyXTTS).
        eval_subset_fraction: f64 = 1.0;
        /// Seed of the subsets (never read by MyXTTS; its splits were unseeded).
        subset_seed: u64 = 42;
        /// MyXTTS' token cap (unset: the trainer's 1024). gpufeed has one cap,
        /// `max_text_length`; a different value here is a warning.
        max_text_tokens: Option<usize> = None;
        /// MyXTTS shuffle buffer = `max(1000, batch_size × this)` items. gpufeed shuffles a
        /// whole epoch and does not read it.
        shuffle_buffer_multiplier: usize = 30;
        /// Memory-map caches (not read by MyXTTS' pipeline).
        enable_memory_mapping: bool = true;
        /// Verify caches (not read by MyXTTS' pipeline).
        cache_verification: bool = true;
        /// Rebuild the token cache automatically (not read by MyXTTS' pipeline).
        auto_rebuild_token_cache: Option<bool> = None;
        /// Rebuild the mel cache automatically (not read by MyXTTS' pipeline).
        auto_rebuild_mel_cache: Option<bool> = None;
        /// Pin host memory (not read by MyXTTS' pipeline).
        pin_memory: bool = true;
        /// Keep workers between epochs (not read by MyXTTS' pipeline).
        persistent_workers: bool = true;
        /// Prefetch batches to the GPU (`prefetch_to_device`).
        prefetch_to_gpu: bool = true;
        /// MyXTTS' extra GPU prefetch stage.
        enhanced_gpu_prefetch: bool = true;
        /// MyXTTS' tf.data threading options.
        optimize_cpu_gpu_overlap: bool = true;
        /// MyXTTS' "auto-tune" of the prefetch buffer (a no-op in MyXTTS).
        auto_tune_performance: bool = true;
        /// MyXTTS' tf.data file loading (instead of `tf.numpy_function`).
        use_tf_native_loading: bool = true;
        /// XLA for the whole process (`tf.config.optimizer.set_jit`; compare
        /// `training.enable_xla_compilation`, XLA for the train step).
        enable_xla: bool = true;
        /// Mixed precision (MyXTTS reads it here, in `data`).
        mixed_precision: bool = true;
        /// TensorRT (not read by MyXTTS).
        enable_tensorrt: bool = false;
        /// `auto`, `precompute` or `runtime`.
        preprocessing_mode: PreprocessingMode = PreprocessingMode::Precompute;
        /// Reference audio for voice cloning, seconds (inference only).
        reference_audio_length: f64 = 3.0;
        /// Longest audio kept after trimming, seconds (inference only).
        max_audio_length: f64 = 11.0;
        /// GPU that runs the input pipeline in MyXTTS' two-GPU mode (both ids set).
        data_gpu: Option<usize> = None;
        /// GPU that runs the model in MyXTTS' two-GPU mode.
        model_gpu: Option<usize> = None;
        /// MyXTTS' prefetch depth, batches (its real prefetch knob).
        pipeline_buffer_size: usize = 50;
        /// Delay before the model starts in two-GPU mode, seconds.
        model_start_delay: f64 = 2.0;
    }
}

section! {
    /// The `training` section (MyXTTS' `TrainingConfig`). gpufeed's step profiler reads
    /// the optimiser, precision and compilation keys; the rest are known so that they are
    /// not reported as unknown.
    TrainingConfig = "training" {
        /// Passes over the training set.
        epochs: usize = 1000 => "a positive integer";
        /// Peak learning rate. Write `1.0e-4`, not `1e-4`: PyYAML reads the latter as a
        /// string.
        learning_rate: f64 = 1e-4 => "a positive number";
        /// Warm-up steps of the schedule.
        warmup_steps: usize = 4000;
        /// Weight decay.
        weight_decay: f64 = 1e-6;
        /// Clip gradients to this global norm.
        gradient_clip_norm: f64 = 1.0;
        /// Micro-batches per optimiser step.
        gradient_accumulation_steps: usize = 1 => "a positive integer";
        /// Fraction of GPU memory the trainer may use, 0..1.
        max_memory_fraction: f64 = 0.9 => "a number in (0, 1]";
        /// Free memory between epochs.
        enable_memory_cleanup: bool = true;
        /// Optimiser name (`adamw`, `adam`, ...).
        optimizer: String = "adamw".to_owned();
        /// Adam β1.
        beta1: f64 = 0.9;
        /// Adam β2.
        beta2: f64 = 0.999;
        /// Adam ε.
        eps: f64 = 1e-8;
        /// Schedule name (`noam`, `cosine`, ...).
        scheduler: String = "noam".to_owned();
        /// Schedule parameters, kept as written.
        scheduler_params: BTreeMap<String, Value> = BTreeMap::new() => "a mapping";
        /// Weight of the mel loss.
        mel_loss_weight: f64 = 2.5;
        /// Weight of the KL loss.
        kl_loss_weight: f64 = 1.0;
        /// Weight of the duration loss.
        duration_loss_weight: f64 = 0.1;
        /// Weight of the attention loss.
        attention_loss_weight: f64 = 0.1;
        /// Weight of the voice similarity loss.
        voice_similarity_loss_weight: f64 = 3.0;
        /// Weight of the speaker classification loss.
        speaker_classification_loss_weight: f64 = 1.5;
        /// Weight of the voice reconstruction loss.
        voice_reconstruction_loss_weight: f64 = 2.0;
        /// Weight of the prosody matching loss.
        prosody_matching_loss_weight: f64 = 1.0;
        /// Weight of the spectral consistency loss.
        spectral_consistency_loss_weight: f64 = 1.5;
        /// Weight of the pitch loss (unset: the trainer's default).
        pitch_loss_weight: Option<f64> = None;
        /// Weight of the energy loss (unset: the trainer's default).
        energy_loss_weight: Option<f64> = None;
        /// Weight of the prosody pitch loss (unset: the trainer's default).
        prosody_pitch_loss_weight: Option<f64> = None;
        /// Weight of the prosody energy loss (unset: the trainer's default).
        prosody_energy_loss_weight: Option<f64> = None;
        /// Weight of the speaking rate loss (unset: the trainer's default).
        speaking_rate_loss_weight: Option<f64> = None;
        /// Scale loss weights adaptively.
        use_adaptive_loss_weights: bool = true;
        /// Exponential smoothing factor of the loss, 0..1.
        loss_smoothing_factor: f64 = 0.1;
        /// Largest allowed loss spike, × the smoothed loss.
        max_loss_spike_threshold: f64 = 2.0;
        /// Gradient norm above which the trainer warns.
        gradient_norm_threshold: f64 = 5.0;
        /// Label smoothing.
        use_label_smoothing: bool = true;
        /// Label smoothing of the mel loss.
        mel_label_smoothing: f64 = 0.05;
        /// Label smoothing of the stop-token loss.
        stop_label_smoothing: f64 = 0.1;
        /// Huber instead of L1/L2 for the mel loss.
        use_huber_loss: bool = true;
        /// δ of the Huber loss.
        huber_delta: f64 = 1.0;
        /// Weight of positive stop tokens.
        stop_token_positive_weight: f64 = 5.0;
        /// Cosine schedule with warm-up.
        use_warmup_cosine_schedule: bool = true;
        /// Cosine restarts.
        cosine_restarts: bool = false;
        /// Floor of the learning rate. Write `1.0e-6`, not `1e-6`.
        min_learning_rate: f64 = 1e-6 => "a non-negative number";
        /// Epochs without improvement before stopping.
        early_stopping_patience: usize = 25;
        /// Smallest improvement that counts.
        early_stopping_min_delta: f64 = 0.0005;
        /// Save a checkpoint every this many steps.
        save_step: usize = 25000;
        /// Checkpoint folder.
        checkpoint_dir: PathBuf = PathBuf::from("./checkpoints");
        /// Validate every this many steps.
        val_step: usize = 5000;
        /// Log every this many steps.
        log_step: usize = 100;
        /// Log to Weights & Biases.
        use_wandb: bool = false;
        /// Weights & Biases project.
        wandb_project: String = "myxtts".to_owned();
        /// `tf.distribute.MirroredStrategy` over the visible GPUs.
        multi_gpu: bool = false;
        /// GPUs to use, as `CUDA_VISIBLE_DEVICES` (`"0,1"`). Unset: all.
        visible_gpus: Option<String> = None;
        /// Run the train step as a graph (`tf.function`).
        enable_graph_mode: bool = true;
        /// XLA-compile the train step (`jit_compile=True`).
        enable_xla_compilation: bool = true;
        /// Run eagerly for debugging.
        enable_eager_debug: bool = false;
        /// Mixed precision. Unset: `data.mixed_precision`, where MyXTTS reads it (the
        /// seeds' guide put it here, which MyXTTS' `TrainingConfig` rejects).
        mixed_precision: Option<bool> = None;
    }
}

impl DataConfig {
    /// The feature settings of this section.
    #[must_use]
    pub fn audio(&self) -> AudioSettings {
        // A struct literal without `..`: a field added to AudioSettings fails to compile
        // here until the schema has it too.
        AudioSettings {
            sample_rate: self.sample_rate,
            n_fft: self.n_fft,
            hop_length: self.hop_length,
            win_length: self.win_length,
            n_mels: self.n_mels,
            fmin: self.fmin,
            fmax: self.fmax,
            mel_scale: self.mel_scale,
            mel_norm: self.mel_norm,
            power: self.power,
            center: self.center,
            pad_mode: self.pad_mode,
            log: self.log,
            log_floor: self.log_floor,
        }
    }

    /// The text settings of this section.
    #[must_use]
    pub fn text(&self) -> TextSettings {
        TextSettings {
            cleaner: self.cleaner,
            add_blank: self.add_blank,
            add_eos: self.add_eos,
            use_normalized_text: self.use_normalized_text,
        }
    }

    /// Loader threads: `num_workers`, or `cores` when unset.
    #[must_use]
    pub fn num_workers_or(&self, cores: usize) -> usize {
        self.num_workers.unwrap_or(cores)
    }

    /// Loader threads: `num_workers`, or the cores available to this process when unset.
    #[must_use]
    pub fn effective_num_workers(&self) -> usize {
        self.num_workers_or(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// Prefetch depth in batches for a given number of workers: `prefetch_buffer_size`,
    /// or 2 × workers (at least 2) when unset.
    #[must_use]
    pub fn prefetch_buffer_size_for(&self, workers: usize) -> usize {
        self.prefetch_buffer_size
            .unwrap_or_else(|| 2 * workers.max(1))
    }

    /// Prefetch depth in batches with [`DataConfig::effective_num_workers`].
    #[must_use]
    pub fn effective_prefetch_buffer_size(&self) -> usize {
        self.prefetch_buffer_size_for(self.effective_num_workers())
    }

    /// `fmax`, or `sample_rate / 2` when unset, Hz.
    #[must_use]
    pub fn fmax_hz(&self) -> f64 {
        self.fmax.unwrap_or(f64::from(self.sample_rate) / 2.0)
    }
}

/// The sections, in file order.
pub const SECTIONS: &[&str] = &["model", "data", "training"];

/// How MyXTTS treated a key (from `shared/research/myxtts.md`, sections 0 and 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "note", rename_all = "kebab-case")]
pub enum Myxtts {
    /// A field of MyXTTS' config that its code reads.
    Read,
    /// A field of MyXTTS' config that its training pipeline never reads; why.
    Unread(&'static str),
    /// Not a field of MyXTTS' config: a gpufeed key. MyXTTS' strict loader
    /// (`DataConfig(**yaml["data"])`) fails with `TypeError` on it.
    NotAKey(&'static str),
}

/// One known key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KeyInfo {
    /// `model`, `data` or `training`.
    pub section: &'static str,
    /// The key (`num_workers`).
    pub name: &'static str,
    /// What MyXTTS did with it.
    pub myxtts: Myxtts,
}

const HARD_CODED: &str = "the dataset hard-codes n_fft 1024, hop 256, win 1024, 80 mels, \
                          fmin 0, fmax sr/2 and ignores these keys";
const NOT_PIPELINE: &str = "declared in DataConfig but not used by the data pipeline";

fn myxtts_status(section: &str, name: &str) -> Myxtts {
    match (section, name) {
        ("model", "n_fft" | "hop_length" | "win_length") => Myxtts::Unread(HARD_CODED),
        ("data", "n_mels") => Myxtts::NotAKey(
            "not a DataConfig field: the shipped config had it and every `from_yaml` failed; \
             gpufeed accepts it",
        ),
        (
            "data",
            "n_fft" | "hop_length" | "win_length" | "fmin" | "fmax" | "mel_scale" | "mel_norm"
            | "power" | "center" | "pad_mode" | "log" | "log_floor",
        ) => Myxtts::NotAKey("a gpufeed feature key; MyXTTS hard-coded its features"),
        (
            "data",
            "cleaner"
            | "add_eos"
            | "use_normalized_text"
            | "cache_dir"
            | "pad_to_multiple_of"
            | "over_length"
            | "shuffle"
            | "bucket_window"
            | "seed"
            | "drop_last",
        ) => Myxtts::NotAKey("a gpufeed loader key"),
        ("data", "prefetch_buffer_size") => Myxtts::Unread(
            "never read by create_tf_dataset (only checked by the tools); the real knob was \
             pipeline_buffer_size; gpufeed's loader reads it",
        ),
        ("data", "train_subset_fraction" | "eval_subset_fraction" | "subset_seed") => {
            Myxtts::Unread("ignored by the dataset; its splits were unseeded")
        }
        ("data", "max_speakers") => Myxtts::Unread("not used by the loader"),
        (
            "data",
            "enable_memory_mapping"
            | "cache_verification"
            | "auto_rebuild_token_cache"
            | "auto_rebuild_mel_cache"
            | "pin_memory"
            | "persistent_workers",
        ) => Myxtts::Unread(NOT_PIPELINE),
        ("data", "target_loudness_lufs") => {
            Myxtts::Unread("stored only; the RMS target was hard-coded to 0.1")
        }
        ("data", "auto_tune_performance") => {
            Myxtts::Unread("read, but the auto-tuned buffer was always max(8, B): a no-op")
        }
        ("data", "enable_tensorrt") => Myxtts::Unread("never read"),
        ("data", "shuffle_buffer_multiplier") => Myxtts::Read,
        ("data", "reference_audio_length" | "max_audio_length") => Myxtts::Unread("inference only"),
        ("training", "mixed_precision") => Myxtts::NotAKey(
            "MyXTTS reads `data.mixed_precision`; its TrainingConfig rejects this key",
        ),
        _ => Myxtts::Read,
    }
}

/// Every known key of every section, in file order.
pub fn keys() -> impl Iterator<Item = KeyInfo> {
    let sections: [(&'static str, &'static [&'static str]); 3] = [
        (ModelConfig::SECTION, ModelConfig::KEYS),
        (DataConfig::SECTION, DataConfig::KEYS),
        (TrainingConfig::SECTION, TrainingConfig::KEYS),
    ];
    sections.into_iter().flat_map(|(section, names)| {
        names.iter().map(move |&name| KeyInfo {
            section,
            name,
            myxtts: myxtts_status(section, name),
        })
    })
}

/// The known key at a dotted path (`data.num_workers`).
#[must_use]
pub fn key_info(path: &str) -> Option<KeyInfo> {
    let (section, name) = path.split_once('.')?;
    keys().find(|k| k.section == section && k.name == name)
}

/// The keys of a section, or `None` for an unknown section.
pub(crate) fn section_keys(section: &str) -> Option<&'static [&'static str]> {
    match section {
        "model" => Some(ModelConfig::KEYS),
        "data" => Some(DataConfig::KEYS),
        "training" => Some(TrainingConfig::KEYS),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_settings() {
        let data = DataConfig::default();
        assert_eq!(data.audio(), AudioSettings::default());
        assert_eq!(data.text(), TextSettings::default());
    }

    #[test]
    fn serde_names_are_the_keys() {
        let json = serde_json::to_value(Config::default()).unwrap();
        for (section, keys) in [
            ("model", ModelConfig::KEYS),
            ("data", DataConfig::KEYS),
            ("training", TrainingConfig::KEYS),
        ] {
            let object = json[section].as_object().unwrap();
            let mut names: Vec<&str> = object.keys().map(String::as_str).collect();
            let mut expected = keys.to_vec();
            names.sort_unstable();
            expected.sort_unstable();
            assert_eq!(names, expected, "section {section}");
        }
        let back: Config = serde_json::from_value(json).unwrap();
        assert_eq!(back, Config::default());
    }

    #[test]
    fn workers_and_prefetch_defaults() {
        let mut data = DataConfig::default();
        assert_eq!(data.num_workers_or(6), 6);
        assert_eq!(data.prefetch_buffer_size_for(6), 12);
        assert_eq!(data.prefetch_buffer_size_for(0), 2);
        data.num_workers = Some(3);
        data.prefetch_buffer_size = Some(5);
        assert_eq!(data.effective_num_workers(), 3);
        assert_eq!(data.effective_prefetch_buffer_size(), 5);
        assert!((data.fmax_hz() - 8000.0).abs() < 1e-9);
        data.fmax = None;
        assert!((data.fmax_hz() - 11025.0).abs() < 1e-9);
    }

    #[test]
    fn key_info_notes_unread_keys() {
        assert!(matches!(
            key_info("data.prefetch_buffer_size").unwrap().myxtts,
            Myxtts::Unread(_)
        ));
        assert!(matches!(
            key_info("data.over_length").unwrap().myxtts,
            Myxtts::NotAKey(_)
        ));
        assert_eq!(key_info("data.batch_size").unwrap().myxtts, Myxtts::Read);
        assert!(key_info("data.nope").is_none());
        assert!(key_info("nodot").is_none());
    }
}
