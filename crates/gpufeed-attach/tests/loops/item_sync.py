"""A loop that waits on the line of a host-device sync each step: `float(...)` around a
native call, as `float(loss)` or `loss.item()` wait for the GPU with no Python frame below
the user's line. argv: TRUTH_FILE [--cpu]; the truth file's wait column holds the sync time.
Unless `--cpu` is given, the process maps a stand-in for CUDA's driver (a GPU job's
process); with it, it is a job computing on the CPU, whose syncs wait for that."""

import sys
import time

from truth import Truth, burn, pretend_gpu

# A native call, as `.item()` is: it has no Python frame.
wait_on_device = time.sleep


def main() -> None:
    driver = None if "--cpu" in sys.argv else pretend_gpu()  # noqa: F841 (held for the loop's life)
    truth = Truth()
    total = 0.0
    while True:
        truth.got_batch()
        burn(0.004)
        t = time.perf_counter()
        total += float(wait_on_device(0.002) or 0.0)
        truth.wait += time.perf_counter() - t
        truth.step_done()


main()
