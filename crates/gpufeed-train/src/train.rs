//! The trainer: the model, AdamW over its variables, and one training step split into the
//! phases the profiler times.

use candle_core::backprop::GradStore;
use candle_core::{Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use gpufeed_data::loader::Batch;

use crate::TrainError;
use crate::model::{Inputs, Model, stage};

/// AdamW's learning rate: high enough that `tiny` visibly learns in 100 steps, the usual
/// order for small transformers with warm-up-free AdamW.
pub const LEARNING_RATE: f64 = 1e-3;

/// The model and its optimizer.
#[derive(Debug)]
pub struct Trainer {
    model: Model,
    optimizer: AdamW,
}

impl Trainer {
    /// AdamW ([`LEARNING_RATE`], weight decay 0.01) over the model's variables.
    ///
    /// # Errors
    /// A device failure while allocating the moments.
    pub fn new(model: Model) -> Result<Self, TrainError> {
        let params = ParamsAdamW {
            lr: LEARNING_RATE,
            ..ParamsAdamW::default()
        };
        let optimizer = AdamW::new(model.vars().to_vec(), params)?;
        Ok(Self { model, optimizer })
    }

    /// The model.
    #[must_use]
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Copies a batch from the loader to `device` as the model's inputs (the host-to-device
    /// copy of a step).
    ///
    /// # Errors
    /// A batch that does not fit the model (other `n_mels`, a token outside the vocabulary);
    /// a failed copy.
    pub fn stage(&mut self, batch: &Batch, device: &Device) -> Result<Inputs, TrainError> {
        let (tokens, [b, t]) = batch.tokens();
        let (mels, [_, frames, n_mels]) = batch.mels();
        let config = self.model.config();
        if n_mels != config.n_mels {
            return Err(TrainError::Usage(format!(
                "the cache holds {n_mels} mel bands and the model predicts {}",
                config.n_mels
            )));
        }
        let positions = self.model.positions_for(frames);
        self.model.reserve(t, positions)?;
        stage(
            self.model.config(),
            tokens,
            (b, t),
            mels,
            frames,
            batch.text_lengths(),
            batch.mel_lengths(),
            self.model.dtype(),
            device,
        )
    }

    /// The forward pass.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn forward(&self, x: &Inputs) -> Result<Tensor, TrainError> {
        self.model.forward(x)
    }

    /// The masked L1 loss.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn loss(&self, predicted: &Tensor, x: &Inputs) -> Result<Tensor, TrainError> {
        self.model.loss(predicted, x)
    }

    /// The backward pass.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn backward(&self, loss: &Tensor) -> Result<GradStore, TrainError> {
        Ok(loss.backward()?)
    }

    /// The optimizer step.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn update(&mut self, grads: &GradStore) -> Result<(), TrainError> {
        Ok(self.optimizer.step(grads)?)
    }

    /// One whole step on a batch, untimed; returns the loss before the update.
    ///
    /// # Errors
    /// As the phases.
    pub fn step(&mut self, batch: &Batch) -> Result<f32, TrainError> {
        let device = self.model.device().clone();
        let x = self.stage(batch, &device)?;
        let predicted = self.forward(&x)?;
        let loss = self.loss(&predicted, &x)?;
        let grads = self.backward(&loss)?;
        self.update(&grads)?;
        Ok(loss.to_scalar::<f32>()?)
    }
}
