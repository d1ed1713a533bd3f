"""The overhead benchmark's target: a loop whose every step does the same amount of work
(a fixed count of pure-Python operations, about 20 ms on this VM), a few frames deep as a
model's forward is, so that any CPU taken from it shows as fewer steps per second. (The
test loops' `burn` runs for a wall-clock time, which a slowdown cannot shorten.)
argv: TRUTH_FILE"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "crates" / "gpufeed-attach" / "tests" / "loops"))
from truth import Truth  # noqa: E402

ITERATIONS = 120_000


def layer(x: float, n: int) -> float:
    for i in range(n):
        x += i * 0.5
    return x


def forward(batch: list) -> float:
    x = batch[0]
    for _ in range(4):
        x = layer(x, ITERATIONS // 4)
    return x


def main() -> None:
    truth = Truth()
    batch = [1.0] * 64
    while True:
        truth.got_batch()
        forward(batch)
        truth.step_done()


main()
