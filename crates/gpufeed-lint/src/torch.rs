//! PyTorch rules: `DataLoader` settings (`torch-loader-no-workers`,
//! `torch-loader-no-pin-memory`, `torch-loader-no-persistent-workers`) and
//! `torch-data-parallel`.

use std::collections::HashSet;

use tree_sitter::Node;

use super::File;
use super::ast::{self, text};
use super::signatures as sig;

/// The fix of `torch-loader-no-workers`.
pub(super) const NO_WORKERS_FIX: &str =
    "DataLoader(..., num_workers=8, persistent_workers=True)  # up to the number of cores";

/// The fix of `torch-loader-no-pin-memory`.
pub(super) const PIN_MEMORY_FIX: &str =
    "DataLoader(..., pin_memory=True); batch = batch.to(device, non_blocking=True)";

/// `DataLoader`'s signature in [`sig::SIGNATURES`].
pub(super) const LOADER: &str = "torch.utils.data.DataLoader";

pub(super) fn is_data_loader(name: &str, imports_torch: bool) -> bool {
    matches!(
        name,
        "torch.utils.data.DataLoader" | "torch.utils.data.dataloader.DataLoader"
    ) || (name == "DataLoader" && imports_torch)
        || (name.starts_with("torch") && name.ends_with(".DataLoader"))
}

fn is_data_parallel(name: &str) -> bool {
    matches!(
        name,
        "torch.nn.DataParallel"
            | "torch.nn.parallel.DataParallel"
            | "torch.nn.parallel.data_parallel.DataParallel"
    )
}

/// A string that names a CUDA device (`"cuda"`, `"cuda:0"`) or Lightning's GPU accelerator
/// (`Trainer(accelerator="gpu")`).
fn names_cuda(string: Node<'_>, src: &str) -> bool {
    let s = text(string, src).trim_matches(|c| c == '"' || c == '\'');
    s == "cuda"
        || s.starts_with("cuda:")
        || (s == "gpu"
            && string
                .parent()
                .filter(|p| p.kind() == "keyword_argument")
                .and_then(|p| p.child_by_field_name("name"))
                .is_some_and(|k| text(k, src) == "accelerator"))
}

/// `anomaly-detection-on` at a call that turns autograd's anomaly mode on.
fn anomaly_hit(file: &mut File<'_>, call: Node<'_>) {
    file.hit(
        "anomaly-detection-on",
        call,
        format!(
            "`{}` turns autograd's anomaly mode on for the steps it covers",
            text(call, file.src).chars().take(60).collect::<String>()
        ),
        None,
        "delete it, or guard it with a debug flag off by default: \
         `torch.autograd.set_detect_anomaly(args.debug)`",
    );
}

/// `torch.distributed.init_process_group("gloo", ...)` (or `backend="gloo"`).
fn gloo_group(name: &str, call: Node<'_>, src: &str) -> bool {
    name == "torch.distributed.init_process_group"
        && ast::positional(call, 0)
            .or_else(|| ast::kwarg(call, "backend", src))
            .is_some_and(|b| text(b, src).trim_matches(|c| c == '"' || c == '\'') == "gloo")
}

/// A call that puts a distributed run on CUDA: `torch.cuda.set_device(rank)` (any
/// `torch.cuda` call), `DistributedDataParallel(..., device_ids=[rank])`.
fn on_cuda_ranks(name: &str, call: Node<'_>, src: &str) -> bool {
    name.starts_with("torch.cuda.")
        || (name.ends_with("DistributedDataParallel")
            && ast::kwarg(call, "device_ids", src).is_some())
}

/// The `init_process_group("gloo")` calls of a file: judged here where the file trains on
/// CUDA, else left to the project (the model may go to CUDA in another file, a trainer's).
fn distributed<'t>(file: &mut File<'t>, gloo: Vec<Node<'t>>, on_cuda: bool) {
    file.cuda_ranks |= on_cuda;
    if on_cuda {
        for call in gloo {
            gloo_on_cuda(file, call);
        }
    } else {
        file.gloo = gloo;
    }
}

