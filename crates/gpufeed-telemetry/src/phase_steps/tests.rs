use proptest::prelude::*;

use super::*;
use crate::trace::{Trace, TraceFormat, TraceKind, read_trace_from};

const HEADER: &str = r#"{"format":"gpufeed-steps","version":1,"source":"python StepTimer","sync":true,"warmup":1,"batch_size":32}"#;

fn meta() -> Meta {
    Meta {
        source: "python StepTimer".to_owned(),
        sync: true,
        warmup: 1,
        batch_size: Some(32),
    }
}

fn step(total: f64, phases: &[(&str, f64)], items: Option<u64>) -> StepRecord {
    StepRecord {
        total_ms: total,
        phases: phases.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
        items,
    }
}

fn read_str(input: &str) -> Result<PhaseStepTrace, TraceError> {
    read(input.as_bytes(), Path::new("steps.jsonl"))
}

fn err(input: &str) -> String {
    read_str(input).unwrap_err().to_string()
}

fn written(meta: &Meta, steps: &[StepRecord]) -> String {
    let mut out = Vec::new();
    write(&mut out, meta, steps).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn writes_the_documented_lines() {
    let text = written(
        &meta(),
        &[
            step(
                12.5,
                &[("data_wait", 1.0), ("forward", 5.0), ("backward", 6.0)],
                Some(32),
            ),
            step(12.0, &[], None),
        ],
    );
    assert_eq!(
        text,
        format!(
            "{HEADER}\n\
             {{\"step\":0,\"ms\":12.5,\"phases\":{{\"data_wait\":1.0,\"forward\":5.0,\"backward\":6.0}},\"items\":32}}\n\
             {{\"step\":1,\"ms\":12.0,\"phases\":{{}}}}\n"
        )
    );
    let no_batch = Meta {
        batch_size: None,
        ..meta()
    };
    assert_eq!(
        written(&no_batch, &[]),
        "{\"format\":\"gpufeed-steps\",\"version\":1,\"source\":\"python StepTimer\",\"sync\":true,\"warmup\":1}\n"
    );
}

#[test]
fn round_trip_keeps_the_phase_order_and_every_field() {
    // Names in an order no sorted map would keep.
    let steps = vec![
        step(
            20.0,
            &[("zeta", 1.0), ("data_wait", 2.0), ("alpha", 3.0)],
            Some(7),
        ),
        step(21.25, &[("zeta", 1.5), ("alpha", 0.125)], None),
    ];
    let back = read_str(&written(&meta(), &steps)).unwrap();
    assert_eq!(back.meta, meta());
    assert_eq!(back.steps, steps);
    assert_eq!(back.truncated_line, None);
    assert_eq!(back.analysed_totals(), vec![21.25]);
}

#[test]
fn a_phase_timed_twice_in_a_step_is_written_once_with_its_total() {
    let s = step(
        10.0,
        &[("forward", 2.0), ("backward", 3.0), ("forward", 2.5)],
        None,
    );
    assert_eq!(s.merged_phases(), vec![("forward", 4.5), ("backward", 3.0)]);
    let back = read_str(&written(&meta(), &[s])).unwrap();
    assert_eq!(
        back.steps[0].phases,
        vec![("forward".to_owned(), 4.5), ("backward".to_owned(), 3.0)]
    );
}

#[test]
fn write_refuses_a_bad_record_and_names_the_step() {
    let mut out = Vec::new();
    let e = write(
        &mut out,
        &meta(),
        &[
            step(10.0, &[("forward", 5.0)], None),
            step(10.0, &[("forward", f64::NAN)], None),
        ],
    )
    .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "step 1: phase `forward` is `NaN` ms; phase times must be finite and not negative"
    );
    assert!(out.is_empty(), "nothing written");
}

#[test]
fn checks_each_rule() {
    let cases = [
        (
            step(0.0, &[], None),
            "step time `0` ms is not a number above 0",
        ),
        (
            step(-3.0, &[], None),
            "step time `-3` ms is not a number above 0",
        ),
        (step(f64::INFINITY, &[], None), "step time `inf` ms"),
        (step(10.0, &[("", 1.0)], None), "a phase has an empty name"),
        (
            step(10.0, &[("forward", -0.5)], None),
            "phase `forward` is `-0.5` ms",
        ),
        (
            step(10.0, &[("forward", 6.0), ("backward", 5.0)], None),
            "the phases add up to 11.000 ms, more than the step's 10.000 ms (beyond 1 % rounding)",
        ),
    ];
    for (s, expected) in cases {
        let e = s.check().unwrap_err().to_string();
        assert!(e.starts_with(expected), "{e}");
    }
    // Within the 1 % rounding: accepted.
    assert!(
        step(10.0, &[("forward", 6.0), ("backward", 4.09)], None)
            .check()
            .is_ok()
    );
    assert!(step(10.0, &[("forward", 0.0)], None).check().is_ok());
}

