//! A small, real TTS-like model: text embedding and transformer encoder, a length regulator
//! that expands the encoder states to the mel length, a transformer decoder and a linear
//! projection to `n_mels` (several frames per decoder position, Tacotron's reduction
//! factor), trained with a masked L1 loss on the true lengths and AdamW.
//!
//! The length regulator spreads the tokens evenly over the frames (frame `j` of an
//! utterance with `t` tokens and `f` decoder positions reads token `floor((j + 0.5) t / f)`),
//! FastSpeech's expansion with uniform durations: there is no aligner to learn, so the
//! model trains from the first step and its cost is that of a real non-autoregressive TTS
//! model of the same widths.
//!
//! Weights are drawn from gpufeed's one seeded generator ([`gpufeed_data::rng`]), so two
//! runs with the same seed start from the same model on every platform (candle's CPU
//! generator cannot be seeded).

use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::{Embedding, Module};
use gpufeed_data::rng::SplitMix64;

use crate::TrainError;

/// Model size presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Encoder 64 wide, 2 blocks, 2 heads; decoder 96 wide, 2 blocks, 2 heads; 4 frames per
    /// position. 364 064 parameters with the demo data's 44 token ids and 80 mel bands:
    /// trains on a CPU in seconds.
    Tiny,
    /// Encoder 256 wide, 4 blocks, 4 heads; decoder 384 wide, 4 blocks, 6 heads; 2 frames per
    /// position. 10 429 728 parameters with the demo data's 44 token ids and 80 mel bands:
    /// a real load for a GPU, slow on a CPU.
    Small,
}

impl Preset {
    /// Parses `tiny` or `small`.
    ///
    /// # Errors
    /// [`TrainError::Usage`] for any other name.
    pub fn parse(name: &str) -> Result<Self, TrainError> {
        match name {
            "tiny" => Ok(Self::Tiny),
            "small" => Ok(Self::Small),
            other => Err(TrainError::Usage(format!(
                "`--model {other}`: expected `tiny` or `small`"
            ))),
        }
    }

    /// The preset's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Tiny => "tiny",
            Self::Small => "small",
        }
    }
}

/// The model's sizes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelConfig {
    /// Token ids are below it.
    pub vocab_size: usize,
    /// Mel bands predicted per frame.
    pub n_mels: usize,
    /// Encoder width.
    pub encoder_dim: usize,
    /// Encoder blocks.
    pub encoder_layers: usize,
    /// Encoder attention heads; divides `encoder_dim`.
    pub encoder_heads: usize,
    /// Decoder width.
    pub decoder_dim: usize,
    /// Decoder blocks.
    pub decoder_layers: usize,
    /// Decoder attention heads; divides `decoder_dim`.
    pub decoder_heads: usize,
    /// Feed-forward width as a multiple of the block's width.
    pub ffn_mult: usize,
    /// Mel frames predicted per decoder position (Tacotron's `r`).
    pub reduction: usize,
}

impl ModelConfig {
    /// A preset for a vocabulary and a number of mel bands.
    #[must_use]
    pub fn preset(preset: Preset, vocab_size: usize, n_mels: usize) -> Self {
        let (e, el, eh, d, dl, dh, r) = match preset {
            Preset::Tiny => (64, 2, 2, 96, 2, 2, 4),
            Preset::Small => (256, 4, 4, 384, 4, 6, 2),
        };
        Self {
            vocab_size,
            n_mels,
            encoder_dim: e,
            encoder_layers: el,
            encoder_heads: eh,
            decoder_dim: d,
            decoder_layers: dl,
            decoder_heads: dh,
            ffn_mult: 4,
            reduction: r,
        }
    }

