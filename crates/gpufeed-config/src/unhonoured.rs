//! Config keys gpufeed does not honour: keys whose value asks the trainer's data pipeline
//! for something (phonemes, trimmed silence, normalised loudness, augmentation, ...) that
//! gpufeed's precompute and loader do not do. [`TABLE`] lists them; [`find`] says which of
//! them a loaded config asks for, one [`Unhonoured`] each, for `gpufeed validate` (the
//! `config-unhonoured-key` finding) and `gpufeed precompute` (one line on stderr each).
//!
//! ```
//! use std::path::Path;
//!
//! let loaded = gpufeed_config::from_str("data:\n  use_phonemes: true\n", Path::new("c.yaml"))
//!     .unwrap();
//! let hits = gpufeed_config::unhonoured::find(&loaded);
//! assert_eq!(hits.len(), 1);
//! assert_eq!((hits[0].key, hits[0].value.as_str(), hits[0].line()), ("data.use_phonemes", "true", Some(2)));
//! assert!(hits[0].to_string().starts_with(
//!     "c.yaml:2:3: `data.use_phonemes: true` asks for phonemes, but gpufeed tokenises the \
//!      characters"
//! ));
//!
//! let loaded = gpufeed_config::from_str("data:\n  use_phonemes: false\n", Path::new("c.yaml"))
//!     .unwrap();
//! assert!(gpufeed_config::unhonoured::find(&loaded).is_empty());
//! ```
//!
//! # Written, or MyXTTS' default
//!
//! A key fires when the file writes it with a value that asks (`use_phonemes: true`). It
//! also fires when the file does not write it but MyXTTS would still do it: the schema's
//! defaults of these keys are MyXTTS' (`use_phonemes: true`, `trim_silence: true`, ...), so
//! a MyXTTS user who never wrote `use_phonemes` trains MyXTTS on phonemes and gets
//! characters from gpufeed. That holds only for a MyXTTS config, which the file shows by
//! setting a key MyXTTS reads and gpufeed's data pipeline does not ([`myxtts_marker`]: the
//! `data` keys of MyXTTS' own, every `model` and `training` key of its dataclasses); a file
//! of gpufeed's own keys (`data: {sample_rate: 16000}`), or an empty one, asks for nothing
//! it does not write. Where MyXTTS itself does something only on its librosa path
//! (`use_tf_native_loading: false`; its default TF-native path trims, normalises and
//! detects nothing, research/myxtts.md section 3.2), the default fires only on that path.
//!
//! # The table
//!
//! | key | asks when | MyXTTS' default asks | gpufeed instead |
//! |---|---|---|---|
//! | `use_phonemes` | `true` | yes (`true`, both paths) | tokenises the characters of the cleaned text |
//! | `trim_silence` | `true` | on its librosa path | keeps the silence |
//! | `normalize_audio` | `true` | on its librosa path | keeps each file's level |
//! | `enable_loudness_normalization` | `true` | on its librosa path | keeps each file's level |
//! | `enable_vad` | `true` | on its librosa path at a multiple of 8000 Hz (Silero; MyXTTS skipped it at 22050 Hz) | no voice activity detection |
//! | `enable_pitch_shift` | `true` | no (`false`) | no augmentation: a cache holds one version of each clip |
//! | `enable_noise_mixing` | `true` | no (`false`) | no augmentation |
//! | `enable_multilingual` | `true` | no (`false`) | no language detection |
//! | `enable_phone_normalization` | `true` | no (`false`) | cleans with `cleaner` only |
//! | `enable_multispeaker` | `true` | no (`false`) | keeps the speakers the dataset's reader finds, set or not (the key changes nothing: [`Consequence::Moot`]) |
//! | `speaker_id_pattern` | any pattern | no (unset) | speakers from the dataset's layout, never from file names |
//! | `train_split` | below 1, without `metadata_train_file` | no (MyXTTS' `train_main` reads separate metadata files) | every item of the manifest, none held out |
//!
//! Every other `data` key was looked at and left out, because gpufeed honours it or because
//! it asks for no processing of the data:
//! - honoured: the audio keys (`sample_rate` ... `log_floor`, [`DataConfig::audio`]), the
//!   text keys (`cleaner`, `add_blank`, `add_eos`, `use_normalized_text`, and
//!   `text_cleaners`, mapped onto `cleaner`), the caps (`max_text_length`,
//!   `max_mel_frames`, `over_length`) and the loader's keys (`batch_size`, `num_workers`,
//!   `shuffle`, padding, ...).
//! - parameters of a key above, which fires instead: `language`, `phoneme_language`,
//!   `supported_languages`, `language_detection_method`, `pitch_shift_range`,
//!   `noise_mixing_probability`, `noise_mixing_snr_range`, `val_split`.
//! - where the dataset is (`dataset_path`, `dataset_name`, `metadata_*`, `wavs_*`):
//!   precompute reads the dataset `--data` names, which it requires.
//! - how and when MyXTTS' pipeline runs, not what it feeds the model
//!   (`preprocessing_mode`, `use_tf_native_loading`, `shuffle_buffer_multiplier`, the
//!   GPU, prefetch and compilation keys): `validate`'s other rules speak of them.
//! - keys MyXTTS itself never reads (`target_loudness_lufs`, `max_speakers`, the subset
//!   fractions, ...): `validate`'s `myxtts-unread-key` already says so, and one finding a
//!   key is enough; `max_text_tokens` has `config-two-text-caps`.

