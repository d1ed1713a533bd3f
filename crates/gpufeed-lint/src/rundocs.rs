//! The scripts a project says to run: the commands of the root's README and the pages beside
//! it (`python finetune/lora.py`, "launch `train.py`"), the shell scripts they name and the
//! Makefile ([`RunDocs`]'s first tier), then what they only mention and the other shell
//! scripts (its second). A training script none of them names, beside one they do, is an
//! alternative (`finetune/full.py` next to the README's `finetune/lora.py`; a vocoder's own
//! `train.py` in a subfolder): its findings are not the default run's, and are lowered to
//! info, saying so (`project::entry_points`). The options those commands give their script
//! are the run's settings ([`documented_flags`]).
//!
//! Written by hand: the commands are found as words ending in `.py` (and `-m MODULE`), which
//! reads Markdown, reStructuredText, shell and make alike.

use std::path::{Path, PathBuf};

/// Bytes read of one document at most: a README or script larger than this is read in
/// part (its commands come first).
const MAX_DOC_BYTES: u64 = 256 * 1024;
/// Documents read at most.
const MAX_DOCS: usize = 64;

/// What the project's documents name.
///
/// Two tiers. The project's own documents (the root's README, its other Markdown and
/// reStructuredText pages, such as a `PRETRAIN.md` the README points to, and its Makefile),
/// with the shell scripts they name, say what the default run is: the commands of the
/// pages (code blocks, `code` spans, lines that run `python ...`). The scripts the pages
/// only mention in prose, and the other shell scripts (a scratch `script.sh` of notes, a
/// launcher for another recipe), count only where those commands name no script that
/// trains.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunDocs {
    /// The documents read, relative to the linted folder (`README.md`, `scripts/train.sh`).
    pub(crate) docs: Vec<String>,
    /// The script paths they name (`finetune/lora.py`, `train.py`), without a leading `./`.
    pub(crate) scripts: Vec<String>,
    /// The documents of the second tier: pages that mention scripts in prose, and the
    /// shell scripts the documents do not name.
    pub(crate) other_docs: Vec<String>,
    /// The scripts named only in the second tier.
    pub(crate) other_scripts: Vec<String>,
    /// The options the documented commands give their script (`python train.py
    /// --encoder_name conformer_cat --masks`), where every command of that script gives
    /// them alike ([`documented_flags`]). The run's settings, over the parser's defaults.
    pub(crate) flags: Vec<(String, Given)>,
}

/// What a documented command gives an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Given {
    /// `--masks` alone: a switch turned on.
    Switch,
    /// `--encoder_name conformer_cat` (a shell variable the scripts set resolved).
    Value(String),
    /// A value the text does not tell (`<dir>`, `$UNSET`).
    Unknown,
}

impl RunDocs {
    /// Reads the root's documents (any `README*`, `*.md`, `*.rst`, the `Makefile`) of
    /// `dir` and the shell scripts found under it (`scripts`, paths relative to `dir`).
    pub(crate) fn read(dir: &Path, scripts: &[PathBuf]) -> Self {
        let mut out = Self::default();
        let mut docs: Vec<PathBuf> = fs_err::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| {
                        p.is_file()
                            && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                                let lower = n.to_ascii_lowercase();
                                lower.starts_with("readme")
                                    || n == "Makefile"
                                    || lower.ends_with(".md")
                                    || lower.ends_with(".rst")
                            })
                    })
                    .collect()
            })
            .unwrap_or_default();
        docs.sort();
        docs.truncate(MAX_DOCS);
        let rel = |path: &Path| {
            path.strip_prefix(dir)
                .unwrap_or(path)
                .display()
                .to_string()
                .replace('\\', "/")
        };
        // The shell scripts the documents run (`bash scripts/train.sh`, `sh run.sh`).
        let mut launched: Vec<String> = Vec::new();
        // The text of the commands that say what the run is.
        let mut commanded: Vec<String> = Vec::new();
        for path in &docs {
            let Some(text) = read_head(path) else {
                continue;
            };
            launched.extend(
                words(&text)
                    .map(|w| w.trim_end_matches([':', '.']))
                    .filter(|w| w.ends_with(".sh"))
                    .map(str::to_owned),
            );
            // A page's commands (code blocks, `code`, a line that runs `python ...`) say
            // what to run; a script it only mentions in prose ("`x.py` can be used for ...",
            // keras-yolo3's `train_bottleneck.py`) is of the second tier.
            let prose = path.file_name().is_none_or(|n| n != "Makefile");
            if prose {
                let commands = instructions(&text);
                commanded.push(commands.clone());
                add(&mut out.docs, &mut out.scripts, rel(path), &commands);
                let mentioned: Vec<String> = scripts_named(&text)
                    .into_iter()
                    .filter(|s| !out.scripts.contains(s))
                    .collect();
                if !mentioned.is_empty() {
                    out.other_docs.push(rel(path));
                    for s in mentioned {
                        if !out.other_scripts.contains(&s) {
                            out.other_scripts.push(s);
                        }
                    }
                }
            } else {
                add(&mut out.docs, &mut out.scripts, rel(path), &text);
            }
        }
        // Every shell script's text, read once: its tier, and the variables the commands use.
        let shell: Vec<(&PathBuf, String)> = scripts
            .iter()
            .take(MAX_DOCS)
            .filter_map(|p| Some((p, read_head(p)?)))
            .collect();
        for (path, text) in &shell {
            let text = text.clone();
            let r = rel(path);
            let named = launched.iter().any(|w| {
                let w = w.trim_start_matches("./");
                r == w || r.ends_with(&format!("/{w}")) || w.ends_with(&format!("/{r}"))
            });
            if named {
                commanded.push(text.clone());
                add(&mut out.docs, &mut out.scripts, r, &text);
            } else {
                add(&mut out.other_docs, &mut out.other_scripts, r, &text);
            }
        }
        let shell: Vec<String> = shell.into_iter().map(|(_, t)| t).collect();
        out.flags = documented_flags(&commanded, &shell);
        out
    }

    /// Every script any document names, of either tier.
    pub(crate) fn all_scripts(&self) -> impl Iterator<Item = &String> {
        self.scripts.iter().chain(&self.other_scripts)
    }
}

