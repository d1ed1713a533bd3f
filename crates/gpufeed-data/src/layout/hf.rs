//! Hugging Face `datasets` on disk, read with the `parquet` and `arrow-ipc` crates: Parquet
//! files (the Hub's `data/train-00000-of-00004.parquet`, `push_to_hub`, `to_parquet`) and
//! `save_to_disk` folders (`state.json`, `dataset_info.json`, `data-00000-of-00001.arrow`,
//! Arrow IPC streams). `research/corpus-layouts.md` §9 is the reference.
//!
//! - Which files: a `.parquet` or `.arrow` file as given; a folder's `*.parquet` files (else
//!   those under `data/`) in name order, refused when they hold several splits (`train-*`
//!   and `test-*`); a `save_to_disk` folder's `state.json` `_data_files`, in order. A
//!   `DatasetDict` (`dataset_dict.json`, one `save_to_disk` folder per split) is refused
//!   naming its splits: one is passed (`--data DIR/train`).
//! - The audio column: `--columns audio=NAME`; else the column whose feature in the
//!   schema's `huggingface` metadata (`{"info": {"features": {...}}}`) is
//!   `{"_type": "Audio"}`; else the one struct column of `bytes` (binary) and `path`
//!   (string), the `Audio` feature's storage. `--columns` may also name a binary column
//!   (encoded files) or a string column of paths, relative to the table file's folder.
//! - Items point into the table ([`Member::Row`]: the Parquet row group or Arrow record
//!   batch and the row in it, the `path` value as the decoder's format hint). Listing
//!   never loads the audio bytes: Parquet projects the `bytes` leaf away and learns which
//!   rows have bytes from the row group's null count. [`row_bytes`] reads one row group
//!   when features are computed. A row whose `bytes` is null and `path` set is that file
//!   (relative to the table file's folder when relative); a URL is refused.
//! - The other columns: `--columns`, else the names of [`DEFAULTS`] (offset, duration and
//!   channel only from `--columns`: a Hub `duration` column describes the file, it does
//!   not cut it). Numbers are written as stored (`19`), a `ClassLabel` by its name; the
//!   other string columns are [`Item::fields`]. The id: the id column, else the `path`
//!   value's stem where unique, else `row-N`.
//! - Codecs: Parquet's uncompressed, snappy (pyarrow's default), gzip, LZ4 and ZSTD are
//!   built in; Brotli and LZO are refused by name, as is a compressed Arrow IPC file of a
//!   codec not built in.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray as _;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::SchemaDescriptor;
use serde_json::{Map, Value};

use super::table::DEFAULTS;
use super::{Columns, Layout, Probe, ReadOptions, Role, dataset, parent};
use crate::error::DataError;
use crate::manifest::{Dataset, Item, Member, Sink, stays_inside, stem};

#[cfg(test)]
#[path = "hf_tests.rs"]
mod tests;

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir {
        if probe.has("dataset_dict.json")
            || (probe.has("state.json") && probe.has("dataset_info.json"))
        {
            return 3;
        }
        let parquet = probe.names.iter().any(|n| is_parquet(n))
            || (probe.has("data") && !names_in(&probe.path.join("data")).is_empty());
        return u8::from(parquet) * 2;
    }
    u8::from(probe.head.starts_with(b"PAR1") || probe.file_name().ends_with(".arrow")) * 3
}

pub(super) fn read(probe: &Probe, options: &ReadOptions) -> Result<Dataset, DataError> {
    let (root, files) = files(probe)?;
    let Some(first) = files.first() else {
        return Err(DataError::Dataset(format!(
            "`{}` lists no data file; is it a complete `save_to_disk` folder?",
            probe.path.display()
        )));
    };
    let schema = schema_of(&root.join(&first.rel), first.format)?;
    let plan = Plan::of(&schema, &root.join(&first.rel), &options.columns)?;
    let mut rows = Vec::new();
    for (k, file) in files.iter().enumerate() {
        let path = root.join(&file.rel);
        let table = match file.format {
            Format::Parquet => list_parquet(&path, &plan)?,
            Format::IpcStream | Format::IpcFile => list_ipc(&path, file.format, &plan)?,
        };
        rows.push((k, table));
    }
    let mut sink = Sink::new(true);
    items(&files, &rows, &plan, options.use_normalized_text, &mut sink)?;
    let total: usize = rows.iter().map(|(_, t)| t.places.len()).sum();
    let mut d = dataset(root, probe.path.clone(), Layout::HuggingFace, sink);
    d.notes
        .push(format!("audio: column `{}` ({})", plan.audio, plan.found));
    d.notes.push(plan.describe());
    d.notes.push(format!(
        "{} {} file(s), {total} row(s); the audio bytes stay in the table until features \
         are computed",
        files.len(),
        first.format.name()
    ));
    Ok(d)
}

// ---- which files ----

/// How a table file is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Parquet,
    /// Arrow IPC stream (`save_to_disk`, the `datasets` cache).
    IpcStream,
    /// Arrow IPC file (`ARROW1` magic; random access to batches).
    IpcFile,
}

impl Format {
    /// The format of `path`, by its first bytes.
    fn sniff(path: &Path) -> Result<Self, DataError> {
        let mut head = Vec::with_capacity(6);
        crate::fsx::open(path)?
            .take(6)
            .read_to_end(&mut head)
            .map_err(|e| DataError::io(path, e))?;
        Ok(if head.starts_with(b"PAR1") {
            Self::Parquet
        } else if head.starts_with(b"ARROW1") {
            Self::IpcFile
        } else {
            Self::IpcStream
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Parquet => "Parquet",
            Self::IpcStream => "Arrow IPC stream",
            Self::IpcFile => "Arrow IPC file",
        }
    }
}

/// A table file of the dataset.
#[derive(Debug)]
struct DataFile {
    /// Relative to the dataset root.
    rel: PathBuf,
    format: Format,
}

fn is_parquet(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".parquet")
}

