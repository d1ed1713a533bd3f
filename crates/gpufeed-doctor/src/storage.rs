//! The storage check: where the data and cache folders live and how fast they read, with
//! the page cache bypassed.
//!
//! - **Device**: `stat` gives the folder's device number; `/sys/dev/block/MAJOR:MINOR`
//!   leads to the block device (or, for a partition, its parent), whose
//!   `queue/rotational` says whether it is a hard disk.
//! - **File system**: the mount of `/proc/self/mountinfo` with the longest mount point that
//!   contains the folder; network and FUSE file systems (`nfs`, `cifs`, `9p`, `fuse.*`, ...)
//!   are flagged.
//! - **Files**: count, total and mean size (hidden entries and the cache folder inside the
//!   data folder are left out; symbolic links to folders are not followed).
//! - **Throughput**: sequential reads of the largest files in 1 MiB blocks, then random
//!   4 KiB reads spread over the files in proportion to their size, one at a time (queue
//!   depth 1), each bounded by [`Budget`]. Only the read calls are timed. The page cache is
//!   bypassed with `O_DIRECT` (a 4 KiB-aligned buffer, carved out of a `Vec` without
//!   `unsafe`) where the file system allows it, else with `fdatasync` then
//!   `posix_fadvise(DONTNEED)` before every read (and `FADV_RANDOM` against read-ahead in
//!   the random phase). When neither works nothing is reported as a throughput: a read from
//!   the page cache measures memory, not the disk. The method is in the evidence.
//!
//! `fadvise` cannot drop pages another process has mapped or locked; `O_DIRECT` on a
//! virtual disk can still be served by the hypervisor's cache. The evidence names the
//! method so a surprising figure can be read with that in mind.
//!
//! ```
//! use gpufeed_doctor::storage::{check, network_fs, StorageFacts};
//!
//! assert_eq!(network_fs("nfs4"), Some("network"));
//! assert_eq!(network_fs("fuse.sshfs"), Some("FUSE"));
//! assert_eq!(network_fs("ext4"), None);
//! let ids: Vec<&str> = check(&StorageFacts::default()).iter().map(|f| f.id).collect();
//! assert_eq!(ids, ["storage-summary", "storage-not-measured"]);
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpufeed_stats::thresholds::{
    MANY_FILES, RANDOM_READ_IOPS_LOW, SEQ_READ_SLOW_MB_S, SMALL_FILE_MEAN_KIB,
};
use rustix::fs::{Advice, Mode, OFlags};

use super::host::Roots;
use super::{fact, human_bytes};
use gpufeed_findings::constants::{
    STORAGE_MAX_FILES, STORAGE_MIN_JUDGED_BYTES, STORAGE_MIN_JUDGED_READS, STORAGE_RANDOM_MS,
    STORAGE_RANDOM_READS, STORAGE_READ_BYTES, STORAGE_SEQ_MS,
};
use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// Alignment of `O_DIRECT` buffers, offsets and lengths: the largest logical block size of
/// common devices (512 or 4096 bytes).
const ALIGN: usize = 4096;
/// Block of the sequential reads.
const SEQ_BLOCK: usize = 1024 * 1024;
/// Block of the random reads (the usual "4K random read" figure).
const RANDOM_BLOCK: usize = 4096;
/// Files whose paths are kept for the reads (all are counted).
const KEPT_FILES: usize = 100_000;
/// Open files kept during the random reads.
const OPEN_FILES: usize = 64;

/// How much the storage check reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Bytes read sequentially, at most.
    pub bytes: u64,
    /// Time of the sequential reads, at most.
    pub seq_time: Duration,
    /// Time of the random reads, at most.
    pub random_time: Duration,
    /// Random reads, at most.
    pub random_reads: usize,
    /// Files counted, at most.
    pub max_files: usize,
    /// Bytes a sequential figure needs to be judged.
    pub min_judged_bytes: u64,
    /// Random reads a rate needs to be judged.
    pub min_judged_reads: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            bytes: STORAGE_READ_BYTES,
            seq_time: Duration::from_millis(STORAGE_SEQ_MS),
            random_time: Duration::from_millis(STORAGE_RANDOM_MS),
            random_reads: STORAGE_RANDOM_READS as usize,
            max_files: STORAGE_MAX_FILES as usize,
            min_judged_bytes: STORAGE_MIN_JUDGED_BYTES,
            min_judged_reads: STORAGE_MIN_JUDGED_READS as usize,
        }
    }
}

