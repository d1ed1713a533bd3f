//! TensorFlow profiler traces (the trace viewer's JSON, `*.trace.json.gz`) on the rows of
//! a PyTorch trace.
//!
//! TensorFlow writes no categories: a process named `/device:GPU:N` holds the GPU, one
//! thread per stream (`Stream #14(Compute)`), beside derived lines (`TensorFlow Ops`,
//! `XLA Ops`, `Steps`) that repeat the same time and are left out. Host processes
//! (`/host:CPU`) hold the launches (`cuLaunchKernel`, `cudaLaunchKernel`) with the same
//! `args.correlation_id` as their kernel, and the step markers (`args.step_num`, written by
//! `tf.profiler.experimental.Trace("train", step_num=N)` and by Keras' `fit`). [`lower`]
//! gives every GPU row a category (`kernel`, or `gpu_memcpy` for `Memcpy*`) and its stream
//! number, every host row `cpu_op`, so HTA's rules apply unchanged; TensorFlow has no
//! ProfilerStep, so no window is applied.

use std::io::Read as _;
use std::path::Path;

use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::hta::round_span;
use crate::read::{Event, NO_CAT, RawTrace};
use crate::steps::Markers;
use gpufeed_stats::thresholds::Level;

/// Whether the trace has TensorFlow's process names.
#[must_use]
pub fn is_tensorflow(t: &RawTrace) -> bool {
    t.process_names
        .iter()
        .any(|p| p.name.contains("/device:GPU") || p.name.contains("/host:CPU"))
}

/// The pids of TensorFlow's GPU planes (`/device:GPU:N`).
fn gpu_pids(t: &RawTrace) -> Vec<u32> {
    t.process_names
        .iter()
        .filter(|p| p.name.contains("/device:GPU"))
        .map(|p| p.pid)
        .collect()
}

