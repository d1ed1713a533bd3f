//! The rules that follow calls across the linted files: a training loop into the project's
//! functions it calls (per-step host syncs, and the first one of each step), and
//! `__getitem__`, `collate_fn`s and functions passed to `Dataset.map` into theirs (per-item
//! decoding and features; `decode-per-item-few-workers` where such a dataset meets a
//! `DataLoader` with 0 or 1 workers). Evidence shows the call chain
//! (`train.py:120 train_step -> utils.py:48 log_losses -> utils.py:61 .item()`).
//!
//! Calls resolve to the project's functions through the file's own definitions, its
//! imports (`from .logs import log_losses`, `import utils`; a module is found by its dotted
//! path inside the linted folder, or by a unique suffix of it), `self.method` in the
//! enclosing class and its bases, and otherwise a method name defined once in the whole
//! project (`trainer.train_step(...)`). Calls on imported libraries are never followed.
//! Depth and breadth are bounded by `MAX_CALL_DEPTH`, `MAX_FUNCTIONS_PER_ROOT` and
//! `MAX_PROJECT_FILES` (the constants table), so cycles and 400-file repositories stay fast.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path};
use std::sync::{Mutex, OnceLock, PoisonError};

use rayon::prelude::*;
use tree_sitter::Node;

use super::ast::{self, text};
use super::signatures as sig;
use super::{File, Hit, decode, defaults, flow, loops, model, tfdata, torch};
use gpufeed_findings::constants::{
    MAX_CALL_DEPTH, MAX_FUNCTIONS_PER_ROOT, MAX_PROJECT_FILES, MAX_UNCALLED_DEPTH,
};

/// A function of the project: the file it is in and its definition.
#[derive(Debug, Clone, Copy)]
struct Func<'t> {
    file: usize,
    def: Node<'t>,
}

struct Project<'a, 't> {
    files: &'a [File<'t>],
    /// Dotted module path and each of its suffixes -> the files with it.
    modules: HashMap<String, Vec<usize>>,
    /// Function name -> its definitions anywhere in the project.
    by_name: HashMap<String, Vec<Func<'t>>>,
    /// Per file: the project's files it imports from.
    imported: Vec<HashSet<usize>>,
    /// Per file: names bound to a feature transform object (`to_mel`, `self.mel_fn`) ->
    /// the constructor (`torchaudio.transforms.MelSpectrogram`).
    transforms: Vec<HashMap<String, String>>,
    /// The heavy calls found from each per-item function, by (file, definition id). Roots
    /// are followed on several threads; two that reach one function at once both compute
    /// it (the same result), which is cheaper than holding the lock while walking.
    heavy_memo: Mutex<HashMap<(usize, usize), Vec<Heavy<'t>>>>,
    /// The buffers and parameters of each class a step enters, by (file, class id):
    /// found once per class, not once per method entered.
    module_memo: Mutex<HashMap<(usize, usize), Vec<String>>>,
    /// False over `MAX_PROJECT_FILES`: each file on its own.
    cross: bool,
    /// The command-line flags that are off unless given, over the project's files: an
    /// `if args.FLAG:` on one is an opt-in path, not every step.
    opt_in: HashSet<String>,
    /// The defaults of flags, constructor parameters and config fields over the project's
    /// files, by name: `self.hparams.num_workers` is judged by its default.
    defaults: HashMap<String, Vec<defaults::DefaultValue>>,
    /// True when some file of the project trains on CUDA: a loader in a data module of its
    /// own feeds that GPU too.
    uses_cuda: bool,
    /// Every call of a plain name or `self.name`, by that name (`train_and_evaluate`):
    /// where a function's parameters come from. Built the first time it is asked.
    calls_by_name: OnceLock<HashMap<String, Vec<(usize, Node<'t>)>>>,
    /// [`Project::tf_summaries_every_step`], found once.
    tf_summaries: OnceLock<bool>,
    /// [`Project::never_called`] by (file, class id): asked per `forward` and per finding.
    never_called_memo: Mutex<HashMap<(usize, usize), bool>>,
    /// Per file, every name and every word of a string (docstrings left out), counted:
    /// whether anything names a class or a module, in one walk of the project.
    words: OnceLock<Vec<HashMap<&'t str, usize>>>,
    /// The settings of the project's config files.
    configs: &'a super::configs::Configs,
}

/// Where a walk from one root has been.
struct Walk<'t> {
    visited: HashSet<(usize, usize)>,
    /// The functions entered again because a call gave them tensors another did not (by
    /// the names of the tensor parameters).
    rebound: HashSet<(usize, usize, Vec<String>)>,
    budget: u64,
    /// The functions entered, in order.
    entered: Vec<Func<'t>>,
}

impl<'t> Walk<'t> {
    fn new() -> Self {
        Self {
            visited: HashSet::new(),
            rebound: HashSet::new(),
            budget: MAX_FUNCTIONS_PER_ROOT,
            entered: Vec::new(),
        }
    }

    /// True the first time a function is entered, within the budget.
    fn enter(&mut self, f: Func<'t>) -> bool {
        if self.budget == 0 || !self.visited.insert((f.file, f.def.id())) {
            return false;
        }
        self.budget -= 1;
        self.entered.push(f);
        true
    }

    /// [`Self::enter`], or again, within the budget, when this call gives `f` tensors in
    /// parameters no call before did (`tensors`, sorted): `slice_segments(x, ids_str)`
    /// from a helper whose `ids_str` is not known as a tensor, then from the loop with
    /// `ids_slice` from the model.
    fn enter_with(&mut self, f: Func<'t>, tensors: Vec<String>) -> bool {
        if self.enter(f) {
            self.rebound.insert((f.file, f.def.id(), tensors));
            return true;
        }
        if self.budget == 0
            || tensors.is_empty()
            || !self.rebound.insert((f.file, f.def.id(), tensors))
        {
            return false;
        }
        self.budget -= 1;
        true
    }
}

/// A host sync, cuda sync or sleep reached from a training loop.
struct Found<'t> {
    file: usize,
    node: Node<'t>,
    sync: loops::Sync,
    /// The links from the loop to the call (empty when it is in the loop's own body).
    chain: Vec<String>,
    /// Whether it runs only on a branch (under an `if`/`else`/`except`, in the loop or in
    /// a function on the way): it may not run every step, so it is never called the first
    /// sync of each step.
    branch: bool,
}

/// Heavy per-item work reached from a per-item function.
#[derive(Clone)]
struct Heavy<'t> {
    file: usize,
    node: Node<'t>,
    name: String,
    chain: Vec<String>,
    /// The call sites from the per-item function down to the heavy call itself, each in
    /// the function that makes it: where its value may flow to the item.
    sites: Vec<(Func<'t>, Node<'t>)>,
    /// Set when the work sits behind a file cache (`if os.path.exists(p): load else:
    /// compute and save`): why it runs once per item, not every epoch.
    cached: Option<String>,
}

/// The fix of `decode-per-item` for audio and features (what `gpufeed precompute` caches).
const PRECOMPUTE_FIX: &str = "precompute once (`gpufeed precompute --data DIR`) and load arrays \
                              per item (np.load, safetensors); keep only cheap work (crop, pad) \
                              per item";

/// The fix of `decode-per-item` for a phonemizer: the phonemes of a transcript do not change.
const PHONEMES_FIX: &str = "phonemize the transcripts once, before training (write the phonemes into \
                            the filelist or the cache), and map symbols to ids per item";

/// The fix of `decode-per-item` for images: gpufeed's cache holds speech features, and an
/// image pipeline's random crops need the decoded image.
const IMAGE_DECODE_FIX: &str = "decode images in enough loader workers (`num_workers` up to the \
                                cores), or on the GPU (`torchvision.io.decode_jpeg(data, \
                                device=\"cuda\")`, NVIDIA DALI); store them pre-resized to the \
                                training size so each decode is small";

/// The fix of `decode-per-item` for the call `name`.
fn decode_fix(name: &str) -> &'static str {
    if decode::is_phonemizer(name) {
        PHONEMES_FIX
    } else if decode::is_image_decode(name) {
        IMAGE_DECODE_FIX
    } else {
        PRECOMPUTE_FIX
    }
}

