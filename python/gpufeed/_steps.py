"""``StepTimer``: where the time of each step of your own training loop goes.

The timer records; the analysis (statistics, cycles, the verdict with its thresholds and
fix) is gpufeed's Rust code, the same that ``gpufeed trace steps.jsonl`` runs on a saved
recording.

A step runs from one request for a batch to the next. ``iter()`` times the wait for each
batch (``data_wait``); ``phase(name)`` times a part of the step. With ``sync`` (e.g.
``torch.cuda.synchronize``), the device is synchronised before the batch is requested and
at the end of each phase, so that asynchronous device work is counted in the phase that
launched it rather than in whichever phase happens to wait for it. Without it the times
are host times, and the report says so.

Phase names are free. Their category decides the verdict: ``data_wait`` is input; a name
containing ``copy``, ``h2d``, ``to_device`` or ``transfer`` is a copy; anything else is
compute. Time in a step outside every phase is reported as unaccounted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from . import _gpufeed

T = TypeVar("T")

_clock = time.perf_counter_ns


class StepReport:
    """The step document: ``verdict``, ``level``, ``evidence``, ``fix`` and the figures.

    ``str(report)`` is the text ``gpufeed trace`` prints; ``to_dict()`` the JSON document.
    """

    def __init__(self, document: dict[str, Any], text: str) -> None:
        self._document = document
        self._text = text

    @property
    def verdict(self) -> str:
        """``input-bound``, ``transfer-bound``, ``oscillating`` or ``compute-bound``; or
        ``undetermined`` when no ``data_wait`` was timed (input- and compute-bound cannot be
        told apart then)."""
        return str(self._document["verdict"])

    @property
    def level(self) -> str | None:
        """``moderate`` or ``high`` for input- and transfer-bound (TF Profiler's 5 % and 20 %)."""
        level = self._document.get("level")
        return None if level is None else str(level)

    @property
    def evidence(self) -> list[str]:
        """The measured figures behind the verdict, one sentence each."""
        return list(self._document.get("evidence", []))

    @property
    def fix(self) -> str:
        """The change to try."""
        return str(self._document.get("fix", ""))

    def to_dict(self) -> dict[str, Any]:
        """The whole document (the JSON of ``gpufeed trace --format json``)."""
        return self._document

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<gpufeed.StepReport verdict={self.verdict!r}>"


class _Phase:
    __slots__ = ("_name", "_start", "_timer")

    def __init__(self, timer: StepTimer, name: str) -> None:
        self._timer = timer
        self._name = name
        self._start = 0

    def __enter__(self) -> _Phase:
        timer = self._timer
        if timer._phases is None:
            raise RuntimeError(
                f"phase({self._name!r}) outside a step: use it inside "
                "`for batch in timer.iter(loader):`"
            )
        if timer._open is not None:
            raise RuntimeError(
                f"phase({self._name!r}) inside phase({timer._open!r}): phases do not nest"
            )
        timer._open = self._name
        self._start = _clock()
        return self

    def __exit__(self, *exc: object) -> None:
        timer = self._timer
        if timer._sync is not None:
            timer._sync()
        end = _clock()
        timer._open = None
        if timer._phases is not None:
            timer._phases.append((self._name, end - self._start))


def _items_of(batch: Any) -> int | None:
    """Rows of a batch with real data, when they can be told: gpufeed's dicts (filler rows
    have an empty id), a dict/tuple/list of arrays (their first dimension), an array."""
    try:
        if isinstance(batch, dict):
            ids = batch.get("ids")
            if isinstance(ids, list):
                return sum(1 for i in ids if i)
            for value in batch.values():
                shape = getattr(value, "shape", None)
                if shape:
                    return int(shape[0])
            return None
        if isinstance(batch, (tuple, list)) and batch:
            shape = getattr(batch[0], "shape", None)
            return int(shape[0]) if shape else None
        shape = getattr(batch, "shape", None)
        return int(shape[0]) if shape else None
    except (TypeError, ValueError, IndexError):
        return None


class StepTimer:
    """Times the steps of a training loop, phase by phase, and says what bounds them.

    ``sync``: a function that waits for the device (``torch.cuda.synchronize``,
    ``jax.effects_barrier``, ``lambda: tf.test.experimental.sync_devices()``), called before
    each batch request and at the end of each phase; optional. ``warmup``: leading steps
    left out of the statistics (compilation, autotuning). ``batch_size``: items per step,
    when the batches do not tell (samples/s).
    """

    def __init__(
        self,
        sync: Callable[[], object] | None = None,
        *,
        warmup: int = 1,
        batch_size: int | None = None,
    ) -> None:
        if sync is not None and not callable(sync):
            raise TypeError(f"sync={sync!r} is not callable: pass a function such as torch.cuda.synchronize")
        if warmup < 0:
            raise ValueError(f"warmup={warmup}: pass 0 or more steps")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size={batch_size}: pass at least 1, or None")
        self._sync = sync
        self._warmup = warmup
        self._batch_size = batch_size
        # Each step: (total ns, [(phase, ns)], items).
        self._steps: list[tuple[int, list[tuple[str, int]], int | None]] = []
        self._phases: list[tuple[str, int]] | None = None
        self._open: str | None = None
        self._items: int | None = None

    def iter(self, iterable: Iterable[T]) -> Iterator[T]:
        """Yields the items of ``iterable`` (any: a gpufeed Loader, a torch DataLoader, a
        tf.data iterator), timing the wait for each as the step's ``data_wait``."""
        sync = self._sync
        it = iter(iterable)
        step_start: int | None = None
        try:
            while True:
                if sync is not None:
                    sync()
                request = _clock()
                if step_start is not None and self._phases is not None:
                    self._close(request - step_start)
                try:
                    batch = next(it)
                except StopIteration:
                    return
                got = _clock()
                step_start = request
                self._phases = [("data_wait", got - request)]
                self._items = self._batch_size if self._batch_size is not None else _items_of(batch)
                yield batch
        finally:
            # A loop left with `break` or an exception: its step is incomplete, drop it.
            self._phases = None
            self._open = None

    def _close(self, total_ns: int) -> None:
        if self._phases is not None:
            self._steps.append((total_ns, self._phases, self._items))
        self._phases = None

    def phase(self, name: str) -> _Phase:
        """A context manager timing part of the current step under ``name``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"phase name {name!r}: pass a non-empty string such as 'forward'")
        return _Phase(self, name)

    def record(self, total_ms: float, phases: list[tuple[str, float]], *, items: int | None = None) -> None:
        """Adds a step timed elsewhere (a callback, a framework hook): its total and its
        phases, in ms, in the order they ran."""
        if not (total_ms >= 0.0) or any(not (ms >= 0.0) for _, ms in phases):
            raise ValueError(f"step of {total_ms!r} ms with phases {phases!r}: times are ms, not negative")
        ns = 1e6
        self._steps.append(
            (int(total_ms * ns), [(str(name), int(ms * ns)) for name, ms in phases], items)
        )

    @property
    def steps(self) -> int:
        """Steps recorded (complete ones: a step ends when the next batch is requested)."""
        return len(self._steps)

    def _meta(self) -> dict[str, Any]:
        return {
            "source": "python StepTimer",
            "sync": self._sync is not None,
            "warmup": self._warmup,
            "batch_size": self._batch_size,
        }

    def _records(self) -> list[tuple[float, list[tuple[str, float]], int | None]]:
        ms = 1e-6
        return [
            (total * ms, [(name, ns * ms) for name, ns in phases], items)
            for total, phases, items in self._steps
        ]

    def report(self) -> StepReport:
        """The verdict (``input-bound``, ``transfer-bound``, ``oscillating``,
        ``compute-bound``) with its evidence and fix, and the figures behind it."""
        document, text = _gpufeed.phase_steps_report(self._meta(), self._records())
        return StepReport(document, text)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the recording as JSONL (written whole or not at all): ``gpufeed trace
        PATH`` and ``gpufeed analyze --trace PATH`` read it."""
        _gpufeed.phase_steps_save(os.fspath(path), self._meta(), self._records())
