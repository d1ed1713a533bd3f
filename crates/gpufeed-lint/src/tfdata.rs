//! tf.data rules: the pipeline built from a `tf.data` source is followed through method
//! chains and assignments (`ds = ds.map(f)`) in each function and at module level, so the
//! order of its transformations is known where it is iterated or returned. It is followed
//! across functions and modules too: a function's return value (`ds = data.load_ds(...)`
//! in another file) and a pipeline passed as an argument (`def preprocess(ds): return
//! ds.map(decode)`, called with one) are pipelines there ([`Outside`], [`across`]).
//!
//! Rules: `tf-py-function-in-map`, `tf-map-sequential`, `tf-no-prefetch`,
//! `tf-after-prefetch-to-device`, `tf-cache-after-random`, `tf-function-retracing`, and
//! `decode-per-item` for mapped functions.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::File;
use super::ast::{self, text};
use super::project::is_evaluation_name;
use super::signatures as sig;

/// The signature of `Dataset.map` in [`sig::SIGNATURES`].
const MAP: &str = "tf.data.Dataset.map";
use gpufeed_findings::constants::MAX_NESTING;

/// Constructors of a `tf.data` dataset (canonical names).
fn is_source(name: &str) -> bool {
    const DATASET: &[&str] = &[
        "from_tensor_slices",
        "from_tensors",
        "from_generator",
        "range",
        "list_files",
        "zip",
        "sample_from_datasets",
        "choose_from_datasets",
        "load",
        "counter",
        "random",
    ];
    if let Some(m) = name.strip_prefix("tensorflow.data.Dataset.") {
        return DATASET.contains(&m);
    }
    matches!(
        name,
        "tensorflow.data.TFRecordDataset"
            | "tensorflow.data.TextLineDataset"
            | "tensorflow.data.FixedLengthRecordDataset"
            | "tensorflow.data.experimental.make_csv_dataset"
            | "tensorflow.data.experimental.SqlDataset"
    )
}

/// `Dataset` methods that return a dataset.
const METHODS: &[&str] = &[
    "map",
    "batch",
    "padded_batch",
    "ragged_batch",
    "bucket_by_sequence_length",
    "prefetch",
    "cache",
    "shuffle",
    "repeat",
    "filter",
    "interleave",
    "flat_map",
    "apply",
    "unbatch",
    "rebatch",
    "take",
    "skip",
    "shard",
    "with_options",
    "concatenate",
    "enumerate",
    "window",
    "snapshot",
    "ignore_errors",
    "prefetch_to_device",
];

fn is_batch(op: &str) -> bool {
    matches!(
        op,
        "batch" | "padded_batch" | "ragged_batch" | "bucket_by_sequence_length" | "rebatch"
    )
}

fn is_prefetch(op: &str) -> bool {
    matches!(op, "prefetch" | "prefetch_to_device" | "copy_to_device")
}

pub(super) fn is_py_function(name: &str) -> bool {
    matches!(
        name,
        "tensorflow.numpy_function"
            | "tensorflow.py_function"
            | "tensorflow.py_func"
            | "tensorflow.compat.v1.py_func"
            | "tensorflow.compat.v1.numpy_function"
            | "tensorflow.compat.v1.py_function"
    )
}

fn is_random(name: &str) -> bool {
    (name.starts_with("tensorflow.random.") && !name.ends_with("set_seed"))
        || name.starts_with("tensorflow.image.random_")
        || name.starts_with("numpy.random.")
        || (name.starts_with("random.") && name != "random.seed")
}

#[derive(Debug, Clone)]
struct Op {
    name: String,
    line: usize,
    /// The call node's id (where findings point); [`FOREIGN`] for an op of another file.
    id: usize,
    random: bool,
    /// `data.py:12` for an op of another file (its line means nothing here).
    at: Option<String>,
}

/// The node id of an op made in another file: never a node of this one.
const FOREIGN: usize = usize::MAX;

/// A `tf.data` pipeline: its transformations in order.
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    ops: Vec<Op>,
    /// The function whose return value this pipeline is.
    origin: Option<String>,
}

impl Pipeline {
    /// The pipeline as another file sees it: its ops placed in `file`.
    fn exported(&self, file: &str) -> Self {
        Self {
            ops: self
                .ops
                .iter()
                .map(|o| Op {
                    at: o.at.clone().or_else(|| Some(format!("{file}:{}", o.line))),
                    id: FOREIGN,
                    ..o.clone()
                })
                .collect(),
            origin: None,
        }
    }
}

/// What the other files of the project tell a file's pass: the pipelines their functions
/// return (by the dotted name an import gives them, `data.make_dataset`), and pipelines
/// passed to this file's functions (by function name, then argument position).
#[derive(Debug, Default, Clone)]
pub(crate) struct Outside {
    pub(crate) returns: HashMap<String, Pipeline>,
    pub(crate) params: HashMap<String, HashMap<usize, Pipeline>>,
}

impl Outside {
    /// What it tells, without the pipelines: whether a file is told something new.
    pub(crate) fn keys(&self) -> (Vec<&str>, Vec<(&str, usize)>) {
        let mut returns: Vec<&str> = self.returns.keys().map(String::as_str).collect();
        let mut params: Vec<(&str, usize)> = self
            .params
            .iter()
            .flat_map(|(f, at)| at.keys().map(move |&i| (f.as_str(), i)))
            .collect();
        returns.sort_unstable();
        params.sort_unstable();
        (returns, params)
    }
}

