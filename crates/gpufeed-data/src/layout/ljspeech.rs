//! LJSpeech: `metadata.csv` + `wavs/`, and the multi-speaker variants written the same way.
//!
//! ```text
//! DIR/metadata.csv     id|raw text|normalised text     (one utterance per line)
//! DIR/wavs/<id>.wav    (or .flac, .mp3, .ogg: the audio is found by id in any format)
//! ```
//!
//! Read the way real datasets need (see `shared/data/README.md`):
//! - a UTF-8 byte-order mark, CRLF or LF line endings, blank lines;
//! - `"` is text, not CSV quoting (LJSpeech has 523 lines with quotes, 104 unbalanced);
//! - **without a header**: `id|text` (the text is both), or `id|text|normalised text`,
//!   split on the **first** and **last** `|` so that a `|` inside the raw text stays there;
//!   the normalised (last) field is used when `use_normalized_text` is set, and the other
//!   is kept as the item's `original_text` / `normalized_text` field;
//! - a third column that is not a normalised transcript (a label without spaces on almost
//!   every line, such as a speaker name) is **refused**, not read as text: the message
//!   says to write a header or `--columns id,text,speaker` (or `id,speaker,text` when the
//!   label is the second column). Rule: the column is a label on at least 90 % of the
//!   lines (no whitespace, at most 40 characters) while the other text column has
//!   whitespace on at least half of them;
//! - **with a header** (the first line names the columns: `id|text|speaker`,
//!   `audio_file|text|speaker_name` as Coqui writes it, `id|speaker|text`), each column is
//!   read by its name; an `audio_file` column is a path relative to the folder;
//! - `--columns id,speaker,text` names the columns of a headerless file by position;
//! - every malformed line is reported with its line number and reason (no separator, empty
//!   id, empty text, duplicate id with the line of the first, invalid UTF-8, an id that
//!   would leave the dataset folder) and left out; the rest is read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{AUDIO_EXTENSIONS, Layout, Probe, ReadOptions, Role, dataset};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Sink, lines, read_capped};

/// Header names of each role in a `metadata.csv` with a header.
const HEADER_NAMES: [(Role, &[&str]); 6] = [
    (
        Role::Id,
        &["id", "fileid", "file_id", "wav_id", "utt_id", "name"],
    ),
    (
        Role::Audio,
        &[
            "audio_file",
            "audio",
            "audio_path",
            "path",
            "wav",
            "file",
            "filename",
        ],
    ),
    (
        Role::Text,
        &[
            "text",
            "transcription",
            "transcript",
            "sentence",
            "raw_text",
        ],
    ),
    (
        Role::NormalizedText,
        &[
            "normalized_text",
            "normalised_text",
            "normalized",
            "normalized_transcription",
        ],
    ),
    (
        Role::Speaker,
        &["speaker", "speaker_name", "speaker_id", "spk"],
    ),
    (Role::Language, &["language", "lang", "locale"]),
];

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir {
        return if probe.has("metadata.csv") { 3 } else { 0 };
    }
    let name = probe.file_name();
    let pipe = probe.first_line().is_some_and(|l| l.contains('|'));
    if name == "metadata.csv" {
        3
    } else if pipe && (name.ends_with(".csv") || name.ends_with(".txt")) {
        2
    } else {
        0
    }
}

pub(super) fn read(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let (root, manifest) = if probe.dir {
        let m = probe.path.join("metadata.csv");
        if !m.is_file() {
            return Err(DataError::NoManifest {
                dir: probe.path.clone(),
            });
        }
        (probe.path.clone(), m)
    } else {
        (super::parent(&probe.path), probe.path.clone())
    };
    if !options.columns.named.is_empty() {
        return Err(DataError::Dataset(format!(
            "`{}`: `--columns role=NAME` needs a header line; name the columns of a \
             headerless `metadata.csv` by position instead (`--columns id,text,speaker`)",
            manifest.display()
        )));
    }
    let bytes = read_capped(&manifest)?;
    let mut sink = Sink::new(false);
    let rows = lines(&bytes, &mut sink.problems, first_field);
    let mut audio = AudioIndex::of(&root.join("wavs"));
    let mut notes = Vec::new();
    let header = rows.first().and_then(|(_, l)| header_roles(l));
    let (body, roles): (&[(usize, String)], Option<Vec<Role>>) =
        match (header, options.columns.positional.is_empty()) {
            (Some(roles), true) => {
                notes.push(format!("columns from the header: {}", describe(&roles)));
                (&rows[1..], Some(roles))
            }
            (Some(_), false) => (&rows[1..], Some(options.columns.positional.clone())),
            (None, false) => (&rows[..], Some(options.columns.positional.clone())),
            (None, true) => (&rows[..], None),
        };
    match roles {
        Some(roles) => read_by_roles(body, &roles, &manifest, options, &mut audio, &mut sink)?,
        None => {
            refuse_labels(body, &manifest)?;
            read_classic(body, options.use_normalized_text, &mut audio, &mut sink);
            notes.push(if options.use_normalized_text {
                "text: the normalised (last) column where a line has three".to_owned()
            } else {
                "text: the raw (second) column".to_owned()
            });
        }
    }
    if audio.other_formats > 0 {
        notes.push(format!(
            "{} audio file(s) found by id in a format other than .wav",
            audio.other_formats
        ));
    }
    let mut d = dataset(root, manifest, Layout::LjSpeech, sink);
    d.notes = notes;
    Ok(d)
}

