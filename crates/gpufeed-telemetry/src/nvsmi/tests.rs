use std::fmt::Write as _;

use proptest::prelude::*;

use super::*;

fn read_str(input: &str) -> Result<UtilTrace, TraceError> {
    read(input.as_bytes(), Path::new("gpu.csv"))
}

fn ok(input: &str) -> UtilTrace {
    read_str(input).unwrap_or_else(|e| panic!("{e}"))
}

fn err(input: &str) -> String {
    read_str(input).unwrap_err().to_string()
}

/// Seconds since midnight of `2026/11/21` for the times used below.
fn ts(s: &str) -> f64 {
    parse_timestamp(s.as_bytes()).unwrap()
}

const REAL: &str = "\
timestamp, index, utilization.gpu [%], memory.used [MiB]
2026/11/21 10:00:00.123, 0, 45 %, 1234 MiB
2026/11/21 10:00:00.123, 1, 3 %, 800 MiB
2026/11/21 10:00:00.223, 0, 47 %, 1234 MiB
2026/11/21 10:00:00.223, 1, 5 %, 800 MiB
";

#[test]
fn real_output_two_gpus_interleaved() {
    let t = ok(REAL);
    assert_eq!(t.format, TraceFormat::NvidiaSmiCsv);
    assert_eq!(t.gpus.len(), 2);
    assert_eq!((t.gpus[0].gpu, t.gpus[1].gpu), (0, 1));
    assert_eq!(t.gpus[0].util, vec![45.0, 47.0]);
    assert_eq!(t.gpus[1].util, vec![3.0, 5.0]);
    assert!((t.gpus[0].t[1] - t.gpus[0].t[0] - 0.1).abs() < 1e-6);
    // Relative to the whole second of the first timestamp: exact milliseconds.
    assert_eq!(t.gpus[0].t, vec![0.123, 0.223]);
    assert_eq!((t.rows, t.skipped), (4, 0));
    assert!(t.has_timestamps);
}

#[test]
fn any_column_order() {
    let t = ok("index, utilization.gpu [%], timestamp\n\
                1, 10 %, 2026/11/21 10:00:01\n\
                0, 20 %, 2026/11/21 10:00:01\n\
                1, 30 %, 2026/11/21 10:00:02\n");
    assert_eq!(t.gpus[0].util, vec![20.0]);
    assert_eq!(t.gpus[1].util, vec![10.0, 30.0]);
    assert_eq!(t.gpus[1].t[1] - t.gpus[1].t[0], 1.0);
}

#[test]
fn header_is_case_insensitive_and_ignores_units() {
    let t = ok("Timestamp,INDEX,Utilization.GPU\n2026/11/21 10:00:00,0,50\n");
    assert_eq!(t.gpus[0].util, vec![50.0]);
}

#[test]
fn nounits() {
    let t = ok("timestamp, index, utilization.gpu [%], memory.used [MiB]\n\
                2026/11/21 10:00:00.000, 0, 45, 1234\n\
                2026/11/21 10:00:00.100, 0, 46, 1234\n");
    assert_eq!(t.gpus[0].util, vec![45.0, 46.0]);
}

#[test]
fn noheader_with_units_any_order() {
    let t = ok("1, 1234 MiB, 45 %, 2026/11/21 10:00:00.000\n\
                0, 99 MiB, 7 %, 2026/11/21 10:00:00.000\n");
    assert_eq!(t.gpus[0].util, vec![7.0]);
    assert_eq!(t.gpus[1].util, vec![45.0]);
    assert!(t.has_timestamps);
}

/// A memory column that stays at `0 MiB` repeats like the index of one GPU; its unit says it
/// is a measurement (found by the generated tables below).
#[test]
fn noheader_constant_memory_before_the_index_is_not_the_index() {
    let mut text = String::new();
    for row in 0..8 {
        let util = if row == 0 { "30 %" } else { "[N/A]" };
        text.push_str(&format!(
            "2026/11/21 23:59:58.{:03}, 0 MiB, {util}, {}\n",
            219 + 100 * (row / 4),
            row % 4
        ));
    }
    let t = ok(&text);
    assert_eq!(
        t.columns.as_deref(),
        Some(
            "field 1 as timestamp, field 3 as utilization.gpu, field 4 as index; field(s) 2 ignored"
        )
    );
    assert_eq!(t.gpus[0].util, vec![30.0]);
}

#[test]
fn noheader_nounits_assumes_the_usual_order() {
    let t = ok("2026/11/21 10:00:00.000, 0, 45, 1234\n\
                2026/11/21 10:00:00.000, 1, 46, 1234\n\
                2026/11/21 10:00:00.100, 0, 47, 1234\n");
    assert_eq!(t.gpus[0].util, vec![45.0, 47.0]);
    assert_eq!(t.gpus[1].util, vec![46.0]);
}

#[test]
fn noheader_nounits_single_numeric_column_is_util() {
    let t = ok("2026/11/21 10:00:00.000, 45\n2026/11/21 10:00:00.100, 46\n");
    assert_eq!(t.gpus.len(), 1);
    assert_eq!(t.gpus[0].util, vec![45.0, 46.0]);
}

#[test]
fn noheader_wrong_guess_says_so() {
    // timestamp, utilization.gpu, memory.used: 45 is no GPU index (issue 39), so it is the
    // utilisation, and the reader says which column it took for what.
    let t = ok("2026/11/21 10:00:00.000, 45, 1234\n");
    assert_eq!(t.gpus[0].util, [45.0]);
    assert_eq!(
        t.columns.as_deref(),
        Some(
            "field 1 as timestamp, field 2 as utilization.gpu, no GPU index (one GPU); field(s) 3 ignored"
        )
    );
    // timestamp, index, memory.used: a wrong guess shows as a utilisation out of range.
    let e = err("2026/11/21 10:00:00.000, 3, 1234\n");
    assert!(
        e.starts_with("`gpu.csv` line 1: utilisation `1234` is outside 0..=100 %"),
        "{e}"
    );
    assert!(e.contains("no header, so columns were guessed"), "{e}");
}

#[test]
fn noheader_nothing_numeric() {
    let e = err("NVIDIA H100, GPU-abc\n");
    assert_eq!(
        e,
        "`gpu.csv` line 1: no header, and no column looks like utilisation (found `NVIDIA \
         H100`, `GPU-abc`); record with `nvidia-smi --query-gpu=timestamp,index,utilization.gpu \
         --format=csv -lms 100`"
    );
}

