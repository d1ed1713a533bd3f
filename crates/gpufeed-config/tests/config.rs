//! Loading real files: the seeds' MyXTTS config, a minimal one, one file per error kind
//! (each checked at its exact line and column), every warning kind, spans and edits, and
//! arbitrary input that must never panic.

use std::path::{Path, PathBuf};

use gpufeed_config::{
    Cleaner, Config, ConfigError, ErrorKind, Loaded, MelScale, OverLength, WarningKind, check,
    from_str, keys, load,
};
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn ids(loaded: &Loaded) -> Vec<(usize, usize, &'static str, String)> {
    loaded
        .warnings
        .iter()
        .map(|w| (w.line, w.column, w.id(), w.key.clone()))
        .collect()
}

#[test]
fn myxtts_config_loads_with_its_warnings() {
    let path = fixture("myxtts_config.yaml");
    let loaded = load(&path).unwrap();
    let c = &loaded.config;

    // model
    assert_eq!(c.model.text_encoder_dim, 512);
    assert_eq!(c.model.decoder_dim, 1024);
    assert_eq!(c.model.text_encoder_layers, 6);
    assert_eq!(
        c.model.decoder_heads, 24,
        "not in the file: the MyXTTS default"
    );
    assert_eq!(c.model.sample_rate, 22050);
    assert_eq!(c.model.n_mels, 80);
    assert_eq!(c.model.max_attention_sequence_length, 200);
    assert!(c.model.use_voice_conditioning);
    assert_eq!(c.model.speaker_embedding_dim, 256);
    let languages = c.model.languages.as_ref().unwrap();
    assert_eq!(languages.len(), 16);
    assert_eq!(languages[0], "en");
    assert_eq!(languages[15], "ko");

    // training
    assert_eq!(c.training.epochs, 1000);
    assert!((c.training.learning_rate - 1e-4).abs() < 1e-18);
    assert!((c.training.min_learning_rate - 1e-6).abs() < 1e-20);
    assert_eq!(c.training.optimizer, "adamw");
    assert_eq!(c.training.scheduler, "noam");
    assert!((c.training.mel_loss_weight - 2.5).abs() < 1e-12);
    assert!((c.training.gradient_clip_norm - 0.5).abs() < 1e-12);
    assert!((c.training.early_stopping_min_delta - 0.0005).abs() < 1e-12);
    assert_eq!(c.training.early_stopping_patience, 25);
    assert_eq!(c.training.save_step, 25000);
    assert_eq!(c.training.val_step, 5000);
    assert_eq!(c.training.checkpoint_dir, PathBuf::from("./checkpoints"));
    assert!(c.training.enable_xla_compilation, "default");
    assert!(c.mixed_precision(), "from data.mixed_precision");

    // data
    let d = &c.data;
    assert_eq!(
        d.dataset_path.as_deref(),
        Some(Path::new("./data/ljspeech"))
    );
    assert_eq!(d.dataset_name, "ljspeech");
    assert_eq!(d.language, "en");
    assert_eq!(d.sample_rate, 22050);
    assert_eq!(d.n_mels, 80);
    assert!(d.normalize_audio && d.trim_silence && d.add_blank);
    assert_eq!(
        d.text_cleaners.as_deref(),
        Some(&["english_cleaners".to_owned()][..])
    );
    assert_eq!(d.cleaner, Cleaner::English);
    assert!((d.train_split - 0.9).abs() < 1e-12 && (d.val_split - 0.1).abs() < 1e-12);
    assert_eq!(d.batch_size, 56);
    assert_eq!(d.num_workers, Some(16));
    assert_eq!(d.max_text_length, 200);
    assert_eq!(d.max_mel_frames, 800);
    assert!(d.pad_to_fixed_length);
    assert_eq!(d.prefetch_buffer_size, Some(16));
    assert_eq!(d.shuffle_buffer_multiplier, 20);
    assert!(d.enable_xla && d.mixed_precision && d.pin_memory);
    assert!(d.use_tf_native_loading && d.prefetch_to_gpu);
    // Keys the file does not set keep gpufeed's defaults.
    assert_eq!(d.over_length, OverLength::Skip);
    assert_eq!(d.audio().n_fft, 1024);
    assert!(d.text().add_blank);

    // The PyYAML strings and the decoder heads, nothing else (`data.n_mels` is fine now).
    assert_eq!(
        ids(&loaded),
        [
            (
                10,
                16,
                "config-heads-do-not-divide",
                "model.decoder_dim".to_owned()
            ),
            (
                27,
                18,
                "config-float-is-string-for-pyyaml",
                "training.learning_rate".to_owned()
            ),
            (
                52,
                22,
                "config-float-is-string-for-pyyaml",
                "training.min_learning_rate".to_owned()
            ),
        ]
    );
    let message = loaded.warnings[1].to_string();
    assert_eq!(
        message,
        format!(
            "{}:27:18: `training.learning_rate: 1e-4` is read as the string \"1e-4\" by PyYAML \
             (YAML 1.1 floats need a dot and a signed exponent), so the trainer gets a string; \
             gpufeed reads 1e-4; write `1.0e-4`",
            path.display()
        )
    );
    // The heads warning points at the width, the key the file sets.
    assert_eq!(
        loaded.warnings[0].message,
        "`model.decoder_dim` (1024) is not a multiple of `model.decoder_heads` (24): attention \
         splits the width evenly across heads; set `decoder_heads: 16` (64 wide each, as in \
         MyXTTS' presets)"
    );
}

