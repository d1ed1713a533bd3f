//! Layouts that are a tree of files, one utterance per audio file with its text beside it
//! or in a parallel tree.
//!
//! **LibriTTS and LibriTTS-R** (`SPEAKER/CHAPTER/ID.wav` with `ID.normalized.txt` and
//! `ID.original.txt`): the root, a subset (`train-clean-100`) or a speaker folder. The
//! speaker is the id's first `_` field (`103_1241_000000_000001` → `103`, kept as a
//! string). The text is the normalised one with `use_normalized_text`, else the original;
//! the other is kept as a field. AppleDouble files (`._*`) are skipped, and an audio file
//! without its text file is a problem, not an item.
//!
//! **VCTK 0.92** (`txt/pNNN/pNNN_MMM.txt` with `wav48_silence_trimmed/pNNN/pNNN_MMM_micK.flac`)
//! and the old VCTK (`wav48/pNNN/pNNN_MMM.wav`): one item per transcript, with the audio
//! of one microphone (`--mic`, default `mic2` as torchaudio and Lhotse; both mics are never
//! two items). A transcript without audio for that mic (p280 has no `mic2`) and audio
//! without a transcript (p315 has no text) are counted as problems. The speaker is the
//! folder; `speaker-info.txt`'s age, gender and accents become fields.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::{Layout, Probe, ReadOptions, dataset};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Sink};

/// Deepest folder level walked below the path given (LibriTTS root → subset → speaker →
/// chapter → files is 4).
const MAX_DEPTH: usize = 5;

/// The files below `dir` (at most [`MAX_DEPTH`] levels), as paths relative to `dir`,
/// sorted; `keep` filters by file name. AppleDouble files (`._*`) are left out.
fn walk(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(PathBuf::new(), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("._") {
                continue;
            }
            let path = rel.join(&name);
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir())
                || (entry.file_type().is_ok_and(|t| t.is_symlink()) && dir.join(&path).is_dir());
            if is_dir {
                if depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if keep(&name) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Whether some file below `dir` (at most `depth` levels, looking at no more than a few
/// thousand entries) ends with `suffix`.
fn some_file_ends_with(dir: &Path, suffix: &str, depth: usize) -> bool {
    let mut budget = 4096usize;
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, level)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return false;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(suffix) && !name.starts_with("._") {
                return true;
            }
            if level < depth && entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((entry.path(), level + 1));
            }
        }
    }
    false
}

/// The first line of a text file, trimmed; `None` when it cannot be read.
fn first_line(path: &Path) -> Result<String, String> {
    let text = crate::fsx::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(text)
        .map_err(|e| format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()))?;
    Ok(text
        .trim_start_matches('\u{feff}')
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_owned())
}

// ---- LibriTTS ----

const LIBRITTS_MARKERS: [&str; 3] = ["SPEAKERS.txt", "speakers.tsv", "README_libritts.txt"];

pub(super) fn fit_libritts(probe: &Probe) -> u8 {
    if !probe.dir {
        return 0;
    }
    if LIBRITTS_MARKERS.iter().any(|m| probe.has(m))
        || some_file_ends_with(&probe.path, ".normalized.txt", 3)
    {
        3
    } else {
        0
    }
}

pub(super) fn read_libritts(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let root = probe.path.clone();
    let mut sink = Sink::new(false);
    let wavs = walk(&root, &|n| n.to_ascii_lowercase().ends_with(".wav"));
    for (k, rel) in wavs.iter().enumerate() {
        let id = crate::manifest::stem(rel);
        let dir = root.join(rel.parent().unwrap_or(Path::new("")));
        let read = |kind: &str| first_line(&dir.join(format!("{id}.{kind}.txt")));
        let (normalized, original) = (read("normalized"), read("original"));
        let (text, other) = match (normalized, original) {
            (Ok(n), Ok(o)) if options.use_normalized_text => (n, Some(("original_text", o))),
            (Ok(n), Ok(o)) => (o, Some(("normalized_text", n))),
            (Ok(t), Err(_)) | (Err(_), Ok(t)) => (t, None),
            (Err(e), Err(_)) => {
                sink.problem(
                    k + 1,
                    Some(&id),
                    format!(
                        "`{}` has no readable `{id}.normalized.txt` or `{id}.original.txt` \
                         beside it ({e})",
                        rel.display()
                    ),
                );
                continue;
            }
        };
        let mut item = Item::new(id.clone(), rel.clone(), text, k + 1);
        item.speaker = id.split('_').next().map(str::to_owned);
        if let Some((name, value)) = other {
            item.fields.insert(name.to_owned(), value);
        }
        sink.push(item);
    }
    let mut d = dataset(root.clone(), root, Layout::LibriTts, sink);
    d.notes.push(
        if options.use_normalized_text {
            "text: `ID.normalized.txt` (the original kept as a field)"
        } else {
            "text: `ID.original.txt` (the normalised kept as a field)"
        }
        .to_owned(),
    );
    Ok(d)
}

