//! The `huggingface` reader against fixtures written here as `datasets` writes them: a
//! Parquet file with the `huggingface` schema metadata and an `Audio` struct column of WAV
//! bytes in two row groups, a `save_to_disk` folder (Arrow IPC stream), the Hub's
//! `data/train-*.parquet`, files without metadata read with `--columns`, and the refusals.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};

use super::super::tests::{RATE, tone, wav, write};
use super::super::{Layout, ReadOptions, Role, open};
use super::*;

/// The `huggingface` metadata `datasets` writes for an `Audio`, a text and an int column.
const HF_META: &str = r#"{"info": {"features": {"audio": {"sampling_rate": 16000, "_type": "Audio"}, "text": {"dtype": "string", "_type": "Value"}, "speaker_id": {"dtype": "int64", "_type": "Value"}}}}"#;

/// One row of a fixture and what the reader must make of it.
struct Row {
    path: Option<&'static str>,
    bytes: Option<Vec<u8>>,
    text: &'static str,
    speaker: i64,
}

/// The bytes of a 16-bit mono WAV of `seconds` at [`RATE`] (hound, into memory).
fn wav_bytes(seconds: f64) -> Vec<u8> {
    let mut out = Vec::new();
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::new(Cursor::new(&mut out), spec).unwrap();
    for s in &tone(seconds, 1)[0] {
        w.write_sample(*s).unwrap();
    }
    w.finalize().unwrap();
    out
}

/// Five rows of embedded WAVs of different lengths, Cyrillic and Japanese text among them.
fn five() -> Vec<Row> {
    let texts = [
        ("a1.wav", "Привет, мир", 19),
        ("a2.wav", "日本語のテキスト", 19),
        ("b1.wav", "Hello there", 250),
        ("b2.wav", "Ünïcödé stays", 250),
        ("c1.wav", "The last one", 7),
    ];
    texts
        .iter()
        .enumerate()
        .map(|(k, &(path, text, speaker))| Row {
            path: Some(path),
            bytes: Some(wav_bytes(0.1 + 0.02 * k as f64)),
            text,
            speaker,
        })
        .collect()
}

/// The `Audio` storage type: `struct<bytes: binary, path: string>`.
fn audio_fields() -> Fields {
    Fields::from(vec![
        Field::new("bytes", DataType::Binary, true),
        Field::new("path", DataType::Utf8, true),
    ])
}

/// A batch of `rows` in `datasets`' schema (`audio`, `text`, `speaker_id`), with the
/// `huggingface` metadata `meta` on the schema when given.
fn batch(rows: &[Row], meta: Option<&str>) -> RecordBatch {
    let bytes: BinaryArray = rows.iter().map(|r| r.bytes.as_deref()).collect();
    let paths: StringArray = rows.iter().map(|r| r.path).collect();
    let audio = StructArray::new(
        audio_fields(),
        vec![Arc::new(bytes) as ArrayRef, Arc::new(paths)],
        None,
    );
    let text: StringArray = rows.iter().map(|r| Some(r.text)).collect();
    let speaker = Int64Array::from(rows.iter().map(|r| r.speaker).collect::<Vec<_>>());
    let mut metadata = HashMap::new();
    if let Some(m) = meta {
        metadata.insert("huggingface".to_owned(), m.to_owned());
    }
    let schema = Schema::new_with_metadata(
        vec![
            Field::new("audio", DataType::Struct(audio_fields()), true),
            Field::new("text", DataType::Utf8, true),
            Field::new("speaker_id", DataType::Int64, true),
        ],
        metadata,
    );
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(audio), Arc::new(text), Arc::new(speaker)],
    )
    .unwrap()
}

/// Writes `batch` as Parquet in row groups of `group_rows`; `meta` goes into the file's
/// key-value metadata under `huggingface`, as pyarrow writes a table's schema metadata.
fn parquet(path: &Path, batch: &RecordBatch, group_rows: usize, meta: Option<&str>) {
    write_parquet(
        path,
        batch,
        props(meta).set_max_row_group_row_count(Some(group_rows)),
    );
}

fn props(meta: Option<&str>) -> WriterPropertiesBuilder {
    WriterProperties::builder().set_key_value_metadata(
        meta.map(|m| vec![KeyValue::new("huggingface".into(), m.to_owned())]),
    )
}

