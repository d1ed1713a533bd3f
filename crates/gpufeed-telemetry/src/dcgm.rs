//! The cluster's own GPU metrics: NVIDIA DCGM's, as `dcgm-exporter` puts them into
//! Prometheus and as `dcgmi dmon` prints them.
//!
//! Three inputs give one [`UtilTrace`]:
//! - **a Prometheus range query**, asked of the server ([`query_range`], `gpufeed trace
//!   --prometheus URL`) or saved from its HTTP API (`curl .../api/v1/query_range?...`): the
//!   JSON `{"status": "success", "data": {"resultType": "matrix", "result": [{"metric":
//!   {...}, "values": [[t, "v"], ...]}]}}`, or its `data` alone;
//! - **`dcgmi dmon` output**: a `#Entity` header naming the fields by their short names
//!   (`GPUTL`, `SMACT`, `TENSO`), an `ID` line, then one row per GPU per sample (`GPU 0  45
//!   0.423  0.120`), `N/A` where a field could not be read. dmon writes no time: it
//!   samples every [`DMON_DEFAULT_INTERVAL_S`] unless given `-d`.
//!
//! **Which metric judges.** `DCGM_FI_DEV_GPU_UTIL` (`GPUTL`) is the share of the sample
//! window in which some kernel ran: one small kernel at a time reads 100 %
//! (dcgm-exporter#341). Where the profiling metric `DCGM_FI_PROF_SM_ACTIVE` (`SMACT`, the
//! share of cycles with work on the SMs, averaged over them) is there, a GPU is judged by
//! it, as a percentage, and [`UtilTrace::note`] says so; `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`
//! (`TENSO`) is summarised in the note. A GPU is the `gpu` label (dcgm-exporter's index)
//! of one host (`Hostname`, else `instance`); with several hosts, each (host, gpu) gets
//! its own index, in order, and the note names them.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::Path;

use serde_json::Value;

use crate::TraceError;
use crate::lines::LineReader;
use crate::trace::{SeriesBuilder, TraceFormat, UtilTrace};

/// DCGM's utilisation metric.
pub const GPU_UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
/// DCGM's SM activity (profiling metric, a ratio 0-1).
pub const SM_ACTIVE: &str = "DCGM_FI_PROF_SM_ACTIVE";
/// DCGM's tensor-pipe activity (profiling metric, a ratio 0-1).
pub const TENSOR_ACTIVE: &str = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE";

/// `dcgmi dmon`'s sampling interval without `-d` (1000 ms), s.
pub const DMON_DEFAULT_INTERVAL_S: f64 = 1.0;

/// Whether the first bytes of a file hold a Prometheus range-query answer (or its `data`).
#[must_use]
pub fn is_range_query(head: &[u8]) -> bool {
    let head = &head[..head.len().min(64 * 1024)];
    let has = |k: &[u8]| head.windows(k.len()).any(|w| w == k);
    head.trim_ascii_start().starts_with(b"{") && has(b"\"resultType\"") && has(b"\"result\"")
}

/// Whether `line` (a file's first non-empty line) is `dcgmi dmon`'s header: `#Entity`
/// (or `# Entity`) and the fields' short names.
#[must_use]
pub fn is_dmon_header(line: &str) -> bool {
    line.trim_ascii()
        .strip_prefix('#')
        .and_then(|rest| rest.split_ascii_whitespace().next())
        .is_some_and(|w| w.eq_ignore_ascii_case("entity"))
}

/// One GPU's samples of each metric, before one is chosen.
#[derive(Default)]
struct Metrics {
    util: Vec<(f64, f64)>,
    sm: Vec<(f64, f64)>,
    tensor: Vec<f64>,
}

