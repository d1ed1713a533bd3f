//! Precompute and the cache, end to end on generated and real LJSpeech data.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use gpufeed_data::DataError;
use gpufeed_data::cache::Cache;
use gpufeed_data::precompute::{OnError, Options, Report, ShardSpec, Silent, run};

fn demo(dir: &Path, clips: usize) -> PathBuf {
    let data = dir.join("data");
    gpufeed_data::demo::generate(&data, clips, 1).unwrap();
    data
}

fn opts(data: &Path, cache: &Path) -> Options {
    Options {
        jobs: Some(2),
        shard_items: 2,
        ..Options::new(data, cache)
    }
}

fn shard_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("shard-"))
        .collect();
    v.sort();
    v
}

#[test]
fn builds_a_cache_that_matches_direct_computation() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 5);
    let o = Options {
        max_mel_frames: Some(200),
        ..opts(&data, &tmp.path().join("cache"))
    };
    let r = run(&o, &Silent).unwrap();
    assert!(r.complete && !r.was_complete);
    assert_eq!(
        (r.items, r.items_computed, r.shards_total, r.shards_built),
        (5, 5, 3, 3)
    );
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let cache = Cache::open(&r.cache_dir).unwrap();
    assert_eq!(cache.len(), 5);
    let mut mel = gpufeed_audio::mel::MelExtractor::new(&o.audio).unwrap();
    let tok = gpufeed_text::Tokenizer::new(&o.text);
    let texts: Vec<String> = std::fs::read_to_string(data.join("metadata.csv"))
        .unwrap()
        .lines()
        .map(|l| l.rsplit('|').next().unwrap().to_string())
        .collect();
    for (i, text) in texts.iter().enumerate() {
        let it = cache.item(i);
        assert_eq!(it.id, format!("DEMO-{:04}", i + 1));
        let audio = gpufeed_audio::decode::load(&data.join(&it.source.path), 22050).unwrap();
        let want = mel.compute(&audio.samples).unwrap();
        assert_eq!(
            it.mel_frames as usize, want.frames,
            "true length, before any padding"
        );
        assert_eq!(cache.mel(i), &want.data[..]);
        let want_tokens: Vec<i32> = tok
            .encode_text(text)
            .into_iter()
            .map(|t| t as i32)
            .collect();
        assert_eq!(cache.tokens(i), &want_tokens[..]);
        assert!((it.audio.duration_s - audio.info.duration_s).abs() < 1e-9);
    }
    // Every demo clip is longer than 200 frames (2.3 s): all flagged, none dropped.
    assert_eq!(r.over_mel_frames, 5);
    assert!((0..5).all(|i| cache.item(i).over_mel_frames && !cache.item(i).over_text_length));
    assert_eq!(cache.manifest().limits.max_mel_frames, Some(200));
    // Another cap needs no new features, only new flags.
    let wider = Options {
        max_mel_frames: Some(100_000),
        ..o.clone()
    };
    let r2 = run(&wider, &Silent).unwrap();
    assert_eq!(
        (r2.cache_dir.clone(), r2.items_computed, r2.over_mel_frames),
        (r.cache_dir.clone(), 0, 0)
    );
    assert!(!Cache::open(&r2.cache_dir).unwrap().item(0).over_mel_frames);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.cache_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "gpufeed-cache");
    assert!(
        manifest["symbols"]["symbols"]
            .as_array()
            .is_some_and(|s| s.len() > 20)
    );
}