    /// Checks the sizes.
    ///
    /// # Errors
    /// [`TrainError::Usage`] naming the first size that cannot work.
    pub fn validate(&self) -> Result<(), TrainError> {
        let positive = [
            ("vocab_size", self.vocab_size),
            ("n_mels", self.n_mels),
            ("encoder_dim", self.encoder_dim),
            ("encoder_heads", self.encoder_heads),
            ("decoder_dim", self.decoder_dim),
            ("decoder_heads", self.decoder_heads),
            ("ffn_mult", self.ffn_mult),
            ("reduction", self.reduction),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(TrainError::Usage(format!(
                    "model size `{name}` is 0; it must be at least 1"
                )));
            }
        }
        for (dim, heads, what) in [
            (self.encoder_dim, self.encoder_heads, "encoder"),
            (self.decoder_dim, self.decoder_heads, "decoder"),
        ] {
            if dim % heads != 0 {
                return Err(TrainError::Usage(format!(
                    "the {what} width {dim} is not a multiple of its {heads} heads; attention splits the width across the heads"
                )));
            }
        }
        Ok(())
    }

    /// Number of trainable parameters, counted from the sizes.
    #[must_use]
    pub fn parameter_count(&self) -> usize {
        let block = |w: usize| {
            let f = w * self.ffn_mult;
            2 * w + 4 * (w * w + w) + 2 * w + (w * f + f) + (f * w + w)
        };
        let (e, d) = (self.encoder_dim, self.decoder_dim);
        let out = self.n_mels * self.reduction;
        self.vocab_size * e
            + self.encoder_layers * block(e)
            + 2 * e
            + (e * d + d)
            + self.decoder_layers * block(d)
            + 2 * d
            + (d * out + out)
    }
}

/// Draws the initial weights and keeps the trainable variables for the optimizer. The
/// weights are f32 whatever the compute precision (mixed precision's master weights): each
/// layer casts them to the precision of its input as it runs, and the gradients flow back
/// through the cast to the f32 weights, so AdamW's small updates and its `eps` (1e-8, zero
/// in f16) do not underflow.
struct Init<'a> {
    rng: SplitMix64,
    device: &'a Device,
    vars: Vec<Var>,
}

impl Init<'_> {
    fn var(&mut self, shape: &[usize], values: Vec<f32>) -> Result<Tensor, TrainError> {
        let t = Tensor::from_vec(values, shape, self.device)?;
        let v = Var::from_tensor(&t)?;
        let t = v.as_tensor().clone();
        self.vars.push(v);
        Ok(t)
    }

    /// Uniform in ±`bound`.
    fn uniform(&mut self, shape: &[usize], bound: f64) -> Result<Tensor, TrainError> {
        let n = shape.iter().product();
        let values = (0..n)
            .map(|_| self.rng.range(-bound, bound) as f32)
            .collect();
        self.var(shape, values)
    }

    fn constant(&mut self, shape: &[usize], value: f32) -> Result<Tensor, TrainError> {
        let n = shape.iter().product();
        self.var(shape, vec![value; n])
    }

    /// PyTorch's `nn.Linear` initialisation: weight and bias uniform in ±1/sqrt(fan_in).
    fn linear(&mut self, inp: usize, out: usize) -> Result<Linear, TrainError> {
        let bound = 1.0 / (inp as f64).sqrt();
        Ok(Linear {
            weight: self.uniform(&[out, inp], bound)?,
            bias: self.uniform(&[out], bound)?,
        })
    }

    fn norm(&mut self, width: usize) -> Result<Norm, TrainError> {
        Ok(Norm {
            weight: self.constant(&[width], 1.0)?,
            bias: self.constant(&[width], 0.0)?,
        })
    }
}

/// `x W^T + b` with the f32 weights cast to the input's precision.
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let dt = x.dtype();
        x.broadcast_matmul(&self.weight.to_dtype(dt)?.t()?)?
            .broadcast_add(&self.bias.to_dtype(dt)?)
    }
}

/// Layer normalisation written with differentiable tensor ops (candle's fused layer-norm
/// kernel has no backward pass); statistics in f32, weights cast to the input's precision.
struct Norm {
    weight: Tensor,
    bias: Tensor,
}

impl Norm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let dt = x.dtype();
        candle_nn::ops::layer_norm_slow(
            x,
            &self.weight.to_dtype(dt)?,
            &self.bias.to_dtype(dt)?,
            1e-5,
        )
    }
}

/// A pre-norm transformer block: self-attention with a key-padding mask, then a ReLU
/// feed-forward, each with a residual connection.
struct Block {
    norm1: Norm,
    qkv: Linear,
    out: Linear,
    norm2: Norm,
    ff1: Linear,
    ff2: Linear,
    heads: usize,
}

impl Block {
    fn new(
        init: &mut Init<'_>,
        width: usize,
        heads: usize,
        mult: usize,
    ) -> Result<Self, TrainError> {
        Ok(Self {
            norm1: init.norm(width)?,
            qkv: init.linear(width, 3 * width)?,
            out: init.linear(width, width)?,
            norm2: init.norm(width)?,
            ff1: init.linear(width, mult * width)?,
            ff2: init.linear(mult * width, width)?,
            heads,
        })
    }

