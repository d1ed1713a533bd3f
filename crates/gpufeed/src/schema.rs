//! `gpufeed schema`: the JSON Schema of each `--format json` document of the contract
//! (gpufeed-contract), as published under `docs/schemas/`.
//!
//! `gpufeed schema` lists the documents, `gpufeed schema NAME` prints one schema, and
//! `gpufeed schema --out DIR` writes them all as `DIR/NAME.json` (how `docs/schemas/` is
//! made; a test fails when a schema changes while its version does not).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use gpufeed_contract::{
    DataProfile, Document, Findings, Monitor, PhaseSteps, StepProfile, Steps, Util, schema_of,
};

use crate::cli::SchemaArgs;
use crate::{fsx, printer};

/// One document of the contract.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Its name: `gpufeed schema NAME`, `docs/schemas/NAME.json`.
    pub name: &'static str,
    /// Its `schema_version`.
    pub version: u32,
    /// The command that writes it.
    pub writer: &'static str,
    /// Its JSON Schema.
    pub schema: fn() -> serde_json::Value,
}

fn entry<D: Document>() -> Entry {
    Entry {
        name: D::NAME,
        version: D::VERSION,
        writer: D::WRITER,
        schema: schema_of::<D>,
    }
}

/// Every document with a published schema, by name.
#[must_use]
pub fn documents() -> Vec<Entry> {
    let mut all = vec![
        entry::<gpufeed_contract::Attach>(),
        entry::<DataProfile>(),
        entry::<Findings>(),
        entry::<Monitor>(),
        entry::<gpufeed_kineto::report::Report>(),
        entry::<PhaseSteps>(),
        entry::<gpufeed_report::Report>(),
        entry::<StepProfile>(),
        entry::<Steps>(),
        entry::<Util>(),
    ];
    all.sort_by_key(|e| e.name);
    all
}

/// The schema as published: pretty JSON with a final newline.
#[must_use]
pub fn published(e: &Entry) -> String {
    let mut text = serde_json::to_string_pretty(&(e.schema)()).unwrap_or_default();
    text.push('\n');
    text
}

/// `gpufeed schema [NAME] [--out DIR]`.
pub fn schema(args: &SchemaArgs) -> Result<ExitCode> {
    let all = documents();
    if let Some(dir) = &args.out {
        write_all(&all, dir)?;
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

fn write_all(all: &[Entry], dir: &Path) -> Result<()> {
    fs_err::create_dir_all(dir)?;
    for e in all {
        let path = dir.join(format!("{}.json", e.name));
        let text = published(e);
        fsx::write_atomic(&path, |f| std::io::Write::write_all(f, text.as_bytes()))?;
        printer::note(&format!("wrote {}", path.display()));
    }
    Ok(())
}