/// The metrics of each GPU, keyed by (host, gpu), into a trace judged by SM activity where
/// there is any.
fn into_trace(
    path: &Path,
    format: TraceFormat,
    by_gpu: BTreeMap<(String, u32), Metrics>,
    skipped: usize,
    has_timestamps: bool,
) -> Result<UtilTrace, TraceError> {
    let hosts: Vec<&String> = {
        let mut h: Vec<&String> = by_gpu.keys().map(|(h, _)| h).collect();
        h.dedup();
        h
    };
    let several_hosts = hosts.len() > 1;
    let mut b = SeriesBuilder::default();
    let mut by_sm = Vec::new();
    let mut by_util = Vec::new();
    let mut tensor = Vec::new();
    let mut names = Vec::new();
    for (i, ((host, gpu), m)) in by_gpu.into_iter().enumerate() {
        let index = if several_hosts {
            u32::try_from(i).unwrap_or(u32::MAX)
        } else {
            gpu
        };
        if several_hosts {
            names.push(format!("GPU {index} = {host} gpu {gpu}"));
        }
        let (series, pct) = if m.sm.is_empty() {
            by_util.push(index);
            (m.util, 1.0)
        } else {
            by_sm.push(index);
            (m.sm, 100.0)
        };
        if !m.tensor.is_empty() {
            let mean = m.tensor.iter().sum::<f64>() / m.tensor.len() as f64;
            tensor.push(format!("GPU {index} {:.1} %", 100.0 * mean));
        }
        let slot = b.slot(index);
        for (t, v) in series {
            b.push(slot, t, (v * pct).clamp(0.0, 100.0));
        }
    }
    let mut trace = b.finish(path, format, skipped, has_timestamps)?;
    let mut note = Vec::new();
    if !by_sm.is_empty() {
        note.push(format!(
            "judged by SM activity (`{SM_ACTIVE}`, as a percentage) on {}: `{GPU_UTIL}` only \
             says whether a kernel ran in the sample window, so one small kernel at a time \
             reads 100 %",
            gpus(&by_sm)
        ));
    }
    if !by_sm.is_empty() && !by_util.is_empty() {
        note.push(format!(
            "{} has no SM activity, judged by `{GPU_UTIL}`",
            gpus(&by_util)
        ));
    }
    if !tensor.is_empty() {
        note.push(format!(
            "tensor pipes active (`{TENSOR_ACTIVE}`, mean): {}",
            tensor.join(", ")
        ));
    }
    if !names.is_empty() {
        note.push(names.join(", "));
    }
    trace.note = (!note.is_empty()).then(|| note.join("; "));
    Ok(trace)
}

/// "GPU 0, 1 and 3".
fn gpus(ids: &[u32]) -> String {
    let list: Vec<String> = ids.iter().map(u32::to_string).collect();
    match list.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("GPU {} and {last}", rest.join(", ")),
        _ => format!("GPU {}", list.join("")),
    }
}

/// Reads a Prometheus range-query answer (see the [module docs](self)).
///
/// # Errors
/// [`TraceError::Unsupported`] naming what is wrong: not JSON, an error answer (its
/// `error` quoted), not a matrix, a series without DCGM's metrics or a value that is not
/// a number; [`TraceError::NoSamples`] when no series holds a sample.
pub fn read_range_json(mut reader: impl Read, path: &Path) -> Result<UtilTrace, TraceError> {
    let mut text = String::new();
    reader
        .read_to_string(&mut text)
        .map_err(|e| TraceError::io(path, e))?;
    let bad = |what: String| {
        TraceError::Unsupported {
        path: path.to_owned(),
        line: 1,
        what,
        instead: "save the answer of `/api/v1/query_range` as it comes (`curl -s \
                  'http://PROMETHEUS/api/v1/query_range?query=DCGM_FI_DEV_GPU_UTIL&start=...&end=...&step=15s'`), \
                  or ask the server with `gpufeed trace --prometheus URL`"
            .to_owned(),
    }
    };
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a Prometheus answer: invalid JSON ({e})")))?;
    if doc.get("status").and_then(Value::as_str) == Some("error") {
        let why = doc
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        return Err(bad(format!("Prometheus answered with an error: {why}")));
    }
    let data = doc.get("data").unwrap_or(&doc);
    let kind = data.get("resultType").and_then(Value::as_str).unwrap_or("");
    if kind != "matrix" {
        return Err(bad(format!(
            "the answer is a `{kind}`, not a `matrix`: it comes from `/api/v1/query` (an \
             instant), not `/api/v1/query_range`"
        )));
    }
    let result = data
        .get("result")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `result` list in the answer".to_owned()))?;
    let mut by_gpu: BTreeMap<(String, u32), Metrics> = BTreeMap::new();
    let mut skipped = 0;
    for (i, series) in result.iter().enumerate() {
        let label = |k: &str| {
            series
                .pointer(&format!("/metric/{k}"))
                .and_then(Value::as_str)
        };
        // An expression (`avg by (gpu) (...)`) drops the name: its values are utilisation.
        let name = label("__name__").unwrap_or(GPU_UTIL);
        if ![GPU_UTIL, SM_ACTIVE, TENSOR_ACTIVE].contains(&name) {
            continue;
        }
        let gpu = match label("gpu").map(str::parse::<u32>) {
            Some(Ok(g)) => g,
            None => 0,
            Some(Err(_)) => {
                return Err(bad(format!(
                    "series {} has `gpu` label `{}`, not an index",
                    i + 1,
                    label("gpu").unwrap_or_default()
                )));
            }
        };
        let host = label("Hostname")
            .or_else(|| label("instance"))
            .unwrap_or("")
            .to_owned();
        let m = by_gpu.entry((host, gpu)).or_default();
        for pair in series
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(t), Some(v)) = (
                pair.get(0).and_then(Value::as_f64),
                pair.get(1).and_then(Value::as_str),
            ) else {
                return Err(bad(format!(
                    "series {} has a value that is not `[time, \"number\"]`: {pair}",
                    i + 1
                )));
            };
            let Ok(v) = v.parse::<f64>() else {
                return Err(bad(format!(
                    "series {} has value `{v}`, not a number",
                    i + 1
                )));
            };
            if !v.is_finite() {
                skipped += 1;
                continue;
            }
            match name {
                SM_ACTIVE => m.sm.push((t, v)),
                TENSOR_ACTIVE => m.tensor.push(v),
                _ => m.util.push((t, v)),
            }
        }
    }
    if by_gpu.is_empty() && !result.is_empty() {
        return Err(bad(format!(
            "none of its {} series is `{GPU_UTIL}`, `{SM_ACTIVE}` or `{TENSOR_ACTIVE}`",
            result.len()
        )));
    }
    by_gpu.retain(|_, m| !m.util.is_empty() || !m.sm.is_empty());
    into_trace(path, TraceFormat::Prometheus, by_gpu, skipped, true)
}