/// What a file's pass tells the other files: the pipelines its functions return, and its
/// calls that pass a pipeline to a function of another file (`prep.preprocess`, argument
/// 0, the pipeline), each already placed in this file.
#[derive(Debug, Default)]
pub(crate) struct Exports {
    pub(crate) returns: HashMap<String, Pipeline>,
    pub(crate) calls: Vec<(String, usize, Pipeline)>,
}

impl Pipeline {
    fn has(&self, pred: impl Fn(&Op) -> bool) -> bool {
        self.ops.iter().any(pred)
    }

    fn describe(&self) -> String {
        self.ops
            .iter()
            .map(|o| match &o.at {
                Some(at) => format!("{} ({at})", o.name),
                None => format!("{} (line {})", o.name, o.line),
            })
            .collect::<Vec<_>>()
            .join(" -> ")
    }
}

/// Pending `tf-no-prefetch` check: a pipeline returned from a function.
struct Returned {
    function: String,
    pipeline: Pipeline,
}

struct Tf<'a, 't> {
    file: &'a mut File<'t>,
    /// Pipelines returned by the functions of this file, by name.
    returns: HashMap<String, Pipeline>,
    pending: Vec<Returned>,
    /// Functions whose returned pipeline a caller prefetches.
    prefetched: HashSet<String>,
    /// Op calls already checked (a chain may be evaluated more than once).
    checked: HashSet<usize>,
    /// Pipelines already reported for no prefetch (by their last op).
    no_prefetch_reported: HashSet<usize>,
    nodes: HashMap<usize, Node<'t>>,
    /// Current nesting of `eval`/`statement`, bounded by `MAX_NESTING`.
    depth: u64,
    /// Pipelines of other files (see [`Outside`]).
    outside: &'a Outside,
    /// Pipelines passed to this file's functions, by name and argument position: each
    /// such function is walked again with its parameters bound.
    params: HashMap<String, HashMap<usize, Pipeline>>,
    /// Calls passing a pipeline to a function of another file.
    calls_out: Vec<(String, usize, Pipeline)>,
    /// The name the statement being walked binds, iterates or hands to `fit`: findings on a
    /// pipeline named for evaluation (`val_dataset`) are info.
    target: Option<String>,
}

pub(super) fn check(file: &mut File<'_>, outside: &Outside) -> Exports {
    let root = file.root;
    let mut tf = Tf {
        file,
        returns: HashMap::new(),
        pending: Vec::new(),
        prefetched: HashSet::new(),
        checked: HashSet::new(),
        no_prefetch_reported: HashSet::new(),
        nodes: HashMap::new(),
        depth: 0,
        outside,
        params: outside.params.clone(),
        calls_out: Vec::new(),
        target: None,
    };
    // Functions first (source order), so module code and later functions know what they
    // return; then the module's own statements. A pipeline passed to a function of this
    // file binds its parameter: the function is walked again with it (a few rounds, for
    // a pipeline handed down through several functions).
    let mut defs = Vec::new();
    ast::walk(root, &mut |n| {
        if n.kind() == "function_definition" {
            defs.push(n);
        }
        true
    });
    let src = tf.file.src;
    for _ in 0..3 {
        let before = tf.params.clone();
        for &def in &defs {
            let name = def
                .child_by_field_name("name")
                .map(|n| text(n, src).to_owned())
                .unwrap_or_default();
            if let Some(body) = def.child_by_field_name("body") {
                let mut env = bound_params(def, tf.params.get(&name), src);
                tf.block(body, &mut env, Some(&name));
            }
        }
        let mut env = HashMap::new();
        tf.block(root, &mut env, None);
        if tf.params.keys().all(|k| {
            before
                .get(k)
                .is_some_and(|b| tf.params[k].keys().all(|i| b.contains_key(i)))
        }) {
            break;
        }
    }
    let pending = std::mem::take(&mut tf.pending);
    let mut seen = HashSet::new();
    for r in pending {
        if !tf.prefetched.contains(&r.function) && seen.insert(r.function.clone()) {
            tf.report_no_prefetch(&r.pipeline, &format!("returned by `{}`", r.function));
        }
    }
    let rel = tf.file.rel.display().to_string();
    let exports = Exports {
        returns: tf
            .returns
            .iter()
            .map(|(f, p)| (f.clone(), p.exported(&rel)))
            .collect(),
        calls: std::mem::take(&mut tf.calls_out),
    };
    retracing(tf.file);
    exports
}