// ---- VCTK ----

/// VCTK 0.92's audio folder and the old release's.
const VCTK_092: &str = "wav48_silence_trimmed";
const VCTK_OLD: &str = "wav48";

pub(super) fn fit_vctk(probe: &Probe) -> u8 {
    if probe.dir && probe.has("txt") && (probe.has(VCTK_092) || probe.has(VCTK_OLD)) {
        3
    } else {
        0
    }
}

pub(super) fn read_vctk(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let root = probe.path.clone();
    let new = root.join(VCTK_092).is_dir();
    let mic = options.mic.clone().unwrap_or_else(|| "mic2".to_owned());
    if new && mic != "mic1" && mic != "mic2" {
        return Err(DataError::Dataset(format!(
            "`--mic {mic}`: VCTK 0.92 has `mic1` (DPA 4035) and `mic2` (Sennheiser MKH 800)"
        )));
    }
    let audio_dir = if new { VCTK_092 } else { VCTK_OLD };
    let info = speaker_info(&root.join("speaker-info.txt"));
    let texts = walk(&root.join("txt"), &|n| n.ends_with(".txt"));
    let mut sink = Sink::new(false);
    let mut with_text: HashSet<String> = HashSet::new();
    for (k, rel) in texts.iter().enumerate() {
        let id = crate::manifest::stem(rel);
        let speaker = rel.parent().and_then(|p| p.file_name()).map_or_else(
            || id.split('_').next().unwrap_or("").to_owned(),
            |s| s.to_string_lossy().into_owned(),
        );
        with_text.insert(id.clone());
        let audio = if new {
            Path::new(audio_dir)
                .join(&speaker)
                .join(format!("{id}_{mic}.flac"))
        } else {
            Path::new(audio_dir)
                .join(&speaker)
                .join(format!("{id}.wav"))
        };
        if !root.join(&audio).is_file() {
            sink.problem(
                k + 1,
                Some(&id),
                format!(
                    "no audio `{}`{}",
                    audio.display(),
                    if new {
                        format!(" for {mic}; `--mic` picks the other microphone")
                    } else {
                        String::new()
                    }
                ),
            );
            continue;
        }
        let text = match first_line(&root.join("txt").join(rel)) {
            Ok(t) => t,
            Err(e) => {
                sink.problem(k + 1, Some(&id), format!("`txt/{}`: {e}", rel.display()));
                continue;
            }
        };
        let mut item = Item::new(id, audio, text, k + 1);
        if let Some(fields) = info.get(&speaker) {
            item.fields.extend(fields.clone());
        }
        item.speaker = Some(speaker);
        sink.push(item);
    }
    // Audio without a transcript (p315 in 0.92): counted, not read.
    let suffix = if new {
        format!("_{mic}.flac")
    } else {
        ".wav".to_owned()
    };
    let audio = walk(&root.join(audio_dir), &|n| n.ends_with(&suffix));
    let base = texts.len();
    for (k, rel) in audio.iter().enumerate() {
        let name = crate::manifest::stem(rel);
        let id = name.strip_suffix(&format!("_{mic}")).unwrap_or(&name);
        if !with_text.contains(id) {
            sink.problem(
                base + k + 1,
                Some(id),
                format!(
                    "`{audio_dir}/{}` has no transcript `txt/.../{id}.txt`",
                    rel.display()
                ),
            );
        }
    }
    let mut d = dataset(root.clone(), root, Layout::Vctk, sink);
    if new {
        d.notes.push(format!(
            "microphone {mic} (`--mic mic1` for the other); each utterance is read once"
        ));
    }
    Ok(d)
}

/// `speaker-info.txt`: whitespace-aligned `ID AGE GENDER ACCENTS REGION...`, by speaker
/// (with the `p` prefix 0.92 writes; the old release's bare numbers get one).
fn speaker_info(path: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let Ok(text) = crate::fsx::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()) else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for line in text.lines().skip(1) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [id, age, gender, accents, ..] = parts.as_slice() else {
            continue;
        };
        let id = if id.starts_with(|c: char| c.is_ascii_digit()) {
            format!("p{id}")
        } else {
            (*id).to_owned()
        };
        let fields = [("age", age), ("gender", gender), ("accents", accents)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), (*v).to_owned()))
            .collect();
        out.insert(id, fields);
    }
    out
}