fn write_parquet(path: &Path, batch: &RecordBatch, props: WriterPropertiesBuilder) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props.build())).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// What reading `path` with the defaults is refused with.
fn refusal(path: &Path) -> String {
    open(path, &ReadOptions::default()).unwrap_err().to_string()
}

/// Reads `file` and checks it has `rows`, and row `k`'s bytes.
#[track_caller]
fn reads_back(file: &Path, rows: &[Row], k: usize) {
    let d = open(file, &ReadOptions::default()).unwrap();
    assert_eq!(d.items.len(), rows.len(), "{}", file.display());
    let (bytes, _) = row_bytes(file, d.items[k].member.as_ref().unwrap()).unwrap();
    assert_eq!(
        &bytes,
        rows[k].bytes.as_ref().unwrap(),
        "{}",
        file.display()
    );
}

/// What an item must be: id, text, speaker, row group, row, the decoder's name.
type Want = (
    &'static str,
    &'static str,
    &'static str,
    usize,
    usize,
    &'static str,
);

/// Checks `d`'s items against `want` (in order, lines 1, 2, ...), each in `file`, and that
/// [`row_bytes`] gives back exactly the bytes of `rows`, decodable, in `order`.
#[track_caller]
fn check(d: &Dataset, want: &[Want], files: &[&str], rows: &[Row], order: &[usize]) {
    assert_eq!(d.layout, Layout::HuggingFace);
    assert!(d.problems.is_empty(), "{:?}", d.problems);
    let got: Vec<Want> = d
        .items
        .iter()
        .map(|i| {
            let Some(Member::Row {
                name, group, row, ..
            }) = &i.member
            else {
                panic!("{} is not a row: {:?}", i.id, i.member)
            };
            (
                &*Box::leak(i.id.clone().into_boxed_str()),
                &*Box::leak(i.text.clone().into_boxed_str()),
                &*Box::leak(i.speaker.clone().unwrap_or_default().into_boxed_str()),
                *group,
                *row,
                &*Box::leak(name.clone().into_boxed_str()),
            )
        })
        .collect();
    assert_eq!(got, want);
    for (k, item) in d.items.iter().enumerate() {
        assert_eq!(item.line, k + 1);
        assert_eq!(item.audio, Path::new(files[k]), "{}", item.id);
        assert!(
            matches!(&item.member, Some(Member::Row { column, .. }) if column == "audio"),
            "{:?}",
            item.member
        );
    }
    for &k in order {
        let item = &d.items[k];
        let (bytes, name) = row_bytes(&d.audio_path(item), item.member.as_ref().unwrap()).unwrap();
        assert_eq!(&bytes, rows[k].bytes.as_ref().unwrap(), "row {k}");
        let audio = gpufeed_audio::decode::decode_bytes(&bytes, Path::new(&name), RATE).unwrap();
        assert!(!audio.samples.is_empty());
    }
}

/// The items [`five`] makes in row groups of three.
const FIVE: [Want; 5] = [
    ("a1", "Привет, мир", "19", 0, 0, "a1.wav"),
    ("a2", "日本語のテキスト", "19", 0, 1, "a2.wav"),
    ("b1", "Hello there", "250", 0, 2, "b1.wav"),
    ("b2", "Ünïcödé stays", "250", 1, 0, "b2.wav"),
    ("c1", "The last one", "7", 1, 1, "c1.wav"),
];

#[test]
fn parquet_with_the_audio_feature_in_two_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let file = dir.path().join("train.parquet");
    parquet(&file, &batch(&rows, None), 3, Some(HF_META));
    assert_eq!(super::super::fit(Layout::HuggingFace, &file), 3);
    let d = open(&file, &ReadOptions::default()).unwrap();
    assert!(d.detected.starts_with("detected"), "{}", d.detected);
    // Consecutive rows, then back and forth across the row groups (the cache is refilled).
    check(
        &d,
        &FIVE,
        &["train.parquet"; 5],
        &rows,
        &[0, 1, 2, 3, 4, 0, 4, 1, 3],
    );
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("audio: column `audio` (its `Audio` feature"),
        "{notes}"
    );
    assert!(notes.contains("text=text, speaker=speaker_id"), "{notes}");
    assert!(notes.contains("1 Parquet file(s), 5 row(s)"), "{notes}");
}

