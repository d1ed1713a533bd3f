//! The feature cache: sharded safetensors files and a JSON manifest, read zero-copy.
//!
//! # Layout
//!
//! ```text
//! CACHE/                                 --cache, default DATA/.gpufeed-cache
//!   <key>/                               key: 16 hex digits of blake3(format version, audio
//!                                        settings, text settings and cleaner version)
//!     shard-00000-<hash>.safetensors     256 utterances each; <hash> covers the members'
//!     shard-00001-<hash>.safetensors     ids, texts and source files (path, size, mtime)
//!     shard-00000-<hash>.codes.0.safetensors   a user's array beside its shard
//!                                        (`crate::user`: `codes`, `codes_offsets`)
//!     manifest.json                      written last, when every shard exists
//!     skipped.json                       utterances left out, with the reason
//!     .lock                              held while a run builds this cache
//! ```
//!
//! A changed setting gives another key, so a new folder: a cache is never reused for
//! settings it was not built with. A changed, added or removed utterance changes the hash
//! of its shard, so that shard (only) is rebuilt. Every file is written under a temporary
//! name (`.NAME.tmp-PID-XXXXXX`, gpufeed-fs) and renamed when complete, so a run killed at any moment leaves
//! only complete shards, and the next run resumes from them.
//!
//! # One shard
//!
//! A [safetensors](https://github.com/huggingface/safetensors) file (little-endian, data
//! aligned; the header is padded with spaces so that `mel` starts on a 4096-byte
//! boundary, which lets it be written with direct I/O) with four tensors:
//!
//! | tensor | dtype | shape | |
//! |---|---|---|---|
//! | `mel` | F32 | `[total_frames, n_mels]` | every utterance's frames, one after the other |
//! | `mel_offsets` | I64 | `[items + 1]` | utterance `i` is rows `mel_offsets[i]..mel_offsets[i+1]` |
//! | `tokens` | I32 | `[total_tokens]` | token ids, one utterance after the other |
//! | `token_offsets` | I64 | `[items + 1]` | the same for tokens |
//!
//! and, for each array of [`crate::arrays`] the cache was built with (`linear`, `energy`,
//! `f0` and `voiced`, `wav`), a tensor `NAME` of shape `[rows]` or `[rows, width]` and
//! `NAME_offsets` (I64, `[items + 1]`): utterance `i` is rows
//! `NAME_offsets[i]..NAME_offsets[i+1]` (the mel's frames, or `frames × hop_length` samples
//! for `wav`). The manifest lists them (`arrays`, each with its dtype, width and rows per
//! frame). They follow `tokens`, widest elements first, so every tensor is aligned.
//!
//! Arrays a user's function added ([`crate::user`]) are not in the shard: each has a file
//! of its own beside each shard, with the same two tensors, listed in the manifest
//! (`user_arrays`, with every file's size and checksum).
//!
//! `__metadata__["gpufeed"]` is a JSON object with the shard's utterances (the
//! [`CachedItem`] records) and the ones skipped. Lengths are the true lengths, before any
//! padding. Utterances longer than `data.max_text_length` / `data.max_mel_frames` are kept;
//! the manifest flags them (`over_text_length`, `over_mel_frames`) and records the caps
//! used (`limits`), so the loader applies its skip/truncate policy. From Python:
//!
//! ```python
//! from safetensors.numpy import load_file
//! t = load_file("shard-00000-....safetensors")
//! o = t["mel_offsets"]; mel_3 = t["mel"][o[3]:o[4]]          # (frames, n_mels) float32
//! ```
//!
//! `manifest.json` ([`Manifest`]) lists the settings, the symbol table of the tokenizer,
//! every utterance with its shard and row, the shards (size and xxh3-128 checksum:
//! `xxhash.xxh3_128_hexdigest(open(shard, "rb").read())` in Python) and the totals.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::SafeTensors;
use safetensors::tensor::Dtype;
use serde::{Deserialize, Serialize};

use gpufeed_config::{AudioSettings, TextSettings};

use crate::arrays::{ArraySpec, ItemArrays};
use crate::error::DataError;
use crate::fsx;

/// Name of the format, in every manifest and shard.
pub const FORMAT: &str = "gpufeed-cache";
/// Version of the format; part of the key, so a new version never reads an old cache.
/// 2: shards carry a blake3 hash in the manifest. 3: an xxh3-128 checksum instead (a
/// tenth of the CPU time: it is computed for every shard written), header padded so that
/// `mel` starts on a 4096-byte boundary. 4: each item carries its transcript (`text`), for
/// readers that show or re-tokenise it (the Python `Cache[i]`). 5: items carry their
/// segment, speaker, language and other fields, the manifest the layout and the speaker and
/// language tables, and the symbol table is built from the dataset's text. 6: the arrays
/// beside the mel (`linear`, `energy`, `f0`/`voiced`, `wav`), listed in the manifest and
/// part of the key.
pub const VERSION: u32 = 6;
/// Utterances per shard: ~45 MB of LJSpeech features, large enough for sequential reads,
/// small enough that a killed run loses little.
pub const SHARD_ITEMS: usize = 256;
/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";
/// The skipped list's file name.
pub const SKIPPED: &str = "skipped.json";

/// Everything that changes the cached arrays: what the key is computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureSettings {
    /// Audio and mel settings.
    pub audio: AudioSettings,
    /// Text settings.
    pub text: TextSettings,
    /// Fingerprint of the text pipeline (settings and cleaner/tokenizer version).
    pub text_fingerprint: String,
    /// The arrays cached besides the mel and tokens.
    #[serde(default)]
    pub arrays: crate::arrays::Arrays,
}

impl FeatureSettings {
    /// The settings, with the text pipeline's fingerprint filled in.
    #[must_use]
    pub fn new(audio: AudioSettings, text: TextSettings) -> Self {
        let text_fingerprint = gpufeed_text::settings_fingerprint(&text);
        Self {
            audio,
            text,
            text_fingerprint,
            arrays: crate::arrays::Arrays::default(),
        }
    }

    /// The same settings caching `arrays` besides the mel.
    #[must_use]
    pub fn with_arrays(self, arrays: crate::arrays::Arrays) -> Self {
        Self { arrays, ..self }
    }

    /// The cache key: 16 hex digits of blake3 over the format, its version and the settings.
    #[must_use]
    pub fn key(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(FORMAT.as_bytes());
        h.update(&VERSION.to_le_bytes());
        // serde_json's output of a given struct is deterministic (fields in order).
        h.update(serde_json::to_string(self).unwrap_or_default().as_bytes());
        h.finalize().to_hex()[..16].to_string()
    }
}

/// Identity of a source file: if any of these change, the features are recomputed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct SourceId {
    /// Path relative to the dataset root.
    pub path: PathBuf,
    /// Size in bytes (0 when missing).
    pub size: u64,
    /// Modification time, ns since the epoch (0 when missing or unknown).
    pub mtime_ns: u128,
}

impl SourceId {
    /// Reads the identity of `root/rel`; a missing file has size and mtime 0.
    #[must_use]
    pub fn of(root: &Path, rel: &Path) -> Self {
        let meta = std::fs::metadata(root.join(rel)).ok();
        let mtime_ns = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Self {
            path: rel.to_path_buf(),
            size: meta.map_or(0, |m| m.len()),
            mtime_ns,
        }
    }
}

/// Audio facts about an utterance, measured while decoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct AudioFacts {
    /// Duration in seconds.
    pub duration_s: f64,
    /// Sample rate of the file.
    pub source_rate: u32,
    /// Largest absolute sample value.
    pub peak: f32,
    /// Samples at full scale in the file.
    pub clipped_samples: usize,
    /// Share of the audio that is silence.
    pub silence_fraction: f64,
}

/// One cached utterance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CachedItem {
    /// Its id.
    pub id: String,
    /// Its transcript as the manifest gives it (the column the tokens were made from).
    #[serde(default)]
    pub text: String,
    /// Manifest line it came from.
    pub line: usize,
    /// Shard index.
    pub shard: u32,
    /// Row within the shard.
    pub row: u32,
    /// True number of mel frames.
    pub mel_frames: u32,
    /// True number of tokens.
    pub text_tokens: u32,
    /// Audio facts.
    pub audio: AudioFacts,
    /// Source file identity.
    pub source: SourceId,
    /// Segment of the source: start, seconds (0 for a whole file).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset_s: f64,
    /// Segment of the source: length asked for, seconds (`None`: to its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_s: Option<f64>,
    /// Speaker, as the dataset names it; its index is its place in
    /// [`Manifest::speakers`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// Language, as the dataset writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Other string fields the dataset gives (the original text beside the normalised
    /// one, gender, ...).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fields: std::collections::BTreeMap<String, String>,
    /// More tokens than the manifest's `limits.max_text_length`: kept, for the loader's
    /// over-length policy (skip or truncate) to decide.
    #[serde(default)]
    pub over_text_length: bool,
    /// More frames than `limits.max_mel_frames`: likewise.
    #[serde(default)]
    pub over_mel_frames: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The length caps the flags of a manifest were computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Limits {
    /// Token cap (`data.max_text_length`).
    pub max_text_length: Option<usize>,
    /// Frame cap (`data.max_mel_frames`).
    pub max_mel_frames: Option<usize>,
}