#[test]
fn myxtts_config_spans() {
    let loaded = load(&fixture("myxtts_config.yaml")).unwrap();
    let text = loaded.source.text();
    let span = loaded.span_of("data.num_workers").unwrap();
    assert_eq!((span.line, span.column), (84, 16));
    assert_eq!(&text[span.byte_start..span.byte_end], "16");
    let key = loaded.key_span_of("data.num_workers").unwrap();
    assert_eq!((key.line, key.column), (84, 3));
    assert_eq!(&text[key.byte_start..key.byte_end], "num_workers");
    let item = loaded.span_of("model.languages[15]").unwrap();
    assert_eq!(&text[item.byte_start..item.byte_end], "ko");
    assert!(loaded.is_set("data.n_mels"));
    assert!(!loaded.is_set("data.n_fft"));
    // Sections are entries too, at depth 1, with their keys at depth 2.
    let data = loaded.source.entry("data").unwrap();
    assert_eq!(data.depth, 1);
    assert_eq!(data.key.unwrap().line, 63);
    assert_eq!(loaded.source.entry("data.batch_size").unwrap().depth, 2);
}

#[test]
fn minimal_config() {
    let loaded = load(&fixture("minimal.yaml")).unwrap();
    assert!(loaded.warnings.is_empty());
    let mut expected = Config::default();
    expected.data.dataset_path = Some(PathBuf::from("./LJSpeech-1.1"));
    expected.data.batch_size = 32;
    assert_eq!(loaded.config, expected);
}

#[test]
fn empty_and_missing_sections_are_defaults() {
    for text in [
        "",
        "\n\n",
        "# only a comment\n",
        "~\n",
        "---\n",
        "data:\n",
        "model: ~\ndata:\ntraining: null\n",
    ] {
        let loaded = from_str(text, Path::new("c.yaml")).unwrap();
        assert_eq!(loaded.config, Config::default(), "{text:?}");
        assert!(loaded.warnings.is_empty(), "{text:?}");
    }
}

