"""`gpufeed trace` on real PyTorch profiler traces recorded here, by the torch installed
(the shared V100 traces are from 2021-2023 versions; this checks the format of today's).

These machines have no GPU, so the traces are CPU-only: what is checked is that the reader
takes the current format whole (metadata, categories, `ProfilerStep#N`, the DataLoader's
`__next__`), says that a CPU-only profile has no GPU to judge, and exits 0."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

import gpufeed

from conftest import run_cli

jsonschema = pytest.importorskip("jsonschema")


# Recorded in a child process: importing torch's compiler stack (which `torch.optim` does)
# after TensorFlow is loaded aborts the process (their native libraries clash), and the
# other tests of this session load TensorFlow.
RECORD = """
import sys, json, torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, TensorDataset
folder, workers, repeat, batches, options = sys.argv[1], *map(int, sys.argv[2:5]), json.loads(sys.argv[5])
torch.manual_seed(0)
data = TensorDataset(torch.randn(32 * batches, 64), torch.randint(0, 10, (32 * batches,)))
loader = DataLoader(data, batch_size=32, num_workers=workers)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with profile(
    activities=[ProfilerActivity.CPU],
    schedule=schedule(wait=1, warmup=1, active=4, repeat=repeat),
    on_trace_ready=tensorboard_trace_handler(folder, use_gzip=True),
    **options,
) as prof:
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
"""


def record(
    folder: pathlib.Path, *, workers: int, repeat: int, batches: int = 8, **options
) -> None:
    """A small training loop over a torch DataLoader under `torch.profiler`, written by
    `tensorboard_trace_handler` (gzip), one cycle of 1 wait, 1 warm-up and 4 active steps
    per `repeat` (0: cycles until the loop ends, as the schedule's default); `options` go
    to `torch.profiler.profile` (`record_shapes`, `with_stack`, `profile_memory`)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (pip install torch)")
    args = [str(folder), str(workers), str(repeat), str(batches), json.dumps(options)]
    p = subprocess.run(
        [sys.executable, "-c", RECORD, *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr


def trace_json(folder: pathlib.Path) -> tuple[dict, str]:
    code, out, err = run_cli("trace", str(folder), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, gpufeed.schema("profiler"))
    return doc, err


EVERYTHING = {"record_shapes": True, "with_stack": True, "profile_memory": True}


@pytest.mark.parametrize(
    "workers, options",
    [(0, {}), (2, {}), (0, EVERYTHING)],
    ids=["0-workers", "2-workers", "shapes-stacks-memory"],
)
def test_a_real_cpu_profile_is_read_whole_and_judged_cpu_only(tmp_path, workers, options):
    # With every option on, the trace also holds Python stack events, memory instants
    # (`ph: i`) and input shapes in `args`: nothing of it may stop the reader.
    record(tmp_path, workers=workers, repeat=1, **options)
    files = list(tmp_path.glob("*.pt.trace.json.gz"))
    assert len(files) == 1, files
    doc, err = trace_json(tmp_path)
    assert doc["format"] == "pytorch"
    assert "CPU-only profile?" in err
    (rank,) = doc["ranks"]
    assert rank["rank"] == 0
    assert rank["temporal"] is None and rank["verdict"] is None
    # Active steps #2..#5; the last one is left out, as HTA does.
    assert rank["window"]["steps_in_file"] == 4
    steps = rank["steps"]
    assert [s["step"] for s in steps] == [2, 3, 4]
    for s in steps:
        # Each step starts by taking the next batch: the DataLoader's `__next__` is found in
        # the current format, for the single-process and the multi-process iterator alike.
        assert 0 < s["data_wait_us"] < s["dur_us"], s
        assert s["kernels"] == 0 and s["gpu_busy_us"] == 0


def test_a_folder_of_several_profiling_cycles_analyses_the_fullest(tmp_path):
    # 12 batches with cycles of 6 steps: two full cycles and a trailing one with no
    # active step, as the handler writes them (one file each, all rank 0).
    record(tmp_path, workers=0, repeat=0, batches=14)
    files = sorted(tmp_path.glob("*.pt.trace.json.gz"))
    assert len(files) >= 2, files
    doc, err = trace_json(tmp_path)
    (rank,) = doc["ranks"]
    assert "files are rank 0" in err and err.count("files are rank 0") == 1
    # Not the last file (the trailing cycle's two steps), but one with all four steps.
    assert rank["window"]["steps_in_file"] == 4, (rank["file"], err)