#[test]
fn a_complete_cache_is_recognised_and_settings_change_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 3);
    let cache = tmp.path().join("cache");
    let first = run(&opts(&data, &cache), &Silent).unwrap();
    let again = run(&opts(&data, &cache), &Silent).unwrap();
    assert!(again.was_complete && again.complete);
    assert_eq!((again.items_computed, again.shards_built), (0, 0));
    assert_eq!(again.cache_dir, first.cache_dir);
    assert!(again.summary().contains("is complete"));

    let mut other = opts(&data, &cache);
    other.audio.n_mels = 64;
    let r = run(&other, &Silent).unwrap();
    assert_ne!(r.key, first.key, "a changed setting builds a new cache");
    assert_eq!(r.items_computed, 3);
    assert_eq!(Cache::open(&r.cache_dir).unwrap().mel(0).len() % 64, 0);
    let mut text = opts(&data, &cache);
    text.text.add_blank = true;
    assert_ne!(
        run(&text, &Silent).unwrap().key,
        first.key,
        "text settings are in the key"
    );
}

#[test]
fn a_changed_file_rebuilds_only_its_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 5);
    let cache = tmp.path().join("cache");
    let first = run(&opts(&data, &cache), &Silent).unwrap();
    let before = shard_files(&first.cache_dir);
    // Replace clip 3 (shard 1) with clip 1's audio: another size, another mtime.
    std::fs::copy(
        data.join("wavs/DEMO-0001.wav"),
        data.join("wavs/DEMO-0003.wav"),
    )
    .unwrap();
    let r = run(&opts(&data, &cache), &Silent).unwrap();
    assert_eq!(
        (r.shards_built, r.shards_reused, r.items_computed),
        (1, 2, 2)
    );
    let after = shard_files(&r.cache_dir);
    assert_eq!(after.len(), 3, "the stale shard is gone: {after:?}");
    assert_eq!(
        (after[0].as_str(), after[2].as_str()),
        (before[0].as_str(), before[2].as_str())
    );
    assert_ne!(after[1], before[1]);
    let c = Cache::open(&r.cache_dir).unwrap();
    assert_eq!(c.mel(2), c.mel(0));
}

#[test]
fn a_killed_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 5);
    let cache = tmp.path().join("cache");
    let full = run(&opts(&data, &cache), &Silent).unwrap();
    // Simulate a kill after the first shard: no manifest, one shard missing, a half-written
    // temporary file left behind.
    let files = shard_files(&full.cache_dir);
    std::fs::remove_file(full.cache_dir.join("manifest.json")).unwrap();
    std::fs::remove_file(full.cache_dir.join(&files[1])).unwrap();
    std::fs::remove_file(full.cache_dir.join(&files[2])).unwrap();
    std::fs::write(
        full.cache_dir.join(format!(".{}.tmp-999", files[1])),
        b"partial",
    )
    .unwrap();
    assert!(
        Cache::open(&full.cache_dir).is_err(),
        "no manifest, no cache"
    );
    let r = run(&opts(&data, &cache), &Silent).unwrap();
    assert_eq!(
        (r.shards_reused, r.shards_built, r.items_computed),
        (1, 2, 3)
    );
    assert!(r.complete);
    assert_eq!(shard_files(&r.cache_dir), files);
    let leftovers: Vec<_> = std::fs::read_dir(&r.cache_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .collect();
    assert!(leftovers.is_empty());
    assert_eq!(Cache::open(&r.cache_dir).unwrap().len(), 5);
}

#[test]
fn shards_of_a_dataset_merge_into_one_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 5);
    let cache = tmp.path().join("cache");
    let part = |i| Options {
        shard: Some(ShardSpec { index: i, count: 2 }),
        ..opts(&data, &cache)
    };
    let a = run(&part(0), &Silent).unwrap();
    assert!(!a.complete, "shard 1/2 is still missing");
    assert_eq!(a.shards_built, 2); // shards 0 and 2
    assert!(a.summary().contains("not complete yet"));
    let b = run(&part(1), &Silent).unwrap();
    assert!(b.complete);
    assert_eq!(b.shards_built, 1);
    let c = Cache::open(&b.cache_dir).unwrap();
    assert_eq!(c.len(), 5);
    assert_eq!(
        (0..5).map(|i| c.item(i).id.clone()).collect::<Vec<_>>(),
        [
            "DEMO-0001",
            "DEMO-0002",
            "DEMO-0003",
            "DEMO-0004",
            "DEMO-0005"
        ]
    );
}

