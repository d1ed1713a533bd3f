//! Streaming line reader shared by the readers: one reused buffer, 1-based line numbers,
//! `\n` or `\r\n` endings, a UTF-8 byte-order mark dropped from the first line, and a cap
//! on line length so that a binary file cannot make a reader hold it all as one line.

use std::io::{BufRead, Read as _};
use std::path::Path;

use crate::TraceError;

/// The longest line a reader accepts. A JSONL header for many GPUs is a few KiB; a CSV row
/// is under 1 KiB. Anything longer is not a trace.
pub(crate) const MAX_LINE: usize = 1 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The most lines one CSV record may span (a quoted value with line breaks in it).
const MAX_RECORD_LINES: usize = 8;

#[derive(Debug)]
pub(crate) struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    line: usize,
    /// Read CSV records: a line with an open `"` goes on over the next line.
    records: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(256),
            line: 0,
            records: false,
        }
    }

    /// A reader of CSV records (RFC 4180): a quoted field may hold line breaks, so a line
    /// whose `"` are not balanced continues over the next ones (a logger that quoted a
    /// value with a newline in it). The number given is the record's first line.
    pub(crate) fn csv_records(inner: R) -> Self {
        LineReader {
            records: true,
            ..Self::new(inner)
        }
    }

    /// The next line without its ending, and its 1-based number; `None` at the end.
    /// `path` is for messages.
    pub(crate) fn next_line(&mut self, path: &Path) -> Result<Option<(usize, &[u8])>, TraceError> {
        self.buf.clear();
        let n = read_line(&mut self.inner, &mut self.buf).map_err(|e| TraceError::io(path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let first = self.line;
        // At most a few lines: a stray `"` in a damaged row must not swallow the log.
        while self.records
            && self.line - first < MAX_RECORD_LINES
            && self.buf.iter().filter(|&&b| b == b'"').count() % 2 == 1
        {
            if self.buf.len() > MAX_LINE
                || read_line(&mut self.inner, &mut self.buf).map_err(|e| TraceError::io(path, e))?
                    == 0
            {
                break;
            }
            self.line += 1;
        }
        if self.buf.len() > MAX_LINE {
            return Err(TraceError::LineTooLong {
                path: path.to_owned(),
                line: self.line,
                limit: MAX_LINE,
            });
        }
        let mut line = self.buf.as_slice();
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        if let Some(rest) = line.strip_suffix(b"\r") {
            line = rest;
        }
        if first == 1
            && let Some(rest) = line.strip_prefix(BOM)
        {
            line = rest;
        }
        Ok(Some((first, line)))
    }

    /// Like [`next_line`](Self::next_line), as UTF-8.
    pub(crate) fn next_str(&mut self, path: &Path) -> Result<Option<(usize, &str)>, TraceError> {
        match self.next_line(path)? {
            None => Ok(None),
            Some((n, bytes)) => match std::str::from_utf8(bytes) {
                Ok(s) => Ok(Some((n, s))),
                Err(_) => Err(TraceError::InvalidUtf8 {
                    path: path.to_owned(),
                    line: n,
                }),
            },
        }
    }

    /// The number of the last line read.
    pub(crate) fn line(&self) -> usize {
        self.line
    }
}

/// Reads one line (with its `\n`) into `buf`, at most `MAX_LINE + 1` bytes of it.
pub(crate) fn read_line<R: BufRead>(inner: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    inner
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)
}

/// Whether a line holds nothing but ASCII whitespace.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some((n, l)) = r.next_line(Path::new("x")).unwrap() {
            out.push((n, l.to_vec()));
        }
        out
    }

    #[test]
    fn endings_bom_and_numbers() {
        let got = all(b"\xEF\xBB\xBFa\r\n\nb\nc");
        assert_eq!(
            got,
            vec![
                (1, b"a".to_vec()),
                (2, b"".to_vec()),
                (3, b"b".to_vec()),
                (4, b"c".to_vec())
            ]
        );
    }

    #[test]
    fn bom_only_on_line_one() {
        let got = all(b"a\n\xEF\xBB\xBFb\n");
        assert_eq!(got[1].1, b"\xEF\xBB\xBFb".to_vec());
    }

    #[test]
    fn long_line_is_an_error() {
        let input = vec![b'x'; MAX_LINE + 10];
        let mut r = LineReader::new(input.as_slice());
        let e = r.next_line(Path::new("big.bin")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "`big.bin` line 1: longer than {MAX_LINE} bytes, so this is not a text trace; \
                 check that this is the right file"
            )
        );
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let mut r = LineReader::new(&b"ok\n\xff\xfe\n"[..]);
        assert!(r.next_str(Path::new("t.csv")).unwrap().is_some());
        let e = r.next_str(Path::new("t.csv")).unwrap_err();
        assert!(
            e.to_string().starts_with("`t.csv` line 2: not valid UTF-8"),
            "{e}"
        );
    }
}
