//! The data-pipeline and GPU rules of `validate`, on a config that loaded.
//!
//! Each rule reads the typed config (so a key the file does not set holds its default, and
//! the evidence says so) and points at the value to change when the file sets it; a finding
//! caused by a default has no line. The fixes are YAML to paste; none of them is applied by
//! `--fix`, because each changes what the trainer does (see the crate docs).
//!
//! Limits: `max_text_length` and `max_mel_frames` against the real token and clip lengths,
//! `batch_size` against GPU memory and GPU indices against the GPUs present need a dataset
//! or a GPU; `validate` has neither (docs/contract.md gives it only the file).
//! `gpufeed precompute` reports the items over the caps.

use std::fmt::Write as _;
use std::path::Path;

use gpufeed_config::unhonoured::{self, Consequence};
use gpufeed_config::{Loaded, Myxtts, key_info};

use super::Context;
use gpufeed_stats::thresholds::{BATCH_SIZE_SMALL, NUM_WORKERS_LOW};

use gpufeed_findings::constants::MYXTTS_MAX_TEXT_TOKENS;
use gpufeed_findings::finding::{Finding, Severity};
use gpufeed_findings::rules::finding;

/// Every rule on a loaded config.
pub(super) fn check(loaded: &Loaded, ctx: &Context, path: &Path) -> Vec<Finding> {
    let mut r = Rules {
        loaded,
        path,
        out: Vec::new(),
    };
    loading(&mut r);
    workers(&mut r, ctx);
    shapes(&mut r);
    gpus(&mut r);
    compute(&mut r);
    myxtts_keys(&mut r);
    unhonoured(&mut r);
    r.out
}

struct Rules<'a> {
    loaded: &'a Loaded,
    path: &'a Path,
    out: Vec<Finding>,
}

impl Rules<'_> {
    /// `` `data.num_workers: 0` (line 3) `` when the file sets the key, else
    /// `` `data.num_workers` not set (default: 0) ``.
    fn show(&self, key: &str, default: impl std::fmt::Display) -> String {
        match self.loaded.span_of(key) {
            Some(span) => format!(
                "`{key}: {}` (line {})",
                self.loaded.source.slice(span),
                span.line
            ),
            None => format!("`{key}` not set (default: {default})"),
        }
    }

    /// A finding placed at the value of the first of `keys` that the file sets.
    fn push(
        &mut self,
        id: &'static str,
        specific: &str,
        keys: &[&str],
        evidence: String,
        fix: String,
    ) {
        let mut f = finding(id, specific).evidence(evidence).fix(fix);
        match keys.iter().find_map(|k| self.loaded.span_of(k)) {
            Some(span) => f = f.at(self.path, span.line, span.column),
            None => f = f.in_file(self.path),
        }
        self.out.push(f);
    }
}

fn loading(r: &mut Rules<'_>) {
    let d = &r.loaded.config.data;
    if !d.use_tf_native_loading {
        r.push(
            "tf-native-loading-off",
            "`data.use_tf_native_loading` is false",
            &["data.use_tf_native_loading"],
            r.show("data.use_tf_native_loading", true),
            "# precompute the features once and train from the cache:\n\
             #   gpufeed precompute --data DIR\n\
             # or let tf.data read and transform the audio:\n\
             data:\n  use_tf_native_loading: true"
                .to_owned(),
        );
    }
    let two_gpu = d.data_gpu.is_some() && d.model_gpu.is_some();
    let staged = d.prefetch_to_gpu && d.enhanced_gpu_prefetch;
    if !(two_gpu || staged) {
        let off: Vec<&str> = [
            ("data.prefetch_to_gpu", d.prefetch_to_gpu),
            ("data.enhanced_gpu_prefetch", d.enhanced_gpu_prefetch),
        ]
        .iter()
        .filter(|(_, on)| !on)
        .map(|(k, _)| *k)
        .collect();
        r.push(
            "gpu-prefetch-off",
            &format!(
                "{} false",
                off.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
                    + if off.len() == 1 { " is" } else { " are" }
            ),
            &off,
            format!(
                "{}; {}",
                r.show("data.prefetch_to_gpu", true),
                r.show("data.enhanced_gpu_prefetch", true)
            ),
            "data:\n  prefetch_to_gpu: true\n  enhanced_gpu_prefetch: true".to_owned(),
        );
    }
}

