//! Text cleaners: what a transcript goes through before the [tokenizer](crate::tokenizer).
//!
//! [`Cleaner::Unicode`], the default, keeps every script and runs, in this order:
//!
//! 1. Unicode NFC ([`nfc`]): a letter and its combining accent become one character, so
//!    "e\u{301}" and "é" are the same symbol.
//! 2. lowercase with [`str::to_lowercase`] (the full Unicode mapping, final sigma
//!    included: "ΟΔΟΣ" → "οδος"), then NFC again, because a lowercase letter may compose
//!    where its capital did not ("J\u{30c}" → "ǰ").
//! 3. [`collapse_whitespace`].
//!
//! Nothing is transliterated and nothing is expanded: digits stay digits, since number
//! words are language-specific.
//!
//! [`Cleaner::English`] runs, in this order:
//!
//! 1. [`transliterate`]: every non-ASCII character to ASCII with `deunicode` ("é" → "e",
//!    curly quotes → straight, "—" → "--"), except the currency signs `£ € ¥ ¢`, which the
//!    next step reads ("£500" → "five hundred pounds"; transliterating first is how Keith
//!    Ito's cleaner turned "£500" into "ps five hundred"). A character `deunicode` does not
//!    know is kept, so the tokenizer counts it as unknown instead of losing it.
//! 2. [`normalize_numbers`]: digits and regnal numerals
//!    to words.
//! 3. [`expand_abbreviations`]: the classic titles and post-nominals, on word boundaries
//!    only ("Dr. Smith" → "doctor smith"; "Morocco." stays "morocco.").
//! 4. [`expand_symbols`]: `&` → "and", `%` → "percent", a currency sign with no amount
//!    → its name.
//! 5. lowercase, then [`collapse_whitespace`] (runs of whitespace to one space, trimmed).
//!
//! [`Cleaner::Basic`] runs the same steps as [`Cleaner::Unicode`] (NFC, lowercase, collapse
//! whitespace), so its output is the same; it is kept as the name MyXTTS'
//! `basic_cleaners` maps to. [`Cleaner::None`] returns the text unchanged.
//!
//! Every cleaner is idempotent: cleaning cleaned text changes nothing (property-tested).
//!
//! [`clean_checked`] also says which characters a cleaner lost (transliterated or dropped),
//! so that a dataset in another script cleaned with `english` is reported, not silently
//! turned into ASCII.
//! `_` and `~` are ordinary characters here; the tokenizer maps them to
//! [`UNK`](crate::UNK), never to the blank or end-of-sequence ids.
//!
//! ```
//! use gpufeed_text::{clean, Cleaner};
//! assert_eq!(clean("  Привет,   МИР! 日本語 42 ", Cleaner::Unicode), "привет, мир! 日本語 42");
//! assert_eq!(
//!     clean("Dr. Smith went to Morocco. He paid £500 in 1455!", Cleaner::English),
//!     "doctor smith went to morocco. he paid five hundred pounds in fourteen fifty-five!"
//! );
//! assert_eq!(clean("  Cafe\u{301}   NOIR ", Cleaner::Basic), "café noir");
//! assert_eq!(clean("  As Is ", Cleaner::None), "  As Is ");
//! ```
//!
//! References: Keith Ito, `tacotron/text/cleaners.py` (the classic abbreviation list); the
//! failures of its substring-based descendants are in the project's research notes
//! (`myxtts.md` section 3.3).

use std::borrow::Cow;
use std::collections::HashSet;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::Cleaner;
use crate::numbers::normalize_numbers;

/// Titles: the period is always dropped ("Dr. Smith" → "doctor smith").
///
/// "St." is read "saint": in LJSpeech 15 of its 16 occurrences are saints ("St. James's",
/// "Bury St. Edmunds"); one is a street ("Giltspur St. Compter"). "Mrs." is "missus", the
/// spelling pronunciation dictionaries know (CMUdict), where Keith Ito wrote "misess".
const TITLES: [(&str, &str); 14] = [
    ("mrs", "missus"),
    ("mr", "mister"),
    ("drs", "doctors"),
    ("dr", "doctor"),
    ("st", "saint"),
    ("rev", "reverend"),
    ("lt", "lieutenant"),
    ("hon", "honorable"),
    ("sgt", "sergeant"),
    ("capt", "captain"),
    ("maj", "major"),
    ("gen", "general"),
    ("col", "colonel"),
    ("ft", "fort"),
];