/// The stream number of a GPU thread name: `Stream #14(Compute)` → 14.
fn stream_of(thread: &str) -> Option<i64> {
    let rest = thread.strip_prefix("Stream #")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Gives TensorFlow's rows the categories, streams and correlations of HTA's model.
pub fn lower(t: &mut RawTrace) {
    let max_corr = t.events.iter().map(|e| e.corr).max();
    let mut l = Lowering::new(t, max_corr);
    let mut events = std::mem::take(&mut t.events);
    for e in &mut events {
        l.apply(e);
    }
    t.events = events;
}

/// [`lower`] one event at a time, in file order (the streamed route lowers events as it
/// reads them back, each pass from a fresh [`Lowering`]).
#[derive(Debug, Clone)]
pub(crate) struct Lowering {
    gpu_pids: Vec<u32>,
    streams: FxHashMap<(u32, u32), i64>,
    /// Name ids that start with `Memcpy`.
    memcpy_names: Vec<bool>,
    kernel: u32,
    memcpy: u32,
    cpu: u32,
    /// The next correlation given to a kernel without one.
    spare: i64,
}

impl Lowering {
    /// The lowering of `t`, whose largest correlation is `max_corr`; adds the categories'
    /// names to its symbols.
    pub(crate) fn new(t: &mut RawTrace, max_corr: Option<i64>) -> Self {
        let gpu_pids = gpu_pids(t);
        // The first thread name of a (pid, tid) gives its stream, as a search in order does.
        let mut streams: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        for m in &t.thread_names {
            if let (Some(tid), Some(s)) = (m.tid, stream_of(&m.name)) {
                streams.entry((m.pid, tid)).or_insert(s);
            }
        }
        let kernel = t.symbols.intern("kernel");
        let memcpy = t.symbols.intern("gpu_memcpy");
        let cpu = t.symbols.intern("cpu_op");
        Self {
            gpu_pids,
            streams,
            memcpy_names: t
                .symbols
                .iter()
                .map(|(_, n)| n.starts_with("Memcpy"))
                .collect(),
            kernel,
            memcpy,
            cpu,
            // Kernels without a launch link still count as GPU rows (HTA needs a
            // correlation): they get ids above every real one, so they match no launch.
            spare: max_corr.unwrap_or(0).max(0) + 1,
        }
    }

    /// Lowers the next event in file order.
    pub(crate) fn apply(&mut self, e: &mut Event) {
        if !self.gpu_pids.contains(&e.pid) {
            e.cat = self.cpu;
            e.stream = -1;
            return;
        }
        let Some(&s) = self.streams.get(&(e.pid, e.tid)) else {
            e.cat = NO_CAT;
            return;
        };
        e.stream = s;
        e.cat = if self
            .memcpy_names
            .get(e.name as usize)
            .copied()
            .unwrap_or(false)
        {
            self.memcpy
        } else {
            self.kernel
        };
        if e.corr < 0 {
            e.corr = self.spare;
            self.spare += 1;
        }
    }
}

/// The steps of a TensorFlow trace, `(N, ts, end)` by start, and which markers gave them,
/// in this order of preference:
///
/// 1. host events with `step_num` (`tf.profiler.experimental.Trace("train", step_num=N)`,
///    `jax.profiler.StepTraceAnnotation`), the first marker of each N;
/// 2. the GPU plane's `Steps` line (of `device`, else the first GPU plane that has one):
///    one event per step, numbered by its `group_id` (else its name, else its place), the
///    step's GPU extent (Keras `fit`, whose steps carry no `step_num`);
/// 3. Keras' `train_function` calls on the host (`__inference_train_function_N`), the
///    outermost;
/// 4. `iter_num` (graph-mode iterations): each N from its first event's start to its last
///    event's end.
#[must_use]
pub fn steps(t: &RawTrace, device: Option<u32>) -> (Vec<(i64, i64, i64)>, Option<Markers>) {
    let mut marks = Marks::new(t);
    for (i, e) in t.events.iter().enumerate() {
        marks.add(t, i, e);
    }
    marks.steps(device)
}

/// An event of a `Steps` line: its number (`group_id`, else its name), its span.
type LineStep = (Option<i64>, (i64, i64));

/// What TensorFlow's steps are read from, gathered from the events in file order (in
/// memory by [`steps`], from disk by [`crate::stream`]).
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// Event index → `step_num`, `group_id`, `iter_num` (from the trace's marks).
    step_num: FxHashMap<usize, i64>,
    group: FxHashMap<usize, i64>,
    iter_num: FxHashMap<usize, i64>,
    gpu_pids: Vec<u32>,
    /// The GPU planes' `Steps` lines, in the order of the thread names.
    lines: Vec<(u32, u32)>,
    /// Host markers with `step_num`: `(N, span)` in file order.
    numbered: Vec<(i64, (i64, i64))>,
    /// Each `Steps` line's events: its number (`group_id`, else its name), span.
    on_lines: FxHashMap<(u32, u32), Vec<LineStep>>,
    /// Keras' `train_function` calls on the host.
    calls: Vec<(i64, i64)>,
    /// `iter_num` marks: `(N, span)`.
    iters: Vec<(i64, (i64, i64))>,
}

impl Marks {
    pub(crate) fn new(t: &RawTrace) -> Self {
        let gpu_pids = gpu_pids(t);
        let lines = t
            .thread_names
            .iter()
            .filter(|m| m.name == "Steps" && gpu_pids.contains(&m.pid))
            .filter_map(|m| Some((m.pid, m.tid?)))
            .collect();
        Self {
            step_num: t.step_marks.iter().map(|&(n, i)| (i, n)).collect(),
            group: t.group_marks.iter().map(|&(n, i)| (i, n)).collect(),
            iter_num: t.iter_marks.iter().map(|&(n, i)| (i, n)).collect(),
            gpu_pids,
            lines,
            ..Self::default()
        }
    }

