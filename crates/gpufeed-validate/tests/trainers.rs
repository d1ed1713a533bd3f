//! `validate` on other trainers' configs (fixtures written for gpufeed after reading the
//! public trainers' configs, not copied): each is recognised by its keys, checked under its
//! own key names for what gpufeed understands, and described in one info line; no
//! unknown-key warning and no MyXTTS rule. Also: an unrecognised file, a small MyXTTS file
//! with a typo, `--fix` on another trainer's file, findings about cores, and Python hparams
//! files (`hparams.py`) read for their literal settings.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gpufeed_findings::{Report, Severity};
use gpufeed_validate::fix;
use gpufeed_validate::{Context, CoresOf, validate_file, validate_text};

fn config(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/configs")
        .join(name)
}

fn this_machine(cores: usize) -> Context {
    Context::new(Some(cores), CoresOf::ThisMachine)
}

/// `(id, severity)` of every finding.
fn ids(name: &str, ctx: &Context) -> BTreeSet<(&'static str, Severity)> {
    let v = validate_file(&config(name), ctx).unwrap();
    v.findings.iter().map(|f| (f.id, f.severity)).collect()
}

/// The rules only MyXTTS' configs may get.
const MYXTTS_ONLY: &[&str] = &[
    "config-unknown-key",
    "tf-native-loading-off",
    "gpu-prefetch-off",
    "text-cap-mismatch",
    "two-gpu-half-set",
    "xla-off",
    "eager-train-step",
    "myxtts-unread-key",
    "myxtts-rejects-key",
    "config-unhonoured-key",
    "config-wrong-type",
    "config-invalid-value",
];

#[test]
fn each_trainer_is_recognised_and_checked_under_its_own_keys() {
    use Severity::{Info, Warning};
    let ctx = this_machine(8);
    // (file, the trainer its info line names, the findings besides that line)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, Severity)]);
    let cases: &[Case<'_>] = &[
        (
            "coqui_glow.json",
            "Coqui TTS",
            &[
                ("loader-in-main-thread", Warning),
                ("mixed-precision-off", Info),
            ],
        ),
        (
            "espnet_tts.yaml",
            "ESPnet",
            &[
                ("num-workers-above-cores", Info),
                ("mixed-precision-off", Info),
            ],
        ),
        (
            "nemo_fastpitch.yaml",
            "NeMo",
            &[
                ("loader-in-main-thread", Warning),
                ("pin-memory-off", Info),
                ("batch-size-small", Info),
                ("mixed-precision-off", Info),
            ],
        ),
        (
            "matcha_data.yaml",
            "Lightning-Hydra",
            &[("num-workers-above-cores", Info)],
        ),
        (
            "tensorflowtts_tacotron2.yaml",
            "TensorFlowTTS",
            &[("feature-cache-off", Info)],
        ),
        ("fastspeech2_train.yaml", "FastSpeech2", &[]),
        ("fastspeech2_preprocess.yaml", "FastSpeech2", &[]),
        ("vits_ljs.json", "VITS", &[("mixed-precision-off", Info)]),
        ("glowtts_base.json", "VITS", &[("feature-cache-off", Info)]),
        ("hifigan_v1.json", "HiFi-GAN", &[("num-workers-low", Info)]),
        ("styletts2.yml", "StyleTTS2", &[("batch-size-small", Info)]),
        (
            "f5tts_small.yaml",
            "F5-TTS",
            &[("num-workers-above-cores", Info)],
        ),
        (
            "tacotron2_hparams.py",
            "NVIDIA Tacotron 2",
            &[("mixed-precision-off", Info), ("feature-cache-off", Info)],
        ),
        (
            "keithito_hparams.py",
            "keithito",
            &[("batch-size-small", Info)],
        ),
        (
            "waveglow_config.json",
            "WaveGlow",
            &[("mixed-precision-off", Info)],
        ),
    ];
    for (file, trainer, want) in cases {
        let v = validate_file(&config(file), &ctx).unwrap();
        let got: BTreeSet<(&str, Severity)> = v
            .findings
            .iter()
            .filter(|f| f.id != "config-trainer")
            .map(|f| (f.id, f.severity))
            .collect();
        let want: BTreeSet<(&str, Severity)> = want.iter().copied().collect();
        assert_eq!(got, want, "{file}: {:#?}", v.findings);
        let lines: Vec<_> = v
            .findings
            .iter()
            .filter(|f| f.id == "config-trainer")
            .collect();
        assert_eq!(lines.len(), 1, "{file}");
        assert_eq!(lines[0].severity, Info);
        assert!(
            lines[0].message.contains(trainer),
            "{file}: {}",
            lines[0].message
        );
        assert!(lines[0].message.contains("checked"), "{}", lines[0].message);
        for f in &v.findings {
            assert!(!MYXTTS_ONLY.contains(&f.id), "{file}: {f:?}");
        }
        assert_eq!(Report::new(v.findings.clone()).exit_code(), 0, "{file}");
    }
}