    /// `x`: (batch, time, width); `key_bias`: (batch, 1, 1, time), 0 for real positions and
    /// a large negative number for padding.
    fn forward(&self, x: &Tensor, key_bias: &Tensor) -> candle_core::Result<Tensor> {
        let (b, t, w) = x.dims3()?;
        let hd = w / self.heads;
        let qkv = self.qkv.forward(&self.norm1.forward(x)?)?;
        let split = |i: usize| -> candle_core::Result<Tensor> {
            qkv.narrow(D::Minus1, i * w, w)?
                .reshape((b, t, self.heads, hd))?
                .transpose(1, 2)?
                .contiguous()
        };
        let (q, k, v) = (split(0)?, split(1)?, split(2)?);
        let scores = (q.matmul(&k.t()?.contiguous()?)? / (hd as f64).sqrt())?;
        let scores = scores.broadcast_add(key_bias)?;
        let att = candle_nn::ops::softmax(&scores, D::Minus1)?;
        let y = att
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b, t, w))?;
        let x = (x + self.out.forward(&y)?)?;
        let h = self.ff1.forward(&self.norm2.forward(&x)?)?.relu()?;
        x + self.ff2.forward(&h)?
    }
}

/// One batch as tensors on the model's device.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Token ids, (batch, text), u32.
    pub tokens: Tensor,
    /// 0 for real tokens, a large negative number for padding, (batch, 1, 1, text).
    pub text_bias: Tensor,
    /// Row of the flattened encoder output each decoder position reads, (batch × positions).
    pub regulate: Tensor,
    /// 1 for real decoder positions, 0 for padding, (batch, positions, 1).
    pub position_mask: Tensor,
    /// As `text_bias` for the decoder positions, (batch, 1, 1, positions).
    pub position_bias: Tensor,
    /// Target mel frames, (batch, frames, n_mels), f32.
    pub mels: Tensor,
    /// 1 for real frames, 0 for padding, (batch, frames, 1), f32.
    pub frame_mask: Tensor,
    /// Real frames in the batch (the loss' denominator, before × `n_mels`).
    pub frames: usize,
}

impl Inputs {
    /// The same inputs on another device.
    ///
    /// # Errors
    /// A failed copy.
    pub fn to_device(&self, device: &Device) -> Result<Self, TrainError> {
        Ok(Self {
            tokens: self.tokens.to_device(device)?,
            text_bias: self.text_bias.to_device(device)?,
            regulate: self.regulate.to_device(device)?,
            position_mask: self.position_mask.to_device(device)?,
            position_bias: self.position_bias.to_device(device)?,
            mels: self.mels.to_device(device)?,
            frame_mask: self.frame_mask.to_device(device)?,
            frames: self.frames,
        })
    }
}

/// Added to the attention scores of padded keys: large enough that softmax gives them no
/// weight, small enough for f16 (largest finite 65504).
const MASKED: f32 = -1.0e4;