/// What each file is told by the others ([`Outside`]), `None` for a file told nothing:
/// the pipelines returned by functions of other files, under every dotted name an import
/// may give them (`pkg.data.make_dataset`, `data.make_dataset`; a name two files could
/// give is left out), where the file imports one; and the pipelines other files pass to
/// its functions.
pub(crate) fn across<'e>(
    files: &[File<'_>],
    exports: impl Iterator<Item = &'e Exports>,
) -> Vec<Option<Outside>> {
    let exports: Vec<&Exports> = exports.collect();
    let modules: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            let path = super::project::module_path(f.rel);
            let parts: Vec<&str> = path.split('.').collect();
            (0..parts.len()).map(|i| parts[i..].join(".")).collect()
        })
        .collect();
    let mut returns: HashMap<String, Option<(usize, Pipeline)>> = HashMap::new();
    for (fi, e) in exports.iter().enumerate() {
        for (function, p) in &e.returns {
            for m in &modules[fi] {
                returns
                    .entry(format!("{m}.{function}"))
                    .and_modify(|have| {
                        if have.as_ref().is_some_and(|(at, _)| *at != fi) {
                            *have = None;
                        }
                    })
                    .or_insert_with(|| Some((fi, p.clone())));
            }
        }
    }
    let mut out: Vec<Option<Outside>> = vec![None; files.len()];
    for (fi, f) in files.iter().enumerate() {
        let wanted: HashMap<String, Pipeline> = returns
            .iter()
            .filter_map(|(key, v)| v.as_ref().map(|(at, p)| (key, *at, p)))
            .filter(|(key, at, _)| {
                *at != fi
                    && f.names
                        .targets()
                        .any(|t| key.as_str() == t || key.starts_with(&format!("{t}.")))
            })
            .map(|(key, _, p)| (key.clone(), p.clone()))
            .collect();
        if !wanted.is_empty() {
            out[fi].get_or_insert_with(Outside::default).returns = wanted;
        }
    }
    for e in &exports {
        for (callee, position, p) in &e.calls {
            let Some((module, function)) = callee.trim_start_matches('.').rsplit_once('.') else {
                continue;
            };
            let targets: Vec<usize> = (0..files.len())
                .filter(|&t| modules[t].iter().any(|m| m == module))
                .filter(|&t| files[t].functions.contains_key(function))
                .collect();
            if let [t] = targets.as_slice() {
                out[*t]
                    .get_or_insert_with(Outside::default)
                    .params
                    .entry(function.to_owned())
                    .or_default()
                    .entry(*position)
                    .or_insert_with(|| p.clone());
            }
        }
    }
    out
}

/// The parameters of `def` bound to the pipelines passed at their positions (`self` and
/// `cls` of a method are not counted: `self.prep(ds)` passes `ds` as argument 0).
fn bound_params(
    def: Node<'_>,
    passed: Option<&HashMap<usize, Pipeline>>,
    src: &str,
) -> HashMap<String, Pipeline> {
    let mut env = HashMap::new();
    let Some(passed) = passed else {
        return env;
    };
    let names = ast::param_names(def, src);
    for (&i, p) in passed {
        if let Some(name) = names.get(i) {
            env.insert((*name).to_owned(), p.clone());
        }
    }
    env
}