/// One fixture per error kind: (file, line, column, kind, key).
const BAD: &[(&str, usize, usize, ErrorKind, Option<&str>)] = &[
    ("bad_syntax.yaml", 3, 15, ErrorKind::Syntax, None),
    ("bad_not_mapping.yaml", 2, 1, ErrorKind::NotAMapping, None),
    (
        "bad_section_not_mapping.yaml",
        3,
        7,
        ErrorKind::NotAMapping,
        Some("data"),
    ),
    (
        "bad_duplicate_key.yaml",
        4,
        3,
        ErrorKind::DuplicateKey,
        Some("data.batch_size"),
    ),
    (
        "bad_wrong_type.yaml",
        5,
        15,
        ErrorKind::WrongType,
        Some("data.batch_size"),
    ),
    (
        "bad_enum.yaml",
        2,
        14,
        ErrorKind::WrongType,
        Some("data.mel_scale"),
    ),
    (
        "bad_two_documents.yaml",
        3,
        1,
        ErrorKind::MultipleDocuments,
        None,
    ),
    (
        "bad_win_length.yaml",
        3,
        15,
        ErrorKind::InvalidValue,
        Some("data.win_length"),
    ),
    (
        "bad_hop_length.yaml",
        2,
        15,
        ErrorKind::InvalidValue,
        Some("data.hop_length"),
    ),
    (
        "bad_fmax.yaml",
        3,
        9,
        ErrorKind::InvalidValue,
        Some("data.fmax"),
    ),
    (
        "bad_fmin.yaml",
        2,
        9,
        ErrorKind::InvalidValue,
        Some("data.fmin"),
    ),
    (
        "bad_n_mels.yaml",
        3,
        11,
        ErrorKind::InvalidValue,
        Some("data.n_mels"),
    ),
    (
        "bad_log_floor.yaml",
        3,
        14,
        ErrorKind::InvalidValue,
        Some("data.log_floor"),
    ),
    (
        "bad_batch_size.yaml",
        2,
        15,
        ErrorKind::InvalidValue,
        Some("data.batch_size"),
    ),
    (
        "bad_max_text_length.yaml",
        2,
        20,
        ErrorKind::InvalidValue,
        Some("data.max_text_length"),
    ),
    ("bad_complex_key.yaml", 2, 3, ErrorKind::ComplexKey, None),
    ("bad_merge.yaml", 2, 7, ErrorKind::BadMerge, None),
];

