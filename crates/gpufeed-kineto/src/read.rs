//! The streaming reader of Chrome trace JSON (`.json` or `.json.gz`).
//!
//! A profiler trace is one JSON object whose `traceEvents` array holds every event
//! (`{"traceEvents": [...], "deviceProperties": [...], ...}`), or the bare array of the
//! Chrome trace format. The reader never builds the whole document: serde_json parses each
//! event where it lies in the buffer, borrowed, into a [`RawEvent`], and says where it
//! ends. Only an event the buffer holds part of (about one per chunk read) and the values
//! beside `traceEvents` go through a small scanner that finds where a value ends (strings,
//! escapes and nesting) and reads no further. The buffer holds one chunk plus the event
//! being read, so memory stays flat whatever the file's size, and `.gz` files are
//! decompressed on a second thread while the first parses. What a read keeps is bounded too: one value of at most
//! [`MAX_VALUE_BYTES`], [`MAX_EVENTS`] events with a duration and [`MAX_NAME_BYTES`] of
//! names; past a limit, one error names the file and the byte.
//!
//! Why a scanner by hand: serde_json parses either a whole slice (the document in memory:
//! a 500 MB trace would cost 500 MB before the first event) or an `io::Read` a byte at a
//! time through its own buffer (several times slower than the slice parser); no crate
//! splits a JSON array into element slices from a reader. The scanner is 60 lines and
//! checks nothing but nesting: every byte of every event is still parsed by serde_json.
//! Events used to go through the scanner first, then serde_json: two passes, the scanner
//! a quarter of the time of `gpufeed trace` on resnet50_nw0 (perf); parsing in place cut
//! the process's CPU time from about 0.16 s to 0.11 s there.
//!
//! A file cut off mid-write (the job was killed while the profiler wrote) ends inside the
//! array: the reader keeps what it read and records the byte offset in
//! [`RawTrace::truncated_at`], for the caller to warn once.
//!
//! ```
//! let json = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,
//!     "args": {"stream": 7, "correlation": 3}}]}"#;
//! let t = gpufeed_kineto::read::read_from(&json[..], "mem.json".as_ref()).unwrap();
//! assert_eq!(t.events.len(), 1);
//! assert_eq!(t.events[0].stream, 7);
//! ```

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};

use crate::error::{Error, Result};

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;

/// The longest JSON value read (an event, or a top-level value beside `traceEvents`): a
/// trace event is a few hundred bytes, so a longer value is a damaged file, and the buffer,
/// which holds the value being read, stays under this whatever the file.
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// The most events with a duration kept from one trace: 48 bytes each, 1.5 GiB. A 500 MB
/// PyTorch trace holds about 2 million.
pub const MAX_EVENTS: usize = 1 << 25;

/// The most bytes of names kept from one trace (distinct event names and categories,
/// process and thread ids and names).
pub const MAX_NAME_BYTES: usize = 512 << 20;

/// The limits a read keeps to: the constants above, smaller in tests.
#[derive(Debug, Clone, Copy)]
struct Limits {
    value_bytes: usize,
    events: usize,
    name_bytes: usize,
}

impl Limits {
    const DEFAULT: Limits = Limits {
        value_bytes: MAX_VALUE_BYTES,
        events: MAX_EVENTS,
        name_bytes: MAX_NAME_BYTES,
    };
}

/// The scanner's error for a value longer than its limit, in bytes.
#[derive(Debug)]
struct ValueTooLong(usize);

impl fmt::Display for ValueTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "one JSON value longer than {} bytes (a trace event is a few hundred): the file is \
             damaged or not a profiler trace",
            self.0
        )
    }
}

impl std::error::Error for ValueTooLong {}

/// A scanner's error as this crate's: a value too long is a bad event at `offset`.
fn scan_error(path: &Path, offset: u64, source: io::Error) -> Error {
    if let Some(long) = source
        .get_ref()
        .and_then(|e| e.downcast_ref::<ValueTooLong>())
    {
        Error::BadEvent {
            path: path.to_owned(),
            offset,
            message: long.to_string(),
        }
    } else {
        Error::Io {
            path: path.to_owned(),
            cause: source,
        }
    }
}

/// Interned strings: event names and categories, ids by first appearance.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    map: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    /// Bytes of the strings, twice each (the list and the map's key).
    bytes: usize,
}

impl Symbols {
    /// The id of `s`, added if new.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(s.into());
        self.map.insert(s.into(), id);
        self.bytes += 2 * s.len();
        id
    }

    /// Bytes the strings take, about.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The id of `s`, if present.
    #[must_use]
    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }

    /// The string of an id.
    #[must_use]
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }

    /// All strings, by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        self.names.iter().enumerate().map(|(i, s)| (i as u32, &**s))
    }
}

/// Kineto's name for a host-to-device copy from pageable memory, given to TensorFlow's
/// `MemcpyH2D` whose details say `pageable`.
pub const PAGEABLE_H2D: &str = "MemcpyH2D (Pageable -> Device)";

/// No category: HTA drops such rows.
pub const NO_CAT: u32 = u32::MAX;

/// One event with a duration, as read (timestamps still in the file's µs, unrounded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Name, in [`RawTrace::symbols`].
    pub name: u32,
    /// Category, in [`RawTrace::symbols`]; [`NO_CAT`] when absent.
    pub cat: u32,
    /// Process id, interned ([`RawTrace::pids`]).
    pub pid: u32,
    /// Thread id, interned ([`RawTrace::pids`]).
    pub tid: u32,
    /// `args.stream` as an integer, else -1.
    pub stream: i64,
    /// `args.correlation` (Kineto) or `args.correlation_id` (TensorFlow), else -1.
    pub corr: i64,
}