/// Adds `doc` and the scripts its `text` names, when it names any.
fn add(docs: &mut Vec<String>, scripts: &mut Vec<String>, doc: String, text: &str) {
    let named = scripts_named(text);
    if named.is_empty() {
        return;
    }
    docs.push(doc);
    for s in named {
        if !scripts.contains(&s) {
            scripts.push(s);
        }
    }
}

/// The options of the commands in `texts` that run a Python script (`python train.py
/// --encoder_name conformer_cat --masks`, a command continued over lines with `\`): each
/// `--name value`, `--name=value`, or `--name` alone (a switch), up to a shell operator. A
/// shell variable (`$encoder_name`, `${encoder_name}`) takes the one value the scripts in
/// `shell` (or `texts`) set it to; placeholders (`<folder>`) and other variables are
/// [`Given::Unknown`]. An option is kept where every command of its script gives it alike
/// and no two scripts give it differently.
pub(crate) fn documented_flags(texts: &[String], shell: &[String]) -> Vec<(String, Given)> {
    // `encoder_name="conformer_cat"  # ...` in a script: what `$encoder_name` stands for.
    let mut vars: Vec<(&str, &str)> = Vec::new();
    for line in shell.iter().chain(texts).flat_map(|t| t.lines()) {
        if let Some((name, value)) = line.trim().split_once('=')
            && !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            let value = value.split(" #").next().unwrap_or("").trim();
            vars.push((name, value.trim_matches(|c| c == '"' || c == '\'')));
        }
    }
    let resolve = |v: &str| -> Given {
        let var = v
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .or_else(|| v.strip_prefix('$'));
        let v = match var {
            Some(var) => {
                let mut values = vars.iter().filter(|(n, _)| *n == var).map(|(_, v)| *v);
                match (values.next(), values.next()) {
                    (Some(one), None) => one,
                    _ => return Given::Unknown,
                }
            }
            None => v,
        };
        if v.is_empty() || v.starts_with('<') || v.contains('$') {
            Given::Unknown
        } else {
            Given::Value(v.to_owned())
        }
    };
    // Each command: its script and its options.
    let mut commands: Vec<(String, Vec<(String, Given)>)> = Vec::new();
    for text in texts {
        let joined = text.replace("\\\n", " ");
        for line in joined.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(start) = words
                .iter()
                .position(|w| w.trim_matches(|c| c == '`' || c == '"').ends_with(".py"))
            else {
                continue;
            };
            let script = words[start]
                .trim_matches(|c| c == '`' || c == '"')
                .to_owned();
            let mut options: Vec<(String, Given)> = Vec::new();
            let mut i = start + 1;
            while i < words.len() {
                let w = words[i].trim_matches('`');
                if matches!(w, "|" | "||" | "&&" | ";" | ">" | ">>" | "2>&1" | "&") {
                    break;
                }
                i += 1;
                let Some(option) = w.strip_prefix("--") else {
                    continue;
                };
                let (name, given) = match option.split_once('=') {
                    Some((n, v)) => (n, resolve(v.trim_matches(|c| c == '"' || c == '\''))),
                    None => match words.get(i).map(|v| v.trim_matches('`')) {
                        Some(v) if !v.starts_with('-') && !v.is_empty() => {
                            i += 1;
                            (option, resolve(v.trim_matches(|c| c == '"' || c == '\'')))
                        }
                        _ => (option, Given::Switch),
                    },
                };
                let name = name.replace('-', "_");
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    options.push((name, given));
                }
            }
            commands.push((script, options));
        }
    }
    // An option every command of its script gives alike (a CPU variant's `--log_interval=1`
    // beside the plain `python train.py` is no setting of the run), and that no two scripts
    // give differently.
    let mut seen: Vec<(String, Given)> = Vec::new();
    let mut conflicting: Vec<String> = Vec::new();
    for (script, options) in &commands {
        for (name, given) in options {
            let alike = commands.iter().filter(|(s, _)| s == script).all(|(_, o)| {
                o.iter().filter(|(n, _)| n == name).all(|(_, g)| g == given)
                    && o.iter().any(|(n, _)| n == name)
            });
            if !alike {
                conflicting.push(name.clone());
                continue;
            }
            match seen.iter().find(|(n, _)| n == name) {
                Some((_, g)) if g != given => conflicting.push(name.clone()),
                Some(_) => {}
                None => seen.push((name.clone(), given.clone())),
            }
        }
    }
    seen.retain(|(n, _)| !conflicting.contains(n));
    seen
}