/// A `save_to_disk` folder: `state.json`, `dataset_info.json` and its Arrow IPC stream, in
/// record batches of three rows, with a `ClassLabel` column.
fn saved(dir: &Path, rows: &[Row]) {
    let meta = HF_META.replace(
        r#""speaker_id""#,
        r#""gender": {"names": ["female", "male"], "_type": "ClassLabel"}, "speaker_id""#,
    );
    let b = batch(rows, Some(&meta));
    let gender = Int64Array::from((0..rows.len() as i64).map(|k| k % 2).collect::<Vec<_>>());
    let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| (**f).clone()).collect();
    fields.push(Field::new("gender", DataType::Int64, true));
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        b.schema().metadata().clone(),
    ));
    let mut columns = b.columns().to_vec();
    columns.push(Arc::new(gender));
    let b = RecordBatch::try_new(schema.clone(), columns).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::File::create(dir.join("data-00000-of-00001.arrow")).unwrap();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(file, &schema).unwrap();
    w.write(&b.slice(0, 3)).unwrap();
    w.write(&b.slice(3, rows.len() - 3)).unwrap();
    w.finish().unwrap();
    write(
        &dir.join("state.json"),
        r#"{"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_fingerprint": "f00d", "_format_columns": null, "_format_kwargs": {}, "_format_type": null, "_output_all_columns": false, "_split": "train"}"#,
    );
    write(
        &dir.join("dataset_info.json"),
        &format!("{{\"features\": {meta}}}"),
    );
}

#[test]
fn save_to_disk_folder_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    saved(dir.path(), &rows);
    assert_eq!(super::super::fit(Layout::HuggingFace, dir.path()), 3);
    let d = open(dir.path(), &ReadOptions::default()).unwrap();
    // Forward through the stream, then back to the first batch (the stream is reopened).
    check(
        &d,
        &FIVE,
        &["data-00000-of-00001.arrow"; 5],
        &rows,
        &[0, 1, 3, 4, 2, 0],
    );
    let genders: Vec<&str> = d
        .items
        .iter()
        .map(|i| i.fields["gender"].as_str())
        .collect();
    assert_eq!(genders, ["female", "male", "female", "male", "female"]);
    assert!(
        d.notes.join("\n").contains("Arrow IPC stream"),
        "{:?}",
        d.notes
    );
}

#[test]
fn a_dataset_dict_is_refused_naming_its_splits() {
    let dir = tempfile::tempdir().unwrap();
    saved(&dir.path().join("train"), &five());
    saved(&dir.path().join("test"), &five());
    write(
        &dir.path().join("dataset_dict.json"),
        r#"{"splits": ["train", "test"]}"#,
    );
    assert_eq!(super::super::fit(Layout::HuggingFace, dir.path()), 3);
    let e = refusal(dir.path());
    assert!(
        e.contains("DatasetDict of the splits `train`, `test`") && e.contains("--data "),
        "{e}"
    );
    assert!(
        e.ends_with(&format!("`--data {}`", dir.path().join("train").display())),
        "{e}"
    );
    let d = open(&dir.path().join("test"), &ReadOptions::default()).unwrap();
    assert_eq!(d.items.len(), 5);
}