#[test]
fn noheader_groups_by_uuid() {
    let t = ok("GPU-bbb, 10 %\nGPU-aaa, 20 %\nGPU-bbb, 30 %\n");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].util, vec![10.0, 30.0]);
    assert_eq!(t.gpus[1].util, vec![20.0]);
    assert!(!t.has_timestamps);
    assert_eq!(t.gpus[0].t, vec![0.0, 1.0]);
}

#[test]
fn groups_by_uuid_then_bus_id_then_nothing() {
    let t = ok("uuid, utilization.gpu\nGPU-b, 1\nGPU-a, 2\nGPU-b, 3\n");
    assert_eq!(t.gpus[0].util, vec![1.0, 3.0]);
    assert_eq!(t.gpus[1].util, vec![2.0]);
    let t = ok("pci.bus_id, utilization.gpu\n00000000:02:00.0, 1\n00000000:01:00.0, 2\n");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].util, vec![1.0]);
    let t = ok("utilization.gpu [%]\n1 %\n2 %\n");
    assert_eq!(t.gpus.len(), 1);
    assert_eq!(t.gpus[0].gpu, 0);
    assert_eq!(t.gpus[0].t, vec![0.0, 1.0]);
    assert!(!t.has_timestamps);
}

#[test]
fn index_wins_over_uuid() {
    let t = ok("uuid, index, utilization.gpu\nGPU-a, 3, 1\nGPU-b, 2, 2\n");
    assert_eq!(t.gpus.iter().map(|g| g.gpu).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn aliases() {
    assert_eq!(ok("gpu_util\n5\n").gpus[0].util, vec![5.0]);
    assert_eq!(
        ok("timestamp,utilization\n2026/11/21 10:00:00,5\n").gpus[0].util,
        vec![5.0]
    );
}

#[test]
fn crlf_bom_and_blank_lines() {
    let input = "\u{feff}timestamp, index, utilization.gpu [%]\r\n\r\n\
                 2026/11/21 10:00:00.000, 0, 45 %\r\n   \r\n\
                 2026/11/21 10:00:00.100, 0, 46 %\r\n";
    let t = ok(input);
    assert_eq!(t.gpus[0].util, vec![45.0, 46.0]);
}

#[test]
fn na_values_are_skipped_and_counted() {
    let t = ok("timestamp, index, utilization.gpu [%]\n\
                2026/11/21 10:00:00.000, 0, [N/A]\n\
                2026/11/21 10:00:00.000, 1, [Not Supported]\n\
                2026/11/21 10:00:00.000, 2, [Unknown Error]\n\
                2026/11/21 10:00:00.000, 3, N/A\n\
                2026/11/21 10:00:00.100, 0, 50 %\n");
    assert_eq!(t.skipped, 4);
    assert_eq!(t.rows, 1);
    assert_eq!(t.gpus.len(), 1, "GPUs with no sample are left out");
}

#[test]
fn na_rows_still_advance_the_row_clock() {
    let t = ok("index, utilization.gpu\n0, 5\n0, [N/A]\n0, 7\n");
    assert_eq!(t.gpus[0].t, vec![0.0, 2.0]);
}

#[test]
fn all_na_is_no_samples() {
    let e = err("index, utilization.gpu\n0, [N/A]\n1, [N/A]\n");
    assert_eq!(
        e,
        "`gpu.csv` has no utilisation samples: all 2 values were unavailable (such as \
         `[N/A]`); this GPU or driver does not report utilisation"
    );
}

#[test]
fn header_only_is_no_samples() {
    let e = err("timestamp, index, utilization.gpu [%]\n");
    assert!(
        e.starts_with("`gpu.csv` has no utilisation samples; record with"),
        "{e}"
    );
}

#[test]
fn empty_file() {
    assert!(err("").starts_with("`gpu.csv` is empty"));
    assert!(err(" \n\n").starts_with("`gpu.csv` is empty"));
}

#[test]
fn non_numeric_util_on_line_57() {
    let mut input = String::from("timestamp, index, utilization.gpu [%], memory.used [MiB]\n");
    for i in 0..55 {
        writeln!(input, "2026/11/21 10:00:{:02}.000, 0, 45 %, 1 MiB", i).unwrap();
    }
    input.push_str("2026/11/21 10:00:59.000, 0, abc, 1 MiB\n");
    let e = err(&input);
    assert_eq!(
        e,
        "`gpu.csv` line 57: `abc` is not a number (column `utilization.gpu [%]`)"
    );
}

#[test]
fn out_of_range_util() {
    let e = err("index, utilization.gpu\n0, 5\n0, 140\n");
    assert_eq!(
        e,
        "`gpu.csv` line 3: utilisation `140` is outside 0..=100 % (column `utilization.gpu`)"
    );
    assert!(err("index, utilization.gpu\n0, -1\n").contains("utilisation `-1`"));
    assert!(err("index, utilization.gpu\n0, NaN\n").contains("`NaN` is not a number"));
}

#[test]
fn missing_util_column_lists_what_was_found() {
    let e = err("timestamp, index, memory.used [MiB]\n2026/11/21 10:00:00, 0, 5 MiB\n");
    assert_eq!(
        e,
        "`gpu.csv` line 1: no utilisation column (found `timestamp`, `index`, `memory.used \
         [MiB]`); record with `nvidia-smi --query-gpu=timestamp,index,utilization.gpu \
         --format=csv -lms 100`"
    );
}

#[test]
fn utilization_memory_is_not_utilisation() {
    let e = err("index, utilization.memory [%]\n0, 5 %\n");
    assert!(e.contains("no utilisation column"), "{e}");
}

#[test]
fn field_count_mismatch_names_the_line() {
    let e = err("timestamp, index, utilization.gpu [%]\n\
                 2026/11/21 10:00:00.000, 0, 45 %\n\
                 2026/11/21 10:00:00.100, 0\n");
    assert_eq!(
        e,
        "`gpu.csv` line 3: 2 fields, but the header has 3; the line may be cut off or two \
         files were joined, fix or delete it"
    );
    let e = err("2026/11/21 10:00:00.000, 0, 45 %\n2026/11/21 10:00:00.100, 0, 45 %, 3\n");
    assert!(
        e.starts_with("`gpu.csv` line 2: 4 fields, but the first row has 3"),
        "{e}"
    );
}

#[test]
fn repeated_header_is_skipped() {
    let t = ok("timestamp, index, utilization.gpu [%]\n\
                2026/11/21 10:00:00.000, 0, 45 %\n\
                timestamp, index, utilization.gpu [%]\n\
                2026/11/21 11:00:00.000, 0, 46 %\n");
    assert_eq!(t.gpus[0].util, vec![45.0, 46.0]);
}

#[test]
fn bad_index_and_bad_timestamp() {
    let e = err("timestamp, index, utilization.gpu\n2026/11/21 10:00:00, x, 5\n");
    assert_eq!(
        e,
        "`gpu.csv` line 2: `x` is not a GPU index (column `index`); expected a whole number \
         such as `0`"
    );
    let e = err("timestamp, index, utilization.gpu\n2026/02/30 10:00:00, 0, 5\n");
    assert_eq!(
        e,
        "`gpu.csv` line 2: `2026/02/30 10:00:00` is not a timestamp (column `timestamp`); \
         expected `YYYY/MM/DD HH:MM:SS.mmm` as nvidia-smi writes it, `YYYY-MM-DD HH:MM:SS`, \
         or seconds or milliseconds since 1970"
    );
}

#[test]
fn invalid_utf8_names_the_line() {
    let input = b"index, utilization.gpu\n0, 5\n0, \xff\n";
    let e = read(&input[..], Path::new("gpu.csv")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`gpu.csv` line 3: not valid UTF-8"),
        "{e}"
    );
}

#[test]
fn read_skipping_leaves_out_bad_lines_and_reads_on() {
    let mut input = b"timestamp, index, utilization.gpu [%]\n\
                      2026/11/21 10:00:00.000, 0, 45 %\n\
                      2026/11/21 10:00:00.100, 0\n\
                      2026/11/21 10:00:00.100, 0, abc\n\
                      2026/11/21 10:00:00.100, 0, 250 %\n\
                      2026/11/21 10:00:00.200, x, 47 %\n\
                      2026/13/21 10:00:00.200, 0, 47 %\n"
        .to_vec();
    input.extend_from_slice(b"2026/11/21 10:00:00.300, 0, \xff\n");
    input.extend_from_slice(b"2026/11/21 10:00:00.400, 0, 48 %\n");
    let mut skipped = Vec::new();
    let t = read_skipping(&input[..], Path::new("gpu.csv"), |e| {
        skipped.push(e.to_string());
    })
    .unwrap();
    assert_eq!(t.gpus.len(), 1);
    assert_eq!(t.gpus[0].util, vec![45.0, 48.0]);
    assert!((t.gpus[0].t[1] - t.gpus[0].t[0] - 0.4).abs() < 1e-6);
    assert_eq!(
        (t.rows, t.skipped),
        (2, 0),
        "bad lines are not `[N/A]` values"
    );
    let lines: Vec<&str> = skipped
        .iter()
        .map(|e| e.split(':').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [3, 4, 5, 6, 7, 8].map(|n| format!("`gpu.csv` line {n}"))
    );
    assert!(
        skipped[0].contains("2 fields, but the header has 3"),
        "{}",
        skipped[0]
    );
    assert!(skipped[5].contains("not valid UTF-8"), "{}", skipped[5]);
    // `read` stops at the first of them.
    let e = read(&input[..], Path::new("gpu.csv")).unwrap_err();
    assert!(
        e.to_string().starts_with("`gpu.csv` line 3: 2 fields"),
        "{e}"
    );
}

#[test]
fn a_skipped_line_leaves_no_trace() {
    // A damaged UUID does not number a GPU, a damaged row does not count on the row
    // clock, and a damaged first row does not set the time origin.
    let input = "timestamp, uuid, utilization.gpu [%]\n\
                 2026/11/21 09:00:00.000, GPU-aa, oops\n\
                 2026/11/21 10:00:00.500, GPU-bb, 10 %\n\
                 2026/11/21 10:00:00.600, GPU-cd, 200 %\n\
                 2026/11/21 10:00:00.700, GPU-cc, 20 %\n";
    let mut n = 0;
    let t = read_skipping(input.as_bytes(), Path::new("gpu.csv"), |_| n += 1).unwrap();
    assert_eq!(n, 2);
    let got: Vec<(u32, Vec<f64>, Vec<f64>)> = t
        .gpus
        .iter()
        .map(|s| (s.gpu, s.t.clone(), s.util.clone()))
        .collect();
    assert_eq!(
        got,
        vec![(0, vec![0.5], vec![10.0]), (1, vec![0.7], vec![20.0])]
    );
    let t = read_skipping(
        "index, utilization.gpu\n0, 5\n0, x\n0, 7\n".as_bytes(),
        Path::new("gpu.csv"),
        |_| {},
    )
    .unwrap();
    assert_eq!(t.gpus[0].t, vec![0.0, 1.0]);
}

#[test]
fn read_skipping_still_stops_at_a_bad_header_or_first_row() {
    let stop = |input: &str| {
        read_skipping(input.as_bytes(), Path::new("gpu.csv"), |e| {
            panic!("skipped {e}")
        })
        .unwrap_err()
        .to_string()
    };
    assert!(stop("timestamp, index\n2026/11/21 10:00:00, 0\n").contains("no utilisation column"));
    // Without a header the first row's layout is the file's; a wrong one is the error.
    assert!(stop("0, 140\n0, 5\n").contains("outside 0..=100"));
    // Every data line bad: nothing left to replay.
    let e = read_skipping(
        "index, utilization.gpu\n0, x\n0, y\n".as_bytes(),
        Path::new("gpu.csv"),
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("no utilisation samples"), "{e}");
}

#[test]
fn long_values_in_messages_are_shortened() {
    let long = "x".repeat(500);
    let e = err(&format!("index, utilization.gpu\n0, {long}\n"));
    assert!(e.len() < 200, "{e}");
}

#[test]
fn timestamps() {
    let base = ts("2026/11/21 00:00:00");
    assert_eq!(ts("2026/11/21 10:00:00.5") - base, 36_000.5);
    assert!((ts("2026/11/21 10:00:00.123") - base - 36_000.123).abs() < 1e-6);
    // Across midnight.
    assert!((ts("2026/11/22 00:00:00.000") - ts("2026/11/21 23:59:59.900") - 0.1).abs() < 1e-6);
    // Across month and year ends, leap day.
    assert_eq!(ts("2026/12/01 00:00:00") - ts("2026/11/30 23:59:59"), 1.0);
    assert_eq!(ts("2027/01/01 00:00:00") - ts("2026/12/31 23:59:59"), 1.0);
    assert_eq!(
        ts("2028/03/01 00:00:00") - ts("2028/02/28 00:00:00"),
        2.0 * 86_400.0
    );
    assert_eq!(
        ts("2026/03/01 00:00:00") - ts("2026/02/28 00:00:00"),
        86_400.0
    );
    assert_eq!(
        ts("2000/03/01 00:00:00") - ts("2000/02/28 00:00:00"),
        2.0 * 86_400.0
    );
    assert_eq!(
        ts("2100/03/01 00:00:00") - ts("2100/02/28 00:00:00"),
        86_400.0
    );
    // The Unix epoch is 0, so the arithmetic matches the usual calendar.
    assert_eq!(ts("1970/01/01 00:00:00"), 0.0);
    assert_eq!(ts("2026/11/21 10:00:00"), 1_795_255_200.0);
    // ISO 8601, as Python writes it (issue 26); a zone is ignored like nvidia-smi's.
    assert_eq!(ts("2026-11-21 10:00:00"), 1_795_255_200.0);
    assert_eq!(ts("2026-11-21T10:00:00.250+01:00"), 1_795_255_200.25);
    for bad in [
        "2026/13/01 00:00:00",
        "2026/00/01 00:00:00",
        "2026/02/29 00:00:00",
        "2026/11/21 24:00:00",
        "2026/11/21 10:60:00",
        "2026/11/21 10:00:00.",
        "2026/11/21 10:00:00.1234567890",
        "2026/11/21 10:00:00x",
        "2026/11/21T10:00:00",
        "2026-11-21 10:00:00+0100",
        "2026/11/21",
    ] {
        assert!(parse_timestamp(bad.as_bytes()).is_none(), "{bad}");
    }
}

/// Issue 26: headers people write over nvidia-smi rows name the utilisation column in
/// many ways; each is read, in any column order, beside other columns.
#[test]
fn utilisation_headers_as_people_write_them() {
    for header in [
        "gpu_utilization[%]",
        "gpu_utilization",
        "gpu_util",
        "util",
        "GPU-Util",
        "util (%)",
        "GPU Utilization (%)",
        "utilization.gpu [%]",
        "gpu_util_pct",
    ] {
        let t = ok(&format!("{header}\n45\n47\n"));
        assert_eq!(t.gpus[0].util, vec![45.0, 47.0], "{header}");
        let t = ok(&format!(
            "memory.used [MiB], {header}, index\n1200 MiB, 45 %, 1\n"
        ));
        assert_eq!((t.gpus[0].gpu, t.gpus[0].util[0]), (1, 45.0), "{header}");
    }
    for other in [
        "mem_util",
        "utilization.memory",
        "cpu_util",
        "memory_utilization",
    ] {
        assert!(!is_util_name(other), "{other}");
    }
}

/// Issue 26: the README's pynvml-style log and a header with a time column of another name.
#[test]
fn pynvml_style_log_with_epoch_seconds() {
    let t = ok("timestamp,gpu_utilization,memory_used\n\
                1764189075,0,1\n1764189135,93,10544\n1764189195,46,10546\n");
    assert!(t.has_timestamps);
    assert_eq!(t.gpus[0].t, vec![0.0, 60.0, 120.0]);
    assert_eq!(t.gpus[0].util, vec![0.0, 93.0, 46.0]);
    let t = ok("time, gpu, util\n2024-11-26 10:00:00.5, 0, 10\n2024-11-26T10:00:01.5Z, 0, 20\n");
    assert_eq!(t.gpus[0].t, vec![0.5, 1.5]);
}

/// Issue 26: epoch timestamps in seconds or milliseconds, told apart by magnitude (or by
/// the column's unit); without a header too.
#[test]
fn epoch_seconds_and_milliseconds() {
    let s = ok("timestamp, utilization.gpu\n1764189075, 5\n1764189075.5, 6\n");
    assert_eq!(s.gpus[0].t, vec![0.0, 0.5]);
    let ms = ok("timestamp, utilization.gpu\n1764189075000, 5\n1764189075100, 6\n");
    assert!((ms.gpus[0].t[1] - 0.1).abs() < 1e-9, "{:?}", ms.gpus[0].t);
    let named = ok("time_ms, util\n1000, 5\n1250, 6\n");
    assert!((named.gpus[0].t[1] - 0.25).abs() < 1e-9);
    let bare = ok("1764189075, 0, 45\n1764189135, 0, 47\n");
    assert!(bare.has_timestamps);
    assert_eq!(
        (bare.gpus[0].t.clone(), bare.gpus[0].util.clone()),
        (vec![0.0, 60.0], vec![45.0, 47.0])
    );
    assert_eq!(epoch_unit(1.764e9), 1.0);
    assert_eq!(epoch_unit(1.764e12), 1e-3);
    assert_eq!(epoch_unit(1.764e15), 1e-6);
    assert_eq!(epoch_unit(1.764e18), 1e-9);
}

/// Issue 26: a header gpufeed does not know is passed over, and the rows read as if it
/// were not there (its copies too); one it knows without utilisation is still an error.
#[test]
fn unknown_header_falls_back_to_headerless() {
    let t = ok("foo, bar\n0, 45\n1, 50\nfoo, bar\n0, 46\n");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].util, vec![45.0, 46.0]);
    assert!(
        err("timestamp, temperature.gpu\n2026/11/21 10:00:00, 40\n")
            .contains("no utilisation column")
    );
}

