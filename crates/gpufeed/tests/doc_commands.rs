//! Every command block of README.md and `docs/*.md` is run, so that none goes stale.
//!
//! # The convention
//!
//! A command block is a fenced block in ```` ```console ````: each line that starts with
//! `$ ` is a command, and the lines after it, up to the next `$ ` line, are its output as a
//! terminal shows it (standard output and standard error together). The test runs every
//! command with `bash`, `gpufeed` being the binary under test, in a scratch folder that
//! holds a link to each top-level entry of the repository (`examples/`, `crates/`, ...) and
//! `../shared` beside it, as in CI: the commands read the repository's files by their
//! relative paths, and what they write stays in the scratch folder. The commands of one
//! block run in turn in one folder, so a block may make a dataset and then read it.
//!
//! Each command must exit 0, and its output must match the lines shown:
//!
//! - lines are compared after trailing spaces are cut, and trailing empty lines are
//!   dropped on both sides;
//! - a line that is `...` alone (indented or not) stands for any number of lines, none
//!   included: a block may
//!   show the start of a long report, or skip its middle. Without such a line the output
//!   must be the lines shown, all of them;
//! - `...` inside a line stands for any text on that line (a long line shortened);
//! - numbers must be equal, except in the lines the block's marker names: there each number
//!   shown matches any number. Use it only for figures that change from run to run or from
//!   machine to machine (load, free memory, read speed, samples per second); the words
//!   around them are still compared, so a renamed field or a changed verdict fails.
//!
//! # Markers
//!
//! An HTML comment on the line just before the fence, `<!-- doc-test: OPTION; OPTION -->`:
//!
//! - `not run: REASON`, last: the block is shown, not run, because it cannot run here; the
//!   reason says why (a GPU, a running PID, the network, minutes of CPU, your own files);
//! - `exit N`: the block's last command exits with N, not 0 (the others still exit 0);
//! - `numbers vary: TEXT | TEXT`: in the shown lines that contain one of the TEXTs, numbers
//!   match any number;
//! - `schema: NAME`, on a ```` ```json ```` block: the block is a `NAME` document
//!   (`docs/schemas/NAME.json`, what `gpufeed schema NAME` prints).
//!
//! A ```` ```json ```` block is an example document: it must name its schema, or be marked
//! `not run` with the reason. It must parse, and every key and value shown must fit the
//! schema where it stands: a key the document does not have, a value of another type or
//! outside its enum fails. It may be abbreviated: `"..."` as a value, an array item or a
//! key stands for what was left out, and keys may be omitted.
//!
//! A block in ```` ```sh ````, ```` ```bash ```` or ```` ```shell ```` has commands and no
//! output, so the test cannot check it: it must be marked `not run` with its reason. A block
//! of another kind with a line starting with `$ ` (a command shown as ```` ```text ````) is
//! refused: it must be a ```` ```console ```` block. Python blocks are run by
//! `python/tests/test_readme.py` where they carry a `readme-test: NAME` marker.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// One fenced block of a page.
#[derive(Debug)]
struct Block {
    page: String,
    /// 1-based line of the opening fence.
    line: usize,
    lang: String,
    marker: Option<String>,
    body: Vec<String>,
}

fn blocks(page: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(lang) = l.strip_prefix("```") {
            let start = i;
            let marker = start
                .checked_sub(1)
                .map(|p| lines[p].trim())
                .and_then(|p| p.strip_prefix("<!-- doc-test:"))
                .and_then(|p| p.strip_suffix("-->"))
                .map(|m| m.trim().to_string());
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                body.push(lines[i].to_string());
                i += 1;
            }
            out.push(Block {
                page: page.to_string(),
                line: start + 1,
                lang: lang.trim().to_string(),
                marker,
                body,
            });
        }
        i += 1;
    }
    out
}

#[derive(Debug, Default)]
struct Options {
    not_run: Option<String>,
    exit: i32,
    vary: Vec<String>,
    schema: Option<String>,
}

