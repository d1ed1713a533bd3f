"""A loop fed by 2 worker processes (multiprocessing.Pool, as DataLoader workers) whose
item function is slow: input-bound, with the workers' hot function named.
argv: TRUTH_FILE"""

import multiprocessing as mp

from truth import Truth, burn


def load_item(i: int) -> list:
    burn(0.02)
    return [float(i)] * 64


def train_step(batch) -> float:
    return burn(0.003) + batch[0]


def main() -> None:
    truth = Truth()
    with mp.get_context("fork").Pool(2) as pool:
        for batch in pool.imap(load_item, range(10**9), chunksize=1):
            truth.got_batch()
            train_step(batch)
            truth.step_done()


if __name__ == "__main__":
    main()
