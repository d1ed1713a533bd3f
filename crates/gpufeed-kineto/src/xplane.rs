//! TensorFlow's `*.xplane.pb` (an `XSpace` protobuf) on the rows of its trace viewer JSON.
//!
//! Recent TensorFlow (2.x) writes only `LOGDIR/plugins/profile/RUN/HOST.xplane.pb`. An
//! `XSpace` holds planes: `/host:CPU` (one line per thread: the launch calls, the step
//! markers) and `/device:GPU:N` (one line per stream, `Stream #14(Compute)`); a line holds
//! events, each an offset and duration in picoseconds from the line's `timestamp_ns`, a name
//! by id in the plane's `event_metadata`, and stats (`correlation_id`, `step_num`,
//! `memcpy_details`) named by id in its `stat_metadata`. [`read_bytes`] maps it onto the
//! rows [`crate::read`] makes of the JSON that TensorFlow's own converter writes
//! (`xspace_to_tools_data([PATH], "trace_viewer@", {})`), as that converter does:
//!
//! - only `/host:CPU` and `/device:*` planes (the converter leaves out `Task Environment`
//!   and `/host:metadata`), device planes first; a plane is a process named after it, a line
//!   a thread named by its display name (else its name);
//! - start = `timestamp_ns * 1000 + offset_ps` picoseconds, in µs as `ps / 1e6`; an event
//!   that counts occurrences (`num_occurrences`) has no offset, and the converter puts it at
//!   the start of its line (the `oneof`'s offset reads 0), so gpufeed does too;
//! - an event's name is its metadata's display name, else its name; a stat's value is
//!   its number or string, or for a reference (`ref_value`) the name of the stat metadata
//!   it points to; stats are the event's, then its metadata's.
//!
//! The launch calls (`cuLaunchKernel`, with their `correlation_id`) are on `/host:CPU`
//! lines: TensorFlow merges its CUPTI driver-API plane into the host plane, and shifts
//! every time to the start of the profile, before it writes the file
//! (`PostProcessSingleHostXSpace`).
//!
//! `python/tests/test_xplane.py` checks the mapping against TensorFlow's converter: the
//! same figures from an xplane and from the JSON TensorFlow makes of it.
//!
//! A file is read whole: an xplane is several times smaller than its JSON (no names per
//! event, varints), and prost decodes from a slice, not a stream. A file cut off while
//! written keeps its complete planes: the top level is walked field by field here, each
//! plane decoded by prost; the plane the cut falls in is left out (its event names come
//! after its events in the file, so its events could not be named).
//!
//! The message structs are the published `tsl/profiler/protobuf/xplane.proto`
//! (package `tensorflow.profiler`), written as `prost` derives: field numbers checked
//! against the descriptor TensorFlow 2.21 ships (`tensorflow.tsl.profiler.protobuf.xplane_pb2`).
//!
//! ```
//! use gpufeed_kineto::synth::{Case, generate};
//! let bytes = generate(&Case::input_bound().xplane(), 0);
//! let t = gpufeed_kineto::xplane::read_bytes(&bytes, "host.xplane.pb".as_ref()).unwrap();
//! assert!(gpufeed_kineto::tf::is_tensorflow(&t));
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message;
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::read::{self, Event, NO_CAT, NameMeta, RawTrace};