/// Reads `dcgmi dmon` output (see the [module docs](self)); the row number per GPU is the
/// time axis ([`UtilTrace::has_timestamps`] false).
///
/// # Errors
/// [`TraceError::Unsupported`] for a header without `GPUTL` or `SMACT`, a row before the
/// header or with too few fields, a value that is not a number.
pub fn read_dmon(reader: impl BufRead, path: &Path) -> Result<UtilTrace, TraceError> {
    let mut lines = LineReader::new(reader);
    let mut columns: Option<(Option<usize>, Option<usize>, Option<usize>)> = None;
    let mut by_gpu: BTreeMap<(String, u32), Metrics> = BTreeMap::new();
    let mut rows: BTreeMap<u32, f64> = BTreeMap::new();
    let mut skipped = 0;
    let unsupported = |line: usize, what: String| TraceError::Unsupported {
        path: path.to_owned(),
        line,
        what,
        instead: "record with `dcgmi dmon -e 203,1002,1004` (GPUTL, SMACT, TENSO)".to_owned(),
    };
    while let Some((no, line)) = lines.next_str(path)? {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let words: Vec<&str> = rest.split_ascii_whitespace().collect();
            // Fields come after `Entity`; a row's entity is two words (`GPU 0`).
            let at = |name: &str| words.iter().position(|w| w.eq_ignore_ascii_case(name));
            let (util, sm, tensor) = (at("GPUTL"), at("SMACT"), at("TENSO"));
            if util.is_none() && sm.is_none() {
                return Err(unsupported(
                    no,
                    format!("the header `{line}` has neither `GPUTL` nor `SMACT`"),
                ));
            }
            columns = Some((util, sm, tensor));
            continue;
        }
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        if words.first().is_some_and(|w| w.eq_ignore_ascii_case("id")) {
            continue;
        }
        let Some((util, sm, tensor)) = columns else {
            return Err(unsupported(
                no,
                "a row before the `#Entity` header".to_owned(),
            ));
        };
        // `GPU 0 v1 v2 ...`: field k of the header is word k + 1 of the row.
        if !words.first().is_some_and(|w| w.eq_ignore_ascii_case("gpu")) {
            continue; // other entities (GPU_I, GPU_CI, switches) are not GPUs' own figures
        }
        let gpu: u32 = words
            .get(1)
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| unsupported(no, format!("`{line}` names no GPU index")))?;
        let value = |col: Option<usize>| -> Result<Option<f64>, TraceError> {
            let Some(c) = col else { return Ok(None) };
            let w = words
                .get(c + 1)
                .ok_or_else(|| unsupported(no, format!("`{line}` has too few fields")))?;
            if w.eq_ignore_ascii_case("N/A") {
                return Ok(None);
            }
            w.parse::<f64>()
                .map(Some)
                .map_err(|_| unsupported(no, format!("`{w}` is not a number")))
        };
        let row = rows.entry(gpu).or_insert(0.0);
        let t = *row;
        *row += 1.0;
        let m = by_gpu.entry((String::new(), gpu)).or_default();
        let (u, s) = (value(util)?, value(sm)?);
        match (u, s) {
            (None, None) => skipped += 1,
            _ => {
                if let Some(u) = u {
                    m.util.push((t, u));
                }
                if let Some(s) = s {
                    m.sm.push((t, s));
                }
            }
        }
        if let Some(x) = value(tensor)? {
            m.tensor.push(x);
        }
    }
    by_gpu.retain(|_, m| !m.util.is_empty() || !m.sm.is_empty());
    into_trace(path, TraceFormat::DcgmiDmon, by_gpu, skipped, false)
}