/// A process or thread name from a metadata event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMeta {
    /// Interned pid.
    pub pid: u32,
    /// Interned tid (thread names only).
    pub tid: Option<u32>,
    /// The name.
    pub name: String,
}

/// A trace file as read: its events with a duration, and the metadata gpufeed uses.
#[derive(Debug, Clone, Default)]
pub struct RawTrace {
    /// The file.
    pub path: PathBuf,
    /// Names and categories.
    pub symbols: Symbols,
    /// Process and thread ids as written (`7`, `"Spans"`), by interned id.
    pub pids: Vec<String>,
    /// Every event with a `dur`, in file order.
    pub events: Vec<Event>,
    /// Elements of `traceEvents`.
    pub elements: u64,
    /// Whether some `ts` is not an integer (or missing): HTA then rounds (see `hta`).
    pub fractional_ts: bool,
    /// `distributedInfo.rank`.
    pub rank: Option<u32>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u32>,
    /// `deviceProperties[0].name`.
    pub device: Option<String>,
    /// `displayTimeUnit`.
    pub display_time_unit: Option<String>,
    /// Process names (`ph: M`, `process_name`).
    pub process_names: Vec<NameMeta>,
    /// Thread names (`ph: M`, `thread_name`).
    pub thread_names: Vec<NameMeta>,
    /// TensorFlow step markers: events with `args.step_num`, as `(N, index in events)`.
    pub step_marks: Vec<(i64, usize)>,
    /// Events of an xplane's `Steps` lines with a `group_id` stat, as `(group_id, index in
    /// events)`: Keras' steps on the GPU plane (see [`crate::tf::steps`]).
    pub group_marks: Vec<(i64, usize)>,
    /// Events of an xplane with an `iter_num` stat (graph-mode iterations), as `(N, index
    /// in events)`.
    pub iter_marks: Vec<(i64, usize)>,
    /// Byte offset (in the decompressed JSON, or in an xplane file) where the file stops
    /// mid-event (mid-plane).
    pub truncated_at: Option<u64>,
    /// Bytes of JSON read (of an xplane: the file's).
    pub bytes: u64,
    /// Read from TensorFlow's `*.xplane.pb` (see [`crate::xplane`]), not JSON.
    pub from_xplane: bool,
}

/// Reads a trace file: TensorFlow's `*.xplane.pb` by its name (a protobuf has no magic
/// bytes; see [`crate::xplane`]), else JSON, `.gz` or not (by its magic bytes, not its name).
pub fn read_path(path: &Path) -> Result<RawTrace> {
    read_path_counted(path, None)
}

/// [`read_path`], adding the bytes read from the file (compressed, where it is) to `read`
/// as it goes: a caller's progress bar polls it.
pub fn read_path_counted(path: &Path, read: Option<Arc<AtomicU64>>) -> Result<RawTrace> {
    // TensorFlow's files that are no trace, by name: refused in one line.
    if let Some(kind) = crate::tf::classify(path, &[])
        && let Some(e) = crate::tf::refusal(path, kind)
    {
        return Err(e);
    }
    if crate::xplane::is_xplane_name(path) {
        let t = crate::xplane::read_path(path)?;
        if let Some(r) = &read {
            r.fetch_add(t.bytes, Ordering::Relaxed);
        }
        return Ok(t);
    }
    open_json(path, read, |r| read_from(r, path))
}

/// A trace read with its events in a temporary file rather than in memory (see
/// [`spill_path_counted`]): [`RawTrace::events`] is empty, and [`EventFile::events`] gives
/// them back in file order, as many times as asked.
#[derive(Debug)]
pub enum Spilled {
    /// An xplane file, read whole (TensorFlow's planes are small).
    Whole(RawTrace),
    /// A JSON trace and its events.
    Spilled(RawTrace, EventFile),
}

/// [`read_path_counted`], with a JSON trace's events written to a temporary file (48 bytes
/// each, deleted when dropped) instead of kept: what the read holds in memory is the
/// names and metadata, whatever the number of events. [`MAX_EVENTS`] does not apply.
pub fn spill_path_counted(path: &Path, read: Option<Arc<AtomicU64>>) -> Result<Spilled> {
    if let Some(kind) = crate::tf::classify(path, &[])
        && let Some(e) = crate::tf::refusal(path, kind)
    {
        return Err(e);
    }
    if crate::xplane::is_xplane_name(path) {
        return read_path_counted(path, read).map(Spilled::Whole);
    }
    let spill = SpillWriter::new().map_err(|cause| Error::Spill {
        path: path.to_owned(),
        cause,
    })?;
    let (t, file) = open_json(path, read, |r| {
        read_with(r, path, Limits::DEFAULT, Some(spill))
    })?;
    match file {
        Some(f) => Ok(Spilled::Spilled(t, f)),
        None => Ok(Spilled::Whole(t)),
    }
}

