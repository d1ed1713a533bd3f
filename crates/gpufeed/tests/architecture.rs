//! docs/ARCHITECTURE.md's crate table is the crate graph: each row's "depends on" column
//! must be the crate's normal dependencies among the workspace's crates, as `cargo
//! metadata` gives them. A crate added, or a dependency added or removed, without its
//! row fails here.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn documented(text: &str) -> Graph {
    text.lines()
        .filter(|l| l.starts_with("| `gpufeed"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells[1].trim_matches('`').to_owned();
            let deps = cells[2]
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
                .collect();
            (name, deps)
        })
        .collect()
}

/// `cargo ARGS` in the workspace root, offline; its stdout.
fn cargo(root: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .arg("--offline")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn actual(root: &Path) -> Graph {
    let out = cargo(root, &["metadata", "--format-version", "1", "--no-deps"]);
    let meta: serde_json::Value = serde_json::from_str(&out).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|n| n.starts_with("gpufeed"))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn the_crate_table_is_the_crate_graph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = fs_err::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let documented = documented(&doc);
    let actual = actual(&root);
    assert_eq!(
        documented, actual,
        "docs/ARCHITECTURE.md's crate table against cargo"
    );
    // Nothing depends on the binary crate: the wheel ships the binary itself.
    let users: Vec<&String> = actual
        .iter()
        .filter(|(_, deps)| deps.contains("gpufeed"))
        .map(|(name, _)| name)
        .collect();
    assert!(users.is_empty(), "{users:?} depend on the binary crate");
}

/// The feature crates own their settings types and know nothing of the YAML; gpufeed-config
/// reads the YAML onto them. The table test would pass if the types moved back and the
/// table were edited to match; this one holds the direction.
#[test]
fn the_feature_crates_do_not_depend_on_the_config_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let actual = actual(&root);
    for name in ["gpufeed-audio", "gpufeed-text"] {
        let deps = &actual[name];
        assert!(
            !deps.contains("gpufeed-config"),
            "{name} depends on gpufeed-config ({deps:?}): its settings types belong to it, \
             and gpufeed-config reads the YAML onto them"
        );
    }
}

/// The Python extension links library crates only (issue 40): the CLI's own crates (the
/// argument parser, the terminal UI, the signal handling) are not compiled into it, since
/// the wheel ships the `gpufeed` binary as its command.
#[test]
fn the_python_extension_links_no_cli_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tree = cargo(
        &root,
        &[
            "tree",
            "--package",
            "gpufeed-python",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ],
    );
    let names: BTreeSet<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains("pyo3"), "cargo tree said: {tree}");
    for cli in ["gpufeed", "clap", "ratatui", "signal-hook", "crossterm"] {
        assert!(
            !names.contains(cli),
            "gpufeed-python links `{cli}`: the extension links library crates only, \
             and the wheel ships the binary as the `gpufeed` command"
        );
    }
}

/// The binary parses, resolves, calls and prints (issue 40): the work lives in the library
/// crates (gpufeed-app, gpufeed-live, gpufeed-analysis, ...), so that Python and other
/// callers reach it too. Its source stays under 2,000 lines outside `#[cfg(test)]`.
#[test]
fn the_binary_crate_only_parses_resolves_calls_and_prints() {
    fn lines(dir: &Path, total: &mut usize, per_file: &mut Vec<(usize, String)>) {
        for entry in fs_err::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                lines(&path, total, per_file);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs_err::read_to_string(&path).unwrap();
                let n = text
                    .lines()
                    .take_while(|l| l.trim() != "#[cfg(test)]")
                    .count();
                *total += n;
                per_file.push((n, path.display().to_string()));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (mut total, mut per_file) = (0, Vec::new());
    lines(&src, &mut total, &mut per_file);
    per_file.sort();
    assert!(
        total < 2000,
        "crates/gpufeed/src has {total} lines outside tests (at most 1,999): move the work \
         into a library crate; largest: {:?}",
        &per_file[per_file.len().saturating_sub(5)..]
    );
}

/// No function outside tests is longer than 150 lines (issue 40): each reads as one step of
/// its work. Counted from its `fn` line to its closing brace, in every crate's `src/` up to
/// the file's `#[cfg(test)]`, with strings, character literals and `//` comments left out
/// of the brace count.
#[test]
fn no_function_is_longer_than_150_lines() {
    /// The braces of one line of code: its strings, character literals and comment removed.
    fn braces(line: &str) -> (usize, usize, bool) {
        let (mut open, mut close, mut semicolon) = (0, 0, false);
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let mut in_string = false;
        while i < chars.len() {
            let c = chars[i];
            if in_string {
                match c {
                    '\\' => i += 1,
                    '"' => in_string = false,
                    _ => {}
                }
            } else {
                match c {
                    '"' => in_string = true,
                    '/' if chars.get(i + 1) == Some(&'/') => break,
                    // `'{'`, `'\''`: a character literal; `'t` alone is a lifetime.
                    '\'' if chars.get(i + 2) == Some(&'\'') => i += 2,
                    '\'' if chars.get(i + 1) == Some(&'\\') && chars.get(i + 3) == Some(&'\'') => {
                        i += 3;
                    }
                    '{' => open += 1,
                    '}' => close += 1,
                    ';' => semicolon = true,
                    _ => {}
                }
            }
            i += 1;
        }
        (open, close, semicolon)
    }
    /// The name of the function a line starts, if it starts one.
    fn starts_fn(line: &str) -> Option<&str> {
        let mut rest = line.trim_start();
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let name = rest.strip_prefix("fn ")?;
        name.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
    }
    fn long_functions(dir: &Path, out: &mut Vec<(usize, String)>) {
        for entry in fs_err::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                long_functions(&path, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = fs_err::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .collect();
            for (start, line) in lines.iter().enumerate() {
                let Some(name) = starts_fn(line) else {
                    continue;
                };
                let mut depth = 0usize;
                let mut opened = false;
                for (k, l) in lines.iter().enumerate().skip(start) {
                    let (open, close, semicolon) = braces(l);
                    if !opened && open == 0 && semicolon {
                        break; // a declaration without a body
                    }
                    opened |= open > 0;
                    depth = (depth + open).saturating_sub(close);
                    if opened && depth == 0 {
                        let length = k - start + 1;
                        if length > 150 {
                            out.push((length, format!("{}:{} {name}", path.display(), start + 1)));
                        }
                        break;
                    }
                }
            }
        }
    }
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    for entry in fs_err::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            long_functions(&src, &mut long);
        }
    }
    long.sort();
    assert!(
        long.is_empty(),
        "functions over 150 lines (split them into steps of their own): {long:?}"
    );
}
