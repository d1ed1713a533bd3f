use proptest::prelude::*;

use super::*;

fn read_str(input: &str) -> Result<StepTrace, TraceError> {
    read(input.as_bytes(), Path::new("steps.csv"))
}

fn ok(input: &str) -> StepTrace {
    read_str(input).unwrap_or_else(|e| panic!("{e}"))
}

fn err(input: &str) -> String {
    read_str(input).unwrap_err().to_string()
}

#[test]
fn one_number_per_line() {
    let t = ok("412.5\n398.1\n\n1650\n");
    assert_eq!(
        t,
        StepTrace {
            ms: vec![412.5, 398.1, 1650.0],
            column: None,
            unit: TimeUnit::Milliseconds
        }
    );
}

#[test]
fn comments_crlf_bom() {
    let t = ok("\u{feff}# from train.py\r\n# ms\r\n10\r\n  # mid-file\r\n11\r\n");
    assert_eq!(t.ms, vec![10.0, 11.0]);
}

#[test]
fn single_column_with_header_and_unit() {
    let t = ok("step_time_s\n0.5\n0.25\n");
    assert_eq!(t.ms, vec![500.0, 250.0]);
    assert_eq!(t.unit, TimeUnit::Seconds);
    assert_eq!(t.column.as_deref(), Some("step_time_s"));
    let t = ok("loss\n3\n");
    assert_eq!(
        (t.unit, t.column.as_deref()),
        (TimeUnit::Milliseconds, Some("loss"))
    );
}

#[test]
fn units_from_header_names() {
    let cases = [
        ("s", TimeUnit::Seconds),
        ("sec", TimeUnit::Seconds),
        ("secs", TimeUnit::Seconds),
        ("seconds", TimeUnit::Seconds),
        ("time (s)", TimeUnit::Seconds),
        ("time [s]", TimeUnit::Seconds),
        ("step_s", TimeUnit::Seconds),
        ("ms", TimeUnit::Milliseconds),
        ("msec", TimeUnit::Milliseconds),
        ("millis", TimeUnit::Milliseconds),
        ("milliseconds", TimeUnit::Milliseconds),
        ("step_time_ms", TimeUnit::Milliseconds),
        ("Step Time [ms]", TimeUnit::Milliseconds),
        ("us", TimeUnit::Microseconds),
        ("µs", TimeUnit::Microseconds),
        ("latency (μs)", TimeUnit::Microseconds),
        ("usec", TimeUnit::Microseconds),
        ("micros", TimeUnit::Microseconds),
        ("step_us", TimeUnit::Microseconds),
        ("step_ns", TimeUnit::Nanoseconds),
        ("duration", TimeUnit::Milliseconds),
        ("steps", TimeUnit::Milliseconds),
    ];
    for (name, unit) in cases {
        assert_eq!(ok(&format!("{name}\n2\n")).unit, unit, "{name}");
    }
    let t = ok("duration_us\n1500\n");
    assert_eq!(t.ms, vec![1.5]);
    let t = ok("t_ns\n2000000\n");
    assert_eq!(t.ms, vec![2.0]);
}

#[test]
fn picks_the_time_column() {
    let t = ok("step,loss,step_time_ms\n1,2.31,412.5\n2,2.29,398.1\n");
    assert_eq!(t.column.as_deref(), Some("step_time_ms"));
    assert_eq!(t.ms, vec![412.5, 398.1]);
    // Wall-clock columns do not count.
    let t = ok("timestamp,wall_time,date,elapsed\n1,2,3,4\n");
    assert_eq!(t.column.as_deref(), Some("elapsed"));
    // `update` contains `date` but is not a date.
    let t = ok("step,update_time_s\n1,0.5\n");
    assert_eq!(
        (t.column.as_deref(), t.ms[0]),
        (Some("update_time_s"), 500.0)
    );
    // No time-like name: the single unit-suffixed one.
    let t = ok("step\tloss\tstep_ms\n1\t2.0\t30\n");
    assert_eq!(t.column.as_deref(), Some("step_ms"));
    // Several time-like names, one of them the step's.
    let t = ok("data_time,step_time,compute_time\n1,2,3\n");
    assert_eq!((t.column.as_deref(), t.ms[0]), (Some("step_time"), 2.0));
}