/// The first `|` field of a line, trimmed: its id, for messages about the line.
fn first_field(line: &str) -> Option<String> {
    let id = line.split('|').next().unwrap_or("").trim();
    (!id.is_empty()).then(|| id.to_owned())
}

/// The roles of a header line, if the line is one: every field is a known column name
/// and one of them names the id or the audio.
fn header_roles(line: &str) -> Option<Vec<Role>> {
    let roles: Vec<Option<Role>> = line
        .split('|')
        .map(|f| {
            let f = f.trim().to_ascii_lowercase();
            HEADER_NAMES
                .iter()
                .find(|(_, names)| names.contains(&f.as_str()))
                .map(|(r, _)| *r)
        })
        .collect();
    let first_names_item = matches!(roles.first(), Some(Some(Role::Id | Role::Audio)));
    // A known first name is enough (`id|...`, `audio_file|...`); unknown later names are
    // kept as fields, so they count as `_` here.
    first_names_item.then(|| {
        roles
            .into_iter()
            .map(|r| r.unwrap_or(Role::Ignore))
            .collect()
    })
}

fn describe(roles: &[Role]) -> String {
    roles.iter().map(|r| r.name()).collect::<Vec<_>>().join("|")
}

/// The audio files of `wavs/`, by stem, so that an id finds its file in any format.
struct AudioIndex {
    by_stem: HashMap<String, String>,
    other_formats: usize,
}

impl AudioIndex {
    fn of(dir: &Path) -> Self {
        let mut by_stem: HashMap<String, (usize, String)> = HashMap::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = Path::new(&name);
            let (Some(stem), Some(ext)) = (path.file_stem(), path.extension()) else {
                continue;
            };
            let ext = ext.to_string_lossy().to_ascii_lowercase();
            let Some(rank) = AUDIO_EXTENSIONS.iter().position(|&e| e == ext) else {
                continue;
            };
            let stem = stem.to_string_lossy().into_owned();
            match by_stem.get(&stem) {
                Some((r, _)) if *r <= rank => {}
                _ => {
                    by_stem.insert(stem, (rank, name));
                }
            }
        }
        Self {
            by_stem: by_stem.into_iter().map(|(k, (_, n))| (k, n)).collect(),
            other_formats: 0,
        }
    }

    /// `wavs/<file of id>`; `wavs/<id>.wav` when there is none (the decoder then says
    /// that file does not exist).
    fn path(&mut self, id: &str) -> PathBuf {
        match self.by_stem.get(id) {
            Some(name) => {
                if !name.to_ascii_lowercase().ends_with(".wav") {
                    self.other_formats += 1;
                }
                Path::new("wavs").join(name)
            }
            None => Path::new("wavs").join(format!("{id}.wav")),
        }
    }
}

/// Whether a field reads as a label (a speaker name), not a transcript.
fn label_like(field: &str) -> bool {
    let f = field.trim();
    !f.is_empty() && f.chars().count() <= 40 && !f.chars().any(char::is_whitespace)
}

/// Refuses a headerless three-column file whose second or third column is a label on
/// nearly every line: it is `id|text|speaker` or `id|speaker|text`, which only a header or
/// `--columns` tells apart from LJSpeech's `id|text|normalised`.
fn refuse_labels(rows: &[(usize, String)], manifest: &Path) -> Result<(), DataError> {
    let three: Vec<(&usize, Vec<&str>)> = rows
        .iter()
        .map(|(n, l)| (n, l.split('|').collect::<Vec<_>>()))
        .filter(|(_, f)| f.len() == 3)
        .collect();
    if three.is_empty() {
        return Ok(());
    }
    let share = |k: usize, test: &dyn Fn(&str) -> bool| {
        three.iter().filter(|(_, f)| test(f[k])).count() as f64 / three.len() as f64
    };
    let spaced = |s: &str| s.trim().contains(char::is_whitespace);
    let (labels3, labels2) = (share(2, &label_like), share(1, &label_like));
    let (text2, text3) = (share(1, &spaced), share(2, &spaced));
    let columns = if labels3 >= 0.9 && text2 >= 0.5 {
        "id,text,speaker"
    } else if labels2 >= 0.9 && text3 >= 0.5 {
        "id,speaker,text"
    } else {
        return Ok(());
    };
    let (line, fields) = &three[0];
    let label = if columns == "id,text,speaker" {
        fields[2]
    } else {
        fields[1]
    };
    Err(DataError::BadLine {
        path: manifest.to_path_buf(),
        line: **line,
        reason: format!(
            "the file has no header, and its {} column (`{}`) is a label on nearly every \
             line, not LJSpeech's normalised text; say what each column is, with a header \
             line (`id|text|speaker`) or `--columns {columns}` (or `--layout` and \
             `--columns` for another order)",
            if columns == "id,text,speaker" {
                "third"
            } else {
                "second"
            },
            label.trim()
        ),
    })
}