/// Which folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// The dataset (`--data`).
    #[default]
    Data,
    /// The precomputed cache beside it.
    Cache,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Cache => "cache",
        }
    }
}

/// A mount of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// File system type (`ext4`, `nfs4`, `fuse.sshfs`).
    pub fs_type: String,
    /// What is mounted (`/dev/nvme0n1p2`, `server:/export`).
    pub source: String,
}

/// Files of a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStats {
    /// Regular files counted.
    pub count: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The walk stopped at [`Budget::max_files`].
    pub truncated: bool,
}

impl FileStats {
    /// Mean file size, bytes.
    #[must_use]
    pub fn mean(&self) -> u64 {
        self.bytes.checked_div(self.count).unwrap_or(0)
    }
}

/// How the page cache was bypassed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Method {
    /// `O_DIRECT`: the reads went to the device.
    Direct,
    /// `fdatasync` + `posix_fadvise(DONTNEED)` before reading.
    Fadvise,
    /// Neither worked: nothing was measured.
    Neither {
        /// Why.
        reason: String,
    },
    /// There was nothing to read.
    #[default]
    NothingToRead,
}

impl Method {
    fn describe(&self) -> String {
        match self {
            Self::Direct => "O_DIRECT".to_owned(),
            Self::Fadvise => {
                "O_DIRECT refused; fdatasync + posix_fadvise(DONTNEED) before each read".to_owned()
            }
            Self::Neither { reason } => format!("page cache not bypassed: {reason}"),
            Self::NothingToRead => "no file to read".to_owned(),
        }
    }
}

/// A timed read phase.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reads {
    /// Read calls that returned data.
    pub reads: u64,
    /// Bytes returned.
    pub bytes: u64,
    /// Seconds spent in the read calls.
    pub seconds: f64,
}

impl Reads {
    /// Throughput, MB/s (10^6 bytes, as disks are sold).
    #[must_use]
    pub fn mb_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.bytes as f64 / 1e6 / self.seconds)
    }

    /// Reads per second.
    #[must_use]
    pub fn per_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.reads as f64 / self.seconds)
    }
}

/// What the storage check found for one folder.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageFacts {
    /// Data or cache.
    pub role: Role,
    /// The folder, as given.
    pub path: PathBuf,
    /// `major:minor` of its device.
    pub dev: Option<(u32, u32)>,
    /// The block device's name (`nvme0n1`, `sda`); `None` for a virtual or network file
    /// system.
    pub device: Option<String>,
    /// `queue/rotational` of the block device.
    pub rotational: Option<bool>,
    /// The mount holding the folder.
    pub mount: Option<Mount>,
    /// Its files.
    pub files: FileStats,
    /// How the page cache was bypassed.
    pub method: Method,
    /// Sequential reads (`None` when nothing was measured).
    pub seq: Option<Reads>,
    /// Random 4 KiB reads.
    pub random: Option<Reads>,
    /// A precomputed cache exists beside the data (for the data folder).
    pub cache_beside: bool,
    /// The budget the figures were measured with (what is judged).
    pub budget: Budget,
}

impl StorageFacts {
    /// Looks at `dir` and reads from it within `budget`; `exclude` (the cache folder inside
    /// the data folder) is not counted.
    #[must_use]
    pub fn collect(
        role: Role,
        dir: &Path,
        exclude: Option<&Path>,
        budget: &Budget,
        roots: &Roots,
    ) -> Self {
        // Measured on the real path (mounts are matched against it), named as given.
        let real = fs_err::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let dev = std::fs::metadata(&real).ok().map(|m| {
            use std::os::unix::fs::MetadataExt as _;
            let d = m.dev();
            (rustix::fs::major(d), rustix::fs::minor(d))
        });
        let (device, rotational) = dev.map_or((None, None), |d| block_device(&roots.sys, d));
        let mount = fs_err::read_to_string(roots.proc.join("self/mountinfo"))
            .ok()
            .and_then(|t| mount_of(&parse_mountinfo(&t), &real).cloned());
        let exclude = exclude.map(|e| fs_err::canonicalize(e).unwrap_or_else(|_| e.to_path_buf()));
        let (files, list) = walk(&real, exclude.as_deref(), budget.max_files);
        let (method, seq, random) = measure(&list, budget, None);
        Self {
            role,
            path: dir.to_path_buf(),
            dev,
            device,
            rotational,
            mount,
            files,
            method,
            seq,
            random,
            cache_beside: false,
            budget: budget.clone(),
        }
    }
}