/// The `*.parquet` names in `dir`, sorted (none when it is not a folder).
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_parquet(n))
        .collect();
    names.sort();
    names
}

/// The dataset's root and its table files, in order.
fn files(probe: &Probe) -> Result<(PathBuf, Vec<DataFile>), DataError> {
    if !probe.dir {
        let rel = PathBuf::from(probe.path.file_name().unwrap_or_default());
        let format = Format::sniff(&probe.path)?;
        return Ok((parent(&probe.path), vec![DataFile { rel, format }]));
    }
    let root = probe.path.clone();
    if probe.has("dataset_dict.json") {
        return Err(dataset_dict(&root));
    }
    if probe.has("state.json") {
        return saved_files(&root);
    }
    let (folder, names) = match probe.names.iter().filter(|n| is_parquet(n)).count() {
        0 => (PathBuf::from("data"), names_in(&root.join("data"))),
        _ => (
            PathBuf::new(),
            probe
                .names
                .iter()
                .filter(|n| is_parquet(n))
                .cloned()
                .collect(),
        ),
    };
    if names.is_empty() {
        return Err(DataError::Dataset(format!(
            "`{}` holds no `.parquet` file, nor `data/*.parquet`, nor a `save_to_disk` \
             `state.json`; pass the folder of the Parquet files, or one file",
            root.display()
        )));
    }
    one_split(&root, &folder, &names)?;
    let files = names
        .iter()
        .map(|n| DataFile {
            rel: folder.join(n),
            format: Format::Parquet,
        })
        .collect();
    Ok((root, files))
}

/// Split names `datasets` uses without a shard number (`data/train.parquet`).
const BARE_SPLITS: [&str; 6] = ["train", "test", "validation", "valid", "dev", "eval"];

/// The split a Hub file name is of: `train-00000-of-00004(-hash).parquet` → `train`, a bare
/// `test.parquet` → `test`; `None` for other names (`part-0.parquet`, `0000.parquet`).
/// Split names have no `-` (`datasets` requires `\w+(\.\w+)*`), so the split is the last
/// `-` field before the shard number.
fn split_of(name: &str) -> Option<String> {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let fields: Vec<&str> = stem.split('-').collect();
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    let shard = fields
        .windows(3)
        .position(|w| digits(w[0]) && w[1] == "of" && digits(w[2]));
    match shard {
        Some(k) if k > 0 => Some(fields[k - 1].to_owned()),
        Some(_) => None,
        None => BARE_SPLITS.contains(&stem).then(|| stem.to_owned()),
    }
}

/// Refuses Parquet files of several splits, naming them.
fn one_split(root: &Path, folder: &Path, names: &[String]) -> Result<(), DataError> {
    let mut splits: Vec<(Option<String>, usize, &str)> = Vec::new();
    for name in names {
        let split = split_of(name);
        match splits.iter_mut().find(|(s, _, _)| *s == split) {
            Some((_, n, _)) => *n += 1,
            None => splits.push((split, 1, name)),
        }
    }
    if splits.len() < 2 {
        return Ok(());
    }
    let listed: Vec<String> = splits
        .iter()
        .map(|(s, n, _)| {
            format!(
                "`{}` ({n} file{})",
                s.as_deref().unwrap_or("no split"),
                if *n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let example = root.join(folder).join(splits[0].2);
    Err(DataError::Dataset(format!(
        "`{}` holds Parquet files of several splits: {}; gpufeed reads one: pass one file \
         (`--data {}`), or a folder holding one split's files",
        root.join(folder).display(),
        listed.join(", "),
        example.display()
    )))
}

/// The refusal of a `DatasetDict` folder, naming its splits.
fn dataset_dict(root: &Path) -> DataError {
    let listed: Option<Vec<String>> = crate::fsx::read(&root.join("dataset_dict.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("splits")?.as_array().map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
        });
    let splits = listed.unwrap_or_else(|| {
        let mut dirs: Vec<String> = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("state.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        dirs.sort();
        dirs
    });
    let first = splits.first().map_or("train", String::as_str);
    let quoted: Vec<String> = splits.iter().map(|s| format!("`{s}`")).collect();
    DataError::Dataset(format!(
        "`{}` is a DatasetDict of the splits {} (a `save_to_disk` folder each); gpufeed reads \
         one split: pass it, `--data {}`",
        root.display(),
        if quoted.is_empty() {
            "(none listed)".to_owned()
        } else {
            quoted.join(", ")
        },
        root.join(first).display()
    ))
}

/// A `save_to_disk` folder's files: `state.json`'s `_data_files[*].filename`, in order.
fn saved_files(root: &Path) -> Result<(PathBuf, Vec<DataFile>), DataError> {
    let state = root.join("state.json");
    let bad = |why: &str| {
        DataError::Dataset(format!(
            "`{}`: {why}; is the folder a complete `datasets` `save_to_disk` output?",
            state.display()
        ))
    };
    let json: Value = serde_json::from_slice(&crate::fsx::read(&state)?)
        .map_err(|e| bad(&format!("not JSON ({e})")))?;
    let listed = json
        .get("_data_files")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `_data_files` list"))?;
    let mut files = Vec::with_capacity(listed.len());
    for entry in listed {
        let name = entry
            .get("filename")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a `_data_files` entry without a `filename`"))?;
        let rel = PathBuf::from(name);
        if !stays_inside(&rel) {
            return Err(bad(&format!(
                "the data file `{name}` is outside the folder"
            )));
        }
        let format = Format::sniff(&root.join(&rel))?;
        files.push(DataFile { rel, format });
    }
    Ok((root.to_path_buf(), files))
}

// ---- which columns ----

/// What the audio column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// `struct<bytes: binary, path: string>`: the `Audio` feature's storage.
    Struct,
    /// Encoded files.
    Binary,
    /// Paths of files.
    Paths,
}

/// Which column is read for what, from the first file's schema.
#[derive(Debug)]
struct Plan {
    audio: String,
    storage: Storage,
    /// How the audio column was found, for the notes.
    found: &'static str,
    /// Columns read as text: the roles', then the fields'.
    text: Vec<String>,
    /// Role → index into `text`.
    roles: Vec<(Role, usize)>,
    /// Fields: index into `text`, from `fields_from` on.
    fields_from: usize,
    /// `ClassLabel` names, by column.
    labels: HashMap<String, Vec<String>>,
}

/// The roles read besides the audio, in the order they are mapped.
const ROLES: [Role; 9] = [
    Role::Id,
    Role::Text,
    Role::NormalizedText,
    Role::Phonemes,
    Role::Speaker,
    Role::Language,
    Role::Offset,
    Role::Duration,
    Role::Channel,
];

/// A role's name in `--columns`.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::Id => "id",
        Role::Audio => "audio",
        Role::Text => "text",
        Role::NormalizedText => "normalized_text",
        Role::Phonemes => "phonemes",
        Role::Speaker => "speaker",
        Role::Language => "language",
        Role::Offset => "offset",
        Role::Duration => "duration",
        Role::Channel => "channel",
        Role::Ignore => "_",
    }
}

/// The `datasets` features of the schema's `huggingface` metadata (empty when absent).
fn features(schema: &Schema) -> Map<String, Value> {
    schema
        .metadata()
        .get("huggingface")
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| v.get("info")?.get("features")?.as_object().cloned())
        .unwrap_or_default()
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

fn is_string(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string(v),
        _ => false,
    }
}

