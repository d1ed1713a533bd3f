"""The loops' own timing, the way gpufeed.StepTimer times a step: the time between the end
of one step and the moment the next batch is in hand is the data wait. After each step a
line `steps wait_s elapsed_s` is appended to the file named by argv[1], so that a test can
take the loop's own figures over exactly the window it sampled (difference of two lines).
"""

import mmap
import os
import sys
import tempfile
import time


class Truth:
    def __init__(self) -> None:
        self.out = open(sys.argv[1], "w", buffering=1)
        self.t0 = time.perf_counter()
        self.wait = 0.0
        self.steps = 0
        self.mark = self.t0

    def got_batch(self) -> None:
        now = time.perf_counter()
        self.wait += now - self.mark

    def step_done(self) -> None:
        self.steps += 1
        self.out.write(f"{self.steps} {self.wait:.6f} {time.perf_counter() - self.t0:.6f}\n")
        self.mark = time.perf_counter()


def burn(seconds: float) -> float:
    """Real CPU work for about `seconds` (pure-Python arithmetic)."""
    end = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < end:
        for i in range(200):
            x += i * 0.5
    return x


def pretend_gpu() -> mmap.mmap:
    """A stand-in for a GPU job's process: a file named as CUDA's driver mapped into memory,
    which is how gpufeed attach tells a process that uses a GPU (a sync waits for the GPU)
    from one that computes on the CPU (`/proc/PID/maps`). Keep the map alive."""
    d = tempfile.mkdtemp()
    path = os.path.join(d, "libcuda.so.1")
    with open(path, "wb") as f:
        f.write(b"\0" * 4096)
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