#[test]
fn a_second_run_on_the_same_cache_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 2);
    let cache = tmp.path().join("cache");
    let r = run(&opts(&data, &cache), &Silent).unwrap();
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(r.cache_dir.join(".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let err = run(&opts(&data, &cache), &Silent).unwrap_err();
    assert!(matches!(err, DataError::Locked { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("another run") && msg.contains("pid "), "{msg}");
    drop(lock);
    assert!(run(&opts(&data, &cache), &Silent).unwrap().complete);
}

/// A dataset with one of each kind of bad input, beside two good clips.
fn bad_dataset(dir: &Path) -> PathBuf {
    let data = demo(dir, 2);
    let wavs = data.join("wavs");
    std::fs::write(wavs.join("empty.wav"), b"").unwrap();
    let good = std::fs::read(wavs.join("DEMO-0001.wav")).unwrap();
    std::fs::write(wavs.join("truncated.wav"), &good[..30]).unwrap();
    std::fs::write(
        wavs.join("text.wav"),
        b"this is not audio at all, just text\n",
    )
    .unwrap();
    // A valid 44-byte header with no samples.
    let mut zero = good[..44].to_vec();
    zero[40..44].copy_from_slice(&0u32.to_le_bytes());
    zero[4..8].copy_from_slice(&36u32.to_le_bytes());
    std::fs::write(wavs.join("zero.wav"), zero).unwrap();
    let mut meta = std::fs::read(data.join("metadata.csv")).unwrap();
    meta.extend_from_slice(
        b"missing|no such file|no such file\n\
          empty|an empty file|an empty file\n\
          truncated|a truncated header|a truncated header\n\
          text|not audio|not audio\n\
          zero|no samples|no samples\n\
          DEMO-0001|a duplicate id|a duplicate id\n\
          blank||\n\
          bad\xff|bytes|bytes\n\
          ../../etc/passwd|escape|escape\n",
    );
    std::fs::write(data.join("metadata.csv"), meta).unwrap();
    data
}

#[test]
fn bad_inputs_are_listed_and_the_rest_is_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let data = bad_dataset(tmp.path());
    // Nine of eleven left out: by default an error that names the list, not "done".
    let e = run(&opts(&data, &tmp.path().join("cache")), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("9 of 11 items (81.8 %) were left out") && e.contains("--max-skipped 0.82"),
        "{e}"
    );
    let accept = Options {
        max_skipped: 1.0,
        ..opts(&data, &tmp.path().join("cache"))
    };
    let r: Report = run(&accept, &Silent).unwrap();
    assert!(r.complete);
    let c = Cache::open(&r.cache_dir).unwrap();
    assert_eq!(c.len(), 2, "the two good clips");
    let by_line: Vec<(usize, &str)> = r
        .skipped
        .iter()
        .map(|s| (s.line, s.reason.as_str()))
        .collect();
    assert_eq!(by_line.len(), 9, "{by_line:#?}");
    let lines: Vec<usize> = by_line.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, (3..=11).collect::<Vec<_>>());
    for (line, reason) in &by_line {
        assert!(!reason.is_empty(), "line {line}");
    }
    assert!(by_line[5].1.contains("duplicate id, first seen on line 1"));
    assert!(by_line[6].1.contains("empty text"));
    assert!(by_line[7].1.contains("UTF-8"));
    assert!(by_line[8].1.contains("leaves the dataset folder"));
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.cache_dir.join("skipped.json")).unwrap()).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 9);
    assert!(r.summary().contains("9 utterance(s) skipped"));
    // The line with a bad byte is listed by the id that reads fine before it, not as `?`.
    assert!(
        r.summary().contains("line 10: bad: not valid UTF-8"),
        "{}",
        r.summary()
    );
    assert!(!r.summary().contains(": ?:"), "{}", r.summary());
}