use std::fmt;
use std::path::PathBuf;

use crate::schema::{DataConfig, Myxtts, key_info};
use crate::source::{EntrySpan, Loaded, Source, Span};

/// What a key's value does to gpufeed's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consequence {
    /// gpufeed does not do what the value asks: the cache differs from what the trainer
    /// would build (a warning in `validate`).
    Differs,
    /// gpufeed does it whatever the key says, so the key changes nothing (a note).
    Moot,
}

/// When MyXTTS' default value of a key asks for its behaviour, in a MyXTTS config that does
/// not write the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByDefault {
    /// Never: the default asks for nothing (`false`, unset), or MyXTTS' usual entry point
    /// does not use it.
    Never,
    /// Always.
    Always,
    /// On MyXTTS' librosa path only (`use_tf_native_loading: false`).
    LibrosaPath,
    /// On the librosa path at a sample rate Silero VAD takes (a multiple of 8000 Hz);
    /// MyXTTS skipped VAD at other rates, 22050 Hz included.
    LibrosaPathSileroRate,
}

impl ByDefault {
    fn applies(self, d: &DataConfig) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::LibrosaPath => !d.use_tf_native_loading,
            Self::LibrosaPathSileroRate => {
                !d.use_tf_native_loading && d.sample_rate.is_multiple_of(8000)
            }
        }
    }

    /// The keys the condition reads, for evidence.
    #[must_use]
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Never | Self::Always => &[],
            Self::LibrosaPath => &["data.use_tf_native_loading"],
            Self::LibrosaPathSileroRate => &["data.use_tf_native_loading", "data.sample_rate"],
        }
    }

    /// ` on its librosa path (...)`, appended to "MyXTTS' default asks".
    fn phrase(self) -> &'static str {
        match self {
            Self::Never | Self::Always => "",
            Self::LibrosaPath => " on its librosa path (`use_tf_native_loading: false`)",
            Self::LibrosaPathSileroRate => {
                " on its librosa path (`use_tf_native_loading: false`) at a rate Silero VAD takes"
            }
        }
    }
}

/// One key gpufeed does not honour.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Dotted path: `data.use_phonemes`.
    pub key: &'static str,
    /// The values that ask for the behaviour, in words: `` `true` ``.
    pub asks_when: &'static str,
    /// What they ask for: `phonemes`.
    pub asks_for: &'static str,
    /// What gpufeed does instead.
    pub instead: &'static str,
    /// What the user should do: one line.
    pub fix: &'static str,
    /// The schema's (MyXTTS') default, as YAML writes it.
    pub default: &'static str,
    /// When that default asks for the behaviour.
    pub by_default: ByDefault,
    /// What the value does to the cache.
    pub consequence: Consequence,
    /// True when the (written or default) value asks for the behaviour.
    asks: fn(&DataConfig) -> bool,
}

