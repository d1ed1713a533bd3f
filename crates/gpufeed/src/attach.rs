//! `gpufeed attach PID`: parses the window, runs `gpufeed-attach` and prints its `attach`
//! document (text or JSON). The sampling and the judgement live in `gpufeed-attach`.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{AttachArgs, Format};
use crate::printer;

/// `gpufeed attach PID`.
pub fn attach(args: &AttachArgs) -> Result<ExitCode> {
    let opts = gpufeed_attach::Options {
        pid: args.pid,
        duration: args.duration,
        rate_hz: args.rate,
        nvml: true,
        stop: None,
    };
    let doc = gpufeed_attach::attach(&opts)?;
    let text = match args.format {
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&doc)?;
            t.push('\n');
            t
        }
        Format::Text => gpufeed_attach::render(&doc),
    };
    printer::data(&text)?;
    Ok(ExitCode::SUCCESS)
}
