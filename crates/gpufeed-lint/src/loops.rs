//! Training-loop rules: `host-sync-in-loop`, `cuda-sync-in-loop`, `sleep-in-loop`.
//!
//! A training loop is the innermost `for`/`while` whose own body (not a nested loop's,
//! function's or class's) makes a step: `.backward()`, `optimizer.step()`,
//! `.apply_gradients()`, `tape.gradient()`, `.minimize()`, `train_on_batch()`, a call of
//! a `*train_step*` function or of a helper given the loss first and the optimizer
//! (`loss_scaler(loss, optimizer)`). The rules then look at the whole loop body (nested
//! blocks and loops included: they run at least once per step), except code under an `if`
//! whose condition uses `%`, which runs every N steps (`if step % 100 == 0:
//! print(loss.item())` is the recommended way to log).

use std::collections::HashSet;

use tree_sitter::Node;

use super::ast::{self, text};
use super::defaults;

/// The call that makes a loop a training loop, if this is one.
pub(super) fn step_call(call: Node<'_>, src: &str, names: &ast::Names) -> bool {
    match ast::method(call, src) {
        Some(
            "backward" | "manual_backward" | "apply_gradients" | "minimize" | "train_on_batch",
        ) => return true,
        Some("step") => return steps_optimizer(call, src),
        Some("gradient") => {
            return ast::receiver(call)
                .is_some_and(|r| text(r, src).to_ascii_lowercase().contains("tape"));
        }
        _ => {}
    }
    if backward_helper(call, src) {
        return true;
    }
    names.callee(call, src).is_some_and(|n| {
        let last = n.rsplit('.').next().unwrap_or(&n).to_ascii_lowercase();
        names_a_step(&last, "train_step") || names_a_step(&last, "training_step")
    })
}

/// `loss_scaler(loss, optimizer, clip_grad=...)`: a helper given the loss first and the
/// optimizer, which runs the backward pass and the step inside (timm's and DeiT's
/// `NativeScaler.__call__`, apex-style `backward(loss, opt)` helpers).
fn backward_helper(call: Node<'_>, src: &str) -> bool {
    let named = |a: Node<'_>, word: &str| {
        a.kind() == "identifier" && text(a, src).to_ascii_lowercase().contains(word)
    };
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut c = args.walk();
    let args: Vec<Node<'_>> = args.named_children(&mut c).collect();
    args.first().is_some_and(|a| named(*a, "loss"))
        && args.iter().skip(1).any(|a| {
            let value = a.child_by_field_name("value").unwrap_or(*a);
            named(value, "optim")
        })
}

/// `word` in a function's name as a word of its own: `train_step`, `distributed_train_step`,
/// `train_step_fn`; not a count of steps (`get_train_steps`).
fn names_a_step(name: &str, word: &str) -> bool {
    name.match_indices(word).any(|(at, _)| {
        !name[at + word.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
    })
}

/// `optimizer.step()`, `scaler.step(opt)`: `.step()` on a receiver named like an optimizer
/// or a scaler, not a scheduler.
fn steps_optimizer(call: Node<'_>, src: &str) -> bool {
    ast::method(call, src) == Some("step")
        && ast::receiver(call).is_some_and(|r| {
            let recv = text(r, src).to_ascii_lowercase();
            (recv.contains("opt") || recv.contains("scaler")) && !recv.contains("sched")
        })
}

/// A loop of a benchmarking helper that times a module's forward and backward passes on
/// purpose: in a function named for it (`profile`, `benchmark`, `bench_*`, `measure_*`,
/// `time_*`, `*_speed`), with no optimizer step anywhere in the function. Its syncs are the
/// timing, and it trains nothing (yolov5's and yolov7's `profile()` in `torch_utils.py`,
/// which no training code calls).
pub(super) fn benchmark_loop(root: Node<'_>, lp: Node<'_>, src: &str) -> bool {
    let Some(def) = ast::enclosing(root, lp, "function_definition") else {
        return false;
    };
    let name = def
        .child_by_field_name("name")
        .map_or(String::new(), |n| text(n, src).to_ascii_lowercase());
    let timing = name.split('_').any(|w| {
        matches!(
            w,
            "profile" | "benchmark" | "bench" | "measure" | "timeit" | "speed"
        )
    }) || name.starts_with("time_");
    if !timing {
        return false;
    }
    let mut steps = false;
    ast::walk(def, &mut |n| {
        steps |= n.kind() == "call"
            && (steps_optimizer(n, src) || ast::method(n, src) == Some("zero_grad"));
        !steps
    });
    !steps
}

/// Calls in a loop's own body: not in nested loops, functions, classes or lambdas.
pub(super) fn own_calls<'t>(body: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) || matches!(n.kind(), "for_statement" | "while_statement") {
            return false;
        }
        if n.kind() == "call" {
            out.push(n);
        }
        true
    });
    out
}

/// `t.cuda()`, `t.to(device)` (or `non_blocking=True`), and a list, tuple or list
/// comprehension of them: tensors put on the GPU.
fn moved_to_device(node: Node<'_>, src: &str) -> bool {
    match node.kind() {
        "call" => match ast::method(node, src) {
            Some("cuda") => true,
            Some("to") => {
                ast::kwarg(node, "non_blocking", src).is_some_and(ast::is_true)
                    || ast::positional(node, 0)
                        .or_else(|| ast::kwarg(node, "device", src))
                        .is_some_and(|d| names_a_device(d, src))
            }
            _ => false,
        },
        // `x, lengths = x.cuda(), lengths.cuda()`: the right side is an expression list.
        "list" | "tuple" | "expression_list" => {
            let mut c = node.walk();
            let items: Vec<Node<'_>> = node.named_children(&mut c).collect();
            !items.is_empty() && items.iter().all(|i| moved_to_device(*i, src))
        }
        "list_comprehension" | "generator_expression" => node
            .child_by_field_name("body")
            .is_some_and(|b| moved_to_device(b, src)),
        _ => false,
    }
}

/// Each target of `for left in right` with the iterable it takes its elements from:
/// `for n in xs`, `for i, n in enumerate(xs)` (`n` from `xs`), `for a, b in zip(xs, ys)`.
fn element_sources<'t>(left: Node<'t>, right: Node<'t>, src: &str) -> Vec<(Node<'t>, Node<'t>)> {
    let targets: Vec<Node<'_>> = if left.kind() == "identifier" {
        vec![left]
    } else {
        let mut c = left.walk();
        left.named_children(&mut c).collect()
    };
    let mut pairs = Vec::new();
    if let [one] = targets.as_slice() {
        pairs.push((*one, right));
    }
    if right.kind() == "call"
        && let Some(f) = right.child_by_field_name("function")
        && let Some(args) = right.child_by_field_name("arguments")
    {
        let mut c = args.walk();
        let args: Vec<Node<'_>> = args.named_children(&mut c).collect();
        match text(f, src) {
            "zip" if args.len() == targets.len() => {
                pairs.extend(targets.iter().copied().zip(args.iter().copied()));
            }
            "enumerate" if targets.len() == 2 && !args.is_empty() => {
                pairs.push((targets[1], args[0]));
            }
            _ => {}
        }
    }
    pairs.retain(|(t, _)| t.kind() == "identifier");
    pairs
}

/// Adds the targets of a loop over a device tensor: each element is a 0-d device tensor
/// (`for n in lengths`, `for i, n in enumerate(lengths)`, `for p, n in zip(preds,
/// lengths)`: the target at the tensor's place), which a slice bound reads on the host.
fn iterated_device_tensors(
    left: Node<'_>,
    right: Node<'_>,
    src: &str,
    names: &mut HashSet<String>,
) {
    let device = |n: Node<'_>| n.kind() == "identifier" && holds_device_tensor(text(n, src), names);
    // The elements of a host value are on the host too (`for n in lengths.cpu()`).
    let host = |n: Node<'_>| on_host(n, src, names);
    let pairs = element_sources(left, right, src);
    let marks: Vec<String> = pairs
        .into_iter()
        .flat_map(|(t, from)| {
            let name = text(t, src);
            if device(from) {
                vec![name.to_owned(), device_mark(name)]
            } else if host(from) {
                vec![host_mark(name)]
            } else {
                Vec::new()
            }
        })
        .collect();
    names.extend(marks);
}

/// Marks a loop's counters as host values: `for step in range(n)`, the index of `for i,
/// batch in enumerate(loader)`.
fn counters(left: Node<'_>, right: Node<'_>, src: &str, names: &mut HashSet<String>) {
    if right.kind() != "call" {
        return;
    }
    let counter = match right.child_by_field_name("function").map(|f| text(f, src)) {
        Some("range") if left.kind() == "identifier" => Some(left),
        Some("enumerate") if matches!(left.kind(), "pattern_list" | "tuple_pattern") => {
            left.named_child(0).filter(|t| t.kind() == "identifier")
        }
        _ => None,
    };
    if let Some(c) = counter {
        names.insert(host_mark(text(c, src)));
    }
}

/// Adds the targets of `for k, v in x.items()` (also `.values()`, and comprehensions)
/// when `x` holds tensors: the step's loss dict, iterated; and the elements of a device
/// tensor iterated ([`iterated_device_tensors`]).
fn iterated_tensors(body: Node<'_>, src: &str, names: &mut HashSet<String>) {
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) && n.id() != body.id() {
            return false;
        }
        if matches!(n.kind(), "for_statement" | "for_in_clause")
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
        {
            iterated_device_tensors(left, right, src, names);
            let source = if right.kind() == "call"
                && matches!(ast::method(right, src), Some("items" | "values"))
            {
                ast::receiver(right)
            } else {
                Some(right)
            };
            if source.is_some_and(|x| tensor_like(x, src, names)) {
                let mut targets = Vec::new();
                ast::walk(left, &mut |t| {
                    if t.kind() == "identifier" {
                        targets.push(text(t, src).to_owned());
                    }
                    true
                });
                // `for k, v in d.items()`: the value, not the key.
                let skip =
                    usize::from(right.kind() == "call" && ast::method(right, src) == Some("items"));
                names.extend(targets.into_iter().skip(skip));
            }
        }
        true
    });
}

/// Names that hold tensors in this loop: receivers of `.backward()`, names like a loss or
/// an output, and targets assigned from a call of a model, net, criterion or loss.
pub(super) fn tensor_names(body: Node<'_>, src: &str) -> HashSet<String> {
    tensor_names_from(body, src, HashSet::new())
}

/// [`tensor_names`] of a loop, its own counters marked as host values first.
pub(super) fn loop_tensor_names(lp: Node<'_>, src: &str) -> HashSet<String> {
    let mut seed = HashSet::new();
    if let (Some(left), Some(right)) = (
        lp.child_by_field_name("left"),
        lp.child_by_field_name("right"),
    ) {
        counters(left, right, src, &mut seed);
    }
    match lp.child_by_field_name("body") {
        Some(body) => tensor_names_from(body, src, seed),
        None => seed,
    }
}

fn tensor_names_from(body: Node<'_>, src: &str, seed: HashSet<String>) -> HashSet<String> {
    let mut names = seed;
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        // Counters first: the walk reaches a loop before the statements of its body.
        if n.kind() == "for_statement"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
        {
            counters(left, right, src, &mut names);
        }
        // `mask = x > 0`, `keep = ~pad.bool()`: a boolean mask, whatever else it is.
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "identifier"
        {
            // A name assigned anything else is not a mask, whatever it is called
            // (`mask = np.where(row)[0]`: indices).
            let name = text(left, src);
            // `perm = random.sample(range(n), n)`, `unperm = [0] * n`: a Python list.
            if python_list(right, src, &names) {
                names.insert(list_mark(name));
            } else {
                names.remove(&list_mark(name));
            }
            if mask_like(right, src, &names) {
                names.insert(mask_mark(name));
                names.remove(&not_mask_mark(name));
            } else {
                names.insert(not_mask_mark(name));
                names.remove(&mask_mark(name));
            }
        }
        // `top1 += prec` with `prec` a tensor: `top1` holds a tensor from then on;
        // `train_loss += loss.item()`: a float, whatever it is called.
        if n.kind() == "augmented_assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "identifier"
        {
            if host_container(right, src, &names) {
                names.insert(host_mark(text(left, src)));
            } else if right.kind() == "identifier" && holds_tensor(text(right, src), &names) {
                names.insert(text(left, src).to_owned());
            }
        }
        match n.kind() {
            "call" if ast::method(n, src) == Some("backward") => {
                if let Some(r) = ast::receiver(n) {
                    names.insert(text(r, src).to_owned());
                    names.insert(device_mark(text(r, src)));
                }
            }
            "assignment" if assigns_host_value(n, src, &names) => {
                if let Some(left) = n.child_by_field_name("left")
                    && left.kind() == "identifier"
                {
                    names.insert(host_mark(text(left, src)));
                }
            }
            // `x = x.cuda()`, `a, b = [t.to(device) for t in batch]`: device tensors; and
            // `texts, lengths = batch` after `batch = [b.to(device) for b in batch]` (the
            // parts of a name holding device tensors, StyleTTS' trainers).
            "assignment"
                if n.child_by_field_name("right").is_some_and(|r| {
                    moved_to_device(r, src)
                        || (r.kind() == "identifier"
                            && holds_device_tensor(text(r, src), &names)
                            && n.child_by_field_name("left").is_some_and(|l| {
                                matches!(
                                    l.kind(),
                                    "pattern_list" | "tuple_pattern" | "list_pattern"
                                )
                            }))
                }) =>
            {
                // Names only: `self.model = self.model.cuda()` binds no name.
                if let Some(left) = n.child_by_field_name("left") {
                    let mut c = left.walk();
                    let targets: Vec<Node<'_>> = match left.kind() {
                        "identifier" => vec![left],
                        "pattern_list" | "tuple_pattern" | "list_pattern" => {
                            left.named_children(&mut c).collect()
                        }
                        _ => Vec::new(),
                    };
                    for t in targets.into_iter().filter(|t| t.kind() == "identifier") {
                        names.insert(text(t, src).to_owned());
                        names.insert(device_mark(text(t, src)));
                    }
                }
            }
            // `steps = max(lengths)` over a device tensor: a 0-d device tensor, which
            // `range(steps)` reads on the host again.
            "assignment"
                if n.child_by_field_name("left")
                    .is_some_and(|l| l.kind() == "identifier")
                    && n.child_by_field_name("right").is_some_and(|r| {
                        r.kind() == "call"
                            && r.child_by_field_name("function")
                                .is_some_and(|f| matches!(text(f, src), "max" | "min"))
                            && ast::arg_count(r) == 1
                            && ast::positional(r, 0).is_some_and(|a| {
                                a.kind() == "identifier"
                                    && holds_device_tensor(text(a, src), &names)
                            })
                    }) =>
            {
                if let Some(left) = n.child_by_field_name("left") {
                    names.insert(text(left, src).to_owned());
                    names.insert(device_mark(text(left, src)));
                }
            }
            "assignment" => call_results(n, src, &mut names),
            _ => {}
        }
        true
    });
    iterated_tensors(body, src, &mut names);
    names
}

