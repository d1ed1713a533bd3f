//! The settings a project keeps in YAML or JSON config files beside its code
//! (`config/config.yaml` read into `hp` and used as `hp.train.num_workers`,
//! `cfg["train"]["num_workers"]`, glow-tts' `configs/base.json`). Each scalar becomes a
//! default of its key's name, like a flag's or a constructor parameter's, so that the
//! rules judge `num_workers=hp.train.num_workers` by the `0` the config gives it, and an
//! `if hp.data.data_preprocessed:` by the config's `true`. Where two files (or a file and
//! the Python code) disagree on a name, nothing is resolved from it.

use std::path::{Path, PathBuf};

use gpufeed_config::{OutlineValue, outline, read_capped};

use crate::defaults::DefaultValue;

/// Config files larger than this are data (a vocabulary, a manifest), not settings.
const MAX_CONFIG_FILE_BYTES: u64 = 256 * 1024;
/// JSON files larger than this are data too: a JSON config is a few KiB.
const MAX_JSON_CONFIG_BYTES: u64 = 64 * 1024;
/// At most this many config files are read per lint run.
const MAX_CONFIG_FILES: usize = 200;
/// And at most this many bytes of them in all, so that a folder of annotation files does
/// not slow the lint down.
const MAX_CONFIG_BYTES_TOTAL: usize = 4 * 1024 * 1024;

/// One scalar of a config file: its key's last name, its value as a Python literal, and
/// where it is (`config/config.yaml:27`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Configs {
    leaves: Vec<(String, DefaultValue)>,
}

impl Configs {
    /// Reads the config files found beside the sources (`*.yaml`, `*.yml`, `*.json`),
    /// each given with its path and its name inside the linted folder. A file that is not
    /// YAML or JSON, or too large, is skipped: it holds no settings the rules can use.
    pub(crate) fn read(files: &[(PathBuf, PathBuf)]) -> Self {
        let mut leaves = Vec::new();
        let mut total = 0;
        for (path, rel) in files.iter().take(MAX_CONFIG_FILES) {
            let cap = if path.extension().is_some_and(|e| e == "json") {
                MAX_JSON_CONFIG_BYTES
            } else {
                MAX_CONFIG_FILE_BYTES
            };
            let Ok(Ok(bytes)) = read_capped(path, cap) else {
                continue;
            };
            total += bytes.len();
            if total > MAX_CONFIG_BYTES_TOTAL {
                break;
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            leaves.extend(Self::scalars(&text, rel));
        }
        Self { leaves }
    }

    /// The scalars of one config text, by their dotted path. A YAML stream of several
    /// documents (`---` between sections, as PyTorch_Speaker_Verification's, read with
    /// `yaml.load_all` into one mapping) gives the scalars of each.
    fn scalars(text: &str, rel: &Path) -> Vec<(String, DefaultValue)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut first_line = 0;
        let mut offset = 0;
        for (line, l) in text.split_inclusive('\n').enumerate() {
            if l.trim_end() == "---" || l.trim_end().starts_with("--- ") {
                out.extend(Self::document(&text[start..offset], rel, first_line));
                start = offset + l.len();
                first_line = line + 1;
            }
            offset += l.len();
        }
        out.extend(Self::document(&text[start..], rel, first_line));
        out
    }

    /// The scalars of one YAML document that starts `lines` lines into its file.
    fn document(text: &str, rel: &Path, lines: usize) -> Vec<(String, DefaultValue)> {
        let Ok(o) = outline(text, rel) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in o.source.entries() {
            let Some(scalar) = o.value(&entry.path) else {
                continue;
            };
            if entry.path.contains('[') {
                continue;
            }
            let value = match &scalar.value {
                OutlineValue::Bool(true) => "True".to_owned(),
                OutlineValue::Bool(false) => "False".to_owned(),
                OutlineValue::Int(i) => i.to_string(),
                OutlineValue::Float(f) => f.to_string(),
                OutlineValue::Str(s) => format!("{s:?}"),
                OutlineValue::Null => "None".to_owned(),
            };
            out.push((
                entry.path.clone(),
                DefaultValue {
                    value: Some(value),
                    at: format!(
                        "{}:{}, `{}`",
                        rel.display(),
                        scalar.span.line + lines,
                        entry.path
                    ),
                },
            ));
        }
        out
    }