#[test]
fn each_error_names_its_line_and_column() {
    for &(name, line, column, kind, key) in BAD {
        let path = fixture(name);
        let err = load(&path).expect_err(name);
        let message = err.to_string();
        assert_eq!(
            (err.line(), err.column(), err.kind(), err.key()),
            (Some(line), Some(column), Some(kind), key),
            "{message}"
        );
        let prefix = format!("{}:{line}:{column}: ", path.display());
        assert!(message.starts_with(&prefix), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn error_messages_say_what_to_do() {
    let message = |name: &str| {
        let path = fixture(name);
        let text = load(&path).unwrap_err().to_string();
        text.strip_prefix(&format!("{}:", path.display()))
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        message("bad_wrong_type.yaml"),
        "5:15: `data.batch_size` must be a positive integer, found `\"32x\"`"
    );
    assert_eq!(
        message("bad_duplicate_key.yaml"),
        "4:3: duplicate key `data.batch_size` (lines 2 and 4): PyYAML silently keeps the last \
         one; delete one of them"
    );
    assert_eq!(
        message("bad_enum.yaml"),
        "2:14: `data.mel_scale` must be one of `slaney`, `htk`, found `slanye`; did you mean \
         `slaney`?"
    );
    assert_eq!(
        message("bad_win_length.yaml"),
        "3:15: `data.win_length` (2048) must not exceed `data.n_fft` (1024): the window must fit \
         in the FFT frame; lower win_length or raise n_fft"
    );
    assert_eq!(
        message("bad_fmax.yaml"),
        "3:9: `data.fmax` (11025 Hz) must not exceed half of `data.sample_rate` (16000 Hz → 8000 \
         Hz, the highest frequency the audio holds); lower fmax or write `fmax: null` for \
         sample_rate / 2"
    );
    assert_eq!(
        message("bad_hop_length.yaml"),
        "2:15: `data.hop_length` must be a positive integer, found `0`; a hop of 0 samples never \
         advances (256 is usual at 22050 Hz)"
    );
    assert_eq!(
        message("bad_not_mapping.yaml"),
        "2:1: the file must be a mapping with the sections `model`, `data` and `training`, \
         found a list"
    );
    assert!(message("bad_syntax.yaml").starts_with("3:15: invalid YAML: "));
}

#[test]
fn check_reports_every_error_in_file_order() {
    let text =
        "data:\n  hop_length: 0\n  batch_size: -3\n  n_mels: many\ntraining:\n  epochs: 1.5\n";
    let rejected = check(text, Path::new("c.yaml")).unwrap_err();
    let at: Vec<_> = rejected
        .errors
        .iter()
        .map(|e| (e.line().unwrap(), e.key().unwrap().to_owned()))
        .collect();
    // Type errors first stop the semantic checks (hop_length: 0 is reported once the types
    // are right), so the three type errors are what comes back.
    assert_eq!(
        at,
        [
            (3, "data.batch_size".to_owned()),
            (4, "data.n_mels".to_owned()),
            (6, "training.epochs".to_owned())
        ]
    );
    assert_eq!(rejected.to_string().lines().count(), 3);
    // `from_str` returns the first.
    let first = from_str(text, Path::new("c.yaml")).unwrap_err();
    assert_eq!(first.line(), Some(3));
}

#[test]
fn every_warning_kind() {
    let path = fixture("warnings.yaml");
    let loaded = load(&path).unwrap();
    let got: Vec<(usize, &str, &str)> = loaded
        .warnings
        .iter()
        .map(|w| (w.line, w.id(), w.key.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (4, "config-heads-do-not-divide", "model.text_encoder_dim"),
            (6, "config-unknown-key", "data.num_worker"),
            (7, "config-sections-disagree", "data.n_mels"),
            (8, "config-yaml11-boolean", "data.center"),
            (9, "config-not-a-string-for-pyyaml", "data.language"),
            (10, "config-number-differs-in-pyyaml", "data.seed"),
            (11, "config-two-text-caps", "data.max_text_tokens"),
            (12, "config-cleaners", "data.text_cleaners[0]"),
            (
                14,
                "config-float-is-string-for-pyyaml",
                "training.learning_rate"
            ),
            (15, "config-min-learning-rate", "training.min_learning_rate"),
            (16, "config-unknown-key", "training.batch_size"),
            (17, "config-unknown-key", "loging"),
        ]
    );
    let text = |i: usize| {
        let w = &loaded.warnings[i];
        w.to_string()
            .strip_prefix(&format!("{}:", path.display()))
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        text(1),
        "6:3: unknown key `data.num_worker`; did you mean `num_workers`?"
    );
    assert_eq!(
        text(10),
        "16:3: unknown key `training.batch_size`; did you mean `data.batch_size`? (it belongs \
         in `data`)"
    );
    assert_eq!(
        text(11),
        "17:1: unknown key `loging`; gpufeed ignores it and leaves it in the file"
    );
    assert_eq!(
        text(2),
        "7:11: `data.n_mels` (80) and `model.n_mels` (100, line 3) differ; features use \
         data.n_mels, so the model would get features it does not expect; make them equal"
    );
    assert_eq!(
        text(0),
        "4:21: `model.text_encoder_dim` (500) is not a multiple of `model.text_encoder_heads` \
         (8): attention splits the width evenly across heads; set the width to 496 or 504"
    );
    assert_eq!(
        text(4),
        "9:13: `data.language: no` is the boolean False for PyYAML, not the text \"no\"; quote \
         it: `\"no\"`"
    );
    assert_eq!(
        text(5),
        "10:9: `data.seed: 010` is the integer 10 for YAML 1.2 (and gpufeed) but the integer 8 \
         (a leading 0 means octal) for PyYAML; write `10` so that both read the same value"
    );
    // Values as gpufeed reads them.
    let c = &loaded.config;
    assert!(c.data.center);
    assert_eq!(c.data.language, "no");
    assert_eq!(c.data.seed, 10);
    assert_eq!(c.data.cleaner, Cleaner::Unicode, "multilingual_cleaners");
    assert_eq!(c.data.num_workers, None);
    assert_eq!(c.data.n_mels, 80, "features keep data.n_mels");
    assert_eq!(c.model.n_mels, 100);
    assert!(matches!(
        &loaded.warnings[1].kind,
        WarningKind::UnknownKey { suggestion: Some(s) } if s == "num_workers"
    ));
}

#[test]
fn edits_fix_the_text_and_keep_comments() {
    let loaded = load(&fixture("warnings.yaml")).unwrap();
    let mut text = loaded.source.text().to_owned();
    let mut edits: Vec<_> = loaded
        .warnings
        .iter()
        .filter_map(|w| w.edit.clone())
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.byte_start));
    assert_eq!(edits.len(), 5, "{edits:?}");
    for edit in edits {
        text.replace_range(edit.span.byte_start..edit.span.byte_end, &edit.replacement);
    }
    assert!(text.contains("  num_workers: 8                # typo: num_workers\n"));
    assert!(text.contains("  learning_rate: 1.0e-4\n"));
    assert!(text.contains("  center: true                  #"));
    assert!(text.contains("  language: \"no\"                 #"));
    assert!(text.contains("  seed: 10                    #"));
    let fixed = from_str(&text, Path::new("fixed.yaml")).unwrap();
    let left: Vec<&str> = fixed.warnings.iter().map(|w| w.id()).collect();
    assert_eq!(
        left,
        [
            "config-heads-do-not-divide",
            "config-sections-disagree",
            "config-two-text-caps",
            "config-cleaners",
            "config-min-learning-rate",
            "config-unknown-key",
            "config-unknown-key",
        ]
    );
    assert_eq!(fixed.config.data.num_workers, Some(8));
    assert!((fixed.config.training.learning_rate - 1e-4).abs() < 1e-18);
}

#[test]
fn pyyaml_traps() {
    let warn = |text: &str| {
        let loaded = from_str(text, Path::new("c.yaml")).unwrap();
        loaded.warnings.iter().map(|w| w.id()).collect::<Vec<_>>()
    };
    for ok in [
        "training:\n  learning_rate: 1.0e-4\n",
        "training:\n  learning_rate: 0.0001\n",
        "training:\n  learning_rate: 1.0e+4\n",
        "training:\n  learning_rate: !!float 1e-4\n",
        "training:\n  learning_rate: 1\n",
        "data:\n  center: false\n",
        "data:\n  language: \"no\"\n",
    ] {
        assert_eq!(warn(ok), Vec::<&str>::new(), "{ok}");
    }
    assert_eq!(
        warn("training:\n  learning_rate: 1.0e4\n"),
        ["config-float-is-string-for-pyyaml"]
    );
    assert_eq!(
        warn("data:\n  batch_size: 1_000\n"),
        ["config-number-differs-in-pyyaml"]
    );
    // Quoted numbers are strings for everyone: an error, with a hint.
    let err = from_str(
        "training:\n  learning_rate: \"1e-4\"\n",
        Path::new("c.yaml"),
    )
    .unwrap_err();
    assert!(err.to_string().ends_with(
        "`training.learning_rate` must be a positive number, found `\"1e-4\"`; quoted values are \
         strings, for the trainer too: remove the quotes"
    ));
    let err = from_str("data:\n  batch_size: 32.0\n", Path::new("c.yaml")).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::WrongType));
    let err = from_str("data:\n  batch_size:\n", Path::new("c.yaml")).unwrap_err();
    assert!(err.to_string().ends_with(
        "`data.batch_size` must be a positive integer, found no value; write a value, or delete \
         the line to use the default"
    ));
}

