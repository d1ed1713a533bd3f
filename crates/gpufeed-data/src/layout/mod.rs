//! Dataset layouts: every common way a speech corpus sits on disk, read into one list of
//! [`Item`]s (id; audio file, or bytes inside an archive or table; offset and duration;
//! text; speaker; language; other string fields).
//!
//! Each layout is a reader that says how well a path fits it ([`fit`]: 0 not at all, 1 a
//! generic table that could be anything, 2 likely, 3 its own distinctive files) and reads
//! it. [`open`] takes the best fit, names it in [`Dataset::detected`], and stops with
//! [`DataError::AmbiguousLayout`] when two fit equally, asking for `--layout`. A path no
//! reader takes (a binary file, a folder of something else) is one error naming the
//! layouts tried ([`DataError::UnknownLayout`]), never thousands of per-line errors.
//!
//! | layout | what is read | speaker, language |
//! |---|---|---|
//! | `ljspeech` | `metadata.csv` (`id\|text\|normalised`, `id\|speaker\|text`, `id\|text\|speaker`, Coqui's `audio_file\|text\|speaker_name` header) + `wavs/ID.{wav,flac,mp3,ogg,opus}` | a `speaker` column |
//! | `libritts` | `SPEAKER/CHAPTER/ID.wav` with `ID.normalized.txt` / `ID.original.txt` (LibriTTS, LibriTTS-R; the root, a subset or a speaker folder) | the id's first field |
//! | `vctk` | `txt/pNNN/*.txt` with `wav48_silence_trimmed/pNNN/*_micN.flac` (`--mic`, default `mic2`) or the old `wav48/pNNN/*.wav` | the folder |
//! | `common_voice` | `clips/*.mp3` with `train.tsv` (else `validated.tsv`), or a given `.tsv`; tabs only, no quoting | `client_id`, `locale` |
//! | `nemo` | JSON lines with `audio_filepath`, `duration`, `offset`, `text`, `speaker`, `lang` (`.json`, `.jsonl`) | `speaker`, `lang` |
//! | `kaldi` | `wav.scp`, `text`, optional `segments`, `utt2spk`, `utt2lang`, `spk2gender` | `utt2spk`, `utt2lang` |
//! | `lhotse` | `recordings` + `supervisions`, or `cuts` (`.jsonl` or `.jsonl.gz`) | `speaker`, `language` |
//! | `webdataset` | `.tar` shards of `KEY.{wav,flac,mp3,ogg}` with `KEY.{txt,json}`, read in place | the `.json` member |
//! | `huggingface` | Parquet files (one, or the Hub's `data/SPLIT-*.parquet`) or a `save_to_disk` folder with an `Audio` column (embedded bytes, read per row group when features are computed, or paths) | `--columns`, else the column names of `table::DEFAULTS` |
//! | `table` | any CSV (real quoting), TSV (tabs only) or JSON-lines manifest, with `--columns` | mapped columns |
//! | `gpufeed` | gpufeed's own `manifest.jsonl` / `manifest.csv` (`audio_path`, `text`, `id`) | `speaker`, `language` |
//!
//! `--columns` says which column holds what, either by name
//! (`audio=path,text=sentence,speaker=client_id`) or, for headerless files, by position
//! (`id,text,speaker`). Roles: `id`, `audio`, `text`, `normalized_text`, `phonemes` (text
//! already tokenised, used as given; `tokens` is the same), `speaker`, `language`,
//! `offset`, `duration`, `channel`, and `_` for a column to ignore.

mod hf;
mod kaldi;
mod lhotse;
mod ljspeech;
mod table;
mod tree;
mod webdataset;

pub(crate) use hf::row_bytes;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::DataError;
use crate::manifest::{Dataset, Sink};

pub use crate::manifest::Item;

/// A dataset layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// `metadata.csv` + `wavs/` and its multi-speaker variants.
    #[serde(rename = "ljspeech")]
    LjSpeech,
    /// LibriTTS and LibriTTS-R.
    #[serde(rename = "libritts")]
    LibriTts,
    /// VCTK 0.92 (and the old VCTK).
    Vctk,
    /// Mozilla Common Voice.
    CommonVoice,
    /// NVIDIA NeMo JSON-lines manifests.
    Nemo,
    /// Kaldi data directories.
    Kaldi,
    /// Lhotse manifests (recordings, supervisions, cuts).
    Lhotse,
    /// WebDataset `.tar` shards.
    #[serde(rename = "webdataset")]
    WebDataset,
    /// Hugging Face datasets (Parquet, `save_to_disk`).
    #[serde(rename = "huggingface")]
    HuggingFace,
    /// A generic CSV / TSV / JSON-lines manifest with a column mapping.
    Table,
    /// gpufeed's own `manifest.jsonl` / `manifest.csv`.
    Gpufeed,
}