fn options(marker: Option<&str>) -> Result<Options, String> {
    let mut o = Options::default();
    let Some(marker) = marker else { return Ok(o) };
    // `not run:` takes the rest of the marker: a reason may hold `;`.
    let (marker, reason) = match marker.split_once("not run:") {
        Some((before, reason)) => (before, Some(reason.trim())),
        None => (marker, None),
    };
    if let Some(reason) = reason {
        if reason.is_empty() {
            return Err("`not run:` without a reason".into());
        }
        o.not_run = Some(reason.to_string());
    }
    for opt in marker.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some(code) = opt.strip_prefix("exit ") {
            o.exit = code
                .trim()
                .parse()
                .map_err(|_| format!("bad exit code `{code}`"))?;
        } else if let Some(texts) = opt.strip_prefix("numbers vary:") {
            o.vary = texts.split('|').map(|t| t.trim().to_string()).collect();
            if o.vary.iter().any(String::is_empty) {
                return Err("`numbers vary:` with an empty text".into());
            }
        } else if let Some(name) = opt.strip_prefix("schema:") {
            o.schema = Some(name.trim().to_string());
        } else {
            return Err(format!("unknown option `{opt}`"));
        }
    }
    Ok(o)
}

/// The commands of a console block, each with the output lines shown after it.
fn commands(body: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in body {
        if let Some(cmd) = l.strip_prefix("$ ") {
            out.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(l.clone());
        }
    }
    out
}

/// A piece of a shown line.
#[derive(Debug)]
enum Piece {
    Text(char),
    AnyText,
    Number,
}

fn is_number_start(s: &[char], i: usize) -> bool {
    s[i].is_ascii_digit() && (i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == '_'))
}

/// The length of the number at `s[i..]`: digits, with `.` between digits.
fn number_len(s: &[char], i: usize) -> usize {
    let mut j = i;
    while j < s.len() {
        if s[j].is_ascii_digit() || (s[j] == '.' && j + 1 < s.len() && s[j + 1].is_ascii_digit()) {
            j += 1;
        } else {
            break;
        }
    }
    j - i
}

fn pieces(shown: &str, vary: bool) -> Vec<Piece> {
    let s: Vec<char> = shown.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(&['.', '.', '.']) {
            out.push(Piece::AnyText);
            i += 3;
        } else if vary && is_number_start(&s, i) {
            out.push(Piece::Number);
            i += number_len(&s, i);
        } else {
            out.push(Piece::Text(s[i]));
            i += 1;
        }
    }
    out
}

fn match_pieces(p: &[Piece], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(Piece::Text(c)) => s.first() == Some(c) && match_pieces(&p[1..], &s[1..]),
        Some(Piece::AnyText) => (0..=s.len()).any(|k| match_pieces(&p[1..], &s[k..])),
        Some(Piece::Number) => {
            !s.is_empty() && is_number_start(s, 0) && match_pieces(&p[1..], &s[number_len(s, 0)..])
        }
    }
}

fn line_matches(shown: &str, actual: &str, vary: &[String]) -> bool {
    let v = vary.iter().any(|t| shown.contains(t.as_str()));
    let actual: Vec<char> = actual.chars().collect();
    match_pieces(&pieces(shown, v), &actual)
}

fn segment_at(seg: &[String], actual: &[String], at: usize, vary: &[String]) -> bool {
    at + seg.len() <= actual.len()
        && seg
            .iter()
            .zip(&actual[at..])
            .all(|(s, a)| line_matches(s, a, vary))
}

/// Whether `actual` matches the `shown` lines, `...` lines standing for any lines.
fn output_matches(shown: &[String], actual: &[String], vary: &[String]) -> bool {
    let segments: Vec<&[String]> = shown.split(|l| l.trim() == "...").collect();
    if segments.len() == 1 {
        return shown.len() == actual.len() && segment_at(shown, actual, 0, vary);
    }
    let (first, rest) = segments.split_first().unwrap();
    let (last, middle) = rest.split_last().unwrap();
    if !segment_at(first, actual, 0, vary) {
        return false;
    }
    let mut at = first.len();
    for seg in middle {
        match (at..=actual.len()).find(|&k| segment_at(seg, actual, k, vary)) {
            Some(k) => at = k + seg.len(),
            None => return false,
        }
    }
    actual.len() >= at + last.len() && segment_at(last, actual, actual.len() - last.len(), vary)
}

