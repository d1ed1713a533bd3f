//! Training-loop rules: `host-sync-in-loop`, `cuda-sync-in-loop`, `sleep-in-loop`.
//!
//! A training loop is the innermost `for`/`while` whose own body (not a nested loop's,
//! function's or class's) makes a step: `.backward()`, `optimizer.step()`,
//! `.apply_gradients()`, `tape.gradient()`, `.minimize()`, `train_on_batch()` or a call of
//! a `*train_step*` function. The rules then look at the whole loop body (nested blocks and
//! loops included: they run at least once per step), except code under an `if` whose
//! condition uses `%`, which runs every N steps (`if step % 100 == 0: print(loss.item())`
//! is the recommended way to log).

use std::collections::HashSet;

use tree_sitter::Node;

use super::File;
use super::ast::{self, text};

/// The call that makes a loop a training loop, if this is one.
fn step_call(call: Node<'_>, src: &str, names: &ast::Names) -> bool {
    let method = ast::method(call, src);
    let receiver = ast::receiver(call).map(|r| text(r, src).to_ascii_lowercase());
    let recv = receiver.as_deref().unwrap_or("");
    match method {
        Some("backward" | "apply_gradients" | "minimize" | "train_on_batch") => return true,
        Some("step") => {
            return (recv.contains("opt") || recv.contains("scaler")) && !recv.contains("sched");
        }
        Some("gradient") => return recv.contains("tape"),
        _ => {}
    }
    names.callee(call, src).is_some_and(|n| {
        let last = n.rsplit('.').next().unwrap_or(&n).to_ascii_lowercase();
        last.contains("train_step") || last.contains("training_step")
    })
}

/// Calls in a loop's own body: not in nested loops, functions, classes or lambdas.
fn own_calls<'t>(body: Node<'t>) -> Vec<Node<'t>> {
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

/// Names that hold tensors in this loop: receivers of `.backward()`, names like a loss or
/// an output, and targets assigned from a call of a model, net, criterion or loss.
fn tensor_names(body: Node<'_>, src: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    ast::walk(body, &mut |n| {
        if ast::is_scope(n) {
            return false;
        }
        match n.kind() {
            "call" if ast::method(n, src) == Some("backward") => {
                if let Some(r) = ast::receiver(n) {
                    names.insert(text(r, src).to_owned());
                }
            }
            "assignment" => {
                let from_model = n.child_by_field_name("right").is_some_and(|r| {
                    r.kind() == "call"
                        && r.child_by_field_name("function").is_some_and(|f| {
                            let f = text(f, src).to_ascii_lowercase();
                            let last = f.rsplit('.').next().unwrap_or(&f);
                            ["model", "net", "criterion", "loss", "forward"]
                                .iter()
                                .any(|k| last.contains(k))
                        })
                });
                if from_model && let Some(left) = n.child_by_field_name("left") {
                    ast::walk(left, &mut |t| {
                        if t.kind() == "identifier" {
                            names.insert(text(t, src).to_owned());
                        }
                        true
                    });
                }
            }
            _ => {}
        }
        true
    });
    names
}

fn tensor_like(node: Node<'_>, src: &str, names: &HashSet<String>) -> bool {
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
    let name = text(root, src).to_ascii_lowercase();
    names.contains(whole)
        || names.contains(text(root, src))
        || ["loss", "logit", "pred", "output"]
            .iter()
            .any(|k| name.contains(k))
}

/// True for an `if` that runs every N steps (`%` in its condition).
fn periodic(node: Node<'_>, src: &str) -> bool {
    node.child_by_field_name("condition").is_some_and(|c| {
        let mut found = false;
        ast::walk(c, &mut |n| {
            if n.kind() == "binary_operator"
                && n.child_by_field_name("operator")
                    .is_some_and(|o| text(o, src) == "%")
            {
                found = true;
            }
            !found
        });
        found
    })
}

