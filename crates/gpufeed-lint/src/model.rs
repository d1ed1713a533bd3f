//! Rules on the code a step runs many times over: `cache-key-never-hits` (a memo tested
//! with one key and filled under another, as HiFi-GAN's mel filterbank, so the work under
//! it runs on every call) and `host-tensor-in-forward` (a tensor built on the CPU and copied
//! to the GPU inside a module's `forward`: every layer, every step; the project pass runs
//! [`host_tensors_moved`] on the functions `forward` and the training step call too).

use std::collections::HashSet;

use tree_sitter::Node;

use super::File;
use super::ast::{self, text};

pub(super) fn check(file: &mut File<'_>) {
    let src = file.src;
    let mut memo = Vec::new();
    let mut forwards = Vec::new();
    ast::walk(file.root, &mut |n| {
        match n.kind() {
            "if_statement" => memo.extend(mismatched_memo(n, src)),
            "function_definition"
                if n.child_by_field_name("name")
                    .is_some_and(|name| text(name, src) == "forward")
                    && ast::enclosing(file.root, n, "class_definition").is_some() =>
            {
                forwards.push(n);
            }
            _ => {}
        }
        true
    });
    for m in memo {
        let work = m
            .work
            .map(|w| format!(": `{w}` and the rest under it run on every call"))
            .unwrap_or_else(|| ": the code under it runs on every call".to_owned());
        file.hit(
            "cache-key-never-hits",
            m.test,
            format!(
                "`{}` is tested for `{}` but filled under `{}`, so the test never finds it{work}",
                m.memo, m.tested, m.stored
            ),
            None,
            format!(
                "key = {}\nif key not in {}:\n    {}[key] = ...",
                m.stored, m.memo, m.memo
            ),
        );
    }
    for def in forwards {
        for HostTensor { moved, made, .. } in host_tensors_moved(def, file) {
            file.hit(
                "host-tensor-in-forward",
                moved,
                format!(
                    "`{made}` builds a tensor on the CPU that `forward` then copies to the GPU, \
                     on every call"
                ),
                None,
                "create it on the device: torch.arange(n, device=x.device); or once, in \
                 __init__: self.register_buffer(\"table\", torch.tensor(...), persistent=False)",
            );
        }
    }
}

/// A memo tested with one key and filled under another.
struct Memo<'t> {
    /// The condition `tested not in memo`.
    test: Node<'t>,
    memo: String,
    tested: String,
    stored: String,
    /// The first call under the test: the work that the memo was meant to save.
    work: Option<String>,
}

/// `if K not in D:` whose body stores `D[...]` only under keys written otherwise than `K`
/// (HiFi-GAN's `if fmax not in mel_basis: mel_basis[str(fmax)+'_'+str(y.device)] = ...`).
fn mismatched_memo<'t>(stmt: Node<'t>, src: &str) -> Option<Memo<'t>> {
    let mut test = stmt.child_by_field_name("condition")?;
    while test.kind() == "parenthesized_expression" {
        test = test.named_child(0)?;
    }
    if test.kind() != "comparison_operator" || test.named_child_count() != 2 {
        return None;
    }
    let mut c = test.walk();
    if !test.children(&mut c).any(|op| op.kind() == "not in") {
        return None;
    }
    let mut tested = test.named_child(0)?;
    while tested.kind() == "parenthesized_expression" {
        tested = tested.named_child(0)?;
    }
    let memo = ast::dotted(test.named_child(1)?, src)?;
    let body = stmt.child_by_field_name("consequence")?;
    let squeeze = |n: Node<'_>| -> String {
        text(n, src)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    let mut stored = Vec::new();
    let mut work = None;
    ast::walk(body, &mut |n| {
        if n.kind() == "assignment"
            && let Some(left) = n.child_by_field_name("left")
            && left.kind() == "subscript"
            && left
                .child_by_field_name("value")
                .and_then(|v| ast::dotted(v, src))
                .is_some_and(|d| d == memo)
            && let Some(key) = left.child_by_field_name("subscript")
        {
            stored.push(key);
        }
        if work.is_none()
            && n.kind() == "call"
            && let Some(f) = n.child_by_field_name("function")
        {
            work = ast::dotted(f, src);
        }
        !matches!(n.kind(), "function_definition" | "class_definition")
    });
    let first = *stored.first()?;
    if stored.iter().any(|&k| squeeze(k) == squeeze(tested)) {
        return None;
    }
    // A memo: the key stored is built from the one tested (`str(fmax) + '_' + ...` from
    // `fmax`). A test of one literal key and a store under another (`if "difficult" not
    // in gt: gt["used"] = True`) is two fields of a record.
    if tested.kind() == "string" || !stored.iter().all(|&k| holds_expr(k, tested, src)) {
        return None;
    }
    Some(Memo {
        test,
        memo,
        tested: text(tested, src).to_owned(),
        stored: text(first, src).to_owned(),
        work,
    })
}

