use proptest::prelude::*;

use super::*;

const HEADER: &str = r#"{"format":"gpufeed-telemetry","version":1,"started_at":"2026-11-21T10:00:00Z","interval_ms":100,"source":"nvml","host":"node1","gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1","memory_total_mib":81559}]}"#;

fn read_str(input: &str) -> Result<UtilTrace, TraceError> {
    read_util(input.as_bytes(), Path::new("rec.jsonl"))
}

fn err(input: &str) -> String {
    read_str(input).unwrap_err().to_string()
}

fn full_sample(t: f64, gpu: u32) -> GpuSample {
    GpuSample {
        t,
        gpu,
        util: Some(37.0),
        mem_util: Some(12.0),
        mem_used_mib: Some(20480.0),
        power_w: Some(310.5),
        sm_clock_mhz: Some(1980),
        temp_c: Some(61),
        throttle: Some(vec!["sw_power_cap".to_owned()]),
        pcie_rx_kb_s: Some(1200.0),
        pcie_tx_kb_s: Some(300.0),
        ..GpuSample::new(t, gpu)
    }
}

fn header() -> Header {
    Header {
        host: Some("node1".to_owned()),
        gpus: vec![GpuInfo {
            index: 0,
            name: Some("NVIDIA H100 80GB HBM3".to_owned()),
            uuid: Some("GPU-1".to_owned()),
            memory_total_mib: Some(81559),
        }],
        ..Header::new("2026-11-21T10:00:00Z", 100, "nvml")
    }
}

#[test]
fn writes_the_documented_lines() {
    let mut w = JsonlWriter::new(Vec::new(), &header()).unwrap();
    w.write(&Record::Gpu(full_sample(0.0, 0))).unwrap();
    w.write(&Record::Host(HostSample {
        t: 0.0,
        host: HostMetrics {
            cpu_pct: Some(85.0),
            iowait_pct: Some(4.0),
            ..HostMetrics::default()
        },
    }))
    .unwrap();
    w.write(&Record::Gpu(GpuSample::new(0.1, 1))).unwrap();
    w.flush().unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], HEADER);
    assert_eq!(
        lines[1],
        r#"{"t":0.0,"gpu":0,"util":37.0,"mem_util":12.0,"mem_used_mib":20480.0,"power_w":310.5,"sm_clock_mhz":1980,"temp_c":61,"throttle":["sw_power_cap"],"pcie_rx_kb_s":1200.0,"pcie_tx_kb_s":300.0}"#
    );
    assert_eq!(
        lines[2],
        r#"{"t":0.0,"host":{"cpu_pct":85.0,"iowait_pct":4.0}}"#
    );
    assert_eq!(
        lines[3], r#"{"t":0.1,"gpu":1}"#,
        "absent readings are left out"
    );
    assert!(text.ends_with('\n'));
}

#[test]
fn round_trip_writer_to_reader() {
    let records = vec![
        Record::Gpu(full_sample(0.0, 0)),
        Record::Gpu(GpuSample {
            util: Some(3.0),
            ..GpuSample::new(0.0, 1)
        }),
        Record::Host(HostSample {
            t: 0.0,
            host: HostMetrics::default(),
        }),
        Record::Gpu(GpuSample {
            util: Some(40.5),
            ..GpuSample::new(0.1, 0)
        }),
        Record::Gpu(GpuSample::new(0.1, 1)),
        Record::Gpu(GpuSample {
            throttle: Some(vec![]),
            util: Some(100.0),
            ..GpuSample::new(0.2, 1)
        }),
    ];
    let mut w = JsonlWriter::new(Vec::new(), &header()).unwrap();
    for r in &records {
        w.write(r).unwrap();
    }
    let bytes = w.into_inner();

    let reader = Reader::new(bytes.as_slice(), "rec.jsonl").unwrap();
    assert_eq!(reader.header(), &header());
    let back: Vec<Record> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(back, records);

    let t = read_util(bytes.as_slice(), Path::new("rec.jsonl")).unwrap();
    assert_eq!(t.format, TraceFormat::GpufeedJsonl);
    assert!(t.has_timestamps);
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].t, vec![0.0, 0.1]);
    assert_eq!(t.gpus[0].util, vec![37.0, 40.5]);
    assert_eq!(t.gpus[1].t, vec![0.0, 0.2]);
    assert_eq!(t.gpus[1].util, vec![3.0, 100.0]);
    assert_eq!((t.rows, t.skipped), (4, 1));
}