/// Whether a column's values can be read as text: strings, numbers, booleans.
fn is_scalar(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, v) => is_scalar(v),
        t => is_string(t) || t.is_integer() || t.is_floating() || *t == DataType::Boolean,
    }
}

/// Whether a struct column has the `Audio` storage's `bytes` child.
fn is_audio_struct(t: &DataType) -> bool {
    match t {
        DataType::Struct(children) => children
            .iter()
            .any(|c| c.name() == "bytes" && is_binary(c.data_type())),
        _ => false,
    }
}

/// A file's column names, for lookups and messages.
struct Names<'a> {
    file: &'a Path,
    names: Vec<&'a str>,
}

impl Names<'_> {
    /// The column `name` (exact, else ignoring case).
    fn find(&self, name: &str) -> Option<usize> {
        let names = &self.names;
        names
            .iter()
            .position(|n| *n == name)
            .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(name)))
    }

    fn listed(&self) -> String {
        self.names.join(", ")
    }

    /// The column `--columns role=name` names.
    fn named(&self, role: Role, name: &str) -> Result<usize, DataError> {
        self.find(name).ok_or_else(|| {
            DataError::Dataset(format!(
                "`{}` has no column `{name}` (`--columns {}={name}`); its columns: {}",
                self.file.display(),
                role_name(role),
                self.listed()
            ))
        })
    }

    /// The audio column and how it was found: `--columns`, else the one `Audio` feature,
    /// else the one struct of `bytes` and `path`.
    fn audio(
        &self,
        schema: &Schema,
        features: &Map<String, Value>,
        columns: &Columns,
    ) -> Result<(usize, &'static str), DataError> {
        if let Some(name) = columns.named.get(&Role::Audio) {
            return Ok((self.named(Role::Audio, name)?, "`--columns`"));
        }
        let tagged: Vec<usize> = (0..self.names.len())
            .filter(|&k| {
                features
                    .get(self.names[k])
                    .and_then(|f| f.get("_type"))
                    .and_then(Value::as_str)
                    == Some("Audio")
            })
            .collect();
        let (candidates, found) = if tagged.is_empty() {
            let shaped = (0..self.names.len())
                .filter(|&k| is_audio_struct(schema.field(k).data_type()))
                .collect();
            (shaped, "a struct of `bytes` and `path`")
        } else {
            (tagged, "its `Audio` feature in the `huggingface` metadata")
        };
        match candidates.as_slice() {
            [k] => Ok((*k, found)),
            [] => Err(DataError::Dataset(format!(
                "`{}` has no audio column (no `Audio` feature, no struct of `bytes` and \
                 `path`); its columns: {}; name the one holding the audio with \
                 `--columns audio=NAME`",
                self.file.display(),
                self.listed()
            ))),
            [a, b, ..] => Err(DataError::Dataset(format!(
                "`{}` has several audio columns, `{}` and `{}`; say which with \
                 `--columns audio={}`",
                self.file.display(),
                self.names[*a],
                self.names[*b],
                self.names[*a]
            ))),
        }
    }
}

/// The names of each `ClassLabel` feature, by column.
fn class_labels(features: &Map<String, Value>) -> HashMap<String, Vec<String>> {
    features
        .iter()
        .filter(|(_, f)| f.get("_type").and_then(Value::as_str) == Some("ClassLabel"))
        .filter_map(|(name, f)| {
            let list = f.get("names")?.as_array()?;
            let list = list
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            Some((name.clone(), list))
        })
        .collect()
}

