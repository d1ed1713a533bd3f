//! Number normalisation: digits and regnal numerals to the words a reader says, the way the
//! LJSpeech transcripts spell them out.
//!
//! [`normalize_numbers`] rewrites every digit in a text; the word builders it uses are
//! public too. The text keeps its case and everything that is not a number.
//!
//! | written | read | rule |
//! |---|---|---|
//! | `42`, `1,000`, `5719` | forty-two, one thousand, five thousand, seven hundred nineteen | [`cardinal`]: no "and"; a comma before a group of hundreds, except between 1000 and 2999 |
//! | `1st`, `22nd`, `101st` | first, twenty-second, one hundred first | [`ordinal`] |
//! | `1455`, `1900`, `1803`, `2005` | fourteen fifty-five, nineteen hundred, eighteen oh three, two thousand five | [`year`]: four digits from 1000 to 2999 without separators |
//! | `in 605`, `250 B.C.`, `page 249`, `No. 150` | in six oh five, two fifty B.C., page two forty-nine, number one fifty | [`year`] for three digits after "in", "year", "page", "frame", "No." or before B.C./A.D. |
//! | `were 1063`, `contained 1308` | were one thousand sixty-three | four digits after were/are/contain(ed/s/ing) are quantities |
//! | `3.5`, `6.75` | three point five, six point seven five | decimals digit by digit |
//! | `.38` | thirty-eight | a leading dot with two digits is a calibre |
//! | `$3.50`, `$1`, `$0.45`, `$3 million` | three dollars, fifty cents; one dollar; forty-five cents; three million dollars | currency (`$ £ € ¥`), always cardinal |
//! | `£500`, `£2.50` | five hundred pounds, two pounds, fifty pence | |
//! | `9:30`, `10:05`, `10:00` | nine:thirty, ten:oh five, ten o'clock | times keep the colon, as LJSpeech writes them |
//! | `'64`, `1920s` | 'sixty-four, nineteen twenties | short years, decades |
//! | `C2766`, `30016`, `007`, `Box 2915`, `No. 2,202,130,462`, `411 Elm Street` | C two seven six six, three zero zero one six, zero zero seven, box two nine one five, … | digit by digit: capitals glued to digits, five or more digits without separators, a leading zero, after "Box", four or more digits after "No.", three-digit house numbers |
//! | `133-A` | one thirty-three A | a one-letter suffix is read as a letter |
//! | `No. 5`, `#5`, `5%` | number five, number five, five percent | |
//! | `George III.`, `Charles I`, `Chapter IV` | George the third, Charles the first, Chapter four | [`expand_regnal_numerals`] |
//!
//! The year heuristic reads four-digit numbers from 1000 to 2999 written without a
//! separator as years, because that is how LJSpeech reads them: of the 588 such numbers in
//! its raw column, 575 are read as years, 11 are box or address numbers read digit by digit
//! and 2 are quantities ("there were 1063 sleeping cells", "contained 1308 prisoners"),
//! which the were/contained rule catches. "1,300" (with a separator) and
//! currency amounts are always cardinals: "£1400" is "one thousand four hundred pounds".
//! LJSpeech's reader is split there ("fourteen hundred pounds", "fifteen hundred dollars"
//! in 6 lines; "one thousand two hundred pounds", "four thousand, seven hundred pounds" in
//! 5), so the unambiguous form wins. Each context rule above was read off LJSpeech's
//! own normalisation; [`crate::ljspeech`] measures the whole and lists what is left.
//!
//! Not handled: fractions ("1/2" stays "one/two"), negative signs, Roman numerals outside a
//! name or numbered thing, numbers in other scripts (transliterate first, as the English
//! cleaner does).
//!
//! ```
//! use gpufeed_text::numbers::{cardinal, normalize_numbers, ordinal, year};
//! assert_eq!(cardinal(42), "forty-two");
//! assert_eq!(ordinal(22), "twenty-second");
//! assert_eq!(year(1455), "fourteen fifty-five");
//! assert_eq!(
//!     normalize_numbers("On the 14th June, 1800, £500 and $3.50"),
//!     "On the fourteenth June, eighteen hundred, five hundred pounds and three dollars, fifty cents"
//! );
//! ```

/// Words for 0 to 19.
const ONES: [&str; 20] = [
    "zero",
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
];

/// Words for the tens; indices 0 and 1 are unused (0 to 19 come from [`ONES`]).
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// Short-scale group names, largest first; `u64::MAX` is about 18.4 quintillion.
const SCALES: [(u64, &str); 6] = [
    (1_000_000_000_000_000_000, "quintillion"),
    (1_000_000_000_000_000, "quadrillion"),
    (1_000_000_000_000, "trillion"),
    (1_000_000_000, "billion"),
    (1_000_000, "million"),
    (1_000, "thousand"),
];

/// Words after `$3`, `£5`... that take the currency name after them: "$3 million" is
/// "three million dollars".
const CURRENCY_SCALES: [&str; 4] = ["thousand", "million", "billion", "trillion"];