/// Issue 26 (`smi_slowfast_no_ts`): the header before every sample, no timestamps.
#[test]
fn header_before_every_sample() {
    let t =
        ok("utilization.gpu [%]\n85 %\nutilization.gpu [%]\n100 %\nutilization.gpu [%]\n94 %\n");
    assert_eq!(t.gpus[0].util, vec![85.0, 100.0, 94.0]);
    assert!(!t.has_timestamps);
}

#[test]
fn header_detection() {
    assert!(is_header(
        "timestamp, index, utilization.gpu [%], memory.used [MiB]"
    ));
    assert!(is_header("utilization.gpu"));
    assert!(!is_header("2026/11/21 10:00:00.123, 0, 45 %"));
    assert!(!is_header("0, 45"));
    assert!(!is_header("[N/A]"));
    assert!(!is_header("NVIDIA H100, 5 %"));
    assert!(!is_header(""));
}

/// A generated nvidia-smi table and what reading it must give.
#[derive(Debug, Clone)]
struct Table {
    text: String,
    /// Per GPU (index order): (t, util) kept.
    expected: Vec<Vec<(f64, f64)>>,
    skipped: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Time,
    Index,
    Util,
    Mem,
}

fn table() -> impl Strategy<Value = Table> {
    (
        1usize..=8,    // GPUs
        1usize..=20,   // rows per GPU
        any::<bool>(), // header
        any::<bool>(), // units
        Just(vec![Col::Time, Col::Index, Col::Util, Col::Mem]).prop_shuffle(),
        proptest::collection::vec((0u32..=100, 0u32..10, 0u32..5000), 160),
        0u32..1000, // start offset, ms
    )
        .prop_map(|(gpus, rows, header, units, order, values, start)| {
            // Without a header and without units the reader assumes the usual order, so
            // keep index before utilisation before memory there.
            let order = if header || units {
                order
            } else {
                let time_at = order.iter().position(|c| *c == Col::Time).unwrap();
                let mut o = vec![Col::Index, Col::Util, Col::Mem];
                o.insert(time_at.min(3), Col::Time);
                o
            };
            let mut text = String::new();
            if header {
                let names: Vec<&str> = order
                    .iter()
                    .map(|c| match c {
                        Col::Time => "timestamp",
                        Col::Index => "index",
                        Col::Util => "utilization.gpu [%]",
                        Col::Mem => "memory.used [MiB]",
                    })
                    .collect();
                writeln!(text, "{}", names.join(", ")).unwrap();
            }
            let mut expected = vec![Vec::new(); gpus];
            let mut skipped = 0;
            let mut k = 0;
            // Start just before midnight so that some tables cross into the next day.
            for r in 0..rows {
                let ms = u64::from(start) + r as u64 * 100; // since 23:59:58
                let (day, s) = if ms < 2000 {
                    (21, 58 + ms / 1000)
                } else {
                    (22, ms / 1000 - 2)
                };
                let hm = if day == 21 { "23:59" } else { "00:00" };
                let stamp = format!("2026/11/{day} {hm}:{s:02}.{:03}", ms % 1000);
                // The reader counts from the whole second of the first timestamp, 23:59:58.
                let t = ms as f64 / 1000.0;
                for (g, series) in expected.iter_mut().enumerate() {
                    let (util, na, mem) = values[k % values.len()];
                    k += 1;
                    // The first row of a headerless file must show which column is which.
                    let missing = na == 0 && (header || k > 1);
                    let fields: Vec<String> = order
                        .iter()
                        .map(|c| match c {
                            Col::Time => stamp.clone(),
                            Col::Index => g.to_string(),
                            Col::Util if missing => "[N/A]".to_owned(),
                            Col::Util if units => format!("{util} %"),
                            Col::Util => util.to_string(),
                            Col::Mem if units => format!("{mem} MiB"),
                            Col::Mem => mem.to_string(),
                        })
                        .collect();
                    writeln!(text, "{}", fields.join(", ")).unwrap();
                    if missing {
                        skipped += 1;
                    } else {
                        series.push((t, f64::from(util)));
                    }
                }
            }
            Table {
                text,
                expected,
                skipped,
            }
        })
}