impl<'t> Tf<'_, 't> {
    /// The statements of a block in order, recursing into compound statements (not into
    /// nested functions or classes, which are their own scopes).
    fn block(
        &mut self,
        block: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        let mut c = block.walk();
        let stmts: Vec<_> = block.named_children(&mut c).collect();
        for stmt in stmts {
            self.statement(stmt, env, function);
        }
    }

    fn statement(
        &mut self,
        stmt: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        if self.depth >= MAX_NESTING {
            return;
        }
        self.depth += 1;
        self.statement_inner(stmt, env, function);
        self.depth -= 1;
    }

    fn statement_inner(
        &mut self,
        stmt: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        let src = self.file.src;
        match stmt.kind() {
            "function_definition" | "class_definition" | "decorated_definition" => {}
            "expression_statement" => {
                let Some(expr) = stmt.named_child(0) else {
                    return;
                };
                if expr.kind() == "assignment" {
                    let right = expr.child_by_field_name("right");
                    self.target = expr
                        .child_by_field_name("left")
                        .and_then(|l| ast::dotted(l, src));
                    let value = right.and_then(|r| self.eval(r, env));
                    self.consumers(right, env);
                    self.target = None;
                    if let Some(left) = expr.child_by_field_name("left")
                        && let Some(key) = ast::dotted(left, src)
                    {
                        match value {
                            Some(p) => {
                                env.insert(key, p);
                            }
                            None => {
                                env.remove(&key);
                            }
                        }
                    }
                } else {
                    self.eval(expr, env);
                    self.consumers(Some(expr), env);
                }
            }
            "return_statement" => {
                let value = stmt.named_child(0);
                if let (Some(v), Some(f)) = (value, function)
                    && let Some(p) = self.eval(v, env)
                {
                    self.returns.insert(f.to_owned(), p.clone());
                    if p.has(|o| is_batch(&o.name)) && !p.has(|o| is_prefetch(&o.name)) {
                        self.pending.push(Returned {
                            function: f.to_owned(),
                            pipeline: p,
                        });
                    }
                }
                self.consumers(value, env);
            }
            "for_statement" => {
                if let Some(right) = stmt.child_by_field_name("right") {
                    let iterable = unwrap_enumerate(right, src);
                    if let Some(p) = self.eval(iterable, env) {
                        self.target = ast::dotted(iterable, src);
                        self.report_no_prefetch(
                            &p,
                            &format!("iterated at line {}", stmt.start_position().row + 1),
                        );
                        self.target = None;
                    }
                    self.consumers(Some(right), env);
                }
                self.children_blocks(stmt, env, function);
            }
            "if_statement" => self.if_branches(stmt, env, function),
            "try_statement" => self.try_branches(stmt, env, function),
            _ => {
                // while / with / match: check the expressions, then the blocks in order.
                let mut c = stmt.walk();
                let parts: Vec<_> = stmt.named_children(&mut c).collect();
                for part in parts {
                    match part.kind() {
                        "block" => self.block(part, env, function),
                        "elif_clause" | "else_clause" | "except_clause" | "finally_clause"
                        | "case_clause" => self.children_blocks(part, env, function),
                        _ => {
                            self.eval(part, env);
                            self.consumers(Some(part), env);
                        }
                    }
                }
            }
        }
    }

    /// `if`/`elif`/`else`: each branch starts from the pipelines before the `if`, so a
    /// branch is neither before nor after another; afterwards, any branch may have run.
    fn if_branches(
        &mut self,
        stmt: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        let mut branches = Vec::new();
        let mut has_else = false;
        let mut c = stmt.walk();
        let parts: Vec<_> = stmt.named_children(&mut c).collect();
        for part in parts {
            match part.kind() {
                "block" => branches.push(self.branch(&[part], env, function)),
                "elif_clause" => {
                    if let Some(cond) = part.child_by_field_name("condition") {
                        self.eval(cond, env);
                        self.consumers(Some(cond), env);
                    }
                    let body: Vec<_> = part
                        .child_by_field_name("consequence")
                        .into_iter()
                        .collect();
                    branches.push(self.branch(&body, env, function));
                }
                "else_clause" => {
                    has_else = true;
                    let body: Vec<_> = part.child_by_field_name("body").into_iter().collect();
                    branches.push(self.branch(&body, env, function));
                }
                "comment" => {}
                _ => {
                    self.eval(part, env);
                    self.consumers(Some(part), env);
                }
            }
        }
        if !has_else {
            branches.push(env.clone());
        }
        *env = merge(branches);
    }

    /// `try`/`except`: the `try` body (then its `else`) is one path, each handler another
    /// that starts from the pipelines before the `try`; `finally` runs after any of them.
    fn try_branches(
        &mut self,
        stmt: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        let mut c = stmt.walk();
        let parts: Vec<_> = stmt.named_children(&mut c).collect();
        let body_and_else: Vec<_> = parts
            .iter()
            .filter_map(|p| match p.kind() {
                "block" => Some(*p),
                "else_clause" => p.child_by_field_name("body"),
                _ => None,
            })
            .collect();
        let mut branches = vec![self.branch(&body_and_else, env, function)];
        for handler in parts.iter().filter(|p| p.kind() == "except_clause") {
            let mut hc = handler.walk();
            let blocks: Vec<_> = handler
                .named_children(&mut hc)
                .filter(|b| b.kind() == "block")
                .collect();
            branches.push(self.branch(&blocks, env, function));
        }
        *env = merge(branches);
        for fin in parts.iter().filter(|p| p.kind() == "finally_clause") {
            self.children_blocks(*fin, env, function);
        }
    }

    /// Runs `blocks` in order on a copy of `env`; returns the copy.
    fn branch(
        &mut self,
        blocks: &[Node<'t>],
        env: &HashMap<String, Pipeline>,
        function: Option<&str>,
    ) -> HashMap<String, Pipeline> {
        let mut own = env.clone();
        for b in blocks {
            self.block(*b, &mut own, function);
        }
        own
    }

    fn children_blocks(
        &mut self,
        node: Node<'t>,
        env: &mut HashMap<String, Pipeline>,
        function: Option<&str>,
    ) {
        let mut c = node.walk();
        let parts: Vec<_> = node.named_children(&mut c).collect();
        for part in parts {
            match part.kind() {
                "block" => self.block(part, env, function),
                "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                    self.children_blocks(part, env, function);
                }
                _ => {}
            }
        }
    }

    /// The pipeline an expression evaluates to, checking every transformation on the way.
    fn eval(&mut self, expr: Node<'t>, env: &HashMap<String, Pipeline>) -> Option<Pipeline> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        self.depth += 1;
        let out = self.eval_inner(expr, env);
        self.depth -= 1;
        out
    }

    fn eval_inner(&mut self, expr: Node<'t>, env: &HashMap<String, Pipeline>) -> Option<Pipeline> {
        let src = self.file.src;
        match expr.kind() {
            "identifier" | "attribute" => {
                let key = ast::dotted(expr, src)?;
                env.get(&key).cloned()
            }
            "parenthesized_expression" => self.eval(expr.named_child(0)?, env),
            "call" => self.eval_call(expr, env),
            _ => {
                // Check chains nested in other expressions (`train(ds.map(f))`).
                let mut c = expr.walk();
                let kids: Vec<_> = expr.named_children(&mut c).collect();
                for kid in kids {
                    if !ast::is_scope(kid) {
                        self.eval(kid, env);
                    }
                }
                None
            }
        }
    }

    fn eval_call(&mut self, call: Node<'t>, env: &HashMap<String, Pipeline>) -> Option<Pipeline> {
        let src = self.file.src;
        // Arguments may hold pipelines of their own; one passed by position to a function
        // binds its parameter there.
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut c = args.walk();
            let kids: Vec<_> = args.named_children(&mut c).collect();
            let mut position = 0;
            for kid in kids {
                let value = if kid.kind() == "keyword_argument" {
                    kid.child_by_field_name("value")
                } else {
                    Some(kid)
                };
                if let Some(v) = value
                    && !ast::is_scope(v)
                    && let Some(p) = self.eval(v, env)
                    && kid.kind() != "keyword_argument"
                {
                    self.passed(call, position, p);
                }
                if !matches!(kid.kind(), "keyword_argument" | "comment") {
                    position += 1;
                }
            }
        }
        let line = call.start_position().row + 1;
        if let Some(name) = self.file.names.callee(call, src) {
            if is_source(&name) {
                let short = name.rsplit('.').next().unwrap_or(&name).to_owned();
                return Some(Pipeline {
                    ops: vec![Op {
                        name: short,
                        line,
                        id: call.id(),
                        random: false,
                        at: None,
                    }],
                    origin: None,
                });
            }
            if let Some(p) = self
                .returns
                .get(&name)
                .or_else(|| self.outside.returns.get(&name))
            {
                let mut p = p.clone();
                p.origin = Some(name);
                return Some(p);
            }
        }
        let method = ast::method(call, src)?;
        if !METHODS.contains(&method) {
            return None;
        }
        let object = ast::receiver(call)?;
        let base = self.eval(object, env);
        let mut op_name = method.to_owned();
        if method == "apply"
            && let Some(arg) = sig::arg(call, "tf.data.Dataset.apply", "transformation_func", src)
            && arg.kind() == "call"
            && let Some(inner) = self.file.names.callee(arg, src)
        {
            if inner.ends_with(".prefetch_to_device") {
                op_name = "prefetch_to_device".to_owned();
            } else if inner.ends_with(".copy_to_device") {
                op_name = "copy_to_device".to_owned();
            } else if inner.ends_with(".bucket_by_sequence_length")
                || inner.ends_with(".dense_to_ragged_batch")
                || inner.ends_with(".dense_to_sparse_batch")
            {
                // `ds.apply(tf.data.experimental.bucket_by_sequence_length(...))`: a batch,
                // as the method of the same name is (TransformerTTS' buckets).
                op_name = "bucket_by_sequence_length".to_owned();
            }
        }
        let mut random = false;
        if method == "map" {
            random = self.check_map(call, base.is_some());
        }
        let mut p = base?;
        self.nodes.insert(call.id(), call);
        let first_check = self.checked.insert(call.id());
        if first_check {
            self.check_op(call, &op_name, &p);
        }
        if is_prefetch(&op_name)
            && let Some(f) = &p.origin
        {
            self.prefetched.insert(f.clone());
        }
        p.ops.push(Op {
            name: op_name,
            line,
            id: call.id(),
            random: random || method == "shuffle",
            at: None,
        });
        Some(p)
    }

    /// Lowers the finding just made to info when its pipeline is named for evaluation.
    fn if_evaluation(&mut self) {
        if let Some(name) = self.target.as_deref().filter(|n| is_evaluation_name(n))
            && let Some(hit) = self.file.hits.last_mut()
        {
            hit.info = Some(format!(
                "an evaluation pipeline (`{name}`): it runs for validation, not every training \
                 step"
            ));
        }
    }

    /// A pipeline passed as argument `position` of `call`: to a function of this file
    /// (`prep(ds)`, `self.prep(ds)`), it binds that function's parameter; to a function
    /// imported from another file, the project's other files are told.
    fn passed(&mut self, call: Node<'t>, position: usize, p: Pipeline) {
        let src = self.file.src;
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        let Some(dotted) = ast::dotted(function, src) else {
            return;
        };
        let head = dotted.split('.').next().unwrap_or(&dotted);
        let last = dotted.rsplit('.').next().unwrap_or(&dotted);
        if self.file.names.imports(head) {
            let rel = self.file.rel.display().to_string();
            self.calls_out
                .push((self.file.names.resolve(&dotted), position, p.exported(&rel)));
        } else if (dotted == last || head == "self") && self.file.functions.contains_key(last) {
            self.params
                .entry(last.to_owned())
                .or_default()
                .entry(position)
                .or_insert(p);
        }
    }

    /// Checks a `.map(fn)` call; returns whether the function draws random numbers.
    fn check_map(&mut self, call: Node<'t>, on_dataset: bool) -> bool {
        let src = self.file.src;
        let map_func = sig::arg(call, MAP, "map_func", src);
        let function = map_func.and_then(|a| self.file.function_of(a));
        let tf_kwarg = ast::kwarg(call, "num_parallel_calls", src).is_some();
        let line = call.start_position().row + 1;
        if function.is_none()
            && on_dataset
            && let Some(arg) = map_func
            && self.checked.insert(call.id().wrapping_add(2))
        {
            // Not a function of this file (imported?): the project pass resolves it.
            self.file
                .map_args
                .push((arg, format!("passed to `Dataset.map` at line {line}")));
        }
        let mut random = false;
        if let Some(f) = function {
            let py = self.file.calls_reaching(f, &is_py_function);
            let is_tf = on_dataset || tf_kwarg || !py.is_empty();
            random = !self.file.calls_reaching(f, &is_random).is_empty();
            // Once per map call, when it is first known to be `tf.data`'s.
            let first = is_tf && self.checked.insert(call.id().wrapping_add(1));
            for (inner, name) in py.into_iter().filter(|_| first) {
                let short = name.trim_start_matches("tensorflow.");
                self.file.hit(
                    "tf-py-function-in-map",
                    inner,
                    format!("`tf.{short}` runs inside a function passed to `Dataset.map`"),
                    Some(format!("the map is at line {line}")),
                    "read and transform with TensorFlow ops (tf.io.read_file, tf.audio.decode_wav, \
                     tf.signal.stft), or precompute the features (`gpufeed precompute`) and map a \
                     loader of arrays",
                );
            }
            if first {
                self.file
                    .item_roots
                    .push((f, format!("passed to `Dataset.map` at line {line}")));
            }
        }
        if on_dataset && self.checked.insert(call.id().wrapping_add(3)) {
            let parallel = sig::arg(call, MAP, "num_parallel_calls", src);
            let sequential = match parallel {
                None => true,
                Some(v) => ast::is_falsy_literal(v, src) || text(v, src) == "1",
            };
            if sequential && let Some(at) = method_node(call) {
                let specific = match parallel {
                    None => "`Dataset.map` without `num_parallel_calls`".to_owned(),
                    Some(v) => format!("`Dataset.map` with `num_parallel_calls` {}", text(v, src)),
                };
                self.file.hit(
                    "tf-map-sequential",
                    at,
                    specific,
                    None,
                    "ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE)",
                );
                self.if_evaluation();
            }
        }
        random
    }

    fn check_op(&mut self, call: Node<'t>, op: &str, p: &Pipeline) {
        let at = method_node(call).unwrap_or(call);
        if let Some(device) = p
            .ops
            .iter()
            .find(|o| matches!(o.name.as_str(), "prefetch_to_device" | "copy_to_device"))
        {
            self.file.hit(
                "tf-after-prefetch-to-device",
                at,
                format!("`{op}` comes after `{}` (line {})", device.name, device.line),
                Some(format!("pipeline: {}", p.describe())),
                "make `.apply(tf.data.experimental.prefetch_to_device(...))` the last transformation",
            );
        }
        if op == "cache"
            && let Some(random) = p.ops.iter().find(|o| o.random)
        {
            let what = if random.name == "shuffle" {
                "`shuffle`".to_owned()
            } else {
                "a map whose function draws random numbers".to_owned()
            };
            self.file.hit(
                "tf-cache-after-random",
                at,
                format!("`cache()` comes after {what} (line {})", random.line),
                Some(format!("pipeline: {}", p.describe())),
                "ds = ds.cache()  # before .shuffle() and random augmentation",
            );
        }
    }

    /// `tf-no-prefetch` for a batched pipeline without prefetch, at its last transformation.
    fn report_no_prefetch(&mut self, p: &Pipeline, how: &str) {
        if !p.has(|o| is_batch(&o.name)) || p.has(|o| is_prefetch(&o.name)) {
            return;
        }
        let Some(last) = p.ops.last() else {
            return;
        };
        if !self.no_prefetch_reported.insert(last.id) {
            return;
        }
        let Some(&node) = self.nodes.get(&last.id) else {
            return;
        };
        let at = method_node(node).unwrap_or(node);
        self.file.hit(
            "tf-no-prefetch",
            at,
            "this batched `tf.data` pipeline has no `prefetch`",
            Some(format!("{how}; pipeline: {}", p.describe())),
            ".prefetch(tf.data.AUTOTUNE)  # as the last transformation",
        );
        self.if_evaluation();
    }

    /// Pipelines consumed by `iter(ds)`, `model.fit(ds)`, `strategy.experimental_distribute_dataset(ds)`.
    fn consumers(&mut self, expr: Option<Node<'t>>, env: &HashMap<String, Pipeline>) {
        let Some(expr) = expr else {
            return;
        };
        let src = self.file.src;
        for call in ast::calls_in(expr) {
            let name = self.file.names.callee(call, src).unwrap_or_default();
            let method = ast::method(call, src).unwrap_or("");
            let arg = if name == "iter" || name == "enumerate" {
                ast::positional(call, 0)
            } else if matches!(method, "fit" | "evaluate" | "predict") {
                sig::arg(call, "tf.keras.Model.fit", "x", src)
            } else if matches!(
                method,
                "experimental_distribute_dataset" | "distribute_dataset"
            ) {
                ast::positional(call, 0)
            } else {
                None
            };
            if let Some(arg) = arg
                && let Some(p) = self.eval(arg, env)
            {
                let line = call.start_position().row + 1;
                let what = if method.is_empty() {
                    name.as_str()
                } else {
                    method
                };
                let outer = std::mem::replace(&mut self.target, ast::dotted(arg, src));
                self.report_no_prefetch(&p, &format!("consumed by `{what}` at line {line}"));
                self.target = outer;
            }
        }
    }
}