/// Names after which a lone `I`, `V` or `X` is a regnal number ("Charles I" but not
/// "Robert I. Bouck", "Forrest V. Sorrels"). Multi-letter numerals (`II`, `IV`) are regnal
/// after any capitalised word.
const MONARCHS: [&str; 21] = [
    "Alexander",
    "Anne",
    "Catherine",
    "Charles",
    "Edward",
    "Elizabeth",
    "Frederick",
    "George",
    "Henry",
    "James",
    "John",
    "Louis",
    "Mary",
    "Napoleon",
    "Nicholas",
    "Peter",
    "Philip",
    "Richard",
    "Stephen",
    "Victoria",
    "William",
];

/// Words after which a roman numeral is a plain number: "Chapter IV" is "Chapter four",
/// "World War II" is "World War two".
const NUMBERED_THINGS: [&str; 16] = [
    "Act", "Appendix", "Article", "Book", "Chapter", "Class", "Part", "Phase", "Plate", "Psalm",
    "Scene", "Section", "Table", "Title", "Volume", "War",
];

fn push_under_hundred(out: &mut String, n: u64) {
    let n = n % 100;
    if n < 20 {
        out.push_str(ONES[n as usize]);
    } else {
        out.push_str(TENS[(n / 10) as usize]);
        if !n.is_multiple_of(10) {
            out.push('-');
            out.push_str(ONES[(n % 10) as usize]);
        }
    }
}

fn push_under_thousand(out: &mut String, n: u64) {
    let n = n % 1000;
    if n >= 100 {
        out.push_str(ONES[(n / 100) as usize]);
        out.push_str(" hundred");
        if !n.is_multiple_of(100) {
            out.push(' ');
            push_under_hundred(out, n % 100);
        }
    } else {
        push_under_hundred(out, n);
    }
}

/// The cardinal words of `n`, without "and": 342 is "three hundred forty-two".
///
/// Groups of a thousand and more are joined by ", " when the next group has hundreds and by
/// a space otherwise ("five thousand, seven hundred nineteen", "seven thousand twenty"), as
/// in LJSpeech, which also writes no comma from 1000 to 2999 ("one thousand three hundred
/// eight").
///
/// ```
/// use gpufeed_text::numbers::cardinal;
/// assert_eq!(cardinal(0), "zero");
/// assert_eq!(cardinal(114_300), "one hundred fourteen thousand, three hundred");
/// assert_eq!(cardinal(3_000_000), "three million");
/// ```
#[must_use]
pub fn cardinal(n: u64) -> String {
    let mut out = String::new();
    if n < 1000 {
        push_under_thousand(&mut out, n);
        return out;
    }
    let comma = !(1000..3000).contains(&n);
    let mut rest = n;
    for (scale, name) in SCALES {
        if rest >= scale {
            let group = rest / scale;
            if !out.is_empty() {
                out.push_str(if comma && group >= 100 { ", " } else { " " });
            }
            push_under_thousand(&mut out, group);
            out.push(' ');
            out.push_str(name);
            rest %= scale;
        }
    }
    if rest > 0 {
        out.push_str(if comma && rest >= 100 { ", " } else { " " });
        push_under_thousand(&mut out, rest);
    }
    out
}

/// The ordinal form of one number word: "two" → "second", "twenty" → "twentieth".
fn ordinal_word(word: &str) -> String {
    let irregular = match word {
        "one" => "first",
        "two" => "second",
        "three" => "third",
        "five" => "fifth",
        "eight" => "eighth",
        "nine" => "ninth",
        "twelve" => "twelfth",
        _ => "",
    };
    if !irregular.is_empty() {
        irregular.to_owned()
    } else if let Some(stem) = word.strip_suffix('y') {
        format!("{stem}ieth")
    } else {
        format!("{word}th")
    }
}

/// The ordinal words of `n`: 22 is "twenty-second", 101 is "one hundred first".
///
/// ```
/// use gpufeed_text::numbers::ordinal;
/// assert_eq!(ordinal(1), "first");
/// assert_eq!(ordinal(40), "fortieth");
/// assert_eq!(ordinal(1_000), "one thousandth");
/// ```
#[must_use]
pub fn ordinal(n: u64) -> String {
    let words = cardinal(n);
    let split = words.rfind([' ', '-']).map_or(0, |at| at + 1);
    let (head, last) = words.split_at(split);
    format!("{head}{}", ordinal_word(last))
}

/// `n` read as a year: pairs of digits ("fourteen fifty-five"), "X hundred" for round
/// centuries, "oh" for a zero tens digit ("eighteen oh three"), and cardinals for round
/// thousands and 2000 to 2009 ("two thousand five"). Three digits read the same way ("six
/// oh five", "five twenty-one"); other numbers are cardinals.
///
/// ```
/// use gpufeed_text::numbers::year;
/// assert_eq!(year(1455), "fourteen fifty-five");
/// assert_eq!(year(1900), "nineteen hundred");
/// assert_eq!(year(1803), "eighteen oh three");
/// assert_eq!(year(2005), "two thousand five");
/// assert_eq!(year(2010), "twenty ten");
/// ```
#[must_use]
pub fn year(n: u64) -> String {
    if !(100..10_000).contains(&n) || n.is_multiple_of(1000) || (2000..2010).contains(&n) {
        return cardinal(n);
    }
    let (high, low) = (n / 100, n % 100);
    let mut out = cardinal(high);
    if low == 0 {
        out.push_str(" hundred");
    } else if low < 10 {
        out.push_str(" oh ");
        out.push_str(ONES[low as usize]);
    } else {
        out.push(' ');
        push_under_hundred(&mut out, low);
    }
    out
}