/// Marks the names an assignment binds to what a model, a criterion or a step returns
/// (`loss = criterion(out, y)`, `out = model(x)`), or to a torch operation on tensors.
fn call_results(n: Node<'_>, src: &str, names: &mut HashSet<String>) {
    let (Some(left), Some(function)) = (
        n.child_by_field_name("left"),
        n.child_by_field_name("right")
            .filter(|r| r.kind() == "call")
            .and_then(|r| r.child_by_field_name("function")),
    ) else {
        return;
    };
    let from_model = {
        let f = text(function, src).to_ascii_lowercase();
        let last = f.rsplit('.').next().unwrap_or(&f);
        // `clip_grad_norm_` returns the total norm, a tensor.
        [
            "model",
            "net",
            "criterion",
            "loss",
            "forward",
            "step",
            "clip_grad",
        ]
        .iter()
        .any(|k| last.contains(k))
    };
    // `cost = torch.cdist(a, b)`, `p = F.softmax(x, -1)`: a torch operation on tensors gives
    // a tensor (on their device); a factory without `device=` builds on the CPU and says
    // nothing of it (DETR's matcher cost). Names only: `state["exp_avg"] =
    // torch.zeros_like(p)` makes no tensor of `state`.
    let torch_op = matches!(left.kind(), "identifier" | "pattern_list" | "tuple_pattern") && {
        let f = text(function, src);
        let op = f
            .strip_prefix("torch.")
            .or_else(|| f.strip_prefix("F."))
            .unwrap_or("");
        !op.is_empty()
            && !op.contains('.')
            && op.starts_with(|c: char| c.is_ascii_lowercase())
            && !super::model::is_host_factory(&format!("torch.{op}"))
            && !matches!(op, "load" | "device" | "no_grad" | "manual_seed" | "numel")
            && !op.starts_with("is_")
            && !op.starts_with("get_")
            && !op.starts_with("set_")
    };
    if from_model || torch_op {
        ast::walk(left, &mut |t| {
            if t.kind() == "identifier" {
                names.insert(text(t, src).to_owned());
            }
            true
        });
    }
}

/// Marks, in a set of tensor names, a name the scope assigned a host value to
/// (`reduced_loss = loss.item()`): it is never a tensor, whatever it is called.
const HOST: char = '!';

/// `x = t.item()`, `x = float(t)`, `x = t.tolist()`: the value is on the host; so is a
/// dict, list or tuple whose every value is (`losses = {"total": loss.item(), "mel":
/// mel.item()}`), and a dict comprehension of such values (`{k: v.item() for k, v in
/// d.items()}`), whatever the name says.
fn assigns_host_value(assignment: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    assignment
        .child_by_field_name("right")
        .is_some_and(|r| host_container(r, src, names))
}

/// A host value itself, or a literal container (or dict comprehension) of host values only,
/// or arithmetic on one (names marked in `names` as host values count as such).
fn host_container(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    let none = HashSet::new();
    match node.kind() {
        "call" => on_host(node, src, &none),
        "dictionary" => {
            let mut c = node.walk();
            let pairs: Vec<Node<'_>> = node.named_children(&mut c).collect();
            !pairs.is_empty()
                && pairs.iter().all(|p| {
                    p.kind() == "pair"
                        && p.child_by_field_name("value")
                            .is_some_and(|v| v.kind() == "call" && on_host(v, src, &none))
                })
        }
        "list" | "tuple" => {
            let mut c = node.walk();
            let items: Vec<Node<'_>> = node.named_children(&mut c).collect();
            !items.is_empty()
                && items
                    .iter()
                    .all(|v| v.kind() == "call" && on_host(*v, src, &none))
        }
        "dictionary_comprehension" => node
            .child_by_field_name("body")
            .and_then(|pair| pair.child_by_field_name("value"))
            .is_some_and(|v| v.kind() == "call" && on_host(v, src, &none)),
        "binary_operator" | "parenthesized_expression" => {
            host_arithmetic(node, src, names) == Some(true)
        }
        _ => false,
    }
}

/// Arithmetic on a host value (`loss.item() * accum_steps`, `(a.item() + b.item()) / 2`,
/// `loss_value * accum` with `loss_value` marked a host value in `names`): `Some(true)` when
/// an operand is a host value and the others are numbers or plain names, `Some(false)` when
/// it holds no host value but nothing else either, `None` for anything else (a call that may
/// return a tensor).
fn host_arithmetic(node: Node<'_>, src: &str, names: &HashSet<String>) -> Option<bool> {
    match node.kind() {
        "binary_operator" => {
            let left = host_arithmetic(node.child_by_field_name("left")?, src, names)?;
            let right = host_arithmetic(node.child_by_field_name("right")?, src, names)?;
            Some(left || right)
        }
        "parenthesized_expression" => host_arithmetic(node.named_child(0)?, src, names),
        "call" => on_host(node, src, names).then_some(true),
        // A name that ever holds a tensor here may hold one now: not a host value (marks are
        // not ordered: `lam = torch.from_numpy(b)` then `lam = lam.cuda()`).
        "identifier" | "attribute" => {
            let name = text(node, src);
            if names.contains(name) {
                None
            } else {
                Some(names.contains(&host_mark(name)))
            }
        }
        "integer" | "float" => Some(false),
        _ => None,
    }
}

/// The mark of a name that holds a host value, for a set of tensor names.
pub(super) fn host_mark(name: &str) -> String {
    format!("{HOST}{name}")
}

/// True when `node` is a host value: a name marked so, or `t.item()` / `float(t)` itself.
/// So is a method chain that passed `.cpu()` and did not go back to a device
/// (`lengths.cpu().int()`: the copy was the sync; what follows runs on the host), or that
/// started from a name holding a host value.
pub(super) fn on_host(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    // The chain is followed in a loop (a generated one may be thousands of calls long).
    let mut node = node;
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        if host_itself(node, src, names) {
            return true;
        }
        match ast::method(node, src) {
            Some("cpu") => return true,
            Some("to" | "cuda" | "pin_memory") | None => return false,
            Some(_) => match ast::receiver(node) {
                Some(r) => node = r,
                None => return false,
            },
        }
    }
    false
}

/// [`on_host`] without following the chain: a marked name, `t.item()`, `t.tolist()`,
/// `t.numpy()`, `float(t)`, `int(t)`, a torch factory without `device=` (`torch.rand(1)`).
/// Constant time, for callers that walk a chain
/// themselves.
fn host_itself(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    match node.kind() {
        // Only names are marked; the text of a long expression is never looked up.
        "identifier" | "attribute" => names.contains(&host_mark(text(node, src))),
        "call" => {
            matches!(ast::method(node, src), Some("item" | "tolist" | "numpy"))
                || node.child_by_field_name("function").is_some_and(|f| {
                    let callee = text(f, src);
                    matches!(callee, "float" | "int")
                        // `torch.rand(1)`: built on the CPU, never moved (a move ends the
                        // chain before it is reached).
                        || (super::model::is_host_factory(callee)
                            && ast::kwarg(node, "device", src).is_none())
                })
        }
        _ => false,
    }
}

/// True when `receiver` holds a host value where it is read. Marks are not ordered:
/// `lengths = lengths.cpu()` marks `lengths` as a host value, but the copy on that line still
/// reads the device tensor, so a name is not taken as on the host in its own assignment.
fn read_on_host(receiver: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    // The name at the bottom of the chain: `C` of `C = C.view(bs, -1).cpu()` (DETR's
    // matcher), unless the chain copies to the host on the way.
    let mut base = receiver;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        if base.kind() != "call" {
            break;
        }
        match (ast::method(base, src), ast::receiver(base)) {
            (Some("cpu" | "item" | "tolist" | "numpy"), _) | (_, None) | (None, _) => break,
            (Some(_), Some(r)) => base = r,
        }
    }
    if base.kind() == "identifier" {
        let receiver = base;
        let name = text(receiver, src);
        let mut up = receiver.parent();
        // Bounded: each `parent()` costs the depth of the tree (tree-sitter finds it from
        // the root), and the assignment of `x = x.cpu().int()` is a few levels up.
        for n in std::iter::from_fn(|| {
            let n = up?;
            up = n.parent();
            Some(n)
        })
        .take(16)
        {
            if n.kind() == "assignment" {
                if n.child_by_field_name("left")
                    .is_some_and(|l| text(l, src) == name)
                {
                    return element_of_host_value(receiver, name, src, names);
                }
                break;
            }
            if ast::is_scope(n) || n.kind().ends_with("statement") {
                break;
            }
        }
    }
    on_host(receiver, src, names)
}

/// True when an enclosing loop of `node` takes `name` from a host value (`for i, n in
/// enumerate(lengths)` with `lengths = lengths.cpu()`).
fn element_of_host_value(node: Node<'_>, name: &str, src: &str, names: &HashSet<String>) -> bool {
    let mut up = node.parent();
    // Bounded as in `read_on_host`: generated code can nest loops thousands deep.
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        let Some(n) = up else {
            return false;
        };
        if ast::is_scope(n) {
            return false;
        }
        if n.kind() == "for_statement"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && element_sources(left, right, src)
                .iter()
                .any(|(t, from)| text(*t, src) == name && on_host(*from, src, names))
        {
            return true;
        }
        up = n.parent();
    }
    false
}

pub(super) fn tensor_like(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    if on_host(node, src, names) {
        return false;
    }
    // `train_loss.result()`: a Keras metric's value is a tensor (on the GPU in a GPU run).
    if node.kind() == "call"
        && ast::method(node, src) == Some("result")
        && ast::arg_count(node) == 0
        && ast::receiver(node).is_some_and(|r| {
            let t = text(r, src).to_ascii_lowercase();
            let last = t.rsplit('.').next().unwrap_or(&t);
            r.kind() != "call"
                && ["loss", "acc", "metric", "mean", "auc", "error"]
                    .iter()
                    .any(|k| last.contains(k))
        })
    {
        return true;
    }
    // `out.squeeze(1)`, `loss.detach()`: a tensor method of a tensor gives a tensor. The
    // chain is followed in a loop (a generated one may be thousands of calls long).
    let mut node = node;
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        if node.kind() != "call" {
            break;
        }
        if !ast::method(node, src).is_some_and(|m| TENSOR_METHODS.contains(&m)) {
            return false;
        }
        match ast::receiver(node) {
            Some(r) if !host_itself(r, src, names) => node = r,
            _ => return false,
        }
    }
    if node.kind() == "call" {
        return false;
    }
    // `p.grad`: a parameter's gradient (`writer.add_scalar(tag, p.grad.norm(), step)`).
    if node.kind() == "attribute"
        && node
            .child_by_field_name("attribute")
            .is_some_and(|a| text(a, src) == "grad")
    {
        return true;
    }
    let mut root = node;
    while matches!(root.kind(), "attribute" | "subscript") {
        match root
            .child_by_field_name("object")
            .or_else(|| root.child_by_field_name("value"))
        {
            Some(inner) => root = inner,
            None => break,
        }
    }
    if !matches!(root.kind(), "identifier") && !matches!(node.kind(), "attribute") {
        return false;
    }
    let whole = text(node, src);
    // An element or attribute of a host value (`loss_values[0]` of a list of floats).
    if names.contains(&host_mark(text(root, src))) {
        return false;
    }
    let name = text(root, src).to_ascii_lowercase();
    names.contains(whole)
        || names.contains(text(root, src))
        || ["loss", "logit", "pred", "output"]
            .iter()
            .any(|k| name.contains(k))
}

/// Methods of a tensor that return a tensor (not a Python number or list).
const TENSOR_METHODS: &[&str] = &[
    "squeeze",
    "unsqueeze",
    "detach",
    "clone",
    "float",
    "half",
    "bfloat16",
    "to",
    "cuda",
    "view",
    "reshape",
    "mean",
    "sum",
    "abs",
    "max",
    "min",
    "norm",
];

/// `torch` functions and tensor methods whose result is a 0-d tensor (or, for `equal` and
/// `allclose`, a Python bool computed on the device): in a condition, Python reads it
/// (`Tensor.__bool__`), which waits for the GPU. PyTorch's "Avoid unnecessary CPU-GPU
/// synchronization" (performance tuning guide) lists `if` on a tensor among the syncs.
const REDUCTIONS: &[&str] = &[
    "min",
    "max",
    "amin",
    "amax",
    "sum",
    "mean",
    "any",
    "all",
    "isnan",
    "isinf",
    "isfinite",
    "norm",
    "count_nonzero",
    "equal",
    "allclose",
];

/// The condition of the `if`, `elif`, `while` or `assert` that `node`'s value decides:
/// `node` itself, or the comparison, `not`, `and`/`or` or parentheses around it that is
/// the condition.
fn branch_condition(node: Node<'_>) -> Option<Node<'_>> {
    let mut n = node;
    while let Some(p) = n.parent() {
        match p.kind() {
            "comparison_operator"
            | "not_operator"
            | "boolean_operator"
            | "parenthesized_expression" => n = p,
            "if_statement" | "elif_clause" | "while_statement" => {
                return p
                    .child_by_field_name("condition")
                    .is_some_and(|c| c.id() == n.id())
                    .then_some(n);
            }
            "assert_statement" => {
                return p
                    .named_child(0)
                    .is_some_and(|c| c.id() == n.id())
                    .then_some(n);
            }
            _ => return None,
        }
    }
    None
}

/// The condition of an `if`, `elif`, `while` or `assert` statement.
fn condition_of(statement: Node<'_>) -> Option<Node<'_>> {
    match statement.kind() {
        "if_statement" | "elif_clause" | "while_statement" => {
            statement.child_by_field_name("condition")
        }
        "assert_statement" => statement.named_child(0),
        _ => None,
    }
}

/// The ids of the names whose value `condition` decides on: the condition itself, or a
/// name inside the comparisons, `not`, `and`/`or` and parentheses it is made of (the
/// names [`branch_condition`] accepts, found from the top).
fn deciding_names(condition: Node<'_>, out: &mut HashSet<usize>) {
    let mut stack = vec![condition];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => {
                out.insert(n.id());
            }
            "comparison_operator"
            | "not_operator"
            | "boolean_operator"
            | "parenthesized_expression" => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            _ => {}
        }
    }
}

/// A reduction on the device whose result decides a branch: `if torch.min(y) < -1.:`,
/// `if torch.isnan(loss).any():`, `while out.max() > 1:`.
fn reduction_in_condition(
    call: Node<'_>,
    name: &str,
    src: &str,
    tensors: &HashSet<String>,
) -> Option<String> {
    // `torch.isnan(loss).any()`: the outer call decides the branch.
    let method = ast::method(call, src);
    let is_torch = name
        .strip_prefix("torch.")
        .is_some_and(|f| REDUCTIONS.contains(&f));
    let on_tensor = method.is_some_and(|m| REDUCTIONS.contains(&m))
        && ast::receiver(call).is_some_and(|r| {
            tensor_like(r, src, tensors)
                || (r.kind() == "call" && text(r, src).starts_with("torch."))
                || elementwise_of_tensor(r, src, tensors)
        });
    // Only then is the statement looked for: it walks up the tree, and this runs for every
    // call of every step.
    if !(is_torch || on_tensor) {
        return None;
    }
    let keyword = match branch_condition(call)?.parent()?.kind() {
        "assert_statement" => "assert",
        "while_statement" => "while",
        "elif_clause" => "elif",
        _ => "if",
    };
    Some(if is_torch {
        format!("{keyword} {name}(...)")
    } else {
        format!("{keyword} (...).{}()", method.unwrap_or_default())
    })
}

