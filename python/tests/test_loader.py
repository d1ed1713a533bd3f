"""`gpufeed.Loader`: batches, ownership, DLPack, resume, ranks, threads, bad input."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np

import pytest

import gpufeed

from conftest import threads


def ids_of(loader) -> list[list[str]]:
    return [list(b["ids"]) for b in loader]


def test_static_batches_hold_the_cache_items(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=8, workers=2, pad="static", drop_last=False)
    shapes = set()
    seen = []
    for batch in loader:
        mel, tokens = batch["mel"], batch["tokens"]
        assert mel.dtype == np.float32 and tokens.dtype == np.int64
        assert batch["mel_lengths"].dtype == np.int64 and batch["token_lengths"].dtype == np.int64
        shapes.add((mel.shape, tokens.shape))
        for r, (i, id_) in enumerate(zip(batch["items"], batch["ids"])):
            item = demo_cache[int(i)]
            assert item["id"] == id_
            n = batch["mel_lengths"][r]
            np.testing.assert_array_equal(mel[r, :n], item["mel"])
            assert not mel[r, n:].any(), "padding is zero"
            t = batch["token_lengths"][r]
            np.testing.assert_array_equal(tokens[r, :t], item["tokens"])
            seen.append(id_)
    assert len(shapes) == 1, f"one static shape: {shapes}"
    (mel_shape, tok_shape), = shapes
    assert mel_shape == (8, int(demo_cache.mel_lengths.max()), 80)
    assert tok_shape == (8, int(demo_cache.token_lengths.max()))
    assert sorted(seen) == sorted(demo_cache.ids)
    assert len(loader) == 8


def test_longest_padding_and_multiples(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=5, workers=1, pad="longest", pad_to_multiple=16)
    for b in loader:
        assert b["mel"].shape[1] % 16 == 0 and b["tokens"].shape[1] % 16 == 0
        assert b["mel"].shape[1] - int(b["mel_lengths"].max()) < 16


def test_static_caps_skip_or_truncate(demo_cache):
    cap = int(np.median(demo_cache.mel_lengths))
    skip = gpufeed.Loader(demo_cache, batch_size=4, max_mel_frames=cap, over_length="skip")
    stats = skip.plan_stats()
    assert stats["skipped_over_length"] == int((demo_cache.mel_lengths > cap).sum())
    cut = gpufeed.Loader(demo_cache, batch_size=4, max_mel_frames=cap, over_length="truncate")
    assert cut.plan_stats()["truncated"] == stats["skipped_over_length"]
    for b in cut:
        assert b["mel"].shape[1] == cap and (b["mel_lengths"] <= cap).all()


def test_batches_own_their_buffers_until_python_drops_them(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=2, prefetch=2)
    kept = list(loader)  # every batch of the epoch kept alive: none may be reused
    pointers = [b["mel"].ctypes.data for b in kept]
    assert len(set(pointers)) == len(kept), "a live batch's buffer was handed out again"
    copies = [b["mel"].copy() for b in kept]
    for b in loader:  # a second epoch while the first one's batches live
        pass
    loader.close()
    del loader
    gc.collect()
    for b, c in zip(kept, copies):
        np.testing.assert_array_equal(b["mel"], c)
    assert type(kept[0]["mel"].base).__name__ == "BatchBuffers"
    # Dropped, the buffers go back to the pool: a new epoch reuses them.
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=1, prefetch=1, shuffle=False)
    seen = set()
    for b in loader:
        seen.add(b["mel"].ctypes.data)
        del b
    assert len(seen) < len(loader), "buffers are recycled once Python lets go"


def test_writes_to_a_batch_stay_in_that_batch(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=1)
    first = next(iter(loader))
    first["mel"][:] = 7.0  # the user's own buffer
    for b in loader:
        assert not (b["mel"] == 7.0).all()


def test_dlpack_numpy_and_jax_share_the_memory(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=1)
    batch = next(iter(loader))
    mel = batch["mel"]
    assert mel.__dlpack_device__() == (1, 0)  # kDLCPU
    assert np.from_dlpack(mel).ctypes.data == mel.ctypes.data
    jax = pytest.importorskip("jax")
    j = jax.dlpack.from_dlpack(mel)
    assert j.unsafe_buffer_pointer() == mel.ctypes.data, "jax took the batch without a copy"
    np.testing.assert_array_equal(np.asarray(j), mel)
    # int64 tokens stay int64 (and uncopied) only with JAX's 64-bit mode on; without it
    # JAX narrows them to int32, a copy of its own making.
    jax.config.update("jax_enable_x64", True)
    try:
        t = jax.dlpack.from_dlpack(batch["tokens"])
        assert t.unsafe_buffer_pointer() == batch["tokens"].ctypes.data
    finally:
        jax.config.update("jax_enable_x64", False)


def test_dlpack_tensorflow_shares_the_memory(demo_cache):
    tf = pytest.importorskip("tensorflow")
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=1)
    mel = next(iter(loader))["mel"]
    t = tf.experimental.dlpack.from_dlpack(mel.__dlpack__())
    np.testing.assert_array_equal(t.numpy(), mel)

    class Capsule:  # numpy's from_dlpack takes an object with __dlpack__, not a capsule
        def __init__(self, capsule):
            self.capsule = capsule

        def __dlpack__(self, **kw):
            return self.capsule

        def __dlpack_device__(self):
            return (1, 0)

    back = np.from_dlpack(Capsule(tf.experimental.dlpack.to_dlpack(t)))
    assert back.ctypes.data == mel.ctypes.data, "tensorflow took the batch without a copy"


def test_dlpack_torch_shares_the_memory(demo_cache):
    torch = pytest.importorskip("torch")
    loader = gpufeed.Loader(demo_cache, batch_size=4, workers=1)
    batch = next(iter(loader))
    t = torch.from_dlpack(batch["mel"])
    assert t.data_ptr() == batch["mel"].ctypes.data
    assert torch.from_numpy(batch["tokens"]).data_ptr() == batch["tokens"].ctypes.data


def test_resume_mid_epoch_gives_the_rest_of_the_uninterrupted_run(demo_cache):
    kw = dict(batch_size=6, shuffle=True, seed=3, bucket_window=2, pad="longest")
    reference = gpufeed.Loader(demo_cache, workers=2, **kw)
    want = ids_of(reference) + ids_of(reference)  # epochs 0 and 1
    for stop_after in [0, 1, 5, len(reference) - 1, len(reference), len(reference) + 3]:
        first = gpufeed.Loader(demo_cache, workers=2, **kw)
        got = []
        it = iter(first)
        for _ in range(stop_after):
            try:
                got.append(list(next(it)["ids"]))
            except StopIteration:
                it = iter(first)
                got.append(list(next(it)["ids"]))
        state = first.state_dict()
        first.close()
        # Another process would restart from the saved state: here a new loader, with
        # another worker count (the order never depends on it).
        resumed = gpufeed.Loader(demo_cache, workers=1, **kw)
        resumed.load_state_dict(state)
        while len(got) < len(want):
            got.extend(ids_of(resumed))
        assert got == want, f"stopped after {stop_after}"


def test_epochs_advance_by_themselves_and_set_epoch_seeks(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=8, seed=1)
    e0 = ids_of(loader)
    assert loader.epoch == 1
    e1 = ids_of(loader)
    assert e0 != e1, "a new epoch, a new order"
    loader.set_epoch(0)
    assert ids_of(loader) == e0
    other = gpufeed.Loader(demo_cache, batch_size=8, seed=1, epoch=1)
    assert ids_of(other) == e1


def test_a_state_from_another_cache_or_other_settings_is_refused(demo_cache, lj_cache):
    a = gpufeed.Loader(demo_cache, batch_size=4)
    state = a.state_dict()
    b = gpufeed.Loader(lj_cache, batch_size=4)
    with pytest.raises(ValueError, match="another cache"):
        b.load_state_dict(state)
    c = gpufeed.Loader(demo_cache, batch_size=8)
    with pytest.raises(ValueError, match="batch_size: saved 4, now 8"):
        c.load_state_dict(state)
    with pytest.raises(ValueError, match="not a gpufeed Loader state"):
        c.load_state_dict({"epoch": 0})


@pytest.mark.parametrize("world, drop_last", [(3, False), (4, True), (5, False)])
def test_ranks_are_disjoint_cover_the_epoch_and_match_in_length(demo_cache, world, drop_last):
    per_rank = []
    for rank in range(world):
        loader = gpufeed.Loader(
            demo_cache, batch_size=4, rank=rank, world_size=world, drop_last=drop_last, seed=9
        )
        batches = list(loader)
        per_rank.append(batches)
        assert loader.rank == rank and loader.world_size == world
    counts = {len(b) for b in per_rank}
    assert len(counts) == 1, f"every rank gets as many batches: {counts}"
    shapes = {tuple(b["mel"].shape[0] for b in bs) for bs in per_rank}
    assert len(shapes) == 1, "and the same batch sizes"
    ids = [i for bs in per_rank for b in bs for i in b["ids"] if i]
    assert len(ids) == len(set(ids)), "disjoint"
    dropped = gpufeed.Loader(
        demo_cache, batch_size=4, rank=0, world_size=world, drop_last=drop_last
    ).plan_stats()["dropped_last"]
    assert len(ids) + dropped == len(demo_cache), "covering the epoch"
    if not drop_last:
        assert sorted(ids) == sorted(demo_cache.ids)


def test_rank_and_world_size_come_from_the_environment(demo_cache, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    loader = gpufeed.Loader(demo_cache, batch_size=4)
    assert (loader.rank, loader.world_size) == (1, 2)
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="WORLD_SIZE"):
        gpufeed.Loader(demo_cache, batch_size=4)


def test_order_depends_only_on_seed_and_epoch(demo_cache):
    a = ids_of(gpufeed.Loader(demo_cache, batch_size=4, workers=0, seed=5))
    b = ids_of(gpufeed.Loader(demo_cache, batch_size=4, workers=3, prefetch=9, seed=5))
    c = ids_of(gpufeed.Loader(demo_cache, batch_size=4, workers=2, seed=6))
    assert a == b and a != c


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(world_size=0), ValueError, "world_size=0"),
        (dict(rank=2, world_size=2), ValueError, "ranks run from 0 to 1"),
        (dict(batch_size=0), ValueError, "batch_size=0"),
        (dict(pad="dynamic"), ValueError, "pad='dynamic'"),
        (dict(over_length="clip"), ValueError, "over_length='clip'"),
        (dict(pad="longest", max_mel_frames=100), ValueError, "static"),
        (dict(max_mel_frames=1, max_text_length=1, drop_last=True), ValueError, "plans no batch"),
    ],
)
def test_bad_settings_name_the_value_and_the_fix(demo_cache, kwargs, error, message):
    with pytest.raises(error, match=message):
        gpufeed.Loader(demo_cache, **{"batch_size": 4, **kwargs})


def test_bad_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match="precompute"):
        gpufeed.Loader(tmp_path / "missing")
    with pytest.raises(TypeError, match="gpufeed.Cache"):
        gpufeed.Loader(42)


def test_a_dataset_folder_is_precomputed_on_first_use(lj_dir, tmp_path):
    loader = gpufeed.Loader(lj_dir, cache=tmp_path, batch_size=2)
    assert len(loader) == 4 and len(loader.cache) == 8


def test_the_config_names_the_dataset_and_is_read_once(lj_dir, tmp_path):
    # A warning of the config (an unknown key) is said once, though the loader uses the
    # config twice (its settings, then the dataset and features to precompute).
    config = tmp_path / "config.yaml"
    config.write_text(f"data:\n  dataset_path: {lj_dir}\n  batch_size: 2\n  unknown_key: 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = gpufeed.Loader(config=config, cache=tmp_path / "cache")
    assert len(loader.cache) == 8 and len(loader) == 4
    said = [str(w.message) for w in caught if "unknown_key" in str(w.message)]
    assert len(said) == 1, said
    bare = tmp_path / "bare.yaml"
    bare.write_text("data:\n  batch_size: 2\n")
    with pytest.raises(TypeError, match="dataset_path"):
        gpufeed.Loader(config=bare)
    with pytest.raises(TypeError, match="no source"):
        gpufeed.Loader()


def test_close_and_with_join_the_threads(demo_cache):
    base = threads()
    with gpufeed.Loader(demo_cache, batch_size=4, workers=3) as loader:
        next(iter(loader))
        assert threads() >= base + 3
    assert threads() == base, "the workers are joined"
    with pytest.raises(RuntimeError, match="closed"):
        next(iter(loader))
    assert loader.closed


def test_ctrl_c_mid_epoch_leaves_no_thread_behind(demo_dir, tmp_path):
    script = textwrap.dedent(
        f"""
        import faulthandler, os, signal, sys, time
        import numpy  # its BLAS starts its threads on import: count from here
        import gpufeed
        # Ctrl-C in a terminal reaches Python's default handler. A test run launched in the
        # background (`cmd &` without job control) hands its children SIGINT ignored, and
        # Python then installs no handler: the loop never stopped (2026-11-29, twice).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # A hang prints every Python thread's stack (to the test's captured stderr) before
        # the parent's timeout.
        faulthandler.dump_traceback_later(25, exit=True)
        base = len(os.listdir("/proc/self/task"))
        loader = gpufeed.Loader({str(demo_dir)!r}, cache={str(tmp_path)!r}, batch_size=2, workers=2)
        print("ready", flush=True)
        try:
            for epoch in range(1000):
                for batch in loader:
                    time.sleep(0.01)
        except KeyboardInterrupt:
            loader.close()
            print("threads", len(os.listdir("/proc/self/task")) - base, flush=True)
            sys.exit(0)
        sys.exit(3)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    import time

    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 0, out
    assert "threads 0" in out


def test_a_loader_used_after_fork_raises_instead_of_hanging(demo_cache):
    # In a fresh interpreter: the test process has JAX's and TensorFlow's threads, which
    # fork() does not copy either.
    script = textwrap.dedent(
        f"""
        import gc, os, sys
        import gpufeed
        loader = gpufeed.Loader(gpufeed.Cache({str(demo_cache.path)!r}), batch_size=4, workers=2)
        next(iter(loader))
        pid = os.fork()
        if pid == 0:  # the child: the worker threads do not exist here
            code = 1
            try:
                next(iter(loader))
            except RuntimeError as e:
                code = 0 if "fork()" in str(e) else 2
            del loader  # dropping must not join threads the child lacks
            gc.collect()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status), status
        assert next(iter(loader))["mel"].shape[0] == 4  # the parent's loader goes on
        print("child", os.WEXITSTATUS(status))
        """
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "child 0"
