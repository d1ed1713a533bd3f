//! `gpufeed monitor --prometheus` against the real tools: a Prometheus server (Debian's
//! `prometheus` package, which `.ci/run` installs) scraping a synthetic monitor, asked
//! through its HTTP API (PromQL) for what the synthetic source's definition says;
//! `promtool` checking and unit-testing `deploy/prometheus/gpufeed-rules.yml`; every metric
//! of the rules' and the Grafana dashboard's queries checked against the families the
//! exporter really serves; the page of a machine with 8 GPUs (the fake NVML).
//!
//! A test that needs `prometheus` or `promtool` prints `skipped: ... not installed` and
//! passes when the binary is absent.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::io::{BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::fake_nvml;

/// A program on `PATH` (Debian installs both tools in /usr/bin).
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `which(name)`, or `None` after saying that the test skips.
#[allow(clippy::print_stdout)] // the test's own output: why it skipped
fn tool(name: &str) -> Option<PathBuf> {
    let found = which(name);
    if found.is_none() {
        println!(
            "skipped: {name} not installed (Debian's `prometheus` package; `.ci/run` installs it)"
        );
    }
    found
}

/// The repository's `deploy/` folder.
fn deploy(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(rel)
}

/// A child process killed when dropped (a failed assertion must not leave it running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `gpufeed monitor ARGS --prometheus 127.0.0.1:0`; returns the process and the address
/// it serves, read from its first line on stderr.
fn monitor(args: &[&str], env: &[(&str, &str)]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpufeed"))
        .arg("monitor")
        .args(args)
        .args(["--prometheus", "127.0.0.1:0", "--format", "json"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = common::served_address(&mut stderr);
    // Drained to the end, so that the monitor's warnings never meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (Running(child), addr)
}

/// One HTTP/1.0 GET (no chunked answers); the status and the body, `None` when nothing
/// answers.
fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// The exporter's page once `ready` holds for it (within 30 s).
fn page_when(addr: &str, ready: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let page = get(addr, "/metrics").map(|(_, b)| b).unwrap_or_default();
        if ready(&page) {
            return page;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never ready: {page}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The metric families a page declares (`# TYPE NAME gauge`).
fn families(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect()
}

/// The label names of a page's samples.
fn label_names(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('{').and_then(|(_, r)| r.rsplit_once('}')))
        .flat_map(|(labels, _)| {
            // Label values hold no `=` here but may hold commas inside quotes.
            let mut names = Vec::new();
            let mut rest = labels;
            while let Some((name, after)) = rest.split_once("=\"") {
                names.push(name.trim_start_matches(',').to_owned());
                let mut end = 0;
                let bytes = after.as_bytes();
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                rest = after.get(end + 1..).unwrap_or_default();
            }
            names
        })
        .collect()
}

/// The metric names a PromQL expression selects: identifiers outside strings, label
/// matchers, ranges and grouping lists that are neither functions nor keywords. Grafana's
/// `$variables` are not names.
fn promql_metric_names(expr: &str) -> Vec<String> {
    // Aggregations and operators; the grouping words, whose lists name labels.
    const KEYWORDS: [&str; 17] = [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "and",
        "or",
        "unless",
        "bool",
        "offset",
    ];
    const GROUPING: [&str; 6] = [
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    // Blank out strings, {...} and [...].
    let mut plain = String::with_capacity(expr.len());
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth = depth.saturating_sub(1),
            (None, c) if depth == 0 => plain.push(c),
            _ => {}
        }
        if quote.is_some() || depth > 0 {
            plain.push(' ');
        }
    }
    let bytes = plain.as_bytes();
    let is_start = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b':';
    let is_part = |b: u8| is_start(b) || b.is_ascii_digit();
    let mut names = Vec::new();
    let mut i = 0;
    let mut skip_group = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'(' && skip_group {
            // A grouping list: label names, not metrics.
            let close = plain[i..].find(')').map_or(bytes.len(), |j| i + j + 1);
            i = close;
            skip_group = false;
            continue;
        }
        if !is_start(b) || (i > 0 && (is_part(bytes[i - 1]) || bytes[i - 1] == b'$')) {
            if !b.is_ascii_whitespace() {
                skip_group = false;
            }
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_part(bytes[i]) {
            i += 1;
        }
        let word = &plain[start..i];
        let next = plain[i..].trim_start().chars().next();
        skip_group = GROUPING.contains(&word);
        let lower = word.to_ascii_lowercase();
        let keyword = KEYWORDS.contains(&lower.as_str()) || skip_group || lower == "inf";
        if keyword || lower == "nan" || next == Some('(') {
            continue;
        }
        names.push(word.to_owned());
    }
    names
}

/// The `expr` of every rule of `deploy/prometheus/gpufeed-rules.yml`.
fn rule_queries() -> Vec<String> {
    let text = fs_err::read_to_string(deploy("prometheus/gpufeed-rules.yml")).unwrap();
    let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let groups = doc["groups"].as_sequence().unwrap();
    let exprs: Vec<String> = groups
        .iter()
        .flat_map(|g| g["rules"].as_sequence().unwrap())
        .map(|r| r["expr"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(exprs.len(), 3);
    exprs
}

/// Every query of `deploy/grafana/gpufeed.json`: the panels' targets and the template
/// variables' `label_values(...)` queries (as their metric selector).
fn dashboard_queries() -> Vec<String> {
    let dash: Value =
        serde_json::from_slice(&fs_err::read(deploy("grafana/gpufeed.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            out.push(t["expr"].as_str().unwrap().to_owned());
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|r| r.rsplit_once(','))
                .map(|(selector, _)| selector.to_owned())
                .unwrap_or_else(|| panic!("{q}"));
            out.push(inner);
        }
    }
    assert!(out.len() >= 10, "{out:?}");
    out
}

/// A dashboard query as Prometheus would get it from Grafana, with every variable on
/// "All".
fn as_sent(expr: &str) -> String {
    expr.replace("$Hostname", ".*")
        .replace("$gpu", ".*")
        .replace("$__rate_interval", "1m")
}

/// The families and label names a synthetic monitor really serves: one run fast enough
/// for the window's figures, one in real time for the host's.
fn served() -> (BTreeSet<String>, BTreeSet<String>) {
    let (_fast, addr) = monitor(
        &[
            "--synthetic",
            "oscillating:gpus=2",
            "--interval-ms",
            "5",
            "--speed",
            "20",
            "--duration",
            "600",
        ],
        &[],
    );
    let fast = page_when(&addr, |p| {
        p.contains("gpufeed_gpu_oscillation_period_seconds{")
    });
    let (_live, addr) = monitor(&["--synthetic", "stable", "--duration", "600"], &[]);
    let live = page_when(&addr, |p| p.contains("gpufeed_host_cpu_percent"));
    let mut names = families(&fast);
    names.extend(families(&live));
    let mut labels = label_names(&fast);
    labels.extend(label_names(&live));
    (names, labels)
}

#[test]
fn promql_names_are_found() {
    assert_eq!(
        promql_metric_names(
            r#"sum by (Hostname, gpu) (rate(a_total{x="b{c}"}[5m]) * on (gpu) group_left (UUID) b_info) and c > bool 2 or $x"#
        ),
        ["a_total", "b_info", "c"]
    );
    assert_eq!(
        promql_metric_names(
            "gpufeed_gpu_verdict{verdict=\"idle\"} == 1\n  and on (Hostname)\ncount by (Hostname) (d == 1) > 0"
        ),
        ["gpufeed_gpu_verdict", "d"]
    );
}

#[test]
fn every_metric_of_the_rules_and_the_dashboard_is_one_the_exporter_serves() {
    let (names, labels) = served();
    assert!(names.len() > 20, "{names:?}");
    for expr in rule_queries().iter().chain(&dashboard_queries()) {
        let used = promql_metric_names(expr);
        assert!(!used.is_empty(), "no metric in `{expr}`");
        for name in used {
            assert!(
                names.contains(&name),
                "`{name}` (in `{expr}`) is not served by gpufeed; it serves {names:?}"
            );
        }
    }
    // dcgm-exporter's labels, so the two join; and the ones the queries group by.
    for label in ["gpu", "modelName", "Hostname", "verdict", "reason"] {
        assert!(labels.contains(label), "{label}: {labels:?}");
    }
}

#[test]
fn promtool_checks_and_unit_tests_the_rules() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    let dir = deploy("prometheus");
    for args in [
        ["check", "rules", "gpufeed-rules.yml"],
        ["test", "rules", "gpufeed-rules.test.yml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "promtool {args:?}:\n{text}");
        assert!(text.contains("SUCCESS"), "promtool {args:?}:\n{text}");
    }
}

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `query` asked of Prometheus at `addr`: the API's `data.result`.
fn query(addr: &str, promql: &str) -> Vec<Value> {
    let encoded: String = promql
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let (status, body) = get(addr, &format!("/api/v1/query?query={encoded}"))
        .unwrap_or_else(|| panic!("Prometheus at {addr} does not answer"));
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(status, 200, "`{promql}`: {body}");
    assert_eq!(v["status"], "success", "`{promql}`: {body}");
    v["data"]["result"].as_array().unwrap().clone()
}

/// The single value of a query's only series.
fn one_value(result: &[Value]) -> f64 {
    assert_eq!(result.len(), 1, "{result:?}");
    result[0]["value"][1].as_str().unwrap().parse().unwrap()
}

#[test]
fn a_real_prometheus_scrapes_the_synthetic_truth() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    // The synthetic truth: a square wave of period 2 s, busy (40 %) for the first half
    // of each period and idle (2 %, under the 10 % idle level) for the second, no noise.
    // Polls every 100 ms of the source's time (`--interval-ms` is real time, which
    // `--speed 5` runs 5 times faster: 20 ms) land each in one 100 ms cell of the grid, a
    // cell wholly in one half, so the period has 20 cells, 10 of them idle. A window of n
    // consecutive cells holds n/2 idle ones give or take a quarter period (5 cells, when
    // it holds half a period more), so the idle ratio is 0.5 within 5/n, and n >= 100 (the
    // window needs 10 s of samples). The period detector works in lags of one poll: 2 s
    // within 0.1 s.
    const PERIOD_S: f64 = 2.0;
    const DUTY: f64 = 0.5;
    const INTERVAL_S: f64 = 0.1;
    const MIN_WINDOW_SPAN_S: f64 = 10.0;
    let cells_per_period = PERIOD_S / INTERVAL_S;
    let tolerance = (cells_per_period / 4.0) / (MIN_WINDOW_SPAN_S / INTERVAL_S);
    let (_gpufeed, target) = monitor(
        &[
            "--synthetic",
            "oscillating:period=2,duty=0.5,low=2,high=40,noise=0",
            "--interval-ms",
            "20",
            "--speed",
            "5",
            "--duration",
            "3600",
        ],
        &[],
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    fs_err::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  evaluation_interval: 500ms\n\
             scrape_configs:\n  - job_name: gpufeed\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let server = Running(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                fs_err::File::create(dir.path().join("prometheus.log"))
                    .unwrap()
                    .into_parts()
                    .0,
            ))
            .spawn()
            .unwrap(),
    );
    let log = || fs_err::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
    let start = Instant::now();
    let (verdict, idle, period) = loop {
        let ready = get(&addr, "/-/ready").is_some_and(|(s, _)| s == 200);
        if ready {
            let v = query(&addr, "gpufeed_gpu_verdict == 1");
            let i = query(&addr, "gpufeed_gpu_idle_ratio");
            let p = query(&addr, "gpufeed_gpu_oscillation_period_seconds");
            if !v.is_empty() && !i.is_empty() && !p.is_empty() {
                break (v, i, p);
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "Prometheus has no gpufeed figures after 60 s; its log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // The labels Prometheus stored: dcgm-exporter's, and its own.
    assert_eq!(verdict.len(), 1, "{verdict:?}");
    let m = &verdict[0]["metric"];
    assert_eq!(m["verdict"], "oscillating", "{verdict:?}");
    assert_eq!(m["gpu"], "0");
    assert_eq!(m["job"], "gpufeed");
    assert_eq!(m["instance"], target.as_str());
    assert!(
        m["Hostname"].is_string() && m["modelName"].is_string(),
        "{m}"
    );
    let idle = one_value(&idle);
    assert!(
        (idle - (1.0 - DUTY)).abs() <= tolerance,
        "idle ratio {idle}, truth {} within {tolerance}",
        1.0 - DUTY,
    );
    let period = one_value(&period);
    assert!(
        (period - PERIOD_S).abs() <= INTERVAL_S,
        "period {period} s, truth {PERIOD_S} s within {INTERVAL_S} s"
    );
    println!(
        "Prometheus: verdict oscillating, idle ratio {idle} (truth {} within {tolerance}), \
         period {period} s (truth {PERIOD_S} s within {INTERVAL_S} s)",
        1.0 - DUTY
    );
    // PromQL over what was scraped: the idle ratio stays at the truth over the samples
    // Prometheus holds.
    let avg = one_value(&query(&addr, "avg_over_time(gpufeed_gpu_idle_ratio[1m])"));
    assert!((avg - (1.0 - DUTY)).abs() <= tolerance, "{avg}");
    // Every query of the rules and the dashboard is valid PromQL that Prometheus runs, and
    // the dashboard's find their series.
    for expr in rule_queries() {
        query(&addr, &expr);
    }
    for expr in dashboard_queries() {
        let result = query(&addr, &as_sent(&expr));
        let host_only = expr.contains("gpufeed_host_");
        // A `--speed` run samples no host; everything else is there.
        assert!(host_only || !result.is_empty(), "no series for `{expr}`");
    }
    drop(server);
}

#[test]
fn the_exporter_page_for_eight_gpus() {
    let (_m, addr) = monitor(
        &["--duration", "600", "--interval-ms", "100"],
        &[
            ("GPUFEED_NVML_LIB", fake_nvml().to_str().unwrap()),
            ("FAKE_NVML_GPUS", "8"),
        ],
    );
    let page = page_when(&addr, |p| {
        p.contains("gpufeed_gpu_utilization_percent{gpu=\"7\"")
            && p.contains("gpufeed_host_cpu_percent")
    });
    let info: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("gpufeed_gpu_info{"))
        .collect();
    assert_eq!(info.len(), 8, "{page}");
    let uuids: BTreeSet<&str> = info
        .iter()
        .map(|l| {
            l.split("UUID=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(uuids.len(), 8, "{info:?}");
    for (i, l) in info.iter().enumerate() {
        assert!(
            l.starts_with(&format!(
                "gpufeed_gpu_info{{gpu=\"{i}\",UUID=\"GPU-fa4e0000-0000-4000-8000-{i:012x}\",modelName=\"Fake GPU {i}\",Hostname=\""
            )),
            "{l}"
        );
    }
    // Every GPU family has one series per GPU (the throttle reasons one per reason), each
    // with the GPU's labels; GPU 1 (the consumer card) has no temperature or PCIe.
    for family in families(&page)
        .iter()
        .filter(|f| f.starts_with("gpufeed_gpu_"))
    {
        let series: Vec<&str> = page
            .lines()
            .filter(|l| l.starts_with(&format!("{family}{{")))
            .collect();
        let per_gpu = |g: u32| {
            series
                .iter()
                .filter(|l| l.contains(&format!("{{gpu=\"{g}\",UUID=\"")))
                .count()
        };
        let want = if family == "gpufeed_gpu_throttle" {
            9
        } else {
            1
        };
        // Read on slower ticks (GPM, PCIe), or not at all by the consumer card.
        let sparse = [
            "temperature",
            "pcie",
            "sm_active",
            "occupancy",
            "tensor",
            "dram",
        ];
        if sparse.iter().any(|s| family.contains(s)) {
            assert_eq!(per_gpu(1), 0, "{family} GPU 1:\n{page}");
            for g in (0..8).filter(|&g| g != 1) {
                assert!(per_gpu(g) <= want, "{family} GPU {g}:\n{page}");
            }
        } else {
            for g in 0..8 {
                assert_eq!(per_gpu(g), want, "{family} GPU {g}:\n{page}");
            }
        }
    }
    // Readings are the fake's: every busy card draws 287.5 W, the consumer card 75 W.
    for g in 0..8 {
        let watts = if g == 1 { "75" } else { "287.5" };
        assert!(
            page.lines().any(
                |l| l.starts_with(&format!("gpufeed_gpu_power_watts{{gpu=\"{g}\","))
                    && l.ends_with(&format!("}} {watts}"))
            ),
            "GPU {g}: {page}"
        );
    }
}

/// `gpufeed trace --prometheus` against a real Prometheus holding known series of
/// dcgm-exporter's metrics, written into its storage with `promtool tsdb
/// create-blocks-from openmetrics` (an hour ending two hours ago, every 15 s):
/// - GPU 0: `DCGM_FI_DEV_GPU_UTIL` 100 (a kernel always running) and
///   `DCGM_FI_PROF_SM_ACTIVE` 0.25: judged by SM activity, 25 % (starved, where
///   `GPU_UTIL` alone says well fed), and said so;
/// - GPU 1: `DCGM_FI_DEV_GPU_UTIL` 60 alone: judged by it;
/// - GPU 2 of another job, left out by the selector.
///
/// The saved answer of the same range query reads the same.
#[test]
fn trace_asks_a_real_prometheus_for_dcgm_metrics() {
    let (Some(prometheus), Some(promtool)) = (tool("prometheus"), tool("promtool")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let end = now - 7200 - now % 15;
    let start = end - 3600;
    let mut om = String::new();
    let series = [
        ("DCGM_FI_DEV_GPU_UTIL", "0", "train", "100"),
        ("DCGM_FI_DEV_GPU_UTIL", "1", "train", "60"),
        ("DCGM_FI_DEV_GPU_UTIL", "2", "other", "5"),
        ("DCGM_FI_PROF_SM_ACTIVE", "0", "train", "0.25"),
    ];
    for name in ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE"] {
        om.push_str(&format!("# TYPE {name} gauge\n"));
        for ts in (start..=end).step_by(15) {
            for (n, gpu, job, v) in series.iter().filter(|s| s.0 == name) {
                om.push_str(&format!(
                    "{n}{{gpu=\"{gpu}\",Hostname=\"node7\",job=\"{job}\"}} {v} {ts}\n"
                ));
            }
        }
    }
    om.push_str("# EOF\n");
    let om_path = dir.path().join("dcgm.om");
    fs_err::write(&om_path, om).unwrap();
    let data = dir.path().join("data");
    let made = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om_path)
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let config = dir.path().join("prometheus.yml");
    fs_err::write(&config, "global:\n  scrape_interval: 15s\n").unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let _server = Running(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(&addr, "/-/ready").is_none_or(|(s, _)| s != 200) {
        assert!(
            Instant::now() < deadline,
            "Prometheus at {addr} never got ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let url = format!("http://{addr}");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gpufeed"))
            .arg("trace")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (doc, stderr)
    };
    let (doc, stderr) = run(&[
        "--prometheus",
        &url,
        "--selector",
        "job=\"train\"",
        "--since",
        &start.to_string(),
        "--until",
        &end.to_string(),
        "--step",
        "15s",
    ]);
    let check = |doc: &Value, stderr: &str| {
        let gpus = doc["gpus"].as_array().unwrap();
        assert_eq!(
            gpus.len(),
            2,
            "the selector leaves the other job out: {doc}"
        );
        let mean = |i: usize| gpus[i]["mean"].as_f64().unwrap();
        assert!((mean(0) - 25.0).abs() < 1e-6, "{doc}");
        assert!((mean(1) - 60.0).abs() < 1e-6, "{doc}");
        // A kernel always running reads 100 % on GPU_UTIL: by SM activity it is starved.
        assert_eq!(gpus[0]["verdict"], "starved", "{doc}");
        assert_eq!(doc["samples"], 2 * 241, "{doc}");
        assert!(stderr.contains("judged by SM activity"), "{stderr}");
        assert!(stderr.contains("GPU 1 has no SM activity"), "{stderr}");
    };
    check(&doc, &stderr);
    // The answer saved with curl reads the same.
    let q = format!(
        "/api/v1/query_range?query=%7B__name__%3D~%22DCGM_FI_DEV_GPU_UTIL%7CDCGM_FI_PROF_SM_ACTIVE%22%2Cjob%3D%22train%22%7D&start={start}&end={end}&step=15"
    );
    let (status, body) = get(&addr, &q).unwrap();
    assert_eq!(status, 200, "{body}");
    let saved = dir.path().join("range.json");
    fs_err::write(&saved, body).unwrap();
    let (doc, stderr) = run(&[saved.to_str().unwrap()]);
    check(&doc, &stderr);
}