/// Words that run a script named after them on the same line.
const LAUNCHERS: &[&str] = &[
    "python",
    "python3",
    "torchrun",
    "accelerate",
    "deepspeed",
    "horovodrun",
    "srun",
    "mpirun",
    "lightning",
    "bash",
    "sh",
];

/// Words of running text that offer a variant rather than the run itself.
const ALTERNATIVES: &[&str] = &[
    "instead",
    "alternative",
    "optionally",
    "optional",
    "you can also",
    "can also be used",
];

/// The parts of a page that say what to run: its fenced and indented code blocks, its
/// `code` spans, and the lines that run a launcher (`python train.py` in running text),
/// but for a line of running text that offers a variant ("run `hq_train.py` instead").
fn instructions(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        // A listing of the tree (`├── chat_rl.py  # ...`) names files, not a run.
        if ["├", "└", "│"].iter().any(|c| line.contains(c)) {
            continue;
        }
        let code = fenced || line.starts_with("    ") || line.starts_with('\t');
        if code {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // "To train with the quality discriminator, run `hq_train.py` instead" (Wav2Lip):
        // a variant the page offers, not its run.
        let lower = line.to_ascii_lowercase();
        if ALTERNATIVES.iter().any(|a| lower.contains(a)) {
            continue;
        }
        if words(line).any(|w| LAUNCHERS.contains(&w)) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            out.push_str(span);
            out.push('\n');
        }
    }
    out
}

/// The first [`MAX_DOC_BYTES`] of a file, as text (invalid UTF-8 replaced).
fn read_head(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = fs_err::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_DOC_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The words of a command or of prose, with the quotes, brackets and operators around them
/// left out.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "`\"'()[]{};|&<>,=*".contains(c))
        .filter(|w| !w.is_empty())
}

/// The scripts a text names: every word ending in `.py` (`python3 ./train.py`, "launch
/// `train.py`"), and the module of `-m pkg.train` as `pkg/train.py`.
pub(crate) fn scripts_named(text: &str) -> Vec<String> {
    let words: Vec<&str> = words(text).collect();
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches([':', '.']);
        if w.ends_with(".py") && !w.contains("://") {
            push(w.trim_start_matches("./").to_owned());
        } else if w == "-m"
            && let Some(module) = words.get(i + 1)
            && module
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            push(format!("{}.py", module.replace('.', "/")));
            push(format!("{}/__main__.py", module.replace('.', "/")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{documented_flags, scripts_named};

    #[test]
    fn options_of_the_documented_commands() {
        use super::Given::{Switch, Unknown, Value};
        let readme = "```bash\npython main.py --encoder_name $encoder_name --batch-size=64 \\\n  --masks --save_dir <dir> | tee log\n```\n".to_owned();
        let shell = ["encoder_name=\"conformer_cat\" # conformer_cat | resnet34\n".to_owned()];
        let value = |v: &str| Value(v.to_owned());
        assert_eq!(
            documented_flags(std::slice::from_ref(&readme), &shell),
            [
                ("encoder_name".to_owned(), value("conformer_cat")),
                ("batch_size".to_owned(), value("64")),
                ("masks".to_owned(), Switch),
                ("save_dir".to_owned(), Unknown),
            ]
        );
        // Two commands that disagree on an option leave it out; one that only the other
        // gives is left out too.
        let other = "python main.py --encoder_name conformer --lr 1e-3\n".to_owned();
        let both = documented_flags(&[readme, other], &shell);
        assert!(both.iter().all(|(n, _)| n != "encoder_name"), "{both:?}");
        assert!(both.iter().all(|(n, _)| n != "lr"), "{both:?}");
        // An option one command of a script gives and another leaves out is no setting.
        let plain = "python train.py config/a.py\npython train.py config/a.py --log_interval=1\n";
        assert_eq!(documented_flags(&[plain.to_owned()], &[]), []);
    }

    #[test]
    fn commands_in_markdown_shell_and_prose() {
        let text = "Fine-tune:\n```bash\npython finetune/lora.py --data x\n```\n\
                    Launch `train.py` to start. torchrun --nproc 8 ./pretrain.py\n\
                    python -m pkg.train fit; see https://x.org/a.py";
        assert_eq!(
            scripts_named(text),
            [
                "finetune/lora.py",
                "train.py",
                "pretrain.py",
                "pkg/train.py",
                "pkg/train/__main__.py"
            ]
        );
    }
}
