//! Table-shaped layouts: rows of named (or numbered) fields mapped onto items by role.
//!
//! - `table`: any CSV (the `csv` crate's real quoting rules), TSV (tabs only, no quoting:
//!   Common Voice's sentences hold unmatched `"`), or JSON-lines manifest, with
//!   `--columns` or the column names of [`DEFAULTS`];
//! - `gpufeed`: gpufeed's own `manifest.jsonl` / `manifest.csv` (`audio_path`, `text`, `id`;
//!   audio inside the folder; in the CSV the text may be last and hold unquoted commas);
//! - `nemo`: NeMo's JSON lines (`audio_filepath`, `duration`, `offset`, `text`, `speaker`,
//!   `lang`); a relative path is joined to the manifest's folder, `~` is the home folder;
//! - `common_voice`: a Common Voice language folder (`clips/` and its TSVs) or one TSV.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Columns, Layout, Probe, ReadOptions, Role, dataset, parent};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Sink, lines, read_capped, stem};

/// The column names each role is looked for under, case-insensitively, when `--columns`
/// does not name one: the names of the layouts in `research/corpus-layouts.md` (gpufeed,
/// NeMo, Common Voice, Coqui, Hugging Face cards, Emilia).
pub(crate) const DEFAULTS: [(Role, &[&str]); 10] = [
    (
        Role::Id,
        &[
            "id",
            "utt_id",
            "utterance_id",
            "key",
            "__key__",
            "segment_id",
        ],
    ),
    (
        Role::Audio,
        &[
            "audio_path",
            "audio_filepath",
            "audio_filename",
            "audio_file",
            "audio",
            "path",
            "wav",
            "wav_path",
            "file",
            "filename",
            "file_name",
        ],
    ),
    (
        Role::Text,
        &[
            "text",
            "sentence",
            "transcript",
            "transcription",
            "raw_text",
        ],
    ),
    (
        Role::NormalizedText,
        &["normalized_text", "normalised_text", "text_normalized"],
    ),
    (Role::Phonemes, &["phonemes", "phoneme", "phones", "tokens"]),
    (
        Role::Speaker,
        &[
            "speaker",
            "speaker_id",
            "client_id",
            "speaker_name",
            "spk",
            "spk_id",
        ],
    ),
    (
        Role::Language,
        &["language", "lang", "locale", "language_code"],
    ),
    (Role::Offset, &["offset", "start"]),
    (Role::Duration, &["duration", "dur"]),
    (Role::Channel, &["channel"]),
];

/// One row: its line and its fields.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) line: usize,
    values: Values,
}

#[derive(Debug)]
enum Values {
    Cells(Vec<String>),
    Object(Map<String, Value>),
}

/// A table read from a file: an optional header and its rows.
#[derive(Debug)]
pub(crate) struct Rows {
    /// Column names (the header; a JSON-lines file's keys, first seen first).
    pub(crate) header: Vec<String>,
    /// Whether the names are a real header (false: positions `0`, `1`, ...).
    pub(crate) named: bool,
    pub(crate) rows: Vec<Row>,
}

impl Row {
    /// The field under column `k` of `rows`' header, as text (a JSON number as written;
    /// `null` and empty as `None`).
    pub(crate) fn get(&self, header: &[String], k: usize) -> Option<String> {
        let v = match &self.values {
            Values::Cells(cells) => cells.get(k).map(|c| c.trim().to_owned()),
            Values::Object(map) => map.get(header.get(k)?).and_then(|v| match v {
                Value::Null => None,
                Value::String(s) => Some(s.trim().to_owned()),
                other => Some(other.to_string()),
            }),
        };
        v.filter(|s| !s.is_empty())
    }
}

/// How rows are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Comma-separated, with CSV quoting.
    Csv,
    /// Tab-separated, no quoting.
    Tsv,
    /// One JSON object per line.
    Jsonl,
}

