"""gpufeed.torch: a gpufeed Loader's batches as torch tensors, on the device you train on.

>>> from gpufeed.torch import TorchLoader
>>> batches = TorchLoader(loader, device="cuda")   # pinned host copy, async to the GPU
>>> for batch in batches:                           # batch["mel"]: torch.float32 [B, T, 80]
...     loss = model(batch["tokens"], batch["mel"]) ...

On the CPU the tensors share the batch's memory (``torch.from_numpy``: no copy). With a
CUDA device, each array is copied once into pinned (page-locked) memory and from there to
the GPU on a side stream, one batch ahead: the copy of batch k+1 runs while the model
works on batch k, and the training stream waits for it only when the batch is used.

Do not wrap a gpufeed Loader in ``torch.utils.data.DataLoader``: it already runs on its
own threads (worker processes would each start a loader and copy every batch through
shared memory). If a library insists on a DataLoader, pass ``batch_size=None,
num_workers=0``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "gpufeed.torch needs PyTorch: pip install torch (see https://pytorch.org for the "
        "build that matches your CUDA)"
    ) from e

import numpy as np

__all__ = ["TorchLoader", "to_torch"]


def to_torch(batch: dict[str, Any]) -> dict[str, Any]:
    """The batch's arrays as CPU tensors sharing their memory (no copy); other values as
    they are."""
    return {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in batch.items()}


class TorchLoader:
    """Iterates a gpufeed ``Loader`` as dicts of torch tensors on ``device``.

    ``pin_memory`` (default: on for CUDA devices) copies each array into pinned memory so
    that the copy to the GPU is asynchronous; ``non_blocking`` lets that copy overlap the
    host's work. ``len()``, ``state_dict()``, ``load_state_dict()`` and ``set_epoch()`` are
    the loader's.
    """

    def __init__(
        self,
        loader: Any,
        *,
        device: str | torch.device | None = None,
        pin_memory: bool | None = None,
        non_blocking: bool = True,
    ) -> None:
        self.loader = loader
        self.device = None if device is None else torch.device(device)
        cuda = self.device is not None and self.device.type == "cuda"
        self.pin_memory = cuda if pin_memory is None else pin_memory
        if self.pin_memory and not torch.cuda.is_available():
            raise ValueError(
                "pin_memory=True needs CUDA (torch.cuda.is_available() is False): "
                "leave it out on a CPU-only machine"
            )
        self.non_blocking = non_blocking
        self._stream = torch.cuda.Stream(self.device) if cuda else None

    def _move(self, batch: dict[str, Any]) -> dict[str, Any]:
        out = to_torch(batch)
        if self.device is None or self.device.type == "cpu":
            return out
        stream = self._stream
        ctx = torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()
        with ctx:
            for k, v in out.items():
                if isinstance(v, torch.Tensor):
                    if self.pin_memory:
                        v = v.pin_memory()
                    out[k] = v.to(self.device, non_blocking=self.non_blocking)
        return out

    def _ready(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Makes the training stream wait for the side stream's copies of ``batch``."""
        if self._stream is None:
            return batch
        current = torch.cuda.current_stream(self.device)
        current.wait_stream(self._stream)
        for v in batch.values():
            if isinstance(v, torch.Tensor):
                # The caching allocator must not reuse this memory before the training
                # stream is done with it.
                v.record_stream(current)
        return batch

    def __iter__(self) -> Iterator[dict[str, Any]]:
        it = iter(self.loader)
        try:
            ahead = self._move(next(it))
        except StopIteration:
            return
        for batch in it:
            current = ahead
            ahead = self._move(batch)  # the next batch's copy starts before this one is used
            yield self._ready(current)
        yield self._ready(ahead)

    def __len__(self) -> int:
        return len(self.loader)

    def state_dict(self) -> dict[str, Any]:
        return self.loader.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.loader.load_state_dict(state)

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)