#[test]
fn findings_use_the_trainers_key_names() {
    let v = validate_file(&config("nemo_fastpitch.yaml"), &this_machine(8)).unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "loader-in-main-thread")
        .unwrap();
    assert!(
        f.message
            .contains("model.train_ds.dataloader_params.num_workers"),
        "{}",
        f.message
    );
    assert_eq!(f.line, Some(18));
    // TensorFlowTTS' `use_fixed_shapes: true` is read: no `dynamic-shapes`.
    assert!(
        !ids("tensorflowtts_tacotron2.yaml", &this_machine(8))
            .iter()
            .any(|(id, _)| *id == "dynamic-shapes")
    );
}

#[test]
fn an_unrecognised_file_says_so_once_and_exits_0() {
    let v = validate_file(&config("not_a_trainer.yaml"), &this_machine(8)).unwrap();
    let got: Vec<_> = v.findings.iter().map(|f| (f.id, f.severity)).collect();
    assert_eq!(got, vec![("config-unrecognised", Severity::Info)]);
    assert!(v.findings[0].message.contains("nothing was checked"));
    assert_eq!(Report::new(v.findings).exit_code(), 0);
}

#[test]
fn a_small_myxtts_file_keeps_every_rule_typos_included() {
    let v = validate_file(&config("myxtts_small_typo.yaml"), &this_machine(8)).unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "config-unknown-key")
        .unwrap();
    assert!(
        f.message.contains("did you mean `num_workers`"),
        "{}",
        f.message
    );
    assert!(
        !v.findings
            .iter()
            .any(|f| matches!(f.id, "config-trainer" | "config-unrecognised"))
    );
}

/// The keys gpufeed's cache does not honour: a warning at each key that asks, a note for
/// the one that changes nothing in gpufeed, nothing for the keys set to what the cache
/// holds, and no edit for `--fix` (they change what the trainer does).
#[test]
fn a_myxtts_file_hears_which_keys_gpufeed_does_not_honour() {
    use Severity::{Info, Warning};
    let path = config("myxtts_unhonoured.yaml");
    let v = validate_file(&path, &this_machine(8)).unwrap();
    let got: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.id == "config-unhonoured-key")
        .map(|f| {
            (
                f.line,
                f.severity,
                f.message.split('`').nth(1).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (Some(6), Warning, "data.use_phonemes: true"),
            (Some(8), Warning, "data.trim_silence: true"),
            (Some(7), Info, "data.enable_multispeaker: true"),
        ]
    );
    assert!(
        v.findings
            .iter()
            .all(|f| f.id != "config-unhonoured-key" || f.edit.is_none())
    );
    let p = fix::plan(&v, &this_machine(8)).unwrap();
    assert!(!p.changes(), "{}", p.fixed);
    // `false` asks for nothing, and neither does a file of gpufeed's own keys.
    let text = fs_err::read_to_string(&path)
        .unwrap()
        .replace(": true", ": false");
    let v = validate_text(&text, &path, &this_machine(8));
    assert!(
        v.findings.iter().all(|f| f.id != "config-unhonoured-key"),
        "{:?}",
        v.findings
    );
    let own = validate_text(
        "data:\n  sample_rate: 16000\n  batch_size: 32\n",
        &path,
        &this_machine(8),
    );
    assert!(
        own.findings.iter().all(|f| f.id != "config-unhonoured-key"),
        "{:?}",
        own.findings
    );
}