    /// Event `i` of the file, `e`.
    pub(crate) fn add(&mut self, t: &RawTrace, i: usize, e: &Event) {
        if e.ts.is_nan() {
            return;
        }
        let span = round_span(e.ts, e.dur, true);
        if let Some(&n) = self.step_num.get(&i) {
            self.numbered.push((n, span));
        }
        if let Some(&n) = self.iter_num.get(&i) {
            self.iters.push((n, span));
        }
        if self.lines.contains(&(e.pid, e.tid)) {
            let n = self
                .group
                .get(&i)
                .copied()
                .or_else(|| t.symbols.name(e.name).trim().parse().ok());
            self.on_lines
                .entry((e.pid, e.tid))
                .or_default()
                .push((n, span));
        }
        if !self.gpu_pids.contains(&e.pid) && t.symbols.name(e.name).contains("train_function") {
            self.calls.push(span);
        }
    }

    /// The steps of `device` (or of the first GPU with a `Steps` line), as [`steps`] gives
    /// them.
    pub(crate) fn steps(&self, device: Option<u32>) -> (Vec<(i64, i64, i64)>, Option<Markers>) {
        let mut out: Vec<(i64, i64, i64)> = Vec::new();
        for &(n, (a, b)) in &self.numbered {
            if !out.iter().any(|s| s.0 == n) {
                out.push((n, a, b));
            }
        }
        if !out.is_empty() {
            return (sorted(out), Some(Markers::StepNum));
        }
        let line = self
            .lines
            .iter()
            .find(|(pid, _)| device.is_none_or(|d| d == *pid));
        if let Some(line) = line {
            for &(n, (a, b)) in self.on_lines.get(line).map_or(&[][..], Vec::as_slice) {
                out.push((n.unwrap_or(out.len() as i64 + 1), a, b));
            }
            if !out.is_empty() {
                return (sorted(out), Some(Markers::TfStepsLine));
            }
        }
        let mut calls = self.calls.clone();
        calls.sort_unstable();
        for (a, b) in calls {
            if out.last().is_none_or(|l| a >= l.2) {
                out.push((out.len() as i64 + 1, a, b));
            }
        }
        if !out.is_empty() {
            return (out, Some(Markers::TrainFunction));
        }
        let mut iters: FxHashMap<i64, (i64, i64)> = FxHashMap::default();
        for &(n, (a, b)) in &self.iters {
            let x = iters.entry(n).or_insert((a, b));
            *x = (x.0.min(a), x.1.max(b));
        }
        out.extend(iters.into_iter().map(|(n, (a, b))| (n, a, b)));
        let markers = (!out.is_empty()).then_some(Markers::IterNum);
        (sorted(out), markers)
    }
}

fn sorted(mut v: Vec<(i64, i64, i64)>) -> Vec<(i64, i64, i64)> {
    v.sort_by_key(|s| s.1);
    v
}

/// What a file in a TensorFlow profile folder is, by its name (and, for the memory
/// profile, its first bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfFile {
    /// `*.xplane.pb`: the profile itself (an `XSpace`).
    Xplane,
    /// `*.trace.json.gz`: the trace viewer's JSON of the profile.
    TraceJson,
    /// `*.memory_profile.json.gz`: TensorFlow's memory profile (JSON with
    /// `memoryProfilePerAllocator`): allocations, not a timeline of GPU work.
    MemoryProfile,
    /// TF Profiler's overview page (`*.overview_page.pb`): its own analysis, with its
    /// input-bound verdict.
    OverviewPage,
    /// Another of TF Profiler's analysis files (`*.input_pipeline.pb`,
    /// `*.tensorflow_stats.pb`, `*.kernel_stats.pb`, ...).
    ToolData(&'static str),
}

/// TF Profiler's analysis files by name suffix, and what each is.
const TOOL_FILES: &[(&str, &str)] = &[
    ("input_pipeline.pb", "TF Profiler's input-pipeline analysis"),
    ("tensorflow_stats.pb", "TF Profiler's per-op statistics"),
    ("kernel_stats.pb", "TF Profiler's per-kernel statistics"),
    ("op_profile.pb", "TF Profiler's op profile"),
    ("pod_viewer.pb", "TF Profiler's pod viewer data"),
    ("memory_viewer.pb", "TF Profiler's memory viewer data"),
    ("tool_names.pb", "TF Profiler's list of tools"),
];