/// LJSpeech's own lines: `id|text` or `id|raw|normalised`.
fn read_classic(
    rows: &[(usize, String)],
    use_normalized: bool,
    audio: &mut AudioIndex,
    sink: &mut Sink,
) {
    for (line_no, line) in rows {
        let (Some(first), Some(last)) = (line.find('|'), line.rfind('|')) else {
            // The whole line is the id: a transcript is missing.
            sink.problem(
                *line_no,
                first_field(line).as_deref(),
                "no `|` separator; expected `id|text` or `id|text|normalised text`",
            );
            continue;
        };
        let id = line[..first].trim().to_owned();
        let mut item = Item::new(id.clone(), PathBuf::new(), String::new(), *line_no);
        if first == last {
            item.text = line[first + 1..].trim().to_owned();
        } else {
            let raw = line[first + 1..last].trim().to_owned();
            let normalized = line[last + 1..].trim().to_owned();
            if use_normalized {
                item.text = normalized;
                item.fields.insert("original_text".into(), raw);
            } else {
                item.text = raw;
                item.fields.insert("normalized_text".into(), normalized);
            }
        }
        item.audio = if super::super::manifest::stays_inside(Path::new(&id)) {
            audio.path(&id)
        } else {
            // Leaves the folder: the sink refuses it, naming the path as given.
            Path::new("wavs").join(format!("{id}.wav"))
        };
        sink.push(item);
    }
}

/// Lines whose columns are named, by a header or `--columns`.
fn read_by_roles(
    rows: &[(usize, String)],
    roles: &[Role],
    manifest: &Path,
    options: &ReadOptions,
    audio: &mut AudioIndex,
    sink: &mut Sink,
) -> Result<(), DataError> {
    let find = |role: Role| roles.iter().position(|&r| r == role);
    if find(Role::Id).is_none() && find(Role::Audio).is_none() {
        return Err(DataError::Dataset(format!(
            "`{}`: the columns ({}) name neither the id nor the audio file",
            manifest.display(),
            describe(roles)
        )));
    }
    let text_cols = [find(Role::Text), find(Role::NormalizedText)];
    if text_cols.iter().all(Option::is_none) && find(Role::Phonemes).is_none() {
        return Err(DataError::Dataset(format!(
            "`{}`: the columns ({}) name no text",
            manifest.display(),
            describe(roles)
        )));
    }
    for (line_no, line) in rows {
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        if fields.len() != roles.len() {
            sink.problem(
                *line_no,
                first_field(line).as_deref(),
                format!(
                    "{} `|` fields, and the columns are {} ({})",
                    fields.len(),
                    roles.len(),
                    describe(roles)
                ),
            );
            continue;
        }
        let get = |role: Role| {
            find(role)
                .map(|k| fields[k].to_owned())
                .filter(|s| !s.is_empty())
        };
        let file = get(Role::Audio);
        let id = get(Role::Id)
            .or_else(|| file.as_deref().map(|f| crate::manifest::stem(Path::new(f))))
            .unwrap_or_default();
        let path = match &file {
            Some(f) if Path::new(f).extension().is_some() => PathBuf::from(f),
            Some(f) => audio.path(f),
            None if crate::manifest::stays_inside(Path::new(&id)) => audio.path(&id),
            None => Path::new("wavs").join(format!("{id}.wav")),
        };
        let (text, other) = match (get(Role::Text), get(Role::NormalizedText)) {
            (Some(o), Some(n)) if options.use_normalized_text => (n, Some(("original_text", o))),
            (Some(o), Some(n)) => (o, Some(("normalized_text", n))),
            (Some(t), None) | (None, Some(t)) => (t, None),
            (None, None) => (String::new(), None),
        };
        let mut item = Item::new(id, path, text, *line_no);
        item.speaker = get(Role::Speaker);
        item.language = get(Role::Language);
        item.tokens = get(Role::Phonemes);
        if let Some((k, v)) = other {
            item.fields.insert(k.to_owned(), v);
        }
        sink.push(item);
    }
    Ok(())
}
