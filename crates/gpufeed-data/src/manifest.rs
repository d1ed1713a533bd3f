//! The dataset model every layout yields: a [`Dataset`] of [`Item`]s (id; audio file, or
//! bytes inside an archive or table; segment; text; speaker; language; other fields) and the
//! lines left out, each with its reason. How each corpus layout is read is in
//! [`crate::layout`]; the checks every layout shares are here (`Sink`): an id, a text (or
//! given phonemes), an audio path that stays inside the dataset folder (absolute paths only
//! where the layout writes them: NeMo, Kaldi, Lhotse, generic tables; `../../etc/passwd` is
//! refused), a sane segment, an id not seen before (the line of the first is named).
//!
//! A manifest is read whole, so its size is capped: [`MAX_MANIFEST_BYTES`] (512 MiB) and
//! [`MAX_MANIFEST_LINES`] (4 194 304 non-blank lines); past either, [`Dataset::open`] is one
//! error naming the file (and the line) that says to split the dataset.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::DataError;
pub use crate::layout::Layout;

/// Where an item's audio bytes are when they are not a file of their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Member {
    /// A member of an uncompressed tar archive (a WebDataset shard): its name, and the
    /// offset and size of its bytes in the archive, so it is read without unpacking.
    Tar {
        /// The member's name in the archive (its extension is the format hint).
        name: String,
        /// Offset of its first byte in the archive.
        offset: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// Encoded audio bytes in a row of a Parquet or Arrow table (a Hugging Face `Audio`
    /// column).
    Row {
        /// The file name the row gives (its extension is the format hint), or the column.
        name: String,
        /// The column holding the audio struct.
        column: String,
        /// Row group (Parquet) or record batch (Arrow) index.
        group: usize,
        /// Row within it.
        row: usize,
    },
}

/// One utterance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique id (LJSpeech: `LJ001-0001`).
    pub id: String,
    /// Audio file, relative to the dataset root (or absolute where the layout allows it:
    /// NeMo, Kaldi, Lhotse); the archive or table file when [`Item::member`] is set.
    pub audio: PathBuf,
    /// The audio's bytes inside [`Item::audio`], for archives and tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Member>,
    /// The transcript to tokenise (normalised column when present and wanted).
    pub text: String,
    /// Text the user has already tokenised (a `phonemes` or `tokens` field): used as given,
    /// character by character, instead of cleaning [`Item::text`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<String>,
    /// Start of the segment in the recording, seconds (0: the start).
    #[serde(default)]
    pub offset_s: f64,
    /// Length of the segment, seconds (`None`: to the end of the recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Channel of the recording (`None`: all channels mixed to mono).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u16>,
    /// Speaker, as the dataset names it (never coerced: `"19"` stays a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// Language, as the dataset writes it (a code or a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Other string fields of the item (the original text beside the normalised one,
    /// gender, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// Where it came from, 1-based: its manifest line where the layout has one manifest,
    /// else its position in the layout's own order (files sorted by path).
    pub line: usize,
}

impl Item {
    /// An item of the whole file `audio`, with no speaker, language or other field.
    #[must_use]
    pub fn new(id: String, audio: PathBuf, text: String, line: usize) -> Self {
        Self {
            id,
            audio,
            member: None,
            text,
            tokens: None,
            offset_s: 0.0,
            duration_s: None,
            channel: None,
            speaker: None,
            language: None,
            fields: BTreeMap::new(),
            line,
        }
    }

    /// The span of the recording this item is, for the decoder.
    #[must_use]
    pub fn span(&self) -> gpufeed_audio::decode::Span {
        gpufeed_audio::decode::Span {
            offset_s: self.offset_s,
            duration_s: self.duration_s,
            channel: self.channel,
        }
    }
}

/// A line of a manifest that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Line number, 1-based.
    pub line: usize,
    /// The id, when one could be read.
    pub id: Option<String>,
    /// What is wrong, and what to do.
    pub reason: String,
}

/// A dataset: its root, its utterances in the layout's order, and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Folder the audio paths are relative to.
    pub root: PathBuf,
    /// The manifest file read (the folder, for layouts of many files).
    pub manifest: PathBuf,
    /// The layout read.
    pub layout: Layout,
    /// How the layout was chosen: `given` (`--layout`) or what detection saw.
    pub detected: String,
    /// Choices the reader made that a user should know (which text column, which
    /// microphone, which table), one line each.
    pub notes: Vec<String>,
    /// Utterances, in order.
    pub items: Vec<Item>,
    /// Lines (or files) left out.
    pub problems: Vec<Problem>,
}

