//! The one table that classifies a stack sample of the training thread.
//!
//! py-spy without native unwinding sees Python frames only: `.item()`, `.cpu()`, `.numpy()`,
//! `float(tensor)` are C methods, tf.data's `GetNext` and gpufeed's `Loader` are native,
//! so none of them appears as a frame. The rules therefore read (a) the Python frames of
//! the libraries that wait for data, compute or save, and (b) for the innermost frame of
//! the user's own code, the text of the source line being run.
//!
//! [`RULES`] is read in order and the first rule that matches decides: a data wait is a
//! data wait whatever the producer does inside it (a `Dataset.__getitem__` that logs is
//! still the loop waiting for data), a checkpoint's `.cpu()` copies are the checkpoint.

use py_spy::Frame;

/// What a sample of the training thread was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Waiting for the next batch.
    DataWait,
    /// Saving a checkpoint or logging.
    CheckpointLogging,
    /// A host-device synchronisation.
    Sync,
    /// Forward, backward, optimizer, or the user's own code on the CPU.
    Compute,
    /// None of the rules.
    Other,
}

impl Class {
    /// Every class, in the order of the document's `shares`.
    pub const ALL: [Class; 5] = [
        Class::DataWait,
        Class::Sync,
        Class::Compute,
        Class::CheckpointLogging,
        Class::Other,
    ];

    /// Its key in the document (`data_wait`, `sync`, ...).
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Class::DataWait => "data_wait",
            Class::CheckpointLogging => "checkpoint_logging",
            Class::Sync => "sync",
            Class::Compute => "compute",
            Class::Other => "other",
        }
    }
}

/// How a rule matches a stack.
#[derive(Debug, Clone, Copy)]
pub enum Matcher {
    /// Some frame's file path contains `file` and its function is one of `functions`
    /// (any function when empty).
    Frame {
        /// A part of the file path (`/torch/utils/data/dataloader.py`).
        file: &'static str,
        /// Function names.
        functions: &'static [&'static str],
    },
    /// The innermost frame is the user's own code and the source line it runs contains
    /// one of these (the call below it is native, so it has no frame).
    LeafLine(&'static [&'static str]),
    /// The innermost frame is the user's own code, its source line starts with one of
    /// these, and the thread is off the CPU (blocked in a native call: a `for` line on
    /// the CPU is a plain loop such as `for i in range(n)`).
    IdleLeafLineStart(&'static [&'static str]),
    /// As `LeafLine`, with the thread off the CPU.
    IdleLeafLine(&'static [&'static str]),
    /// A frame of the user's own code that is not the innermost runs a line starting with
    /// one of `starts` or containing one of `contains`: everything below it is that call.
    CallerLine {
        /// Line prefixes (`for `).
        starts: &'static [&'static str],
        /// Line parts (`next(`).
        contains: &'static [&'static str],
    },
    /// The innermost frame is the user's own code and the thread is on the CPU.
    ActiveUserLeaf,
    /// The thread is off the CPU inside a compiled framework step that pulls its own input
    /// (a frame of one of `steps` above a TensorFlow function being executed), no thread
    /// that never runs Python (TF's kernels) is busy, and the rest of the process says it
    /// waits for input (`waiting`: a Python producer is making a batch and no other
    /// thread holds the GIL) or cannot say (`!waiting`: no Python producer in the window,
    /// another thread holds the GIL, or the threads were not read at that tick).
    StepInput {
        /// Parts of the step's file paths.
        steps: &'static [&'static str],
        /// Which of the two decisions this rule makes.
        waiting: bool,
    },
}

