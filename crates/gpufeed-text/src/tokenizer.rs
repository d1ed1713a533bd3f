//! Character tokenizer and its symbol table.
//!
//! Ids 0 to 3 are reserved ([`PAD`](crate::PAD), [`EOS`], [`BLANK`], [`UNK`]); the symbols start at
//! [`FIRST_SYMBOL_ID`], so no character of a text can ever be encoded as padding, blank or
//! end of sequence. (The original tokenizer this replaces put `_` and `~` in its symbol
//! list twice, so text containing them collided with its blank and EOS ids.)
//!
//! ## The built-in symbol set (table version 1)
//!
//! | ids | symbols |
//! |---|---|
//! | 0–3 | `<pad>` `<eos>` `<blank>` `<unk>` |
//! | 4 | space |
//! | 5–17 | `! " ' ( ) , - . : ; ? [ ]` |
//! | 18–43 | `a`–`z` |
//!
//! This is every character of LJSpeech's normalised column after the English cleaner (the
//! raw column adds only `$ & £` and digits, which the cleaner turns into words), plus
//! nothing else: the brief's `!'(),-.:;?"` and the `[ ]` that 7 LJSpeech lines contain.
//! Any other character (another script, digits or capitals left by the `unicode`, `basic`
//! and `none` cleaners, `_`, `~`, a character transliteration did not know) is encoded as
//! [`UNK`] and counted by [`Tokenizer::encode_with_stats`]; nothing is dropped.
//!
//! ## A dataset's table
//!
//! [`SymbolTable::from_texts`] builds the table of a dataset from its cleaned texts: the
//! built-in symbols first, with their ids, then every other character the texts contain,
//! by code point. An English dataset gets exactly the built-in ids; "Привет" and "日本語"
//! get ids of their own. The table is stored with the features (it serialises as below),
//! and read back with [`Tokenizer::with_symbols`].
//!
//! ```
//! use gpufeed_text::{SymbolTable, TextSettings, Tokenizer, clean};
//!
//! let settings = TextSettings::default(); // the `unicode` cleaner
//! let texts: Vec<String> = ["Привет, мир!", "日本語"].iter().map(|t| clean(t, settings.cleaner)).collect();
//! let table = SymbolTable::from_texts(texts.iter().map(String::as_str));
//! assert!(table.symbols().starts_with(SymbolTable::english().symbols()));
//! let tokenizer = Tokenizer::with_symbols(&settings, table);
//! let encoded = tokenizer.encode_with_stats(&texts[0]);
//! assert_eq!(encoded.unknown, 0);
//! assert_eq!(tokenizer.decode(&encoded.ids), "привет, мир!");
//! ```
//!
//! ## Layout
//!
//! For a cleaned text of symbols `s1 … sn`:
//!
//! | `add_blank` | `add_eos` | ids | length |
//! |---|---|---|---|
//! | no | no | `s1 s2 … sn` | n |
//! | no | yes | `s1 s2 … sn EOS` | n + 1 |
//! | yes | no | `BLANK s1 BLANK s2 … BLANK sn BLANK` | 2n + 1 |
//! | yes | yes | `BLANK s1 BLANK s2 … BLANK sn BLANK EOS` | 2n + 2 |
//!
//! The blank layout is VITS's `intersperse(seq, 0)`: a blank before every symbol and one
//! after the last, so an empty text gives a single blank. EOS comes after the blanks and is
//! not itself surrounded by them.
//!
//! ```
//! use gpufeed_text::{BLANK, Cleaner, EOS, TextSettings, Tokenizer};
//!
//! let settings = TextSettings { cleaner: Cleaner::English, add_blank: true, add_eos: true, use_normalized_text: true };
//! let tokenizer = Tokenizer::new(&settings);
//! let ids = tokenizer.encode_text("Hi!");
//! let (h, i, bang) = (tokenizer.symbols().id('h'), tokenizer.symbols().id('i'), tokenizer.symbols().id('!'));
//! assert_eq!(ids, [BLANK, h.unwrap(), BLANK, i.unwrap(), BLANK, bang.unwrap(), BLANK, EOS]);
//! assert_eq!(tokenizer.decode(&ids), "hi!");
//! ```

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::{BLANK, EOS, FIRST_SYMBOL_ID, TextSettings, UNK, clean};