/// An `if` that fills a memo the first time and finds it filled after: what its body
/// builds runs once per key (once per device and dtype, as HiFi-GAN's and VITS' mel basis
/// and window), not on every call. The test and the store must name the same slot:
/// - `if K not in D:` (or `if D.get(K) is None:`) storing `D[K] = ...`;
/// - `if not hasattr(O, "a"):` storing `O.a = ...`;
/// - `if O.a is None:` (or `if not O.a:`) storing `O.a = ...`: an attribute outlives the
///   call, a local name does not.
///
/// A memo tested under one key and filled under another is `cache-key-never-hits`.
pub(super) fn memo_fill(stmt: Node<'_>, src: &str) -> bool {
    if stmt.kind() != "if_statement" {
        return false;
    }
    if cache_refill(stmt, src) {
        return true;
    }
    let (Some(mut test), Some(body)) = (
        stmt.child_by_field_name("condition"),
        stmt.child_by_field_name("consequence"),
    ) else {
        return false;
    };
    while test.kind() == "parenthesized_expression" {
        let Some(inner) = test.named_child(0) else {
            return false;
        };
        test = inner;
    }
    let squeeze = |n: Node<'_>| -> String {
        text(n, src)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    // The slot the test asks about: (the memo, the key), the key empty for an attribute.
    let operator = |n: Node<'_>, op: &str| {
        let mut c = n.walk();
        n.children(&mut c).any(|o| o.kind() == op)
    };
    let slot: Option<(String, String)> = match test.kind() {
        "comparison_operator" if test.named_child_count() == 2 => {
            let (a, b) = (test.named_child(0), test.named_child(1));
            match (a, b) {
                (Some(k), Some(d)) if operator(test, "not in") => {
                    ast::dotted(d, src).map(|d| (d, squeeze(k)))
                }
                (Some(x), Some(none)) if operator(test, "is") && text(none, src) == "None" => {
                    if x.kind() == "call"
                        && ast::method(x, src) == Some("get")
                        && let Some(d) = ast::receiver(x).and_then(|r| ast::dotted(r, src))
                        && let Some(k) = ast::positional(x, 0)
                    {
                        Some((d, squeeze(k)))
                    } else if x.kind() == "attribute" {
                        ast::dotted(x, src).map(|a| (a, String::new()))
                    } else {
                        None
                    }
                }
                _ => None,
            }
        }
        "not_operator" => test.child_by_field_name("argument").and_then(|x| {
            if x.kind() == "attribute" {
                return ast::dotted(x, src).map(|a| (a, String::new()));
            }
            if x.kind() == "call"
                && x.child_by_field_name("function")
                    .is_some_and(|f| text(f, src) == "hasattr")
                && let (Some(o), Some(a)) = (ast::positional(x, 0), ast::positional(x, 1))
                && a.kind() == "string"
            {
                let name = text(a, src).trim_matches(|c| c == '"' || c == '\'');
                return ast::dotted(o, src).map(|o| (format!("{o}.{name}"), String::new()));
            }
            None
        }),
        _ => None,
    };
    let Some((memo, key)) = slot else {
        return false;
    };
    if emptied_elsewhere(stmt, &memo, src) {
        return false;
    }
    let mut stores = false;
    ast::walk(body, &mut |n| {
        if n.kind() == "assignment"
            && let Some(left) = n.child_by_field_name("left")
        {
            stores |= if key.is_empty() {
                ast::dotted(left, src).is_some_and(|d| d == memo)
            } else {
                left.kind() == "subscript"
                    && left
                        .child_by_field_name("value")
                        .and_then(|v| ast::dotted(v, src))
                        .is_some_and(|d| d == memo)
                    && left
                        .child_by_field_name("subscript")
                        .is_some_and(|k| squeeze(k) == key)
            };
        }
        !stores && !ast::is_scope(n)
    });
    stores
}

/// The part of a function after an early return on a filled memo: `if self.cos_cached is
/// not None and n <= self.cos_cached.shape[0]: return` (or `if self.table: return`), then
/// the code that builds and stores `self.cos_cached` (rotary embeddings' `_build_cache`).
/// It runs when the memo is empty or outgrown, not on every call; unless the file empties
/// the memo again outside `__init__`.
pub(super) fn memo_guarded_tail(def: Node<'_>, src: &str) -> Option<(usize, usize)> {
    let body = def.child_by_field_name("body")?;
    let mut c = body.walk();
    let stmts: Vec<Node<'_>> = body.named_children(&mut c).collect();
    for (i, stmt) in stmts.iter().enumerate() {
        if stmt.kind() != "if_statement" || stmt.child_by_field_name("alternative").is_some() {
            continue;
        }
        let (Some(test), Some(then)) = (
            stmt.child_by_field_name("condition"),
            stmt.child_by_field_name("consequence"),
        ) else {
            continue;
        };
        let mut tc = then.walk();
        let only_returns = then
            .named_children(&mut tc)
            .all(|n| n.kind() == "return_statement" || n.kind() == "comment");
        if !only_returns {
            continue;
        }
        // The memos the test finds filled: `self.a is not None`, or `self.a` itself, alone
        // or in an `and`.
        let mut filled: Vec<String> = Vec::new();
        let mut parts = vec![test];
        while let Some(p) = parts.pop() {
            match p.kind() {
                "boolean_operator" if text(p, src).contains(" and ") => {
                    parts.extend(p.child_by_field_name("left"));
                    parts.extend(p.child_by_field_name("right"));
                }
                "parenthesized_expression" => parts.extend(p.named_child(0)),
                "attribute" => filled.extend(ast::dotted(p, src)),
                "comparison_operator"
                    if text(p, src).contains("is not")
                        && p.named_child(1).is_some_and(|n| text(n, src) == "None") =>
                {
                    filled.extend(
                        p.named_child(0)
                            .filter(|x| x.kind() == "attribute")
                            .and_then(|x| ast::dotted(x, src)),
                    );
                }
                _ => {}
            }
        }
        let filled: Vec<String> = filled
            .into_iter()
            .filter(|m| m.starts_with("self."))
            .collect();
        let rest = &stmts[i + 1..];
        let (Some(first), Some(last)) = (rest.first(), rest.last()) else {
            return None;
        };
        let stores = filled.iter().any(|memo| {
            !emptied_elsewhere(*stmt, memo, src)
                && rest.iter().any(|r| {
                    let mut found = false;
                    ast::walk(*r, &mut |n| {
                        if n.kind() == "assignment"
                            && n.child_by_field_name("left")
                                .and_then(|l| ast::dotted(l, src))
                                .is_some_and(|d| d == *memo)
                        {
                            found = true;
                        }
                        !found && !ast::is_scope(n)
                    });
                    found
                })
        });
        return stores.then(|| (first.start_byte(), last.end_byte()));
    }
    None
}