impl Format {
    /// The format of `path`, from its name or, failing that, its first line.
    pub(crate) fn of(name: &str, first_line: Option<&str>) -> Self {
        let name = name.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".jsonl") || name.ends_with(".json") || name.ends_with(".ndjson") {
            Self::Jsonl
        } else if name.ends_with(".tsv") {
            Self::Tsv
        } else if name.ends_with(".csv") {
            Self::Csv
        } else {
            match first_line.map(str::trim_start) {
                Some(l) if l.starts_with('{') => Self::Jsonl,
                Some(l) if l.contains('\t') => Self::Tsv,
                _ => Self::Csv,
            }
        }
    }
}

/// Reads `path` as a table of `format`; `header` says whether its first row names the
/// columns (JSON lines always name theirs). Lines that cannot be read are problems.
pub(crate) fn read_rows(
    path: &Path,
    format: Format,
    header: bool,
    sink: &mut Sink,
) -> Result<Rows, DataError> {
    let bytes = read_capped(path)?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        inflate(path, &bytes)?
    } else {
        bytes
    };
    match format {
        Format::Jsonl => Ok(jsonl_rows(&bytes, sink)),
        Format::Csv | Format::Tsv => delimited_rows(path, &bytes, format, header, sink),
    }
}

/// The gzip `bytes` of `path`, inflated (capped like any manifest).
pub(crate) fn inflate(path: &Path, bytes: &[u8]) -> Result<Vec<u8>, DataError> {
    use std::io::Read as _;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(crate::manifest::MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| DataError::io(path, e))?;
    if out.len() as u64 > crate::manifest::MAX_MANIFEST_BYTES {
        return Err(DataError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "it inflates to more than {} MiB, the most gpufeed reads from one \
                     manifest; split the dataset",
                    crate::manifest::MAX_MANIFEST_BYTES >> 20
                ),
            ),
        ));
    }
    Ok(out)
}

fn jsonl_rows(bytes: &[u8], sink: &mut Sink) -> Rows {
    let mut header: Vec<String> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut rows = Vec::new();
    for (line, text) in lines(bytes, &mut sink.problems, |_| None) {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => {
                for k in map.keys() {
                    if seen.insert(k.clone(), ()).is_none() {
                        header.push(k.clone());
                    }
                }
                rows.push(Row {
                    line,
                    values: Values::Object(map),
                });
            }
            Ok(_) => sink.problem(
                line,
                None,
                "not a JSON object; expected one object per line",
            ),
            Err(e) => sink.problem(line, None, format!("not JSON: {e}")),
        }
    }
    Rows {
        header,
        named: true,
        rows,
    }
}

fn delimited_rows(
    path: &Path,
    bytes: &[u8],
    format: Format,
    header: bool,
    sink: &mut Sink,
) -> Result<Rows, DataError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(if format == Format::Tsv { b'\t' } else { b',' })
        .quoting(format == Format::Csv)
        .from_reader(bytes);
    let mut names: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    let mut record = csv::ByteRecord::new();
    loop {
        let line = usize::try_from(reader.position().line()).unwrap_or(usize::MAX);
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                sink.problem(line, None, format!("unreadable: {e}"));
                continue;
            }
        }
        let line = record
            .position()
            .map_or(line, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
        if record.iter().all(|f| f.iter().all(u8::is_ascii_whitespace)) {
            continue;
        }
        let mut cells = Vec::with_capacity(record.len());
        let mut bad = None;
        for field in &record {
            match std::str::from_utf8(field) {
                Ok(s) => cells.push(s.to_owned()),
                Err(e) => {
                    bad = Some(e.valid_up_to());
                    break;
                }
            }
        }
        if let Some(at) = bad {
            sink.problem(
                line,
                None,
                format!("not valid UTF-8 (byte {at} of a field); re-encode the file as UTF-8"),
            );
            continue;
        }
        if header && names.is_none() {
            names = Some(cells.iter().map(|c| c.trim().to_owned()).collect());
            continue;
        }
        rows.push(Row {
            line,
            values: Values::Cells(cells),
        });
    }
    let named = names.is_some();
    let header = names.unwrap_or_else(|| {
        let width = rows
            .iter()
            .map(|r| match &r.values {
                Values::Cells(c) => c.len(),
                Values::Object(_) => 0,
            })
            .max()
            .unwrap_or(0);
        (0..width).map(|k| k.to_string()).collect()
    });
    if named && header.iter().all(String::is_empty) {
        return Err(DataError::ManifestHeader {
            path: path.to_path_buf(),
            line: 1,
            found: String::new(),
        });
    }
    Ok(Rows {
        header,
        named,
        rows,
    })
}