/// Version of the JSON layout of a serialised [`SymbolTable`].
pub const SYMBOL_TABLE_FORMAT: u32 = 1;

/// Names of the reserved ids 0 to 3, as they appear in the serialised table.
pub const RESERVED_NAMES: [&str; 4] = ["<pad>", "<eos>", "<blank>", "<unk>"];

/// The symbols of table version 1, in id order from [`FIRST_SYMBOL_ID`].
const SYMBOLS_V1: &str = " !\"'(),-.:;?[]abcdefghijklmnopqrstuvwxyz";

/// Why a serialised symbol table was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SymbolTableError {
    /// The table was written in a layout this version does not read.
    #[error(
        "Unsupported symbol table format `{found}` (this build reads format {SYMBOL_TABLE_FORMAT})"
    )]
    UnsupportedFormat {
        /// The `format_version` found.
        found: u32,
    },
    /// The reserved names are not `<pad> <eos> <blank> <unk>`.
    #[error("Symbol table reserves `{found:?}`, expected `{RESERVED_NAMES:?}`")]
    Reserved {
        /// The reserved names found.
        found: Vec<String>,
    },
    /// A symbol is not exactly one character.
    #[error("Symbol `{symbol}` at id {id} is not exactly one character")]
    NotOneChar {
        /// The symbol.
        symbol: String,
        /// Its id.
        id: u32,
    },
    /// A symbol appears twice.
    #[error("Symbol `{symbol}` appears twice (ids {first} and {second})")]
    Duplicate {
        /// The symbol.
        symbol: char,
        /// Its first id.
        first: u32,
        /// Its second id.
        second: u32,
    },
}

/// Which id means which character; stored in the feature cache's manifest so a model knows
/// what its input ids mean.
///
/// Serialised as
/// `{"format_version": 1, "reserved": ["<pad>", "<eos>", "<blank>", "<unk>"], "symbols": [" ", "!", …]}`
/// where `symbols[k]` has id `4 + k`. Deserialising checks the format version, the reserved
/// names and that every symbol is one distinct character.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "SymbolTableRepr", into = "SymbolTableRepr")]
pub struct SymbolTable {
    symbols: Vec<char>,
    /// Id of each ASCII character, 0 where it has none (0 is PAD, never a symbol's id).
    ascii: [u32; 128],
    other: HashMap<char, u32>,
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable")
            .field("symbols", &self.symbols.iter().collect::<String>())
            .finish_non_exhaustive()
    }
}

impl PartialEq for SymbolTable {
    fn eq(&self, other: &Self) -> bool {
        self.symbols == other.symbols
    }
}

impl Eq for SymbolTable {}

impl Default for SymbolTable {
    fn default() -> Self {
        Self::english()
    }
}

impl SymbolTable {
    /// Table version 1: space, `!"'(),-.:;?[]` and `a`–`z` (see the [module docs](self)).
    #[must_use]
    pub fn english() -> Self {
        match Self::from_symbols(SYMBOLS_V1.chars().collect()) {
            Ok(table) => table,
            // SYMBOLS_V1 has distinct characters; the unit tests check it.
            Err(_) => unreachable!("the built-in symbol set has duplicates"),
        }
    }