/// `if x.shape[2] > self.pe.shape[1]: self.init_pe(...)`, `if seq_len >
/// self.max_cached: self._update_cache(seq_len)`: a cache on the module grown when an input
/// outgrows it (WaveGrad's positional encoding, rotary embeddings' tables). The test reads
/// an attribute of `self` that the body assigns, itself or through a method of the file
/// it calls; unless the file empties it again outside `__init__`, or the test compares the
/// training's progress (a step, an iteration, an epoch: that runs every step).
fn cache_refill(stmt: Node<'_>, src: &str) -> bool {
    let (Some(test), Some(body)) = (
        stmt.child_by_field_name("condition"),
        stmt.child_by_field_name("consequence"),
    ) else {
        return false;
    };
    // A test that asks for a refill: a comparison (`>`, `is None`, `!=`), or several
    // joined with `or`; not `is not None` (the filled case, which runs every call:
    // `if self.hidden is not None: self.hidden = self.hidden.detach()`).
    let mut refill = matches!(test.kind(), "comparison_operator" | "boolean_operator");
    ast::walk(test, &mut |n| {
        if !n.is_named() && matches!(text(n, src), "is not" | "and" | "not") {
            refill = false;
        }
        refill
    });
    // A test against the training's progress runs at every step or so, whatever it
    // stores (`if self.global_step > self._prev_log_step:`, wav2vec's logging).
    let progress = ["step", "iter", "epoch", "batch_idx", "count"];
    ast::walk(test, &mut |n| {
        if matches!(n.kind(), "identifier" | "attribute") {
            let t = text(n, src).to_ascii_lowercase();
            refill &= !progress.iter().any(|p| t.contains(p));
        }
        refill
    });
    if !refill {
        return false;
    }
    // The attributes of `self` the test reads (`self.pe` of `self.pe.shape[1]`).
    let mut read: Vec<String> = Vec::new();
    ast::walk(test, &mut |n| {
        if n.kind() == "attribute"
            && n.child_by_field_name("object")
                .is_some_and(|o| text(o, src) == "self")
        {
            read.push(text(n, src).to_owned());
        }
        !ast::is_scope(n)
    });
    if read.is_empty() {
        return false;
    }
    // Assigned in the body, or the methods of `self` it calls.
    let mut assigned: Vec<String> = Vec::new();
    let mut methods: Vec<String> = Vec::new();
    let collect = |scope: Node<'_>, assigned: &mut Vec<String>, methods: &mut Vec<String>| {
        ast::walk(scope, &mut |n| {
            if n.kind() == "assignment"
                && let Some(left) = n.child_by_field_name("left")
            {
                assigned.push(text(left, src).to_owned());
            }
            if n.kind() == "call"
                && let Some(f) = n.child_by_field_name("function")
                && let Some(m) = text(f, src).strip_prefix("self.")
                && !m.contains('.')
            {
                methods.push(m.to_owned());
            }
            n.id() == scope.id() || !ast::is_scope(n)
        });
    };
    collect(body, &mut assigned, &mut methods);
    if !methods.is_empty()
        && let Some(root) = root_of(stmt)
        && let Some(class) = ast::enclosing(root, stmt, "class_definition")
    {
        for m in &methods {
            for def in ast::methods(class, m, src) {
                let mut unused = Vec::new();
                collect(def, &mut assigned, &mut unused);
            }
        }
    }
    read.iter()
        .find(|r| assigned.contains(r))
        .is_some_and(|memo| !emptied_elsewhere(stmt, memo, src))
}

/// The root of `node`'s tree, climbing at most [`MAX_NESTING`] levels: each `parent()`
/// costs the depth (tree-sitter finds a parent from the root), so the climb is bounded for
/// generated code nested thousands deep; `None` past it.
///
/// [`MAX_NESTING`]: gpufeed_findings::constants::MAX_NESTING
fn root_of(node: Node<'_>) -> Option<Node<'_>> {
    let mut root = node;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        match root.parent() {
            Some(p) => root = p,
            None => return Some(root),
        }
    }
    None
}

