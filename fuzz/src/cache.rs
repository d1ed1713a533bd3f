//! A hostile feature cache ([`gpufeed_data::cache::Cache`]): a `manifest.json` and one
//! safetensors shard whose offsets, lengths and header may lie.
//!
//! Input: a little-endian `u32` n, then n bytes of `manifest.json` (fewer when the input is
//! shorter), then the bytes of `shard.safetensors`, the file the seeds' manifests name.

use gpufeed_data::cache::{self, Cache};

use crate::scratch;

/// Opens the cache in `data` and reads every item of it.
pub fn run(data: &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let len = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (manifest, shard) = rest.split_at(len);
    scratch::with_dir(|dir| {
        scratch::write(dir, cache::MANIFEST, manifest);
        let shard_path = scratch::write(dir, "shard.safetensors", shard);
        if let Err(e) = cache::read_shard_meta(&shard_path) {
            names_a_file(&e);
        }
        match Cache::open(dir) {
            Ok(cache) => {
                for i in 0..cache.len() {
                    let _ = (cache.item(i), cache.mel(i), cache.tokens(i));
                    for spec in cache.arrays() {
                        let _ = cache.array(&spec.name, i);
                    }
                }
                if let Err(e) = cache.verify() {
                    names_a_file(&e);
                }
            }
            Err(e) => names_a_file(&e),
        }
    });
}

fn names_a_file(e: &gpufeed_data::DataError) {
    let message = e.to_string();
    assert!(
        message.contains("fuzz-"),
        "the error does not name the file: {message}"
    );
}