#[test]
fn non_finite_values() {
    let mut w = JsonlWriter::new(Vec::new(), &header()).unwrap();
    let e = w
        .write(&Record::Gpu(GpuSample::new(f64::NAN, 0)))
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    w.write(&Record::Gpu(GpuSample {
        power_w: Some(f64::INFINITY),
        ..GpuSample::new(1.0, 0)
    }))
    .unwrap();
    let bytes = w.into_inner();
    let back: Vec<Record> = Reader::new(bytes.as_slice(), "r")
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, vec![Record::Gpu(GpuSample::new(1.0, 0))]);
}

#[test]
fn unknown_keys_are_ignored() {
    let input = format!(
        "{}\n{}\n",
        HEADER.replace("\"source\"", "\"future\":{\"a\":1},\"source\""),
        r#"{"t":1.5,"gpu":0,"util":20,"nvlink_gbps":3.0,"sm_clock_mhz":1000}"#
    );
    let t = read_str(&input).unwrap();
    assert_eq!(t.gpus[0].util, vec![20.0]);
    assert_eq!(t.gpus[0].t, vec![1.5]);
}

#[test]
fn minimal_header() {
    let input = "{\"format\":\"gpufeed-telemetry\",\"version\":1,\"started_at\":\"x\",\
                 \"interval_ms\":100,\"source\":\"synthetic\"}\n{\"t\":0,\"gpu\":2,\"util\":1}\n";
    let r = Reader::new(input.as_bytes(), "r").unwrap();
    assert_eq!(r.header().gpus, vec![]);
    assert_eq!(read_str(input).unwrap().gpus[0].gpu, 2);
}

#[test]
fn first_line_not_a_header() {
    let expected = "`rec.jsonl` line 1: not a gpufeed recording header; expected a JSON object \
                    with `\"format\":\"gpufeed-telemetry\"` and `\"version\"`, as `gpufeed \
                    monitor --record` writes on the first line";
    assert_eq!(err("{\"t\":0,\"gpu\":0,\"util\":5}\n"), expected);
    assert_eq!(err("{\"format\":\"other\",\"version\":1}\n"), expected);
    assert_eq!(err("{\"format\":\"gpufeed-telemetry\"}\n"), expected);
    assert_eq!(err("[1,2]\n"), expected);
    assert_eq!(err("{ not json\n"), expected);
}

#[test]
fn header_with_a_bad_field() {
    let e = err(
        "{\"format\":\"gpufeed-telemetry\",\"version\":1,\"interval_ms\":100,\"source\":\"x\"}\n",
    );
    assert_eq!(
        e,
        "`rec.jsonl` line 1: missing field `started_at`; fix or delete the line"
    );
}

#[test]
fn newer_version() {
    let e = err(&HEADER.replace("\"version\":1", "\"version\":2"));
    assert_eq!(
        e,
        "`rec.jsonl` line 1: recording format version `2` is not supported: this build of \
         gpufeed reads version 1; upgrade gpufeed to read it"
    );
    let e = err(&HEADER.replace("\"version\":1", "\"version\":\"1\""));
    assert!(
        e.contains("version `\"1\"` is not supported") && e.ends_with("the header is damaged"),
        "{e}"
    );
}

#[test]
fn bad_json_names_the_line() {
    let input =
        format!("{HEADER}\n{{\"t\":0,\"gpu\":0,\"util\":5}}\n\n{{\"t\":0,\"gpu\":0,\"util\":\n");
    assert_eq!(
        err(&input),
        "`rec.jsonl` line 4 column 22: EOF while parsing a value; fix or delete the line"
    );
}