/// Whether the file empties the memo `memo` outside `__init__` and outside the fill at
/// `stmt` (`self.prev_att = None` in a `reset_mem` called every batch, `cache.clear()`,
/// `del self.w`): then it is a cache for one batch or one utterance, filled again each
/// step, not once.
fn emptied_elsewhere(stmt: Node<'_>, memo: &str, src: &str) -> bool {
    // Too deep to tell (generated code): taken as emptied, so no memo is assumed.
    let Some(root) = root_of(stmt) else {
        return true;
    };
    let mut emptied = false;
    // The functions met so far (pre-order): the last one holding a node is its own.
    let mut functions: Vec<(usize, usize, bool)> = Vec::new();
    ast::walk(root, &mut |n| {
        if emptied {
            return false;
        }
        if n.kind() == "function_definition" {
            let init = n
                .child_by_field_name("name")
                .is_some_and(|name| text(name, src) == "__init__");
            functions.push((n.start_byte(), n.end_byte(), init));
        }
        let own = functions
            .iter()
            .rev()
            .find(|&&(a, b, _)| a <= n.start_byte() && n.end_byte() <= b);
        // What the module, a class body or `__init__` sets up is the empty memo itself.
        let setup = own.is_none_or(|&(_, _, init)| init);
        let inside_fill = stmt.start_byte() <= n.start_byte() && n.end_byte() <= stmt.end_byte();
        if setup || inside_fill {
            return true;
        }
        emptied |= match n.kind() {
            "assignment" => {
                n.child_by_field_name("left")
                    .and_then(|l| ast::dotted(l, src))
                    .is_some_and(|l| l == memo)
                    && n.child_by_field_name("right").is_some_and(|r| {
                        matches!(text(r, src), "None" | "{}" | "dict()" | "[]" | "False")
                    })
            }
            "call" => {
                ast::method(n, src) == Some("clear")
                    && ast::receiver(n)
                        .and_then(|r| ast::dotted(r, src))
                        .is_some_and(|r| r == memo)
            }
            "delete_statement" => text(n, src).contains(memo),
            _ => false,
        };
        true
    });
    emptied
}

/// True when `expr` holds a sub-expression written as `part` is.
fn holds_expr(expr: Node<'_>, part: Node<'_>, src: &str) -> bool {
    let want = text(part, src);
    let mut found = false;
    ast::walk(expr, &mut |n| {
        found |= n.kind() == part.kind() && text(n, src) == want;
        !found
    });
    found
}

/// Torch calls that build a tensor on the CPU unless given `device=`.
pub(super) fn is_host_factory(name: &str) -> bool {
    name.strip_prefix("torch.").is_some_and(|f| {
        matches!(
            f,
            "tensor"
                | "Tensor"
                | "FloatTensor"
                | "DoubleTensor"
                | "HalfTensor"
                | "LongTensor"
                | "IntTensor"
                | "BoolTensor"
                | "ByteTensor"
                | "from_numpy"
                | "as_tensor"
                | "zeros"
                | "ones"
                | "full"
                | "empty"
                | "arange"
                | "linspace"
                | "logspace"
                | "eye"
                | "rand"
                | "randn"
                | "randint"
                | "randperm"
                | "hann_window"
                | "hamming_window"
                | "blackman_window"
                | "bartlett_window"
                | "kaiser_window"
        )
    })
}

/// A tensor built on the host and copied to the GPU.
pub(super) struct HostTensor<'t> {
    /// The copy: `.cuda()`, `.to(device)`, `torch.tensor(data, device=d)`.
    pub(super) moved: Node<'t>,
    /// What built it: the factory's name (`torch.arange`), or the Python data.
    pub(super) made: String,
    /// The factory's call, where there is one.
    pub(super) factory: Option<Node<'t>>,
}

/// The host factory a node holds, with its call: a call of one (through tensor methods
/// on it: `torch.arange(t).unsqueeze(0)`), or a name last assigned one before `at`.
type Held<'t> = (String, Option<Node<'t>>);
/// A name, where its assignment ends, what it holds, and the branch block it is in
/// (an assignment in the `if` block says nothing of a use in the `else`).
type Assigned<'t> = (String, usize, Held<'t>, Option<(usize, usize)>);
/// Also through what keeps a host tensor on the host: `torch.cat` / `torch.stack` of
/// host tensors, a comparison or arithmetic of one (`(labels.unsqueeze(0) ==
/// labels.unsqueeze(1)).float()`, SimCLR's labels). Bounded: generated code nests deep.
fn made<'t>(
    n: Node<'t>,
    assigned: &[Assigned<'t>],
    file: &File<'t>,
    depth: u32,
) -> Option<Held<'t>> {
    let src = file.src;
    let mut n = n;
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        match n.kind() {
            "call" => {
                let name = file.names.callee(n, src).unwrap_or_default();
                if is_host_factory(&name) {
                    return ast::kwarg(n, "device", src)
                        .is_none()
                        .then_some((name, Some(n)));
                }
                // Moved already (`torch.arange(n).to(x.device).expand(...)`): on the
                // device from there on.
                if moves_to_device(n, src) {
                    return None;
                }
                // A table joined from host tables only: joined with the data
                // (`torch.cat((torch.zeros(n, 1), data))`) it is the data's move, and
                // so are conversions of data (`torch.stack([torch.from_numpy(a) ...])`).
                if matches!(name.as_str(), "torch.cat" | "torch.stack" | "torch.concat")
                    && depth < 4
                {
                    let parts = ast::positional(n, 0)?;
                    let items: Vec<Node<'t>> = match parts.kind() {
                        "list_comprehension" | "generator_expression" => {
                            parts.child_by_field_name("body").into_iter().collect()
                        }
                        "list" | "tuple" => {
                            let mut c = parts.walk();
                            parts.named_children(&mut c).collect()
                        }
                        _ => Vec::new(),
                    };
                    let tables: Vec<Held<'t>> = items
                        .iter()
                        .filter_map(|&i| made(i, assigned, file, depth + 1))
                        .filter(|(f, _)| !f.is_empty() && !is_conversion(f))
                        .collect();
                    return (!items.is_empty() && tables.len() == items.len())
                        .then(|| tables.into_iter().next())
                        .flatten();
                }
                // A torch function of a host tensor keeps it on the host:
                // `torch.bernoulli(torch.tensor(p))` (stochastic depth's coin).
                if name.starts_with("torch.")
                    && name.matches('.').count() == 1
                    && depth < 4
                    && let Some(first) = ast::positional(n, 0)
                {
                    return made(first, assigned, file, depth + 1).filter(|(f, _)| !f.is_empty());
                }
                n = ast::receiver(n)?;
            }
            "identifier" => {
                let (id, at) = (text(n, src), n.start_byte());
                return assigned
                    .iter()
                    .rev()
                    .find(|(name, end, _, block)| {
                        name == id && *end <= at && block.is_none_or(|(a, b)| a <= at && at < b)
                    })
                    .map(|(_, _, made, _)| made.clone());
            }
            "parenthesized_expression" => n = n.named_child(0)?,
            "comparison_operator" | "binary_operator" if depth < 4 => {
                let mut c = n.walk();
                let parts: Vec<Node<'t>> = n.named_children(&mut c).collect();
                return parts
                    .into_iter()
                    .find_map(|p| made(p, assigned, file, depth + 1))
                    .filter(|(f, _)| !f.is_empty());
            }
            _ => return None,
        }
    }
    None
}

