//! Dataset manifests: which utterances a dataset has, where their audio is, what they say.
//!
//! # LJSpeech layout
//!
//! ```text
//! DIR/metadata.csv     id|raw text|normalised text     (one utterance per line)
//! DIR/wavs/<id>.wav
//! ```
//!
//! Read the way real datasets need (see `shared/data/README.md`):
//! - a UTF-8 byte-order mark, CRLF or LF line endings, blank lines;
//! - a header line (`id|...`, `fileid|...`, `wav_id|...`, `audio|...`) is skipped;
//! - `"` is text, not CSV quoting (LJSpeech has 523 lines with quotes, 104 unbalanced);
//! - three or more fields: split on the **first** and **last** `|`, so a `|` inside the raw
//!   text stays there; the normalised (last) field is used when
//!   [`TextSettings::use_normalized_text`](gpufeed_config::TextSettings) is set, else the raw
//!   one;
//! - two fields (`id|text`): the text is both;
//! - every malformed line is reported with its line number and reason (no separator, empty
//!   id, empty text, duplicate id with the line of the first, invalid UTF-8, an id that
//!   would leave the dataset folder) and left out; the rest is read.
//!
//! # Generic manifests
//!
//! For other datasets, `DIR/manifest.jsonl` (one object per line) or `DIR/manifest.csv`
//! (header required, `,`-separated, the text column last so it may contain commas) with the
//! fields `audio_path` (relative to DIR) and `text`, optionally `id` (default: the file stem).
//! A path to such a file may also be given instead of a folder.
//!
//! Audio paths must stay inside the dataset folder: `../../etc/passwd` is refused.
//!
//! A manifest is read whole, so its size is capped: [`MAX_MANIFEST_BYTES`] (512 MiB) and
//! [`MAX_MANIFEST_LINES`] (4 194 304 non-blank lines); past either, [`Dataset::open`] is one
//! error naming the file (and the line) that says to split the dataset.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::DataError;

/// One utterance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Unique id (LJSpeech: `LJ001-0001`).
    pub id: String,
    /// Audio file, relative to the dataset root.
    pub audio: PathBuf,
    /// The transcript to tokenise (normalised column when present and wanted).
    pub text: String,
    /// Line of the manifest it came from (1-based).
    pub line: usize,
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

/// Which manifest format was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestKind {
    /// `metadata.csv` + `wavs/`.
    LjSpeech,
    /// `manifest.jsonl`.
    Jsonl,
    /// `manifest.csv`.
    Csv,
}

/// A dataset: its root, its utterances in manifest order, and the lines left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// Folder the audio paths are relative to.
    pub root: PathBuf,
    /// The manifest file read.
    pub manifest: PathBuf,
    /// Its format.
    pub kind: ManifestKind,
    /// Utterances, in manifest order.
    pub items: Vec<Item>,
    /// Lines left out.
    pub problems: Vec<Problem>,
}

impl Dataset {
    /// Reads the dataset at `path`: a folder with `metadata.csv` (LJSpeech),
    /// `manifest.jsonl` or `manifest.csv`, or one of those files itself.
    pub fn open(path: &Path, use_normalized_text: bool) -> Result<Self, DataError> {
        let (root, manifest) = if path.is_dir() {
            let found = ["metadata.csv", "manifest.jsonl", "manifest.csv"]
                .iter()
                .map(|name| path.join(name))
                .find(|p| p.is_file());
            match found {
                Some(m) => (path.to_path_buf(), m),
                None => {
                    return Err(DataError::NoManifest {
                        dir: path.to_path_buf(),
                    });
                }
            }
        } else if path.is_file() {
            let root = path
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            (root, path.to_path_buf())
        } else {
            return Err(DataError::NotFound {
                path: path.to_path_buf(),
            });
        };
        let bytes = read_capped(&manifest)?;
        let name = manifest
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (kind, parsed) = if name.ends_with(".jsonl") {
            (ManifestKind::Jsonl, parse_jsonl(&bytes))
        } else if name == "manifest.csv" {
            (ManifestKind::Csv, parse_generic_csv(&bytes, &manifest)?)
        } else {
            (
                ManifestKind::LjSpeech,
                parse_ljspeech(&bytes, use_normalized_text),
            )
        };
        let (items, problems) = parsed;
        Ok(Self {
            root,
            manifest,
            kind,
            items,
            problems,
        })
    }