impl Limits {
    /// Sets the over-length flags of `items`.
    pub fn flag(&self, items: &mut [CachedItem]) {
        for it in items {
            it.over_text_length = self
                .max_text_length
                .is_some_and(|m| it.text_tokens as usize > m);
            it.over_mel_frames = self
                .max_mel_frames
                .is_some_and(|m| it.mel_frames as usize > m);
        }
    }
}

/// An utterance left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Its id, if known.
    pub id: Option<String>,
    /// Manifest line.
    pub line: usize,
    /// The audio file, if known.
    pub audio: Option<PathBuf>,
    /// Why.
    pub reason: String,
}

/// What a shard's `__metadata__["gpufeed"]` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// Cache key.
    pub key: String,
    /// Shard index.
    pub shard: u32,
    /// Its utterances, in row order.
    pub items: Vec<CachedItem>,
    /// Utterances of this shard's slice that were left out.
    pub skipped: Vec<Skipped>,
}

/// A shard in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardEntry {
    /// File name.
    pub file: String,
    /// Utterances in it.
    pub items: usize,
    /// Size in bytes.
    pub bytes: u64,
    /// xxh3-128 of the file, 32 hex digits (Python: `xxhash.xxh3_128_hexdigest(data)`):
    /// [`Cache::verify`] checks it. A checksum against corruption, not a signature.
    /// (Absent before version 3, whose manifests are refused by their version.)
    #[serde(default)]
    pub xxh3: String,
}

impl ShardEntry {
    /// The entry of the shard `dir/file` holding `items` utterances: its size and hash.
    pub fn of(dir: &Path, file: &str, items: usize) -> Result<Self, DataError> {
        let path = dir.join(file);
        Ok(Self {
            file: file.to_string(),
            items,
            bytes: fsx::metadata(&path)?.len(),
            xxh3: hash_file(&path)?,
        })
    }
}

/// xxh3-128 of a file, hex.
fn hash_file(path: &Path) -> Result<String, DataError> {
    use std::io::Read as _;
    let mut file = fsx::open(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(DataError::io(path, e)),
        }
    }
    Ok(hex128(h.digest128()))
}

/// A 128-bit checksum as Python's `hexdigest` writes it.
fn hex128(v: u128) -> String {
    format!("{v:032x}")
}

/// Totals over the cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Totals {
    /// Utterances cached.
    pub items: usize,
    /// Utterances left out.
    pub skipped: usize,
    /// Mel frames.
    pub mel_frames: u64,
    /// Tokens.
    pub tokens: u64,
    /// Audio, seconds.
    pub audio_s: f64,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// Cache key.
    pub key: String,
    /// The settings the features were computed with.
    pub settings: FeatureSettings,
    /// The tokenizer's symbol table, so a model knows what each id means.
    pub symbols: serde_json::Value,
    /// The caps the items' over-length flags were computed with.
    #[serde(default)]
    pub limits: Limits,
    /// The dataset manifest the cache was built from.
    pub dataset: PathBuf,
    /// The dataset's layout (`ljspeech`, `libritts`, `nemo`, ...).
    #[serde(default)]
    pub layout: String,
    /// Speakers of the cached items, sorted: an item's speaker index is its place here.
    #[serde(default)]
    pub speakers: Vec<String>,
    /// Languages of the cached items, sorted.
    #[serde(default)]
    pub languages: Vec<String>,
    /// The arrays each shard holds besides `mel` and `tokens`, in storage order.
    #[serde(default)]
    pub arrays: Vec<ArraySpec>,
    /// Arrays a user's function added ([`crate::user`]), each in its own files beside the
    /// shards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_arrays: Vec<crate::user::UserArrayEntry>,
    /// Which gpufeed wrote it.
    pub written_by: String,
    /// Shards in index order.
    pub shards: Vec<ShardEntry>,
    /// Utterances in dataset order.
    pub items: Vec<CachedItem>,
    /// Utterances left out.
    pub skipped: Vec<Skipped>,
    /// Totals.
    pub totals: Totals,
}

impl Manifest {
    /// Every file of the cache it lists: the shards, then the user arrays' files.
    pub fn files(&self) -> impl Iterator<Item = &ShardEntry> {
        self.shards
            .iter()
            .chain(self.user_arrays.iter().flat_map(|u| &u.shards))
    }
}

/// Writes `dir/manifest.json` atomically.
pub(crate) fn write_manifest_file(dir: &Path, manifest: &Manifest) -> Result<(), DataError> {
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| DataError::Corrupt {
        path: dir.join(MANIFEST),
        reason: e.to_string(),
    })?;
    fsx::write_atomic(&dir.join(MANIFEST), &json)
}

/// Bytes of one direct-I/O block: file offsets, lengths and buffer addresses of `O_DIRECT`
/// writes are multiples of it (4096 covers 512-byte and 4K-sector devices).
const BLOCK: usize = 4096;

/// A growable byte buffer in an anonymous memory mapping: page-aligned, as `O_DIRECT`
/// needs (`Vec<u8>` only promises byte alignment), and grown without copying as long as
/// it stays within its reservation: untouched pages of a mapping cost nothing, so the
/// first one reserves [`AlignedBytes::RESERVE`] unless told otherwise. Its pages are asked to be huge pages: a
/// freshly touched 4 KiB page costs a fault each, which on a small VM made growing a
/// shard's `Vec` (copy on every doubling, zero-fill of every new page) 80 % of a run's
/// page faults.
#[derive(Default)]
struct AlignedBytes {
    map: Option<memmap2::MmapMut>,
    len: usize,
    /// The first reservation; 0 for [`AlignedBytes::RESERVE`].
    first: usize,
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

impl AlignedBytes {
    /// The first reservation: about five LJSpeech shards' features.
    const RESERVE: usize = 256 << 20;
    /// Huge page size on x86-64 and most arm64 kernels: reservations are multiples of it.
    const HUGE: usize = 2 << 20;

    /// Makes room for `end` bytes in all.
    fn reserve(&mut self, end: usize) -> Result<(), DataError> {
        let cap = self.map.as_ref().map_or(0, |m| m.len());
        if end <= cap {
            return Ok(());
        }
        let anon = |len: usize| memmap2::MmapOptions::new().len(len).map_anon();
        let first = if self.first == 0 {
            Self::RESERVE
        } else {
            self.first
        };
        let want = end.max(2 * cap).max(first).next_multiple_of(Self::HUGE);
        // A machine that refuses the reservation (strict overcommit) may still grant what
        // is needed now.
        let mut map = anon(want)
            .or_else(|_| anon(end.next_multiple_of(Self::HUGE)))
            .map_err(|cause| DataError::Memory { bytes: end, cause })?;
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage); // a hint; fine if refused
        if let Some(old) = &self.map {
            map[..self.len].copy_from_slice(&old[..self.len]);
        }
        self.map = Some(map);
        Ok(())
    }

    fn extend(&mut self, bytes: &[u8]) -> Result<(), DataError> {
        let end = self.len + bytes.len();
        self.reserve(end.next_multiple_of(BLOCK))?;
        if let Some(map) = &mut self.map {
            map[self.len..end].copy_from_slice(bytes);
        }
        self.len = end;
        Ok(())
    }

    /// Zero-fills the rest of the last block, so that [`AlignedBytes::padded`] sends
    /// zeros after the data. (Room for it was reserved by `extend`.)
    fn zero_pad(&mut self) {
        let end = self.len.next_multiple_of(BLOCK);
        if let Some(map) = &mut self.map {
            map[self.len..end].fill(0);
        }
    }

    /// The bytes up to the next block boundary: what a direct write of `len` bytes sends.
    fn padded(&self) -> &[u8] {
        self.map
            .as_ref()
            .map_or(&[], |m| &m[..self.len.next_multiple_of(BLOCK)])
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_ref().map_or(&[], |m| &m[..self.len])
    }

    fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

/// The arrays of one shard before writing, built utterance by utterance.
///
/// The mel frames go straight into a block-aligned buffer that becomes the file's mel
/// section as it is, so writing the shard copies nothing more and can bypass the page
/// cache (see [`write_shard`]). Reuse one `ShardData` for every shard ([`ShardData::clear`]
/// keeps its buffers): on small VMs a freshly allocated page costs several times a reused
/// one.
#[derive(Debug)]
pub struct ShardData {
    /// Mel frames, row-major `[frames, n_mels]` as `mel_dtype` bytes; `tokens` are
    /// appended while the shard is written and cut off again.
    body: AlignedBytes,
    /// How the mel is stored: f32, f16 or bf16.
    mel_dtype: crate::arrays::Dtype,
    /// The half-precision mel of one utterance, before it joins `body`.
    narrow: Vec<u16>,
    /// Row offsets into the mel (in frames), `items + 1` entries.
    mel_offsets: Vec<i64>,
    /// Token ids.
    tokens: Vec<i32>,
    /// Offsets into `tokens`, `items + 1` entries.
    token_offsets: Vec<i64>,
    /// The other arrays, in storage order.
    extras: Vec<Extra>,
}

/// One array beside the mel, while its shard is built.
#[derive(Debug)]
struct Extra {
    spec: ArraySpec,
    bytes: Vec<u8>,
    /// Row offsets, `items + 1` entries.
    offsets: Vec<i64>,
}

impl Default for ShardData {
    fn default() -> Self {
        Self {
            body: AlignedBytes::default(),
            mel_dtype: crate::arrays::Dtype::F32,
            narrow: Vec::new(),
            mel_offsets: vec![0],
            tokens: Vec::new(),
            token_offsets: vec![0],
            extras: Vec::new(),
        }
    }
}

impl ShardData {
    /// An empty shard.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty shard holding `arrays` besides the mel and tokens (each item's are given
    /// with [`ShardData::push_arrays`]).
    #[must_use]
    pub fn with_arrays(arrays: &[ArraySpec]) -> Self {
        Self {
            extras: arrays
                .iter()
                .map(|spec| Extra {
                    spec: spec.clone(),
                    bytes: Vec::new(),
                    offsets: vec![0],
                })
                .collect(),
            ..Self::default()
        }
    }

    /// The same shard storing the mel as `dtype` (f32, f16 or bf16; [`ShardData::push`]
    /// still takes f32 and rounds to nearest even).
    #[must_use]
    pub fn mel_as(self, dtype: crate::arrays::Dtype) -> Self {
        Self {
            mel_dtype: dtype,
            ..self
        }
    }

    /// Empties the shard, keeping its buffers for the next one.
    pub fn clear(&mut self) {
        self.body.truncate(0);
        self.tokens.clear();
        self.mel_offsets.clear();
        self.mel_offsets.push(0);
        self.token_offsets.clear();
        self.token_offsets.push(0);
        for e in &mut self.extras {
            e.bytes.clear();
            e.offsets.clear();
            e.offsets.push(0);
        }
    }

    /// Appends the other arrays of the utterance last pushed, in the order of the specs
    /// the shard was made with.
    ///
    /// # Errors
    ///
    /// [`DataError::Corrupt`] when their number or sizes do not fit the specs (a bug, not
    /// a data problem: nothing of it is written).
    pub fn push_arrays(&mut self, arrays: &ItemArrays) -> Result<(), DataError> {
        if arrays.0.len() != self.extras.len() {
            return Err(DataError::Corrupt {
                path: PathBuf::new(),
                reason: format!(
                    "{} arrays given for a shard of {}",
                    arrays.0.len(),
                    self.extras.len()
                ),
            });
        }
        for (e, bytes) in self.extras.iter_mut().zip(&arrays.0) {
            let row = e.spec.row_bytes().max(1);
            if bytes.len() % row != 0 {
                return Err(DataError::Corrupt {
                    path: PathBuf::new(),
                    reason: format!("`{}`: {} bytes is not whole rows", e.spec.name, bytes.len()),
                });
            }
            e.bytes.extend_from_slice(bytes);
            let last = e.offsets.last().copied().unwrap_or(0);
            e.offsets.push(last + (bytes.len() / row) as i64);
        }
        Ok(())
    }

    /// Appends one utterance; `mel` holds `frames × n_mels` values. Fails only when the
    /// machine has no memory left for the shard.
    pub fn push(&mut self, mel: &[f32], frames: usize, tokens: &[i32]) -> Result<(), DataError> {
        if crate::arrays::narrow_half(mel, self.mel_dtype, &mut self.narrow) {
            self.body.extend(bytemuck::cast_slice(&self.narrow))?;
        } else {
            self.body.extend(bytemuck::cast_slice(mel))?;
        }
        let last = self.mel_offsets.last().copied().unwrap_or(0);
        self.mel_offsets.push(last + frames as i64);
        self.tokens.extend_from_slice(tokens);
        self.token_offsets.push(self.tokens.len() as i64);
        Ok(())
    }

    /// Utterances pushed since the last clear.
    #[must_use]
    pub fn items(&self) -> usize {
        self.mel_offsets.len().saturating_sub(1)
    }
}

/// How [`write_shard`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteIo {
    /// `O_DIRECT` where the file system takes it (not tmpfs), else buffered: the shard
    /// goes from the buffer to the disk without a copy into the page cache, which on a
    /// VM is the writer's main cost (fresh page-cache pages), and a cache larger than
    /// memory does not push the training job's pages out.
    #[default]
    Direct,
    /// Ordinary writes through the page cache.
    Buffered,
}

/// Writes a shard atomically (temporary name, fsync, rename) and returns its manifest
/// entry: [`ShardWriter`] with no head reserved, everything written at the end.
pub fn write_shard(
    path: &Path,
    data: &mut ShardData,
    n_mels: usize,
    meta: &ShardMeta,
    io: WriteIo,
) -> Result<ShardEntry, DataError> {
    ShardWriter::new(path, n_mels, io, 0).finish(data, meta)
}

/// Writes one shard while it is being built: the mel frames go to disk in large
/// direct writes as they arrive, and [`ShardWriter::finish`] adds the rest, the header
/// and the offsets, so that finishing a shard costs little more than its last megabytes.
///
/// The file is what `safetensors::serialize` writes for these four tensors (the I64
/// offsets first, then `mel` and `tokens`, all aligned), except that the header is padded
/// with spaces, as the format allows, so that `mel` starts at a fixed, block-aligned
/// offset chosen when the shard starts ([`head_reserve`]). Should the header outgrow that
/// reservation (very long skip reasons), the body is written again after the real head:
/// slower, never wrong. The layout is computed here because safetensors has no writer
/// for tensors that are written before their header; the header itself is safetensors'.
///
/// The checksum is computed from memory at the end, beside the last writes, not read back.
#[derive(Debug)]
pub struct ShardWriter {
    path: PathBuf,
    n_mels: usize,
    io: WriteIo,
    /// Bytes before `mel`: header and offsets, padded (a multiple of [`BLOCK`]).
    reserve: usize,
    /// Opened at the first early write.
    file: Option<fsx::PendingFile>,
    /// Whether `file` is in `O_DIRECT` mode.
    direct: bool,
    /// Bytes of the body written so far, at `reserve` (whole blocks).
    flushed: usize,
}

/// Body bytes gathered before an early write: large enough for the disk, small enough
/// that little is left to write when the shard's last utterance arrives.
const FLUSH_BYTES: usize = 8 << 20;

/// Head bytes to reserve for a shard of `items` utterances whose ids and audio paths
/// total `string_bytes`, with `arrays` arrays beside the mel: an upper bound for the header and offsets in all but odd cases
/// (a record with every number at its widest, escaped twice, is under 640 bytes plus its
/// strings, which escaping can at most multiply by 7; a skip reason takes the place of a
/// record).
#[must_use]
pub fn head_reserve(items: usize, string_bytes: usize, arrays: usize) -> usize {
    (BLOCK
        + items * (HEAD_BYTES_PER_ITEM + 16 + 8 * arrays)
        + arrays * HEAD_BYTES_PER_ARRAY
        + 7 * string_bytes)
        .next_multiple_of(BLOCK)
}

/// Header bytes of one array beside the mel: its two tensors' entries (name, dtype, shape,
/// offsets), at their widest.
const HEAD_BYTES_PER_ARRAY: usize = 256;

/// See [`head_reserve`]; a test checks it against the widest record.
const HEAD_BYTES_PER_ITEM: usize = 640;

impl ShardWriter {
    /// A writer for the shard at `path`; `reserve` is [`head_reserve`] for the shard's
    /// planned utterances, or 0 to write everything at [`ShardWriter::finish`].
    #[must_use]
    pub fn new(path: &Path, n_mels: usize, io: WriteIo, reserve: usize) -> Self {
        Self {
            path: path.to_path_buf(),
            n_mels,
            io,
            reserve: reserve.next_multiple_of(BLOCK),
            file: None,
            direct: false,
            flushed: 0,
        }
    }

