//! The step profiler: each training step split into phases, each phase timed as the host
//! sees it after the device has finished it.
//!
//! A step is: wait for the next batch from the loader (`data_wait`), copy it to the data
//! device (`h2d_copy`), move it to the model's device when that is another one
//! (`device_copy`, the seeds' dual-GPU layout), `forward`, `loss`, `backward`, `optimizer`.
//! With `sync` on (the default) every device involved is synchronised before a phase's
//! timer is read, so queued GPU work is charged to the phase that queued it; without it the
//! timers show launch times, and only the whole step is meaningful. The phase timers
//! telescope (one clock reading ends a phase and starts the next); what a step spends after
//! the optimizer (dropping the batch, the gradients) is reported as `unaccounted`.
//!
//! After the timed steps, each of a few more batches is run untimed (one clock reading
//! around the step), timed without sync and timed with sync: on the same batch, the
//! difference of the medians is the cost of the phase timers, and the synced median against
//! the untimed one is the overlap of host and device work that the syncs remove.

use std::time::Instant;

use candle_core::{Device, Tensor};
use gpufeed_data::DataError;
use gpufeed_data::loader::Batch;

use crate::TrainError;
use crate::train::Trainer;

/// A phase of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the loader's next batch.
    DataWait,
    /// Copying the batch from host memory to the data device.
    H2dCopy,
    /// Copying from the data device to the model's device (only when they differ).
    DeviceCopy,
    /// The forward pass.
    Forward,
    /// The loss.
    Loss,
    /// The backward pass.
    Backward,
    /// The optimizer step.
    Optimizer,
}

impl Phase {
    /// The name in reports and JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::DataWait => "data_wait",
            Self::H2dCopy => "h2d_copy",
            Self::DeviceCopy => "device_copy",
            Self::Forward => "forward",
            Self::Loss => "loss",
            Self::Backward => "backward",
            Self::Optimizer => "optimizer",
        }
    }

    /// Whether the phase feeds the model rather than computing (TF Profiler's input time).
    #[must_use]
    pub fn is_input(self) -> bool {
        matches!(self, Self::DataWait | Self::H2dCopy | Self::DeviceCopy)
    }

    /// Whether the phase moves bytes between memories.
    #[must_use]
    pub fn is_copy(self) -> bool {
        matches!(self, Self::H2dCopy | Self::DeviceCopy)
    }
}

/// How many steps, and how they are timed.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Steps run first and not timed (allocations, kernel selection, loader start).
    pub warmup: usize,
    /// Steps timed phase by phase.
    pub steps: usize,
    /// Synchronise the devices before reading each phase timer.
    pub sync: bool,
    /// Batches run once per timing variant (untimed, timed without sync, timed with sync)
    /// for the overhead figures; 0 skips them.
    pub compare_pairs: usize,
}

/// The instrumentation's cost and the overlap the syncs remove (a field of the
/// `profile-step` document).
pub use gpufeed_contract::Overhead;

/// What the profiler measured.
#[derive(Debug, Clone)]
pub struct StepProfile {
    /// Phases that occurred, in step order, with one duration per timed step, ms.
    pub phases: Vec<(Phase, Vec<f64>)>,
    /// Whole steps, ms (from the request for the batch to the end of the step's cleanup).
    pub step_ms: Vec<f64>,
    /// Step time not inside a phase (cleanup after the optimizer), ms per step.
    pub unaccounted_ms: Vec<f64>,
    /// Utterances per timed step.
    pub samples: Vec<usize>,
    /// Loss of the first and of the last timed step.
    pub loss_first: f32,
    /// See `loss_first`.
    pub loss_last: f32,
    /// Wall time of the timed steps, s.
    pub elapsed_s: f64,
    /// Timer cost and sync overlap, when measured.
    pub overhead: Option<Overhead>,
}

fn ms(a: Instant, b: Instant) -> f64 {
    b.duration_since(a).as_secs_f64() * 1e3
}

/// Runs a step on `batch` after its data wait, which `marks[0]..marks[1]` hold. When
/// `timed`, reads the clock after each later phase into `marks[2..8]` (synchronising the
/// device first when `sync`); untimed, leaves them alone. Returns the loss tensor, not read
/// back (reading it is a sync).
fn run_step(
    trainer: &mut Trainer,
    batch: &Batch,
    data_device: &Device,
    timed: bool,
    sync: bool,
    marks: &mut [Instant; 8],
) -> Result<Tensor, TrainError> {
    let model_device = trainer.model().device().clone();
    let same = data_device.same_device(&model_device);
    let mark = |marks: &mut [Instant; 8], i: usize, dev: &Device| -> Result<(), TrainError> {
        if timed {
            if sync {
                dev.synchronize()?;
            }
            marks[i] = Instant::now();
        }
        Ok(())
    };
    let staged = trainer.stage(batch, data_device)?;
    mark(marks, 2, data_device)?;
    let x = if same {
        // No device copy: the phase is absent, not a few nanoseconds long.
        marks[3] = marks[2];
        staged
    } else {
        let x = staged.to_device(&model_device)?;
        mark(marks, 3, &model_device)?;
        x
    };
    let predicted = trainer.forward(&x)?;
    mark(marks, 4, &model_device)?;
    let loss = trainer.loss(&predicted, &x)?;
    mark(marks, 5, &model_device)?;
    let grads = trainer.backward(&loss)?;
    mark(marks, 6, &model_device)?;
    trainer.update(&grads)?;
    mark(marks, 7, &model_device)?;
    drop(grads);
    drop(predicted);
    drop(x);
    Ok(loss)
}