/// Which column (index into the header) holds each role.
#[derive(Debug, Default)]
pub(crate) struct Mapping {
    pub(crate) roles: BTreeMap<Role, usize>,
}

impl Mapping {
    /// Maps `rows`' columns: `columns` first (by name or position), then, for roles it does
    /// not name, the first header name of [`DEFAULTS`] (or of `extra_defaults`, looked at
    /// first) that is there.
    pub(crate) fn of(
        rows: &Rows,
        columns: &Columns,
        extra_defaults: &[(Role, &[&str])],
        path: &Path,
    ) -> Result<Self, DataError> {
        let mut roles = BTreeMap::new();
        let find = |name: &str| {
            rows.header
                .iter()
                .position(|h| h.eq_ignore_ascii_case(name.trim()))
        };
        if !columns.positional.is_empty() {
            for (k, &role) in columns.positional.iter().enumerate() {
                if role != Role::Ignore {
                    roles.insert(role, k);
                }
            }
        } else {
            for (&role, name) in &columns.named {
                let k = find(name).ok_or_else(|| DataError::ManifestHeader {
                    path: path.to_path_buf(),
                    line: 1,
                    found: format!(
                        "{} (`--columns` names `{name}` for `{}`, and there is no such column)",
                        rows.header.join(", "),
                        role.name()
                    ),
                })?;
                if role != Role::Ignore {
                    roles.insert(role, k);
                }
            }
        }
        if rows.named {
            for (role, names) in extra_defaults.iter().chain(DEFAULTS.iter()) {
                if roles.contains_key(role) {
                    continue;
                }
                if let Some(k) = names.iter().find_map(|n| find(n))
                    && !roles.values().any(|&taken| taken == k)
                {
                    roles.insert(*role, k);
                }
            }
        }
        Ok(Self { roles })
    }

    /// The field of `role` in `row`.
    pub(crate) fn get(&self, rows: &Rows, row: &Row, role: Role) -> Option<String> {
        row.get(&rows.header, *self.roles.get(&role)?)
    }

    /// Whether `role` has a column.
    pub(crate) fn has(&self, role: Role) -> bool {
        self.roles.contains_key(&role)
    }

    /// The columns no role took, as `(name, index)`.
    fn rest<'a>(&self, rows: &'a Rows) -> Vec<(&'a str, usize)> {
        rows.header
            .iter()
            .enumerate()
            .filter(|(k, _)| !self.roles.values().any(|v| v == k))
            .map(|(k, h)| (h.as_str(), k))
            .collect()
    }
}

/// How a table's audio field becomes a path.
pub(crate) struct Paths<'a> {
    /// Folder relative paths are joined to when the layout joins them (NeMo), else the
    /// dataset root they stay relative to.
    pub(crate) base: &'a Path,
    /// Join relative paths to `base` here (NeMo), instead of leaving them relative to the
    /// root.
    pub(crate) join: bool,
    /// Prefix every path (Common Voice: `clips/`).
    pub(crate) prefix: Option<&'a str>,
}

impl<'a> Paths<'a> {
    /// Paths as written, relative to the dataset root `base`.
    fn relative_to(base: &'a Path) -> Self {
        Self {
            base,
            join: false,
            prefix: None,
        }
    }

    fn resolve(&self, value: &str) -> PathBuf {
        let value = value.trim();
        let path = match value.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME").map_or_else(
                || PathBuf::from(value),
                |home| PathBuf::from(home).join(rest),
            ),
            None => PathBuf::from(value),
        };
        let path = match self.prefix {
            Some(prefix) if path.is_relative() => Path::new(prefix).join(path),
            _ => path,
        };
        if self.join && path.is_relative() {
            self.base.join(path)
        } else {
            path
        }
    }
}

/// Parses a number of seconds (or a channel) from a field.
fn number(field: &str) -> Option<f64> {
    field.trim().parse::<f64>().ok()
}

