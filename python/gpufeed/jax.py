"""gpufeed.jax: a gpufeed Loader's batches as JAX arrays.

>>> from gpufeed.jax import batches
>>> for batch in batches(loader):        # batch["mel"]: jax.Array float32 [B, T, 80]
...     state, loss = train_step(state, batch["tokens"], batch["mel"])

On the CPU the arrays share the batch's memory through DLPack (its buffers are 64-byte
aligned, as XLA wants: no copy). With ``device`` (a ``jax.Device``, or a ``Sharding``),
each array is put there with ``jax.device_put``, one batch ahead, so that the transfer
overlaps the step. int64 tokens and lengths stay int64 only with ``jax_enable_x64``;
otherwise JAX narrows them to int32 (a copy).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

try:
    import jax
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("gpufeed.jax needs JAX: pip install jax (or 'jax[cuda12]')") from e

import numpy as np

__all__ = ["batches", "to_jax"]


def to_jax(batch: dict[str, Any], *, device: Any = None) -> dict[str, Any]:
    """The batch's arrays as JAX arrays: on the CPU without a copy (DLPack), else put on
    ``device``. Other values as they are."""
    out: dict[str, Any] = {}
    for k, v in batch.items():
        if not isinstance(v, np.ndarray):
            out[k] = v
        elif device is None:
            out[k] = jax.dlpack.from_dlpack(v)
        else:
            out[k] = jax.device_put(v, device)
    return out


def batches(loader: Any, *, device: Any = None) -> Iterator[dict[str, Any]]:
    """Iterates one epoch of a gpufeed ``Loader`` as dicts of JAX arrays; with ``device``,
    the next batch's transfer is started before the current one is yielded."""
    it = iter(loader)
    try:
        ahead = to_jax(next(it), device=device)
    except StopIteration:
        return
    for batch in it:
        current, ahead = ahead, to_jax(batch, device=device)
        yield current
    yield ahead