/// Runs the cross-file rules, adding hits to the files they point into.
pub(super) fn check(
    files: &mut [File<'_>],
    configs: &super::configs::Configs,
    docs: &super::rundocs::RunDocs,
) {
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    let mut loops_found: Vec<(usize, (usize, usize))> = Vec::new();
    let mut evals: Vec<(usize, (usize, usize, String))> = Vec::new();
    let numpy_batches;
    let in_memory;
    let no_workers;
    let opt_in;
    let one_off;
    let unreached;
    let not_run;
    let config_named;
    let p_switched_loaders;
    let uses_cuda;
    {
        let mut p = Project::new(files, configs);
        p.documented(&docs.flags);
        // Each file's loops on their own thread; the hits keep the files' order.
        let per_file: Vec<_> = (0..files.len())
            .into_par_iter()
            .map(|fi| {
                let mut ranges = Vec::new();
                let mut found = Vec::new();
                // A loop on a path the flags' defaults do not take (`if FLAGS.mode ==
                // 'eager_tf':` with the default `fit`) is not the training that runs.
                let (root, src) = (p.files[fi].root, p.files[fi].src);
                let loops: Vec<_> = p
                    .training_loops(fi)
                    .into_iter()
                    .filter(|(lp, _)| !under_opt_in(root, lp.start_byte(), src, &p.opt_in))
                    .collect();
                let rel = p.files[fi].rel.display();
                let mut reached = Vec::new();
                for &(lp, step) in &loops {
                    ranges.push((fi, (lp.start_byte(), lp.end_byte())));
                    let why = format!(
                        "called from the training loop at {rel}:{}",
                        lp.start_position().row + 1
                    );
                    reached.push((Func { file: fi, def: lp }, why.clone()));
                    for func in p.loop_syncs(fi, lp, step, &mut found) {
                        reached.push((func, why.clone()));
                    }
                }
                // Lightning runs a module's `training_step` every step: its body is a
                // training loop's.
                for &def in files[fi]
                    .functions
                    .get("training_step")
                    .into_iter()
                    .flatten()
                {
                    if ast::enclosing(files[fi].root, def, "class_definition").is_some()
                        && let Some(name) = def.child_by_field_name("name")
                    {
                        let why = format!(
                            "called from `training_step` at {rel}:{}",
                            def.start_position().row + 1
                        );
                        reached.push((
                            Func { file: fi, def },
                            "PyTorch Lightning runs it for every batch".to_owned(),
                        ));
                        for func in p.loop_syncs(fi, def, name, &mut found) {
                            reached.push((func, why.clone()));
                        }
                    }
                }
                // What `forward` calls is named as such first: the rule is about modules.
                let from_forward: Vec<_> = p
                    .called_from_forward(fi)
                    .into_iter()
                    .map(|func| (func, "called from a module's `forward`".to_owned()))
                    .collect();
                let f = &files[fi];
                let eval: Vec<_> = files[fi]
                    .loaders
                    .iter()
                    .filter_map(|&l| {
                        evaluation_loader(f.root, l, &loops, f.src)
                            .map(|why| (fi, (l.start_byte(), l.end_byte(), why)))
                    })
                    .collect();
                (ranges, found, eval, from_forward, reached)
            })
            .collect();
        let mut reached = Vec::new();
        let mut from_loops = Vec::new();
        for (ranges, found, eval, forward, r) in per_file {
            loops_found.extend(ranges);
            hits.extend(found);
            evals.extend(eval);
            reached.extend(forward);
            from_loops.extend(r);
        }
        reached.extend(from_loops);
        config_named = p.config_modules();
        not_run = p
            .entry_points(docs, &loops_found, &config_named)
            .into_iter()
            .zip(p.unimported(docs, &loops_found, &config_named))
            .map(|(a, b)| a.or(b))
            .collect::<Vec<_>>();
        one_off = p.one_off(&loops_found);
        p.step_host_tensors(&reached, &mut hits);
        p.per_item(&mut hits);
        p.few_workers(&mut hits);
        no_workers = p.loader_defaults(&mut hits);
        opt_in = p.opt_in.clone();
        uses_cuda = p.uses_cuda;
        unreached = p.unreached_forwards();
        numpy_batches = p.numpy_collates();
        in_memory = p.in_memory_items();
        p_switched_loaders = p.switched_off_loaders(&not_run, &loops_found);
    }
    tf_one_shape(files);
    in_memory_info(files, &mut hits, in_memory);
    by_flags(files, &opt_in, &unreached);
    // A loader without workers needs no `persistent_workers` (PyTorch refuses it).
    for (fi, byte) in no_workers {
        if let Some(f) = files.get_mut(fi) {
            f.hits
                .retain(|h| !(h.id == "torch-loader-no-persistent-workers" && h.byte == byte));
        }
    }
    numpy_pins(files, numpy_batches);
    gloo_beside_cuda(files, uses_cuda);
    to_files(files, loops_found, |f, range| f.training_loops.push(range));
    to_files(files, evals, |f, eval| f.eval_loaders.push(eval));
    to_files(files, one_off, |f, range| f.one_off.push(range));
    for ((f, why), named) in files.iter_mut().zip(not_run).zip(config_named) {
        f.not_run = why;
        f.config_named = named;
    }
    let mut seen = HashSet::new();
    for (fi, hit) in hits {
        if seen.insert((fi, hit.id, hit.byte))
            && let Some(f) = files.get_mut(fi)
        {
            f.hits.push(hit);
        }
    }
    loaders_off_default(files, &opt_in, p_switched_loaders);
}

/// Hands each `(file, item)` to its file.
fn to_files<T>(
    files: &mut [File<'_>],
    items: Vec<(usize, T)>,
    mut give: impl FnMut(&mut File<'_>, T),
) {
    for (fi, item) in items {
        if let Some(f) = files.get_mut(fi) {
            give(f, item);
        }
    }
}

/// A `tf.function` step without `input_signature`, where the project's `tf.data` batches
/// all come from `.batch()` and nothing pads or batches ragged elements, traces at most
/// twice: info.
fn tf_one_shape(files: &mut [File<'_>]) {
    let retraced = files
        .iter()
        .any(|f| f.hits.iter().any(|h| h.id == "tf-function-retracing"));
    let batching: Vec<_> = if retraced {
        files.iter().map(tfdata::batching).collect()
    } else {
        Vec::new()
    };
    let one_shape = (retraced && !batching.iter().any(|(_, varying)| *varying))
        .then(|| {
            batching
                .iter()
                .zip(files.iter())
                .find_map(|((line, _), f)| line.map(|l| format!("{}:{l}", f.rel.display())))
        })
        .flatten();
    if let Some(at) = one_shape {
        let why = format!(
            "the project's batches (`.batch` at {at}) all have their elements' one shape, the \
             last perhaps partial: at most two traces"
        );
        for h in files
            .iter_mut()
            .flat_map(|f| f.hits.iter_mut())
            .filter(|h| h.id == "tf-function-retracing")
        {
            h.info.get_or_insert_with(|| why.clone());
        }
    }
}

/// Without workers, a loader over items already in memory loses nothing: the finding
/// stays, as info, with why.
fn in_memory_info(
    files: &mut [File<'_>],
    hits: &mut [(usize, Hit)],
    in_memory: Vec<(usize, usize, String)>,
) {
    let in_memory: HashMap<(usize, usize), String> = in_memory
        .into_iter()
        .map(|(fi, byte, why)| ((fi, byte), why))
        .collect();
    for (fi, h) in files
        .iter_mut()
        .enumerate()
        .flat_map(|(fi, f)| f.hits.iter_mut().map(move |h| (fi, h)))
        .chain(hits.iter_mut().map(|(fi, h)| (*fi, h)))
    {
        if h.id == "torch-loader-no-workers"
            && let Some(why) = in_memory.get(&(fi, h.byte))
        {
            h.info.get_or_insert_with(|| why.clone());
        }
    }
}

/// The rules on what a step runs that the flags decide: not under an opt-in flag (`if
/// self.add_zero_attn:` with its default `False`), nor in the `forward` of a module nothing
/// calls (`unreached`); and `DataParallel` in the branch the flags pick by default.
fn by_flags(files: &mut [File<'_>], opt_in: &HashSet<String>, unreached: &[(usize, usize, usize)]) {
    for (fi, f) in files.iter_mut().enumerate() {
        let (root, src) = (f.root, f.src);
        f.hits.retain(|h| {
            !matches!(h.id, "host-tensor-in-forward" | "cache-key-never-hits")
                || !(under_opt_in(root, h.byte, src, opt_in)
                    || unreached
                        .iter()
                        .any(|&(ui, s, e)| ui == fi && s <= h.byte && h.byte < e))
        });
    }
    // `DataParallel` in the branch the project's flags pick by default (`-p` with
    // `default='dp'` in `run.py`, the branch in `trainer.py`) is no fallback of DDP; under a
    // flag off by default (`if args.num_gpu > 1:` with `default=1`) it is not the run's.
    for f in files.iter_mut() {
        let (root, src) = (f.root, f.src);
        for h in f.hits.iter_mut() {
            if h.id == "torch-data-parallel"
                && h.info.is_none()
                && let Some(cond) = off_comparison_at(root, h.byte, src, opt_in)
            {
                h.info = Some(format!(
                    "only when `{}` holds, which it does not by default",
                    cond.chars().take(60).collect::<String>()
                ));
            }
            if h.id == "torch-data-parallel"
                && h.info
                    .as_deref()
                    .is_some_and(|i| i.starts_with("the fallback"))
                && let Some(call) = call_at(root, h.byte)
                && torch::ddp_first(call, src, &f.names, opt_in).is_none()
            {
                h.info = None;
            }
        }
    }
}

/// `init_process_group("gloo")` in a file beside the one that puts the model on CUDA
/// (FullSubNet's `train.py` and its `BaseTrainer`): `ddp-gloo-on-cuda` where the project
/// trains on CUDA.
fn gloo_beside_cuda(files: &mut [File<'_>], uses_cuda: bool) {
    if uses_cuda || files.iter().any(|f| f.cuda_ranks) {
        for f in files.iter_mut() {
            for call in std::mem::take(&mut f.gloo) {
                torch::gloo_on_cuda(f, call);
            }
        }
    }
}

/// `pin_memory=True` is the wrong fix for a loader whose batches are NumPy arrays: it pins
/// only tensors.
fn numpy_pins(files: &mut [File<'_>], numpy_batches: Vec<(usize, usize, String, bool)>) {
    const NUMPY_PIN_FIX: &str = "return tensors from the collate_fn (`torch.from_numpy(...)`), \
                                 then DataLoader(..., pin_memory=True); batch = \
                                 batch.to(device, non_blocking=True)";
    for (fi, byte, collate, pinned) in numpy_batches {
        let Some(f) = files.get_mut(fi) else { continue };
        let why = format!(
            "its batches are NumPy arrays (its collate function {collate} builds them with \
             NumPy and no `torch` call)"
        );
        if let Some(hit) = f
            .hits
            .iter_mut()
            .find(|h| h.id == "torch-loader-no-pin-memory" && h.byte == byte)
        {
            hit.specific
                .push_str(&format!("; {why}, which `pin_memory` does not pin"));
            NUMPY_PIN_FIX.clone_into(&mut hit.fix);
        } else if pinned {
            // Asked for and doing nothing: the copy is still from pageable memory.
            f.hits.push(Hit {
                id: "torch-loader-no-pin-memory",
                byte,
                specific: format!(
                    "`pin_memory=True` pins nothing here: {why}, and `pin_memory` pins only \
                     tensors, so the copy to the GPU is from pageable memory"
                ),
                context: None,
                fix: NUMPY_PIN_FIX.to_owned(),
                root: None,
                info: None,
            });
        }
    }
}

/// Loaders off the default run, as info: built only under an opt-in flag (`if args.gail:`
/// with its default `False`), or only on a branch their function's own switches leave off
/// (`if deterministic:` with `deterministic=False`) that no caller turns on (`switched`).
fn loaders_off_default(
    files: &mut [File<'_>],
    opt_in: &HashSet<String>,
    switched: Vec<((usize, usize), String)>,
) {
    for f in files.iter_mut() {
        let (root, src) = (f.root, f.src);
        for h in f.hits.iter_mut() {
            // A loader, or a Keras `fit` over a generator (`if not validate: ... else:
            // model.fit(...)` with `--validate` off unless given).
            if (h.id.starts_with("torch-loader-") || h.id == "decode-per-item-few-workers")
                && h.info.is_none()
                && let Some(call) = call_at(root, h.byte)
                && let Some(why) = opt_in_site(call, src, opt_in, &|_| None)
            {
                h.info = Some(format!("the loader is built only {why}"));
            }
        }
    }
    // A loader built only on a branch its function's own switches leave off (`if
    // deterministic:` with `deterministic=False`), which no caller turns on.
    for (fi, why) in switched {
        if let Some(f) = files.get_mut(fi.0) {
            for h in f.hits.iter_mut() {
                if h.byte == fi.1
                    && (h.id.starts_with("torch-loader-") || h.id == "decode-per-item-few-workers")
                    && h.info.is_none()
                {
                    h.info = Some(why.clone());
                }
            }
        }
    }
}

/// The attributes of `self` the project only ever sets falsy (`self.infer = False`, never
/// `True`, on `self` or any object), which no call turns on (`on`) and which are no flag or
/// setting (`defaults`): `if self.infer:` is off. Any file that sets attributes by computed
/// names makes it unknowable (none then).
fn never_turned_on(
    files: &[File<'_>],
    on: &HashSet<String>,
    defaults: &HashMap<String, Vec<defaults::DefaultValue>>,
) -> Vec<String> {
    let mut only_falsy: Option<HashMap<String, (bool, bool)>> = Some(HashMap::new());
    for f in files {
        match (
            defaults::attribute_values(f.root, f.src),
            only_falsy.as_mut(),
        ) {
            (Some(values), Some(all)) => {
                for (name, (falsy, own)) in values {
                    let e = all.entry(name).or_insert((true, false));
                    e.0 &= falsy;
                    e.1 |= own;
                }
            }
            _ => only_falsy = None,
        }
    }
    only_falsy
        .into_iter()
        .flatten()
        .filter(|(name, (falsy, own))| {
            *falsy && *own && !on.contains(name) && !defaults.contains_key(name)
        })
        .map(|(name, _)| name)
        .collect()
}

/// A parameter given a tensor is one; given a host value (`reduced_loss` from
/// `loss.item()`), it is marked as never one, whatever it is called.
fn bind_one(
    out: &mut HashSet<String>,
    (param, arg): (&str, Node<'_>),
    src: &str,
    tensors: &HashSet<String>,
    defaults: &HashSet<String>,
) {
    if text(arg, src) != "None" {
        out.insert(loops::given_mark(param));
    }
    // A falsy literal, or a flag set only every N steps (`do_eval`): off on most steps.
    if ast::is_falsy_literal(arg, src) || loops::periodic_flag(arg, src, defaults) {
        out.insert(loops::falsy_mark(param));
    }
    if loops::mask_like(arg, src, tensors) {
        out.insert(loops::mask_mark(param));
    }
    if loops::tensor_like(arg, src, tensors) {
        out.insert(param.to_owned());
    } else if loops::on_host(arg, src, tensors) {
        out.insert(loops::host_mark(param));
    }
}

/// The `self.` attribute a loop iterates: `self.blocks`, through `reversed(...)`,
/// `list(...)`, `enumerate(...)`, or a name of `scope` assigned one (`flows =
/// self.flows`, `flows = list(reversed(self.flows))`).
fn container_attribute(node: Node<'_>, scope: Node<'_>, src: &str) -> Option<String> {
    let mut node = node;
    for _ in 0..4 {
        match node.kind() {
            "attribute" => {
                let t = text(node, src);
                return t.starts_with("self.").then(|| t.to_owned());
            }
            "call"
                if node
                    .child_by_field_name("function")
                    .is_some_and(|f| matches!(text(f, src), "reversed" | "list" | "enumerate")) =>
            {
                node = ast::positional(node, 0)?;
            }
            "identifier" => {
                let name = text(node, src);
                let mut from = None;
                loops::simple_assignments(scope, src, |n, value| {
                    if n == name && from.is_none() {
                        from = Some(value);
                    }
                });
                node = from?;
            }
            _ => return None,
        }
    }
    None
}

/// The name `scope` unpacks `name` from, with its place: `net_g, net_d = nets` gives
/// `("nets", 0)` for `net_g`.
fn unpacked_from<'s>(scope: Node<'_>, name: &str, src: &'s str) -> Option<(&'s str, usize)> {
    let mut found = None;
    ast::walk(scope, &mut |n| {
        if found.is_some() || (n.id() != scope.id() && ast::is_scope(n)) {
            return false;
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && right.kind() == "identifier"
            && matches!(left.kind(), "pattern_list" | "tuple_pattern")
        {
            let mut c = left.walk();
            found = left
                .named_children(&mut c)
                .position(|t| t.kind() == "identifier" && text(t, src) == name)
                .map(|i| (text(right, src), i));
        }
        true
    });
    found
}

/// The first call `scope` assigns `name` from, with `name`'s place when the assignment
/// unpacks it (`model, opt = get_model(...)`: `Some(0)`); `None` for `name = call(...)`.
fn assigned_from_call<'t>(
    scope: Node<'t>,
    name: &str,
    src: &str,
) -> Option<(Node<'t>, Option<usize>)> {
    let mut found = None;
    ast::walk(scope, &mut |n| {
        if found.is_some() {
            return false;
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && right.kind() == "call"
        {
            if left.kind() == "identifier" && text(left, src) == name {
                found = Some((right, None));
            } else if matches!(left.kind(), "pattern_list" | "tuple_pattern") {
                let mut c = left.walk();
                found = left
                    .named_children(&mut c)
                    .position(|t| t.kind() == "identifier" && text(t, src) == name)
                    .map(|i| (right, Some(i)));
            }
        }
        true
    });
    found
}

/// The calls assigned to `target` (a name, or `self.name`) in `scope`, in source order:
/// `train_set = Speech(...)`, `self.net = Acoustic(...)`.
fn assigned_calls<'t>(scope: Node<'t>, target: &str, src: &str) -> Vec<Node<'t>> {
    let mut found = Vec::new();
    ast::walk(scope, &mut |n| {
        if n.kind() == "assignment"
            && n.child_by_field_name("left")
                .is_some_and(|l| text(l, src) == target)
            && let Some(right) = n.child_by_field_name("right")
            && right.kind() == "call"
        {
            found.push(right);
        }
        true
    });
    found
}

/// A subclass of `threading.Thread` or `multiprocessing.Process` (its `run` is the worker).
fn worker_class(class: Node<'_>, src: &str) -> bool {
    class
        .child_by_field_name("superclasses")
        .is_some_and(|bases| {
            let mut c = bases.walk();
            bases.named_children(&mut c).any(|b| {
                let t = text(b, src);
                matches!(t.rsplit('.').next(), Some("Thread" | "Process"))
            })
        })
}

/// `lib/trainer.py` -> `lib.trainer`; `pkg/__init__.py` -> `pkg`.
pub(super) fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = last.strip_suffix(".py") {
            *last = stem.to_owned();
        }
        if last == "__init__" {
            parts.pop();
        }
    }
    parts.join(".")
}

impl<'a, 't> Project<'a, 't> {
    fn new(files: &'a [File<'t>], configs: &'a super::configs::Configs) -> Self {
        let cross = files.len() as u64 <= MAX_PROJECT_FILES;
        let mut modules: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_name: HashMap<String, Vec<Func<'t>>> = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            let path = module_path(f.rel);
            let parts: Vec<&str> = path.split('.').collect();
            for start in 0..parts.len() {
                modules.entry(parts[start..].join(".")).or_default().push(i);
            }
            for (name, defs) in &f.functions {
                by_name
                    .entry(name.clone())
                    .or_default()
                    .extend(defs.iter().map(|&def| Func { file: i, def }));
            }
        }
        let mut p = Self {
            files,
            modules,
            by_name,
            imported: Vec::new(),
            transforms: files.par_iter().map(transform_objects).collect(),
            heavy_memo: Mutex::new(HashMap::new()),
            module_memo: Mutex::new(HashMap::new()),
            calls_by_name: OnceLock::new(),
            tf_summaries: OnceLock::new(),
            never_called_memo: Mutex::new(HashMap::new()),
            words: OnceLock::new(),
            configs,
            cross,
            opt_in: files
                .par_iter()
                .map(|f| loops::opt_in_flags(f.root, f.src))
                .reduce(HashSet::new, |mut a, b| {
                    a.extend(b);
                    a
                }),
            defaults: {
                let mut all: HashMap<String, Vec<defaults::DefaultValue>> = HashMap::new();
                for f in files {
                    let rel = f.rel.display().to_string();
                    for (name, d) in defaults::collect(f.root, f.src, &rel) {
                        all.entry(name).or_default().extend(d);
                    }
                }
                for (name, d) in configs.leaves() {
                    all.entry(name.to_owned()).or_default().push(d.clone());
                }
                all
            },
            // A test's or benchmark's `.cuda()` says nothing of how the project trains.
            uses_cuda: configs.cuda_device()
                || files
                    .iter()
                    .any(|f| f.uses_cuda && test_or_example(f.rel).is_none()),
        };
        // A constructor parameter or config field that is `False` (or an empty string) unless
        // given, and that no call turns on, is an opt-in flag too (`speed_volume_perturb:
        // bool = False`, `add_zero_attn=False`, `noise_dir: str = ''`).
        // A keyword given a setting read whose default is off turns nothing on either.
        let off_by_default: HashSet<String> = p
            .opt_in
            .iter()
            .cloned()
            .chain(
                p.defaults
                    .keys()
                    .filter(|name| {
                        defaults::resolved(&p.defaults, name)
                            .and_then(|d| d.value.as_deref())
                            .is_some_and(|v| v == "False" || defaults::is_empty_string(v))
                    })
                    .cloned(),
            )
            .collect();
        let on: HashSet<String> = files
            .iter()
            .flat_map(|f| defaults::turned_on(f.root, f.src, &off_by_default))
            .collect();
        let off: Vec<String> = p
            .defaults
            .keys()
            .filter(|name| {
                !on.contains(*name)
                    && defaults::resolved(&p.defaults, name)
                        .and_then(|d| d.value.as_deref())
                        .is_some_and(|v| v == "False" || defaults::is_empty_string(v))
            })
            .cloned()
            .collect();
        p.opt_in.extend(off);
        // A period set to 1 in a constructor, a config field or a config file
        // (`log_interval: int = 1`): `if step % log_interval == 0:` runs every step.
        let ones: Vec<String> = p
            .defaults
            .keys()
            .filter(|name| {
                defaults::resolved(&p.defaults, name)
                    .and_then(|d| d.value.as_deref())
                    .is_some_and(|v| v == "1")
            })
            .map(|name| loops::default_mark(name, "1"))
            .collect();
        p.opt_in.extend(ones);
        let gated: Vec<String> = files
            .iter()
            .flat_map(|f| loops::gated_attributes(f.root, f.src, &p.opt_in))
            .collect();
        p.opt_in.extend(gated);
        p.opt_in.extend(never_turned_on(files, &on, &p.defaults));
        p.imported = files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                f.names
                    .targets()
                    .filter_map(|t| {
                        p.module(i, t)
                            .or_else(|| t.rsplit_once('.').and_then(|(m, _)| p.module(i, m)))
                    })
                    .collect()
            })
            .collect();
        p
    }

    fn src(&self, fi: usize) -> &'t str {
        self.files[fi].src
    }

    /// `train.py:11 trainer.train_step`: a link of a call chain.
    fn link(&self, fi: usize, call: Node<'_>) -> String {
        let function = call.child_by_field_name("function").unwrap_or(call);
        let name: String = text(function, self.src(fi)).chars().take(60).collect();
        format!(
            "{}:{} {name}",
            self.files[fi].rel.display(),
            call.start_position().row + 1
        )
    }

    /// The file of a dotted module imported by file `from` (`lib.logs`, `.logs`): the one
    /// file with that path or that suffix of its path. Where several have it (a folder of
    /// projects, each with its `loss.py`), the one Python would import: for a relative
    /// import, the module at that path from the importer's package; for an absolute one,
    /// the module under the closest folder that holds the importer (the script's folder
    /// is first on `sys.path`).
    fn module(&self, from: usize, dotted: &str) -> Option<usize> {
        let name = dotted.trim_start_matches('.');
        let dots = dotted.len() - name.len();
        let candidates = self.modules.get(name)?;
        if let [one] = candidates.as_slice() {
            return Some(*one);
        }
        let dir: Vec<String> = self.files[from]
            .rel
            .parent()
            .map(module_path)
            .filter(|d| !d.is_empty())
            .map(|d| d.split('.').map(str::to_owned).collect())
            .unwrap_or_default();
        if dots > 0 {
            let up = dir.len().checked_sub(dots - 1)?;
            let want = dir[..up]
                .iter()
                .map(String::as_str)
                .chain(name.split('.'))
                .collect::<Vec<_>>()
                .join(".");
            return candidates
                .iter()
                .copied()
                .find(|&c| module_path(self.files[c].rel) == want);
        }
        let mut best: Option<(usize, usize)> = None;
        let mut tie = false;
        // An absolute import never means the importing file itself (`from model import
        // FastSpeech2` in `utils/model.py` is the package `model/`).
        for &c in candidates.iter().filter(|&&c| c != from) {
            let full = module_path(self.files[c].rel);
            let Some(root) = full.strip_suffix(name) else {
                continue;
            };
            let root: Vec<&str> = root
                .trim_end_matches('.')
                .split('.')
                .filter(|r| !r.is_empty())
                .collect();
            let holds = root.len() <= dir.len() && root.iter().zip(&dir).all(|(a, b)| a == b);
            if !holds {
                continue;
            }
            match best {
                Some((depth, _)) if depth > root.len() => {}
                Some((depth, _)) if depth == root.len() => tie = true,
                _ => {
                    best = Some((root.len(), c));
                    tie = false;
                }
            }
        }
        best.filter(|_| !tie).map(|(_, c)| c)
    }

    /// Functions and classes named by a dotted name that went through an import
    /// (`lib.logs.log_losses`, `lib.data.Speech.load`).
    fn qualified(&self, from: usize, dotted: &str) -> (Vec<Func<'t>>, Option<(usize, Node<'t>)>) {
        self.qualified_within(from, dotted, 0)
    }

    /// [`Self::qualified`], following a package's re-exports (`from .tts import GradTTS` in
    /// `model/__init__.py` for `from model import GradTTS`) a few times.
    fn qualified_within(
        &self,
        from: usize,
        dotted: &str,
        hops: u32,
    ) -> (Vec<Func<'t>>, Option<(usize, Node<'t>)>) {
        if !self.cross {
            return (Vec::new(), None);
        }
        let name = dotted.trim_start_matches('.');
        let dots = &dotted[..dotted.len() - name.len()];
        let parts: Vec<&str> = name.split('.').collect();
        for cut in (1..parts.len()).rev() {
            let Some(fi) = self.module(from, &format!("{dots}{}", parts[..cut].join("."))) else {
                continue;
            };
            let f = &self.files[fi];
            return match &parts[cut..] {
                [name] => {
                    if let Some(class) = f.classes.get(*name).and_then(|c| c.first()) {
                        return (Vec::new(), Some((fi, *class)));
                    }
                    // A module's own functions: what `from m import name` and `from m import
                    // *` give, never a method of one of its classes.
                    let funcs: Vec<Func<'t>> = f
                        .functions
                        .get(*name)
                        .map(|d| {
                            d.iter()
                                .filter(|&&def| module_level(def))
                                .map(|&def| Func { file: fi, def })
                                .collect()
                        })
                        .unwrap_or_default();
                    if funcs.is_empty() && hops < 3 && fi != from && f.names.imports(name) {
                        return self.qualified_within(fi, &f.names.resolve(name), hops + 1);
                    }
                    // `from tf2lib.utils import *` in a package's `__init__.py`: the name
                    // may come from any of them.
                    if funcs.is_empty() && hops < 3 {
                        for module in &f.names.star {
                            let found =
                                self.qualified_within(fi, &format!("{module}.{name}"), hops + 1);
                            if !found.0.is_empty() || found.1.is_some() {
                                return found;
                            }
                        }
                    }
                    (funcs, None)
                }
                [class, method] => {
                    let funcs = f
                        .classes
                        .get(*class)
                        .and_then(|c| c.first())
                        .map(|&c| self.method_of(fi, c, method, 0))
                        .unwrap_or_default();
                    (funcs, None)
                }
                _ => (Vec::new(), None),
            };
        }
        (Vec::new(), None)
    }

    /// The class a name means in file `fi` (`Speech`, `data.Speech`).
    fn class_named(&self, fi: usize, dotted: &str) -> Option<(usize, Node<'t>)> {
        let f = &self.files[fi];
        if !dotted.contains('.')
            && let Some(c) = f.classes.get(dotted).and_then(|c| c.first())
        {
            return Some((fi, *c));
        }
        let head = dotted.split('.').next().unwrap_or(dotted);
        if f.names.imports(head) {
            return self.qualified(fi, &f.names.resolve(dotted)).1;
        }
        None
    }

    /// Methods `name` of `class` or, when it has none, of its bases (3 levels).
    fn method_of(&self, fi: usize, class: Node<'t>, name: &str, depth: u32) -> Vec<Func<'t>> {
        let src = self.src(fi);
        let own: Vec<_> = ast::methods(class, name, src)
            .into_iter()
            .map(|def| Func { file: fi, def })
            .collect();
        if !own.is_empty() || depth >= 3 {
            return own;
        }
        self.in_bases(fi, class, |bf, bc| self.method_of(bf, bc, name, depth + 1))
    }

    /// The first non-empty `find` over the project classes `class` derives from, in order.
    fn in_bases(
        &self,
        fi: usize,
        class: Node<'t>,
        find: impl Fn(usize, Node<'t>) -> Vec<Func<'t>>,
    ) -> Vec<Func<'t>> {
        let src = self.src(fi);
        let Some(bases) = class.child_by_field_name("superclasses") else {
            return Vec::new();
        };
        let mut c = bases.walk();
        let bases: Vec<_> = bases.named_children(&mut c).collect();
        for base in bases {
            if let Some(d) = ast::dotted(base, src)
                && let Some((bf, bc)) = self.class_named(fi, &d)
            {
                let found = find(bf, bc);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }

    /// The options the project's documented commands give (`python main.py --encoder_name
    /// conformer_cat --masks`) over the parser's defaults: the run the README shows is the
    /// default run (mfa_conformer's encoder, chosen on the command line).
    fn documented(&mut self, flags: &[(String, super::rundocs::Given)]) {
        use super::rundocs::Given;
        for (name, given) in flags {
            // Only the project's own options: a flag no parser of the project defines says
            // nothing of its code.
            if !self.defaults.contains_key(name.as_str()) {
                continue;
            }
            self.opt_in.remove(name.as_str());
            let prefix = loops::default_mark(name, "");
            self.opt_in.retain(|m| !m.starts_with(&prefix));
            let literal = match given {
                Given::Unknown => {
                    // Set to what the page does not say: no default to judge by.
                    self.defaults.remove(name.as_str());
                    continue;
                }
                Given::Switch => "True".to_owned(),
                Given::Value(v) => {
                    self.opt_in.insert(loops::default_mark(name, v));
                    if v.parse::<f64>().is_ok() || matches!(v.as_str(), "True" | "False") {
                        v.clone()
                    } else {
                        format!("\"{v}\"")
                    }
                }
            };
            self.defaults.insert(
                name.clone(),
                vec![defaults::DefaultValue {
                    value: Some(literal),
                    at: "the README's command".to_owned(),
                }],
            );
        }
    }

    /// The functions a dictionary of the calling function maps its keys to: `table = {"a":
    /// self.loss_a, "b": helper}` before `table[name](...)`.
    fn dispatch_table(&self, fi: usize, call: Node<'t>, table: &str) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        let Some(scope) = ast::enclosing(f.root, call, "function_definition") else {
            return Vec::new();
        };
        let class = ast::enclosing(f.root, scope, "class_definition");
        let mut values: Vec<Node<'t>> = Vec::new();
        loops::simple_assignments(scope, src, |name, value| {
            if name == table && value.kind() == "dictionary" {
                let mut c = value.walk();
                values.extend(
                    value
                        .named_children(&mut c)
                        .filter(|p| p.kind() == "pair")
                        .filter_map(|p| p.child_by_field_name("value")),
                );
            }
        });
        let mut out = Vec::new();
        for v in values {
            let Some(d) = ast::dotted(v, src) else {
                continue;
            };
            match (d.strip_prefix("self."), class) {
                (Some(method), Some(class)) if !method.contains('.') => {
                    out.extend(self.method_of(fi, class, method, 0));
                }
                (None, _) if !d.contains('.') => {
                    out.extend(
                        f.functions
                            .get(d.as_str())
                            .into_iter()
                            .flatten()
                            .map(|&def| Func { file: fi, def }),
                    );
                }
                _ => {}
            }
        }
        out
    }

    /// The functions an attribute of the class (or of its bases) is set to: `self.stft =
    /// partial(stft, n_fft=512)` or `self.stft = stft` in a method, so that `self.stft(y)`
    /// runs `stft` (FullSubNet's trainers, every step). Only where it is set whatever the
    /// settings: a choice among functions by a config value (`if lr_scheduler ==
    /// "spec-aug": self.lr_scheduler = partial(...)`) says nothing of the default run.
    fn attribute_functions(
        &self,
        fi: usize,
        class: Node<'t>,
        name: &str,
        depth: u32,
    ) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        let mut refs: Vec<String> = Vec::new();
        // Most `self.x(...)` calls are of modules the class built (`self.fc = nn.Linear`):
        // the text says at once whether the class sets the attribute by a plain name.
        let set = src
            .get(class.start_byte()..class.end_byte())
            .is_some_and(|t| t.contains(&format!("self.{name} =")));
        ast::walk(class, &mut |n| {
            if !set {
                return false;
            }
            if n.kind() == "class_definition" && n.id() != class.id() {
                return false;
            }
            if n.kind() == "assignment"
                && let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                )
                && ast::dotted(left, src).is_some_and(|l| l == format!("self.{name}"))
                && !conditional(n)
            {
                let target = match right.kind() {
                    "identifier" | "attribute" => Some(right),
                    "call"
                        if f.names
                            .callee(right, src)
                            .is_some_and(|c| c == "functools.partial") =>
                    {
                        ast::positional(right, 0)
                    }
                    _ => None,
                };
                if let Some(t) = target.and_then(|t| ast::dotted(t, src))
                    && !t.starts_with("self.")
                {
                    refs.push(t);
                }
            }
            true
        });
        let mut out: Vec<Func<'t>> = Vec::new();
        for r in refs {
            let found = if f.names.imports(r.split('.').next().unwrap_or("")) {
                self.qualified(fi, &f.names.resolve(&r)).0
            } else {
                f.functions
                    .get(r.as_str())
                    .map(|d| d.iter().map(|&def| Func { file: fi, def }).collect())
                    .unwrap_or_default()
            };
            out.extend(found);
        }
        if !out.is_empty() || depth >= 3 {
            return out;
        }
        self.in_bases(fi, class, |bf, bc| {
            self.attribute_functions(bf, bc, name, depth + 1)
        })
    }

    /// A function name defined once, among the functions `keep` accepts, in the project, or
    /// once among the files that file `fi` imports from (dunder methods excepted).
    fn unique_where(
        &self,
        fi: usize,
        name: &str,
        keep: impl Fn(&Func<'t>) -> bool,
    ) -> Vec<Func<'t>> {
        if !self.cross || name.starts_with("__") {
            return Vec::new();
        }
        let Some(all) = self.by_name.get(name) else {
            return Vec::new();
        };
        let all: Vec<Func<'t>> = all.iter().copied().filter(|f| keep(f)).collect();
        if let [one] = all.as_slice() {
            return vec![*one];
        }
        let near: Vec<_> = all
            .iter()
            .filter(|f| self.imported[fi].contains(&f.file))
            .copied()
            .collect();
        if near.len() == 1 { near } else { Vec::new() }
    }

    /// The project's functions a call may run.
    fn callees(&self, fi: usize, call: Node<'t>) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        // `loss_map[loss](outputs, targets)` with `loss_map = {"labels": self.loss_labels,
        // ...}`: any function of the table (DETR's `SetCriterion.get_loss`).
        if let Some(table) = call
            .child_by_field_name("function")
            .filter(|n| n.kind() == "subscript")
            .and_then(|n| n.child_by_field_name("value"))
            .filter(|v| v.kind() == "identifier")
        {
            return self.dispatch_table(fi, call, text(table, src));
        }
        let Some(raw) = call
            .child_by_field_name("function")
            .and_then(|n| ast::dotted(n, src))
        else {
            return Vec::new();
        };
        let parts: Vec<&str> = raw.split('.').collect();
        let head = parts[0];
        let last = parts[parts.len() - 1];
        let local = |name: &str| -> Vec<Func<'t>> {
            f.functions
                .get(name)
                .map(|d| d.iter().map(|&def| Func { file: fi, def }).collect())
                .unwrap_or_default()
        };
        if f.names.imports(head) {
            return self.qualified(fi, &f.names.resolve(&raw)).0;
        }
        // Calling an object runs its class's `__call__`, or an `nn.Module`'s `forward`:
        // `self(x)` in Lightning's `training_step`, `self.metric(y, y_hat)` with `self.metric
        // = CER()`, `model(x)` with `model = Net().cuda()`.
        let called_object = |class: Option<(usize, Node<'t>)>| -> Vec<Func<'t>> {
            class
                .map(|(cf, class)| {
                    let call_ = self.method_of(cf, class, "__call__", 0);
                    if call_.is_empty() {
                        self.method_of(cf, class, "forward", 0)
                    } else {
                        call_
                    }
                })
                .unwrap_or_default()
        };
        if raw == "self" {
            return called_object(
                ast::enclosing(self.files[fi].root, call, "class_definition").map(|c| (fi, c)),
            );
        }
        if parts.len() == 1 {
            if let Some((cf, class)) = self.class_named(fi, &raw) {
                // A constructor: `__init__` runs once per object, rarely per step.
                let _ = (cf, class);
                return Vec::new();
            }
            let found = local(&raw);
            if !found.is_empty() {
                return found;
            }
            // `from utils import *` then `length_to_mask(lengths)` (StyleTTS' trainers).
            for module in &f.names.star {
                let found = self.qualified(fi, &format!("{module}.{raw}")).0;
                if !found.is_empty() {
                    return found;
                }
            }
            let function = call.child_by_field_name("function");
            let found = called_object(function.and_then(|f| self.class_of_value(fi, call, f)));
            if !found.is_empty() {
                return found;
            }
            // `spline_fn = unconstrained_spline` (on one branch, another function on the
            // other) then `spline_fn(...)`: every function the name is given.
            let found = self.aliased_functions(fi, call, &raw);
            if !found.is_empty() {
                return found;
            }
            // `for flow in self.flows: x = flow(x)`: every module the container holds.
            return self
                .container_classes(fi, call, &raw)
                .into_iter()
                .flat_map(|class| called_object(Some(class)))
                .collect();
        }
        if matches!(head, "self" | "cls") && parts.len() == 2 {
            if let Some(class) = ast::enclosing(self.files[fi].root, call, "class_definition") {
                let found = self.method_of(fi, class, last, 0);
                if !found.is_empty() {
                    return found;
                }
                let found = self.attribute_functions(fi, class, last, 0);
                if !found.is_empty() {
                    return found;
                }
            }
            let found = local(last);
            if !found.is_empty() {
                return found;
            }
            let function = call.child_by_field_name("function");
            let found = called_object(function.and_then(|f| self.class_of_value(fi, call, f)));
            if !found.is_empty() {
                return found;
            }
        }
        // `model.compute_loss(...)` where `model = GradTTS(...).cuda()` in the scope (or
        // `self.model = ...` in the class): that class's method, whatever other classes
        // define one of the same name.
        if let Some(receiver) = ast::receiver(call)
            && let Some((cf, class)) = self.class_of_value(fi, call, receiver)
        {
            let found = self.method_of(cf, class, last, 0);
            if !found.is_empty() {
                return found;
            }
        }
        // `obj.name()` on anything but a module (imports are resolved above) calls a method:
        // never a module-level function that shares its name (`model.train()` is the
        // nn.Module method, not the script's own `def train(...)`).
        self.unique_where(fi, last, |func| {
            ast::enclosing(self.files[func.file].root, func.def, "class_definition").is_some()
        })
    }

    /// The loaders built only on a branch their function's own switches leave off (`if
    /// deterministic:` with `deterministic=False`, improved-diffusion's `load_data`), where
    /// no call of the function by its name turns the switch on, but in files the default
    /// run does not run (`not_run`), or in scripts that do not train (improved-diffusion's
    /// `image_nll.py` asks for a deterministic order; `loops` are the training loops):
    /// `((file, byte), why)`.
    fn switched_off_loaders(
        &self,
        not_run: &[Option<String>],
        loops: &[(usize, (usize, usize))],
    ) -> Vec<((usize, usize), String)> {
        let counts = |ci: usize| {
            let f = &self.files[ci];
            let trains = loops.iter().any(|&(li, _)| li == ci) || calls_fit(f);
            not_run.get(ci).is_none_or(Option::is_none) && (trains || !runs_as_script(f))
        };
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            for &loader in &f.loaders {
                let Some(def) = ast::enclosing(f.root, loader, "function_definition") else {
                    continue;
                };
                let off = loops::off_branches(def, f.src, false);
                let Some(&(s, e)) = off
                    .iter()
                    .find(|&&(s, e)| s <= loader.start_byte() && loader.end_byte() <= e)
                else {
                    continue;
                };
                // The switch: the `if` whose body is that range, testing a parameter.
                let mut up = loader.parent();
                let mut cond = None;
                for _ in 0..gpufeed_findings::constants::MAX_NESTING {
                    let Some(n) = up else { break };
                    if n.kind() == "if_statement"
                        && n.child_by_field_name("consequence")
                            .is_some_and(|b| (b.start_byte(), b.end_byte()) == (s, e))
                    {
                        cond = n.child_by_field_name("condition");
                        break;
                    }
                    up = n.parent();
                }
                let Some(cond) = cond else {
                    continue;
                };
                let params = ast::param_names(def, f.src);
                let mut switch = None;
                ast::walk(cond, &mut |n| {
                    if switch.is_none()
                        && n.kind() == "identifier"
                        && params.contains(&text(n, f.src))
                    {
                        switch = Some(text(n, f.src));
                    }
                    true
                });
                let (Some(switch), Some(name)) = (switch, def.child_by_field_name("name")) else {
                    continue;
                };
                let fname = text(name, f.src);
                // By keyword, or in its place (a method's calls do not pass `self`).
                let at = params.iter().position(|&p| p == switch);
                let turned_on = self.calls_by_name().get(fname).is_some_and(|sites| {
                    sites.iter().any(|&(ci, call)| {
                        let csrc = self.src(ci);
                        counts(ci)
                            && ast::kwarg(call, switch, csrc)
                                .or_else(|| at.and_then(|i| ast::positional(call, i)))
                                .is_some_and(|v| !ast::is_falsy_literal(v, csrc))
                    })
                });
                if !turned_on {
                    out.push((
                        (fi, loader.start_byte()),
                        format!(
                            "the loader is built only when `{}` holds in `{fname}`, which its \
                             defaults leave off and no call of it turns on",
                            text(cond, f.src)
                        ),
                    ));
                }
            }
        }
        out
    }

    /// The body to walk of a function or lambda.
    fn body(def: Node<'t>) -> Node<'t> {
        def.child_by_field_name("body").unwrap_or(def)
    }

    // ---- training loops and their per-step syncs ----

    /// The training loops of file `fi`, each with the call that makes it one.
    fn training_loops(&self, fi: usize) -> Vec<(Node<'t>, Node<'t>)> {
        let f = &self.files[fi];
        let src = f.src;
        let mut all = Vec::new();
        ast::walk(f.root, &mut |n| {
            if matches!(n.kind(), "for_statement" | "while_statement") {
                all.push(n);
            }
            true
        });
        let mut out = Vec::new();
        for lp in all {
            let Some(body) = lp.child_by_field_name("body") else {
                continue;
            };
            let own = loops::own_calls(body);
            if let Some(step) = own
                .iter()
                .copied()
                .find(|c| loops::step_call(*c, src, &f.names))
            {
                if !loops::benchmark_loop(f.root, lp, src) {
                    out.push((lp, step));
                }
                continue;
            }
            // A loop over a loader whose calls reach a train step in the project.
            if lp.kind() == "for_statement" && iterates_data(lp, src) {
                let mut walk = Walk::new();
                if let Some(step) = own
                    .iter()
                    .copied()
                    .find(|c| self.reaches_step(fi, *c, false, 0, &mut walk))
                {
                    out.push((lp, step));
                    continue;
                }
            }
            // Any loop whose call steps with no loop on the way (`for j in
            // range(num_updates): agent.update(rollouts)`, `while ...: self.run_step(batch)`):
            // each of its iterations is a step. An epoch loop's callee loops over the data
            // itself, and steps inside that loop.
            let mut walk = Walk::new();
            if let Some(step) = own
                .iter()
                .copied()
                .find(|c| self.steps_outside_loops(fi, *c, 0, &mut walk))
            {
                out.push((lp, step));
            }
        }
        out
    }

    /// True when `call` runs a function of the project that steps an optimizer in its own
    /// body, outside any loop of its own, or calls (outside its loops) one that does.
    fn steps_outside_loops(
        &self,
        fi: usize,
        call: Node<'t>,
        depth: u64,
        walk: &mut Walk<'t>,
    ) -> bool {
        if depth >= MAX_CALL_DEPTH {
            return false;
        }
        self.callees(fi, call).into_iter().any(|target| {
            if !walk.enter(target) {
                return false;
            }
            let tf = &self.files[target.file];
            let calls = loops::own_calls(Self::body(target.def));
            calls
                .iter()
                .any(|c| loops::step_call(*c, tf.src, &tf.names))
                || calls
                    .iter()
                    .any(|c| self.steps_outside_loops(target.file, *c, depth + 1, walk))
        })
    }

    /// True when `call` runs a function of the project that steps an optimizer, or, with
    /// `fit`, that starts a `.fit(...)` as well (Lightning's `trainer.fit(model)` inside
    /// `main()`): a function that trains.
    fn reaches_step(
        &self,
        fi: usize,
        call: Node<'t>,
        fit: bool,
        depth: u64,
        walk: &mut Walk<'t>,
    ) -> bool {
        if depth >= MAX_CALL_DEPTH {
            return false;
        }
        for target in self.callees(fi, call) {
            if !walk.enter(target) {
                continue;
            }
            let tf = &self.files[target.file];
            let calls = ast::calls_in(Self::body(target.def));
            if calls.iter().any(|c| {
                loops::step_call(*c, tf.src, &tf.names)
                    || (fit && ast::method(*c, tf.src) == Some("fit"))
            }) || calls
                .iter()
                .any(|c| self.reaches_step(target.file, *c, fit, depth + 1, walk))
            {
                return true;
            }
        }
        false
    }

    /// Every per-step sync of one training loop, through the project's functions; the
    /// first host sync of the step is named as such. Returns the project's functions the
    /// step runs.
    fn loop_syncs(
        &self,
        fi: usize,
        lp: Node<'t>,
        step: Node<'t>,
        hits: &mut Vec<(usize, Hit)>,
    ) -> Vec<Func<'t>> {
        let Some(body) = lp.child_by_field_name("body") else {
            return Vec::new();
        };
        let src = self.src(fi);
        let mut tensors = loops::loop_tensor_names(lp, src);
        // Flags built on the device before the loop (`stop = torch.tensor(0).to(device)`).
        let root = self.files[fi].root;
        let scope = ast::enclosing(root, lp, "function_definition").unwrap_or(root);
        tensors.extend(loops::device_tensors(scope, src));
        loops::derived_tensors(body, src, &mut tensors);
        self.host_results(fi, body, &mut tensors);
        let mut found = Vec::new();
        let mut walk = Walk::new();
        self.syncs_in(fi, body, &tensors, &[], false, 0, &mut walk, &mut found);
        // A TensorFlow summary is written only under a writer, and `record_if` may thin
        // the writes out: without a writer, or with `record_if`, it is not every step.
        if !self.tf_summaries_every_step() {
            found.retain(|f| !f.sync.what.starts_with("tf.summary."));
        }
        // One summary helper writes several (a mean, a std, a histogram, on branches by
        // the data's shape): the first write of each function stands for them.
        let mut summarised: HashSet<(usize, usize)> = HashSet::new();
        found.retain(|f| {
            if !f.sync.what.starts_with("tf.summary.") {
                return true;
            }
            let root = self.files[f.file].root;
            let function =
                ast::enclosing(root, f.node, "function_definition").map_or(0, |d| d.start_byte());
            summarised.insert((f.file, function))
        });
        let rel = self.files[fi].rel.display();
        let loop_line = lp.start_position().row + 1;
        let step_text: String = text(step, src)
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        // A loop, or Lightning's `training_step` (a method it runs every step).
        let lightning = lp.kind() == "function_definition";
        let the_loop = if lightning {
            "`training_step`"
        } else {
            "the training loop"
        };
        // The first sync of each step: the first that runs on every step, else (every one
        // is on a branch, as `if distributed: ... else: ...` can make them) the first.
        let drains =
            |item: &Found<'_>| matches!(item.sync.id, "host-sync-in-loop" | "cuda-sync-in-loop");
        let first_at = found
            .iter()
            .position(|item| drains(item) && !item.branch)
            .or_else(|| found.iter().position(drains));
        for (at, item) in found.into_iter().enumerate() {
            let first = Some(at) == first_at;
            let what = &item.sync.what;
            let mut specific = if item.chain.is_empty() {
                format!("`{what}` in {the_loop} {} every step", item.sync.does)
            } else {
                format!(
                    "`{what}` runs every step of {the_loop} at {rel}:{loop_line} (through \
                     {} call{}) and {}",
                    item.chain.len(),
                    if item.chain.len() == 1 { "" } else { "s" },
                    item.sync.does
                )
            };
            if first {
                specific.push_str(
                    " (the first host sync of each step: the GPU queue drains here, so the syncs \
                     after it in the same step cost less; remove this one first)",
                );
            }
            let context = if item.chain.is_empty() && lightning {
                format!(
                    "in `training_step` at line {loop_line}, which PyTorch Lightning runs for \
                     every batch"
                )
            } else if item.chain.is_empty() {
                format!("in the training loop at line {loop_line} (it calls `{step_text}`)")
            } else {
                let mut chain = item.chain.clone();
                chain.push(format!(
                    "{}:{} {what}",
                    self.files[item.file].rel.display(),
                    item.node.start_position().row + 1
                ));
                format!(
                    "called every step of {the_loop} at {rel}:{loop_line}: {}",
                    chain.join(" -> ")
                )
            };
            let root = (!item.chain.is_empty()).then_some((fi, lp.start_byte()));
            hits.push((
                item.file,
                Hit {
                    id: item.sync.id,
                    byte: item.node.start_byte(),
                    specific,
                    context: Some(context),
                    fix: item.sync.fix.to_owned(),
                    root,
                    info: None,
                },
            ));
        }
        walk.entered
    }

    /// The project's functions that `forward` methods of file `fi` call (and those they
    /// call), within the call bounds: they run every step too. Calls under an opt-in flag
    /// are not followed.
    fn called_from_forward(&self, fi: usize) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let mut walk = Walk::new();
        let mut todo: Vec<(Func<'t>, u64)> = f
            .functions
            .get("forward")
            .into_iter()
            .flatten()
            .filter(|&&def| {
                ast::enclosing(f.root, def, "class_definition")
                    .is_some_and(|class| !self.never_called(fi, class))
            })
            .map(|&def| (Func { file: fi, def }, 0))
            .collect();
        while let Some((func, depth)) = todo.pop() {
            if depth >= MAX_CALL_DEPTH {
                continue;
            }
            let tf = &self.files[func.file];
            // Not into the branch of a switch of its own that is off by default (glow-tts'
            // `if gen:` with `gen=False`, VITS' `if reverse:`): the training step's call
            // leaves it off, as `forward`'s own host tensors there are not reported.
            let off = loops::off_branches(func.def, tf.src, false);
            for (call, _) in loops::per_step_calls(Self::body(func.def), tf.src, &self.opt_in) {
                if off
                    .iter()
                    .any(|&(s, e)| s <= call.start_byte() && call.end_byte() <= e)
                {
                    continue;
                }
                for target in self.callees(func.file, call) {
                    if walk.enter(target) {
                        todo.push((target, depth + 1));
                    }
                }
            }
        }
        walk.entered
    }

    /// True when the objects of a module class are never called, so its `forward` never
    /// runs: every object is built into a name (`self.stft_fn = STFT(...)`, or
    /// `asr = ASR().cuda().eval()`) that the project only calls methods of
    /// (`self.stft_fn.transform(y)`, glow-tts' dataset; `asr.get_feature(x)`), never calls
    /// itself (but in the `forward` of a module never called: a decoder only a frozen
    /// model's unused `forward` runs), passes on or returns, and no class derives from it;
    /// or the class is named nowhere (no call, import, string or config value: an
    /// augmentation left out of the list training builds). What cannot be told (an object
    /// built in a list, passed, or built through a registry) counts as called.
    fn never_called(&self, fi: usize, class: Node<'t>) -> bool {
        self.never_called_within(fi, class, 0)
    }

    /// [`Self::never_called`], `depth` modules deep into callers that are never called.
    fn never_called_within(&self, fi: usize, class: Node<'t>, depth: usize) -> bool {
        // Only whole answers are kept: one cut short by the depth bound may differ.
        let key = (fi, class.id());
        if depth == 0
            && let Some(known) = self
                .never_called_memo
                .lock()
                .ok()
                .and_then(|m| m.get(&key).copied())
        {
            return known;
        }
        let answer = self.never_called_uncached(fi, class, depth);
        if depth == 0
            && let Ok(mut m) = self.never_called_memo.lock()
        {
            m.insert(key, answer);
        }
        answer
    }

    fn never_called_uncached(&self, fi: usize, class: Node<'t>, depth: usize) -> bool {
        let src = self.src(fi);
        let Some(name_node) = class.child_by_field_name("name") else {
            return false;
        };
        let name = text(name_node, src);
        let Some(sites) = self.calls_by_name().get(name) else {
            // A file linted alone is a module others may import.
            return self.cross
                && self.files.len() > 1
                && !self.named_elsewhere(name, fi, name_node);
        };
        // A subclass may call it through `super().forward(...)`.
        if self.has_subclass(name) {
            return false;
        }
        let mut objects: Vec<String> = Vec::new();
        for &(si, call) in sites {
            let ssrc = self.src(si);
            let Some(target) = assigned_to(through_module_methods(call, ssrc)) else {
                return false;
            };
            match target.kind() {
                "identifier" => objects.push(text(target, ssrc).to_owned()),
                "attribute" => match target.child_by_field_name("attribute") {
                    Some(a) => objects.push(text(a, ssrc).to_owned()),
                    None => return false,
                },
                _ => return false,
            }
        }
        // Every use of those names: only as the receiver of a method call. Passed as a
        // keyword argument (`build_model(asr_model=ASR_model)`, then `Munch(asr_model=...)`
        // and `nets.asr_model.get_feature(x)`), the object goes on under the keyword's name,
        // which is followed in turn.
        let mut next = 0;
        while next < objects.len() && next < MAX_OBJECT_NAMES {
            let obj = objects[next].clone();
            let obj = obj.as_str();
            next += 1;
            // A call of the object (`self.stft(x)`); not a module's function of the same
            // name (`torch.stft(...)`).
            let called = self.calls_by_name().get(obj).is_some_and(|calls| {
                calls.iter().any(|&(ci, c)| {
                    let cf = &self.files[ci];
                    c.child_by_field_name("function").is_none_or(|fun| {
                        let t = text(fun, cf.src);
                        let head = t.split('.').next().unwrap_or(t);
                        !(fun.kind() == "attribute" && cf.names.imports(head))
                    }) && !self.in_uncalled_forward(ci, c, depth)
                })
            });
            if called {
                return false;
            }
            let mut passed: Vec<String> = Vec::new();
            for (wi, f) in self.files.iter().enumerate() {
                let mut other = false;
                ast::walk(f.root, &mut |n| {
                    // A parameter of the same name is another variable (glow-tts'
                    // `griffin_lim(magnitudes, stft_fn)`); passing the object shows at the call.
                    if n.kind() == "identifier"
                        && text(n, f.src) == obj
                        && !n.parent().is_some_and(|p| {
                            matches!(
                                p.kind(),
                                "parameters"
                                    | "default_parameter"
                                    | "typed_parameter"
                                    | "typed_default_parameter"
                            ) || (p.kind() == "keyword_argument"
                                && p.child_by_field_name("name")
                                    .is_some_and(|k| k.id() == n.id()))
                        })
                    {
                        // `x.obj` or `obj` itself; what holds it decides.
                        let mut held = n;
                        if let Some(p) = n.parent().filter(|p| {
                            p.kind() == "attribute"
                                && p.child_by_field_name("attribute")
                                    .is_some_and(|a| a.id() == n.id())
                        }) {
                            // `torch.stft`: a module's function of the same name.
                            if p.child_by_field_name("object").is_some_and(|o| {
                                o.kind() == "identifier" && f.names.imports(text(o, f.src))
                            }) {
                                return true;
                            }
                            held = p;
                        }
                        // `obj.method(...)`, or the target of the object's own building.
                        let ok = held.parent().is_some_and(|p| {
                            p.kind() == "attribute"
                                && p.child_by_field_name("object")
                                    .is_some_and(|o| o.id() == held.id())
                                && p.parent().is_some_and(|c| c.kind() == "call")
                        }) || sites.iter().any(|&(si, call)| {
                            std::ptr::eq(self.files[si].src, f.src)
                                && assigned_to(through_module_methods(call, f.src))
                                    .is_some_and(|t| t.id() == held.id())
                        }) || self.in_uncalled_forward(wi, held, depth)
                            || self.positional_alias(held, f.src).is_some_and(|alias| {
                                passed.push(alias);
                                true
                            })
                            || held.parent().is_some_and(|p| {
                                // `kw=obj`: followed under `kw`.
                                let kw = (p.kind() == "keyword_argument"
                                    && p.child_by_field_name("value")
                                        .is_some_and(|v| v.id() == held.id()))
                                .then(|| p.child_by_field_name("name"))
                                .flatten();
                                if let Some(k) = kw {
                                    passed.push(text(k, f.src).to_owned());
                                }
                                // `self.obj = obj`: the same name again.
                                let same = p.kind() == "assignment"
                                    && p.child_by_field_name("right")
                                        .is_some_and(|r| r.id() == held.id())
                                    && p.child_by_field_name("left").is_some_and(|l| {
                                        let t = text(l, f.src);
                                        t.rsplit('.').next() == Some(obj)
                                    });
                                kw.is_some() || same
                            });
                        other |= !ok;
                    }
                    !other
                });
                if other {
                    return false;
                }
            }
            for name in passed {
                if !objects.contains(&name) {
                    objects.push(name);
                }
            }
        }
        next >= objects.len()
    }

    /// Per file, why it is not the default run: the project's README, shell scripts or
    /// Makefile name scripts ([`super::rundocs`]), what they run trains, and only another
    /// training script (`finetune/full.py` beside the README's `finetune/lora.py`) reaches
    /// this file through its imports. Modules a config builds by name (`_target_:
    /// pkg.models.Net`) count as named.
    fn entry_points(
        &self,
        docs: &super::rundocs::RunDocs,
        loops: &[(usize, (usize, usize))],
        config_named: &[bool],
    ) -> Vec<Option<String>> {
        let mut out = vec![None; self.files.len()];
        if !self.cross || docs.all_scripts().next().is_none() {
            return out;
        }
        let rels: Vec<String> = self
            .files
            .iter()
            .map(|f| f.rel.to_string_lossy().replace('\\', "/"))
            .collect();
        // A script named by its path (`finetune/lora.py`), else by the end of it (`python
        // lora.py` after `cd finetune`); `train.py` names the root's, not a subfolder's.
        let named_by = |scripts: &[String]| -> Vec<usize> {
            let mut named = Vec::new();
            for script in scripts {
                let exact: Vec<usize> = (0..rels.len()).filter(|&i| rels[i] == *script).collect();
                let found = if exact.is_empty() {
                    (0..rels.len())
                        .filter(|&i| {
                            rels[i].ends_with(&format!("/{script}"))
                                || script.ends_with(&format!("/{}", rels[i]))
                        })
                        .collect()
                } else {
                    exact
                };
                named.extend(found);
            }
            named
        };
        // A loop, `fit`, or a framework's trainer run by a training script
        // (`trainer.train()` in detectron2's `train_net.py`, DETR's `d2/` port).
        let trains = |i: usize| {
            let f = &self.files[i];
            loops.iter().any(|&(fi, _)| fi == i)
                || calls_fit(f)
                || (is_training_script(f.rel) && runs_as_script(f) && runs_a_trainer(f))
        };
        let reach = |starts: &[usize]| {
            let mut seen: HashSet<usize> = starts.iter().copied().collect();
            let mut todo: Vec<usize> = starts.to_vec();
            while let Some(i) = todo.pop() {
                for &j in &self.imported[i] {
                    if seen.insert(j) {
                        todo.push(j);
                    }
                }
            }
            seen
        };
        let mut named = named_by(&docs.scripts);
        named.extend((0..config_named.len()).filter(|&i| config_named[i]));
        let mut names: Vec<&str> = docs.docs.iter().map(String::as_str).collect();
        // The other shell scripts count where the documents name nothing that trains.
        if !reach(&named).iter().any(|&i| trains(i)) {
            named.extend(named_by(&docs.other_scripts));
            names.extend(docs.other_docs.iter().map(String::as_str));
        }
        if named.is_empty() {
            return out;
        }
        let on_path = reach(&named);
        if !on_path.iter().any(|&i| trains(i)) {
            return out;
        }
        names.dedup();
        let runs: Vec<&str> = {
            let mut r: Vec<&str> = named
                .iter()
                .filter(|&&i| trains(i) || self.files[i].functions.contains_key("main"))
                .map(|&i| rels[i].as_str())
                .collect();
            r.sort_unstable();
            r.dedup();
            r
        };
        for alt in (0..self.files.len()).filter(|&i| !on_path.contains(&i) && trains(i)) {
            // Tests and examples say so already.
            if test_or_example(self.files[alt].rel).is_some() {
                continue;
            }
            for i in reach(&[alt]) {
                if on_path.contains(&i) || out[i].is_some() {
                    continue;
                }
                let only = if i == alt {
                    format!("in `{}`, a training script", rels[alt])
                } else {
                    format!(
                        "in `{}`, which only the training script `{}` runs",
                        rels[i], rels[alt]
                    )
                };
                out[i] = Some(format!(
                    "{only} that {} {} not name (it runs {})",
                    names.join(", "),
                    if names.len() == 1 { "does" } else { "do" },
                    runs.iter()
                        .map(|r| format!("`{r}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        out
    }

    /// Per file, why it never runs where the project trains: a module of definitions only
    /// (no code of its own at the top, no `__main__` block, no loop) that no file of the
    /// project imports, and whose name no file, string, config or run document mentions (a
    /// vendored vocoder's `meldataset.py` nothing uses). Not where the project imports
    /// modules by computed names (`importlib.import_module`, `pkgutil`).
    fn unimported(
        &self,
        docs: &super::rundocs::RunDocs,
        loops: &[(usize, (usize, usize))],
        config_named: &[bool],
    ) -> Vec<Option<String>> {
        let mut out = vec![None; self.files.len()];
        // The project trains: a loop, `fit`, or a Lightning module's `training_step`.
        let trains = !loops.is_empty()
            || self
                .files
                .iter()
                .any(|f| calls_fit(f) || f.functions.contains_key("training_step"));
        // Modules loaded by a computed name are imported without saying so: any module,
        // where a folder is walked for them (`pkgutil`, `__import__`, a spec from a file);
        // the modules of a package, for `import_module(f"models.{name}")`; a module a
        // config or a string names, for `import_module(pkg)` (below).
        let dynamic = self.files.iter().any(|f| {
            ["__import__(", "pkgutil", "spec_from_file_location"]
                .iter()
                .any(|k| f.src.contains(k))
        });
        let Some(packages) = self.dynamic_packages() else {
            return out;
        };
        if !self.cross || self.files.len() < 2 || !trains || dynamic {
            return out;
        }
        let imported: HashSet<usize> = self.imported.iter().flatten().copied().collect();
        for (fi, f) in self.files.iter().enumerate() {
            let Some(stem) = f.rel.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let dotted = f
                .rel
                .with_extension("")
                .to_string_lossy()
                .replace(['/', '\\'], ".");
            if imported.contains(&fi)
                || packages.iter().any(|p| dotted.starts_with(p.as_str()))
                || config_named[fi]
                || stem == "__init__"
                || stem == "__main__"
                || loops.iter().any(|&(li, _)| li == fi)
                || calls_fit(f)
                // A Lightning module: its trainer builds it from a CLI or config.
                || f.functions.contains_key("training_step")
                || docs.all_scripts().any(|s| s.ends_with(&format!("{stem}.py")))
                || !definitions_only(f.root)
                || self.stem_named_elsewhere(stem, fi)
            {
                continue;
            }
            out[fi] = Some(format!(
                "in `{}`, which no file of the project imports or names",
                f.rel.display()
            ));
        }
        out
    }

    /// The packages whose modules `importlib.import_module` may load by a name built from a
    /// literal prefix (`f"data_gen.tts.txt_processors.{name}"`, `"models." + name`: the
    /// prefix, dots kept); `None` where a call builds the whole name (`f"{pkg}.{name}"`),
    /// which may load any module. A name read whole from elsewhere (`import_module(pkg)`) is
    /// left to the configs and strings that name the module.
    fn dynamic_packages(&self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut any = false;
        for f in self
            .files
            .iter()
            .filter(|f| f.src.contains("import_module("))
        {
            ast::walk(f.root, &mut |n| {
                if n.kind() != "call"
                    || !n
                        .child_by_field_name("function")
                        .is_some_and(|c| text(c, f.src).ends_with("import_module"))
                {
                    return true;
                }
                let Some(arg) = ast::positional(n, 0) else {
                    return true;
                };
                let literal_start = match arg.kind() {
                    "string" => Some(arg),
                    "binary_operator" => arg
                        .child_by_field_name("left")
                        .filter(|l| l.kind() == "string"),
                    _ => None,
                };
                if let Some(lit) = literal_start {
                    let mut c = lit.walk();
                    let interpolated = lit
                        .named_children(&mut c)
                        .any(|p| p.kind() == "interpolation");
                    if interpolated || arg.kind() == "binary_operator" {
                        // The literal text before the first field.
                        let mut c = lit.walk();
                        let prefix: String = lit
                            .named_children(&mut c)
                            .take_while(|p| p.kind() != "interpolation")
                            .filter(|p| p.kind() == "string_content")
                            .map(|p| text(p, f.src))
                            .collect();
                        match prefix.rsplit_once('.') {
                            Some((package, _)) if !package.is_empty() => {
                                out.push(package.to_owned())
                            }
                            _ => any = true,
                        }
                    }
                }
                true
            });
        }
        (!any).then_some(out)
    }

    /// True when another file names `stem` (an identifier, a word of a string) or a
    /// config value does: a module loaded by name (`importlib.import_module(f"x.{stem}")`).
    fn stem_named_elsewhere(&self, stem: &str, fi: usize) -> bool {
        self.named_in_configs(stem)
            || self
                .words()
                .iter()
                .enumerate()
                .any(|(i, w)| i != fi && w.contains_key(stem))
    }

    /// True when a value of a config file has `word` as a word (`_target_: aug.Jitter`).
    fn named_in_configs(&self, word: &str) -> bool {
        self.configs.leaves().any(|(_, d)| {
            d.value.as_deref().is_some_and(|t| {
                t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == word)
            })
        })
    }

    /// [`Project::words`], counted the first time it is asked, a file per thread.
    fn words(&self) -> &Vec<HashMap<&'t str, usize>> {
        self.words.get_or_init(|| {
            self.files
                .par_iter()
                .map(|f| {
                    let mut counts: HashMap<&'t str, usize> = HashMap::new();
                    words_of(f.root, f.src, &mut |w| *counts.entry(w).or_default() += 1);
                    counts
                })
                .collect()
        })
    }

    /// Per file, whether a config file builds something of it by its dotted path (Hydra's
    /// `_target_: pkg.models.Net`): it runs, whatever imports it.
    fn config_modules(&self) -> Vec<bool> {
        let targets: Vec<&str> = self
            .configs
            .leaves()
            .filter_map(|(_, d)| d.value.as_deref())
            .map(|t| t.trim_matches(['"', '\'']))
            .filter(|t| t.contains('.'))
            .collect();
        self.files
            .iter()
            .map(|f| {
                let module = module_path(f.rel);
                !module.is_empty()
                    && targets.iter().any(|t| {
                        t.strip_prefix(module.as_str())
                            .is_some_and(|r| r.starts_with('.'))
                    })
            })
            .collect()
    }

    /// The `forward` methods (file, start, end) of the module classes never called
    /// ([`Self::never_called`]): what they do runs in no step.
    fn unreached_forwards(&self) -> Vec<(usize, usize, usize)> {
        if !self.cross {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let Some(defs) = f.functions.get("forward") else {
                continue;
            };
            for &def in defs {
                // Never called, or built only under flags off by default (a panoptic
                // post-processor built only for `--dataset_file coco_panoptic`).
                // A class built only by tests or inference scripts is not here: its
                // findings stay, as info, with that reason.
                if ast::enclosing(f.root, def, "class_definition").is_some_and(|class| {
                    self.never_called(fi, class)
                        || self
                            .class_gates(fi, class)
                            .is_some_and(|(_, gate, _)| gate.is_some())
                }) {
                    out.push((fi, def.start_byte(), def.end_byte()));
                }
            }
        }
        out
    }

    /// True when a class of the project derives from the class `name`.
    fn has_subclass(&self, name: &str) -> bool {
        self.files.iter().any(|f| {
            f.classes.values().flatten().any(|c| {
                c.child_by_field_name("superclasses").is_some_and(|b| {
                    let mut w = b.walk();
                    b.named_children(&mut w).any(|base| {
                        let t = text(base, f.src);
                        t.rsplit('.').next() == Some(name)
                    })
                })
            })
        })
    }

    /// True when `node` lies in the `forward` of a module class that is never called
    /// ([`Self::never_called`]), looked at most `MAX_UNCALLED_DEPTH` modules deep.
    fn in_uncalled_forward(&self, fi: usize, node: Node<'t>, depth: usize) -> bool {
        if depth as u64 >= MAX_UNCALLED_DEPTH {
            return false;
        }
        let f = &self.files[fi];
        let Some(def) = ast::enclosing(f.root, node, "function_definition") else {
            return false;
        };
        def.child_by_field_name("name")
            .is_some_and(|n| text(n, f.src) == "forward")
            && ast::enclosing(f.root, def, "class_definition")
                .is_some_and(|class| self.never_called_within(fi, class, depth + 1))
    }

    /// The parameter an argument binds in a call of one of the project's functions by its
    /// plain name (`build_model(args, F0_model, ASR_model)` binds `ASR_model` of `def
    /// build_model(args, F0_model, ASR_model)`): the name the object goes on under.
    fn positional_alias(&self, arg: Node<'t>, src: &str) -> Option<String> {
        let args = arg.parent().filter(|p| p.kind() == "argument_list")?;
        let call = args.parent().filter(|c| c.kind() == "call")?;
        let fun = call
            .child_by_field_name("function")
            .filter(|f| f.kind() == "identifier")?;
        let [def] = self.by_name.get(text(fun, src))?.as_slice() else {
            return None;
        };
        let mut c = args.walk();
        let at = args
            .named_children(&mut c)
            .position(|a| a.id() == arg.id())?;
        let param = def.def.child_by_field_name("parameters")?.named_child(at)?;
        let name = match param.kind() {
            "identifier" => param,
            "default_parameter" | "typed_default_parameter" => param.child_by_field_name("name")?,
            "typed_parameter" => param.named_child(0)?,
            _ => return None,
        };
        Some(text(name, self.src(def.file)).to_owned())
    }

    /// True when `name` (a class defined at `def_name` of file `fi`) is named anywhere
    /// else: an identifier (a call, an import, a registry's value), a word of a string
    /// (`getattr(module, "Jitter")`), or a word of a config file's value (Hydra's
    /// `_target_: aug.Jitter`). Docstrings name nothing that runs.
    fn named_elsewhere(&self, name: &str, fi: usize, def_name: Node<'t>) -> bool {
        if self.named_in_configs(name) {
            return true;
        }
        let all: usize = self.words().iter().filter_map(|w| w.get(name)).sum();
        // Its own body names it too (`super(PitchShift, self).__init__()`).
        let mut own = 0;
        if let Some(class) = def_name.parent() {
            words_of(class, self.src(fi), &mut |w| {
                if w == name {
                    own += 1;
                }
            });
        }
        all > own
    }

    /// `host-tensor-in-forward` in what a step runs beside `forward` itself: the training
    /// loop's body, Lightning's `training_step`, and the project's functions they or a
    /// `forward` call (a helper, a loss; Conv-TasNet's `overlap_and_add`). `forward`
    /// methods are the file-local rule's (model.rs). Only what runs every step counts: not
    /// under a periodic, opt-in or evaluation branch.
    fn step_host_tensors(&self, reached: &[(Func<'t>, String)], hits: &mut Vec<(usize, Hit)>) {
        let mut seen = HashSet::new();
        for (func, why) in reached {
            if !seen.insert((func.file, func.def.id())) {
                continue;
            }
            let f = &self.files[func.file];
            let src = f.src;
            let name = func
                .def
                .child_by_field_name("name")
                .map_or("", |n| text(n, src));
            let a_loop = matches!(func.def.kind(), "for_statement" | "while_statement");
            let method = ast::enclosing(f.root, func.def, "class_definition").is_some();
            if !(a_loop || func.def.kind() == "function_definition")
                || (method && name == "forward")
                || memoised(func.def, src)
            {
                continue;
            }
            let every_step: HashSet<usize> =
                loops::per_step_calls(Self::body(func.def), src, &self.opt_in)
                    .into_iter()
                    .map(|(c, _)| c.id())
                    .collect();
            // What the step was given (the loop's batch, the function's parameters):
            // converting it and copying it to the GPU is moving the data, not a table built
            // per step (`torch.from_numpy(batch["mel"]).cuda()`).
            let mut inputs: HashSet<&str> = HashSet::new();
            if a_loop {
                if let Some(left) = func.def.child_by_field_name("left") {
                    ast::walk(left, &mut |n| {
                        if n.kind() == "identifier" {
                            inputs.insert(text(n, src));
                        }
                        true
                    });
                }
            } else {
                inputs.extend(ast::param_names(func.def, src));
            }
            // And what it unpacks from them (`x, y = batch`, `mels = data[6]`): a helper
            // that moves the batch to the GPU (a `to_device(batch, device)`) moves the data.
            derived_from(Self::body(func.def), &mut inputs, src);
            for model::HostTensor {
                moved,
                made,
                factory,
            } in model::host_tensors_moved(func.def, f)
            {
                let converts_input = model::is_conversion(&made)
                    && factory
                        .and_then(|c| c.child_by_field_name("arguments"))
                        .is_some_and(|a| mentions_data(a, &inputs, src));
                // A slice set from a host tensor copies at the assignment: its factory's
                // call runs every step or not.
                let at = match (moved.kind(), factory) {
                    ("assignment", Some(call)) => call,
                    _ => moved,
                };
                if !every_step.contains(&at.id())
                    || under_opt_in(f.root, moved.start_byte(), src, &self.opt_in)
                    || converts_input
                {
                    continue;
                }
                let specific = if a_loop {
                    format!(
                        "`{made}` builds a tensor on the CPU that the training loop at {}:{} \
                         then copies to the GPU, every step",
                        f.rel.display(),
                        func.def.start_position().row + 1
                    )
                } else {
                    format!(
                        "`{made}` builds a tensor on the CPU that `{name}` then copies to \
                         the GPU, and `{name}` runs every step ({why})"
                    )
                };
                hits.push((
                    func.file,
                    Hit {
                        id: "host-tensor-in-forward",
                        byte: moved.start_byte(),
                        specific,
                        context: None,
                        fix: "create it on the device: torch.arange(n, device=x.device); or \
                              once, before the loop or in __init__: \
                              self.register_buffer(\"table\", torch.tensor(...), \
                              persistent=False)"
                            .to_owned(),
                        root: None,
                        info: None,
                    },
                ));
            }
        }
    }

    #[allow(clippy::too_many_arguments)] // one recursive walk's state
    fn syncs_in(
        &self,
        fi: usize,
        body: Node<'t>,
        tensors: &HashSet<String>,
        chain: &[String],
        branch: bool,
        depth: u64,
        walk: &mut Walk<'t>,
        out: &mut Vec<Found<'t>>,
    ) {
        let f = &self.files[fi];
        // The parameters the caller gave: their `if p is None:` fallbacks do not run.
        let given: Vec<&String> = tensors
            .iter()
            .filter(|t| t.starts_with(loops::GIVEN))
            .collect();
        let gates = if given.is_empty() {
            std::borrow::Cow::Borrowed(&self.opt_in)
        } else {
            let mut g = self.opt_in.clone();
            g.extend(given.into_iter().cloned());
            std::borrow::Cow::Owned(g)
        };
        // The function's own switches off by default (`if reverse:` on `reverse=False`).
        let off = body
            .parent()
            .filter(|d| d.kind() == "function_definition")
            .map(|d| {
                // A switch the caller set to a value of its own is on (`reverse=True`);
                // left out, or set to a falsy literal, it is off.
                let mut off = loops::off_branches_unless(d, f.src, false, &|p| {
                    tensors.contains(&loops::given_mark(p))
                        && !tensors.contains(&loops::falsy_mark(p))
                });
                // What a caller that leaves an optional parameter out skips: `if kv_cache
                // is not None:` where the step calls `model(x, y)` (nanochat's GPT).
                if depth > 0 && !tensors.contains(&loops::given_mark(loops::ALL_GIVEN)) {
                    off.extend(loops::left_out_branches(d, f.src, &|p| {
                        !tensors.contains(&loops::given_mark(p))
                    }));
                }
                off
            })
            .unwrap_or_default();
        for (call, on_branch) in loops::per_step_calls(body, f.src, &gates) {
            if off
                .iter()
                .any(|&(a, b)| a <= call.start_byte() && call.end_byte() <= b)
            {
                continue;
            }
            let branch = branch || on_branch;
            if let Some(sync) = loops::sync(&f.names, call, f.src, tensors)
                .filter(|_| !untaken_tensor_guard(f.root, call, f.src, tensors))
            {
                out.push(Found {
                    file: fi,
                    node: call,
                    sync,
                    chain: chain.to_vec(),
                    branch,
                });
                continue;
            }
            if depth >= MAX_CALL_DEPTH {
                continue;
            }
            for target in self.callees(fi, call) {
                let mut names = self.bind(fi, call, tensors, target);
                let mut given: Vec<String> = names
                    .iter()
                    .filter(|n| n.starts_with(|c: char| c == '_' || c.is_alphabetic()))
                    .cloned()
                    .collect();
                given.sort_unstable();
                if !walk.enter_with(target, given) {
                    continue;
                }
                let inner = Self::body(target.def);
                let tsrc = self.src(target.file);
                names.extend(loops::tensor_names(inner, tsrc));
                // Tensors it builds on the device (`lengths = torch.randint(..., device=
                // x.device)`).
                names.extend(loops::device_tensors(inner, tsrc));
                // A module's buffers and parameters live on its device: `int(self.ptr)`
                // of MoCo's queue pointer reads the GPU.
                if let Some(class) =
                    ast::enclosing(self.files[target.file].root, target.def, "class_definition")
                {
                    names.extend(self.module_tensors(target.file, class));
                }
                loops::derived_tensors(inner, tsrc, &mut names);
                let mut next = chain.to_vec();
                next.push(self.link(fi, call));
                self.syncs_in(
                    target.file,
                    inner,
                    &names,
                    &next,
                    branch,
                    depth + 1,
                    walk,
                    out,
                );
            }
        }
    }

    /// The parameters of `target` that receive a tensor at this call.
    fn bind(
        &self,
        fi: usize,
        call: Node<'t>,
        tensors: &HashSet<String>,
        target: Func<'t>,
    ) -> HashSet<String> {
        let src = self.src(fi);
        let tsrc = self.src(target.file);
        let mut out = HashSet::new();
        if target.def.child_by_field_name("parameters").is_none() {
            return out;
        }
        let names = ast::param_names(target.def, tsrc);
        let Some(args) = call.child_by_field_name("arguments") else {
            return out;
        };
        // `def update(self, **kwargs)`: the keywords no parameter takes go into `kwargs`,
        // which is given (and holds a tensor) when one of them is (a tensor).
        let splat = ast::dict_splat_param(target.def, tsrc);
        let mut c = args.walk();
        let mut at = 0;
        for a in args.named_children(&mut c) {
            match a.kind() {
                "keyword_argument" => {
                    if let (Some(k), Some(v)) = (
                        a.child_by_field_name("name"),
                        a.child_by_field_name("value"),
                    ) {
                        bind_one(&mut out, (text(k, src), v), src, tensors, &self.opt_in);
                        if let Some(kw) = splat.filter(|_| !names.contains(&text(k, src))) {
                            out.insert(loops::given_mark(kw));
                            if loops::tensor_like(v, src, tensors) {
                                out.insert(kw.to_owned());
                            }
                        }
                    }
                }
                "comment" => {}
                // `f(*args, **kwargs)`: any parameter may be given.
                "list_splat" | "dictionary_splat" => {
                    out.insert(loops::given_mark(loops::ALL_GIVEN));
                    break;
                }
                _ => {
                    if let Some(n) = names.get(at) {
                        bind_one(&mut out, (n, a), src, tensors, &self.opt_in);
                    }
                    at += 1;
                }
            }
        }
        out
    }

    // ---- per-item work ----

    /// The functions run once per item, with what they are: every `__getitem__`, the
    /// `__call__` of `*Collate*` classes, functions given as a `collate_fn`, and functions
    /// passed to `Dataset.map`.
    fn item_roots(&self) -> Vec<(Func<'t>, String)> {
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let src = f.src;
            let rel = f.rel.display();
            for def in f.functions.get("__getitem__").into_iter().flatten() {
                let class = ast::enclosing(f.root, *def, "class_definition")
                    .and_then(|c| c.child_by_field_name("name"))
                    .map_or("?", |n| text(n, src));
                out.push((
                    Func {
                        file: fi,
                        def: *def,
                    },
                    format!(
                        "called for every item (`{class}.__getitem__`, {rel}:{})",
                        def.start_position().row + 1
                    ),
                ));
            }
            // A Python iterator's `__next__` gives an item or a batch each time it is called,
            // and a loader thread's or process's `run` makes them all (yolov4-tflite's
            // `Dataset.__next__`, kospeech's `threading.Thread` loader).
            for (name, classes) in &f.classes {
                for class in classes {
                    let mut roots: Vec<(Node<'t>, &str)> = ast::methods(*class, "__next__", src)
                        .into_iter()
                        .map(|d| (d, "called for every item or batch"))
                        .collect();
                    if worker_class(*class, src) {
                        roots.extend(
                            ast::methods(*class, "run", src)
                                .into_iter()
                                .map(|d| (d, "run by a loader thread or process, for every item")),
                        );
                    }
                    for (def, what) in roots {
                        let method = def
                            .child_by_field_name("name")
                            .map_or("?", |n| text(n, src));
                        out.push((
                            Func { file: fi, def },
                            format!(
                                "{what} (`{name}.{method}`, {rel}:{})",
                                def.start_position().row + 1
                            ),
                        ));
                    }
                }
            }
            // `threading.Thread(target=self.thread_main, ...)`: a loader thread that reads
            // every item and feeds a queue (tensorflow-wavenet's `AudioReader`).
            if src.contains("Thread(") || src.contains("Process(") {
                ast::walk(f.root, &mut |n| {
                    if n.kind() == "call"
                        && f.names.callee(n, src).is_some_and(|c| {
                            matches!(c.as_str(), "threading.Thread" | "multiprocessing.Process")
                        })
                        && let Some(target) = ast::kwarg(n, "target", src)
                    {
                        for def in self.functions_of(fi, target) {
                            out.push((
                                def,
                                format!(
                                    "run by a loader thread (`{}` at {rel}:{}), for every item",
                                    text(n.child_by_field_name("function").unwrap_or(n), src),
                                    n.start_position().row + 1
                                ),
                            ));
                        }
                    }
                    true
                });
            }
            for (name, classes) in &f.classes {
                if !name.to_ascii_lowercase().contains("collat") {
                    continue;
                }
                for class in classes {
                    for def in ast::methods(*class, "__call__", src) {
                        out.push((
                            Func { file: fi, def },
                            format!(
                                "that collates every batch (`{name}.__call__`, {rel}:{})",
                                def.start_position().row + 1
                            ),
                        ));
                    }
                }
            }
            for (def, context) in &f.item_roots {
                out.push((
                    Func {
                        file: fi,
                        def: *def,
                    },
                    context.clone(),
                ));
            }
            for (arg, context) in &f.map_args {
                for def in self.functions_of(fi, *arg) {
                    out.push((def, context.clone()));
                }
            }
            // A Python generator Keras draws each batch from, on the training process's
            // threads: `model.fit_generator(gen.next_batch(), ...)`, `model.fit(x=batches(),
            // ...)` (KerasDeepSpeech's `BatchGenerator`).
            for (fit, def) in self.keras_generators(fi) {
                out.push((
                    def,
                    format!(
                        "that Keras draws every batch from (`{}` at {rel}:{}), in the training \
                         process",
                        ast::method(fit, src).unwrap_or("fit"),
                        fit.start_position().row + 1
                    ),
                ));
            }
            for &loader in &self.files[fi].loaders {
                if let Some(arg) = sig::arg(loader, torch::LOADER, "collate_fn", src) {
                    for def in self.functions_of(fi, arg) {
                        out.push((
                            def,
                            format!(
                                "given as `collate_fn` at {rel}:{}, run for every batch",
                                loader.start_position().row + 1
                            ),
                        ));
                    }
                }
            }
        }
        out
    }

    /// The Python generators Keras draws batches from in file `fi`: each `fit_generator` or
    /// `fit` call given a generator (`model.fit_generator(gen(lines), ...)`, `model.fit(x=
    /// batches())`), with the project function that yields them.
    fn keras_generators(&self, fi: usize) -> Vec<(Node<'t>, Func<'t>)> {
        let src = self.src(fi);
        let mut out = Vec::new();
        if !src.contains(".fit") {
            return out;
        }
        ast::walk(self.files[fi].root, &mut |n| {
            if n.kind() == "call"
                && matches!(ast::method(n, src), Some("fit_generator" | "fit"))
                && let Some(arg) = ast::positional(n, 0)
                    .or_else(|| ast::kwarg(n, "generator", src))
                    .or_else(|| ast::kwarg(n, "x", src))
                && let Some(call) = self.generator_call(fi, arg)
            {
                out.extend(
                    self.generators_of(fi, call, 0)
                        .into_iter()
                        .map(|def| (n, def)),
                );
            }
            true
        });
        out
    }

    /// The project functions that yield what `call` returns: the callee itself when it
    /// yields, else (a few levels) the generators its `return` calls give
    /// (`data_generator_wrapper(...)` returning `data_generator(...)`, keras-yolo3).
    fn generators_of(&self, fi: usize, call: Node<'t>, depth: u32) -> Vec<Func<'t>> {
        let mut out = Vec::new();
        for def in self.callees(fi, call) {
            let (mut yields, mut returned) = (false, Vec::new());
            ast::walk(def.def, &mut |m| {
                yields |= m.kind() == "yield";
                if m.kind() == "return_statement"
                    && let Some(v) = m.named_child(0).filter(|v| v.kind() == "call")
                {
                    returned.push(v);
                }
                !yields && (m.id() == def.def.id() || !ast::is_scope(m))
            });
            if yields {
                out.push(def);
            } else if depth < 2 {
                for r in returned {
                    out.extend(self.generators_of(def.file, r, depth + 1));
                }
            }
        }
        out
    }

    /// Marks as host values the names a loop binds from what the project's functions
    /// return on the host: `loss, parts = compute_loss(...)` where `compute_loss` returns
    /// `loss, to_cpu(torch.cat(...))` (PyTorch-YOLOv3): `parts` is a CPU tensor, so
    /// `float(parts[0])` copies nothing.
    fn host_results(&self, fi: usize, body: Node<'t>, tensors: &mut HashSet<String>) {
        let src = self.src(fi);
        ast::walk(body, &mut |n| {
            if n.kind() != "assignment" {
                return !ast::is_scope(n);
            }
            let (Some(left), Some(call)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right")
                    .filter(|r| r.kind() == "call"),
            ) else {
                return true;
            };
            let targets: Vec<Node<'t>> = match left.kind() {
                "identifier" => vec![left],
                "pattern_list" | "tuple_pattern" => {
                    let mut c = left.walk();
                    left.named_children(&mut c).collect()
                }
                _ => return true,
            };
            let callees = self.callees(fi, call);
            if callees.is_empty() {
                return true;
            }
            // What the call gives each callee: a parameter given a host value returns one
            // (`all_reduce_mean(loss_value)` returning `x` itself on one rank).
            let given: Vec<HashSet<String>> = callees
                .iter()
                .map(|f| self.bind(fi, call, tensors, *f))
                .collect();
            for (i, t) in targets.iter().enumerate() {
                let index = (targets.len() > 1).then_some(i);
                if t.kind() == "identifier"
                    && callees
                        .iter()
                        .zip(&given)
                        .all(|(f, g)| self.returns_host(*f, index, 0, g))
                {
                    tensors.insert(loops::host_mark(text(*t, src)));
                }
            }
            true
        });
    }

    /// True when every `return` of `func` gives a host value (at `index` of the tuple it
    /// returns, when given): `.cpu()`, `.item()`, `.tolist()`, `.numpy()`, `float(...)`,
    /// a parameter the call gave a host value (`given`, as [`Project::bind`] marks it), or
    /// a call of a function of the project that does, one level down.
    fn returns_host(
        &self,
        func: Func<'t>,
        index: Option<usize>,
        depth: usize,
        given: &HashSet<String>,
    ) -> bool {
        let src = self.src(func.file);
        let Some(body) = func.def.child_by_field_name("body") else {
            return false;
        };
        let mut returns: Vec<Node<'t>> = Vec::new();
        ast::walk(body, &mut |n| {
            if n.kind() == "return_statement" {
                returns.push(n);
            }
            !ast::is_scope(n)
        });
        if returns.is_empty() {
            return false;
        }
        returns.iter().all(|r| {
            let Some(mut value) = r.named_child(0) else {
                return false;
            };
            if let Some(i) = index {
                if !matches!(value.kind(), "expression_list" | "tuple") {
                    return false;
                }
                let Some(v) = value.named_child(i) else {
                    return false;
                };
                value = v;
            }
            let none = HashSet::new();
            loops::on_host(value, src, given)
                || (depth < 1 && value.kind() == "call" && {
                    let inner = self.callees(func.file, value);
                    !inner.is_empty()
                        && inner
                            .iter()
                            .all(|f| self.returns_host(*f, None, depth + 1, &none))
                })
        })
    }

    /// The call that makes a generator given to Keras: the argument itself (`gen.next_batch()`)
    /// or the call a name of the file was bound to (`train_gen = gen.next_batch()`).
    fn generator_call(&self, fi: usize, arg: Node<'t>) -> Option<Node<'t>> {
        if arg.kind() == "call" {
            return Some(arg);
        }
        if arg.kind() != "identifier" {
            return None;
        }
        let f = &self.files[fi];
        let name = text(arg, f.src);
        let mut bound = None;
        ast::walk(f.root, &mut |n| {
            if n.kind() == "assignment"
                && n.start_byte() < arg.start_byte()
                && n.child_by_field_name("left")
                    .is_some_and(|l| l.kind() == "identifier" && text(l, f.src) == name)
                && let Some(r) = n
                    .child_by_field_name("right")
                    .filter(|r| r.kind() == "call")
            {
                bound = Some(r);
            }
            true
        });
        bound
    }

    /// The functions an argument names: a function, a lambda, or an object of a class
    /// (its `__call__`).
    fn functions_of(&self, fi: usize, arg: Node<'t>) -> Vec<Func<'t>> {
        let src = self.src(fi);
        match arg.kind() {
            "lambda" => vec![Func { file: fi, def: arg }],
            "identifier" | "attribute" => {
                let Some(d) = ast::dotted(arg, src) else {
                    return Vec::new();
                };
                let f = &self.files[fi];
                let head = d.split('.').next().unwrap_or(&d);
                if f.names.imports(head) {
                    return self.qualified(fi, &f.names.resolve(&d)).0;
                }
                let last = d.rsplit('.').next().unwrap_or(&d);
                f.functions
                    .get(last)
                    .map(|defs| defs.iter().map(|&def| Func { file: fi, def }).collect())
                    .unwrap_or_default()
            }
            // `functools.partial(collate, n_mels=40)` runs `collate`.
            "call"
                if self.files[fi].names.callee(arg, src).as_deref()
                    == Some("functools.partial") =>
            {
                ast::positional(arg, 0)
                    .map(|f| self.functions_of(fi, f))
                    .unwrap_or_default()
            }
            "call" => self
                .class_of_call(fi, arg)
                .map(|(cf, class)| self.method_of(cf, class, "__call__", 0))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The project class a call constructs (`Speech(...)`).
    fn class_of_call(&self, fi: usize, call: Node<'t>) -> Option<(usize, Node<'t>)> {
        let d = ast::dotted(call.child_by_field_name("function")?, self.src(fi))?;
        self.class_named(fi, &d)
    }

    /// Heavy calls reachable from a per-item function, each with its call chain; computed
    /// once per function (`per_item` and `few_workers` share the roots).
    fn heavy_from(&self, root: Func<'t>) -> Vec<Heavy<'t>> {
        let key = (root.file, root.def.id());
        if let Some(done) = self.memo().get(&key) {
            return done.clone();
        }
        let mut out = Vec::new();
        let mut walk = Walk::new();
        if walk.enter(root) {
            self.heavy_in(root, &[], &[], 0, None, &mut walk, &mut out);
        }
        self.memo().insert(key, out.clone());
        out
    }

    /// [`module_tensors`] of a class, found once.
    fn module_tensors(&self, fi: usize, class: Node<'t>) -> Vec<String> {
        let key = (fi, class.id());
        let mut memo = self
            .module_memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        memo.entry(key)
            .or_insert_with(|| module_tensors(class, self.src(fi)))
            .clone()
    }

    /// The memo of `heavy_from`; a panic on another thread never poisons it for good
    /// (the map holds only finished results).
    fn memo(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, usize), Vec<Heavy<'t>>>> {
        self.heavy_memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    #[allow(clippy::too_many_arguments)] // one recursive walk's state
    fn heavy_in(
        &self,
        func: Func<'t>,
        chain: &[String],
        sites: &[(Func<'t>, Node<'t>)],
        depth: u64,
        cached: Option<&str>,
        walk: &mut Walk<'t>,
        out: &mut Vec<Heavy<'t>>,
    ) {
        let f = &self.files[func.file];
        let src = f.src;
        let body = Self::body(func.def);
        // Nested helper functions of a per-item function run per item too; the branch of a
        // dataset shared by its splits that runs only for evaluation does not (`if
        // self.split != "train":` around a resample), nor one under an opt-in flag (`if
        // self.aug.speed_perturb:` with its default `False`).
        let mut calls = Vec::new();
        let mut eval_only: Vec<(usize, usize)> = Vec::new();
        ast::walk(body, &mut |n| {
            if n.kind() == "if_statement" {
                eval_only.extend(loops::eval_only_branches(n, src));
                eval_only.extend(loops::opt_in_body(n, src, &self.opt_in));
            }
            if n.kind() == "call" {
                calls.push(n);
            }
            n.kind() != "class_definition"
        });
        calls.retain(|c| {
            !eval_only
                .iter()
                .any(|&(s, e)| s <= c.start_byte() && c.end_byte() <= e)
        });
        // Not the `else` of a setting true by default (VITS' `if self.cleaned_text:` with
        // `cleaned_text: true` in its config: the text cleaners are not per item).
        let on = |cond: Node<'t>| self.on_by_default(func.file, cond);
        calls.retain(|c| {
            !opt_in_site(*c, src, &HashSet::new(), &on).is_some_and(|why| why.starts_with("when `"))
        });
        for call in calls {
            let mut name = f.names.callee(call, src).unwrap_or_default();
            // `self.to_mel(wav)` where `self.to_mel = torchaudio.transforms.MelSpectrogram(...)`;
            // `backend.phonemize(...)` on a `phonemizer.backend.EspeakBackend(...)`.
            if let Some(made) = self.transforms[func.file].get(&name) {
                name.clone_from(made);
            } else if let Some((object, method)) = name.rsplit_once('.')
                && let Some(made) = self.transforms[func.file].get(object)
            {
                name = format!("{made}.{method}");
            }
            let cached = cached
                .map(str::to_owned)
                .or_else(|| file_cache(call, body, src));
            let before = out.len();
            let mut all_entered = true;
            let known = decode::is_decode(&name) || decode::is_subprocess(&name);
            if !known && depth < MAX_CALL_DEPTH {
                let mut targets = self.callees(func.file, call);
                // The Python callback of `tf.numpy_function(f, ...)` runs per item too.
                if tfdata::is_py_function(&name)
                    && let Some(cb) = sig::arg(call, "tf.numpy_function", "func", src)
                {
                    targets.extend(self.functions_of(func.file, cb));
                }
                for target in targets {
                    if walk.enter(target) {
                        let mut next = chain.to_vec();
                        next.push(self.link(func.file, call));
                        let mut at = sites.to_vec();
                        at.push((func, call));
                        self.heavy_in(target, &next, &at, depth + 1, cached.as_deref(), walk, out);
                    } else {
                        all_entered = false;
                    }
                }
            }
            // Known heavy work, or a feature computed by code gpufeed does not know (a
            // conv1d STFT module, a function of an import outside the linted files): its
            // name says what it is.
            let by_name = decode::is_feature_name(&name)
                || decode::is_resampling_load(&name, &ast::keywords(call, src));
            // A resample or feature with random parameters (`resample_poly(wav, up,
            // random.choice(rates))`) is an augmentation: a new result every epoch, nothing
            // to precompute. A read stays heavy whatever it reads.
            if (known || by_name)
                && decode::weight(&name) > 0
                && random_parameters(body, call, src, &f.names)
            {
                continue;
            }
            if known || (out.len() == before && all_entered && by_name) {
                out.push(Heavy {
                    file: func.file,
                    node: call,
                    name,
                    chain: chain.to_vec(),
                    sites: [sites, &[(func, call)]].concat(),
                    cached,
                });
            }
        }
    }

    /// `decode-per-item` for every heavy call reached from a per-item function.
    fn per_item(&self, hits: &mut Vec<(usize, Hit)>) {
        let found: Vec<_> = self
            .item_roots()
            .into_par_iter()
            .map(|(root, context)| (root, context, self.heavy_from(root)))
            .collect();
        for (root, context, heavy) in found {
            let rf = &self.files[root.file];
            let gated = ast::enclosing(rf.root, root.def, "class_definition")
                .and_then(|class| self.gated_class(root.file, class));
            for h in heavy {
                // A waveform or image the item returns is what the model trains on:
                // reading it is no feature cost (vocoders, waveform models, a mel loaded
                // from disk beside the audio). Only the features computed from it are.
                let subprocess = decode::is_subprocess(&h.name);
                if !subprocess && decode::weight(&h.name) == 0 && self.returned(&h) {
                    continue;
                }
                let via = if h.chain.is_empty() {
                    String::new()
                } else {
                    format!("; through {}", h.chain.join(" -> "))
                };
                let (id, specific, fix) = if subprocess {
                    (
                        "subprocess-per-item",
                        format!("`{}` starts a process for every item, every epoch", h.name),
                        "convert the files once, before training (one command over the \
                         folder), or do the work in Python inside the loader's workers",
                    )
                } else if h.cached.is_some() {
                    (
                        "decode-per-item",
                        format!("`{}` runs for an item whose cached file is missing", h.name),
                        decode_fix(&h.name),
                    )
                } else {
                    (
                        "decode-per-item",
                        format!("`{}` runs for every item, every epoch", h.name),
                        decode_fix(&h.name),
                    )
                };
                hits.push((
                    h.file,
                    Hit {
                        id,
                        byte: h.node.start_byte(),
                        specific,
                        context: Some(format!("in a function {context}{via}")),
                        fix: fix.to_owned(),
                        root: Some((root.file, root.def.start_byte())),
                        info: h
                            .cached
                            .clone()
                            .or_else(|| gated.clone())
                            .or_else(|| rate_guard(&h.name, h.node, self.src(h.file))),
                    },
                ));
            }
        }
    }

    /// True when the value of a heavy call reaches what its per-item function returns, at
    /// every call site on the way up, without a feature computed from it in between.
    fn returned(&self, h: &Heavy<'t>) -> bool {
        h.sites.iter().rev().all(|&(func, call)| {
            let src = self.src(func.file);
            flow::reaches_return(func.def, call, src, &mut |c| self.computes_feature(func, c))
        })
    }

    /// A call that computes a feature (STFT, mel, pitch), itself or in the project code it
    /// reaches: what comes out of it is not the waveform that went in.
    fn computes_feature(&self, func: Func<'t>, call: Node<'t>) -> bool {
        let f = &self.files[func.file];
        let mut name = f.names.callee(call, f.src).unwrap_or_default();
        if let Some(made) = self.transforms[func.file].get(&name) {
            name.clone_from(made);
        }
        if decode::weight(&name) == 2
            && (decode::is_decode(&name) || decode::is_feature_name(&name))
        {
            return true;
        }
        self.callees(func.file, call).into_iter().any(|t| {
            self.heavy_from(t)
                .iter()
                .any(|h| decode::weight(&h.name) == 2)
        })
    }

    /// `decode-per-item-few-workers`: a `DataLoader` with 0 or 1 workers over a dataset
    /// (or a `collate_fn`) that decodes or computes features per item.
    fn few_workers(&self, hits: &mut Vec<(usize, Hit)>) {
        let per_file: Vec<Vec<(usize, Hit)>> = (0..self.files.len())
            .into_par_iter()
            .map(|fi| {
                let mut hits = Vec::new();
                self.few_workers_in(fi, &mut hits);
                hits
            })
            .collect();
        hits.extend(per_file.into_iter().flatten());
    }

    /// `decode-per-item-few-workers` for the loaders of file `fi`.
    fn few_workers_in(&self, fi: usize, hits: &mut Vec<(usize, Hit)>) {
        let src = self.src(fi);
        let image_low = gpufeed_stats::thresholds::IMAGE_DECODE_WORKERS_LOW;
        for &loader in &self.files[fi].loaders {
            if ast::has_splat(loader) {
                continue;
            }
            let workers = match sig::arg(loader, torch::LOADER, "num_workers", src) {
                None => 0,
                Some(w) => match self.setting(fi, w).0.parse::<u32>() {
                    Ok(n) if n <= 1 || f64::from(n) < image_low => n,
                    _ => continue,
                },
            };
            let mut roots = Vec::new();
            let ds = sig::arg(loader, torch::LOADER, "dataset", src);
            if let Some(ds) = ds
                && let Some((cf, class)) = self.dataset_class(fi, loader, ds)
            {
                roots.extend(self.method_of(cf, class, "__getitem__", 0));
            }
            if let Some(c) = sig::arg(loader, torch::LOADER, "collate_fn", src) {
                roots.extend(self.functions_of(fi, c));
            }
            let (name, chain, cached) = if let Some(h) = self.heaviest(roots) {
                (h.name, h.chain, h.cached)
            } else if let Some(folder) = ds.and_then(|d| self.image_folder(fi, loader, d)) {
                // torchvision's `ImageFolder` opens every image with PIL.
                (folder, Vec::new(), None)
            } else {
                continue;
            };
            let how = match workers {
                0 => "no worker process (`num_workers` 0)".to_owned(),
                1 => "one worker process (`num_workers=1`)".to_owned(),
                // 2 or 3: few only for decoding an image per item.
                n if decode::is_image_decode(&name) => format!(
                    "{n} worker processes (`num_workers={n}`, fewer than {image_low}) for \
                     image decoding"
                ),
                _ => continue,
            };
            let context = if chain.is_empty() {
                format!("per item: `{name}` decodes each image file")
            } else {
                format!("per item: {}", chain.join(" -> "))
            };
            hits.push((
                fi,
                Hit {
                    id: "decode-per-item-few-workers",
                    byte: loader.start_byte(),
                    specific: format!("`DataLoader` with {how} while every item runs `{name}`"),
                    context: Some(context),
                    // gpufeed's cache holds speech features: images need workers (or
                    // GPU decoding), not `gpufeed precompute`.
                    fix: if decode::is_image_decode(&name) {
                        "DataLoader(..., num_workers=8, persistent_workers=True)  # up to the \
                         cores; or decode on the GPU (torchvision.io.decode_jpeg(data, \
                         device=\"cuda\"), NVIDIA DALI)"
                    } else {
                        "DataLoader(..., num_workers=8, persistent_workers=True)  # up to \
                         the cores; better, precompute the features once (`gpufeed \
                         precompute`)"
                    }
                    .to_owned(),
                    root: None,
                    info: cached,
                },
            ));
        }
        self.keras_few_workers(fi, hits);
    }

    /// The heaviest call `roots` reach, names the work (the mel, not the WAV read before
    /// it; the first of equals), with its chain ending at the call itself.
    fn heaviest(&self, roots: Vec<Func<'t>>) -> Option<Heavy<'t>> {
        let mut h = roots
            .into_iter()
            .flat_map(|r| self.heavy_from(r))
            .enumerate()
            .max_by_key(|(i, h)| {
                (
                    h.cached.is_none(),
                    decode::weight(&h.name),
                    std::cmp::Reverse(*i),
                )
            })
            .map(|(_, h)| h)?;
        h.chain.push(format!(
            "{}:{} {}",
            self.files[h.file].rel.display(),
            h.node.start_position().row + 1,
            h.name
        ));
        Some(h)
    }

    /// `decode-per-item-few-workers` for Keras: `fit_generator` (or `fit`) drawing from a
    /// Python generator in one thread (`workers=1`, Keras 2's default) while every batch
    /// decodes or computes features (keras-yolo3's `data_generator`, PIL per image).
    fn keras_few_workers(&self, fi: usize, hits: &mut Vec<(usize, Hit)>) {
        let src = self.src(fi);
        for (fit, def) in self.keras_generators(fi) {
            let workers = match ast::kwarg(fit, "workers", src) {
                None => 1,
                Some(w) => match self.setting(fi, w).0.parse::<u32>() {
                    Ok(n) if n <= 1 => n,
                    _ => continue,
                },
            };
            let Some(h) = self.heaviest(vec![def]) else {
                continue;
            };
            let method = ast::method(fit, src).unwrap_or("fit");
            let image = decode::is_image_decode(&h.name);
            hits.push((
                fi,
                Hit {
                    id: "decode-per-item-few-workers",
                    byte: fit.start_byte(),
                    specific: format!(
                        "`{method}` draws every batch from a Python generator in {} while \
                         every batch runs `{}`",
                        if workers == 0 {
                            "the training thread (`workers=0`)".to_owned()
                        } else {
                            "one thread (`workers=1`, Keras' default)".to_owned()
                        },
                        h.name
                    ),
                    context: Some(format!("per batch: {}", h.chain.join(" -> "))),
                    fix: if image {
                        "a keras.utils.Sequence (PyDataset) with workers=8, \
                         use_multiprocessing=True; or a tf.data pipeline that decodes with \
                         num_parallel_calls=tf.data.AUTOTUNE"
                    } else {
                        "a keras.utils.Sequence (PyDataset) with workers=8, \
                         use_multiprocessing=True; better, precompute the features once \
                         (`gpufeed precompute`)"
                    }
                    .to_owned(),
                    root: None,
                    info: h.cached,
                },
            ));
        }
    }

    /// What a loader argument is: its literal, or the default of the setting it reads
    /// (`self.hparams.num_workers` -> `0`) with where that default is set.
    fn setting(&self, fi: usize, arg: Node<'t>) -> (String, Option<&defaults::DefaultValue>) {
        let src = self.src(fi);
        if let Some(name) = defaults::read_setting(arg, src)
            && let Some(d) = defaults::resolved(&self.defaults, name)
            && let Some(v) = &d.value
        {
            return (v.clone(), Some(d));
        }
        // A parameter of the function (`def get_loader(..., num_workers=1)` called with
        // `config.num_workers`): the project's one default of that name (the flag's),
        // where the parameter's own default, if it has one, says the same.
        if arg.kind() == "identifier"
            && let Some(def) = ast::enclosing(self.files[fi].root, arg, "function_definition")
            && let Some(own) = parameter_default(def, text(arg, src), src)
            && let Some(d) = defaults::resolved(&self.defaults, text(arg, src))
            && let Some(v) = &d.value
            && own.as_deref().is_none_or(|o| o == v)
        {
            return (v.clone(), Some(d));
        }
        // `hp.train.num_workers` where the config's sections disagree on `num_workers`
        // (`train` 0, `test` 8): the read's own keys pick one.
        let keys = defaults::setting_keys(arg, src);
        if keys.len() >= 2
            && let Some(d) = self.configs.lookup(&keys)
            && let Some(v) = &d.value
        {
            return (v.clone(), Some(d));
        }
        (text(arg, src).to_owned(), None)
    }

    /// The loader rules on settings read from a flag, a constructor or a config field
    /// (`num_workers=self.hparams.num_workers` whose default is 0), and `pin_memory` on a
    /// loader in a file of its own in a project that trains on CUDA. Returns the loaders
    /// found to have no workers: their `torch-loader-no-persistent-workers` is withdrawn
    /// (`persistent_workers` needs workers).
    fn loader_defaults(&self, hits: &mut Vec<(usize, Hit)>) -> Vec<(usize, usize)> {
        let mut none = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let src = f.src;
            for &loader in &f.loaders {
                if ast::has_splat(loader) {
                    continue;
                }
                let mut hit = |id: &'static str, specific: String, fix: &str| {
                    hits.push((
                        fi,
                        Hit {
                            id,
                            byte: loader.start_byte(),
                            specific,
                            context: None,
                            fix: fix.to_owned(),
                            root: None,
                            info: None,
                        },
                    ));
                };
                if let Some(w) = sig::arg(loader, torch::LOADER, "num_workers", src)
                    && let (value, Some(d)) = self.setting(fi, w)
                    && matches!(value.as_str(), "0" | "None" | "False")
                {
                    let persistent = sig::arg(loader, torch::LOADER, "persistent_workers", src)
                        .is_some_and(|p| !ast::is_falsy_literal(p, src));
                    let refused = if persistent {
                        "; with `persistent_workers` set, PyTorch refuses it (\"persistent_workers \
                         option needs num_workers > 0\")"
                    } else {
                        ""
                    };
                    hit(
                        "torch-loader-no-workers",
                        format!(
                            "`DataLoader` with `num_workers={}`, which is {value} unless the run \
                             sets it (the default at {}){refused}",
                            text(w, src),
                            d.at
                        ),
                        torch::NO_WORKERS_FIX,
                    );
                    none.push((fi, loader.start_byte()));
                }
                if !self.uses_cuda {
                    continue;
                }
                // A file that trains on CUDA has had its missing or literal `pin_memory`
                // judged by its own rule.
                let specific = match sig::arg(loader, torch::LOADER, "pin_memory", src) {
                    None if !f.uses_cuda => Some(
                        "`DataLoader` without `pin_memory=True` in a project that trains on CUDA"
                            .to_owned(),
                    ),
                    Some(p) if ast::is_falsy_literal(p, src) => (!f.uses_cuda).then(|| {
                        format!(
                            "`DataLoader` with `pin_memory={}` in a project that trains on CUDA",
                            text(p, src)
                        )
                    }),
                    Some(p) => match self.setting(fi, p) {
                        (value, Some(d)) if matches!(value.as_str(), "False" | "None" | "0") => {
                            Some(format!(
                                "`DataLoader` with `pin_memory={}`, which is {value} unless the \
                                 run sets it (the default at {}), in a project that trains on \
                                 CUDA",
                                text(p, src),
                                d.at
                            ))
                        }
                        _ => None,
                    },
                    None => None,
                };
                if let Some(specific) = specific {
                    hit(
                        "torch-loader-no-pin-memory",
                        specific,
                        torch::PIN_MEMORY_FIX,
                    );
                }
            }
        }
        none
    }

    /// The call first assigned to the name `ds` in the scope of `loader` (its function, or
    /// the file): `train_set = Speech(...)` for `DataLoader(train_set, ...)`.
    fn assigned_call(&self, fi: usize, loader: Node<'t>, ds: Node<'t>) -> Option<Node<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        let scope = ast::enclosing(f.root, loader, "function_definition").unwrap_or(f.root);
        assigned_calls(scope, text(ds, src), src).into_iter().next()
    }

    /// The project class whose object `value` (a name, or `self.name`) holds at `at`: the
    /// name assigned a constructor call in `at`'s function or the file (`model =
    /// GradTTS(...).cuda()`), or the attribute assigned one in a method of `at`'s class.
    fn class_of_value(
        &self,
        fi: usize,
        at: Node<'t>,
        value: Node<'t>,
    ) -> Option<(usize, Node<'t>)> {
        self.class_of_value_within(fi, at, value, 0)
    }

    /// [`Self::class_of_value`], following factories `depth` deep: `model, opt =
    /// get_model(...)` holds what `get_model` returns there (FastSpeech2's `get_model`
    /// returns `model, scheduled_optim` with `model = FastSpeech2(...).to(device)`).
    fn class_of_value_within(
        &self,
        fi: usize,
        at: Node<'t>,
        value: Node<'t>,
        depth: u64,
    ) -> Option<(usize, Node<'t>)> {
        let f = &self.files[fi];
        let src = f.src;
        let made = |mut call: Node<'t>| {
            // `Model(...).to(device)`, `.cuda()`, `.train()`: the same object.
            while matches!(
                ast::method(call, src),
                Some("to" | "cuda" | "cpu" | "train" | "eval" | "float" | "half" | "double")
            ) {
                call = ast::receiver(call).filter(|r| r.kind() == "call")?;
            }
            self.class_of_call(fi, call)
        };
        match value.kind() {
            "identifier" => {
                let scope = ast::enclosing(f.root, at, "function_definition").unwrap_or(f.root);
                let Some((call, position)) = assigned_from_call(scope, text(value, src), src)
                else {
                    return (depth < 2)
                        .then(|| self.class_of_parameter(fi, scope, text(value, src), depth + 1))
                        .flatten();
                };
                if position.is_none()
                    && let Some(class) = made(call)
                {
                    return Some(class);
                }
                if depth < 2
                    && let Some(class) = self
                        .factories(fi, call)
                        .into_iter()
                        .find_map(|factory| self.returned_class(factory, position, depth + 1))
                {
                    return Some(class);
                }
                // A later `name = Model(...)` after an unpacking that says nothing.
                position.and_then(|_| made(self.assigned_call(fi, at, value)?))
            }
            "attribute" => {
                let object = value.child_by_field_name("object")?;
                if text(object, src) != "self" {
                    return None;
                }
                let class = ast::enclosing(f.root, at, "class_definition")?;
                let calls = assigned_calls(class, text(value, src), src);
                if !calls.is_empty() {
                    return calls.into_iter().find_map(made);
                }
                // Set from a parameter of `__init__` only: what its constructions give.
                (depth < 2)
                    .then(|| self.class_given_to_init(fi, class, value, depth + 1))
                    .flatten()
            }
            _ => None,
        }
    }

    /// `self.matcher = matcher` in `__init__(self, num_classes, matcher, ...)`: the class
    /// the constructions of `class` give that parameter (`SetCriterion(n, matcher=matcher)`
    /// with `matcher = build_matcher(args)`, DETR; a model passed to a trainer's
    /// constructor): the first construction whose argument names one.
    fn class_given_to_init(
        &self,
        fi: usize,
        class: Node<'t>,
        attribute: Node<'t>,
        depth: u64,
    ) -> Option<(usize, Node<'t>)> {
        let src = self.src(fi);
        let target = text(attribute, src);
        let init = ast::methods(class, "__init__", src).into_iter().next()?;
        let params = ast::param_names(init, src);
        let mut param = None;
        ast::walk(Self::body(init), &mut |n| {
            if param.is_none()
                && n.kind() == "assignment"
                && n.child_by_field_name("left")
                    .is_some_and(|l| text(l, src) == target)
                && let Some(right) = n.child_by_field_name("right")
                && right.kind() == "identifier"
                && params.contains(&text(right, src))
            {
                param = Some(text(right, src));
            }
            !ast::is_scope(n) || n.id() == Self::body(init).id()
        });
        let param = param?;
        // The receiver is not an argument of the construction.
        let index = params.iter().position(|&p| p == param)?.checked_sub(1)?;
        let name = text(class.child_by_field_name("name")?, src);
        let sites = self.calls_by_name().get(name)?;
        sites.iter().find_map(|&(cfi, call)| {
            if self.class_of_call(cfi, call).map(|(f, c)| (f, c.id())) != Some((fi, class.id())) {
                return None;
            }
            let csrc = self.src(cfi);
            let arg = ast::kwarg(call, param, csrc).or_else(|| ast::positional(call, index))?;
            match arg.kind() {
                "identifier" => self.class_of_value_within(cfi, call, arg, depth),
                "call" => self.class_of_call(cfi, arg),
                _ => None,
            }
        })
    }

    /// The project class the callers of function `def` pass as its parameter `name`, or as
    /// element `i` of the parameter it is unpacked from (`net_g, net_d = nets` with
    /// `train_and_evaluate(rank, epoch, hps, [net_g, net_d], ...)`, VITS): the first caller
    /// whose argument names one. Plain functions only (a method's callers shift the
    /// arguments by the receiver).
    fn class_of_parameter(
        &self,
        fi: usize,
        def: Node<'t>,
        name: &str,
        depth: u64,
    ) -> Option<(usize, Node<'t>)> {
        let f = &self.files[fi];
        let src = f.src;
        if def.kind() != "function_definition"
            || ast::enclosing(f.root, def, "class_definition").is_some()
        {
            return None;
        }
        let params = ast::param_names(def, src);
        let (param, element) = if params.contains(&name) {
            (name, None)
        } else {
            let (from, i) = unpacked_from(Self::body(def), name, src)?;
            (params.iter().copied().find(|&p| p == from)?, Some(i))
        };
        let index = params.iter().position(|&p| p == param)?;
        let fname = text(def.child_by_field_name("name")?, src);
        let sites = self.calls_by_name().get(fname)?;
        sites.iter().find_map(|&(cfi, call)| {
            let csrc = self.src(cfi);
            if !self
                .factories(cfi, call)
                .iter()
                .any(|t| t.file == fi && t.def.id() == def.id())
            {
                return None;
            }
            let arg = ast::kwarg(call, param, csrc).or_else(|| ast::positional(call, index))?;
            let arg = match element {
                Some(i) if matches!(arg.kind(), "list" | "tuple") => arg.named_child(i)?,
                Some(_) => return None,
                None => arg,
            };
            (arg.kind() == "identifier")
                .then(|| self.class_of_value_within(cfi, call, arg, depth))
                .flatten()
        })
    }

    /// [`Project::calls_by_name`], built once.
    fn calls_by_name(&self) -> &HashMap<String, Vec<(usize, Node<'t>)>> {
        self.calls_by_name.get_or_init(|| {
            let mut out: HashMap<String, Vec<(usize, Node<'t>)>> = HashMap::new();
            for (fi, f) in self.files.iter().enumerate() {
                ast::walk(f.root, &mut |n| {
                    if n.kind() == "call"
                        && let Some(d) = n
                            .child_by_field_name("function")
                            .and_then(|fun| ast::dotted(fun, f.src))
                    {
                        let last = d.rsplit('.').next().unwrap_or(&d).to_owned();
                        out.entry(last).or_default().push((fi, n));
                    }
                    true
                });
            }
            out
        })
    }

    /// The code that runs once, before training, rather than in it: preprocessing that
    /// writes its data out (a script that writes a `TFRecordWriter` and does not train,
    /// rnnt-speech-recognition's `preprocess_librispeech.py`; a function that does, a
    /// `preprocess()` beside `train()`), tests and examples, and then every module-level
    /// function and class whose every use (a call, or its name passed on: `ds.map(log_mel)`)
    /// lies in such code, to a fixed point. Its per-item and per-step work runs once per
    /// item of the preprocessing, not every epoch. `loops` are the training loops found.
    ///
    /// Branches the flags' defaults do not take seed the walk too, unless that would leave
    /// the project no training loop on the path: then the run must set the flags to train
    /// at all (a `--mode` whose default is `test`), and their branches are the training.
    fn one_off(&self, loops: &[(usize, (usize, usize))]) -> Vec<(usize, (usize, usize, String))> {
        let ranges = self.one_off_with(loops, true);
        let all_off = !loops.is_empty()
            && loops.iter().all(|&(li, (ls, _))| {
                ranges
                    .iter()
                    .any(|&(ri, (s, e, _))| ri == li && s <= ls && ls < e)
            });
        if all_off {
            self.one_off_with(loops, false)
        } else {
            ranges
        }
    }

    /// The code that runs once by what it is (see [`Project::one_off`]): tests, evaluation
    /// scripts beside a training, preprocessing scripts and functions that write their data
    /// once and do not train. `loops` are the training loops found.
    fn one_off_seeds(
        &self,
        loops: &[(usize, (usize, usize))],
    ) -> Vec<(usize, (usize, usize, String))> {
        let trains = |fi: usize, s: usize, e: usize| {
            loops
                .iter()
                .any(|&(li, (ls, _))| li == fi && s <= ls && ls < e)
                || {
                    // A `.fit(...)`, an optimizer step, or a call that reaches one
                    // (`train()` calling `train_epoch()`, whose loop steps).
                    let f = &self.files[fi];
                    let mut fit = false;
                    let mut walk = Walk::new();
                    if let Some(n) = f.root.descendant_for_byte_range(s, e) {
                        ast::walk(n, &mut |c| {
                            fit |= c.kind() == "call"
                                && c.start_byte() >= s
                                && (ast::method(c, f.src) == Some("fit")
                                    || loops::step_call(c, f.src, &f.names)
                                    || self.reaches_step(fi, c, true, 0, &mut walk));
                            !fit
                        });
                    }
                    fit
                }
        };
        let mut ranges: Vec<(usize, (usize, usize, String))> = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let rel = f.rel.display();
            // Not examples: a library's example script is often how it trains (NeMo's
            // `examples/asr/*.py` build the models of the package).
            if let Some(why) =
                test_or_example(f.rel).filter(|why| !why.starts_with("in an example"))
            {
                ranges.push((fi, (0, f.src.len(), why)));
                continue;
            }
            let trains_elsewhere = loops.iter().any(|&(li, _)| {
                li != fi
                    && evaluation_script(self.files[li].rel).is_none()
                    && test_or_example(self.files[li].rel).is_none()
            });
            if let Some(why) = evaluation_script(f.rel).filter(|_| trains_elsewhere) {
                ranges.push((fi, (0, f.src.len(), why)));
                continue;
            }
            let writers = data_writers(f);
            if writers.is_empty() {
                continue;
            }
            if runs_as_script(f) && !trains(fi, 0, f.src.len()) {
                let (name, line, _) = &writers[0];
                ranges.push((
                    fi,
                    (
                        0,
                        f.src.len(),
                        format!(
                            "in `{rel}`, a preprocessing script: it writes its data once \
                             (`{name}` at line {line}) and does not train"
                        ),
                    ),
                ));
                continue;
            }
            for defs in f.functions.values() {
                for &def in defs {
                    let (s, e) = (def.start_byte(), def.end_byte());
                    let Some((name, line)) = writers
                        .iter()
                        .find(|(_, _, at)| s <= *at && *at < e)
                        .map(|(n, l, _)| (n, l))
                    else {
                        continue;
                    };
                    if trains(fi, s, e) || ast::enclosing(f.root, def, "class_definition").is_some()
                    {
                        continue;
                    }
                    let function = def
                        .child_by_field_name("name")
                        .map_or("?", |n| text(n, f.src));
                    ranges.push((
                        fi,
                        (
                            s,
                            e,
                            format!(
                                "in `{function}()`, which writes its data once (`{name}` at \
                                 {rel}:{line}) and does not train"
                            ),
                        ),
                    ));
                }
            }
        }
        ranges
    }

    /// The project's module-level functions and classes and the classes' methods called by
    /// name (`t.train_joint()`: not those a framework calls, which have no call of their own,
    /// nor dunders), each `(file, definition, name)`; and the node ids of the methods.
    fn definitions(&self) -> (Vec<(usize, Node<'t>, &'t str)>, HashSet<usize>) {
        let mut candidates: Vec<(usize, Node<'t>, &'t str)> = Vec::new();
        let mut methods: HashSet<usize> = HashSet::new();
        for (fi, f) in self.files.iter().enumerate() {
            let mut c = f.root.walk();
            for n in f.root.named_children(&mut c) {
                let def = if n.kind() == "decorated_definition" {
                    n.child_by_field_name("definition").unwrap_or(n)
                } else {
                    n
                };
                if matches!(def.kind(), "function_definition" | "class_definition")
                    && let Some(name) = def.child_by_field_name("name")
                {
                    candidates.push((fi, def, text(name, f.src)));
                }
                // A class's methods called by name (`t.train_joint()`): not those a
                // framework calls (they have no call of their own), nor dunders.
                if def.kind() == "class_definition"
                    && let Some(body) = def.child_by_field_name("body")
                {
                    let mut w = body.walk();
                    for m in body.named_children(&mut w) {
                        let m = if m.kind() == "decorated_definition" {
                            m.child_by_field_name("definition").unwrap_or(m)
                        } else {
                            m
                        };
                        if m.kind() == "function_definition"
                            && let Some(name) = m.child_by_field_name("name")
                            && !text(name, f.src).starts_with("__")
                        {
                            methods.insert(m.id());
                            candidates.push((fi, m, text(name, f.src)));
                        }
                    }
                }
            }
        }
        (candidates, methods)
    }

    /// [`Project::one_off`], with or without the flags' branches as seeds.
    fn one_off_with(
        &self,
        loops: &[(usize, (usize, usize))],
        flags: bool,
    ) -> Vec<(usize, (usize, usize, String))> {
        let mut ranges = self.one_off_seeds(loops);
        // The branches the flags' defaults do not take (`loops::flag_off_branches`): what
        // only they call does not run with the defaults either. They seed the walk and are
        // dropped from the result: their own findings are judged where they are (the
        // per-step rules skip such bodies already).
        let seeds = ranges.len();
        if flags && !self.opt_in.is_empty() {
            for (fi, f) in self.files.iter().enumerate() {
                ast::walk(f.root, &mut |n| {
                    for (s, e, cond) in loops::flag_off_branches(n, f.src, &self.opt_in) {
                        ranges.push((
                            fi,
                            (
                                s,
                                e,
                                format!(
                                    "on a branch the flags' defaults do not take (`{cond}`, {}:{})",
                                    f.rel.display(),
                                    n.start_position().row + 1
                                ),
                            ),
                        ));
                    }
                    true
                });
            }
        }
        let opt_in_seeds = seeds..ranges.len();
        if ranges.is_empty() {
            return ranges;
        }
        // The module-level functions and classes, the classes' methods, and every use of
        // their names.
        let (candidates, methods) = self.definitions();
        let wanted: HashSet<&str> = candidates.iter().map(|&(_, _, n)| n).collect();
        let mut uses: HashMap<&str, Vec<(usize, Node<'t>)>> = HashMap::new();
        for (fi, f) in self.files.iter().enumerate() {
            ast::walk(f.root, &mut |n| {
                if matches!(n.kind(), "import_statement" | "import_from_statement") {
                    return false;
                }
                if n.kind() == "identifier"
                    && let Some(&w) = wanted.get(text(n, f.src))
                {
                    uses.entry(w).or_default().push((fi, n));
                }
                true
            });
        }
        // Each range's first reason: the seed's, not a chain of "used only by".
        let mut roots: Vec<String> = ranges.iter().map(|(_, (_, _, why))| why.clone()).collect();
        let inside = |ranges: &[(usize, (usize, usize, String))], fi: usize, byte: usize| {
            ranges
                .iter()
                .position(|(ri, (s, e, _))| *ri == fi && *s <= byte && byte < *e)
        };
        let mut done: HashSet<usize> = HashSet::new();
        for _ in 0..MAX_CALL_DEPTH {
            let mut grew = false;
            for (k, &(fi, def, name)) in candidates.iter().enumerate() {
                if done.contains(&k) || inside(&ranges, fi, def.start_byte()).is_some() {
                    continue;
                }
                let (s, e) = (def.start_byte(), def.end_byte());
                let mut why = None;
                let mut used = false;
                let mut all = true;
                for &(ui, id) in uses.get(name).into_iter().flatten() {
                    let at = id.start_byte();
                    // Its own name, and uses inside itself (recursion).
                    if ui == fi && s <= at && at < e {
                        continue;
                    }
                    // A method is named through an object (`t.train_joint`, `self.step`):
                    // any use of its name counts, but another definition's name.
                    let counts = if methods.contains(&def.id()) {
                        !id.parent().is_some_and(|p| {
                            matches!(p.kind(), "function_definition" | "class_definition")
                                && p.child_by_field_name("name")
                                    .is_some_and(|n| n.id() == id.id())
                        })
                    } else {
                        self.names_def(ui, id, fi)
                    };
                    if !counts {
                        continue;
                    }
                    used = true;
                    match inside(&ranges, ui, at) {
                        Some(r) => {
                            why.get_or_insert(r);
                        }
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                if used
                    && all
                    && let Some(w) = why.map(|r| roots[r].clone())
                {
                    ranges.push((
                        fi,
                        (
                            s,
                            e,
                            format!("`{name}` is used only off the default run: {w}"),
                        ),
                    ));
                    roots.push(w);
                    done.insert(k);
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        ranges.drain(opt_in_seeds);
        ranges
    }

    /// True when the identifier `id` of file `ui` may name the module-level function or
    /// class of that name defined in file `fi`: not another definition's name, not an
    /// attribute of an object (`model.train` is a method), and through an import only
    /// when the import is of `fi`'s module. What cannot be told counts as naming it.
    fn names_def(&self, ui: usize, id: Node<'t>, fi: usize) -> bool {
        let f = &self.files[ui];
        let src = f.src;
        let name = text(id, src);
        let parent = id.parent();
        if parent.is_some_and(|p| {
            matches!(p.kind(), "function_definition" | "class_definition")
                && p.child_by_field_name("name")
                    .is_some_and(|n| n.id() == id.id())
        }) {
            return false;
        }
        // Through an import: `pre.load_dataset` with `from utils import preprocessing as
        // pre`, or `load_dataset` imported from a module.
        let imported = |dotted: &str| -> bool {
            let resolved = f.names.resolve(dotted);
            match resolved.rsplit_once('.') {
                Some((module, last)) => self
                    .module(ui, module)
                    .is_none_or(|m| m == fi || self.reexports(m, last, fi)),
                None => true,
            }
        };
        if let Some(p) = parent.filter(|p| p.kind() == "attribute") {
            if p.child_by_field_name("attribute")
                .is_none_or(|a| a.id() != id.id())
            {
                return true;
            }
            return p
                .child_by_field_name("object")
                .filter(|o| o.kind() == "identifier" && f.names.imports(text(*o, src)))
                .is_some_and(|o| imported(&format!("{}.{name}", text(o, src))));
        }
        if f.names.imports(name) {
            return imported(name);
        }
        // A bare name in another file that defines its own of that name is its own.
        ui == fi || !f.functions.contains_key(name) && !f.classes.contains_key(name)
    }

    /// True when module `m` (a package's `__init__.py`) imports `name` from file `fi`
    /// (`from .ppo import PPO`): `algo.PPO` names `fi`'s class.
    fn reexports(&self, m: usize, name: &str, fi: usize) -> bool {
        let names = &self.files[m].names;
        names.imports(name)
            && names
                .resolve(name)
                .rsplit_once('.')
                .and_then(|(module, _)| self.module(m, module))
                == Some(fi)
    }

    /// Why the objects of a class are built only on an opt-in path: every call of its name
    /// in the project is under a flag that is off unless given (`RawAudio(p) if
    /// args.raw_audio else Cached(p)`, or the body of `if args.raw_audio:`), or in a test,
    /// an example or an inference script (torch.hub's `hubconf.py`). What its methods do
    /// per item or per step does not run with the defaults.
    fn gated_class(&self, fi: usize, class: Node<'t>) -> Option<String> {
        let (name, gate, elsewhere) = self.class_gates(fi, class)?;
        gate.or(elsewhere)
            .map(|why| format!("`{name}` is built only {why}"))
    }

    /// [`Self::gated_class`]'s two reasons: the flag the training code builds the class
    /// under (`None` where it builds none), and the test, example or inference script that
    /// builds it otherwise; `None` where some call builds it on the default run.
    fn class_gates(
        &self,
        fi: usize,
        class: Node<'t>,
    ) -> Option<(&'t str, Option<String>, Option<String>)> {
        let name = class
            .child_by_field_name("name")
            .map(|n| text(n, self.src(fi)))?;
        let sites = self.calls_by_name().get(name)?;
        let (mut gate, mut elsewhere) = (None, None);
        for &(si, call) in sites {
            let f = &self.files[si];
            if let Some(why) = inference_script(f).or_else(|| test_or_example(f.rel)) {
                elsewhere.get_or_insert(why);
                continue;
            }
            let on = |cond: Node<'t>| self.on_by_default(si, cond);
            gate = Some(opt_in_site(call, f.src, &self.opt_in, &on)?);
        }
        Some((name, gate, elsewhere))
    }

    /// Where a condition is a setting that is true unless the run changes it: `if
    /// hp.data.data_preprocessed:` with `data_preprocessed: true` in the config, a flag
    /// whose default is `True`. Its `else` is not the default run.
    fn on_by_default(&self, fi: usize, cond: Node<'t>) -> Option<String> {
        if !matches!(cond.kind(), "attribute" | "subscript") {
            return None;
        }
        match self.setting(fi, cond) {
            (v, Some(d)) if v == "True" => Some(d.at.clone()),
            _ => None,
        }
    }

    /// The project functions a local name is given in the function that calls it:
    /// `spline_fn = rational_quadratic_spline` on one branch and `spline_fn =
    /// unconstrained_rational_quadratic_spline` on the other (VITS' flows).
    fn aliased_functions(&self, fi: usize, call: Node<'t>, name: &str) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        let Some(scope) = ast::enclosing(f.root, call, "function_definition") else {
            return Vec::new();
        };
        let mut out: Vec<Func<'t>> = Vec::new();
        loops::simple_assignments(scope, src, |n, value| {
            if n != name {
                return;
            }
            // `cleaner = getattr(cleaners, name)` (Tacotron's `text/cleaners.py`, chosen by
            // the config's `cleaners: [english_cleaners2]`): any function of that module of
            // the project, at most `MAX_GETATTR_FUNCTIONS` of them.
            if value.kind() == "call"
                && value
                    .child_by_field_name("function")
                    .is_some_and(|g| text(g, src) == "getattr")
                && let Some(module) = ast::positional(value, 0).filter(|m| m.kind() == "identifier")
                && ast::positional(value, 1).is_some_and(|a| a.kind() != "string")
                && f.names.imports(text(module, src))
                && let Some(mf) = self.module(fi, &f.names.resolve(text(module, src)))
            {
                let defs = &self.files[mf].functions;
                if defs.values().map(Vec::len).sum::<usize>() <= MAX_GETATTR_FUNCTIONS {
                    for ds in defs.values() {
                        for &def in ds {
                            // Module-level functions only, not methods.
                            if def.parent().is_some_and(|p| p.kind() == "module")
                                || def
                                    .parent()
                                    .is_some_and(|p| p.kind() == "decorated_definition")
                            {
                                out.push(Func { file: mf, def });
                            }
                        }
                    }
                }
                return;
            }
            if !matches!(value.kind(), "identifier" | "attribute") {
                return;
            }
            let Some(target) = ast::dotted(value, src) else {
                return;
            };
            for func in self.named_functions(fi, &target) {
                if !out
                    .iter()
                    .any(|o| o.file == func.file && o.def.id() == func.def.id())
                {
                    out.push(func);
                }
            }
        });
        out
    }

    /// Whether the project writes TensorFlow summaries at every call: some file makes a
    /// writer (`tf.summary.create_file_writer`) and none thins them with `record_if`.
    fn tf_summaries_every_step(&self) -> bool {
        *self.tf_summaries.get_or_init(|| {
            let any = |needle: &str| self.files.iter().any(|f| f.src.contains(needle));
            any("create_file_writer") && !any("record_if")
        })
    }

    /// The project classes of the modules a loop variable takes from a container of its
    /// class: `name` in `for name in self.blocks:` (or over `reversed(self.blocks)`,
    /// `enumerate(...)`, a local `flows = self.flows`) where `self.blocks` is an
    /// `nn.ModuleList` or `nn.Sequential` of constructor calls, or filled with
    /// `.append(Block(...))` (VITS' flows).
    fn container_classes(&self, fi: usize, call: Node<'t>, name: &str) -> Vec<(usize, Node<'t>)> {
        let f = &self.files[fi];
        let src = f.src;
        let Some(scope) = ast::enclosing(f.root, call, "function_definition") else {
            return Vec::new();
        };
        let Some(class) = ast::enclosing(f.root, scope, "class_definition") else {
            return Vec::new();
        };
        // The iterable of the loop that binds `name`, as the attribute it reads.
        let mut attribute = None;
        ast::walk(scope, &mut |n| {
            if attribute.is_some() || (n.id() != scope.id() && ast::is_scope(n)) {
                return false;
            }
            if n.kind() == "for_statement"
                && let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                )
            {
                let binds = match left.kind() {
                    "identifier" => text(left, src) == name,
                    "pattern_list" | "tuple_pattern" => {
                        let mut c = left.walk();
                        left.named_children(&mut c).any(|t| text(t, src) == name)
                    }
                    _ => false,
                };
                if binds {
                    attribute = container_attribute(right, scope, src);
                }
            }
            true
        });
        let Some(attribute) = attribute else {
            return Vec::new();
        };
        let mut out: Vec<(usize, Node<'t>)> = Vec::new();
        let mut add = |call: Node<'t>| {
            if let Some(found) = self.class_of_call(fi, call)
                && !out
                    .iter()
                    .any(|(cf, c)| *cf == found.0 && c.id() == found.1.id())
            {
                out.push(found);
            }
        };
        ast::walk(class, &mut |n| {
            // `self.blocks = nn.ModuleList([Block() for _ in range(3)])`, `nn.Sequential(A(),
            // B())`: the constructors inside.
            if n.kind() == "assignment"
                && n.child_by_field_name("left")
                    .is_some_and(|l| text(l, src) == attribute)
                && let Some(right) = n.child_by_field_name("right")
            {
                ast::walk(right, &mut |m| {
                    if m.kind() == "call" {
                        add(m);
                    }
                    true
                });
            }
            // `self.flows.append(modules.ConvFlow(...))`
            if n.kind() == "call"
                && ast::method(n, src) == Some("append")
                && ast::receiver(n).is_some_and(|r| text(r, src) == attribute)
                && let Some(item) = ast::positional(n, 0)
                && item.kind() == "call"
            {
                add(item);
            }
            true
        });
        out
    }

    /// The project functions a call names directly: an imported one, one of the file, or
    /// a method of `self`'s class; never an object called (which would ask
    /// [`Self::class_of_value`] again: `model = model(x)` would not end).
    fn factories(&self, fi: usize, call: Node<'t>) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        let src = f.src;
        let Some(raw) = call
            .child_by_field_name("function")
            .and_then(|n| ast::dotted(n, src))
        else {
            return Vec::new();
        };
        let parts: Vec<&str> = raw.split('.').collect();
        match parts.as_slice() {
            ["self", name] if !f.names.imports("self") => {
                ast::enclosing(f.root, call, "class_definition")
                    .map(|class| self.method_of(fi, class, name, 0))
                    .unwrap_or_default()
            }
            _ => self.named_functions(fi, &raw),
        }
    }

    /// The project's functions a dotted name names in file `fi`: through an import
    /// (`pkg.models.build`, or `build` imported from it), else a function of the file by
    /// that name.
    fn named_functions(&self, fi: usize, dotted: &str) -> Vec<Func<'t>> {
        let f = &self.files[fi];
        if f.names.imports(dotted.split('.').next().unwrap_or(dotted)) {
            return self.qualified(fi, &f.names.resolve(dotted)).0;
        }
        f.functions
            .get(dotted)
            .map(|d| d.iter().map(|&def| Func { file: fi, def }).collect())
            .unwrap_or_default()
    }

    /// The project class of what `factory` returns (element `position` of a returned
    /// tuple when given): the first `return` that names one.
    fn returned_class(
        &self,
        factory: Func<'t>,
        position: Option<usize>,
        depth: u64,
    ) -> Option<(usize, Node<'t>)> {
        let fsrc = self.src(factory.file);
        let mut returned = Vec::new();
        // `def build_model(args): return build(args)` (DETR's `models/__init__.py`): what the
        // factory it calls returns, at the same place.
        let mut forwarded = Vec::new();
        ast::walk(Self::body(factory.def), &mut |n| {
            if n.kind() == "return_statement"
                && let Some(v) = n.named_child(0)
            {
                let item = match (position, v.kind()) {
                    (None, _) => Some(v),
                    (Some(i), "expression_list" | "tuple") => v.named_child(i),
                    (Some(_), "call") => {
                        forwarded.push(v);
                        None
                    }
                    _ => None,
                };
                returned.extend(item.map(|item| (n, item)));
            }
            !ast::is_scope(n) || n.id() == factory.def.id()
        });
        if depth < 3
            && let Some(class) = forwarded.into_iter().find_map(|call| {
                self.factories(factory.file, call)
                    .into_iter()
                    .find_map(|inner| self.returned_class(inner, position, depth + 1))
            })
        {
            return Some(class);
        }
        returned
            .into_iter()
            .find_map(|(ret, item)| match item.kind() {
                "identifier" => self.class_of_value_within(factory.file, ret, item, depth),
                "call" => {
                    let mut call = item;
                    while matches!(
                        ast::method(call, fsrc),
                        Some("to" | "cuda" | "train" | "eval")
                    ) {
                        call = ast::receiver(call).filter(|r| r.kind() == "call")?;
                    }
                    self.class_of_call(factory.file, call)
                }
                _ => None,
            })
    }

    /// The torchvision image-folder dataset (`ImageFolder`, ...) a loader's `dataset`
    /// argument is: a call of one, or a name assigned one in the loader's scope.
    fn image_folder(&self, fi: usize, loader: Node<'t>, ds: Node<'t>) -> Option<String> {
        let f = &self.files[fi];
        let src = f.src;
        let called = |call: Node<'t>| {
            f.names
                .callee(call, src)
                .filter(|name| decode::is_image_folder(name))
        };
        match ds.kind() {
            "call" => called(ds),
            "identifier" => self.assigned_call(fi, loader, ds).and_then(called),
            _ => None,
        }
    }

    /// Loaders whose `collate_fn` returns NumPy arrays: `(file, loader byte, the function
    /// named with its place, whether the loader asks for `pin_memory=True`)`. The function
    /// (a function, or a method of the dataset's class as `dataset.collate_fn`), with the
    /// methods it calls on `self`, calls NumPy and nothing of `torch` (FastSpeech2's
    /// `collate_fn` and `reprocess`).
    fn numpy_collates(&self) -> Vec<(usize, usize, String, bool)> {
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let src = f.src;
            for &loader in &f.loaders {
                let Some(arg) = sig::arg(loader, torch::LOADER, "collate_fn", src) else {
                    continue;
                };
                let mut defs = self.functions_of(fi, arg);
                // `collate_fn=dataset.collate_fn`: a method of the loader's dataset.
                if defs.is_empty()
                    && arg.kind() == "attribute"
                    && let (Some(obj), Some(attr)) = (
                        arg.child_by_field_name("object"),
                        arg.child_by_field_name("attribute"),
                    )
                    && let Some(ds) = sig::arg(loader, torch::LOADER, "dataset", src)
                    && text(ds, src) == text(obj, src)
                    && let Some((cf, class)) = self.dataset_class(fi, loader, ds)
                {
                    defs = self.method_of(cf, class, text(attr, src), 0);
                }
                let [def] = defs.as_slice() else {
                    continue;
                };
                if self.builds_numpy(*def) {
                    let fsrc = self.src(def.file);
                    let name = def
                        .def
                        .child_by_field_name("name")
                        .map_or("lambda", |n| text(n, fsrc));
                    let pinned = sig::arg(loader, torch::LOADER, "pin_memory", src)
                        .is_some_and(ast::is_true);
                    out.push((
                        fi,
                        loader.start_byte(),
                        format!(
                            "`{name}` at {}:{}",
                            self.files[def.file].rel.display(),
                            def.def.start_position().row + 1
                        ),
                        pinned,
                    ));
                }
            }
        }
        out
    }

    /// Whether `def` and the methods it calls on `self` call NumPy (`np.`, `numpy.`) and
    /// name nothing of `torch`.
    fn builds_numpy(&self, def: Func<'t>) -> bool {
        let src = self.src(def.file);
        let mut bodies = vec![def.def];
        if let Some(class) = ast::enclosing(self.files[def.file].root, def.def, "class_definition")
        {
            ast::walk(def.def, &mut |n| {
                if n.kind() == "call"
                    && let Some(f) = n.child_by_field_name("function")
                    && let Some(m) = text(f, src).strip_prefix("self.")
                    && !m.contains('.')
                {
                    bodies.extend(ast::methods(class, m, src));
                }
                true
            });
        }
        let texts: Vec<&str> = bodies.iter().map(|b| text(*b, src)).collect();
        texts.iter().all(|t| !t.contains("torch"))
            && texts
                .iter()
                .any(|t| t.contains("np.") || t.contains("numpy."))
    }

    /// The project class of a `DataLoader`'s dataset: `DataLoader(Speech(...))`, or a name
    /// assigned from such a call in the same function or at module level.
    fn dataset_class(
        &self,
        fi: usize,
        loader: Node<'t>,
        ds: Node<'t>,
    ) -> Option<(usize, Node<'t>)> {
        match ds.kind() {
            "call" => self.class_of_call(fi, ds),
            "identifier" | "attribute" => self
                .assigned_call(fi, loader, ds)
                .and_then(|call| self.class_of_call(fi, call)),
            _ => None,
        }
    }

    /// Loaders whose items are already in memory, so that workers have nothing to do but
    /// pickle them: `(file, loader byte, why)`. The dataset is a `TensorDataset`, or a
    /// class of the project whose `__getitem__` only indexes what `__init__` read (no call
    /// but conversions and builtins), and the `collate_fn`, if any, only pads and stacks.
    fn in_memory_items(&self) -> Vec<(usize, usize, String)> {
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let src = f.src;
            for &loader in &f.loaders {
                let Some(ds) = sig::arg(loader, torch::LOADER, "dataset", src) else {
                    continue;
                };
                let collate_cheap = match sig::arg(loader, torch::LOADER, "collate_fn", src) {
                    None => true,
                    Some(arg) => {
                        let defs = self.functions_of(fi, arg);
                        !defs.is_empty() && defs.iter().all(|d| self.only_cheap_calls(*d))
                    }
                };
                if !collate_cheap {
                    continue;
                }
                let tensor_dataset = |call: Node<'t>| {
                    f.names
                        .callee(call, src)
                        .is_some_and(|c| c.ends_with("TensorDataset"))
                };
                let constructed = match ds.kind() {
                    "call" => Some(ds),
                    "identifier" | "attribute" => self.assigned_call(fi, loader, ds),
                    _ => None,
                };
                let why = if constructed.is_some_and(tensor_dataset) {
                    Some("its dataset is a `TensorDataset`, already in memory".to_owned())
                } else if let Some((cf, class)) =
                    constructed.and_then(|c| self.class_of_call(fi, c))
                {
                    let items = self.method_of(cf, class, "__getitem__", 0);
                    let name = class
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, self.src(cf)));
                    (!items.is_empty() && items.iter().all(|d| self.only_cheap_calls(*d))).then(
                        || {
                            format!(
                                "its items are read from memory (`{name}.__getitem__` only \
                                 indexes and converts), so workers would only add pickling"
                            )
                        },
                    )
                } else {
                    None
                };
                if let Some(why) = why {
                    out.push((fi, loader.start_byte(), why));
                }
            }
        }
        out
    }

    /// True when every call in `func` is a builtin, a tensor or array conversion, or
    /// padding and stacking: no file, no decoding, no project code (which may do either).
    fn only_cheap_calls(&self, func: Func<'t>) -> bool {
        const BUILTINS: &[&str] = &[
            "len",
            "int",
            "float",
            "str",
            "bool",
            "list",
            "tuple",
            "dict",
            "range",
            "min",
            "max",
            "zip",
            "enumerate",
            "isinstance",
            "sorted",
            "sum",
        ];
        const CONVERSIONS: &[&str] = &[
            "torch.tensor",
            "torch.as_tensor",
            "torch.from_numpy",
            "torch.LongTensor",
            "torch.FloatTensor",
            "torch.IntTensor",
            "torch.stack",
            "torch.cat",
            "torch.nn.utils.rnn.pad_sequence",
            "numpy.array",
            "numpy.asarray",
            "numpy.stack",
        ];
        const METHODS: &[&str] = &[
            "long",
            "float",
            "int",
            "copy",
            "clone",
            "view",
            "unsqueeze",
            "squeeze",
            "get",
            "size",
            "append",
            "keys",
            "values",
            "items",
        ];
        let f = &self.files[func.file];
        let src = f.src;
        ast::calls_in(Self::body(func.def)).into_iter().all(|call| {
            let name = f.names.callee(call, src).unwrap_or_default();
            BUILTINS.contains(&name.as_str())
                || CONVERSIONS.contains(&name.as_str())
                || ast::method(call, src).is_some_and(|m| METHODS.contains(&m))
        })
    }
}

/// True when an argument of `call` draws a random number, or names a variable of `body`
/// assigned (before the call, through other such variables) from one.
fn random_parameters(body: Node<'_>, call: Node<'_>, src: &str, names: &ast::Names) -> bool {
    let draws = |n: Node<'_>, random: &HashSet<String>| {
        let mut found = false;
        ast::walk(n, &mut |m| {
            found |= match m.kind() {
                // A draw, or an in-place one (`torch.FloatTensor(2).uniform_(0.8, 1.2)`).
                "call" => {
                    names.callee(m, src).is_some_and(|c| decode::is_random(&c))
                        || matches!(
                            ast::method(m, src),
                            Some(
                                "uniform_" | "normal_" | "random_" | "bernoulli_" | "exponential_"
                            )
                        )
                }
                "identifier" => random.contains(text(m, src)),
                _ => false,
            };
            !found
        });
        found
    };
    let mut random = HashSet::new();
    // The function's own draws, and those of the functions it is nested in (eben's `def
    // lp(x): return lowpass_biquad(x, cutoff_freq=cutoff * rand_factors[0])`).
    let mut scopes = vec![body];
    let mut up = body.parent();
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        let Some(n) = up else { break };
        if n.kind() == "function_definition"
            && n.id() != body.parent().map_or(usize::MAX, |p| p.id())
            && let Some(b) = n.child_by_field_name("body")
        {
            scopes.push(b);
        }
        up = n.parent();
    }
    for scope in scopes.into_iter().rev() {
        loops::simple_assignments(scope, src, |name, right| {
            if right.start_byte() < call.start_byte() && draws(right, &random) {
                random.insert(name.to_owned());
            }
        });
    }
    call.child_by_field_name("arguments")
        .is_some_and(|args| draws(args, &random))
}

/// The tensors a module holds on its device, as tensor names with device marks:
/// `self.register_buffer("ptr", ...)` and `self.w = nn.Parameter(...)` give `self.ptr` and
/// `self.w`.
fn module_tensors(class: Node<'_>, src: &str) -> Vec<String> {
    let mut out = Vec::new();
    ast::walk(class, &mut |n| {
        if n.kind() == "call"
            && ast::method(n, src) == Some("register_buffer")
            && let Some(name) = ast::positional(n, 0).filter(|a| a.kind() == "string")
        {
            let name = text(name, src).trim_matches(|c| c == '"' || c == '\'');
            out.push(format!("self.{name}"));
        }
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && left.kind() == "attribute"
            && text(left, src).starts_with("self.")
            && right.kind() == "call"
            && right
                .child_by_field_name("function")
                .is_some_and(|f| text(f, src).ends_with("Parameter"))
        {
            out.push(text(left, src).to_owned());
        }
        true
    });
    let marked: Vec<String> = out.iter().map(|n| loops::device_mark(n)).collect();
    out.extend(marked);
    out
}

/// True when an identifier under `node` is one of `names`.
/// Adds to `names` the plain names that `body` unpacks from one of them: assigned the name
/// itself, a part of it or a destructuring of it (`x, y = batch`; `(ids, mels) = data`;
/// `m = batch["mel"]`), until none is added. A value computed from it (`n = x.shape[0]`,
/// `n = x.size(0)`) is not a part of it: a table sized by the batch is still built per step.
fn derived_from<'s>(body: Node<'_>, names: &mut HashSet<&'s str>, src: &'s str) {
    fn part_of(v: Node<'_>, names: &HashSet<&str>, src: &str) -> bool {
        match v.kind() {
            "identifier" => names.contains(text(v, src)),
            "subscript" => v
                .child_by_field_name("value")
                .is_some_and(|b| part_of(b, names, src)),
            "parenthesized_expression" => v.named_child(0).is_some_and(|b| part_of(b, names, src)),
            _ => false,
        }
    }
    loop {
        let mut found: Vec<&'s str> = Vec::new();
        ast::walk(body, &mut |n| {
            if n.kind() == "assignment"
                && let (Some(left), Some(right)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                )
                && part_of(right, names, src)
            {
                ast::walk(left, &mut |t| {
                    if t.kind() == "identifier" {
                        found.push(text(t, src));
                    }
                    !matches!(t.kind(), "attribute" | "subscript")
                });
            }
            true
        });
        let before = names.len();
        names.extend(found);
        if names.len() == before {
            return;
        }
    }
}

/// True when `node` reads one of `names` as data: not only for its shape, size, type or
/// device (`torch.tensor(pred.shape)`, YOLOv3's gain, builds no copy of the data).
fn mentions_data(node: Node<'_>, names: &HashSet<&str>, src: &str) -> bool {
    let mut found = false;
    ast::walk(node, &mut |n| {
        if n.kind() == "identifier" && names.contains(text(n, src)) {
            // `p[i].shape`: through an index first.
            let mut held = n;
            while let Some(p) = held.parent().filter(|p| {
                p.kind() == "subscript"
                    && p.child_by_field_name("value")
                        .is_some_and(|v| v.id() == held.id())
            }) {
                held = p;
            }
            let metadata = held.parent().is_some_and(|p| {
                p.kind() == "attribute"
                    && p.child_by_field_name("object")
                        .is_some_and(|o| o.id() == held.id())
                    && p.child_by_field_name("attribute").is_some_and(|a| {
                        matches!(text(a, src), "shape" | "size" | "dtype" | "device" | "ndim")
                    })
            });
            found |= !metadata;
        }
        !found
    });
    found
}

/// True when `def` is decorated with a cache (`functools.lru_cache`, `functools.cache`):
/// its body runs once per argument, not every call.
fn memoised(def: Node<'_>, src: &str) -> bool {
    def.parent()
        .filter(|p| p.kind() == "decorated_definition")
        .is_some_and(|p| {
            let mut c = p.walk();
            p.named_children(&mut c)
                .any(|d| d.kind() == "decorator" && text(d, src).contains("cache"))
        })
}

/// The calls of a file that write a dataset out, with their line and byte: a
/// `TFRecordWriter` made, `tf.data.experimental.save` / `Dataset.save`, or an array or
/// clip saved (`np.save`, `torch.save`, `soundfile.write`, ...) inside a `for` loop over
/// items: a dataset or loader (by its name), or an object of a dataset class of the file.
fn data_writers(f: &File<'_>) -> Vec<(String, usize, usize)> {
    const SAVES: &[&str] = &[
        "np.save",
        "numpy.save",
        "np.savez",
        "numpy.savez",
        "np.savez_compressed",
        "numpy.savez_compressed",
        "torch.save",
        "soundfile.write",
        "sf.write",
        "scipy.io.wavfile.write",
        "torchaudio.save",
    ];
    let mut out = Vec::new();
    let mut data_loops: Vec<(usize, usize)> = Vec::new();
    ast::walk(f.root, &mut |n| {
        // A loop over items (a dataset, a loader, a dataset class's object), not over
        // epochs (`range(...)`, where a training saves its checkpoints).
        if n.kind() == "for_statement"
            && (iterates_data(n, f.src)
                || n.child_by_field_name("right").is_some_and(|r| {
                    r.kind() == "call"
                        && r.child_by_field_name("function").is_some_and(|c| {
                            let name = text(c, f.src);
                            let last = name.rsplit('.').next().unwrap_or(name);
                            f.classes.get(last).is_some_and(|defs| {
                                defs.iter().any(|&d| {
                                    !ast::methods(d, "__getitem__", f.src).is_empty()
                                        || !ast::methods(d, "__iter__", f.src).is_empty()
                                })
                            })
                        })
                }))
        {
            data_loops.push((n.start_byte(), n.end_byte()));
        }
        if n.kind() == "call"
            && let Some(callee) = f.names.callee(n, f.src)
        {
            let writer = callee.ends_with("TFRecordWriter")
                || matches!(
                    callee.as_str(),
                    "tensorflow.data.experimental.save" | "tensorflow.data.Dataset.save"
                )
                || (SAVES.contains(&callee.as_str())
                    && data_loops
                        .iter()
                        .any(|&(s, e)| s <= n.start_byte() && n.start_byte() < e));
            if writer {
                out.push((callee, n.start_position().row + 1, n.start_byte()));
            }
        }
        true
    });
    out
}

/// A file run as a program: it has an `if __name__ == "__main__":` block or calls
/// `app.run(...)` (absl) at its top level.
fn runs_as_script(f: &File<'_>) -> bool {
    let mut c = f.root.walk();
    f.root.named_children(&mut c).any(|stmt| {
        (stmt.kind() == "if_statement"
            && stmt
                .child_by_field_name("condition")
                .is_some_and(|cond| is_main_check(cond, f.src)))
            || (stmt.kind() == "expression_statement"
                && stmt.named_child(0).is_some_and(|call| {
                    call.kind() == "call"
                        && f.names.callee(call, f.src).as_deref() == Some("absl.app.run")
                }))
    })
}

/// The innermost call that starts at `byte` (where a hit on a call points).
fn call_at(root: Node<'_>, byte: usize) -> Option<Node<'_>> {
    let mut n = root.descendant_for_byte_range(byte, byte)?;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        if n.kind() == "call" {
            return Some(n);
        }
        n = n.parent().filter(|p| p.start_byte() == byte)?;
    }
    None
}

/// Whether `name` is a parameter of `def`: `Some(its literal default)` (`None` inside
/// when it has none, or one that is not a literal); `None` when it is no parameter.
fn parameter_default(def: Node<'_>, name: &str, src: &str) -> Option<Option<String>> {
    let params = def.child_by_field_name("parameters")?;
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        match p.kind() {
            "identifier" if text(p, src) == name => return Some(None),
            "typed_parameter" => {
                let mut w = p.walk();
                if p.named_children(&mut w)
                    .any(|n| n.kind() == "identifier" && text(n, src) == name)
                {
                    return Some(None);
                }
            }
            "default_parameter" | "typed_default_parameter"
                if p.child_by_field_name("name")
                    .is_some_and(|n| text(n, src) == name) =>
            {
                return Some(
                    p.child_by_field_name("value")
                        .filter(|v| matches!(v.kind(), "integer" | "true" | "false" | "none"))
                        .map(|v| text(v, src).to_owned()),
                );
            }
            _ => {}
        }
    }
    None
}