/// The pipelines after exclusive branches. A name any branch binds keeps one of its
/// pipelines: the one with `prefetch_to_device` (a later transformation follows it on that
/// path), else one with a `prefetch` (the pipeline may be prefetched), else the first.
fn merge(branches: Vec<HashMap<String, Pipeline>>) -> HashMap<String, Pipeline> {
    let mut out: HashMap<String, Pipeline> = HashMap::new();
    let rank = |p: &Pipeline| {
        if p.has(|o| matches!(o.name.as_str(), "prefetch_to_device" | "copy_to_device")) {
            2
        } else if p.has(|o| is_prefetch(&o.name)) {
            1
        } else {
            0
        }
    };
    for branch in branches {
        for (key, p) in branch {
            match out.get(&key) {
                Some(have) if rank(have) >= rank(&p) => {}
                _ => {
                    out.insert(key, p);
                }
            }
        }
    }
    out
}

/// `enumerate(x)` -> `x`.
fn unwrap_enumerate<'t>(node: Node<'t>, src: &str) -> Node<'t> {
    if node.kind() == "call"
        && node
            .child_by_field_name("function")
            .is_some_and(|f| text(f, src) == "enumerate")
        && let Some(arg) = ast::positional(node, 0)
    {
        return arg;
    }
    node
}