    /// Writes the whole blocks of `data`'s body gathered since the last write, once
    /// there are 8 MB of them.
    pub fn write_ready(&mut self, data: &ShardData) -> Result<(), DataError> {
        if self.reserve == 0 || data.body.len < self.flushed + FLUSH_BYTES {
            return Ok(());
        }
        let end = data.body.len / BLOCK * BLOCK;
        let bytes = &data.body.padded()[self.flushed..end];
        self.write_body(bytes, self.reserve + self.flushed)?;
        self.flushed = end;
        Ok(())
    }

    /// Opens the temporary file on first use, in direct mode where asked and possible.
    fn open(&mut self) -> Result<(), DataError> {
        if self.file.is_none() {
            let file = fsx::PendingFile::create(&self.path)?;
            self.direct = self.io == WriteIo::Direct && set_direct(file.file(), true).is_ok();
            self.file = Some(file);
        }
        Ok(())
    }

    /// Writes body bytes (whole blocks from an aligned buffer, unless it is the end) at
    /// file offset `at`; a file system that takes the direct flag but refuses direct
    /// writes gets ordinary ones.
    fn write_body(&mut self, bytes: &[u8], at: usize) -> Result<(), DataError> {
        use std::os::unix::fs::FileExt as _;
        self.open()?;
        let Some(pending) = &self.file else {
            return Ok(());
        };
        let (file, tmp) = (pending.file(), pending.tmp());
        match file.write_all_at(bytes, at as u64) {
            Err(e)
                if self.direct
                    && e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) =>
            {
                set_direct(file, false).map_err(|e| DataError::io(tmp, e))?;
                self.direct = false;
                file.write_all_at(bytes, at as u64)
                    .map_err(|e| DataError::io(tmp, e))
            }
            r => r.map_err(|e| DataError::io(tmp, e)),
        }
    }

    /// Writes what is left of the shard (the rest of the body, the tokens, the head),
    /// syncs and renames it; `data` keeps its mel frames (the tokens appended for the
    /// write are cut off again).
    pub fn finish(
        mut self,
        data: &mut ShardData,
        meta: &ShardMeta,
    ) -> Result<ShardEntry, DataError> {
        let mel_bytes = data.body.len;
        let head = self.head(data, meta)?;
        let result = self.finish_with(data, &head, meta.items.len());
        data.body.truncate(mel_bytes);
        result
    }

    /// The head: length, safetensors header, both offset arrays, padded so that `mel`
    /// starts on a block: at the reserved offset when the header fits there.
    fn head(&self, data: &ShardData, meta: &ShardMeta) -> Result<AlignedBytes, DataError> {
        use safetensors::tensor::{Metadata, TensorInfo};
        let corrupt = |reason: String| DataError::Corrupt {
            path: self.path.clone(),
            reason,
        };
        let mel_bytes = data.body.len;
        let frames = data.mel_offsets.last().copied().unwrap_or(0) as usize;
        let mut at = 0;
        let mut info = |name: &str, dtype: Dtype, shape: Vec<usize>, bytes: usize| {
            at += bytes;
            (
                name.to_string(),
                TensorInfo {
                    dtype,
                    shape,
                    data_offsets: (at - bytes, at),
                },
            )
        };
        let offsets_len = 8
            * (data.mel_offsets.len()
                + data.token_offsets.len()
                + data.extras.iter().map(|e| e.offsets.len()).sum::<usize>());
        let mut tensors = vec![
            info(
                "mel_offsets",
                Dtype::I64,
                vec![data.mel_offsets.len()],
                8 * data.mel_offsets.len(),
            ),
            info(
                "token_offsets",
                Dtype::I64,
                vec![data.token_offsets.len()],
                8 * data.token_offsets.len(),
            ),
        ];
        for e in &data.extras {
            tensors.push(info(
                &e.spec.offsets_name(),
                Dtype::I64,
                vec![e.offsets.len()],
                8 * e.offsets.len(),
            ));
        }
        tensors.push(info(
            "mel",
            data.mel_dtype.safetensors(),
            vec![frames, self.n_mels],
            mel_bytes,
        ));
        tensors.push(info(
            "tokens",
            Dtype::I32,
            vec![data.tokens.len()],
            4 * data.tokens.len(),
        ));
        for e in &data.extras {
            let rows = e.bytes.len() / e.spec.row_bytes().max(1);
            let shape = if e.spec.width == 1 {
                vec![rows]
            } else {
                vec![rows, e.spec.width]
            };
            tensors.push(info(
                &e.spec.name,
                e.spec.dtype.safetensors(),
                shape,
                e.bytes.len(),
            ));
        }
        let meta_json = serde_json::to_string(meta).map_err(|e| corrupt(e.to_string()))?;
        let header = Metadata::new(
            Some(HashMap::from([("gpufeed".to_string(), meta_json)])),
            tensors,
        )
        .map_err(|e| corrupt(e.to_string()))?;
        let mut header = serde_json::to_vec(&header).map_err(|e| corrupt(e.to_string()))?;
        let least = 8 + header.len() + offsets_len;
        let head_len = if least <= self.reserve {
            self.reserve
        } else {
            least.next_multiple_of(BLOCK)
        };
        header.resize(head_len - 8 - offsets_len, b' ');
        let mut head = AlignedBytes {
            first: head_len,
            ..AlignedBytes::default()
        };
        head.extend(&(header.len() as u64).to_le_bytes())?;
        head.extend(&header)?;
        head.extend(bytemuck::cast_slice(&data.mel_offsets))?;
        head.extend(bytemuck::cast_slice(&data.token_offsets))?;
        for e in &data.extras {
            head.extend(bytemuck::cast_slice(&e.offsets))?;
        }
        Ok(head)
    }

    fn finish_with(
        &mut self,
        data: &mut ShardData,
        head: &AlignedBytes,
        items: usize,
    ) -> Result<ShardEntry, DataError> {
        use std::os::unix::fs::FileExt as _;
        if head.len != self.reserve {
            // The header outgrew its reservation (or none was made): the body goes after
            // the real head, from its start.
            self.reserve = head.len;
            self.flushed = 0;
        }
        data.body.extend(bytemuck::cast_slice(&data.tokens))?;
        for e in &data.extras {
            data.body.extend(&e.bytes)?;
        }
        data.body.zero_pad();
        let body = &data.body;
        let total = head.len + body.len;
        let hash = std::thread::scope(|s| -> Result<String, DataError> {
            // The checksum runs beside the last writes.
            let hasher = s.spawn(|| {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                h.update(head.bytes());
                h.update(body.bytes());
                hex128(h.digest128())
            });
            // The rest of the body: whole blocks from the aligned buffer, the zero padding
            // after the end cut off below.
            self.write_body(&body.padded()[self.flushed..], self.reserve + self.flushed)?;
            let Some(pending) = &self.file else {
                return Err(DataError::io(
                    &self.path,
                    std::io::ErrorKind::NotFound.into(),
                ));
            };
            let (file, tmp) = (pending.file(), pending.tmp());
            // The head goes through the page cache: opening the cache and merging manifests
            // read it right after.
            if self.direct {
                set_direct(file, false).map_err(|e| DataError::io(tmp, e))?;
            }
            file.write_all_at(head.bytes(), 0)
                .and_then(|()| file.set_len(total as u64))
                .map_err(|e| DataError::io(tmp, e))?;
            hasher.join().map_err(|_| DataError::Corrupt {
                path: self.path.clone(),
                reason: "the checksum thread panicked".into(),
            })
        })?;
        if let Some(pending) = self.file.take() {
            pending.commit()?;
        }
        Ok(ShardEntry {
            file: self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            items,
            bytes: total as u64,
            xxh3: hash,
        })
    }
}

/// Turns `O_DIRECT` on or off for an open file (tmpfs and some others refuse it).
fn set_direct(file: &std::fs::File, on: bool) -> std::io::Result<()> {
    use rustix::fs::OFlags;
    let flags = rustix::fs::fcntl_getfl(file)?;
    let flags = if on {
        flags | OFlags::DIRECT
    } else {
        flags - OFlags::DIRECT
    };
    Ok(rustix::fs::fcntl_setfl(file, flags)?)
}

/// Whether the shard at `path` is complete and consistent: its header parses, every tensor
/// (`arrays` beside the mel too) lies inside the file and its offsets agree. A run resumes only from such shards.
#[must_use]
pub fn shard_is_sound(path: &Path, mel: MelShape, arrays: &[ArraySpec]) -> bool {
    check_shard(path, mel, arrays).is_ok()
}