impl Plan {
    fn of(schema: &Schema, file: &Path, columns: &Columns) -> Result<Self, DataError> {
        let names = Names {
            file,
            names: schema.fields().iter().map(|f| f.name().as_str()).collect(),
        };
        if !columns.positional.is_empty() {
            return Err(DataError::Dataset(format!(
                "`{}`: `--columns` by position is for headerless files; name the columns, \
                 `--columns audio=NAME,text=NAME` (its columns: {})",
                file.display(),
                names.listed()
            )));
        }
        let features = features(schema);
        let (audio, found) = names.audio(schema, &features, columns)?;
        let field = schema.field(audio);
        let storage = match field.data_type() {
            t if is_audio_struct(t) => Storage::Struct,
            t if is_binary(t) => Storage::Binary,
            t if is_string(t) => Storage::Paths,
            t => {
                return Err(DataError::Dataset(format!(
                    "`{}`: the column `{}` is {t}, not audio: gpufeed reads an `Audio` struct \
                     of `bytes` and `path`, a binary column of encoded files, or a string \
                     column of paths",
                    file.display(),
                    field.name()
                )));
            }
        };
        let mut taken = vec![audio];
        if let Some(name) = columns.named.get(&Role::Ignore) {
            taken.push(names.named(Role::Ignore, name)?);
        }
        let mut text = Vec::new();
        let mut roles = Vec::new();
        for role in ROLES {
            let k = match columns.named.get(&role) {
                Some(name) => {
                    let k = names.named(role, name)?;
                    let t = schema.field(k).data_type();
                    if !is_scalar(t) {
                        return Err(DataError::Dataset(format!(
                            "`{}`: the column `{name}` (`--columns {}={name}`) is {t}, not text \
                             or a number",
                            file.display(),
                            role_name(role)
                        )));
                    }
                    Some(k)
                }
                // A Hub `duration` column describes the file; it must not cut it.
                None if matches!(role, Role::Offset | Role::Duration | Role::Channel) => None,
                None => DEFAULTS
                    .iter()
                    .filter(|(r, _)| *r == role)
                    .flat_map(|(_, candidates)| candidates.iter())
                    .filter_map(|n| names.find(n))
                    .find(|k| !taken.contains(k) && is_scalar(schema.field(*k).data_type())),
            };
            if let Some(k) = k {
                taken.push(k);
                roles.push((role, text.len()));
                text.push(names.names[k].to_owned());
            }
        }
        let labels = class_labels(&features);
        let fields_from = text.len();
        for (k, f) in schema.fields().iter().enumerate() {
            let label = labels.contains_key(f.name()) && f.data_type().is_integer();
            if !taken.contains(&k) && (is_string(f.data_type()) || label) {
                text.push(f.name().clone());
            }
        }
        Ok(Self {
            audio: names.names[audio].to_owned(),
            storage,
            found,
            text,
            roles,
            fields_from,
            labels,
        })
    }

    /// One line for the report: the columns taken for each role, and the fields.
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .roles
            .iter()
            .map(|&(r, k)| format!("{}={}", role_name(r), self.text[k]))
            .collect();
        if !self.roles.iter().any(|&(r, _)| r == Role::Id) {
            parts.push("id=(the audio's file name where unique, else `row-N`)".to_owned());
        }
        let fields = &self.text[self.fields_from..];
        format!(
            "columns: {}; fields: {}",
            parts.join(", "),
            if fields.is_empty() {
                "none".to_owned()
            } else {
                fields.join(", ")
            }
        )
    }

    fn role(&self, role: Role) -> Option<usize> {
        self.roles
            .iter()
            .find(|&&(r, _)| r == role)
            .map(|&(_, k)| k)
    }
}

// ---- listing ----

/// The rows of one file as text: what listing needs, never the audio bytes.
#[derive(Debug, Default)]
struct Table {
    /// Per column of [`Plan::text`], one value per row.
    text: Vec<Vec<Option<String>>>,
    /// Per row, the audio's `path` value (or the path of a `Paths` column).
    paths: Vec<Option<String>>,
    /// Per row: its row group (or record batch), its row there, whether it has bytes.
    places: Vec<(usize, usize, bool)>,
}

impl Table {
    fn new(plan: &Plan) -> Self {
        Self {
            text: vec![Vec::new(); plan.text.len()],
            ..Self::default()
        }
    }

    /// Appends the text columns and paths of `batch` (whose rows `places` will describe).
    fn add(&mut self, batch: &RecordBatch, plan: &Plan, file: &Path) -> Result<(), DataError> {
        let rows = batch.num_rows();
        for (k, name) in plan.text.iter().enumerate() {
            let column = batch
                .column_by_name(name)
                .ok_or_else(|| missing(file, name))?;
            let values = strings(column.as_ref(), plan.labels.get(name).map(Vec::as_slice))
                .ok_or_else(|| {
                    DataError::Dataset(format!(
                        "`{}`: the column `{name}` is {}, not text or a number",
                        file.display(),
                        column.data_type()
                    ))
                })?;
            self.text[k].extend(values);
        }
        match plan.storage {
            Storage::Binary => self.paths.extend(std::iter::repeat_n(None, rows)),
            Storage::Paths => {
                let column = batch
                    .column_by_name(&plan.audio)
                    .ok_or_else(|| missing(file, &plan.audio))?;
                self.paths
                    .extend(strings(column.as_ref(), None).unwrap_or_default());
            }
            Storage::Struct => {
                let column = batch
                    .column_by_name(&plan.audio)
                    .ok_or_else(|| missing(file, &plan.audio))?;
                let s = column.as_struct_opt().ok_or_else(|| {
                    DataError::Dataset(format!(
                        "`{}`: the column `{}` is {}, and a struct in the dataset's first file",
                        file.display(),
                        plan.audio,
                        column.data_type()
                    ))
                })?;
                match s.column_by_name("path") {
                    Some(p) => self.paths.extend(
                        strings(p.as_ref(), None)
                            .unwrap_or_default()
                            .into_iter()
                            .enumerate()
                            .map(|(row, v)| v.filter(|_| s.is_valid(row))),
                    ),
                    None => self.paths.extend(std::iter::repeat_n(None, rows)),
                }
            }
        }
        Ok(())
    }
}

fn missing(file: &Path, name: &str) -> DataError {
    DataError::Dataset(format!(
        "`{}` has no column `{name}`, which the dataset's first file has; are the files of \
         one dataset?",
        file.display()
    ))
}

/// The refusal of a file the crates cannot read.
fn unreadable(file: &Path, format: Format, e: &dyn std::fmt::Display) -> DataError {
    let e = e.to_string();
    // parquet: "Disabled feature at compile time: X"; arrow-ipc: "X IPC decompression
    // requires the X feature". `check_codecs` refuses Parquet's before reading.
    if e.contains("Disabled feature at compile time") || e.contains("requires the") {
        return DataError::Dataset(format!(
            "`{}` is compressed with a codec this build does not read ({e}); re-save it with \
             `compression='snappy'` (Parquet) or uncompressed (Arrow)",
            file.display()
        ));
    }
    DataError::Dataset(format!(
        "`{}` is not a readable {} file ({e}); is it complete? download or write it again",
        file.display(),
        format.name()
    ))
}