/// Which TensorFlow profiler file `path` is; `head`, its first bytes (gzip or not), tells
/// the memory profile from a trace when the name does not. `None`: not one of TensorFlow's
/// names, read as any trace.
#[must_use]
pub fn classify(path: &Path, head: &[u8]) -> Option<TfFile> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if name.ends_with(".overview_page.pb") {
        return Some(TfFile::OverviewPage);
    }
    if let Some(&(_, what)) = TOOL_FILES.iter().find(|(suffix, _)| name.ends_with(suffix)) {
        return Some(TfFile::ToolData(what));
    }
    if name.ends_with(".xplane.pb") {
        return Some(TfFile::Xplane);
    }
    if name.ends_with(".memory_profile.json.gz")
        || name.ends_with(".memory_profile.json")
        || is_memory_profile(head)
    {
        return Some(TfFile::MemoryProfile);
    }
    if name.ends_with(".trace.json.gz") || name.ends_with(".trace.json") {
        return Some(TfFile::TraceJson);
    }
    None
}

/// Whether the first bytes (inflated when gzip) hold `memoryProfilePerAllocator`, the
/// first key of TensorFlow's memory profile.
fn is_memory_profile(head: &[u8]) -> bool {
    const KEY: &[u8] = b"memoryProfilePerAllocator";
    let mut text = Vec::new();
    let bytes = if head.starts_with(&[0x1f, 0x8b]) {
        // The head is a prefix of the stream: inflate what it holds; the error at its end
        // is expected.
        let _ = flate2::read::GzDecoder::new(head)
            .take(4096)
            .read_to_end(&mut text);
        &text[..]
    } else {
        head
    };
    bytes.windows(KEY.len()).take(4096).any(|w| w == KEY)
}

/// What [`classify`] said of a file, from a head its caller read: handed down (in
/// [`crate::Options::classified`]) so that the file is not opened again to sniff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified(pub Option<TfFile>);

/// Bytes of a file's start [`classify`] looks at.
pub const CLASSIFY_HEAD: usize = 4096;

/// What [`classify`] found, as a refusal: what the file is and what gpufeed reads. `None`
/// for the trace kinds.
#[must_use]
pub fn refusal(path: &Path, kind: TfFile) -> Option<Error> {
    let (what, reads) = match kind {
        TfFile::Xplane | TfFile::TraceJson => return None,
        TfFile::MemoryProfile => (
            "TensorFlow's memory profile (JSON with `memoryProfilePerAllocator`: allocations, \
             not GPU work)"
                .to_owned(),
            "the profile beside it in the same folder: `*.xplane.pb`, or `*.trace.json.gz`",
        ),
        TfFile::OverviewPage => (
            "TF Profiler's overview page with no input-bound verdict in it".to_owned(),
            "the profile it was made from: `*.xplane.pb` (TensorFlow 2.2+), or \
             `*.trace.json.gz`, in the same `plugins/profile/<run>/` folder",
        ),
        TfFile::ToolData(what) => (
            format!("{what} (a TF Profiler tool file: its own analysis, in protobuf)"),
            "the profile it was made from: `*.xplane.pb` (TensorFlow 2.2+), or \
             `*.trace.json.gz`, in the same `plugins/profile/<run>/` folder, and an \
             `*.overview_page.pb`'s input-bound verdict",
        ),
    };
    Some(Error::NotTraceFile {
        path: path.to_owned(),
        what,
        reads: reads.to_owned(),
    })
}

/// TF Profiler's own verdict, read from its overview page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TfProfilerVerdict {
    /// The file it was read from.
    pub file: String,
    /// Its statement, as TF Profiler wrote it ("Your program is HIGHLY input-bound because
    /// 81.4% of the total step time sampled is waiting for input. ...").
    pub statement: String,
    /// The share of the step waiting for input, percent.
    pub input_pct: Option<f64>,
    /// `HIGHLY` / `MODERATELY` input-bound; `None` when TF Profiler says it is not.
    pub level: Option<Level>,
    /// TF Profiler's bottleneck beside the statement: `host` (highly input-bound), `both`
    /// (moderately), `device` (not input-bound: the device's own time is the step), or
    /// `unknown`; `None` where the page has none.
    #[serde(default)]
    pub bottleneck: Option<String>,
    /// TF Profiler's other findings on the step time, with its level for each ("18.1 % of
    /// the total step time sampled is spent on Kernel Launch. (high)").
    #[serde(default)]
    pub notes: Vec<String>,
}

