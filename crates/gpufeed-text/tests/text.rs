//! Cleaner and tokenizer properties, and the golden outputs that pin `CLEANER_VERSION`.

use gpufeed_text::numbers::{cardinal, normalize_numbers, ordinal, year};
use gpufeed_text::{
    BLANK, CLEANER_VERSION, Cleaner, EOS, FIRST_SYMBOL_ID, PAD, SymbolTable, TextSettings,
    Tokenizer, UNK, clean, clean_checked,
};
use proptest::prelude::*;

/// Golden English cleaner outputs. If one changes on purpose, update it here AND bump
/// `CLEANER_VERSION`, or caches keyed on the old version keep stale tokens.
const GOLDEN: [(&str, &str); 16] = [
    (
        "Dr. Smith went to Morocco.",
        "doctor smith went to morocco.",
    ),
    (
        "Mr. and Mrs. Smith, St. Paul's",
        "mister and missus smith, saint paul's",
    ),
    ("£500 and upwards", "five hundred pounds and upwards"),
    (
        "$3.50, $1.50, $1, $20,000",
        "three dollars, fifty cents, one dollar, fifty cents, one dollar, twenty thousand dollars",
    ),
    (
        "On the 14th June, 1800, 1803, 1455, 2005",
        "on the fourteenth june, eighteen hundred, eighteen oh three, fourteen fifty-five, two thousand five",
    ),
    (
        "3.5 and 1,000 and 42 and 22nd",
        "three point five and one thousand and forty-two and twenty-second",
    ),
    (
        "5719 writs, 7020 men, 1308 in",
        "five thousand, seven hundred nineteen writs, seven thousand twenty men, thirteen oh eight in",
    ),
    (
        "at 12:30 p.m., 10:05 and 10:00",
        "at twelve:thirty p.m., ten:oh five and ten o'clock",
    ),
    (
        "George III., Charles I. in, World War II",
        "george the third, charles the first in, world war two",
    ),
    (
        "serial No. C2766, Box 2915, page 249",
        "serial number c two seven six six, box two nine one five, page two forty-nine",
    ),
    ("“Café” — naïve ’tis", "\"cafe\" -- naive 'tis"),
    ("Smith & Co.", "smith and company."),
    (
        "  Multiple   spaces\tand\nnewlines  ",
        "multiple spaces and newlines",
    ),
    ("a_b~c", "a_b~c"),
    (
        "in '64 and the 1920s, a .38",
        "in 'sixty-four and the nineteen twenties, a thirty-eight",
    ),
    ("", ""),
];

/// Golden outputs of the `unicode` cleaner, which `basic` shares since version 2.
const GOLDEN_UNICODE: [(&str, &str); 9] = [
    ("Привет,  МИР!", "привет, мир!"),
    ("日本語のテキスト", "日本語のテキスト"),
    ("ΟΔΟΣ ΚΑΙ Ο ΔΡΟΜΟΣ", "οδος και ο δρομος"),
    ("Cafe\u{301} NOE\u{308}L", "café noël"),
    ("\u{212b}ngstr\u{f6}m J\u{30c}", "ångström \u{1f0}"),
    (
        "Dr. Smith paid $3.50 on the 1st.",
        "dr. smith paid $3.50 on the 1st.",
    ),
    ("“Café” — ½ a_b~c", "“café” — ½ a_b~c"),
    (
        "  Multiple \u{a0}\u{2003} spaces\tand\nnewlines  ",
        "multiple spaces and newlines",
    ),
    ("", ""),
];

#[test]
fn golden_outputs_pin_the_cleaner_version() {
    assert_eq!(CLEANER_VERSION, 2, "update GOLDEN with the new outputs");
    for (raw, cleaned) in GOLDEN {
        assert_eq!(clean(raw, Cleaner::English), cleaned, "{raw:?}");
    }
    for (raw, cleaned) in GOLDEN_UNICODE {
        assert_eq!(clean(raw, Cleaner::Unicode), cleaned, "{raw:?}");
        assert_eq!(clean(raw, Cleaner::Basic), cleaned, "{raw:?}");
    }
}

fn settings(cleaner: Cleaner, add_blank: bool, add_eos: bool) -> TextSettings {
    TextSettings {
        cleaner,
        add_blank,
        add_eos,
        use_normalized_text: true,
    }
}

const CLEANERS: [Cleaner; 4] = [
    Cleaner::Unicode,
    Cleaner::English,
    Cleaner::Basic,
    Cleaner::None,
];

fn any_cleaner() -> impl Strategy<Value = Cleaner> {
    prop::sample::select(CLEANERS.to_vec())
}

