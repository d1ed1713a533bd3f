//! `gpufeed schema`: the JSON Schema of each `--format json` document of the contract, as
//! published under `docs/schemas/` (the registry: `gpufeed_analysis::registry`).
//!
//! `gpufeed schema` lists the documents, `gpufeed schema NAME` prints one schema, and
//! `gpufeed schema --out DIR` writes them all as `DIR/NAME.json` (how `docs/schemas/` is
//! made; a test fails when a schema changes while its version does not).

use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use gpufeed_analysis::registry::{documents, published};

use crate::cli::SchemaArgs;
use crate::printer;

/// `gpufeed schema [NAME] [--out DIR]`.
pub fn schema(args: &SchemaArgs) -> Result<ExitCode> {
    let all = documents();
    if let Some(dir) = &args.out {
        fs_err::create_dir_all(dir)?;
        for e in &all {
            let path = dir.join(format!("{}.json", e.name));
            let text = published(e);
            gpufeed_fs::write_atomic(&path, |f| std::io::Write::write_all(f, text.as_bytes()))
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            printer::note(&format!("wrote {}", path.display()));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = &args.name else {
        let mut o = String::new();
        for e in &all {
            o.push_str(&format!(
                "{:<14} version {}  written by `{}`\n",
                e.name, e.version, e.writer
            ));
        }
        printer::data(&o)?;
        return Ok(ExitCode::SUCCESS);
    };
    match all.iter().find(|e| e.name == name) {
        Some(e) => printer::data(&published(e))?,
        None => bail!(
            "no document named `{name}`: the documents are {} (`gpufeed schema` lists them)",
            all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
        ),
    }
    Ok(ExitCode::SUCCESS)
}
