//! Each lint rule's example, for `gpufeed rules ID`: the code that fires it and the code
//! that does not, the very fixtures its test lints (`tests/fixtures/lint/ID.bad.py` and
//! `ID.good.py`, built into the binary), so an example can never drift from what the rule
//! does.

/// A rule's two examples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Code that fires the rule (its line marked `# expect: ID`).
    pub bad: &'static str,
    /// The same code fixed: no finding.
    pub good: &'static str,
}

macro_rules! examples {
    ($($id:literal),* $(,)?) => {
        /// The examples of lint rule `id`; `None` for a rule without them (`file-not-linted`
        /// fires on binary content).
        #[must_use]
        pub fn example(id: &str) -> Option<Example> {
            match id {
                $($id => Some(Example {
                    bad: include_str!(concat!("../tests/fixtures/lint/", $id, ".bad.py")),
                    good: include_str!(concat!("../tests/fixtures/lint/", $id, ".good.py")),
                }),)*
                _ => None,
            }
        }
    };
}

examples!(
    "anomaly-detection-on",
    "cache-key-never-hits",
    "cuda-sync-in-loop",
    "ddp-gloo-on-cuda",
    "decode-per-item",
    "decode-per-item-few-workers",
    "host-sync-in-loop",
    "host-tensor-in-forward",
    "ignore-unknown-rule",
    "sleep-in-loop",
    "subprocess-per-item",
    "syntax-error",
    "tf-after-prefetch-to-device",
    "tf-cache-after-random",
    "tf-function-retracing",
    "tf-map-sequential",
    "tf-no-prefetch",
    "tf-py-function-in-map",
    "torch-data-parallel",
    "torch-loader-no-persistent-workers",
    "torch-loader-no-pin-memory",
    "torch-loader-no-workers",
);
