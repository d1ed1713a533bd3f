"""A loop that waits on the line of a host-device sync each step: `float(...)` around a
native call, as `float(loss)` or `loss.item()` wait for the GPU with no Python frame below
the user's line. argv: TRUTH_FILE; the truth file's wait column holds the sync time."""

import time

from truth import Truth, burn

# A native call, as `.item()` is: it has no Python frame.
wait_on_device = time.sleep


def main() -> None:
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