/// For `x.m(...)`, the `m` node (where a finding about the call points).
fn method_node(call: Node<'_>) -> Option<Node<'_>> {
    call.child_by_field_name("function")?
        .child_by_field_name("attribute")
}

/// `tf-function-retracing`: `@tf.function` on a train step without `input_signature`.
fn retracing(file: &mut File<'_>) {
    let src = file.src;
    let mut hits = Vec::new();
    ast::walk(file.root, &mut |n| {
        match n.kind() {
            "decorated_definition" => {
                let Some(def) = n.child_by_field_name("definition") else {
                    return true;
                };
                if def.kind() != "function_definition" {
                    return true;
                }
                let name = def.child_by_field_name("name").map_or("", |x| text(x, src));
                let params = def.child_by_field_name("parameters").map_or(0, |p| {
                    let mut c = p.walk();
                    p.named_children(&mut c)
                        .filter(|x| !matches!(text(*x, src), "self" | "cls"))
                        .count()
                });
                let mut c = n.walk();
                for deco in n.children(&mut c).filter(|d| d.kind() == "decorator") {
                    let Some(expr) = deco.named_child(0) else {
                        continue;
                    };
                    let (target, call) = if expr.kind() == "call" {
                        (expr.child_by_field_name("function"), Some(expr))
                    } else {
                        (Some(expr), None)
                    };
                    let is_tf_function = target
                        .and_then(|t| ast::dotted(t, src))
                        .is_some_and(|d| file.names.resolve(&d) == "tensorflow.function");
                    if is_tf_function && params > 0 && is_step_name(name) && !pinned(call, src) {
                        hits.push((deco, name.to_owned()));
                    }
                }
            }
            "call" => {
                let is_tf_function = file
                    .names
                    .callee(n, src)
                    .is_some_and(|c| c == "tensorflow.function");
                if is_tf_function
                    && let Some(arg) = sig::arg(n, "tf.function", "func", src)
                    && let Some(d) = ast::dotted(arg, src)
                {
                    let last = d.rsplit('.').next().unwrap_or(&d).to_owned();
                    if is_step_name(&last) && !pinned(Some(n), src) {
                        hits.push((n, last));
                    }
                }
            }
            _ => {}
        }
        true
    });
    // Judged over the project (the pipeline is often in another module):
    // `project::check` lowers these to info where every batch has one shape.
    for (node, name) in hits {
        file.hit(
            "tf-function-retracing",
            node,
            format!("`tf.function` on `{name}` has no `input_signature`"),
            None,
            "@tf.function(input_signature=[tf.TensorSpec(shape, dtype), ...]) with your \
             inputs' shapes (None where a size varies)  # or reduce_retracing=True; or pad \
             batches to one shape",
        );
    }
}

/// How a file batches: the line of its first `.batch(...)`, and whether it pads or
/// batches ragged elements (`padded_batch`, `ragged_batch`, `bucket_by_sequence_length`,
/// `tf.RaggedTensor`). `.batch()` stacks elements of one shape (TensorFlow refuses
/// others), so its batches have at most two shapes, the last one partial: two traces of a
/// step, not one per batch. Only padding and ragged batching give a new shape per batch.
pub(super) fn batching(file: &File<'_>) -> (Option<usize>, bool) {
    let src = file.src;
    let (mut batch, mut varying) = (None, false);
    ast::walk(file.root, &mut |n| {
        if n.kind() == "call" {
            match ast::method(n, src) {
                Some("batch") => {
                    batch.get_or_insert(n.start_position().row + 1);
                }
                Some("padded_batch" | "ragged_batch" | "bucket_by_sequence_length") => {
                    varying = true;
                }
                _ => {}
            }
        }
        // Identifiers only: an attribute's text holds its whole chain (quadratic on a long
        // one); `tf.RaggedTensor` has `RaggedTensor` as an identifier.
        if n.kind() == "identifier" && text(n, src).contains("Ragged") {
            varying = true;
        }
        !varying
    });
    (batch, varying)
}

/// True when the `tf.function(...)` call fixes the signature or relaxes shapes.
fn pinned(call: Option<Node<'_>>, src: &str) -> bool {
    let Some(call) = call else {
        return false;
    };
    ast::kwarg(call, "input_signature", src).is_some_and(|v| !ast::is_falsy_literal(v, src))
        || ast::kwarg(call, "reduce_retracing", src).is_some_and(ast::is_true)
        || ast::kwarg(call, "experimental_relax_shapes", src).is_some_and(ast::is_true)
}

fn is_step_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("step") || lower.contains("train")
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    const HEAD: &str = "import tensorflow as tf\n";

    fn lint(body: &str) -> Vec<(&'static str, usize)> {
        ids(&format!("{HEAD}{body}"))
    }

    #[test]
    fn py_function_in_map() {
        let bad = "\
def load(path):
    return tf.numpy_function(read, [path], tf.float32)
ds = tf.data.Dataset.from_tensor_slices(files)
ds = ds.map(load, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
";
        assert_eq!(lint(bad), vec![("tf-py-function-in-map", 3)]);
        // Through a method on an unknown receiver and a lambda.
        let bad = "\
class D:
    def _load(self, p):
        return self._inner(p)
    def _inner(self, p):
        return tf.py_function(read, [p], tf.float32)
    def build(self):
        return self.files.map(self._load)
x = something.map(lambda p: tf.numpy_function(read, [p], tf.float32))
";
        assert_eq!(
            lint(bad),
            vec![("tf-py-function-in-map", 6), ("tf-py-function-in-map", 9)]
        );
        let good = "\
def load(path):
    return tf.audio.decode_wav(tf.io.read_file(path))[0]
ds = tf.data.Dataset.from_tensor_slices(files)
ds = ds.map(load, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
out = tf.numpy_function(f, [x], tf.float32)  # not in a map
";
        assert_eq!(lint(good), vec![]);
    }

    #[test]
    fn map_parallelism() {
        let bad = "ds = tf.data.Dataset.range(10)\nds = ds.map(f, num_parallel_calls=None)\nds = ds.map(g)\n";
        assert_eq!(
            lint(bad),
            vec![("tf-map-sequential", 3), ("tf-map-sequential", 4)]
        );
        // `.map` on something that is not a dataset (a pandas column) is not reported.
        let good =
            "ds = tf.data.Dataset.range(10).map(f, num_parallel_calls=8)\ncol = df['x'].map(f)\n";
        assert_eq!(lint(good), vec![]);
    }

    #[test]
    fn prefetch_at_consumption_and_return() {
        let bad = "\
ds = tf.data.Dataset.range(10).batch(2)
for x in ds:
    pass
";
        assert_eq!(lint(bad), vec![("tf-no-prefetch", 2)]);
        let bad = "\
def make():
    ds = tf.data.TFRecordDataset(files)
    return ds.batch(32)
model.fit(make(), epochs=3)
";
        assert_eq!(lint(bad), vec![("tf-no-prefetch", 4)]);
        let good = "\
def make():
    ds = tf.data.TFRecordDataset(files)
    return ds.batch(32)
train = make().prefetch(tf.data.AUTOTUNE)
for x in enumerate(tf.data.Dataset.range(3).batch(2).prefetch(1)):
    pass
unbatched = tf.data.Dataset.range(3)
for x in unbatched:
    pass
";
        assert_eq!(lint(good), vec![]);
    }

    #[test]
    fn after_prefetch_to_device() {
        let bad = "\
ds = tf.data.Dataset.range(8).batch(2)
ds = ds.apply(tf.data.experimental.prefetch_to_device('/GPU:0'))
ds = ds.prefetch(tf.data.AUTOTUNE)
";
        assert_eq!(lint(bad), vec![("tf-after-prefetch-to-device", 4)]);
        let good = "\
ds = tf.data.Dataset.range(8).batch(2).prefetch(1)
ds = ds.apply(tf.data.experimental.prefetch_to_device('/GPU:0'))
";
        assert_eq!(lint(good), vec![]);
    }

    #[test]
    fn cache_after_random() {
        let bad = "\
def augment(x):
    return tf.image.random_flip_left_right(x)
ds = tf.data.Dataset.list_files('*.png').map(augment, num_parallel_calls=4).cache()
ds2 = tf.data.Dataset.range(9).shuffle(9).cache()
";
        assert_eq!(
            lint(bad),
            vec![("tf-cache-after-random", 4), ("tf-cache-after-random", 5)]
        );
        let good = "\
def augment(x):
    return tf.image.random_flip_left_right(x)
ds = tf.data.Dataset.list_files('*.png').cache().shuffle(9).map(augment, num_parallel_calls=4)
";
        assert_eq!(lint(good), vec![]);
    }

    #[test]
    fn function_retracing() {
        let bad = "\
@tf.function
def train_step(x, y):
    pass
@tf.function(jit_compile=True)
def step(self, batch):
    pass
fast = tf.function(train_step)
";
        assert_eq!(
            lint(bad),
            vec![
                ("tf-function-retracing", 2),
                ("tf-function-retracing", 5),
                ("tf-function-retracing", 8)
            ]
        );
        let good = "\
@tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
def train_step(x):
    pass
@tf.function(reduce_retracing=True)
def val_step(x):
    pass
@tf.function
def helper(x):
    pass
@tf.function
def train_loop():
    pass
";
        assert_eq!(lint(good), vec![]);
    }
}
