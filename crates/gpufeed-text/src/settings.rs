//! The text settings: which cleaner runs and how ids are laid out, as plain values. They
//! are owned here, by the code that uses them; gpufeed-config reads the `data` keys of the
//! trainer's YAML onto them (`DataConfig::text`) and re-exports them, so the serde names
//! below are the YAML keys, the JSON fields and part of the feature cache key.

use serde::{Deserialize, Serialize};

/// Text cleaning pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Cleaner {
    /// Keep every script: Unicode NFC, lowercase, collapse whitespace; no transliteration,
    /// digits stay digits. The default: datasets come in every language.
    #[default]
    Unicode,
    /// Transliterate to ASCII, lowercase, expand abbreviations and numbers, collapse
    /// whitespace (Keith Ito's `english_cleaners`, fixed).
    English,
    /// Unicode NFC, lowercase and collapse whitespace.
    Basic,
    /// Leave the text as it is.
    None,
}

/// The text keys of the `data` section.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct TextSettings {
    /// Cleaning pipeline.
    pub cleaner: Cleaner,
    /// Intersperse the blank token between symbols (VITS-style).
    pub add_blank: bool,
    /// Append the end-of-sequence token.
    pub add_eos: bool,
    /// Which metadata column to read for LJSpeech: the normalised one (third) when present.
    pub use_normalized_text: bool,
}

impl Default for TextSettings {
    fn default() -> Self {
        Self {
            cleaner: Cleaner::Unicode,
            add_blank: false,
            add_eos: true,
            use_normalized_text: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde names are the YAML keys and part of the feature cache key: a rename here
    /// invalidates every cache, so it has to be on purpose.
    #[test]
    fn the_json_of_the_defaults_is_pinned() {
        let json = serde_json::to_string(&TextSettings::default()).unwrap();
        assert_eq!(
            json,
            r#"{"cleaner":"unicode","add_blank":false,"add_eos":true,"use_normalized_text":true}"#
        );
        let back: TextSettings = serde_json::from_str(&json).unwrap();
        assert_eq!(back, TextSettings::default());
    }
}