#[test]
fn on_error_fail_stops_at_the_first_bad_item_and_keeps_the_cache_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 4);
    std::fs::write(data.join("wavs/DEMO-0003.wav"), b"RIFF").unwrap();
    let cache = tmp.path().join("cache");
    let err = run(
        &Options {
            on_error: OnError::Fail,
            ..opts(&data, &cache)
        },
        &Silent,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("DEMO-0003") && msg.contains("line 3"), "{msg}");
    // The shard before it was written, nothing was half-written, no manifest claims more.
    let dir = std::fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(!dir.join("manifest.json").exists());
    assert!(shard_files(&dir).len() <= 1);
    // Skipping finishes the job from there (one of four is over the default 5 %).
    let skip = Options {
        max_skipped: 0.25,
        ..opts(&data, &cache)
    };
    let r = run(&skip, &Silent).unwrap();
    assert!(r.complete);
    assert_eq!(r.skipped.len(), 1);
    assert_eq!(Cache::open(&r.cache_dir).unwrap().len(), 3);
}

#[test]
fn a_malformed_line_fails_under_on_error_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 2);
    let mut meta = std::fs::read_to_string(data.join("metadata.csv")).unwrap();
    meta.push_str("no separator\n");
    std::fs::write(data.join("metadata.csv"), meta).unwrap();
    let o = Options {
        on_error: OnError::Fail,
        ..opts(&data, &tmp.path().join("c"))
    };
    let msg = run(&o, &Silent).unwrap_err().to_string();
    assert!(
        msg.contains("metadata.csv") && msg.contains("line 3"),
        "{msg}"
    );
}

#[test]
fn an_unwritable_cache_folder_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 1);
    // A cache root under a regular file cannot be created, even by root.
    let file = tmp.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let msg = run(&opts(&data, &file.join("cache")), &Silent)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("not-a-folder"), "{msg}");
}

#[test]
fn missing_dataset_and_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let msg = run(&opts(&tmp.path().join("nope"), tmp.path()), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("nope") && msg.contains("does not exist"),
        "{msg}"
    );
    let msg = run(&opts(tmp.path(), &tmp.path().join("c")), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("an empty folder") && msg.contains("ljspeech") && msg.contains("demo-data"),
        "{msg}"
    );
}

#[test]
fn real_ljspeech_clips() {
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini");
    assert!(mini.is_dir(), "tests need shared/ beside the repository");
    let tmp = tempfile::tempdir().unwrap();
    let r = run(
        &Options {
            jobs: Some(2),
            ..Options::new(&mini, tmp.path())
        },
        &Silent,
    )
    .unwrap();
    assert!(r.complete && r.skipped.is_empty());
    let c = Cache::open(&r.cache_dir).unwrap();
    assert_eq!(c.len(), 8);
    let it = c.item(0);
    assert_eq!(it.id, "LJ001-0001");
    // 1 + len / hop frames, centred.
    let samples = (it.audio.duration_s * 22050.0).round() as usize;
    assert_eq!(it.mel_frames as usize, 1 + samples / 256);
    assert_eq!(it.audio.source_rate, 22050);
    assert!(
        c.mel(0)
            .iter()
            .all(|v| v.is_finite() && *v >= (1e-5f32).ln() - 1e-3)
    );
}