/// Post-nominals: they often end a sentence ("Robarts & Co."), so the period is kept when
/// it ends the text. (Mid-text it is dropped: before a capital it may end a sentence or
/// not, "Co. Ltd.", "Esq. Ft. Worth".)
const POST_NOMINALS: [(&str, &str); 4] = [
    ("co", "company"),
    ("jr", "junior"),
    ("esq", "esquire"),
    ("ltd", "limited"),
];

/// Characters [`transliterate`] keeps for the number reader.
const CURRENCY_SIGNS: [char; 4] = ['£', '€', '¥', '¢'];

/// Cleans `text` with the given pipeline (see the [module docs](self)).
#[must_use]
pub fn clean(text: &str, cleaner: Cleaner) -> String {
    match cleaner {
        Cleaner::Unicode => unicode(text),
        Cleaner::English => english(text),
        Cleaner::Basic => basic(text),
        Cleaner::None => text.to_owned(),
    }
}

/// A cleaned text and the characters the cleaner lost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Checked {
    /// What [`clean`] returns.
    pub text: String,
    /// The characters the cleaner lost, as [`clean_checked`] defines them, in the order
    /// they first appear in the text; empty when nothing was lost.
    pub lost: Vec<char>,
}

/// Cleans `text` like [`clean`] and lists the characters the cleaner lost.
///
/// Let `N(s)` be `s` in NFC, lowercased, in NFC again (steps 1 and 2 of
/// [`Cleaner::Unicode`]). A character is *lost* when it occurs in `N(text)`, is not ASCII,
/// is not whitespace, and does not occur in `N(cleaned)`. Each is listed once, in the
/// order of its first occurrence in `N(text)`.
///
/// So transliteration and dropping count ("Привет" under `english` loses п р и в е т,
/// "café" loses é, "£5" loses £ for "five pounds", curly quotes are lost for straight
/// ones), while case, composition (NFC) and whitespace do not: under `unicode`, `basic` and
/// `none` nothing is ever lost. Replacing one ASCII character by another (digits by number
/// words) is not a loss either: it is what the English cleaner is for.
///
/// Cost: an ASCII text is checked for free; otherwise one normalisation of the text (and
/// of the output when it is not ASCII), one pass over it, and a set of the output's
/// non-ASCII characters.
///
/// ```
/// use gpufeed_text::{Cleaner, clean_checked};
/// let checked = clean_checked("Привет, café", Cleaner::English);
/// assert_eq!(checked.text, "privet, cafe");
/// assert_eq!(checked.lost, ['п', 'р', 'и', 'в', 'е', 'т', 'é']);
/// assert!(clean_checked("Привет, café", Cleaner::Unicode).lost.is_empty());
/// ```
#[must_use]
pub fn clean_checked(text: &str, cleaner: Cleaner) -> Checked {
    let cleaned = clean(text, cleaner);
    if text.is_ascii() {
        // N keeps ASCII ASCII: there is nothing to lose.
        return Checked {
            text: cleaned,
            lost: Vec::new(),
        };
    }
    let kept: HashSet<char> = if cleaned.is_ascii() {
        HashSet::new()
    } else {
        nfc_lowercase(&cleaned)
            .chars()
            .filter(|c| !c.is_ascii())
            .collect()
    };
    let mut seen = HashSet::new();
    let lost = nfc_lowercase(text)
        .chars()
        .filter(|&c| !c.is_ascii() && !c.is_whitespace() && !kept.contains(&c) && seen.insert(c))
        .collect();
    Checked {
        text: cleaned,
        lost,
    }
}

/// The default pipeline: NFC, lowercase, NFC, whitespace (see the [module docs](self)).
/// Every script is kept; digits stay digits.
///
/// ```
/// use gpufeed_text::clean::unicode;
/// assert_eq!(unicode("ΟΔΟΣ  Straße\t№ 5"), "οδος straße № 5");
/// ```
#[must_use]
pub fn unicode(text: &str) -> String {
    collapse_whitespace(&nfc_lowercase(text))
}

/// `text` in Unicode NFC (canonical composition); borrowed when it already is (always for
/// ASCII).
///
/// ```
/// use gpufeed_text::clean::nfc;
/// assert_eq!(nfc("Cafe\u{301}"), "Café");
/// ```
#[must_use]
pub fn nfc(text: &str) -> Cow<'_, str> {
    // The quick check answers Yes for most text without allocating; Maybe means compose.
    if text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.nfc().collect())
    }
}