    /// The table of a dataset, from its cleaned texts: the [`english`](Self::english)
    /// symbols first, in their order (so an English dataset keeps exactly their ids), then
    /// every other character of the texts, sorted by code point, each once. The same set
    /// of texts gives the same table whatever their order.
    ///
    /// Pass the texts as the tokenizer will see them, cleaned: a character cleaned away
    /// needs no id.
    ///
    /// ```
    /// use gpufeed_text::{FIRST_SYMBOL_ID, SymbolTable};
    /// let table = SymbolTable::from_texts(["añb", "ñ日"]);
    /// let english = SymbolTable::english().symbols().len();
    /// assert_eq!(&table.symbols()[english..], ['ñ', '日']);
    /// assert_eq!(table.id('a'), SymbolTable::english().id('a'));
    /// assert_eq!(table.id('日'), Some(FIRST_SYMBOL_ID + english as u32 + 1));
    /// ```
    #[must_use]
    pub fn from_texts<'a>(cleaned: impl IntoIterator<Item = &'a str>) -> Self {
        let english = Self::english();
        let extra: BTreeSet<char> = cleaned
            .into_iter()
            .flat_map(str::chars)
            .filter(|&c| english.id(c).is_none())
            .collect();
        let mut symbols = english.symbols;
        symbols.extend(extra);
        match Self::from_symbols(symbols) {
            Ok(table) => table,
            // The extra characters are distinct (a set) and none is an English symbol.
            Err(_) => unreachable!("from_texts added a symbol twice"),
        }
    }

    /// A table of the given symbols, with ids from [`FIRST_SYMBOL_ID`] in order.
    ///
    /// # Errors
    ///
    /// [`SymbolTableError::Duplicate`] if a symbol appears twice.
    pub fn from_symbols(symbols: Vec<char>) -> Result<Self, SymbolTableError> {
        let mut ascii = [0; 128];
        let mut other = HashMap::new();
        for (k, &c) in symbols.iter().enumerate() {
            let id = FIRST_SYMBOL_ID + u32::try_from(k).unwrap_or(u32::MAX - FIRST_SYMBOL_ID);
            let previous = if c.is_ascii() {
                let slot = &mut ascii[c as usize];
                let previous = (*slot != 0).then_some(*slot);
                *slot = id;
                previous
            } else {
                other.insert(c, id)
            };
            if let Some(first) = previous {
                return Err(SymbolTableError::Duplicate {
                    symbol: c,
                    first,
                    second: id,
                });
            }
        }
        Ok(Self {
            symbols,
            ascii,
            other,
        })
    }

    /// The id of `c`, or `None` if it is not in the table (the tokenizer then uses [`UNK`]).
    #[must_use]
    pub fn id(&self, c: char) -> Option<u32> {
        if c.is_ascii() {
            Some(self.ascii[c as usize]).filter(|&id| id != 0)
        } else {
            self.other.get(&c).copied()
        }
    }

    /// The character of `id`, or `None` for a reserved id or one past the table.
    #[must_use]
    pub fn symbol(&self, id: u32) -> Option<char> {
        let k = id.checked_sub(FIRST_SYMBOL_ID)?;
        self.symbols.get(usize::try_from(k).ok()?).copied()
    }

    /// The symbols, in id order from [`FIRST_SYMBOL_ID`].
    #[must_use]
    pub fn symbols(&self) -> &[char] {
        &self.symbols
    }

    /// Number of ids: the reserved ones plus the symbols. Every id is below it.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        FIRST_SYMBOL_ID as usize + self.symbols.len()
    }
}

/// The serialised form of [`SymbolTable`].
#[derive(Serialize, Deserialize)]
struct SymbolTableRepr {
    format_version: u32,
    reserved: Vec<String>,
    symbols: Vec<String>,
}

impl From<SymbolTable> for SymbolTableRepr {
    fn from(table: SymbolTable) -> Self {
        Self {
            format_version: SYMBOL_TABLE_FORMAT,
            reserved: RESERVED_NAMES.iter().map(|&s| s.to_owned()).collect(),
            symbols: table.symbols.iter().map(char::to_string).collect(),
        }
    }
}

impl TryFrom<SymbolTableRepr> for SymbolTable {
    type Error = SymbolTableError;

    fn try_from(repr: SymbolTableRepr) -> Result<Self, Self::Error> {
        if repr.format_version != SYMBOL_TABLE_FORMAT {
            return Err(SymbolTableError::UnsupportedFormat {
                found: repr.format_version,
            });
        }
        if repr.reserved != RESERVED_NAMES {
            return Err(SymbolTableError::Reserved {
                found: repr.reserved,
            });
        }
        let mut symbols = Vec::with_capacity(repr.symbols.len());
        for (k, symbol) in repr.symbols.into_iter().enumerate() {
            let mut chars = symbol.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => symbols.push(c),
                _ => {
                    let id =
                        FIRST_SYMBOL_ID + u32::try_from(k).unwrap_or(u32::MAX - FIRST_SYMBOL_ID);
                    return Err(SymbolTableError::NotOneChar { symbol, id });
                }
            }
        }
        Self::from_symbols(symbols)
    }
}