#[test]
fn fix_on_another_trainers_file_fixes_only_its_keys_and_keeps_comments() {
    let ctx = this_machine(8);
    let v = validate_file(&config("espnet_yes.yaml"), &ctx).unwrap();
    let plan = fix::plan(&v, &ctx).unwrap();
    assert!(plan.changes());
    let original = fs_err::read_to_string(config("espnet_yes.yaml")).unwrap();
    assert_eq!(
        plan.fixed,
        original.replace("use_amp: yes   # mixed", "use_amp: true   # mixed")
    );
    // Nothing gpufeed understands is spelled differently here: nothing to fix.
    for file in ["coqui_glow.json", "nemo_fastpitch.yaml"] {
        let v = validate_file(&config(file), &ctx).unwrap();
        let plan = fix::plan(&v, &ctx).unwrap();
        assert!(!plan.changes(), "{file}");
    }
}

#[test]
fn cores_are_the_training_machines_when_given() {
    let file = "espnet_tts.yaml";
    // Without --cores: this machine's 2 cores are an assumption, so info, and it says so.
    let v = validate_file(&config(file), &this_machine(2)).unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "num-workers-above-cores")
        .unwrap();
    assert_eq!(f.severity, Severity::Info);
    assert!(f.message.contains("this machine"), "{}", f.message);
    assert!(f.message.contains("--cores"), "{}", f.message);
    // `--cores 2` (or doctor on the training machine): a warning about that machine.
    let v = validate_file(
        &config(file),
        &Context::new(Some(2), CoresOf::TrainingMachine),
    )
    .unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "num-workers-above-cores")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("training machine"), "{}", f.message);
    // `--cores 32`: 16 workers fit.
    assert!(
        !ids(file, &Context::new(Some(32), CoresOf::TrainingMachine))
            .iter()
            .any(|(id, _)| *id == "num-workers-above-cores")
    );
    // MyXTTS' own rule follows the same machine.
    let text = "data:\n  num_workers: 16\n";
    let v = validate_text(text, Path::new("c.yaml"), &this_machine(2));
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "num-workers-above-cores")
        .unwrap();
    assert_eq!(f.severity, Severity::Info);
}

/// `(line, fix)` of the one finding `id` of a fixture.
fn place_and_fix(name: &str, id: &str, ctx: &Context) -> (Option<usize>, String) {
    let v = validate_file(&config(name), ctx).unwrap();
    let found: Vec<_> = v.findings.iter().filter(|f| f.id == id).collect();
    assert_eq!(found.len(), 1, "{name}: {:#?}", v.findings);
    (found[0].line, found[0].fix.clone())
}

/// The `config-trainer` line of a validation names each of `read`.
fn says_it_read(v: &gpufeed_validate::Validation, read: &[&str]) {
    let lines: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.id == "config-trainer")
        .collect();
    assert_eq!(lines.len(), 1, "{:#?}", v.findings);
    for r in read {
        assert!(lines[0].message.contains(r), "{r}: {}", lines[0].message);
    }
}