impl Dataset {
    /// Reads the dataset at `path` with the layout detected from what is there (see
    /// [`crate::layout`]); `use_normalized_text` picks LJSpeech's and LibriTTS' normalised
    /// text.
    pub fn open(path: &Path, use_normalized_text: bool) -> Result<Self, DataError> {
        let options = crate::layout::ReadOptions {
            use_normalized_text,
            ..crate::layout::ReadOptions::default()
        };
        crate::layout::open(path, &options)
    }

    /// Absolute (or root-joined) path of an item's audio (its archive or table for a
    /// member).
    #[must_use]
    pub fn audio_path(&self, item: &Item) -> PathBuf {
        self.root.join(&item.audio)
    }

    /// Distinct speakers, sorted.
    #[must_use]
    pub fn speakers(&self) -> Vec<&str> {
        distinct(self.items.iter().filter_map(|i| i.speaker.as_deref()))
    }

    /// Distinct languages, sorted.
    #[must_use]
    pub fn languages(&self) -> Vec<&str> {
        distinct(self.items.iter().filter_map(|i| i.language.as_deref()))
    }
}

/// The distinct values, sorted.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The largest manifest read: 512 MiB, about 1.8 million LJSpeech lines (`metadata.csv` of
/// LJSpeech's 24 hours is 3.8 MB). It is read whole, then its lines and utterances are kept:
/// about three times its size in memory at the cap.
pub const MAX_MANIFEST_BYTES: u64 = 512 << 20;

/// The most lines (utterances, and lines left out) read from one manifest: short lines
/// cost more in memory than in the file (an utterance keeps its id, text and path, about 100
/// bytes before its text), so they are counted as well as bytes.
pub const MAX_MANIFEST_LINES: usize = 1 << 22;

/// What to do with a manifest over a limit.
const SPLIT_IT: &str = "split the dataset into folders of their own, each with its manifest";

/// The manifest's bytes: [`DataError::Io`] naming it when it is larger than
/// [`MAX_MANIFEST_BYTES`] (read no further than one byte past the cap, so a pipe or a device
/// is refused too), [`DataError::BadLine`] on its first line past [`MAX_MANIFEST_LINES`].
pub(crate) fn read_capped(path: &Path) -> Result<Vec<u8>, DataError> {
    let bytes = crate::fsx::read_capped(path, MAX_MANIFEST_BYTES)?.map_err(|size| {
        let reason = format!(
            "the manifest has {size}, and gpufeed reads {} MiB at most; {SPLIT_IT}",
            MAX_MANIFEST_BYTES >> 20
        );
        DataError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, reason),
        )
    })?;
    if let Some(line) = line_past(&bytes, MAX_MANIFEST_LINES) {
        return Err(DataError::BadLine {
            path: path.to_path_buf(),
            line,
            reason: format!(
                "more than {MAX_MANIFEST_LINES} lines, the most gpufeed reads from one \
                 manifest; {SPLIT_IT}"
            ),
        });
    }
    Ok(bytes)
}

/// The number of the first non-blank line after `max` of them, if there is one.
fn line_past(bytes: &[u8], max: usize) -> Option<usize> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.trim_ascii().is_empty())
        .nth(max)
        .map(|(i, _)| i + 1)
}

/// Lines of a manifest with their numbers, BOM and `\r` removed; invalid UTF-8 lines are
/// reported, with the id `id_of` reads from the valid bytes before the bad one (the bad
/// byte may well be in the text, after an id that reads fine).
pub(crate) fn lines(
    bytes: &[u8],
    problems: &mut Vec<Problem>,
    id_of: fn(&str) -> Option<String>,
) -> Vec<(usize, String)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match std::str::from_utf8(raw) {
            Ok(s) if s.trim().is_empty() => {}
            Ok(s) => out.push((i + 1, s.to_string())),
            Err(e) => problems.push(Problem {
                line: i + 1,
                id: std::str::from_utf8(&raw[..e.valid_up_to()])
                    .ok()
                    .and_then(id_of),
                reason: format!(
                    "not valid UTF-8 (byte {}); re-encode the file as UTF-8",
                    e.valid_up_to()
                ),
            }),
        }
    }
    out
}