proptest! {
    #[test]
    fn round_trips_generated_tables(table in table()) {
        let got = read_str(&table.text);
        let want: Vec<(u32, Vec<(f64, f64)>)> = table
            .expected
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .map(|(g, s)| (g as u32, s.clone()))
            .collect();
        if want.is_empty() {
            // Every value was `[N/A]`: nothing to analyse is an error, not an empty trace.
            let no_samples = matches!(
                &got,
                Err(TraceError::NoSamples { skipped, .. }) if *skipped == table.skipped
            );
            prop_assert!(no_samples, "{:?}", got);
            return Ok(());
        }
        let t = got.map_err(|e| TestCaseError::fail(format!("{e}\n{}", table.text)))?;
        let ids: Vec<u32> = t.gpus.iter().map(|s| s.gpu).collect();
        prop_assert_eq!(ids, want.iter().map(|w| w.0).collect::<Vec<_>>());
        for (series, (_, samples)) in t.gpus.iter().zip(&want) {
            prop_assert_eq!(&series.util, &samples.iter().map(|s| s.1).collect::<Vec<_>>());
            prop_assert_eq!(series.t.len(), samples.len());
            for (got, want) in series.t.iter().zip(samples) {
                prop_assert!((got - want.0).abs() < 1e-6, "t {} != {}", got, want.0);
            }
        }
        prop_assert_eq!(t.skipped, table.skipped);
        prop_assert_eq!(t.rows, table.expected.iter().map(Vec::len).sum::<usize>());
        prop_assert!(t.has_timestamps);
    }

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read(bytes.as_slice(), Path::new("x"));
    }

    #[test]
    fn never_panics_on_csvish_text(s in "[0-9a-zA-Z/:., %\\[\\]\\-\n\r\t]{0,300}") {
        let _ = read_str(&s);
    }

    #[test]
    fn never_panics_near_valid_rows(
        rows in proptest::collection::vec(
            "(2026/1[0-2]/[0-3][0-9] [0-2][0-9]:[0-6][0-9]:[0-6][0-9](\\.[0-9]{0,10})?|[0-9]{1,12}|GPU-[a-f]{2}|\\[N/A\\]|-?[0-9]{1,4}(\\.[0-9])? ?%?)(, ?(2026/1[0-2]/[0-3][0-9] [0-2][0-9]:[0-6][0-9]:[0-6][0-9]|[0-9]{1,12}|\\[N/A\\]|-?[0-9]{1,4} ?%?)){0,4}",
            0..12),
        header in proptest::option::of("(timestamp|index|uuid|utilization.gpu \\[%\\]|memory.used)(, (timestamp|index|uuid|utilization.gpu|memory.used \\[MiB\\])){0,4}"),
    ) {
        let mut text = header.map(|h| h + "\n").unwrap_or_default();
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        let _ = read_str(&text);
    }

    #[test]
    fn timestamp_parser_never_panics(s in "[0-9/: .]{0,30}") {
        let _ = parse_timestamp(s.as_bytes());
    }
}

