//! `gpufeed lint` on a generated 400-file repository that is hard on purpose.
//!
//! ```text
//! cargo bench -p gpufeed-doctor --bench lint_repo
//! GPUFEED_BENCH_KEEP=/tmp/repo cargo bench -p gpufeed-doctor --bench lint_repo  # keep it
//! ```
//!
//! The repository (written to a temporary folder, about 60 000 lines):
//!
//! - 400 Python files in 20 packages; each has 12 helper functions that import and call
//!   helpers of the next files, and the last file's call the first's, so the helpers call
//!   each other in cycles across the whole repository;
//! - `train.py`: a loop over a `DataLoader` whose `train_step` is 5 files deep from the
//!   loop (`train.py` -> `core/s0.py` -> ... -> `core/s4.py`, which calls `.item()`);
//! - 40 more training loops, each calling into the helper cycle, and 40 datasets whose
//!   `__getitem__` calls into it and decodes audio 3 calls down; 40 `collate_fn`s.
//!
//! Reported: the best and the median wall time of `lint_paths` over the folder over
//! `GPUFEED_BENCH_ROUNDS` runs (default 5), the files, and the findings (the call chain
//! of the deep sync is printed, so a run that misses it shows).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use gpufeed_lint::lint_paths;

const PACKAGES: usize = 20;
const FILES_PER_PACKAGE: usize = 20;
const HELPERS: usize = 12;
const DEEP: usize = 5;

fn module(i: usize) -> (String, String) {
    let (p, f) = (i / FILES_PER_PACKAGE, i % FILES_PER_PACKAGE);
    (format!("pkg{p}"), format!("m{f}"))
}

/// One helper file: imports of the next two files' helpers, 12 helpers calling them (and
/// each other), a training loop or a dataset every tenth file.
fn helper_file(i: usize, total: usize) -> String {
    let mut s = String::new();
    let next = (i + 1) % total;
    let skip = (i + 7) % total;
    for n in [next, skip] {
        let (p, m) = module(n);
        let names: Vec<String> = (0..HELPERS).map(|h| format!("h{n}_{h}")).collect();
        writeln!(s, "from {p}.{m} import {}", names.join(", ")).unwrap();
    }
    s.push_str(
        "import librosa\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n",
    );
    for h in 0..HELPERS {
        let a = format!("h{next}_{}", (h + 1) % HELPERS);
        let b = format!("h{skip}_{}", (h + 5) % HELPERS);
        let c = format!("h{i}_{}", (h + 3) % HELPERS);
        writeln!(
            s,
            "\ndef h{i}_{h}(x, losses=None):\n    \"\"\"Helper {h} of file {i}.\"\"\"\n    \
             y = {a}(x) + {b}(x)\n    if x > 3:\n        y = {c}(y)\n    for k in range(3):\n        \
             y = y * k + len(str(y))\n    total = sum(v for v in [y, x, k])\n    \
             return total if losses is None else losses"
        )
        .unwrap();
    }
    if i % 10 == 3 {
        writeln!(
            s,
            "\n\ndef fit_{i}(model, opt, loader):\n    for step, batch in enumerate(loader):\n        \
             loss = model(batch).mean()\n        loss.backward()\n        opt.step()\n        \
             h{i}_0(step, loss)\n        h{next}_4(step)"
        )
        .unwrap();
    }
    if i % 10 == 6 {
        writeln!(
            s,
            "\n\nclass Set{i}(Dataset):\n    def __init__(self, paths):\n        self.paths = paths\n\n    \
             def __len__(self):\n        return len(self.paths)\n\n    def load(self, p):\n        \
             return self.decode(p)\n\n    def decode(self, p):\n        \
             return librosa.load(p)[0]\n\n    def __getitem__(self, i):\n        \
             h{i}_2(i)\n        return torch.from_numpy(self.load(self.paths[i]))\n\n\n\
             def collate_{i}(batch):\n    h{skip}_1(len(batch))\n    return torch.stack(batch)\n\n\n\
             LOADER_{i} = DataLoader(Set{i}([]), batch_size=8, num_workers=1, collate_fn=collate_{i})"
        )
        .unwrap();
    }
    s
}

fn generate(root: &Path) -> usize {
    // 400 `.py` files in all: the packages' `__init__.py`, the helpers, the deep step's
    // files and `train.py`.
    let packages = PACKAGES - 1; // 375 helper files fill 19 packages of 20
    let total = PACKAGES * FILES_PER_PACKAGE - packages - DEEP - 1;
    for i in 0..total {
        let (p, m) = module(i);
        let dir = root.join(&p);
        fs_err::create_dir_all(&dir).unwrap();
        if !dir.join("__init__.py").exists() {
            fs_err::write(dir.join("__init__.py"), "").unwrap();
        }
        fs_err::write(dir.join(format!("{m}.py")), helper_file(i, total)).unwrap();
    }
    // The train step, five files deep; each level also calls into the helper cycle.
    let core = root.join("core");
    fs_err::create_dir_all(&core).unwrap();
    for d in 0..DEEP {
        let body = if d + 1 < DEEP {
            format!(
                "from core.s{n} import level{n}\nfrom pkg0.m{d} import h{d}_0\n\n\n\
                 def level{d}(model, batch, losses):\n    h{d}_0(1)\n    \
                 return level{n}(model, batch, losses)\n",
                n = d + 1
            )
        } else {
            format!(
                "from pkg1.m1 import h{h}_3\n\n\n\
                 def level{d}(model, batch, losses):\n    h{h}_3(2)\n    \
                 return losses['total'].detach().cpu().item()\n",
                h = FILES_PER_PACKAGE + 1
            )
        };
        fs_err::write(core.join(format!("s{d}.py")), body).unwrap();
    }
    fs_err::write(
        root.join("train.py"),
        "import torch\nfrom torch.utils.data import DataLoader\n\nfrom core.s0 import level0\n\n\n\
         def train_step(model, opt, batch):\n    losses = {'total': model(batch).mean()}\n    \
         losses['total'].backward()\n    opt.step()\n    return level0(model, batch, losses)\n\n\n\
         def main(model, opt, dataset):\n    loader = DataLoader(dataset, batch_size=16, num_workers=8, \
         persistent_workers=True)\n    for batch in loader:\n        train_step(model, opt, batch)\n",
    )
    .unwrap();
    total + packages + DEEP + 1
}

fn main() {
    let rounds: usize = std::env::var("GPUFEED_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let tmp = tempfile::tempdir().unwrap();
    let root = std::env::var_os("GPUFEED_BENCH_KEEP")
        .map_or_else(|| tmp.path().to_path_buf(), std::path::PathBuf::from);
    let files = generate(&root);
    let mut times = Vec::new();
    let mut outcome = None;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        let o = lint_paths(std::slice::from_ref(&root)).unwrap();
        times.push(start.elapsed().as_secs_f64());
        outcome = Some(o);
    }
    times.sort_by(f64::total_cmp);
    let o = outcome.unwrap();
    println!(
        "lint_repo: {files} files generated, {} linted, {} findings",
        o.files,
        o.findings.len()
    );
    println!(
        "lint_repo: best {:.3} s, median {:.3} s over {} runs",
        times[0],
        times[times.len() / 2],
        times.len()
    );
    match o.findings.iter().find(|f| {
        f.id == "host-sync-in-loop" && f.path.as_deref().is_some_and(|p| p.ends_with("s4.py"))
    }) {
        Some(f) => println!("lint_repo: deep sync found: {}", f.evidence),
        None => println!("lint_repo: deep sync NOT found"),
    }
}