#[test]
fn ambiguous_or_missing_column() {
    assert_eq!(
        err("epoch,data_time,compute_time\n1,2,3\n"),
        "`steps.csv` line 1: more than one step-time column among `data_time`, \
         `compute_time`; keep a single column of step times, or name exactly one column like \
         `step_time_ms`"
    );
    assert_eq!(
        err("epoch,loss,lr\n1,2,3\n"),
        "`steps.csv` line 1: no step-time column among `epoch`, `loss`, `lr`; keep a single \
         column of step times, or name exactly one column like `step_time_ms`"
    );
    assert!(
        err("fwd_ms,bwd_ms\n1,2\n")
            .contains("more than one step-time column among `fwd_ms`, `bwd_ms`")
    );
}

#[test]
fn several_columns_without_header() {
    assert_eq!(
        err("# x\n1,2\n"),
        "`steps.csv` line 2: 2 columns but no header; add a header line naming the step-time \
         column (such as `step_time_ms`) or keep a single column (for an nvidia-smi log, \
         pass `--kind util`)"
    );
}

#[test]
fn not_a_number_on_line_57() {
    let mut input = String::from("step,step_time_ms\n");
    for i in 0..55 {
        input.push_str(&format!("{i},100\n"));
    }
    input.push_str("55,abc\n");
    assert_eq!(
        err(&input),
        "`steps.csv` line 57: `abc` is not a number (column `step_time_ms`)"
    );
    assert_eq!(err("1\n2\nx\n"), "`steps.csv` line 3: `x` is not a number");
}

#[test]
fn invalid_step_times() {
    assert_eq!(
        err("10\n-1\n"),
        "`steps.csv` line 2: `-1` is not a valid step time; step times must be finite and not \
         negative"
    );
    assert!(err("10\nNaN\n").starts_with("`steps.csv` line 2: `NaN` is not a valid step time"));
    assert!(err("inf\n").starts_with("`steps.csv` line 1: `inf` is not a valid step time"));
    assert!(
        err("t_s\n1e308\n").starts_with("`steps.csv` line 2: `1e308` is not a valid step time")
    );
    assert!(err("a,step_ms\n1,-2\n").contains("(column `step_ms`)"));
    assert_eq!(ok("-0\n").ms, vec![0.0]);
    assert!(ok("-0\n").ms[0].is_sign_positive());
}

#[test]
fn field_count() {
    assert_eq!(
        err("step,step_ms\n1,2\n3\n"),
        "`steps.csv` line 3: 1 fields, but the header has 2; the line may be cut off or two \
         files were joined, fix or delete it"
    );
}

#[test]
fn empty_and_no_steps() {
    assert!(err("").starts_with("`steps.csv` is empty"));
    assert!(err("\n \n").starts_with("`steps.csv` is empty"));
    let no_steps = "`steps.csv` has no step times; expected one number per line, or a CSV with \
                    a header and a step-time column";
    assert_eq!(err("step_time_ms\n"), no_steps);
    assert_eq!(err("# nothing yet\n"), no_steps);
}

#[test]
fn invalid_utf8() {
    let e = read(&b"1\n\xc3\x28\n"[..], Path::new("steps.csv")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`steps.csv` line 2: not valid UTF-8")
    );
}

#[test]
fn steps_look_like_steps() {
    assert!(looks_like_steps("12.5"));
    assert!(looks_like_steps("# comment"));
    assert!(looks_like_steps("step,step_time_ms"));
    assert!(!looks_like_steps("0, 45 %"));
    assert!(!looks_like_steps("1,2"));
    assert!(!looks_like_steps("foo"));
}

proptest! {
    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read(bytes.as_slice(), Path::new("x"));
    }

    #[test]
    fn never_panics_on_text(s in "[0-9a-z_.,#\t \n\r()\\[\\]µ-]{0,200}") {
        let _ = read_str(&s);
        let _ = looks_like_steps(&s);
    }

    #[test]
    fn reads_back_written_values(values in proptest::collection::vec(0.0f64..1e6, 1..50), unit in 0usize..4) {
        let (name, factor) = [("t_s", 1e3), ("t_ms", 1.0), ("t_us", 1e-3), ("t_ns", 1e-6)][unit];
        let mut text = format!("step,{name}\n");
        for (i, v) in values.iter().enumerate() {
            text.push_str(&format!("{i},{v}\n"));
        }
        let t = read_str(&text).unwrap();
        prop_assert_eq!(t.ms, values.iter().map(|v| v * factor).collect::<Vec<_>>());
    }
}