    /// Absolute (or root-joined) path of an item's audio.
    #[must_use]
    pub fn audio_path(&self, item: &Item) -> PathBuf {
        self.root.join(&item.audio)
    }
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
fn read_capped(path: &Path) -> Result<Vec<u8>, DataError> {
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
fn lines(
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
fn stays_inside(rel: &Path) -> bool {
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

/// Adds an item after the checks every format shares.
fn push_item(
    items: &mut Vec<Item>,
    problems: &mut Vec<Problem>,
    seen: &mut HashMap<String, usize>,
    item: Item,
) {
    let problem = |reason: String| Problem {
        line: item.line,
        id: Some(item.id.clone()),
        reason,
    };
    if item.id.is_empty() {
        problems.push(Problem {
            line: item.line,
            id: None,
            reason: "empty id".into(),
        });
    } else if item.text.trim().is_empty() {
        problems.push(problem("empty text".into()));
    } else if !stays_inside(&item.audio) {
        problems.push(problem(format!(
            "audio path `{}` leaves the dataset folder; paths must be relative and inside it",
            item.audio.display()
        )));
    } else if let Some(first) = seen.get(&item.id) {
        problems.push(problem(format!("duplicate id, first seen on line {first}")));
    } else {
        seen.insert(item.id.clone(), item.line);
        items.push(item);
    }
}

/// The id of an LJSpeech line, or of its start: what comes before the first `|`, trimmed.
fn ljspeech_id(line: &str) -> Option<String> {
    let id = line.split('|').next().unwrap_or("").trim();
    (!id.is_empty()).then(|| id.to_owned())
}

/// Formats whose id cannot be read from part of a line.
fn no_id(_: &str) -> Option<String> {
    None
}

fn parse_ljspeech(bytes: &[u8], use_normalized: bool) -> (Vec<Item>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut items = Vec::new();
    let mut seen = HashMap::new();
    for (n, (line_no, line)) in lines(bytes, &mut problems, ljspeech_id)
        .into_iter()
        .enumerate()
    {
        let lower = line.to_ascii_lowercase();
        if n == 0
            && ["id|", "fileid|", "wav_id|", "audio|"]
                .iter()
                .any(|h| lower.starts_with(h))
        {
            continue;
        }
        let (Some(first), Some(last)) = (line.find('|'), line.rfind('|')) else {
            problems.push(Problem {
                line: line_no,
                // The whole line is the id: a transcript is missing.
                id: ljspeech_id(&line),
                reason: "no `|` separator; expected `id|text` or `id|text|normalised text`".into(),
            });
            continue;
        };
        let id = line[..first].trim().to_string();
        let text = if first == last {
            line[first + 1..].trim()
        } else if use_normalized {
            line[last + 1..].trim()
        } else {
            line[first + 1..last].trim()
        };
        let audio = Path::new("wavs").join(format!("{id}.wav"));
        push_item(
            &mut items,
            &mut problems,
            &mut seen,
            Item {
                id,
                audio,
                text: text.to_string(),
                line: line_no,
            },
        );
    }
    (items, problems)
}

#[derive(Deserialize)]
struct JsonlEntry {
    audio_path: PathBuf,
    text: String,
    id: Option<String>,
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn parse_jsonl(bytes: &[u8]) -> (Vec<Item>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut items = Vec::new();
    let mut seen = HashMap::new();
    for (line_no, line) in lines(bytes, &mut problems, no_id) {
        match serde_json::from_str::<JsonlEntry>(&line) {
            Ok(e) => {
                let id = e.id.unwrap_or_else(|| stem(&e.audio_path));
                push_item(
                    &mut items,
                    &mut problems,
                    &mut seen,
                    Item {
                        id,
                        audio: e.audio_path,
                        text: e.text,
                        line: line_no,
                    },
                );
            }
            Err(e) => problems.push(Problem {
                line: line_no,
                id: None,
                reason: format!("{e}; expected {{\"audio_path\": \"...\", \"text\": \"...\"}}"),
            }),
        }
    }
    (items, problems)
}

fn parse_generic_csv(bytes: &[u8], path: &Path) -> Result<(Vec<Item>, Vec<Problem>), DataError> {
    let mut problems = Vec::new();
    let mut items = Vec::new();
    let mut seen = HashMap::new();
    let all = lines(bytes, &mut problems, no_id);
    let Some(((header_line, header), rows)) = all.split_first() else {
        return Err(DataError::EmptyManifest {
            path: path.to_path_buf(),
        });
    };
    let names: Vec<String> = header
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    let col = |name: &str| names.iter().position(|n| n == name);
    let (Some(audio_col), Some(text_col)) = (col("audio_path"), col("text")) else {
        return Err(DataError::ManifestHeader {
            path: path.to_path_buf(),
            line: *header_line,
            found: names.join(", "),
        });
    };
    if text_col + 1 != names.len() {
        return Err(DataError::ManifestHeader {
            path: path.to_path_buf(),
            line: *header_line,
            found: format!("{} (`text` must be the last column)", names.join(", ")),
        });
    }
    let id_col = col("id");
    for (line_no, line) in rows {
        // The text is last and may hold commas: split off the other fields only.
        let fields: Vec<&str> = line.splitn(names.len(), ',').map(str::trim).collect();
        if fields.len() != names.len() {
            problems.push(Problem {
                line: *line_no,
                id: None,
                reason: format!("{} fields, the header has {}", fields.len(), names.len()),
            });
            continue;
        }
        let audio = PathBuf::from(fields[audio_col]);
        let id = id_col.map_or_else(|| stem(&audio), |c| fields[c].to_string());
        push_item(
            &mut items,
            &mut problems,
            &mut seen,
            Item {
                id,
                audio,
                text: fields[text_col].to_string(),
                line: *line_no,
            },
        );
    }
    Ok((items, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lj(text: &str) -> (Vec<Item>, Vec<Problem>) {
        parse_ljspeech(text.as_bytes(), true)
    }

    #[test]
    fn real_mini_metadata() {
        let path = crate::test_data().join("ljspeech-mini");
        let d = Dataset::open(&path, true).unwrap();
        assert_eq!(d.kind, ManifestKind::LjSpeech);
        assert_eq!(d.items.len(), 8);
        assert!(d.problems.is_empty());
        assert_eq!(d.items[6].id, "LJ001-0007");
        assert!(d.items[6].text.contains("fourteen fifty-five"));
        assert!(d.audio_path(&d.items[0]).ends_with("wavs/LJ001-0001.wav"));
        let raw = Dataset::open(&path, false).unwrap();
        assert!(raw.items[6].text.contains("1455"));
    }

    #[test]
    fn real_full_metadata_crlf_and_quotes() {
        let path = crate::test_data().join("ljspeech-metadata/metadata.csv");
        let d = Dataset::open(&path, true).unwrap();
        assert_eq!(d.items.len(), 13_100);
        assert!(
            d.problems.is_empty(),
            "{:?}",
            &d.problems[..d.problems.len().min(3)]
        );
        assert!(
            d.items
                .iter()
                .all(|i| !i.text.ends_with('\r') && !i.id.is_empty())
        );
        let quoted = d.items.iter().find(|i| i.id == "LJ004-0011").unwrap();
        assert!(quoted.text.contains('"'));
    }

    #[test]
    fn tolerant_of_what_real_files_hold() {
        let (items, problems) = lj(
            "\u{feff}id|text|normalized\r\nA1|Hello there|Hello there\r\n\r\nB2|only two\nC3|a|b|c normalised\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        let texts: Vec<_> = items
            .iter()
            .map(|i| (i.id.as_str(), i.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("A1", "Hello there"),
                ("B2", "only two"),
                ("C3", "c normalised")
            ]
        );
        let (items, _) = parse_ljspeech(b"C3|a|b|c normalised\n", false);
        assert_eq!(items[0].text, "a|b", "first and last separator");
    }

    #[test]
    fn malformed_lines_are_reported_with_their_line() {
        let (items, problems) = lj(
            "A1|fine|fine\nno separator here\n|no id|no id\nB2||\nA1|again|again\n../../etc/passwd|x|x\n",
        );
        assert_eq!(items.len(), 1);
        let got: Vec<(usize, &str)> = problems
            .iter()
            .map(|p| (p.line, p.reason.as_str()))
            .collect();
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0].0, 2);
        assert!(got[0].1.contains("no `|`"));
        // The line is the id (its transcript is missing), not `?`.
        assert_eq!(problems[0].id.as_deref(), Some("no separator here"));
        assert_eq!(got[1], (3, "empty id"));
        assert_eq!(got[2], (4, "empty text"));
        assert_eq!(got[3], (5, "duplicate id, first seen on line 1"));
        assert_eq!(got[4].0, 6);
        assert!(got[4].1.contains("leaves the dataset folder"));
    }

    #[test]
    fn invalid_utf8_is_reported() {
        let (items, problems) = parse_ljspeech(b"A|ok|ok\nB|caf\xe9|caf\xe9\n", true);
        assert_eq!(items.len(), 1);
        assert_eq!(problems[0].line, 2);
        assert!(problems[0].reason.contains("UTF-8"));
        // The id before the bad byte reads fine.
        assert_eq!(problems[0].id.as_deref(), Some("B"));
        // A bad byte inside the id: the bytes before it.
        let (_, problems) = parse_ljspeech(b"LJ00\xff1-0001|text|text\n", true);
        assert_eq!(problems[0].id.as_deref(), Some("LJ00"));
        // Nothing readable before it: no id.
        let (_, problems) = parse_ljspeech(b"\xff|text|text\n", true);
        assert_eq!(problems[0].id, None);
    }

    #[test]
    fn generic_manifests() {
        let (items, problems) = parse_jsonl(
            b"{\"audio_path\":\"a/x.flac\",\"text\":\"Hi\"}\n{\"audio_path\":\"/etc/passwd\",\"text\":\"no\"}\nnot json\n",
        );
        assert_eq!(items.len(), 1);
        assert_eq!(
            (items[0].id.as_str(), items[0].audio.as_path()),
            ("x", Path::new("a/x.flac"))
        );
        assert_eq!(problems.iter().map(|p| p.line).collect::<Vec<_>>(), [2, 3]);
        let p = Path::new("manifest.csv");
        let (items, problems) = parse_generic_csv(
            b"id,audio_path,text\nu1,w/u1.wav,Hello, world\nu2,w/u2.wav\n",
            p,
        )
        .unwrap();
        assert_eq!(items[0].text, "Hello, world");
        assert_eq!(problems[0].line, 3);
        let err = parse_generic_csv(b"path,words\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 1") && err.contains("audio_path"),
            "{err}"
        );
    }

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