/// `XSpace`: everything one profiling session of one host recorded.
#[derive(Clone, PartialEq, Message)]
pub struct XSpace {
    /// The planes: one per device, one for the host's threads, and metadata planes.
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    /// Errors the profiler met.
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    /// Its warnings.
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    /// The hosts profiled.
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// `XPlane`: one device, or the host.
#[derive(Clone, PartialEq, Message)]
pub struct XPlane {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// `/host:CPU`, `/device:GPU:0`, ...
    #[prost(string, tag = "2")]
    pub name: String,
    /// Its timelines: threads, streams.
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    /// Event names and stats, by the id events refer to. A `BTreeMap` so that what the
    /// generator writes is the same bytes every time.
    #[prost(btree_map = "int64, message", tag = "4")]
    pub event_metadata: BTreeMap<i64, XEventMetadata>,
    /// Stat names, by the id stats refer to.
    #[prost(btree_map = "int64, message", tag = "5")]
    pub stat_metadata: BTreeMap<i64, XStatMetadata>,
    /// Stats of the plane itself.
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// `XLine`: one timeline (a thread, a stream).
#[derive(Clone, PartialEq, Message)]
pub struct XLine {
    /// Its id (a stream number on a GPU plane).
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The id the trace viewer shows, when not 0.
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    /// Its name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// The name the trace viewer shows, when not empty.
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// Start of the line, ns: events are offsets from it.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    /// Its length, ps.
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    /// Its events.
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

/// `XEvent`: one span on a line.
#[derive(Clone, PartialEq, Message)]
pub struct XEvent {
    /// Key of its `XEventMetadata` in the plane.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Offset from the line's start, or a count of occurrences.
    #[prost(oneof = "x_event::Data", tags = "2, 5")]
    pub data: Option<x_event::Data>,
    /// Duration, ps.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    /// Its stats.
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// The `oneof` of [`XEvent`].
pub mod x_event {
    /// Where the event lies, or how many times it happened.
    #[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
    pub enum Data {
        /// Start, ps from the line's `timestamp_ns`.
        #[prost(int64, tag = "2")]
        OffsetPs(i64),
        /// An aggregated event: how many times it happened (not on the timeline).
        #[prost(int64, tag = "5")]
        NumOccurrences(i64),
    }
}

/// `XStat`: a named value.
#[derive(Clone, PartialEq, Message)]
pub struct XStat {
    /// Key of its `XStatMetadata` in the plane.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// The value.
    #[prost(oneof = "x_stat::Value", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<x_stat::Value>,
}

/// The `oneof` of [`XStat`].
pub mod x_stat {
    /// A stat's value.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// A float.
        #[prost(double, tag = "2")]
        DoubleValue(f64),
        /// An unsigned integer.
        #[prost(uint64, tag = "3")]
        Uint64Value(u64),
        /// A signed integer.
        #[prost(int64, tag = "4")]
        Int64Value(i64),
        /// A string.
        #[prost(string, tag = "5")]
        StrValue(String),
        /// Bytes (a serialized proto).
        #[prost(bytes = "vec", tag = "6")]
        BytesValue(Vec<u8>),
        /// A string stored once: the id of the `XStatMetadata` whose name is the value.
        #[prost(uint64, tag = "7")]
        RefValue(u64),
    }
}

/// `XEventMetadata`: an event's name, shared by every event with its id.
#[derive(Clone, PartialEq, Message)]
pub struct XEventMetadata {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// A serialized proto, for some events.
    #[prost(bytes = "vec", tag = "3")]
    pub metadata: Vec<u8>,
    /// The name the trace viewer shows, when not empty.
    #[prost(string, tag = "4")]
    pub display_name: String,
    /// Stats every event with this metadata has.
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    /// Child metadata ids.
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

/// `XStatMetadata`: a stat's name.
#[derive(Clone, PartialEq, Message)]
pub struct XStatMetadata {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The name (`correlation_id`, `step_num`), or a string a `ref_value` points to.
    #[prost(string, tag = "2")]
    pub name: String,
    /// What it is.
    #[prost(string, tag = "3")]
    pub description: String,
}

/// Whether `path` is named as an xplane (`*.xplane.pb`, or any `*.pb`: no other trace
/// gpufeed reads is a protobuf).
#[must_use]
pub fn is_xplane_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".pb"))
}

/// Reads an xplane file whole (see the module's note on memory).
pub fn read_path(path: &Path) -> Result<RawTrace> {
    let bytes = fs_err::read(path).map_err(|cause| Error::Io {
        path: path.to_owned(),
        cause,
    })?;
    read_bytes(&bytes, path)
}

/// A base-128 varint at `*at`, moving past it; `None` when the bytes end inside it or it is
/// longer than ten bytes.
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The top level of an `XSpace`, field by field: the complete planes, and the byte where
/// a field runs past the end of the file, if one does.
fn decode_space(bytes: &[u8], path: &Path) -> Result<(XSpace, Option<u64>)> {
    let not_trace = |reason: String| Error::NotATrace {
        path: path.to_owned(),
        reason,
    };
    let mut space = XSpace::default();
    let mut at = 0usize;
    let mut fields = 0usize;
    while at < bytes.len() {
        let start = at;
        let Some(key) = varint(bytes, &mut at) else {
            return Ok((space, Some(start as u64)));
        };
        let (tag, wire) = (key >> 3, key & 7);
        // An XSpace's fields 1-4 are all length-delimited (wire type 2); a file whose first
        // field is anything else is not one. Later unknown fields (a newer proto) are skipped.
        let known = (1..=4).contains(&tag) && wire == 2;
        if fields == 0 && !known {
            return Err(not_trace(format!(
                "it is not a TensorFlow XSpace protobuf (its first byte, {:#04x}, starts no \
                 field of one)",
                bytes[0]
            )));
        }
        let end = match wire {
            0 => {
                if varint(bytes, &mut at).is_none() {
                    return Ok((space, Some(start as u64)));
                }
                at
            }
            1 => at + 8,
            5 => at + 4,
            2 => {
                let Some(len) = varint(bytes, &mut at) else {
                    return Ok((space, Some(start as u64)));
                };
                at.saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            }
            _ => {
                return Err(Error::BadEvent {
                    path: path.to_owned(),
                    offset: start as u64,
                    message: format!("a protobuf field of wire type {wire}: the file is damaged"),
                });
            }
        };
        if end > bytes.len() {
            if fields == 0 && tag != 1 {
                return Err(not_trace(format!(
                    "it is not a TensorFlow XSpace protobuf (its first field claims {} bytes, \
                     the file has {})",
                    end - at,
                    bytes.len()
                )));
            }
            return Ok((space, Some(start as u64)));
        }
        let body = &bytes[at..end];
        if known {
            match tag {
                1 => match XPlane::decode(body) {
                    Ok(p) => space.planes.push(p),
                    Err(e) if fields == 0 => {
                        return Err(not_trace(format!(
                            "it is not a TensorFlow XSpace protobuf (its first plane does not \
                             decode: {e})"
                        )));
                    }
                    Err(e) => {
                        return Err(Error::BadEvent {
                            path: path.to_owned(),
                            offset: start as u64,
                            message: format!(
                                "a plane that does not decode ({e}): the file is damaged"
                            ),
                        });
                    }
                },
                _ => {
                    let s = String::from_utf8_lossy(body).into_owned();
                    match tag {
                        2 => space.errors.push(s),
                        3 => space.warnings.push(s),
                        _ => space.hostnames.push(s),
                    }
                }
            }
        }
        fields += 1;
        at = end;
    }
    Ok((space, None))
}

/// A stat's value, as the trace viewer writes it in `args`.
enum Value<'a> {
    Int(i64),
    Str(&'a str),
    Other,
}

impl Value<'_> {
    /// As an integer, loosely (a string of one counts), as the JSON reader does.
    fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Str(s) => s.trim().parse().ok(),
            Value::Other => None,
        }
    }
}