/// The positional arguments of a call, and the items of a shape tuple or list given as one
/// (`torch.zeros((n, 80))`).
fn positional_args<'t>(call: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut out = Vec::new();
    if let Some(args) = call.child_by_field_name("arguments") {
        let mut c = args.walk();
        for a in args.named_children(&mut c) {
            match a.kind() {
                "keyword_argument" | "comment" | "list_splat" | "dictionary_splat" => {}
                "tuple" | "list" => {
                    let mut c = a.walk();
                    out.extend(a.named_children(&mut c));
                }
                _ => out.push(a),
            }
        }
    }
    out.into_iter()
}

/// `(out >= 0)`, `(a != b)`, `~mask`, `(x - y)`: an element-wise operation with a tensor
/// among its operands gives a tensor (`assert (out >= 0).all()`).
fn elementwise_of_tensor(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    let Some(n) = ast::unparenthesized(node) else {
        return false;
    };
    if !matches!(
        n.kind(),
        "comparison_operator" | "binary_operator" | "unary_operator"
    ) {
        return false;
    }
    let mut c = n.walk();
    let operands: Vec<_> = n.named_children(&mut c).collect();
    operands
        .into_iter()
        .any(|o| ast::unparenthesized(o).is_some_and(|o| tensor_like(o, src, tensors)))
}

/// True for an `if` that runs every N steps (`%` in its condition), unless it is a
/// gradient-accumulation gate (`if (i + 1) % accum_grad == 0:` around `optimizer.step()`),
/// which runs at every optimizer step: every step with the usual accumulation of 1.
///
/// A period whose default is 1 (`if step % FLAGS.steps_per_log == 0:` with
/// `DEFINE_integer("steps_per_log", 1, ...)`, in `defaults` as its [`default_mark`]) is
/// every step.
///
/// A gate that steps an optimizer is an accumulation gate only when it holds the loop's one
/// optimizer step: beside another one outside it (a GAN's discriminator stepped every
/// iteration, the generator under `% n_critic`), it is a periodic update like any other.
fn periodic(node: Node<'_>, scope: Node<'_>, src: &str, defaults: &HashSet<String>) -> bool {
    if accumulation_gate(node, src) && !steps_outside(scope, node, src) {
        return false;
    }
    node.child_by_field_name("condition")
        .is_some_and(|c| periodic_condition(c, src, defaults))
}

/// `if attn_example in ids:` with `ids` bound by the training loop (a batch's item ids) and
/// the item chosen outside it: true only for the batches that hold that item, about once an
/// epoch (WaveRNN's attention plot), not every step.
fn rare_membership(node: Node<'_>, body: Node<'_>, src: &str) -> bool {
    let Some(cond) = ast::bare_condition(node) else {
        return false;
    };
    if cond.kind() != "comparison_operator" || ast::operators(cond, src) != ["in"] {
        return false;
    }
    let (Some(item), Some(batch)) = (cond.named_child(0), cond.named_child(1)) else {
        return false;
    };
    let Some(targets) = body
        .parent()
        .filter(|p| p.kind() == "for_statement")
        .and_then(|lp| lp.child_by_field_name("left"))
    else {
        return false;
    };
    let mut bound = HashSet::new();
    ast::walk(targets, &mut |t| {
        if t.kind() == "identifier" {
            bound.insert(text(t, src));
        }
        true
    });
    let mut item_bound = false;
    ast::walk(item, &mut |t| {
        item_bound |= t.kind() == "identifier" && bound.contains(text(t, src));
        !item_bound
    });
    batch.kind() == "identifier" && bound.contains(text(batch, src)) && !item_bound
}

/// A flag that a step sets only every N steps: `do_eval = False` then `do_eval = True`
/// under `if step % eval_interval == 0:`, or `do_eval = train and step % n == 0`
/// (wavenet_vocoder's online decoding). Passed to a function's switch, it leaves the
/// switch's branch off on most steps.
pub(super) fn periodic_flag(arg: Node<'_>, src: &str, defaults: &HashSet<String>) -> bool {
    if arg.kind() != "identifier" {
        return false;
    }
    let name = text(arg, src);
    let mut scope = arg;
    while let Some(p) = scope.parent() {
        scope = p;
        if matches!(scope.kind(), "function_definition" | "module") {
            break;
        }
    }
    let scope = scope.child_by_field_name("body").unwrap_or(scope);
    let (mut periodic, mut other) = (false, false);
    simple_assignments(scope, src, |n, value| {
        if n != name {
            return;
        }
        match value.kind() {
            "false" | "none" => {}
            "true" => {
                let mut up = value.parent();
                let mut gated = false;
                while let Some(u) = up {
                    if u.id() == scope.id() {
                        break;
                    }
                    if matches!(u.kind(), "if_statement" | "elif_clause")
                        && u.child_by_field_name("condition")
                            .is_some_and(|c| periodic_condition(c, src, defaults))
                    {
                        gated = true;
                        break;
                    }
                    up = u.parent();
                }
                if gated {
                    periodic = true;
                } else {
                    other = true;
                }
            }
            _ if periodic_condition(value, src, defaults) => periodic = true,
            _ => other = true,
        }
    });
    periodic && !other
}

/// A test that holds every N steps: a `%` by a period that is not 1 ([`period_of_one`]).
fn periodic_condition(c: Node<'_>, src: &str, defaults: &HashSet<String>) -> bool {
    let mut found = false;
    ast::walk(c, &mut |n| {
        if n.kind() == "binary_operator"
            && n.child_by_field_name("operator")
                .is_some_and(|o| text(o, src) == "%")
            && !n
                .child_by_field_name("right")
                .is_some_and(|r| period_of_one(r, src, defaults))
        {
            found = true;
        }
        !found
    });
    found
}

/// A period that is 1 unless the run sets it: `1`, or a flag or setting whose one default
/// is 1 (`FLAGS.steps_per_log`, `hp.train.log_interval`).
fn period_of_one(period: Node<'_>, src: &str, defaults: &HashSet<String>) -> bool {
    let name = match period.kind() {
        "integer" => return text(period, src) == "1",
        // The script's own constant first (`log_interval = 1` in lit-llama's `lora.py`,
        // `= 100` in its `full.py`): a module's name is its own.
        "identifier" if module_constant(period, src).is_some() => {
            return module_constant(period, src) == Some("1");
        }
        "identifier" => text(period, src),
        "attribute" => match period.child_by_field_name("attribute") {
            Some(a) => text(a, src),
            None => return false,
        },
        _ => return false,
    };
    one_default(name, defaults) == Some("1")
}

/// The one default `marks` hold for `flag` ([`default_mark`]); `None` when none is known or
/// two disagree (two scripts with a flag of that name).
pub(super) fn one_default<'m>(flag: &str, marks: &'m HashSet<String>) -> Option<&'m str> {
    let prefix = default_mark(flag, "");
    let mut defaults = marks.iter().filter_map(|m| m.strip_prefix(prefix.as_str()));
    match (defaults.next(), defaults.next()) {
        (Some(d), None) => Some(d),
        _ => None,
    }
}

/// The number a module-level `NAME = 7` of the file sets the identifier `name` to, if any;
/// none where the module runs `exec(...)` at its top (a configurator that sets its names
/// again from a config file).
fn module_constant<'s>(name: Node<'_>, src: &'s str) -> Option<&'s str> {
    let mut root = name;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        match root.parent() {
            Some(p) => root = p,
            None => break,
        }
    }
    let wanted = text(name, src);
    let mut c = root.walk();
    let mut value = None;
    for stmt in root.named_children(&mut c) {
        // `exec(open('configurator.py').read())` (nanoGPT): config files set the module's
        // names again, so its own value is not the run's.
        if stmt.kind() == "expression_statement"
            && stmt.named_child(0).is_some_and(|e| {
                e.kind() == "call"
                    && e.child_by_field_name("function")
                        .is_some_and(|f| text(f, src) == "exec")
            })
        {
            return None;
        }
        if stmt.kind() == "expression_statement"
            && let Some(a) = stmt.named_child(0).filter(|a| a.kind() == "assignment")
            && a.child_by_field_name("left")
                .is_some_and(|l| l.kind() == "identifier" && text(l, src) == wanted)
            && let Some(r) = a
                .child_by_field_name("right")
                .filter(|r| r.kind() == "integer")
        {
            value = Some(text(r, src));
        }
    }
    value
}

/// The command-line flags of a file that are off unless given: `add_argument("--sync_step",
/// action="store_true")` (no `default`), or with `default=False` / `None` / `0`; by their
/// `dest` (`--sync-step` is `sync_step`).
///
/// A flag with another literal default is kept as its default's mark ([`default_mark`]):
/// `if FLAGS.mode == 'eager_tf':` with `DEFINE_enum('mode', 'fit', ...)` is a path the
/// defaults do not take.
pub(super) fn opt_in_flags(root: Node<'_>, src: &str) -> HashSet<String> {
    defaults::arguments(root, src)
        .into_iter()
        .flat_map(|a| match a.default {
            // `default=None` also as its mark: `if args.log_dir is not None:` is opt-in.
            Some(d) if text(d, src) == "None" => {
                vec![default_mark(&a.dest, "None"), a.dest]
            }
            Some(d) if matches!(text(d, src), "False" | "0") => vec![a.dest],
            Some(d) if matches!(d.kind(), "string" | "integer") => {
                vec![default_mark(&a.dest, literal_value(text(d, src)))]
            }
            Some(_) => Vec::new(),
            None if a.action.is_some_and(|x| x.contains("store_true")) => vec![a.dest],
            None => Vec::new(),
        })
        .collect()
}

/// The mark, in a set of opt-in flags, of a flag whose default is `value`.
pub(super) fn default_mark(flag: &str, value: &str) -> String {
    format!("{flag}=={value}")
}

/// A string or number literal's value: quotes (and a string prefix) taken off.
fn literal_value(literal: &str) -> &str {
    literal
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_matches(|c| c == '"' || c == '\'')
}

/// The attributes a file sets only on an opt-in path, and to `None` (or another falsy
/// literal) everywhere else: `self.noise_injector = NoiseInjection(...)` under `if
/// conf.noise_dir:`, else `None`. An `if self.noise_injector:` is as opt-in as the flag.
pub(super) fn gated_attributes(root: Node<'_>, src: &str, opt_in: &HashSet<String>) -> Vec<String> {
    if opt_in.is_empty() {
        return Vec::new();
    }
    // One walk: an `if` comes before the assignments of its body, so the opt-in bodies
    // that hold an assignment are known when it is reached.
    let mut bodies: Vec<(usize, usize)> = Vec::new();
    // For each `self.NAME` assigned: (set on an opt-in path, every assignment gated or falsy).
    let mut seen: std::collections::BTreeMap<&str, (bool, bool)> = Default::default();
    // Names bound to something only when a flag is on, else `None`.
    let mut names: Vec<String> = Vec::new();
    ast::walk(root, &mut |n| {
        bodies.extend(opt_in_body(n, src, opt_in));
        if n.kind() != "assignment" {
            return true;
        }
        let (Some(left), Some(right)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            return true;
        };
        let inside = bodies
            .iter()
            .any(|&(s, e)| s <= n.start_byte() && n.end_byte() <= e);
        // `self.a, self.b = x, y` pairs its targets with its values.
        let pairs: Vec<(Node<'_>, Node<'_>)> =
            if matches!(left.kind(), "pattern_list" | "tuple_pattern")
                && matches!(right.kind(), "expression_list" | "tuple")
                && left.named_child_count() == right.named_child_count()
            {
                let (mut a, mut b) = (left.walk(), right.walk());
                left.named_children(&mut a)
                    .zip(right.named_children(&mut b))
                    .collect()
            } else {
                vec![(left, right)]
            };
        for (target, value) in pairs {
            // `writer = Writer(d) if args.log_dir is not None else None`: `writer` is as
            // opt-in as the flag (`if writer is not None:`, `if writer:`).
            if target.kind() == "identifier"
                && value.kind() == "conditional_expression"
                && let (Some(cond), Some(other)) = (value.named_child(1), value.named_child(2))
                && opt_in_condition(cond, src, opt_in)
                && ast::is_falsy_literal(other, src)
            {
                names.push(text(target, src).to_owned());
                continue;
            }
            let Some(name) = (target.kind() == "attribute"
                && target
                    .child_by_field_name("object")
                    .is_some_and(|o| text(o, src) == "self"))
            .then(|| target.child_by_field_name("attribute"))
            .flatten() else {
                continue;
            };
            let falsy = ast::is_falsy_literal(value, src);
            // `self.is_mixspeech = bool(mixspeech)` with `mixspeech` an opt-in flag: the
            // attribute is the flag under another name.
            let derived = opt_in_value(value, src, opt_in);
            let entry = seen.entry(text(name, src)).or_insert((false, true));
            entry.0 |= inside || derived;
            entry.1 &= inside || falsy || derived;
        }
        true
    });
    let mut out: Vec<String> = seen
        .into_iter()
        .filter(|(_, (gated, only))| *gated && *only)
        .map(|(name, _)| name.to_owned())
        .collect();
    for name in names {
        out.push(default_mark(&name, "None"));
        out.push(name);
    }
    out
}

/// A value that is an opt-in flag's under another form: the flag itself (`mixspeech`,
/// `args.mixspeech`), `bool(flag)`, or `flag > 0` / `flag != 0` / `flag >= 1`.
fn opt_in_value(value: Node<'_>, src: &str, opt_in: &HashSet<String>) -> bool {
    let named = |n: Node<'_>| match n.kind() {
        "identifier" => opt_in.contains(text(n, src)),
        "attribute" => n
            .child_by_field_name("attribute")
            .is_some_and(|a| opt_in.contains(text(a, src))),
        _ => false,
    };
    match value.kind() {
        "identifier" | "attribute" => named(value),
        "call" => {
            value
                .child_by_field_name("function")
                .is_some_and(|f| text(f, src) == "bool")
                && value
                    .child_by_field_name("arguments")
                    .filter(|a| a.named_child_count() == 1)
                    .and_then(|a| a.named_child(0))
                    .is_some_and(named)
        }
        "comparison_operator" if value.named_child_count() == 2 => {
            let ops = ast::operators(value, src);
            let (Some(left), Some(right)) = (value.named_child(0), value.named_child(1)) else {
                return false;
            };
            named(left)
                && matches!(
                    (ops.as_slice(), text(right, src)),
                    ([">" | "!="], "0") | ([">="], "1")
                )
        }
        _ => false,
    }
}

