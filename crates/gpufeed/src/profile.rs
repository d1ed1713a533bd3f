//! `gpufeed profile data` and `gpufeed profile step`: the arguments as settings, the
//! measurement (`gpufeed_analysis::profile`), the report printed.

use std::process::ExitCode;

use anyhow::Result;
use gpufeed_analysis::profile::{self, DataSettings, StepSettings, step_text};

use crate::cli::{ProfileDataArgs, ProfileStepArgs};
use crate::printer;
use crate::ui::Terminal;

fn data_settings(a: &ProfileDataArgs) -> Result<DataSettings> {
    Ok(DataSettings {
        data: a.data.clone(),
        cache: a.cache.clone(),
        config: crate::precompute::training_config(a.config.as_deref())?,
        batch_size: a.batch_size,
        workers: a.workers,
        batches: a.batches,
        benchmark: a.benchmark,
        consumer_ms: a.consumer_ms,
    })
}

fn step_settings(a: &ProfileStepArgs) -> Result<StepSettings> {
    Ok(StepSettings {
        data: a.data.clone(),
        config: crate::precompute::training_config(a.config.as_deref())?,
        model: a.model.clone(),
        device: a.device.clone(),
        data_device: a.data_device.clone(),
        batch_size: a.batch_size,
        dtype: a.dtype.clone(),
        steps: a.steps,
        warmup: a.warmup,
        no_sync: a.no_sync,
    })
}

/// `gpufeed profile data`.
pub fn data(args: &ProfileDataArgs) -> Result<ExitCode> {
    let p = profile::data_profile(&data_settings(args)?, &Terminal::new())?;
    printer::export(args.output.format, &p.doc, |d| {
        profile::render(d, args.consumer_ms, &p.loader)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed profile step`.
pub fn step(args: &ProfileStepArgs) -> Result<ExitCode> {
    let doc = profile::step_profile(&step_settings(args)?, &Terminal::new())?.doc;
    printer::export(args.output.format, &doc, step_text::render)?;
    Ok(ExitCode::SUCCESS)
}