#[test]
fn damaged_caches_are_named_and_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let data = demo(tmp.path(), 3);
    let cache = tmp.path().join("cache");
    let r = run(&opts(&data, &cache), &Silent).unwrap();
    let files = shard_files(&r.cache_dir);
    let shard = r.cache_dir.join(&files[0]);
    let original = std::fs::read(&shard).unwrap();

    // One flipped byte in the arrays: same size, so opening succeeds, verifying does not.
    let mut flipped = original.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    std::fs::write(&shard, &flipped).unwrap();
    let c = Cache::open(&r.cache_dir).unwrap();
    let msg = c.verify().unwrap_err().to_string();
    assert!(msg.contains(&files[0]) && msg.contains("xxh3"), "{msg}");

    // Truncated: opening names the shard.
    std::fs::write(&shard, &original[..original.len() / 2]).unwrap();
    let msg = Cache::open(&r.cache_dir).unwrap_err().to_string();
    assert!(
        msg.contains(&files[0]) && msg.contains("truncated"),
        "{msg}"
    );
    // precompute does not call that complete: it rebuilds the shard.
    let again = run(&opts(&data, &cache), &Silent).unwrap();
    assert!(!again.was_complete && again.complete);
    assert_eq!(again.shards_built, 1);
    Cache::open(&r.cache_dir).unwrap().verify().unwrap();

    // A manifest that lists a missing shard.
    std::fs::remove_file(r.cache_dir.join(&files[1])).unwrap();
    let msg = Cache::open(&r.cache_dir).unwrap_err().to_string();
    assert!(msg.contains(&files[1]), "{msg}");

    // A cache of another format version.
    run(&opts(&data, &cache), &Silent).unwrap();
    let manifest = r.cache_dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replacen(
            &format!("\"version\": {}", gpufeed_data::cache::VERSION),
            "\"version\": 99",
            1,
        ),
    )
    .unwrap();
    let msg = Cache::open(&r.cache_dir).unwrap_err().to_string();
    assert!(
        msg.contains("version 99") && msg.contains("precompute"),
        "{msg}"
    );
}