/// The target a call's value is assigned to: `x = C()`, `self.x = C()`, or its place in
/// `self.a, self.b = a, C()`.
/// Functions of a module a `getattr(module, name)` call may pick, at most: more is a
/// library, not a table of cleaners.
const MAX_GETATTR_FUNCTIONS: usize = 40;

/// Names an object of a module class is followed under (`ASR_model`, then the keyword
/// `asr_model=` it is passed as, ...) before it counts as called.
const MAX_OBJECT_NAMES: usize = 8;

/// Calls `visit` with every name under `node` and every word of its strings, docstrings left
/// out (`- get_mean_and_std: calculate ...` in a module's names nothing that runs).
fn words_of<'t>(node: Node<'t>, src: &'t str, visit: &mut impl FnMut(&'t str)) {
    ast::walk(node, &mut |n| {
        match n.kind() {
            "identifier" => visit(text(n, src)),
            "expression_statement"
                if n.named_child_count() == 1
                    && n.named_child(0).is_some_and(|c| c.kind() == "string") =>
            {
                return false;
            }
            "string" => {
                for w in text(n, src).split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if !w.is_empty() {
                        visit(w);
                    }
                }
                return false;
            }
            _ => {}
        }
        true
    });
}

/// True when a module's top level only defines: imports, functions, classes, assignments
/// and its docstring; no call run on import, no loop, no `__main__` block.
fn definitions_only(root: Node<'_>) -> bool {
    let mut c = root.walk();
    root.named_children(&mut c).all(|stmt| match stmt.kind() {
        "import_statement"
        | "import_from_statement"
        | "future_import_statement"
        | "function_definition"
        | "class_definition"
        | "decorated_definition"
        | "comment" => true,
        // A docstring, a constant, a logger: `x = f()` defines a name; `main()` runs.
        "expression_statement" => stmt
            .named_child(0)
            .is_some_and(|e| matches!(e.kind(), "string" | "assignment")),
        _ => false,
    })
}