#[test]
fn defaults_blank_lines_crlf_and_unknown_keys() {
    let t = read_str(
        "\n{\"format\":\"gpufeed-steps\",\"version\":1,\"future\":[1]}\r\n\r\n\
         {\"ms\":5,\"new_key\":{\"a\":1}}\r\n  \n{\"ms\":6,\"phases\":{\"x\":1}}",
    )
    .unwrap();
    assert_eq!(
        t.meta,
        Meta {
            source: "unknown".to_owned(),
            sync: false,
            warmup: 0,
            batch_size: None
        }
    );
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[1].phases, vec![("x".to_owned(), 1.0)]);
}

#[test]
fn empty_file_and_header_only() {
    assert_eq!(
        err("\n \n"),
        "`steps.jsonl` is empty: expected an nvidia-smi CSV log, a gpufeed JSONL recording or \
         a list of step times"
    );
    let t = read_str(&format!("{HEADER}\n")).unwrap();
    assert!(t.steps.is_empty());
}

#[test]
fn headers_of_other_formats_and_versions_are_refused() {
    assert_eq!(
        err("{\"format\":\"gpufeed-telemetry\",\"version\":1}\n"),
        "`steps.jsonl` line 1: not a gpufeed step recording header (its format is \
         `gpufeed-telemetry`); expected a JSON object with `\"format\":\"gpufeed-steps\"` and \
         `\"version\"`, as `StepTimer.save` writes on the first line"
    );
    assert!(
        err("{\"version\":1}\n")
            .starts_with("`steps.jsonl` line 1: not a gpufeed step recording header; expected")
    );
    assert!(err("12.5\n").contains("line 1: not a gpufeed step recording header"));
    assert!(err("{\"format\":\"gpufeed-steps\"}\n").contains("not a gpufeed step recording"));
    assert_eq!(
        err("{\"format\":\"gpufeed-steps\",\"version\":2}\n"),
        "`steps.jsonl` line 1: recording format version `2` is not supported: this build of \
         gpufeed reads version 1; upgrade gpufeed to read it"
    );
    assert!(
        err("{\"format\":\"gpufeed-steps\",\"version\":\"x\"}\n")
            .ends_with("the header is damaged")
    );
    assert_eq!(
        err("{\"format\":\"gpufeed-steps\",\"version\":1,\"warmup\":-1}\n"),
        "`steps.jsonl` line 1 column 49: invalid value: integer `-1`, expected usize; fix or \
         delete the line"
    );
}

#[test]
fn bad_lines_name_their_line() {
    let cases = [
        (
            "{\"ms\":-1}",
            "line 3: step time `-1` ms is not a number above 0",
        ),
        (
            "{\"ms\":5,\"phases\":{\"a\":3,\"b\":3}}",
            "line 3: the phases add up to 6.000 ms, more than the step's 5.000 ms",
        ),
        (
            "{\"ms\":5,\"phases\":{\"a\":\"fast\"}}",
            "line 3 column 28: invalid type: string \"fast\", expected f64",
        ),
        (
            "{\"ms\":5,\"phases\":[1]}",
            "line 3 column 17: invalid type: sequence, expected an object of phase name -> milliseconds",
        ),
        (
            "{\"phases\":{}}",
            "line 3: no `ms`: every step line needs the step's time in milliseconds",
        ),
        (
            "{\"ms\":5,\"items\":-2}",
            "line 3 column 18: invalid value: integer `-2`, expected u64",
        ),
        ("{\"ms\":5}x", "line 3 column 9: trailing characters"),
        (
            "[1,2]",
            "line 3: not a JSON object; a step line is an object such as `{\"ms\":12.5}`",
        ),
        ("7", "line 3: not a JSON object"),
        (
            HEADER,
            "line 3: a second header: two recordings were joined into one file",
        ),
        (
            "{\"step\":0,\"ms\":5}",
            "line 3: step `0` after step `0`: step numbers must increase",
        ),
    ];
    for (line, expected) in cases {
        let text = format!("{HEADER}\n{{\"step\":0,\"ms\":4}}\n{line}\n{{\"ms\":4}}\n");
        let e = err(&text);
        assert!(
            e.starts_with(&format!("`steps.jsonl` {expected}")),
            "{line}: {e}"
        );
        assert!(e.ends_with("fix or delete the line"), "{e}");
    }
}