/// Opens a JSON trace, `.gz` or not (by its magic bytes), counting the bytes read into
/// `read`, and hands the (inflated) bytes to `f`.
fn open_json<T>(
    path: &Path,
    read: Option<Arc<AtomicU64>>,
    f: impl FnOnce(Box<dyn Read>) -> Result<T>,
) -> Result<T> {
    let io_err = |cause| Error::Io {
        path: path.to_owned(),
        cause,
    };
    let mut file = Counted {
        inner: fs_err::File::open(path).map_err(io_err)?,
        read,
    };
    let mut magic = [0u8; 2];
    let n = read_full(&mut file, &mut magic).map_err(io_err)?;
    let head = io::Cursor::new(magic[..n].to_vec());
    if magic[..n] == [0x1f, 0x8b] {
        let gz = flate2::read::MultiGzDecoder::new(head.chain(file));
        f(Box::new(Pipelined::spawn(gz)))
    } else {
        f(Box::new(head.chain(file)))
    }
}

/// Bytes of an event in a spill file.
const EVENT_BYTES: usize = 48;

impl Event {
    fn encode(&self, out: &mut [u8; EVENT_BYTES]) {
        out[0..8].copy_from_slice(&self.ts.to_le_bytes());
        out[8..16].copy_from_slice(&self.dur.to_le_bytes());
        out[16..20].copy_from_slice(&self.name.to_le_bytes());
        out[20..24].copy_from_slice(&self.cat.to_le_bytes());
        out[24..28].copy_from_slice(&self.pid.to_le_bytes());
        out[28..32].copy_from_slice(&self.tid.to_le_bytes());
        out[32..40].copy_from_slice(&self.stream.to_le_bytes());
        out[40..48].copy_from_slice(&self.corr.to_le_bytes());
    }

    fn decode(b: &[u8; EVENT_BYTES]) -> Self {
        let f = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
        let l = |i: usize| i64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Self {
            ts: f(0),
            dur: f(8),
            name: u(16),
            cat: u(20),
            pid: u(24),
            tid: u(28),
            stream: l(32),
            corr: l(40),
        }
    }
}

/// Writes events to an unnamed temporary file; the first write error is kept for
/// [`SpillWriter::finish`] (a read cannot stop mid-event for it).
struct SpillWriter {
    w: io::BufWriter<std::fs::File>,
    error: Option<io::Error>,
    n: u64,
    max_corr: Option<i64>,
}

impl SpillWriter {
    fn new() -> io::Result<Self> {
        Ok(Self {
            w: io::BufWriter::with_capacity(1 << 20, tempfile::tempfile()?),
            error: None,
            n: 0,
            max_corr: None,
        })
    }

    fn push(&mut self, e: &Event) {
        if self.error.is_some() {
            return;
        }
        let mut b = [0u8; EVENT_BYTES];
        e.encode(&mut b);
        self.max_corr = Some(self.max_corr.map_or(e.corr, |m| m.max(e.corr)));
        match io::Write::write_all(&mut self.w, &b) {
            Ok(()) => self.n += 1,
            Err(err) => self.error = Some(err),
        }
    }

    fn finish(self) -> io::Result<EventFile> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let file = self
            .w
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(EventFile {
            file,
            n: self.n,
            max_corr: self.max_corr,
        })
    }
}

/// The events of a spilled trace, in a temporary file deleted when this is dropped.
#[derive(Debug)]
pub struct EventFile {
    file: std::fs::File,
    n: u64,
    max_corr: Option<i64>,
}

impl EventFile {
    /// Events in the file.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.n
    }

    /// The largest correlation of its events (-1 where an event has none), if any event.
    #[must_use]
    pub fn max_corr(&self) -> Option<i64> {
        self.max_corr
    }

    /// Whether the file holds no event.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The events in file order, read through a buffer (not mapped: the page cache holds
    /// them, not this process).
    ///
    /// # Errors
    ///
    /// The file cannot be rewound or read.
    pub fn events(&self) -> io::Result<impl Iterator<Item = io::Result<Event>> + '_> {
        use io::Seek;
        let mut f = &self.file;
        f.seek(io::SeekFrom::Start(0))?;
        let mut r = io::BufReader::with_capacity(1 << 20, f);
        let mut left = self.n;
        Ok(std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut b = [0u8; EVENT_BYTES];
            Some(r.read_exact(&mut b).map(|()| Event::decode(&b)))
        }))
    }
}

