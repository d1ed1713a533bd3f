//! Cache benchmarks (issue 3's performance points), printed as ratios:
//!
//! 1. **Precompute scaling**: the same demo dataset precomputed with 1 and with 2 worker
//!    threads (fresh cache each time), round after round; the ratio of the best
//!    throughputs and the spread of the per-round ratios.
//! 2. **Opening a complete cache of 13,100 utterances** (LJSpeech's size), built directly
//!    with realistic manifest records and short arrays (the arrays are memory-mapped, so
//!    their size does not change the cost of opening); median of 5 opens.
//!
//! ```text
//! cargo bench -p gpufeed-data --bench cache                 # 512 demo clips, 2 shards
//! cargo bench -p gpufeed-data --bench cache -- --clips 1024
//! cargo bench -p gpufeed-data --bench cache -- --buffered    # shards through the page cache
//! GPUFEED_BENCH_ROUNDS=10 cargo bench -p gpufeed-data --bench cache
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::disallowed_methods)]

use std::path::Path;
use std::time::Instant;

use gpufeed_data::cache::{
    self, AudioFacts, Cache, CachedItem, Manifest, ShardData, ShardMeta, SourceId, Totals, WriteIo,
};
use gpufeed_data::precompute::{Options, Silent, run};

fn scaling(dir: &Path, clips: usize, io: WriteIo) {
    let rounds: usize = std::env::var("GPUFEED_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let data = dir.join("demo");
    let demo = gpufeed_data::demo::generate(&data, clips, 3).unwrap();
    println!(
        "precompute scaling: {clips} demo clips, {:.0} s of audio, {io:?} shard writes, {rounds} rounds",
        demo.audio_s
    );
    // A first run touches memory and page cache the machine has not used yet, which on a
    // VM costs far more than reusing it; it is not timed. Then every round runs 1 and 2
    // jobs, in alternating order, so that neither pays a warm-up the other does not and a
    // slow spell of the machine hits both sides of a round.
    let once = |jobs: usize, n: usize| {
        let cache = dir.join(format!("cache-{jobs}-{n}"));
        let r = run(
            &Options {
                jobs: Some(jobs),
                io,
                ..Options::new(&data, &cache)
            },
            &Silent,
        )
        .unwrap();
        std::fs::remove_dir_all(&cache).unwrap();
        r.audio_s_computed / r.elapsed_s
    };
    once(2, 0);
    let mut rates = [Vec::new(), Vec::new()];
    for n in 1..=rounds {
        let order = if n % 2 == 1 { [0, 1] } else { [1, 0] };
        for k in order {
            rates[k].push(once(k + 1, n));
        }
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    for (k, r) in rates.iter().enumerate() {
        println!(
            "  {} job(s): {:>8.0} audio-s/s (best of {rounds})",
            k + 1,
            best(r)
        );
    }
    let mut ratios: Vec<f64> = rates[1].iter().zip(&rates[0]).map(|(b, a)| b / a).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "  2 jobs / 1 job: {:.2}x best against best; per round {:.2}x lowest, {:.2}x median, {:.2}x highest",
        best(&rates[1]) / best(&rates[0]),
        ratios[0],
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1]
    );
}

fn open(dir: &Path) {
    const ITEMS: usize = 13_100;
    const FRAMES: usize = 4;
    let key = "bench0000000000";
    let cdir = dir.join("open").join(key);
    std::fs::create_dir_all(&cdir).unwrap();
    let mut items = Vec::with_capacity(ITEMS);
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
            key: key.into(),
            shard: s as u32,
            items: Vec::new(),
            skipped: Vec::new(),
        };
        for (row, &i) in ids.iter().enumerate() {
            data.push(&vec![0.5f32; FRAMES * 80], FRAMES, &[5, 6, 7])
                .unwrap();
            meta.items.push(CachedItem {
                id: format!("LJ{:03}-{:04}", i / 300 + 1, i % 300 + 1),
                text: String::new(),
                line: i + 1,
                shard: s as u32,
                row: row as u32,
                mel_frames: FRAMES as u32,
                text_tokens: 3,
                audio: AudioFacts {
                    duration_s: 6.57,
                    source_rate: 22050,
                    peak: 0.9,
                    clipped_samples: 0,
                    silence_fraction: 0.12,
                },
                source: SourceId {
                    path: format!("wavs/LJ{:03}-{:04}.wav", i / 300 + 1, i % 300 + 1).into(),
                    size: 290_000,
                    mtime_ns: 1_700_000_000_000_000_000,
                },
                over_text_length: false,
                over_mel_frames: false,
                ..CachedItem::default()
            });
        }
        let file = format!("shard-{s:05}-000000000000.safetensors");
        shards.push(
            cache::write_shard(&cdir.join(&file), &mut data, 80, &meta, WriteIo::Direct).unwrap(),
        );
        items.extend(meta.items);
    }
    let manifest = Manifest {
        format: cache::FORMAT.into(),
        version: cache::VERSION,
        key: key.into(),
        settings: cache::FeatureSettings {
            audio: Default::default(),
            text: Default::default(),
            text_fingerprint: "bench".into(),
            arrays: Default::default(),
        },
        symbols: serde_json::json!({}),
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
        skipped: Vec::new(),
        totals: Totals::default(),
    };
    std::fs::write(
        cdir.join(cache::MANIFEST),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let size = std::fs::metadata(cdir.join(cache::MANIFEST)).unwrap().len();
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let c = Cache::open(&cdir).unwrap();
            assert_eq!(c.len(), ITEMS);
            std::hint::black_box(c.mel(ITEMS - 1));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "open a complete cache: {ITEMS} utterances, {} shards, manifest {:.1} MB: {:.1} ms (median of 5; target < 50 ms)",
        manifest.shards.len(),
        size as f64 / 1e6,
        times[2]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let clips = args
        .iter()
        .position(|a| a == "--clips")
        .and_then(|i| args.get(i + 1))
        .map_or(512, |c| c.parse().unwrap());
    let io = if args.iter().any(|a| a == "--buffered") {
        WriteIo::Buffered
    } else {
        WriteIo::Direct
    };
    // Beside the target folder, not in /tmp: /tmp may be a tmpfs, which takes no direct
    // writes and is not where a cache lives.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    scaling(dir.path(), clips, io);
    open(dir.path());
}
