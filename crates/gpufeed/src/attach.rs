//! `gpufeed attach PID`: parses the window, runs `gpufeed-attach` and prints its `attach`
//! document (text or JSON). The sampling and the judgement live in `gpufeed-attach`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use gpufeed_contract::Attach;

use crate::cli::{AttachArgs, Format};
use crate::printer;

/// `10`, `10s`, `2m`, `1h`, `500ms`: a positive duration, plain numbers in seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration: write seconds (`10`) or `10s`, `2m`"))?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`: use ms, s, m or h (`10s`, `2m`)"
            ));
        }
    };
    let secs = value * scale;
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!("the duration must be above 0, not `{s}`"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `gpufeed attach PID`.
pub fn attach(args: &AttachArgs) -> Result<ExitCode> {
    let opts = gpufeed_attach::Options {
        pid: args.pid,
        duration: args.duration,
        rate_hz: args.rate,
        nvml: true,
    };
    let doc = gpufeed_attach::attach(&opts)?;
    let text = match args.format {
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&doc)?;
            t.push('\n');
            t
        }
        Format::Text => render(&doc),
    };
    printer::data(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The human report: verdict first, then the evidence and the fix.
#[must_use]
pub fn render(doc: &Attach) -> String {
    let mut o = format!("verdict: {}", doc.verdict);
    if let Some(level) = doc.level {
        o.push_str(&format!(" ({})", level.as_str()));
    }
    o.push_str(&format!(
        "\nprocess {} (Python {}{}), {} samples over {:.1} s at {} Hz\n\n",
        doc.pid,
        doc.python,
        doc.launcher
            .as_ref()
            .map(|l| format!(", launcher {l}, {} ranks", doc.ranks.len()))
            .unwrap_or_default(),
        doc.samples,
        doc.window_s,
        doc.rate_hz
    ));
    for e in &doc.evidence {
        o.push_str(&format!("  - {e}\n"));
    }
    if let Some(gpus) = &doc.gpus {
        for g in gpus {
            o.push_str(&format!(
                "  - GPU {}: {} busy, the job's processes {}\n",
                g.index,
                g.util_pct.map_or("?".to_owned(), |u| format!("{u:.0} %")),
                g.process_util_pct
                    .map_or("?".to_owned(), |u| format!("{u:.0} %"))
            ));
        }
    }
    o.push_str(&format!("\nfix: {}\n", doc.fix));
    o.push_str(&format!(
        "\ncost: {} stack reads, {:.3} ms of gpufeed's CPU per read\n",
        doc.cost.reads, doc.cost.cpu_ms_per_read
    ));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("10parsecs").unwrap_err().contains("unit"));
    }
}