/// How a cache stores the mel: bands per frame and element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MelShape {
    /// Bands per frame.
    pub n_mels: usize,
    /// f32, f16 or bf16.
    pub dtype: crate::arrays::Dtype,
}

impl MelShape {
    /// The mel of a cache built with `settings`.
    #[must_use]
    pub fn of(settings: &FeatureSettings) -> Self {
        Self {
            n_mels: settings.audio.n_mels,
            dtype: settings.arrays.mel.dtype(),
        }
    }
}

/// As [`shard_is_sound`], with what is wrong.
pub fn check_shard(path: &Path, mel: MelShape, arrays: &[ArraySpec]) -> Result<(), DataError> {
    read_shard_meta(path)?;
    open_shard(path, mel, arrays).map(drop)
}

/// Reads a shard's metadata (header only; the arrays are not touched).
pub fn read_shard_meta(path: &Path) -> Result<ShardMeta, DataError> {
    let file = fsx::open(path)?;
    let mmap = map(&file, path)?;
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let (_, header) = SafeTensors::read_metadata(&mmap).map_err(|e| corrupt(e.to_string()))?;
    let json = header
        .metadata()
        .as_ref()
        .and_then(|m| m.get("gpufeed"))
        .ok_or_else(|| corrupt("no `gpufeed` metadata".into()))?;
    serde_json::from_str(json).map_err(|e| corrupt(e.to_string()))
}

#[allow(unsafe_code)]
pub(crate) fn map(file: &std::fs::File, path: &Path) -> Result<Mmap, DataError> {
    // SAFETY: cache files are written under a temporary name and renamed into place; they
    // are never modified in place, so the mapped bytes cannot change under us (a rename or
    // delete by another run leaves this mapping on the old inode).
    unsafe { Mmap::map(file) }.map_err(|e| DataError::io(path, e))
}

/// One mapped shard.
#[derive(Debug)]
struct ShardView {
    mmap: Mmap,
    mel: std::ops::Range<usize>,
    mel_offsets: Vec<i64>,
    tokens: std::ops::Range<usize>,
    token_offsets: Vec<i64>,
    /// The arrays beside the mel, in the manifest's order: bytes and row offsets.
    extras: Vec<(std::ops::Range<usize>, Vec<i64>)>,
    /// The user arrays' files beside it, in the manifest's order.
    user: Vec<crate::user::UserView>,
}

/// One item's mel as the cache stores it, straight from the mapping.
#[derive(Debug, Clone, Copy)]
pub enum MelRef<'a> {
    /// 32-bit floats.
    F32(&'a [f32]),
    /// IEEE half precision.
    F16(&'a [half::f16]),
    /// bfloat16.
    Bf16(&'a [half::bf16]),
}

impl MelRef<'_> {
    /// Values (`frames × n_mels`).
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::F32(v) => v.len(),
            Self::F16(v) => v.len(),
            Self::Bf16(v) => v.len(),
        }
    }

    /// Whether it has no value.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes as stored.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Self::F32(v) => bytemuck::cast_slice(v),
            Self::F16(v) => bytemuck::cast_slice(v),
            Self::Bf16(v) => bytemuck::cast_slice(v),
        }
    }

    /// The first `out.len()` values as f32 (exact: every half value is an f32).
    pub fn widen(&self, out: &mut [f32]) {
        use half::slice::HalfFloatSliceExt as _;
        let n = out.len();
        match self {
            Self::F32(v) => out.copy_from_slice(&v[..n]),
            Self::F16(v) => v[..n].convert_to_f32_slice(out),
            Self::Bf16(v) => v[..n].convert_to_f32_slice(out),
        }
    }
}

/// One item's array beside the mel, straight from the mapping: `rows × width` elements of
/// `dtype`, little-endian, aligned to the element.
#[derive(Debug, Clone, Copy)]
pub struct ArrayRef<'a> {
    /// Its spec (name, dtype, width).
    pub spec: &'a ArraySpec,
    /// Rows.
    pub rows: usize,
    /// The bytes.
    pub bytes: &'a [u8],
}

/// A complete cache, open for reading. Arrays are read zero-copy from the mapped shards.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    manifest: Manifest,
    /// The built-in arrays, then the user arrays: what [`Cache::arrays`] lists.
    specs: Vec<ArraySpec>,
    /// Each array's most rows of one item, in the order of `specs`.
    max_rows: Vec<usize>,
    shards: Vec<ShardView>,
    /// Each item's index into [`Manifest::speakers`], -1 when it has no speaker.
    speaker_ids: Vec<i64>,
}

impl Cache {
    /// Opens the complete cache in `dir` (a `<key>` folder with `manifest.json`).
    pub fn open(dir: &Path) -> Result<Self, DataError> {
        let manifest = read_manifest(dir)?;
        let mel = MelShape::of(&manifest.settings);
        // A size check is cheap and catches a truncated or replaced shard; the hashes are
        // checked by `verify`, which reads every byte.
        for entry in manifest.files() {
            let path = dir.join(&entry.file);
            let size = fsx::metadata(&path)?.len();
            if size != entry.bytes {
                return Err(DataError::Corrupt {
                    path,
                    reason: format!(
                        "it is {size} bytes, the manifest says {}: truncated or replaced",
                        entry.bytes
                    ),
                });
            }
        }
        let mut shards = manifest
            .shards
            .iter()
            .map(|s| open_shard(&dir.join(&s.file), mel, &manifest.arrays))
            .collect::<Result<Vec<_>, _>>()?;
        for u in &manifest.user_arrays {
            for (k, (entry, shard)) in u.shards.iter().zip(&manifest.shards).enumerate() {
                let view = crate::user::open_file(&dir.join(&entry.file), &u.spec, shard.items)?;
                shards[k].user.push(view);
            }
        }
        // Check every record against its shard once, so that `mel(i)` and `tokens(i)` can
        // index without a failure path.
        for it in &manifest.items {
            let fits = shards.get(it.shard as usize).is_some_and(|s| {
                let r = it.row as usize;
                r + 1 < s.mel_offsets.len()
                    && r + 1 < s.token_offsets.len()
                    && s.mel_offsets[r + 1] - s.mel_offsets[r] == i64::from(it.mel_frames)
                    && s.token_offsets[r + 1] - s.token_offsets[r] == i64::from(it.text_tokens)
                    && manifest.arrays.iter().zip(&s.extras).all(|(spec, (_, o))| {
                        r + 1 < o.len()
                            && o[r + 1] - o[r]
                                == i64::from(it.mel_frames) * spec.rows_per_frame as i64
                    })
                    && s.user.iter().all(|u| r + 1 < u.offsets.len())
            });
            if !fits {
                return Err(DataError::Corrupt {
                    path: dir.join(MANIFEST),
                    reason: format!("item `{}` does not match shard {}", it.id, it.shard),
                });
            }
        }
        let table: HashMap<&str, i64> = manifest
            .speakers
            .iter()
            .enumerate()
            .map(|(k, s)| (s.as_str(), i64::try_from(k).unwrap_or(i64::MAX)))
            .collect();
        let mut speaker_ids = Vec::with_capacity(manifest.items.len());
        for it in &manifest.items {
            speaker_ids.push(match it.speaker.as_deref() {
                None => -1,
                Some(s) => *table.get(s).ok_or_else(|| DataError::Corrupt {
                    path: dir.join(MANIFEST),
                    reason: format!(
                        "item `{}` has speaker `{s}`, which `speakers` does not list",
                        it.id
                    ),
                })?,
            });
        }
        let specs = manifest
            .arrays
            .iter()
            .chain(manifest.user_arrays.iter().map(|u| &u.spec))
            .cloned()
            .collect();
        let longest = |offsets: &[i64]| offsets.windows(2).map(|w| (w[1] - w[0]) as usize).max();
        let max_rows = (0..manifest.arrays.len() + manifest.user_arrays.len())
            .map(|k| {
                shards
                    .iter()
                    .filter_map(|s| match s.extras.get(k) {
                        Some((_, o)) => longest(o),
                        None => longest(&s.user[k - s.extras.len()].offsets),
                    })
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
            specs,
            max_rows,
            shards,
            speaker_ids,
        })
    }

    /// Utterance `i`'s speaker: its index into [`Cache::speaker_table`], -1 for none.
    #[must_use]
    pub fn speaker(&self, i: usize) -> i64 {
        self.speaker_ids[i]
    }

    /// The speakers, sorted: a speaker's index is its place here.
    #[must_use]
    pub fn speaker_table(&self) -> &[String] {
        &self.manifest.speakers
    }