#[test]
fn a_python_hparams_file_is_read_as_python_under_its_own_key_names() {
    let ctx = this_machine(8);
    // A dict literal inside create_hparams(): advice is written as the file writes it.
    let v = validate_file(&config("tacotron2_hparams.py"), &ctx).unwrap();
    assert!(v.parsed);
    assert!(!v.findings.iter().any(|f| f.id == "config-syntax"));
    assert_eq!(
        place_and_fix("tacotron2_hparams.py", "mixed-precision-off", &ctx),
        (Some(18), "\"fp16_run\": True".to_owned())
    );
    // `load_mel_from_disk: False`: the mel is computed per item; turning it on needs the
    // mels on disk first, and the fix says so.
    let (line, fix) = place_and_fix("tacotron2_hparams.py", "feature-cache-off", &ctx);
    assert_eq!(line, Some(21));
    assert!(
        fix.contains("np.save") && fix.contains("load_mel_from_disk"),
        "{fix}"
    );
    says_it_read(
        &v,
        &[
            "\"batch_size\": 48",
            "\"iters_per_checkpoint\": 500",
            "read as Python",
        ],
    );
    // Keyword arguments of tf.contrib.training.HParams.
    assert_eq!(
        place_and_fix("keithito_hparams.py", "batch-size-small", &ctx),
        (Some(14), "batch_size=32  # if GPU memory allows".to_owned())
    );
}

#[test]
fn fix_leaves_a_python_file_as_it_is() {
    let ctx = this_machine(8);
    for file in ["tacotron2_hparams.py", "keithito_hparams.py"] {
        let v = validate_file(&config(file), &ctx).unwrap();
        let plan = fix::plan(&v, &ctx).unwrap();
        assert!(!plan.changes(), "{file}");
        assert!(plan.applied.is_empty() && plan.skipped.is_empty(), "{file}");
        assert!(fix::preview(&v, &ctx).iter().all(|f| f.edit.is_none()));
    }
}

#[test]
fn python_with_no_settings_or_that_does_not_parse_says_so_once_and_exits_0() {
    let ctx = this_machine(8);
    let v = validate_file(&config("python_no_settings.py"), &ctx).unwrap();
    let got: Vec<_> = v.findings.iter().map(|f| (f.id, f.severity)).collect();
    assert_eq!(got, vec![("config-unrecognised", Severity::Info)]);
    assert!(
        v.findings[0].evidence.contains("Python"),
        "{}",
        v.findings[0].evidence
    );
    assert_eq!(Report::new(v.findings).exit_code(), 0);

    let v = validate_file(&config("python_syntax_error.py"), &ctx).unwrap();
    let got: Vec<_> = v
        .findings
        .iter()
        .map(|f| (f.id, f.severity, f.line))
        .collect();
    assert_eq!(
        got,
        vec![("config-python-unreadable", Severity::Info, Some(5))]
    );
    assert!(
        v.findings[0]
            .message
            .contains("could not be read as Python hparams"),
        "{}",
        v.findings[0].message
    );
    assert!(!v.findings[0].message.contains("YAML"));
    assert_eq!(Report::new(v.findings).exit_code(), 0);
}

#[test]
fn without_cores_no_worker_count_is_advised_from_this_machine() {
    // 20 workers written for a training server, validated on a 2-core laptop: info, no
    // `num_workers: 2`, and it asks for the training machine's cores.
    let (_, fix) = place_and_fix(
        "matcha_data.yaml",
        "num-workers-above-cores",
        &this_machine(2),
    );
    assert!(fix.contains("--cores N"), "{fix}");
    assert!(!fix.contains("num_workers: 2"), "{fix}");
    // The same with `--cores 2`: lower it to 2.
    let (_, fix) = place_and_fix(
        "matcha_data.yaml",
        "num-workers-above-cores",
        &Context::new(Some(2), CoresOf::TrainingMachine),
    );
    assert_eq!(fix, "num_workers: 2");
    // Few workers against this machine's 6 cores: no `num_workers: 6`.
    let (_, fix) = place_and_fix("hifigan_v1.json", "num-workers-low", &this_machine(6));
    assert!(
        fix.contains("--cores N") && !fix.contains("num_workers: 6"),
        "{fix}"
    );
    let (_, fix) = place_and_fix(
        "hifigan_v1.json",
        "num-workers-low",
        &Context::new(Some(6), CoresOf::TrainingMachine),
    );
    assert!(fix.starts_with("num_workers: 6"), "{fix}");
    // MyXTTS' own rule: 0 workers on a 2-core laptop is not advised 2.
    let v = validate_text(
        "data:\n  num_workers: 0\n",
        Path::new("c.yaml"),
        &this_machine(2),
    );
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "loader-in-main-thread")
        .unwrap();
    assert!(f.fix.starts_with("data:\n  num_workers: 8"), "{}", f.fix);
}