/// The loader's next batch.
fn next_batch<I>(batches: &mut I) -> Result<Batch, TrainError>
where
    I: Iterator<Item = Result<Batch, DataError>>,
{
    Ok(batches
        .next()
        .ok_or_else(|| TrainError::Usage("the loader stream ended".into()))??)
}

/// Profiles `options.steps` training steps on batches from `batches` (after
/// `options.warmup` untimed ones), the batches staged on `data_device`.
///
/// # Errors
/// `steps` of 0; a loader, copy or tensor failure.
pub fn profile<I>(
    trainer: &mut Trainer,
    batches: &mut I,
    data_device: &Device,
    options: Options,
) -> Result<StepProfile, TrainError>
where
    I: Iterator<Item = Result<Batch, DataError>>,
{
    if options.steps == 0 {
        return Err(TrainError::Usage("time at least one step".into()));
    }
    let model_device = trainer.model().device().clone();
    let same = data_device.same_device(&model_device);
    for _ in 0..options.warmup {
        let batch = next_batch(batches)?;
        run_step(
            trainer,
            &batch,
            data_device,
            false,
            false,
            &mut [Instant::now(); 8],
        )?;
    }
    model_device.synchronize()?;
    data_device.synchronize()?;
    let order = [
        Phase::DataWait,
        Phase::H2dCopy,
        Phase::DeviceCopy,
        Phase::Forward,
        Phase::Loss,
        Phase::Backward,
        Phase::Optimizer,
    ];
    let mut phases: Vec<(Phase, Vec<f64>)> = order
        .iter()
        .filter(|p| !same || **p != Phase::DeviceCopy)
        .map(|&p| (p, Vec::with_capacity(options.steps)))
        .collect();
    let mut step_ms = Vec::with_capacity(options.steps);
    let mut unaccounted_ms = Vec::with_capacity(options.steps);
    let mut samples = Vec::with_capacity(options.steps);
    let mut losses = (None, None);
    let started = Instant::now();
    for i in 0..options.steps {
        let mut t = [Instant::now(); 8];
        let batch = next_batch(batches)?;
        t[1] = Instant::now();
        let loss = run_step(trainer, &batch, data_device, true, options.sync, &mut t)?;
        let rows = batch.rows();
        drop(batch);
        let end = Instant::now();
        for (phase, v) in &mut phases {
            let k = order.iter().position(|p| p == phase).unwrap_or(0);
            v.push(ms(t[k], t[k + 1]));
        }
        step_ms.push(ms(t[0], end));
        unaccounted_ms.push(ms(t[7], end));
        samples.push(rows);
        if i == 0 {
            losses.0 = Some(loss);
        } else if i + 1 == options.steps {
            losses.1 = Some(loss);
        }
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    let read = |l: Option<Tensor>| -> Result<Option<f32>, TrainError> {
        l.map(|l| l.to_scalar::<f32>())
            .transpose()
            .map_err(Into::into)
    };
    let loss_first = read(losses.0)?.unwrap_or(f32::NAN);
    let loss_last = read(losses.1)?.unwrap_or(loss_first);
    let overhead = if options.compare_pairs > 0 {
        Some(compare(trainer, batches, data_device, options)?)
    } else {
        None
    };
    Ok(StepProfile {
        phases,
        step_ms,
        unaccounted_ms,
        samples,
        loss_first,
        loss_last,
        elapsed_s,
        overhead,
    })
}

/// Runs each of `pairs` batches untimed, timed without sync and (with `sync` on) timed
/// with sync, in an order that rotates from pair to pair so that no variant always runs
/// first; each run is measured from outside with the device idle at the start and finished
/// at the end. The same batch for every variant makes them differ only by the
/// instrumentation.
fn compare<I>(
    trainer: &mut Trainer,
    batches: &mut I,
    data_device: &Device,
    options: Options,
) -> Result<Overhead, TrainError>
where
    I: Iterator<Item = Result<Batch, DataError>>,
{
    let model_device = trainer.model().device().clone();
    // (timed, sync) of each variant.
    let variants: &[(bool, bool)] = if options.sync {
        &[(false, false), (true, false), (true, true)]
    } else {
        &[(false, false), (true, false)]
    };
    let mut took: Vec<Vec<f64>> = vec![Vec::with_capacity(options.compare_pairs); variants.len()];
    for pair in 0..options.compare_pairs {
        let batch = next_batch(batches)?;
        for k in 0..variants.len() {
            let v = (pair + k) % variants.len();
            let (timed, sync) = variants[v];
            model_device.synchronize()?;
            data_device.synchronize()?;
            let t0 = Instant::now();
            let mut marks = [t0; 8];
            run_step(trainer, &batch, data_device, timed, sync, &mut marks)?;
            model_device.synchronize()?;
            took[v].push(ms(t0, Instant::now()));
        }
    }
    let median = gpufeed_stats::summary::median;
    let (u, t) = (median(&took[0]), median(&took[1]));
    let synced = took.get(2).map(|v| median(v));
    Ok(Overhead {
        pairs: options.compare_pairs,
        untimed_median_ms: u,
        timed_median_ms: t,
        timer_share: t / u - 1.0,
        synced_median_ms: synced,
        sync_share: synced.map(|s| s / u - 1.0),
    })
}
