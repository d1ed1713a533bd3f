"""A loop fed by 2 worker processes (as DataLoader workers) whose item function is slow:
input-bound, with the workers' hot function named. argv: TRUTH_FILE"""

import multiprocessing as mp

from truth import Truth, burn


def load_item(i: int) -> list:
    burn(0.02)
    return [float(i)] * 64


def worker(q, first: int) -> None:
    i = first
    while True:
        q.put(load_item(i))
        i += 2


def train_step(batch) -> float:
    return burn(0.003) + batch[0]


def main() -> None:
    truth = Truth()
    ctx = mp.get_context("fork")
    q = ctx.Queue(maxsize=4)
    workers = [ctx.Process(target=worker, args=(q, k), daemon=True) for k in range(2)]
    for w in workers:
        w.start()
    for batch in iter(q.get, None):
        truth.got_batch()
        train_step(batch)
        truth.step_done()


if __name__ == "__main__":
    main()