/// A reader that adds what it reads to a shared count.
struct Counted<R> {
    inner: R,
    read: Option<Arc<AtomicU64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(r) = &self.read {
            r.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Decompression on its own thread, chunks handed over a bounded channel: the parser and
/// the inflater each use a core.
struct Pipelined {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    at: usize,
    done: bool,
}

impl Pipelined {
    fn spawn<R: Read + Send + 'static>(mut r: R) -> Self {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; CHUNK];
                match read_full(&mut r, &mut chunk) {
                    Ok(n) => {
                        chunk.truncate(n);
                        let last = n == 0;
                        if tx.send(Ok(chunk)).is_err() || last {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Self {
            rx,
            cur: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl Read for Pipelined {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.cur.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.done = chunk.is_empty();
                    self.cur = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.cur.len() - self.at);
        buf[..n].copy_from_slice(&self.cur[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A byte buffer over a reader; offsets are relative to `pos`, the start of the value
/// being scanned, so that refilling (which drops the bytes before `pos`) keeps them valid.
struct Scan<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
    base: u64,
    eof: bool,
    /// The input ended with a decompression error of kind `UnexpectedEof` (a cut `.gz`).
    cut: bool,
    /// The longest value read.
    max_value: usize,
}

impl<R: Read> Scan<R> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Reads more; false at the end of input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        let n = loop {
            match self.r.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.cut = true;
                    break 0;
                }
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(old + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The next byte that is not whitespace, at `pos`; `None` at the end of input.
    fn peek(&mut self) -> io::Result<Option<u8>> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t')
                    || (b == 0xEF || b == 0xBB || b == 0xBF)
                {
                    self.pos += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Length of the JSON value starting at `pos` (which is not whitespace); `None` when
    /// the input ends first. Only nesting, strings and escapes are tracked.
    /// A value longer than `max_value` is an error ([`ValueTooLong`]): the buffer, which
    /// holds the value being read, grows no further.
    fn value_len(&mut self) -> io::Result<Option<usize>> {
        match self.scan_value()? {
            Some(n) if n > self.max_value => Err(self.too_long()),
            len => Ok(len),
        }
    }

    fn too_long(&self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, ValueTooLong(self.max_value))
    }

    fn scan_value(&mut self) -> io::Result<Option<usize>> {
        let mut i = 0usize;
        let mut depth = 0usize;
        let mut in_str = false;
        let mut esc = false;
        let first = match self.buf.get(self.pos) {
            Some(&b) => b,
            None => return Ok(None),
        };
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        loop {
            let bytes = &self.buf[self.pos..];
            while i < bytes.len() {
                let b = bytes[i];
                if in_str {
                    if esc {
                        esc = false;
                    } else if b == b'\\' {
                        esc = true;
                    } else if b == b'"' {
                        in_str = false;
                        if depth == 0 {
                            return Ok(Some(i + 1));
                        }
                    } else {
                        // Skip to the next quote or backslash at once.
                        let rest = &bytes[i..];
                        match rest.iter().position(|&c| c == b'"' || c == b'\\') {
                            Some(k) => {
                                i += k;
                                continue;
                            }
                            None => {
                                i = bytes.len();
                                break;
                            }
                        }
                    }
                } else if scalar {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        return Ok(Some(i));
                    }
                } else {
                    match b {
                        b'"' => in_str = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                return Ok(Some(i + 1));
                            }
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            if i > self.max_value {
                return Err(self.too_long());
            }
            if !self.fill()? {
                // A number at the very end of input is complete; anything else is cut.
                return Ok((scalar && i > 0).then_some(i));
            }
        }
    }
}

/// An integer read loosely, as Python's `int(x)` would: a number, or a string of one;
/// anything else is -1 (HTA's default for `stream` and `correlation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loose(i64);

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Loose, E> {
                Ok(Loose(v))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Loose, E> {
                Ok(Loose(i64::try_from(v).unwrap_or(-1)))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Loose, E> {
                Ok(Loose(if v.is_finite() { v.trunc() as i64 } else { -1 }))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Loose, E> {
                Ok(Loose(v.trim().parse().unwrap_or(-1)))
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<Loose, E> {
                Ok(Loose(i64::from(v)))
            }
            fn visit_unit<E>(self) -> std::result::Result<Loose, E> {
                Ok(Loose(-1))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Loose, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose(-1))
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Loose, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Loose(-1))
            }
        }
        d.deserialize_any(V)
    }
}

/// A timestamp, and whether it was written with a fraction or an exponent: serde_json
/// parses integers exactly but may round a long decimal wrongly (see
/// [`top_level_number`]), so only those are parsed again.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ts {
    value: f64,
    decimal: bool,
}

impl<'de> Deserialize<'de> for Ts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Ts;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Ts, E> {
                Ok(Ts {
                    value: v as f64,
                    decimal: false,
                })
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Ts, E> {
                Ok(Ts {
                    value: v as f64,
                    decimal: false,
                })
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Ts, E> {
                Ok(Ts {
                    value: v,
                    decimal: true,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A pid or tid: a number or a string.
#[derive(Debug, Clone, PartialEq)]
enum Id<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Int(v as i64))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Int(v as i64))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_unit<E>(self) -> std::result::Result<Id<'de>, E> {
                Ok(Id::Int(-1))
            }
        }
        d.deserialize_any(V)
    }
}

/// The `args` fields gpufeed reads; the rest is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct RawArgs<'a> {
    #[serde(default)]
    stream: Option<Loose>,
    #[serde(default)]
    correlation: Option<Loose>,
    /// TensorFlow's name for the launch-to-kernel link.
    #[serde(default)]
    correlation_id: Option<Loose>,
    /// Metadata events: the process or thread name.
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    /// TensorFlow: the step of a step marker.
    #[serde(default)]
    step_num: Option<Loose>,
    /// TensorFlow: a copy's kinds (`kind_src:pageable`).
    #[serde(default, borrow)]
    memcpy_details: Option<Cow<'a, str>>,
}

/// One element of `traceEvents`, borrowed from its bytes.
#[derive(Debug, Default, Deserialize)]
struct RawEvent<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(default)]
    ts: Option<Ts>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default, borrow)]
    pid: Option<Id<'a>>,
    #[serde(default, borrow)]
    tid: Option<Id<'a>>,
    #[serde(default, borrow)]
    args: Option<RawArgs<'a>>,
}

/// The top-level fields gpufeed reads besides `traceEvents`.
#[derive(Debug, Default, Deserialize)]
struct DistributedInfo {
    #[serde(default)]
    rank: Option<Loose>,
    #[serde(default)]
    world_size: Option<Loose>,
}

#[derive(Debug, Default, Deserialize)]
struct DeviceProperties {
    #[serde(default)]
    name: Option<String>,
}

/// Builds a [`RawTrace`] event by event.
struct Collector {
    t: RawTrace,
    ids: FxHashMap<(bool, i64), u32>,
    str_ids: FxHashMap<Box<str>, u32>,
    /// Elements that look like trace events (`ph` or `ts`): zero means not a trace.
    evented: u64,
    /// Bytes of the process and thread ids and names kept, beside the symbols'.
    name_bytes: usize,
    limits: Limits,
    /// Where the events go instead of `t.events`, when the read spills them.
    spill: Option<SpillWriter>,
    /// Events with a duration read so far (kept or spilled).
    count: usize,
}

impl Collector {
    fn id(&mut self, id: Option<&Id<'_>>) -> u32 {
        let next = u32::try_from(self.t.pids.len()).unwrap_or(u32::MAX);
        match id {
            None => *self.ids.entry((false, -1)).or_insert_with(|| {
                self.t.pids.push(String::new());
                next
            }),
            Some(Id::Int(v)) => *self.ids.entry((true, *v)).or_insert_with(|| {
                // The string, and the two tables' entries.
                self.name_bytes += 64;
                self.t.pids.push(v.to_string());
                next
            }),
            Some(Id::Str(s)) => {
                if let Some(&k) = self.str_ids.get(&**s) {
                    return k;
                }
                self.name_bytes += 64 + 2 * s.len();
                self.t.pids.push(s.to_string());
                self.str_ids.insert((&**s).into(), next);
                next
            }
        }
    }