fn value<'a>(stat: &'a XStat, plane: &'a XPlane) -> Value<'a> {
    use x_stat::Value as V;
    match &stat.value {
        Some(V::Int64Value(v)) => Value::Int(*v),
        Some(V::Uint64Value(v)) => i64::try_from(*v).map_or(Value::Other, Value::Int),
        Some(V::StrValue(s)) => Value::Str(s),
        Some(V::RefValue(r)) => i64::try_from(*r)
            .ok()
            .and_then(|r| plane.stat_metadata.get(&r))
            .map_or(Value::Other, |m| Value::Str(&m.name)),
        Some(V::DoubleValue(v)) if v.is_finite() && v.fract() == 0.0 => Value::Int(*v as i64),
        _ => Value::Other,
    }
}

/// Whether the converter shows this plane: the host's threads and the devices.
fn shown(plane: &XPlane) -> bool {
    plane.name.starts_with("/host:CPU") || plane.name.starts_with("/device:")
}

/// The error for an XSpace without planes: cut off where the file ended early, else the
/// profiler recorded nothing (with its own errors, where they read as text).
fn no_planes(space: &XSpace, cut: Option<u64>, len: u64, path: &Path) -> Error {
    if let Some(at) = cut {
        return Error::CutOff {
            path: path.to_owned(),
            bytes: len,
            offset: at,
        };
    }
    // The profiler's own errors, when they read as text: a file of another kind that
    // happens to parse as an XSpace holds bytes there, which are never printed.
    let text: Vec<&str> = space
        .errors
        .iter()
        .map(String::as_str)
        .filter(|e| e.len() <= 500 && !e.chars().any(|c| c.is_control() && c != '\n'))
        .take(5)
        .collect();
    let errors = if text.is_empty() {
        String::new()
    } else {
        format!("; the profiler's errors: {}", text.join("; "))
    };
    Error::NotATrace {
        path: path.to_owned(),
        reason: format!("an XSpace with no planes: the profiler recorded nothing{errors}"),
    }
}