/// Ids of one text and how many of its characters were not in the table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Encoded {
    /// The ids, laid out as the [module docs](self) say.
    pub ids: Vec<u32>,
    /// Characters encoded as [`UNK`].
    pub unknown: usize,
}

/// Character tokenizer: cleans with the configured cleaner, maps characters to ids, adds
/// blanks and EOS as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokenizer {
    settings: TextSettings,
    table: SymbolTable,
}

impl Tokenizer {
    /// A tokenizer with the built-in symbol table ([`SymbolTable::english`]): characters
    /// outside it are [`UNK`]. For text in other scripts build the table with
    /// [`SymbolTable::from_texts`] and use [`with_symbols`](Self::with_symbols).
    #[must_use]
    pub fn new(settings: &TextSettings) -> Self {
        Self::with_symbols(settings, SymbolTable::english())
    }

    /// A tokenizer with a given table, e.g. one read back from a cache manifest.
    #[must_use]
    pub fn with_symbols(settings: &TextSettings, table: SymbolTable) -> Self {
        Self {
            settings: settings.clone(),
            table,
        }
    }

    /// The settings it was built with.
    #[must_use]
    pub fn settings(&self) -> &TextSettings {
        &self.settings
    }

    /// Ids of already-cleaned text, with blanks and EOS as configured.
    #[must_use]
    pub fn encode(&self, cleaned: &str) -> Vec<u32> {
        self.encode_with_stats(cleaned).ids
    }

    /// Like [`encode`](Self::encode), and counts the characters encoded as [`UNK`].
    ///
    /// ```
    /// use gpufeed_text::{TextSettings, Tokenizer, UNK};
    /// let settings = TextSettings { add_eos: false, ..TextSettings::default() };
    /// let encoded = Tokenizer::new(&settings).encode_with_stats("a_b");
    /// assert_eq!(encoded.ids[1], UNK);
    /// assert_eq!(encoded.unknown, 1);
    /// ```
    #[must_use]
    pub fn encode_with_stats(&self, cleaned: &str) -> Encoded {
        let blank = self.settings.add_blank;
        let n = cleaned.chars().count();
        let mut ids = Vec::with_capacity(if blank { 2 * n + 2 } else { n + 1 });
        let mut unknown = 0;
        for c in cleaned.chars() {
            if blank {
                ids.push(BLANK);
            }
            ids.push(self.table.id(c).unwrap_or_else(|| {
                unknown += 1;
                UNK
            }));
        }
        if blank {
            ids.push(BLANK);
        }
        if self.settings.add_eos {
            ids.push(EOS);
        }
        Encoded { ids, unknown }
    }

    /// Cleans `raw` with the configured cleaner, then [`encode`](Self::encode)s it.
    #[must_use]
    pub fn encode_text(&self, raw: &str) -> Vec<u32> {
        self.encode(&clean(raw, self.settings.cleaner))
    }