/// `ddp-gloo-on-cuda` at an `init_process_group("gloo", ...)` call.
pub(super) fn gloo_on_cuda(file: &mut File<'_>, call: Node<'_>) {
    file.hit(
        "ddp-gloo-on-cuda",
        call,
        format!(
            "`{}` synchronises the gradients of a model on CUDA through gloo",
            text(call, file.src).chars().take(60).collect::<String>()
        ),
        None,
        "dist.init_process_group(\"nccl\", rank=rank, world_size=world_size)  # NCCL for CUDA \
         tensors; gloo for CPU training",
    );
}

/// The file's subclasses of `DataLoader`: each name, and whether it defines `__init__`.
pub(super) fn loader_subclasses(file: &File<'_>) -> Vec<(String, bool)> {
    let src = file.src;
    let mut out = Vec::new();
    ast::walk(file.root, &mut |n| {
        if n.kind() == "class_definition"
            && let Some(bases) = n.child_by_field_name("superclasses")
        {
            let mut c = bases.walk();
            let is_loader = bases.named_children(&mut c).any(|b| {
                ast::dotted(b, src).is_some_and(|d| {
                    is_data_loader(&file.names.resolve(&d), file.names.imports_torch)
                })
            });
            if is_loader && let Some(name) = n.child_by_field_name("name") {
                // An `__init__` that hands `*args, **kwargs` on to `DataLoader.__init__`
                // unchanged (deepspeech.pytorch's `AudioDataLoader`) keeps its settings at the
                // call.
                let mut has_init = false;
                if let Some(body) = n.child_by_field_name("body") {
                    let mut c = body.walk();
                    has_init = body.named_children(&mut c).any(|d| {
                        let d = if d.kind() == "decorated_definition" {
                            d.child_by_field_name("definition").unwrap_or(d)
                        } else {
                            d
                        };
                        d.kind() == "function_definition"
                            && d.child_by_field_name("name")
                                .is_some_and(|x| text(x, src) == "__init__")
                            && !passes_everything_on(d, src)
                    });
                }
                out.push((text(name, src).to_owned(), has_init));
            }
        }
        true
    });
    out
}

/// `torch.autograd.set_detect_anomaly(True)` (also `mode=True`) or
/// `torch.autograd.detect_anomaly()` (the context manager, on unless `False` is given):
/// anomaly mode turned on by a literal, not by a flag.
fn anomaly_mode_on(name: &str, call: Node<'_>, src: &str) -> bool {
    let first = ast::positional(call, 0).or_else(|| ast::kwarg(call, "mode", src));
    match name {
        "torch.autograd.set_detect_anomaly" | "torch.autograd.anomaly_mode.set_detect_anomaly" => {
            first.is_some_and(|a| a.kind() == "true")
        }
        "torch.autograd.detect_anomaly" | "torch.autograd.anomaly_mode.detect_anomaly" => {
            first.is_none_or(|a| a.kind() == "true")
        }
        _ => false,
    }
}

/// torchtext's legacy batch iterators (`torchtext.data.BucketIterator`, `Iterator`, their
/// `.splits`, and the same under `torchtext.legacy.data`): batches made in the calling
/// thread.
fn is_text_iterator(name: &str) -> bool {
    let name = name.strip_suffix(".splits").unwrap_or(name);
    matches!(
        name,
        "torchtext.data.BucketIterator"
            | "torchtext.data.Iterator"
            | "torchtext.data.BPTTIterator"
            | "torchtext.legacy.data.BucketIterator"
            | "torchtext.legacy.data.Iterator"
            | "torchtext.legacy.data.BPTTIterator"
    )
}

/// True when `__init__` calls `super().__init__` with its own `*args` and `**kwargs` only.
fn passes_everything_on(init: Node<'_>, src: &str) -> bool {
    let mut found = false;
    ast::walk(init, &mut |n| {
        if n.kind() == "call"
            && n.child_by_field_name("function").is_some_and(|f| {
                text(f, src).starts_with("super(") && text(f, src).ends_with(".__init__")
            })
            && let Some(args) = n.child_by_field_name("arguments")
        {
            let mut c = args.walk();
            let kinds: Vec<&str> = args.named_children(&mut c).map(|a| a.kind()).collect();
            found |= !kinds.is_empty()
                && kinds
                    .iter()
                    .all(|k| matches!(*k, "list_splat" | "dictionary_splat"));
        }
        !found
    });
    found
}

