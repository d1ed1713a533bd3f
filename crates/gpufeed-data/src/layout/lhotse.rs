//! Lhotse manifests: `recordings` with `supervisions`, or `cuts`, as `.jsonl` or
//! `.jsonl.gz` (one JSON object per line; the kind is told per object, as Lhotse does:
//! `sources` is a recording, `type` a cut, `recording_id` a supervision).
//!
//! - An item is a **supervision**: its id, text, speaker, language, gender, and the span
//!   `start`/`duration` of its recording (in a cut, the cut's `start` plus the
//!   supervision's, which Lhotse stores relative to the cut).
//! - The audio is the recording's `file` source; a recording of one file per channel gives
//!   the file of the supervision's channel. A supervision naming one channel of a
//!   multi-channel file decodes that channel, not the mix.
//! - Refused by name, per item: sources of type `command`, `url`, `memory`, `shar` (gpufeed
//!   reads files), recordings with `transforms` (speed or resampling gpufeed would not
//!   apply), `MixedCut` (a mix of tracks) and `PaddingCut` (no audio).
//! - A folder with the manifests of several splits is refused with their names: pass one.
//! - Relative source paths are read from the manifest's folder when the file is there,
//!   else from the current folder (where Lhotse's recipes wrote them from).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::table::inflate;
use super::{Layout, Probe, ReadOptions, dataset};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Sink, lines, read_capped};

/// What a Lhotse object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Recording,
    Supervision,
    Cut,
}

fn kind(object: &Map<String, Value>) -> Option<Kind> {
    if object.contains_key("sources") {
        Some(Kind::Recording)
    } else if object.contains_key("type") {
        Some(Kind::Cut)
    } else if object.contains_key("recording_id") {
        Some(Kind::Supervision)
    } else {
        None
    }
}

fn is_manifest_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(".jsonl")
        || n.ends_with(".jsonl.gz")
        || n.ends_with(".json")
        || n.ends_with(".json.gz")
}

/// The manifests of each kind in a folder, by their names.
fn manifests(probe: &Probe) -> [Vec<String>; 3] {
    let pick = |word: &str| -> Vec<String> {
        probe
            .names
            .iter()
            .filter(|n| is_manifest_name(n) && n.contains(word))
            .cloned()
            .collect()
    };
    [pick("recordings"), pick("supervisions"), pick("cuts")]
}

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir {
        let [r, s, c] = manifests(probe);
        return if !c.is_empty() || (!r.is_empty() && !s.is_empty()) {
            3
        } else {
            0
        };
    }
    let first = probe
        .first_line()
        .and_then(|l| serde_json::from_str::<Value>(l).ok());
    match first {
        Some(Value::Object(map))
            if kind(&map).is_some() && is_manifest_name(&probe.file_name()) =>
        {
            3
        }
        _ => 0,
    }
}

/// The objects of a manifest with their lines; lines that are not objects are problems.
type Objects = Vec<(usize, Map<String, Value>)>;

fn objects(path: &Path, sink: &mut Sink) -> Result<Objects, DataError> {
    let bytes = read_capped(path)?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        inflate(path, &bytes)?
    } else {
        bytes
    };
    let mut out = Vec::new();
    for (line, text) in lines(&bytes, &mut sink.problems, |_| None) {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => out.push((line, map)),
            Ok(_) => sink.problem(line, None, "not a JSON object"),
            Err(e) => sink.problem(line, None, format!("not JSON: {e}")),
        }
    }
    Ok(out)
}

/// The text of `map[key]`: a non-blank string, trimmed, or a number as written (a speaker
/// `19` stays `"19"`); `None` otherwise. WebDataset's `.json` members are read the same way.
pub(super) fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Option<f64> {
    map.get(key).and_then(Value::as_f64)
}