/// Is `rel` a relative path that stays inside the dataset folder?
pub(crate) fn stays_inside(rel: &Path) -> bool {
    let mut depth: i32 = 0;
    for c in rel.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    depth > 0
}

/// The items and problems a reader collects, with the checks every layout shares.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub(crate) items: Vec<Item>,
    pub(crate) problems: Vec<Problem>,
    seen: HashMap<String, usize>,
    /// Whether absolute audio paths are allowed (NeMo, Kaldi, Lhotse and generic tables
    /// write them; gpufeed's own manifest and LJSpeech keep audio inside the folder).
    absolute_ok: bool,
}

impl Sink {
    pub(crate) fn new(absolute_ok: bool) -> Self {
        Self {
            absolute_ok,
            ..Self::default()
        }
    }

    /// Leaves out line `line` (item `id` when known) for `reason`.
    pub(crate) fn problem(&mut self, line: usize, id: Option<&str>, reason: impl Into<String>) {
        self.problems.push(Problem {
            line,
            id: id.map(str::to_owned),
            reason: reason.into(),
        });
    }

    /// Adds `item` after the checks every layout shares: an id, a text (or given tokens),
    /// an audio path that stays inside the dataset (or is absolute where allowed), a
    /// sane segment, an id not seen before.
    pub(crate) fn push(&mut self, item: Item) {
        let reason = if item.id.is_empty() {
            Some("empty id".to_owned())
        } else if item.text.trim().is_empty()
            && item.tokens.as_deref().is_none_or(|t| t.trim().is_empty())
        {
            Some("empty text".into())
        } else if (item.audio.is_absolute() && !self.absolute_ok)
            || (!item.audio.is_absolute() && !stays_inside(&item.audio))
        {
            Some(format!(
                "audio path `{}` leaves the dataset folder; paths must be relative and inside it",
                item.audio.display()
            ))
        } else if !(item.offset_s.is_finite() && item.offset_s >= 0.0) {
            Some(format!(
                "offset {} s: it must be a number of seconds >= 0",
                item.offset_s
            ))
        } else if item.duration_s.is_some_and(|d| !(d.is_finite() && d > 0.0)) {
            Some(format!(
                "duration {} s: it must be a number of seconds > 0",
                item.duration_s.unwrap_or_default()
            ))
        } else {
            self.seen
                .get(&item.id)
                .map(|first| format!("duplicate id, first seen on line {first}"))
        };
        match reason {
            Some(reason) if reason == "empty id" => self.problem(item.line, None, reason),
            Some(reason) => self.problem(item.line, Some(&item.id), reason),
            None => {
                self.seen.insert(item.id.clone(), item.line);
                self.items.push(item);
            }
        }
    }
}

/// The file name of `path` without its extension (`a/x.flac` → `x`).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_containment() {
        assert!(stays_inside(Path::new("wavs/a.wav")));
        assert!(stays_inside(Path::new("./a/../b.wav")));
        assert!(!stays_inside(Path::new("../a.wav")));
        assert!(!stays_inside(Path::new("a/../../b.wav")));
        assert!(!stays_inside(Path::new("/etc/passwd")));
        assert!(!stays_inside(Path::new("")));
    }

    #[test]
    fn a_manifest_past_the_limits_is_refused() {
        // Lines: the first non-blank line past the count, blank lines not counted.
        assert_eq!(line_past(b"a|b\n\nc|d\ne|f\n", 2), Some(4));
        assert_eq!(line_past(b"a|b\n\nc|d\n", 2), None);
        let dir = tempfile::tempdir().unwrap();
        // Bytes: a sparse file one byte over the cap is refused before it is read.
        let big = dir.path().join("metadata.csv");
        let file = crate::fsx::create(&big).unwrap();
        file.set_len(MAX_MANIFEST_BYTES + 1).unwrap();
        let e = Dataset::open(dir.path(), true).unwrap_err().to_string();
        assert!(
            e.contains(
                "metadata.csv`: the manifest has 536870913 bytes, and gpufeed reads 512 MiB at \
                 most; split the dataset"
            ),
            "{e}"
        );
    }
}