/// Builds the tensors of one batch on `device` (the host-to-device copy of a step).
///
/// `tokens` is (batch, text) and `mels` (batch, frames, n_mels), row-major, padded;
/// `text_lengths` and `mel_lengths` are the true lengths.
///
/// # Errors
/// [`TrainError::Usage`] when the shapes and lengths disagree; a failed copy.
#[allow(clippy::too_many_arguments)] // the parts of a batch, named at the call
pub fn stage(
    config: &ModelConfig,
    tokens: &[i32],
    (b, t): (usize, usize),
    mels: &[f32],
    frames: usize,
    text_lengths: &[i32],
    mel_lengths: &[i32],
    dtype: DType,
    device: &Device,
) -> Result<Inputs, TrainError> {
    let n_mels = config.n_mels;
    if tokens.len() != b * t
        || mels.len() != b * frames * n_mels
        || text_lengths.len() != b
        || mel_lengths.len() != b
    {
        return Err(TrainError::Usage(format!(
            "the batch does not fit the model: {} tokens for {b}x{t}, {} mel values for {b}x{frames}x{n_mels}",
            tokens.len(),
            mels.len()
        )));
    }
    let r = config.reduction;
    let positions = frames.div_ceil(r).max(1);
    let mut ids = Vec::with_capacity(b * t);
    for &id in tokens {
        let id = u32::try_from(id)
            .ok()
            .filter(|&i| (i as usize) < config.vocab_size);
        ids.push(id.ok_or_else(|| {
            TrainError::Usage(format!(
                "a token id is outside the model's vocabulary of {} ids: was the cache built with another tokenizer?",
                config.vocab_size
            ))
        })?);
    }
    let len = |v: i32, cap: usize| usize::try_from(v).unwrap_or(0).min(cap);
    let mut text_bias = vec![MASKED; b * t];
    let mut regulate = vec![0u32; b * positions];
    let mut position_mask = vec![0f32; b * positions];
    let mut position_bias = vec![MASKED; b * positions];
    let mut frame_mask = vec![0f32; b * frames];
    let mut real_frames = 0;
    for row in 0..b {
        let tl = len(text_lengths[row], t).max(1);
        let fl = len(mel_lengths[row], frames);
        let pl = fl.div_ceil(r);
        real_frames += fl;
        text_bias[row * t..row * t + tl].fill(0.0);
        frame_mask[row * frames..row * frames + fl].fill(1.0);
        for j in 0..pl {
            let k = ((j as f64 + 0.5) * tl as f64 / pl as f64) as usize;
            regulate[row * positions + j] = (row * t + k.min(tl - 1)) as u32;
            position_mask[row * positions + j] = 1.0;
            position_bias[row * positions + j] = 0.0;
        }
        // A row with no frame still needs one key that attention may read.
        if pl == 0 {
            position_bias[row * positions] = 0.0;
        }
    }
    Ok(Inputs {
        tokens: Tensor::from_vec(ids, (b, t), device)?,
        text_bias: Tensor::from_vec(text_bias, (b, 1, 1, t), device)?.to_dtype(dtype)?,
        regulate: Tensor::from_vec(regulate, b * positions, device)?,
        position_mask: Tensor::from_vec(position_mask, (b, positions, 1), device)?
            .to_dtype(dtype)?,
        position_bias: Tensor::from_vec(position_bias, (b, 1, 1, positions), device)?
            .to_dtype(dtype)?,
        mels: Tensor::from_slice(mels, (b, frames, n_mels), device)?,
        frame_mask: Tensor::from_vec(frame_mask, (b, frames, 1), device)?,
        frames: real_frames,
    })
}

/// The model.
pub struct Model {
    config: ModelConfig,
    embedding: Embedding,
    encoder: Vec<Block>,
    encoder_norm: Norm,
    bridge: Linear,
    decoder: Vec<Block>,
    decoder_norm: Norm,
    projection: Linear,
    vars: Vec<Var>,
    dtype: DType,
    device: Device,
    encoder_positions: Tensor,
    decoder_positions: Tensor,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .field("dtype", &self.dtype)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

/// Sinusoidal positions (Vaswani et al. 2017), (len, width).
fn sinusoids(len: usize, width: usize) -> Vec<f32> {
    let mut v = vec![0f32; len * width];
    for p in 0..len {
        for i in 0..width / 2 {
            let angle = p as f64 / 10_000f64.powf(2.0 * i as f64 / width as f64);
            v[p * width + 2 * i] = angle.sin() as f32;
            v[p * width + 2 * i + 1] = angle.cos() as f32;
        }
    }
    v
}

/// Positions precomputed at build; longer inputs extend the table once.
const POSITIONS: usize = 1024;

impl Model {
    /// Builds the model with weights drawn from `seed`.
    ///
    /// # Errors
    /// Sizes that cannot work ([`ModelConfig::validate`]); a device failure.
    pub fn new(
        config: ModelConfig,
        dtype: DType,
        device: &Device,
        seed: u64,
    ) -> Result<Self, TrainError> {
        config.validate()?;
        let mut init = Init {
            rng: SplitMix64(seed),
            device,
            vars: Vec::new(),
        };
        let (e, d) = (config.encoder_dim, config.decoder_dim);
        // Unit-variance rows, the scale of the sinusoids they are added to.
        let table = init.uniform(&[config.vocab_size, e], 3f64.sqrt())?;
        let embedding = Embedding::new(table, e);
        let encoder = (0..config.encoder_layers)
            .map(|_| Block::new(&mut init, e, config.encoder_heads, config.ffn_mult))
            .collect::<Result<Vec<_>, _>>()?;
        let encoder_norm = init.norm(e)?;
        let bridge = init.linear(e, d)?;
        let decoder = (0..config.decoder_layers)
            .map(|_| Block::new(&mut init, d, config.decoder_heads, config.ffn_mult))
            .collect::<Result<Vec<_>, _>>()?;
        let decoder_norm = init.norm(d)?;
        let projection = init.linear(d, config.n_mels * config.reduction)?;
        let vars = init.vars;
        let encoder_positions =
            Tensor::from_vec(sinusoids(POSITIONS, e), (POSITIONS, e), device)?.to_dtype(dtype)?;
        let decoder_positions =
            Tensor::from_vec(sinusoids(POSITIONS, d), (POSITIONS, d), device)?.to_dtype(dtype)?;
        Ok(Self {
            config,
            embedding,
            encoder,
            encoder_norm,
            bridge,
            decoder,
            decoder_norm,
            projection,
            vars,
            dtype,
            device: device.clone(),
            encoder_positions,
            decoder_positions,
        })
    }