/// The codecs of [`Compression`] this build does not read, by name: those the workspace's
/// `parquet` features leave out (it has `snap`, `flate2`, `lz4`, `zstd`; LZO it has never
/// read).
fn unread_codec(c: Compression) -> Option<&'static str> {
    match c {
        Compression::BROTLI(_) => Some("BROTLI"),
        Compression::LZO => Some("LZO"),
        _ => None,
    }
}

/// Refuses a Parquet file with a column chunk compressed by a codec not built in.
fn check_codecs(file: &Path, metadata: &ParquetMetaData) -> Result<(), DataError> {
    let unread = metadata
        .row_groups()
        .iter()
        .flat_map(|g| g.columns())
        .find_map(|c| unread_codec(c.compression()));
    match unread {
        Some(name) => Err(DataError::Dataset(format!(
            "`{}` is compressed with {name}, which this build does not read; re-save with \
             `compression='snappy'` (`ds.to_parquet(path, compression='snappy')`, or pyarrow's \
             `pq.write_table(table, path, compression='snappy')`)",
            file.display()
        ))),
        None => Ok(()),
    }
}

/// The schema of a table file.
fn schema_of(file: &Path, format: Format) -> Result<SchemaRef, DataError> {
    let reader = crate::fsx::open(file)?;
    match format {
        Format::Parquet => ParquetRecordBatchReaderBuilder::try_new(reader)
            .map(|b| b.schema().clone())
            .map_err(|e| unreadable(file, format, &e)),
        Format::IpcStream => arrow_ipc::reader::StreamReader::try_new_buffered(reader, None)
            .map(|r| r.schema())
            .map_err(|e| unreadable(file, format, &e)),
        Format::IpcFile => arrow_ipc::reader::FileReader::try_new_buffered(reader, None)
            .map(|r| r.schema())
            .map_err(|e| unreadable(file, format, &e)),
    }
}

/// The leaf of a Parquet schema holding the audio bytes of `column`: its `bytes` child, or
/// the column itself when it is binary.
fn bytes_leaf(descr: &SchemaDescriptor, column: &str, storage: Storage) -> Option<usize> {
    (0..descr.num_columns()).find(|&i| {
        let leaf = descr.column(i);
        let parts = leaf.path().parts();
        match storage {
            Storage::Struct => parts.len() == 2 && parts[0] == column && parts[1] == "bytes",
            Storage::Binary => parts.len() == 1 && parts[0] == column,
            Storage::Paths => false,
        }
    })
}

/// Lists a Parquet file: the plan's columns of every row, without the audio bytes.
fn list_parquet(file: &Path, plan: &Plan) -> Result<Table, DataError> {
    let format = Format::Parquet;
    let builder = ParquetRecordBatchReaderBuilder::try_new(crate::fsx::open(file)?)
        .map_err(|e| unreadable(file, format, &e))?;
    check_codecs(file, builder.metadata())?;
    let schema = builder.schema().clone();
    for name in plan.text.iter().chain(std::iter::once(&plan.audio)) {
        if schema.field_with_name(name).is_err() {
            return Err(missing(file, name));
        }
    }
    let metadata = builder.metadata().clone();
    let descr = builder.parquet_schema();
    let leaf = bytes_leaf(descr, &plan.audio, plan.storage);
    if plan.storage != Storage::Paths && leaf.is_none() {
        return Err(missing(file, &format!("{}.bytes", plan.audio)));
    }
    // Only the plan's columns, and of the audio only its `path`: the bytes stay on disk.
    let wanted: Vec<usize> = (0..descr.num_columns())
        .filter(|&i| Some(i) != leaf)
        .filter(|&i| {
            let leaf = descr.column(i);
            let root = &leaf.path().parts()[0];
            *root == plan.audio || plan.text.contains(root)
        })
        .collect();
    let mut table = Table::new(plan);
    if wanted.is_empty() {
        // Nothing to read as text (a lone binary audio column): the rows are counted below.
        for g in metadata.row_groups() {
            let rows = usize::try_from(g.num_rows()).unwrap_or(0);
            for k in &mut table.text {
                k.extend(std::iter::repeat_n(None, rows));
            }
            table.paths.extend(std::iter::repeat_n(None, rows));
        }
    } else {
        let mask = ProjectionMask::leaves(descr, wanted);
        let reader = builder
            .with_projection(mask)
            .build()
            .map_err(|e| unreadable(file, format, &e))?;
        for batch in reader {
            let batch = batch.map_err(|e| unreadable(file, format, &e))?;
            table.add(&batch, plan, file)?;
        }
    }
    for (g, group) in metadata.row_groups().iter().enumerate() {
        let rows = usize::try_from(group.num_rows()).unwrap_or(0);
        let has = match leaf {
            None => vec![false; rows],
            Some(leaf) => presence(file, g, rows, leaf, group.column(leaf), plan)?,
        };
        table
            .places
            .extend(has.into_iter().enumerate().map(|(row, b)| (g, row, b)));
    }
    if table.places.len() != table.paths.len() {
        return Err(unreadable(
            file,
            format,
            &"its row groups and its rows disagree",
        ));
    }
    Ok(table)
}