/// Every array of `--features` in one run on real LJSpeech clips: shapes, the waveform's
/// alignment to the mel frames, values equal to computing each alone, the key, and the
/// size per hour in the report.
#[test]
fn every_array_is_cached_aligned_and_equal_to_computing_it_alone() {
    use gpufeed_audio::pitch::PitchSettings;
    use gpufeed_data::arrays::{Arrays, Dtype};
    let tmp = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini");
    let names = ["mel", "linear", "energy", "f0", "wav"];
    let o = Options {
        arrays: Arrays::parse(&names, (65.0, 1000.0)).unwrap(),
        shard_items: 4,
        ..Options::new(&data, tmp.path().join("cache"))
    };
    let r = run(&o, &Silent).unwrap();
    assert!(r.complete && r.skipped.is_empty(), "{:?}", r.skipped);
    assert_eq!(r.arrays, names);
    assert!(
        r.summary().contains("arrays: mel, linear, energy, f0, wav"),
        "{}",
        r.summary()
    );
    // The same dataset with the mel alone is another cache.
    let mel_only = Options::new(&data, tmp.path().join("cache"));
    let key_mel_only =
        gpufeed_data::cache::FeatureSettings::new(mel_only.audio.clone(), mel_only.text.clone())
            .key();
    assert_ne!(r.key, key_mel_only);
    let cache = Cache::open(&r.cache_dir).unwrap();
    let names: Vec<&str> = cache.arrays().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["linear", "energy", "f0", "wav", "voiced"]);
    let mut mel = gpufeed_audio::mel::MelExtractor::new(&o.audio).unwrap();
    let mut pitch =
        gpufeed_audio::PitchTracker::new(&PitchSettings::default(), 22050, 256, 0).unwrap();
    for i in (0..cache.len()).step_by(7) {
        let it = cache.item(i);
        let frames = it.mel_frames as usize;
        let audio = gpufeed_audio::decode::load(&data.join(&it.source.path), 22050).unwrap();
        let (mut m, mut linear, mut energy) = (Vec::new(), Vec::new(), Vec::new());
        mel.compute_with(
            &audio.samples,
            &mut m,
            gpufeed_audio::Spectra {
                linear: Some(&mut linear),
                energy: Some(&mut energy),
            },
        )
        .unwrap();
        assert_eq!(cache.mel(i), &m[..], "{}", it.id);
        let get = |name: &str| cache.array(name, i).unwrap();
        let lin = get("linear");
        assert_eq!(
            (lin.rows, lin.spec.width, lin.spec.dtype),
            (frames, 513, Dtype::F32)
        );
        assert_eq!(lin.bytes, bytemuck::cast_slice::<f32, u8>(&linear));
        assert_eq!(
            get("energy").bytes,
            bytemuck::cast_slice::<f32, u8>(&energy)
        );
        let (mut f0, mut voiced) = (Vec::new(), Vec::new());
        pitch.compute_into(&audio.samples, frames, &mut f0, &mut voiced);
        assert_eq!(get("f0").bytes, bytemuck::cast_slice::<f32, u8>(&f0));
        assert_eq!(get("voiced").bytes, &voiced[..]);
        assert_eq!(get("f0").rows, frames);
        // The waveform: exactly frames × hop samples, the audio as 16-bit PCM then zeros,
        // so that mel frames [a, b) are samples [a·hop, b·hop).
        let wav = get("wav");
        assert_eq!((wav.rows, wav.spec.dtype), (frames * 256, Dtype::I16));
        let pcm: Vec<i16> = bytemuck::pod_collect_to_vec(wav.bytes);
        assert!(audio.samples.len() <= pcm.len());
        for (k, (&x, &q)) in audio.samples.iter().zip(&pcm).enumerate() {
            assert_eq!(
                f64::from(q),
                f64::from(x) * 32768.0,
                "{}: sample {k}",
                it.id
            );
        }
        assert!(pcm[audio.samples.len()..].iter().all(|&q| q == 0));
        // A crop of frames [a, b) and its samples: the mel of the crop's samples (interior
        // frames, away from the padding) is the cache's mel of those frames.
        let (a, b) = (10, 30);
        let crop: Vec<f32> = pcm[a * 256..b * 256]
            .iter()
            .map(|&q| f32::from(q) / 32768.0)
            .collect();
        let m_crop = mel.compute(&crop).unwrap();
        let n = 80;
        for t in 3..(b - a - 3) {
            let ours = &m_crop.data[t * n..(t + 1) * n];
            let cached = &cache.mel(i)[(a + t) * n..(a + t + 1) * n];
            for (x, y) in ours.iter().zip(cached) {
                assert!((x - y).abs() < 1e-4, "{}: frame {}", it.id, a + t);
            }
        }
    }
    // The loader carries every array, padded like the mel, with its true lengths.
    let cache = std::sync::Arc::new(cache);
    let loader = gpufeed_data::loader::Loader::new(
        std::sync::Arc::clone(&cache),
        gpufeed_data::loader::LoaderConfig {
            batch_size: 3,
            workers: 1,
            padding: gpufeed_data::loader::Padding::Longest { multiple: 1 },
            ..Default::default()
        },
    )
    .unwrap();
    let mut rows_seen = 0;
    for batch in loader.epoch(0) {
        let batch = batch.unwrap();
        let (_, [rows, max_frames, _]) = batch.mels();
        let names: Vec<&str> = batch
            .arrays()
            .iter()
            .map(|a| a.spec().name.as_str())
            .collect();
        assert_eq!(names, ["linear", "energy", "f0", "wav", "voiced"]);
        for array in batch.arrays() {
            let spec = array.spec();
            let [b, max_rows, width] = array.shape();
            assert_eq!(
                (b, max_rows, width),
                (rows, max_frames * spec.rows_per_frame, spec.width)
            );
            let row_bytes = max_rows * spec.row_bytes();
            for (r, &i) in batch.items().iter().enumerate() {
                let want = cache.array(&spec.name, i as usize).unwrap();
                assert_eq!(array.lengths()[r], want.rows as i64);
                let got = &array.bytes()[r * row_bytes..(r + 1) * row_bytes];
                assert_eq!(&got[..want.bytes.len()], want.bytes, "{}", spec.name);
                assert!(got[want.bytes.len()..].iter().all(|&x| x == 0));
            }
        }
        rows_seen += rows;
    }
    assert_eq!(rows_seen, cache.len());
    assert!(r.cache_bytes > 0 && r.bytes_per_hour() > 0);
    eprintln!(
        "{} items, {:.1} MB, {:.0} MB per hour of audio",
        cache.len(),
        r.cache_bytes as f64 / 1e6,
        r.bytes_per_hour() as f64 / 1e6
    );
}