    /// The sizes.
    #[must_use]
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The trainable variables, for the optimizer.
    #[must_use]
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// Number of trainable parameters, counted from the variables.
    #[must_use]
    pub fn parameter_count(&self) -> usize {
        self.vars.iter().map(|v| v.elem_count()).sum()
    }

    /// The device of the weights.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The compute precision.
    #[must_use]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Makes the position tables cover `text` tokens and `positions` decoder positions
    /// (called while staging, so the forward pass never builds tables).
    ///
    /// # Errors
    /// A device failure.
    pub fn reserve(&mut self, text: usize, positions: usize) -> Result<(), TrainError> {
        for (table, len) in [
            (&mut self.encoder_positions, text),
            (&mut self.decoder_positions, positions),
        ] {
            let (have, width) = table.dims2()?;
            if len > have {
                let n = len.next_power_of_two();
                *table = Tensor::from_vec(sinusoids(n, width), (n, width), &self.device)?
                    .to_dtype(self.dtype)?;
            }
        }
        Ok(())
    }

    /// The predicted mel frames, (batch, frames, n_mels), in the compute precision.
    ///
    /// # Errors
    /// A tensor failure (shapes that disagree, a device error).
    pub fn forward(&self, x: &Inputs) -> Result<Tensor, TrainError> {
        let (b, t) = x.tokens.dims2()?;
        let (_, frames, _) = x.mels.dims3()?;
        let c = &self.config;
        let positions = x.position_mask.dim(1)?;
        let mut h = self
            .embedding
            .forward(&x.tokens)?
            .to_dtype(self.dtype)?
            .broadcast_add(&self.encoder_positions.narrow(0, 0, t)?)?;
        for block in &self.encoder {
            h = block.forward(&h, &x.text_bias)?;
        }
        let h = self.bridge.forward(&self.encoder_norm.forward(&h)?)?;
        // The length regulator: each decoder position reads one token's state.
        let d = c.decoder_dim;
        let mut y = h
            .reshape((b * t, d))?
            .index_select(&x.regulate, 0)?
            .reshape((b, positions, d))?
            .broadcast_add(&self.decoder_positions.narrow(0, 0, positions)?)?
            .broadcast_mul(&x.position_mask)?;
        for block in &self.decoder {
            y = block.forward(&y, &x.position_bias)?;
        }
        let out = self.projection.forward(&self.decoder_norm.forward(&y)?)?;
        Ok(out
            .reshape((b, positions * c.reduction, c.n_mels))?
            .narrow(1, 0, frames)?)
    }

    /// Masked L1 between the prediction and the target over the true frames, in f32: the
    /// mean absolute error per real mel value.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn loss(&self, predicted: &Tensor, x: &Inputs) -> Result<Tensor, TrainError> {
        let diff = (predicted.to_dtype(DType::F32)? - &x.mels)?.abs()?;
        let total = diff.broadcast_mul(&x.frame_mask)?.sum_all()?;
        let count = (x.frames.max(1) * self.config.n_mels) as f64;
        Ok((total / count)?)
    }