#[test]
fn anchors_aliases_and_merge_keys() {
    let text = "\
defaults: &audio
  sample_rate: 16000
  fmax: 7600
data:
  <<: *audio
  n_mels: 64
model:
  n_mels: 64
  sample_rate: 16000
";
    let loaded = from_str(text, Path::new("c.yaml")).unwrap();
    assert_eq!(loaded.config.data.sample_rate, 16000);
    assert_eq!(loaded.config.data.fmax, Some(7600.0));
    assert_eq!(loaded.config.data.n_mels, 64);
    let ids: Vec<&str> = loaded.warnings.iter().map(|w| w.id()).collect();
    assert_eq!(ids, ["config-unknown-key"], "only `defaults`");
    let merged = loaded.source.entry("data.sample_rate").unwrap();
    assert!(merged.inherited);
    assert_eq!(merged.value.line, 2, "points at the anchored text");
}

#[test]
fn model_and_data_keys_and_cleaners() {
    let text = "model:\n  sample_rate: 24000\ndata:\n  sample_rate: 22050\n  cleaner: none\n  text_cleaners: [english_cleaners]\n";
    let loaded = from_str(text, Path::new("c.yaml")).unwrap();
    let got: Vec<(usize, &str)> = loaded.warnings.iter().map(|w| (w.line, w.id())).collect();
    assert_eq!(
        got,
        [(4, "config-sections-disagree"), (5, "config-cleaners")]
    );
    assert_eq!(
        loaded.config.data.cleaner,
        Cleaner::None,
        "an explicit cleaner wins"
    );
    let loaded = from_str("data:\n  text_cleaners: []\n", Path::new("c.yaml")).unwrap();
    assert_eq!(loaded.config.data.cleaner, Cleaner::None);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn text_cleaners_map_onto_cleaner() {
    // (the `data` section, the cleaner gpufeed uses, what its one warning says, if any)
    let cases: [(&str, Cleaner, &[&str]); 8] = [
        // Neither key: gpufeed's default keeps every script.
        ("batch_size: 8", Cleaner::Unicode, &[]),
        ("cleaner: unicode", Cleaner::Unicode, &[]),
        ("text_cleaners: [english_cleaners]", Cleaner::English, &[]),
        ("text_cleaners: [basic_cleaners]", Cleaner::Basic, &[]),
        (
            "text_cleaners: [multilingual_cleaners]",
            Cleaner::Unicode,
            &["it reads it as `cleaner: unicode`", "keeps every script"],
        ),
        (
            "text_cleaners: [transliteration_cleaners]",
            Cleaner::English,
            &["it reads it as `cleaner: english`", "spells out numbers"],
        ),
        // English is the strongest whatever the order.
        (
            "text_cleaners: [english_cleaners, multilingual_cleaners]",
            Cleaner::English,
            &["it reads it as `cleaner: unicode`"],
        ),
        // An explicit cleaner wins, with a warning.
        (
            "cleaner: unicode\n  text_cleaners: [english_cleaners]",
            Cleaner::Unicode,
            &["`data.cleaner: unicode` differs from what `data.text_cleaners` means (`english`"],
        ),
    ];
    for (data, cleaner, says) in cases {
        let loaded = from_str(&format!("data:\n  {data}\n"), Path::new("c.yaml")).unwrap();
        assert_eq!(loaded.config.data.cleaner, cleaner, "{data}");
        let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings.len(),
            usize::from(!says.is_empty()),
            "{data}: {warnings:?}"
        );
        for phrase in says {
            assert!(warnings[0].contains(phrase), "{data}: {}", warnings[0]);
        }
    }
}