impl Entry {
    /// True when `data`'s value of this key asks for what gpufeed does not do.
    #[must_use]
    pub fn asks(&self, data: &DataConfig) -> bool {
        (self.asks)(data)
    }
}

const ONE_VERSION: &str = "a precomputed cache holds one fixed version of each clip, so \
                           nothing is augmented";

/// Every key gpufeed does not honour (see the module docs for the keys left out, and why).
pub const TABLE: &[Entry] = &[
    Entry {
        key: "data.use_phonemes",
        asks_when: "`true`",
        asks_for: "phonemes",
        instead: "gpufeed tokenises the characters of the cleaned text, so the cache holds \
                  characters, not phonemes",
        fix: "phonemise the text yourself (the phonemizer package with espeak, as MyXTTS did) \
              and give it in a `phonemes` field or column of the manifest, which precompute \
              tokenises as given; or set `use_phonemes: false` so the config says what the \
              cache holds",
        default: "true",
        by_default: ByDefault::Always,
        consequence: Consequence::Differs,
        asks: |d| d.use_phonemes,
    },
    Entry {
        key: "data.trim_silence",
        asks_when: "`true`",
        asks_for: "the leading and trailing silence to be trimmed",
        instead: "gpufeed computes the features of the whole file, so the cache keeps the \
                  silence",
        fix: "trim the audio beforehand (`sox in.wav out.wav silence 1 0.1 1% reverse silence \
              1 0.1 1% reverse`), or set `trim_silence: false` to accept that the cache keeps \
              the silence",
        default: "true",
        by_default: ByDefault::LibrosaPath,
        consequence: Consequence::Differs,
        asks: |d| d.trim_silence,
    },
    Entry {
        key: "data.normalize_audio",
        asks_when: "`true`",
        asks_for: "each clip to be normalised to one level",
        instead: "gpufeed computes the features of the samples as recorded, so the cache keeps \
                  each file's level",
        fix: "normalise the files beforehand (`sox --norm=-1 in.wav out.wav`), or set \
              `normalize_audio: false`",
        default: "true",
        by_default: ByDefault::LibrosaPath,
        consequence: Consequence::Differs,
        asks: |d| d.normalize_audio,
    },
    Entry {
        key: "data.enable_loudness_normalization",
        asks_when: "`true`",
        asks_for: "loudness normalisation",
        instead: "gpufeed computes the features of the samples as recorded, so the cache keeps \
                  each file's loudness",
        fix: "normalise the loudness beforehand (`ffmpeg -i in.wav -af loudnorm=I=-23 -ar 22050 \
              out.wav`), or set `enable_loudness_normalization: false`",
        default: "true",
        by_default: ByDefault::LibrosaPath,
        consequence: Consequence::Differs,
        asks: |d| d.enable_loudness_normalization,
    },
    Entry {
        key: "data.enable_vad",
        asks_when: "`true`",
        asks_for: "voice activity detection, to cut what is not speech",
        instead: "gpufeed runs no voice activity detection, so the cache keeps what is not \
                  speech",
        fix: "cut what is not speech beforehand with a VAD (Silero VAD at 16 kHz, as MyXTTS \
              used), or set `enable_vad: false`",
        default: "true",
        by_default: ByDefault::LibrosaPathSileroRate,
        consequence: Consequence::Differs,
        asks: |d| d.enable_vad,
    },
    Entry {
        key: "data.enable_pitch_shift",
        asks_when: "`true`",
        asks_for: "random pitch shifts of the training clips (`pitch_shift_range`)",
        instead: ONE_VERSION,
        fix: "apply the pitch shift in the training step, where every epoch draws it anew \
              (an augmentation cannot live in a precomputed cache), or set \
              `enable_pitch_shift: false`",
        default: "false",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.enable_pitch_shift,
    },
    Entry {
        key: "data.enable_noise_mixing",
        asks_when: "`true`",
        asks_for: "noise mixed into the training clips (`noise_mixing_probability`, \
                   `noise_mixing_snr_range`)",
        instead: ONE_VERSION,
        fix: "mix the noise in the training step, where every epoch draws it anew (an \
              augmentation cannot live in a precomputed cache), or set \
              `enable_noise_mixing: false`",
        default: "false",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.enable_noise_mixing,
    },
    Entry {
        key: "data.enable_multilingual",
        asks_when: "`true`",
        asks_for: "a language to be detected for each item (`language_detection_method`)",
        instead: "gpufeed detects no language: every item is cleaned and tokenised alike and \
                  the cache holds no language per item",
        fix: "keep one language per dataset and precompute each with its own config, or set \
              `enable_multilingual: false`",
        default: "false",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.enable_multilingual,
    },
    Entry {
        key: "data.enable_phone_normalization",
        asks_when: "`true`",
        asks_for: "phone-level normalisation of the text",
        instead: "gpufeed only cleans the text with `data.cleaner` and tokenises its characters",
        fix: "normalise the text beforehand (or give phonemes in the manifest), or set \
              `enable_phone_normalization: false`",
        default: "false",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.enable_phone_normalization,
    },
    Entry {
        key: "data.enable_multispeaker",
        asks_when: "`true`",
        asks_for: "speaker labels",
        instead: "gpufeed does not read the key: the cache keeps every speaker label the \
                  dataset's reader finds, whether or not it is set, and takes none from file \
                  names as MyXTTS did",
        fix: "nothing to change when the dataset's layout names the speakers; delete the key if \
              only gpufeed reads this file",
        default: "false",
        by_default: ByDefault::Never,
        consequence: Consequence::Moot,
        asks: |d| d.enable_multispeaker,
    },
    Entry {
        key: "data.speaker_id_pattern",
        asks_when: "any pattern",
        asks_for: "speaker labels taken from the file names by this pattern",
        instead: "gpufeed does not read it: speaker labels come from the dataset's layout, as \
                  its reader finds them, never from a pattern on file names",
        fix: "give the speakers in the dataset the way its reader reads them, then delete the \
              key if only gpufeed reads this file",
        default: "null",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.speaker_id_pattern.is_some(),
    },
    Entry {
        key: "data.train_split",
        asks_when: "below 1, without `metadata_train_file`",
        asks_for: "part of the items to be held out of training",
        instead: "gpufeed's cache and loader hold every item of the manifest",
        fix: "split the manifest yourself (`metadata_train.csv`, `metadata_eval.csv`) and \
              precompute the training part with `--data DIR/metadata_train.csv`; or set \
              `train_split: 1.0`",
        default: "0.9",
        by_default: ByDefault::Never,
        consequence: Consequence::Differs,
        asks: |d| d.train_split < 1.0 && d.metadata_train_file.is_none(),
    },
];