/// The module's methods that return the module itself (`ASR().cuda().eval()`): the name
/// the chain is assigned to holds the object the constructor built.
const SELF_RETURNING_MODULE_METHODS: [&str; 10] = [
    "cuda",
    "to",
    "eval",
    "train",
    "half",
    "float",
    "double",
    "bfloat16",
    "cpu",
    "requires_grad_",
];

/// The end of a chain of [`SELF_RETURNING_MODULE_METHODS`] called on `call`'s value, or
/// `call` itself.
fn through_module_methods<'t>(call: Node<'t>, src: &str) -> Node<'t> {
    let mut at = call;
    for _ in 0..SELF_RETURNING_MODULE_METHODS.len() {
        let Some(attr) = at.parent().filter(|p| {
            p.kind() == "attribute"
                && p.child_by_field_name("object")
                    .is_some_and(|o| o.id() == at.id())
                && p.child_by_field_name("attribute")
                    .is_some_and(|a| SELF_RETURNING_MODULE_METHODS.contains(&text(a, src)))
        }) else {
            break;
        };
        match attr.parent().filter(|c| c.kind() == "call") {
            Some(c) => at = c,
            None => break,
        }
    }
    at
}

fn assigned_to(call: Node<'_>) -> Option<Node<'_>> {
    let p = call.parent()?;
    if p.kind() == "assignment" {
        return p
            .child_by_field_name("right")
            .filter(|r| r.id() == call.id())
            .and_then(|_| p.child_by_field_name("left"));
    }
    if matches!(p.kind(), "expression_list" | "tuple") {
        let assignment = p.parent().filter(|a| a.kind() == "assignment")?;
        let left = assignment.child_by_field_name("left")?;
        let mut c = p.walk();
        let at = p.named_children(&mut c).position(|n| n.id() == call.id())?;
        if matches!(left.kind(), "pattern_list" | "tuple_pattern")
            && left.named_child_count() == p.named_child_count()
        {
            return left.named_child(at);
        }
    }
    None
}

/// The opt-in condition a call runs under, if it does: the body of an `if` on an opt-in
/// flag, or the value an opt-in conditional expression takes when the flag is on (`A(p) if
/// args.raw_audio else B(p)`, `B(p) if not args.raw_audio else A(p)`). Climbs at most
/// `MAX_NESTING` levels (`parent()` costs the tree's depth).
fn opt_in_site<'t>(
    call: Node<'t>,
    src: &str,
    opt_in: &HashSet<String>,
    on: &dyn Fn(Node<'t>) -> Option<String>,
) -> Option<String> {
    let off = |cond: Node<'_>| format!("when `{}` holds, a flag off unless given", text(cond, src));
    let mut n = call;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        let p = n.parent()?;
        if ast::is_scope(p) {
            return None;
        }
        match p.kind() {
            "conditional_expression" => {
                let (Some(then), Some(cond), Some(other)) =
                    (p.named_child(0), p.named_child(1), p.named_child(2))
                else {
                    return None;
                };
                if then.id() == n.id() && loops::opt_in_condition(cond, src, opt_in) {
                    return Some(off(cond));
                }
                if other.id() == n.id()
                    && cond.kind() == "not_operator"
                    && let Some(arg) = cond.child_by_field_name("argument")
                    && loops::opt_in_condition(arg, src, opt_in)
                {
                    return Some(off(arg));
                }
                if other.id() == n.id()
                    && let Some(at) = on(cond)
                {
                    return Some(format!(
                        "when `{}` does not hold, and it holds by default ({at})",
                        text(cond, src)
                    ));
                }
            }
            "if_statement" => {
                if loops::opt_in_body(p, src, opt_in)
                    .is_some_and(|(s, e)| s <= call.start_byte() && call.end_byte() <= e)
                {
                    return p.child_by_field_name("condition").map(off);
                }
                // The `else` of `if hp.data.data_preprocessed:` set true in the config.
                if n.kind() == "else_clause"
                    && let Some(cond) = p.child_by_field_name("condition")
                    && let Some(at) = on(cond)
                {
                    return Some(format!(
                        "when `{}` does not hold, and it holds by default ({at})",
                        text(cond, src)
                    ));
                }
            }
            _ => {}
        }
        n = p;
    }
    None
}