fn workers(r: &mut Rules<'_>, ctx: &Context) {
    let d = &r.loaded.config.data;
    let cores = ctx.cores;
    let cores_text = cores.map_or_else(String::new, |c| format!("; this machine has {c} cores"));
    let spell = |value: &str| format!("data:\n  num_workers: {value}");
    match d.num_workers {
        Some(0) => r.push(
            "loader-in-main-thread",
            "`data.num_workers` is 0",
            &["data.num_workers"],
            r.show("data.num_workers", "one per core") + &cores_text,
            spell(&workers_instead_of_none(ctx)),
        ),
        Some(n) => {
            if let Some(f) = cores_finding("data.num_workers", n, ctx, &spell) {
                let evidence = r.show("data.num_workers", "one per core") + "; " + &ctx.describe();
                let f = match r.loaded.span_of("data.num_workers") {
                    Some(span) => f.at(r.path, span.line, span.column),
                    None => f.in_file(r.path),
                };
                r.out.push(f.evidence(evidence));
            }
        }
        None => {}
    }
    if d.prefetch_buffer_size == Some(0) {
        r.push(
            "prefetch-disabled",
            "`data.prefetch_buffer_size` is 0, so gpufeed's loader prepares no batch ahead",
            &["data.prefetch_buffer_size"],
            r.show("data.prefetch_buffer_size", "2 per worker"),
            "# delete the key (2 batches per worker), or:\ndata:\n  prefetch_buffer_size: 4"
                .to_owned(),
        );
    }
    if d.pipeline_buffer_size == 0 {
        r.push(
            "prefetch-disabled",
            "`data.pipeline_buffer_size` is 0, so MyXTTS' `prefetch` stage holds no batch",
            &["data.pipeline_buffer_size"],
            r.show("data.pipeline_buffer_size", 50),
            "# delete the key (MyXTTS: 50), or:\ndata:\n  pipeline_buffer_size: 8".to_owned(),
        );
    }
}

/// The workers to advise instead of 0: the seeds' minimum, at most the training machine's
/// cores when they are known. This machine's cores are not a reason to advise fewer.
pub(super) fn workers_instead_of_none(ctx: &Context) -> String {
    match (ctx.cores, ctx.cores_of_training_machine()) {
        (Some(c), true) => c.min(NUM_WORKERS_LOW as usize).to_string(),
        _ => format!("{NUM_WORKERS_LOW}  # up to the training machine's cores (`--cores N`)"),
    }
}

/// `num-workers-above-cores` or `num-workers-low` for `n` workers set at `key`, judged
/// against the cores of the context: a warning against the training machine's cores
/// (`--cores N`, or `doctor` on that machine), with the count to set (`spell(value)` writes
/// `key` set to `value` as the file does). When the cores are only this machine's, the
/// finding is info, asks for `--cores N`, and advises no count: a linting laptop's 2 cores
/// say nothing about a training server's, and lowering 20 workers to 2 there would starve
/// its GPU.
pub(super) fn cores_finding(
    key: &str,
    n: usize,
    ctx: &Context,
    spell: &dyn Fn(&str) -> String,
) -> Option<Finding> {
    let c = ctx.cores?;
    let low = c.min(NUM_WORKERS_LOW as usize);
    let f = match (n > c, n < low, ctx.cores_of_training_machine()) {
        (true, _, true) => finding(
            "num-workers-above-cores",
            &format!("`{key}` is {n}, more than the {c} cores of the training machine"),
        )
        .fix(spell(&c.to_string())),
        (true, _, false) => finding(
            "num-workers-above-cores",
            &format!(
                "`{key}` is {n}, more than the {c} cores of this machine; that is too many only \
                 if the training machine has fewer than {n} cores, which `validate` knows only \
                 from `--cores N`"
            ),
        )
        .fix(format!(
            "pass `--cores N` with the training machine's cores; keep `{key}` if it has {n} or \
             more"
        )),
        (false, true, true) => finding(
            "num-workers-low",
            &format!("`{key}` is {n}, fewer than the {c} cores of the training machine"),
        )
        .fix(spell(&format!(
            "{low}  # then measure: gpufeed profile data --benchmark"
        ))),
        (false, true, false) => finding(
            "num-workers-low",
            &format!(
                "`{key}` is {n}, fewer than the {c} cores of this machine, assumed to be the \
                 training machine's (pass `--cores N` with the training machine's cores)"
            ),
        )
        .fix(format!(
            "pass `--cores N` with the training machine's cores; with {NUM_WORKERS_LOW} or more, \
             try {} and measure: gpufeed profile data --benchmark",
            spell(&NUM_WORKERS_LOW.to_string())
        )),
        (false, false, _) => return None,
    };
    Some(super::trainers::assumed(f, ctx))
}