/// Turns `rows` into items by `mapping`; `use_normalized` picks the normalised text
/// column when there is one. Rows without audio or with an unreadable number are
/// problems; the columns no role took become the items' fields.
pub(crate) fn items(
    rows: &Rows,
    mapping: &Mapping,
    paths: &Paths<'_>,
    use_normalized: bool,
    sink: &mut Sink,
) {
    let rest = mapping.rest(rows);
    // Several segments of one file (NeMo, generic manifests) share a stem: their ids then
    // carry the offset in milliseconds.
    let stems = if mapping.has(Role::Id) {
        HashMap::new()
    } else {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for row in &rows.rows {
            if let Some(a) = mapping.get(rows, row, Role::Audio) {
                *counts.entry(stem(Path::new(&a))).or_default() += 1;
            }
        }
        counts
    };
    for row in &rows.rows {
        let get = |role| mapping.get(rows, row, role);
        let Some(audio) = get(Role::Audio) else {
            sink.problem(
                row.line,
                get(Role::Id).as_deref(),
                format!(
                    "no audio path{}",
                    if mapping.has(Role::Audio) {
                        ""
                    } else {
                        "; name its column with `--columns audio=NAME`"
                    }
                ),
            );
            continue;
        };
        let path = paths.resolve(&audio);
        let mut bad_number = None;
        let mut seconds = |role: Role| {
            let field = get(role)?;
            let n = number(&field);
            if n.is_none() {
                bad_number = Some(format!("{} `{field}` is not a number", role.name()));
            }
            n
        };
        let offset_s = seconds(Role::Offset).unwrap_or(0.0);
        let duration_s = seconds(Role::Duration);
        let channel = seconds(Role::Channel);
        if let Some(reason) = bad_number {
            sink.problem(row.line, get(Role::Id).as_deref(), reason);
            continue;
        }
        let channel = match channel {
            Some(c) if c >= 0.0 && c.fract() == 0.0 && c <= f64::from(u16::MAX) =>
            {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(c as u16)
            }
            Some(c) => {
                sink.problem(
                    row.line,
                    get(Role::Id).as_deref(),
                    format!("channel `{c}` is not a channel index (0, 1, ...)"),
                );
                continue;
            }
            None => None,
        };
        let id = get(Role::Id).unwrap_or_else(|| {
            let s = stem(&path);
            if stems.get(&s).is_some_and(|&n| n > 1) {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let ms = (offset_s * 1000.0).round() as u64;
                format!("{s}-{ms}")
            } else {
                s
            }
        });
        let original = get(Role::Text);
        let normalized = get(Role::NormalizedText);
        let (text, other) = match (original, normalized) {
            (Some(o), Some(n)) if use_normalized => (n, Some(("original_text", o))),
            (Some(o), Some(n)) => (o, Some(("normalized_text", n))),
            (Some(t), None) | (None, Some(t)) => (t, None),
            (None, None) => (String::new(), None),
        };
        let mut item = Item::new(id, path, text, row.line);
        item.tokens = get(Role::Phonemes);
        item.offset_s = offset_s;
        item.duration_s = duration_s;
        item.channel = channel;
        item.speaker = get(Role::Speaker);
        item.language = get(Role::Language);
        if let Some((name, value)) = other {
            item.fields.insert(name.to_owned(), value);
        }
        for &(name, k) in &rest {
            if let Some(v) = row.get(&rows.header, k) {
                item.fields.insert(name.to_owned(), v);
            }
        }
        sink.push(item);
    }
}

/// Whether a header (lowercased names) names a column of `role` under its defaults.
fn names_role(header: &[String], role: Role) -> bool {
    DEFAULTS
        .iter()
        .filter(|(r, _)| *r == role)
        .flat_map(|(_, names)| names.iter())
        .any(|n| header.iter().any(|h| h.eq_ignore_ascii_case(n)))
}

