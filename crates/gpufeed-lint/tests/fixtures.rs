//! Every lint rule against its two committed fixtures: `fixtures/lint/RULE.bad.py` must
//! produce exactly the findings marked `# expect: RULE[, RULE]` on their lines, and
//! `RULE.good.py` must produce none. A rule without both fixtures fails here.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gpufeed_findings::{Origin, RULES};
use gpufeed_lint::{lint_file, lint_source};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lint")
        .join(name)
}

/// `(rule, line)` pairs marked with `# expect: a, b` in a fixture.
fn expected(text: &str) -> BTreeSet<(String, usize)> {
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, ids)) = line.split_once("# expect:") {
            for id in ids.split(',') {
                out.insert((id.trim().to_owned(), i + 1));
            }
        }
    }
    out
}

fn found(path: &Path) -> BTreeSet<(String, usize)> {
    let findings = lint_file(path);
    // A file named directly counts by its name, not by the `tests/` folder it is in.
    for f in &findings {
        assert!(
            !f.message.contains("not the training path"),
            "{}",
            f.message
        );
    }
    findings
        .into_iter()
        .map(|f| (f.id.to_owned(), f.line.unwrap_or(0)))
        .collect()
}

#[test]
fn every_lint_rule_has_a_failing_and_a_passing_fixture() {
    for rule in RULES.iter().filter(|r| r.origin == Origin::Lint) {
        if rule.id == "file-not-linted" {
            continue; // binary content: generated in `binary_and_non_utf8_files` below
        }
        let bad = fixture(&format!("{}.bad.py", rule.id));
        let good = fixture(&format!("{}.good.py", rule.id));
        let bad_text = fs_err::read_to_string(&bad).expect("bad fixture");
        // `gpufeed rules ID` shows these very files.
        let shown = gpufeed_lint::examples::example(rule.id)
            .unwrap_or_else(|| panic!("`{}` has no example for `gpufeed rules`", rule.id));
        assert_eq!(shown.bad, bad_text, "{}", rule.id);
        let want = expected(&bad_text);
        assert!(
            want.iter().any(|(id, _)| id == rule.id),
            "{}: the bad fixture expects no `{}`",
            bad.display(),
            rule.id
        );
        assert_eq!(found(&bad), want, "{}", bad.display());
        assert_eq!(found(&good), BTreeSet::new(), "{}", good.display());
    }
}

#[test]
fn binary_and_non_utf8_files() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("model.py");
    fs_err::write(&binary, [0x7f, b'E', b'L', b'F', 0, 1, 2]).unwrap();
    let f = lint_file(&binary);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].id, "file-not-linted");
    assert!(f[0].message.contains("binary"), "{}", f[0].message);
    assert_eq!((f[0].line, f[0].column), (None, None));

    let latin1 = dir.path().join("old.py");
    fs_err::write(&latin1, b"x = '\xe9'\n").unwrap();
    let f = lint_file(&latin1);
    assert_eq!(f[0].id, "file-not-linted");
    assert!(f[0].message.contains("UTF-8"), "{}", f[0].message);
}

#[test]
fn rule_docs_name_every_fixture() {
    // Fixtures of rules that do not exist would test nothing.
    for entry in fs_err::read_dir(fixture("")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let id = name
            .trim_end_matches(".bad.py")
            .trim_end_matches(".good.py");
        assert!(
            RULES.iter().any(|r| r.id == id),
            "fixture `{name}` names no rule"
        );
    }
}

#[test]
fn never_panics_on_odd_sources() {
    for src in [
        "",
        "\n\n",
        "(((((((((((",
        "def",
        "for x in y:\n\tloss.backward()\n        time.sleep(1)\n",
        "class A:\n    def __getitem__(self):\n        return self.__getitem__()\n",
        "def f(x): return f(x)\nds = tf.data.Dataset.range(1).map(f)\n",
        "\u{0}\u{1}",
        "x = '''unterminated",
        "@tf.function\n",
        "lambda: (yield)",
    ] {
        let _ = lint_source(src, Path::new("odd.py"));
    }
    // Classes whose bases cycle, a `collate_fn` that is its own class, deeply nested
    // periodic `if`s in a training loop.
    let cyclic = "class A(B):\n    pass\nclass B(A):\n    pass\n\
                  from torch.utils.data import DataLoader\n\
                  l = DataLoader(A(), num_workers=1, collate_fn=B())\n";
    let _ = lint_source(cyclic, Path::new("odd.py"));
    let mut deep = String::from("for b in loader:\n    loss.backward()\n");
    for i in 0..400 {
        deep.push_str(&" ".repeat(4 * (i + 1)));
        deep.push_str("if i % 2:\n");
        deep.push_str(&" ".repeat(4 * (i + 2)));
        deep.push_str("pass\n");
        deep.push_str(&" ".repeat(4 * (i + 1)));
        deep.push_str("else:\n");
    }
    deep.push_str(&" ".repeat(4 * 401));
    deep.push_str("print(loss.item())\n");
    let _ = lint_source(&deep, Path::new("deep.py"));
}