/// The branches of an `if` the flags' defaults never take, with the condition that rules
/// each out: the body of an `if`/`elif` on a flag off by default (or `flag == v` with
/// another default), and every branch after one a default takes (`if args.mode ==
/// "single": ... else: ...` with `default="single"`: the `else`).
pub(super) fn flag_off_branches<'s>(
    node: Node<'_>,
    src: &'s str,
    opt_in: &HashSet<String>,
) -> Vec<(usize, usize, &'s str)> {
    let mut out = Vec::new();
    if node.kind() != "if_statement" || opt_in.is_empty() {
        return out;
    }
    let Some(cond) = node.child_by_field_name("condition") else {
        return out;
    };
    let range = |b: Node<'_>| (b.start_byte(), b.end_byte());
    // `if a: ... elif b: ... else: raise ...`: the run must choose one of the flags, so
    // none of the branches is an opt-in the defaults leave out.
    let required = {
        let mut c = node.walk();
        node.children_by_field_name("alternative", &mut c)
            .filter(|a| a.kind() == "else_clause")
            .any(|a| {
                let mut w = a.walk();
                a.named_children(&mut w)
                    .find(|b| b.kind() == "block")
                    .is_some_and(|b| ends_the_run(b, src))
            })
    };
    // A branch the defaults take (`elif encoder_name == "conformer_cat":` with the README's
    // `--encoder_name conformer_cat`) leaves every other one off, required or not.
    let some_taken = holds_by_default(cond, src, opt_in) == Some(true) || {
        let mut c = node.walk();
        node.children_by_field_name("alternative", &mut c)
            .filter_map(|a| a.child_by_field_name("condition"))
            .any(|ec| holds_by_default(ec, src, opt_in) == Some(true))
    };
    let off = |c: Node<'_>| {
        (!required || some_taken)
            && (opt_in_condition(c, src, opt_in)
                || (some_taken && holds_by_default(c, src, opt_in) != Some(true)))
    };
    if off(cond)
        && let Some(b) = node.child_by_field_name("consequence")
    {
        let (s, e) = range(b);
        out.push((s, e, text(cond, src)));
    }
    // The condition the defaults take, once one is found: every later branch is off.
    let mut taken = (holds_by_default(cond, src, opt_in) == Some(true)).then(|| text(cond, src));
    let mut c = node.walk();
    for alt in node.children_by_field_name("alternative", &mut c) {
        let body = alt.child_by_field_name("consequence").or_else(|| {
            let mut w = alt.walk();
            alt.named_children(&mut w).find(|b| b.kind() == "block")
        });
        let Some(body) = body else { continue };
        let (s, e) = range(body);
        if let Some(t) = taken {
            out.push((s, e, t));
            continue;
        }
        if alt.kind() == "elif_clause"
            && let Some(ec) = alt.child_by_field_name("condition")
        {
            if off(ec) {
                out.push((s, e, text(ec, src)));
            }
            if holds_by_default(ec, src, opt_in) == Some(true) {
                taken = Some(text(ec, src));
            }
        }
    }
    out
}

/// An `if` whose body ends the run (`if not math.isfinite(loss.item()): print(...);
/// sys.exit(1)`, dino's): the body runs at most once, whatever it reads; its test runs
/// every step.
fn ends_run_when_taken(node: Node<'_>, src: &str) -> bool {
    node.child_by_field_name("consequence")
        .is_some_and(|b| ends_the_run(b, src))
}

/// A block that ends the run: its last statement raises, or calls `sys.exit`, `exit`,
/// `quit` or `parser.error`.
fn ends_the_run(block: Node<'_>, src: &str) -> bool {
    let mut c = block.walk();
    block
        .named_children(&mut c)
        .filter(|s| s.kind() != "comment")
        .last()
        .is_some_and(|last| {
            last.kind() == "raise_statement"
                || (last.kind() == "expression_statement"
                    && last.named_child(0).is_some_and(|call| {
                        call.kind() == "call"
                            && call.child_by_field_name("function").is_some_and(|f| {
                                let t = text(f, src);
                                matches!(t, "sys.exit" | "exit" | "quit" | "os._exit")
                                    || t.ends_with(".error")
                            })
                    }))
        })
}

/// The byte range of the body of an `if` on an opt-in flag ([`opt_in_gate`]): work there
/// runs only when the user turns the flag on.
pub(super) fn opt_in_body(
    node: Node<'_>,
    src: &str,
    opt_in: &HashSet<String>,
) -> Option<(usize, usize)> {
    if node.kind() != "if_statement" {
        return None;
    }
    if opt_in_gate(node, src, opt_in) {
        return node
            .child_by_field_name("consequence")
            .map(|b| (b.start_byte(), b.end_byte()));
    }
    // `if not validate: ... else: <opt-in>` (image-segmentation-keras' `fit` with
    // validation data, `--validate` off unless given).
    let negated = ast::bare_condition(node)
        .filter(|c| c.kind() == "not_operator")
        .and_then(|c| c.child_by_field_name("argument"))
        .is_some_and(|a| opt_in_condition(a, src, opt_in));
    if !negated {
        return None;
    }
    let mut c = node.walk();
    node.children_by_field_name("alternative", &mut c)
        .find(|a| a.kind() == "else_clause")
        .map(|a| (a.start_byte(), a.end_byte()))
}

/// An `if` on a flag that is off unless given on the command line (`if args.sync_step:`,
/// [`opt_in_flags`]; alone or in an `and`): an opt-in debugging path, not every step.
fn opt_in_gate(node: Node<'_>, src: &str, opt_in: &HashSet<String>) -> bool {
    node.child_by_field_name("condition")
        .is_some_and(|c| opt_in_condition(c, src, opt_in))
}

/// Whether a comparison of a flag with a literal holds with the flag's default (in
/// `marks`, [`default_mark`]): `args.parallel_mode == "dp"` with `default="dp"` holds,
/// `== "ddp"` does not; `None` when the default is not known (or two flags of the name
/// disagree, as in two scripts).
pub(super) fn holds_by_default(c: Node<'_>, src: &str, marks: &HashSet<String>) -> Option<bool> {
    // `'loss_ota' not in hyp or hyp['loss_ota'] == 1` (yolov7): an `or` holds where one
    // side does, an `and` fails where one side does; else the sides must all be known.
    if c.kind() == "parenthesized_expression" {
        return holds_by_default(c.named_child(0)?, src, marks);
    }
    if c.kind() == "boolean_operator" {
        let or = c
            .child_by_field_name("operator")
            .is_some_and(|o| text(o, src) == "or");
        let sides = [
            c.child_by_field_name("left"),
            c.child_by_field_name("right"),
        ];
        let values: Vec<Option<bool>> = sides
            .into_iter()
            .map(|s| s.and_then(|s| holds_by_default(s, src, marks)))
            .collect();
        return if values.contains(&Some(or)) {
            Some(or)
        } else if values.iter().all(|v| *v == Some(!or)) {
            Some(!or)
        } else {
            None
        };
    }
    if c.kind() != "comparison_operator" || c.named_child_count() != 2 {
        return None;
    }
    let (left, right) = (c.named_child(0)?, c.named_child(1)?);
    let flag = match left.kind() {
        "attribute" => left.child_by_field_name("attribute").map(|a| text(a, src)),
        "identifier" => Some(text(left, src)),
        // `hyp['loss_ota']`: a setting read as a mapping.
        "subscript" => crate::defaults::read_setting(left, src),
        _ => None,
    };
    // `flag in ["CelebA", "RaFD"]`: a list or tuple of literals.
    let listed: Option<Vec<&str>> = matches!(right.kind(), "list" | "tuple")
        .then(|| {
            let mut w = right.walk();
            right
                .named_children(&mut w)
                .map(|v| {
                    matches!(v.kind(), "string" | "integer").then(|| literal_value(text(v, src)))
                })
                .collect()
        })
        .flatten();
    let flag =
        flag.filter(|_| matches!(right.kind(), "string" | "integer" | "none") || listed.is_some())?;
    let default = one_default(flag, marks)?;
    let ops = ast::operators(c, src);
    if let Some(values) = listed {
        let member = values.contains(&default);
        return match ops.as_slice() {
            ["in"] => Some(member),
            ["not", "in"] | ["not in"] => Some(!member),
            _ => None,
        };
    }
    // `flag is None` / `flag is not None` with the default `None`.
    if right.kind() == "none" {
        return match ops.as_slice() {
            ["is"] => Some(default == "None"),
            ["is", "not"] | ["is not"] => Some(default != "None"),
            _ => None,
        };
    }
    let value = literal_value(text(right, src));
    // `args.num_gpu > 1` with `default=1` (FloWaveNet's DataParallel): numbers compared, of
    // a setting read from its object only (a local `world_size = get_world_size()` is no
    // flag, whatever a parser of the same name says).
    let numbers = || {
        (left.kind() == "attribute")
            .then_some(())
            .and_then(|()| Some((default.parse::<f64>().ok()?, value.parse::<f64>().ok()?)))
    };
    match ops.as_slice() {
        ["=="] => Some(value == default),
        ["!="] => Some(value != default),
        [">"] => numbers().map(|(d, v)| d > v),
        [">="] => numbers().map(|(d, v)| d >= v),
        ["<"] => numbers().map(|(d, v)| d < v),
        ["<="] => numbers().map(|(d, v)| d <= v),
        _ => None,
    }
}

/// A condition that holds only when an opt-in flag is turned on ([`opt_in_gate`]'s test,
/// also for a conditional expression: `RawAudio(p) if args.raw_audio else Cached(p)`).
pub(super) fn opt_in_condition(cond: Node<'_>, src: &str, opt_in: &HashSet<String>) -> bool {
    if opt_in.is_empty() {
        return false;
    }
    // `flag == v` with a default other than `v`, or `flag != d` with the default `d`.
    let off_default = |c: Node<'_>| holds_by_default(c, src, opt_in) == Some(false);
    let is_flag = |c: Node<'_>| -> bool {
        let name = match c.kind() {
            "attribute" => c.child_by_field_name("attribute").map(|a| text(a, src)),
            "identifier" => Some(text(c, src)),
            _ => None,
        };
        name.is_some_and(|n| opt_in.contains(n)) || off_default(c)
    };
    {
        let c = if cond.kind() == "parenthesized_expression" {
            cond.named_child(0).unwrap_or(cond)
        } else {
            cond
        };
        // `all((opt.train_path, opt.val_path))`: holds only when each is given.
        let all_of = c.kind() == "call"
            && c.child_by_field_name("function")
                .is_some_and(|f| text(f, src) == "all")
            && c.child_by_field_name("arguments")
                .filter(|a| a.named_child_count() == 1)
                .and_then(|a| a.named_child(0))
                .filter(|t| matches!(t.kind(), "tuple" | "list"))
                .is_some_and(|t| {
                    let mut w = t.walk();
                    t.named_children(&mut w).any(is_flag)
                });
        all_of
            || is_flag(c)
            || (c.kind() == "boolean_operator"
                && c.child_by_field_name("operator")
                    .is_some_and(|o| text(o, src) == "and")
                && [
                    c.child_by_field_name("left"),
                    c.child_by_field_name("right"),
                ]
                .into_iter()
                .flatten()
                .any(is_flag))
    }
}

/// The byte ranges of an `if`'s branches that run only for evaluation, in code a dataset
/// shares between its splits: the body of `if self.split != "train":`, `if mode == "val":`,
/// `if not self.training:`, and the `elif`/`else` of `if split == "train":` or of a bare
/// training flag, `if self.train:` (`train`, `training`, `is_train`, `is_training`); where
/// the training branch returns and has no `else`, the rest of the block after it. The split
/// is a name ending like `split`, `mode`, `phase`, `stage` or `subset`; evaluation is `val`,
/// `valid`, `validation`, `eval`, `test` or `dev`.
pub(super) fn eval_only_branches(node: Node<'_>, src: &str) -> Vec<(usize, usize)> {
    const SPLIT: &[&str] = &["split", "mode", "phase", "stage", "subset"];
    const EVAL: &[&str] = &["val", "valid", "validation", "eval", "test", "dev"];
    let Some(cond) = node.child_by_field_name("condition") else {
        return Vec::new();
    };
    let unquote = |n: Node<'_>| -> Option<String> {
        (n.kind() == "string").then(|| {
            text(n, src)
                .trim_matches(|c| c == '"' || c == '\'')
                .to_ascii_lowercase()
        })
    };
    let is_split = |n: Node<'_>| {
        let t = text(n, src).to_ascii_lowercase();
        let last = t.rsplit('.').next().unwrap_or(&t);
        matches!(n.kind(), "identifier" | "attribute") && SPLIT.iter().any(|k| last.ends_with(k))
    };
    let consequence = || {
        node.child_by_field_name("consequence")
            .map(|b| vec![(b.start_byte(), b.end_byte())])
            .unwrap_or_default()
    };
    // The `else` branches; without one, where the training branch ends in `return` or
    // `raise` (`if self.train: return torch.load(p)`), the rest of the block after the `if`.
    let alternatives = || {
        let mut c = node.walk();
        let mut out: Vec<_> = node
            .children_by_field_name("alternative", &mut c)
            .map(|b| (b.start_byte(), b.end_byte()))
            .collect();
        let ends = |b: Node<'_>| {
            let mut c = b.walk();
            b.named_children(&mut c)
                .filter(|s| s.kind() != "comment")
                .last()
                .is_some_and(|last| matches!(last.kind(), "return_statement" | "raise_statement"))
        };
        if out.is_empty()
            && node.child_by_field_name("consequence").is_some_and(ends)
            && let Some(block) = node.parent()
        {
            out.push((node.end_byte(), block.end_byte()));
        }
        out
    };
    let training_flag = |n: Node<'_>| {
        let t = text(n, src).to_ascii_lowercase();
        let last = t.rsplit('.').next().unwrap_or(&t).to_owned();
        matches!(n.kind(), "identifier" | "attribute")
            && matches!(
                last.as_str(),
                "train" | "training" | "is_train" | "is_training"
            )
    };
    match cond.kind() {
        "comparison_operator" => {
            let mut c = cond.walk();
            let parts: Vec<Node<'_>> = cond.named_children(&mut c).collect();
            let ops: Vec<&str> = {
                let mut c = cond.walk();
                cond.children(&mut c)
                    .filter(|n| !n.is_named())
                    .map(|n| text(n, src))
                    .collect()
            };
            let [a, b] = parts.as_slice() else {
                return Vec::new();
            };
            let (split, value) = if is_split(*a) { (*a, *b) } else { (*b, *a) };
            let (Some(value), true) = (unquote(value), is_split(split)) else {
                return Vec::new();
            };
            match ops.as_slice() {
                ["!="] if value == "train" => consequence(),
                ["=="] if value == "train" => alternatives(),
                ["=="] if EVAL.contains(&value.as_str()) => consequence(),
                _ => Vec::new(),
            }
        }
        "not_operator" => {
            let training = cond
                .child_by_field_name("argument")
                .is_some_and(training_flag);
            if training { consequence() } else { Vec::new() }
        }
        // `if self.train:` / `if is_training:`: what runs otherwise is for evaluation.
        "identifier" | "attribute" if training_flag(cond) => alternatives(),
        _ => Vec::new(),
    }
}

