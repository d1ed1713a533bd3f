//! Fuzzing's regressions for the dataset manifests and the feature cache: the seed corpora
//! of the `manifest` and `cache` fuzz targets (`fuzz/corpus/`), replayed through the
//! targets' own bodies (`fuzz/src/`, compiled here by path, so `cargo test` needs no
//! libFuzzer), the inputs the fuzzers found, and hostile sizes (a shard header claiming
//! 2^40 rows).

// Test helpers: a failure is a panic, and the files are the test's own.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

#[path = "../../../fuzz/src/cache.rs"]
mod cache;
#[path = "../../../fuzz/src/manifest.rs"]
mod manifest;
#[path = "../../../fuzz/src/memory.rs"]
mod memory;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../fuzz/src/scratch.rs"]
mod scratch;

use gpufeed_data::DataError;
use gpufeed_data::cache::{Cache, MANIFEST, Manifest};
use replay::{corpus_dir, replay};

const MIB: u64 = 1 << 20;

fn corpus(target: &str) -> std::path::PathBuf {
    corpus_dir(env!("CARGO_MANIFEST_DIR"), target)
}

#[test]
fn manifest_corpus_replays() {
    assert!(replay(&corpus("manifest"), manifest::run) >= 4);
}

#[test]
fn cache_corpus_replays() {
    assert!(replay(&corpus("cache"), cache::run) >= 1);
}

/// The seed cache of the `cache` target: its manifest (naming `shard.safetensors`).
fn seed_manifest() -> Manifest {
    let seed = std::fs::read(corpus("cache").join("two_items")).unwrap();
    let (len, rest) = seed.split_first_chunk::<4>().unwrap();
    serde_json::from_slice(&rest[..u32::from_le_bytes(*len) as usize]).unwrap()
}

