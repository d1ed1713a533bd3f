//! Kaldi data directories: `wav.scp`, `text`, and optionally `segments`, `utt2spk`,
//! `utt2lang`, `spk2gender`.
//!
//! Every file is `KEY VALUE...`: split at the first run of whitespace, the rest is the
//! value (no header, no quoting). With `segments` (`UTT REC START END`, seconds; an end of
//! `-1` runs to the end of the recording) the `wav.scp` keys are recordings and each
//! segment is an item; without it they are utterances and each file is one.
//!
//! A `wav.scp` entry that is a command (`sox x.flac -t wav - |`) or an archive offset
//! (`x.ark:123`) is refused by line: gpufeed does not run commands. Relative paths are
//! relative to the recipe folder (two above `data/train`), as Kaldi's scripts run there;
//! the folder itself and the current folder are tried when the first path is not found
//! from the recipe, and the report says which was taken. Utterances that are in `text`
//! but have no audio, or audio without a line in `text`, are problems.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Layout, Probe, ReadOptions, dataset};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Sink, lines, read_capped};

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir && probe.has("wav.scp") || !probe.dir && probe.file_name() == "wav.scp" {
        3
    } else {
        0
    }
}

/// One `KEY VALUE` line.
struct Entry {
    line: usize,
    value: String,
}

/// The `KEY VALUE` lines of `dir/name` by key (empty when the file is absent); a line
/// without a value, or a key seen before, is a problem.
fn table(
    dir: &Path,
    name: &str,
    sink: &mut Sink,
) -> Result<(Vec<String>, HashMap<String, Entry>), DataError> {
    let path = dir.join(name);
    if !path.is_file() {
        return Ok((Vec::new(), HashMap::new()));
    }
    let bytes = read_capped(&path)?;
    let mut problems = Vec::new();
    let mut order = Vec::new();
    let mut map = HashMap::new();
    for (line, text) in lines(&bytes, &mut problems, |l| {
        l.split_whitespace().next().map(str::to_owned)
    }) {
        let text = text.trim();
        let Some((key, value)) = text.split_once(char::is_whitespace) else {
            sink.problem(line, Some(text), format!("`{name}`: a key without a value"));
            continue;
        };
        let key = key.to_owned();
        if map.contains_key(&key) {
            sink.problem(line, Some(&key), format!("`{name}`: key seen before"));
            continue;
        }
        order.push(key.clone());
        map.insert(
            key,
            Entry {
                line,
                value: value.trim().to_owned(),
            },
        );
    }
    for p in problems {
        sink.problem(p.line, p.id.as_deref(), format!("`{name}`: {}", p.reason));
    }
    Ok((order, map))
}

