//! Arrays a user's function adds to a cache (`gpufeed_data::user`): added without
//! recomputing the rest, read zero-copy, batched; a failing function names the item and
//! leaves the cache as it was.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use gpufeed_data::DataError;
use gpufeed_data::arrays::Dtype;
use gpufeed_data::cache::Cache;
use gpufeed_data::loader::{Loader, LoaderConfig, Padding};
use gpufeed_data::precompute::{Options, Silent, run};
use gpufeed_data::user::{AddOptions, Existing, UserArray, UserArrays, add};

fn cache_of(dir: &Path, clips: usize) -> (PathBuf, PathBuf) {
    let data = dir.join("data");
    gpufeed_data::demo::generate(&data, clips, 1).unwrap();
    let o = Options {
        jobs: Some(2),
        shard_items: 2,
        ..Options::new(&data, dir.join("cache"))
    };
    (data, run(&o, &Silent).unwrap().cache_dir)
}

/// "Codec tokens": one int64 row of 4 per 320 samples, each the sum of its samples'
/// signs; and a "speaker embedding": one float32 row of 3 (mean, peak, length).
struct Codec {
    calls: AtomicUsize,
    /// Fails on this id.
    fail_on: Option<String>,
    /// Returns int32 codes on this id.
    wrong_dtype_on: Option<String>,
}

impl Codec {
    fn new() -> Self {
        Self {
            calls: AtomicUsize::new(0),
            fail_on: None,
            wrong_dtype_on: None,
        }
    }
}

fn codes_of(samples: &[f32]) -> Vec<i64> {
    samples
        .chunks(320)
        .flat_map(|c| {
            let pos = c.iter().filter(|&&x| x > 0.0).count() as i64;
            [pos, c.len() as i64 - pos, pos * 2, 7]
        })
        .collect()
}

fn embedding_of(samples: &[f32]) -> [f32; 3] {
    let mean = samples.iter().sum::<f32>() / samples.len() as f32;
    let peak = samples.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    [mean, peak, samples.len() as f32]
}

impl UserArrays for Codec {
    fn compute(&self, id: &str, samples: &[f32], sr: u32) -> Result<Vec<UserArray>, String> {
        assert_eq!(sr, 22050);
        self.calls.fetch_add(1, Ordering::Relaxed);
        if self.fail_on.as_deref() == Some(id) {
            return Err("CUDA out of memory (injected)".into());
        }
        let codes = codes_of(samples);
        let mut out = vec![
            UserArray {
                name: "codes".into(),
                dtype: Dtype::I64,
                rows: codes.len() / 4,
                width: 4,
                bytes: bytemuck::cast_slice(&codes).to_vec(),
            },
            UserArray {
                name: "spk".into(),
                dtype: Dtype::F32,
                rows: 1,
                width: 3,
                bytes: bytemuck::cast_slice(&embedding_of(samples)).to_vec(),
            },
        ];
        if self.wrong_dtype_on.as_deref() == Some(id) {
            let c32: Vec<i32> = codes.iter().map(|&c| c as i32).collect();
            out[0].dtype = Dtype::I32;
            out[0].bytes = bytemuck::cast_slice(&c32).to_vec();
        }
        Ok(out)
    }
}

fn opts(existing: Existing) -> AddOptions {
    AddOptions {
        jobs: Some(2),
        existing,
        ..AddOptions::default()
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".safetensors"))
        .collect();
    v.sort();
    v
}