/// Which rows of row group `g` have audio bytes: from the `bytes` leaf's null count when
/// it says all or none (pyarrow writes it), else from the leaf itself (a table that mixes
/// embedded audio and paths, or has no statistics: only then are the bytes read).
fn presence(
    file: &Path,
    g: usize,
    rows: usize,
    leaf: usize,
    chunk: &parquet::file::metadata::ColumnChunkMetaData,
    plan: &Plan,
) -> Result<Vec<bool>, DataError> {
    let nulls = chunk
        .statistics()
        .and_then(|s| s.null_count_opt())
        .and_then(|n| usize::try_from(n).ok());
    match nulls {
        Some(0) => return Ok(vec![true; rows]),
        Some(n) if n == rows => return Ok(vec![false; rows]),
        _ => {}
    }
    let format = Format::Parquet;
    let builder = ParquetRecordBatchReaderBuilder::try_new(crate::fsx::open(file)?)
        .map_err(|e| unreadable(file, format, &e))?;
    let mask = ProjectionMask::leaves(builder.parquet_schema(), [leaf]);
    let reader = builder
        .with_row_groups(vec![g])
        .with_projection(mask)
        .build()
        .map_err(|e| unreadable(file, format, &e))?;
    let mut has = Vec::with_capacity(rows);
    for batch in reader {
        let batch = batch.map_err(|e| unreadable(file, format, &e))?;
        let bytes = Bytes::of(&batch, &plan.audio).map_err(|e| unreadable(file, format, &e))?;
        has.extend((0..batch.num_rows()).map(|row| bytes.at(row).is_some()));
    }
    Ok(has)
}

/// Lists an Arrow IPC file or stream, batch by batch. A stream cannot skip a column's
/// bytes (its batches are read whole, then dropped); `datasets` writes shards of a few
/// hundred megabytes, so one batch at a time is what is held.
fn list_ipc(file: &Path, format: Format, plan: &Plan) -> Result<Table, DataError> {
    let mut table = Table::new(plan);
    for (g, batch) in batches(file, format)?.enumerate() {
        let batch = batch.map_err(|e| unreadable(file, format, &e))?;
        table.add(&batch, plan, file)?;
        let has: Vec<bool> = match plan.storage {
            Storage::Paths => vec![false; batch.num_rows()],
            Storage::Struct | Storage::Binary => {
                let bytes =
                    Bytes::of(&batch, &plan.audio).map_err(|e| unreadable(file, format, &e))?;
                (0..batch.num_rows())
                    .map(|row| bytes.at(row).is_some())
                    .collect()
            }
        };
        table
            .places
            .extend(has.into_iter().enumerate().map(|(row, b)| (g, row, b)));
    }
    Ok(table)
}

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;

/// The record batches of an Arrow IPC file or stream, in order.
fn batches(file: &Path, format: Format) -> Result<Batches, DataError> {
    let reader = crate::fsx::open(file)?;
    Ok(match format {
        Format::IpcFile => Box::new(
            arrow_ipc::reader::FileReader::try_new_buffered(reader, None)
                .map_err(|e| unreadable(file, format, &e))?,
        ),
        Format::IpcStream | Format::Parquet => Box::new(
            arrow_ipc::reader::StreamReader::try_new_buffered(reader, None)
                .map_err(|e| unreadable(file, format, &e))?,
        ),
    })
}

/// A column's values as text (trimmed, empty as `None`): strings as they are, numbers as
/// written (`19`, `0.5`), booleans, a `ClassLabel`'s integers by their `labels` (`-1`, no
/// label, as `None`); `None` for other types.
fn strings(array: &dyn Array, labels: Option<&[String]>) -> Option<Vec<Option<String>>> {
    fn primitive<T: ArrowPrimitiveType>(
        array: &dyn Array,
        labels: Option<&[String]>,
    ) -> Option<Vec<Option<String>>>
    where
        T::Native: std::fmt::Display,
    {
        let a = array.as_primitive_opt::<T>()?;
        Some(
            a.iter()
                .map(|v| match (v, labels) {
                    // `-1` (no label) does not parse as an index.
                    (Some(v), Some(names)) => v
                        .to_string()
                        .parse::<usize>()
                        .ok()
                        .and_then(|k| names.get(k).cloned()),
                    (Some(v), None) => Some(v.to_string()),
                    (None, _) => None,
                })
                .collect(),
        )
    }
    let values: Vec<Option<String>> = match array.data_type() {
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect(),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect(),
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .map(|v| v.map(|b| b.to_string()))
            .collect(),
        DataType::Int8 => primitive::<Int8Type>(array, labels)?,
        DataType::Int16 => primitive::<Int16Type>(array, labels)?,
        DataType::Int32 => primitive::<Int32Type>(array, labels)?,
        DataType::Int64 => primitive::<Int64Type>(array, labels)?,
        DataType::UInt8 => primitive::<UInt8Type>(array, labels)?,
        DataType::UInt16 => primitive::<UInt16Type>(array, labels)?,
        DataType::UInt32 => primitive::<UInt32Type>(array, labels)?,
        DataType::UInt64 => primitive::<UInt64Type>(array, labels)?,
        DataType::Float32 => primitive::<Float32Type>(array, None)?,
        DataType::Float64 => primitive::<Float64Type>(array, None)?,
        DataType::Dictionary(_, _) => {
            let d = array.as_any_dictionary_opt()?;
            let values = strings(d.values().as_ref(), labels)?;
            if values.is_empty() {
                vec![None; array.len()]
            } else {
                d.normalized_keys()
                    .into_iter()
                    .enumerate()
                    .map(|(row, k)| {
                        if d.is_valid(row) {
                            values.get(k).cloned().flatten()
                        } else {
                            None
                        }
                    })
                    .collect()
            }
        }
        _ => return None,
    };
    Some(
        values
            .into_iter()
            .map(|v| {
                v.map(|s| s.trim().to_owned())
                    .filter(|s: &String| !s.is_empty())
            })
            .collect(),
    )
}

/// Whether a `path` value is a URL (`https://...`, `hf://...`) rather than a local file.
fn is_url(path: &str) -> bool {
    path.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    })
}