/// What the rest of the process did at a sample's tick, beyond the sampled thread's own
/// stack: what [`Matcher::StepInput`] reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// Whether threads that never ran Python (TensorFlow's kernels, XLA's) were on a CPU
    /// for at least half of a short look; `None` where the threads were not read at that
    /// tick.
    pub native_on_cpu: Option<bool>,
    /// Whether a Python input producer was making a batch at that tick: `None` where none
    /// ran beside the training thread in the window. A producer is a `py_func` thread
    /// (`tf.numpy_function`, `tf.py_function`, `Dataset.from_generator`, which Keras uses
    /// for a generator or a `PyDataset`) or a Keras enqueuer's worker
    /// ([`PRODUCER_FRAMES`]); it is making a batch while it has a frame there.
    pub producer_working: Option<bool>,
    /// Whether another Python thread held the GIL at that tick: a training thread off the
    /// CPU may then be waiting for the GIL rather than for its input.
    pub gil_elsewhere: bool,
}

/// Frames of a Python input producer making a batch beside the training thread.
pub const PRODUCER_FRAMES: &[&str] = &[
    "/tensorflow/python/ops/script_ops.py",
    "/keras/src/trainers/data_adapters/",
    "/keras/utils/data_utils.py",
    "/keras/src/utils/data_utils.py",
];

/// Keras's compiled train steps that call the input iterator's `GetNext` inside the
/// function (`multi_step_on_iterator` in Keras 3, `step_function` in Keras 2).
pub(crate) const KERAS_STEPS: &[&str] = &[
    "/keras/src/backend/tensorflow/trainer.py",
    "keras/src/engine/training.py",
    "/keras/engine/training.py",
];

/// The user's own compiled step that pulls its input: a `tf.function` of the user's code,
/// called with an iterator (`train_step(train_iterator)` with `next(iterator)` inside, as
/// TensorFlow's custom and distributed training loops write it). Not a file: the
/// [`Matcher::StepInput`] rule with these `steps` matches [`own_step`] instead.
pub(crate) const OWN_STEP: &[&str] = &["<a tf.function of the user's code given an iterator>"];

/// A frame of a TensorFlow function being executed natively (`quick_execute`): below it,
/// the thread runs no Python until the function returns.
const IN_TF_FUNCTION: &str = "/tensorflow/python/eager/execute.py";

/// Whether a stack runs a TensorFlow function from the user's code at all: where the
/// sampler reads the threads beside it, for [`own_step`] to judge.
pub(crate) fn in_tf_function(frames: &[Frame]) -> bool {
    frames.iter().any(|f| f.filename.contains(IN_TF_FUNCTION))
        && frames.iter().any(|f| is_user_file(&f.filename))
}

/// Whether a stack runs the user's own `tf.function` given an iterator, which then pulls
/// its batch inside, where no Python frame shows the wait: the innermost frame of the
/// user's code calls something with an argument named like an iterator (`iterator`,
/// `train_iter`, `dist_iterator`, `it`, `iter(ds)`). A step given a batch (`for x in ds:
/// train_step(x)`) waits in the loop's `for` line instead, which the rules above read.
pub(crate) fn own_step(frames: &[Frame], line: &mut impl FnMut(&Frame) -> Option<String>) -> bool {
    if !frames.iter().any(|f| f.filename.contains(IN_TF_FUNCTION)) {
        return false;
    }
    let Some(caller) = frames.iter().find(|f| is_user_file(&f.filename)) else {
        return false;
    };
    line(caller).is_some_and(|t| calls_with_iterator(&t))
}

/// `loss = train_step(train_iterator)`, `step(iter(ds))`: a call whose argument is named
/// like an iterator or is `iter(...)`.
fn calls_with_iterator(text: &str) -> bool {
    let Some(open) = text.find('(') else {
        return false;
    };
    let args = &text[open + 1..];
    if args.contains("iter(") {
        return true;
    }
    args.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .any(|w| {
            let w = w.to_ascii_lowercase();
            w == "it" || w.ends_with("iter") || w.ends_with("iterator")
        })
}