fn any_settings() -> impl Strategy<Value = TextSettings> {
    (any_cleaner(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(cleaner, add_blank, add_eos, use_normalized_text)| TextSettings {
            cleaner,
            add_blank,
            add_eos,
            use_normalized_text,
        },
    )
}

/// Text that looks like transcripts: words, numbers in every form the cleaner reads,
/// abbreviations, currency, punctuation, non-ASCII and odd whitespace.
fn transcript_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[A-Za-z]{1,8}",
        "[0-9]{1,6}",
        "[0-9]{1,3}(,[0-9]{3}){0,2}",
        "[0-9]{1,3}\\.[0-9]{1,3}",
        "[$£€¥][0-9]{1,4}(\\.[0-9]{2})?",
        "[0-9]{1,3}(st|nd|rd|th|s|%)",
        "[0-9]{1,2}:[0-9]{2}",
        "(Mr|Mrs|Dr|St|Co|Jr|Ltd|No|Box|Nos|Morocco|George|Charles|Chapter)\\.?",
        "(I|II|III|IV|V|VIII|X|XIV)\\.?",
        "[A-Z]{1,3}[0-9]{1,5}",
        "['.#][0-9]{2}",
        "[ \t\n.,;:!?\"'()\\-&_~]",
        "[éüçß“”’—½²€£]",
        "[А-Яа-яЁё]{1,8}",
        "[ぁ-ゖ一-龯]{1,4}",
        "[Α-Ωα-ωΣς]{1,6}",
        "[a-zA-Z][\u{300}-\u{36f}]{1,2}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.join(" "))
}

