//! `gpufeed validate` and `gpufeed lint` end to end, through the built binary.
//!
//! JSON output is deserialised into the contract's `findings` document
//! (gpufeed-contract), whose types reject unknown fields. Fixtures are under
//! `tests/fixtures/checks/` (committed, small); files that must be large or binary are
//! generated in a temporary folder.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::Run;
use gpufeed_contract::{Finding, Severity};

fn gpufeed(args: &[&str]) -> Run {
    common::gpufeed().args(args).output().unwrap().into()
}

/// Runs with `--format json`; the whole stdout must be exactly one findings document.
fn json(args: &[&str]) -> (Option<i32>, Vec<Finding>) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let run = gpufeed(&all);
    let findings = common::findings(&run);
    (run.code, findings)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/checks")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ids(findings: &[Finding]) -> BTreeSet<(String, Option<usize>)> {
    findings.iter().map(|f| (f.id.clone(), f.line)).collect()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Exit 2, nothing on stdout, one `error:` line on stderr naming `needle`.
fn bad_input(args: &[&str], needle: &str) {
    let run = gpufeed(args);
    assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{}",
        lines[0]
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

// ---- validate ----

#[test]
fn validate_myxtts_config() {
    let path = fixture("myxtts_config.yaml");
    let (code, findings) = json(&["validate", s(&path)]);
    let mut want: BTreeSet<(String, Option<usize>)> = [
        ("config-float-is-string-for-pyyaml", 15),
        ("config-heads-do-not-divide", 4),
        ("config-float-is-string-for-pyyaml", 32),
        ("myxtts-rejects-key", 46),
        ("text-cap-mismatch", 53),
        ("myxtts-unread-key", 56),
        ("myxtts-unread-key", 60),
        // Keys whose behaviour gpufeed's cache does not have: normalize_audio,
        // trim_silence, train_split.
        ("config-unhonoured-key", 44),
        ("config-unhonoured-key", 45),
        ("config-unhonoured-key", 49),
    ]
    .into_iter()
    .map(|(id, line)| (id.to_owned(), Some(line)))
    .collect();
    // MyXTTS phonemises by default (`use_phonemes` not written): an info without a line.
    want.insert(("config-unhonoured-key".to_owned(), None));
    if cores() < 16 {
        want.insert(("num-workers-above-cores".to_owned(), Some(52)));
    }
    assert_eq!(ids(&findings), want, "{findings:#?}");
    // The load-bearing error of the shipped config: padded_batch fails on long texts.
    assert_eq!(code, Some(1));
    let cap = findings
        .iter()
        .find(|f| f.id == "text-cap-mismatch")
        .unwrap();
    assert_eq!(cap.severity, Severity::Error);
    assert_eq!(cap.column, Some(20));
    assert_eq!(cap.path.as_deref(), Some(s(&path)));
    assert_eq!(cap.fix, "data:\n  max_text_tokens: 200");
    assert!(
        cap.evidence
            .contains("`data.max_text_tokens` not set (default: 1024)")
    );
    let lr = findings.iter().find(|f| f.line == Some(15)).unwrap();
    assert_eq!((lr.line, lr.column), (Some(15), Some(18)));
    assert_eq!(lr.fix, "learning_rate: 1.0e-4");
}

#[test]
fn validate_text_output() {
    let path = fixture("myxtts_config.yaml");
    let run = gpufeed(&["validate", s(&path)]);
    assert_eq!(run.code, Some(1));
    let first = run.stdout.lines().find(|l| l.contains(":15:18:")).unwrap();
    assert_eq!(
        first,
        format!(
            "{}:15:18: warning[config-float-is-string-for-pyyaml] `training.learning_rate: 1e-4` \
             is read as the string \"1e-4\" by PyYAML (YAML 1.1 floats need a dot and a signed \
             exponent), so the trainer gets a string; gpufeed reads 1e-4; write `1.0e-4`",
            s(&path)
        )
    );
    assert!(run.stdout.contains(
        "\n  evidence: line 15: `learning_rate: 1e-4        # PyYAML reads this as a string`\n"
    ));
    assert!(
        run.stdout
            .contains("\n  fix (--fix applies it): learning_rate: 1.0e-4\n")
    );
    assert!(
        run.stdout
            .contains("\n  fix:\n    data:\n      max_text_tokens: 200\n")
    );
    assert!(run.stdout.lines().last().unwrap().starts_with("1 error, "));
}

#[test]
fn validate_clean_config() {
    let (code, findings) = json(&["validate", s(&fixture("clean.yaml"))]);
    assert_eq!((code, findings.len()), (Some(0), 0), "{findings:#?}");
    let run = gpufeed(&["validate", s(&fixture("clean.yaml"))]);
    assert_eq!(run.stdout, "no findings\n");
}

#[test]
fn fix_edits_values_in_place_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.yaml");
    let original = fs_err::read_to_string(fixture("myxtts_config.yaml")).unwrap();
    fs_err::write(&path, &original).unwrap();

    let run = gpufeed(&["validate", s(&path), "--fix"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let fixed = fs_err::read_to_string(&path).unwrap();
    // Byte for byte the original, except the two values.
    let expected = original
        .replace(
            "learning_rate: 1e-4        #",
            "learning_rate: 1.0e-4        #",
        )
        .replace("min_learning_rate: 1e-6", "min_learning_rate: 1.0e-6");
    assert_eq!(fixed, expected);
    let backup = tmp.path().join("config.yaml.bak");
    assert_eq!(fs_err::read_to_string(&backup).unwrap(), original);
    assert!(run.stdout.contains("fixed 2 finding(s)"), "{}", run.stdout);
    // The report is what remains: the fixed warnings are gone.
    assert!(!run.stdout.contains("config-float-is-string-for-pyyaml"));
    assert!(run.stdout.contains("text-cap-mismatch"));

    // Twice: nothing changes, the backup is not touched.
    fs_err::write(&backup, "sentinel").unwrap();
    let again = gpufeed(&["validate", s(&path), "--fix"]);
    assert_eq!(again.code, Some(1));
    assert!(again.stdout.contains("nothing to fix"), "{}", again.stdout);
    assert_eq!(fs_err::read_to_string(&path).unwrap(), expected);
    assert_eq!(fs_err::read_to_string(&backup).unwrap(), "sentinel");
    // No temporary files are left behind.
    let names: BTreeSet<String> = fs_err::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["config.yaml", "config.yaml.bak"].map(String::from).into()
    );
}

#[test]
fn fix_json_reports_the_remaining_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("c.yaml");
    fs_err::write(&path, "data:\n  num_worker: 1  # typo\n").unwrap();
    let (code, findings) = json(&["validate", s(&path), "--fix"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "data:\n  num_workers: 1  # typo\n"
    );
    assert!(
        findings.iter().all(|f| f.id != "config-unknown-key"),
        "{findings:#?}"
    );
}

/// Without `--fix`, each typo key's fix says what `--fix` would do: rename it when the key
/// it is close to takes its value, and not (with the reason) when that key refuses it.
#[test]
fn validate_says_which_fixes_fix_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("c.yaml");
    let text = "data:\n  num_worker: 2   # typo\n  shuffle_buffer_multiplie: two\n";
    fs_err::write(&path, text).unwrap();
    let run = gpufeed(&["validate", s(&path)]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let name = s(&path);
    assert!(
        run.stdout.contains(&format!(
            "{name}:2:3: warning[config-unknown-key] unknown key `data.num_worker`; did you \
             mean `num_workers`?\n  evidence: line 2: `num_worker: 2   # typo`\n  \
             fix (--fix applies it): rename `num_worker` to `num_workers`\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "\n  fix: rename `shuffle_buffer_multiplie` to `shuffle_buffer_multiplier`\n  \
             --fix does not apply it: renamed to `shuffle_buffer_multiplier`, the config would \
             have a new error: `data.shuffle_buffer_multiplier` must be a non-negative integer, \
             found `two`; correct the value, then rename the key\n"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.matches("--fix applies it").count(),
        1,
        "{}",
        run.stdout
    );
    // And `--fix` does just that.
    let fixed = gpufeed(&["validate", s(&path), "--fix"]);
    assert_eq!(fixed.code, Some(0), "{}", fixed.stderr);
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "data:\n  num_workers: 2   # typo\n  shuffle_buffer_multiplie: two\n"
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("c.yaml");
    let text = "# keep me\ndata:\n  language: no   # Norwegian\ntraining:\n  learning_rate: 1e-4\n";
    fs_err::write(&path, text).unwrap();
    let run = gpufeed(&["validate", s(&path), "--fix", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // An absolute path is written as is (`patch -p0`); a relative one gets git's `a/`, `b/`.
    let name = s(&path);
    assert_eq!(
        run.stdout,
        format!(
            "--- {name}\n+++ {name}\n@@ -1,5 +1,5 @@\n # keep me\n data:\n-  language: no   # \
             Norwegian\n+  language: \"no\"   # Norwegian\n training:\n-  learning_rate: 1e-4\n+  \
             learning_rate: 1.0e-4\n"
        )
    );
    assert_eq!(fs_err::read_to_string(&path).unwrap(), text);
    assert!(!tmp.path().join("c.yaml.bak").exists());
    // `--dry-run` alone means the same.
    let alone = gpufeed(&["validate", s(&path), "--dry-run"]);
    assert_eq!((alone.code, &alone.stdout), (Some(0), &run.stdout));
    assert_eq!(fs_err::read_to_string(&path).unwrap(), text);
    // A diff is not JSON: asking for both is a usage error.
    bad_input(
        &["validate", s(&path), "--dry-run", "--format", "json"],
        "--dry-run",
    );
}

#[test]
fn fix_follows_a_symbolic_link() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("real.yaml");
    let link = tmp.path().join("link.yaml");
    fs_err::write(&target, "training:\n  learning_rate: 1e-4\n").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = gpufeed(&["validate", s(&link), "--fix"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs_err::read_to_string(&target).unwrap(),
        "training:\n  learning_rate: 1.0e-4\n"
    );
}

#[test]
fn a_file_that_does_not_parse_is_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("c.yaml");
    let text = "training:\n  learning_rate: 1e-4\ndata: [1, 2\n";
    fs_err::write(&path, text).unwrap();
    let run = gpufeed(&["validate", s(&path), "--fix"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("does not parse"), "{}", run.stderr);
    assert!(
        run.stdout.contains("error[config-syntax]"),
        "{}",
        run.stdout
    );
    assert_eq!(fs_err::read_to_string(&path).unwrap(), text);
    assert!(!tmp.path().join("c.yaml.bak").exists());
}

#[test]
fn validate_bad_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    bad_input(&["validate", s(&dir.join("missing.yaml"))], "missing.yaml");
    bad_input(&["validate", s(dir)], "is a folder");

    let cases: [(&str, &[u8], &str, Option<usize>); 5] = [
        ("list.yaml", b"- a\n- b\n", "config-not-a-mapping", Some(1)),
        (
            "dup.yaml",
            b"data:\n  batch_size: 8\n  batch_size: 16\n",
            "config-duplicate-key",
            Some(3),
        ),
        (
            "notyaml.yaml",
            b"data: {batch_size: [1, 2\n",
            "config-syntax",
            Some(2),
        ),
        (
            "binary.yaml",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            "config-not-utf8",
            Some(1),
        ),
        (
            "two.yaml",
            b"data: {}\n---\ndata: {}\n",
            "config-multiple-documents",
            Some(2),
        ),
    ];
    for (name, bytes, id, line) in cases {
        let path = dir.join(name);
        fs_err::write(&path, bytes).unwrap();
        let (code, findings) = json(&["validate", s(&path), "--fix"]);
        assert_eq!(code, Some(1), "{name}");
        assert_eq!(findings[0].id, id, "{name}: {findings:#?}");
        assert_eq!(findings[0].line, line, "{name}");
        assert_eq!(fs_err::read(&path).unwrap(), bytes, "{name} was modified");
    }

    // 50 MB: refused before parsing, and not modified by --fix.
    let big = dir.join("big.yaml");
    let file = fs_err::File::create(&big).unwrap();
    file.set_len(50 * 1024 * 1024).unwrap();
    let (code, findings) = json(&["validate", s(&big), "--fix"]);
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].id, "config-too-large");
    assert_eq!((findings[0].line, findings[0].column), (None, None));
    assert_eq!(fs_err::metadata(&big).unwrap().len(), 50 * 1024 * 1024);
    assert!(!dir.join("big.yaml.bak").exists());
}

// ---- lint ----

#[test]
fn lint_walks_a_project() {
    let project = fixture("project");
    let (code, findings) = json(&["lint", s(&project)]);
    assert_eq!(code, Some(0), "warnings only: {findings:#?}");
    let got: BTreeSet<(String, String, usize)> = findings
        .iter()
        .map(|f| {
            let path = f.path.clone().unwrap();
            let rel = path
                .strip_prefix(s(&project))
                .unwrap()
                .trim_start_matches('/')
                .to_owned();
            (rel, f.id.clone(), f.line.unwrap())
        })
        .collect();
    let want: BTreeSet<(String, String, usize)> = [
        ("data/pipeline.py", "decode-per-item", 9),
        ("data/pipeline.py", "decode-per-item", 10),
        ("train.py", "torch-loader-no-workers", 10),
        // The loader's dataset decodes per item (data/pipeline.py) with no workers.
        ("train.py", "decode-per-item-few-workers", 10),
        ("train.py", "torch-loader-no-pin-memory", 10),
        ("train.py", "torch-data-parallel", 11),
        ("train.py", "host-sync-in-loop", 18),
    ]
    .into_iter()
    .map(|(p, id, l)| (p.to_owned(), id.to_owned(), l))
    .collect();
    // `.venv/` and `build/` are skipped, `notes/readme.txt` is not Python, and the
    // `time.sleep` on line 19 is silenced by its `# gpufeed: ignore[sleep-in-loop]`.
    assert_eq!(got, want);
    let sync = findings
        .iter()
        .find(|f| f.id == "host-sync-in-loop")
        .unwrap();
    assert_eq!(sync.column, Some(15));
    assert!(
        sync.evidence
            .contains("in the training loop at line 14 (it calls `loss.backward()`)"),
        "{}",
        sync.evidence
    );

    let run = gpufeed(&["lint", s(&project)]);
    assert!(
        run.stdout
            .ends_with("0 errors, 7 warnings, 0 infos\nlinted 2 files\n"),
        "{}",
        run.stdout
    );
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "{}:9:18: warning[decode-per-item] `librosa.load`",
            s(&project.join("data/pipeline.py"))
        )),
        "{first}"
    );
}