/// Each ASCII digit of `digits` as a word, separated by spaces: "2766" is "two seven six
/// six". Other characters are skipped.
///
/// ```
/// use gpufeed_text::numbers::digit_words;
/// assert_eq!(digit_words("30016"), "three zero zero one six");
/// ```
#[must_use]
pub fn digit_words(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() * 6);
    for d in digits.bytes().filter(u8::is_ascii_digit) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(ONES[usize::from(d - b'0')]);
    }
    out
}

/// The plural of a reading: "nineteen twenty" → "nineteen twenties", "six" → "sixes".
fn plural(words: &str) -> String {
    if let Some(stem) = words.strip_suffix('y') {
        format!("{stem}ies")
    } else if words.ends_with('x') {
        format!("{words}es")
    } else {
        format!("{words}s")
    }
}

/// The value of a canonical roman numeral made of `I`, `V` and `X` (1 to 39), or `None`.
fn roman_value(word: &str) -> Option<u64> {
    if word.is_empty() || word.len() > 8 {
        return None;
    }
    let values: Vec<i64> = word
        .chars()
        .map(|c| match c {
            'I' => Some(1),
            'V' => Some(5),
            'X' => Some(10),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let mut total: i64 = 0;
    for (k, &v) in values.iter().enumerate() {
        if values.get(k + 1).is_some_and(|&next| next > v) {
            total -= v;
        } else {
            total += v;
        }
    }
    let total = u64::try_from(total)
        .ok()
        .filter(|&t| (1..40).contains(&t))?;
    (to_roman(total) == word).then_some(total)
}

fn to_roman(mut n: u64) -> String {
    let mut out = String::new();
    for (value, symbol) in [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")] {
        while n >= value {
            out.push_str(symbol);
            n -= value;
        }
    }
    out
}

/// End of the run of characters matching `pred` that starts at `start`.
fn run_end(chars: &[char], start: usize, pred: impl Fn(char) -> bool) -> usize {
    chars[start..]
        .iter()
        .position(|&c| !pred(c))
        .map_or(chars.len(), |k| start + k)
}

fn is_digit_at(chars: &[char], i: usize) -> bool {
    chars.get(i).is_some_and(char::is_ascii_digit)
}

fn is_alnum_at(chars: &[char], i: usize) -> bool {
    chars.get(i).is_some_and(|c| c.is_alphanumeric())
}

/// The word that ends just before `end` (exclusive), skipping spaces: letters only.
fn word_before(chars: &[char], end: usize) -> String {
    let mut stop = end;
    while stop > 0 && chars[stop - 1] == ' ' {
        stop -= 1;
    }
    let mut start = stop;
    while start > 0 && chars[start - 1].is_alphabetic() {
        start -= 1;
    }
    chars[start..stop].iter().collect()
}

/// The token after `start`, skipping spaces: everything up to the next whitespace.
fn token_after(chars: &[char], start: usize) -> String {
    let from = run_end(chars, start, |c| c == ' ');
    let to = run_end(chars, from, |c| !c.is_whitespace());
    chars[from..to].iter().collect()
}

fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && word.len() >= 2
        && chars.all(|c| c.is_ascii_lowercase())
}

/// Rewrites roman numerals after names and numbered things: "George III." → "George the
/// third", "Charles I" → "Charles the first", "Chapter IV" → "Chapter four".
///
/// A numeral of two or more letters is regnal after any capitalised word; a lone `I`, `V`
/// or `X` only after a monarch's name, so initials ("Forrest V. Sorrels") and the pronoun
/// ("When I") stay. The period after a regnal numeral is dropped unless a capitalised word
/// follows it (LJSpeech writes "George the third as he was", "reign of James the first").
/// Only numerals up to 39 (`I`, `V`, `X`) are recognised.
///
/// ```
/// use gpufeed_text::numbers::expand_regnal_numerals;
/// assert_eq!(expand_regnal_numerals("tried to stab George III. as he"), "tried to stab George the third as he");
/// assert_eq!(expand_regnal_numerals("When I came, Robert I. Bouck"), "When I came, Robert I. Bouck");
/// ```
#[must_use]
pub fn expand_regnal_numerals(text: &str) -> String {
    if !text.contains(['I', 'V', 'X']) {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if !c.is_alphanumeric() {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        let end = run_end(&chars, start, char::is_alphanumeric);
        let word: String = chars[start..end].iter().collect();
        i = end;
        let value = roman_value(&word);
        let after_name = if value.is_some() && start >= 2 && chars[start - 1] == ' ' {
            word_before(&chars, start - 1)
        } else {
            String::new()
        };
        let Some(value) = value.filter(|_| is_capitalised(&after_name)) else {
            out.push_str(&word);
            continue;
        };
        if NUMBERED_THINGS.contains(&after_name.as_str()) {
            out.push_str(&cardinal(value));
        } else if word.len() >= 2 || MONARCHS.contains(&after_name.as_str()) {
            out.push_str("the ");
            out.push_str(&ordinal(value));
            if chars.get(i) == Some(&'.') && !is_alnum_at(&chars, i + 1) {
                let next = run_end(&chars, i + 1, char::is_whitespace);
                let sentence_follows =
                    next > i + 1 && chars.get(next).is_some_and(char::is_ascii_uppercase);
                if !sentence_follows {
                    i += 1;
                }
            }
        } else {
            out.push_str(&word);
        }
    }
    out
}

/// A parsed run of digits, with thousands separators removed.
struct Int {
    digits: String,
    end: usize,
    grouped: bool,
}

impl Int {
    fn value(&self) -> Option<u64> {
        self.digits.parse().ok()
    }
}

/// Parses digits at `start`, taking `,ddd` groups as thousands separators when the first
/// group has at most three digits ("1,000", "2,202,130,462"; not "12,5" or "1455,1456").
fn parse_int(chars: &[char], start: usize) -> Int {
    let mut end = run_end(chars, start, |c| c.is_ascii_digit());
    let mut digits: String = chars[start..end].iter().collect();
    let mut grouped = false;
    if digits.len() <= 3 {
        while chars.get(end) == Some(&',')
            && (1..=3).all(|k| is_digit_at(chars, end + k))
            && !is_digit_at(chars, end + 4)
        {
            digits.extend(&chars[end + 1..end + 4]);
            end += 4;
            grouped = true;
        }
    }
    Int {
        digits,
        end,
        grouped,
    }
}

/// Words after which three digits are read in pairs, like a year: "page 249" is "page two
/// forty-nine", "No. 150" is "number one fifty", "in 605" is "in six oh five".
const PAIRS_AFTER: [&str; 6] = ["in", "year", "page", "frame", "no.", "nos."];

/// Words after which a number is an identifier read digit by digit: "Box 2915" is "box two
/// nine one five"; after "No." only from four digits ("No. 2,202,130,462").
const DIGITS_AFTER: [&str; 1] = ["box"];

/// Words after which four digits are a quantity, not a year: "there were 1063 cells", "it
/// contained 1308 prisoners". ("was" and "is" are left out: "it was 1963".)
const QUANTITY_AFTER: [&str; 5] = ["were", "are", "contained", "contains", "containing"];

/// Street words: three digits before a capitalised name and one of these are a house
/// number read digit by digit ("411 Elm Street" is "four one one Elm Street", as LJSpeech
/// reads three of its four such addresses; four digits stay in pairs, "ten twenty-six North
/// Beckley Avenue").
const STREETS: [&str; 9] = [
    "Street",
    "Avenue",
    "Road",
    "Place",
    "Lane",
    "Boulevard",
    "Drive",
    "Square",
    "Terrace",
];

/// Whether one or two capitalised words and a [`STREETS`] word follow `end`.
fn street_after(chars: &[char], end: usize) -> bool {
    let mut at = end;
    for _ in 0..3 {
        if chars.get(at) != Some(&' ') {
            return false;
        }
        let word_end = run_end(chars, at + 1, char::is_alphabetic);
        let word: String = chars[at + 1..word_end].iter().collect();
        if STREETS.contains(&word.as_str()) {
            return at > end;
        }
        if !is_capitalised(&word) {
            return false;
        }
        at = word_end;
    }
    false
}

/// The lowercase word before `start`, skipping spaces, with its period if it has one
/// ("No. 5" gives "no.").
fn context_before(chars: &[char], start: usize) -> String {
    let mut end = start;
    while end > 0 && chars[end - 1] == ' ' {
        end -= 1;
    }
    let period = end > 0 && chars[end - 1] == '.';
    let mut word = word_before(chars, end - usize::from(period)).to_ascii_lowercase();
    if period && !word.is_empty() {
        word.push('.');
    }
    word
}

/// How a plain integer is read, from its shape and the words around it.
fn read_integer(chars: &[char], start: usize, int: &Int) -> String {
    let before = context_before(chars, start);
    let len = int.digits.len();
    if DIGITS_AFTER.contains(&before.as_str())
        || (len >= 4 && (before == "no." || before == "nos."))
    {
        return digit_words(&int.digits);
    }
    let Some(n) = int.value() else {
        return digit_words(&int.digits);
    };
    if int.grouped {
        return cardinal(n);
    }
    if len >= 5 || (len >= 2 && int.digits.starts_with('0')) {
        return digit_words(&int.digits);
    }
    if len == 4 && (1000..3000).contains(&n) && !QUANTITY_AFTER.contains(&before.as_str()) {
        return year(n);
    }
    if len == 3 {
        let after = token_after(chars, int.end);
        let era = ["B.C.", "B.C", "BC", "A.D.", "A.D", "AD"]
            .iter()
            .any(|e| after.trim_end_matches([',', ';', ')']) == *e);
        if era || PAIRS_AFTER.contains(&before.as_str()) {
            return year(n);
        }
        if street_after(chars, int.end) {
            return digit_words(&int.digits);
        }
    }
    cardinal(n)
}

/// After a number: `%` and `¢` become words, a one-letter suffix is read as a letter
/// ("133-A" → "one thirty-three A"), and a letter right after the number gets a space
/// before it ("10am" → "ten am").
fn finish_number(chars: &[char], mut j: usize, out: &mut String) -> usize {
    match chars.get(j) {
        Some('-')
            if chars.get(j + 1).is_some_and(char::is_ascii_uppercase)
                && !is_alnum_at(chars, j + 2) =>
        {
            out.push(' ');
            out.push(chars[j + 1]);
            return j + 2;
        }
        Some('%') => {
            out.push_str(" percent");
            j += 1;
        }
        Some('¢') => {
            out.push_str(" cents");
            j += 1;
        }
        _ => {}
    }
    if chars.get(j).is_some_and(|c| c.is_alphabetic()) {
        out.push(' ');
    }
    j
}

/// Names of a currency unit and of its hundredth.
struct CurrencyNames {
    one: &'static str,
    many: &'static str,
    /// One and many of the hundredth, for two decimals ("fifty cents").
    hundredth: Option<(&'static str, &'static str)>,
}

/// The names of the currency of `symbol`.
fn currency_names(symbol: char) -> Option<CurrencyNames> {
    let (one, many, hundredth) = match symbol {
        '$' => ("dollar", "dollars", Some(("cent", "cents"))),
        '£' => ("pound", "pounds", Some(("penny", "pence"))),
        '€' => ("euro", "euros", Some(("cent", "cents"))),
        '¥' => ("yen", "yen", None),
        _ => return None,
    };
    Some(CurrencyNames {
        one,
        many,
        hundredth,
    })
}

fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", cardinal(n), if n == 1 { one } else { many })
}

/// `$3.50`, `£500`, `$3 million` at `start` (the symbol); returns the index after it.
fn currency(chars: &[char], start: usize, out: &mut String) -> usize {
    let Some(CurrencyNames {
        one,
        many,
        hundredth,
    }) = currency_names(chars[start])
    else {
        out.push(chars[start]);
        return start + 1;
    };
    if out.chars().next_back().is_some_and(char::is_alphabetic) {
        out.push(' ');
    }
    let int = parse_int(chars, start + 1);
    let mut j = int.end;
    let mut fraction = None;
    if chars.get(j) == Some(&'.') && is_digit_at(chars, j + 1) {
        let end = run_end(chars, j + 1, |c| c.is_ascii_digit());
        fraction = Some(chars[j + 1..end].iter().collect::<String>());
        j = end;
    }
    let whole = int.value();
    let scale = (chars.get(j) == Some(&' '))
        .then(|| {
            let end = run_end(chars, j + 1, |c| c.is_ascii_alphabetic());
            let word: String = chars[j + 1..end]
                .iter()
                .collect::<String>()
                .to_ascii_lowercase();
            let known = CURRENCY_SCALES.iter().find(|s| **s == word)?;
            (!is_alnum_at(chars, end)).then_some((*known, end))
        })
        .flatten();
    let amount = whole.map_or_else(|| digit_words(&int.digits), cardinal);
    let point = fraction
        .as_deref()
        .map(|f| format!(" point {}", digit_words(f)))
        .unwrap_or_default();
    let words = match (scale, whole, fraction.as_deref(), hundredth) {
        (Some((scale, end)), ..) => {
            j = end;
            format!("{amount}{point} {scale} {many}")
        }
        (None, Some(whole), Some(f), Some((sub_one, sub_many))) if f.len() == 2 => {
            let cents = f.parse::<u64>().unwrap_or(0);
            match (whole, cents) {
                (0, 0) => format!("zero {many}"),
                (_, 0) => counted(whole, one, many),
                (0, _) => counted(cents, sub_one, sub_many),
                _ => format!(
                    "{}, {}",
                    counted(whole, one, many),
                    counted(cents, sub_one, sub_many)
                ),
            }
        }
        (None, Some(1), None, _) => format!("{amount} {one}"),
        _ => format!("{amount}{point} {many}"),
    };
    out.push_str(&words);
    finish_number(chars, j, out)
}

/// A number starting with a digit at `start`; returns the index after it.
fn number(chars: &[char], start: usize, out: &mut String) -> usize {
    if out.chars().next_back().is_some_and(char::is_alphabetic) {
        out.push(' ');
    }
    let int = parse_int(chars, start);
    let j = int.end;
    let value = int.value();

    // Time of day: h:mm.
    if let Some(hour) = value
        && !int.grouped
        && int.digits.len() <= 2
        && hour <= 24
        && chars.get(j) == Some(&':')
        && is_digit_at(chars, j + 1)
        && is_digit_at(chars, j + 2)
        && !is_digit_at(chars, j + 3)
    {
        let minutes: String = chars[j + 1..j + 3].iter().collect();
        let minutes = minutes.parse::<u64>().unwrap_or(60);
        if minutes < 60 {
            out.push_str(&cardinal(hour));
            if minutes == 0 {
                out.push_str(" o'clock");
            } else {
                out.push(':');
                if minutes < 10 {
                    out.push_str("oh ");
                }
                out.push_str(&cardinal(minutes));
            }
            return finish_number(chars, j + 3, out);
        }
    }

    // Decimal: the fraction digit by digit.
    if chars.get(j) == Some(&'.') && is_digit_at(chars, j + 1) {
        let end = run_end(chars, j + 1, |c| c.is_ascii_digit());
        let fraction: String = chars[j + 1..end].iter().collect();
        out.push_str(&value.map_or_else(|| digit_words(&int.digits), cardinal));
        out.push_str(" point ");
        out.push_str(&digit_words(&fraction));
        return finish_number(chars, end, out);
    }

    // Ordinal: 1st, 22nd, 3rd, 4th.
    if let Some(n) = value {
        let suffix: String = chars[j..chars.len().min(j + 2)]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase();
        if ["st", "nd", "rd", "th"].contains(&suffix.as_str()) && !is_alnum_at(chars, j + 2) {
            out.push_str(&ordinal(n));
            return finish_number(chars, j + 2, out);
        }
    }

    // Decades and plurals: 1920s, 80s.
    if chars.get(j) == Some(&'s') && !is_alnum_at(chars, j + 1) {
        out.push_str(&plural(&read_integer(chars, start, &int)));
        return finish_number(chars, j + 1, out);
    }

    out.push_str(&read_integer(chars, start, &int));
    finish_number(chars, j, out)
}

/// `No. 5`, `Nos. 5`, `No. C2766` at a word start: returns the index of what follows after
/// rewriting the word as "number(s)" in the case it was written in.
fn number_word(chars: &[char], start: usize, out: &mut String) -> Option<usize> {
    let end = run_end(chars, start, char::is_alphabetic);
    let word: String = chars[start..end].iter().collect();
    let plural = match word.to_ascii_lowercase().as_str() {
        "no" => false,
        "nos" => true,
        _ => return None,
    };
    if chars.get(end) != Some(&'.') {
        return None;
    }
    let digit = run_end(chars, end + 1, |c| c == ' ');
    let code_start = run_end(chars, digit, |c| c.is_ascii_uppercase());
    if !is_digit_at(chars, code_start) || code_start - digit > 3 || digit > end + 2 {
        return None;
    }
    let name = if plural { "numbers" } else { "number" };
    if word.chars().all(|c| c.is_ascii_uppercase()) {
        out.push_str(&name.to_ascii_uppercase());
    } else if word.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.push('N');
        out.push_str(&name[1..]);
    } else {
        out.push_str(name);
    }
    out.push(' ');
    Some(digit)
}

