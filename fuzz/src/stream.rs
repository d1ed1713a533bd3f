//! A file too large to write, made on the fly: a head, then one line repeated up to a
//! length (10 GB, say), so the hostile-size tests can stream one through a reader in
//! seconds without a byte on disk, and tell how much of it the reader consumed.

use std::io::Read;

/// `head`, then `line` over and over, `len` bytes in all.
#[derive(Debug)]
pub struct Repeat {
    head: Vec<u8>,
    line: Vec<u8>,
    len: u64,
    /// Bytes handed out so far.
    pub pos: u64,
}

impl Repeat {
    /// `len` bytes: `head`, then `line` repeated (the last copy cut at `len`).
    #[must_use]
    pub fn new(head: &[u8], line: &[u8], len: u64) -> Self {
        assert!(!line.is_empty());
        Repeat {
            head: head.to_vec(),
            line: line.to_vec(),
            len,
            pos: 0,
        }
    }
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && self.pos < self.len {
            let pos = self.pos as usize;
            let (src, at) = if pos < self.head.len() {
                (&self.head, pos)
            } else {
                (&self.line, (pos - self.head.len()) % self.line.len())
            };
            let room = (buf.len() - n)
                .min(src.len() - at)
                .min((self.len - self.pos) as usize);
            buf[n..n + room].copy_from_slice(&src[at..at + room]);
            n += room;
            self.pos += room as u64;
        }
        Ok(n)
    }
}