#[test]
fn typed_values_of_every_kind() {
    let text = "\
data:
  fmax: null
  mel_scale: htk
  num_workers: 0
  pad_to_multiple_of: 8
  over_length: truncate
  dataset_path: ''
  cache_dir: /tmp/cache
  pitch_shift_range: [-1, 1.5]
training:
  scheduler_params: {warmup: 4000, kind: cosine, decay: [0.5, 1e-3]}
  visible_gpus: \"0,1\"
  mixed_precision: false
model:
  vocoder_resblock_dilation_sizes: [[1, 3], [5]]
";
    let loaded = from_str(text, Path::new("c.yaml")).unwrap();
    let c = &loaded.config;
    assert_eq!(c.data.fmax, None);
    assert!((c.data.fmax_hz() - 11025.0).abs() < 1e-9);
    assert_eq!(c.data.mel_scale, MelScale::Htk);
    assert_eq!(c.data.num_workers, Some(0));
    assert_eq!(c.data.prefetch_buffer_size_for(0), 2);
    assert_eq!(c.data.pad_to_multiple_of, Some(8));
    assert_eq!(c.data.over_length, OverLength::Truncate);
    assert_eq!(c.data.dataset_path, None);
    assert_eq!(c.data.cache_dir.as_deref(), Some(Path::new("/tmp/cache")));
    assert_eq!(c.data.pitch_shift_range, [-1.0, 1.5]);
    assert_eq!(c.training.scheduler_params.len(), 3);
    assert_eq!(c.training.visible_gpus.as_deref(), Some("0,1"));
    assert!(!c.mixed_precision());
    assert_eq!(
        c.model.vocoder_resblock_dilation_sizes,
        Some(vec![vec![1, 3], vec![5]])
    );
    // `1e-3` inside an opaque mapping is kept, without a PyYAML check (gpufeed does not
    // read it).
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn list_item_errors_name_the_item() {
    let err = from_str("model:\n  languages: [en, [fr]]\n", Path::new("c.yaml")).unwrap_err();
    assert_eq!(err.key(), Some("model.languages[1]"));
    assert_eq!((err.line(), err.column()), (Some(2), Some(19)));
}

#[test]
fn read_failures_and_non_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.yaml");
    let err = load(&missing).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(
        err.to_string().starts_with("cannot read config file `"),
        "{err}"
    );
    assert_eq!(err.line(), None);

    let latin1 = dir.path().join("latin1.yaml");
    fs_err::write(&latin1, b"data:\n  language: caf\xe9\n").unwrap();
    let err = load(&latin1).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::NotUtf8));
    assert_eq!((err.line(), err.column()), (Some(2), Some(16)));
}