impl TfProfilerVerdict {
    /// Whether TF Profiler says the program is not input-bound.
    #[must_use]
    pub fn not_input_bound(&self) -> bool {
        self.level.is_none()
            && (self.bottleneck.as_deref() == Some("device")
                || self
                    .statement
                    .to_ascii_lowercase()
                    .contains("not input-bound"))
    }
}

/// Whether `s` is TF Profiler's input-bound statement.
fn is_statement(s: &str) -> bool {
    s.contains("input-bound") && s.contains('%')
}

/// TF Profiler's bottleneck words, as its overview page writes them.
const BOTTLENECKS: [&str; 4] = ["host", "device", "both", "unknown"];
/// TF Profiler's levels for a finding.
const LEVELS: [&str; 4] = ["high", "moderate", "low", "no"];

/// TF Profiler's input-bound statement in an overview page (or an input-pipeline
/// analysis): its protobuf is walked field by field (no schema needed: the statement is a
/// string field, and field numbers have moved between versions), and the string that
/// says how input-bound the program is gives the verdict. Beside it in the same message,
/// the bottleneck word; elsewhere, its findings "N % of the total step time sampled is
/// spent on ...", each after its level. `None` when there is no statement.
#[must_use]
pub fn overview_verdict(bytes: &[u8], path: &Path) -> Option<TfProfilerVerdict> {
    let statement = find_string(bytes, 0, &is_statement)?;
    let lower = statement.to_ascii_lowercase();
    let level = if lower.contains("not input-bound") {
        None
    } else if lower.contains("highly input-bound") {
        Some(Level::High)
    } else if lower.contains("moderately input-bound") {
        Some(Level::Moderate)
    } else {
        None
    };
    // "... because 81.4% of the total step time ...": the number before the first `%`.
    let input_pct = statement.split('%').next().and_then(|before| {
        let num: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        num.parse().ok()
    });
    let mut messages = Vec::new();
    text_fields(bytes, 0, &mut messages);
    let bottleneck = messages
        .iter()
        .find(|m| m.contains(&statement.as_str()))
        .and_then(|m| m.iter().find(|s| BOTTLENECKS.contains(s)))
        .map(|s| (*s).to_owned());
    let mut notes: Vec<String> = Vec::new();
    for m in &messages {
        for (i, s) in m.iter().enumerate() {
            if !s.contains("of the total step time sampled is spent on")
                || !s.starts_with(|c: char| c.is_ascii_digit())
            {
                continue;
            }
            let note = match i.checked_sub(1).map(|j| m[j]) {
                Some(level) if LEVELS.contains(&level) => format!("{s} ({level})"),
                _ => (*s).to_owned(),
            };
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    Some(TfProfilerVerdict {
        file: path.display().to_string(),
        statement,
        input_pct,
        level,
        bottleneck,
        notes,
    })
}

/// Every message's direct text fields (UTF-8 without control characters), depth first:
/// a field that is text may also parse as a message, and both are kept.
fn text_fields<'a>(bytes: &'a [u8], depth: usize, out: &mut Vec<Vec<&'a str>>) {
    if depth > 12 {
        return;
    }
    let Some(fields) = fields(bytes) else { return };
    let mut texts = Vec::new();
    for f in fields {
        if let Ok(s) = std::str::from_utf8(f)
            && !s.is_empty()
            && !s.chars().any(char::is_control)
        {
            texts.push(s);
        }
        text_fields(f, depth + 1, out);
    }
    out.push(texts);
}

/// The first length-delimited field, at any depth, that is UTF-8 text `want` accepts.
/// A protobuf's length-delimited field is a string or a message: a field that parses
/// whole as a message and holds a match inside is a message (the innermost match is the
/// string); else it is text when it has no control characters.
fn find_string(bytes: &[u8], depth: usize, want: &dyn Fn(&str) -> bool) -> Option<String> {
    if depth > 12 {
        return None;
    }
    for field in fields(bytes)? {
        if let Some(s) = find_string(field, depth + 1, want) {
            return Some(s);
        }
        if let Ok(s) = std::str::from_utf8(field)
            && want(s)
            && !s.chars().any(char::is_control)
        {
            return Some(s.to_owned());
        }
    }
    None
}

/// The length-delimited fields of a message, when all of `bytes` parses as one (every
/// field whole, none past the end); `None` otherwise.
fn fields(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let (key, n) = varint(&bytes[at..])?;
        at += n;
        if key >> 3 == 0 {
            return None;
        }
        match key & 7 {
            0 => at += varint(bytes.get(at..)?)?.1,
            1 => at = at.checked_add(8)?,
            5 => at = at.checked_add(4)?,
            2 => {
                let (len, n) = varint(bytes.get(at..)?)?;
                at += n;
                let end = at.checked_add(usize::try_from(len).ok()?)?;
                out.push(bytes.get(at..end)?);
                at = end;
            }
            _ => return None,
        }
    }
    (at == bytes.len()).then_some(out)
}