#[test]
fn lint_syntax_errors_and_the_rest() {
    let path = fixture("broken.py");
    let (code, findings) = json(&["lint", s(&path)]);
    assert_eq!(code, Some(1));
    let got = ids(&findings);
    let want: BTreeSet<_> = [("syntax-error", 3), ("sleep-in-loop", 8)]
        .into_iter()
        .map(|(id, l)| (id.to_owned(), Some(l)))
        .collect();
    assert_eq!(got, want, "{findings:#?}");
    let syntax = findings.iter().find(|f| f.id == "syntax-error").unwrap();
    assert_eq!(
        syntax.message.split(';').next().unwrap(),
        "syntax error: missing `)`"
    );
}

#[test]
fn lint_bad_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    bad_input(&["lint", s(&tmp.path().join("nope.py"))], "nope.py");
    // A missing path among good ones: nothing is linted.
    bad_input(
        &["lint", s(&fixture("project")), s(&tmp.path().join("gone"))],
        "gone",
    );

    let binary = tmp.path().join("weights.bin");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    fs_err::write(&binary, &bytes).unwrap();
    let (code, findings) = json(&["lint", s(&binary)]);
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].id, "file-not-linted");
    assert!(
        findings[0].message.contains("binary"),
        "{}",
        findings[0].message
    );
    assert_eq!(fs_err::read(&binary).unwrap(), bytes);

    // An empty folder: nothing to lint is not an error.
    let empty = tmp.path().join("empty");
    fs_err::create_dir(&empty).unwrap();
    let run = gpufeed(&["lint", s(&empty)]);
    assert_eq!(run.code, Some(0));
    assert!(run.stderr.contains("no Python files"), "{}", run.stderr);
    assert_eq!(run.stdout, "no findings\nlinted 0 files\n");
}