/// A call that builds a `DataLoader` through a subclass of it: `Loader(...)` of a subclass
/// that keeps `DataLoader`'s `__init__`, or `super().__init__(...)` inside one that has its
/// own (the settings it passes on are the loader's).
fn builds_loader_subclass<'t>(
    root: Node<'t>,
    call: Node<'t>,
    src: &str,
    subclasses: &[(String, bool)],
) -> bool {
    let Some(function) = call.child_by_field_name("function") else {
        return false;
    };
    let f = text(function, src);
    if subclasses
        .iter()
        .any(|(name, has_init)| !has_init && f == name)
    {
        return true;
    }
    f == "super().__init__"
        && ast::enclosing(root, call, "class_definition")
            .and_then(|c| c.child_by_field_name("name"))
            .is_some_and(|n| subclasses.iter().any(|(name, _)| name == text(n, src)))
}

/// True when `callee` (a call's resolved name) is a subclass of `DataLoader` that another
/// module of the project defines without its own `__init__`: `from pkg.loader import
/// AudioLoader` (or `from .loader import ...`) then `AudioLoader(...)`.
fn imported_loader_subclass(callee: &str, project: &[(String, bool)]) -> bool {
    let relative = callee.trim_start_matches('.');
    let below = |q: &str| q.ends_with(relative) && q[..q.len() - relative.len()].ends_with('.');
    // `from dl import AudioDataLoader` where `dl` is `src/data/dl.py`, found through
    // `PYTHONPATH` (Speech-Transformer's `path.sh`): the one module of the project that
    // ends so.
    let by_suffix = project.iter().filter(|(q, _)| below(q)).count() == 1;
    callee.contains('.')
        && project.iter().any(|(qualified, has_init)| {
            !has_init
                && (qualified == callee
                    || ((callee.starts_with('.') || by_suffix) && below(qualified)))
        })
}

/// The torch rules of one file. `subclasses` are the file's own `DataLoader` subclasses
/// ([`loader_subclasses`]); `project` holds every file's by qualified name
/// (`pkg.loader.AudioLoader`), each with whether it defines `__init__`.
pub(super) fn check(
    file: &mut File<'_>,
    subclasses: &[(String, bool)],
    project: &[(String, bool)],
) {
    let src = file.src;
    let mut loaders = Vec::new();
    let mut parallel = Vec::new();
    let mut trainer_args = Vec::new();
    let mut text_iterators = Vec::new();
    let mut anomaly = Vec::new();
    let mut gloo = Vec::new();
    // CUDA as a distributed run uses it: `torch.cuda.set_device(rank)`, DDP over devices.
    let mut cuda_ranks = false;
    let mut on_the_fly = None;
    let mut uses_cuda = false;
    ast::walk(file.root, &mut |n| {
        match n.kind() {
            "call" => {
                let name = file.names.callee(n, src).unwrap_or_default();
                if matches!(
                    name.as_str(),
                    "transformers.TrainingArguments" | "transformers.Seq2SeqTrainingArguments"
                ) {
                    trainer_args.push(n);
                }
                // Work a Hugging Face dataset does when an item is read: a transform, or
                // an `Audio` column decoded (and resampled) on access.
                if on_the_fly.is_none()
                    && (matches!(
                        ast::method(n, src),
                        Some("set_transform" | "with_transform")
                    ) || name == "datasets.Audio")
                {
                    on_the_fly = Some(text(n, src).chars().take(60).collect::<String>());
                }
                if is_text_iterator(&name) {
                    text_iterators.push(n);
                }
                if anomaly_mode_on(&name, n, src) {
                    anomaly.push(n);
                }
                if gloo_group(&name, n, src) {
                    gloo.push(n);
                }
                cuda_ranks |= on_cuda_ranks(&name, n, src);
                if is_data_loader(&name, file.names.imports_torch)
                    || builds_loader_subclass(file.root, n, src, subclasses)
                    || imported_loader_subclass(&name, project)
                {
                    loaders.push(n);
                } else if is_data_parallel(&name) {
                    parallel.push(n);
                }
                if ast::method(n, src) == Some("cuda") || name == "torch.cuda.is_available" {
                    uses_cuda = true;
                }
            }
            "string" => uses_cuda |= names_cuda(n, src),
            _ => {}
        }
        true
    });
    for &call in &loaders {
        loader(file, call, uses_cuda);
    }
    for call in trainer_args {
        trainer_loader(file, call, on_the_fly.as_deref());
    }
    for call in anomaly {
        anomaly_hit(file, call);
    }
    distributed(file, gloo, uses_cuda || cuda_ranks);
    for call in text_iterators {
        let name = call
            .child_by_field_name("function")
            .map_or("BucketIterator", |f| text(f, src));
        // `val_iter = BucketIterator(...)`: an evaluation split's, read at validation time.
        let bound = call
            .parent()
            .filter(|p| p.kind() == "assignment")
            .and_then(|p| p.child_by_field_name("left"))
            .map(|l| text(l, src).to_owned());
        file.hit(
            "torch-loader-no-workers",
            call,
            format!(
                "torchtext's `{name}` builds every batch (sorting, numericalising, padding) in \
                 the training thread: its iterators have no worker processes"
            ),
            None,
            "build the batches in a `torch.utils.data.DataLoader(dataset, num_workers=4, \
             collate_fn=pad_batch, pin_memory=True)` (torchtext >= 0.12 dropped these \
             iterators)",
        );
        if let Some(name) = bound.filter(|b| crate::project::is_evaluation_name(b))
            && let Some(hit) = file.hits.last_mut()
        {
            hit.info = Some(format!("an evaluation iterator (`{name}`)"));
        }
    }
    file.loaders = loaders;
    file.uses_cuda = uses_cuda;
    // The defaults of the file's flags (`--parallel-mode` with `default="dp"`).
    let modes = if parallel.is_empty() {
        HashSet::new()
    } else {
        crate::loops::opt_in_flags(file.root, src)
    };
    for call in parallel {
        file.hit(
            "torch-data-parallel",
            call,
            "`DataParallel` wraps the model",
            None,
            "model = torch.nn.parallel.DistributedDataParallel(model.to(rank), device_ids=[rank])  \
             # one process per GPU: torchrun --nproc-per-node=N train.py",
        );
        if let Some(line) = ddp_first(call, src, &file.names, &modes)
            && let Some(hit) = file.hits.last_mut()
        {
            hit.info = Some(format!(
                "the fallback of the `DistributedDataParallel` branch at line {line}, for runs \
                 not launched with one process per GPU"
            ));
        } else if let Some(why) = one_visible_gpu(file.root, src, &modes)
            && let Some(hit) = file.hits.last_mut()
        {
            hit.info = Some(why);
        }
    }
}

