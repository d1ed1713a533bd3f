//! Measures how closely the English cleaner reproduces LJSpeech's own normalisation.
//!
//! LJSpeech 1.1's `metadata.csv` has, per clip, the raw transcript and a normalised one in
//! which numbers, ordinals, money and regnal numerals are spelled out. The normalised column
//! still writes abbreviations ("Mr.", "Dr.") as they are, so comparing our cleaned raw text
//! with the bare normalised text would count every "Mr." as our error. The comparison is
//! therefore made after the same cleaner on both sides:
//!
//! ```text
//! english(raw) == english(normalised)
//! ```
//!
//! On the normalised column (which has no digits) the cleaner only transliterates,
//! expands abbreviations and `&`, lowercases and collapses whitespace, so what is compared
//! is the reading of numbers, money, times and numerals. The share that matters is over
//! the lines whose two columns differ ([`Measurement::differing`]); the lines whose columns
//! are identical match by construction and are reported only for completeness.
//!
//! Each mismatching line is split into word-level differences (a longest common
//! subsequence of words) and every difference gets a [`Kind`]; a line is counted once
//! under each kind it shows.
//!
//! To rerun it:
//!
//! ```text
//! cargo run -p gpufeed-text --example ljspeech_measure [-- PATH/metadata.csv [--all]]
//! cargo test -p gpufeed-text --test ljspeech -- --nocapture
//! ```
//!
//! ```
//! use gpufeed_text::ljspeech::{measure, parse_metadata};
//! let metadata = "LJ001-0007|of about 1455,|of about fourteen fifty-five,\r\n\
//!                 LJ002-0016|Mr. Akerman's time|Mr. Akerman's time\r\n";
//! let m = measure(&parse_metadata(metadata)?);
//! assert_eq!((m.lines, m.differing, m.exact_differing), (2, 1, 1));
//! # Ok::<(), gpufeed_text::ljspeech::MetadataError>(())
//! ```

use std::fmt;

use serde::Serialize;

use crate::clean::english;

/// A line of `metadata.csv` that is not `id|raw|normalised` (or `id|raw`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Metadata line {line} has {fields} `|`-separated fields, expected 2 or 3: `{text}`")]
pub struct MetadataError {
    /// 1-based line number.
    pub line: usize,
    /// Number of fields found.
    pub fields: usize,
    /// The line, shortened to 80 characters.
    pub text: String,
}

/// One transcript of `metadata.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transcript<'a> {
    /// Clip id, e.g. `LJ001-0001`.
    pub id: &'a str,
    /// The transcript as written.
    pub raw: &'a str,
    /// LJSpeech's normalised transcript (the raw one when the line has two fields).
    pub normalized: &'a str,
}

/// Splits LJSpeech metadata: one `id|raw|normalised` per line, LF or CRLF, `"` as plain
/// text (no CSV quoting), blank lines skipped.
///
/// # Errors
///
/// [`MetadataError`] for a line with fewer than 2 or more than 3 fields.
pub fn parse_metadata(content: &str) -> Result<Vec<Transcript<'_>>, MetadataError> {
    let mut out = Vec::new();
    for (k, line) in content.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('|').collect();
        match fields.as_slice() {
            [id, raw, normalized] => out.push(Transcript {
                id,
                raw,
                normalized,
            }),
            [id, raw] => out.push(Transcript {
                id,
                raw,
                normalized: raw,
            }),
            _ => {
                return Err(MetadataError {
                    line: k + 1,
                    fields: fields.len(),
                    text: line.chars().take(80).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// What a word-level difference between our reading and LJSpeech's is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One side says "thousand" and the other does not: "one thousand four hundred pounds"
    /// against LJSpeech's "fourteen hundred pounds", or a year against a quantity.
    Thousands,
    /// One side reads digit by digit ("two five one five"), the other does not.
    DigitByDigit,
    /// One side says "hundred" where the other reads in pairs ("one hundred seventeen"
    /// against "one seventeen", "six hundred two" against "six oh two").
    Pairs,
    /// Any other difference with number words.
    OtherNumber,
    /// A difference without number words: LJSpeech's own edits and typos.
    NoNumber,
}

impl Kind {
    /// All kinds, in report order.
    pub const ALL: [Kind; 5] = [
        Kind::Thousands,
        Kind::DigitByDigit,
        Kind::Pairs,
        Kind::OtherNumber,
        Kind::NoNumber,
    ];

    /// A short description for the report.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Thousands => {
                "\"thousand\" on one side only (1400 as fourteen hundred; year or quantity)"
            }
            Kind::DigitByDigit => "digit by digit on one side only (house and box numbers)",
            Kind::Pairs => "pairs against \"hundred\" (one seventeen / one hundred seventeen)",
            Kind::OtherNumber => "other number reading",
            Kind::NoNumber => "no number involved (transcript edits, typos)",
        }
    }
}

