"""gpufeed.tf: a gpufeed Loader for TensorFlow, as a ``tf.data.Dataset`` or as tensors.

>>> from gpufeed.tf import dataset
>>> ds = dataset(loader)                     # one epoch per iteration, element spec static
>>> @tf.function
... def train_step(batch): ...
>>> for epoch in range(10):
...     for batch in ds:                      # traced once: every batch has the same shape
...         train_step(batch)

With ``pad="static"`` every batch has the same shape (the last one filled with rows of
length 0), and the dataset's element spec says so: a ``tf.function`` step traces once for
the whole run, where a dataset of varying shapes retraces for each new one (the seeds'
MyXTTS spent its GPU time recompiling). ``model.fit(dataset(loader), epochs=N)`` works
too: each epoch iterates the loader's next epoch.

``batches(loader)`` yields the tensors directly, without tf.data, through DLPack (no copy:
the batch's buffers are 64-byte aligned, as TensorFlow wants).

Avoid ``tf.data.Dataset.from_generator`` over a Python pipeline of your own, and
``tf.numpy_function`` per item (the seeds' route): both run Python under the GIL for every
item; here the items are assembled on gpufeed's Rust threads and only whole batches cross
into TensorFlow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

try:
    import tensorflow as tf
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "gpufeed.tf needs TensorFlow: pip install tensorflow (or tensorflow-cpu)"
    ) from e

import numpy as np

__all__ = ["batches", "dataset", "element_spec", "to_tf"]

_ARRAYS = ("mel", "mel_lengths", "tokens", "token_lengths", "items", "speakers")


def element_spec(loader: Any) -> dict[str, tf.TensorSpec]:
    """The ``tf.TensorSpec`` of the loader's batches: fully static with static padding."""
    settings = loader.settings
    padding = settings["padding"]
    n_mels = loader.cache.n_mels
    if "fixed" in padding:
        rows: int | None = settings["batch_size"]
        frames: int | None = padding["fixed"]["max_frames"]
        text: int | None = padding["fixed"]["max_text"]
    else:
        # The last batch is shorter unless drop_last, and batches by duration vary in rows;
        # lengths vary per batch.
        fixed_rows = settings["drop_last"] and settings.get("batch_frames") is None
        rows = settings["batch_size"] if fixed_rows else None
        frames = text = None
    spec = {
        "mel": tf.TensorSpec([rows, frames, n_mels], tf.float32, name="mel"),
        "mel_lengths": tf.TensorSpec([rows], tf.int64, name="mel_lengths"),
        "tokens": tf.TensorSpec([rows, text], tf.int64, name="tokens"),
        "token_lengths": tf.TensorSpec([rows], tf.int64, name="token_lengths"),
        "items": tf.TensorSpec([rows], tf.int64, name="items"),
        "ids": tf.TensorSpec([rows], tf.string, name="ids"),
        "epoch": tf.TensorSpec([], tf.int64, name="epoch"),
        "index": tf.TensorSpec([], tf.int64, name="index"),
        "speakers": tf.TensorSpec([rows], tf.int64, name="speakers"),
    }
    # The cache's arrays beside the mel (`features=`), padded like it; a user's array of
    # its own length (rows per frame 0) to the cache's longest under static padding.
    for a in loader.cache.arrays:
        name, width = a["name"], a["width"]
        if frames is None:
            length = None
        elif a["rows_per_frame"] == 0:
            length = a["max_rows"]
        else:
            length = frames * a["rows_per_frame"]
        shape = [rows, length] if width == 1 else [rows, length, width]
        spec[name] = tf.TensorSpec(shape, tf.as_dtype(a["dtype"]), name=name)
        spec[f"{name}_lengths"] = tf.TensorSpec([rows], tf.int64, name=f"{name}_lengths")
    return spec


def dataset(loader: Any) -> tf.data.Dataset:
    """A ``tf.data.Dataset`` of the loader's batches; each iteration is the loader's next
    epoch (or the rest of the current one after ``load_state_dict``)."""

    names = [a["name"] for a in loader.cache.arrays]
    keys = _ARRAYS + tuple(names) + tuple(f"{n}_lengths" for n in names)

    def generate() -> Iterator[dict[str, Any]]:
        for batch in loader:
            out = {k: batch[k] for k in keys}
            out["ids"] = np.array(batch["ids"], dtype=object)
            out["epoch"] = np.int64(batch["epoch"])
            out["index"] = np.int64(batch["index"])
            yield out

    return tf.data.Dataset.from_generator(generate, output_signature=element_spec(loader))


def to_tf(batch: dict[str, Any]) -> dict[str, Any]:
    """The batch's arrays as tensors sharing their memory (DLPack, no copy); ``ids`` as a
    string tensor; other values as they are."""
    out: dict[str, Any] = {}
    for k, v in batch.items():
        if isinstance(v, np.ndarray):
            out[k] = tf.experimental.dlpack.from_dlpack(v.__dlpack__())
        elif k == "ids":
            out[k] = tf.constant(v, dtype=tf.string)
        else:
            out[k] = v
    return out


def batches(loader: Any) -> Iterator[dict[str, Any]]:
    """Iterates one epoch of the loader as dicts of tensors, without tf.data."""
    for batch in loader:
        yield to_tf(batch)