/// The block device behind `major:minor` and whether it rotates. A partition's queue is its
/// parent's.
fn block_device(sys: &Path, (major, minor): (u32, u32)) -> (Option<String>, Option<bool>) {
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let Ok(dir) = fs_err::canonicalize(&link) else {
        return (None, None);
    };
    for d in [Some(dir.as_path()), dir.parent()].into_iter().flatten() {
        if let Ok(r) = fs_err::read_to_string(d.join("queue/rotational")) {
            let name = d.file_name().map(|n| n.to_string_lossy().into_owned());
            return (name, Some(r.trim() == "1"));
        }
    }
    (
        dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        None,
    )
}

/// Parses `/proc/self/mountinfo`; lines that do not parse are skipped.
#[must_use]
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mount_point = left.split(' ').nth(4)?;
            let mut r = right.split(' ');
            Some(Mount {
                mount_point: PathBuf::from(unescape(mount_point)),
                fs_type: r.next()?.to_owned(),
                source: unescape(r.next().unwrap_or("")),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as `\040`-style octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = b[i + 1..i + 4]
                .iter()
                .fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path`: the longest mount point that is a prefix of it (the last one
/// listed among equals, as it is mounted over the others).
#[must_use]
pub fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best
                .is_none_or(|b| m.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len())
        {
            best = Some(m);
        }
    }
    best
}

/// `Some("network")` or `Some("FUSE")` for file systems that pay a round trip per call.
#[must_use]
pub fn network_fs(fs_type: &str) -> Option<&'static str> {
    const NETWORK: &[&str] = &[
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "afs",
        "davfs",
        "virtiofs",
    ];
    if fs_type == "fuse" || fs_type == "fuseblk" || fs_type.starts_with("fuse.") {
        Some("FUSE")
    } else if NETWORK.contains(&fs_type) {
        Some("network")
    } else {
        None
    }
}

/// Counts the regular files under `root` (not hidden, not under `exclude`) and keeps the
/// first [`KEPT_FILES`] with their sizes for the reads.
fn walk(root: &Path, exclude: Option<&Path>, max_files: usize) -> (FileStats, Vec<(PathBuf, u64)>) {
    let mut stats = FileStats::default();
    let mut kept = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = e.path();
            if exclude.is_some_and(|x| path == x) {
                continue;
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(path);
                continue;
            }
            // A link to a file counts as the file; links to folders are not followed.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            if stats.count as usize >= max_files {
                stats.truncated = true;
                return (stats, kept);
            }
            stats.count += 1;
            stats.bytes += meta.len();
            if kept.len() < KEPT_FILES && meta.len() > 0 {
                kept.push((path, meta.len()));
            }
        }
    }
    (stats, kept)
}

/// A buffer of `len` bytes at a 4 KiB-aligned address, for `O_DIRECT`, without `unsafe`:
/// a `Vec` one alignment longer, sliced from its first aligned byte.
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Option<Self> {
        let raw = vec![0u8; len + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN);
        (start < ALIGN).then_some(Self { raw, start, len })
    }

    fn get(&mut self, len: usize) -> &mut [u8] {
        let len = len.min(self.len);
        &mut self.raw[self.start..self.start + len]
    }
}

/// Opens `path` for reading with `O_DIRECT`.
fn open_direct(path: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECT | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Picks the method on the first file: `O_DIRECT` if open and an aligned read work, else
/// `fadvise` if the kernel accepts it, else neither.
fn pick_method(path: &Path, buf: &mut Aligned) -> Method {
    let direct = open_direct(path).and_then(|fd| rustix::io::pread(&fd, buf.get(ALIGN), 0));
    if direct.is_ok() {
        return Method::Direct;
    }
    let direct_err = direct.err().map(|e| e.to_string()).unwrap_or_default();
    match fs_err::File::open(path).map(|f| rustix::fs::fadvise(f.file(), 0, None, Advice::DontNeed))
    {
        Ok(Ok(())) => Method::Fadvise,
        Ok(Err(e)) => Method::Neither {
            reason: format!("O_DIRECT: {direct_err}; posix_fadvise: {e}"),
        },
        Err(e) => Method::Neither {
            reason: format!("cannot open `{}`: {e}", path.display()),
        },
    }
}

/// A file opened for the measurement.
enum Handle {
    Direct(OwnedFd),
    Cached(fs_err::File),
}

impl Handle {
    fn open(path: &Path, method: &Method, random: bool) -> Option<Self> {
        match method {
            Method::Direct => open_direct(path).ok().map(Self::Direct),
            Method::Fadvise => {
                let f = fs_err::File::open(path).ok()?;
                // Write back dirty pages first: DONTNEED does not drop dirty pages.
                let _ = rustix::fs::fdatasync(f.file());
                rustix::fs::fadvise(f.file(), 0, None, Advice::DontNeed).ok()?;
                if random {
                    // No read-ahead: each read fetches its own 4 KiB.
                    let _ = rustix::fs::fadvise(f.file(), 0, None, Advice::Random);
                }
                Some(Self::Cached(f))
            }
            Method::Neither { .. } | Method::NothingToRead => None,
        }
    }

    /// One timed read of up to `len` bytes at `offset` (aligned for `O_DIRECT`); returns
    /// the bytes read and the time in the read call.
    fn read_at(&mut self, buf: &mut Aligned, offset: u64, len: usize) -> Option<(usize, f64)> {
        match self {
            Self::Direct(fd) => {
                let t = Instant::now();
                let n = rustix::io::pread(&*fd, buf.get(len), offset).ok()?;
                Some((n, t.elapsed().as_secs_f64()))
            }
            Self::Cached(f) => {
                let fd = f.file();
                let _ = rustix::fs::fadvise(
                    fd,
                    offset,
                    std::num::NonZeroU64::new(len as u64),
                    Advice::DontNeed,
                );
                let t = Instant::now();
                let n = rustix::io::pread(fd, buf.get(len), offset).ok()?;
                Some((n, t.elapsed().as_secs_f64()))
            }
        }
    }
}

/// Sequential then random reads within the budget; `force` skips the choice of method
/// (tests of the `fadvise` path on a file system that allows `O_DIRECT`).
fn measure(
    files: &[(PathBuf, u64)],
    budget: &Budget,
    force: Option<Method>,
) -> (Method, Option<Reads>, Option<Reads>) {
    let Some((first, _)) = files.first() else {
        return (Method::NothingToRead, None, None);
    };
    let Some(mut buf) = Aligned::new(SEQ_BLOCK) else {
        return (
            Method::Neither {
                reason: "no aligned buffer".to_owned(),
            },
            None,
            None,
        );
    };
    let method = force.unwrap_or_else(|| pick_method(first, &mut buf));
    if !matches!(method, Method::Direct | Method::Fadvise) {
        return (method, None, None);
    }
    let seq = sequential(files, &method, &mut buf, budget);
    let random = random(files, &method, &mut buf, budget);
    (method, Some(seq), Some(random))
}

/// The largest files first, each from its start in 1 MiB blocks.
fn sequential(files: &[(PathBuf, u64)], method: &Method, buf: &mut Aligned, b: &Budget) -> Reads {
    let mut order: Vec<&(PathBuf, u64)> = files.iter().collect();
    order.sort_by_key(|x| std::cmp::Reverse(x.1));
    let mut r = Reads::default();
    let started = Instant::now();
    'files: for (path, _) in order {
        let Some(mut h) = Handle::open(path, method, false) else {
            continue;
        };
        let mut offset = 0u64;
        loop {
            if r.bytes >= b.bytes || started.elapsed() >= b.seq_time {
                break 'files;
            }
            let (n, s) = match &mut h {
                // Sequential buffered reads keep read-ahead: that is how a file is read.
                Handle::Cached(f) => {
                    let t = Instant::now();
                    match f.read(buf.get(SEQ_BLOCK)) {
                        Ok(n) => (n, t.elapsed().as_secs_f64()),
                        Err(_) => break,
                    }
                }
                Handle::Direct(_) => match h.read_at(buf, offset, SEQ_BLOCK) {
                    Some(x) => x,
                    None => break,
                },
            };
            if n == 0 {
                break;
            }
            r.reads += 1;
            r.bytes += n as u64;
            r.seconds += s;
            offset += n as u64;
            // A short O_DIRECT read is the end of the file (the next offset is unaligned).
            if n < SEQ_BLOCK && matches!(h, Handle::Direct(_)) {
                break;
            }
        }
    }
    r
}

/// 4 KiB reads at offsets spread over all the files' bytes (a Weyl sequence of the golden
/// ratio: deterministic, with no two reads close together), aligned to 4 KiB.
fn random(files: &[(PathBuf, u64)], method: &Method, buf: &mut Aligned, b: &Budget) -> Reads {
    let mut ends = Vec::with_capacity(files.len());
    let mut total = 0u64;
    for (_, len) in files {
        total += len;
        ends.push(total);
    }
    let mut r = Reads::default();
    if total == 0 {
        return r;
    }
    let mut open: HashMap<usize, Handle> = HashMap::new();
    let started = Instant::now();
    let golden = (5f64.sqrt() - 1.0) / 2.0;
    for i in 1..=b.random_reads {
        if started.elapsed() >= b.random_time {
            break;
        }
        let u = (i as f64 * golden).fract();
        let target = ((u * total as f64) as u64).min(total - 1);
        let idx = ends.partition_point(|&e| e <= target);
        let Some((path, len)) = files.get(idx) else {
            continue;
        };
        let file_start = ends[idx] - len;
        let mut offset = (target - file_start) / ALIGN as u64 * ALIGN as u64;
        if offset >= *len {
            offset = 0;
        }
        if !open.contains_key(&idx) {
            if open.len() >= OPEN_FILES {
                open.clear();
            }
            let Some(h) = Handle::open(path, method, true) else {
                continue;
            };
            open.insert(idx, h);
        }
        let Some(h) = open.get_mut(&idx) else {
            continue;
        };
        if let Some((n, s)) = h.read_at(buf, offset, RANDOM_BLOCK)
            && n > 0
        {
            r.reads += 1;
            r.bytes += n as u64;
            r.seconds += s;
        }
    }
    r
}

/// The rules over one folder's facts.
#[must_use]
pub fn check(s: &StorageFacts) -> Vec<Finding> {
    let at = |f: Finding| {
        if s.path.as_os_str().is_empty() {
            f
        } else {
            f.in_file(&s.path)
        }
    };
    let fix = |id: &str| gpufeed_findings::rules::rule_info(id).map_or("", |r| r.fix);
    let mut out = vec![at(summary(s))];
    // Virtual disks (virtio, Xen) are often marked rotational whatever backs them: a
    // measured seek-free random rate overrules the flag.
    if s.rotational == Some(true) && !reads_like_ssd(s) {
        out.push(at(finding(
            "storage-rotational",
            &format!(
                "the {} folder is on a hard disk ({})",
                s.role.as_str(),
                s.device.as_deref().unwrap_or("?")
            ),
        )
        .evidence(format!(
            "/sys/block/{}/queue/rotational = 1",
            s.device.as_deref().unwrap_or("?")
        ))
        .fix(fix("storage-rotational"))));
    }
    if let Some(m) = &s.mount
        && let Some(kind) = network_fs(&m.fs_type)
    {
        out.push(at(finding(
            "storage-network-fs",
            &format!(
                "the {} folder is on a {kind} file system ({})",
                s.role.as_str(),
                m.fs_type
            ),
        )
        .evidence(format!(
            "mounted from `{}` on `{}`, type {}",
            m.source,
            m.mount_point.display(),
            m.fs_type
        ))
        .fix(fix("storage-network-fs"))));
    }
    let b = &s.budget;
    if let Some(seq) = s.seq
        && seq.bytes >= b.min_judged_bytes
        && let Some(mb_s) = seq.mb_s()
        && mb_s < SEQ_READ_SLOW_MB_S
    {
        out.push(at(finding(
            "storage-slow-sequential",
            &format!("sequential reads at {mb_s:.0} MB/s"),
        )
        .evidence(format!(
            "{} in {:.2} s of reads ({}); reported below {SEQ_READ_SLOW_MB_S:.0} MB/s",
            human_bytes(seq.bytes),
            seq.seconds,
            s.method.describe()
        ))
        .fix(fix("storage-slow-sequential"))));
    }
    if let Some(rnd) = s.random
        && rnd.reads >= b.min_judged_reads as u64
        && let Some(per_s) = rnd.per_s()
        && per_s < RANDOM_READ_IOPS_LOW
    {
        out.push(at(finding(
            "storage-slow-random",
            &format!("random 4 KiB reads at {per_s:.0} per second"),
        )
        .evidence(format!(
            "{} reads in {:.2} s, {:.2} ms each ({}); reported below {RANDOM_READ_IOPS_LOW:.0} per second",
            rnd.reads,
            rnd.seconds,
            1e3 * rnd.seconds / rnd.reads as f64,
            s.method.describe()
        ))
        .fix(fix("storage-slow-random"))));
    }
    match &s.method {
        Method::Neither { .. } | Method::NothingToRead => out.push(at(finding(
            "storage-not-measured",
            &format!(
                "the {} folder's read speed was not measured",
                s.role.as_str()
            ),
        )
        .evidence(s.method.describe())
        .fix(fix("storage-not-measured")))),
        Method::Direct | Method::Fadvise => {}
    }
    let mean_kib = s.files.mean() as f64 / 1024.0;
    if s.role == Role::Data
        && !s.cache_beside
        && s.files.count as f64 >= MANY_FILES
        && mean_kib < SMALL_FILE_MEAN_KIB
    {
        out.push(at(finding(
            "storage-many-small-files",
            &format!(
                "{}{} files of {} on average",
                if s.files.truncated { "at least " } else { "" },
                s.files.count,
                human_bytes(s.files.mean())
            ),
        )
        .evidence(format!(
            "{} files, {} in all; reported from {MANY_FILES:.0} files below {SMALL_FILE_MEAN_KIB:.0} KiB on average",
            s.files.count,
            human_bytes(s.files.bytes)
        ))
        .fix(format!(
            "gpufeed precompute --data {}  # features in shards of 256 items, read in large blocks",
            s.path.display()
        ))));
    }
    out
}

/// Random reads were measured, enough to judge, at or above a seeking disk's rate.
fn reads_like_ssd(s: &StorageFacts) -> bool {
    s.random
        .filter(|r| r.reads >= s.budget.min_judged_reads as u64)
        .and_then(|r| r.per_s())
        .is_some_and(|p| p >= RANDOM_READ_IOPS_LOW)
}

fn summary(s: &StorageFacts) -> Finding {
    let f = &s.files;
    let head = format!(
        "{} folder: {}{} files, {}, {} on average",
        s.role.as_str(),
        if f.truncated { "at least " } else { "" },
        f.count,
        human_bytes(f.bytes),
        human_bytes(f.mean())
    );
    let mut ev = String::new();
    match &s.mount {
        Some(m) => {
            let _ = write!(ev, "{} on `{}`", m.fs_type, m.mount_point.display());
            if matches!(m.fs_type.as_str(), "tmpfs" | "ramfs") {
                ev.push_str(" (in memory: reads run at memory speed)");
            }
        }
        None => ev.push_str("mount unknown"),
    }
    match (&s.device, s.rotational) {
        (Some(d), Some(true)) if reads_like_ssd(s) => {
            let _ = write!(
                ev,
                ", device {d} (marked rotational, but its random reads are an SSD's: a virtual disk?)"
            );
        }
        (Some(d), Some(true)) => {
            let _ = write!(ev, ", device {d} (rotational)");
        }
        (Some(d), Some(false)) => {
            let _ = write!(ev, ", device {d} (not rotational)");
        }
        (Some(d), None) => {
            let _ = write!(ev, ", device {d}");
        }
        (None, _) => match s.dev {
            Some((major, minor)) => {
                let _ = write!(ev, ", no block device ({major}:{minor})");
            }
            None => ev.push_str(", device unknown"),
        },
    }
    let b = &s.budget;
    if let Some(seq) = s.seq {
        match seq.mb_s() {
            Some(mb_s) => {
                let _ = write!(
                    ev,
                    "; sequential {mb_s:.0} MB/s ({} in {:.3} s{})",
                    human_bytes(seq.bytes),
                    seq.seconds,
                    if seq.bytes < b.min_judged_bytes {
                        format!(", under {} so not judged", human_bytes(b.min_judged_bytes))
                    } else {
                        String::new()
                    }
                );
            }
            None => ev.push_str("; sequential: nothing read"),
        }
    }
    if let Some(rnd) = s.random
        && let Some(per_s) = rnd.per_s()
    {
        let _ = write!(
            ev,
            "; random 4 KiB {per_s:.0} reads/s = {:.1} MB/s ({} reads{})",
            rnd.mb_s().unwrap_or(0.0),
            rnd.reads,
            if (rnd.reads as usize) < b.min_judged_reads {
                ", too few to judge"
            } else {
                ""
            }
        );
    }
    let _ = write!(ev, "; {}", s.method.describe());
    fact("storage-summary", head).evidence(ev)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &StorageFacts) -> Vec<&'static str> {
        check(s).iter().map(|f| f.id).collect()
    }

    /// A local NVMe SSD, measured.
    fn fast() -> StorageFacts {
        StorageFacts {
            role: Role::Data,
            path: PathBuf::from("/data/ljspeech"),
            dev: Some((259, 2)),
            device: Some("nvme0n1".into()),
            rotational: Some(false),
            mount: Some(Mount {
                mount_point: "/".into(),
                fs_type: "ext4".into(),
                source: "/dev/nvme0n1p2".into(),
            }),
            files: FileStats {
                count: 500,
                bytes: 500 << 20,
                truncated: false,
            },
            method: Method::Direct,
            seq: Some(Reads {
                reads: 256,
                bytes: 256 << 20,
                seconds: 0.1,
            }),
            random: Some(Reads {
                reads: 2000,
                bytes: 2000 * 4096,
                seconds: 0.2,
            }),
            cache_beside: false,
            budget: Budget::default(),
        }
    }

    #[test]
    fn fast_local_ssd_only_reports_its_summary() {
        assert_eq!(ids(&fast()), ["storage-summary"]);
        let f = &check(&fast())[0];
        assert_eq!(f.path.as_deref(), Some("/data/ljspeech"));
        assert!(
            f.evidence.contains("sequential 2684 MB/s"),
            "{}",
            f.evidence
        );
        assert!(
            f.evidence.contains("random 4 KiB 10000 reads/s"),
            "{}",
            f.evidence
        );
        assert!(f.evidence.contains("O_DIRECT"), "{}", f.evidence);
    }

    #[test]
    fn rotational_and_network() {
        let s = StorageFacts {
            rotational: Some(true),
            random: None,
            ..fast()
        };
        assert!(ids(&s).contains(&"storage-rotational"));
        // A virtual disk marked rotational that reads at an SSD's rate is not a hard disk.
        let s = StorageFacts {
            rotational: Some(true),
            ..fast()
        };
        assert!(!ids(&s).contains(&"storage-rotational"));
        assert!(check(&s)[0].evidence.contains("marked rotational"));
        let s = StorageFacts {
            mount: Some(Mount {
                mount_point: "/mnt/nas".into(),
                fs_type: "nfs4".into(),
                source: "nas:/export".into(),
            }),
            ..fast()
        };
        assert!(ids(&s).contains(&"storage-network-fs"));
    }

    #[test]
    fn slow_reads_are_judged_only_when_enough_was_read() {
        let slow_seq = Reads {
            reads: 64,
            bytes: 64 << 20,
            seconds: 1.0,
        };
        let s = StorageFacts {
            seq: Some(slow_seq),
            ..fast()
        };
        assert!(ids(&s).contains(&"storage-slow-sequential"));
        let s = StorageFacts {
            seq: Some(Reads {
                bytes: 1 << 20,
                ..slow_seq
            }),
            ..fast()
        };
        assert!(!ids(&s).contains(&"storage-slow-sequential"));
        let hdd = Reads {
            reads: 100,
            bytes: 100 * 4096,
            seconds: 1.0,
        };
        let s = StorageFacts {
            random: Some(hdd),
            ..fast()
        };
        assert!(ids(&s).contains(&"storage-slow-random"));
        let s = StorageFacts {
            random: Some(Reads { reads: 10, ..hdd }),
            ..fast()
        };
        assert!(!ids(&s).contains(&"storage-slow-random"));
    }

    #[test]
    fn not_measured_says_why() {
        let s = StorageFacts {
            method: Method::Neither {
                reason: "O_DIRECT: Invalid argument; posix_fadvise: Operation not supported".into(),
            },
            seq: None,
            random: None,
            ..fast()
        };
        let f = check(&s);
        let nm = f.iter().find(|f| f.id == "storage-not-measured");
        assert!(
            nm.is_some_and(|f| f
                .evidence
                .contains("posix_fadvise: Operation not supported")),
            "{f:?}"
        );
        assert!(!f[0].evidence.contains("MB/s"), "{}", f[0].evidence);
    }

    #[test]
    fn many_small_files_unless_a_cache_exists() {
        let many = StorageFacts {
            files: FileStats {
                count: 13100,
                bytes: 13100 * 200 * 1024,
                truncated: false,
            },
            ..fast()
        };
        assert!(ids(&many).contains(&"storage-many-small-files"));
        let cached = StorageFacts {
            cache_beside: true,
            ..many.clone()
        };
        assert!(!ids(&cached).contains(&"storage-many-small-files"));
        let big = StorageFacts {
            files: FileStats {
                count: 13100,
                bytes: (13100 * 4) << 20,
                truncated: false,
            },
            ..fast()
        };
        assert!(!ids(&big).contains(&"storage-many-small-files"));
    }

    #[test]
    fn mountinfo_longest_prefix_and_escapes() {
        let text = "\
22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 0:45 / /mnt/my\\040nas rw,relatime shared:5 - nfs4 nas:/export rw,vers=4.2
41 22 0:46 / /mnt rw - tmpfs tmpfs rw
garbage line
";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 3);
        let m = mount_of(&mounts, Path::new("/mnt/my nas/ljspeech"));
        assert_eq!(m.map(|m| m.fs_type.as_str()), Some("nfs4"));
        assert_eq!(m.map(|m| m.source.as_str()), Some("nas:/export"));
        let m = mount_of(&mounts, Path::new("/home/x"));
        assert_eq!(m.map(|m| m.fs_type.as_str()), Some("ext4"));
        let m = mount_of(&mounts, Path::new("/mnt/other"));
        assert_eq!(m.map(|m| m.fs_type.as_str()), Some("tmpfs"));
        assert_eq!(unescape("a\\134b\\011"), "a\\b\t");
    }

    #[test]
    fn fadvise_path_reads_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for i in 0..3u64 {
            let p = dir.path().join(format!("{i}.bin"));
            fs_err::write(&p, vec![1u8; 600_000]).unwrap();
            files.push((p, 600_000));
        }
        let budget = Budget {
            bytes: 1 << 20,
            random_reads: 40,
            ..Budget::default()
        };
        let (method, seq, random) = measure(&files, &budget, Some(Method::Fadvise));
        assert_eq!(method, Method::Fadvise);
        let seq = seq.unwrap();
        assert!(seq.bytes >= 1 << 20 && seq.bytes < 2 << 20, "{seq:?}");
        assert_eq!(random.unwrap().reads, 40);
        // A method that cannot read reports nothing.
        let neither = Method::Neither {
            reason: "test".into(),
        };
        let (m, seq, random) = measure(&files, &budget, Some(neither.clone()));
        assert_eq!((m, seq, random), (neither, None, None));
    }

    #[test]
    fn aligned_buffer_is_aligned() {
        let mut a = Aligned::new(SEQ_BLOCK).unwrap();
        let s = a.get(ALIGN);
        assert_eq!(s.as_ptr() as usize % ALIGN, 0);
        assert_eq!(s.len(), ALIGN);
        assert_eq!(a.get(10 * SEQ_BLOCK).len(), SEQ_BLOCK);
    }

    #[test]
    fn measures_a_real_folder_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("wavs");
        fs_err::create_dir_all(&data).unwrap();
        for i in 0..5 {
            fs_err::write(data.join(format!("{i}.wav")), vec![7u8; 300_000 + i]).unwrap();
        }
        fs_err::write(dir.path().join("metadata.csv"), "a|b|c\n").unwrap();
        fs_err::write(dir.path().join(".hidden"), "x").unwrap();
        let cache = dir.path().join(".gpufeed-cache");
        fs_err::create_dir_all(&cache).unwrap();
        fs_err::write(cache.join("shard.safetensors"), vec![0u8; 10_000]).unwrap();
        let budget = Budget {
            bytes: 1 << 20,
            random_reads: 50,
            ..Budget::default()
        };
        let s = StorageFacts::collect(
            Role::Data,
            dir.path(),
            Some(&cache),
            &budget,
            &Roots::default(),
        );
        assert_eq!(s.files.count, 6, "{s:?}");
        assert_eq!(s.files.bytes, 5 * 300_000 + 10 + 6);
        assert!(s.mount.is_some(), "{s:?}");
        assert!(
            matches!(s.method, Method::Direct | Method::Fadvise),
            "{s:?}"
        );
        let seq = s.seq.unwrap();
        // The budget holds to the block: at most one 1 MiB block past it.
        assert!(seq.bytes >= 1 << 20 && seq.bytes <= 2 << 20, "{seq:?}");
        let rnd = s.random.unwrap();
        assert_eq!(rnd.reads, 50, "{rnd:?}");
        let f = check(&s);
        assert!(f[0].evidence.contains("sequential"), "{}", f[0].evidence);
        // Nothing to read: said so.
        let empty = tempfile::tempdir().unwrap();
        let s = StorageFacts::collect(Role::Data, empty.path(), None, &budget, &Roots::default());
        assert_eq!(s.method, Method::NothingToRead);
        assert!(ids(&s).contains(&"storage-not-measured"));
    }
}