impl Layout {
    /// Every layout, in the order detection tries them.
    pub const ALL: [Self; 11] = [
        Self::LjSpeech,
        Self::LibriTts,
        Self::Vctk,
        Self::CommonVoice,
        Self::Nemo,
        Self::Kaldi,
        Self::Lhotse,
        Self::WebDataset,
        Self::HuggingFace,
        Self::Gpufeed,
        Self::Table,
    ];

    /// Its name on the command line and in configs.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::LjSpeech => "ljspeech",
            Self::LibriTts => "libritts",
            Self::Vctk => "vctk",
            Self::CommonVoice => "common_voice",
            Self::Nemo => "nemo",
            Self::Kaldi => "kaldi",
            Self::Lhotse => "lhotse",
            Self::WebDataset => "webdataset",
            Self::HuggingFace => "huggingface",
            Self::Table => "table",
            Self::Gpufeed => "gpufeed",
        }
    }

    /// Every name, for messages: `ljspeech, libritts, ...`.
    #[must_use]
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Layout {
    type Err = DataError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('-', "_");
        let alias = match wanted.as_str() {
            "lj" | "lj_speech" | "coqui" => "ljspeech",
            "libritts_r" | "librittsr" => "libritts",
            "cv" | "commonvoice" => "common_voice",
            "hf" | "hugging_face" | "parquet" | "arrow" => "huggingface",
            "wds" | "web_dataset" | "tar" => "webdataset",
            "csv" | "tsv" | "jsonl" => "table",
            other => other,
        };
        Self::ALL
            .into_iter()
            .find(|l| l.name() == alias)
            .ok_or_else(|| {
                DataError::Dataset(format!(
                    "unknown layout `{s}`; the layouts are {}",
                    Self::names()
                ))
            })
    }
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The item's id.
    Id,
    /// The audio: a path, or (Hugging Face) an `Audio` struct.
    Audio,
    /// The transcript.
    Text,
    /// The normalised transcript (read instead of `text` when `use_normalized_text`).
    NormalizedText,
    /// Text already tokenised (phonemes), used as given.
    Phonemes,
    /// The speaker.
    Speaker,
    /// The language.
    Language,
    /// Segment start, seconds.
    Offset,
    /// Segment length, seconds.
    Duration,
    /// Channel index.
    Channel,
    /// A column to ignore (`_`).
    Ignore,
}

impl Role {
    const NAMES: [(&'static str, Self); 17] = [
        ("id", Self::Id),
        ("audio", Self::Audio),
        ("path", Self::Audio),
        ("text", Self::Text),
        ("normalized_text", Self::NormalizedText),
        ("normalised_text", Self::NormalizedText),
        ("normalized", Self::NormalizedText),
        ("phonemes", Self::Phonemes),
        ("tokens", Self::Phonemes),
        ("speaker", Self::Speaker),
        ("language", Self::Language),
        ("lang", Self::Language),
        ("offset", Self::Offset),
        ("start", Self::Offset),
        ("duration", Self::Duration),
        ("channel", Self::Channel),
        ("_", Self::Ignore),
    ];

    /// Its name in `--columns` (`normalized_text`, `speaker`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|&&(_, r)| r == self)
            .map_or("_", |&(n, _)| n)
    }

    fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, r)| r)
    }

    fn known() -> String {
        "id, audio, text, normalized_text, phonemes, speaker, language, offset, duration, \
         channel, _"
            .to_owned()
    }
}

/// `--columns`: which column holds what, by name or by position.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Columns {
    /// `role=column` pairs (`audio=path,text=sentence`).
    pub named: BTreeMap<Role, String>,
    /// Roles by position, for headerless files (`id,text,speaker`).
    pub positional: Vec<Role>,
}