/// Why the run sees one GPU, when the script itself sets `CUDA_VISIBLE_DEVICES` to one id:
/// a literal (`"0"`) or a flag whose default is one (`--gpu_id` with `default="0"`).
/// `DataParallel` over one device calls the module directly: no scatter, no gather.
fn one_visible_gpu(root: Node<'_>, src: &str, modes: &HashSet<String>) -> Option<String> {
    let mut found = None;
    ast::walk(root, &mut |n| {
        if found.is_some() {
            return false;
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "subscript"
            && text(left, src).contains("CUDA_VISIBLE_DEVICES")
            && text(left, src).contains("environ")
        {
            let one = |v: &str| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit());
            let value = text(right, src);
            found = if right.kind() == "string" {
                let v = value.trim_matches(|c| c == '"' || c == '\'');
                one(v).then(|| format!("`CUDA_VISIBLE_DEVICES` is set to the one GPU `{v}`"))
            } else {
                // `opts.gpu_id`, `str(args.gpu)`: the flag's default.
                let flag = value
                    .trim_start_matches("str(")
                    .trim_end_matches(')')
                    .rsplit('.')
                    .next()
                    .unwrap_or(value);
                crate::loops::one_default(flag, modes).filter(|d| one(d)).map(|d| {
                    format!("`CUDA_VISIBLE_DEVICES` is set to `--{flag}`, one GPU (`{d}`) by default")
                })
            }
            .map(|why| {
                format!(
                    "{why}: `DataParallel` over one device calls the module directly, with no \
                     scatter or gather"
                )
            });
        }
        true
    });
    found
}