/// Turns the listed rows into items, numbered over the whole dataset.
fn items(
    files: &[DataFile],
    tables: &[(usize, Table)],
    plan: &Plan,
    use_normalized: bool,
    sink: &mut Sink,
) -> Result<(), DataError> {
    // Ids from the audio's file names, where unique.
    let mut stems: HashMap<String, usize> = HashMap::new();
    if plan.role(Role::Id).is_none() {
        for (_, t) in tables {
            for p in t.paths.iter().flatten() {
                *stems.entry(stem(Path::new(p))).or_default() += 1;
            }
        }
    }
    let mut line = 0;
    for (k, table) in tables {
        let file = &files[*k];
        let folder = file.rel.parent().map(Path::to_path_buf).unwrap_or_default();
        for (i, &(group, row, has_bytes)) in table.places.iter().enumerate() {
            line += 1;
            let get = |role| {
                plan.role(role)
                    .and_then(|c| table.text[c].get(i).cloned().flatten())
            };
            let path = table.paths.get(i).cloned().flatten();
            let id = get(Role::Id).unwrap_or_else(|| {
                path.as_deref()
                    .map(|p| stem(Path::new(p)))
                    .filter(|s| !s.is_empty() && stems.get(s) == Some(&1))
                    .unwrap_or_else(|| format!("row-{line}"))
            });
            let (audio, member) = if has_bytes {
                let name = path.clone().unwrap_or_else(|| plan.audio.clone());
                let member = Member::Row {
                    name,
                    column: plan.audio.clone(),
                    group,
                    row,
                };
                (file.rel.clone(), Some(member))
            } else if let Some(p) = &path {
                if is_url(p) {
                    return Err(DataError::Dataset(format!(
                        "`{}`: the audio of row {} is a URL (`{p}`), and gpufeed reads local \
                         audio only; download the files and store their bytes or local paths \
                         in the `{}` column",
                        file.rel.display(),
                        i + 1,
                        plan.audio
                    )));
                }
                let p = PathBuf::from(p);
                (if p.is_absolute() { p } else { folder.join(p) }, None)
            } else {
                sink.problem(
                    line,
                    Some(&id),
                    format!(
                        "the audio column `{}` has neither bytes nor a path in this row",
                        plan.audio
                    ),
                );
                continue;
            };
            let (text, other) = match (get(Role::Text), get(Role::NormalizedText)) {
                (Some(o), Some(n)) if use_normalized => (n, Some(("original_text", o))),
                (Some(o), Some(n)) => (o, Some(("normalized_text", n))),
                (Some(t), None) | (None, Some(t)) => (t, None),
                (None, None) => (String::new(), None),
            };
            let mut item = Item::new(id, audio, text, line);
            item.member = member;
            item.tokens = get(Role::Phonemes);
            item.speaker = get(Role::Speaker);
            item.language = get(Role::Language);
            if let Err(reason) = segment(&mut item, get) {
                sink.problem(line, Some(&item.id), reason);
                continue;
            }
            if let Some((name, value)) = other {
                item.fields.insert(name.to_owned(), value);
            }
            for c in plan.fields_from..plan.text.len() {
                if let Some(v) = table.text[c].get(i).cloned().flatten() {
                    item.fields.insert(plan.text[c].clone(), v);
                }
            }
            sink.push(item);
        }
    }
    Ok(())
}

/// An item's segment from the columns `--columns` names for offset, duration, channel.
fn segment(item: &mut Item, get: impl Fn(Role) -> Option<String>) -> Result<(), String> {
    if let Some(v) = get(Role::Offset) {
        item.offset_s = v
            .parse()
            .map_err(|_| format!("offset `{v}` is not a number of seconds"))?;
    }
    if let Some(v) = get(Role::Duration) {
        let d = v
            .parse()
            .map_err(|_| format!("duration `{v}` is not a number of seconds"))?;
        item.duration_s = Some(d);
    }
    if let Some(v) = get(Role::Channel) {
        let c = v
            .parse()
            .map_err(|_| format!("channel `{v}` is not a channel index (0, 1, ...)"))?;
        item.channel = Some(c);
    }
    Ok(())
}

// ---- the audio of one row ----

/// The audio bytes of a column in a batch: a binary array, and the nulls of the struct
/// holding it.
struct Bytes {
    values: ArrayRef,
    parent: Option<Arc<StructArray>>,
}

impl Bytes {
    /// The bytes of `column` in `batch` (its `bytes` child, or itself when binary).
    fn of(batch: &RecordBatch, column: &str) -> Result<Self, String> {
        let array = batch
            .column_by_name(column)
            .ok_or_else(|| format!("no column `{column}`"))?;
        if let Some(s) = array.as_struct_opt() {
            let values = s
                .column_by_name("bytes")
                .ok_or_else(|| format!("the column `{column}` has no `bytes`"))?
                .clone();
            return Ok(Self {
                values,
                parent: Some(Arc::new(s.clone())),
            });
        }
        Ok(Self {
            values: array.clone(),
            parent: None,
        })
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    /// Row `row`'s bytes (`None` when null).
    fn at(&self, row: usize) -> Option<&[u8]> {
        let a = self.values.as_ref();
        if row >= a.len() || a.is_null(row) || self.parent.as_ref().is_some_and(|p| p.is_null(row))
        {
            return None;
        }
        if let Some(b) = a.as_binary_opt::<i32>() {
            Some(b.value(row))
        } else if let Some(b) = a.as_binary_opt::<i64>() {
            Some(b.value(row))
        } else {
            a.as_binary_view_opt().map(|b| b.value(row))
        }
    }
}

/// The last row group (or record batch) read on this thread.
struct Cached {
    path: PathBuf,
    column: String,
    group: usize,
    /// Its rows' bytes, in batches of the reader.
    chunks: Vec<Bytes>,
    /// An IPC stream's reader, after batch `group`, to go on from.
    stream: Option<arrow_ipc::reader::StreamReader<BufReader<File>>>,
}

impl Cached {
    fn holds(&self, path: &Path, column: &str, group: usize) -> bool {
        self.group == group && self.column == column && self.path == path
    }