/// The name an `if isinstance(x, torch.Tensor):` (or `torch.is_tensor(x)`) around `call`
/// tests, the innermost such `if` whose body holds the call, up to the function.
fn tensor_guard<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    guarding_conditions(call).into_iter().find_map(|cond| {
        let x = ast::positional(cond, 0).filter(|x| x.kind() == "identifier")?;
        if cond.kind() != "call" {
            return None;
        }
        let callee = cond
            .child_by_field_name("function")
            .map_or("", |f| text(f, src));
        let tested = match callee {
            "isinstance" => ast::positional(cond, 1)
                .is_some_and(|t| text(t, src).rsplit('.').next() == Some("Tensor")),
            "torch.is_tensor" => true,
            _ => false,
        };
        tested.then(|| text(x, src))
    })
}

/// The conditions of the `if`s whose body holds `call`, innermost first, up to its
/// function. Climbs at most `MAX_NESTING` levels (`parent()` costs the tree's depth).
fn guarding_conditions(call: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut n = call;
    for _ in 0..gpufeed_findings::constants::MAX_NESTING {
        let Some(p) = n.parent().filter(|p| !ast::is_scope(*p)) else {
            break;
        };
        if p.kind() == "if_statement"
            && p.child_by_field_name("consequence").is_some_and(|b| {
                b.start_byte() <= call.start_byte() && call.end_byte() <= b.end_byte()
            })
            && let Some(cond) = p.child_by_field_name("condition")
        {
            out.push(cond);
        }
        n = p;
    }
    out
}