/// A code of one to three capitals glued to digits, at a word start: `C2766` → "C two
/// seven six six", `VC836` → "V C eight three six".
fn code(chars: &[char], start: usize, out: &mut String) -> Option<usize> {
    let letters_end = run_end(chars, start, |c| c.is_ascii_uppercase());
    if letters_end - start > 3 || !is_digit_at(chars, letters_end) {
        return None;
    }
    let end = run_end(chars, letters_end, |c| c.is_ascii_digit());
    if is_alnum_at(chars, end) {
        return None;
    }
    for (k, letter) in chars[start..letters_end].iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        out.push(*letter);
    }
    out.push(' ');
    out.push_str(&digit_words(
        &chars[letters_end..end].iter().collect::<String>(),
    ));
    Some(end)
}

fn at_boundary(chars: &[char], i: usize) -> bool {
    i == 0 || chars[i - 1].is_whitespace() || matches!(chars[i - 1], '(' | '[' | '"')
}

/// Rewrites every number in `text` as words (see the module table), after expanding
/// regnal numerals with [`expand_regnal_numerals`]. Everything else is kept, case
/// included. The output contains no ASCII digit.
///
/// ```
/// use gpufeed_text::numbers::normalize_numbers;
/// assert_eq!(normalize_numbers("about 9:30 on March 13, 1963"), "about nine:thirty on March thirteen, nineteen sixty-three");
/// assert_eq!(normalize_numbers("serial No. C2766"), "serial Number C two seven six six");
/// ```
#[must_use]
pub fn normalize_numbers(text: &str) -> String {
    let text = expand_regnal_numerals(text);
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return text;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let word_start = i == 0 || !chars[i - 1].is_alphanumeric();
        if c.is_alphabetic() {
            if word_start {
                if let Some(next) = number_word(&chars, i, &mut out) {
                    i = next;
                    continue;
                }
                if let Some(next) = code(&chars, i, &mut out) {
                    i = next;
                    continue;
                }
            }
            let end = run_end(&chars, i, char::is_alphabetic);
            out.extend(&chars[i..end]);
            i = end;
        } else if c.is_ascii_digit() {
            i = number(&chars, i, &mut out);
        } else if currency_names(c).is_some() && is_digit_at(&chars, i + 1) {
            i = currency(&chars, i, &mut out);
        } else if c == '#' && is_digit_at(&chars, i + 1) && word_start {
            out.push_str("number ");
            i += 1;
        } else if c == '\''
            && at_boundary(&chars, i)
            && is_digit_at(&chars, i + 1)
            && is_digit_at(&chars, i + 2)
            && !is_digit_at(&chars, i + 3)
        {
            // '64: a short year.
            let tens = chars[i + 1].to_digit(10).unwrap_or(0);
            let ones = chars[i + 2].to_digit(10).unwrap_or(0);
            let words = if tens == 0 {
                format!("oh {}", ONES[ones as usize])
            } else {
                cardinal(u64::from(tens * 10 + ones))
            };
            out.push('\'');
            let mut j = i + 3;
            if chars.get(j) == Some(&'s') && !is_alnum_at(&chars, j + 1) {
                out.push_str(&plural(&words));
                j += 1;
            } else {
                out.push_str(&words);
            }
            i = finish_number(&chars, j, &mut out);
        } else if c == '.' && at_boundary(&chars, i) && is_digit_at(&chars, i + 1) {
            // .38: a calibre with two digits, otherwise "point" and the digits.
            let end = run_end(&chars, i + 1, |c| c.is_ascii_digit());
            let digits: String = chars[i + 1..end].iter().collect();
            match digits.parse::<u64>() {
                Ok(n) if digits.len() == 2 => out.push_str(&cardinal(n)),
                _ => {
                    out.push_str("point ");
                    out.push_str(&digit_words(&digits));
                }
            }
            i = finish_number(&chars, end, &mut out);
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cardinals() {
        let cases = [
            (0, "zero"),
            (7, "seven"),
            (13, "thirteen"),
            (20, "twenty"),
            (42, "forty-two"),
            (100, "one hundred"),
            (101, "one hundred one"),
            (999, "nine hundred ninety-nine"),
            (1000, "one thousand"),
            (1063, "one thousand sixty-three"),
            (1308, "one thousand three hundred eight"),
            (3985, "three thousand, nine hundred eighty-five"),
            (7020, "seven thousand twenty"),
            (81_791, "eighty-one thousand, seven hundred ninety-one"),
            (1_000_000, "one million"),
            (
                2_202_130_462,
                "two billion, two hundred two million, one hundred thirty thousand, four hundred sixty-two",
            ),
        ];
        for (n, words) in cases {
            assert_eq!(cardinal(n), words, "{n}");
        }
        assert!(cardinal(u64::MAX).starts_with("eighteen quintillion"));
    }

    #[test]
    fn ordinals() {
        let cases = [
            (0, "zeroth"),
            (1, "first"),
            (2, "second"),
            (3, "third"),
            (4, "fourth"),
            (5, "fifth"),
            (8, "eighth"),
            (9, "ninth"),
            (12, "twelfth"),
            (15, "fifteenth"),
            (20, "twentieth"),
            (22, "twenty-second"),
            (31, "thirty-first"),
            (100, "one hundredth"),
            (101, "one hundred first"),
            (1_000_000, "one millionth"),
        ];
        for (n, words) in cases {
            assert_eq!(ordinal(n), words, "{n}");
        }
    }

    #[test]
    fn years() {
        let cases = [
            (1455, "fourteen fifty-five"),
            (1900, "nineteen hundred"),
            (1800, "eighteen hundred"),
            (1803, "eighteen oh three"),
            (2000, "two thousand"),
            (2005, "two thousand five"),
            (2010, "twenty ten"),
            (1000, "one thousand"),
            (605, "six oh five"),
            (521, "five twenty-one"),
            (500, "five hundred"),
            (42, "forty-two"),
            (12_345, "twelve thousand, three hundred forty-five"),
        ];
        for (n, words) in cases {
            assert_eq!(year(n), words, "{n}");
        }
    }

    #[test]
    fn roman_numerals() {
        assert_eq!(roman_value("III"), Some(3));
        assert_eq!(roman_value("IV"), Some(4));
        assert_eq!(roman_value("VIII"), Some(8));
        assert_eq!(roman_value("XXXIX"), Some(39));
        assert_eq!(roman_value("IIII"), None);
        assert_eq!(roman_value("VX"), None);
        assert_eq!(roman_value("IC"), None);
        assert_eq!(roman_value(""), None);
        let cases = [
            ("Charles I. in the sixth", "Charles the first in the sixth"),
            ("George III., as many", "George the third, as many"),
            ("the 14 George III. c. 59", "the 14 George the third c. 59"),
            ("Henry VIII. a new", "Henry the eighth a new"),
            ("reign of James I.", "reign of James the first"),
            ("George IV. The king", "George the fourth. The king"),
            ("George V", "George the fifth"),
            ("Chapter IV. Of", "Chapter four. Of"),
            ("World War II", "World War two"),
            ("When I came", "When I came"),
            ("Robert I. Bouck", "Robert I. Bouck"),
            ("Forrest V. Sorrels", "Forrest V. Sorrels"),
            ("THE II", "THE II"),
            ("I", "I"),
            ("Charles III's", "Charles the third's"),
        ];
        for (text, expected) in cases {
            assert_eq!(expand_regnal_numerals(text), expected, "{text}");
        }
    }

    #[test]
    fn number_forms() {
        let cases = [
            ("42", "forty-two"),
            ("1st and 22nd", "first and twenty-second"),
            (
                "the 3rd, 4th, 101st",
                "the third, fourth, one hundred first",
            ),
            ("3.5", "three point five"),
            ("6.75,", "six point seven five,"),
            ("$3.50", "three dollars, fifty cents"),
            ("$1.50", "one dollar, fifty cents"),
            ("$1", "one dollar"),
            ("$0.01", "one cent"),
            ("$0.00", "zero dollars"),
            ("$20,000 a year", "twenty thousand dollars a year"),
            ("$1.5", "one point five dollars"),
            ("$3 million.", "three million dollars."),
            ("$2.5 billion", "two point five billion dollars"),
            ("£5", "five pounds"),
            ("£1", "one pound"),
            ("£2.50", "two pounds, fifty pence"),
            (
                "£81,791.",
                "eighty-one thousand, seven hundred ninety-one pounds.",
            ),
            ("€3", "three euros"),
            ("¥500", "five hundred yen"),
            ("in 1455,", "in fourteen fifty-five,"),
            ("1900", "nineteen hundred"),
            ("2005", "two thousand five"),
            ("1,000", "one thousand"),
            ("40,000.", "forty thousand."),
            ("In 606, Nineveh", "In six oh six, Nineveh"),
            ("about 250 B.C.,", "about two fifty B.C.,"),
            ("199 debtors", "one hundred ninety-nine debtors"),
            ("9:30.", "nine:thirty."),
            ("at 11:40 a.m.", "at eleven:forty a.m."),
            ("10:05", "ten:oh five"),
            ("10:00", "ten o'clock"),
            ("him in '64.", "him in 'sixty-four."),
            ("the '60s", "the 'sixties"),
            ("the 1920s", "the nineteen twenties"),
            ("a .38-caliber", "a thirty-eight-caliber"),
            ("6.5-millimeter", "six point five-millimeter"),
            ("serial number C2766.", "serial number C two seven six six."),
            ("number VC836", "number V C eight three six"),
            ("box 30016,", "box three zero zero one six,"),
            ("agent 007", "agent zero zero seven"),
            ("No. 1, Newgate", "Number one, Newgate"),
            ("Nos. 3 and 4", "Numbers three and four"),
            ("no. 5", "number five"),
            ("#5", "number five"),
            ("90% of", "ninety percent of"),
            ("10am", "ten am"),
            ("B12", "B one two"),
            ("abc123", "abc one hundred twenty-three"),
            ("12,5", "twelve,five"),
            ("(1) those", "(one) those"),
            ("Section 4: Newgate", "Section four: Newgate"),
            ("1.", "one."),
            ("50¢", "fifty cents"),
            ("US$5", "US five dollars"),
            (
                "Exhibit No. 133-A, shows",
                "Exhibit Number one thirty-three A, shows",
            ),
            ("Exhibit No. 150 (the", "Exhibit Number one fifty (the"),
            ("serial No. C2766,", "serial Number C two seven six six,"),
            (
                "purchased as No. 2,202,130,462 in",
                "purchased as Number two two zero two one three zero four six two in",
            ),
            ("P.O. Box 2915 Dallas", "P.O. Box two nine one five Dallas"),
            ("page 249.", "page two forty-nine."),
            (
                "at frame 343, 30 frames",
                "at frame three forty-three, thirty frames",
            ),
            ("the year 562,", "the year five sixty-two,"),
            (
                "there were 1063 sleeping cells",
                "there were one thousand sixty-three sleeping cells",
            ),
            (
                "it contained 1308 prisoners",
                "it contained one thousand three hundred eight prisoners",
            ),
            ("about 1850 Messrs.", "about eighteen fifty Messrs."),
            ("no 150 men", "no one hundred fifty men"),
            (
                "living at 214 Neely Street in",
                "living at two one four Neely Street in",
            ),
            (
                "at 1026 North Beckley Avenue",
                "at ten twenty-six North Beckley Avenue",
            ),
            (
                "FPCC, 544 Camp Street New",
                "FPCC, five four four Camp Street New",
            ),
            ("at 27, York Street", "at twenty-seven, York Street"),
            ("the 100 Street", "the one hundred Street"),
            (
                "99999999999999999999999",
                "nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(normalize_numbers(text), expected, "{text}");
        }
    }

    #[test]
    fn text_without_numbers_is_kept() {
        for text in [
            "",
            "Morocco.",
            "  spaces  ",
            "a.b",
            "'quoted'",
            "$ and £",
            "No. more",
        ] {
            assert_eq!(normalize_numbers(text), text);
        }
    }
}
