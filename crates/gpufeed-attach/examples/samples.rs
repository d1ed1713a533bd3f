//! A developer's view of what `gpufeed attach` reads: every Python thread's stacks over a
//! window, each with its class by [`gpufeed_attach::rules::classify`], counted by distinct
//! stack. For working on the rules table against a new kind of loop:
//!
//! ```text
//! cargo run -p gpufeed-attach --example samples -- PID [SECONDS]
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // a developer's tool: its output is the point

use std::collections::HashMap;
use std::time::Duration;

use gpufeed_attach::rules::{Class, classify_in};
use gpufeed_attach::{Options, context, procs, record};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(pid) = args.next().and_then(|a| a.parse().ok()) else {
        eprintln!("usage: samples PID [SECONDS]");
        std::process::exit(2);
    };
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let opts = Options {
        duration: Duration::from_secs_f64(secs),
        nvml: false,
        ..Options::new(pid)
    };
    let rec = match procs::resolve(pid).and_then(|t| record(&t, &opts)) {
        Ok(rec) => rec,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    for p in &rec.ranks {
        // (thread, active, class, stack) -> samples
        let mut counts: HashMap<(String, String, Class, String), usize> = HashMap::new();
        let mut lines = gpufeed_attach::Sources::default();
        // Each thread's samples classified as if it were the training thread.
        for s in &p.samples {
            let ctx = context(p, s.thread_id)(s);
            let thread = format!(
                "{:#x} {} {}",
                s.thread_id,
                s.os_thread_id
                    .map_or_else(|| "?".to_owned(), |t| t.to_string()),
                s.name.as_deref().unwrap_or("")
            );
            let class = classify_in(&s.frames, s.active, ctx, |f| lines.line(p.pid, f)).class;
            let stack = s
                .frames
                .iter()
                .map(|f| {
                    format!(
                        "{}:{} {}",
                        f.short_filename.as_deref().unwrap_or(&f.filename),
                        f.line,
                        f.name
                    )
                })
                .collect::<Vec<_>>()
                .join(" < ");
            let state = format!(
                "{}{}",
                if s.active { "R" } else { "S" },
                if s.owns_gil { "+GIL" } else { "" }
            );
            *counts.entry((thread, state, class, stack)).or_default() += 1;
        }
        // Which threads that never ran Python were on the CPU at the ticks read, by name.
        let python: std::collections::HashSet<u64> =
            p.samples.iter().filter_map(|s| s.os_thread_id).collect();
        let mut native: HashMap<String, usize> = HashMap::new();
        for tids in p.running.values() {
            for (t, _) in tids.iter().filter(|(t, _)| !python.contains(t)) {
                let comm = procs::thread_name(p.pid, *t).unwrap_or_default();
                *native.entry(format!("{t} {comm}")).or_default() += 1;
            }
        }
        let ticks: std::collections::HashSet<u32> = p.samples.iter().map(|s| s.tick).collect();
        let producing: std::collections::HashSet<u32> = p
            .samples
            .iter()
            .filter(|s| {
                s.frames.iter().any(|f| {
                    gpufeed_attach::rules::PRODUCER_FRAMES
                        .iter()
                        .any(|x| f.filename.contains(x))
                })
            })
            .map(|s| s.tick)
            .collect();
        println!(
            "ticks {}, with a producer making a batch {}; ticks with the threads read: {}; threads that never ran Python on the CPU then: {native:?}",
            ticks.len(),
            producing.len(),
            p.running.len()
        );
        let mut rows: Vec<_> = counts.into_iter().collect();
        rows.sort_by(|a, b| (&a.0.0, b.1).cmp(&(&b.0.0, a.1)));
        println!(
            "PID {} ({} samples, {} ticks torn, {} reads)",
            p.pid,
            p.samples.len(),
            p.torn,
            rec.reads
        );
        for ((thread, active, class, stack), n) in rows {
            println!("{n:6} {thread} {} {} {stack}", active, class.key());
        }
    }
}
