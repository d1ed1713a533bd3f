//! The scripts a project says to run: the root README's commands (`python finetune/lora.py`,
//! "launch `train.py`"), its shell scripts and its Makefile. A training script none of them
//! names, beside one they do, is an alternative (`finetune/full.py` next to the README's
//! `finetune/lora.py`; a vocoder's own `train.py` in a subfolder): its findings are not the
//! default run's, and are lowered to info, saying so (`project::entry_points`).
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
#[derive(Debug, Clone, Default)]
pub(crate) struct RunDocs {
    /// The documents read, relative to the linted folder (`README.md`, `scripts/train.sh`).
    pub(crate) docs: Vec<String>,
    /// The script paths they name (`finetune/lora.py`, `train.py`), without a leading `./`.
    pub(crate) scripts: Vec<String>,
}

impl RunDocs {
    /// Reads the root README (any `README*`) of `dir` and the shell scripts and Makefile
    /// found under it (`scripts`, paths relative to `dir`).
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
                                n.to_ascii_lowercase().starts_with("readme") || n == "Makefile"
                            })
                    })
                    .collect()
            })
            .unwrap_or_default();
        docs.sort();
        docs.extend(scripts.iter().cloned());
        for path in docs.into_iter().take(MAX_DOCS) {
            let Some(text) = read_head(&path) else {
                continue;
            };
            let named = scripts_named(&text);
            if named.is_empty() {
                continue;
            }
            out.docs.push(
                path.strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            for s in named {
                if !out.scripts.contains(&s) {
                    out.scripts.push(s);
                }
            }
        }
        out
    }
}

/// The first [`MAX_DOC_BYTES`] of a file, as text (invalid UTF-8 replaced).
fn read_head(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = fs_err::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_DOC_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The scripts a text names: every word ending in `.py` (`python3 ./train.py`, "launch
/// `train.py`"), and the module of `-m pkg.train` as `pkg/train.py`.
pub(crate) fn scripts_named(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "`\"'()[]{};|&<>,=*".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
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
    use super::scripts_named;

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