/// The line of the `if` whose earlier branch wraps the model in `DistributedDataParallel`
/// (under any import alias) when `call` is in a later branch (`elif` / `else`) of it. Not
/// when a flag's default picks the later branch (`--parallel-mode` with `default="dp"`:
/// `if mode == "ddp": ... elif mode == "dp":`): then `DataParallel` is the default mode,
/// not a fallback.
pub(super) fn ddp_first(
    call: Node<'_>,
    src: &str,
    names: &ast::Names,
    modes: &HashSet<String>,
) -> Option<usize> {
    let mut n = call;
    while let Some(p) = n.parent() {
        if matches!(p.kind(), "elif_clause" | "else_clause")
            && let Some(stmt) = p.parent()
            && stmt.kind() == "if_statement"
        {
            let by_default =
                |c: Option<Node<'_>>| c.and_then(|c| crate::loops::holds_by_default(c, src, modes));
            if by_default(p.child_by_field_name("condition")) == Some(true)
                || by_default(stmt.child_by_field_name("condition")) == Some(false)
            {
                return None;
            }
            let mut ddp = false;
            ast::walk(stmt, &mut |c| {
                if c.start_byte() >= p.start_byte() {
                    return false;
                }
                if c.kind() == "call"
                    && names
                        .callee(c, src)
                        .is_some_and(|name| name.ends_with("DistributedDataParallel"))
                {
                    ddp = true;
                }
                !ddp
            });
            if ddp {
                return Some(stmt.start_position().row + 1);
            }
        }
        // `if cuda and rank == -1 and torch.cuda.device_count() > 1:` (yolov7): the run
        // not launched for DDP, with the file's DDP wrap under `rank != -1` elsewhere.
        if p.kind() == "block"
            && let Some(stmt) = p.parent()
            && stmt.kind() == "if_statement"
            && stmt
                .child_by_field_name("consequence")
                .is_some_and(|c| c.id() == p.id())
            && stmt
                .child_by_field_name("condition")
                .is_some_and(|c| not_distributed(c, src))
        {
            let mut root = stmt;
            while let Some(up) = root.parent() {
                root = up;
            }
            let mut line = None;
            ast::walk(root, &mut |c| {
                if c.kind() == "call"
                    && names
                        .callee(c, src)
                        .is_some_and(|name| name.ends_with("DistributedDataParallel"))
                {
                    line = Some(c.start_position().row + 1);
                }
                line.is_none()
            });
            if line.is_some() {
                return line;
            }
        }
        n = p;
    }
    None
}

/// A condition that holds only in a run not launched for DDP: a rank tested against -1
/// (`rank == -1`, `args.local_rank == -1`, in an `and`), or `not` a flag named for
/// distribution (`not args.distributed`, `not ddp`).
fn not_distributed(cond: Node<'_>, src: &str) -> bool {
    let mut found = false;
    ast::walk(cond, &mut |n| {
        match n.kind() {
            "comparison_operator" if n.named_child_count() == 2 => {
                let (l, r) = (n.named_child(0), n.named_child(1));
                found |= l.is_some_and(|l| text(l, src).to_ascii_lowercase().contains("rank"))
                    && r.is_some_and(|r| text(r, src).replace(' ', "") == "-1")
                    && ast::operators(n, src) == ["=="];
            }
            "not_operator" => {
                found |= n.child_by_field_name("argument").is_some_and(|a| {
                    matches!(a.kind(), "identifier" | "attribute") && {
                        let t = text(a, src).to_ascii_lowercase();
                        let last = t.rsplit('.').next().unwrap_or(&t).to_owned();
                        matches!(
                            last.as_str(),
                            "distributed" | "ddp" | "is_distributed" | "use_ddp"
                        )
                    }
                });
            }
            // Not into `or`: one side alone does not say the run is not distributed.
            "boolean_operator"
                if n.child_by_field_name("operator")
                    .is_some_and(|o| text(o, src) == "or") =>
            {
                return false;
            }
            _ => {}
        }
        !found
    });
    found
}