/// Whether `scope` steps an optimizer outside `gate` (not in nested functions).
fn steps_outside(scope: Node<'_>, gate: Node<'_>, src: &str) -> bool {
    let mut steps = false;
    ast::walk(scope, &mut |n| {
        if n.id() == gate.id() || (n.id() != scope.id() && ast::is_scope(n)) {
            return false;
        }
        steps |= updates_weights(n, src);
        !steps
    });
    steps
}

/// An `if` whose body steps an optimizer (`optimizer.step()`, `scaler.step(opt)`,
/// `apply_gradients`). Its condition's names do not decide: `global_step % (save_every *
/// grad_accumulation_steps)` gates a checkpoint, not the optimizer.
fn accumulation_gate(node: Node<'_>, src: &str) -> bool {
    node.child_by_field_name("consequence").is_some_and(|body| {
        let mut steps = false;
        ast::walk(body, &mut |n| {
            steps |= updates_weights(n, src);
            !steps && !ast::is_scope(n)
        });
        steps
    })
}

/// `optimizer.step()`, `scaler.step(opt)` or `opt.apply_gradients(...)`: a call that
/// updates the weights.
fn updates_weights(n: Node<'_>, src: &str) -> bool {
    n.kind() == "call"
        && (steps_optimizer(n, src) || ast::method(n, src) == Some("apply_gradients"))
}

/// Calls of a loop body (or a function body reached from it) in source order, with the
/// names that decide a branch (`if stop > 0:`, which [`sync`] judges too): not inside
/// nested functions, classes or lambdas, and not in the branch of an `if` that runs every
/// N steps (its `elif`/`else` run on the other steps and count).
pub(super) fn per_step_calls<'t>(
    body: Node<'t>,
    src: &str,
    opt_in: &HashSet<String>,
) -> Vec<(Node<'t>, bool)> {
    per_step_calls_within(body, src, opt_in, 0)
}

/// [`per_step_calls`], each with whether it runs only on a branch inside `body` (in the
/// body of an `if`, `elif`, `else` or `except`; an `if`'s condition runs every time). The
/// branch blocks are tracked during the walk: `Node::parent` walks down from the root, so
/// asking it of every call made a 50,000-call chain cubic.
fn per_step_calls_within<'t>(
    body: Node<'t>,
    src: &str,
    opt_in: &HashSet<String>,
    depth: u64,
) -> Vec<(Node<'t>, bool)> {
    let mut calls = Vec::new();
    // The byte ranges of the branch blocks around the node visited, innermost last. Blocks
    // nest or are disjoint, and the walk is in source order; only the consequence of the
    // `if` just visited can be open but not yet entered (while its condition is walked).
    let mut open: Vec<(usize, usize)> = Vec::new();
    // The names that decide a branch, found from the statement down: asking each name for
    // its parent instead costs the depth of the tree per name (tree-sitter finds a parent
    // from the root), which is quadratic in a generated chain thousands of calls long.
    let mut deciding: HashSet<usize> = HashSet::new();
    ast::walk(body, &mut |n| {
        if n.id() != body.id() && ast::is_scope(n) {
            return false;
        }
        if let Some(condition) = condition_of(n) {
            deciding_names(condition, &mut deciding);
        }
        let at = n.start_byte();
        while open.last().is_some_and(|&(_, end)| end <= at) {
            open.pop();
        }
        let branch = open.iter().rev().take(2).any(|&(start, _)| start <= at);
        // `if self.training: ... else: <evaluation>`: only the training branch runs in the
        // step.
        if n.kind() == "if_statement" && training_test(n, src) == Some(true) {
            if depth < gpufeed_findings::constants::MAX_NESTING
                && let Some(block) = n.child_by_field_name("consequence")
            {
                calls.extend(per_step_calls_within(block, src, opt_in, depth + 1));
            }
            return false;
        }
        // `if opt.loss_ota == 1: ... else: ...` with the default 1 (a flag's, or a value
        // every config file of the project agrees on): only the branch the defaults take
        // runs in the step (yolov7's `ComputeLoss` is the `else`).
        if n.kind() == "if_statement"
            && ast::bare_condition(n)
                .is_some_and(|c| holds_by_default(c, src, opt_in) == Some(true))
        {
            if depth < gpufeed_findings::constants::MAX_NESTING {
                for part in ["condition", "consequence"] {
                    if let Some(p) = n.child_by_field_name(part) {
                        calls.extend(per_step_calls_within(p, src, opt_in, depth + 1));
                    }
                }
            }
            return false;
        }
        let stops = n.kind() == "if_statement" && ends_run_when_taken(n, src);
        if n.kind() == "if_statement"
            && (periodic(n, body, src, opt_in)
                || rare_membership(n, body, src)
                || stops
                || crate::model::memo_fill(n, src)
                || fallback_of_given(n, src, opt_in)
                || opt_in_gate(n, src, opt_in)
                || training_test(n, src) == Some(false))
        {
            // The test itself runs every step: `if opt.iterations.numpy() % 100 == 0:`
            // reads the device on each (CycleGAN-Tensorflow-2). A guard that stops the run
            // is tested every step with whatever decides it (`if loss > max_loss: raise
            // ...` reads the loss on the host).
            if let Some(condition) = n.child_by_field_name("condition") {
                ast::walk(condition, &mut |c| {
                    if c.kind() == "call" || (stops && step_read(c, &deciding)) {
                        calls.push((c, branch));
                    }
                    !ast::is_scope(c)
                });
            }
            // Bounded: generated code can nest `if`s thousands deep.
            if depth < gpufeed_findings::constants::MAX_NESTING {
                let mut c = n.walk();
                for alt in n.children_by_field_name("alternative", &mut c) {
                    // `elif FLAGS.save_model_freq > 0 and (step + 1) % FLAGS.save_model_freq
                    // == 0:` is periodic on its own: its test runs, its body does not.
                    if alt.kind() == "elif_clause"
                        && let Some(cond) = alt.child_by_field_name("condition")
                        && periodic_condition(cond, src, opt_in)
                    {
                        ast::walk(cond, &mut |c| {
                            if c.kind() == "call" {
                                calls.push((c, branch));
                            }
                            !ast::is_scope(c)
                        });
                        continue;
                    }
                    calls.extend(per_step_calls_within(alt, src, opt_in, depth + 1));
                }
            }
            return false;
        }
        if matches!(
            n.kind(),
            "if_statement" | "elif_clause" | "else_clause" | "except_clause"
        ) {
            let mut c = n.walk();
            if let Some(block) = n.children(&mut c).find(|b| b.kind() == "block") {
                open.push((block.start_byte(), block.end_byte()));
            }
        }
        if n.kind() == "call" || step_read(n, &deciding) {
            calls.push((n, branch));
        }
        true
    });
    calls
}

/// Besides calls, what a step reads that [`sync`] judges: a slice bound, a name that
/// decides a branch, a subscript by a mask or a list.
fn step_read(n: Node<'_>, deciding: &HashSet<usize>) -> bool {
    n.kind() == "slice"
        || n.kind() == "interpolation"
        || (n.kind() == "binary_operator"
            && n.child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "%"))
        || (n.kind() == "identifier" && deciding.contains(&n.id()))
        || (n.kind() == "subscript" && maybe_mask_index(n))
}

/// Marks, among the gates [`per_step_calls`] is given, a parameter the caller passed a
/// value for (not `None`).
pub(super) const GIVEN: char = '\u{1}';

/// The mark of a parameter the caller gave, for a set of tensor names or of gates.
pub(super) fn given_mark(param: &str) -> String {
    format!("{GIVEN}{param}")
}

/// Marks a parameter the caller passed a falsy literal for (`reverse=False`, `0`): given,
/// but off all the same.
const FALSY: char = '\u{2}';

/// The mark of a parameter the caller gave a falsy literal, for a set of tensor names.
pub(super) fn falsy_mark(param: &str) -> String {
    format!("{FALSY}{param}")
}

/// `if max_len is None: max_len = torch.max(lengths).item()` where the caller passed
/// `max_len`: the fallback for callers that do not, not run on this path (FastSpeech2's
/// `get_mask_from_lengths`).
fn fallback_of_given(node: Node<'_>, src: &str, gates: &HashSet<String>) -> bool {
    let Some(c) = ast::bare_condition(node) else {
        return false;
    };
    if c.kind() != "comparison_operator" || c.named_child_count() != 2 {
        return false;
    }
    ast::operators(c, src) == ["is"]
        && c.named_child(1).is_some_and(|n| text(n, src) == "None")
        && c.named_child(0)
            .is_some_and(|p| p.kind() == "identifier" && gates.contains(&given_mark(text(p, src))))
}

/// `"%.4f" % loss`, `"%d/%d %f" % (i, n, loss)`: printf-style formatting of a tensor.
fn percent_formats_tensor(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    if node.kind() != "binary_operator"
        || node
            .child_by_field_name("operator")
            .is_none_or(|o| text(o, src) != "%")
        || node
            .child_by_field_name("left")
            .is_none_or(|l| !format_string(l, src))
    {
        return false;
    }
    let Some(right) = node.child_by_field_name("right") else {
        return false;
    };
    fn read(v: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
        match v.kind() {
            // `top1 / index * len(labels)`: arithmetic on a tensor is a tensor.
            "binary_operator" | "parenthesized_expression" | "unary_operator" => {
                let mut c = v.walk();
                let parts: Vec<Node<'_>> = v.named_children(&mut c).collect();
                parts.into_iter().any(|p| read(p, src, tensors))
            }
            // `% (epoch, *mloss)`: each element of the tensor is formatted.
            "list_splat" => v.named_child(0).is_some_and(|t| read(t, src, tensors)),
            _ => device_value(v, src, tensors) || tensor_like(v, src, tensors),
        }
    }
    let read = |v: Node<'_>| read(v, src, tensors);
    match right.kind() {
        "tuple" | "parenthesized_expression" => {
            let mut c = right.walk();
            let items: Vec<Node<'_>> = right.named_children(&mut c).collect();
            items.into_iter().any(read)
        }
        _ => read(right),
    }
}

/// A format string: a literal, or literals joined and repeated (`("%10s" + "%10.4g" * 4)`).
fn format_string(node: Node<'_>, src: &str) -> bool {
    let Some(n) = ast::unparenthesized(node) else {
        return false;
    };
    match n.kind() {
        "string" | "concatenated_string" => true,
        "binary_operator" => {
            n.child_by_field_name("operator")
                .is_some_and(|o| matches!(text(o, src), "+" | "*"))
                && [
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ]
                .into_iter()
                .flatten()
                .any(|side| format_string(side, src))
        }
        _ => false,
    }
}

/// A value read from a device tensor: a name holding one ([`DEVICE`]), an element of one
/// (`lengths[i]`), a tensor method or reduction of one (`mask_len.max()`), or arithmetic
/// on one. Not what describes it (`x.size(0)`, `x.shape[0]`, `len(x)`): those are
/// host numbers.
fn device_value(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    let mut node = node;
    // Through chains and elements, bounded as generated chains can be long.
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        match node.kind() {
            "identifier" => return holds_device_tensor(text(node, src), tensors),
            "subscript" => match node.child_by_field_name("value") {
                Some(v) => node = v,
                None => return false,
            },
            "call" => {
                let reduction = matches!(
                    ast::method(node, src),
                    Some(
                        "max" | "min" | "sum" | "mean" | "amax" | "amin" | "norm" | "abs" | "long"
                    )
                );
                if !reduction
                    && !ast::method(node, src).is_some_and(|m| TENSOR_METHODS.contains(&m))
                {
                    return false;
                }
                match ast::receiver(node) {
                    Some(r) => node = r,
                    None => return false,
                }
            }
            "binary_operator" | "unary_operator" | "parenthesized_expression" => {
                let mut c = node.walk();
                let parts: Vec<Node<'_>> = node.named_children(&mut c).collect();
                return parts.into_iter().any(|p| device_value(p, src, tensors));
            }
            _ => return false,
        }
    }
    false
}

/// The parameters of a `parameters` node whose default is written `value` (`None`,
/// `False`).
fn defaulted_params<'s>(params: Node<'_>, src: &'s str, value: &str) -> HashSet<&'s str> {
    let mut c = params.walk();
    params
        .named_children(&mut c)
        .filter(|p| matches!(p.kind(), "default_parameter" | "typed_default_parameter"))
        .filter(|p| {
            p.child_by_field_name("value")
                .is_some_and(|v| text(v, src) == value)
        })
        .filter_map(|p| p.child_by_field_name("name").map(|n| text(n, src)))
        .collect()
}

/// The parameter name that stands for every parameter, given by a call that splats its
/// arguments (`f(*args, **kwargs)`), for [`given_mark`].
pub(super) const ALL_GIVEN: &str = "*";

/// The branches of `def` that run only with an optional parameter (`kv_cache=None`) that
/// the caller left out (`left_out`): the body of `if kv_cache is not None:` (or `if
/// kv_cache:`), and the `else` of `if kv_cache is None:`. Byte ranges.
pub(super) fn left_out_branches(
    def: Node<'_>,
    src: &str,
    left_out: &dyn Fn(&str) -> bool,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (Some(params), Some(body)) = (
        def.child_by_field_name("parameters"),
        def.child_by_field_name("body"),
    ) else {
        return out;
    };
    let mut optional = defaulted_params(params, src, "None");
    optional.retain(|name| left_out(name));
    if optional.is_empty() {
        return out;
    }
    // Which way a test of an optional parameter goes when the caller left it out: `Some(
    // true)` where it holds (`p is None`), `Some(false)` where it does not (`p is not
    // None`, `p`).
    let holds_left_out = |cond: Node<'_>| -> Option<bool> {
        let named = |p: Option<Node<'_>>| {
            p.is_some_and(|p| p.kind() == "identifier" && optional.contains(text(p, src)))
        };
        if named(Some(cond)) {
            return Some(false);
        }
        if cond.kind() != "comparison_operator"
            || cond.named_child(1).is_none_or(|v| v.kind() != "none")
            || !named(cond.named_child(0))
        {
            return None;
        }
        match ast::operators(cond, src).as_slice() {
            ["is"] => Some(true),
            ["is not"] | ["is", "not"] => Some(false),
            _ => None,
        }
    };
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        if n.kind() == "if_statement"
            && let Some(holds) = ast::bare_condition(n).and_then(holds_left_out)
        {
            if holds {
                let mut c = n.walk();
                out.extend(
                    n.children_by_field_name("alternative", &mut c)
                        .map(|a| (a.start_byte(), a.end_byte())),
                );
            } else if let Some(block) = n.child_by_field_name("consequence") {
                out.push((block.start_byte(), block.end_byte()));
            }
        }
        // `T0 = 0 if kv_cache is None else kv_cache.get_pos()`: the arm for a given value.
        if n.kind() == "conditional_expression"
            && let (Some(then), Some(cond), Some(other)) = (
                n.named_child(0),
                n.named_child(1).and_then(ast::unparenthesized),
                n.named_child(2),
            )
            && let Some(holds) = holds_left_out(cond)
        {
            let off = if holds { other } else { then };
            out.push((off.start_byte(), off.end_byte()));
        }
        true
    });
    out
}

