"""Benchmarks of the Python package, each a ratio against a reference measured in the
same run (docs/performance.md, "From Python"):

1. ``Loader`` static ``[32, 800, 80]`` float32 batches, a consumer that reads every byte of
   each batch (copies it into its own buffer), against numpy's memcpy of the same bytes.
2. The Python-side cost of one ``next()`` when the batch is ready (prefetched), after a
   wait (cold caches, as after a training step) beside the same objects built by Python
   after the same wait, and back to back (hot).
3. Samples/s against the usual Python routes over the same shards: torch's DataLoader
   (``num_workers=2``, when torch is installed) and the seeds' route, ``tf.data`` with
   ``tf.numpy_function`` per item (when TensorFlow is installed).
4. ``StepTimer``'s cost per step (``iter`` + three phases) against a 10 ms step.

Run with a release build: ``pip install .`` then ``python python/bench/loader_bench.py``.
Rounds alternate the sides, and the spread of the per-round ratios is printed: this VM's
speed drifts by +-15 % within a minute.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gpufeed

B, T, M = 32, 800, 80


def build_cache(clips: int) -> gpufeed.Cache:
    root = os.environ.get("GPUFEED_BENCH_DIR") or tempfile.mkdtemp(prefix="gpufeed-bench-")
    data = os.path.join(root, f"demo-{clips}")
    if not os.path.isfile(os.path.join(data, "metadata.csv")):
        binary = gpufeed.find_gpufeed_bin()
        subprocess.run([binary, "demo-data", data, "--clips", str(clips)], check=True)
    return gpufeed.precompute(data, cache=os.path.join(root, "cache"))


def loader_of(cache, workers: int) -> gpufeed.Loader:
    return gpufeed.Loader(
        cache,
        batch_size=B,
        workers=workers,
        pad="static",
        max_mel_frames=T,
        max_text_length=256,
        over_length="truncate",
        drop_last=True,
    )


def memcpy_gbs(nbytes: int, reps: int, source_bytes: int) -> float:
    """numpy's copy of `nbytes` per repetition into one buffer, from a source of
    `source_bytes` read in turn (`source_bytes == nbytes`: the same bytes every time, hot in
    the cache; the size of the cache's mel data: where the loader's bytes come from)."""
    n = nbytes // 4
    src = np.ones(max(source_bytes, nbytes) // 4, np.float32)
    dst = np.empty(n, np.float32)
    slots = src.size // n
    np.copyto(dst, src[:n])
    t = time.perf_counter()
    for i in range(reps):
        j = (i % slots) * n
        np.copyto(dst, src[j : j + n])
    return nbytes * reps / (time.perf_counter() - t) / 1e9


def demo_mel_bytes(cache) -> int:
    return int(cache.mel_lengths.sum()) * cache.n_mels * 4


def loader_gbs(cache, workers: int, batches: int) -> float:
    loader = loader_of(cache, workers)
    out = np.empty((B, T, M), np.float32)
    n = 0
    it = iter(loader)
    next(it)  # the workers are started and warm
    t = time.perf_counter()
    while n < batches:
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            continue
        np.copyto(out, batch["mel"])  # the consumer reads every byte
        n += 1
    elapsed = time.perf_counter() - t
    loader.close()
    return out.nbytes * batches / elapsed / 1e9


def next_cost_us(cache, batches: int) -> tuple[list[float], list[float], list[float]]:
    """next() alone with the queue full (the consumer waits between batches, as a training
    step does, and the workers stream batches through the CPU caches meanwhile): its wall
    time and the CPU time of the calling thread (without the workers' preemption). Beside
    it, after the same wait, the CPU time of the same objects built by Python itself (a dict
    of five numpy views of preallocated buffers, a list of 32 ids and two ints): what any
    code pays on this machine for that many objects with cold caches; and of nothing at all
    between the two clock readings: the floor of the measurement after a wait."""
    loader = loader_of(cache, workers=2)
    mel = np.zeros((B, T, M), np.float32)
    ints = np.zeros(B * 256 + 3 * B, np.int64)
    names = [str(i) for i in range(len(cache))]
    it = iter(loader)
    wall, cpu, python_cpu, empty_cpu = [], [], [], []
    for k in range(batches):
        time.sleep(0.02)
        c = time.thread_time_ns()
        empty_cpu.append((time.thread_time_ns() - c) / 1e3)
        time.sleep(0.02)
        c = time.thread_time_ns()
        ref = {
            "mel": mel[:], "mel_lengths": ints[:B], "tokens": ints[3 * B:].reshape(B, 256),
            "token_lengths": ints[B:2 * B], "ids": names[k % 400:k % 400 + B],
            "items": ints[2 * B:3 * B], "epoch": 0, "index": k,
        }
        python_cpu.append((time.thread_time_ns() - c) / 1e3)
        del ref
        time.sleep(0.02)  # the workers fill the queue meanwhile
        t = time.perf_counter_ns()
        c = time.thread_time_ns()
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            continue
        cpu.append((time.thread_time_ns() - c) / 1e3)
        wall.append((time.perf_counter_ns() - t) / 1e3)
        del batch
    loader.close()
    return wall, cpu, python_cpu, empty_cpu


def next_cost_hot_us(cache) -> list[float]:
    """next() back to back with the rest of an epoch ready (a prefetch of a whole epoch,
    filled before the first call is timed): the call alone with hot caches and no worker
    to wake."""
    loader = gpufeed.Loader(
        cache, batch_size=B, workers=2, prefetch=64, pad="static", max_mel_frames=T,
        max_text_length=256, over_length="truncate", drop_last=True,
    )
    it = iter(loader)
    next(it)  # the workers are started; let them fill the queues
    time.sleep(1.0)
    cpu = []
    for _ in range(len(loader) - 1):
        c = time.thread_time_ns()
        batch = next(it)
        cpu.append((time.thread_time_ns() - c) / 1e3)
        del batch
    loader.close()
    return cpu[1:]  # the first call after the wait is cold


def torch_samples_s(cache, batches: int) -> float | None:
    try:
        import torch
        from torch.utils.data import DataLoader, Dataset
    except ImportError:
        return None

    class Items(Dataset):
        def __init__(self, path):
            self.path = path
            self.cache = None

        def __len__(self):
            return len(gpufeed.Cache(self.path))

        def __getitem__(self, i):
            if self.cache is None:  # opened in each worker process
                self.cache = gpufeed.Cache(self.path)
            item = self.cache[i]
            return np.array(item["mel"][:T]), np.array(item["tokens"], dtype=np.int64)

    def collate(items):
        mel = torch.zeros(len(items), T, M)
        tokens = torch.zeros(len(items), 256, dtype=torch.int64)
        for r, (m, t) in enumerate(items):
            mel[r, : len(m)] = torch.from_numpy(m)
            tokens[r, : min(len(t), 256)] = torch.from_numpy(t[:256])
        return mel, tokens

    dl = DataLoader(
        Items(str(cache.path)), batch_size=B, shuffle=True, num_workers=2,
        collate_fn=collate, drop_last=True, persistent_workers=True,
    )
    out = torch.empty(B, T, M)
    n = 0
    it = iter(dl)
    next(it)
    t = time.perf_counter()
    while n < batches:
        try:
            mel, _ = next(it)
        except StopIteration:
            it = iter(dl)
            continue
        out.copy_(mel)
        n += 1
    return batches * B / (time.perf_counter() - t)


def tf_samples_s(cache, batches: int) -> float | None:
    try:
        import tensorflow as tf
    except ImportError:
        return None
    c = gpufeed.Cache(cache.path)

    def load(i):
        item = c[int(i)]
        return np.array(item["mel"][:T]), np.array(item["tokens"][:256], dtype=np.int64)

    ds = (
        tf.data.Dataset.range(len(c))
        .shuffle(len(c))
        .map(
            lambda i: tf.numpy_function(load, [i], [tf.float32, tf.int64]),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        .padded_batch(B, padded_shapes=([T, M], [256]), drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
        .repeat()
    )
    out = np.empty((B, T, M), np.float32)
    it = iter(ds)
    next(it)
    t = time.perf_counter()
    for _ in range(batches):
        mel, _ = next(it)
        np.copyto(out, mel.numpy())
    return batches * B / (time.perf_counter() - t)


def gpufeed_samples_s(cache, batches: int) -> float:
    return loader_gbs(cache, workers=2, batches=batches) * 1e9 / (T * M * 4)


def step_timer_overhead_us(steps: int) -> float:
    """Cost of the timer per step (iter + 3 phases), empty steps: the timer alone."""
    data = range(steps)
    t = time.perf_counter()
    for _ in data:
        pass
    bare = time.perf_counter() - t
    timer = gpufeed.StepTimer()
    t = time.perf_counter()
    for _ in timer.iter(data):
        with timer.phase("forward"):
            pass
        with timer.phase("backward"):
            pass
        with timer.phase("optimizer"):
            pass
    timed = time.perf_counter() - t
    return (timed - bare) / steps * 1e6


def spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.2f}, range {min(xs):.2f}-{max(xs):.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True)
    a = ap.parse_args()
    cache = build_cache(a.clips)
    nbytes = B * T * M * 4
    print(f"cache: {len(cache)} clips; batches [{B}, {T}, {M}] float32 = {nbytes / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores; gpufeed {gpufeed.__version__}")

    mel_bytes = int(demo_mel_bytes(cache))
    ratios, hot_ratios, gb_loader, gb_memcpy, gb_hot = [], [], [], [], []
    for _ in range(a.rounds):
        m = memcpy_gbs(nbytes, a.batches, mel_bytes)
        h = memcpy_gbs(nbytes, a.batches, nbytes)
        g = loader_gbs(cache, 2, a.batches)
        gb_memcpy.append(m)
        gb_hot.append(h)
        gb_loader.append(g)
        ratios.append(g / m)
        hot_ratios.append(g / h)
    print(f"1. loader (2 workers) {max(gb_loader):.2f} GB/s; numpy memcpy of the same bytes from a "
          f"{mel_bytes / 1e6:.0f} MB source (the cache's mel data) {max(gb_memcpy):.2f} GB/s: "
          f"best/best {max(gb_loader) / max(gb_memcpy):.2f}x, per round {spread(ratios)}; "
          f"against the same 8 MB copied hot in the cache {max(gb_hot):.2f} GB/s: "
          f"{max(gb_loader) / max(gb_hot):.2f}x, per round {spread(hot_ratios)}")

    wall, cpu, python_cpu, empty_cpu = next_cost_us(cache, 300)
    hot = next_cost_hot_us(cache)
    print(f"2. next() with the batch ready: median {statistics.median(wall):.1f} us wall, "
          f"{statistics.median(cpu):.1f} us of the Python thread's CPU (p90 {np.percentile(cpu, 90):.1f}); "
          f"the same objects built by Python after the same wait {statistics.median(python_cpu):.1f} us "
          f"(p90 {np.percentile(python_cpu, 90):.1f}); nothing at all (the clock's own cost) after "
          f"the same wait {statistics.median(empty_cpu):.1f} us; next() back to back, hot: "
          f"{statistics.median(hot):.1f} us (p90 {np.percentile(hot, 90):.1f})")

    if a.peers:
        ours, torch_r, tf_r = [], [], []
        for _ in range(max(2, a.rounds // 2)):
            ours.append(gpufeed_samples_s(cache, a.batches))
            t = torch_samples_s(cache, max(20, a.batches // 5))
            if t is not None:
                torch_r.append(t)
            f = tf_samples_s(cache, max(20, a.batches // 5))
            if f is not None:
                tf_r.append(f)
        print(f"3. samples/s: gpufeed {max(ours):,.0f}", end="")
        if torch_r:
            print(f"; torch DataLoader (2 workers) {max(torch_r):,.0f} = {max(ours) / max(torch_r):.1f}x", end="")
        else:
            print("; torch not installed", end="")
        if tf_r:
            print(f"; tf.data + numpy_function {max(tf_r):,.0f} = {max(ours) / max(tf_r):.1f}x")
        else:
            print("; tensorflow not installed")

    over = [step_timer_overhead_us(20_000) for _ in range(5)]
    print(f"4. StepTimer: {min(over):.2f} us per step (iter + 3 phases) = "
          f"{100 * min(over) / 10_000:.3f} % of a 10 ms step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