#[test]
fn a_half_precision_mel_halves_its_bytes_within_its_rounding() {
    use gpufeed_data::arrays::{Arrays, Dtype};
    use gpufeed_data::cache::MelRef;
    let tmp = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ljspeech-mini");
    let build = |names: &[&str]| {
        let o = Options {
            arrays: Arrays::parse(names, (65.0, 1000.0)).unwrap(),
            ..Options::new(&data, tmp.path().join("cache"))
        };
        run(&o, &Silent).unwrap()
    };
    let full = build(&["mel"]);
    // The f32 mel leaves the key as it was before the option existed.
    assert_eq!(
        serde_json::to_string(&Arrays::default()).unwrap(),
        "{\"energy\":false}"
    );
    let f32_cache = Cache::open(&full.cache_dir).unwrap();
    // Relative error bounds of rounding to nearest: 2^-11 and 2^-8.
    for (name, dtype, bound) in [
        ("mel:float16", Dtype::F16, 4.9e-4),
        ("mel:bfloat16", Dtype::Bf16, 3.9e-3),
    ] {
        let r = build(&[name, "linear:bfloat16"]);
        assert_ne!(r.key, full.key);
        assert_eq!(r.arrays, [name, "linear:bfloat16"]);
        let cache = Cache::open(&r.cache_dir).unwrap();
        cache.verify().unwrap();
        assert_eq!(cache.mel_dtype(), dtype);
        let lin = cache.array("linear", 0).unwrap();
        assert_eq!(lin.spec.dtype, Dtype::Bf16);
        for i in 0..cache.len() {
            let (exact, half) = (f32_cache.mel(i), cache.mel(i));
            assert_eq!(exact.len(), half.len());
            assert!(matches!(
                (cache.mel_ref(i), dtype),
                (MelRef::F16(_), Dtype::F16) | (MelRef::Bf16(_), Dtype::Bf16)
            ));
            for (k, (&x, &y)) in exact.iter().zip(half.iter()).enumerate() {
                // The log mel is at least ln(1e-5) = -11.5 in size, so f16 stays normal.
                assert!(
                    (x - y).abs() <= bound * x.abs(),
                    "{name} item {i} value {k}: {x} vs {y}"
                );
            }
        }
        // The mel's bytes are half: the shards shrink by about that much.
        let bytes = |c: &Cache| -> u64 { c.manifest().shards.iter().map(|s| s.bytes).sum() };
        let mel_bytes = f32_cache.manifest().totals.mel_frames * 80 * 4;
        let lin_bytes = cache.manifest().totals.mel_frames * 513 * 2;
        let saved = (bytes(&f32_cache) + lin_bytes) as f64 - bytes(&cache) as f64;
        assert!(
            (saved - mel_bytes as f64 / 2.0).abs() < 0.01 * mel_bytes as f64,
            "{saved} of {mel_bytes}"
        );
        // The loader widens it into the f32 batch, exactly.
        let cache = std::sync::Arc::new(cache);
        let loader = gpufeed_data::loader::Loader::new(
            std::sync::Arc::clone(&cache),
            gpufeed_data::loader::LoaderConfig {
                batch_size: 4,
                workers: 1,
                padding: gpufeed_data::loader::Padding::Longest { multiple: 1 },
                ..Default::default()
            },
        )
        .unwrap();
        for batch in loader.epoch(0) {
            let batch = batch.unwrap();
            let (mels, [_, t, n]) = batch.mels();
            for (r, &i) in batch.items().iter().enumerate() {
                let want = cache.mel(i as usize);
                assert_eq!(&mels[r * t * n..r * t * n + want.len()], &want[..]);
            }
        }
    }
}
