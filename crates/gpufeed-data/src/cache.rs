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
//!     manifest.json                      written last, when every shard exists
//!     skipped.json                       utterances left out, with the reason
//!     .lock                              held while a run builds this cache
//! ```
//!
//! A changed setting gives another key, so a new folder: a cache is never reused for
//! settings it was not built with. A changed, added or removed utterance changes the hash
//! of its shard, so that shard (only) is rebuilt. Every file is written under a temporary
//! name (`.NAME.tmp-PID`) and renamed when complete, so a run killed at any moment leaves
//! only complete shards, and the next run resumes from them.
//!
//! # One shard
//!
//! A [safetensors](https://github.com/huggingface/safetensors) file (little-endian, data
//! aligned) with four tensors:
//!
//! | tensor | dtype | shape | |
//! |---|---|---|---|
//! | `mel` | F32 | `[total_frames, n_mels]` | every utterance's frames, one after the other |
//! | `mel_offsets` | I64 | `[items + 1]` | utterance `i` is rows `mel_offsets[i]..mel_offsets[i+1]` |
//! | `tokens` | I32 | `[total_tokens]` | token ids, one utterance after the other |
//! | `token_offsets` | I64 | `[items + 1]` | the same for tokens |
//!
//! and `__metadata__["gpufeed"]`, a JSON object with the shard's utterances (the
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
//! every utterance with its shard and row, the shards and the totals.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorView};
use serde::{Deserialize, Serialize};

use gpufeed_config::{AudioSettings, TextSettings};

use crate::error::DataError;
use crate::fsx;

/// Name of the format, in every manifest and shard.
pub const FORMAT: &str = "gpufeed-cache";
/// Version of the format; part of the key, so a new version never reads an old cache.
/// 2: shards carry a blake3 hash in the manifest.
pub const VERSION: u32 = 2;
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
        }
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedItem {
    /// Its id.
    pub id: String,
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
    /// More tokens than the manifest's `limits.max_text_length`: kept, for the loader's
    /// over-length policy (skip or truncate) to decide.
    #[serde(default)]
    pub over_text_length: bool,
    /// More frames than `limits.max_mel_frames`: likewise.
    #[serde(default)]
    pub over_mel_frames: bool,
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
    /// blake3 of the file, hex: [`Cache::verify`] checks it. (Absent in version 1, which
    /// is refused by its version before this field matters.)
    #[serde(default)]
    pub blake3: String,
}

impl ShardEntry {
    /// The entry of the shard `dir/file` holding `items` utterances: its size and hash.
    pub fn of(dir: &Path, file: &str, items: usize) -> Result<Self, DataError> {
        let path = dir.join(file);
        Ok(Self {
            file: file.to_string(),
            items,
            bytes: fsx::metadata(&path)?.len(),
            blake3: hash_file(&path)?,
        })
    }
}