pub(super) fn read(probe: &Probe, _options: &ReadOptions) -> Result<Dataset, DataError> {
    let dir = if probe.dir {
        probe.path.clone()
    } else {
        super::parent(&probe.path)
    };
    let mut sink = Sink::new(true);
    let (wav_keys, wavs) = table(&dir, "wav.scp", &mut sink)?;
    let (_, texts) = table(&dir, "text", &mut sink)?;
    let (seg_keys, segments) = table(&dir, "segments", &mut sink)?;
    let (_, utt2spk) = table(&dir, "utt2spk", &mut sink)?;
    let (_, utt2lang) = table(&dir, "utt2lang", &mut sink)?;
    let (_, spk2gender) = table(&dir, "spk2gender", &mut sink)?;
    if !dir.join("text").is_file() {
        return Err(DataError::NoManifest { dir });
    }

    // Recordings: a path each, commands and archives refused by line.
    let mut recordings: HashMap<&str, PathBuf> = HashMap::new();
    for key in &wav_keys {
        let entry = &wavs[key];
        let v = entry.value.as_str();
        if v.ends_with('|') {
            sink.problem(
                entry.line,
                Some(key),
                format!(
                    "`wav.scp` gives a command (`{v}`), and gpufeed does not run commands; \
                     run it once into a file (e.g. `{} > {key}.wav`) and write that path",
                    v.trim_end_matches('|').trim()
                ),
            );
        } else if v.contains(".ark:") {
            sink.problem(
                entry.line,
                Some(key),
                format!("`wav.scp` gives an archive offset (`{v}`); write the audio file's path"),
            );
        } else {
            recordings.insert(key, PathBuf::from(v));
        }
    }
    let (root, note) = base(&dir, recordings.values().find(|p| p.is_relative()));

    let tables = Tables {
        texts: &texts,
        utt2spk: &utt2spk,
        utt2lang: &utt2lang,
        spk2gender: &spk2gender,
    };
    let mut with_audio: Vec<&str> = Vec::new();
    if segments.is_empty() {
        for key in &wav_keys {
            if let Some(path) = recordings.get(key.as_str()) {
                tables.add(&mut sink, key, path, wavs[key].line, None);
                with_audio.push(key);
            }
        }
    } else {
        for utt in &seg_keys {
            let seg = &segments[utt];
            let parts: Vec<&str> = seg.value.split_whitespace().collect();
            let [rec, start, end] = parts.as_slice() else {
                sink.problem(
                    seg.line,
                    Some(utt),
                    "`segments`: expected `UTT REC START END`",
                );
                continue;
            };
            let (Ok(start), Ok(end)) = (start.parse::<f64>(), end.parse::<f64>()) else {
                sink.problem(
                    seg.line,
                    Some(utt),
                    format!(
                        "`segments`: start `{start}` or end `{end}` is not a number of seconds"
                    ),
                );
                continue;
            };
            let duration = if end == -1.0 {
                None
            } else if end > start {
                Some(end - start)
            } else {
                sink.problem(
                    seg.line,
                    Some(utt),
                    format!("`segments`: end {end} s is not after start {start} s"),
                );
                continue;
            };
            let Some(path) = recordings.get(rec) else {
                if !wavs.contains_key(*rec) {
                    sink.problem(
                        seg.line,
                        Some(utt),
                        format!(
                            "`segments` names recording `{rec}`, which `wav.scp` does not list"
                        ),
                    );
                }
                continue;
            };
            tables.add(&mut sink, utt, path, seg.line, Some((start, duration)));
            with_audio.push(utt);
        }
    }
    // Transcripts without audio.
    let with_audio: std::collections::HashSet<&str> = with_audio.into_iter().collect();
    let mut orphans: Vec<(&String, &Entry)> = texts
        .iter()
        .filter(|(k, _)| !with_audio.contains(k.as_str()) && !recordings.contains_key(k.as_str()))
        .filter(|(k, _)| segments.is_empty() || !segments.contains_key(*k))
        .filter(|(k, _)| !wavs.contains_key(*k))
        .collect();
    orphans.sort_by_key(|(_, e)| e.line);
    for (k, e) in orphans {
        sink.problem(
            e.line,
            Some(k),
            format!(
                "in `text` but not in `{}`",
                if segments.is_empty() {
                    "wav.scp"
                } else {
                    "segments"
                }
            ),
        );
    }
    let mut d = dataset(root, dir.join("wav.scp"), Layout::Kaldi, sink);
    d.notes.push(note);
    Ok(d)
}

/// The per-utterance tables an item is made from.
struct Tables<'a> {
    texts: &'a HashMap<String, Entry>,
    utt2spk: &'a HashMap<String, Entry>,
    utt2lang: &'a HashMap<String, Entry>,
    spk2gender: &'a HashMap<String, Entry>,
}

impl Tables<'_> {
    /// Utterance `utt` of `rec_path` (the span of `segments`, if any), from line `line`.
    fn add(
        &self,
        sink: &mut Sink,
        utt: &str,
        rec_path: &Path,
        line: usize,
        span: Option<(f64, Option<f64>)>,
    ) {
        let Some(text) = self.texts.get(utt) else {
            sink.problem(line, Some(utt), "no line in `text` for this utterance");
            return;
        };
        let mut item = Item::new(
            utt.to_owned(),
            rec_path.to_path_buf(),
            text.value.clone(),
            line,
        );
        if let Some((offset, duration)) = span {
            item.offset_s = offset;
            item.duration_s = duration;
        }
        item.speaker = self.utt2spk.get(utt).map(|e| e.value.clone());
        item.language = self.utt2lang.get(utt).map(|e| e.value.clone());
        if let Some(g) = item.speaker.as_ref().and_then(|s| self.spk2gender.get(s)) {
            item.fields.insert("gender".to_owned(), g.value.clone());
        }
        sink.push(item);
    }
}

/// The folder relative `wav.scp` paths are read from: the recipe folder (two above the
/// data folder), else the data folder, else the current folder, whichever holds `first`.
fn base(dir: &Path, first: Option<&PathBuf>) -> (PathBuf, String) {
    let recipe = dir.join("..").join("..");
    let Some(first) = first else {
        return (recipe, "wav.scp paths are absolute".to_owned());
    };
    for (candidate, what) in [
        (
            recipe.clone(),
            "the recipe folder (two above the data folder)",
        ),
        (dir.to_path_buf(), "the data folder"),
        (PathBuf::from("."), "the current folder"),
    ] {
        if candidate.join(first).exists() {
            return (
                candidate,
                format!("relative wav.scp paths read from {what}"),
            );
        }
    }
    (
        recipe,
        format!(
            "relative wav.scp paths read from the recipe folder (two above the data folder); \
             `{}` is not there",
            first.display()
        ),
    )
}