#[test]
fn arrays_are_added_beside_the_shards_and_read_back_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, dir) = cache_of(tmp.path(), 5);
    let before = files(&dir);
    let mel_before: Vec<Vec<f32>> = {
        let c = Cache::open(&dir).unwrap();
        (0..c.len()).map(|i| c.mel(i).to_vec()).collect()
    };
    let codec = Codec::new();
    let r = add(&dir, &codec, &opts(Existing::Refuse), &Silent).unwrap();
    assert_eq!(r.names, ["codes", "spk"]);
    assert_eq!(r.computed, ["codes", "spk"]);
    assert_eq!((r.items, r.shards_computed, r.shards_reused), (5, 3, 0));
    // One call per item, and one for the first item to learn the arrays.
    assert_eq!(codec.calls.load(Ordering::Relaxed), 6);
    // The shards are untouched; two files beside each.
    let after = files(&dir);
    assert!(before.iter().all(|f| after.contains(f)));
    assert_eq!(after.len(), before.len() * 3);
    assert!(after.iter().any(|f| f.ends_with(".codes.0.safetensors")));

    let cache = Cache::open(&dir).unwrap();
    cache.verify().unwrap();
    let names: Vec<(&str, usize)> = cache
        .arrays()
        .iter()
        .map(|a| (a.name.as_str(), a.rows_per_frame))
        .collect();
    assert_eq!(names, [("codes", 0), ("spk", 0)]);
    let mut longest = 0;
    for (i, mel) in mel_before.iter().enumerate() {
        assert_eq!(cache.mel(i), &mel[..], "the mel is the same");
        let it = cache.item(i);
        let audio = gpufeed_audio::decode::load(&data.join(&it.source.path), 22050).unwrap();
        let codes = cache.array("codes", i).unwrap();
        assert_eq!(codes.spec.dtype, Dtype::I64);
        assert_eq!(
            codes.bytes,
            bytemuck::cast_slice::<i64, u8>(&codes_of(&audio.samples))
        );
        assert_eq!(codes.rows, audio.samples.len().div_ceil(320));
        longest = longest.max(codes.rows);
        let spk = cache.array("spk", i).unwrap();
        assert_eq!((spk.rows, spk.spec.width), (1, 3));
        assert_eq!(
            spk.bytes,
            bytemuck::cast_slice::<f32, u8>(&embedding_of(&audio.samples))
        );
    }
    assert_eq!(cache.max_rows("codes"), Some(longest));

    // The loader pads a user array to the longest in the batch, or in the cache under
    // fixed shapes, with its true lengths.
    let cache = std::sync::Arc::new(cache);
    for (padding, fixed) in [
        (Padding::Longest { multiple: 1 }, false),
        (
            Padding::Fixed {
                max_text: 400,
                max_frames: 1000,
            },
            true,
        ),
    ] {
        let loader = Loader::new(
            std::sync::Arc::clone(&cache),
            LoaderConfig {
                batch_size: 2,
                workers: 1,
                padding,
                ..Default::default()
            },
        )
        .unwrap();
        for batch in loader.epoch(0) {
            let batch = batch.unwrap();
            let a = batch
                .arrays()
                .iter()
                .find(|a| a.spec().name == "codes")
                .unwrap();
            let [rows, max_rows, width] = a.shape();
            assert_eq!(width, 4);
            let real: Vec<u32> = batch
                .items()
                .iter()
                .copied()
                .filter(|&i| i != u32::MAX)
                .collect();
            let batch_longest = real
                .iter()
                .map(|&i| cache.array("codes", i as usize).unwrap().rows)
                .max()
                .unwrap();
            assert_eq!(max_rows, if fixed { longest } else { batch_longest });
            for (r, &i) in real.iter().enumerate() {
                let want = cache.array("codes", i as usize).unwrap();
                assert_eq!(a.lengths()[r], want.rows as i64);
                let row_bytes = max_rows * 32;
                let got = &a.bytes()[r * row_bytes..(r + 1) * row_bytes];
                assert_eq!(&got[..want.bytes.len()], want.bytes);
                assert!(got[want.bytes.len()..].iter().all(|&x| x == 0));
            }
            assert!(rows >= real.len());
        }
    }

    // Adding them again is refused by default, kept under Keep (one probe call), and
    // computed again as a new generation under Replace, whose old files are deleted.
    let e = add(&dir, &codec, &opts(Existing::Refuse), &Silent).unwrap_err();
    assert!(e.to_string().contains("already holds `codes`"), "{e}");
    let calls = codec.calls.load(Ordering::Relaxed);
    let r = add(&dir, &codec, &opts(Existing::Keep), &Silent).unwrap();
    assert_eq!((r.kept.len(), r.computed.len()), (2, 0));
    assert_eq!(codec.calls.load(Ordering::Relaxed), calls + 1);
    let r = add(&dir, &codec, &opts(Existing::Replace), &Silent).unwrap();
    assert_eq!(r.computed, ["codes", "spk"]);
    let after = files(&dir);
    assert!(after.iter().any(|f| f.ends_with(".codes.1.safetensors")));
    assert!(!after.iter().any(|f| f.ends_with(".codes.0.safetensors")));
    Cache::open(&dir).unwrap().verify().unwrap();

    // A precompute that changes nothing keeps them; one over changed data drops those of
    // the changed shards' cache (they are computed again by the next add).
    let o = Options {
        jobs: Some(2),
        shard_items: 2,
        max_mel_frames: Some(100),
        ..Options::new(&data, tmp.path().join("cache"))
    };
    run(&o, &Silent).unwrap();
    assert_eq!(Cache::open(&dir).unwrap().arrays().len(), 2, "caps only");
    let wav = data.join(&Cache::open(&dir).unwrap().item(4).source.path);
    let mut bytes = std::fs::read(&wav).unwrap();
    let n = bytes.len();
    bytes[n - 2] ^= 0x40;
    std::fs::write(&wav, bytes).unwrap();
    run(&o, &Silent).unwrap();
    assert!(Cache::open(&dir).unwrap().arrays().is_empty());
    let r = add(&dir, &codec, &opts(Existing::Keep), &Silent).unwrap();
    assert_eq!(r.computed, ["codes", "spk"]);
    assert_eq!(r.shards_computed, 3);
    Cache::open(&dir).unwrap().verify().unwrap();
    // Only the files the manifest lists are left.
    let after = files(&dir);
    assert_eq!(after.len(), 9, "{after:?}");
    assert!(!after.iter().any(|f| f.ends_with(".1.safetensors")));
}