/// The keys of a JSON-lines file's first object, or a delimited file's header names.
fn header_of(probe: &Probe) -> Vec<String> {
    let Some(line) = probe.first_line() else {
        return Vec::new();
    };
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) {
        return map.keys().cloned().collect();
    }
    let sep = if line.contains('\t') { '\t' } else { ',' };
    line.split(sep)
        .map(|h| h.trim().trim_matches('"').to_owned())
        .collect()
}

// ---- table ----

pub(super) fn fit_table(probe: &Probe) -> u8 {
    if probe.dir {
        return 0;
    }
    let header = header_of(probe);
    u8::from(names_role(&header, Role::Audio) && probe.text().is_some())
}

pub(super) fn read_table(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let path = single_file(probe, Layout::Table)?;
    let format = Format::of(&probe.file_name(), probe.first_line());
    let mut sink = Sink::new(true);
    let header = options.columns.positional.is_empty();
    let rows = read_rows(&path, format, header, &mut sink)?;
    let mapping = Mapping::of(&rows, &options.columns, &[], &path)?;
    require_audio(&mapping, &rows, &path)?;
    let root = parent(&path);
    let paths = Paths::relative_to(&root);
    items(
        &rows,
        &mapping,
        &paths,
        options.use_normalized_text,
        &mut sink,
    );
    let mut d = dataset(root, path, Layout::Table, sink);
    d.notes.push(mapping_note(&rows, &mapping, format));
    Ok(d)
}

/// The one file a file-only layout reads.
fn single_file(probe: &Probe, layout: Layout) -> Result<PathBuf, DataError> {
    if probe.dir {
        return Err(DataError::Dataset(format!(
            "`{}` is a folder; the `{layout}` layout reads one manifest file: pass the file",
            probe.path.display()
        )));
    }
    Ok(probe.path.clone())
}

/// Refuses a table whose audio column was not found.
fn require_audio(mapping: &Mapping, rows: &Rows, path: &Path) -> Result<(), DataError> {
    if mapping.has(Role::Audio) {
        return Ok(());
    }
    Err(DataError::ManifestHeader {
        path: path.to_path_buf(),
        line: 1,
        found: format!(
            "{} (no audio column: name it with `--columns audio=NAME,text=NAME`)",
            rows.header.join(", ")
        ),
    })
}

/// One line for the report: which column was taken for what.
fn mapping_note(rows: &Rows, mapping: &Mapping, format: Format) -> String {
    let parts: Vec<String> = mapping
        .roles
        .iter()
        .map(|(role, &k)| {
            format!(
                "{}={}",
                role.name(),
                rows.header.get(k).map_or("?", String::as_str)
            )
        })
        .collect();
    format!(
        "{} columns: {}",
        match format {
            Format::Csv => "CSV",
            Format::Tsv => "TSV",
            Format::Jsonl => "JSON-lines",
        },
        parts.join(", ")
    )
}

// ---- gpufeed ----

const GPUFEED_NAMES: [&str; 2] = ["manifest.jsonl", "manifest.csv"];

pub(super) fn fit_gpufeed(probe: &Probe) -> u8 {
    if probe.dir {
        return if GPUFEED_NAMES.iter().any(|n| probe.has(n)) {
            3
        } else {
            0
        };
    }
    if GPUFEED_NAMES.contains(&probe.file_name().as_str()) {
        3
    } else {
        0
    }
}