#[test]
fn nested_settings_and_evaluation_pauses_are_read() {
    let ctx = this_machine(8);
    // WaveGlow's settings are under `train_config`.
    let v = validate_file(&config("waveglow_config.json"), &ctx).unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "mixed-precision-off")
        .unwrap();
    assert!(f.message.contains("train_config.fp16_run"), "{}", f.message);
    assert_eq!(f.line, Some(7));
    says_it_read(&v, &["`train_config.batch_size: 24`"]);
    // FastSpeech2's synthesis and validation cadence is reported.
    let v = validate_file(&config("fastspeech2_train.yaml"), &ctx).unwrap();
    says_it_read(
        &v,
        &[
            "`step.synth_step: 1000`",
            "`step.val_step: 1000`",
            "vocoder",
        ],
    );
}

/// A finding quotes only files that were read: validating `hparams.py` said its loader
/// (`num_workers=1`, `pin_memory=False`) "is set in train.py", a file gpufeed never opened,
/// as if it were the user's (issue 41). What the upstream trainer's code does is named as
/// upstream's, and the user's code is left to `gpufeed lint`.
#[test]
fn findings_quote_only_files_that_were_read() {
    let ctx = this_machine(8);
    for file in ["tacotron2_hparams.py", "waveglow_config.json"] {
        let v = validate_file(&config(file), &ctx).unwrap();
        for f in &v.findings {
            let text = format!("{} {} {}", f.message, f.evidence, f.fix);
            if text.contains("num_workers=1") {
                assert!(text.contains("upstream"), "{file}: {text}");
                assert!(text.contains("did not read your"), "{file}: {text}");
            }
        }
    }
}

/// The one `config-trainer` line of a fixture validated with `--cores 8`, and every other
/// finding as `(id, severity, line, message up to its first `;`)`.
type Found = (&'static str, Severity, Option<usize>, String);

fn with_cores_8(name: &str) -> (String, Vec<Found>) {
    let v = validate_file(
        &config(name),
        &Context::new(Some(8), CoresOf::TrainingMachine),
    )
    .unwrap();
    let lines: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.id == "config-trainer")
        .collect();
    assert_eq!(lines.len(), 1, "{name}: {:#?}", v.findings);
    let others = v
        .findings
        .iter()
        .filter(|f| f.id != "config-trainer")
        .map(|f| {
            let head = f.message.split("; ").next().unwrap_or("").to_owned();
            (f.id, f.severity, f.line, head)
        })
        .collect();
    (lines[0].message.clone(), others)
}

/// A file of a trainer gpufeed does not know, with a Lightning `trainer` section and
/// `data.num_workers: 8`: it was called "a NeMo (Hydra) config" that did "not set here:
/// loader workers" (issue 44, pattern 9). Its loader keys are found by name and judged.
#[test]
fn an_unknown_trainers_loader_keys_are_found_by_name() {
    let (line, others) = with_cores_8("plain_data_workers.yaml");
    assert!(
        line.starts_with(&format!(
            "`{}` is the config of a trainer gpufeed does not know",
            config("plain_data_workers.yaml").display()
        )),
        "{line}"
    );
    for read in [
        "loader workers (`data.num_workers: 8`)",
        "batch size (`data.batch_size: 64`)",
        "pinned memory (`data.pin_memory: true`)",
    ] {
        assert!(line.contains(read), "{read}: {line}");
    }
    assert!(!line.contains("not set here: loader workers"), "{line}");
    assert!(!line.contains("looks like a NeMo"), "{line}");
    // 8 workers on 8 cores, a batch of 64, pinned memory: nothing to say.
    assert_eq!(others, []);
    // Judged as a known trainer's: 2 workers on 8 cores, at the key's path and line.
    let text = fs_err::read_to_string(config("plain_data_workers.yaml"))
        .unwrap()
        .replace("num_workers: 8", "num_workers: 2");
    let v = validate_text(
        &text,
        Path::new("plain.yaml"),
        &Context::new(Some(8), CoresOf::TrainingMachine),
    );
    let low: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.id == "num-workers-low")
        .map(|f| {
            (
                f.line,
                f.message.split("; ").next().unwrap_or(""),
                f.fix.as_str(),
            )
        })
        .collect();
    assert_eq!(
        low,
        [(
            Some(12),
            "`data.num_workers` is 2, fewer than the 8 cores of the training machine",
            "data.num_workers: 8  # then measure: gpufeed profile data --benchmark"
        )]
    );
}