/// Lines that no layout of [`table`] reads: a field too many or too few, or `x` for the
/// GPU index.
const BAD_LINES: [&str; 4] = [
    "garbage",
    "2026/11/21 10:00:0",
    "x, x, x, x",
    "1, 2, 3, 4, 5",
];

proptest! {
    #[test]
    fn skipping_bad_lines_reads_the_rest(
        table in table(),
        bad in proptest::collection::vec((0usize..1000, 0usize..BAD_LINES.len()), 0..6),
    ) {
        // Bad lines anywhere after the first (which holds the header, or the row the
        // layout is guessed from); (line, is bad).
        let mut lines: Vec<(&str, bool)> = table.text.lines().map(|l| (l, false)).collect();
        for (at, which) in bad {
            let at = 1 + at % lines.len();
            lines.insert(at, (BAD_LINES[which], true));
        }
        let text: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
        let mut skipped = Vec::new();
        let got = read_skipping(text.as_bytes(), Path::new("gpu.csv"), |e| {
            skipped.push(e.to_string());
        });
        let want_lines: Vec<String> = lines
            .iter()
            .enumerate()
            .filter(|(_, (_, bad))| *bad)
            .map(|(i, _)| format!("`gpu.csv` line {}:", i + 1))
            .collect();
        prop_assert_eq!(skipped.len(), want_lines.len(), "{:?}", skipped);
        for (e, want) in skipped.iter().zip(&want_lines) {
            prop_assert!(e.starts_with(want.as_str()), "{} is not {}", e, want);
        }
        match (got, read_str(&table.text)) {
            (Ok(got), Ok(clean)) => prop_assert_eq!(got, clean),
            (Err(got), Err(clean)) => prop_assert_eq!(got.to_string(), clean.to_string()),
            (got, clean) => prop_assert!(false, "{:?} vs {:?}", got, clean),
        }
    }
}