/// The moves to the GPU in `def` (`.cuda()`, `.to(device)`, `.type_as(x)`) of a tensor
/// built on the CPU in the same function: the move, and the call that built it. Run on
/// every `forward` here, and by the project pass on the functions a step reaches.
pub(super) fn host_tensors_moved<'t>(def: Node<'t>, file: &File<'t>) -> Vec<HostTensor<'t>> {
    let src = file.src;
    let Some(body) = def.child_by_field_name("body") else {
        return Vec::new();
    };
    let made = |n: Node<'t>, assigned: &[Assigned<'t>]| made(n, assigned, file, 0);
    let cuda_aliases = cuda_type_aliases(file);
    // `if reverse:` on `reverse=False`: the inference path of `forward`; `if lengths is
    // None:` on `lengths=None`: what a caller leaving it out gets.
    let mut off = crate::loops::off_branches(def, src, true);
    // What follows `if self.cache is not None and ...: return` fills the memo once.
    off.extend(memo_guarded_tail(def, src));
    let mut assigned: Vec<Assigned<'t>> = Vec::new();
    // The branch blocks around the node visited, innermost last (blocks nest or are
    // disjoint, and the walk is in source order).
    let mut open: Vec<(usize, usize)> = Vec::new();
    // Names holding a NumPy array (`k = _setup_kernel(k) * gain` with `_setup_kernel`
    // returning `np.outer(...)`): `torch.tensor(k, device=d)` copies it to the GPU.
    let mut arrays: HashSet<&str> = HashSet::new();
    // Names holding a tensor a factory built on the device (`gain = torch.ones(7,
    // device=d)`).
    let mut on_device: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    ast::walk(body, &mut |n| {
        if off
            .iter()
            .any(|&(a, b)| a <= n.start_byte() && n.end_byte() <= b)
        {
            return false;
        }
        while open.last().is_some_and(|&(_, end)| end <= n.start_byte()) {
            open.pop();
        }
        // From the branch itself: asking each block for its parent costs the depth of the
        // tree (tree-sitter finds a parent from the root).
        if matches!(n.kind(), "if_statement" | "elif_clause" | "else_clause") {
            let mut c = n.walk();
            if let Some(block) = n.children(&mut c).find(|b| b.kind() == "block") {
                open.push((block.start_byte(), block.end_byte()));
            }
        }
        match n.kind() {
            "function_definition" | "class_definition" | "lambda" => return false,
            "if_statement" if memo_fill(n, src) => return false,
            "assignment" => {
                // `gain[2:6] = torch.tensor(p.shape)[[3, 2, 3, 2]]` into `gain =
                // torch.ones(7, device=d)`: a slice of a device tensor set from a host one
                // copies it to the GPU (PyTorch-YOLOv3's loss, every step).
                if let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) && left.kind() == "subscript"
                    && left.child_by_field_name("value").is_some_and(|v| {
                        v.kind() == "identifier" && on_device.contains(text(v, src))
                    })
                    && let Some((factory, call)) = {
                        // `torch.tensor(shape)[[3, 2, 3, 2]]`: an index of a host tensor.
                        let mut r = right;
                        while r.kind() == "subscript"
                            && let Some(v) = r.child_by_field_name("value")
                        {
                            r = v;
                        }
                        made(r, &assigned)
                    }
                    && !factory.is_empty()
                {
                    out.push(HostTensor {
                        moved: n,
                        made: factory,
                        factory: call,
                    });
                }
                if let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) && left.kind() == "identifier"
                {
                    // A tensor a factory builds on the device (`torch.ones(7, device=d)`,
                    // cast or reshaped: `.long()`).
                    let mut made_by = right;
                    while let Some(
                        "long" | "float" | "int" | "half" | "double" | "bool" | "view" | "reshape"
                        | "unsqueeze" | "squeeze" | "contiguous",
                    ) = ast::method(made_by, src)
                        && let Some(r) = ast::receiver(made_by)
                    {
                        made_by = r;
                    }
                    let device_factory = made_by.kind() == "call"
                        && is_host_factory(&file.names.callee(made_by, src).unwrap_or_default())
                        && ast::kwarg(made_by, "device", src).is_some();
                    if device_factory {
                        on_device.insert(text(left, src));
                    } else {
                        on_device.remove(text(left, src));
                    }
                    if numpy_value(right, file, &arrays, 0) {
                        arrays.insert(text(left, src));
                    } else {
                        arrays.remove(text(left, src));
                    }
                    // A later assignment of the name to anything else ends what it held.
                    let held = made(right, &assigned).unwrap_or((String::new(), None));
                    assigned.push((
                        text(left, src).to_owned(),
                        n.end_byte(),
                        held,
                        open.last().copied(),
                    ));
                }
            }
            "call" if moves_to_device(n, src) => {
                out.extend(moved_host_tensor(n, file, &assigned));
            }
            // Host data copied to the device in one call: `torch.tensor([..], device=d)`,
            // `x.new_tensor(frames)` with `frames` built on the CPU (Conv-TasNet's decoder),
            // `tokens.new([sos_id])`,
            // `torch.cuda.FloatTensor(np.ones(n))` or its alias (`Tensor =
            // torch.cuda.FloatTensor`, as PyTorch-GAN's scripts build their labels).
            "call" => out.extend(copied_host_data(n, file, &assigned, &arrays, &cuda_aliases)),
            _ => {}
        }
        true
    });
    out
}