pub(super) fn read_gpufeed(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let path = if probe.dir {
        GPUFEED_NAMES
            .iter()
            .map(|n| probe.path.join(n))
            .find(|p| p.is_file())
            .ok_or_else(|| DataError::NoManifest {
                dir: probe.path.clone(),
            })?
    } else {
        probe.path.clone()
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let format = Format::of(&name, None);
    let mut sink = Sink::new(false);
    let mut rows = read_rows(&path, format, true, &mut sink)?;
    if format == Format::Csv {
        if rows.rows.is_empty() && rows.header.is_empty() {
            return Err(DataError::EmptyManifest { path });
        }
        join_unquoted_text(&mut rows);
    }
    let own: [(Role, &[&str]); 3] = [
        (Role::Audio, &["audio_path"]),
        (Role::Text, &["text"]),
        (Role::Id, &["id"]),
    ];
    let mapping = Mapping::of(&rows, &options.columns, &own, &path)?;
    if format == Format::Csv && !(mapping.has(Role::Audio) && mapping.has(Role::Text)) {
        return Err(DataError::ManifestHeader {
            path,
            line: 1,
            found: rows.header.join(", "),
        });
    }
    let root = parent(&path);
    let paths = Paths::relative_to(&root);
    items(
        &rows,
        &mapping,
        &paths,
        options.use_normalized_text,
        &mut sink,
    );
    sink.problems.sort_by_key(|p| p.line);
    Ok(dataset(root, path, Layout::Gpufeed, sink))
}

/// gpufeed's own CSV puts the text last, unquoted, so it may hold commas: a row with more
/// fields than the header has them joined back into the last one.
fn join_unquoted_text(rows: &mut Rows) {
    let width = rows.header.len();
    let text_last = rows
        .header
        .last()
        .is_some_and(|h| h.eq_ignore_ascii_case("text"));
    if !text_last || width == 0 {
        return;
    }
    for row in &mut rows.rows {
        if let Values::Cells(cells) = &mut row.values
            && cells.len() > width
        {
            let tail = cells.split_off(width - 1).join(",");
            cells.push(tail);
        }
    }
}

// ---- nemo ----

pub(super) fn fit_nemo(probe: &Probe) -> u8 {
    if probe.dir {
        // A folder holding NeMo manifests: likely, and which one is for `--data` to say.
        let manifests = nemo_manifests(probe);
        return if manifests.is_empty() { 0 } else { 2 };
    }
    let header = header_of(probe);
    let audio = header
        .iter()
        .any(|h| h == "audio_filepath" || h == "audio_filename");
    if audio
        && probe
            .first_line()
            .is_some_and(|l| l.trim_start().starts_with('{'))
    {
        3
    } else {
        0
    }
}

/// The NeMo manifests in a folder (`*.json`, `*.jsonl` whose first object has
/// `audio_filepath`).
fn nemo_manifests(probe: &Probe) -> Vec<PathBuf> {
    probe
        .names
        .iter()
        .filter(|n| n.ends_with(".json") || n.ends_with(".jsonl"))
        .map(|n| probe.path.join(n))
        .filter(|p| fit_nemo(&Probe::of(p)) == 3)
        .collect()
}

pub(super) fn read_nemo(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let path = if probe.dir {
        match nemo_manifests(probe).as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(DataError::Dataset(format!(
                    "`{}` holds no NeMo manifest (JSON lines with `audio_filepath`); pass the \
                     manifest file",
                    probe.path.display()
                )));
            }
            many => {
                let names: Vec<String> = many
                    .iter()
                    .filter_map(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .collect();
                return Err(DataError::Dataset(format!(
                    "`{}` holds {} NeMo manifests ({}); pass the one to read as `--data`",
                    probe.path.display(),
                    many.len(),
                    names.join(", ")
                )));
            }
        }
    } else {
        probe.path.clone()
    };
    let mut sink = Sink::new(true);
    let mut rows = read_rows(&path, Format::Jsonl, true, &mut sink)?;
    let nemo: [(Role, &[&str]); 5] = [
        (Role::Audio, &["audio_filepath", "audio_filename"]),
        (Role::Text, &["text"]),
        (Role::NormalizedText, &["normalized_text"]),
        (Role::Language, &["lang", "language", "source_lang"]),
        (Role::Speaker, &["speaker", "speaker_id"]),
    ];
    let mapping = Mapping::of(&rows, &options.columns, &nemo, &path)?;
    require_audio(&mapping, &rows, &path)?;
    let root = parent(&path);
    // `text_filepath`: the text is in a file (NeMo's fallback when `text` is absent).
    if let Some(k) = rows.header.iter().position(|h| h == "text_filepath")
        && let Some(t) = mapping.roles.get(&Role::Text).copied()
    {
        fill_text_files(&mut rows, k, t, &root, &mut sink);
    }
    let paths = Paths {
        base: &root,
        join: true,
        prefix: None,
    };
    // NeMo's own text is the text as written; `normalized_text` only when asked for.
    items(
        &rows,
        &mapping,
        &paths,
        options.use_normalized_text,
        &mut sink,
    );
    let mut d = dataset(root.clone(), path, Layout::Nemo, sink);
    // Paths were joined to the manifest's folder: they are absolute or relative to the
    // current folder now, not to the root.
    d.root = PathBuf::new();
    d.notes
        .push("relative audio paths are joined to the manifest's folder".to_owned());
    Ok(d)
}