fn shapes(r: &mut Rules<'_>) {
    let d = &r.loaded.config.data;
    let t = &r.loaded.config.training;
    let compiled = t.enable_graph_mode || t.enable_xla_compilation;
    if !d.pad_to_fixed_length && d.pad_to_multiple_of.is_none() && compiled {
        r.push(
            "dynamic-shapes",
            "batches are padded to their longest item (`data.pad_to_fixed_length` is false) while \
             the train step is compiled",
            &["data.pad_to_fixed_length"],
            format!(
                "{}; {}; {}",
                r.show("data.pad_to_fixed_length", false),
                r.show("training.enable_graph_mode", true),
                r.show("training.enable_xla_compilation", true)
            ),
            format!(
                "data:\n  pad_to_fixed_length: true  # every batch [{}] tokens x [{}] frames\n\
                 # or, gpufeed's loader only: pad_to_multiple_of: 64",
                d.max_text_length, d.max_mel_frames
            ),
        );
    }
    let tokens = d.max_text_tokens.unwrap_or(MYXTTS_MAX_TEXT_TOKENS as usize);
    if d.pad_to_fixed_length && tokens > d.max_text_length {
        r.push(
            "text-cap-mismatch",
            &format!(
                "`data.pad_to_fixed_length` is true and `max_text_tokens` ({tokens}{}) is above \
                 `max_text_length` ({})",
                if d.max_text_tokens.is_none() {
                    ", MyXTTS' default"
                } else {
                    ""
                },
                d.max_text_length
            ),
            &[
                "data.max_text_tokens",
                "data.max_text_length",
                "data.pad_to_fixed_length",
            ],
            format!(
                "{}; {}; {}",
                r.show("data.pad_to_fixed_length", false),
                r.show("data.max_text_length", 200),
                r.show("data.max_text_tokens", MYXTTS_MAX_TEXT_TOKENS)
            ),
            format!("data:\n  max_text_tokens: {}", d.max_text_length),
        );
    }
    if d.batch_size > 0 && d.batch_size < BATCH_SIZE_SMALL as usize {
        r.push(
            "batch-size-small",
            &format!("`data.batch_size` is {}", d.batch_size),
            &["data.batch_size"],
            r.show("data.batch_size", 56),
            "data:\n  batch_size: 32  # if GPU memory allows; or training.gradient_accumulation_steps"
                .to_owned(),
        );
    }
}

fn gpus(r: &mut Rules<'_>) {
    let d = &r.loaded.config.data;
    let t = &r.loaded.config.training;
    let shown = || {
        format!(
            "{}; {}",
            r.show("data.data_gpu", "null"),
            r.show("data.model_gpu", "null")
        )
    };
    match (d.data_gpu, d.model_gpu) {
        (Some(_), None) | (None, Some(_)) => r.push(
            "two-gpu-half-set",
            "only one of `data.data_gpu` and `data.model_gpu` is set",
            &["data.data_gpu", "data.model_gpu"],
            shown(),
            "data:\n  data_gpu: 0\n  model_gpu: 1  # or delete both for one GPU".to_owned(),
        ),
        (Some(a), Some(b)) if a != b => r.push(
            "two-gpu-data-gpu-idle",
            &format!("two-GPU mode: data GPU {a}, model GPU {b}"),
            &["data.data_gpu"],
            shown(),
            "# delete data_gpu and model_gpu to train on one GPU, or run data parallel\n\
             # (one process per GPU) instead"
                .to_owned(),
        ),
        _ => {}
    }
    if let Some(visible) = &t.visible_gpus {
        let count = visible.split(',').filter(|s| !s.trim().is_empty()).count();
        for (key, index) in [
            ("data.data_gpu", d.data_gpu),
            ("data.model_gpu", d.model_gpu),
        ] {
            if let Some(i) = index
                && i >= count
            {
                r.push(
                    "gpu-index-out-of-range",
                    &format!(
                        "`{key}` is {i}, but `training.visible_gpus` (\"{visible}\") makes {count} \
                         GPU{} visible, numbered from 0",
                        if count == 1 { "" } else { "s" }
                    ),
                    &[key],
                    format!(
                        "{}; {}",
                        r.show(key, "null"),
                        r.show("training.visible_gpus", "null")
                    ),
                    format!(
                        "data:\n  {}: {}  # an index into visible_gpus",
                        key.trim_start_matches("data."),
                        count.saturating_sub(1)
                    ),
                );
            }
        }
    }
}