impl Columns {
    /// Parses `audio=path,text=sentence,speaker=client_id` or `id,text,speaker`.
    ///
    /// # Errors
    ///
    /// [`DataError::Settings`] naming the part that is not a role, or a mix of both forms.
    pub fn parse(spec: &str) -> Result<Self, DataError> {
        let mut columns = Self::default();
        let bad = |part: &str| {
            DataError::Dataset(format!(
                "`--columns {spec}`: `{part}` is not a role; the roles are {}; write \
                 `role=column,...` (by name) or `role,role,...` (by position)",
                Role::known()
            ))
        };
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some((role, column)) = part.split_once('=') {
                let role = Role::parse(role).ok_or_else(|| bad(part))?;
                columns.named.insert(role, column.trim().to_owned());
            } else {
                columns
                    .positional
                    .push(Role::parse(part).ok_or_else(|| bad(part))?);
            }
        }
        if !columns.named.is_empty() && !columns.positional.is_empty() {
            return Err(DataError::Dataset(format!(
                "`--columns {spec}`: either every part is `role=column` (by name) or none is \
                 (by position)"
            )));
        }
        Ok(columns)
    }

    /// Whether nothing was given.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.positional.is_empty()
    }
}

/// How to read a dataset: the layout (detected when `None`) and its options. The default
/// detects the layout and reads the normalised text (as `data.use_normalized_text`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadOptions {
    /// `--layout`: read with this layout instead of detecting one.
    pub layout: Option<Layout>,
    /// `--columns`.
    pub columns: Columns,
    /// LJSpeech and LibriTTS: read the normalised text (the original is kept as a field).
    pub use_normalized_text: bool,
    /// VCTK 0.92: which microphone (`mic1` or `mic2`; default `mic2`).
    pub mic: Option<String>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            layout: None,
            columns: Columns::default(),
            use_normalized_text: true,
            mic: None,
        }
    }
}

/// How well `path` fits `layout`: 0 not at all, 1 a generic table, 2 likely, 3 the
/// layout's own distinctive files.
#[must_use]
pub fn fit(layout: Layout, path: &Path) -> u8 {
    let probe = Probe::of(path);
    fit_probe(layout, &probe)
}

fn fit_probe(layout: Layout, probe: &Probe) -> u8 {
    match layout {
        Layout::LjSpeech => ljspeech::fit(probe),
        Layout::LibriTts => tree::fit_libritts(probe),
        Layout::Vctk => tree::fit_vctk(probe),
        Layout::CommonVoice => table::fit_common_voice(probe),
        Layout::Nemo => table::fit_nemo(probe),
        Layout::Kaldi => kaldi::fit(probe),
        Layout::Lhotse => lhotse::fit(probe),
        Layout::WebDataset => webdataset::fit(probe),
        Layout::HuggingFace => hf::fit(probe),
        Layout::Table => table::fit_table(probe),
        Layout::Gpufeed => table::fit_gpufeed(probe),
    }
}

/// Reads the dataset at `path`: with `options.layout`, or the layout that fits best.
///
/// # Errors
///
/// [`DataError::NotFound`]; [`DataError::UnknownLayout`] when no layout fits;
/// [`DataError::AmbiguousLayout`] when two fit equally; each reader's errors.
pub fn open(path: &Path, options: &ReadOptions) -> Result<Dataset, DataError> {
    if !path.exists() {
        return Err(DataError::NotFound {
            path: path.to_path_buf(),
        });
    }
    let probe = Probe::of(path);
    let (layout, detected) = match options.layout {
        Some(layout) => (layout, "given".to_owned()),
        None => detect(&probe)?,
    };
    let mut dataset = match layout {
        Layout::LjSpeech => ljspeech::read(&probe, options),
        Layout::LibriTts => tree::read_libritts(&probe, options),
        Layout::Vctk => tree::read_vctk(&probe, options),
        Layout::CommonVoice => table::read_common_voice(&probe, options),
        Layout::Nemo => table::read_nemo(&probe, options),
        Layout::Kaldi => kaldi::read(&probe, options),
        Layout::Lhotse => lhotse::read(&probe, options),
        Layout::WebDataset => webdataset::read(&probe, options),
        Layout::HuggingFace => hf::read(&probe, options),
        Layout::Table => table::read_table(&probe, options),
        Layout::Gpufeed => table::read_gpufeed(&probe, options),
    }?;
    dataset.layout = layout;
    dataset.detected = detected;
    Ok(dataset)
}

/// The layout that fits `probe` best, with what detection saw.
fn detect(probe: &Probe) -> Result<(Layout, String), DataError> {
    let mut scores: Vec<(Layout, u8)> = Layout::ALL
        .iter()
        .map(|&l| (l, fit_probe(l, probe)))
        .filter(|&(_, s)| s > 0)
        .collect();
    scores.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
    match scores.as_slice() {
        [] => Err(DataError::UnknownLayout {
            path: probe.path.clone(),
            what: probe.describe(),
            layouts: Layout::names(),
        }),
        [(a, s), (b, t), ..] if s == t => Err(DataError::AmbiguousLayout {
            path: probe.path.clone(),
            first: a.name(),
            second: b.name(),
        }),
        [(layout, score), ..] => Ok((
            *layout,
            match score {
                3 => "detected from its own files",
                2 => "detected: the likeliest fit",
                _ => "detected: a generic table",
            }
            .to_owned(),
        )),
    }
}