pub(super) fn check(file: &mut File<'_>) {
    let src = file.src;
    let mut loops = Vec::new();
    ast::walk(file.root, &mut |n| {
        if matches!(n.kind(), "for_statement" | "while_statement") {
            loops.push(n);
        }
        true
    });
    let mut seen = HashSet::new();
    for lp in loops {
        let Some(body) = lp.child_by_field_name("body") else {
            continue;
        };
        let Some(step) = own_calls(body)
            .into_iter()
            .find(|c| step_call(*c, src, &file.names))
        else {
            continue;
        };
        let context = format!(
            "in the training loop at line {} (it calls `{}`)",
            lp.start_position().row + 1,
            text(step, src)
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect::<String>()
        );
        let tensors = tensor_names(body, src);
        let mut calls = Vec::new();
        ast::walk(body, &mut |n| {
            if ast::is_scope(n) {
                return false;
            }
            if n.kind() == "if_statement" && periodic(n, src) {
                // Skip the periodic branch; its elif/else run on the other steps.
                let mut c = n.walk();
                for alt in n.children_by_field_name("alternative", &mut c) {
                    ast::walk(alt, &mut |m| {
                        if ast::is_scope(m) {
                            return false;
                        }
                        if m.kind() == "call" {
                            calls.push(m);
                        }
                        true
                    });
                }
                return false;
            }
            if n.kind() == "call" {
                calls.push(n);
            }
            true
        });
        for call in calls {
            if !seen.insert(call.id()) {
                continue;
            }
            sync(file, call, &tensors, &context);
        }
    }
}

fn sync(file: &mut File<'_>, call: Node<'_>, tensors: &HashSet<String>, context: &str) {
    let src = file.src;
    let name = file.names.callee(call, src).unwrap_or_default();
    let method = ast::method(call, src);
    let nargs = ast::arg_count(call);
    let host = "keep the value on the device (`total += loss.detach()`) and read it every N steps \
                (`if step % 100 == 0: print(total.item() / 100)`)";
    let flagged = match method {
        Some(m @ ("item" | "numpy" | "cpu")) if nargs == 0 => Some(format!("`.{m}()`")),
        Some("tolist")
            if nargs == 0 && ast::receiver(call).is_some_and(|r| tensor_like(r, src, tensors)) =>
        {
            Some("`.tolist()`".to_owned())
        }
        _ => None,
    };
    if let Some(what) = flagged {
        file.hit(
            "host-sync-in-loop",
            call,
            format!("{what} in the training loop copies a tensor to the host every step"),
            Some(context.to_owned()),
            host,
        );
        return;
    }
    match name.as_str() {
        "float" | "int"
            if ast::positional(call, 0).is_some_and(|a| tensor_like(a, src, tensors)) =>
        {
            file.hit(
                "host-sync-in-loop",
                call,
                format!("`{name}(...)` of a tensor in the training loop copies it to the host every step"),
                Some(context.to_owned()),
                host,
            );
        }
        "print" if prints_tensor(call, src, tensors) => file.hit(
            "host-sync-in-loop",
            call,
            "`print` of a tensor in the training loop copies it to the host every step",
            Some(context.to_owned()),
            host,
        ),
        "torch.cuda.synchronize" | "torch.cuda.empty_cache" => {
            let short = name.trim_start_matches("torch.cuda.");
            file.hit(
                "cuda-sync-in-loop",
                call,
                format!("`torch.cuda.{short}()` runs every step of the training loop"),
                Some(context.to_owned()),
                "delete it; synchronize only around timing code, every N steps",
            );
        }
        "time.sleep" => file.hit(
            "sleep-in-loop",
            call,
            "`time.sleep` in the training loop",
            Some(context.to_owned()),
            "delete the sleep",
        ),
        _ => {}
    }
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
while True:
    batch = next(it)
    train_step(batch)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    sleep(0.01)
";
        assert_eq!(
            ids(bad),
            vec![
                ("cuda-sync-in-loop", 7),
                ("cuda-sync-in-loop", 8),
                ("sleep-in-loop", 9)
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
";
        assert_eq!(ids(good), vec![]);
    }
}