#[test]
fn hub_layout_reads_the_data_folder_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let b = batch(&rows, None);
    let data = dir.path().join("data");
    // Written second-first: the order is the names'.
    parquet(
        &data.join("train-00001-of-00002.parquet"),
        &b.slice(3, 2),
        100,
        Some(HF_META),
    );
    parquet(
        &data.join("train-00000-of-00002.parquet"),
        &b.slice(0, 3),
        100,
        Some(HF_META),
    );
    write(
        &dir.path().join("README.md"),
        "---\nlicense: cc0-1.0\n---\n",
    );
    assert_eq!(super::super::fit(Layout::HuggingFace, dir.path()), 2);
    let d = open(dir.path(), &ReadOptions::default()).unwrap();
    let want = [
        ("a1", "Привет, мир", "19", 0, 0, "a1.wav"),
        ("a2", "日本語のテキスト", "19", 0, 1, "a2.wav"),
        ("b1", "Hello there", "250", 0, 2, "b1.wav"),
        ("b2", "Ünïcödé stays", "250", 0, 0, "b2.wav"),
        ("c1", "The last one", "7", 0, 1, "c1.wav"),
    ];
    let first = "data/train-00000-of-00002.parquet";
    let second = "data/train-00001-of-00002.parquet";
    check(
        &d,
        &want,
        &[first, first, first, second, second],
        &rows,
        &[0, 3, 1, 4, 2],
    );
    assert!(d.notes.join("\n").contains("2 Parquet file(s), 5 row(s)"));

    // A second split beside it: refused, naming both.
    parquet(
        &data.join("test-00000-of-00001.parquet"),
        &b.slice(0, 1),
        100,
        Some(HF_META),
    );
    let e = refusal(dir.path());
    assert!(
        e.contains("several splits: `test` (1 file), `train` (2 files)")
            && e.contains("--data ")
            && e.contains("test-00000-of-00001.parquet"),
        "{e}"
    );
    // One file of it is read.
    let d = open(
        &data.join("test-00000-of-00001.parquet"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(d.items.len(), 1);
}

/// A table without `datasets` metadata: `utt`, `recording` (WAV bytes), `sentence`, `spk`,
/// `gender`.
fn plain(path: &Path, rows: &[Row]) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("utt", DataType::Utf8, true),
        Field::new("recording", DataType::Binary, true),
        Field::new("sentence", DataType::Utf8, true),
        Field::new("spk", DataType::Utf8, true),
        Field::new("gender", DataType::Utf8, true),
    ]));
    let utt: StringArray = (0..rows.len()).map(|k| Some(format!("utt{k}"))).collect();
    let bytes: BinaryArray = rows.iter().map(|r| r.bytes.as_deref()).collect();
    let text: StringArray = rows.iter().map(|r| Some(r.text)).collect();
    let spk: StringArray = rows
        .iter()
        .map(|r| Some(format!("p{}", r.speaker)))
        .collect();
    let gender: StringArray = rows.iter().map(|_| Some("F")).collect();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(utt),
            Arc::new(bytes),
            Arc::new(text),
            Arc::new(spk),
            Arc::new(gender),
        ],
    )
    .unwrap();
    parquet(path, &b, 2, None);
}

fn with_columns(spec: &str) -> ReadOptions {
    ReadOptions {
        columns: Columns::parse(spec).unwrap(),
        ..ReadOptions::default()
    }
}

#[test]
fn columns_map_a_file_without_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let file = dir.path().join("corpus.parquet");
    plain(&file, &rows);
    // No audio column is recognised: refused with the columns and the flag.
    let e = refusal(&file);
    assert!(
        e.contains("has no audio column")
            && e.contains("its columns: utt, recording, sentence, spk, gender")
            && e.contains("--columns audio=NAME"),
        "{e}"
    );
    let mut o = with_columns("audio=recording,text=sentence,speaker=spk,id=utt");
    let d = open(&file, &o).unwrap();
    assert!(d.problems.is_empty(), "{:?}", d.problems);
    let got: Vec<(&str, &str, Option<&str>, &str)> = d
        .items
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                i.text.as_str(),
                i.speaker.as_deref(),
                i.fields["gender"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("utt0", "Привет, мир", Some("p19"), "F"),
            ("utt1", "日本語のテキスト", Some("p19"), "F"),
            ("utt2", "Hello there", Some("p250"), "F"),
            ("utt3", "Ünïcödé stays", Some("p250"), "F"),
            ("utt4", "The last one", Some("p7"), "F"),
        ]
    );
    for (k, item) in d.items.iter().enumerate() {
        let Some(Member::Row {
            name, group, row, ..
        }) = &item.member
        else {
            panic!("{:?}", item.member)
        };
        // No file name in a binary column: the decoder probes the bytes.
        assert_eq!((name.as_str(), *group, *row), ("recording", k / 2, k % 2));
        let (bytes, _) = row_bytes(&d.audio_path(item), item.member.as_ref().unwrap()).unwrap();
        assert_eq!(Some(bytes), rows[k].bytes);
    }
    // A column `--columns` names that is not there.
    o.columns = Columns::parse("audio=recording,text=transcript").unwrap();
    let e = open(&file, &o).unwrap_err().to_string();
    assert!(
        e.contains("has no column `transcript` (`--columns text=transcript`); its columns: utt"),
        "{e}"
    );
    assert_eq!(o.columns.named[&Role::Text], "transcript");
}

