//! The limits of the checkers and the facts about MyXTTS the rules rely on, each with its
//! source.
//!
//! These are not thresholds: every value a rule's verdict compares a setting or a measure
//! with lives in gpufeed's one thresholds table, `gpufeed_stats::thresholds` (for the
//! rules here: `NUM_WORKERS_LOW`, `BATCH_SIZE_SMALL`). What stays here is how much input the
//! parsers accept and how deep they follow it, how long and how much `doctor` measures,
//! and MyXTTS' own defaults, declared once
//! through the `constants!` macro that also puts them into [`TABLE`].

use serde::Serialize;

/// One row of the constants table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Constant {
    /// The constant's name in this module.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
    /// Unit of `value`.
    pub unit: &'static str,
    /// What crossing it means.
    pub meaning: &'static str,
    /// Where the value comes from.
    pub source: &'static str,
}

macro_rules! constants {
    ($( $(#[$doc:meta])* $name:ident = $value:expr, $unit:expr, $meaning:expr, $source:expr; )*) => {
        $( $(#[$doc])* pub const $name: u64 = $value; )*
        /// Every constant of the rules, in declaration order.
        pub const TABLE: &[Constant] = &[
            $( Constant {
                name: stringify!($name),
                value: $name,
                unit: $unit,
                meaning: $meaning,
                source: $source,
            }, )*
        ];
    };
}

constants! {
    /// MyXTTS' token cap when `max_text_tokens` is unset.
    MYXTTS_MAX_TEXT_TOKENS = 1024, "tokens",
        "`text-cap-mismatch`: the token cap MyXTTS truncates at when `data.max_text_tokens` is unset",
        "MyXTTS DataConfig default (research/myxtts.md sections 2.2 and 3.5)";
    /// The largest config file `validate` reads.
    MAX_CONFIG_BYTES = gpufeed_config::MAX_CONFIG_BYTES, "bytes",
        "`config-too-large`: a config file larger than this is not parsed",
        "gpufeed judgement (`gpufeed_config::MAX_CONFIG_BYTES`, the cap of every command that reads a config): MyXTTS' config.yaml is about 2 KB; 10 MiB is three orders of magnitude above any training config and stops a dataset or checkpoint passed by mistake before it is parsed";
    /// The largest Python file `lint` parses.
    MAX_SOURCE_BYTES = 10 * 1024 * 1024, "bytes",
        "`file-not-linted`: a Python file larger than this is reported, not parsed",
        "gpufeed judgement: the largest hand-written Python modules are well under 1 MB; a larger `.py` is generated code or data";
    /// Syntax errors reported per file.
    MAX_SYNTAX_ERRORS = 10, "findings",
        "`syntax-error`: at most this many syntax errors are reported per file (the count of the rest is in the last one)",
        "gpufeed judgement: after the first few, error recovery reports follow-on errors";
    /// Deepest expression or statement nesting the rules follow.
    MAX_NESTING = 200, "levels",
        "lint rules stop following expressions and statements nested deeper than this (the deeper part is not analysed)",
        "gpufeed judgement: CPython's own parser stops at 200 nested parentheses (\"too many nested parentheses\"); generated code can nest far deeper, and following it would exhaust the stack";
    /// Depth of the call chain followed from a mapped function, `__getitem__`, a
    /// `collate_fn` or a training loop.
    MAX_CALL_DEPTH = 6, "calls",
        "lint rules follow calls into the project's own functions (any linted file) this deep: from a training loop to its host syncs, from `__getitem__`, a `collate_fn` or a function passed to `Dataset.map` to its per-item work",
        "gpufeed judgement: the trainers read for issue 27 reach their syncs and decoders in 2-4 calls (`train_step` -> `log_losses` -> `.item()`; `__getitem__` -> `get_audio` -> `load_wav` -> `soundfile.read`); 6 leaves room and keeps cycles and deep generated code bounded";
    /// Module classes followed through callers that are themselves never called.
    MAX_UNCALLED_DEPTH = 3, "modules",
        "`lint` finds a module's `forward` unreached when its only calls lie in the `forward` of modules never called, this many modules deep (a decoder that only a frozen model's unused `forward` runs)",
        "gpufeed judgement: the held-out trainers nest such modules one or two deep (StarGANv2-VC's ASR model and its seq2seq decoder); the bound keeps the search finite where modules call each other in cycles";
    /// Functions visited from one root (a training loop, a `__getitem__`, ...).
    MAX_FUNCTIONS_PER_ROOT = 100, "functions",
        "following calls from one training loop or per-item function stops after this many functions (the rest is not analysed)",
        "gpufeed judgement: a training step or an item's loading touches tens of the project's functions (the trainers read for issue 27: under 30); 100 bounds the work on a 400-file repository whose helpers call each other in cycles (`cargo bench -p gpufeed-doctor --bench lint_repo`)";
    /// Files that calls are followed across.
    MAX_PROJECT_FILES = 5000, "files",
        "`lint` on more files than this lints each file on its own, without following calls between files",
        "gpufeed judgement: ESPnet, the largest speech trainer read for issue 27, has about 1 500 Python files";
    /// Seconds a framework probe may take before it is a hang.
    PROBE_TIMEOUT_S = 20, "seconds",
        "`framework-probe-hang`: a `python3` probe of TensorFlow, PyTorch or JAX that has not answered after this long is killed and reported",
        "gpufeed judgement: importing TensorFlow and compiling one XLA function takes 5-10 s from a cold disk; twice that is a hang (a stuck driver call, a lock, an import waiting on the network), not a slow import. The three probes run in parallel";
    /// Milliseconds over which the host check measures what other processes use, at least.
    HOST_WINDOW_MIN_MS = 1000, "ms",
        "`host-load-high` is judged over gpufeed's own run; where the run took less than this, the host check waits the rest",
        "gpufeed judgement: /proc/stat counts in 1/100 s, so a second gives 100 ticks per CPU, a share to about 1 %";
    /// Bytes the storage check reads per folder, at most.
    STORAGE_READ_BYTES = 256 * 1024 * 1024, "bytes",
        "the storage check reads at most this much per folder (sequential, then random), with the page cache bypassed",
        "gpufeed judgement: long enough past the device's latency to measure throughput, short enough to keep `doctor` to seconds";
    /// Milliseconds the sequential read may take per folder.
    STORAGE_SEQ_MS = 2000, "ms",
        "the sequential read stops after this long even below STORAGE_READ_BYTES (a slow disk)",
        "gpufeed judgement: a hard disk at 100 MB/s reads 200 MB in this time";
    /// Milliseconds the random reads may take per folder.
    STORAGE_RANDOM_MS = 1000, "ms",
        "the random 4 KiB reads stop after this long",
        "gpufeed judgement: a hard disk does 75-200 random reads in a second, enough to judge it";
    /// Random reads per folder, at most.
    STORAGE_RANDOM_READS = 2000, "reads",
        "the random 4 KiB reads stop after this many",
        "gpufeed judgement: 2000 reads put the rate's sampling error near 2 %";
    /// Bytes a sequential figure needs to be judged.
    STORAGE_MIN_JUDGED_BYTES = 16 * 1024 * 1024, "bytes",
        "a sequential throughput measured on less than this is reported but not judged (latency, not throughput, dominates it)",
        "gpufeed judgement: 16 MiB is at least 16 reads of 1 MiB, past the first seek";
    /// Random reads a rate needs to be judged.
    STORAGE_MIN_JUDGED_READS = 32, "reads",
        "a random-read rate measured over fewer reads than this is reported but not judged",
        "gpufeed judgement";
    /// Files the storage walk counts, at most.
    STORAGE_MAX_FILES = 1_000_000, "files",
        "the storage check stops counting files after this many (the evidence says `at least`)",
        "gpufeed judgement: walking a million entries takes seconds on a local disk, minutes on a network file system";
    /// Batches the runtime check times.
    RUNTIME_BATCHES = 40, "batches",
        "`doctor`'s short loader run times this many batches after its warm-up (`gpufeed profile data` times 200 by default)",
        "gpufeed judgement: enough for the step statistics and a period of up to 20 batches, short enough to take well under a second on a precomputed cache";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_unique_and_sourced() {
        let mut names: Vec<_> = TABLE.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        assert!(
            TABLE
                .iter()
                .all(|c| !c.source.is_empty() && !c.meaning.is_empty())
        );
    }
}