/// True when `call` runs only under a tensor test of a value the caller gave, and the
/// caller gave no tensor: a parameter given something that is not one, or the values of
/// a `**kwargs` given only such (`MetricLogger.update(loss=loss_value)` with `if
/// isinstance(v, torch.Tensor): v = v.item()`, where `loss_value` is a float already).
fn untaken_tensor_guard(
    root: Node<'_>,
    call: Node<'_>,
    src: &str,
    tensors: &HashSet<String>,
) -> bool {
    let Some(x) = tensor_guard(call, src) else {
        return false;
    };
    let Some(def) = ast::enclosing(root, call, "function_definition") else {
        return false;
    };
    let given_no_tensor = |p: &str| tensors.contains(&loops::given_mark(p)) && !tensors.contains(p);
    if ast::param_names(def, src).contains(&x) {
        return given_no_tensor(x);
    }
    // `for k, v in kwargs.items()`, `for v in kwargs.values()` over the `**` parameter.
    let Some(kw) = ast::dict_splat_param(def, src) else {
        return false;
    };
    let mut from_kwargs = false;
    ast::walk(Project::body(def), &mut |n| {
        if n.kind() == "for_statement"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && right.kind() == "call"
            && matches!(ast::method(right, src), Some("items" | "values"))
            && ast::receiver(right).is_some_and(|r| text(r, src) == kw)
        {
            let mut targets = Vec::new();
            ast::walk(left, &mut |t| {
                if t.kind() == "identifier" {
                    targets.push(text(t, src));
                }
                true
            });
            from_kwargs |= targets.last() == Some(&x);
        }
        !ast::is_scope(n) || n.id() == def.id()
    });
    from_kwargs && given_no_tensor(kw)
}