/// Whether a stack runs a TensorFlow function inside one of the compiled steps `steps`
/// (a frame of one of them above [`IN_TF_FUNCTION`]): where [`Matcher::StepInput`]
/// applies, and so where the sampler reads the threads beside it.
pub(crate) fn in_step(frames: &[Frame], steps: &[&str]) -> bool {
    frames.iter().any(|f| f.filename.contains(IN_TF_FUNCTION))
        && frames
            .iter()
            .any(|f| steps.iter().any(|s| f.filename.contains(s)))
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// What a match means.
    pub class: Class,
    /// How it matches.
    pub matcher: Matcher,
    /// The rule in words, for the evidence.
    pub what: &'static str,
    /// Where the names come from.
    pub source: &'static str,
}

const FOR_LINE: &[&str] = &["for ", "async for "];
const NEXT_CALL: &[&str] = &["next(", "__next__("];

/// The rules, in precedence order.
pub const RULES: &[Rule] = &[
    Rule {
        class: Class::DataWait,
        matcher: Matcher::Frame {
            file: "/torch/utils/data/dataloader.py",
            functions: &[
                "__next__",
                "_next_data",
                "_get_data",
                "_try_get_data",
                "_next_index",
            ],
        },
        what: "torch DataLoader iterator",
        source: "PyTorch torch/utils/data/dataloader.py: _BaseDataLoaderIter.__next__ calls _next_data; the multi-process iterator waits in _get_data/_try_get_data",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::Frame {
            file: "/tensorflow/python/data/ops/",
            functions: &["__next__", "_next_internal", "get_next", "next"],
        },
        what: "tf.data iterator",
        source: "TensorFlow tensorflow/python/data/ops/iterator_ops.py OwnedIterator.__next__ -> _next_internal -> gen_dataset_ops.iterator_get_next (GetNext, C++); dataset_ops.py _NumpyIterator.__next__ (as_numpy_iterator, the JAX route)",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::Frame {
            file: "/grain/",
            functions: &["__next__", "_next", "get_next"],
        },
        what: "Grain iterator",
        source: "Grain (JAX data loading) grain/_src/python/data_loader.py DataLoaderIterator.__next__ and the dataset iterators' __next__",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::Frame {
            file: "/flax/jax_utils.py",
            functions: &["prefetch_to_device", "_prefetch"],
        },
        what: "Flax prefetch_to_device",
        source: "Flax flax/jax_utils.py prefetch_to_device, the JAX examples' input iterator",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::Frame {
            file: "/gpufeed/",
            functions: &["__iter__", "__next__", "loader", "dataset"],
        },
        what: "gpufeed loader adapter",
        source: "gpufeed python/gpufeed/{torch,tf,jax}.py: the framework adapters iterate gpufeed.Loader",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::CallerLine {
            starts: FOR_LINE,
            contains: NEXT_CALL,
        },
        what: "the loop's `for`/`next()` running the iterator (a generator or Python __next__)",
        source: "Python language reference, 'The for statement': each iteration calls the iterator's __next__; a generator's body runs as a frame below the loop's",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::IdleLeafLineStart(FOR_LINE),
        what: "the loop's `for` line blocked in a native iterator (gpufeed.Loader, a C extension)",
        source: "CPython FOR_ITER: a native __next__ (gpufeed.Loader, tf.data GetNext) runs with no Python frame, so the loop's own `for` line is the innermost frame; blocked (off the CPU) it waits for the next item",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::IdleLeafLine(NEXT_CALL),
        what: "`next(...)` blocked in a native iterator",
        source: "Python builtins next(): calls the iterator's native __next__ with no Python frame",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::StepInput {
            steps: KERAS_STEPS,
            waiting: true,
        },
        what: "Keras's compiled step waiting for its input: its Python producer runs while no TF kernel does",
        source: "Keras keras/src/backend/tensorflow/trainer.py: fit's train_function runs iterator.get_next() inside the tf.function (multi_step_on_iterator), so the wait has no Python frame; the step's heavy kernels run in TF's intra-op pool, whose threads never run Python (TF's inter-op pool, tf_Compute, also runs tf.data's own functions, so it is not counted), so a tick where none of them is busy while the producer makes a batch is the wait",
    },
    Rule {
        class: Class::Other,
        matcher: Matcher::StepInput {
            steps: KERAS_STEPS,
            waiting: false,
        },
        what: "Keras's compiled step, idle, where sampling cannot tell a wait for input from a wait for the GIL or from tf.data's own work",
        source: "tf.data runs its ops on the same unnamed native threads as the step's kernels, so with an input of TF ops only the threads on the CPU cannot say which of the two runs (the TF Profiler's input-pipeline analyzer can); a thread returning from the function waits for the GIL while a producer holds it (CPython ceval_gil.c: a waiter asks for it after the 5 ms switch interval), which looks the same as waiting for the batch",
    },
    Rule {
        class: Class::DataWait,
        matcher: Matcher::StepInput {
            steps: OWN_STEP,
            waiting: true,
        },
        what: "your tf.function given an iterator, waiting for its input: its Python producer runs while no TF kernel does",
        source: "TensorFlow's custom training loops (tf.distribute: `@tf.function def train_step(iterator): ... next(iterator)`) pull the batch inside the function, so the wait has no Python frame, as in Keras's step; read the same way, through the threads beside it",
    },
    Rule {
        class: Class::Other,
        matcher: Matcher::StepInput {
            steps: OWN_STEP,
            waiting: false,
        },
        what: "your tf.function given an iterator, idle, where sampling cannot tell a wait for input from a wait for the GIL or from tf.data's own work",
        source: "as for Keras's compiled step: tf.data's ops run on the step's own native threads, and a thread returning from the function waits for the GIL while a producer holds it",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/torch/serialization.py",
            functions: &[],
        },
        what: "torch.save / torch.load",
        source: "PyTorch torch/serialization.py",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/tensorflow/python/checkpoint/",
            functions: &[],
        },
        what: "tf.train.Checkpoint",
        source: "TensorFlow tensorflow/python/checkpoint/",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/orbax/",
            functions: &[],
        },
        what: "Orbax checkpointing (JAX)",
        source: "orbax-checkpoint",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/safetensors/",
            functions: &[],
        },
        what: "safetensors save/load",
        source: "safetensors Python package",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/logging/__init__.py",
            functions: &[],
        },
        what: "the logging module",
        source: "CPython Lib/logging/__init__.py",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/tensorboard",
            functions: &[],
        },
        what: "TensorBoard summary writers",
        source: "torch.utils.tensorboard, tensorboardX, tensorboard",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/wandb/",
            functions: &[],
        },
        what: "Weights & Biases logging",
        source: "wandb Python package",
    },
    Rule {
        class: Class::CheckpointLogging,
        matcher: Matcher::Frame {
            file: "/mlflow/",
            functions: &[],
        },
        what: "MLflow logging",
        source: "mlflow Python package",
    },
    Rule {
        class: Class::Sync,
        matcher: Matcher::Frame {
            file: "/torch/cuda/",
            functions: &["synchronize"],
        },
        what: "torch.cuda.synchronize",
        source: "PyTorch torch/cuda/__init__.py synchronize",
    },
    Rule {
        class: Class::Sync,
        matcher: Matcher::Frame {
            file: "/jax/",
            functions: &[
                "block_until_ready",
                "device_get",
                "__array__",
                "_value",
                "tolist",
                "item",
            ],
        },
        what: "JAX block_until_ready / device_get / conversion to NumPy",
        source: "JAX jax/_src/array.py ArrayImpl.block_until_ready, _value, __array__; jax/_src/api.py device_get",
    },
    Rule {
        class: Class::Sync,
        matcher: Matcher::LeafLine(&[
            ".item()",
            ".cpu()",
            ".numpy()",
            ".tolist()",
            "float(",
            ".to(\"cpu\")",
            ".to('cpu')",
            "torch.cuda.synchronize",
            "block_until_ready",
            "jax.device_get",
        ]),
        what: "a line of the user's own code that copies a device value to the host",
        source: "PyTorch CUDA semantics ('Asynchronous execution': .item(), .cpu(), printing a tensor and torch.cuda.synchronize wait for the GPU); JAX 'Asynchronous dispatch' (block_until_ready, conversion to NumPy)",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::Frame {
            file: "/torch/",
            functions: &[],
        },
        what: "PyTorch (forward, backward, optimizer)",
        source: "PyTorch: torch/nn/modules (forward), torch/autograd and torch/_tensor.py backward, torch/optim",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::Frame {
            file: "/tensorflow/",
            functions: &[],
        },
        what: "TensorFlow ops and tf.function",
        source: "TensorFlow tensorflow/python/eager (execute, polymorphic_function)",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::Frame {
            file: "/keras/",
            functions: &[],
        },
        what: "Keras train_step / layers",
        source: "Keras keras/src/trainers, keras/src/layers",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::Frame {
            file: "/jax/",
            functions: &[],
        },
        what: "JAX dispatch (jit, pjit)",
        source: "JAX jax/_src/pjit.py, dispatch.py",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::Frame {
            file: "/numpy/",
            functions: &[],
        },
        what: "NumPy",
        source: "NumPy Python layer",
    },
    Rule {
        class: Class::Compute,
        matcher: Matcher::ActiveUserLeaf,
        what: "the user's own code on the CPU",
        source: "py-spy reports whether the thread is on the CPU (/proc/PID/task/TID/stat state R)",
    },
];

