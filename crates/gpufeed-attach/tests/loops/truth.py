"""The loops' own timing, the way gpufeed.StepTimer times a step: the time between the end
of one step and the moment the next batch is in hand is the data wait. After each step a
line `steps wait_s elapsed_s` is appended to the file named by argv[1], so that a test can
take the loop's own figures over exactly the window it sampled (difference of two lines).
"""

import sys
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