/// Why a resample runs only for some files: it sits under `if sr != SAMPLE_RATE:` (a test
/// of a rate against another), so a corpus recorded at the target rate never resamples
/// (eben's and SpeechTokenizer's loaders on LibriSpeech's 16 kHz). Whether yours is, lint
/// cannot tell: info, saying when it costs.
fn rate_guard(name: &str, call: Node<'_>, src: &str) -> Option<String> {
    if !name.to_ascii_lowercase().contains("resample") {
        return None;
    }
    guarding_conditions(call).into_iter().find_map(|cond| {
        let rate = cond.kind() == "comparison_operator" && ast::operators(cond, src) == ["!="] && {
            let t = text(cond, src).to_ascii_lowercase();
            t.contains("sr") || t.contains("rate")
        };
        rate.then(|| {
            format!(
                "it runs only when `{}`: a file already at the target rate is not resampled; \
                 it costs every epoch only if your corpus is recorded at another rate",
                text(cond, src)
            )
        })
    })
}

/// True when the code at `byte` is in the body of an `if` on an opt-in flag.
fn under_opt_in(root: Node<'_>, byte: usize, src: &str, opt_in: &HashSet<String>) -> bool {
    let mut n = root.descendant_for_byte_range(byte, byte);
    while let Some(node) = n {
        if loops::opt_in_body(node, src, opt_in).is_some_and(|(s, e)| s <= byte && byte < e) {
            return true;
        }
        n = node.parent();
    }
    false
}

/// The condition of an `if` whose body byte `byte` lies in, when it compares a setting
/// with a value its one default does not meet (`if args.num_gpu > 1:` with `default=1`).
fn off_comparison_at<'s>(
    root: Node<'_>,
    byte: usize,
    src: &'s str,
    marks: &HashSet<String>,
) -> Option<&'s str> {
    let mut n = root.descendant_for_byte_range(byte, byte);
    while let Some(node) = n {
        if node.kind() == "if_statement"
            && node
                .child_by_field_name("consequence")
                .is_some_and(|b| b.start_byte() <= byte && byte < b.end_byte())
            && let Some(cond) = ast::bare_condition(node)
            && loops::holds_by_default(cond, src, marks) == Some(false)
        {
            return Some(text(cond, src));
        }
        n = node.parent();
    }
    None
}

/// Why a call inside `body` runs only when a file cache misses: it is in the branch of an
/// `if` on `os.path.exists(p)` / `os.path.isfile(p)` / `p.exists()` that does not load,
/// and that branch also saves (`torch.save`, `np.save`, `pickle.dump`, ...), so the
/// feature is computed once per item and loaded after (VITS' `.spec.pt` files).
fn file_cache(call: Node<'_>, body: Node<'_>, src: &str) -> Option<String> {
    let mut n = call;
    while let Some(p) = n.parent() {
        let branch = n;
        n = p;
        // `if os.path.exists(p): return load(p)` earlier in the block: the rest of the block
        // runs on a miss (the early-return form of the same cache).
        if p.kind() == "block"
            && let Some(line) = early_return_cache(branch, p, src)
        {
            return Some(line);
        }
        // `try: mel = torch.load(p) except FileNotFoundError: mel = compute(); torch.save(mel,
        // p)`: the handler runs when the cached file is missing (univnet's `.mel` files).
        if p.kind() == "except_clause"
            && let Some(why) = except_cache(p, src)
        {
            return Some(why);
        }
        if p.id() == body.id() {
            return None;
        }
        let (stmt, in_else) = match p.kind() {
            "if_statement" | "elif_clause" => (p, false),
            "else_clause" => (p.parent()?, true),
            _ => continue,
        };
        let cond = stmt.child_by_field_name("condition")?;
        if !is_exists_check(text(cond, src)) {
            continue;
        }
        // The branch that computes must be the one that runs on a miss: the `else` of
        // `if exists(p)`, or the body of `if not exists(p)`.
        let negated = cond.kind() == "not_operator";
        let on_miss = if negated { !in_else } else { in_else };
        let saves = text(branch, src).contains("save(")
            || text(branch, src).contains(".dump(")
            || text(branch, src).contains("savez(");
        if on_miss && saves {
            return Some(cache_reason(stmt, cond, src));
        }
    }
    None
}

/// A file-cache check that returns early, before `stmt` in `block`, with a save after it:
/// why `stmt` runs only on a miss.
fn early_return_cache(stmt: Node<'_>, block: Node<'_>, src: &str) -> Option<String> {
    let rest = &src[stmt.start_byte()..block.end_byte()];
    if !(rest.contains("save(") || rest.contains(".dump(") || rest.contains("savez(")) {
        return None;
    }
    let mut prev = stmt.prev_named_sibling();
    while let Some(p) = prev {
        if p.kind() == "if_statement"
            && let Some(cond) = p.child_by_field_name("condition")
            && cond.kind() != "not_operator"
            && is_exists_check(text(cond, src))
            && p.child_by_field_name("consequence")
                .is_some_and(|c| text(c, src).contains("return"))
        {
            return Some(cache_reason(p, cond, src));
        }
        prev = p.prev_named_sibling();
    }
    None
}

/// Why an `except` handler runs only when a file cache misses: its `try` loads (`load(`,
/// `open(`), it catches a missing file (`FileNotFoundError`, `OSError`, `IOError`, or any
/// error), and it saves what it computes.
fn except_cache(handler: Node<'_>, src: &str) -> Option<String> {
    let try_stmt = handler.parent().filter(|t| t.kind() == "try_statement")?;
    let tried = text(try_stmt.child_by_field_name("body")?, src);
    let body = text(handler, src);
    let caught = handler
        .named_child(0)
        .filter(|c| c.kind() != "block")
        .map_or("", |c| text(c, src));
    let missing = caught.is_empty()
        || ["FileNotFoundError", "OSError", "IOError", "Exception"]
            .iter()
            .any(|e| caught.contains(e));
    let loads = tried.contains("load(") || tried.contains("open(");
    let saves = body.contains("save(") || body.contains(".dump(") || body.contains("savez(");
    (missing && loads && saves).then(|| {
        format!(
            "it runs only when loading the cached file fails (`except {}` at line {}), and is \
             saved there, so each item computes it once, not every epoch",
            if caught.is_empty() { "" } else { caught },
            handler.start_position().row + 1
        )
    })
}