fn trimmed(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = lines
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    while v.last().is_some_and(String::is_empty) {
        v.pop();
    }
    v
}

/// A scratch folder `D/repo` with a link to each top-level entry of the repository, and
/// `D/shared` linked to the repository's `../shared`.
fn scratch(root: &Path) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fs_err::create_dir(&repo).unwrap();
    for e in fs_err::read_dir(root).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == ".git" || name == "target" {
            continue;
        }
        std::os::unix::fs::symlink(e.path(), repo.join(&name)).unwrap();
    }
    let shared = root.join("../shared");
    if shared.exists() {
        std::os::unix::fs::symlink(&shared, d.path().join("shared")).unwrap();
    }
    d
}

/// Runs `cmd` in `dir` with `gpufeed` the binary under test; its exit code and output.
fn run(cmd: &str, dir: &Path, cache: &Path) -> (i32, Vec<String>) {
    let bin = Path::new(env!("CARGO_BIN_EXE_gpufeed"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{cmd}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", cache)
        .env("NO_COLOR", "1")
        .env_remove("RANK")
        .env_remove("WORLD_SIZE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("`{cmd}` ran for more than 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader.join().unwrap();
    (
        status.code().unwrap_or(-1),
        trimmed(out.lines().map(str::to_string)),
    )
}

fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = fs_err::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// What is wrong with one block, if anything.
fn check(block: &Block, root: &Path, cache: &Path) -> Result<(), String> {
    let opts = options(block.marker.as_deref())?;
    let shell = matches!(block.lang.as_str(), "sh" | "bash" | "shell" | "zsh");
    let console = block.lang == "console";
    if block.lang == "json" && opts.not_run.is_none() {
        return check_json(block, opts.schema.as_deref(), root);
    }
    if !console && !shell {
        if block.body.iter().any(|l| l.starts_with("$ ")) {
            return Err(format!(
                "a ```{} block shows a command (`$ `): make it a ```console block",
                block.lang
            ));
        }
        return Ok(());
    }
    if opts.not_run.is_some() {
        return Ok(());
    }
    if shell {
        return Err(format!(
            "a ```{} block cannot be checked (no output): make it a ```console block, or mark \
             it `<!-- doc-test: not run: REASON -->`",
            block.lang
        ));
    }
    let cmds = commands(&block.body);
    if cmds.is_empty() {
        return Err("a ```console block without a `$ ` command".into());
    }
    let dir = scratch(root);
    let cwd = dir.path().join("repo");
    let last = cmds.len() - 1;
    for (i, (cmd, shown)) in cmds.into_iter().enumerate() {
        let (code, actual) = run(&cmd, &cwd, cache);
        let expected = if i == last { opts.exit } else { 0 };
        if code != expected {
            return Err(format!(
                "`{cmd}` exited {code}, not {expected}; its output:\n{}",
                actual.join("\n")
            ));
        }
        let shown = trimmed(shown);
        if !output_matches(&shown, &actual, &opts.vary) {
            return Err(format!(
                "`{cmd}`: the output does not match the block.\n--- shown:\n{}\n--- actual:\n{}",
                shown.join("\n"),
                actual.join("\n")
            ));
        }
    }
    Ok(())
}

/// A ```json block against the schema it names.
fn check_json(block: &Block, schema: Option<&str>, root: &Path) -> Result<(), String> {
    let Some(name) = schema else {
        return Err(
            "a ```json block must name its document: `<!-- doc-test: schema: NAME -->` \
             (`gpufeed schema` lists them), or `not run: REASON`"
                .into(),
        );
    };
    let path = root.join("docs/schemas").join(format!("{name}.json"));
    let text = fs_err::read_to_string(&path)
        .map_err(|e| format!("schema `{name}`: {e} (`gpufeed schema` lists the names)"))?;
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let shown: serde_json::Value = serde_json::from_str(&block.body.join("\n"))
        .map_err(|e| format!("the block is not JSON: {e}"))?;
    let mut errs = Vec::new();
    fits(&shown, &schema, &schema, "", &mut errs);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the block does not fit schema `{name}`:\n{}",
            errs.join("\n")
        ))
    }
}