#[test]
fn lint_never_modifies_files() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.py");
    let text = "import time\nfor b in l:\n    loss.backward()\n    time.sleep(1)\n";
    fs_err::write(&path, text).unwrap();
    let run = gpufeed(&["lint", s(&path)]);
    assert_eq!(run.code, Some(0));
    assert_eq!(fs_err::read_to_string(&path).unwrap(), text);
    let names: Vec<_> = fs_err::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

// ---- rules ----

/// `gpufeed rules` lists every rule of the registry once; `gpufeed rules ID` explains one
/// with its fix and, for a lint rule, the fixture that fires it and the one that does not;
/// a mistyped id is one line naming the nearest rule (issue 44, point 8).
#[test]
fn rules_are_listed_and_explained() {
    let run = gpufeed(&["rules"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for r in gpufeed_findings::RULES {
        let lines = run
            .stdout
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(r.id))
            .count();
        assert_eq!(lines, 1, "{}: {}", r.id, run.stdout);
    }
    let run = gpufeed(&["rules", "host-sync-in-loop"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let rule = gpufeed_findings::rule_info("host-sync-in-loop").unwrap();
    assert!(run.stdout.contains(rule.fix), "{}", run.stdout);
    assert!(
        run.stdout.contains("# expect: host-sync-in-loop"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("not on:"), "{}", run.stdout);
    let run = gpufeed(&["rules", "storage-network-fs"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    bad_input(
        &["rules", "host-sync-in-lop"],
        "did you mean `host-sync-in-loop`",
    );
}