    /// Positions the decoder needs for `frames` mel frames.
    #[must_use]
    pub fn positions_for(&self, frames: usize) -> usize {
        frames.div_ceil(self.config.reduction).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_count_matches_the_variables() {
        for preset in [Preset::Tiny, Preset::Small] {
            let c = ModelConfig::preset(preset, 71, 80);
            let m = Model::new(c.clone(), DType::F32, &Device::Cpu, 1).unwrap();
            assert_eq!(m.parameter_count(), c.parameter_count(), "{preset:?}");
        }
    }

    #[test]
    fn preset_sizes_are_the_documented_ones() {
        let count = |p| ModelConfig::preset(p, 44, 80).parameter_count();
        assert_eq!(count(Preset::Tiny), 364_064);
        assert_eq!(count(Preset::Small), 10_429_728);
    }

    #[test]
    fn half_precision_trains_with_f32_master_weights() {
        // AdamW's eps (1e-8) is 0 in f16: with f16 weights, a weight without gradient
        // became 0/0 = NaN after one step.
        let c = ModelConfig::preset(Preset::Tiny, 10, 4);
        for dtype in [DType::F16, DType::BF16] {
            let m = Model::new(c.clone(), dtype, &Device::Cpu, 3).unwrap();
            assert!(m.vars().iter().all(|v| v.dtype() == DType::F32));
            let mut t = crate::train::Trainer::new(m).unwrap();
            let x = stage(
                &c,
                &[4, 5],
                (1, 2),
                &[0.5; 32],
                8,
                &[2],
                &[8],
                dtype,
                &Device::Cpu,
            )
            .unwrap();
            for _ in 0..3 {
                let loss = t.loss(&t.forward(&x).unwrap(), &x).unwrap();
                let grads = t.backward(&loss).unwrap();
                t.update(&grads).unwrap();
                assert!(loss.to_scalar::<f32>().unwrap().is_finite(), "{dtype:?}");
            }
        }
    }

    #[test]
    fn same_seed_same_weights() {
        let c = ModelConfig::preset(Preset::Tiny, 20, 8);
        let a = Model::new(c.clone(), DType::F32, &Device::Cpu, 7).unwrap();
        let b = Model::new(c.clone(), DType::F32, &Device::Cpu, 7).unwrap();
        let other = Model::new(c, DType::F32, &Device::Cpu, 8).unwrap();
        let first = |m: &Model| {
            m.vars()[0]
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        assert_eq!(first(&a), first(&b));
        assert_ne!(first(&a), first(&other));
    }

    #[test]
    fn heads_must_divide_the_width() {
        let mut c = ModelConfig::preset(Preset::Tiny, 20, 8);
        c.encoder_heads = 3;
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("encoder width 64") && e.contains("3 heads"),
            "{e}"
        );
    }

    #[test]
    fn regulator_spreads_tokens_over_positions() {
        let c = ModelConfig {
            reduction: 2,
            ..ModelConfig::preset(Preset::Tiny, 10, 1)
        };
        // Two rows: 2 tokens over 8 frames (4 positions); 3 tokens over 3 frames (2).
        let tokens = [4, 5, 0, 6, 7, 8];
        let mels = vec![0f32; 2 * 8];
        let x = stage(
            &c,
            &tokens,
            (2, 3),
            &mels,
            8,
            &[2, 3],
            &[8, 3],
            DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let reg = x.regulate.to_vec1::<u32>().unwrap();
        assert_eq!(reg, vec![0, 0, 1, 1, 3, 5, 0, 0]);
        let mask = x
            .position_mask
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        assert_eq!(mask, vec![1., 1., 1., 1., 1., 1., 0., 0.]);
        let bias = x.text_bias.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(bias, vec![0., 0., MASKED, 0., 0., 0.]);
        assert_eq!(x.frames, 11);
    }

    #[test]
    fn a_token_outside_the_vocabulary_is_refused() {
        let c = ModelConfig::preset(Preset::Tiny, 4, 1);
        let e = stage(
            &c,
            &[9],
            (1, 1),
            &[0.0],
            1,
            &[1],
            &[1],
            DType::F32,
            &Device::Cpu,
        )
        .unwrap_err();
        assert!(e.to_string().contains("vocabulary of 4"), "{e}");
    }

    #[test]
    fn padding_does_not_change_the_loss() {
        // The same utterance alone and padded beside a longer one: equal loss contributions.
        let c = ModelConfig::preset(Preset::Tiny, 10, 2);
        let m = Model::new(c.clone(), DType::F32, &Device::Cpu, 3).unwrap();
        let alone = stage(
            &c,
            &[4, 5],
            (1, 2),
            &[0.5; 8],
            4,
            &[2],
            &[4],
            DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let l1 = m
            .loss(&m.forward(&alone).unwrap(), &alone)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let mut mels = vec![0.5f32; 8];
        mels.extend(vec![9.0f32; 4]); // padding rows hold garbage on purpose
        let padded = stage(
            &c,
            &[4, 5, 0],
            (1, 3),
            &mels,
            6,
            &[2],
            &[4],
            DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let l2 = m
            .loss(&m.forward(&padded).unwrap(), &padded)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!((l1 - l2).abs() < 1e-5, "{l1} vs {l2}");
    }
}