/// The branches of `def` that its own switches, off by default, keep out of a plain call:
/// the body of `if reverse:` and the `elif`/`else` of `if not reverse:`, for a parameter
/// `reverse=False` (VITS' flows run backwards only for inference). With `fallbacks`, also
/// the body of `if lengths is None:` for a parameter `lengths=None`: what a caller that
/// leaves the argument out gets (FreeVC's `c_lengths`), for rules that cannot see the
/// callers (a training step passes its batch's lengths). Byte ranges.
pub(super) fn off_branches(def: Node<'_>, src: &str, fallbacks: bool) -> Vec<(usize, usize)> {
    off_branches_unless(def, src, fallbacks, &|_| false)
}

/// [`off_branches`], leaving out the switches the caller set (`given`), and with the tests
/// of a parameter against another value than its default (`if norm_type == inf:` with
/// `norm_type=2.0`, MAE's gradient norm).
pub(super) fn off_branches_unless(
    def: Node<'_>,
    src: &str,
    fallbacks: bool,
    given: &dyn Fn(&str) -> bool,
) -> Vec<(usize, usize)> {
    let Some(params) = def.child_by_field_name("parameters") else {
        return Vec::new();
    };
    // Each parameter with a literal default (a number, a string, a bool, `inf`), not given.
    let literal_defaults: Vec<(&str, &str)> = {
        let mut c = params.walk();
        params
            .named_children(&mut c)
            .filter(|p| matches!(p.kind(), "default_parameter" | "typed_default_parameter"))
            .filter_map(|p| {
                let name = text(p.child_by_field_name("name")?, src);
                let value = p.child_by_field_name("value")?;
                comparable_literal(value, src).map(|v| (name, v))
            })
            .filter(|(name, _)| !given(name))
            .collect()
    };
    let defaults = |value: &str| defaulted_params(params, src, value);
    let mut off = defaults("False");
    off.retain(|p| !given(p));
    let optional = if fallbacks {
        defaults("None")
    } else {
        HashSet::new()
    };
    let Some(body) = def.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut out = evaluation_branches(body, src);
    // `**kwargs`, whose `kwargs.get("infer", False)` is a switch off unless given.
    let kwargs = ast::dict_splat_param(def, src);
    let kwarg_off = |f: Node<'_>| {
        kwargs.is_some_and(|k| {
            kwarg_switch(f, k, src).is_some_and(|name| !given(name) && !given(ALL_GIVEN))
        })
    };
    if off.is_empty() && optional.is_empty() && literal_defaults.is_empty() && kwargs.is_none() {
        return out;
    }
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        if n.kind() == "if_statement"
            && let Some(cond) = ast::bare_condition(n)
        {
            // `if lengths is None:` on `lengths=None`, or the `else` of `if lengths is not
            // None:`.
            if cond.kind() == "comparison_operator"
                && cond.named_child_count() == 2
                && cond.named_child(1).is_some_and(|v| text(v, src) == "None")
                && cond
                    .named_child(0)
                    .is_some_and(|p| p.kind() == "identifier" && optional.contains(text(p, src)))
            {
                let ops = ast::operators(cond, src);
                if ops == ["is"]
                    && let Some(block) = n.child_by_field_name("consequence")
                {
                    out.push((block.start_byte(), block.end_byte()));
                } else if ops == ["is not"] || ops == ["is", "not"] {
                    let mut c = n.walk();
                    out.extend(
                        n.children_by_field_name("alternative", &mut c)
                            .map(|a| (a.start_byte(), a.end_byte())),
                    );
                }
            }
            // `if norm_type == inf:` with `norm_type=2.0`: the default is another value.
            if cond.kind() == "comparison_operator"
                && cond.named_child_count() == 2
                && let (Some(p), Some(v)) = (cond.named_child(0), cond.named_child(1))
                && p.kind() == "identifier"
                && let Some(&(_, default)) = literal_defaults
                    .iter()
                    .find(|(name, _)| *name == text(p, src))
                && let Some(other) = comparable_literal(v, src)
                && other != default
                && ast::operators(cond, src) == ["=="]
                && let Some(block) = n.child_by_field_name("consequence")
            {
                out.push((block.start_byte(), block.end_byte()));
            }
            let negated = cond.kind() == "not_operator";
            let flag = if negated {
                cond.child_by_field_name("argument")
            } else {
                Some(cond)
            };
            if flag.is_some_and(|f| {
                (f.kind() == "identifier" && off.contains(text(f, src))) || kwarg_off(f)
            }) {
                if negated {
                    // `if not reverse: ...; return nll` with no `else`: the rest of the
                    // block after it is the reverse path (Coqui's duration predictor).
                    out.extend(untaken_after(n));
                } else if let Some(block) = n.child_by_field_name("consequence") {
                    out.push((block.start_byte(), block.end_byte()));
                }
            }
        }
        true
    });
    out
}

/// What an `if` whose body always runs leaves untaken: its `elif`/`else` branches, or,
/// with none and a body that ends in `return`, the rest of the block after it. Byte ranges.
fn untaken_after(n: Node<'_>) -> Vec<(usize, usize)> {
    let mut c = n.walk();
    let mut out: Vec<(usize, usize)> = n
        .children_by_field_name("alternative", &mut c)
        .map(|a| (a.start_byte(), a.end_byte()))
        .collect();
    let returns = n.child_by_field_name("consequence").is_some_and(|b| {
        let count = b.named_child_count();
        count > 0
            && b.named_child(count - 1)
                .is_some_and(|last| last.kind() == "return_statement")
    });
    if out.is_empty()
        && returns
        && let Some(block) = n.parent()
    {
        out.push((n.end_byte(), block.end_byte()));
    }
    out
}

/// `kwargs.get("infer")` or `kwargs.get("infer", False)` (or `None`, `0`) on the
/// function's `**kwargs` named `kwargs`: the switch's name.
fn kwarg_switch<'s>(call: Node<'_>, kwargs: &str, src: &'s str) -> Option<&'s str> {
    if call.kind() != "call" || ast::method(call, src) != Some("get") {
        return None;
    }
    let receiver = ast::receiver(call)?;
    if receiver.kind() != "identifier" || text(receiver, src) != kwargs {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let (name, default) = (args.named_child(0)?, args.named_child(1));
    if name.kind() != "string" || args.named_child_count() > 2 {
        return None;
    }
    default
        .is_none_or(|d| matches!(text(d, src), "False" | "None" | "0"))
        .then(|| literal_value(text(name, src)))
}

/// The evaluation branches of a module's method, which a training step does not take
/// (the model is in training mode: `model.train()`, `nn.Module.training`): the body of
/// `if not self.training:`, the `else` of `if self.training:`, and the rest of the block
/// after an `if self.training: ... return` with no `else` (a sampler after the training
/// path's return).
fn evaluation_branches(body: Node<'_>, src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Called for every function a step reaches, at every call: most say nothing of it.
    if !text(body, src).contains(".training") {
        return out;
    }
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        if n.kind() != "if_statement" {
            return true;
        }
        match training_test(n, src) {
            Some(false) => out.extend(
                n.child_by_field_name("consequence")
                    .map(|b| (b.start_byte(), b.end_byte())),
            ),
            Some(true) => out.extend(untaken_after(n)),
            None => {}
        }
        true
    });
    out
}

/// A literal a parameter's default is compared with, by its value: a number (`2`, `2.0`
/// are one), a string without its quotes, `True`/`False`/`None`, or infinity (`inf`,
/// `math.inf`, `float('inf')`, `float("inf")`).
fn comparable_literal<'s>(n: Node<'_>, src: &'s str) -> Option<&'s str> {
    let t = text(n, src);
    match n.kind() {
        "integer" | "float" => Some(t.trim_end_matches(".0").trim_end_matches('.')),
        "string" => Some(literal_value(t)),
        "true" | "false" | "none" => Some(t),
        "identifier" | "attribute" if matches!(t, "inf" | "math.inf" | "np.inf" | "numpy.inf") => {
            Some("inf")
        }
        "call" if matches!(t, "float('inf')" | "float(\"inf\")") => Some("inf"),
        _ => None,
    }
}

/// A subscript whose index could be a boolean mask or a Python list ([`mask_like`] and
/// [`python_list`] decide, with names).
fn maybe_mask_index(subscript: Node<'_>) -> bool {
    let mut c = subscript.walk();
    subscript
        .children_by_field_name("subscript", &mut c)
        .any(|i| {
            matches!(
                i.kind(),
                "comparison_operator"
                    | "unary_operator"
                    | "binary_operator"
                    | "call"
                    | "identifier"
                    | "parenthesized_expression"
                    | "list"
                    | "list_comprehension"
            )
        })
}

/// `if self.training:` (`Some(true)`) or `if not self.training:` (`Some(false)`): a
/// module's branch for training or for evaluation.
fn training_test(node: Node<'_>, src: &str) -> Option<bool> {
    let cond = ast::bare_condition(node)?;
    let is_flag = |n: Node<'_>| n.kind() == "attribute" && text(n, src).ends_with(".training");
    if is_flag(cond) {
        return Some(true);
    }
    (cond.kind() == "not_operator" && cond.child_by_field_name("argument").is_some_and(is_flag))
        .then_some(false)
}

/// Marks, in a set of tensor names, a name known to hold a tensor on the device: built
/// there (`torch.tensor(0).to(device)`, `torch.zeros(1, device="cuda")`, `.cuda()`) or
/// the receiver of `.backward()`. Only these count when a bare name decides a branch:
/// the other tensor names are guesses from what they are called.
const DEVICE: char = '@';

/// The mark of a name that holds a device tensor, for a set of tensor names.
pub(super) fn device_mark(name: &str) -> String {
    format!("{DEVICE}{name}")
}

/// Marks, in a set of tensor names, a name assigned a Python list ([`python_list`]).
const LIST: char = '[';

/// The mark of a name that holds a Python list.
fn list_mark(name: &str) -> String {
    format!("{LIST}{name}")
}

/// A Python list, from how it is written: a list literal or comprehension, `[0] * n`,
/// `list(...)`, `sorted(...)`, `random.sample(...)`, or a name assigned one.
fn python_list(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    match node.kind() {
        "list" | "list_comprehension" => true,
        "binary_operator" => {
            node.child_by_field_name("operator")
                .is_some_and(|o| text(o, src) == "*")
                && node
                    .child_by_field_name("left")
                    .is_some_and(|l| l.kind() == "list")
        }
        "call" => node
            .child_by_field_name("function")
            .is_some_and(|f| matches!(text(f, src), "list" | "sorted" | "random.sample")),
        "identifier" => names.contains(&list_mark(text(node, src))),
        _ => false,
    }
}

/// `x[perm]` in a step with `perm` a Python list and `x` on the device: PyTorch makes a
/// CPU index tensor of the list and copies it to the GPU with a blocking copy, which
/// waits for the GPU queue (PyTorch_Speaker_Verification's `batch[perm]`). Also
/// `sim[same, :, same]`.
fn list_selection(subscript: Node<'_>, src: &str, tensors: &HashSet<String>) -> Option<String> {
    let value = subscript.child_by_field_name("value")?;
    let on_device = tensor_like(value, src, tensors)
        || (value.kind() == "identifier" && holds_device_tensor(text(value, src), tensors));
    if !on_device {
        return None;
    }
    let mut c = subscript.walk();
    let index = subscript
        .children_by_field_name("subscript", &mut c)
        .find(|i| python_list(*i, src, tensors))?;
    // A store into it (`x[idx] = 0`) copies the index too, but reads are what a step
    // does with a permutation; both are reported.
    Some(format!(
        "{}[{}]",
        text(value, src).chars().take(30).collect::<String>(),
        text(index, src).chars().take(30).collect::<String>()
    ))
}

/// Marks, in a set of tensor names, a name assigned a boolean mask ([`mask_like`]).
const MASK: char = '?';

/// The mark of a name that holds a boolean mask, for a set of tensor names.
pub(super) fn mask_mark(name: &str) -> String {
    format!("{MASK}{name}")
}

/// The mark of a name assigned something other than a mask.
fn not_mask_mark(name: &str) -> String {
    format!("{MASK}{HOST}{name}")
}

/// A boolean tensor, from how it is written: a comparison (`x > 0`, `labels != -100`; not
/// `is` or `in`), `~m`, `a & b` or `a | b` of one, `.bool()`, `torch.isnan(x)` and the
/// logical ops, a factory with `dtype=torch.bool`, one moved (`.to(device)`, `.cuda()`), or
/// a name assigned one ([`MASK`]) or called a mask (`src_mask`; not `mask_idx`).
pub(super) fn mask_like(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
    let mut node = node;
    // Through moves and parentheses; bounded as generated chains can be long.
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        match node.kind() {
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => node = inner,
                None => return false,
            },
            "call" if matches!(ast::method(node, src), Some("to" | "cuda" | "detach")) => {
                match ast::receiver(node) {
                    Some(r) => node = r,
                    None => return false,
                }
            }
            _ => break,
        }
    }
    match node.kind() {
        "comparison_operator" => {
            let ops = ast::operators(node, src);
            !ops.is_empty()
                && ops
                    .iter()
                    .all(|o| matches!(*o, "<" | ">" | "<=" | ">=" | "==" | "!="))
        }
        "unary_operator" => node
            .child_by_field_name("operator")
            .is_some_and(|o| text(o, src) == "~"),
        "binary_operator" => {
            node.child_by_field_name("operator")
                .is_some_and(|o| matches!(text(o, src), "&" | "|"))
                && [
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ]
                .into_iter()
                .flatten()
                .any(|side| mask_like(side, src, names))
        }
        "call" => {
            ast::method(node, src) == Some("bool")
                || node.child_by_field_name("function").is_some_and(|f| {
                    matches!(
                        text(f, src),
                        "torch.isnan"
                            | "torch.isinf"
                            | "torch.isfinite"
                            | "torch.logical_and"
                            | "torch.logical_or"
                            | "torch.logical_not"
                    )
                })
                || ast::kwarg(node, "dtype", src).is_some_and(|d| text(d, src) == "torch.bool")
        }
        "identifier" => {
            let name = text(node, src);
            let lower = name.to_ascii_lowercase();
            names.contains(&mask_mark(name))
                || (lower.contains("mask")
                    && !names.contains(&not_mask_mark(name))
                    && ![
                        "idx", "index", "indices", "ids", "pos", "token", "key", "name", "len",
                        "size", "num", "count", "ratio", "prob",
                    ]
                    .iter()
                    .any(|k| lower.contains(k)))
        }
        _ => false,
    }
}