/// A safetensors file of the four tensors, each `(name, dtype, shape, data_offsets)`, with
/// `data` after the header: the header may claim anything.
fn shard(tensors: &[(&str, &str, &[u64], [u64; 2])], data: &[u8]) -> Vec<u8> {
    let fields: Vec<String> = tensors
        .iter()
        .map(|(name, dtype, shape, [a, b])| {
            format!(r#""{name}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{a},{b}]}}"#)
        })
        .collect();
    let mut header = format!("{{{}}}", fields.join(","));
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(data);
    file
}

/// Opens a cache whose one shard is `bytes` (the manifest says its true size, so only the
/// shard's own header can lie) and returns the result with the peak memory growth.
fn open_with_shard(bytes: &[u8]) -> (Result<Cache, DataError>, Option<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = seed_manifest();
    manifest.shards[0].bytes = bytes.len() as u64;
    std::fs::write(
        dir.path().join(MANIFEST),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.path().join("shard.safetensors"), bytes).unwrap();
    let out = memory::peak_growth(|| Cache::open(dir.path()));
    drop(dir);
    out
}

fn corrupt_shard(result: Result<Cache, DataError>) -> String {
    match result {
        Err(e @ DataError::Corrupt { .. }) => {
            let message = e.to_string();
            assert!(message.contains("shard.safetensors"), "{message}");
            message
        }
        other => panic!("expected a corrupt shard, got {other:?}"),
    }
}

/// A shard header that claims 2^40 mel frames (4 TiB) in a file of a few hundred bytes is
/// refused from its header alone: nothing is allocated for the claim.
#[test]
fn shard_header_claiming_2_pow_40_rows_is_refused() {
    let rows = 1_u64 << 40;
    let mel_bytes = rows * 8 * 4;
    let file = shard(
        &[
            ("mel", "F32", &[rows, 8], [0, mel_bytes]),
            ("mel_offsets", "I64", &[2], [mel_bytes, mel_bytes + 16]),
            ("tokens", "I32", &[2], [mel_bytes + 16, mel_bytes + 24]),
            (
                "token_offsets",
                "I64",
                &[2],
                [mel_bytes + 24, mel_bytes + 40],
            ),
        ],
        &[0; 64],
    );
    let (result, growth) = open_with_shard(&file);
    let message = corrupt_shard(result);
    eprintln!(
        "2^40 rows claimed in {} bytes: `{message}`; peak resident memory +{growth:?} bytes",
        file.len()
    );
    if let Some(growth) = growth {
        assert!(
            growth < 16 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// Offsets that lie: the shard's tensors are the sizes their shapes say, but
/// `mel_offsets` claims item 0 has 2^40 frames. Refused before any item is read.
#[test]
fn offsets_claiming_2_pow_40_frames_are_refused() {
    let mut data = Vec::new();
    data.extend_from_slice(&[0_u8; 8 * 4]); // mel: 1 frame of 8 bands
    for o in [0_i64, 1 << 40, 1 << 40] {
        data.extend_from_slice(&o.to_le_bytes()); // mel_offsets: 3 = items + 1
    }
    data.extend_from_slice(&[0_u8; 8]); // tokens: 2
    for o in [0_i64, 1, 2] {
        data.extend_from_slice(&o.to_le_bytes());
    }
    let file = shard(
        &[
            ("mel", "F32", &[1, 8], [0, 32]),
            ("mel_offsets", "I64", &[3], [32, 56]),
            ("tokens", "I32", &[2], [56, 64]),
            ("token_offsets", "I64", &[3], [64, 88]),
        ],
        &data,
    );
    let (result, _) = open_with_shard(&file);
    let message = corrupt_shard(result);
    assert!(
        message.contains("`mel` offsets are inconsistent"),
        "{message}"
    );
}

/// A manifest that names a shard outside the cache folder (`../`, an absolute path) is
/// refused, naming the manifest, before any file it names is opened: a cache copied from
/// elsewhere must not make gpufeed read (or block on) any file of the machine.
#[test]
fn shard_outside_the_cache_folder_is_refused() {
    let seed = std::fs::read(corpus("cache").join("two_items")).unwrap();
    let len = u32::from_le_bytes(seed[..4].try_into().unwrap()) as usize;
    let shard = &seed[4 + len..];
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("cache");
    std::fs::create_dir(&dir).unwrap();
    // A sound shard, one folder up.
    let outside = root.path().join("outside.safetensors");
    std::fs::write(&outside, shard).unwrap();
    for name in [
        "../outside.safetensors",
        outside.to_str().unwrap(),
        "sub/shard.safetensors",
        "..",
    ] {
        let mut manifest = seed_manifest();
        manifest.shards[0].file = name.to_owned();
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(&manifest).unwrap()).unwrap();
        let message = match Cache::open(&dir) {
            Err(e @ DataError::Corrupt { .. }) => e.to_string(),
            other => panic!("`{name}`: expected a corrupt manifest, got {other:?}"),
        };
        assert!(
            message.contains("manifest.json") && message.contains(&format!("`{name}`")),
            "{message}"
        );
    }
}

/// A cache manifest larger than `MAX_CACHE_MANIFEST_BYTES` (a hostile or damaged cache) is
/// refused as corrupt before it is read: a sparse file one byte over the cap, in bounded
/// memory. The bound is the other hostile-size tests' 16 MiB, 128 times less than the file:
/// the corpus replays run beside this test unlocked, and they once added 1.04 MiB to the
/// process's peak (CI, stop 47).
#[test]
fn cache_manifest_over_the_cap_is_not_read() {
    use gpufeed_data::cache::MAX_CACHE_MANIFEST_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join(MANIFEST)).unwrap();
    file.set_len(MAX_CACHE_MANIFEST_BYTES + 1).unwrap();
    let (result, growth) = memory::peak_growth(|| Cache::open(dir.path()).map(drop));
    let message = match result {
        Err(e @ DataError::Corrupt { .. }) => e.to_string(),
        other => panic!("expected a corrupt manifest, got {other:?}"),
    };
    assert!(
        message.contains(
            "manifest.json` is not a valid gpufeed cache file: it has 2147483649 bytes, and a \
             cache manifest may have 2048 MiB at most"
        ),
        "{message}"
    );
    if let Some(growth) = growth {
        assert!(
            growth < 16 * MIB,
            "peak resident memory grew {growth} bytes"
        );
    }
}

/// A manifest declaring an array of 2^40 rows per frame (or a width of 0) is refused before
/// anything is sized by it: the loader would allocate `frames × 2^40` rows per batch.
#[test]
fn arrays_with_absurd_shapes_are_refused() {
    use gpufeed_data::arrays::{ArraySpec, Dtype};
    let root = tempfile::tempdir().unwrap();
    for (width, rows_per_frame) in [(1, 1usize << 40), (0, 1), (1usize << 40, 1)] {
        let mut manifest = seed_manifest();
        manifest.arrays = vec![ArraySpec {
            name: "wav".into(),
            dtype: Dtype::I16,
            width,
            rows_per_frame,
        }];
        std::fs::write(
            root.path().join(MANIFEST),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
        let message = match Cache::open(root.path()) {
            Err(e @ DataError::Corrupt { .. }) => e.to_string(),
            other => panic!("expected a corrupt manifest, got {other:?}"),
        };
        assert!(
            message.contains("array `wav` has width") && message.contains("rows per frame"),
            "{message}"
        );
    }
}