/// `os.path.exists(p)`, `os.path.isfile(p)`, `p.is_file()`, `p.exists()`.
fn is_exists_check(cond: &str) -> bool {
    cond.contains("exists(") || cond.contains("isfile(") || cond.contains("is_file(")
}

fn cache_reason(stmt: Node<'_>, cond: Node<'_>, src: &str) -> String {
    format!(
        "it runs only when the file checked at line {} (`{}`) is missing, and is saved \
         there, so each item computes it once, not every epoch",
        stmt.start_position().row + 1,
        text(cond, src).chars().take(60).collect::<String>()
    )
}

/// Names assigned a feature transform object anywhere in the file (module level, or
/// `self.x = ...` in a method): calling one computes the feature.
fn transform_objects(f: &File<'_>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    ast::walk(f.root, &mut |n| {
        if n.kind() == "assignment"
            && let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            )
            && right.kind() == "call"
            && let Some(made) = f.names.callee(right, f.src)
            && decode::is_transform(&made)
            && let Some(name) = ast::dotted(left, f.src)
        {
            out.insert(name, made);
        }
        true
    });
    out
}

/// True when a `for` loop iterates something named like a loader or a dataset
/// (`loader`, `train_loader`, `enumerate(dl)`, `tqdm(dataset)`).
fn iterates_data(lp: Node<'_>, src: &str) -> bool {
    let Some(right) = lp.child_by_field_name("right") else {
        return false;
    };
    text(right, src)
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_ascii_lowercase)
        .any(|t| {
            t.contains("loader")
                || t.contains("dataset")
                || t.ends_with("_ds")
                || t.ends_with("_dl")
                || matches!(t.as_str(), "ds" | "dl" | "batches" | "data_iter")
        })
}

/// Where findings are not on the training path: `if __name__ == "__main__":` blocks that
/// do not train, tests and examples.
pub(super) struct OffPath {
    /// Per file: why the whole file is off the path.
    file: Vec<Option<String>>,
    /// Per file: `__main__` blocks without a training loop (start, end, line).
    mains: Vec<Vec<(usize, usize, usize)>>,
    /// Per file: evaluation loaders (start, end, why).
    evals: Vec<Vec<(usize, usize, String)>>,
    /// Per file: modules built only by files off the path (start, end, why).
    modules: Vec<Vec<(usize, usize, String)>>,
    /// Per file: module-level functions nothing in the project names (start, end, why).
    uncalled: Vec<Vec<(usize, usize, String)>>,
    /// Per file: preprocessing run once and what only it uses (start, end, why).
    one_off: Vec<Vec<(usize, usize, String)>>,
}

impl OffPath {
    /// Why a byte of file `fi` is off the training path, if it is.
    pub(super) fn why(&self, fi: usize, byte: usize) -> Option<String> {
        if let Some(Some(why)) = self.file.get(fi) {
            return Some(why.clone());
        }
        for ranges in [&self.evals, &self.modules, &self.uncalled, &self.one_off] {
            if let Some((_, _, why)) = ranges
                .get(fi)
                .and_then(|e| e.iter().find(|(s, e, _)| *s <= byte && byte < *e))
            {
                return Some(why.clone());
            }
        }
        self.mains
            .get(fi)?
            .iter()
            .find(|(s, e, _)| *s <= byte && byte < *e)
            .map(|(_, _, line)| {
                format!("inside `if __name__ == \"__main__\":` (line {line}), a self-test that does not train")
            })
    }
}

/// The off-path parts of every file.
pub(super) fn off_path(files: &[File<'_>]) -> OffPath {
    let mut out = OffPath {
        file: Vec::new(),
        mains: Vec::new(),
        evals: Vec::new(),
        modules: Vec::new(),
        uncalled: Vec::new(),
        one_off: files.iter().map(|f| f.one_off.clone()).collect(),
    };
    // A folder with a training script (`train*.py`, `*_train.py`, `trainer.py` that runs a
    // training loop or `.fit`) is a trainer even under `examples/`: TensorFlowTTS keeps its
    // real trainers there (`examples/tacotron2/train_tacotron2.py` beside its dataset
    // module). A lone demo that happens to call `backward()` stays an example.
    let training_folders: HashSet<&Path> = files
        .iter()
        .filter(|f| is_training_script(f.rel) && (!f.training_loops.is_empty() || calls_fit(f)))
        .filter_map(|f| f.rel.parent())
        .collect();
    // Evaluation scripts are off the path where another file trains.
    let trains_elsewhere = |me: &File<'_>| {
        files.iter().any(|f| {
            !std::ptr::eq(f, me)
                && evaluation_script(f.rel).is_none()
                && test_or_example(f.rel).is_none()
                && (!f.training_loops.is_empty() || calls_fit(f))
        })
    };
    for f in files {
        out.evals.push(f.eval_loaders.clone());
        let why = test_or_example(f.rel)
            .filter(|why| {
                !(why.starts_with("in an example")
                    && f.rel.parent().is_some_and(|d| training_folders.contains(d)))
            })
            .or_else(|| inference_script(f))
            .or_else(|| evaluation_script(f.rel).filter(|_| trains_elsewhere(f)))
            .or_else(|| f.not_run.clone());
        out.file.push(why);
        let mut mains = Vec::new();
        let mut c = f.root.walk();
        for stmt in f.root.named_children(&mut c) {
            if stmt.kind() == "if_statement"
                && stmt
                    .child_by_field_name("condition")
                    .is_some_and(|cond| is_main_check(cond, f.src))
            {
                let (s, e) = (stmt.start_byte(), stmt.end_byte());
                // A script whose loop is in its own `train()`, which the block calls after
                // building the loaders (Wav2Lip's `wav2lip_train.py`), trains from there.
                let trains = f.training_loops.iter().any(|(ls, _)| s <= *ls && *ls < e)
                    || f.training_loops
                        .iter()
                        .filter_map(|&(ls, _)| enclosing_function_name(f, ls))
                        .any(|name| names_word(&f.src[s..e], name));
                if !trains {
                    mains.push((s, e, stmt.start_position().row + 1));
                }
            }
        }
        out.mains.push(mains);
    }
    out.modules = off_path_modules(files, &out.file);
    out.uncalled = uncalled_functions(files);
    out
}

/// The name of the module-level function whose body holds byte `at` of file `f`.
fn enclosing_function_name<'f>(f: &'f File<'_>, at: usize) -> Option<&'f str> {
    let mut c = f.root.walk();
    let def = f
        .root
        .named_children(&mut c)
        .map(|stmt| match stmt.kind() {
            "decorated_definition" => stmt.child_by_field_name("definition").unwrap_or(stmt),
            _ => stmt,
        })
        .find(|d| d.kind() == "function_definition" && d.start_byte() <= at && at < d.end_byte())?;
    def.child_by_field_name("name").map(|n| text(n, f.src))
}

/// The module-level functions that nothing in the linted files names, where the project
/// trains elsewhere: a statistics helper left beside the trainer (pytorch-cifar's
/// `get_mean_and_std`), code copied from another project and never imported (SGMSE's
/// `create_model`). Their loaders and wrappers do not run in training. A function is
/// kept on the path when its name appears anywhere else (a call, an import, a string
/// a registry or a config could use), when it is decorated (a registration), when it
/// is `main`, or when its file trains (a loop, `fit`: the script's own functions).
fn uncalled_functions(files: &[File<'_>]) -> Vec<Vec<(usize, usize, String)>> {
    let mut out = vec![Vec::new(); files.len()];
    if !files
        .iter()
        .any(|f| !f.training_loops.is_empty() || calls_fit(f))
    {
        return out;
    }
    let mut candidates: Vec<(usize, Node<'_>, &str)> = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        // Only in modules of helpers: a trainer's own file shows its cases side by side.
        if !f.training_loops.is_empty() || calls_fit(f) {
            continue;
        }
        let mut c = f.root.walk();
        for def in f.root.named_children(&mut c) {
            if def.kind() != "function_definition" {
                continue;
            }
            let Some(name) = def.child_by_field_name("name").map(|n| text(n, f.src)) else {
                continue;
            };
            if name == "main" || name.starts_with("test") || name.starts_with("__") {
                continue;
            }
            candidates.push((fi, def, name));
        }
    }
    if candidates.is_empty() {
        return out;
    }
    // Every name and every word of a string of every file, counted for the candidates'
    // names only: one walk, whatever the number of functions. Comments and docstrings
    // (`- get_mean_and_std: calculate ...` in a module's) name nothing that runs.
    let wanted: HashSet<&str> = candidates.iter().map(|&(_, _, n)| n).collect();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for f in files {
        words_of(f.root, f.src, &mut |w| {
            if let Some(&w) = wanted.get(w) {
                *seen.entry(w).or_default() += 1;
            }
        });
    }
    for (fi, def, name) in candidates {
        if seen.get(name).copied().unwrap_or(0) <= 1 {
            out[fi].push((
                def.start_byte(),
                def.end_byte(),
                format!("in `{name}`, which nothing in the linted files calls or names"),
            ));
        }
    }
    out
}

/// The modules (classes with a `forward`) that only files off the path build: an
/// inference script's beam decoder, a test's toy model. Their code does not run in
/// training, whatever it does per call. A class built nowhere by its name (through a
/// registry, a config string) is left on the path.
fn off_path_modules(
    files: &[File<'_>],
    file_off: &[Option<String>],
) -> Vec<Vec<(usize, usize, String)>> {
    let mut out = vec![Vec::new(); files.len()];
    let modules: HashSet<&str> = files
        .iter()
        .flat_map(|f| {
            f.classes.iter().filter_map(|(name, defs)| {
                defs.iter()
                    .any(|&c| !ast::methods(c, "forward", f.src).is_empty())
                    .then_some(name.as_str())
            })
        })
        .collect();
    if modules.is_empty() {
        return out;
    }
    // Where each is built: calls named like the class (`BeamSearch(...)`, `beam.BeamSearch(...)`).
    let mut built: HashMap<&str, Vec<usize>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        ast::walk(f.root, &mut |n| {
            if n.kind() == "call"
                && let Some(func) = n.child_by_field_name("function")
                && matches!(func.kind(), "identifier" | "attribute")
            {
                let t = text(func, f.src);
                let last = t.rsplit('.').next().unwrap_or(t);
                if let Some(&m) = modules.get(last) {
                    built.entry(m).or_default().push(fi);
                }
            }
            true
        });
    }
    for (fi, f) in files.iter().enumerate() {
        // A config builds it by name (`_target_:`): it runs, whoever else builds it.
        if f.config_named {
            continue;
        }
        for (name, defs) in &f.classes {
            let Some(sites) = built.get(name.as_str()) else {
                continue;
            };
            if sites.iter().any(|&s| file_off[s].is_none()) {
                continue;
            }
            let mut by: Vec<String> = sites
                .iter()
                .map(|&s| files[s].rel.display().to_string())
                .collect();
            by.dedup();
            let why = format!(
                "`{name}` is built only in {}, off the training path ({})",
                by.join(", "),
                file_off[sites[0]].as_deref().unwrap_or_default()
            );
            for &c in defs {
                out[fi].push((c.start_byte(), c.end_byte(), why.clone()));
            }
        }
    }
    out
}

/// Why a `DataLoader(...)` call serves evaluation rather than training: the name it is
/// assigned to (`val_loader`, `self.test_dl`) or the function that builds it (`validate`,
/// Lightning's `val_dataloader`) names an evaluation split, and no training loop of the
/// file iterates that name. Such a loader runs at validation time, not every step, so its
/// settings do not starve training.
fn evaluation_loader<'t>(
    root: Node<'t>,
    loader: Node<'t>,
    loops: &[(Node<'_>, Node<'_>)],
    src: &str,
) -> Option<String> {
    let bound = loader
        .parent()
        .filter(|p| p.kind() == "assignment")
        .and_then(|p| p.child_by_field_name("left"))
        .filter(|l| matches!(l.kind(), "identifier" | "attribute"))
        .map(|l| {
            let t = text(l, src);
            t.rsplit('.').next().unwrap_or(t).to_owned()
        });
    if let Some(name) = &bound {
        let iterated = loops.iter().any(|(lp, _)| {
            lp.kind() == "for_statement"
                && lp
                    .child_by_field_name("right")
                    .is_some_and(|r| names_word(text(r, src), name))
        });
        if iterated {
            return None;
        }
        if is_evaluation_name(name) {
            return Some(format!("an evaluation loader (`{name}`)"));
        }
    }
    let def = ast::enclosing(root, loader, "function_definition")?;
    // `def make_loader(files, train): if train: return DataLoader(...)` then the other
    // loader: built only when the flag is off.
    let mut flag_off = None;
    ast::walk(def, &mut |n| {
        if flag_off.is_none()
            && n.kind() == "if_statement"
            && loops::eval_only_branches(n, src)
                .iter()
                .any(|&(s, e)| s <= loader.start_byte() && loader.end_byte() <= e)
        {
            flag_off = n.child_by_field_name("condition").map(|c| text(c, src));
        }
        flag_off.is_none() && n.start_byte() <= loader.start_byte()
    });
    if let Some(cond) = flag_off {
        return Some(format!(
            "a loader built only when `{cond}` does not hold, for evaluation"
        ));
    }
    let function = def.child_by_field_name("name").map(|n| text(n, src))?;
    // `batched_synthesis`, `run_inference`, `predict`: a loader for inference.
    if let Some(word) = function
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .find(|w| INFERENCE_WORDS.contains(&w.as_str()))
    {
        return Some(format!(
            "a loader built in `{function}()`, for {} rather than training",
            if word.starts_with("synth") {
                "synthesis"
            } else {
                "inference"
            }
        ));
    }
    // `@torch.inference_mode()` / `@torch.no_grad()`: no gradient, so no training, runs
    // through this loader (a synthesis CLI's batches).
    if let Some(decorated) = def.parent().filter(|p| p.kind() == "decorated_definition") {
        let mut c = decorated.walk();
        if let Some(d) = decorated.named_children(&mut c).find(|d| {
            d.kind() == "decorator" && {
                let t = text(*d, src);
                t.contains("inference_mode") || t.contains("no_grad")
            }
        }) {
            return Some(format!(
                "a loader built in `{function}()`, which runs under `{}`: no gradients, so \
                 inference or evaluation",
                text(d, src).trim()
            ));
        }
    }
    let trains = function
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("train") || w.eq_ignore_ascii_case("fit"));
    (is_evaluation_name(function) && !trains)
        .then(|| format!("a loader built in `{function}()`, for evaluation"))
}

/// Words of a function's name that say it serves inference, not training.
const INFERENCE_WORDS: &[&str] = &[
    "infer",
    "inference",
    "predict",
    "prediction",
    "synthesis",
    "synthesize",
    "synthesise",
];

/// A name of an evaluation split or step: a word `val`, `valid`, `validation`, `validate`,
/// `eval`, `evaluate`, `evaluation`, `test`, `testing`, `dev` or `cv` (`val_loader`,
/// `testloader`, `eval_dl`, `validate`, `val_dataloader`).
pub(super) fn is_evaluation_name(name: &str) -> bool {
    const SPLITS: &[&str] = &[
        "validation",
        "validate",
        "valid",
        "val",
        "evaluation",
        "evaluate",
        "eval",
        "testing",
        "test",
        "dev",
        // Cross-validation (ESPnet's `cv_loader`, Speech-Transformer's `cv_dataset`).
        "cv",
    ];
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .any(|word| {
            SPLITS.iter().any(|s| {
                word == *s
                    || word.strip_prefix(s).is_some_and(|rest| {
                        matches!(rest, "loader" | "dataloader" | "dl" | "set" | "data" | "ds")
                    })
            })
        })
}

/// `name` as a whole identifier in `text` (`val_loader` in `enumerate(val_loader)`, not in
/// `val_loader2`).
fn names_word(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

/// `train.py`, `train_tacotron2.py`, `fastspeech_train.py`, `trainer.py`.
fn is_training_script(rel: &Path) -> bool {
    rel.file_stem().is_some_and(|s| {
        let s = s.to_string_lossy().to_ascii_lowercase();
        s.starts_with("train") || s.ends_with("_train") || s.ends_with("_trainer")
    })
}

/// True when the file calls `.fit(...)` (Keras' `model.fit` or `fit_generator`,
/// Lightning's `trainer.fit`, a trainer object's own `fit`): it starts a training.
fn calls_fit(f: &File<'_>) -> bool {
    let mut found = false;
    ast::walk(f.root, &mut |n| {
        if n.kind() == "call" && matches!(ast::method(n, f.src), Some("fit" | "fit_generator")) {
            found = true;
        }
        !found
    });
    found
}

/// True when the file calls a trainer object's `train()` (`trainer.train()`,
/// `DefaultTrainer(cfg).train()`): a framework's training loop.
fn runs_a_trainer(f: &File<'_>) -> bool {
    if !f.src.contains(".train()") {
        return false;
    }
    let mut found = false;
    ast::walk(f.root, &mut |n| {
        if n.kind() == "call"
            && ast::method(n, f.src) == Some("train")
            && ast::arg_count(n) == 0
            && ast::receiver(n).is_some_and(|r| {
                r.kind() == "call" || text(r, f.src).to_ascii_lowercase().contains("trainer")
            })
        {
            found = true;
        }
        !found
    });
    found
}

/// `__name__ == "__main__"`, either way round.
fn is_main_check(cond: Node<'_>, src: &str) -> bool {
    if cond.kind() != "comparison_operator" {
        return false;
    }
    let mut c = cond.walk();
    let parts: Vec<String> = cond
        .named_children(&mut c)
        .map(|n| text(n, src).replace('\'', "\""))
        .collect();
    parts.len() == 2
        && parts.iter().any(|p| p == "__name__")
        && parts.iter().any(|p| p == "\"__main__\"")
}

/// Why a file is an evaluation script, by its name: its first word is `eval`, `evaluate`
/// or `evaluation` (dino's `eval_linear.py`, `eval_knn.py`): a protocol run by hand on a
/// trained model, even where it fits a small head. Only where another file trains.
fn evaluation_script(rel: &Path) -> Option<String> {
    let stem = rel.file_stem()?.to_string_lossy().to_ascii_lowercase();
    let first = stem.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
    matches!(first, "eval" | "evaluate" | "evaluation").then(|| {
        format!(
            "in an evaluation script (`{}`), run by hand on a trained model, not the training run",
            rel.display()
        )
    })
}

/// True when a statement runs only on some paths of its function: under an `if`, a `try`,
/// a loop or a `match`.
fn conditional(node: Node<'_>) -> bool {
    let mut n = node;
    while let Some(p) = n.parent() {
        match p.kind() {
            "function_definition" | "class_definition" | "module" => return false,
            "if_statement" | "elif_clause" | "else_clause" | "try_statement" | "except_clause"
            | "for_statement" | "while_statement" | "match_statement" => return true,
            _ => n = p,
        }
    }
    false
}

/// True when a definition is the module's own (at its top, or in a top-level `if`, `try`
/// or decorator), not a method or a nested function.
fn module_level(def: Node<'_>) -> bool {
    let mut n = def;
    while let Some(p) = n.parent() {
        if matches!(p.kind(), "class_definition" | "function_definition") {
            return false;
        }
        n = p;
    }
    true
}

/// Why a file is an inference script: its name says so (`inference.py`, `infer_wav.py`,
/// `base_inferencer.py`, `predict.py`, `export_onnx.py`, `serve.py`, `demo.py`, torch.hub's
/// `hubconf.py`) and it runs no training loop and
/// no `.fit`. A model wrapped in `DataParallel` or a loader built there does not feed
/// training (audioset_tagging_cnn's `inference.py`).
fn inference_script(f: &File<'_>) -> Option<String> {
    let stem = f.rel.file_stem()?.to_string_lossy().to_ascii_lowercase();
    let named = stem.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        matches!(
            w,
            "infer"
                | "inference"
                | "inferencer"
                | "predict"
                | "prediction"
                | "demo"
                | "export"
                | "serve"
                | "serving"
                | "hubconf"
        )
    });
    (named && f.training_loops.is_empty() && !calls_fit(f)).then(|| {
        format!(
            "in an inference script (`{}`), which does not train",
            f.rel.display()
        )
    })
}

/// Why a file is a test or an example, from its path inside the linted folder.
fn test_or_example(rel: &Path) -> Option<String> {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dirs: Vec<String> = rel
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().to_ascii_lowercase()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let shown = rel.display();
    if name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || dirs
            .iter()
            .any(|d| matches!(d.as_str(), "test" | "tests" | "testing"))
    {
        return Some(format!("in a test (`{shown}`)"));
    }
    if dirs
        .iter()
        .any(|d| matches!(d.as_str(), "example" | "examples" | "demo" | "demos"))
    {
        return Some(format!("in an example (`{shown}`)"));
    }
    // nanoGPT's `bench.py`: a loop that times the model, not the training run.
    let stem = name
        .strip_suffix(".py")
        .unwrap_or(&name)
        .to_ascii_lowercase();
    if stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "bench" | "benchmark" | "benchmarks" | "benchmarking"))
        || dirs
            .iter()
            .any(|d| matches!(d.as_str(), "bench" | "benches" | "benchmark" | "benchmarks"))
    {
        return Some(format!("in a benchmark (`{shown}`)"));
    }
    // pytorch-cifar100's `lr_finder.py`: a learning-rate range test, run by hand for about
    // a hundred iterations before training, not the training run.
    let words: Vec<&str> = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let lr_finder = words.iter().any(|w| {
        matches!(
            *w,
            "lrfinder" | "lrfind" | "findlr" | "lrfinding" | "lrrange"
        )
    }) || words.windows(2).any(|p| {
        matches!(
            (p[0], p[1]),
            ("lr", "finder" | "find" | "finding" | "range" | "test")
                | ("find", "lr")
                | ("range", "test")
        )
    });
    if lr_finder {
        return Some(format!(
            "in a learning-rate range test (`{shown}`), a short tool run before training"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths() {
        assert_eq!(module_path(Path::new("lib/trainer.py")), "lib.trainer");
        assert_eq!(module_path(Path::new("pkg/__init__.py")), "pkg");
        assert_eq!(module_path(Path::new("train.py")), "train");
    }

    /// nuwave2's bandwidth augmentation: a resample at a rate drawn per item cannot be
    /// precomputed; the same resample at fixed rates can.
    #[test]
    fn a_resample_with_random_parameters_is_an_augmentation() {
        let src = "\
import random
import numpy as np
import scipy.signal as ss
from torch.utils.data import Dataset

class Augmented(Dataset):
    def __getitem__(self, i):
        wav = np.load(self.wavs[i])
        ratio = random.uniform(0.3, 0.9)
        low = int(22050 * ratio)
        narrow = ss.resample_poly(wav, low, 22050)
        noisy = ss.resample_poly(wav, np.random.randint(8000, 16000), 22050)
        return ss.resample_poly(narrow, 22050, low), noisy

class Fixed(Dataset):
    def __getitem__(self, i):
        wav = np.load(self.wavs[i])
        low = 16000
        return ss.resample_poly(wav, low, 22050)
";
        let lines: Vec<_> = crate::tests::ids(src)
            .into_iter()
            .filter(|(id, _)| *id == "decode-per-item")
            .collect();
        assert_eq!(lines, [("decode-per-item", 19)]);
    }

    /// Conv-TasNet's `overlap_and_add` (called from the decoder's `forward`) and a
    /// permutation loss the training loop calls: each builds a CPU tensor and copies it to
    /// the GPU every step. A memoised table, an unused function and one under an opt-in
    /// flag do not run every step.
    #[test]
    fn host_tensors_in_what_a_step_calls() {
        let src = "\
import argparse
import functools
import torch
import torch.nn as nn
parser = argparse.ArgumentParser()
parser.add_argument('--check', action='store_true')
args = parser.parse_args()

def overlap_and_add(frames, step):
    idx = torch.arange(frames.size(-1)).unfold(0, 2, 1)
    idx = idx.to(frames.device)
    if args.check:
        probe = torch.zeros(3).cuda()
    return frames[..., idx]

def cal_loss(est, ref):
    perms = torch.tensor([[0, 1], [1, 0]]).cuda()
    return (est - ref).abs().mean() + perms.sum()

@functools.lru_cache(maxsize=None)
def table(n):
    return torch.arange(n).cuda()

def unused(x):
    return torch.arange(3).cuda()

class Decoder(nn.Module):
    def forward(self, x):
        t = table(x.size(0))
        return overlap_and_add(x, 2) + t

model = Decoder().cuda()
opt = torch.optim.Adam(model.parameters())
for x, y in loader:
    est = model(x)
    loss = cal_loss(est, y)
    loss.backward()
    opt.step()
";
        let found: Vec<_> = crate::lint_source(src, Path::new("train.py"))
            .into_iter()
            .filter(|f| f.id == "host-tensor-in-forward")
            .collect();
        let lines: Vec<_> = found.iter().map(|f| f.line.unwrap_or(0)).collect();
        assert_eq!(lines, [11, 17], "{found:#?}");
        assert!(
            found[0].message.contains(
                "`torch.arange` builds a tensor on the CPU that `overlap_and_add` then copies \
                 to the GPU, and `overlap_and_add` runs every step (called from a module's \
                 `forward`)"
            ),
            "{}",
            found[0].message
        );
        assert!(
            found[1]
                .message
                .contains("(called from the training loop at train.py:34)"),
            "{}",
            found[1].message
        );
    }

    #[test]
    fn tests_and_examples() {
        assert!(test_or_example(Path::new("tests/test_x.py")).is_some());
        assert!(test_or_example(Path::new("x_test.py")).is_some());
        assert!(test_or_example(Path::new("examples/demo.py")).is_some());
        assert!(test_or_example(Path::new("train.py")).is_none());
        assert!(test_or_example(Path::new("latest/train.py")).is_none());
        assert!(test_or_example(Path::new("bench.py")).is_some());
        assert!(test_or_example(Path::new("benchmarks/loader.py")).is_some());
        assert!(test_or_example(Path::new("run_benchmark.py")).is_some());
        assert!(test_or_example(Path::new("benchmarked_train.py")).is_none());
        assert!(test_or_example(Path::new("lr_finder.py")).is_some());
        assert!(test_or_example(Path::new("tools/find_lr.py")).is_some());
        assert!(test_or_example(Path::new("lr_range_test.py")).is_some());
        assert!(test_or_example(Path::new("train_lr_schedule.py")).is_none());
    }
}