/// One mismatching line: the differing words on each side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// Clip id.
    pub id: String,
    /// Our words, where they differ.
    pub ours: String,
    /// LJSpeech's words, where they differ.
    pub theirs: String,
}

/// Lines of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindCount {
    /// The kind.
    pub kind: Kind,
    /// Mismatching lines that show it.
    pub lines: usize,
    /// The first few of them.
    pub examples: Vec<Example>,
}

/// The result of [`measure`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Measurement {
    /// Transcripts compared.
    pub lines: usize,
    /// Transcripts whose raw and normalised columns differ.
    pub differing: usize,
    /// Transcripts where `english(raw) == english(normalised)`.
    pub exact: usize,
    /// Of those, the ones whose columns differ.
    pub exact_differing: usize,
    /// Mismatching lines per kind (a line may show several kinds).
    pub kinds: Vec<KindCount>,
    /// Every mismatch, in file order.
    pub mismatches: Vec<Example>,
}

impl Measurement {
    /// Share of all lines reproduced exactly, 0 to 1.
    #[must_use]
    pub fn exact_share(&self) -> f64 {
        ratio(self.exact, self.lines)
    }

    /// Share of the lines whose columns differ that are reproduced exactly, 0 to 1: the
    /// figure that measures the cleaner.
    #[must_use]
    pub fn differing_share(&self) -> f64 {
        ratio(self.exact_differing, self.differing)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// Examples kept per kind.
const EXAMPLES_PER_KIND: usize = 5;

/// Cleans both columns of every transcript with the English cleaner and compares them.
#[must_use]
pub fn measure(transcripts: &[Transcript<'_>]) -> Measurement {
    let mut m = Measurement {
        lines: transcripts.len(),
        differing: 0,
        exact: 0,
        exact_differing: 0,
        kinds: Kind::ALL
            .iter()
            .map(|&kind| KindCount {
                kind,
                lines: 0,
                examples: Vec::new(),
            })
            .collect(),
        mismatches: Vec::new(),
    };
    for t in transcripts {
        let differs = t.raw != t.normalized;
        m.differing += usize::from(differs);
        let ours = english(t.raw);
        let theirs = english(t.normalized);
        if ours == theirs {
            m.exact += 1;
            m.exact_differing += usize::from(differs);
            continue;
        }
        let hunks = word_diff(&ours, &theirs);
        let mut kinds: Vec<Kind> = hunks.iter().map(|(a, b)| classify(a, b)).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let example = Example {
            id: t.id.to_owned(),
            ours: hunks
                .iter()
                .map(|(a, _)| a.join(" "))
                .collect::<Vec<_>>()
                .join(" … "),
            theirs: hunks
                .iter()
                .map(|(_, b)| b.join(" "))
                .collect::<Vec<_>>()
                .join(" … "),
        };
        for kind in kinds {
            if let Some(count) = m.kinds.iter_mut().find(|c| c.kind == kind) {
                count.lines += 1;
                if count.examples.len() < EXAMPLES_PER_KIND {
                    count.examples.push(example.clone());
                }
            }
        }
        m.mismatches.push(example);
    }
    m
}

/// Number words, for telling number differences from the rest.
const NUMBER_WORDS: [&str; 33] = [
    "zero",
    "oh",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "point",
];

fn is_number_word(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_ascii_alphabetic());
    word.split('-').any(|part| {
        NUMBER_WORDS.contains(&part)
            || NUMBER_WORDS.iter().any(|n| {
                part.strip_prefix(n)
                    .is_some_and(|s| ["th", "st", "nd", "rd", "s", "ieth", "teenth"].contains(&s))
            })
            || [
                "first", "second", "third", "fifth", "eighth", "ninth", "twelfth",
            ]
            .contains(&part)
    })
}

fn bare(word: &str) -> &str {
    word.trim_matches(|c: char| !c.is_ascii_alphabetic())
}

fn classify(ours: &[&str], theirs: &[&str]) -> Kind {
    if !ours.iter().chain(theirs).any(|w| is_number_word(w)) {
        return Kind::NoNumber;
    }
    let says = |side: &[&str], word: &str| side.iter().any(|w| bare(w) == word);
    if says(ours, "thousand") != says(theirs, "thousand") {
        return Kind::Thousands;
    }
    let digits =
        |side: &[&str]| side.len() >= 2 && side.iter().all(|w| ONE_DIGIT.contains(&bare(w)));
    if digits(ours) != digits(theirs) {
        return Kind::DigitByDigit;
    }
    if says(ours, "hundred") != says(theirs, "hundred") {
        return Kind::Pairs;
    }
    Kind::OtherNumber
}

/// Words of a digit read alone.
const ONE_DIGIT: [&str; 11] = [
    "zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
];

/// Word-level differences between `a` and `b`: the runs of words outside a longest common
/// subsequence, as (words of `a`, words of `b`) pairs.
fn word_diff<'s>(a: &'s str, b: &'s str) -> Vec<(Vec<&'s str>, Vec<&'s str>)> {
    let a: Vec<&str> = a.split(' ').collect();
    let b: Vec<&str> = b.split(' ').collect();
    let (n, w) = (a.len(), b.len());
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; w + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..w).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut hunks = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (mut da, mut db) = (Vec::new(), Vec::new());
    while i < n || j < w {
        if i < n && j < w && a[i] == b[j] {
            if !da.is_empty() || !db.is_empty() {
                hunks.push((std::mem::take(&mut da), std::mem::take(&mut db)));
            }
            i += 1;
            j += 1;
        } else if j < w && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            db.push(b[j]);
            j += 1;
        } else {
            da.push(a[i]);
            i += 1;
        }
    }
    if !da.is_empty() || !db.is_empty() {
        hunks.push((da, db));
    }
    hunks
}

