"""A training loop fed by a slow generator (a sleeping source, as a slow disk or network
read): input-bound. argv: TRUTH_FILE [STEPS]"""

import sys
import time

from truth import Truth, burn


def slow_source():
    while True:
        time.sleep(0.006)
        yield [1.0] * 64


def train_step(batch) -> float:
    return burn(0.004) + batch[0]


def main() -> None:
    truth = Truth()
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
    for batch in slow_source():
        truth.got_batch()
        train_step(batch)
        truth.step_done()
        if truth.steps >= limit:
            break


main()