    /// Checks every shard against the xxh3 checksum in the manifest (reads every byte, at
    /// disk speed). A mismatch is [`DataError::Corrupt`] naming the shard.
    pub fn verify(&self) -> Result<(), DataError> {
        for entry in self.manifest.files() {
            let path = self.dir.join(&entry.file);
            let actual = hash_file(&path)?;
            if actual != entry.xxh3 {
                return Err(DataError::Corrupt {
                    path,
                    reason: format!("its xxh3 is {actual}, the manifest says {}", entry.xxh3),
                });
            }
        }
        Ok(())
    }

    /// The folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest.
    #[must_use]
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Number of utterances.
    #[must_use]
    pub fn len(&self) -> usize {
        self.manifest.items.len()
    }

    /// Whether there is none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.manifest.items.is_empty()
    }

    /// Mel bands per frame.
    #[must_use]
    pub fn n_mels(&self) -> usize {
        self.manifest.settings.audio.n_mels
    }

    /// Utterance `i`'s record.
    #[must_use]
    pub fn item(&self, i: usize) -> &CachedItem {
        &self.manifest.items[i]
    }

    /// Utterance `i`'s mel frames, row-major `(frames, n_mels)`, as stored: straight from
    /// the mapping.
    #[must_use]
    pub fn mel_ref(&self, i: usize) -> MelRef<'_> {
        use crate::arrays::Dtype as D;
        let it = &self.manifest.items[i];
        let s = &self.shards[it.shard as usize];
        let row = it.row as usize;
        let n = self.n_mels();
        let rows = s.mel_offsets[row] as usize * n..s.mel_offsets[row + 1] as usize * n;
        let bytes = &s.mmap[s.mel.clone()];
        match self.manifest.settings.arrays.mel.dtype() {
            D::F16 => MelRef::F16(&bytemuck::cast_slice(bytes)[rows]),
            D::Bf16 => MelRef::Bf16(&bytemuck::cast_slice(bytes)[rows]),
            _ => MelRef::F32(&bytemuck::cast_slice(bytes)[rows]),
        }
    }

    /// Utterance `i`'s mel frames, row-major `(frames, n_mels)`, as f32: borrowed from the
    /// mapping when stored so, widened (exactly) from half precision otherwise.
    #[must_use]
    pub fn mel(&self, i: usize) -> std::borrow::Cow<'_, [f32]> {
        match self.mel_ref(i) {
            MelRef::F32(v) => std::borrow::Cow::Borrowed(v),
            other => {
                let mut out = vec![0.0; other.len()];
                other.widen(&mut out);
                std::borrow::Cow::Owned(out)
            }
        }
    }

    /// How the mel is stored (f32 unless built with `mel:float16` or `mel:bfloat16`).
    #[must_use]
    pub fn mel_dtype(&self) -> crate::arrays::Dtype {
        self.manifest.settings.arrays.mel.dtype()
    }

    /// The arrays the cache holds beside `mel` and `tokens`: the built-in ones, then those
    /// a user's function added (rows per frame 0).
    #[must_use]
    pub fn arrays(&self) -> &[ArraySpec] {
        &self.specs
    }

    /// The most rows one item has of array `name`; `None` when the cache does not hold it.
    #[must_use]
    pub fn max_rows(&self, name: &str) -> Option<usize> {
        let k = self.specs.iter().position(|a| a.name == name)?;
        Some(self.max_rows[k])
    }

    /// Utterance `i`'s array `name` (one of [`Cache::arrays`]), straight from the mapping;
    /// `None` when the cache does not hold it.
    #[must_use]
    pub fn array(&self, name: &str, i: usize) -> Option<ArrayRef<'_>> {
        let k = self.specs.iter().position(|a| a.name == name)?;
        let spec = &self.specs[k];
        let it = &self.manifest.items[i];
        let s = &self.shards[it.shard as usize];
        let (bytes, range, offsets): (&[u8], _, _) = match s.extras.get(k) {
            Some((range, offsets)) => (&s.mmap, range, offsets),
            None => {
                let u = &s.user[k - s.extras.len()];
                (&u.mmap, &u.range, &u.offsets)
            }
        };
        let row = it.row as usize;
        let (a, b) = (offsets[row] as usize, offsets[row + 1] as usize);
        let width = spec.row_bytes();
        Some(ArrayRef {
            spec,
            rows: b - a,
            bytes: &bytes[range.start + a * width..range.start + b * width],
        })
    }

    /// Utterance `i`'s token ids, straight from the mapping.
    #[must_use]
    pub fn tokens(&self, i: usize) -> &[i32] {
        let it = &self.manifest.items[i];
        let s = &self.shards[it.shard as usize];
        let row = it.row as usize;
        let all: &[i32] = bytemuck::cast_slice(&s.mmap[s.tokens.clone()]);
        &all[s.token_offsets[row] as usize..s.token_offsets[row + 1] as usize]
    }
}

/// The largest cache manifest read (it lists every utterance, about 250 bytes each: a cache
/// of the most a dataset manifest may hold, 2^22 utterances, is about 1 GB); read at most
/// one byte past it.
pub const MAX_CACHE_MANIFEST_BYTES: u64 = 2 << 30;

/// The widest array row a manifest may declare (elements): a linear spectrogram of
/// `n_fft = 2^17` is 65,537 wide.
pub const MAX_ARRAY_WIDTH: usize = 1 << 17;
/// The most rows per mel frame an array may declare (the waveform has `hop_length`).
pub const MAX_ROWS_PER_FRAME: usize = 1 << 16;

/// Reads `dir/manifest.json` and checks its format and version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, DataError> {
    let path = dir.join(MANIFEST);
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.clone(),
        reason,
    };
    let bytes = fsx::read_capped(&path, MAX_CACHE_MANIFEST_BYTES)?.map_err(|size| {
        corrupt(format!(
            "it has {size}, and a cache manifest may have {} MiB at most",
            MAX_CACHE_MANIFEST_BYTES >> 20
        ))
    })?;
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if manifest.format != FORMAT || manifest.version != VERSION {
        return Err(corrupt(format!(
            "format `{}` version {}, this gpufeed reads `{FORMAT}` version {VERSION}",
            manifest.format, manifest.version
        )));
    }
    // Array shapes a reader can trust before it sizes anything by them: a hostile or
    // damaged manifest must not make the loader allocate `frames × 2^60` rows.
    if let Some(bad) = manifest.arrays.iter().find(|a| {
        !(1..=MAX_ARRAY_WIDTH).contains(&a.width)
            || !(1..=MAX_ROWS_PER_FRAME).contains(&a.rows_per_frame)
            || a.name.is_empty()
    }) {
        return Err(corrupt(format!(
            "array `{}` has width {} and {} rows per frame; gpufeed writes widths of 1 to \
             {MAX_ARRAY_WIDTH} and 1 to {MAX_ROWS_PER_FRAME} rows per frame",
            bad.name, bad.width, bad.rows_per_frame
        )));
    }
    for u in &manifest.user_arrays {
        let dup = manifest
            .arrays
            .iter()
            .chain(manifest.user_arrays.iter().map(|v| &v.spec))
            .filter(|a| a.name == u.spec.name)
            .count()
            > 1;
        let reason = if let Err(e) = crate::user::check_name(&u.spec.name) {
            e
        } else if dup {
            format!("array `{}` is listed twice", u.spec.name)
        } else if !(1..=MAX_ARRAY_WIDTH).contains(&u.spec.width) || u.spec.rows_per_frame != 0 {
            format!(
                "user array `{}` has width {} and {} rows per frame; gpufeed writes widths \
                 of 1 to {MAX_ARRAY_WIDTH} and 0 rows per frame",
                u.spec.name, u.spec.width, u.spec.rows_per_frame
            )
        } else if u.shards.len() != manifest.shards.len()
            || u.shards
                .iter()
                .zip(&manifest.shards)
                .any(|(a, s)| a.items != s.items)
        {
            format!(
                "user array `{}` has {} files for {} shards, or item counts unlike theirs",
                u.spec.name,
                u.shards.len(),
                manifest.shards.len()
            )
        } else {
            continue;
        };
        return Err(corrupt(reason));
    }
    // Shards are files of this folder: a manifest naming `../x` or `/x` (copied from
    // elsewhere, or hostile) must not make a reader open any other file of the machine.
    if let Some(bad) = manifest
        .files()
        .find(|s| Path::new(&s.file).file_name() != Some(std::ffi::OsStr::new(&s.file)))
    {
        return Err(corrupt(format!(
            "shard `{}` is not a file name of the cache folder",
            bad.file
        )));
    }
    Ok(manifest)
}