/// Text made only of the symbol table's characters.
fn known_symbols() -> impl Strategy<Value = String> {
    let symbols: Vec<char> = SymbolTable::english().symbols().to_vec();
    prop::collection::vec(prop::sample::select(symbols), 0..64)
        .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn clean_never_panics(text in any::<String>(), cleaner in any_cleaner()) {
        let _ = clean(&text, cleaner);
    }

    #[test]
    fn clean_never_panics_on_transcripts(text in transcript_like(), cleaner in any_cleaner()) {
        let _ = clean(&text, cleaner);
    }

    #[test]
    fn every_cleaner_is_idempotent(text in any::<String>()) {
        for cleaner in CLEANERS {
            let once = clean(&text, cleaner);
            prop_assert_eq!(clean(&once, cleaner), once, "{:?}", cleaner);
        }
    }

    #[test]
    fn every_cleaner_is_idempotent_on_transcripts(text in transcript_like()) {
        for cleaner in CLEANERS {
            let once = clean(&text, cleaner);
            prop_assert_eq!(clean(&once, cleaner), once, "{:?}", cleaner);
        }
    }

    #[test]
    fn basic_is_unicode(text in any::<String>()) {
        prop_assert_eq!(clean(&text, Cleaner::Basic), clean(&text, Cleaner::Unicode));
    }

    #[test]
    fn keeping_cleaners_lose_nothing(text in any::<String>(), cleaner in prop_oneof![
        Just(Cleaner::Unicode), Just(Cleaner::Basic), Just(Cleaner::None)
    ]) {
        let checked = clean_checked(&text, cleaner);
        prop_assert_eq!(&checked.text, &clean(&text, cleaner));
        prop_assert!(checked.lost.is_empty(), "{:?}", checked.lost);
    }

    #[test]
    fn lost_characters_are_distinct_non_ascii_and_absent(text in transcript_like(), cleaner in any_cleaner()) {
        let checked = clean_checked(&text, cleaner);
        let mut seen = std::collections::HashSet::new();
        for &c in &checked.lost {
            prop_assert!(!c.is_ascii() && !c.is_whitespace(), "{:?}", c);
            prop_assert!(seen.insert(c), "{:?} twice", c);
            prop_assert!(!checked.text.contains(c), "{:?} is in {:?}", c, checked.text);
        }
    }

    #[test]
    fn dataset_table_ignores_text_order(mut texts in prop::collection::vec(transcript_like(), 0..8), seed: u64) {
        let table = SymbolTable::from_texts(texts.iter().map(String::as_str));
        // A deterministic shuffle from the seed, and duplicated texts: same table.
        let n = texts.len().max(1);
        texts.rotate_left(usize::try_from(seed % n as u64).unwrap_or(0));
        texts.reverse();
        texts.extend(texts.clone());
        prop_assert_eq!(SymbolTable::from_texts(texts.iter().map(String::as_str)), table.clone());
        let english = SymbolTable::english();
        prop_assert!(table.symbols().starts_with(english.symbols()));
        let extra = &table.symbols()[english.symbols().len()..];
        prop_assert!(extra.windows(2).all(|w| w[0] < w[1]), "sorted, distinct: {:?}", extra);
    }

    #[test]
    fn dataset_table_round_trips_every_cleaned_text(texts in prop::collection::vec(any::<String>(), 1..6), settings in any_settings()) {
        let cleaned: Vec<String> = texts.iter().map(|t| clean(t, settings.cleaner)).collect();
        let table = SymbolTable::from_texts(cleaned.iter().map(String::as_str));
        let tokenizer = Tokenizer::with_symbols(&settings, table);
        for (raw, cleaned) in texts.iter().zip(&cleaned) {
            let encoded = tokenizer.encode_with_stats(cleaned);
            prop_assert_eq!(encoded.unknown, 0);
            prop_assert_eq!(&tokenizer.decode(&encoded.ids), cleaned);
            prop_assert_eq!(tokenizer.encode_text(raw), encoded.ids);
        }
    }

    #[test]
    fn english_leaves_no_digits_capitals_or_edge_spaces(text in transcript_like()) {
        let cleaned = clean(&text, Cleaner::English);
        prop_assert!(!cleaned.chars().any(|c| c.is_ascii_digit() || c.is_ascii_uppercase()), "{}", cleaned);
        prop_assert_eq!(cleaned.trim(), cleaned.as_str());
        prop_assert!(!cleaned.contains("  "));
    }

    #[test]
    fn encode_decode_round_trips_known_symbols(text in known_symbols(), add_blank: bool, add_eos: bool) {
        let tokenizer = Tokenizer::new(&settings(Cleaner::English, add_blank, add_eos));
        let encoded = tokenizer.encode_with_stats(&text);
        prop_assert_eq!(encoded.unknown, 0);
        prop_assert_eq!(tokenizer.decode(&encoded.ids), text.clone());
        let n = text.chars().count();
        let expected_len = if add_blank { 2 * n + 1 } else { n } + usize::from(add_eos);
        prop_assert_eq!(encoded.ids.len(), expected_len);
    }

    #[test]
    fn encode_decode_round_trips_cleaned_text(text in transcript_like()) {
        let tokenizer = Tokenizer::new(&settings(Cleaner::English, true, true));
        let cleaned = clean(&text, Cleaner::English);
        let encoded = tokenizer.encode_with_stats(&cleaned);
        let known: String = cleaned.chars().filter(|&c| tokenizer.symbols().id(c).is_some()).collect();
        prop_assert_eq!(tokenizer.decode(&encoded.ids), known);
        prop_assert_eq!(encoded.unknown, cleaned.chars().filter(|&c| tokenizer.symbols().id(c).is_none()).count());
    }

    #[test]
    fn ids_stay_below_vocab_size(text in any::<String>(), settings in any_settings()) {
        let tokenizer = Tokenizer::new(&settings);
        let vocab = tokenizer.vocab_size();
        prop_assert!(tokenizer.encode_text(&text).iter().all(|&id| (id as usize) < vocab));
    }

    #[test]
    fn text_never_produces_pad_blank_or_eos(text in any::<String>(), cleaner in any_cleaner()) {
        let tokenizer = Tokenizer::new(&settings(cleaner, false, false));
        let ids = tokenizer.encode_text(&text);
        prop_assert!(ids.iter().all(|&id| id == UNK || id >= FIRST_SYMBOL_ID), "{:?}", ids);
        prop_assert!(!ids.contains(&PAD) && !ids.contains(&BLANK) && !ids.contains(&EOS));
    }

    #[test]
    fn known_symbols_never_produce_reserved_ids(text in known_symbols()) {
        let tokenizer = Tokenizer::new(&settings(Cleaner::None, false, false));
        prop_assert!(tokenizer.encode(&text).iter().all(|&id| id >= FIRST_SYMBOL_ID));
    }

    #[test]
    fn number_words_never_panic_and_have_no_digits(n: u64) {
        for words in [cardinal(n), ordinal(n), year(n)] {
            prop_assert!(!words.is_empty());
            prop_assert!(words.chars().all(|c| c.is_ascii_lowercase() || c == ' ' || c == '-' || c == ','), "{}", words);
        }
    }

    #[test]
    fn normalize_numbers_removes_every_digit(text in "[0-9$£.,:'#A-Z a-z%-]{0,40}") {
        let normalised = normalize_numbers(&text);
        prop_assert!(!normalised.chars().any(|c| c.is_ascii_digit()), "{:?} -> {:?}", text, normalised);
    }
}