/// A key of a loaded config whose value asks for what gpufeed does not do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unhonoured {
    /// Dotted path: `data.use_phonemes`.
    pub key: &'static str,
    /// The value as written (`true`), or MyXTTS' default when the file does not write it.
    pub value: String,
    /// The key as written in the file; `None` when MyXTTS' default asks.
    pub written: Option<Span>,
    /// When MyXTTS' default asks: the key that makes the file a MyXTTS config.
    pub myxtts_marker: Option<String>,
    /// The keys the default's condition reads (`data.use_tf_native_loading`), for evidence.
    pub default_keys: &'static [&'static str],
    /// What it does to the cache.
    pub consequence: Consequence,
    /// What the value asks for and what gpufeed does instead: one line, without the place.
    pub message: String,
    /// What to do: one line.
    pub fix: &'static str,
    /// The config file, for [`Display`](fmt::Display).
    pub path: PathBuf,
}

impl Unhonoured {
    /// The line of the key, when the file writes it.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        self.written.map(|s| s.line)
    }

    /// True when the file does not write the key and MyXTTS' default asks.
    #[must_use]
    pub fn by_default(&self) -> bool {
        self.written.is_none()
    }
}

/// `c.yaml:2:3: message; fix` (`c.yaml: message; fix` for a default): one line, what
/// `gpufeed precompute` prints.
impl fmt::Display for Unhonoured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(span) = self.written {
            write!(f, ":{}:{}", span.line, span.column)?;
        }
        write!(f, ": {}; {}", self.message, self.fix)
    }
}

