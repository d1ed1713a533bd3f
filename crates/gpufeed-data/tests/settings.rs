//! The command line and the Python package resolve the loader's settings through one
//! function (`gpufeed_data::settings`): with a config and without one they agree on every
//! setting but the documented differences (Python's static shape without a config, its
//! 64-bit ids), and so give the same epoch order.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use gpufeed_config::Config;
use gpufeed_data::cache::Cache;
use gpufeed_data::loader::{Loader, LoaderConfig, Padding};
use gpufeed_data::precompute::{Silent, run};
use gpufeed_data::settings::{
    Environment, Frontend, LoaderArgs, LoaderSettings, precompute_options,
};

fn cache_of(dir: &Path, config: &Config) -> Arc<Cache> {
    let data = dir.join("data");
    gpufeed_data::demo::generate(&data, 23, 7).unwrap();
    let report = run(&precompute_options(&data, None, config).unwrap(), &Silent).unwrap();
    Arc::new(Cache::open(&report.cache_dir).unwrap())
}

fn longest(cache: &Cache) -> (usize, usize) {
    let items = &cache.manifest().items;
    (
        items.iter().map(|i| i.text_tokens as usize).max().unwrap(),
        items.iter().map(|i| i.mel_frames as usize).max().unwrap(),
    )
}

fn both(
    cache: &Cache,
    config: &Config,
    file: bool,
    env: &Environment,
) -> (LoaderConfig, LoaderConfig) {
    let args = LoaderArgs::default();
    let cli = LoaderSettings::resolve(&args, config, file, env, Frontend::Cli, || longest(cache))
        .unwrap();
    let py = LoaderSettings::resolve(&args, config, file, env, Frontend::Python, || {
        longest(cache)
    })
    .unwrap();
    (cli, py)
}

fn order(cache: &Arc<Cache>, lc: LoaderConfig) -> Vec<Vec<u32>> {
    Loader::new(Arc::clone(cache), lc).unwrap().plan(0).batches
}

#[test]
fn without_a_config_the_cli_and_python_agree_but_for_the_documented_differences() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default();
    let cache = cache_of(dir.path(), &config);
    let env = Environment::default();
    let (cli, py) = both(&cache, &config, false, &env);
    // The one table of defaults: the config schema's.
    assert_eq!(
        (cli.batch_size, cli.seed, cli.bucket_window, cli.shuffle),
        (56, 42, 1, true)
    );
    assert_eq!(cli, LoaderConfig::default());
    // Python: one static shape (the dataset's longest item) and 64-bit ids.
    let (text, frames) = longest(&cache);
    assert_eq!(
        py.padding,
        Padding::Fixed {
            max_text: text,
            max_frames: frames
        }
    );
    assert!(py.int64 && !cli.int64);
    assert_eq!(
        LoaderConfig {
            padding: cli.padding,
            int64: false,
            ..py.clone()
        },
        cli
    );
    // Nothing is over the longest item's shape: the same items in the same batches.
    let small = |lc: LoaderConfig| LoaderConfig {
        batch_size: 4,
        workers: 0,
        ..lc
    };
    assert_eq!(order(&cache, small(cli)), order(&cache, small(py)));
}

#[test]
fn with_a_config_and_the_environment_the_cli_and_python_agree() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "data:\n  batch_size: 3\n  num_workers: 2\n  seed: 7\n  bucket_window: 2\n  \
                pad_to_fixed_length: true\n  max_text_length: 150\n  max_mel_frames: 900\n";
    let config = gpufeed_config::from_str(yaml, Path::new("config.yaml"))
        .unwrap()
        .config;
    let cache = cache_of(dir.path(), &config);
    let env = Environment::read(|k| match k {
        "RANK" => Some("1".into()),
        "WORLD_SIZE" => Some("2".into()),
        _ => None,
    })
    .unwrap();
    let (cli, py) = both(&cache, &config, true, &env);
    assert_eq!((cli.batch_size, cli.workers, cli.seed), (3, 2, 7));
    assert_eq!((cli.rank, cli.world_size), (1, 2));
    assert_eq!(
        cli.padding,
        Padding::Fixed {
            max_text: 150,
            max_frames: 900
        }
    );
    assert_eq!(LoaderConfig { int64: false, ..py }, cli);
    let a = order(&cache, cli.clone());
    assert!(!a.is_empty());
    assert_eq!(a, order(&cache, LoaderConfig { int64: true, ..cli }));
}
