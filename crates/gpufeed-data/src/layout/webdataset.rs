//! WebDataset shards: uncompressed `.tar` files whose members group into samples by key
//! (`utt00042.flac`, `utt00042.txt`, `utt00042.json`), read in place.
//!
//! - A member's key and suffix split at the first dot of its last path component
//!   (`a/b/utt.seg1.flac` → key `a/b/utt`, suffix `seg1.flac`); suffixes are lower-cased;
//!   names without a dot and top-level `__*__` names are skipped, as WebDataset does.
//! - The members of a sample are consecutive; a new key ends the sample, and so does the
//!   end of a shard. The same suffix twice in one sample is a problem.
//! - The audio is the first member with suffix `wav`, `flac`, `mp3`, `ogg` or `opus`; its
//!   offset and size in the archive are kept, so it is read with one positioned read when
//!   features are computed, never unpacked to disk.
//! - The text is the `txt` / `text` / `transcript` member, else the `.json` member's
//!   `text`; the `.json` member's `speaker` (or `speaker_id`) and `language` (or `lang`)
//!   are the speaker and language, and its other string values are fields.
//! - A folder is read as its `.tar` files in name order. Compressed shards (`.tar.gz`,
//!   `.tgz`) cannot be read in place and are refused by name with the command that
//!   decompresses them.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{AUDIO_EXTENSIONS, Layout, Probe, ReadOptions, dataset};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Member, Sink};

/// Suffixes of a sample's transcript member.
const TEXT_SUFFIXES: [&str; 3] = ["txt", "text", "transcript"];

/// Largest text or JSON member read (a transcript is bytes to kilobytes).
const MAX_TEXT_MEMBER: u64 = 1 << 20;

fn is_tar(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".tar")
}

fn is_compressed_tar(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(".tar.gz") || n.ends_with(".tgz")
}

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir {
        return if probe
            .names
            .iter()
            .any(|n| is_tar(n) || is_compressed_tar(n))
        {
            2
        } else {
            0
        };
    }
    let name = probe.file_name();
    // `ustar` at offset 257 is the tar magic, whatever the name.
    let magic = probe.head.get(257..262) == Some(b"ustar".as_slice());
    if is_compressed_tar(&name) || magic || (is_tar(&name) && probe.head.len() >= 512) {
        3
    } else {
        0
    }
}

pub(super) fn read(probe: &Probe, _options: &ReadOptions) -> Result<Dataset, DataError> {
    let (root, shards): (PathBuf, Vec<String>) = if probe.dir {
        let shards: Vec<String> = probe
            .names
            .iter()
            .filter(|n| is_tar(n) || is_compressed_tar(n))
            .cloned()
            .collect();
        (probe.path.clone(), shards)
    } else {
        (super::parent(&probe.path), probe.names.clone())
    };
    if let Some(gz) = shards.iter().find(|n| is_compressed_tar(n)) {
        return Err(DataError::Dataset(format!(
            "`{}` is a compressed tar, which cannot be read in place; decompress the shards \
             first: `for f in *.tar.gz; do gunzip -k \"$f\"; done` (and `*.tgz` likewise, \
             renamed to `.tar`)",
            root.join(gz).display()
        )));
    }
    let mut sink = Sink::new(false);
    let mut ordinal = 0usize;
    for shard in &shards {
        read_shard(&root, Path::new(shard), &mut ordinal, &mut sink)?;
    }
    let mut d = dataset(root.clone(), root, Layout::WebDataset, sink);
    d.notes.push(format!(
        "{} shard(s) read in place (no unpacking)",
        shards.len()
    ));
    Ok(d)
}

/// A sample being gathered.
#[derive(Default)]
struct Sample {
    key: String,
    audio: Option<Member>,
    text: Option<String>,
    json: Option<serde_json::Map<String, Value>>,
    suffixes: Vec<String>,
    problem: Option<String>,
}