#[test]
fn paths_instead_of_bytes_are_files_and_urls_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    wav(&dir.path().join("clips/b.wav"), 0.2, 1);
    let row = |path, bytes, text| Row {
        path,
        bytes,
        text,
        speaker: 1,
    };
    let rows = vec![
        row(Some("a.wav"), Some(wav_bytes(0.1)), "embedded"),
        row(Some("clips/b.wav"), None, "a file beside the table"),
        row(None, None, "neither bytes nor a path"),
        row(Some("/abs/c.flac"), None, "an absolute path"),
    ];
    let file = dir.path().join("mixed.parquet");
    parquet(&file, &batch(&rows, None), 10, Some(HF_META));
    let d = open(&file, &ReadOptions::default()).unwrap();
    let got: Vec<(&str, &Path, bool)> = d
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.audio.as_path(), i.member.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Path::new("mixed.parquet"), true),
            ("b", Path::new("clips/b.wav"), false),
            ("c", Path::new("/abs/c.flac"), false),
        ]
    );
    assert_eq!(d.problems.len(), 1);
    assert_eq!(
        (d.problems[0].line, d.problems[0].id.as_deref()),
        (3, Some("row-3"))
    );
    assert!(d.problems[0].reason.contains("neither bytes nor a path"));

    let rows = vec![row(Some("https://example.org/a.wav"), None, "remote")];
    let file = dir.path().join("remote.parquet");
    parquet(&file, &batch(&rows, None), 10, Some(HF_META));
    let e = refusal(&file);
    assert!(
        e.contains("is a URL (`https://example.org/a.wav`)") && e.contains("local audio only"),
        "{e}"
    );

    // A string column of paths, named by `--columns`, relative to the table's folder.
    let sub = dir.path().join("meta");
    wav(&sub.join("clips/x.wav"), 0.2, 1);
    let schema = Arc::new(Schema::new(vec![
        Field::new("file", DataType::Utf8, false),
        Field::new("transcription", DataType::Utf8, false),
    ]));
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["clips/x.wav"])),
            Arc::new(StringArray::from(vec!["Γειά σου"])),
        ],
    )
    .unwrap();
    parquet(&sub.join("list.parquet"), &b, 10, None);
    let o = with_columns("audio=file");
    let d = open(&dir.path().join("meta/list.parquet"), &o).unwrap();
    assert_eq!(d.items.len(), 1, "{:?}", d.problems);
    assert_eq!(
        (d.items[0].id.as_str(), d.items[0].text.as_str()),
        ("x", "Γειά σου")
    );
    assert!(d.audio_path(&d.items[0]).is_file());
}

#[test]
fn corrupt_files_and_unread_codecs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.parquet");
    write(&file, "PAR1 and then nothing a Parquet reader wants");
    let e = refusal(&file);
    assert!(
        e.contains("broken.parquet` is not a readable Parquet file (") && e.contains("again"),
        "{e}"
    );
    let file = dir.path().join("broken.arrow");
    write(&file, "not an arrow stream");
    let e = refusal(&file);
    assert!(
        e.contains("broken.arrow` is not a readable Arrow IPC stream file"),
        "{e}"
    );

    assert_eq!(unread_codec(Compression::LZO), Some("LZO"));
    assert_eq!(
        unread_codec(Compression::BROTLI(parquet::basic::BrotliLevel::default())),
        Some("BROTLI")
    );
    for read in [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::GZIP(parquet::basic::GzipLevel::default()),
        Compression::LZ4,
        Compression::LZ4_RAW,
        Compression::ZSTD(parquet::basic::ZstdLevel::default()),
    ] {
        assert_eq!(unread_codec(read), None);
    }
}