/// Reads an xplane from its bytes; `path` names it in errors.
pub fn read_bytes(bytes: &[u8], path: &Path) -> Result<RawTrace> {
    let not_trace = |reason: String| Error::NotATrace {
        path: path.to_owned(),
        reason,
    };
    if bytes.is_empty() {
        return Err(not_trace("the file is empty".to_owned()));
    }
    let (space, cut) = decode_space(bytes, path)?;
    if space.planes.is_empty() {
        return Err(no_planes(&space, cut, bytes.len() as u64, path));
    }
    let mut t = RawTrace {
        path: path.to_owned(),
        // TensorFlow's JSON always reads as fractional (its metadata rows have no `ts`),
        // so HTA's rounding applies to both forms alike; xplane times are picoseconds.
        fractional_ts: true,
        display_time_unit: Some("ns".to_owned()),
        truncated_at: cut,
        from_xplane: true,
        bytes: bytes.len() as u64,
        ..RawTrace::default()
    };
    let mut planes: Vec<&XPlane> = space.planes.iter().filter(|p| shown(p)).collect();
    // Device planes first, as the converter numbers them (GPU pids from 1, the host 701).
    planes.sort_by_key(|p| !p.name.starts_with("/device:"));
    let mut stat_names: FxHashMap<i64, &str> = FxHashMap::default();
    for plane in planes {
        let pid = u32::try_from(t.pids.len()).unwrap_or(u32::MAX);
        t.pids.push(plane.name.clone());
        t.process_names.push(NameMeta {
            pid,
            tid: None,
            name: plane.name.clone(),
        });
        stat_names.clear();
        stat_names.extend(plane.stat_metadata.iter().map(|(k, m)| (*k, &*m.name)));
        let mut tids: FxHashMap<i64, u32> = FxHashMap::default();
        for line in &plane.lines {
            let line_id = if line.display_id != 0 {
                line.display_id
            } else {
                line.id
            };
            let tid = *tids.entry(line_id).or_insert_with(|| {
                let tid = u32::try_from(t.pids.len()).unwrap_or(u32::MAX);
                t.pids.push(line_id.to_string());
                let name = if line.display_name.is_empty() {
                    &line.name
                } else {
                    &line.display_name
                };
                t.thread_names.push(NameMeta {
                    pid,
                    tid: Some(tid),
                    name: name.clone(),
                });
                tid
            });
            let steps_line = line.name == "Steps" || line.display_name == "Steps";
            let base_ps = i128::from(line.timestamp_ns) * 1000;
            for e in &line.events {
                // An aggregated event (`NumOccurrences`) reads as offset 0, as in the
                // converter.
                let offset = match e.data {
                    Some(x_event::Data::OffsetPs(o)) => o,
                    Some(x_event::Data::NumOccurrences(_)) | None => 0,
                };
                t.elements += 1;
                let meta = plane.event_metadata.get(&e.metadata_id);
                let raw_name = meta.map_or("", |m| {
                    if m.display_name.is_empty() {
                        &m.name
                    } else {
                        &m.display_name
                    }
                });
                let (mut corr, mut step, mut pageable) = (None, None, false);
                let (mut group, mut iter) = (None, None);
                let meta_stats = meta.map_or(&[][..], |m| &m.stats[..]);
                for s in e.stats.iter().chain(meta_stats) {
                    let v = value(s, plane);
                    match stat_names.get(&s.metadata_id).copied() {
                        Some("correlation_id") => corr = corr.or(v.int()),
                        Some("step_num") => step = step.or(v.int()),
                        Some("group_id") if steps_line => group = group.or(v.int()),
                        Some("iter_num") => iter = iter.or(v.int()),
                        Some("memcpy_details") => {
                            if let Value::Str(d) = v {
                                pageable |= d.contains("pageable");
                            }
                        }
                        _ => {}
                    }
                }
                let name = if pageable && raw_name.starts_with("MemcpyH2D") {
                    read::PAGEABLE_H2D
                } else {
                    raw_name
                };
                let name = t.symbols.intern(name);
                if let Some(n) = step {
                    t.step_marks.push((n, t.events.len()));
                }
                if let Some(n) = group {
                    t.group_marks.push((n, t.events.len()));
                }
                if let Some(n) = iter {
                    t.iter_marks.push((n, t.events.len()));
                }
                let ts_ps = base_ps + i128::from(offset);
                t.events.push(Event {
                    ts: ts_ps as f64 / 1e6,
                    dur: e.duration_ps as f64 / 1e6,
                    name,
                    cat: NO_CAT,
                    pid,
                    tid,
                    stream: -1,
                    corr: corr.unwrap_or(-1),
                });
                if t.events.len() > read::MAX_EVENTS {
                    return Err(Error::TooLarge {
                        path: path.to_owned(),
                        offset: 0,
                        what: format!("{} events", read::MAX_EVENTS),
                    });
                }
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(id: i64, v: x_stat::Value) -> XStat {
        XStat {
            metadata_id: id,
            value: Some(v),
        }
    }

    /// One host plane and one GPU plane, by hand: every field the reader uses.
    fn space() -> XSpace {
        let smeta = |names: &[&str]| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let id = i as i64 + 1;
                    (
                        id,
                        XStatMetadata {
                            id,
                            name: (*n).to_owned(),
                            description: String::new(),
                        },
                    )
                })
                .collect()
        };
        let emeta = |names: &[(&str, &str)]| {
            names
                .iter()
                .enumerate()
                .map(|(i, (n, d))| {
                    let id = i as i64 + 1;
                    (
                        id,
                        XEventMetadata {
                            id,
                            name: (*n).to_owned(),
                            display_name: (*d).to_owned(),
                            ..XEventMetadata::default()
                        },
                    )
                })
                .collect()
        };
        use x_stat::Value as V;
        let ev = |m: i64, off_ns: i64, dur_ns: i64, stats: Vec<XStat>| XEvent {
            metadata_id: m,
            data: Some(x_event::Data::OffsetPs(off_ns * 1000)),
            duration_ps: dur_ns * 1000,
            stats,
        };
        let host = XPlane {
            id: 0,
            name: "/host:CPU".to_owned(),
            lines: vec![XLine {
                id: 99,
                name: "python".to_owned(),
                timestamp_ns: 2_000,
                events: vec![
                    ev(1, 0, 90_000, vec![stat(1, V::Int64Value(3))]),
                    ev(2, 1_000, 5_000, vec![stat(2, V::Uint64Value(11))]),
                    XEvent {
                        metadata_id: 2,
                        data: Some(x_event::Data::NumOccurrences(4)),
                        duration_ps: 7_000_000,
                        ..XEvent::default()
                    },
                ],
                ..XLine::default()
            }],
            event_metadata: emeta(&[("train", ""), ("cuLaunchKernel", "")]),
            stat_metadata: smeta(&["step_num", "correlation_id"]),
            stats: vec![],
        };
        let gpu = XPlane {
            id: 1,
            name: "/device:GPU:0".to_owned(),
            lines: vec![XLine {
                id: 7,
                name: "Stream #7".to_owned(),
                display_name: "Stream #7(Compute)".to_owned(),
                timestamp_ns: 2_000,
                events: vec![
                    ev(
                        1,
                        8_000,
                        30_500,
                        vec![stat(1, V::StrValue("11".to_owned()))],
                    ),
                    ev(
                        2,
                        40_000,
                        10_000,
                        vec![stat(1, V::Int64Value(12)), stat(2, V::RefValue(3))],
                    ),
                ],
                ..XLine::default()
            }],
            event_metadata: emeta(&[("sgemm_long_name", "sgemm"), ("MemcpyH2D", "")]),
            stat_metadata: smeta(&["correlation_id", "memcpy_details", "kind_src:pageable"]),
            stats: vec![],
        };
        let env = XPlane {
            name: "Task Environment".to_owned(),
            lines: vec![XLine {
                events: vec![ev(1, 0, 1, vec![])],
                ..XLine::default()
            }],
            ..XPlane::default()
        };
        XSpace {
            planes: vec![host, gpu, env],
            hostnames: vec!["h".to_owned()],
            ..XSpace::default()
        }
    }

    #[test]
    fn planes_lines_and_stats_become_rows() {
        let bytes = space().encode_to_vec();
        let t = read_bytes(&bytes, Path::new("h.xplane.pb")).unwrap();
        // Task Environment left out; the aggregated event at its line's start.
        assert_eq!(t.events.len(), 5);
        let agg = &t.events[4];
        assert_eq!((agg.ts, agg.dur, agg.corr), (2.0, 7.0, -1));
        let names: Vec<&str> = t.process_names.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["/device:GPU:0", "/host:CPU"]);
        assert_eq!(t.thread_names[0].name, "Stream #7(Compute)");
        let k = &t.events[0];
        assert_eq!(t.symbols.name(k.name), "sgemm");
        assert_eq!((k.ts, k.dur, k.corr), (10.0, 30.5, 11));
        assert_eq!(t.symbols.name(t.events[1].name), read::PAGEABLE_H2D);
        let step = &t.events[2];
        assert_eq!((step.ts, step.dur), (2.0, 90.0));
        assert_eq!(t.step_marks, vec![(3, 2)]);
        assert_eq!(t.events[3].corr, 11);
        assert!(t.truncated_at.is_none());
        // Lowered as TensorFlow's JSON is: the kernel on stream 7, the launch a CPU row.
        let mut t = t;
        assert!(crate::tf::is_tensorflow(&t));
        crate::tf::lower(&mut t);
        assert_eq!(t.events[0].stream, 7);
        assert_eq!(t.symbols.name(t.events[1].cat), "gpu_memcpy");
        assert_eq!(t.symbols.name(t.events[3].cat), "cpu_op");
    }

    #[test]
    fn a_cut_file_keeps_its_whole_planes() {
        let mut s = space();
        // The host plane last, so that the cut falls in it.
        s.planes.reverse();
        let bytes = s.encode_to_vec();
        // A plane's field: its key (one byte), its length, the plane.
        let field = |p: &XPlane| 1 + prost::length_delimiter_len(p.encoded_len()) + p.encoded_len();
        let first = field(&s.planes[0]);
        let second = first + field(&s.planes[1]);
        let t = read_bytes(&bytes[..bytes.len() - 10], Path::new("c.xplane.pb")).unwrap();
        assert_eq!(t.truncated_at, Some(second as u64));
        assert_eq!(t.process_names.len(), 1);
        assert_eq!(t.events.len(), 2);
        // Cut inside the first plane: nothing to read, and the error says so.
        let e = read_bytes(&bytes[..first / 2], Path::new("c.xplane.pb"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`c.xplane.pb`") && e.contains("cut off"), "{e}");
        assert!(e.contains(&format!("{} bytes", first / 2)), "{e}");
    }

    #[test]
    fn bad_input_names_the_file() {
        for (bytes, says) in [
            (&b""[..], "the file is empty"),
            (br#"{"traceEvents": []}"#, "not a TensorFlow XSpace"),
            (b"hello", "not a TensorFlow XSpace"),
            (b"\x0a\x03abc", "not a TensorFlow XSpace"),
            (b"\x22\x01h", "no planes"),
        ] {
            let e = read_bytes(bytes, Path::new("x.xplane.pb")).unwrap_err();
            let m = e.to_string();
            assert!(m.contains("`x.xplane.pb`") && m.contains(says), "{m}");
        }
        let errors = XSpace {
            errors: vec!["No trace event was collected".to_owned()],
            ..XSpace::default()
        };
        let e = read_bytes(&errors.encode_to_vec(), Path::new("e.pb"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("No trace event was collected"), "{e}");
    }

    proptest::proptest! {
        /// Whatever the bytes, the reader returns, never panics.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = read_bytes(&bytes, Path::new("x.pb"));
        }

        /// Cutting a valid file anywhere reads whole planes or says it is cut off.
        #[test]
        fn any_cut_reads_whole_planes(cut in 0usize..400) {
            let bytes = space().encode_to_vec();
            let cut = cut.min(bytes.len());
            match read_bytes(&bytes[..cut], Path::new("x.pb")) {
                Ok(t) => {
                    proptest::prop_assert!(t.events.len() <= 5);
                    // A cut between two planes reads as a whole file; a cut inside one is
                    // found, and the whole file reads whole.
                    proptest::prop_assert!(t.truncated_at.is_none() || cut < bytes.len());
                    proptest::prop_assert!(cut < bytes.len() || t.events.len() == 5);
                }
                Err(e) => proptest::prop_assert!(cut < bytes.len(), "{}", e),
            }
        }
    }
}
