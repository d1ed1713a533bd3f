//! Every `--format json` document with a published schema: gpufeed-contract's own, and the
//! three defined where they are built (gpufeed-kineto's `profiler` and `profiler-part`,
//! gpufeed-report's `report`), which depend on gpufeed-contract and so cannot be listed there.

pub use gpufeed_contract::registry::{Entry, entry, published};

/// Every document with a published schema, by name.
#[must_use]
pub fn documents() -> Vec<Entry> {
    let mut all = gpufeed_contract::registry::own();
    all.push(entry::<gpufeed_kineto::report::Report>());
    all.push(entry::<gpufeed_kineto::job::Part>());
    all.push(entry::<gpufeed_report::Report>());
    all.sort_by_key(|e| e.name);
    all
}