/// A Lightning CLI config (`class_path`/`init_args`, `seed_everything`) was called "a NeMo
/// (Hydra) config" that did "not set here: loader workers, batch size" though its data
/// module sets both under `data.init_args.train_params` (issue 44, pattern 9).
#[test]
fn a_lightning_cli_config_is_named_and_its_train_loader_read() {
    let (line, others) = with_cores_8("lightning_cli.yaml");
    assert!(line.contains("looks like a Lightning CLI config"), "{line}");
    assert!(!line.contains("NeMo"), "{line}");
    for read in [
        "loader workers (`data.init_args.train_params.num_workers: 8`)",
        "batch size (`data.init_args.train_params.batch_size: 8`)",
        "mixed precision (`trainer.precision: bf16-mixed`)",
    ] {
        assert!(line.contains(read), "{read}: {line}");
    }
    // The validation loader's settings are not the training loader's.
    assert!(!line.contains("val_params"), "{line}");
    assert!(!line.contains("not set here: loader workers"), "{line}");
    assert_eq!(
        others,
        [(
            "batch-size-small",
            Severity::Info,
            Some(29),
            "`data.init_args.train_params.batch_size` is 8".to_owned()
        )]
    );
}

/// A plain Hydra application's config (`defaults`, `hydra:`) was called "a NeMo (Hydra)
/// config", and its `datamodule.num_workers: 0` and `pin_memory: false` went unread
/// (issue 44, pattern 9).
#[test]
fn a_plain_hydra_config_is_called_hydra_not_nemo() {
    let (line, others) = with_cores_8("hydra_plain.yaml");
    assert!(line.contains("looks like a Hydra config"), "{line}");
    assert!(!line.contains("NeMo"), "{line}");
    assert_eq!(
        others,
        [
            (
                "loader-in-main-thread",
                Severity::Warning,
                Some(19),
                "`datamodule.num_workers` is 0: batches are built in the training process"
                    .to_owned()
            ),
            (
                "pin-memory-off",
                Severity::Info,
                Some(20),
                "`datamodule.pin_memory` is false".to_owned()
            ),
        ]
    );
    let v = validate_file(
        &config("hydra_plain.yaml"),
        &Context::new(Some(8), CoresOf::TrainingMachine),
    )
    .unwrap();
    let f = v
        .findings
        .iter()
        .find(|f| f.id == "loader-in-main-thread")
        .unwrap();
    assert_eq!(f.fix, "datamodule.num_workers: 8");
}