/// Whether `file` is the user's own code: not the standard library, not an installed
/// package, not a synthetic file (`<frozen ...>`, `<string>`).
#[must_use]
pub fn is_user_file(file: &str) -> bool {
    if file.starts_with('<') || file.is_empty() {
        return false;
    }
    if file.contains("/site-packages/") || file.contains("/dist-packages/") {
        return false;
    }
    // The standard library: .../lib/python3.11/x.py (and lib64).
    let std = file.split('/').collect::<Vec<_>>();
    !std.windows(2).any(|w| {
        (w[0] == "lib" || w[0] == "lib64")
            && w[1].starts_with("python")
            && w[1][6..].chars().next().is_some_and(|c| c.is_ascii_digit())
    })
}

/// What decided a sample's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The class.
    pub class: Class,
    /// The index in [`RULES`] that matched; `None` for `Other`.
    pub rule: Option<usize>,
}

/// Classifies one stack (`frames[0]` innermost, as py-spy gives them). `line` returns the
/// text of a frame's source line, trimmed, if it can be read. [`classify_in`] with no
/// knowledge of the rest of the process.
pub fn classify(
    frames: &[Frame],
    active: bool,
    line: impl FnMut(&Frame) -> Option<String>,
) -> Decision {
    classify_in(frames, active, Context::default(), line)
}