    /// The text of `ids`, for tests and debugging: reserved ids (padding, blanks, EOS,
    /// unknown) are skipped, and an id past the table is written as U+FFFD.
    #[must_use]
    pub fn decode(&self, ids: &[u32]) -> String {
        ids.iter()
            .filter(|&&id| id >= FIRST_SYMBOL_ID)
            .map(|&id| self.table.symbol(id).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }

    /// The symbol table.
    #[must_use]
    pub fn symbols(&self) -> &SymbolTable {
        &self.table
    }

    /// Number of ids the model's embedding needs: every id this tokenizer emits is below it.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        self.table.vocab_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cleaner, PAD};

    fn settings(add_blank: bool, add_eos: bool) -> TextSettings {
        TextSettings {
            cleaner: Cleaner::English,
            add_blank,
            add_eos,
            use_normalized_text: true,
        }
    }

    #[test]
    fn table_version_1_is_pinned() {
        // Changing the table changes every cached id: bump TOKENIZER_VERSION with it.
        let table = SymbolTable::english();
        assert_eq!(table.symbols().iter().collect::<String>(), SYMBOLS_V1);
        assert_eq!(table.vocab_size(), 44);
        assert_eq!(crate::TOKENIZER_VERSION, 1);
        assert_eq!(table.id(' '), Some(4));
        assert_eq!(table.id('!'), Some(5));
        assert_eq!(table.id(']'), Some(17));
        assert_eq!(table.id('a'), Some(18));
        assert_eq!(table.id('z'), Some(43));
        assert_eq!(table.id('A'), None);
        assert_eq!(table.id('_'), None);
        assert_eq!(table.id('é'), None);
        assert_eq!(table.symbol(PAD), None);
        assert_eq!(table.symbol(UNK), None);
        assert_eq!(table.symbol(44), None);
        assert_eq!(table.symbol(18), Some('a'));
    }

    #[test]
    fn layouts() {
        let (a, b) = (18, 19);
        assert_eq!(Tokenizer::new(&settings(false, false)).encode("ab"), [a, b]);
        assert_eq!(
            Tokenizer::new(&settings(false, true)).encode("ab"),
            [a, b, EOS]
        );
        assert_eq!(
            Tokenizer::new(&settings(true, false)).encode("ab"),
            [BLANK, a, BLANK, b, BLANK]
        );
        assert_eq!(
            Tokenizer::new(&settings(true, true)).encode("ab"),
            [BLANK, a, BLANK, b, BLANK, EOS]
        );
        assert_eq!(
            Tokenizer::new(&settings(false, false)).encode(""),
            Vec::<u32>::new()
        );
        assert_eq!(Tokenizer::new(&settings(false, true)).encode(""), [EOS]);
        assert_eq!(Tokenizer::new(&settings(true, false)).encode(""), [BLANK]);
        assert_eq!(
            Tokenizer::new(&settings(true, true)).encode(""),
            [BLANK, EOS]
        );
    }

    #[test]
    fn underscore_and_tilde_are_unknown_not_blank_or_eos() {
        for add_blank in [false, true] {
            let tokenizer = Tokenizer::new(&settings(add_blank, false));
            let encoded = tokenizer.encode_with_stats("_~");
            let text_ids: Vec<u32> = encoded
                .ids
                .iter()
                .copied()
                .filter(|&id| id != BLANK)
                .collect();
            assert_eq!(text_ids, [UNK, UNK]);
            assert_eq!(encoded.unknown, 2);
            assert!(!encoded.ids.contains(&EOS));
            assert!(!encoded.ids.contains(&PAD));
        }
        let tokenizer = Tokenizer::new(&settings(false, false));
        assert_eq!(tokenizer.encode_text("a_b~c"), [18, UNK, 19, UNK, 20]);
    }

    #[test]
    fn non_ascii_and_capitals_are_unknown_when_not_cleaned() {
        let tokenizer = Tokenizer::new(&TextSettings {
            cleaner: Cleaner::None,
            add_blank: false,
            add_eos: false,
            use_normalized_text: true,
        });
        let encoded = tokenizer.encode_with_stats("Aé1");
        assert_eq!(encoded.ids, [UNK, UNK, UNK]);
        assert_eq!(encoded.unknown, 3);
        // The English cleaner turns the same text into known symbols.
        let english = Tokenizer::new(&settings(false, false))
            .encode_with_stats(&clean("Aé1", Cleaner::English));
        assert_eq!(english.unknown, 0);
    }

    #[test]
    fn decode_skips_reserved_ids() {
        let tokenizer = Tokenizer::new(&settings(true, true));
        let ids = tokenizer.encode_text("Dr. Who?");
        assert_eq!(tokenizer.decode(&ids), "doctor who?");
        assert_eq!(tokenizer.decode(&[PAD, EOS, BLANK, UNK, 18]), "a");
        assert_eq!(tokenizer.decode(&[18, 1000]), "a\u{fffd}");
    }

    #[test]
    fn dataset_table_round_trips_other_scripts() {
        let raw = [
            "Привет, мир",
            "日本語のテキスト",
            "Ελληνικά ΟΔΟΣ; Cafe\u{301} 42",
        ];
        for add_blank in [false, true] {
            let settings = TextSettings {
                cleaner: Cleaner::Unicode,
                add_blank,
                add_eos: true,
                use_normalized_text: true,
            };
            let cleaned: Vec<String> = raw.iter().map(|t| clean(t, settings.cleaner)).collect();
            let table = SymbolTable::from_texts(cleaned.iter().map(String::as_str));
            let tokenizer = Tokenizer::with_symbols(&settings, table);
            for (raw, cleaned) in raw.iter().zip(&cleaned) {
                let encoded = tokenizer.encode_with_stats(cleaned);
                assert_eq!(encoded.unknown, 0, "{raw}");
                assert!(!encoded.ids.contains(&UNK));
                assert_eq!(encoded.ids, tokenizer.encode_text(raw));
                assert_eq!(&tokenizer.decode(&encoded.ids), cleaned);
            }
            assert_eq!(
                tokenizer.decode(&tokenizer.encode_text("Привет, мир")),
                "привет, мир"
            );
            assert_eq!(
                tokenizer.decode(&tokenizer.encode_text("日本語のテキスト")),
                "日本語のテキスト"
            );
            // The built-in table knows none of it.
            let english = Tokenizer::new(&settings).encode_with_stats(&cleaned[0]);
            assert_eq!(english.unknown, "приветмир".chars().count());
        }
    }

    #[test]
    fn dataset_table_keeps_the_english_ids() {
        let english = SymbolTable::english();
        let table = SymbolTable::from_texts(["hello, world!", "привет", "digits 0 1 2 and A"]);
        assert!(table.symbols().starts_with(english.symbols()));
        for &c in english.symbols() {
            assert_eq!(table.id(c), english.id(c), "{c:?}");
        }
        let extra: String = table.symbols()[english.symbols().len()..].iter().collect();
        assert_eq!(extra, "012Aвеипрт", "by code point, each once");
        // Texts with only English symbols give exactly the built-in table.
        assert_eq!(SymbolTable::from_texts(["hello, world!", ""]), english);
        assert_eq!(SymbolTable::from_texts(std::iter::empty()), english);
    }

    #[test]
    fn dataset_table_serde_round_trip() {
        let table = SymbolTable::from_texts(["привет", "日本語", "\u{1f600}"]);
        let json = serde_json::to_string(&table).unwrap();
        let back: SymbolTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back, table);
        assert_eq!(back.id('日'), table.id('日'));
        assert_eq!(back.id('\u{1f600}'), table.id('\u{1f600}'));
        assert_eq!(back.vocab_size(), table.vocab_size());
    }