/// A NeMo config is still NeMo's, its training loader read and its validation loader's 0
/// workers left alone; without NeMo's own keys (`exp_manager`, a `manifest_filepath` under
/// `model.train_ds`) the same `trainer` and `model` keys name no trainer.
#[test]
fn nemo_is_named_by_its_own_keys() {
    let (line, others) = with_cores_8("nemo_conformer_ctc.yaml");
    assert!(line.contains("looks like a NeMo (Hydra) config"), "{line}");
    assert!(
        line.contains("loader workers (`model.train_ds.num_workers: 8`)"),
        "{line}"
    );
    assert_eq!(
        others,
        [(
            "mixed-precision-off",
            Severity::Info,
            Some(42),
            "`trainer.precision` is 32: full float32 precision".to_owned()
        )]
    );
    let text = fs_err::read_to_string(config("nemo_conformer_ctc.yaml")).unwrap();
    let (kept, _) = text.split_once("exp_manager:").unwrap();
    let kept: String = kept
        .lines()
        .filter(|l| !l.contains("manifest_filepath"))
        .map(|l| format!("{l}\n"))
        .collect();
    let v = validate_text(
        &kept,
        Path::new("no_nemo_keys.yaml"),
        &Context::new(Some(8), CoresOf::TrainingMachine),
    );
    let lines: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.id == "config-trainer")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(lines.len(), 1, "{:#?}", v.findings);
    assert!(
        lines[0]
            .starts_with("`no_nemo_keys.yaml` is the config of a trainer gpufeed does not know"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("loader workers (`model.train_ds.num_workers: 8`)"),
        "{}",
        lines[0]
    );
}

/// The article before a trainer's name reads as the name sounds (the message once said
/// "a ESPnet config").
#[test]
fn the_article_fits_the_trainers_name() {
    let (line, _) = with_cores_8("espnet_tts.yaml");
    assert!(line.contains("looks like an ESPnet config"), "{line}");
    let (line, _) = with_cores_8("plain_data_workers.yaml");
    assert!(
        !line.contains(" a ESPnet") && !line.contains(" an trainer"),
        "{line}"
    );
}

/// `persistent_workers: true` beside `num_workers: 0` is an error: PyTorch's DataLoader
/// raises before the first batch. A loader with workers beside it is fine.
#[test]
fn persistent_workers_without_workers_is_an_error() {
    let (_, others) = with_cores_8("persistent_no_workers.yaml");
    let errors: Vec<&Found> = others
        .iter()
        .filter(|f| f.0 == "persistent-workers-without-workers")
        .collect();
    assert_eq!(
        errors,
        [&(
            "persistent-workers-without-workers",
            Severity::Error,
            Some(9),
            "`loaders.train.persistent_workers` is true, but `loaders.train.num_workers` is 0"
                .to_owned()
        )],
        "{others:#?}"
    );
}

/// A Hydra application's config whose loader settings sit in a `data` section, a name
/// MyXTTS' configs use too: it was taken for a MyXTTS config, with `defaults` and `trainer`
/// reported as unknown keys and MyXTTS' shape rule applied. The defaults list decides it is
/// Hydra's, and its loader settings are judged by name.
#[test]
fn a_hydra_defaults_list_is_hydra_whatever_its_data_section_holds() {
    let (line, others) = with_cores_8("hydra_data_section.yaml");
    assert!(line.contains("looks like a Hydra config"), "{line}");
    assert!(
        line.contains("loader workers (`data.num_workers: 0`)"),
        "{line}"
    );
    assert_eq!(
        others,
        [(
            "loader-in-main-thread",
            Severity::Warning,
            Some(13),
            "`data.num_workers` is 0: batches are built in the training process".to_owned()
        )]
    );
}

/// A config of a trainer gpufeed does not know, laid out in `model`/`data`/`training`
/// sections as MyXTTS' are: it was taken for a MyXTTS config, with eight unknown-key
/// warnings and MyXTTS' shape rule. Most of its keys are not MyXTTS' (whose dataclasses
/// refuse unknown keys), so it is an unknown trainer's, its loader settings judged by name.
#[test]
fn sections_named_as_myxtts_with_mostly_other_keys_are_another_trainers() {
    let (line, others) = with_cores_8("other_trainer_sections.yaml");
    assert!(line.contains("a trainer gpufeed does not know"), "{line}");
    assert!(
        line.contains("loader workers (`data.num_workers: 2`)"),
        "{line}"
    );
    assert_eq!(
        others,
        [(
            "num-workers-low",
            Severity::Info,
            Some(14),
            "`data.num_workers` is 2, fewer than the 8 cores of the training machine".to_owned()
        )]
    );
}