#[test]
fn compressed_files_pyarrow_writes_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    for (name, codec) in [
        ("snappy", Compression::SNAPPY),
        (
            "gzip",
            Compression::GZIP(parquet::basic::GzipLevel::default()),
        ),
        ("lz4", Compression::LZ4_RAW),
        (
            "zstd",
            Compression::ZSTD(parquet::basic::ZstdLevel::default()),
        ),
    ] {
        let file = dir.path().join(format!("{name}.parquet"));
        let b = batch(&rows, None);
        write_parquet(&file, &b, props(Some(HF_META)).set_compression(codec));
        reads_back(&file, &rows, 4);
    }
}

#[test]
fn listing_never_reads_the_audio_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let file = dir.path().join("t.parquet");
    write_parquet(
        &file,
        &batch(&rows, None),
        props(Some(HF_META)).set_compression(Compression::SNAPPY),
    );
    // Garble the second half of the `audio.bytes` column chunk: reading it fails.
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap();
    let leaf = bytes_leaf(builder.parquet_schema(), "audio", Storage::Struct).unwrap();
    let (start, len) = builder.metadata().row_group(0).column(leaf).byte_range();
    let (start, len) = (
        usize::try_from(start).unwrap(),
        usize::try_from(len).unwrap(),
    );
    let mut data = std::fs::read(&file).unwrap();
    data[start + len / 2..start + len].fill(0xFF);
    std::fs::write(&file, data).unwrap();
    // Listing is untouched; the row's bytes are refused, naming the file.
    let d = open(&file, &ReadOptions::default()).unwrap();
    assert_eq!(d.items.len(), 5, "{:?}", d.problems);
    let e = row_bytes(&file, d.items[0].member.as_ref().unwrap()).unwrap_err();
    assert!(
        e.contains("t.parquet` is not a readable Parquet file"),
        "{e}"
    );
}

#[test]
fn compressed_arrow_streams_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let b = batch(&rows, Some(HF_META));
    for (name, codec) in [
        ("lz4", arrow_ipc::CompressionType::LZ4_FRAME),
        ("zstd", arrow_ipc::CompressionType::ZSTD),
    ] {
        let file = dir.path().join(format!("{name}.arrow"));
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(Some(codec))
            .unwrap();
        let mut w = arrow_ipc::writer::StreamWriter::try_new_with_options(
            std::fs::File::create(&file).unwrap(),
            &b.schema(),
            options,
        )
        .unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        reads_back(&file, &rows, 3);
    }
}

#[test]
fn splits_of_hub_file_names() {
    assert_eq!(
        split_of("train-00000-of-00004.parquet").as_deref(),
        Some("train")
    );
    assert_eq!(
        split_of("train-00000-of-00001-449a25973f112c10.parquet").as_deref(),
        Some("train")
    );
    assert_eq!(
        split_of("librispeech-train.clean.100-00003-of-00014.parquet").as_deref(),
        Some("train.clean.100")
    );
    assert_eq!(split_of("test.parquet").as_deref(), Some("test"));
    assert_eq!(split_of("0000.parquet"), None);
    assert_eq!(split_of("part-00000-3f2a.parquet"), None);
}

#[test]
fn a_parquet_file_and_a_saved_folder_precompute_end_to_end() {
    // Today's code read a parquet file as lines of text: exit 0, an empty cache.
    let dir = tempfile::tempdir().unwrap();
    let rows = five();
    let file = dir.path().join("train.parquet");
    parquet(&file, &batch(&rows, None), 3, Some(HF_META));
    saved(&dir.path().join("saved"), &rows);
    for data in [file, dir.path().join("saved")] {
        let o = crate::precompute::Options {
            jobs: Some(2),
            ..crate::precompute::Options::new(&data, dir.path().join("cache"))
        };
        let r = crate::precompute::run(&o, &crate::precompute::Silent).unwrap();
        assert_eq!(r.layout, "huggingface");
        let cache = crate::cache::Cache::open(&r.cache_dir).unwrap();
        assert_eq!(cache.len(), 5, "{:?}", r.skipped);
        assert_eq!(cache.speaker_table(), ["19", "250", "7"]);
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(cache.item(k).text, row.text);
            // Each row's own audio: 0.1 s + 0.02 s per row.
            let want = 0.1 + 0.02 * k as f64;
            assert!(
                (cache.item(k).audio.duration_s - want).abs() < 1e-3,
                "row {k}"
            );
        }
    }
}
