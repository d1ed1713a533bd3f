//! Hugging Face datasets: Parquet files and `save_to_disk` folders with an `Audio` column.

use super::{Probe, ReadOptions};
use crate::error::DataError;
use crate::manifest::Dataset;

pub(super) fn fit(probe: &Probe) -> u8 {
    if probe.dir {
        let parquet = probe.names.iter().any(|n| n.ends_with(".parquet"));
        let saved = probe.has("state.json") && probe.has("dataset_info.json");
        return if saved { 3 } else { u8::from(parquet) * 2 };
    }
    u8::from(probe.head.starts_with(b"PAR1") || probe.file_name().ends_with(".arrow")) * 3
}

pub(super) fn read(probe: &Probe, _options: &ReadOptions) -> Result<Dataset, DataError> {
    Err(DataError::Dataset(format!(
        "`{}` is a Hugging Face dataset; gpufeed's reader of Parquet and Arrow is not built \
         yet: export it with `datasets` to a folder of audio files and a `manifest.jsonl` \
         (`audio_path`, `text`, `speaker`)",
        probe.path.display()
    )))
}