/// What to ask a Prometheus server for: DCGM's metrics of the series `selector` picks,
/// from `start` to `end` (Unix seconds or RFC 3339, as the server takes them) every
/// `step_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeQuery {
    /// The server, `http://host:9090` (a path prefix such as `/prometheus` is kept).
    pub url: String,
    /// Label matchers, with or without braces: `job="train",pod=~"trainer-.*"`.
    pub selector: String,
    /// Start.
    pub start: String,
    /// End.
    pub end: String,
    /// Resolution, s.
    pub step_s: f64,
}

impl RangeQuery {
    /// The PromQL: every DCGM metric read, under the selector.
    #[must_use]
    pub fn promql(&self) -> String {
        let sel = self
            .selector
            .trim()
            .trim_start_matches('{')
            .trim_end_matches('}')
            .trim();
        let names = format!("__name__=~\"{GPU_UTIL}|{SM_ACTIVE}|{TENSOR_ACTIVE}\"");
        if sel.is_empty() {
            format!("{{{names}}}")
        } else {
            format!("{{{names},{sel}}}")
        }
    }

    /// The address of the range query.
    #[must_use]
    pub fn address(&self) -> String {
        let enc = |s: &str| -> String {
            s.bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect()
        };
        format!(
            "{}/api/v1/query_range?query={}&start={}&end={}&step={}",
            self.url.trim_end_matches('/'),
            enc(&self.promql()),
            enc(&self.start),
            enc(&self.end),
            self.step_s
        )
    }
}