/// A comprehension's variable that iterates a tensor: `y` in `[y[y != pad] for y in
/// padded]`, each a row of `padded`, on its device (Listen-Attend-Spell's decoder strips
/// the padding of each row so).
fn row_of_tensor(value: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    if value.kind() != "identifier" {
        return false;
    }
    let name = text(value, src);
    let mut n = value;
    // The comprehension around the subscript: a few levels up, not the whole tree.
    for _ in 0..8 {
        let Some(p) = n.parent() else {
            return false;
        };
        if matches!(
            p.kind(),
            "list_comprehension" | "generator_expression" | "set_comprehension"
        ) {
            let mut c = p.walk();
            return p
                .named_children(&mut c)
                .filter(|k| k.kind() == "for_in_clause")
                .any(|clause| {
                    clause
                        .child_by_field_name("left")
                        .is_some_and(|l| l.kind() == "identifier" && text(l, src) == name)
                        && clause.child_by_field_name("right").is_some_and(|r| {
                            tensor_like(r, src, tensors)
                                || (r.kind() == "identifier"
                                    && holds_device_tensor(text(r, src), tensors))
                        })
                });
        }
        if ast::is_scope(p) {
            return false;
        }
        n = p;
    }
    false
}

/// `x[mask]` in a step, `x` a tensor: as many elements as the mask holds, which PyTorch
/// counts on the host (a read is `x.masked_select(mask)`, a store of a tensor indexes the
/// same way); a store of a number (`x[mask] = 0`) is `masked_fill_`, no count.
fn mask_selection(subscript: Node<'_>, src: &str, tensors: &HashSet<String>) -> Option<String> {
    let value = subscript.child_by_field_name("value")?;
    let mut c = subscript.walk();
    let index = subscript
        .children_by_field_name("subscript", &mut c)
        .find(|i| mask_like(*i, src, tensors))?;
    let on_device = tensor_like(value, src, tensors)
        || (value.kind() == "identifier" && holds_device_tensor(text(value, src), tensors))
        || row_of_tensor(value, src, tensors)
        || {
            // `sim[~eye]`, `x[keep & valid]`: a mask on the device.
            let mut device = false;
            ast::walk(index, &mut |n| {
                device |= n.kind() == "identifier" && holds_device_tensor(text(n, src), tensors);
                !device
            });
            device
        };
    // `x[mask] = 0` (or a number in a name) is `masked_fill_`, no count; `x[mask] = y` of
    // a tensor (or several targets from a call) indexes as a read does.
    let mut target = subscript;
    if let Some(p) = target.parent()
        && matches!(p.kind(), "pattern_list" | "tuple_pattern")
    {
        target = p;
    }
    let filled = target.parent().is_some_and(|p| {
        matches!(p.kind(), "assignment" | "augmented_assignment")
            && p.child_by_field_name("left")
                .is_some_and(|l| l.id() == target.id())
            && p.child_by_field_name("right").is_some_and(|r| {
                matches!(r.kind(), "integer" | "float" | "true" | "false")
                    || (r.kind() == "unary_operator"
                        && r.named_child(0)
                            .is_some_and(|n| matches!(n.kind(), "integer" | "float")))
                    // `labels[labels == eos] = sep_idx` with a number in a name: a fill too
                    // (End-to-end-ASR's BERT labels).
                    || (matches!(r.kind(), "identifier" | "attribute")
                        && !tensor_like(r, src, tensors)
                        && !holds_device_tensor(text(r, src), tensors))
            })
    });
    (on_device && !filled).then(|| {
        format!(
            "{}[{}]",
            text(value, src).chars().take(30).collect::<String>(),
            text(index, src).chars().take(30).collect::<String>()
        )
    })
}

/// Whether `name` holds a tensor here: in `tensors`, and not marked as assigned a host
/// value since.
fn holds_tensor(name: &str, tensors: &HashSet<String>) -> bool {
    tensors.contains(name) && !tensors.contains(&host_mark(name))
}

/// Whether `name` holds a device tensor here ([`DEVICE`]), not a host value since.
pub(super) fn holds_device_tensor(name: &str, tensors: &HashSet<String>) -> bool {
    tensors.contains(&device_mark(name)) && !tensors.contains(&host_mark(name))
}

/// Calls `f(name, value)` for each `name = value` in `scope` (a function or module body,
/// not its nested functions), in source order.
pub(super) fn simple_assignments<'t>(
    scope: Node<'t>,
    src: &str,
    mut f: impl FnMut(&str, Node<'t>),
) {
    ast::walk(scope, &mut |n| {
        if n.id() != scope.id() && ast::is_scope(n) {
            return false;
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "identifier"
        {
            f(text(left, src), right);
        }
        true
    });
}

/// The names `scope` binds to a tensor built on the device, or computed on the device
/// from one, as [`DEVICE`] marks for a set of tensor names.
pub(super) fn device_tensors(scope: Node<'_>, src: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    simple_assignments(scope, src, |name, value| {
        if built_on_device(value, src) {
            out.insert(device_mark(name));
        } else if computed_on_device(value, src, &out) {
            // Computed from one: `mask = len_seg < (len_seq - 1)`, `counts =
            // mask.sum(-1)` (SpeechSplit's `InterpLnr.forward`, then `counts.tolist()`).
            out.insert(name.to_owned());
            out.insert(device_mark(name));
        }
    });
    out
}

/// A value computed on the device from names holding device tensors: a comparison of one,
/// arithmetic, an element or a tensor method of one ([`device_value`]).
fn computed_on_device(value: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    if value.kind() == "comparison_operator" {
        let mut c = value.walk();
        let parts: Vec<Node<'_>> = value.named_children(&mut c).collect();
        return parts.into_iter().any(|p| device_value(p, src, tensors));
    }
    value.kind() != "identifier" && device_value(value, src, tensors)
}

/// `torch.tensor(0).to(device)`, `torch.zeros(2).cuda()`, `torch.ones(1, device=dev)`:
/// a tensor made by a `torch` factory and put on (or made on) a device other than the
/// CPU.
fn built_on_device(node: Node<'_>, src: &str) -> bool {
    let mut node = node;
    // `torch.randint(..., device=d).unsqueeze(2)`: the same tensor, reshaped.
    for _ in 0..=gpufeed_findings::constants::MAX_NESTING {
        match ast::method(node, src) {
            Some(m) if m != "to" && m != "cuda" && TENSOR_METHODS.contains(&m) => {
                match ast::receiver(node) {
                    Some(r) => node = r,
                    None => return false,
                }
            }
            _ => break,
        }
    }
    if node.kind() != "call" {
        return false;
    }
    match ast::method(node, src) {
        Some("cuda") => ast::receiver(node).is_some_and(|r| torch_factory(r, src)),
        Some("to") => {
            ast::receiver(node).is_some_and(|r| torch_factory(r, src))
                && ast::positional(node, 0)
                    .or_else(|| ast::kwarg(node, "device", src))
                    .is_some_and(|d| names_a_device(d, src))
        }
        _ => {
            torch_factory(node, src)
                && ast::kwarg(node, "device", src).is_some_and(|d| names_a_device(d, src))
        }
    }
}

/// `"cuda"`, `"cuda:0"`, `device`, `self.device`, `args.gpu`, `rank`, `"cuda" if ngpu > 0
/// else "cpu"`: a device other than the CPU, as trainers name it (for a choice between
/// the two, the GPU run's).
fn names_a_device(node: Node<'_>, src: &str) -> bool {
    let t = text(node, src).to_ascii_lowercase();
    match node.kind() {
        "string" => !t.contains("cpu"),
        "identifier" | "attribute" => ["device", "cuda", "gpu", "rank"]
            .iter()
            .any(|k| t.contains(k)),
        // `torch.device("cuda", rank)`
        "call" => t.starts_with("torch.device(") && !t.contains("cpu"),
        "conditional_expression" => {
            let mut c = node.walk();
            let mut values = node.named_children(&mut c);
            // `a if condition else b`: the first and last children are the values.
            let first = values.next();
            let last = values.last();
            first
                .into_iter()
                .chain(last)
                .any(|v| names_a_device(v, src))
        }
        _ => false,
    }
}

/// A call of a `torch` factory (`torch.tensor`, `torch.zeros`, `torch.randint`, ...: [`crate::model::is_host_factory`]).
fn torch_factory(node: Node<'_>, src: &str) -> bool {
    node.kind() == "call"
        && node
            .child_by_field_name("function")
            .is_some_and(|f| crate::model::is_host_factory(text(f, src)))
}

/// `x[i, :, start:end]` where `start` or `end` is a tensor (VITS' `slice_segments`: one
/// element of the batch's random offsets per row): Python needs an `int`, so
/// `Tensor.__index__` copies the value to the host, once per bound per row.
fn tensor_bound(slice: Node<'_>, src: &str, tensors: &HashSet<String>) -> Option<String> {
    let mut c = slice.walk();
    let tensor = slice
        .named_children(&mut c)
        .any(|b| bound_is_tensor(b, src, tensors));
    tensor.then(|| {
        format!(
            "[{}]",
            text(slice, src).chars().take(40).collect::<String>()
        )
    })
}

/// A slice bound that holds a tensor: a tensor name, an element of one (`ids[i]`), or
/// arithmetic on one (`ids[i] + n`), or a module's buffer (`x[:, :, :self.r]` with
/// `self.register_buffer('r', torch.tensor(1))`, WaveRNN's Tacotron decoder).
fn bound_is_tensor(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    match node.kind() {
        "identifier" => holds_tensor(text(node, src), tensors),
        "attribute" => holds_device_tensor(text(node, src), tensors),
        "subscript" => node
            .child_by_field_name("value")
            .is_some_and(|v| bound_is_tensor(v, src, tensors)),
        "binary_operator" | "parenthesized_expression" => node
            .named_children(&mut node.walk())
            .any(|n| bound_is_tensor(n, src, tensors)),
        _ => false,
    }
}

/// Adds to `names` the names `body` assigns from an element of a tensor or arithmetic on
/// one (`idx_str = ids_str[i]`, `idx_end = idx_str + segment_size`), in source order.
pub(super) fn derived_tensors(body: Node<'_>, src: &str, names: &mut HashSet<String>) {
    simple_assignments(body, src, |name, value| {
        if matches!(value.kind(), "subscript" | "binary_operator")
            && bound_is_tensor(value, src, names)
        {
            names.insert(name.to_owned());
        }
    });
}

/// `if stop > 0:` on a name holding a device tensor: `Tensor.__bool__` reads it. An
/// identity or membership test (`is None`, `in`) reads nothing.
fn device_name_decides(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> Option<String> {
    if !holds_device_tensor(text(node, src), tensors) {
        return None;
    }
    let top = branch_condition(node)?;
    // `x is None`, `k in d` around it, and `if loss > prev_loss:` read once, at the first
    // device name.
    let mut identity = false;
    let mut first = None;
    ast::walk(top, &mut |n| {
        if n.kind() == "comparison_operator"
            && n.start_byte() <= node.start_byte()
            && node.end_byte() <= n.end_byte()
        {
            let mut c = n.walk();
            identity |= n.children(&mut c).any(|o| {
                !o.is_named() && matches!(text(o, src), "is" | "in" | "not" | "is not" | "not in")
            });
        }
        if first.is_none() && n.kind() == "identifier" && holds_device_tensor(text(n, src), tensors)
        {
            first = Some(n.id());
        }
        true
    });
    if identity || first != Some(node.id()) {
        return None;
    }
    let line: String = text(top, src).chars().take(40).collect();
    Some(format!("if {line}"))
}

/// A per-step sync a call makes.
pub(super) struct Sync {
    pub(super) id: &'static str,
    /// The call, short (`.item()`, `float(...)`).
    pub(super) what: String,
    /// What it does, after "`what` ... ".
    pub(super) does: &'static str,
    pub(super) fix: &'static str,
}

/// The fix of a JAX host read: JAX dispatches steps asynchronously while nothing reads.
const JAX_FIX: &str = "keep the metrics on the device (`total = jax.tree.map(jnp.add, total, \
                       metrics)`) and `jax.device_get` them every N steps (`if step % 100 == 0:`)";

const HOST_FIX: &str = "keep the value on the device (`total += loss.detach()`) and read it every \
                        N steps (`if step % 100 == 0: print(total.item() / 100)`)";

/// What a slice bound, a subscript or a name deciding a branch reads on the host every
/// step: a tensor bound, a Python-list index into a device tensor, a boolean mask, a device
/// value that decides.
fn read_sync(call: Node<'_>, src: &str, tensors: &HashSet<String>) -> Option<Sync> {
    if call.kind() == "slice" {
        return tensor_bound(call, src, tensors).map(|what| Sync {
            id: "host-sync-in-loop",
            what,
            does: "slices with a tensor as a bound (`Tensor.__index__` reads it on the host)",
            fix: "read the bounds once outside the per-row loop (`starts = ids.tolist()`), or \
                  gather on the device (`torch.gather`, `unfold`, a mask)",
        });
    }
    if call.kind() == "subscript" {
        if let Some(what) = list_selection(call, src, tensors) {
            return Some(Sync {
                id: "host-sync-in-loop",
                what,
                does: "indexes a device tensor with a Python list: PyTorch builds a CPU index \
                       tensor and copies it to the GPU with a blocking copy, which waits for \
                       the GPU queue",
                fix: "build the index on the device (`torch.randperm(n, device=x.device)`, \
                      `torch.arange(n, device=x.device)`), or once before the loop with \
                      `torch.as_tensor(idx, device=x.device)`",
            });
        }
        return mask_selection(call, src, tensors).map(|what| Sync {
            id: "host-sync-in-loop",
            what,
            does: "indexes by a boolean mask: as many elements as the mask holds, which the \
                   host must count first",
            fix: "keep the shape fixed: multiply by the mask (`(err * mask).sum() / mask.sum()`) \
                  or `torch.where(mask, x, 0)` instead of selecting",
        });
    }
    if call.kind() == "identifier" {
        return device_name_decides(call, src, tensors).map(|what| Sync {
            id: "host-sync-in-loop",
            what,
            does: "reads a device tensor on the host to take the branch",
            fix: "decide on the device (`torch.where`), or check every N steps",
        });
    }
    None
}

/// The syncs of a framework's own calls: a TensorFlow summary under a writer, JAX's
/// `jax.device_get`, `np.asarray` of a device array and `.block_until_ready()`.
fn framework_sync(
    names: &ast::Names,
    call: Node<'_>,
    name: &str,
    method: Option<&str>,
    src: &str,
    tensors: &HashSet<String>,
) -> Option<Sync> {
    // `tf.summary.scalar("loss", loss, step=step)` under a writer: the summary op runs on
    // the CPU, so the value is copied from the GPU, and the eager call waits for it. The
    // project pass keeps it only where a writer is made and no `record_if` thins the
    // writes out.
    if let Some(kind) = name.strip_prefix("tensorflow.summary.")
        && matches!(kind, "scalar" | "histogram" | "image" | "audio")
        && ast::positional(call, 1)
            .or_else(|| ast::kwarg(call, "data", src))
            .is_some_and(|d| {
                // What a training loop summarises is a tensor unless known on the host.
                tensor_like(d, src, tensors)
                    || (d.kind() == "identifier" && !on_host(d, src, tensors))
                    || (d.kind() == "call"
                        && names
                            .callee(d, src)
                            .is_some_and(|c| c.starts_with("tensorflow.")))
            })
    {
        return Some(Sync {
            id: "host-sync-in-loop",
            what: format!("tf.summary.{kind}(...)"),
            does: "writes a summary on the CPU, which copies the tensor from the GPU and waits for it",
            fix: "write summaries every N steps: `with tf.summary.record_if(lambda: \
                  step % 100 == 0):`, or `if step % 100 == 0:` around them",
        });
    }
    // JAX: `jax.device_get(metrics)` copies device arrays to the host, `np.asarray(loss)`
    // does too, and `loss.block_until_ready()` waits for the device (each every step).
    let jax_value = |a: Node<'_>| -> bool {
        if a.kind() == "dictionary" {
            let mut c = a.walk();
            let pairs: Vec<Node<'_>> = a.named_children(&mut c).collect();
            return pairs.into_iter().any(|p| {
                p.child_by_field_name("value")
                    .is_some_and(|v| tensor_like(v, src, tensors))
            });
        }
        tensor_like(a, src, tensors)
    };
    if matches!(name, "jax.device_get" | "numpy.asarray" | "numpy.array")
        && ast::positional(call, 0).is_some_and(jax_value)
        && (name == "jax.device_get" || names.imports("jax"))
    {
        return Some(Sync {
            id: "host-sync-in-loop",
            what: format!("{}(...)", name.replace("numpy.", "np.")),
            does: "copies device arrays to the host, waiting for the step that makes them",
            fix: JAX_FIX,
        });
    }
    if method == Some("block_until_ready")
        && names.imports("jax")
        && ast::receiver(call).is_some_and(jax_value)
    {
        return Some(Sync {
            id: "host-sync-in-loop",
            what: ".block_until_ready()".to_owned(),
            does: "waits for the device to finish the step, so the next one cannot be queued behind it",
            fix: JAX_FIX,
        });
    }
    None
}