/// The keys of [`TABLE`] that `loaded` asks for, in table order.
#[must_use]
pub fn find(loaded: &Loaded) -> Vec<Unhonoured> {
    check(&loaded.config.data, &loaded.source)
}

/// [`find`] on a config's `data` section and the file it was read from.
#[must_use]
pub fn check(data: &DataConfig, source: &Source) -> Vec<Unhonoured> {
    let marker = myxtts_marker(source);
    TABLE
        .iter()
        .filter(|e| e.asks(data))
        .filter_map(|e| {
            let hit = |value: String, written, myxtts_marker, message| Unhonoured {
                key: e.key,
                value,
                written,
                myxtts_marker,
                default_keys: if written.is_none() {
                    e.by_default.keys()
                } else {
                    &[]
                },
                consequence: e.consequence,
                message,
                fix: e.fix,
                path: source.path().to_path_buf(),
            };
            if let Some(entry) = source.entry(e.key) {
                let value = source.slice(entry.value).to_owned();
                let message = format!(
                    "`{}: {value}` asks for {}, but {}",
                    e.key, e.asks_for, e.instead
                );
                return Some(hit(value, entry.key.or(Some(entry.value)), None, message));
            }
            let marker = marker?;
            if !e.by_default.applies(data) {
                return None;
            }
            let message = format!(
                "`{}` is not set, and MyXTTS, whose config this is (it sets `{}`), defaults it \
                 to `{}`, which{} asks for {}, but {}",
                e.key,
                marker.path,
                e.default,
                e.by_default.phrase(),
                e.asks_for,
                e.instead
            );
            Some(hit(
                e.default.to_owned(),
                None,
                Some(marker.path.clone()),
                message,
            ))
        })
        .collect()
}

/// The `data` keys that both gpufeed and MyXTTS read: they say nothing about whose config
/// a file is.
const SHARED: &[&str] = &[
    "sample_rate",
    "add_blank",
    "dataset_path",
    "batch_size",
    "num_workers",
    "prefetch_buffer_size",
    "pad_to_fixed_length",
    "max_text_length",
    "max_mel_frames",
];