/// `.to(device)`, `.cuda()` or `.type_as(t)` of a tensor built on the host (`assigned`:
/// what each name last held), unless the target is itself on the host.
fn moved_host_tensor<'t>(
    n: Node<'t>,
    file: &File<'t>,
    assigned: &[Assigned<'t>],
) -> Option<HostTensor<'t>> {
    let src = file.src;
    // `.to(coin.device)` / `.type_as(coin)` with `coin` itself built on the host:
    // from the CPU to the CPU, nothing reaches the GPU.
    let target = match ast::method(n, src) {
        Some("type_as") => ast::positional(n, 0),
        // `.type(coin.type())`: coin's own type string, device included.
        Some("type") => ast::positional(n, 0).and_then(|a| type_of_tensor(a, src)),
        _ => ast::kwarg(n, "device", src)
            .or_else(|| ast::positional(n, 0))
            .filter(|a| a.kind() == "attribute")
            .filter(|a| {
                a.child_by_field_name("attribute")
                    .is_some_and(|d| text(d, src) == "device")
            })
            .and_then(|a| a.child_by_field_name("object")),
    };
    let to_host =
        target.is_some_and(|t| made(t, assigned, file, 0).is_some_and(|(f, _)| !f.is_empty()));
    if to_host {
        return None;
    }
    let r = ast::receiver(n)?;
    if let Some((factory, call)) = made(r, assigned, file, 0)
        && !factory.is_empty()
    {
        return Some(HostTensor {
            moved: n,
            made: factory,
            factory: call,
        });
    }
    // A helper of the same file that builds a table on the host and returns it
    // (`make_mask(n).cuda()`, `self.positions(n).float().to(x.device)`), one level: looked
    // for only at a move, as it walks the helper.
    let mut r = r;
    for _ in 0..4 {
        if r.kind() != "call" {
            return None;
        }
        if let Some((factory, call)) = helper_table(r, file) {
            return Some(HostTensor {
                moved: n,
                made: factory,
                factory: call,
            });
        }
        r = ast::receiver(r)?;
    }
    None
}

/// Host data copied to the device in one call (see [`host_tensors_moved`]): `arrays` are the
/// names holding NumPy arrays, `cuda_aliases` the file's names for CUDA tensor types.
fn copied_host_data<'t>(
    n: Node<'t>,
    file: &File<'t>,
    assigned: &[Assigned<'t>],
    arrays: &HashSet<&str>,
    cuda_aliases: &HashSet<String>,
) -> Option<HostTensor<'t>> {
    let src = file.src;
    let host_data = |a: Node<'t>| -> Option<Held<'t>> {
        // `torch.tensor(p.shape, device=d)`: a tensor's shape is a tuple on the host.
        if (a.kind() == "attribute"
            && a.child_by_field_name("attribute")
                .is_some_and(|f| text(f, src) == "shape"))
            || (a.kind() == "call" && ast::method(a, src) == Some("size") && ast::arg_count(a) == 0)
        {
            return Some(("a tensor's shape (a tuple on the host)".to_owned(), None));
        }
        // `torch.tensor([], device=d)`: an empty tensor made on the device, nothing copied.
        if matches!(a.kind(), "list" | "tuple") && a.named_child_count() == 0 {
            return None;
        }
        if matches!(a.kind(), "list" | "tuple" | "list_comprehension") {
            return Some((format!("the Python {}", a.kind().replace('_', " ")), None));
        }
        // `list(permutations(range(C)))` (Conv-TasNet's PIT loss, every step).
        if a.kind() == "call"
            && let Some(builtin @ ("list" | "tuple")) =
                a.child_by_field_name("function").map(|f| text(f, src))
            && !file.names.imports(builtin)
        {
            return Some((format!("the Python {builtin}"), None));
        }
        if a.kind() == "call"
            && let Some(numpy) = file
                .names
                .callee(a, src)
                .filter(|c| c.starts_with("numpy."))
        {
            return Some((numpy, Some(a)));
        }
        if a.kind() == "identifier" && arrays.contains(text(a, src)) {
            return Some((format!("the NumPy array `{}`", text(a, src)), None));
        }
        made(a, assigned, file, 0).filter(|(f, _)| !f.is_empty())
    };
    let name = file.names.callee(n, src).unwrap_or_default();
    let copies = (matches!(name.as_str(), "torch.tensor" | "torch.as_tensor")
        && ast::kwarg(n, "device", src).is_some())
        || ast::method(n, src) == Some("new_tensor")
        // The legacy `tokens.new([sos_id])` (Speech-Transformer's decoder); not
        // a module's `new` (`Image.new`, `hashlib.new`).
        || (ast::method(n, src) == Some("new")
            && ast::receiver(n).is_some_and(|r| {
                let head = text(r, src).split('.').next().unwrap_or("");
                !file.names.imports(head)
            }))
        || is_cuda_type(&name)
        || cuda_aliases.contains(name.as_str());
    let copied = copies
        .then(|| ast::positional(n, 0).and_then(host_data))
        .flatten();
    copied.map(|(what, call)| HostTensor {
        moved: n,
        made: what,
        factory: call,
    })
}