pub(super) fn read(probe: &Probe, _options: &ReadOptions) -> Result<Dataset, DataError> {
    let (dir, recordings, supervisions, cuts) = files(probe)?;
    let mut sink = Sink::new(true);
    let mut notes = Vec::new();
    let manifest;
    if let Some(cuts) = cuts {
        manifest = cuts.clone();
        for (line, cut) in objects(&cuts, &mut sink)? {
            read_cut(&cut, line, &dir, &mut sink);
        }
        notes.push("cuts: an item per supervision, its start offset by the cut's".to_owned());
    } else {
        let (Some(recordings), Some(supervisions)) = (recordings, supervisions) else {
            return Err(DataError::Dataset(format!(
                "`{}`: Lhotse needs a `cuts` manifest, or `recordings` with `supervisions`",
                probe.path.display()
            )));
        };
        let mut by_id: HashMap<String, Map<String, Value>> = HashMap::new();
        for (line, r) in objects(&recordings, &mut sink)? {
            match string(&r, "id") {
                Some(id) => {
                    by_id.insert(id, r);
                }
                None => sink.problem(line, None, "a recording without `id`"),
            }
        }
        manifest = supervisions.clone();
        for (line, sup) in objects(&supervisions, &mut sink)? {
            let rec = string(&sup, "recording_id").and_then(|r| by_id.get(&r));
            match rec {
                Some(rec) => push_supervision(&sup, rec, 0.0, None, line, &dir, &mut sink),
                None => sink.problem(
                    line,
                    string(&sup, "id").as_deref(),
                    format!(
                        "recording `{}` is not in `{}`",
                        string(&sup, "recording_id").unwrap_or_default(),
                        recordings.display()
                    ),
                ),
            }
        }
    }
    let mut d = dataset(PathBuf::new(), manifest, Layout::Lhotse, sink);
    d.notes = notes;
    Ok(d)
}

/// The folder and the manifests to read for `probe`.
#[allow(clippy::type_complexity)]
fn files(
    probe: &Probe,
) -> Result<(PathBuf, Option<PathBuf>, Option<PathBuf>, Option<PathBuf>), DataError> {
    if probe.dir {
        let [r, s, c] = manifests(probe);
        let one = |v: &[String], what: &str| -> Result<Option<PathBuf>, DataError> {
            match v {
                [] => Ok(None),
                [one] => Ok(Some(probe.path.join(one))),
                many => Err(DataError::Dataset(format!(
                    "`{}` holds {} Lhotse {what} manifests ({}); pass the one to read as \
                     `--data`",
                    probe.path.display(),
                    many.len(),
                    many.join(", ")
                ))),
            }
        };
        let cuts = one(&c, "cuts")?;
        if cuts.is_some() {
            return Ok((probe.path.clone(), None, None, cuts));
        }
        return Ok((
            probe.path.clone(),
            one(&r, "recordings")?,
            one(&s, "supervisions")?,
            None,
        ));
    }
    let dir = super::parent(&probe.path);
    let first = probe
        .first_line()
        .and_then(|l| serde_json::from_str::<Value>(l).ok());
    let kind = match &first {
        Some(Value::Object(map)) => kind(map),
        _ => None,
    };
    let name = probe
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sibling = |from: &str, to: &str| -> Result<PathBuf, DataError> {
        let other = dir.join(name.replace(from, to));
        if name.contains(from) && other.is_file() {
            Ok(other)
        } else {
            Err(DataError::Dataset(format!(
                "`{}` is a Lhotse {from} manifest; its {to} manifest was looked for as `{}` \
                 and is not there",
                probe.path.display(),
                other.display()
            )))
        }
    };
    match kind {
        Some(Kind::Cut) => Ok((dir, None, None, Some(probe.path.clone()))),
        Some(Kind::Supervision) => Ok((
            dir.clone(),
            Some(sibling("supervisions", "recordings")?),
            Some(probe.path.clone()),
            None,
        )),
        Some(Kind::Recording) => Ok((
            dir.clone(),
            Some(probe.path.clone()),
            Some(sibling("recordings", "supervisions")?),
            None,
        )),
        None => Err(DataError::Dataset(format!(
            "`{}`: its first line is not a Lhotse recording, supervision or cut",
            probe.path.display()
        ))),
    }
}