/// Asks the server for the range and reads the answer into a trace named `label`.
///
/// # Errors
/// The server cannot be reached, answers with an HTTP error (its `error` quoted), or its
/// answer does not read ([`read_range_json`]); `https://` addresses are refused with what
/// to do instead.
pub fn query_range(q: &RangeQuery, label: &Path) -> Result<UtilTrace, TraceError> {
    let unsupported = |what: String, instead: &str| TraceError::Unsupported {
        path: label.to_owned(),
        line: 1,
        what,
        instead: instead.to_owned(),
    };
    if q.url.starts_with("https://") {
        return Err(unsupported(
            format!("`{}` is https", q.url),
            "gpufeed asks Prometheus over plain http; reach it through a tunnel (`kubectl \
             port-forward svc/prometheus 9090`, `ssh -L 9090:...`), or save the range query \
             with `curl` and give the file to `gpufeed trace`",
        ));
    }
    let address = q.address();
    // minreq: a small blocking HTTP/1.1 client without TLS, all a local query needs.
    let answer = minreq::get(&address).with_timeout(60).send().map_err(|e| {
        unsupported(
            format!("could not ask `{}`: {e}", q.url),
            "check the address (`http://HOST:9090`) and that the server is up \
                 (`curl URL/-/ready`)",
        )
    })?;
    let body = answer.as_bytes();
    if answer.status_code >= 400 && !is_range_query(body) {
        let text = String::from_utf8_lossy(&body[..body.len().min(500)]).into_owned();
        return Err(unsupported(
            format!("`{}` answered HTTP {}: {text}", q.url, answer.status_code),
            "check the selector's syntax (`job=\"train\"`) and the range",
        ));
    }
    read_range_json(body, label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_answer_is_judged_by_sm_activity_where_there_is_some() {
        let doc = r#"{"status":"success","data":{"resultType":"matrix","result":[
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","Hostname":"n1"},"values":[[100,"100"],[115,"100"],[130,"0"]]},
          {"metric":{"__name__":"DCGM_FI_PROF_SM_ACTIVE","gpu":"0","Hostname":"n1"},"values":[[100,"0.25"],[115,"0.5"],[130,"0"]]},
          {"metric":{"__name__":"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE","gpu":"0","Hostname":"n1"},"values":[[100,"0.1"],[115,"0.3"]]},
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"1","Hostname":"n1"},"values":[[100,"40"],[115,"NaN"]]}
        ]}}"#;
        assert!(is_range_query(doc.as_bytes()));
        let t = read_range_json(doc.as_bytes(), Path::new("q.json")).unwrap();
        assert_eq!(t.format, TraceFormat::Prometheus);
        assert_eq!(t.gpus[0].util, vec![25.0, 50.0, 0.0]);
        assert_eq!(t.gpus[0].t, vec![100.0, 115.0, 130.0]);
        assert_eq!(t.gpus[1].util, vec![40.0]);
        assert_eq!(t.skipped, 1);
        let note = t.note.unwrap();
        assert!(
            note.contains("judged by SM activity") && note.contains("GPU 0"),
            "{note}"
        );
        assert!(note.contains("GPU 1 has no SM activity"), "{note}");
        assert!(note.contains("GPU 0 20.0 %"), "{note}");
    }

    #[test]
    fn several_hosts_get_an_index_each_and_bad_answers_say_why() {
        let doc = r#"{"resultType":"matrix","result":[
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","instance":"a:9400"},"values":[[1,"5"]]},
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","instance":"b:9400"},"values":[[1,"7"]]}]}"#;
        let t = read_range_json(doc.as_bytes(), Path::new("q.json")).unwrap();
        assert_eq!(t.gpus.len(), 2);
        assert!(t.note.unwrap().contains("GPU 1 = b:9400 gpu 0"));
        let err = |s: &str| {
            read_range_json(s.as_bytes(), Path::new("q.json"))
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(r#"{"status":"error","error":"parse error at char 3"}"#)
                .contains("parse error at char 3")
        );
        assert!(err(r#"{"data":{"resultType":"vector","result":[]}}"#).contains("/api/v1/query"));
        assert!(err(r#"{"resultType":"matrix","result":[{"metric":{"__name__":"up"},"values":[[1,"1"]]}]}"#).contains("none of its 1 series"));
        assert!(err("not json").contains("invalid JSON"));
    }

    #[test]
    fn dcgmi_dmon_rows_are_read_per_gpu() {
        let log = "#Entity   GPUTL  SMACT  TENSO\nID\nGPU 0     100    0.300  0.100\nGPU 1     N/A    N/A    N/A\nGPU 0     100    0.500  0.200\nGPU_I 3   1      0.1    0.0\n";
        assert!(is_dmon_header(log.lines().next().unwrap()));
        let t = read_dmon(log.as_bytes(), Path::new("dmon.txt")).unwrap();
        assert_eq!(t.format, TraceFormat::DcgmiDmon);
        assert!(!t.has_timestamps);
        assert_eq!(t.gpus.len(), 1);
        assert_eq!(t.gpus[0].util, vec![30.0, 50.0]);
        assert_eq!(t.gpus[0].t, vec![0.0, 1.0]);
        assert_eq!(t.skipped, 1);
        let e = read_dmon("#Entity POWER\nGPU 0 100\n".as_bytes(), Path::new("d")).unwrap_err();
        assert!(e.to_string().contains("neither `GPUTL` nor `SMACT`"), "{e}");
    }

    #[test]
    fn the_query_names_every_metric_under_the_selector() {
        let q = RangeQuery {
            url: "http://p:9090/".into(),
            selector: "{job=\"train\"}".into(),
            start: "100".into(),
            end: "200".into(),
            step_s: 15.0,
        };
        assert_eq!(
            q.promql(),
            "{__name__=~\"DCGM_FI_DEV_GPU_UTIL|DCGM_FI_PROF_SM_ACTIVE|DCGM_FI_PROF_PIPE_TENSOR_ACTIVE\",job=\"train\"}"
        );
        assert!(
            q.address()
                .starts_with("http://p:9090/api/v1/query_range?query=%7B__name__")
        );
        assert!(q.address().ends_with("&start=100&end=200&step=15"));
    }
}