#[test]
fn a_failing_function_names_the_item_and_the_cache_reads_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, dir) = cache_of(tmp.path(), 5);
    let manifest = std::fs::read(dir.join("manifest.json")).unwrap();
    let codec = Codec {
        fail_on: Some("DEMO-0004".into()),
        ..Codec::new()
    };
    let e = add(&dir, &codec, &opts(Existing::Refuse), &Silent).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(&e, DataError::Item { id, .. } if id == "DEMO-0004"),
        "{msg}"
    );
    assert!(msg.contains("CUDA out of memory (injected)"), "{msg}");
    assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), manifest);
    let cache = Cache::open(&dir).unwrap();
    cache.verify().unwrap();
    assert!(cache.arrays().is_empty());
    // The first shard (items 1-2) was done: the next run resumes from it.
    drop(cache);
    let r = add(&dir, &Codec::new(), &opts(Existing::Refuse), &Silent).unwrap();
    assert_eq!((r.shards_reused, r.shards_computed), (1, 2));
    assert_eq!(Cache::open(&dir).unwrap().arrays().len(), 2);

    // An item whose arrays differ in type from the first's is named too.
    let tmp = tempfile::tempdir().unwrap();
    let (_, dir) = cache_of(tmp.path(), 3);
    let codec = Codec {
        wrong_dtype_on: Some("DEMO-0002".into()),
        ..Codec::new()
    };
    let e = add(&dir, &codec, &opts(Existing::Refuse), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("DEMO-0002") && e.contains("int32") && e.contains("int64"),
        "{e}"
    );
    assert!(Cache::open(&dir).unwrap().arrays().is_empty());
}

#[test]
fn a_moved_or_changed_dataset_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, dir) = cache_of(tmp.path(), 3);
    let moved = tmp.path().join("moved");
    std::fs::rename(&data, &moved).unwrap();
    let e = add(&dir, &Codec::new(), &opts(Existing::Refuse), &Silent)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is gone") && e.contains("data="), "{e}");
    let o = AddOptions {
        data: Some(moved.clone()),
        ..opts(Existing::Refuse)
    };
    // The audio's identity is checked: a file rewritten since is named.
    let wav = moved.join("wavs/DEMO-0002.wav");
    let bytes = std::fs::read(&wav).unwrap();
    std::fs::write(&wav, &bytes[..bytes.len() - 2]).unwrap();
    let e = add(&dir, &Codec::new(), &o, &Silent)
        .unwrap_err()
        .to_string();
    assert!(e.contains("DEMO-0002") && e.contains("changed"), "{e}");
}

#[test]
fn a_damaged_user_array_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, dir) = cache_of(tmp.path(), 3);
    add(&dir, &Codec::new(), &opts(Existing::Refuse), &Silent).unwrap();
    let f = files(&dir)
        .into_iter()
        .find(|f| f.ends_with(".spk.0.safetensors"))
        .unwrap();
    let path = dir.join(&f);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 4);
    std::fs::write(&path, bytes).unwrap();
    let e = Cache::open(&dir).unwrap_err().to_string();
    assert!(e.contains(&f) && e.contains("truncated"), "{e}");
}
