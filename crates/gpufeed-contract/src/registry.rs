//! The registry of documents: each one's name, version, writer and schema, as
//! `gpufeed schema` lists and publishes them.
//!
//! The documents defined in this crate are in [`own`]; the two defined where they are built
//! (gpufeed-kineto's `profiler`, gpufeed-report's `report`) depend on this crate, so the full
//! list is assembled one level up (`gpufeed_analysis::registry::documents`), with the same
//! [`Entry`].

use crate::{
    Attach, Compare, DataProfile, DemoData, Document, Findings, Mel, Monitor, PhaseSteps,
    Precompute, Rules, StepProfile, Steps, Util, schema_of,
};

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

/// The entry of document `D`.
#[must_use]
pub fn entry<D: Document>() -> Entry {
    Entry {
        name: D::NAME,
        version: D::VERSION,
        writer: D::WRITER,
        schema: schema_of::<D>,
    }
}

/// The documents defined in this crate.
#[must_use]
pub fn own() -> Vec<Entry> {
    vec![
        entry::<Attach>(),
        entry::<Compare>(),
        entry::<DataProfile>(),
        entry::<DemoData>(),
        entry::<Findings>(),
        entry::<Mel>(),
        entry::<Monitor>(),
        entry::<PhaseSteps>(),
        entry::<Precompute>(),
        entry::<Rules>(),
        entry::<StepProfile>(),
        entry::<Steps>(),
        entry::<Util>(),
    ]
}

/// The schema as published: pretty JSON with a final newline.
#[must_use]
pub fn published(e: &Entry) -> String {
    let mut text = serde_json::to_string_pretty(&(e.schema)()).unwrap_or_default();
    text.push('\n');
    text
}