    /// A top-level value beside `traceEvents`. Metadata is best effort: a field of an
    /// unexpected shape is ignored.
    fn meta(&mut self, key: &str, value: &[u8]) {
        match key {
            "distributedInfo" => {
                if let Ok(d) = serde_json::from_slice::<DistributedInfo>(value) {
                    self.t.rank = d.rank.and_then(|r| u32::try_from(r.0).ok());
                    self.t.world_size = d.world_size.and_then(|r| u32::try_from(r.0).ok());
                }
            }
            "deviceProperties" => {
                if let Ok(d) = serde_json::from_slice::<Vec<DeviceProperties>>(value) {
                    self.t.device = d.into_iter().find_map(|d| d.name);
                }
            }
            "displayTimeUnit" => {
                self.t.display_time_unit = serde_json::from_slice(value).ok();
            }
            _ => {}
        }
    }

    /// Adds an event; `Err` with what crossed a limit ([`MAX_EVENTS`], [`MAX_NAME_BYTES`]).
    fn push(&mut self, e: RawEvent<'_>) -> std::result::Result<(), String> {
        self.push_event(e);
        let Limits {
            events, name_bytes, ..
        } = self.limits;
        if self.spill.is_none() && self.count > events {
            return Err(format!("{events} events"));
        }
        if self.t.symbols.bytes() + self.name_bytes > name_bytes {
            return Err(format!("{name_bytes} bytes of names"));
        }
        Ok(())
    }

