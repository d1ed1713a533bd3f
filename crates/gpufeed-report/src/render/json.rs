//! `report.json`: the whole report, one document.

use super::Renderer;
use crate::model::Report;

/// Pretty-printed JSON of the whole [`Report`] (non-finite numbers are `null`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> String {
        // The model holds only maps with string keys, so serialising cannot fail; if it
        // ever did, an object naming the failure is still one valid document.
        let mut s = serde_json::to_string_pretty(report).unwrap_or_else(|e| {
            serde_json::json!({ "error": format!("the report could not be serialised: {e}") })
                .to_string()
        });
        s.push('\n');
        s
    }
}
