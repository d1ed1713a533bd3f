# -*- coding: utf-8 -*-
import time, torch as T
from torch.utils.data import DataLoader
import tensorflow as tf

@tf.function
def step(x, *, y=None, **kw):
    return x ** 2 if y is None else (lambda z: z)(y)

async def main():
    loader = DataLoader(ds, batch_size=32, num_workers=0)
    for i, (xb, yb) in enumerate(loader):
        loss = model(xb.cuda(non_blocking=True)).sum()
        print(f"{i}: {loss.item():.3f}")  # gpufeed: ignore[host-sync-in-loop]
        time.sleep(0.01)
        T.cuda.synchronize()
    match step(1):
        case [a, *rest] if (n := len(rest)) > 0: pass
        case {"k": v}: ...
        case _: raise ValueError("x") from None
    ds2 = tf.data.Dataset.from_tensor_slices(x).map(lambda s: tf.py_function(f, [s], tf.float32)).cache().shuffle(8)
    with open("f") as f, T.no_grad():
        yield [x async for x in agen() if x]