/// The first key of the file that makes it a MyXTTS config: a key of MyXTTS' dataclasses
/// (read by MyXTTS or not) that gpufeed's data pipeline does not read, that is any such
/// `model` or `training` key, or a `data` key outside gpufeed's audio, text and loader keys
/// (`data.dataset_name`, `data.use_phonemes`, `data.max_text_tokens`, ...).
#[must_use]
pub fn myxtts_marker(source: &Source) -> Option<&EntrySpan> {
    source.entries().iter().find(|e| {
        if e.depth != 2 || e.key.is_none() || e.path.contains('[') {
            return false;
        }
        let Some(info) = key_info(&e.path) else {
            return false;
        };
        let gpufeeds = matches!(info.myxtts, Myxtts::NotAKey(_));
        let shared = info.section == "data" && SHARED.contains(&info.name);
        !gpufeeds && !shared
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::schema::{Config, DataConfig};

    fn hits(text: &str) -> Vec<Unhonoured> {
        let loaded = crate::from_str(text, Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
        find(&loaded)
    }

    fn keys(text: &str) -> Vec<&'static str> {
        hits(text).iter().map(|h| h.key).collect()
    }

    #[test]
    fn the_table_names_data_keys_with_their_schema_defaults() {
        let defaults = serde_json::to_value(DataConfig::default()).unwrap();
        let mut seen = Vec::new();
        for e in TABLE {
            let name = e
                .key
                .strip_prefix("data.")
                .unwrap_or_else(|| panic!("{}", e.key));
            assert!(DataConfig::KEYS.contains(&name), "{}", e.key);
            assert!(!seen.contains(&e.key), "{} twice", e.key);
            seen.push(e.key);
            assert_eq!(defaults[name].to_string(), e.default, "{}", e.key);
            // MyXTTS' default asks exactly when the default value asks (on its path).
            let asks_by_default = e.asks(&DataConfig::default());
            assert_eq!(
                asks_by_default,
                e.by_default != ByDefault::Never || e.key == "data.train_split",
                "{}",
                e.key
            );
            for text in [e.asks_when, e.asks_for, e.instead, e.fix] {
                assert!(!text.is_empty() && !text.contains('\n'), "{}", e.key);
                assert!(!text.ends_with('.'), "{}: {text}", e.key);
            }
        }
        assert!(!SHARED.is_empty());
        for name in SHARED {
            let info = key_info(&format!("data.{name}")).unwrap_or_else(|| panic!("{name}"));
            assert!(!matches!(info.myxtts, Myxtts::NotAKey(_)), "{name}");
        }
    }

    #[test]
    fn a_written_value_fires_when_it_asks() {
        let h = hits("data:\n  batch_size: 8\n  use_phonemes: true   # espeak\n");
        let [h] = h.as_slice() else { panic!("{h:?}") };
        assert_eq!((h.key, h.value.as_str()), ("data.use_phonemes", "true"));
        assert_eq!(h.written.map(|s| (s.line, s.column)), Some((3, 3)));
        assert!(!h.by_default() && h.myxtts_marker.is_none());
        assert_eq!(h.consequence, Consequence::Differs);
        assert_eq!(
            h.to_string(),
            "c.yaml:3:3: `data.use_phonemes: true` asks for phonemes, but gpufeed tokenises the \
             characters of the cleaned text, so the cache holds characters, not phonemes; \
             phonemise the text yourself (the phonemizer package with espeak, as MyXTTS did) \
             and give it in a `phonemes` field or column of the manifest, which precompute \
             tokenises as given; or set `use_phonemes: false` so the config says what the \
             cache holds"
        );
        assert!(!h.to_string().contains('\n'));
        // Every key, written with the value that asks.
        let text = "data:\n  use_phonemes: true\n  trim_silence: true\n  normalize_audio: true\n  \
                    enable_loudness_normalization: true\n  enable_vad: true\n  \
                    enable_pitch_shift: true\n  enable_noise_mixing: true\n  \
                    enable_multilingual: true\n  enable_phone_normalization: true\n  \
                    enable_multispeaker: true\n  speaker_id_pattern: \"(p\\\\d+)_\"\n  \
                    train_split: 0.8\n";
        let all = hits(text);
        assert_eq!(
            all.iter().map(|h| h.key).collect::<Vec<_>>(),
            TABLE.iter().map(|e| e.key).collect::<Vec<_>>()
        );
        for (i, h) in all.iter().enumerate() {
            assert_eq!(h.line(), Some(i + 2), "{}", h.key);
        }
        let pattern = all.iter().find(|h| h.key == "data.speaker_id_pattern");
        assert_eq!(pattern.map(|h| h.value.as_str()), Some("\"(p\\\\d+)_\""));
        let speakers = all.iter().find(|h| h.key == "data.enable_multispeaker");
        assert_eq!(speakers.map(|h| h.consequence), Some(Consequence::Moot));
    }

    #[test]
    fn a_value_that_does_not_ask_never_fires() {
        let text = "data:\n  use_phonemes: false\n  trim_silence: false\n  normalize_audio: \
                    false\n  enable_loudness_normalization: false\n  enable_vad: false\n  \
                    enable_pitch_shift: false\n  enable_noise_mixing: false\n  \
                    enable_multilingual: false\n  enable_phone_normalization: false\n  \
                    enable_multispeaker: false\n  speaker_id_pattern: null\n  train_split: 1.0\n  \
                    use_tf_native_loading: false\n  sample_rate: 16000\n";
        assert_eq!(keys(text), Vec::<&str>::new());
        // Custom metadata files: MyXTTS splits nothing, whatever `train_split` says.
        let custom = "data:\n  use_phonemes: false\n  train_split: 0.9\n  metadata_train_file: \
                      t.csv\n";
        assert_eq!(keys(custom), Vec::<&str>::new());
    }

    #[test]
    fn no_file_or_gpufeeds_own_keys_ask_for_nothing() {
        assert_eq!(keys(""), Vec::<&str>::new());
        assert_eq!(keys("data: {}\n"), Vec::<&str>::new());
        // Keys both read, and gpufeed's own, do not make a MyXTTS config.
        let own = "data:\n  sample_rate: 16000\n  batch_size: 8\n  n_mels: 80\n  cleaner: basic\n  \
                   over_length: truncate\ntraining:\n  mixed_precision: true\n";
        assert_eq!(keys(own), Vec::<&str>::new());
        let config = Config::default();
        assert!(myxtts_marker(&crate::from_str("", Path::new("c")).unwrap().source).is_none());
        // The defaults alone ask, which is why the file must show it is MyXTTS'.
        assert!(TABLE.iter().any(|e| e.asks(&config.data)));
    }

    #[test]
    fn myxtts_defaults_fire_in_a_myxtts_config() {
        let h = hits("data:\n  dataset_name: ljspeech\n");
        let [h] = h.as_slice() else { panic!("{h:?}") };
        assert_eq!((h.key, h.value.as_str()), ("data.use_phonemes", "true"));
        assert!(h.by_default() && h.line().is_none());
        assert_eq!(h.myxtts_marker.as_deref(), Some("data.dataset_name"));
        assert_eq!(
            h.to_string(),
            "c.yaml: `data.use_phonemes` is not set, and MyXTTS, whose config this is (it sets \
             `data.dataset_name`), defaults it to `true`, which asks for phonemes, but gpufeed \
             tokenises the characters of the cleaned text, so the cache holds characters, not \
             phonemes; phonemise the text yourself (the phonemizer package with espeak, as \
             MyXTTS did) and give it in a `phonemes` field or column of the manifest, which \
             precompute tokenises as given; or set `use_phonemes: false` so the config says \
             what the cache holds"
        );
        // A `training` key is MyXTTS' too.
        assert_eq!(
            keys("training:\n  enable_graph_mode: true\n"),
            ["data.use_phonemes"]
        );
        // On MyXTTS' librosa path its defaults also trim and normalise; VAD only at a rate
        // Silero takes.
        let librosa = "data:\n  use_phonemes: false\n  use_tf_native_loading: false\n";
        assert_eq!(
            keys(librosa),
            [
                "data.trim_silence",
                "data.normalize_audio",
                "data.enable_loudness_normalization"
            ]
        );
        let trim = hits(librosa);
        assert_eq!(trim[0].default_keys, ["data.use_tf_native_loading"]);
        assert!(
            trim[0]
                .message
                .contains("which on its librosa path (`use_tf_native_loading: false`) asks for")
        );
        let at_16k = format!("{librosa}  sample_rate: 16000\n");
        assert!(keys(&at_16k).contains(&"data.enable_vad"));
        // Written values win over defaults, either way.
        let written = "data:\n  dataset_name: x\n  use_phonemes: false\n  trim_silence: true\n";
        let h = hits(written);
        assert_eq!(
            h.iter().map(|h| h.key).collect::<Vec<_>>(),
            ["data.trim_silence"]
        );
        assert_eq!(h[0].line(), Some(4));
    }
}
