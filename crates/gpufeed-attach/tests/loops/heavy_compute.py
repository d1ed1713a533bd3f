"""A training loop with light items and a heavy step: compute-bound. argv: TRUTH_FILE"""

from truth import Truth, burn


def light_source():
    while True:
        yield [1.0] * 64


def train_step(batch) -> float:
    return burn(0.02) + batch[0]


def main() -> None:
    truth = Truth()
    for batch in light_source():
        truth.got_batch()
        train_step(batch)
        truth.step_done()


main()