/// A NumPy array, from how it is made: a `numpy` call (`np.outer(k, k)`), a method or
/// arithmetic of one (`.astype(np.float32)`, `k * gain`), a name holding one, or a call
/// of a function of the same file that returns one (`_setup_kernel(k)`, one level).
fn numpy_value(node: Node<'_>, file: &File<'_>, arrays: &HashSet<&str>, depth: u32) -> bool {
    let src = file.src;
    match node.kind() {
        "identifier" => arrays.contains(text(node, src)),
        "parenthesized_expression" => node
            .named_child(0)
            .is_some_and(|n| numpy_value(n, file, arrays, depth)),
        "binary_operator" => [
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ]
        .into_iter()
        .flatten()
        .any(|side| numpy_value(side, file, arrays, depth)),
        "call" => {
            let callee = file.names.callee(node, src).unwrap_or_default();
            if callee.starts_with("numpy.") {
                return true;
            }
            if let Some(m) = ast::method(node, src) {
                return matches!(m, "astype" | "reshape" | "copy" | "flatten" | "ravel" | "T")
                    && ast::receiver(node).is_some_and(|r| numpy_value(r, file, arrays, depth));
            }
            depth == 0
                && file
                    .functions
                    .get(callee.as_str())
                    .is_some_and(|defs| defs.iter().any(|&d| returns_numpy(d, file)))
        }
        _ => false,
    }
}

/// The host table a call of a function of the same file returns (`make_mask(n)` with
/// `return torch.ones(n, n).triu()`; `self.positions(n)`, a method of that name): every
/// `return` of every definition of the name gives one built by a torch factory without
/// `device=`, directly or through a name. A conversion of data the helper was given
/// (`torch.tensor(lengths)`) is the data's copy, not a table, and does not count.
fn helper_table<'t>(call: Node<'t>, file: &File<'t>) -> Option<Held<'t>> {
    let src = file.src;
    let function = call.child_by_field_name("function")?;
    let name = match function.kind() {
        "identifier" => text(function, src),
        "attribute"
            if function
                .child_by_field_name("object")
                .is_some_and(|o| text(o, src) == "self") =>
        {
            text(function.child_by_field_name("attribute")?, src)
        }
        _ => return None,
    };
    let defs = file.functions.get(name)?;
    let mut first = None;
    for &def in defs {
        let body = def.child_by_field_name("body")?;
        let mut assigned: Vec<Assigned<'t>> = Vec::new();
        let mut returns = 0;
        let mut all = true;
        ast::walk(body, &mut |n| {
            if ast::is_scope(n) || !all {
                return false;
            }
            if n.kind() == "assignment"
                && let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                )
                && left.kind() == "identifier"
            {
                let held = made(right, &assigned, file, 1).unwrap_or((String::new(), None));
                assigned.push((text(left, src).to_owned(), n.end_byte(), held, None));
            }
            if n.kind() == "return_statement" {
                returns += 1;
                let held = n
                    .named_child(0)
                    .and_then(|v| made(v, &assigned, file, 1))
                    .filter(|(f, _)| !f.is_empty() && !is_conversion(f));
                match held {
                    Some(h) => {
                        first.get_or_insert(h);
                    }
                    None => all = false,
                }
            }
            true
        });
        if returns == 0 || !all {
            return None;
        }
    }
    // Rendered in backticks by the messages: "`torch.ones` in `make_mask` builds ...".
    first.map(|(factory, at)| (format!("{factory}` in `{name}"), at))
}

/// Whether function `def` returns a NumPy array (a name it assigned one, or a `numpy`
/// call).
fn returns_numpy(def: Node<'_>, file: &File<'_>) -> bool {
    let src = file.src;
    let Some(body) = def.child_by_field_name("body") else {
        return false;
    };
    let mut arrays: HashSet<&str> = HashSet::new();
    let mut returns = false;
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "identifier"
            && numpy_value(right, file, &arrays, 1)
        {
            arrays.insert(text(left, src));
        }
        if n.kind() == "return_statement"
            && let Some(v) = n.named_child(0)
        {
            returns |= numpy_value(v, file, &arrays, 1);
        }
        !returns
    });
    returns
}

/// Factories that convert data they are given (`torch.from_numpy(a)`, `torch.tensor(x)`,
/// the tensor types such as `torch.Tensor` and `torch.cuda.FloatTensor`) rather than make a
/// table of their own (`torch.arange(n)`).
pub(super) fn is_conversion(name: &str) -> bool {
    matches!(
        name,
        "torch.from_numpy" | "torch.tensor" | "torch.as_tensor"
    ) || name.ends_with("Tensor")
}

/// `torch.cuda.FloatTensor` and the other legacy CUDA tensor types: called with data, they
/// copy it to the GPU.
fn is_cuda_type(name: &str) -> bool {
    name.strip_prefix("torch.cuda.")
        .is_some_and(|t| t.ends_with("Tensor") && !t.contains('.'))
}