#[test]
fn a_cut_last_line_is_skipped_and_reported() {
    let full = written(
        &meta(),
        &[
            step(10.0, &[("data_wait", 1.0)], Some(4)),
            step(11.0, &[("data_wait", 1.5), ("förward", 2.0)], Some(4)),
        ],
    );
    let last_start = full.trim_end().rfind('\n').unwrap() + 1;
    // Every cut inside the last line: the job was killed while writing it.
    for end in last_start + 1..full.len() - 1 {
        let Some(cut) = full.get(..end) else {
            // Inside a multi-byte character: cut the bytes instead.
            let t = read(&full.as_bytes()[..end], Path::new("steps.jsonl")).unwrap();
            assert_eq!((t.steps.len(), t.truncated_line), (1, Some(3)), "{end}");
            continue;
        };
        let t = read_str(cut).unwrap_or_else(|e| panic!("cut at {end}: {e}"));
        assert_eq!(t.steps.len(), 1, "cut at {end}: {cut}");
        assert_eq!(t.truncated_line, Some(3), "cut at {end}");
        // Blank lines after the cut change nothing.
        let t = read_str(&format!("{cut}\n\n")).unwrap();
        assert_eq!(t.truncated_line, Some(3));
    }
    // The whole file, with or without its last newline.
    for text in [full.as_str(), full.trim_end()] {
        let t = read_str(text).unwrap();
        assert_eq!((t.steps.len(), t.truncated_line), (2, None));
    }
}

#[test]
fn a_cut_line_followed_by_more_steps_is_an_error() {
    let text = format!("{HEADER}\n{{\"ms\":4}}\n{{\"ms\":5,\"pha\n{{\"ms\":6}}\n");
    assert_eq!(
        err(&text),
        "`steps.jsonl` line 3 column 12: EOF while parsing a string; fix or delete the line"
    );
}

#[test]
fn detected_and_checked_against_kind() {
    let text = format!("{HEADER}\n{{\"ms\":4}}\n");
    let p = Path::new("steps.jsonl");
    for kind in [None, Some(TraceKind::Steps)] {
        let t = read_trace_from(text.as_bytes(), p, kind).unwrap();
        assert_eq!(t.kind(), TraceKind::Steps);
        assert!(
            matches!(t, Trace::PhaseSteps(ref r) if r.steps.len() == 1),
            "{t:?}"
        );
    }
    let e = read_trace_from(text.as_bytes(), p, Some(TraceKind::Util)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`steps.jsonl` looks like a gpufeed step recording, not a GPU utilisation log; drop \
         `--kind util` or pass `--kind steps`"
    );
    assert!(matches!(
        e,
        TraceError::WrongKind {
            found: TraceFormat::PhaseSteps,
            ..
        }
    ));
    // A damaged header that names the format goes to this reader, which says what is wrong.
    let e = read_trace_from(&b"{\"format\":\"gpufeed-steps\",\n"[..], p, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("not a gpufeed step recording header"),
        "{e}"
    );
}

fn arb_step() -> impl Strategy<Value = StepRecord> {
    (
        0.001f64..1e5,
        proptest::collection::vec(("[a-z_]{1,12}", 0.0f64..1.0), 0..6),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(total, fractions, items)| {
            // Phases that share at most the step between them, names made unique.
            let n = fractions.len().max(1) as f64;
            let phases = fractions
                .into_iter()
                .enumerate()
                .map(|(i, (name, f))| (format!("{name}{i}"), total * f / n))
                .collect();
            StepRecord {
                total_ms: total,
                phases,
                items,
            }
        })
}

proptest! {
    #[test]
    fn round_trips_arbitrary_recordings(
        steps in proptest::collection::vec(arb_step(), 0..20),
        source in "\\PC{0,20}",
        sync in any::<bool>(),
        warmup in 0usize..30,
        batch_size in proptest::option::of(any::<u64>()),
    ) {
        let meta = Meta { source, sync, warmup, batch_size };
        let back = read_str(&written(&meta, &steps)).unwrap();
        prop_assert_eq!(back.meta, meta);
        prop_assert_eq!(back.steps, steps);
    }

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read(bytes.as_slice(), Path::new("x"));
        let mut with_header = format!("{HEADER}\n").into_bytes();
        with_header.extend_from_slice(&bytes);
        let _ = read(with_header.as_slice(), Path::new("x"));
    }

    #[test]
    fn never_panics_on_jsonish_lines(
        lines in proptest::collection::vec("\\{(\"(step|ms|phases|items|format)\":(-?[0-9]{1,4}(\\.[0-9])?|\"[a-z-]{0,20}\"|null|\\{(\"[a-z]{0,3}\":-?[0-9]{1,3},?){0,3}\\}|\\[\\]),?){0,5}\\}?", 0..8)
    ) {
        let text = format!("{HEADER}\n{}", lines.join("\n"));
        let _ = read_str(&text);
    }
}