    fn row(&self, mut row: usize) -> Option<Option<&[u8]>> {
        for c in &self.chunks {
            if row < c.len() {
                return Some(c.at(row));
            }
            row -= c.len();
        }
        None
    }
}

thread_local! {
    /// Precompute's workers take items in order, so consecutive rows share a row group:
    /// the last one is kept, and each group is decoded once per worker, not once per row.
    /// It holds one row group's audio (Hub shards: 100 rows of audio per row group; a
    /// `save_to_disk` batch: up to 1000 rows) per thread until the thread ends.
    static LAST: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// The encoded audio of one row of a table ([`Member::Row`]) and the name the decoder is
/// to take its format hint from. Reads only the row's row group (Parquet: only its
/// column's `bytes` leaf); an Arrow IPC stream is read up to the row's batch, going on
/// from the last batch read on this thread when it is earlier in the same file (a stream
/// has no index: reading batch N of a fresh stream reads the N batches before it).
///
/// # Errors
///
/// A message naming the file: unreadable, no such row group or row, a null row, more
/// bytes than the decoder reads.
pub(crate) fn row_bytes(path: &Path, member: &Member) -> Result<(Vec<u8>, String), String> {
    let Member::Row {
        name,
        column,
        group,
        row,
    } = member
    else {
        return Err(format!(
            "`{}`: the item is not a row of a table",
            path.display()
        ));
    };
    LAST.with_borrow_mut(|last| {
        if !last.as_ref().is_some_and(|c| c.holds(path, column, *group)) {
            *last = Some(load(path, column, *group, last.take())?);
        }
        let cached = last
            .as_ref()
            .ok_or_else(|| format!("`{}`: nothing read", path.display()))?;
        let bytes = cached
            .row(*row)
            .ok_or_else(|| {
                format!(
                    "`{}`: row group {group} has no row {row}; was the file rewritten after the \
                     dataset was listed?",
                    path.display()
                )
            })?
            .ok_or_else(|| {
                format!(
                    "`{}`: row {row} of row group {group} has no audio bytes in `{column}`",
                    path.display()
                )
            })?;
        if bytes.len() as u64 > gpufeed_audio::decode::MAX_AUDIO_FILE_BYTES {
            return Err(format!(
                "`{}`: row {row} of row group {group} holds {} bytes of audio, more than the \
                 {} MiB gpufeed reads",
                path.display(),
                bytes.len(),
                gpufeed_audio::decode::MAX_AUDIO_FILE_BYTES >> 20
            ));
        }
        Ok((bytes.to_vec(), name.clone()))
    })
}

/// Reads row group (or record batch) `group` of `column` in `path`; `last` is what this
/// thread read before (its stream is gone on with when it is the same file).
fn load(path: &Path, column: &str, group: usize, last: Option<Cached>) -> Result<Cached, String> {
    let format = Format::sniff(path).map_err(|e| e.to_string())?;
    let failed = |e: &dyn std::fmt::Display| unreadable(path, format, e).to_string();
    let mut stream = None;
    let chunks = match format {
        Format::Parquet => {
            let file = crate::fsx::open(path).map_err(|e| e.to_string())?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| failed(&e))?;
            let groups = builder.metadata().num_row_groups();
            if group >= groups {
                return Err(format!(
                    "`{}` has {groups} row groups, and row group {group} was asked for; was it \
                     rewritten after the dataset was listed?",
                    path.display()
                ));
            }
            let descr = builder.parquet_schema();
            let leaf = bytes_leaf(descr, column, Storage::Struct)
                .or_else(|| bytes_leaf(descr, column, Storage::Binary))
                .ok_or_else(|| format!("`{}` has no audio bytes in `{column}`", path.display()))?;
            let mask = ProjectionMask::leaves(descr, [leaf]);
            let reader = builder
                .with_row_groups(vec![group])
                .with_projection(mask)
                .build()
                .map_err(|e| failed(&e))?;
            let mut chunks = Vec::new();
            for batch in reader {
                let batch = batch.map_err(|e| failed(&e))?;
                chunks.push(Bytes::of(&batch, column).map_err(|e| failed(&e))?);
            }
            chunks
        }
        Format::IpcFile => {
            let file = crate::fsx::open(path).map_err(|e| e.to_string())?;
            let mut reader = arrow_ipc::reader::FileReader::try_new_buffered(file, None)
                .map_err(|e| failed(&e))?;
            reader.set_index(group).map_err(|e| failed(&e))?;
            let batch = reader
                .next()
                .ok_or_else(|| failed(&format!("no record batch {group}")))?
                .map_err(|e| failed(&e))?;
            vec![Bytes::of(&batch, column).map_err(|e| failed(&e))?]
        }
        Format::IpcStream => {
            // Go on from the last batch read when it is before this one, in this file.
            let (mut reader, mut next) = match last {
                Some(Cached {
                    path: p,
                    column: c,
                    group: g,
                    stream: Some(reader),
                    ..
                }) if p == path && c == column && g < group => (reader, g + 1),
                _ => {
                    let file = crate::fsx::open(path).map_err(|e| e.to_string())?;
                    let reader = arrow_ipc::reader::StreamReader::try_new_buffered(file, None)
                        .map_err(|e| failed(&e))?;
                    (reader, 0)
                }
            };
            let batch = loop {
                let batch = reader
                    .next()
                    .ok_or_else(|| {
                        format!(
                            "`{}` has {next} record batches, and batch {group} was asked for; \
                             was it rewritten after the dataset was listed?",
                            path.display()
                        )
                    })?
                    .map_err(|e| failed(&e))?;
                if next == group {
                    break batch;
                }
                next += 1;
            };
            let bytes = Bytes::of(&batch, column).map_err(|e| failed(&e))?;
            stream = Some(reader);
            vec![bytes]
        }
    };
    Ok(Cached {
        path: path.to_path_buf(),
        column: column.to_owned(),
        group,
        chunks,
        stream,
    })
}