#[test]
fn wrong_types_name_the_line() {
    let input = format!("{HEADER}\n{{\"t\":0,\"gpu\":\"zero\",\"util\":5}}\n");
    let e = err(&input);
    assert!(
        e.starts_with("`rec.jsonl` line 2 column 19: invalid type: string \"zero\", expected u32"),
        "{e}"
    );
}

#[test]
fn sample_with_neither_gpu_nor_host() {
    let input = format!("{HEADER}\n{{\"t\":0,\"util\":5}}\n");
    let e = err(&input);
    assert!(e.starts_with("`rec.jsonl` line 2"), "{e}");
    assert!(e.contains("sample has neither `gpu` nor `host`"), "{e}");
    let input = format!("{HEADER}\n{{\"t\":0,\"gpu\":0,\"host\":{{}}}}\n");
    assert!(err(&input).contains("sample has both `gpu` and `host`"));
    let input = format!("{HEADER}\n{{\"gpu\":0,\"util\":5}}\n");
    assert!(err(&input).contains("missing field `t`"));
}

#[test]
fn util_out_of_range() {
    let input = format!(
        "{HEADER}\n{{\"t\":0,\"gpu\":0,\"util\":5}}\n{{\"t\":0.1,\"gpu\":0,\"util\":101}}\n"
    );
    assert_eq!(
        err(&input),
        "`rec.jsonl` line 3: utilisation `101` is outside 0..=100 % (column `util`)"
    );
}

#[test]
fn host_only_or_no_util_is_no_samples() {
    let input = format!("{HEADER}\n{{\"t\":0,\"host\":{{\"cpu_pct\":5}}}}\n");
    assert!(err(&input).starts_with("`rec.jsonl` has no utilisation samples; record with"));
    let input = format!("{HEADER}\n{{\"t\":0,\"gpu\":0,\"power_w\":5}}\n");
    assert!(err(&input).contains("all 1 values were unavailable"));
}

#[test]
fn empty_bom_crlf_and_utf8() {
    assert!(err("").starts_with("`rec.jsonl` is empty"));
    let input = format!("\u{feff}{HEADER}\r\n{{\"t\":0,\"gpu\":0,\"util\":5}}\r\n");
    assert_eq!(read_str(&input).unwrap().rows, 1);
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(b"{\"t\":0,\"gpu\":0,\"util\":5,\"x\":\"\xff\"}\n");
    let e = read_util(bytes.as_slice(), Path::new("rec.jsonl")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`rec.jsonl` line 2: not valid UTF-8")
    );
}

proptest! {
    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_util(bytes.as_slice(), Path::new("x"));
        let mut with_header = format!("{HEADER}\n").into_bytes();
        with_header.extend_from_slice(&bytes);
        let _ = read_util(with_header.as_slice(), Path::new("x"));
    }

    #[test]
    fn never_panics_on_jsonish_lines(
        lines in proptest::collection::vec("\\{(\"(t|gpu|util|host|version|format)\":(-?[0-9]{1,4}(\\.[0-9])?|\"[a-z-]{0,20}\"|null|\\{\\}|\\[\\]),?){0,5}\\}?", 0..8)
    ) {
        let text = format!("{HEADER}\n{}", lines.join("\n"));
        let _ = read_str(&text);
        let _ = read_str(&lines.join("\n"));
    }

    #[test]
    fn round_trips_arbitrary_samples(
        samples in proptest::collection::vec(
            (0.0f64..1e6, 0u32..16, proptest::option::of(0.0f64..=100.0), proptest::option::of(any::<u32>())),
            1..40)
    ) {
        let mut w = JsonlWriter::new(Vec::new(), &header()).unwrap();
        let records: Vec<Record> = samples
            .iter()
            .map(|&(t, gpu, util, clock)| {
                Record::Gpu(GpuSample { util, sm_clock_mhz: clock, ..GpuSample::new(t, gpu) })
            })
            .collect();
        for r in &records {
            w.write(r).unwrap();
        }
        let bytes = w.into_inner();
        let back: Vec<Record> =
            Reader::new(bytes.as_slice(), "r").unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back, records);
    }
}