/// A protobuf varint: its value and length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensorflow_s_files_by_name_and_head() {
        let c = |name: &str, head: &[u8]| classify(Path::new(name), head);
        assert_eq!(c("h.overview_page.pb", b""), Some(TfFile::OverviewPage));
        assert!(matches!(
            c("h.input_pipeline.pb", b""),
            Some(TfFile::ToolData(_))
        ));
        assert_eq!(c("h.xplane.pb", b""), Some(TfFile::Xplane));
        assert_eq!(
            c("h.memory_profile.json.gz", b""),
            Some(TfFile::MemoryProfile)
        );
        assert_eq!(
            c("odd.json", br#"{"memoryProfilePerAllocator": {}}"#),
            Some(TfFile::MemoryProfile)
        );
        assert_eq!(c("h.trace.json.gz", b"{}"), Some(TfFile::TraceJson));
        assert_eq!(c("rank0.json", br#"{"traceEvents": []}"#), None);
    }

    #[test]
    fn the_statement_is_found_nested_and_read() {
        // field 2 { field 5 { field 1: statement } }, after a varint field.
        let st = b"Your program is NOT input-bound because only 1.5% of the total step time sampled is waiting for input.";
        let mut inner = vec![0x0a, st.len() as u8];
        inner.extend_from_slice(st);
        let mut mid = vec![0x2a, inner.len() as u8];
        mid.extend(inner);
        let mut page = vec![0x08, 0x01, 0x12, mid.len() as u8];
        page.extend(mid);
        let v = overview_verdict(&page, Path::new("p.pb")).unwrap_or_else(|| panic!("none"));
        assert_eq!((v.input_pct, v.level), (Some(1.5), None));
        assert!(overview_verdict(&[0x0a, 0x03, b'a', b'b', b'c'], Path::new("x")).is_none());
        // A wrapper whose tag and length bytes are printable (field 5, length 'f') is not
        // taken for the text.
        let st = b"Your program is HIGHLY input-bound because 81.4% of the total step time sampled is waiting for input. x";
        let mut wrapper = vec![0x2a, st.len() as u8];
        wrapper.extend_from_slice(st);
        let mut page = vec![0x12, wrapper.len() as u8];
        page.extend(wrapper);
        let v = overview_verdict(&page, Path::new("p.pb")).unwrap_or_else(|| panic!("none"));
        assert!(v.statement.starts_with("Your program"), "{}", v.statement);
        assert_eq!((v.input_pct, v.level), (Some(81.4), Some(Level::High)));
        // Bytes that do not parse end the walk, without a panic.
        assert!(overview_verdict(&[0xff; 12], Path::new("x")).is_none());
    }
}
