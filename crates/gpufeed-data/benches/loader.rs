//! Loader throughput (issue 4's performance points), printed as ratios:
//!
//! 1. **Static batches `[32, 800, 80]` f32 from a warm cache**, in bytes per second of
//!    delivered batches, against `memcpy` bandwidth measured in the same run (one thread
//!    copying a buffer the size of a batch, repeatedly). Target: at least 0.5 of memcpy.
//! 2. **A 20 ms consumer** (a simulated GPU step): the share of its step spent waiting for
//!    the next batch. Target: under 1 %.
//! 3. **The usual Python route**, when python3 with numpy is installed: one `.npy` file per
//!    utterance (as Coqui and NeMo cache), loaded and padded into the same batches by a
//!    `multiprocessing.Pool` with as many processes as the loader has workers; the ratio of
//!    the two throughputs.
//!
//! The cache holds 1,024 utterances of 100-800 frames (LJSpeech's spread at hop 256),
//! written once; the loader reads it through the page cache.
//!
//! ```text
//! cargo bench -p gpufeed-data --bench loader
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpufeed_data::cache::{
    self, AudioFacts, Cache, CachedItem, Manifest, ShardData, ShardMeta, SourceId, Totals, WriteIo,
};
use gpufeed_data::loader::{Loader, LoaderConfig, Padding};

const ITEMS: usize = 1024;
const N_MELS: usize = 80;
const BATCH: usize = 32;
const MAX_FRAMES: usize = 800;

fn frames_of(i: usize) -> usize {
    100 + (i * 7919) % 701
}