/// Throughput of the reader on a 24-hour-style log held in memory. Run with
/// `cargo test --release -p gpufeed-telemetry -- --ignored --nocapture nvsmi_throughput`.
#[test]
#[ignore = "benchmark: prints rows/s, run in release mode"]
fn nvsmi_throughput() {
    let gpus = 8;
    let rows = 1_000_000;
    let mut text = String::from("timestamp, index, utilization.gpu [%], memory.used [MiB]\n");
    for r in 0..rows / gpus {
        let ms = r * 100;
        let (h, m, s, f) = (
            ms / 3_600_000 % 24,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000,
        );
        for g in 0..gpus {
            writeln!(
                text,
                "2026/11/21 {h:02}:{m:02}:{s:02}.{f:03}, {g}, {} %, {} MiB",
                (r * 7 + g * 13) % 101,
                20_000 + g
            )
            .unwrap();
        }
    }
    let bytes = text.into_bytes();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        let t = read(
            std::io::BufReader::new(bytes.as_slice()),
            Path::new("bench.csv"),
        )
        .unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        assert_eq!(t.rows, rows);
    }
    println!(
        "nvsmi::read: {rows} rows, {:.1} MB in {:.1} ms (best of 5): {:.1} M rows/s, {:.0} MB/s",
        bytes.len() as f64 / 1e6,
        best * 1e3,
        rows as f64 / best / 1e6,
        bytes.len() as f64 / best / 1e6
    );
}

/// The brief's worst case end to end: a 24-hour, 8-GPU, 10 Hz log (6.9 million rows,
/// about 300 MB) written to a temporary file and read with `read_trace`. Run with
/// `cargo test --release -p gpufeed-telemetry -- --ignored --nocapture nvsmi_24h_file`
/// (under `/usr/bin/time -v` to see the peak memory).
#[test]
#[ignore = "benchmark: writes a 300 MB file, run in release mode"]
fn nvsmi_24h_file() {
    use std::io::Write as _;
    let (gpus, rounds) = (8, 24 * 3600 * 10);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu.csv");
    {
        let mut out = std::io::BufWriter::new(fs_err::File::create(&path).unwrap());
        writeln!(
            out,
            "timestamp, index, utilization.gpu [%], memory.used [MiB]"
        )
        .unwrap();
        for r in 0..rounds {
            let ms = r * 100;
            let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
            for g in 0..gpus {
                let u = (r * 7 + g * 13) % 101;
                writeln!(
                    out,
                    "2026/11/21 {h:02}:{m:02}:{s:02}.{f:03}, {g}, {u} %, 20480 MiB"
                )
                .unwrap();
            }
        }
    }
    let size = fs_err::metadata(&path).unwrap().len();
    let start = std::time::Instant::now();
    let t = crate::trace::read_trace(&path, None).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let crate::trace::Trace::Util(t) = t else {
        panic!("not util")
    };
    assert_eq!(t.rows, gpus * rounds);
    println!(
        "read_trace: {} rows, {:.0} MB in {:.2} s: {:.1} M rows/s, {:.0} MB/s",
        t.rows,
        size as f64 / 1e6,
        secs,
        t.rows as f64 / secs / 1e6,
        size as f64 / secs / 1e6
    );
}

/// Loggers' own layouts: `usage` for utilisation, `Time` in epoch seconds with a GPU id,
/// and `elapsed_sec` counting from the logger's start (real files: a GPGPU project,
/// Ember, DCConv).
#[test]
fn loggers_own_headers() {
    let t = ok("Time,GPU_Usage\n1686584907.568956,0\n1686584908.570101,35\n1686584909.571,40\n");
    assert_eq!(t.gpus[0].util, vec![0.0, 35.0, 40.0]);
    assert!(t.has_timestamps);
    assert!((t.gpus[0].t[2] - t.gpus[0].t[0] - 2.002).abs() < 1e-3);
    let t =
        ok("Time,GPU_ID,Utilization\n1736203508.75,0,0\n1736203508.75,1,7\n1736203508.85,0,9\n");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].util, vec![0.0, 9.0]);
    let t = ok("elapsed_sec,gpu_util_pct,mem_used_mb\n0.0,5,100\n0.25,50,100\n0.5,55,100\n");
    assert_eq!(t.gpus[0].util, vec![5.0, 50.0, 55.0]);
    assert!((t.gpus[0].t[2] - t.gpus[0].t[0] - 0.5).abs() < 1e-9);
    // Not utilisation: memory usage, a CPU's.
    assert!(!is_util_name("memory_usage") && !is_util_name("cpu_usage"));
}