    #[test]
    fn table_serde_round_trip_and_validation() {
        let table = SymbolTable::english();
        let json = serde_json::to_string(&table).unwrap();
        assert!(json.starts_with(r#"{"format_version":1,"reserved":["<pad>","<eos>","<blank>","<unk>"],"symbols":[" ","!","\"""#), "{json}");
        let back: SymbolTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back, table);
        assert_eq!(back.id('q'), table.id('q'));

        let bad_format = json.replace("\"format_version\":1", "\"format_version\":2");
        let err = serde_json::from_str::<SymbolTable>(&bad_format).unwrap_err();
        assert!(
            err.to_string()
                .contains("Unsupported symbol table format `2`"),
            "{err}"
        );

        let bad_reserved = json.replace("<blank>", "_");
        assert!(serde_json::from_str::<SymbolTable>(&bad_reserved).is_err());

        let two_chars = r#"{"format_version":1,"reserved":["<pad>","<eos>","<blank>","<unk>"],"symbols":["ab"]}"#;
        let err = serde_json::from_str::<SymbolTable>(two_chars).unwrap_err();
        assert!(err.to_string().contains("`ab` at id 4"), "{err}");

        let duplicate = r#"{"format_version":1,"reserved":["<pad>","<eos>","<blank>","<unk>"],"symbols":["a","é","a"]}"#;
        let err = serde_json::from_str::<SymbolTable>(duplicate).unwrap_err();
        assert!(err.to_string().contains("ids 4 and 6"), "{err}");

        let non_ascii = SymbolTable::from_symbols(vec!['a', 'é']).unwrap();
        assert_eq!(non_ascii.id('é'), Some(5));
        assert_eq!(non_ascii.vocab_size(), 6);
    }
}