/// NFC, lowercase, NFC: steps 1 and 2 of [`Cleaner::Unicode`].
fn nfc_lowercase(text: &str) -> String {
    let lower = nfc(text).to_lowercase();
    match nfc(&lower) {
        Cow::Borrowed(_) => lower,
        Cow::Owned(composed) => composed,
    }
}

/// The English pipeline: transliterate, numbers, abbreviations, symbols, lowercase,
/// whitespace.
///
/// ```
/// use gpufeed_text::clean::english;
/// assert_eq!(english("Mr. and Mrs. Smith, “St. Paul’s”"), "mister and missus smith, \"saint paul's\"");
/// ```
#[must_use]
pub fn english(text: &str) -> String {
    let text = transliterate(text);
    let text = normalize_numbers(&text);
    let text = expand_abbreviations(&text);
    let text = expand_symbols(&text);
    collapse_whitespace(&text.to_lowercase())
}

/// NFC, lowercase and collapse whitespace: the same steps as [`unicode`] (since cleaner
/// version 2, which added NFC).
///
/// ```
/// use gpufeed_text::clean::basic;
/// assert_eq!(basic("\tHello,\n  World  "), "hello, world");
/// assert_eq!(basic("NOE\u{308}L"), "noël");
/// ```
#[must_use]
pub fn basic(text: &str) -> String {
    unicode(text)
}