/// blake3 of a file, hex.
fn hash_file(path: &Path) -> Result<String, DataError> {
    let mut h = blake3::Hasher::new();
    h.update_reader(fsx::open(path)?)
        .map_err(|e| DataError::io(path, e))?;
    Ok(h.finalize().to_hex().to_string())
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

/// The arrays of one shard before writing.
#[derive(Debug, Default)]
pub struct ShardData {
    /// Mel frames, row-major `[frames, n_mels]`.
    pub mel: Vec<f32>,
    /// Row offsets into `mel` (in frames), `items + 1` entries.
    pub mel_offsets: Vec<i64>,
    /// Token ids.
    pub tokens: Vec<i32>,
    /// Offsets into `tokens`, `items + 1` entries.
    pub token_offsets: Vec<i64>,
}

impl ShardData {
    /// An empty shard.
    #[must_use]
    pub fn new() -> Self {
        Self {
            mel_offsets: vec![0],
            token_offsets: vec![0],
            ..Self::default()
        }
    }

    /// Empties the shard, keeping its buffers for the next one.
    pub fn clear(&mut self) {
        self.mel.clear();
        self.tokens.clear();
        self.mel_offsets.clear();
        self.mel_offsets.push(0);
        self.token_offsets.clear();
        self.token_offsets.push(0);
    }

    /// Appends one utterance; `mel` holds `frames × n_mels` values.
    pub fn push(&mut self, mel: &[f32], frames: usize, tokens: &[i32]) {
        self.mel.extend_from_slice(mel);
        let last = self.mel_offsets.last().copied().unwrap_or(0);
        self.mel_offsets.push(last + frames as i64);
        self.tokens.extend_from_slice(tokens);
        self.token_offsets.push(self.tokens.len() as i64);
    }
}

fn view<'a>(
    dtype: Dtype,
    shape: Vec<usize>,
    data: &'a [u8],
    path: &Path,
) -> Result<TensorView<'a>, DataError> {
    TensorView::new(dtype, shape, data).map_err(|e| DataError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Writes a shard atomically (temporary name, fsync, rename).
pub fn write_shard(
    path: &Path,
    data: &ShardData,
    n_mels: usize,
    meta: &ShardMeta,
) -> Result<u64, DataError> {
    let frames = data.mel.len() / n_mels.max(1);
    let tensors = [
        (
            "mel",
            view(
                Dtype::F32,
                vec![frames, n_mels],
                bytemuck::cast_slice(&data.mel),
                path,
            )?,
        ),
        (
            "mel_offsets",
            view(
                Dtype::I64,
                vec![data.mel_offsets.len()],
                bytemuck::cast_slice(&data.mel_offsets),
                path,
            )?,
        ),
        (
            "tokens",
            view(
                Dtype::I32,
                vec![data.tokens.len()],
                bytemuck::cast_slice(&data.tokens),
                path,
            )?,
        ),
        (
            "token_offsets",
            view(
                Dtype::I64,
                vec![data.token_offsets.len()],
                bytemuck::cast_slice(&data.token_offsets),
                path,
            )?,
        ),
    ];
    let meta_json = serde_json::to_string(meta).map_err(|e| DataError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let info = HashMap::from([("gpufeed".to_string(), meta_json)]);
    // Streamed straight into the temporary file: no second copy of the arrays in memory.
    fsx::write_atomic_with(path, |tmp| {
        safetensors::serialize_to_file(tensors, Some(info), tmp).map_err(|e| DataError::Corrupt {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    })?;
    Ok(fsx::metadata(path)?.len())
}

/// Whether the shard at `path` is complete and consistent: its header parses, every tensor
/// lies inside the file and its offsets agree. A run resumes only from such shards.
#[must_use]
pub fn shard_is_sound(path: &Path, n_mels: usize) -> bool {
    read_shard_meta(path).is_ok() && open_shard(path, n_mels).is_ok()
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
fn map(file: &std::fs::File, path: &Path) -> Result<Mmap, DataError> {
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
}

/// A complete cache, open for reading. Arrays are read zero-copy from the mapped shards.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    manifest: Manifest,
    shards: Vec<ShardView>,
}

impl Cache {
    /// Opens the complete cache in `dir` (a `<key>` folder with `manifest.json`).
    pub fn open(dir: &Path) -> Result<Self, DataError> {
        let manifest = read_manifest(dir)?;
        let n_mels = manifest.settings.audio.n_mels;
        // A size check is cheap and catches a truncated or replaced shard; the hashes are
        // checked by `verify`, which reads every byte.
        for entry in &manifest.shards {
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
        let shards = manifest
            .shards
            .iter()
            .map(|s| open_shard(&dir.join(&s.file), n_mels))
            .collect::<Result<Vec<_>, _>>()?;
        // Check every record against its shard once, so that `mel(i)` and `tokens(i)` can
        // index without a failure path.
        for it in &manifest.items {
            let fits = shards.get(it.shard as usize).is_some_and(|s| {
                let r = it.row as usize;
                r + 1 < s.mel_offsets.len()
                    && r + 1 < s.token_offsets.len()
                    && s.mel_offsets[r + 1] - s.mel_offsets[r] == i64::from(it.mel_frames)
                    && s.token_offsets[r + 1] - s.token_offsets[r] == i64::from(it.text_tokens)
            });
            if !fits {
                return Err(DataError::Corrupt {
                    path: dir.join(MANIFEST),
                    reason: format!("item `{}` does not match shard {}", it.id, it.shard),
                });
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
            shards,
        })
    }

    /// Checks every shard against the blake3 hash in the manifest (reads every byte; about
    /// a second per 2 GB). A mismatch is [`DataError::Corrupt`] naming the shard.
    pub fn verify(&self) -> Result<(), DataError> {
        for entry in &self.manifest.shards {
            let path = self.dir.join(&entry.file);
            let actual = hash_file(&path)?;
            if actual != entry.blake3 {
                return Err(DataError::Corrupt {
                    path,
                    reason: format!("its blake3 is {actual}, the manifest says {}", entry.blake3),
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

    /// Utterance `i`'s mel frames, row-major `(frames, n_mels)`, straight from the mapping.
    #[must_use]
    pub fn mel(&self, i: usize) -> &[f32] {
        let it = &self.manifest.items[i];
        let s = &self.shards[it.shard as usize];
        let row = it.row as usize;
        let n = self.n_mels();
        let all: &[f32] = bytemuck::cast_slice(&s.mmap[s.mel.clone()]);
        &all[s.mel_offsets[row] as usize * n..s.mel_offsets[row + 1] as usize * n]
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

/// Reads `dir/manifest.json` and checks its format and version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, DataError> {
    let path = dir.join(MANIFEST);
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.clone(),
        reason,
    };
    let manifest: Manifest =
        serde_json::from_slice(&fsx::read(&path)?).map_err(|e| corrupt(e.to_string()))?;
    if manifest.format != FORMAT || manifest.version != VERSION {
        return Err(corrupt(format!(
            "format `{}` version {}, this gpufeed reads `{FORMAT}` version {VERSION}",
            manifest.format, manifest.version
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
    for shard in &manifest.shards {
        let path = dir.join(&shard.file);
        let file = fsx::open(&path)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(|e| DataError::io(&path, e.into()))?;
        bytes += shard.bytes;
    }
    Ok(bytes)
}

fn open_shard(path: &Path, n_mels: usize) -> Result<ShardView, DataError> {
    let file = fsx::open(path)?;
    let mmap = map(&file, path)?;
    let corrupt = |reason: String| DataError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let (header_len, header) =
        SafeTensors::read_metadata(&mmap).map_err(|e| corrupt(e.to_string()))?;
    let data_start = 8 + header_len;
    let tensors = header.tensors();
    let range = |name: &str, dtype: Dtype| -> Result<std::ops::Range<usize>, DataError> {
        let info = tensors
            .get(name)
            .ok_or_else(|| corrupt(format!("no tensor `{name}`")))?;
        if info.dtype != dtype {
            return Err(corrupt(format!(
                "tensor `{name}` is {:?}, expected {dtype:?}",
                info.dtype
            )));
        }
        let r = data_start + info.data_offsets.0..data_start + info.data_offsets.1;
        if r.end > mmap.len() {
            return Err(corrupt(format!(
                "tensor `{name}` runs past the end of the file"
            )));
        }
        // Zero-copy needs the element alignment; safetensors aligns data, and mappings start
        // on a page, so this only fails for a file gpufeed did not write.
        if !(mmap.as_ptr() as usize + r.start).is_multiple_of(dtype.bitsize() / 8) {
            return Err(corrupt(format!("tensor `{name}` is not aligned")));
        }
        Ok(r)
    };
    let mel = range("mel", Dtype::F32)?;
    let tokens = range("tokens", Dtype::I32)?;
    let mel_offsets: Vec<i64> =
        bytemuck::cast_slice(&mmap[range("mel_offsets", Dtype::I64)?]).to_vec();
    let token_offsets: Vec<i64> =
        bytemuck::cast_slice(&mmap[range("token_offsets", Dtype::I64)?]).to_vec();
    // `len` is in rows: frames for the mel, ids for the tokens.
    let check = |offsets: &[i64], len: usize, name: &str| -> Result<(), DataError> {
        let monotone = offsets.windows(2).all(|w| w[0] <= w[1]);
        if offsets.first() != Some(&0)
            || !monotone
            || offsets.last().copied().unwrap_or(0) as usize > len
        {
            return Err(corrupt(format!("`{name}` offsets are inconsistent")));
        }
        Ok(())
    };
    check(&mel_offsets, mel.len() / 4 / n_mels.max(1), "mel")?;
    check(&token_offsets, tokens.len() / 4, "tokens")?;
    Ok(ShardView {
        mmap,
        mel,
        mel_offsets,
        tokens,
        token_offsets,
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
            );
            meta.items.push(CachedItem {
                id: format!("u{i}"),
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
            });
        }
        let file = format!("shard-{s:05}-test.safetensors");
        write_shard(&dir.join(&file), &data, n_mels, &meta).unwrap();
        shards.push(ShardEntry::of(dir, &file, meta.items.len()).unwrap());
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
        },
        symbols: serde_json::Value::Null,
        limits: Limits::default(),
        dataset: "metadata.csv".into(),
        written_by: "test".into(),
        shards,
        items,
        skipped: Vec::new(),
        totals: Totals::default(),
    };
    fsx::write_atomic(&dir.join(MANIFEST), &serde_json::to_vec(&manifest).unwrap()).unwrap();
    Cache::open(dir).unwrap()
}
