"""gpufeed.keras: a Keras callback that times ``model.fit``'s steps with a ``StepTimer``.

>>> timer = gpufeed.StepTimer()
>>> model.fit(dataset, epochs=3, callbacks=[gpufeed.keras.StepTimerCallback(timer)])
>>> print(timer.report())

Each step is ``train_step`` (Keras's train function, from ``on_train_batch_begin`` to
``on_train_batch_end``) and ``between_batches`` (the host's time from one batch's end to the
next one's begin: callbacks, logging). Keras fetches the batch inside its train function,
so the wait for data is part of ``train_step`` here: the callback shows the step time, its
cycles and the host's overhead, not the input share. For the input share, iterate the
dataset yourself with ``timer.iter(dataset)`` around a ``tf.function`` step
(docs/python.md). Use ``steps_per_execution=1`` (the default), or each "batch" is several
steps.
"""

from __future__ import annotations

import time
from typing import Any

try:
    import keras
except ImportError:  # pragma: no cover - Keras 2 inside TensorFlow
    try:
        from tensorflow import keras  # type: ignore[no-redef]
    except ImportError as e:
        raise ImportError("gpufeed.keras needs Keras: pip install keras (or tensorflow)") from e

from ._steps import StepTimer

__all__ = ["StepTimerCallback"]

_ms = 1e-6


class StepTimerCallback(keras.callbacks.Callback):
    """Records every training batch of ``fit`` into ``timer`` (a new ``StepTimer`` when
    none is given); ``batch_size`` for samples/s."""

    def __init__(self, timer: StepTimer | None = None, *, batch_size: int | None = None) -> None:
        super().__init__()
        self.timer = timer if timer is not None else StepTimer()
        self.batch_size = batch_size
        self._begin: int | None = None
        self._end: int | None = None

    def _close(self, now: int) -> None:
        if self._begin is not None and self._end is not None:
            phases = [("train_step", (self._end - self._begin) * _ms)]
            if now > self._end:
                phases.append(("between_batches", (now - self._end) * _ms))
            self.timer.record((now - self._begin) * _ms, phases, items=self.batch_size)
        self._begin = self._end = None

    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        now = time.perf_counter_ns()
        self._close(now)
        self._begin = now

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._end = time.perf_counter_ns()

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        # The last batch of an epoch ends at its own end: validation and the epoch's
        # callbacks are not part of a training step.
        if self._end is not None:
            self._close(self._end)