/// What a path is, looked at once: its kind, its folder's entries, its first bytes.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// The path given.
    pub(crate) path: PathBuf,
    /// Whether it is a folder.
    pub(crate) dir: bool,
    /// A folder's entry names (sorted), or the file's.
    pub(crate) names: Vec<String>,
    /// A file's first bytes (up to 64 KiB).
    pub(crate) head: Vec<u8>,
}

impl Probe {
    fn of(path: &Path) -> Self {
        let dir = path.is_dir();
        let names = if dir {
            let mut names: Vec<String> = std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        } else {
            path.file_name()
                .map(|n| vec![n.to_string_lossy().into_owned()])
                .unwrap_or_default()
        };
        let head = if dir { Vec::new() } else { head_of(path) };
        Self {
            path: path.to_path_buf(),
            dir,
            names,
            head,
        }
    }

    /// Whether the folder has an entry `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.dir
            && self
                .names
                .binary_search_by(|n| n.as_str().cmp(name))
                .is_ok()
    }

    /// The file's name, lowercased (empty for a folder).
    pub(crate) fn file_name(&self) -> String {
        if self.dir {
            String::new()
        } else {
            self.names
                .first()
                .map(|n| n.to_lowercase())
                .unwrap_or_default()
        }
    }

    /// Whether the file's first bytes look like text (UTF-8, no NUL), gzip inflated.
    pub(crate) fn text(&self) -> Option<&str> {
        if self.dir || self.head.contains(&0) {
            return None;
        }
        match std::str::from_utf8(&self.head) {
            Ok(s) => Some(s),
            // The 64 KiB cut may split a character.
            Err(e) if e.error_len().is_none() => {
                std::str::from_utf8(&self.head[..e.valid_up_to()]).ok()
            }
            Err(_) => None,
        }
    }

    /// The first non-blank line of a text file (BOM removed).
    pub(crate) fn first_line(&self) -> Option<&str> {
        self.text()?
            .trim_start_matches('\u{feff}')
            .lines()
            .find(|l| !l.trim().is_empty())
    }

    /// For messages: what the path is.
    fn describe(&self) -> String {
        if self.dir && self.names.is_empty() {
            "an empty folder (`gpufeed demo-data DIR` writes an example dataset)".to_owned()
        } else if self.dir {
            let shown: Vec<&str> = self.names.iter().take(8).map(String::as_str).collect();
            format!(
                "a folder of {} entries ({}{})",
                self.names.len(),
                shown.join(", "),
                if self.names.len() > 8 { ", ..." } else { "" }
            )
        } else if self.head.starts_with(b"PAR1") {
            "a Parquet file without an audio column gpufeed recognises".to_owned()
        } else if self.text().is_none() {
            "a binary file of no layout gpufeed reads".to_owned()
        } else {
            "a text file no layout recognises".to_owned()
        }
    }
}

/// Up to 64 KiB of `path`, inflated when gzip.
fn head_of(path: &Path) -> Vec<u8> {
    use std::io::Read as _;
    const HEAD: u64 = 64 << 10;
    let Ok(file) = crate::fsx::open(path) else {
        return Vec::new();
    };
    let mut raw = Vec::new();
    let _ = file.take(HEAD).read_to_end(&mut raw);
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let Ok(file) = crate::fsx::open(path) else {
            return raw;
        };
        let _ = flate2::read::MultiGzDecoder::new(file)
            .take(HEAD)
            .read_to_end(&mut out);
        return out;
    }
    raw
}

/// An empty dataset of `layout` rooted at `root`, read from `manifest`, to fill from a
/// [`Sink`].
pub(crate) fn dataset(root: PathBuf, manifest: PathBuf, layout: Layout, sink: Sink) -> Dataset {
    Dataset {
        root,
        manifest,
        layout,
        detected: String::new(),
        notes: Vec::new(),
        items: sink.items,
        problems: sink.problems,
    }
}

/// The folder a file is in (`.` for a bare name).
pub(crate) fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Audio file extensions the decoder is asked to try, in order of preference.
pub(crate) const AUDIO_EXTENSIONS: [&str; 5] = ["wav", "flac", "mp3", "ogg", "opus"];

#[cfg(test)]
mod tests;