    fn push_event(&mut self, e: RawEvent<'_>) {
        self.t.elements += 1;
        if e.ph.is_some() || e.ts.is_some() {
            self.evented += 1;
        }
        if e.ts.is_none_or(|ts| ts.value.fract() != 0.0) {
            self.t.fractional_ts = true;
        }
        if e.ph.as_deref() == Some("M") {
            let which = e.name.as_deref();
            let label = e.args.as_ref().and_then(|a| a.name.as_deref());
            if let (Some(w @ ("process_name" | "thread_name")), Some(label)) = (which, label) {
                let pid = self.id(e.pid.as_ref());
                self.name_bytes += label.len();
                let meta = NameMeta {
                    pid,
                    tid: None,
                    name: label.to_owned(),
                };
                if w == "process_name" {
                    self.t.process_names.push(meta);
                } else {
                    let tid = self.id(e.tid.as_ref());
                    self.t.thread_names.push(NameMeta {
                        tid: Some(tid),
                        ..meta
                    });
                }
            }
            return;
        }
        let Some(dur) = e.dur else { return };
        let args = e.args.unwrap_or_default();
        let raw_name = e.name.as_deref().unwrap_or("");
        let name = match &args.memcpy_details {
            // TensorFlow names every host-to-device copy `MemcpyH2D`; the source memory is
            // in its details. Kineto's name for the same thing carries it.
            Some(d) if raw_name.starts_with("MemcpyH2D") && d.contains("pageable") => {
                self.t.symbols.intern(PAGEABLE_H2D)
            }
            _ => self.t.symbols.intern(raw_name),
        };
        if let Some(n) = args.step_num {
            self.t.step_marks.push((n.0, self.count));
        }
        let cat = e
            .cat
            .as_deref()
            .map_or(NO_CAT, |c| self.t.symbols.intern(c));
        let pid = self.id(e.pid.as_ref());
        let tid = self.id(e.tid.as_ref());
        let event = Event {
            ts: e.ts.map_or(f64::NAN, |t| t.value),
            dur,
            name,
            cat,
            pid,
            tid,
            stream: args.stream.map_or(-1, |s| s.0),
            corr: args.correlation.or(args.correlation_id).map_or(-1, |c| c.0),
        };
        self.count += 1;
        match &mut self.spill {
            Some(w) => w.push(&event),
            None => self.t.events.push(event),
        }
    }
}

/// Reads a trace from `r`; `path` names it in errors.
pub fn read_from(r: impl Read, path: &Path) -> Result<RawTrace> {
    read_with(r, path, Limits::DEFAULT, None).map(|(t, _)| t)
}

/// [`read_from`], keeping to `limits`; with `spill`, the events go to that file instead of
/// [`RawTrace::events`], and the file is returned with them.
fn read_with(
    r: impl Read,
    path: &Path,
    limits: Limits,
    spill: Option<SpillWriter>,
) -> Result<(RawTrace, Option<EventFile>)> {
    let mut s = Scan {
        r,
        buf: Vec::with_capacity(2 * CHUNK),
        pos: 0,
        base: 0,
        eof: false,
        cut: false,
        max_value: limits.value_bytes,
    };
    let mut c = Collector {
        t: RawTrace {
            path: path.to_owned(),
            ..RawTrace::default()
        },
        ids: FxHashMap::default(),
        str_ids: FxHashMap::default(),
        evented: 0,
        name_bytes: 0,
        limits,
        spill,
        count: 0,
    };
    let io_err = |cause| Error::Io {
        path: path.to_owned(),
        cause,
    };
    let not_trace = |reason: &str| Error::NotATrace {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    match s.peek().map_err(io_err)? {
        None => return Err(not_trace("the file is empty")),
        Some(b'[') => {
            s.pos += 1;
            events(&mut s, &mut c, path)?;
        }
        Some(b'{') => {
            s.pos += 1;
            let mut seen_events = false;
            loop {
                match s.peek().map_err(io_err)? {
                    Some(b'}') => {
                        s.pos += 1;
                        break;
                    }
                    Some(b',') => {
                        s.pos += 1;
                        continue;
                    }
                    Some(b'"') => {}
                    None => {
                        c.t.truncated_at.get_or_insert(s.offset());
                        break;
                    }
                    Some(_) => return Err(not_trace("it is not valid JSON")),
                }
                let Some(len) = s.value_len().map_err(|e| scan_error(path, s.offset(), e))? else {
                    c.t.truncated_at.get_or_insert(s.offset());
                    break;
                };
                let key: Cow<'_, str> = serde_json::from_slice(&s.buf[s.pos..s.pos + len])
                    .map_err(|_| not_trace("it is not valid JSON"))?;
                let key = key.into_owned();
                s.pos += len;
                if s.peek().map_err(io_err)? != Some(b':') {
                    if s.eof {
                        c.t.truncated_at.get_or_insert(s.offset());
                        break;
                    }
                    return Err(not_trace("it is not valid JSON"));
                }
                s.pos += 1;
                if s.peek().map_err(io_err)?.is_none() {
                    c.t.truncated_at.get_or_insert(s.offset());
                    break;
                }
                if key == "traceEvents" {
                    if s.peek().map_err(io_err)? != Some(b'[') {
                        return Err(not_trace("its `traceEvents` is not an array"));
                    }
                    s.pos += 1;
                    seen_events = true;
                    if !events(&mut s, &mut c, path)? {
                        break;
                    }
                    continue;
                }
                let Some(len) = s.value_len().map_err(|e| scan_error(path, s.offset(), e))? else {
                    c.t.truncated_at.get_or_insert(s.offset());
                    break;
                };
                c.meta(&key, &s.buf[s.pos..s.pos + len]);
                s.pos += len;
            }
            if !seen_events {
                if c.t.truncated_at.is_some() {
                    return Err(not_trace(
                        "the file ends before its `traceEvents` array (cut off while written?)",
                    ));
                }
                return Err(not_trace("it is a JSON object without `traceEvents`"));
            }
        }
        Some(_) => {
            return Err(not_trace(
                "it does not start with `{` or `[`, so it is not JSON",
            ));
        }
    }
    if c.evented == 0 && c.t.elements > 0 {
        return Err(not_trace("no element of its event array has `ph` or `ts`"));
    }
    c.t.bytes = s.base + s.buf.len() as u64;
    if s.cut && c.t.truncated_at.is_none() {
        c.t.truncated_at = Some(c.t.bytes);
    }
    // The doubling's slack (up to half the capacity) goes before the analysis adds its
    // rows: a large block is resized in place (`mremap`), not copied.
    c.t.events.shrink_to_fit();
    let file = match c.spill {
        Some(w) => Some(w.finish().map_err(|cause| Error::Spill {
            path: path.to_owned(),
            cause,
        })?),
        None => None,
    };
    Ok((c.t, file))
}

/// Reads the elements of an event array up to its `]`. Returns false when the input ended
/// first (recorded in `truncated_at`).
fn events<R: Read>(s: &mut Scan<R>, c: &mut Collector, path: &Path) -> Result<bool> {
    let io_err = |cause| Error::Io {
        path: path.to_owned(),
        cause,
    };
    loop {
        match s.peek().map_err(io_err)? {
            Some(b']') => {
                s.pos += 1;
                return Ok(true);
            }
            Some(b',') => {
                s.pos += 1;
                continue;
            }
            None => {
                c.t.truncated_at.get_or_insert(s.offset());
                return Ok(false);
            }
            Some(_) => {}
        }
        // Not an object (an empty value, `[,` or `,,`, is none either).
        if s.buf.get(s.pos) != Some(&b'{') {
            if c.t.elements == 0 {
                return Err(Error::NotATrace {
                    path: path.to_owned(),
                    reason: "its event array holds something other than objects".to_owned(),
                });
            }
            return Err(Error::BadEvent {
                path: path.to_owned(),
                offset: s.offset(),
                message: "an event that is not a JSON object".to_owned(),
            });
        }
        // serde_json parses the event where it lies and says where it ends: one pass over
        // its bytes. When that fails, the event may only be cut by the end of the buffer
        // (one per chunk read, or one longer than a chunk; serde_json calls a number cut
        // after its `.` invalid, not cut short): the scanner then finds its end, reading
        // no further than it and keeping to the value limit, and serde_json parses it
        // whole, so that a bad event's error is that of the whole event.
        let mut it =
            serde_json::Deserializer::from_slice(&s.buf[s.pos..]).into_iter::<RawEvent<'_>>();
        let parsed = match it.next() {
            Some(Ok(e)) => Some((e, it.byte_offset())),
            _ => None,
        };
        let (mut e, len) = match parsed {
            Some((_, len)) if len > s.max_value => {
                return Err(scan_error(path, s.offset(), s.too_long()));
            }
            Some(p) => p,
            None => {
                let Some(len) = s.value_len().map_err(|e| scan_error(path, s.offset(), e))? else {
                    c.t.truncated_at.get_or_insert(s.offset());
                    return Ok(false);
                };
                let e = serde_json::from_slice(&s.buf[s.pos..s.pos + len]).map_err(|e| {
                    Error::BadEvent {
                        path: path.to_owned(),
                        offset: s.offset(),
                        message: e.to_string(),
                    }
                })?;
                (e, len)
            }
        };
        let bytes = &s.buf[s.pos..s.pos + len];
        if let Some(ts) = e.ts.as_mut().filter(|t| t.decimal) {
            ts.value = top_level_number(bytes, b"ts").unwrap_or(ts.value);
        }
        c.push(e).map_err(|what| Error::TooLarge {
            path: path.to_owned(),
            offset: s.offset(),
            what,
        })?;
        s.pos += len;
    }
}

/// The number of the top-level key `key` of the JSON object `obj`, parsed by Rust's
/// correctly rounded `f64::from_str`.
///
/// Why: serde_json parses a float with up to one unit in the last place of error unless
/// its `float_roundtrip` feature is on, and that feature would change parsing for every
/// crate of the workspace. Nanosecond traces write `ts` with 19 significant digits
/// (`1712195495519689.047`), where one unit is 0.25 µs: enough to move HTA's
/// `ceil(ts)` to the next microsecond. Python (HTA) parses them correctly rounded.
fn top_level_number(obj: &[u8], key: &[u8]) -> Option<f64> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < obj.len() {
        match obj[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < obj.len() && obj[j] != b'"' {
                    j += if obj[j] == b'\\' { 2 } else { 1 };
                }
                let is_key = depth == 1 && obj.get(start..j) == Some(key);
                i = j + 1;
                if is_key {
                    while obj
                        .get(i)
                        .is_some_and(|b| b.is_ascii_whitespace() || *b == b':')
                    {
                        i += 1;
                    }
                    let end = obj[i..]
                        .iter()
                        .position(|b| !matches!(b, b'0'..=b'9' | b'.' | b'-' | b'+' | b'e' | b'E'))
                        .map_or(obj.len(), |k| i + k);
                    return std::str::from_utf8(&obj[i..end]).ok()?.parse().ok();
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<RawTrace> {
        read_from(json.as_bytes(), Path::new("t.json"))
    }

    /// What a read keeps is bounded, whatever the file: one value, the events, the names;
    /// past a limit, one error naming the file and the byte (limits made small here).
    #[test]
    fn reads_stop_at_what_they_keep() {
        let limits = Limits {
            value_bytes: 1000,
            events: 3,
            name_bytes: 200,
        };
        let path = Path::new("big.json");
        let ev = |name: &str| format!(r#"{{"ph":"X","name":"{name}","ts":1,"dur":2}}"#);
        // An event (or any value) longer than the limit: the scanner stops after it, and
        // would hold no more than the limit of a 10 GB string.
        let long = format!(r#"{{"traceEvents":[{}]}}"#, ev(&"a".repeat(5000)));
        let e = read_with(long.as_bytes(), path, limits, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "`big.json`: bad trace event at byte 16: one JSON value longer than 1000 bytes (a \
             trace event is a few hundred): the file is damaged or not a profiler trace"
        );
        let long = format!(
            r#"{{"deviceProperties":"{}","traceEvents":[]}}"#,
            "a".repeat(5000)
        );
        let e = read_with(long.as_bytes(), path, limits, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at byte 20: one JSON value longer than 1000 bytes"),
            "{e}"
        );
        // Events: the fourth with a duration is one too many.
        let four = format!("[{}]", [ev("k"), ev("k"), ev("k"), ev("k")].join(","));
        let e = read_with(four.as_bytes(), path, limits, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("`big.json`: more than 3 events by byte 112, the most gpufeed keeps"),
            "{e}"
        );
        // Names: distinct event names, 2 x 60 bytes each.
        let names: Vec<String> = (0..3).map(|i| ev(&format!("{i:060}"))).collect();
        let e = read_with(
            format!("[{}]", names.join(",")).as_bytes(),
            path,
            limits,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("more than 200 bytes of names"), "{e}");
        // Under the limits, the same files read.
        assert_eq!(read(&four).unwrap().events.len(), 4);
    }

    #[test]
    fn object_and_array_forms() {
        let ev = r#"{"ph":"X","cat":"kernel","name":"k\"1","ts":1.5,"dur":2,"pid":0,"tid":"s 7","args":{"stream":"7","correlation":3,"x":[1,{"y":"}"}]}}"#;
        let t = read(&format!(
            r#"{{"schemaVersion":1,"distributedInfo":{{"rank":3,"world_size":4}},"traceEvents":[{ev},{ev}],"deviceProperties":[{{"name":"V"}}]}}"#
        ))
        .unwrap();
        assert_eq!(t.events.len(), 2);
        assert_eq!(t.rank, Some(3));
        assert_eq!(t.device.as_deref(), Some("V"));
        assert_eq!(t.symbols.name(t.events[0].name), "k\"1");
        assert_eq!(t.events[0].stream, 7);
        assert_eq!(t.events[0].corr, 3);
        assert_eq!(t.pids[t.events[0].tid as usize], "s 7");
        assert!(t.fractional_ts);
        assert!(t.truncated_at.is_none());
        let t = read(&format!("[{ev}]")).unwrap();
        assert_eq!(t.events.len(), 1);
    }

    #[test]
    fn nanosecond_timestamps_are_correctly_rounded() {
        let obj = br#"{"args": {"ts": 1.5}, "ts": 1712195495519689.047, "dur": 63.813}"#;
        assert_eq!(
            top_level_number(obj, b"ts"),
            Some(1_712_195_495_519_689.047)
        );
        assert_eq!(top_level_number(obj, b"dur"), Some(63.813));
        assert_eq!(top_level_number(obj, b"x"), None);
    }

    /// A reader that hands its bytes over in pieces of 1 to 997 bytes, so that the buffer
    /// ends anywhere inside an event.
    struct Pieces<'a> {
        bytes: &'a [u8],
        k: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.k += 1;
            let n = (1 + self.k * 37 % 997).min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// Wherever the buffer ends inside an event (in a number after its `.` or `e`, a
    /// string, an escape, a key), the event reads as from the whole text.
    #[test]
    fn events_cut_by_the_buffer_read_whole() {
        let ev = r#"{"ph": "X", "cat": "kernel", "name": "k\"\u00e9 <4, x>", "pid": 1, "tid": 7, "ts": 1669783697579750.125, "dur": 3e0, "args": {"External id": -1954470, "blocks per SM": 0.0125, "grid": [1, 1, 1], "stream": 7, "correlation": 1954470, "x": null, "y": true}}"#;
        let text = format!(r#"{{"traceEvents": [{}]}}"#, vec![ev; 300].join(",\n"));
        let whole = read(&text).unwrap();
        let pieces = read_from(
            Pieces {
                bytes: text.as_bytes(),
                k: 0,
            },
            Path::new("t.json"),
        )
        .unwrap();
        assert_eq!(pieces.events.len(), 300);
        assert_eq!(pieces.events, whole.events);
        assert!(pieces.truncated_at.is_none());
        // A bad event is still one, at its own offset, whatever the pieces.
        let bad = text.replacen("0.0125", "0.", 1);
        let e = read_from(
            Pieces {
                bytes: bad.as_bytes(),
                k: 0,
            },
            Path::new("t.json"),
        )
        .unwrap_err();
        assert!(matches!(e, Error::BadEvent { offset: 17, .. }), "{e}");
    }

    #[test]
    fn cut_off_trace_keeps_what_was_read() {
        let ev = r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2}"#;
        let full = format!(r#"{{"traceEvents":[{ev},{ev},{ev}]}}"#);
        let cut = &full[..full.len() - 20];
        let t = read(cut).unwrap();
        assert_eq!(t.events.len(), 2);
        let at = t.truncated_at.unwrap();
        assert_eq!(at as usize, full.find(ev).unwrap() + 2 * ev.len() + 2);
    }

    #[test]
    fn not_a_trace() {
        for bad in [
            "",
            "hello",
            r#"{"a": 1}"#,
            "[1, 2]",
            r#"[{"a": 1}]"#,
            r#"{"traceEvents": 3}"#,
        ] {
            let e = read(bad).unwrap_err();
            assert!(matches!(e, Error::NotATrace { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("t.json"), "{e}");
        }
    }

    #[test]
    fn bad_event_names_its_offset() {
        let e = read(r#"{"traceEvents":[{"ph":"X","ts":1}, {"ph":"X","ts":"x"}]}"#).unwrap_err();
        match e {
            Error::BadEvent { offset, .. } => assert_eq!(offset, 35),
            other => panic!("{other}"),
        }
    }

    proptest::proptest! {
        /// Whatever the bytes, the reader returns, never panics.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = read_from(&bytes[..], Path::new("x"));
        }

        /// Cutting a valid trace anywhere reads a prefix of its events.
        #[test]
        fn any_cut_reads_a_prefix(cut in 0usize..200) {
            let ev = r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2}"#;
            let full = format!(r#"{{"traceEvents":[{ev},{ev},{ev}]}}"#);
            let cut = cut.min(full.len());
            if let Ok(t) = read(&full[..cut]) {
                proptest::prop_assert!(t.events.len() <= 3);
                proptest::prop_assert_eq!(t.truncated_at.is_none(), cut == full.len());
            }
        }
    }
}