/// Issue 26 (a real logger's layout): `Date` and `Time` in columns of their own.
#[test]
fn date_and_time_columns_are_joined() {
    let t = ok("Date,Time,Temperature,Power Used,Utilization\n\
                04-03-2021,13:32:39,58,1,20\n\
                04-03-2021,13:32:41,58,1,30\n");
    assert_eq!(t.gpus[0].util, vec![20.0, 30.0]);
    assert!(t.has_timestamps);
    assert_eq!(t.gpus[0].t[1] - t.gpus[0].t[0], 2.0);
    // Day first when the first number says so, across midnight; ISO and compact dates.
    for (a, b) in [
        ("31.12.2024,23:59:59", "01.01.2025,00:00:01"),
        ("2024-12-31,23:59:59", "2025-01-01,00:00:01"),
        ("20241231,23:59:59", "20250101,00:00:01.500"),
    ] {
        let t = ok(&format!("date,time,util\n{a},50\n{b},60\n"));
        let dt = t.gpus[0].t[1] - t.gpus[0].t[0];
        assert!((2.0..=2.5).contains(&dt), "{a} -> {b}: {dt}");
    }
    let e = err("Date,Time,Utilization\n04-03-2021,13:32:39,20\nyesterday,13:32:40,20\n");
    assert!(
        e.contains("line 3") && e.contains("yesterday 13:32:40"),
        "{e}"
    );
    assert!(e.contains("`Date, Time`"), "{e}");
}

/// One utilisation column per GPU: every GPU is read (the first column alone used to be).
#[test]
fn one_column_per_gpu() {
    let t = ok("timestamp,gpu0_util,gpu1_util,gpu0_mem\n\
                1764189075,45,90,1000\n\
                1764189076,47,91,1000\n");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!((t.gpus[0].gpu, t.gpus[1].gpu), (0, 1));
    assert_eq!(t.gpus[1].util, vec![90.0, 91.0]);
    assert_eq!(t.gpus[1].t[1] - t.gpus[1].t[0], 1.0);
    let t = ok("time,GPU 0 Util [%],GPU 1 Util [%]\n2024-11-26 10:00:00,10,20\n");
    assert_eq!(t.gpus.len(), 2);
    for (name, gpu) in [
        ("gpu_2_utilization", Some(2)),
        ("system/gpu.3.gpu", Some(3)),
        ("run-7 - system/gpu.0.gpu", Some(0)),
        ("run-7 - system/gpu.0.gpu__MAX", None),
        ("system.gpu.0.memory", None),
        ("gpu0_mem_util", None),
        ("gpu_util", None),
    ] {
        assert_eq!(per_gpu_util(name), gpu, "{name}");
    }
}

/// W&B's system metrics from its API (`run.history(stream="system")`): blank cells in the
/// rows of other metrics are not samples.
#[test]
fn wandb_system_metrics() {
    let t = ok(
        "_runtime,_timestamp,system.gpu.0.gpu,system.gpu.0.memory,system.gpu.1.gpu\n\
                12.5,1764189075.1,45.5,10,\n\
                14.5,1764189077.1,47,10,88\n\
                15.0,1764189077.6,,,\n",
    );
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[0].util, vec![45.5, 47.0]);
    assert_eq!(t.gpus[1].util, vec![88.0]);
    assert_eq!(t.skipped, 1);
    assert!((t.gpus[0].t[1] - t.gpus[0].t[0] - 2.0).abs() < 1e-9);
    let e = err("_timestamp,system.gpu.0.gpu\n1764189075,45\n1764189076,lots\n");
    assert!(
        e.contains("line 3") && e.contains("lots") && e.contains("system.gpu.0.gpu"),
        "{e}"
    );
}

/// Issue 26 (a real logger's file): a quoted value holding a line break is one field,
/// and the record goes on over the next line; line numbers stay the file's.
#[test]
fn a_quoted_field_may_hold_a_line_break() {
    let t = ok("elapsed_sec,gpu_util_pct,power_w\n0.08,0,\"26.11\n0\"\n0.34,2,\"36.51\n0\"\n");
    assert_eq!(t.gpus[0].util, vec![0.0, 2.0]);
    let e = err("elapsed_sec,gpu_util_pct,power_w\n0.08,0,\"26.11\n0\"\n0.34,x,1\n");
    assert!(e.contains("line 4"), "{e}");
    // A stray quote takes at most 8 lines into its record, which is then an error.
    let mut log = String::from("elapsed_sec,gpu_util_pct\n0.1,\"5\n");
    for i in 0..20 {
        log.push_str(&format!("{},5\n", i + 2));
    }
    let e = err(&log);
    assert!(e.contains("line 2") && e.contains("10 fields"), "{e}");
}

/// Issue 39, pattern 1: `time.ctime()` stamps (`Thu Aug  8 15:42:09 2024`, the day padded
/// with a space) are read, with and without a zone before the year.
#[test]
fn ctime_timestamps_are_read() {
    assert_eq!(ts("Thu Jan  1 00:00:00 1970"), 0.0);
    assert_eq!(ts("Sat Nov 21 10:00:00 2026"), ts("2026/11/21 10:00:00"));
    assert_eq!(
        ts("Sat Nov 21 10:00:00 UTC 2026"),
        ts("2026/11/21 10:00:00")
    );
    assert_eq!(
        ts("Thu Aug  8 15:42:09.5 2024"),
        ts("2024/08/08 15:42:09.5")
    );
    for bad in [
        "Thu Foo  8 15:42:09 2024",
        "Thu Feb 30 15:42:09 2024",
        "Thu Aug  8 25:42:09 2024",
    ] {
        assert!(parse_timestamp(bad.as_bytes()).is_none(), "{bad}");
    }
    // A headerless log of them (a Python loop printing `time.ctime()` and the utilisation):
    // detected as a utilisation log and timed by them.
    let mut log = String::new();
    for k in 0..20 {
        let sec = 55 + k; // 23:58:55 to 23:59:14
        log.push_str(&format!(
            "Thu Aug  8 23:{:02}:{:02} 2024, 0, {} %\n",
            58 + sec / 60,
            sec % 60,
            (k * 7) % 100
        ));
    }
    let t = ok(&log);
    assert!(t.has_timestamps);
    let steps: Vec<f64> = t.gpus[0].t.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().all(|&d| (d - 1.0).abs() < 1e-9), "{steps:?}");
    assert_eq!(
        crate::trace::detect_kind(log.lines().next().unwrap()).1,
        crate::trace::TraceFormat::NvidiaSmiCsv
    );
}

