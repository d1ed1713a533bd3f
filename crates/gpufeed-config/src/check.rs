//! Semantic checks: values that parse but cannot work (`win_length > n_fft`, `hop_length:
//! 0`, `fmax` above Nyquist, ...) and combinations worth a warning. They work on the typed
//! [`Config`], so a config built from command-line overrides can be checked too; the loader
//! adds the location of the first involved key that the file sets.

use gpufeed_audio::LogKind;

use crate::diag::WarningKind;
use crate::schema::Config;

/// A rule broken by the values of a config.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The keys involved, the offending one first (`data.win_length`, `data.n_fft`); a
    /// message points at the first of them that the file sets.
    pub keys: Vec<&'static str>,
    /// What is wrong and what to do.
    pub message: String,
    /// `None` for an error; the warning kind for a warning.
    pub warning: Option<WarningKind>,
}

impl Violation {
    /// True when the config cannot be used as it is.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.warning.is_none()
    }
}

/// `x > 0`, false for NaN.
fn positive(x: f64) -> bool {
    x > 0.0
}

/// `x >= 0`, false for NaN.
fn at_least_zero(x: f64) -> bool {
    x >= 0.0
}

struct Checks(Vec<Violation>);

impl Checks {
    fn error(&mut self, keys: &[&'static str], message: String) {
        self.0.push(Violation {
            keys: keys.to_vec(),
            message,
            warning: None,
        });
    }

    fn warn(&mut self, keys: &[&'static str], kind: WarningKind, message: String) {
        self.0.push(Violation {
            keys: keys.to_vec(),
            message,
            warning: Some(kind),
        });
    }

    fn positive(&mut self, key: &'static str, value: usize, why: &str) {
        if value == 0 {
            self.error(
                &[key],
                format!("`{key}` must be a positive integer, found `0`{why}"),
            );
        }
    }

    fn fraction(&mut self, key: &'static str, value: f64, zero_ok: bool) {
        let ok = if zero_ok {
            (0.0..=1.0).contains(&value)
        } else {
            value > 0.0 && value <= 1.0
        };
        if !ok {
            let range = if zero_ok { "[0, 1]" } else { "(0, 1]" };
            self.error(
                &[key],
                format!("`{key}` must be a fraction in {range}, found `{value}`"),
            );
        }
    }

    fn range_pair(&mut self, key: &'static str, value: &[f64], unit: &str) {
        match value {
            [low, high] if low <= high => {}
            [low, high] => self.error(
                &[key],
                format!("`{key}` is `[low, high]` in {unit}; found low {low} above high {high}"),
            ),
            _ => self.error(
                &[key],
                format!(
                    "`{key}` must be a list of two numbers `[low, high]` in {unit}, found {} \
                     numbers",
                    value.len()
                ),
            ),
        }
    }

    fn heads(&mut self, dim_key: &'static str, dim: usize, heads_key: &'static str, heads: usize) {
        if heads > 0 && dim > 0 && !dim.is_multiple_of(heads) {
            // MyXTTS' presets use 64-wide heads; suggest that when it fits, else the two
            // nearest widths.
            let fix = if dim.is_multiple_of(64) {
                let short = heads_key.rsplit('.').next().unwrap_or(heads_key);
                format!(
                    "set `{short}: {}` (64 wide each, as in MyXTTS' presets)",
                    dim / 64
                )
            } else {
                let below = dim / heads * heads;
                let above = below + heads;
                if below > 0 {
                    format!("set the width to {below} or {above}")
                } else {
                    format!("set the width to {above}")
                }
            };
            self.warn(
                &[dim_key, heads_key],
                WarningKind::HeadsDoNotDivide {
                    heads_key: heads_key.to_owned(),
                },
                format!(
                    "`{dim_key}` ({dim}) is not a multiple of `{heads_key}` ({heads}): attention \
                     splits the width evenly across heads; {fix}"
                ),
            );
        }
    }
}

impl Config {
    /// Every rule the values break, errors and warnings, in no particular order.
    #[must_use]
    pub fn violations(&self) -> Vec<Violation> {
        let mut c = Checks(Vec::new());
        check_audio(self, &mut c);
        check_loader(self, &mut c);
        check_model(self, &mut c);
        check_training(self, &mut c);
        c.0
    }

    /// `Ok` when no rule is broken at error severity; the errors otherwise.
    ///
    /// # Errors
    /// The violations at error severity.
    pub fn validate(&self) -> Result<(), Vec<Violation>> {
        let errors: Vec<Violation> = self
            .violations()
            .into_iter()
            .filter(Violation::is_error)
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

fn check_audio(config: &Config, c: &mut Checks) {
    let d = &config.data;
    if d.sample_rate == 0 {
        c.error(
            &["data.sample_rate"],
            "`data.sample_rate` must be a positive integer (Hz), found `0`".to_owned(),
        );
    }
    c.positive("data.n_fft", d.n_fft, "");
    c.positive(
        "data.hop_length",
        d.hop_length,
        "; a hop of 0 samples never advances (256 is usual at 22050 Hz)",
    );
    c.positive("data.win_length", d.win_length, "");
    c.positive("data.n_mels", d.n_mels, "; 80 is usual");
    if d.win_length > d.n_fft && d.n_fft > 0 {
        c.error(
            &["data.win_length", "data.n_fft"],
            format!(
                "`data.win_length` ({}) must not exceed `data.n_fft` ({}): the window must fit \
                 in the FFT frame; lower win_length or raise n_fft",
                d.win_length, d.n_fft
            ),
        );
    }
    let nyquist = f64::from(d.sample_rate) / 2.0;
    if !at_least_zero(d.fmin) {
        c.error(
            &["data.fmin"],
            format!("`data.fmin` must be ≥ 0 Hz, found `{}`", d.fmin),
        );
    }
    let mut fmax_ok = true;
    if let Some(fmax) = d.fmax
        && fmax > nyquist
        && d.sample_rate > 0
    {
        fmax_ok = false;
        c.error(
            &["data.fmax", "data.sample_rate"],
            format!(
                "`data.fmax` ({fmax} Hz) must not exceed half of `data.sample_rate` ({} Hz \
                     → {nyquist} Hz, the highest frequency the audio holds); lower fmax or write \
                     `fmax: null` for sample_rate / 2",
                d.sample_rate
            ),
        );
    }
    let fmax = d.fmax_hz();
    if fmax_ok && d.fmin >= 0.0 && d.fmin >= fmax {
        c.error(
            &["data.fmin", "data.fmax", "data.sample_rate"],
            format!(
                "`data.fmin` ({} Hz) must be below fmax ({fmax} Hz{}): the mel filters span \
                 fmin to fmax",
                d.fmin,
                if d.fmax.is_none() {
                    ", half the sample rate"
                } else {
                    ""
                }
            ),
        );
    }
    if !positive(d.power) {
        c.error(
            &["data.power"],
            format!(
                "`data.power` must be a positive number (1 = magnitude, 2 = power), found `{}`",
                d.power
            ),
        );
    }
    if d.log != LogKind::None && !positive(d.log_floor) {
        c.error(
            &["data.log_floor", "data.log"],
            format!(
                "`data.log_floor` must be positive when `data.log` is `{}`, found `{}`: the \
                 logarithm of 0 is -inf; use 1e-5 (written `1.0e-5`) or set `log: none`",
                match d.log {
                    LogKind::Log10 => "log10",
                    _ => "ln",
                },
                d.log_floor
            ),
        );
    }
    let bins = d.n_fft / 2 + 1;
    if d.n_fft > 0 && d.n_mels > bins {
        c.warn(
            &["data.n_mels", "data.n_fft"],
            WarningKind::EmptyMelFilters,
            format!(
                "`data.n_mels` ({}) is more than the {bins} frequency bins of `data.n_fft` ({}), \
                 so some mel filters are empty (all-zero bands); lower n_mels or raise n_fft",
                d.n_mels, d.n_fft
            ),
        );
    }
}

fn check_loader(config: &Config, c: &mut Checks) {
    let d = &config.data;
    c.positive("data.batch_size", d.batch_size, "");
    c.positive("data.max_text_length", d.max_text_length, "");
    c.positive("data.max_mel_frames", d.max_mel_frames, "");
    c.positive(
        "data.bucket_window",
        d.bucket_window,
        "; write 1 to turn bucketing off",
    );
    if d.pad_to_multiple_of == Some(0) {
        c.error(
            &["data.pad_to_multiple_of"],
            "`data.pad_to_multiple_of` must be a positive integer, found `0`; write `null` (or \
             delete the line) for no rounding"
                .to_owned(),
        );
    }
    if let Some(tokens) = d.max_text_tokens
        && tokens != d.max_text_length
    {
        c.warn(
            &["data.max_text_tokens", "data.max_text_length"],
            WarningKind::TwoTextCaps,
            format!(
                "`data.max_text_tokens` ({tokens}) differs from `data.max_text_length` ({}): \
                     gpufeed has one text cap, max_text_length; MyXTTS cut tokens at \
                     max_text_tokens but padded to max_text_length, which fails on longer \
                     texts; set both to the same value",
                d.max_text_length
            ),
        );
    }
    c.fraction("data.train_split", d.train_split, true);
    c.fraction("data.val_split", d.val_split, true);
    if d.train_split + d.val_split > 1.0 + 1e-9 {
        c.warn(
            &["data.val_split", "data.train_split"],
            WarningKind::SplitsOverlap,
            format!(
                "`data.train_split` ({}) + `data.val_split` ({}) is more than 1, so the \
                 validation split is cut short and no test split is left; make them sum to 1 \
                 or less",
                d.train_split, d.val_split
            ),
        );
    }
    c.fraction("data.train_subset_fraction", d.train_subset_fraction, false);
    c.fraction("data.eval_subset_fraction", d.eval_subset_fraction, false);
    c.fraction(
        "data.noise_mixing_probability",
        d.noise_mixing_probability,
        true,
    );
    c.range_pair("data.pitch_shift_range", &d.pitch_shift_range, "semitones");
    c.range_pair(
        "data.noise_mixing_snr_range",
        &d.noise_mixing_snr_range,
        "dB",
    );
    if let (Some(a), Some(b)) = (d.data_gpu, d.model_gpu)
        && a == b
    {
        c.error(
            &["data.model_gpu", "data.data_gpu"],
            format!(
                "`data.data_gpu` and `data.model_gpu` are both {a}; the two-GPU mode needs \
                     two different GPUs (or unset both for one GPU)"
            ),
        );
    }
}

fn check_model(config: &Config, c: &mut Checks) {
    let m = &config.model;
    for (key, value) in [
        ("model.text_encoder_dim", m.text_encoder_dim),
        ("model.text_encoder_heads", m.text_encoder_heads),
        ("model.audio_encoder_dim", m.audio_encoder_dim),
        ("model.audio_encoder_heads", m.audio_encoder_heads),
        ("model.decoder_dim", m.decoder_dim),
        ("model.decoder_heads", m.decoder_heads),
        ("model.text_vocab_size", m.text_vocab_size),
        ("model.max_text_length", m.max_text_length),
        (
            "model.max_attention_sequence_length",
            m.max_attention_sequence_length,
        ),
    ] {
        c.positive(key, value, "");
    }
    c.heads(
        "model.text_encoder_dim",
        m.text_encoder_dim,
        "model.text_encoder_heads",
        m.text_encoder_heads,
    );
    c.heads(
        "model.audio_encoder_dim",
        m.audio_encoder_dim,
        "model.audio_encoder_heads",
        m.audio_encoder_heads,
    );
    c.heads(
        "model.decoder_dim",
        m.decoder_dim,
        "model.decoder_heads",
        m.decoder_heads,
    );
}

fn check_training(config: &Config, c: &mut Checks) {
    let t = &config.training;
    if !positive(t.learning_rate) {
        c.error(
            &["training.learning_rate"],
            format!(
                "`training.learning_rate` must be a positive number, found `{}`",
                t.learning_rate
            ),
        );
    }
    if !at_least_zero(t.min_learning_rate) {
        c.error(
            &["training.min_learning_rate"],
            format!(
                "`training.min_learning_rate` must be ≥ 0, found `{}`",
                t.min_learning_rate
            ),
        );
    } else if t.min_learning_rate > t.learning_rate && t.learning_rate > 0.0 {
        c.warn(
            &["training.min_learning_rate", "training.learning_rate"],
            WarningKind::MinLearningRateAboveLearningRate,
            format!(
                "`training.min_learning_rate` ({}) is above `training.learning_rate` ({}); the \
                 schedule would raise the rate instead of decaying it",
                t.min_learning_rate, t.learning_rate
            ),
        );
    }
    c.positive("training.epochs", t.epochs, "");
    c.positive(
        "training.gradient_accumulation_steps",
        t.gradient_accumulation_steps,
        "; 1 means no accumulation",
    );
    if !(positive(t.max_memory_fraction) && t.max_memory_fraction <= 1.0) {
        c.error(
            &["training.max_memory_fraction"],
            format!(
                "`training.max_memory_fraction` must be a number in (0, 1], found `{}`",
                t.max_memory_fraction
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(config: &Config) -> Vec<&'static str> {
        config
            .violations()
            .into_iter()
            .filter(Violation::is_error)
            .map(|v| v.keys[0])
            .collect()
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(Config::default().validate(), Ok(()));
        let warnings: Vec<_> = Config::default()
            .violations()
            .into_iter()
            .map(|v| v.keys[0])
            .collect();
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn audio_rules() {
        let mut c = Config::default();
        c.data.win_length = 2048;
        assert_eq!(errors(&c), ["data.win_length"]);
        let mut c = Config::default();
        c.data.hop_length = 0;
        assert_eq!(errors(&c), ["data.hop_length"]);
        let mut c = Config::default();
        c.data.sample_rate = 11025;
        assert_eq!(errors(&c), ["data.fmax"]);
        let mut c = Config::default();
        c.data.fmin = 8000.0;
        assert_eq!(errors(&c), ["data.fmin"]);
        let mut c = Config::default();
        c.data.fmax = None;
        c.data.fmin = 20000.0;
        assert_eq!(errors(&c), ["data.fmin"]);
        let mut c = Config::default();
        c.data.n_mels = 0;
        assert_eq!(errors(&c), ["data.n_mels"]);
        let mut c = Config::default();
        c.data.log_floor = 0.0;
        assert_eq!(errors(&c), ["data.log_floor"]);
        c.data.log = LogKind::None;
        assert_eq!(errors(&c), Vec::<&str>::new());
        let mut c = Config::default();
        c.data.n_fft = 128;
        c.data.win_length = 128;
        let v = c.violations();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].warning, Some(WarningKind::EmptyMelFilters));
    }

    #[test]
    fn loader_and_training_rules() {
        let mut c = Config::default();
        c.data.batch_size = 0;
        c.data.max_text_length = 0;
        c.training.gradient_accumulation_steps = 0;
        c.training.learning_rate = 0.0;
        let mut e = errors(&c);
        e.sort_unstable();
        assert_eq!(
            e,
            [
                "data.batch_size",
                "data.max_text_length",
                "training.gradient_accumulation_steps",
                "training.learning_rate"
            ]
        );
        let mut c = Config::default();
        c.data.data_gpu = Some(0);
        c.data.model_gpu = Some(0);
        assert_eq!(errors(&c), ["data.model_gpu"]);
    }
}