/// Asks the kernel to drop the page cache of every shard of the cache in `dir`
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`), so that the next reads come from the disk: how a
/// first epoch, or a dataset larger than memory, reads. Pages mapped by a live [`Cache`] are
/// not dropped, so call it with no cache of this folder open. Returns the bytes advised; an
/// error says why the kernel refused (the caller reports the cold figures as unavailable).
pub fn drop_page_cache(dir: &Path) -> Result<u64, DataError> {
    let manifest = read_manifest(dir)?;
    let mut bytes = 0;
    for shard in manifest.files() {
        let path = dir.join(&shard.file);
        let file = fsx::open(&path)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(|e| DataError::io(&path, e.into()))?;
        bytes += shard.bytes;
    }
    Ok(bytes)
}

/// A mapped safetensors file's header, to find its tensors by name with their checks.
pub(crate) struct Tensors<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    data_start: usize,
    header: safetensors::tensor::Metadata,
}

impl<'a> Tensors<'a> {
    /// Reads the header of the file `path` mapped as `bytes`.
    pub(crate) fn read(bytes: &'a [u8], path: &'a Path) -> Result<Self, DataError> {
        let (header_len, header) =
            SafeTensors::read_metadata(bytes).map_err(|e| DataError::Corrupt {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            path,
            bytes,
            data_start: 8 + header_len,
            header,
        })
    }

    fn corrupt(&self, reason: String) -> DataError {
        DataError::Corrupt {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    /// The byte range of tensor `name`, which must be of `dtype`, inside the file and
    /// aligned to its element.
    pub(crate) fn range(
        &self,
        name: &str,
        dtype: Dtype,
    ) -> Result<std::ops::Range<usize>, DataError> {
        let info = self
            .header
            .info(name)
            .ok_or_else(|| self.corrupt(format!("no tensor `{name}`")))?;
        if info.dtype != dtype {
            return Err(self.corrupt(format!(
                "tensor `{name}` is {:?}, expected {dtype:?}",
                info.dtype
            )));
        }
        let r = self.data_start + info.data_offsets.0..self.data_start + info.data_offsets.1;
        if r.end > self.bytes.len() {
            return Err(self.corrupt(format!("tensor `{name}` runs past the end of the file")));
        }
        // Zero-copy needs the element alignment; safetensors aligns data, and mappings start
        // on a page, so this only fails for a file gpufeed did not write.
        if !(self.bytes.as_ptr() as usize + r.start).is_multiple_of(dtype.bitsize().div_ceil(8)) {
            return Err(self.corrupt(format!("tensor `{name}` is not aligned")));
        }
        Ok(r)
    }

    /// Checks row offsets: from 0, never decreasing, within `len` rows.
    pub(crate) fn check_offsets(
        &self,
        offsets: &[i64],
        len: usize,
        name: &str,
    ) -> Result<(), DataError> {
        let monotone = offsets.windows(2).all(|w| w[0] <= w[1]);
        if offsets.first() != Some(&0)
            || !monotone
            || offsets.last().copied().unwrap_or(0) as usize > len
        {
            return Err(self.corrupt(format!("`{name}` offsets are inconsistent")));
        }
        Ok(())
    }
}

fn open_shard(path: &Path, shape: MelShape, arrays: &[ArraySpec]) -> Result<ShardView, DataError> {
    let file = fsx::open(path)?;
    let mmap = map(&file, path)?;
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let tensors = Tensors::read(&mmap, path)?;
    let range = |name: &str, dtype: Dtype| tensors.range(name, dtype);
    let check = |offsets: &[i64], len: usize, name: &str| tensors.check_offsets(offsets, len, name);
    let mel = range("mel", shape.dtype.safetensors())?;
    let tokens = range("tokens", Dtype::I32)?;
    let mel_offsets: Vec<i64> =
        bytemuck::cast_slice(&mmap[range("mel_offsets", Dtype::I64)?]).to_vec();
    let token_offsets: Vec<i64> =
        bytemuck::cast_slice(&mmap[range("token_offsets", Dtype::I64)?]).to_vec();
    check(
        &mel_offsets,
        mel.len() / shape.dtype.size() / shape.n_mels.max(1),
        "mel",
    )?;
    check(&token_offsets, tokens.len() / 4, "tokens")?;
    let mut extras = Vec::with_capacity(arrays.len());
    for spec in arrays {
        let bytes = range(&spec.name, spec.dtype.safetensors())?;
        let offsets: Vec<i64> =
            bytemuck::pod_collect_to_vec(&mmap[range(&spec.offsets_name(), Dtype::I64)?]);
        if offsets.len() != mel_offsets.len() {
            return Err(corrupt(format!(
                "`{}` has {} offsets for {} items",
                spec.offsets_name(),
                offsets.len(),
                mel_offsets.len().saturating_sub(1)
            )));
        }
        check(&offsets, bytes.len() / spec.row_bytes().max(1), &spec.name)?;
        extras.push((bytes, offsets));
    }
    Ok(ShardView {
        mmap,
        mel,
        mel_offsets,
        tokens,
        token_offsets,
        extras,
        user: Vec::new(),
    })
}

/// A small cache with known contents, for tests: item `i` has `lengths[i] = (frames,
/// tokens)`, every mel value of item `i` is `i as f32 + 0.5` and every token is `i + 4`.
#[cfg(test)]
pub(crate) fn synthetic(
    dir: &Path,
    lengths: &[(u32, u32)],
    n_mels: usize,
    per_shard: usize,
) -> Cache {
    fsx::create_dir_all(dir).unwrap();
    let mut items = Vec::new();
    let mut shards = Vec::new();
    for (s, chunk) in lengths.chunks(per_shard).enumerate() {
        let mut data = ShardData::new();
        let mut meta = ShardMeta {
            format: FORMAT.into(),
            version: VERSION,
            key: "test".into(),
            shard: s as u32,
            items: Vec::new(),
            skipped: Vec::new(),
        };
        for (row, &(frames, tokens)) in chunk.iter().enumerate() {
            let i = s * per_shard + row;
            data.push(
                &vec![i as f32 + 0.5; frames as usize * n_mels],
                frames as usize,
                &vec![i as i32 + 4; tokens as usize],
            )
            .unwrap();
            meta.items.push(CachedItem {
                id: format!("u{i}"),
                text: String::new(),
                line: i + 1,
                shard: s as u32,
                row: row as u32,
                mel_frames: frames,
                text_tokens: tokens,
                audio: AudioFacts {
                    duration_s: 1.0,
                    source_rate: 22050,
                    peak: 0.5,
                    clipped_samples: 0,
                    silence_fraction: 0.0,
                },
                source: SourceId {
                    path: format!("wavs/u{i}.wav").into(),
                    size: 1,
                    mtime_ns: 1,
                },
                over_text_length: false,
                over_mel_frames: false,
                ..CachedItem::default()
            });
        }
        let file = format!("shard-{s:05}-test.safetensors");
        // Both ways of writing; the entry computed from memory must be the file's.
        let io = if s % 2 == 0 {
            WriteIo::Direct
        } else {
            WriteIo::Buffered
        };
        let entry = write_shard(&dir.join(&file), &mut data, n_mels, &meta, io).unwrap();
        assert_eq!(entry, ShardEntry::of(dir, &file, meta.items.len()).unwrap());
        shards.push(entry);
        items.extend(meta.items);
    }
    let audio = AudioSettings {
        n_mels,
        ..AudioSettings::default()
    };
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        key: "test".into(),
        settings: FeatureSettings {
            audio,
            text: TextSettings::default(),
            text_fingerprint: "t".into(),
            arrays: crate::arrays::Arrays::default(),
        },
        symbols: serde_json::Value::Null,
        limits: Limits::default(),
        dataset: "metadata.csv".into(),
        layout: "ljspeech".into(),
        speakers: Vec::new(),
        languages: Vec::new(),
        arrays: Vec::new(),
        user_arrays: Vec::new(),
        written_by: "test".into(),
        shards,
        items,
        skipped: Vec::new(),
        totals: Totals::default(),
    };
    fsx::write_atomic(&dir.join(MANIFEST), &serde_json::to_vec(&manifest).unwrap()).unwrap();
    Cache::open(dir).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_are_pythons_xxh3_128() {
        // python3 -c "import xxhash; print(xxhash.xxh3_128_hexdigest(b'gpufeed'))" (4.1.0)
        assert_eq!(
            hex128(xxhash_rust::xxh3::xxh3_128(b"gpufeed")),
            "309fc3cf9e5f333fe7850fe37693f01f"
        );
    }

    #[test]
    fn shards_are_plain_safetensors_with_mel_on_a_block() {
        let tmp = tempfile::tempdir().unwrap();
        // Odd sizes everywhere: 3 mels, 5 and 2 frames, 3 and 0 tokens.
        let n_mels = 3;
        let mut data = ShardData::new();
        let mel_a: Vec<f32> = (0..15).map(|v| v as f32).collect();
        data.push(&mel_a, 5, &[1, 2, 3]).unwrap();
        data.push(&[9.5; 6], 2, &[]).unwrap();
        assert_eq!(data.items(), 2);
        let meta = ShardMeta {
            format: FORMAT.into(),
            version: VERSION,
            key: "k".into(),
            shard: 0,
            items: Vec::new(),
            skipped: Vec::new(),
        };
        for io in [WriteIo::Direct, WriteIo::Buffered] {
            let path = tmp.path().join(format!("shard-{io:?}.safetensors"));
            let entry = write_shard(&path, &mut data, n_mels, &meta, io).unwrap();
            let bytes = fsx::read(&path).unwrap();
            assert_eq!(entry.bytes, bytes.len() as u64);
            assert_eq!(entry.xxh3, hash_file(&path).unwrap());
            let st = SafeTensors::deserialize(&bytes).unwrap();
            let (header_len, header) = SafeTensors::read_metadata(&bytes).unwrap();
            let start = |name: &str| 8 + header_len + header.info(name).unwrap().data_offsets.0;
            assert_eq!(start("mel") % 4096, 0, "{io:?}");
            assert_eq!(start("mel_offsets") % 8, 0);
            assert_eq!(start("token_offsets") % 8, 0);
            assert_eq!(st.tensor("mel").unwrap().shape(), [7, 3]);
            // Copies: a `Vec<u8>` promises no alignment.
            let mel: Vec<f32> = bytemuck::pod_collect_to_vec(st.tensor("mel").unwrap().data());
            assert_eq!(&mel[..15], &mel_a[..]);
            assert_eq!(&mel[15..], &[9.5; 6]);
            let tokens: Vec<i32> =
                bytemuck::pod_collect_to_vec(st.tensor("tokens").unwrap().data());
            assert_eq!(tokens, [1, 2, 3]);
            let offsets = st.tensor("mel_offsets").unwrap();
            let offsets: Vec<i64> = bytemuck::pod_collect_to_vec(offsets.data());
            assert_eq!(offsets, [0, 5, 7], "{io:?}");
            // The buffer is intact for another write.
            assert_eq!(data.body.len, 21 * 4);
        }
        // Cleared, the buffer takes the next shard.
        data.clear();
        data.push(&[1.0; 3], 1, &[4]).unwrap();
        let path = tmp.path().join("second.safetensors");
        write_shard(&path, &mut data, n_mels, &meta, WriteIo::Direct).unwrap();
        let bytes = fsx::read(&path).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.tensor("mel").unwrap().shape(), [1, 3]);
    }

    fn widest_item(id: &str, text: &str, path: &str) -> CachedItem {
        CachedItem {
            id: id.into(),
            text: text.into(),
            line: usize::MAX,
            shard: u32::MAX,
            row: u32::MAX,
            mel_frames: u32::MAX,
            text_tokens: u32::MAX,
            audio: AudioFacts {
                duration_s: -2.225_073_858_507_201_4e-308,
                source_rate: u32::MAX,
                peak: -1.175_494_4e-38,
                clipped_samples: usize::MAX,
                silence_fraction: -2.225_073_858_507_201_4e-308,
            },
            source: SourceId {
                path: path.into(),
                size: u64::MAX,
                mtime_ns: u128::MAX,
            },
            over_text_length: false,
            over_mel_frames: false,
            ..CachedItem::default()
        }
    }

    fn meta_of(items: Vec<CachedItem>, skipped: Vec<Skipped>) -> ShardMeta {
        ShardMeta {
            format: FORMAT.into(),
            version: VERSION,
            key: "0123456789abcdef".into(),
            shard: u32::MAX,
            items,
            skipped,
        }
    }

    #[test]
    fn the_head_reserve_holds_the_widest_records() {
        // Plain names, and names that JSON escapes to the most bytes (a control character
        // is 6 bytes in the metadata, 7 once the metadata is a string in the header).
        for (id, text, path) in [
            (
                "LJ001-0001",
                "Printing, in the only sense with which we are at present concerned,",
                "wavs/LJ001-0001.wav",
            ),
            ("\u{1}\u{2}", "\"\u{4}\\", "\u{3}"),
        ] {
            let n = 256;
            // Every array beside the mel, as `--features` can ask.
            let all = crate::arrays::Arrays::parse(
                &["linear", "energy", "f0", "wav:float32"],
                (65.0, 1000.0),
            )
            .unwrap()
            .specs(&AudioSettings::default());
            let mut data = ShardData::with_arrays(&all);
            let one = crate::arrays::ItemArrays(
                all.iter()
                    .map(|s| vec![0u8; s.row_bytes() * s.rows_per_frame])
                    .collect(),
            );
            for _ in 0..n {
                data.push(&[0.0; 80], 1, &[1; 4]).unwrap();
                data.push_arrays(&one).unwrap();
            }
            let items = vec![widest_item(id, text, path); n];
            let reserve = head_reserve(n, n * (id.len() + text.len() + path.len()), all.len());
            let writer = ShardWriter::new(Path::new("x"), 80, WriteIo::Buffered, reserve);
            let head = writer.head(&data, &meta_of(items, Vec::new())).unwrap();
            assert_eq!(head.len, reserve, "{id:?}: the head outgrew its reserve");
        }
    }

    /// A shard large enough for early writes; its mel values count up.
    fn big_shard(n_mels: usize) -> (ShardData, Vec<f32>) {
        let frames = (FLUSH_BYTES + 3 * BLOCK + 44) / 4 / n_mels;
        let mel: Vec<f32> = (0..frames * n_mels).map(|v| v as f32).collect();
        let mut data = ShardData::new();
        data.push(&mel, frames, &[7, 8, 9]).unwrap();
        (data, mel)
    }

    fn check_big_shard(path: &Path, mel: &[f32], entry: &ShardEntry) {
        let bytes = fsx::read(path).unwrap();
        assert_eq!(entry.bytes, bytes.len() as u64);
        assert_eq!(entry.xxh3, hash_file(path).unwrap());
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let got: Vec<f32> = bytemuck::pod_collect_to_vec(st.tensor("mel").unwrap().data());
        assert!(got == mel, "the mel frames differ");
        let tokens: Vec<i32> = bytemuck::pod_collect_to_vec(st.tensor("tokens").unwrap().data());
        assert_eq!(tokens, [7, 8, 9]);
    }

    #[test]
    fn early_writes_land_where_the_finished_head_ends() {
        let tmp = tempfile::tempdir().unwrap();
        let n_mels = 80;
        let (mut data, mel) = big_shard(n_mels);
        for io in [WriteIo::Direct, WriteIo::Buffered] {
            let path = tmp.path().join(format!("early-{io:?}.safetensors"));
            let reserve = head_reserve(1, 40, 0);
            let mut w = ShardWriter::new(&path, n_mels, io, reserve);
            w.write_ready(&data).unwrap();
            assert!(w.flushed >= FLUSH_BYTES, "an early write happened");
            assert_eq!(w.flushed, data.body.len / BLOCK * BLOCK);
            assert_ne!(
                data.body.len % BLOCK,
                0,
                "a partial block is left for the end"
            );
            let meta = meta_of(vec![widest_item("a", "a", "wavs/a.wav")], Vec::new());
            let entry = w.finish(&mut data, &meta).unwrap();
            check_big_shard(&path, &mel, &entry);
        }
    }

    #[test]
    fn a_header_that_outgrows_its_reserve_moves_the_body() {
        let tmp = tempfile::tempdir().unwrap();
        let n_mels = 80;
        let (mut data, mel) = big_shard(n_mels);
        let path = tmp.path().join("outgrown.safetensors");
        let mut w = ShardWriter::new(&path, n_mels, WriteIo::Direct, BLOCK);
        w.write_ready(&data).unwrap();
        assert!(w.flushed > 0);
        // A skip reason longer than any estimate.
        let skipped = Skipped {
            id: Some("b".into()),
            line: 2,
            audio: None,
            reason: "x".repeat(3 * BLOCK),
        };
        let meta = meta_of(vec![widest_item("a", "a", "wavs/a.wav")], vec![skipped]);
        let entry = w.finish(&mut data, &meta).unwrap();
        check_big_shard(&path, &mel, &entry);
        let bytes = fsx::read(&path).unwrap();
        let (header_len, header) = SafeTensors::read_metadata(&bytes).unwrap();
        let mel_at = 8 + header_len + header.info("mel").unwrap().data_offsets.0;
        assert!(mel_at > BLOCK && mel_at % BLOCK == 0, "{mel_at}");
        // Nothing is left under the temporary name.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