/// Puts the text of `text_filepath` files into the text column of rows that have none.
fn fill_text_files(
    rows: &mut Rows,
    file_col: usize,
    text_col: usize,
    root: &Path,
    sink: &mut Sink,
) {
    let header = rows.header.clone();
    for row in &mut rows.rows {
        if row.get(&header, text_col).is_some() {
            continue;
        }
        let Some(file) = row.get(&header, file_col) else {
            continue;
        };
        let p = root.join(&file);
        match crate::fsx::read(&p).map(|b| String::from_utf8_lossy(&b).into_owned()) {
            Ok(t) => {
                if let Values::Object(map) = &mut row.values {
                    map.insert(header[text_col].clone(), Value::String(t.trim().to_owned()));
                }
            }
            Err(e) => sink.problem(row.line, None, format!("text_filepath: {e}")),
        }
    }
}

// ---- common voice ----

/// The clip tables of a Common Voice folder, in the order one is chosen.
const CV_TABLES: [&str; 4] = ["train.tsv", "validated.tsv", "dev.tsv", "test.tsv"];

pub(super) fn fit_common_voice(probe: &Probe) -> u8 {
    if probe.dir {
        let tables = CV_TABLES.iter().any(|t| probe.has(t));
        return if probe.has("clips") && tables { 3 } else { 0 };
    }
    let header = header_of(probe);
    let has = |n: &str| header.iter().any(|h| h == n);
    if has("client_id") && has("path") && has("sentence") {
        3
    } else {
        0
    }
}

pub(super) fn read_common_voice(
    probe: &Probe,
    options: &ReadOptions,
) -> Result<Dataset, DataError> {
    let (path, chosen) = if probe.dir {
        let name =
            CV_TABLES
                .iter()
                .find(|t| probe.has(t))
                .ok_or_else(|| DataError::NoManifest {
                    dir: probe.path.clone(),
                })?;
        (probe.path.join(name), Some(*name))
    } else {
        (probe.path.clone(), None)
    };
    let mut sink = Sink::new(false);
    let rows = read_rows(&path, Format::Tsv, true, &mut sink)?;
    let cv: [(Role, &[&str]); 5] = [
        (Role::Audio, &["path"]),
        (Role::Text, &["sentence"]),
        (Role::Speaker, &["client_id"]),
        (Role::Language, &["locale"]),
        (Role::Id, &[]),
    ];
    let mapping = Mapping::of(&rows, &options.columns, &cv, &path)?;
    require_audio(&mapping, &rows, &path)?;
    let root = parent(&path);
    let paths = Paths {
        base: &root,
        join: false,
        prefix: Some("clips"),
    };
    items(&rows, &mapping, &paths, false, &mut sink);
    // Before 5.0 there is no `locale` column: the folder is named after the language.
    let folder_language = root
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut d = dataset(root, path, Layout::CommonVoice, sink);
    if !mapping.has(Role::Language)
        && let Some(code) = folder_language.filter(|c| looks_like_locale(c))
    {
        for item in &mut d.items {
            item.language = Some(code.clone());
        }
        d.notes.push(format!(
            "language `{code}` from the folder's name (no `locale` column)"
        ));
    }
    if let Some(name) = chosen {
        d.notes.push(format!(
            "read `{name}`; pass another table (`--data DIR/dev.tsv`) to read that one"
        ));
    }
    Ok(d)
}

/// Whether a folder name is a Common Voice locale code (`ru`, `pt-BR`, `zh-CN`, `yue`).
fn looks_like_locale(name: &str) -> bool {
    let mut parts = name.split('-');
    let first = parts.next().unwrap_or_default();
    (2..=3).contains(&first.len())
        && first.chars().all(|c| c.is_ascii_lowercase())
        && parts.all(|p| (2..=4).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}