fn read_shard(
    root: &Path,
    shard: &Path,
    ordinal: &mut usize,
    sink: &mut Sink,
) -> Result<(), DataError> {
    let path = root.join(shard);
    let file = crate::fsx::open(&path)?;
    let mut archive = tar::Archive::new(file);
    let entries = archive.entries().map_err(|e| DataError::io(&path, e))?;
    let mut sample = Sample::default();
    for entry in entries {
        let mut entry = entry.map_err(|e| bad_tar(&path, &e))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| bad_tar(&path, &e))?
            .to_string_lossy()
            .into_owned();
        let Some((key, suffix)) = split_key(&name) else {
            continue;
        };
        if key != sample.key {
            finish(std::mem::take(&mut sample), shard, ordinal, sink);
            sample.key = key.clone();
        }
        if sample.suffixes.contains(&suffix) {
            sample.problem = Some(format!("the member `{name}` appears twice in its sample"));
            continue;
        }
        sample.suffixes.push(suffix.clone());
        let size = entry.size();
        let last = suffix.rsplit('.').next().unwrap_or(&suffix).to_owned();
        if sample.audio.is_none() && AUDIO_EXTENSIONS.contains(&last.as_str()) {
            sample.audio = Some(Member::Tar {
                name: name.clone(),
                offset: entry.raw_file_position(),
                size,
            });
        } else if TEXT_SUFFIXES.contains(&last.as_str()) || last == "json" {
            if size > MAX_TEXT_MEMBER {
                sample.problem = Some(format!(
                    "the member `{name}` is {size} bytes, too large for text"
                ));
                continue;
            }
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| bad_tar(&path, &e))?;
            let Ok(text) = String::from_utf8(bytes) else {
                sample.problem = Some(format!("the member `{name}` is not UTF-8 text"));
                continue;
            };
            if last == "json" {
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => sample.json = Some(map),
                    _ => sample.problem = Some(format!("the member `{name}` is not a JSON object")),
                }
            } else if sample.text.is_none() {
                sample.text = Some(text.trim().to_owned());
            }
        }
    }
    finish(sample, shard, ordinal, sink);
    Ok(())
}

fn bad_tar(path: &Path, e: &std::io::Error) -> DataError {
    DataError::io(
        path,
        std::io::Error::new(
            e.kind(),
            format!("not a readable tar archive ({e}); is it a WebDataset shard?"),
        ),
    )
}

/// The key and suffix of a member name, or `None` for names WebDataset skips.
fn split_key(name: &str) -> Option<(String, String)> {
    let (dir, file) = match name.rfind('/') {
        Some(k) => (&name[..=k], &name[k + 1..]),
        None => ("", name),
    };
    if dir.is_empty() && file.starts_with("__") && file.ends_with("__") {
        return None;
    }
    let dot = file.find('.')?;
    Some((
        format!("{dir}{}", &file[..dot]),
        file[dot + 1..].to_ascii_lowercase(),
    ))
}

fn finish(sample: Sample, shard: &Path, ordinal: &mut usize, sink: &mut Sink) {
    if sample.key.is_empty() {
        return;
    }
    *ordinal += 1;
    let line = *ordinal;
    if let Some(reason) = sample.problem {
        sink.problem(line, Some(&sample.key), reason);
        return;
    }
    let Some(audio) = sample.audio else {
        sink.problem(
            line,
            Some(&sample.key),
            format!(
                "no audio member ({}) in `{}`",
                AUDIO_EXTENSIONS.join(", "),
                shard.display()
            ),
        );
        return;
    };
    let json = sample.json.unwrap_or_default();
    let field = |keys: &[&str]| keys.iter().find_map(|k| super::lhotse::string(&json, k));
    let text = sample
        .text
        .or_else(|| field(&["text", "transcript", "sentence"]))
        .unwrap_or_default();
    let mut item = Item::new(sample.key, shard.to_path_buf(), text, line);
    item.speaker = field(&["speaker", "speaker_id", "spk"]);
    item.language = field(&["language", "lang", "locale"]);
    item.tokens = field(&["phonemes", "tokens"]);
    for (k, v) in &json {
        let taken = [
            "text",
            "transcript",
            "sentence",
            "speaker",
            "speaker_id",
            "spk",
            "language",
            "lang",
            "locale",
            "phonemes",
            "tokens",
        ];
        if let Value::String(s) = v
            && !taken.contains(&k.as_str())
        {
            item.fields.insert(k.clone(), s.clone());
        }
    }
    item.member = Some(audio);
    sink.push(item);
}