/// `TrainingArguments(...)` of Hugging Face's `Trainer` without `dataloader_num_workers`
/// (default 0): the Trainer's `DataLoader` loads every batch in the training process. A
/// warning where items are transformed or their audio decoded when read (`set_transform`,
/// `with_transform`, a `datasets.Audio` column: `on_the_fly`); else info, as a pre-processed
/// dataset is only collated.
fn trainer_loader(file: &mut File<'_>, call: Node<'_>, on_the_fly: Option<&str>) {
    let src = file.src;
    if ast::has_splat(call) {
        return;
    }
    let workers = ast::kwarg(call, "dataloader_num_workers", src);
    if !workers.is_none_or(|w| ast::is_falsy_literal(w, src)) {
        return;
    }
    let how = if workers.is_some() {
        "`dataloader_num_workers=0`"
    } else {
        "no `dataloader_num_workers` (default 0)"
    };
    let name = call
        .child_by_field_name("function")
        .map_or("TrainingArguments", |f| text(f, src));
    file.hit(
        "torch-loader-no-workers",
        call,
        format!("`{name}` with {how}, so the `Trainer`'s `DataLoader` has no workers"),
        on_the_fly.map(|w| format!("items are processed when read: `{w}`")),
        "TrainingArguments(..., dataloader_num_workers=8, dataloader_persistent_workers=True)",
    );
    if on_the_fly.is_none()
        && let Some(hit) = file.hits.last_mut()
    {
        hit.info = Some(
            "no transform or `Audio` column read on the fly in this file: a pre-processed \
             dataset is only collated, which costs little in the training process"
                .to_owned(),
        );
    }
}

fn loader(file: &mut File<'_>, call: Node<'_>, uses_cuda: bool) {
    let src = file.src;
    // `DataLoader(**kwargs)` hides its settings.
    if ast::has_splat(call) {
        return;
    }
    let workers = sig::arg(call, LOADER, "num_workers", src);
    let no_workers = workers.is_none_or(|w| ast::is_falsy_literal(w, src));
    if no_workers {
        let how = if workers.is_some() {
            "`num_workers=0`"
        } else {
            "no `num_workers` (default 0)"
        };
        file.hit(
            "torch-loader-no-workers",
            call,
            format!("`DataLoader` with {how}"),
            None,
            NO_WORKERS_FIX,
        );
    }
    if uses_cuda {
        let pin = sig::arg(call, LOADER, "pin_memory", src);
        if pin.is_none_or(|p| ast::is_falsy_literal(p, src)) {
            file.hit(
                "torch-loader-no-pin-memory",
                call,
                "`DataLoader` without `pin_memory=True` in a script that trains on CUDA",
                None,
                PIN_MEMORY_FIX,
            );
        }
    }
    if !no_workers {
        let persistent = sig::arg(call, LOADER, "persistent_workers", src);
        if persistent.is_none_or(|p| ast::is_falsy_literal(p, src)) {
            file.hit(
                "torch-loader-no-persistent-workers",
                call,
                "`DataLoader` with workers but without `persistent_workers=True`",
                None,
                "DataLoader(..., persistent_workers=True)  # keep your num_workers",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    #[test]
    fn loader_settings() {
        let bad = "\
import torch
from torch.utils.data import DataLoader
model.cuda()
a = DataLoader(ds, batch_size=8)
b = torch.utils.data.DataLoader(ds, 8, True, None, None, 0)
c = DataLoader(ds, num_workers=4, pin_memory=True)
";
        assert_eq!(
            ids(bad),
            vec![
                ("torch-loader-no-persistent-workers", 6),
                ("torch-loader-no-pin-memory", 4),
                ("torch-loader-no-pin-memory", 5),
                ("torch-loader-no-workers", 4),
                ("torch-loader-no-workers", 5),
            ]
        );
        let good = "\
import torch
from torch.utils.data import DataLoader as DL
device = 'cuda' if torch.cuda.is_available() else 'cpu'
a = DL(ds, batch_size=8, num_workers=8, pin_memory=True, persistent_workers=True)
b = DL(**settings)
";
        assert_eq!(ids(good), vec![]);
        // CPU-only scripts need no pinned memory.
        let cpu = "from torch.utils.data import DataLoader\na = DataLoader(ds, num_workers=2, persistent_workers=True)\n";
        assert_eq!(ids(cpu), vec![]);
    }

    #[test]
    fn data_parallel() {
        let bad = "import torch\nfrom torch import nn\nm = nn.DataParallel(model)\nn2 = torch.nn.DataParallel(model)\n";
        assert_eq!(
            ids(bad),
            vec![("torch-data-parallel", 3), ("torch-data-parallel", 4)]
        );
        let good = "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(model)\nDataParallel = 3\n";
        assert_eq!(ids(good), vec![]);
    }
}