/// Module-level names bound to a CUDA tensor type, on either side of a conditional
/// (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`).
fn cuda_type_aliases(file: &File<'_>) -> std::collections::HashSet<String> {
    let src = file.src;
    let mut out = std::collections::HashSet::new();
    let mut c = file.root.walk();
    for stmt in file.root.named_children(&mut c) {
        let Some(a) = stmt
            .named_child(0)
            .filter(|a| stmt.kind() == "expression_statement" && a.kind() == "assignment")
        else {
            continue;
        };
        let (Some(left), Some(right)) = (
            a.child_by_field_name("left"),
            a.child_by_field_name("right"),
        ) else {
            continue;
        };
        let mut sides = vec![right];
        if right.kind() == "conditional_expression" {
            let mut rc = right.walk();
            sides = right.named_children(&mut rc).collect();
        }
        let cuda = sides.iter().any(|&n| {
            matches!(n.kind(), "attribute" | "identifier")
                && ast::dotted(n, src).is_some_and(|d| is_cuda_type(&file.names.resolve(&d)))
        });
        if left.kind() == "identifier" && cuda {
            out.insert(text(left, src).to_owned());
        }
    }
    out
}

/// `t` in `t.type()`: the type string of a tensor, which names its device
/// (`torch.cuda.FloatTensor`).
fn type_of_tensor<'t>(arg: Node<'t>, src: &str) -> Option<Node<'t>> {
    (arg.kind() == "call"
        && ast::method(arg, src) == Some("type")
        && ast::positional(arg, 0).is_none())
    .then(|| ast::receiver(arg))
    .flatten()
}

/// `.cuda()`, `.type_as(x)`, `.type(x.type())` or `.type(torch.cuda.FloatTensor)`, or
/// `.to(...)` with a device (not only a dtype).
fn moves_to_device(call: Node<'_>, src: &str) -> bool {
    match ast::method(call, src) {
        Some("cuda" | "type_as") => true,
        Some("type") => ast::positional(call, 0)
            .is_some_and(|a| type_of_tensor(a, src).is_some() || text(a, src).contains("cuda")),
        Some("to") => {
            if ast::kwarg(call, "device", src).is_some() {
                return true;
            }
            // `.to(torch.float16)` or `.to(x.dtype)` changes only the dtype.
            ast::positional(call, 0).is_some_and(|a| {
                let t = text(a, src);
                let dtype = t.contains("dtype")
                    || (t.starts_with("torch.")
                        && !t.starts_with("torch.device")
                        && !t.starts_with("torch.cuda"));
                !dtype
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    #[test]
    fn memo_keys() {
        let bad = "\
mel_basis = {}
def mel(y, fmax):
    if fmax not in mel_basis:
        mel_basis[str(fmax) + '_' + str(y.device)] = make(fmax)
    return mel_basis[str(fmax) + '_' + str(y.device)]
";
        assert_eq!(ids(bad), vec![("cache-key-never-hits", 3)]);
        let good = "\
cache = {}
def mel(y, fmax):
    key = f'{fmax}_{y.device}'
    if key not in cache:
        cache[key] = make(fmax)
    if (fmax) not in self.memo:
        self.memo[ fmax ] = 1
    if fmax not in seen:
        print(fmax)
    if 'difficult' not in match:
        match['used'] = True
    if name not in table:
        table[other] = 1
    return cache[key]
";
        assert_eq!(ids(good), vec![]);
    }

    #[test]
    fn host_tensors_in_forward() {
        let bad = "\
import torch
class M(torch.nn.Module):
    def forward(self, x, lengths):
        ids = torch.arange(x.size(1)).unsqueeze(0).to(x.device)
        table = torch.tensor(self.table)
        table = table.cuda()
        ones = torch.ones(3).type_as(x)
        w = torch.tensor([1.0, 2.0], device=x.device)
        frame = torch.arange(0, x.size(1) * 2).unfold(0, 2, 1)
        frame = x.new_tensor(frame).long()
        sos = x.new([self.sos_id])
        empty = torch.tensor([], device=x.device, dtype=torch.int64)
        gains = [torch.tensor(p.shape, device=x.device)[[3, 2, 3, 2]] for p in lengths]
        mask = torch.ones(x.size(0)).type(x.type())
        eye = torch.eye(4).type(torch.cuda.FloatTensor)
        return x
";
        assert_eq!(
            ids(bad),
            vec![
                ("host-tensor-in-forward", 4),
                ("host-tensor-in-forward", 6),
                ("host-tensor-in-forward", 7),
                ("host-tensor-in-forward", 8),
                ("host-tensor-in-forward", 10),
                ("host-tensor-in-forward", 11),
                ("host-tensor-in-forward", 13),
                ("host-tensor-in-forward", 14),
                ("host-tensor-in-forward", 15),
            ]
        );
        let good = "\
import torch
from PIL import Image
class M(torch.nn.Module):
    def forward(self, x):
        ids = torch.arange(x.size(1), device=x.device)
        y = torch.zeros(3).to(torch.float16)
        z = x.float().to(dtype=torch.half)
        t = torch.tensor(1.0)
        t = x * 2
        t = t.cuda()
        u = torch.as_tensor(x, device=x.device)
        v = x.new_tensor(x.detach())
        img = Image.new('RGB', (2, 2))
        f = torch.ones(3).type(torch.FloatTensor)
        g = torch.ones(3).type(f.type())
        h = x.type(torch.cuda.HalfTensor)
        return x
def prepare(x):
    return torch.tensor(x).cuda()
";
        assert_eq!(ids(good), vec![]);
    }
}
