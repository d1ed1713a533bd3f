"""gpufeed.tf, gpufeed.jax and gpufeed.torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gpufeed


@pytest.mark.parametrize("module, package", [("torch", "torch"), ("tf", "tensorflow"), ("jax", "jax")])
def test_a_missing_framework_names_the_pip_package(module, package):
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        f"try:\n    import gpufeed.{module}\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert f"pip install {package}" in out.stdout, out.stdout + out.stderr


def test_importing_gpufeed_imports_no_framework():
    code = "import sys, gpufeed; print(sorted(m for m in ('torch','tensorflow','jax') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_tf_dataset_has_a_static_spec_and_traces_once(demo_cache):
    tf = pytest.importorskip("tensorflow")
    from gpufeed.tf import dataset

    loader = gpufeed.Loader(demo_cache, batch_size=8, workers=2, pad="static", seed=4)
    ds = dataset(loader)
    spec = ds.element_spec
    for name in ("mel", "tokens", "mel_lengths", "token_lengths", "ids"):
        assert spec[name].shape.is_fully_defined(), f"{name}: {spec[name].shape}"
    assert spec["mel"].shape.as_list() == [8, int(demo_cache.mel_lengths.max()), 80]
    traces = []

    @tf.function
    def step(batch):
        traces.append(1)  # runs only while tracing
        masked = batch["mel"] * tf.cast(batch["mel_lengths"][:, None, None] > 0, tf.float32)
        return tf.reduce_sum(masked), tf.reduce_sum(batch["token_lengths"])

    reference = gpufeed.Loader(demo_cache, batch_size=8, workers=1, pad="static", seed=4)
    for epoch in range(3):
        want = [
            (float(np.sum(b["mel"], dtype=np.float64)), int(b["token_lengths"].sum()))
            for b in reference
        ]
        got = []
        for batch in ds:
            total, tokens = step(batch)
            got.append((float(total), int(tokens)))
            assert int(batch["epoch"]) == epoch
        assert len(got) == len(want) == len(loader)
        for (a, n), (b, m) in zip(got, want):
            assert n == m and a == pytest.approx(b, rel=1e-5)
    assert len(traces) == 1, f"traced {len(traces)} times over 3 epochs"


def test_tf_longest_padding_gives_a_dynamic_spec(demo_cache):
    pytest.importorskip("tensorflow")
    from gpufeed.tf import element_spec

    spec = element_spec(gpufeed.Loader(demo_cache, batch_size=8, pad="longest"))
    assert spec["mel"].shape.as_list() == [None, None, 80]


def test_tf_batches_share_the_memory(demo_cache):
    pytest.importorskip("tensorflow")
    from gpufeed.tf import batches

    loader = gpufeed.Loader(demo_cache, batch_size=8, workers=1)
    first = next(iter(batches(loader)))
    assert first["mel"].shape == (8, int(demo_cache.mel_lengths.max()), 80)
    assert first["ids"].dtype.name == "string"


def test_jax_batches_share_the_memory_on_the_cpu(demo_cache):
    jax = pytest.importorskip("jax")
    from gpufeed.jax import batches

    loader = gpufeed.Loader(demo_cache, batch_size=8, workers=1, seed=2)
    n = 0
    for batch in batches(loader):
        assert isinstance(batch["mel"], jax.Array)
        assert batch["mel"].shape[0] == 8
        n += 1
    assert n == len(loader)
    on_device = next(batches(loader, device=jax.devices()[0]))
    assert on_device["mel"].shape[0] == 8


def test_torch_loader_on_the_cpu_shares_the_memory(demo_cache):
    torch = pytest.importorskip("torch")
    from gpufeed.torch import TorchLoader, to_torch

    loader = gpufeed.Loader(demo_cache, batch_size=8, workers=1)
    batch = next(iter(loader))
    t = to_torch(batch)
    assert t["mel"].data_ptr() == batch["mel"].ctypes.data
    assert t["tokens"].dtype == torch.int64
    # The loader goes on with the epoch it started: the 7 batches left, then a whole one.
    tl = TorchLoader(loader, device="cpu")
    assert len(list(tl)) == len(loader) - 1
    assert len(list(tl)) == len(loader)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="pin_memory"):
            TorchLoader(loader, pin_memory=True)