fn read_cut(cut: &Map<String, Value>, line: usize, dir: &Path, sink: &mut Sink) {
    let id = string(cut, "id");
    let kind = string(cut, "type").unwrap_or_default();
    if kind != "MonoCut" && kind != "MultiCut" && kind != "Cut" {
        sink.problem(
            line,
            id.as_deref(),
            format!(
                "a `{kind}`: gpufeed reads MonoCut and MultiCut (a MixedCut is a mix of tracks, a \
                 PaddingCut has no audio)"
            ),
        );
        return;
    }
    let Some(Value::Object(rec)) = cut.get("recording") else {
        sink.problem(line, id.as_deref(), "a cut without its `recording`");
        return;
    };
    let start = number(cut, "start").unwrap_or(0.0);
    let sups = cut.get("supervisions").and_then(Value::as_array);
    let Some(sups) = sups.filter(|s| !s.is_empty()) else {
        sink.problem(
            line,
            id.as_deref(),
            "a cut without supervisions: no text to train on",
        );
        return;
    };
    let channel = cut.get("channel").and_then(Value::as_u64);
    for sup in sups {
        if let Value::Object(sup) = sup {
            push_supervision(sup, rec, start, channel, line, dir, sink);
        }
    }
}

/// One supervision of `rec` as an item; `offset` is what its `start` is relative to.
fn push_supervision(
    sup: &Map<String, Value>,
    rec: &Map<String, Value>,
    offset: f64,
    cut_channel: Option<u64>,
    line: usize,
    dir: &Path,
    sink: &mut Sink,
) {
    let id = string(sup, "id");
    let fail = |sink: &mut Sink, reason: String| sink.problem(line, id.as_deref(), reason);
    if rec
        .get("transforms")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
    {
        fail(
            sink,
            "its recording has `transforms` (speed or resampling), which gpufeed does not apply; \
             save the transformed audio and its manifest"
                .to_owned(),
        );
        return;
    }
    let channel = match sup.get("channel") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::Array(list)) if list.len() == 1 => list[0].as_u64(),
        _ => cut_channel,
    };
    let sources = rec.get("sources").and_then(Value::as_array);
    let source = sources.and_then(|sources| {
        sources.iter().filter_map(Value::as_object).find(|s| {
            channel.is_none_or(|c| {
                s.get("channels")
                    .and_then(Value::as_array)
                    .is_none_or(|chs| chs.iter().any(|x| x.as_u64() == Some(c)))
            })
        })
    });
    let Some(source) = source else {
        fail(
            sink,
            "its recording has no source for its channel".to_owned(),
        );
        return;
    };
    let kind = string(source, "type").unwrap_or_default();
    if kind != "file" {
        fail(
            sink,
            format!(
                "its recording's source is of type `{kind}`; gpufeed reads `file` sources (write \
                 the audio to files, e.g. with `lhotse copy-recordings` or by saving each one)"
            ),
        );
        return;
    }
    let Some(file) = string(source, "source") else {
        fail(sink, "its recording's source has no path".to_owned());
        return;
    };
    let file = PathBuf::from(file);
    let path = if file.is_relative() && dir.join(&file).exists() {
        dir.join(&file)
    } else {
        file
    };
    // Channel within the file: its position among the source's channels.
    let in_file = channel.and_then(|c| {
        let chs: Vec<u64> = source
            .get("channels")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        if chs.len() <= 1 {
            None
        } else {
            chs.iter().position(|&x| x == c)
        }
    });
    let mut item = Item::new(
        id.clone().unwrap_or_default(),
        path,
        string(sup, "text").unwrap_or_default(),
        line,
    );
    item.offset_s = offset + number(sup, "start").unwrap_or(0.0);
    item.duration_s = number(sup, "duration");
    item.channel = in_file.and_then(|c| u16::try_from(c).ok());
    item.speaker = string(sup, "speaker");
    item.language = string(sup, "language");
    if let Some(g) = string(sup, "gender") {
        item.fields.insert("gender".to_owned(), g);
    }
    if let Some(Value::Object(custom)) = sup.get("custom") {
        for (k, v) in custom {
            if let Some(s) = v.as_str() {
                item.fields.insert(k.clone(), s.to_owned());
            }
        }
    }
    if item.offset_s < 0.0 {
        fail(
            sink,
            format!(
                "the supervision starts {:.3} s before its cut; gpufeed reads supervisions that \
                 lie inside the recording",
                -item.offset_s
            ),
        );
        return;
    }
    sink.push(item);
}