/// `"..."`: what an abbreviated example left out.
fn elided(v: &serde_json::Value) -> bool {
    v.as_str() == Some("...")
}

/// `s` with its `$ref`s to `#/$defs/` followed.
fn resolve<'a>(s: &'a serde_json::Value, root: &'a serde_json::Value) -> &'a serde_json::Value {
    let mut s = s;
    while let Some(r) = s.get("$ref").and_then(|r| r.as_str()) {
        match r
            .strip_prefix("#/$defs/")
            .and_then(|d| root.get("$defs")?.get(d))
        {
            Some(next) => s = next,
            None => break,
        }
    }
    s
}

fn type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Where `v` does not fit `s` (a subschema of `root`), each as `at: what`. Keys may be
/// left out (abbreviation); keys shown must exist.
fn fits(
    v: &serde_json::Value,
    s: &serde_json::Value,
    root: &serde_json::Value,
    at: &str,
    errs: &mut Vec<String>,
) {
    use serde_json::Value;
    if elided(v) {
        return;
    }
    let s = resolve(s, root);
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for sub in all {
            fits(v, sub, root, at, errs);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let tries: Vec<Vec<String>> = alts
                .iter()
                .map(|sub| {
                    let mut e = Vec::new();
                    fits(v, sub, root, at, &mut e);
                    e
                })
                .collect();
            if !tries.iter().any(Vec::is_empty) {
                // The closest alternative's complaints.
                errs.extend(tries.into_iter().min_by_key(Vec::len).unwrap_or_default());
            }
        }
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        errs.push(format!("{at}: {v} where the schema has {c}"));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errs.push(format!(
            "{at}: {v} is not one of {}",
            Value::Array(e.clone())
        ));
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let ok = types.iter().any(|t| match (*t, v) {
            ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
            (t, v) => t == type_name(v),
        });
        if !types.is_empty() && !ok {
            errs.push(format!("{at}: a {} where the schema has {t}", type_name(v)));
            return;
        }
    }
    match v {
        Value::Object(map) => {
            let props = s.get("properties").and_then(Value::as_object);
            let extra = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, val) in map {
                if k == "..." {
                    continue;
                }
                let here = format!("{at}.{k}");
                match (props.and_then(|p| p.get(k)), extra) {
                    (Some(sub), _) | (None, Some(sub)) => fits(val, sub, root, &here, errs),
                    (None, None) if props.is_some() => {
                        errs.push(format!("{here}: the document has no such key"));
                    }
                    (None, None) => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    fits(item, sub, root, &format!("{at}[{i}]"), errs);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn the_json_check_follows_the_stated_rules() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "version": {"const": 2, "type": "integer"},
            "verdict": {"enum": ["input-bound", "compute-bound"]},
            "share": {"type": "number"},
            "rank": {"anyOf": [{"$ref": "#/$defs/Rank"}, {"type": "null"}]},
            "lines": {"type": "array", "items": {"$ref": "#/$defs/Rank"}}
        },
        "$defs": {"Rank": {"type": "object", "properties": {"pid": {"type": "integer"}}}}
    });
    let errors = |text: &str| {
        let mut e = Vec::new();
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        fits(&v, &schema, &schema, "", &mut e);
        e
    };
    // Abbreviated: keys left out, `"..."` for a value, an item or a key.
    assert_eq!(
        errors(r#"{"version": 2, "rank": {"pid": 7}, "lines": [{"pid": 1}, "..."], "...": "..."}"#),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(r#"{"rank": null, "share": 1}"#),
        Vec::<String>::new()
    );
    // A renamed key, a wrong type, a stale version, a value outside the enum, inside a
    // reference and an array.
    assert_eq!(
        errors(
            r#"{"verdict": "bound", "version": 1, "share": "x", "rank": {"pids": 1}, "lines": [{"pid": 1.5}], "old": 0}"#
        ),
        [
            ".lines[0].pid: a number where the schema has \"integer\"",
            ".old: the document has no such key",
            ".rank.pids: the document has no such key",
            ".share: a string where the schema has \"number\"",
            ".verdict: \"bound\" is not one of [\"input-bound\",\"compute-bound\"]",
            ".version: 1 where the schema has 2",
        ]
    );
}