fn compute(r: &mut Rules<'_>) {
    let config = &r.loaded.config;
    let d = &config.data;
    let t = &config.training;
    if !config.mixed_precision() {
        r.push(
            "mixed-precision-off",
            "training runs in float32 (mixed precision is off)",
            &["training.mixed_precision", "data.mixed_precision"],
            format!(
                "{}; {}",
                r.show("data.mixed_precision", true),
                r.show("training.mixed_precision", "data.mixed_precision")
            ),
            "data:\n  mixed_precision: true".to_owned(),
        );
    }
    let graph = r.show("training.enable_graph_mode", true);
    if !t.enable_graph_mode {
        if t.enable_xla_compilation && r.loaded.is_set("training.enable_xla_compilation") {
            r.push(
                "xla-without-graph-mode",
                "`training.enable_xla_compilation` is true but `training.enable_graph_mode` is false",
                &["training.enable_graph_mode"],
                format!("{graph}; {}", r.show("training.enable_xla_compilation", true)),
                "training:\n  enable_graph_mode: true".to_owned(),
            );
        }
        r.push(
            "eager-train-step",
            "`training.enable_graph_mode` is false, so the train step runs eagerly",
            &["training.enable_graph_mode"],
            graph,
            "training:\n  enable_graph_mode: true".to_owned(),
        );
    } else if d.pad_to_fixed_length && !t.enable_xla_compilation {
        r.push(
            "xla-off",
            "the batches have one static shape but the train step is not XLA-compiled",
            &["training.enable_xla_compilation"],
            format!(
                "{}; {}",
                r.show("data.pad_to_fixed_length", false),
                r.show("training.enable_xla_compilation", true)
            ),
            "training:\n  enable_xla_compilation: true".to_owned(),
        );
    }
    if t.enable_eager_debug {
        r.push(
            "eager-debug-on",
            "`training.enable_eager_debug` is true",
            &["training.enable_eager_debug"],
            r.show("training.enable_eager_debug", false),
            "training:\n  enable_eager_debug: false".to_owned(),
        );
    }
}

