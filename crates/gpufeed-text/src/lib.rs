//! The text side of gpufeed's speech (TTS) data pipeline: cleaners that turn a transcript
//! into what a reader says, and a character tokenizer whose ids never collide with the
//! padding, blank or end-of-sequence ids.
//!
//! | module | does |
//! |---|---|
//! | [`clean`](mod@clean) | the `unicode` (default), `english`, `basic` and `none` cleaners of [`Cleaner`]; [`clean_checked`] says what a cleaner lost |
//! | [`numbers`] | English: digits, currency, dates, times and regnal numerals to words |
//! | [`tokenizer`] | [`Tokenizer`], [`SymbolTable`] (built-in, or built from a dataset's texts) and the id layout (blanks, EOS) |
//! | [`ljspeech`] | how closely the English cleaner reproduces LJSpeech's own normalisation |
//! | [`settings`] | [`TextSettings`] and [`Cleaner`], owned here; gpufeed-config reads the YAML onto them |
//!
//! The cache key of tokenised text is [`settings_fingerprint`]: it covers every
//! [`TextSettings`] field and the versions of the cleaner and the symbol table, so changing
//! any of them invalidates cached ids.
//!
//! The default cleaner, `unicode`, keeps every script (NFC, lowercase, whitespace); the
//! `english` cleaner, chosen in the config, transliterates to ASCII and reads numbers and
//! abbreviations as English words.
//!
//! ```
//! use gpufeed_text::{Cleaner, EOS, SymbolTable, TextSettings, Tokenizer, clean, settings_fingerprint};
//!
//! let settings = TextSettings::default(); // unicode cleaner, no blanks, EOS
//! assert_eq!(settings.cleaner, Cleaner::Unicode);
//! assert_eq!(clean("Привет,  МИР! 1st", settings.cleaner), "привет, мир! 1st");
//! assert_eq!(
//!     clean("Mr. Smith paid $3.50 on the 1st.", Cleaner::English),
//!     "mister smith paid three dollars, fifty cents on the first."
//! );
//!
//! // The symbol table comes from the dataset's cleaned texts.
//! let texts = ["Hello, world!", "Привет, мир!"].map(|t| clean(t, settings.cleaner));
//! let table = SymbolTable::from_texts(texts.iter().map(String::as_str));
//! let tokenizer = Tokenizer::with_symbols(&settings, table);
//! let ids = tokenizer.encode_text("Привет, мир!");
//! assert_eq!(ids.last(), Some(&EOS));
//! assert_eq!(tokenizer.decode(&ids), "привет, мир!");
//! assert!(ids.iter().all(|&id| (id as usize) < tokenizer.vocab_size()));
//! assert!(settings_fingerprint(&settings).contains("cleaner=unicode"));
//! ```
//!
//! Nothing here prints or reads files; [`ljspeech::measure`] takes the metadata's text.

pub mod clean;
pub mod ljspeech;
pub mod numbers;
pub mod settings;
pub mod tokenizer;

pub use clean::{Checked, clean, clean_checked};
pub use settings::{Cleaner, TextSettings};
pub use tokenizer::{Encoded, SymbolTable, SymbolTableError, Tokenizer};

/// Padding id: never produced by [`Tokenizer`], reserved for batching.
pub const PAD: u32 = 0;
/// End-of-sequence id, appended when `add_eos` is set.
pub const EOS: u32 = 1;
/// Blank id, interspersed when `add_blank` is set.
pub const BLANK: u32 = 2;
/// Id of a character that is not in the symbol table.
pub const UNK: u32 = 3;
/// Id of the first real symbol; every id below it is reserved.
pub const FIRST_SYMBOL_ID: u32 = 4;

/// Version of the cleaners' output. Bump it whenever any cleaner's output changes for some
/// input, so that cached tokens are rebuilt (the golden test in `tests/text.rs` fails
/// first).
///
/// 2: the `unicode` cleaner; `basic` composes to NFC first ("e\u{301}" → "é").
pub const CLEANER_VERSION: u32 = 2;

/// Version of the built-in symbol table and id layout. Bump it whenever the table or the
/// blank/EOS layout changes.
pub const TOKENIZER_VERSION: u32 = 1;

/// A stable string for the feature cache key, covering every text setting and the cleaner
/// and tokenizer versions, e.g.
/// `gpufeed-text cleaner-v2 tokenizer-v1 cleaner=unicode add_blank=false add_eos=true use_normalized_text=true`.
///
/// ```
/// use gpufeed_text::{TextSettings, settings_fingerprint};
/// let a = settings_fingerprint(&TextSettings::default());
/// let b = settings_fingerprint(&TextSettings { add_blank: true, ..TextSettings::default() });
/// assert_ne!(a, b);
/// ```
#[must_use]
pub fn settings_fingerprint(settings: &TextSettings) -> String {
    // Spelled out, not Debug, so that renaming a Rust variant cannot change cache keys.
    let cleaner = match settings.cleaner {
        Cleaner::Unicode => "unicode",
        Cleaner::English => "english",
        Cleaner::Basic => "basic",
        Cleaner::None => "none",
    };
    format!(
        "gpufeed-text cleaner-v{CLEANER_VERSION} tokenizer-v{TOKENIZER_VERSION} cleaner={cleaner} add_blank={} add_eos={} use_normalized_text={}",
        settings.add_blank, settings.add_eos, settings.use_normalized_text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_covers_every_setting() {
        let base = TextSettings::default();
        let variants = [
            base.clone(),
            TextSettings {
                cleaner: Cleaner::English,
                ..base.clone()
            },
            TextSettings {
                cleaner: Cleaner::Basic,
                ..base.clone()
            },
            TextSettings {
                cleaner: Cleaner::None,
                ..base.clone()
            },
            TextSettings {
                add_blank: !base.add_blank,
                ..base.clone()
            },
            TextSettings {
                add_eos: !base.add_eos,
                ..base.clone()
            },
            TextSettings {
                use_normalized_text: !base.use_normalized_text,
                ..base.clone()
            },
        ];
        let prints: std::collections::HashSet<String> =
            variants.iter().map(settings_fingerprint).collect();
        assert_eq!(prints.len(), variants.len());
        assert_eq!(
            settings_fingerprint(&base),
            "gpufeed-text cleaner-v2 tokenizer-v1 cleaner=unicode add_blank=false add_eos=true use_normalized_text=true"
        );
    }
}