/// [`classify`] with what the rest of the process did at the sample's tick.
pub fn classify_in(
    frames: &[Frame],
    active: bool,
    ctx: Context,
    mut line: impl FnMut(&Frame) -> Option<String>,
) -> Decision {
    let leaf_user = frames.first().filter(|f| is_user_file(&f.filename));
    let mut leaf_text: Option<Option<String>> = None;
    for (i, rule) in RULES.iter().enumerate() {
        let hit = match rule.matcher {
            Matcher::Frame { file, functions } => frames.iter().any(|f| {
                f.filename.contains(file)
                    && (functions.is_empty() || functions.contains(&f.name.as_str()))
            }),
            Matcher::LeafLine(parts)
            | Matcher::IdleLeafLine(parts)
            | Matcher::IdleLeafLineStart(parts) => {
                let Some(leaf) = leaf_user else { continue };
                let idle_only = !matches!(rule.matcher, Matcher::LeafLine(_));
                if idle_only && active {
                    continue;
                }
                let text = leaf_text.get_or_insert_with(|| line(leaf));
                text.as_deref().is_some_and(|t| match rule.matcher {
                    Matcher::IdleLeafLineStart(_) => parts.iter().any(|p| t.starts_with(p)),
                    _ => parts.iter().any(|p| t.contains(p)),
                })
            }
            Matcher::CallerLine { starts, contains } => frames.iter().skip(1).any(|f| {
                is_user_file(&f.filename)
                    && line(f).is_some_and(|t| {
                        starts.iter().any(|p| t.starts_with(p))
                            || contains.iter().any(|p| t.contains(p))
                    })
            }),
            Matcher::ActiveUserLeaf => active && leaf_user.is_some(),
            Matcher::StepInput { steps, waiting } => {
                let in_step = !active
                    && if std::ptr::eq(steps, OWN_STEP) {
                        own_step(frames, &mut line)
                    } else {
                        in_step(frames, steps)
                    };
                // A TF kernel on the CPU, or a producer with nothing to make (its prefetch
                // buffer full), is the step computing: neither rule, the compute rules
                // below decide. Else the step waits for its input unless another thread
                // holds the GIL (then perhaps for the GIL: it cannot be told).
                let undecided = (false, true);
                let (wait, unknown) = match (ctx.native_on_cpu, ctx.producer_working) {
                    (Some(true), _) | (Some(false), Some(false)) => (false, false),
                    (Some(false), Some(true)) if !ctx.gil_elsewhere => (true, false),
                    (Some(false), Some(true)) | (None, _) | (_, None) => undecided,
                };
                in_step && if waiting { wait } else { unknown }
            }
        };
        if hit {
            return Decision {
                class: rule.class,
                rule: Some(i),
            };
        }
    }
    Decision {
        class: Class::Other,
        rule: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, file: &str, line: i32) -> Frame {
        Frame {
            name: name.to_owned(),
            filename: file.to_owned(),
            module: None,
            short_filename: None,
            line,
            locals: None,
            is_entry: true,
            is_shim_entry: false,
        }
    }

    const SITE: &str = "/venv/lib/python3.11/site-packages";

    fn lines(text: &'static [(i32, &'static str)]) -> impl FnMut(&Frame) -> Option<String> {
        move |f: &Frame| {
            text.iter()
                .find(|(n, _)| *n == f.line)
                .map(|(_, t)| (*t).to_owned())
        }
    }

    #[test]
    fn user_files() {
        assert!(is_user_file("/home/a/train.py"));
        assert!(!is_user_file("/usr/lib/python3.11/queue.py"));
        assert!(!is_user_file(&format!("{SITE}/torch/nn/modules/linear.py")));
        assert!(!is_user_file("<frozen importlib._bootstrap>"));
        assert!(is_user_file("/home/a/lib/pythonic/x.py"));
    }

    #[test]
    fn dataloader_wait_wins_over_what_the_dataset_does() {
        let frames = vec![
            frame("info", "/usr/lib/python3.11/logging/__init__.py", 10),
            frame("__getitem__", "/home/a/data.py", 40),
            frame(
                "_next_data",
                &format!("{SITE}/torch/utils/data/dataloader.py"),
                1,
            ),
            frame(
                "__next__",
                &format!("{SITE}/torch/utils/data/dataloader.py"),
                2,
            ),
            frame("train", "/home/a/train.py", 12),
        ];
        let d = classify(&frames, true, lines(&[(12, "for x in loader:")]));
        assert_eq!(d.class, Class::DataWait);
    }

    #[test]
    fn generator_driving_the_loop_is_a_data_wait() {
        let frames = vec![
            frame("sleep_source", "/home/a/loop.py", 8),
            frame("main", "/home/a/loop.py", 20),
        ];
        let d = classify(
            &frames,
            false,
            lines(&[
                (8, "time.sleep(0.01)"),
                (20, "for batch in sleep_source():"),
            ]),
        );
        assert_eq!(d.class, Class::DataWait);
    }

    #[test]
    fn native_iterator_shows_as_the_for_line() {
        let frames = vec![frame("main", "/home/a/loop.py", 20)];
        let d = classify(&frames, false, lines(&[(20, "for batch in loader:")]));
        assert_eq!(d.class, Class::DataWait);
        // On the CPU, a `for` line is a plain loop (`for i in range(n)`), not a wait.
        let d = classify(&frames, true, lines(&[(20, "for i in range(200):")]));
        assert_eq!(d.class, Class::Compute);
    }

    #[test]
    fn item_on_the_users_line_is_a_sync_and_forward_is_compute() {
        let leaf = vec![frame("train", "/home/a/train.py", 30)];
        let d = classify(&leaf, false, lines(&[(30, "total += loss.item()")]));
        assert_eq!(d.class, Class::Sync);
        let fwd = vec![
            frame("forward", &format!("{SITE}/torch/nn/modules/linear.py"), 5),
            frame("train", "/home/a/train.py", 28),
        ];
        let d = classify(&fwd, true, lines(&[(28, "out = model(x)")]));
        assert_eq!(d.class, Class::Compute);
    }

    #[test]
    fn idle_user_code_outside_every_rule_is_other() {
        let leaf = vec![frame("train", "/home/a/train.py", 30)];
        let d = classify(&leaf, false, lines(&[(30, "time.sleep(1)")]));
        assert_eq!(d.class, Class::Other);
        let d = classify(&leaf, true, lines(&[(30, "x = heavy(x)")]));
        assert_eq!(d.class, Class::Compute);
    }

    #[test]
    fn checkpoint_outranks_the_syncs_inside_it() {
        let frames = vec![
            frame("_save", &format!("{SITE}/torch/serialization.py"), 5),
            frame("train", "/home/a/train.py", 50),
        ];
        let d = classify(&frames, true, lines(&[(50, "torch.save(model.cpu(), p)")]));
        assert_eq!(d.class, Class::CheckpointLogging);
    }

    #[test]
    fn every_rule_has_a_source() {
        for r in RULES {
            assert!(!r.source.is_empty() && !r.what.is_empty());
        }
    }

    #[test]
    fn own_tf_function_given_an_iterator_is_a_step_that_pulls_its_input() {
        let frames = |caller: i32| {
            vec![
                frame(
                    "quick_execute",
                    &format!("{SITE}/tensorflow/python/eager/execute.py"),
                    53,
                ),
                frame(
                    "__call__",
                    &format!(
                        "{SITE}/tensorflow/python/eager/polymorphic_function/polymorphic_function.py"
                    ),
                    833,
                ),
                frame("<module>", "/home/a/train.py", caller),
            ]
        };
        let text: &'static [(i32, &'static str)] = &[
            (20, "loss = train_step(train_iterator)"),
            (21, "loss = train_step(batch)"),
            (22, "out = step(iter(ds))"),
        ];
        let idle = Context {
            native_on_cpu: Some(false),
            producer_working: Some(true),
            gil_elsewhere: false,
        };
        let class =
            |line: i32, ctx: Context| classify_in(&frames(line), false, ctx, lines(text)).class;
        assert_eq!(class(20, idle), Class::DataWait);
        assert_eq!(class(22, idle), Class::DataWait);
        // Given a batch, the step has its input: the loop's `for` line shows any wait.
        assert_ne!(class(21, idle), Class::DataWait);
        // A TF kernel busy: the step computes.
        let busy = Context {
            native_on_cpu: Some(true),
            ..idle
        };
        assert_ne!(class(20, busy), Class::DataWait);
        // Another thread holds the GIL: it cannot be told.
        let gil = Context {
            gil_elsewhere: true,
            ..idle
        };
        assert_eq!(class(20, gil), Class::Other);
        assert!(in_tf_function(&frames(21)));
        assert!(calls_with_iterator("x = f(dist_iterator)"));
        assert!(!calls_with_iterator("x = f(iterations, n_items)"));
    }
}