/// Keys MyXTTS never reads, and keys its dataclasses reject (one finding per section).
fn myxtts_keys(r: &mut Rules<'_>) {
    let mut rejected: Vec<(String, usize, usize, &'static str)> = Vec::new();
    let entries: Vec<_> = r
        .loaded
        .source
        .entries()
        .iter()
        .filter(|e| e.depth == 2 && !e.path.contains('['))
        .cloned()
        .collect();
    for entry in entries {
        let (Some(info), Some(key)) = (key_info(&entry.path), entry.key) else {
            continue;
        };
        match info.myxtts {
            Myxtts::Read => {}
            Myxtts::Unread(note) => {
                let f = finding(
                    "myxtts-unread-key",
                    &format!("MyXTTS never reads `{}`: {note}", entry.path),
                )
                .at(r.path, key.line, key.column)
                .evidence(r.show(&entry.path, ""))
                .fix(format!(
                    "# delete `{}` if only MyXTTS reads this file",
                    info.name
                ));
                r.out.push(f);
            }
            Myxtts::NotAKey(note) => {
                rejected.push((entry.path.clone(), key.line, key.column, note))
            }
        }
    }
    for section in gpufeed_config::SECTIONS {
        let keys: Vec<_> = rejected
            .iter()
            .filter(|(p, ..)| p.split('.').next() == Some(section))
            .collect();
        let Some((_, line, column, _)) = keys.first() else {
            continue;
        };
        let mut evidence = String::new();
        for (i, (p, l, _, note)) in keys.iter().enumerate() {
            if i > 0 {
                evidence.push_str("; ");
            }
            let _ = write!(evidence, "`{p}` (line {l}): {note}");
        }
        let names: Vec<String> = keys.iter().map(|(p, ..)| format!("`{p}`")).collect();
        let f = finding(
            "myxtts-rejects-key",
            &format!(
                "MyXTTS' `{section}` dataclass has no field for {} of this file's keys ({})",
                keys.len(),
                names.join(", ")
            ),
        )
        .at(r.path, *line, *column)
        .evidence(evidence)
        .fix(format!(
            "# in the copy MyXTTS reads, delete from `{section}`: {}",
            keys.iter()
                .map(|(p, ..)| p.rsplit('.').next().unwrap_or(p).to_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        r.out.push(f);
    }
}

/// Keys whose value asks for what gpufeed's precompute and loader do not do
/// (`gpufeed_config::unhonoured`, the table `gpufeed precompute` reports from too): a
/// warning where the file writes the key, a note where only MyXTTS' default asks or the key
/// changes nothing in gpufeed.
fn unhonoured(r: &mut Rules<'_>) {
    for hit in unhonoured::find(r.loaded) {
        let mut evidence = r.show(hit.key, &hit.value);
        if let Some(marker) = &hit.myxtts_marker {
            let _ = write!(
                evidence,
                "; {} makes it a MyXTTS config",
                r.show(marker, "")
            );
        }
        for key in hit.default_keys {
            let _ = write!(evidence, "; {}", r.show(key, ""));
        }
        let mut f = finding("config-unhonoured-key", &hit.message)
            .evidence(evidence)
            .fix(hit.fix);
        f = match hit.written {
            Some(span) => f.at(r.path, span.line, span.column),
            None => f.in_file(r.path),
        };
        if hit.by_default() || hit.consequence == Consequence::Moot {
            f.severity = Severity::Info;
        }
        r.out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoresOf;

    fn ids_with(text: &str, cores: Option<usize>) -> Vec<&'static str> {
        let loaded = match gpufeed_config::check(text, Path::new("c.yaml")) {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        };
        let mut ids: Vec<_> = check(
            &loaded,
            &Context::new(cores, CoresOf::TrainingMachine),
            Path::new("c.yaml"),
        )
        .into_iter()
        .map(|f| f.id)
        .collect();
        ids.sort_unstable();
        ids
    }

    /// A config that passes every rule: static shapes, caps agree, XLA and graph mode,
    /// prefetch on, 8 workers on 16 cores, one GPU, characters (MyXTTS' default is
    /// phonemes, which gpufeed does not make).
    const GOOD: &str = "\
data:
  batch_size: 32
  num_workers: 8
  pad_to_fixed_length: true
  max_text_length: 200
  max_text_tokens: 200
  use_tf_native_loading: true
  prefetch_to_gpu: true
  use_phonemes: false
training:
  enable_graph_mode: true
  enable_xla_compilation: true
";

    fn fires(rule: &str, bad: &str, cores: Option<usize>) {
        let good = ids_with(GOOD, cores);
        assert!(
            !good.contains(&rule),
            "{rule} fires on the good config: {good:?}"
        );
        let ids = ids_with(bad, cores);
        assert!(ids.contains(&rule), "{rule} does not fire: {ids:?}");
    }

    fn with(replace: &str, by: &str) -> String {
        assert!(GOOD.contains(replace), "{replace}");
        GOOD.replace(replace, by)
    }

    #[test]
    fn good_config_has_no_findings() {
        assert_eq!(ids_with(GOOD, Some(16)), Vec::<&str>::new());
    }

    #[test]
    fn tf_native_loading() {
        fires(
            "tf-native-loading-off",
            &with(
                "use_tf_native_loading: true",
                "use_tf_native_loading: false",
            ),
            None,
        );
    }

    #[test]
    fn gpu_prefetch() {
        fires(
            "gpu-prefetch-off",
            &with("prefetch_to_gpu: true", "prefetch_to_gpu: false"),
            None,
        );
        fires(
            "gpu-prefetch-off",
            &with("prefetch_to_gpu: true", "enhanced_gpu_prefetch: false"),
            None,
        );
        // Two-GPU mode prefetches to the data GPU regardless of the flags.
        let two = with(
            "prefetch_to_gpu: true",
            "prefetch_to_gpu: false\n  data_gpu: 0\n  model_gpu: 1",
        );
        assert!(!ids_with(&two, None).contains(&"gpu-prefetch-off"));
    }

    #[test]
    fn workers_against_cores() {
        fires(
            "loader-in-main-thread",
            &with("num_workers: 8", "num_workers: 0"),
            Some(16),
        );
        fires(
            "num-workers-above-cores",
            &with("num_workers: 8", "num_workers: 64"),
            Some(16),
        );
        fires(
            "num-workers-low",
            &with("num_workers: 8", "num_workers: 2"),
            Some(16),
        );
        // 2 workers on 2 cores is all the machine has; unknown cores skip both rules.
        let two = with("num_workers: 8", "num_workers: 2");
        assert_eq!(ids_with(&two, Some(2)), Vec::<&str>::new());
        assert_eq!(
            ids_with(&with("num_workers: 8", "num_workers: 64"), None),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn prefetch_depth() {
        fires(
            "prefetch-disabled",
            &with(
                "num_workers: 8",
                "num_workers: 8\n  prefetch_buffer_size: 0",
            ),
            None,
        );
        fires(
            "prefetch-disabled",
            &with(
                "num_workers: 8",
                "num_workers: 8\n  pipeline_buffer_size: 0",
            ),
            None,
        );
    }

    #[test]
    fn shapes_and_caps() {
        fires(
            "dynamic-shapes",
            &with("pad_to_fixed_length: true", "pad_to_fixed_length: false"),
            None,
        );
        // Bounded shapes, or an eager step, do not retrace per batch.
        let bounded = with(
            "pad_to_fixed_length: true",
            "pad_to_fixed_length: false\n  pad_to_multiple_of: 64",
        );
        assert!(!ids_with(&bounded, None).contains(&"dynamic-shapes"));
        fires(
            "text-cap-mismatch",
            &with("  max_text_tokens: 200\n", ""),
            None,
        );
        fires(
            "text-cap-mismatch",
            &with("max_text_tokens: 200", "max_text_tokens: 300"),
            None,
        );
        fires(
            "batch-size-small",
            &with("batch_size: 32", "batch_size: 8"),
            None,
        );
    }

    #[test]
    fn gpu_indices() {
        fires(
            "two-gpu-half-set",
            &with("num_workers: 8", "num_workers: 8\n  data_gpu: 0"),
            None,
        );
        fires(
            "two-gpu-data-gpu-idle",
            &with(
                "num_workers: 8",
                "num_workers: 8\n  data_gpu: 0\n  model_gpu: 1",
            ),
            None,
        );
        let out = with(
            "num_workers: 8",
            "num_workers: 8\n  data_gpu: 0\n  model_gpu: 1",
        )
        .replace("training:\n", "training:\n  visible_gpus: \"0\"\n");
        fires("gpu-index-out-of-range", &out, None);
        let fine = out.replace("visible_gpus: \"0\"", "visible_gpus: \"2,3\"");
        assert!(!ids_with(&fine, None).contains(&"gpu-index-out-of-range"));
    }

    #[test]
    fn compute_modes() {
        fires(
            "mixed-precision-off",
            &with("num_workers: 8", "num_workers: 8\n  mixed_precision: false"),
            None,
        );
        fires(
            "eager-train-step",
            &with("enable_graph_mode: true", "enable_graph_mode: false"),
            None,
        );
        fires(
            "xla-without-graph-mode",
            &with("enable_graph_mode: true", "enable_graph_mode: false"),
            None,
        );
        // XLA left at its default is not a contradiction the file states.
        let implicit = with("enable_graph_mode: true", "enable_graph_mode: false")
            .replace("  enable_xla_compilation: true\n", "");
        assert!(!ids_with(&implicit, None).contains(&"xla-without-graph-mode"));
        fires(
            "xla-off",
            &with(
                "enable_xla_compilation: true",
                "enable_xla_compilation: false",
            ),
            None,
        );
        fires(
            "eager-debug-on",
            &with(
                "enable_graph_mode: true",
                "enable_graph_mode: true\n  enable_eager_debug: true",
            ),
            None,
        );
    }

    #[test]
    fn myxtts_key_status() {
        fires(
            "myxtts-unread-key",
            &with("num_workers: 8", "num_workers: 8\n  pin_memory: true"),
            None,
        );
        let rejected = with(
            "num_workers: 8",
            "num_workers: 8\n  n_mels: 80\n  cache_dir: c",
        );
        fires("myxtts-rejects-key", &rejected, None);
        // One finding for the section, listing both keys.
        let loaded =
            gpufeed_config::check(&rejected, Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let f: Vec<_> = check(&loaded, &Context::default(), Path::new("c.yaml"))
            .into_iter()
            .filter(|f| f.id == "myxtts-rejects-key")
            .collect();
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("`data.n_mels`") && f[0].message.contains("`data.cache_dir`")
        );
    }

    #[test]
    fn unhonoured_keys() {
        fires(
            "config-unhonoured-key",
            &with("use_phonemes: false", "use_phonemes: true"),
            None,
        );
        let all = |text: &str| {
            let loaded =
                gpufeed_config::check(text, Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
            check(&loaded, &Context::default(), Path::new("c.yaml"))
                .into_iter()
                .filter(|f| f.id == "config-unhonoured-key")
                .collect::<Vec<_>>()
        };
        // Written: a warning at the key.
        let written = all(&with("use_phonemes: false", "use_phonemes: true"));
        let [f] = written.as_slice() else {
            panic!("{written:?}")
        };
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!((f.line, f.column), (Some(9), Some(3)));
        assert!(
            f.message.starts_with(
                "`data.use_phonemes: true` asks for phonemes, but gpufeed tokenises the \
                 characters of the cleaned text"
            ),
            "{}",
            f.message
        );
        assert!(
            f.message
                .contains("; gpufeed's precompute and loader do not read this key")
        );
        assert_eq!(f.evidence, "`data.use_phonemes: true` (line 9)");
        assert!(f.fix.contains("`phonemes` field or column of the manifest"));
        // MyXTTS' default in a MyXTTS config: a note, nowhere in the file, saying why.
        let default = all(&with("  use_phonemes: false\n", ""));
        let [f] = default.as_slice() else {
            panic!("{default:?}")
        };
        assert_eq!((f.severity, f.line), (Severity::Info, None));
        assert_eq!(
            f.evidence,
            "`data.use_phonemes` not set (default: true); `data.max_text_tokens: 200` (line 6) \
             makes it a MyXTTS config"
        );
        // The librosa path's defaults name the key that selects it.
        let librosa = all(&with(
            "use_tf_native_loading: true",
            "use_tf_native_loading: false",
        ));
        let ids: Vec<_> = librosa
            .iter()
            .map(|f| f.message.split('`').nth(1))
            .collect();
        assert_eq!(
            ids,
            [
                Some("data.trim_silence"),
                Some("data.normalize_audio"),
                Some("data.enable_loudness_normalization")
            ]
        );
        assert!(
            librosa[0]
                .evidence
                .ends_with("; `data.use_tf_native_loading: false` (line 7)"),
            "{}",
            librosa[0].evidence
        );
        // A key that changes nothing in gpufeed is a note even when written.
        let speakers = all(&with(
            "use_phonemes: false",
            "use_phonemes: false\n  enable_multispeaker: true",
        ));
        assert_eq!(
            speakers.iter().map(|f| f.severity).collect::<Vec<_>>(),
            [Severity::Info]
        );
        // No other rule speaks of these keys: MyXTTS reads every one of them.
        for e in gpufeed_config::unhonoured::TABLE {
            assert_eq!(
                key_info(e.key).map(|k| k.myxtts),
                Some(Myxtts::Read),
                "{}",
                e.key
            );
        }
    }

    #[test]
    fn findings_point_at_the_value_or_nowhere() {
        let text = with("num_workers: 8", "num_workers: 0");
        let loaded =
            gpufeed_config::check(&text, Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let f = check(
            &loaded,
            &Context::new(Some(4), CoresOf::TrainingMachine),
            Path::new("c.yaml"),
        );
        let w = f.iter().find(|f| f.id == "loader-in-main-thread").cloned();
        let w = w.unwrap_or_else(|| panic!("{f:?}"));
        assert_eq!((w.line, w.column), (Some(3), Some(16)));
        assert_eq!(
            w.evidence,
            "`data.num_workers: 0` (line 3); this machine has 4 cores"
        );
        assert_eq!(w.fix, "data:\n  num_workers: 4");
        // A default-caused finding has no place.
        let loaded =
            gpufeed_config::check("", Path::new("c.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let f = check(&loaded, &Context::default(), Path::new("c.yaml"));
        let d = f
            .iter()
            .find(|f| f.id == "dynamic-shapes")
            .cloned()
            .unwrap_or_else(|| panic!("{f:?}"));
        assert_eq!((d.line, d.column), (None, None));
        assert!(
            d.evidence
                .contains("`data.pad_to_fixed_length` not set (default: false)")
        );
    }
}