#[test]
fn every_command_block_runs_as_shown() {
    let root = root();
    // One `XDG_CACHE_HOME` for every block: `analyze` makes its demo dataset there once.
    let cache = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages(&root) {
        let text = fs_err::read_to_string(&page).unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for block in blocks(&name, &text) {
            let start = Instant::now();
            let result = check(&block, &root, cache.path());
            if block.lang == "console"
                && !block
                    .marker
                    .as_deref()
                    .is_some_and(|m| m.contains("not run:"))
            {
                ran += 1;
                eprintln!(
                    "{}:{}: {:.1} s",
                    block.page,
                    block.line,
                    start.elapsed().as_secs_f64()
                );
            }
            if let Err(e) = result {
                failures.push(format!("{}:{}: {e}", block.page, block.line));
            }
        }
    }
    assert!(ran > 0, "no ```console block was run");
    assert!(
        failures.is_empty(),
        "{} block(s) wrong:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_matcher_follows_the_stated_rules() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let none: Vec<String> = Vec::new();
    let vary = s(&["load"]);
    // Exact, and every line.
    assert!(output_matches(&s(&["a 1", "b"]), &s(&["a 1", "b"]), &none));
    assert!(!output_matches(&s(&["a 1"]), &s(&["a 1", "b"]), &none));
    assert!(!output_matches(&s(&["a 1", "b"]), &s(&["a 2", "b"]), &none));
    // `...` lines: any lines, none included; anchored at both ends otherwise.
    assert!(output_matches(
        &s(&["a", "...", "z"]),
        &s(&["a", "z"]),
        &none
    ));
    assert!(output_matches(
        &s(&["a", "...", "z"]),
        &s(&["a", "b", "c", "z"]),
        &none
    ));
    assert!(output_matches(&s(&["a", "..."]), &s(&["a", "b"]), &none));
    assert!(!output_matches(
        &s(&["a", "...", "z"]),
        &s(&["a", "b"]),
        &none
    ));
    assert!(!output_matches(&s(&["b", "..."]), &s(&["a", "b"]), &none));
    assert!(output_matches(
        &s(&["...", "c", "..."]),
        &s(&["a", "c", "d"]),
        &none
    ));
    // `...` in a line: any text there.
    assert!(line_matches(
        "fix: give ... prefetch (...)",
        "fix: give it a prefetch (x)",
        &none
    ));
    assert!(!line_matches(
        "fix: give ... prefetch",
        "fix: give it a buffer",
        &none
    ));
    // Numbers vary only in the marked lines, and only numbers do.
    assert!(line_matches(
        "load 3.78 on 2 cores",
        "load 0.48 on 16 cores",
        &vary
    ));
    assert!(!line_matches(
        "load 3.78 on 2 cores",
        "load 0.48 on 16 CPUs",
        &vary
    ));
    assert!(!line_matches(
        "load 3.78 on 2 cores",
        "load high on 2 cores",
        &vary
    ));
    assert!(!line_matches("mean 3.78 ms", "mean 0.48 ms", &vary));
    // Markers.
    assert!(options(Some("not run:")).is_err());
    assert!(options(Some("sometimes")).is_err());
    let o = options(Some("exit 2; numbers vary: load | MB/s")).unwrap();
    assert_eq!((o.exit, o.vary.len()), (2, 2));
}

/// The README's table of commands names every subcommand that `gpufeed --help` lists.
#[test]
fn the_readme_names_every_subcommand() {
    let help = Command::new(env!("CARGO_BIN_EXE_gpufeed"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let readme = fs_err::read_to_string(root().join("README.md")).unwrap();
    let table = &readme[readme.find("## Every command").unwrap()..];
    let names: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&n| n != "help")
        .collect();
    assert!(names.len() > 10, "no commands in `gpufeed --help`:\n{help}");
    for name in names {
        assert!(
            table.contains(&format!("`gpufeed {name}")),
            "README's table of commands leaves out `gpufeed {name}`"
        );
    }
}