impl fmt::Display for Measurement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "LJSpeech: english(raw) == english(normalised) on {} of {} lines ({:.2} %)",
            self.exact,
            self.lines,
            100.0 * self.exact_share()
        )?;
        writeln!(
            f,
            "lines whose columns differ: {} of {} reproduced ({:.2} %)",
            self.exact_differing,
            self.differing,
            100.0 * self.differing_share()
        )?;
        writeln!(f, "mismatching lines by kind (a line may show several):")?;
        for count in &self.kinds {
            writeln!(f, "  {:>4}  {}", count.lines, count.kind.describe())?;
            for e in &count.examples {
                writeln!(
                    f,
                    "        {}: ours \"{}\" / LJSpeech \"{}\"",
                    e.id, e.ours, e.theirs
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_crlf_quotes_and_two_fields() {
        let text = "LJ1|a \"b|a \"b\r\nLJ2|c\r\n\r\nLJ3|\"d\"|\"d\"\n";
        let t = parse_metadata(text).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].normalized, "a \"b");
        assert_eq!(t[1].normalized, "c");
        assert_eq!(t[2].raw, "\"d\"");
        let err = parse_metadata("LJ1|a|b|c\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert_eq!(err.fields, 4);
        assert!(parse_metadata("just text\n").is_err());
    }

    #[test]
    fn word_diff_finds_the_differing_runs() {
        let hunks = word_diff("a b c d", "a x c d e");
        assert_eq!(hunks, vec![(vec!["b"], vec!["x"]), (vec![], vec!["e"])]);
        assert!(word_diff("same", "same").is_empty());
    }

    #[test]
    fn classifies_differences() {
        let kind = |a: &str, b: &str| {
            let a: Vec<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
            let b: Vec<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
            classify(&a, &b)
        };
        assert_eq!(kind("one thousand four", "fourteen"), Kind::Thousands);
        assert_eq!(kind("hundred forty-four", "four four"), Kind::DigitByDigit);
        assert_eq!(
            kind("twenty-five fifteen", "two five one five"),
            Kind::DigitByDigit
        );
        assert_eq!(kind("hundred", ""), Kind::Pairs);
        assert_eq!(kind("hundred", "oh"), Kind::Pairs);
        assert_eq!(kind("first", "one"), Kind::OtherNumber);
        assert_eq!(kind("iq", "i.q."), Kind::NoNumber);
    }

    #[test]
    fn measures_and_classifies() {
        let metadata = "A|in 1455|in fourteen fifty-five\n\
                        B|1308 prisoners|one thousand three hundred eight prisoners\n\
                        C|£1500|fifteen hundred pounds\n\
                        D|Mr. X|Mr. X\n\
                        E|T & W|S and W\n";
        let m = measure(&parse_metadata(metadata).unwrap());
        assert_eq!(
            (m.lines, m.differing, m.exact, m.exact_differing),
            (5, 4, 2, 1)
        );
        let lines = |kind| m.kinds.iter().find(|c| c.kind == kind).unwrap().lines;
        assert_eq!(lines(Kind::Thousands), 2);
        assert_eq!(lines(Kind::NoNumber), 1);
        assert!(m.to_string().contains("1 of 4 reproduced (25.00 %)"));
    }
}