    /// Every scalar, by its key's last name.
    pub(crate) fn leaves(&self) -> impl Iterator<Item = (&str, &DefaultValue)> {
        self.leaves
            .iter()
            .map(|(path, d)| (path.rsplit('.').next().unwrap_or(path), d))
    }

    /// The value a read of the config gives, by the keys it reads (`["train",
    /// "num_workers"]` for `hp.train.num_workers` or `cfg["train"]["num_workers"]`): the
    /// scalars whose path ends with the most of these keys, when they agree.
    pub(crate) fn lookup(&self, keys: &[&str]) -> Option<&DefaultValue> {
        for skip in 0..keys.len() {
            let suffix = keys[skip..].join(".");
            let mut found = self.leaves.iter().filter(|(path, _)| {
                path == &suffix
                    || path
                        .strip_suffix(&suffix)
                        .is_some_and(|head| head.ends_with('.'))
            });
            let Some((_, first)) = found.next() else {
                continue;
            };
            return found.all(|(_, d)| d.value == first.value).then_some(first);
        }
        None
    }

    /// True when a config names a CUDA device (`device: cuda`, `device: "cuda:0"`): the
    /// project trains on the GPU even where its code never writes `"cuda"`.
    pub(crate) fn cuda_device(&self) -> bool {
        self.leaves().any(|(name, d)| {
            matches!(name, "device" | "devices")
                && d.value
                    .as_deref()
                    .is_some_and(|v| v.trim_matches('"').starts_with("cuda"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_of_yaml_and_json() {
        let yaml = "device: cuda\ntrain:\n  num_workers: 0\n  restore: false\n";
        let got = Configs::scalars(yaml, Path::new("config/config.yaml"));
        let find = |n: &str| {
            got.iter()
                .find(|(k, _)| k.rsplit('.').next() == Some(n))
                .map(|(_, d)| (d.value.clone().unwrap_or_default(), d.at.clone()))
        };
        assert_eq!(
            find("num_workers"),
            Some((
                "0".to_owned(),
                "config/config.yaml:3, `train.num_workers`".to_owned()
            ))
        );
        assert_eq!(find("restore").map(|v| v.0), Some("False".to_owned()));
        let configs = Configs { leaves: got };
        assert!(configs.cuda_device());
        let json = "{\"train\": {\"batch_size\": 32, \"fp16_run\": true}}";
        let got = Configs::scalars(json, Path::new("configs/base.json"));
        assert!(
            got.iter()
                .any(|(k, d)| k == "train.fp16_run" && d.value.as_deref() == Some("True"))
        );
        // Several documents, each section its own; a read by its keys picks the section.
        let stream = "device: \"cuda\"\n---\ntrain:\n  num_workers: 0\n---\ntest:\n  num_workers: 8\n  flag: !!bool \"true\"\n";
        let configs = Configs {
            leaves: Configs::scalars(stream, Path::new("config.yaml")),
        };
        let got = configs.lookup(&["train", "num_workers"]).unwrap();
        assert_eq!(got.value.as_deref(), Some("0"));
        assert_eq!(got.at, "config.yaml:4, `train.num_workers`");
        assert!(configs.lookup(&["num_workers"]).is_none(), "two values");
        assert_eq!(
            configs
                .lookup(&["hp", "flag"])
                .and_then(|d| d.value.as_deref()),
            Some("True")
        );
        assert!(Configs::scalars("{not: [valid", Path::new("x.yaml")).is_empty());
    }
}