#[test]
fn crlf_bom_and_unicode_positions() {
    let text = "\u{feff}data:\r\n  # é comment\r\n  batch_size: x\r\n";
    let err = from_str(text, Path::new("c.yaml")).unwrap_err();
    assert_eq!((err.line(), err.column()), (Some(3), Some(15)));
    let text = "data:\n  language: \"日本語\"\n  batch_size: 0\n";
    let err = from_str(text, Path::new("c.yaml")).unwrap_err();
    assert_eq!((err.line(), err.column()), (Some(3), Some(15)));
    let loaded = from_str("data:\n  language: \"日本語\"  # x\n", Path::new("c.yaml")).unwrap();
    let span = loaded.span_of("data.language").unwrap();
    assert_eq!(
        &loaded.source.text()[span.byte_start..span.byte_end],
        "\"日本語\""
    );
}

/// The default column of the key tables in the crate docs: every key of the schema is
/// listed under its section, and every default written as a YAML literal loads to the
/// schema's default.
#[test]
fn crate_docs_list_every_key_with_its_default() {
    let lib = include_str!("../src/lib.rs");
    let mut section = "";
    let mut documented: Vec<String> = Vec::new();
    let mut yaml = String::new();
    let mut current = String::new();
    for line in lib.lines() {
        let line = line.trim_start_matches("//!").trim();
        if let Some(heading) = line.strip_prefix("### `") {
            section = &heading[..heading.find('`').unwrap()];
            continue;
        }
        let cells: Vec<&str> = line.split(" | ").collect();
        if section.is_empty() || cells.len() < 4 || !cells[0].starts_with("| `") {
            continue;
        }
        let key = cells[0].trim_start_matches("| ").trim_matches('`');
        documented.push(format!("{section}.{key}"));
        let default = cells[2];
        if default.starts_with('`') && default.ends_with('`') {
            if current != section {
                yaml.push_str(section);
                yaml.push_str(":\n");
                current = section.to_owned();
            }
            yaml.push_str(&format!("  {key}: {}\n", default.trim_matches('`')));
        }
    }
    let mut known: Vec<String> = keys()
        .map(|k| format!("{}.{}", k.section, k.name))
        .collect();
    let mut sorted = documented.clone();
    sorted.sort();
    known.sort();
    assert_eq!(sorted, known);
    // Sections are repeated in the docs (data: audio, text, loader, MyXTTS): YAML would see
    // duplicate keys, so merge them by reading each block on its own.
    let config = Config::default();
    for block in yaml
        .split_inclusive('\n')
        .fold(Vec::<String>::new(), |mut acc, l| {
            if !l.starts_with(' ') {
                acc.push(String::new());
            }
            if let Some(last) = acc.last_mut() {
                last.push_str(l);
            }
            acc
        })
    {
        let loaded = from_str(&block, Path::new("docs.yaml")).unwrap();
        assert!(loaded.warnings.is_empty(), "{block}\n{:?}", loaded.warnings);
        let section = block.lines().next().unwrap().trim_end_matches(':');
        match section {
            "model" => assert_eq!(loaded.config.model, config.model),
            "training" => assert_eq!(loaded.config.training, config.training),
            _ => assert_eq!(loaded.config.data, config.data),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Arbitrary text never panics.
    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = check(&text, Path::new("fuzz.yaml"));
    }

    /// Text made of YAML's own punctuation and config words never panics either, and every
    /// error and warning points inside the text.
    #[test]
    fn never_panics_on_yaml_like_text(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("data:"), Just("model:"), Just("training:"), Just("\n"), Just("  "),
                Just(" "), Just("- "), Just(": "), Just("["), Just("]"), Just("{"), Just("}"),
                Just(","), Just("&a "), Just("*a"), Just("<<: "), Just("? "), Just("!!str "),
                Just("!!float "), Just("'"), Just("\""), Just("#c"), Just("---\n"), Just("|\n"),
                Just("batch_size"), Just("n_fft"), Just("fmax"), Just("1e-4"), Just("0"),
                Just("yes"), Just("~"), Just("é"), Just("\t"), Just("\r\n"), Just("010"),
                Just("mel_scale"), Just("htk"), Just("languages"), Just("-1"), Just(".inf"),
            ],
            0..40,
        )
    ) {
        let text: String = parts.concat();
        let lines = text.lines().count().max(1) + 1;
        match check(&text, Path::new("fuzz.yaml")) {
            Ok(loaded) => {
                for w in &loaded.warnings {
                    prop_assert!(w.line >= 1 && w.line <= lines, "{w}");
                    if let Some(edit) = &w.edit {
                        prop_assert!(text.get(edit.span.byte_start..edit.span.byte_end).is_some());
                    }
                }
                for e in loaded.source.entries() {
                    prop_assert!(text.get(e.value.byte_start..e.value.byte_end).is_some());
                }
            }
            Err(rejected) => {
                prop_assert!(!rejected.errors.is_empty());
                for e in &rejected.errors {
                    let line = e.line().unwrap();
                    prop_assert!(line >= 1 && line <= lines, "{e}");
                }
            }
        }
    }

    /// Any batch size written as a plain integer is read back, at its line.
    #[test]
    fn batch_size_round_trips(n in 1usize..1_000_000, pad in 0usize..4) {
        let text = format!("{}data:\n  batch_size: {n}\n", "\n".repeat(pad));
        let loaded = from_str(&text, Path::new("c.yaml")).unwrap();
        prop_assert_eq!(loaded.config.data.batch_size, n);
        prop_assert_eq!(loaded.span_of("data.batch_size").unwrap().line, pad + 2);
    }
}
