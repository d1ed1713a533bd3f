//! The signatures of the APIs the lint rules read arguments of, in one table with their
//! sources, so that an argument is found whether it is passed by keyword or by position
//! (`ds.map(fn, tf.data.experimental.AUTOTUNE)` passes `num_parallel_calls` second).

use tree_sitter::Node;

use super::ast;

/// One API: its parameters in order (`self` left out), how many may be passed by position,
/// and where the signature comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signature {
    /// The API, as rules name it (`tf.data.Dataset.map`).
    pub(crate) api: &'static str,
    /// Every parameter, in declaration order.
    pub(crate) params: &'static [&'static str],
    /// How many leading parameters may be given by position (the rest are keyword-only).
    pub(crate) positional: usize,
    /// The documentation the order was taken from (read by the table's test and by
    /// whoever updates a signature).
    #[allow(dead_code)]
    pub(crate) source: &'static str,
}

const fn sig(
    api: &'static str,
    params: &'static [&'static str],
    positional: usize,
    source: &'static str,
) -> Signature {
    Signature {
        api,
        params,
        positional,
        source,
    }
}

const TF_DATASET: &str = "https://www.tensorflow.org/api_docs/python/tf/data/Dataset";

/// Every signature the rules use.
pub(crate) const SIGNATURES: &[Signature] = &[
    sig(
        "tf.data.Dataset.map",
        &["map_func", "num_parallel_calls", "deterministic", "name"],
        4,
        TF_DATASET,
    ),
    sig(
        "tf.data.Dataset.interleave",
        &[
            "map_func",
            "cycle_length",
            "block_length",
            "num_parallel_calls",
            "deterministic",
            "name",
        ],
        6,
        TF_DATASET,
    ),
    sig(
        "tf.data.Dataset.batch",
        &[
            "batch_size",
            "drop_remainder",
            "num_parallel_calls",
            "deterministic",
            "name",
        ],
        5,
        TF_DATASET,
    ),
    sig(
        "tf.data.Dataset.prefetch",
        &["buffer_size", "name"],
        2,
        TF_DATASET,
    ),
    sig(
        "tf.data.Dataset.apply",
        &["transformation_func"],
        1,
        TF_DATASET,
    ),
    sig(
        "tf.numpy_function",
        &["func", "inp", "Tout", "stateful", "name"],
        5,
        "https://www.tensorflow.org/api_docs/python/tf/numpy_function",
    ),
    sig(
        "tf.py_function",
        &["func", "inp", "Tout", "name"],
        4,
        "https://www.tensorflow.org/api_docs/python/tf/py_function",
    ),
    sig(
        "tf.function",
        &[
            "func",
            "input_signature",
            "autograph",
            "jit_compile",
            "reduce_retracing",
            "experimental_implements",
            "experimental_autograph_options",
            "experimental_attributes",
            "experimental_relax_shapes",
            "experimental_compile",
            "experimental_follow_type_hints",
        ],
        11,
        "https://www.tensorflow.org/api_docs/python/tf/function",
    ),
    sig(
        "tf.keras.Model.fit",
        &["x", "y", "batch_size", "epochs"],
        4,
        "https://www.tensorflow.org/api_docs/python/tf/keras/Model#fit",
    ),
    sig(
        "functools.partial",
        &["func"],
        1,
        "https://docs.python.org/3/library/functools.html#functools.partial",
    ),
    // `DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
    // num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
    // worker_init_fn=None, multiprocessing_context=None, generator=None, *,
    // prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True)`.
    sig(
        "torch.utils.data.DataLoader",
        &[
            "dataset",
            "batch_size",
            "shuffle",
            "sampler",
            "batch_sampler",
            "num_workers",
            "collate_fn",
            "pin_memory",
            "drop_last",
            "timeout",
            "worker_init_fn",
            "multiprocessing_context",
            "generator",
            "prefetch_factor",
            "persistent_workers",
            "pin_memory_device",
            "in_order",
        ],
        13,
        "https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
    ),
];

/// The signature of `api`.
///
/// # Panics
/// In debug builds, when `api` is not in the table (a programming error a test catches).
fn signature(api: &str) -> Option<&'static Signature> {
    let found = SIGNATURES.iter().find(|s| s.api == api);
    debug_assert!(found.is_some(), "no signature for `{api}`");
    found
}

/// The argument of `call` (a call of `api`) bound to parameter `param`, by keyword or by
/// position; `None` when not passed, or when a `*args` before its position hides it.
pub(crate) fn arg<'t>(call: Node<'t>, api: &str, param: &str, src: &str) -> Option<Node<'t>> {
    if let Some(v) = ast::kwarg(call, param, src) {
        return Some(v);
    }
    let s = signature(api)?;
    let index = s.params.iter().position(|p| *p == param)?;
    if index >= s.positional {
        return None;
    }
    // A `*args` splat before the index makes the positions unknown.
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    let mut at = 0;
    for a in args.named_children(&mut c) {
        match a.kind() {
            "keyword_argument" | "comment" | "dictionary_splat" => {}
            "list_splat" => return None,
            _ => {
                if at == index {
                    return Some(a);
                }
                at += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signature_names_its_source_and_has_unique_params() {
        for s in SIGNATURES {
            assert!(s.source.starts_with("https://"), "{}", s.api);
            assert!(s.positional <= s.params.len(), "{}", s.api);
            let mut p = s.params.to_vec();
            p.sort_unstable();
            p.dedup();
            assert_eq!(p.len(), s.params.len(), "{}", s.api);
        }
    }
}