/// Runs of Unicode whitespace to one space, without leading or trailing space.
///
/// ```
/// use gpufeed_text::clean::collapse_whitespace;
/// assert_eq!(collapse_whitespace("  a \t b\r\n"), "a b");
/// ```
#[must_use]
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Non-ASCII characters to ASCII with `deunicode`, except the currency signs `£ € ¥ ¢`.
///
/// A character `deunicode` does not know is tried in lowercase, then kept as it is (so that
/// it reaches the tokenizer as an unknown symbol rather than vanishing).
///
/// ```
/// use gpufeed_text::clean::transliterate;
/// assert_eq!(transliterate("“Café” — £5"), "\"Cafe\" -- £5");
/// ```
#[must_use]
pub fn transliterate(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() || CURRENCY_SIGNS.contains(&c) {
            out.push(c);
        } else if let Some(ascii) = deunicode::deunicode_char(c) {
            out.push_str(ascii);
        } else {
            for lower in c.to_lowercase() {
                match deunicode::deunicode_char(lower) {
                    Some(ascii) => out.push_str(ascii),
                    None => out.push(lower),
                }
            }
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Expands the classic abbreviations (Keith Ito's list: mr. mrs. dr. drs. st. co. jr. maj.
/// gen. rev. lt. hon. sgt. capt. esq. ltd. col. ft.), case-insensitively, where the
/// abbreviation is a whole word followed by a period: "Dr. Smith" → "doctor smith", while
/// "Morocco." and "Dr" without a period stay. Expansions are lowercase. A letter glued
/// after the period gets a space ("Mr.Smith" → "mister Smith").
///
/// ```
/// use gpufeed_text::clean::expand_abbreviations;
/// assert_eq!(expand_abbreviations("Dr. Jones of Morocco."), "doctor Jones of Morocco.");
/// assert_eq!(expand_abbreviations("Robarts & Co."), "Robarts & company.");
/// ```
#[must_use]
pub fn expand_abbreviations(text: &str) -> String {
    if !text.contains('.') {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if !c.is_ascii_alphabetic() || (i > 0 && is_word_char(chars[i - 1])) {
            out.push(c);
            i += 1;
            continue;
        }
        let end = chars[i..]
            .iter()
            .position(|c| !c.is_ascii_alphabetic())
            .map_or(chars.len(), |k| i + k);
        let word: String = chars[i..end]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase();
        let found = if chars.get(end) == Some(&'.') {
            let title = TITLES
                .iter()
                .find(|(a, _)| *a == word)
                .map(|(_, e)| (*e, false));
            title.or_else(|| {
                POST_NOMINALS
                    .iter()
                    .find(|(a, _)| *a == word)
                    .map(|(_, e)| (*e, true))
            })
        } else {
            None
        };
        match found {
            Some((expansion, post_nominal)) => {
                out.push_str(expansion);
                let after = end + 1;
                // Only closing quotes or brackets (or nothing) left: the period ends the text.
                let sentence_ends = chars[after..]
                    .iter()
                    .all(|c| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | ']'));
                if post_nominal && sentence_ends {
                    out.push('.');
                } else if chars.get(after).is_some_and(|c| c.is_alphanumeric()) {
                    out.push(' ');
                }
                i = after;
            }
            None => {
                out.extend(&chars[i..end]);
                i = end;
            }
        }
    }
    out
}

/// `&` → "and", `%` → "percent", and a currency sign left without an amount → its name
/// (`$` "dollar", `£` "pound", `€` "euro", `¥` "yen", `¢` "cent"), with spaces around.
///
/// ```
/// use gpufeed_text::clean::expand_symbols;
/// assert_eq!(expand_symbols("Smith & Wesson"), "Smith  and  Wesson");
/// ```
#[must_use]
pub fn expand_symbols(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let word = match c {
            '&' => "and",
            '%' => "percent",
            '$' => "dollar",
            '£' => "pound",
            '€' => "euro",
            '¥' => "yen",
            '¢' => "cent",
            _ => {
                out.push(c);
                continue;
            }
        };
        out.push(' ');
        out.push_str(word);
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morocco_is_not_an_abbreviation() {
        assert_eq!(english("Morocco."), "morocco.");
        assert_eq!(
            english("Dr. Smith went to Morocco. He paid 21 dollars, 3 times!"),
            "doctor smith went to morocco. he paid twenty-one dollars, three times!"
        );
        assert_eq!(
            english("the Tobacco Co. and taco."),
            "the tobacco company and taco."
        );
    }

    #[test]
    fn titles() {
        assert_eq!(english("Dr. Smith"), "doctor smith");
        assert_eq!(english("Mr. and Mrs. Kennedy"), "mister and missus kennedy");
        assert_eq!(english("MR. JONES, DR.WHO"), "mister jones, doctor who");
        assert_eq!(english("Drs. Perry and Clark"), "doctors perry and clark");
        assert_eq!(english("St. James's Palace"), "saint james's palace");
        assert_eq!(
            english("Capt. Hook, Lt. Col. Sgt. Maj. Gen. Rev. Hon. Ft. Worth"),
            "captain hook, lieutenant colonel sergeant major general reverend honorable fort worth"
        );
        // No period, or inside a word: not an abbreviation.
        assert_eq!(
            english("Dr Smith, mister, Dr.."),
            "dr smith, mister, doctor."
        );
        assert_eq!(english("first.st. word"), "first.saint word");
        assert_eq!(english("worst. best."), "worst. best.");
    }

    #[test]
    fn post_nominals_keep_a_sentence_end() {
        assert_eq!(
            english("T. Briggs, Esq., Robarts & Co., Lombard Street."),
            "t. briggs, esquire, robarts and company, lombard street."
        );
        assert_eq!(english("Robarts & Co."), "robarts and company.");
        assert_eq!(english("Smith Jr. He left."), "smith junior he left.");
        assert_eq!(english("\"Robarts & Co.\")"), "\"robarts and company.\")");
        assert_eq!(
            english("Hook & Co. Ltd., Esq. Ft. Worth"),
            "hook and company limited, esquire fort worth"
        );
        assert_eq!(
            english("Smith Jr. and Ltd. co"),
            "smith junior and limited co"
        );
    }

    #[test]
    fn non_ascii() {
        assert_eq!(
            english("Café déjà vu, raison d'être"),
            "cafe deja vu, raison d'etre"
        );
        assert_eq!(english("“quoted” ’tis"), "\"quoted\" 'tis");
        assert_eq!(
            english("£500 and upwards"),
            "five hundred pounds and upwards"
        );
        assert_eq!(english("£5"), "five pounds");
        assert_eq!(english("Müller"), "muller");
        assert_eq!(english("Straße"), "strasse");
        assert_eq!(english("a — b"), "a -- b");
        assert_eq!(english("costs ½"), "costs one/two");
        assert_eq!(english("the £ sign"), "the pound sign");
    }

    #[test]
    fn symbols() {
        assert_eq!(english("Smith & Wesson"), "smith and wesson");
        assert_eq!(english("AT&T"), "at and t");
        assert_eq!(english("90% of"), "ninety percent of");
        assert_eq!(english("the $ sign"), "the dollar sign");
    }

    #[test]
    fn empty_and_whitespace() {
        for cleaner in [Cleaner::Unicode, Cleaner::English, Cleaner::Basic] {
            assert_eq!(clean("", cleaner), "");
            assert_eq!(clean(" \t\r\n ", cleaner), "");
            assert_eq!(clean("\u{a0}\u{2003}", cleaner), "");
        }
        assert_eq!(clean(" \t ", Cleaner::None), " \t ");
    }

    #[test]
    fn reserved_looking_characters_stay_text() {
        assert_eq!(english("a_b~c"), "a_b~c");
        assert_eq!(basic("A_B~C"), "a_b~c");
    }

    #[test]
    fn unicode_keeps_every_script() {
        assert_eq!(unicode("Привет, МИР"), "привет, мир");
        assert_eq!(unicode("日本語のテキスト"), "日本語のテキスト");
        assert_eq!(unicode("Ελληνικά ΟΔΟΣ"), "ελληνικά οδος", "final sigma");
        assert_eq!(unicode("مرحبا  بالعالم"), "مرحبا بالعالم");
        assert_eq!(
            unicode("Dr. Smith paid $3.50"),
            "dr. smith paid $3.50",
            "no expansion"
        );
        assert_eq!(unicode("“Café” — ½"), "“café” — ½", "no transliteration");
        assert_eq!(unicode("a_b~C"), "a_b~c");
    }

    #[test]
    fn unicode_and_basic_compose() {
        // Decomposed and precomposed spellings become one symbol.
        for cleaner in [Cleaner::Unicode, Cleaner::Basic] {
            assert_eq!(clean("Cafe\u{301}", cleaner), "café");
            assert_eq!(clean("Cafe\u{301}", cleaner), clean("Café", cleaner));
            assert_eq!(clean("\u{212b}ngstr\u{f6}m", cleaner), "ångström");
            // A lowercase letter may compose where its capital did not.
            assert_eq!(clean("J\u{30c}", cleaner), "\u{1f0}");
            assert_eq!(clean("\u{130}", cleaner), "i\u{307}");
        }
        assert_eq!(clean("Cafe\u{301}", Cleaner::None), "Cafe\u{301}");
        assert_eq!(clean("Cafe\u{301}", Cleaner::English), "cafe");
    }

    #[test]
    fn nfc_borrows_when_already_composed() {
        assert!(matches!(nfc("plain ascii"), Cow::Borrowed(_)));
        assert!(matches!(nfc("café привет 日本"), Cow::Borrowed(_)));
        assert!(matches!(nfc("cafe\u{301}"), Cow::Owned(_)));
    }

    fn lost(text: &str, cleaner: Cleaner) -> String {
        clean_checked(text, cleaner).lost.into_iter().collect()
    }

    #[test]
    fn english_loses_what_it_transliterates() {
        let checked = clean_checked("Привет", Cleaner::English);
        assert_eq!(checked.text, "privet");
        assert_eq!(checked.lost, ['п', 'р', 'и', 'в', 'е', 'т']);
        // Distinct, in first-seen order, lowercase.
        assert_eq!(lost("Мама мыла раму", Cleaner::English), "маылру");
        assert_eq!(
            lost("日本語のテキスト", Cleaner::English),
            "日本語のテキスト"
        );
        assert_eq!(
            lost("Café, naïve, Müller, Straße", Cleaner::English),
            "éïüß"
        );
        assert_eq!(
            lost("Cafe\u{301}", Cleaner::English),
            "é",
            "decomposed counts as é"
        );
        assert_eq!(lost("“quoted” — £5", Cleaner::English), "“”—£");
        // ASCII in, nothing lost, whatever the expansion.
        assert_eq!(lost("Dr. Smith paid $3.50", Cleaner::English), "");
        // Whitespace is collapsed, not lost.
        assert_eq!(lost("a\u{a0}b\u{2003}c", Cleaner::English), "");
    }

    #[test]
    fn keeping_cleaners_lose_nothing() {
        let texts = [
            "Привет, МИР",
            "日本語のテキスト",
            "Café, naïve, Müller, Straße",
            "Cafe\u{301} NOE\u{308}L",
            "ΟΔΟΣ \u{212b} J\u{30c} \u{130}",
            "“quoted” — £5\u{a0}½",
        ];
        for cleaner in [Cleaner::Unicode, Cleaner::Basic, Cleaner::None] {
            for text in texts {
                let checked = clean_checked(text, cleaner);
                assert_eq!(checked.text, clean(text, cleaner));
                assert!(checked.lost.is_empty(), "{cleaner:?} {text:?}: {checked:?}");
            }
        }
    }

    #[test]
    fn whitespace_is_collapsed_and_trimmed() {
        assert_eq!(
            english("  Multiple   spaces\tand\nnewlines  "),
            "multiple spaces and newlines"
        );
    }
}