/// Issue 39, pattern 1: dates written month first or day first (`03-11-2026 15:13:16`)
/// are read; where every number is 12 or less, the order is the one that makes the log's
/// first date change the next day, and the times before it stay continuous.
#[test]
fn month_and_day_first_dates_are_decided_by_the_data() {
    let log = |first: &str, second: &str| {
        let mut s = String::from("timestamp, utilization.gpu [%]\n");
        for k in 0..4 {
            s.push_str(&format!("{first} 23:59:{:02}, 40 %\n", 56 + k));
        }
        for k in 0..4 {
            s.push_str(&format!("{second} 00:00:{k:02}, 40 %\n"));
        }
        s
    };
    for (first, second) in [
        ("03-11-2026", "03-12-2026"), // US: March 11 -> 12
        ("11-03-2026", "12-03-2026"), // day first: 11 March -> 12 March
        ("03/11/2026", "03/12/2026"),
        ("11.03.2026", "12.03.2026"),
        ("12-31-2026", "01-01-2027"), // month first, told by the 31
        ("31-12-2026", "01-01-2027"), // day first, told by the 31
        ("11-03-2026", "13-03-2026"), // day first, told by the 13 at the change
    ] {
        let t = ok(&log(first, second));
        let g = &t.gpus[0];
        assert_eq!(g.t.len(), 8, "{first}");
        let steps: Vec<f64> = g.t.windows(2).map(|w| w[1] - w[0]).collect();
        let want = if second.starts_with("13") {
            86_401.0
        } else {
            1.0
        };
        assert!(
            steps[..3].iter().all(|&d| (d - 1.0).abs() < 1e-9)
                && (steps[3] - want).abs() < 1e-9
                && steps[4..].iter().all(|&d| (d - 1.0).abs() < 1e-9),
            "{first} -> {second}: {steps:?}"
        );
    }
    // A date no order can read is an error naming the line.
    let e = read_str("timestamp, utilization.gpu [%]\n13-13-2026 10:00:00, 40 %\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2"), "{e}");
}

/// Dates in a `Date` column of their own beside `Time` are decided by the data too: day
/// first with both numbers under 13 was read month first (11 March as 3 November), and the
/// change of date was a month.
#[test]
fn dates_in_their_own_column_are_decided_by_the_data() {
    for (first, second) in [("11/03/2026", "12/03/2026"), ("03/11/2026", "03/12/2026")] {
        let mut log = String::from("Date,Time,gpu_util\n");
        for k in 0..3 {
            log.push_str(&format!("{first},23:59:{:02},40\n", 57 + k));
        }
        for k in 0..3 {
            log.push_str(&format!("{second},00:00:{k:02},40\n"));
        }
        let t = ok(&log);
        let steps: Vec<f64> = t.gpus[0].t.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            steps.iter().all(|&d| (d - 1.0).abs() < 1e-9),
            "{first} -> {second}: {steps:?}"
        );
    }
}

/// A headerless, unitless row of `temperature.gpu, utilization.gpu, utilization.memory,
/// memory.total, memory.free, memory.used, power.draw` for sample `k` of a training job
/// whose utilisation swings with a period of 10 samples.
fn seven_columns(k: usize) -> String {
    let util = if k % 10 < 6 { 95 - k % 3 } else { 2 + k % 4 };
    let temp = 27 + (k / 12).min(18); // warms slowly from 27 to 45
    let used = 30_000 + 17 * k;
    format!(
        "{temp}, {util}, {}, 81920, {}, {used}, {:.2}\n",
        util / 3,
        81_920 - used,
        60.0 + util as f64 * 2.5
    )
}

/// Issue 39, pattern 2: a headerless log of one GPU without an index column. Its
/// temperature (27-45) was taken for the GPU index (19 GPUs invented); the columns are now
/// judged from their values, and the reader says which it took for what.
#[test]
fn headerless_columns_are_judged_from_their_values() {
    let log: String = (0..300).map(seven_columns).collect();
    let t = ok(&log);
    assert_eq!(t.gpus.len(), 1, "one GPU, not one per temperature");
    assert_eq!(t.gpus[0].util.len(), 300);
    assert_eq!(t.gpus[0].util[0], 95.0);
    assert!(!t.has_timestamps);
    assert_eq!(
        t.columns.as_deref(),
        Some(
            "field 2 as utilization.gpu, no GPU index (one GPU); field(s) 1, 3, 4, 5, 6, 7 ignored"
        )
    );

    // Four GPUs with a timestamp, the temperature before the index: the index is the
    // column that repeats with the GPUs' period.
    let mut log = String::new();
    for k in 0..40 {
        for g in 0..4 {
            let row = seven_columns(k + g);
            let (temp, rest) = row.split_once(", ").unwrap();
            log.push_str(&format!(
                "2026/11/21 10:00:{:02}.000, {temp}, {g}, {rest}",
                k % 60
            ));
        }
    }
    let t = ok(&log);
    assert_eq!(t.gpus.len(), 4);
    assert!(t.has_timestamps);
    assert_eq!(t.gpus[2].util[0], read_util(&seven_columns(2)));
    assert_eq!(
        t.columns.as_deref(),
        Some(
            "field 1 as timestamp, field 3 as index, field 4 as utilization.gpu; field(s) 2, 5, \
             6, 7, 8, 9 ignored"
        )
    );

    // Seconds since the start in the first column: the log's time axis.
    let log: String = (0..30)
        .map(|k| format!("{:.1}, {}\n", k as f64 * 0.5, (k * 37) % 101))
        .collect();
    let t = ok(&log);
    assert!(t.has_timestamps);
    assert!((t.gpus[0].t[1] - t.gpus[0].t[0] - 0.5).abs() < 1e-9);
    assert_eq!(t.gpus[0].util[1], 37.0);
    assert!(
        t.columns
            .unwrap()
            .starts_with("field 1 as elapsed [s], field 2 as utilization.gpu")
    );
}

fn read_util(row: &str) -> f64 {
    row.split(", ").nth(1).unwrap().parse().unwrap()
}

/// Issue 39, pattern 2: a headerless, unitless log of several properties is detected as a
/// utilisation log (a step list that wide is refused anyway); two or three columns stay a
/// step list's.
#[test]
fn wide_headerless_numbers_are_a_utilisation_log() {
    use crate::trace::{TraceFormat, detect_kind};
    assert_eq!(
        detect_kind(seven_columns(0).trim_end()).1,
        TraceFormat::NvidiaSmiCsv
    );
    assert_eq!(detect_kind("1, 250.5").1, TraceFormat::StepList);
    assert_eq!(detect_kind("1, 250.5, 3.2").1, TraceFormat::StepList);
    assert_eq!(
        detect_kind("1.5, 250.5, 3.2, 7.25").1,
        TraceFormat::StepList
    );
}