/// The sync `call` makes every step, if any; `tensors` are the names that hold tensors.
pub(super) fn sync(
    names: &ast::Names,
    call: Node<'_>,
    src: &str,
    tensors: &HashSet<String>,
) -> Option<Sync> {
    if matches!(call.kind(), "slice" | "subscript" | "identifier") {
        return read_sync(call, src, tensors);
    }
    let name = names.callee(call, src).unwrap_or_default();
    let method = ast::method(call, src);
    let nargs = ast::arg_count(call);
    // A JAX loop gets JAX's fix (`.detach()` and `.item()` are PyTorch's).
    let host_fix = if names.imports("jax") && !names.imports_torch {
        JAX_FIX
    } else {
        HOST_FIX
    };
    let host = |what: String| Sync {
        id: "host-sync-in-loop",
        what,
        does: "copies a tensor to the host",
        fix: host_fix,
    };
    // `s = "%10.4g" * 4 % (*mloss,)`, `f"{loss}"`: formatting a tensor reads it, wherever
    // the string goes.
    if call.kind() == "interpolation" {
        return interpolates_tensor(call, src, tensors).then(|| host("f\"{t}\"".to_owned()));
    }
    if call.kind() == "binary_operator" {
        return percent_formats_tensor(call, src, tensors).then(|| host("\"...\" % t".to_owned()));
    }
    match method {
        // `lengths = lengths.cpu()` then `n.item()` for each: only the first copy waits.
        Some(m @ ("item" | "numpy" | "cpu"))
            if nargs == 0
                && !ast::receiver(call).is_some_and(|r| read_on_host(r, src, tensors)) =>
        {
            return Some(host(format!(".{m}()")));
        }
        Some("tolist")
            if nargs == 0 && ast::receiver(call).is_some_and(|r| tensor_like(r, src, tensors)) =>
        {
            return Some(host(".tolist()".to_owned()));
        }
        _ => {}
    }
    if let Some(what) = reduction_in_condition(call, &name, src, tensors) {
        return Some(Sync {
            id: "host-sync-in-loop",
            what,
            does: "reads a tensor on the host to take the branch",
            fix: "decide on the device (`torch.where`, `torch.clamp`), or check every N steps",
        });
    }
    match method {
        // `"{:.6f}".format(grad_norm)`: `Tensor.__format__` reads the value.
        Some("format")
            if ast::receiver(call).is_some_and(|r| r.kind() == "string")
                && ast::args_any(call, |a| tensor_like(a, src, tensors)) =>
        {
            return Some(host("\"...\".format(...)".to_owned()));
        }
        // `pred.masked_select(mask)`, `x.nonzero()`: the result's size depends on the data,
        // so PyTorch reads the count on the host before it can allocate it.
        Some(m @ ("masked_select" | "nonzero" | "unique"))
            if ast::receiver(call).is_some_and(|r| {
                tensor_like(r, src, tensors)
                    || (r.kind() == "identifier" && holds_device_tensor(text(r, src), tensors))
            }) =>
        {
            return Some(Sync {
                id: "host-sync-in-loop",
                what: format!(".{m}(...)"),
                does: "returns as many elements as the data holds, which the host must read to allocate them",
                fix: "keep the shape fixed: multiply by the mask (`(err * mask).sum() / mask.sum()`) or \
                      `torch.where(mask, x, 0)` instead of selecting",
            });
        }
        // `self.log("train_loss", loss, prog_bar=True)` in Lightning's `training_step`: the
        // progress bar shows the value, read on the host at every refresh (every step by
        // default); `on_step=False` logs it once per epoch.
        Some(m @ ("log" | "log_dict"))
            if ast::receiver(call).is_some_and(|r| text(r, src) == "self")
                && ast::kwarg(call, "prog_bar", src).is_some_and(ast::is_true)
                && ast::kwarg(call, "on_step", src).is_none_or(|v| text(v, src) != "False")
                && ast::positional(call, if m == "log" { 1 } else { 0 })
                    .is_some_and(|v| tensor_like(v, src, tensors) || v.kind() == "dictionary") =>
        {
            let synced = ast::kwarg(call, "sync_dist", src).is_some_and(ast::is_true);
            return Some(Sync {
                id: "host-sync-in-loop",
                what: format!("self.{m}(..., prog_bar=True)"),
                does: if synced {
                    "shows a tensor in the progress bar, which reads it on the host at every step, \
                     after an all-reduce across the ranks (`sync_dist=True`)"
                } else {
                    "shows a tensor in the progress bar, which reads it on the host at every step"
                },
                fix: "log per step without the progress bar (`prog_bar=False`), or `on_step=False, \
                      on_epoch=True`; keep `sync_dist=True` for epoch-level values only",
            });
        }
        // `writer.add_scalar("loss", loss, step)`: TensorBoard's writer calls `.item()`.
        Some(m @ ("add_scalar" | "add_scalars"))
            if ast::positional(call, 1).is_some_and(|a| tensor_like(a, src, tensors)) =>
        {
            return Some(host(format!(".{m}(...)")));
        }
        _ => {}
    }
    if let Some(sync) = framework_sync(names, call, &name, method, src, tensors) {
        return Some(sync);
    }
    if formats_a_tensor(call, src, tensors) {
        return Some(host("\"...\" % t".to_owned()));
    }
    named_call_sync(&name, call, nargs, src, tensors, host)
}

/// The syncs of a call [`sync`] knows by the function's name (builtins, `torch`, `math`,
/// `time`): `host` makes a `host-sync-in-loop` finding of what is read.
fn named_call_sync(
    name: &str,
    call: Node<'_>,
    nargs: usize,
    src: &str,
    tensors: &HashSet<String>,
    host: impl Fn(String) -> Sync,
) -> Option<Sync> {
    let first_is_tensor = || ast::positional(call, 0).is_some_and(|a| tensor_like(a, src, tensors));
    // `max(lengths)` iterates a device tensor and compares its 0-d elements on the host;
    // `range(steps)` reads one with `__index__`. Only a name known to hold a device tensor:
    // `max(losses)` over a Python list of floats is common and free.
    let first_on_device = || {
        ast::positional(call, 0)
            .is_some_and(|a| a.kind() == "identifier" && holds_device_tensor(text(a, src), tensors))
    };
    match name {
        "float" | "int" | "bool" if first_is_tensor() => Some(host(format!("{name}(...)"))),
        "max" | "min" | "sorted" | "list" | "range" if nargs == 1 && first_on_device() => {
            Some(host(format!("{name}(...)")))
        }
        // `pack_padded_sequence(x, lengths)` wants the lengths on the CPU, and copies device
        // ones there (PyTorch's docs: "must be on the CPU if provided as a tensor").
        "torch.nn.utils.rnn.pack_padded_sequence"
            if ast::positional(call, 1)
                .or_else(|| ast::kwarg(call, "lengths", src))
                .is_some_and(|a| device_value(a, src, tensors)) =>
        {
            Some(host("pack_padded_sequence(x, device lengths)".to_owned()))
        }
        // `torch.arange(lengths.max(), device=d)`, `torch.zeros(n_max, 80)`: a size given as
        // a 0-d device tensor is read on the host (`__index__`) before the factory runs
        // (VITS-style `sequence_mask` with `max_length = length.max()`).
        "torch.arange" | "torch.zeros" | "torch.ones" | "torch.empty" | "torch.full"
        | "torch.rand" | "torch.randn" | "torch.randint" | "torch.linspace"
            if positional_args(call).any(|a| device_value(a, src, tensors)) =>
        {
            Some(host(format!("{name}(...)")))
        }
        // `max(1, D - mask_len.max())`: the builtin compares its arguments, and a device
        // tensor among them is read with `__bool__` (ECAPA-TDNN's `FbankAug`).
        "max" | "min"
            if nargs >= 2
                && ast::args_any(call, |a| {
                    device_value(a, src, tensors) || tensor_like(a, src, tensors)
                }) =>
        {
            Some(host(format!("{name}(...)")))
        }
        // `math.isnan(grad_norm)`: `Tensor.__float__` reads the value.
        m if m.starts_with("math.") && first_is_tensor() => Some(host(format!("{m}(...)"))),
        "print" if prints_tensor(call, src, tensors) => Some(host("print(...)".to_owned())),
        "torch.cuda.synchronize" | "torch.cuda.empty_cache" => Some(Sync {
            id: "cuda-sync-in-loop",
            what: format!("{}()", name.trim_start_matches("torch.")),
            does: "drains the GPU queue or re-allocates memory",
            fix: "delete it; synchronize only around timing code, every N steps",
        }),
        "time.sleep" => Some(Sync {
            id: "sleep-in-loop",
            what: "time.sleep(...)".to_owned(),
            does: "idles the GPU for the sleep",
            fix: "delete the sleep",
        }),
        _ => None,
    }
}

/// `sys.stderr.write("loss %.4f" % loss)`: `%` formatting of a tensor in an argument reads
/// it (`__float__`), also inside a longer expression (`time.strftime(...) + " acc %.2f" %
/// (top1 / n)`).
fn formats_a_tensor(call: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    ast::args_any(call, |a| {
        let mut found = false;
        ast::walk(a, &mut |n| {
            found |= percent_formats_tensor(n, src, tensors);
            !found && !matches!(n.kind(), "call" | "lambda")
        });
        found
    })
}

/// `f"{loss.detach().float()}"`: an f-string's field holding a tensor formats it on the host.
fn interpolates_tensor(node: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    node.kind() == "interpolation"
        && node
            .child_by_field_name("expression")
            .is_some_and(|e| tensor_like(e, src, tensors) || device_value(e, src, tensors))
}

/// `print(loss)`, `print("loss", out.mean())`, `print(f"{loss:.3f}")`.
fn prints_tensor(call: Node<'_>, src: &str, tensors: &HashSet<String>) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut c = args.walk();
    let kids: Vec<_> = args.named_children(&mut c).collect();
    kids.into_iter().any(|arg| {
        if arg.kind() == "keyword_argument" {
            return false;
        }
        if tensor_like(arg, src, tensors) {
            return true;
        }
        let mut found = false;
        if arg.kind() == "string" {
            ast::walk(arg, &mut |n| {
                if n.kind() == "interpolation"
                    && let Some(e) = n.child_by_field_name("expression")
                {
                    found |= tensor_like(e, src, tensors);
                }
                !found
            });
        }
        found
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    #[test]
    fn a_step_function_is_named_by_the_word() {
        for name in [
            "train_step",
            "distributed_train_step",
            "train_step_fn",
            "training_step",
        ] {
            assert!(
                super::names_a_step(name, "train_step")
                    || super::names_a_step(name, "training_step"),
                "{name}"
            );
        }
        // A count of steps is no step (simclr's `get_train_steps`).
        assert!(!super::names_a_step("get_train_steps", "train_step"));
    }

    #[test]
    fn host_syncs() {
        let bad = "\
import torch
for epoch in range(10):
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        acc = (out.argmax(1) == y).float().mean().cpu()
        print(f'loss {loss:.3f}')
        lr = float(loss)
        p = out.tolist()
";
        assert_eq!(
            ids(bad),
            vec![
                ("host-sync-in-loop", 8),
                ("host-sync-in-loop", 9),
                ("host-sync-in-loop", 10),
                ("host-sync-in-loop", 11),
                ("host-sync-in-loop", 12),
            ]
        );
        let good = "\
import torch
for epoch in range(10):
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.detach()
        if step % 100 == 0:
            print(total.item() / 100)
        n = float(step)
        print('step', step)
    print(total.item())  # once per epoch
for p in paths:
    print(p.numpy())  # not a training loop
";
        assert_eq!(ids(good), vec![]);
    }

    #[test]
    fn tf_custom_loop() {
        let bad = "\
import tensorflow as tf
for x, y in ds:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    history.append(loss.numpy())
";
        assert_eq!(ids(bad), vec![("host-sync-in-loop", 7)]);
    }

    #[test]
    fn cuda_sync_and_sleep() {
        let bad = "\
import time
import torch
from time import sleep
synchronize = torch.cuda.synchronize
while True:
    batch = next(it)
    train_step(batch)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    sleep(0.01)
    synchronize()
";
        assert_eq!(
            ids(bad),
            vec![
                ("cuda-sync-in-loop", 8),
                ("cuda-sync-in-loop", 9),
                ("cuda-sync-in-loop", 11),
                ("sleep-in-loop", 10),
            ]
        );
        let good = "\
import time
import torch
torch.cuda.synchronize()
for i in range(3):
    time.sleep(1)  # a retry loop, not training
for b in loader:
    train_step(b)
    if b.idx % 50 == 0:
        torch.cuda.synchronize()
sync = torch.cuda.synchronize
sync = lambda: None
for b in loader:
    train_step(b)
    sync()
";
        assert_eq!(ids(good), vec![]);
    }
}