fn build(dir: &Path) -> Cache {
    std::fs::create_dir_all(dir).unwrap();
    let mut items = Vec::new();
    let mut shards = Vec::new();
    for (s, ids) in (0..ITEMS)
        .collect::<Vec<_>>()
        .chunks(cache::SHARD_ITEMS)
        .enumerate()
    {
        let mut data = ShardData::new();
        let mut meta = ShardMeta {
            format: cache::FORMAT.into(),
            version: cache::VERSION,
            key: "bench".into(),
            shard: s as u32,
            items: vec![],
            skipped: vec![],
        };
        for (row, &i) in ids.iter().enumerate() {
            let f = frames_of(i);
            let mel: Vec<f32> = (0..f * N_MELS)
                .map(|k| (k % 97) as f32 * 0.01 - 5.0)
                .collect();
            data.push(&mel, f, &vec![7; 60 + i % 120]).unwrap();
            meta.items.push(CachedItem {
                id: format!("u{i}"),
                text: String::new(),
                line: i + 1,
                shard: s as u32,
                row: row as u32,
                mel_frames: f as u32,
                text_tokens: (60 + i % 120) as u32,
                audio: AudioFacts {
                    duration_s: f as f64 * 256.0 / 22050.0,
                    source_rate: 22050,
                    peak: 0.9,
                    clipped_samples: 0,
                    silence_fraction: 0.1,
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
        let file = format!("shard-{s:05}-bench.safetensors");
        shards.push(
            cache::write_shard(&dir.join(&file), &mut data, N_MELS, &meta, WriteIo::Direct)
                .unwrap(),
        );
        items.extend(meta.items);
    }
    let manifest = Manifest {
        format: cache::FORMAT.into(),
        version: cache::VERSION,
        key: "bench".into(),
        settings: cache::FeatureSettings::new(Default::default(), Default::default()),
        symbols: serde_json::Value::Null,
        limits: Default::default(),
        dataset: "metadata.csv".into(),
        layout: "ljspeech".into(),
        speakers: Vec::new(),
        languages: Vec::new(),
        arrays: Vec::new(),
        user_arrays: Vec::new(),
        written_by: "bench".into(),
        shards,
        items,
        skipped: vec![],
        totals: Totals::default(),
    };
    std::fs::write(
        dir.join(cache::MANIFEST),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    Cache::open(dir).unwrap()
}

/// Bytes per second of one thread copying a batch-sized buffer.
fn memcpy_bandwidth() -> f64 {
    let n = BATCH * MAX_FRAMES * N_MELS;
    let src = vec![1.5f32; n];
    let mut dst = vec![0f32; n];
    dst.copy_from_slice(&src); // touch the pages first
    let reps = 200;
    let t = Instant::now();
    for _ in 0..reps {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
    }
    (reps * n * 4) as f64 / t.elapsed().as_secs_f64()
}

/// Batch bytes per second and the mean wait per batch, over `batches` after a warm-up.
fn run(loader: &Loader, batches: usize, consumer: Duration) -> (f64, f64) {
    let mut stream = loader.stream(0);
    for _ in 0..8 {
        drop(stream.next().unwrap().unwrap());
    }
    let (mut bytes, mut wait) = (0u64, Duration::ZERO);
    let t = Instant::now();
    for _ in 0..batches {
        let w = Instant::now();
        let b = stream.next().unwrap().unwrap();
        wait += w.elapsed();
        bytes += b.data_bytes + b.pad_bytes;
        drop(b);
        if !consumer.is_zero() {
            std::thread::sleep(consumer);
        }
    }
    (
        bytes as f64 / t.elapsed().as_secs_f64(),
        wait.as_secs_f64() * 1e3 / batches as f64,
    )
}

const PYTHON: &str = r#"
import sys, time, glob, numpy as np
from multiprocessing import Pool
B, T, M = 32, 800, 80
files = sorted(glob.glob(sys.argv[1] + "/*.npy"))
workers = int(sys.argv[2])
def load_batch(chunk):
    out = np.zeros((B, T, M), dtype=np.float32)
    for r, f in enumerate(chunk):
        a = np.load(f)[:T]
        out[r, :a.shape[0]] = a
    return out
chunks = [files[i:i + B] for i in range(0, len(files) - B + 1, B)]
with Pool(workers) as pool:
    list(pool.imap(load_batch, chunks[:4]))          # warm-up
    t = time.perf_counter(); n = 0
    for _ in range(3):
        for b in pool.imap(load_batch, chunks):
            n += b.nbytes
    print(n / (time.perf_counter() - t))
"#;

fn python_route(dir: &Path, cache: &Cache, workers: usize) -> Option<f64> {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .ok()?
        .status
        .success();
    if !ok {
        return None;
    }
    let npy = dir.join("npy");
    std::fs::create_dir_all(&npy).unwrap();
    for i in 0..cache.len() {
        let f = cache.item(i).mel_frames as usize;
        let header =
            format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({f}, {N_MELS}), }}");
        let mut h = header.into_bytes();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
        bytes.extend_from_slice(&h);
        bytes.extend_from_slice(bytemuck::cast_slice(&cache.mel(i)));
        std::fs::write(npy.join(format!("u{i:05}.npy")), bytes).unwrap();
    }
    let out = std::process::Command::new("python3")
        .args(["-c", PYTHON, npy.to_str().unwrap(), &workers.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Arc::new(build(&tmp.path().join("cache")));
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let config = LoaderConfig {
        batch_size: BATCH,
        workers,
        prefetch: 2 * workers,
        padding: Padding::Fixed {
            max_text: 200,
            max_frames: MAX_FRAMES,
        },
        bucket_window: 1,
        ..LoaderConfig::default()
    };
    let loader = Loader::new(Arc::clone(&cache), config).unwrap();
    println!(
        "loader: {ITEMS} utterances, static batches [{BATCH}, {MAX_FRAMES}, {N_MELS}] f32, {workers} workers, warm page cache"
    );
    let memcpy = memcpy_bandwidth();
    let (rate, _) = run(&loader, 200, Duration::ZERO);
    println!("  memcpy (1 thread)        {:>8.2} GB/s", memcpy / 1e9);
    println!(
        "  loader                   {:>8.2} GB/s  {:.2}x of memcpy (target >= 0.5)",
        rate / 1e9,
        rate / memcpy
    );
    let (_, wait) = run(&loader, 100, Duration::from_millis(20));
    println!(
        "  20 ms consumer: waits {wait:.3} ms per step, {:.2} % of the step (target < 1 %)",
        wait / 20.0 * 100.0
    );
    match python_route(tmp.path(), &cache, workers) {
        Some(py) => println!(
            "  python multiprocessing over .npy files ({workers} processes): {:.2} GB/s; gpufeed is {:.1}x",
            py / 1e9,
            rate / py
        ),
        None => println!("  python3 with numpy not found: no comparison with the .npy route"),
    }
}
