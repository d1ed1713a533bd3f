//! JSON: exactly one document, `{"findings": [...]}` (docs/contract.md).

use super::Renderer;
use crate::finding::Report;

/// The `findings` JSON document, on one line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> String {
        // Serialising plain strings, numbers and nulls cannot fail; stay total anyway.
        let mut out = serde_json::to_string(report)
            .unwrap_or_else(|e| format!("{{\"findings\":[],\"error\":\"{e}\"}}"));
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Severity};

    #[test]
    fn one_document() {
        let r = Report::new(vec![Finding::new("x", Severity::Info, "m \"q\"")]);
        let out = Json.render(&r);
        assert_eq!(out.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(v["findings"][0]["message"], "m \"q\"");
        assert_eq!(
            Json.render(&Report::default()),
            "{\"schema_version\":1,\"findings\":[]}\n"
        );
    }
}
