"""gpufeed: find out why a GPU is starving during training, prove it with numbers, and feed it.

The Python package feeds your own PyTorch, TensorFlow or JAX loop from gpufeed's feature
cache and times your own steps:

>>> cache = gpufeed.precompute("LJSpeech-1.1")            # features once, reused after
>>> loader = gpufeed.Loader(cache, batch_size=32, workers=2, pad="static", drop_last=True)
>>> timer = gpufeed.StepTimer()
>>> for batch in timer.iter(loader):                       # batch["mel"]: float32 [B, T, 80]
...     with timer.phase("forward"):
...         ...
>>> print(timer.report())                                  # verdict, evidence, fix

Batches are dicts of numpy arrays that own their memory (no copy, and no "valid until
the next batch"); numpy arrays speak DLPack, so ``torch.from_dlpack``,
``jax.dlpack.from_dlpack`` and ``tf.experimental.dlpack.from_dlpack`` take them without a
copy. ``gpufeed.torch``, ``gpufeed.tf`` and ``gpufeed.jax`` wrap a loader for each
framework; they import the framework only when imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _gpufeed, errors
from ._bin import find_gpufeed_bin
from ._gpufeed import Cache, Loader, Monitor, __version__, mel
from ._steps import StepReport, StepTimer
from .errors import (
    AttachError,
    ConfigError,
    ConfigNotFoundError,
    DataError,
    DataIOError,
    DataNotFoundError,
    Error,
    TraceError,
)

if TYPE_CHECKING:
    from ._gpufeed import AttachDocument, ConfigDocument, PrecomputeReport

__all__ = [
    "AttachError",
    "Cache",
    "ConfigError",
    "ConfigNotFoundError",
    "DataError",
    "DataIOError",
    "DataNotFoundError",
    "Error",
    "Loader",
    "Monitor",
    "StepReport",
    "StepTimer",
    "TraceError",
    "__version__",
    "analyze",
    "attach",
    "errors",
    "find_gpufeed_bin",
    "load_config",
    "mel",
    "precompute",
    "precompute_shard",
    "schema",
]


def analyze(
    *,
    data: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    code: str | os.PathLike[str] | None = None,
    trace: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] = "gpufeed-report",
    attach: int | None = None,
    attach_duration: float = 10.0,
    quick: bool = False,
    demo: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Runs every stage of ``gpufeed analyze`` in this process (attach, demo data,
    precompute, doctor, profile data, profile step, telemetry), ranks the causes of GPU
    starvation, writes ``summary.md``, ``report.json`` and ``report.html`` into ``out``, and
    returns the report's document (what ``report.json`` holds: ``verdict``, ``causes`` with
    their fixes, ``stages``; ``gpufeed.schema("report")``).

    The keyword arguments are the CLI's options: ``data`` your dataset, ``config`` your
    training config, ``code`` your training code to lint, ``trace`` a GPU utilisation log,
    a step recording of your own loop (``StepTimer.save``) or a profiler trace, ``attach``
    the process id of a running job to sample first. With none of them, gpufeed's demo
    runs (``demo=True`` runs it beside yours). ``progress`` writes each stage's outcome to
    stderr. A stage that fails is recorded in the report; a path that does not exist or a
    report that cannot be written raises ``DataError``, a config that does not load
    ``ConfigError``. The GIL is released for the whole run.
    """
    path = _path
    return _gpufeed.analyze_run(
        path(out),
        data=path(data),
        config=path(config),
        code=path(code),
        trace=path(trace),
        attach=None if attach is None else int(attach),
        attach_duration=float(attach_duration),
        quick=bool(quick),
        demo=bool(demo),
        progress=bool(progress),
    )


def _path(p: str | os.PathLike[str] | None) -> str | None:
    return None if p is None else os.fspath(p)


def attach(pid: int, *, duration: float = 10.0, rate: float = 100.0) -> AttachDocument:
    """Samples the Python stacks of a running training process (and its workers) for
    ``duration`` seconds at ``rate`` Hz (1 to 1000) without stopping it, and returns the
    ``attach`` document (verdict, shares, evidence, fix; ``gpufeed.schema("attach")``), as
    ``gpufeed attach PID --format json`` prints it. The sampling runs on a Rust thread of
    this process (py-spy reads the target's memory; the target is never stopped); Ctrl-C
    ends it early. Your own process is refused (``ValueError``): time your own loop with
    ``StepTimer``. A target that cannot be sampled (no such process, not Python, permission
    denied) raises :class:`AttachError` saying why and what to do.
    """
    return _gpufeed.attach_run(int(pid), duration=float(duration), rate=float(rate))


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a gpufeed JSON document, as ``gpufeed schema
    NAME`` prints it: ``"phase-steps"`` is the schema of ``StepTimer.report().to_dict()``;
    the others are those of the CLI's ``--format json`` documents and of ``report.json``
    (``gpufeed schema`` lists them). A name that is not a document raises ``ValueError``.
    """
    import json

    return json.loads(_gpufeed.schema_text(name))


def precompute(
    data: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    on_error: str = "skip",
    config: str | os.PathLike[str] | None = None,
    layout: str | None = None,
    columns: str | Mapping[str, str] | Sequence[str] | None = None,
    mic: str | None = None,
    max_skipped: float | None = None,
    features: str | Sequence[str] | None = None,
    extra: Callable[[str, Any, int], Mapping[str, Any]] | None = None,
) -> Cache:
    """Computes the features of every utterance of ``data`` into the cache, as
    ``gpufeed precompute`` does, and returns the :class:`Cache` (always: a run that cannot
    complete it raises :class:`DataError`). Every argument after ``data`` is keyword-only.

    ``data`` is a dataset folder or manifest in any layout gpufeed reads (LJSpeech,
    LibriTTS, VCTK, Common Voice, NeMo, Kaldi, Lhotse, WebDataset, generic CSV/TSV/JSONL,
    gpufeed's own), detected from what is there; ``layout`` names one instead, and
    ``columns`` says which column holds what (``{"audio": "path", "text": "sentence"}``
    or ``"audio=path,text=sentence"``; a list or ``"id,text,speaker"`` names a headerless
    file's columns by position). ``mic`` picks VCTK's microphone. More than
    ``max_skipped`` (default 0.05) of the items left out raises. ``cache`` is the cache
    root (default: ``data.cache_dir`` of the config, else ``DATA/.gpufeed-cache``). A
    complete cache with the same settings is reused, a partial one finished. ``jobs``
    threads (default: every core); ``on_error`` ``"skip"`` lists bad utterances in
    ``cache.skipped``, ``"fail"`` raises on the first. ``config`` is a YAML file read as
    the CLI's ``--config``. The GIL is released for the run.

    ``features`` names the arrays cached per item, all from one decode (``"mel,f0"`` or
    ``["mel", "linear", "energy", "f0", "wav"]``): ``mel`` (always), ``linear`` (the
    magnitude spectrogram), ``energy`` (per frame), ``f0`` (pYIN's F0, 0 where unvoiced,
    and ``voiced``; ``"f0:yin"`` for YIN), ``wav`` (int16, exactly ``frames * hop``
    samples; ``"wav:float32"``). Default: the config's ``data.features``, else the mel.

    ``extra`` is your own function of one item, ``extra(id, audio, sr)`` returning a dict of
    numpy arrays (codec tokens, a speaker embedding: anything ``numpy.asarray`` takes, 0-D
    to 2-D, each item's of one dtype and width; rows may differ). It gets the audio the
    mel was computed from (float32, mono, at the cache's rate), and runs on the worker
    threads (the GIL taken for each call) after the cache is complete, for the arrays the
    cache does not hold yet: they are added as ``Cache.add`` does, and
    ``report["extra"]`` says what was computed and what was kept.

    The returned cache's ``report`` (a :class:`PrecomputeReport`) says what was built,
    reused and skipped. To build one machine's slice of the cache, use
    :func:`precompute_shard`.
    """
    report = _run(data, None, cache, jobs, on_error, config, layout, columns, mic,
                  max_skipped, features)
    if not report["complete"]:
        raise DataError(
            f"the cache `{report['cache_dir']}` is not complete after this run: "
            f"{report.get('summary', '')}".rstrip(": ")
        )
    result = Cache._with_report(report["cache_dir"], report)
    if extra is not None:
        report["extra"] = result._add_extra(
            extra,
            jobs=jobs,
            data=os.fspath(data),
            layout=layout,
            columns=_columns(columns),
            mic=mic,
        )
    return result


def precompute_shard(
    data: str | os.PathLike[str],
    *,
    shard: str | tuple[int, int],
    cache: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    on_error: str = "skip",
    config: str | os.PathLike[str] | None = None,
    layout: str | None = None,
    columns: str | Mapping[str, str] | Sequence[str] | None = None,
    mic: str | None = None,
    max_skipped: float | None = None,
    features: str | Sequence[str] | None = None,
) -> PrecomputeReport:
    """One machine's slice of :func:`precompute`: ``shard`` is ``"I/N"``, ``(I, N)`` or
    ``"auto"`` (the array job's index: Slurm, Kubernetes indexed jobs...), as the CLI's
    ``--shard``; the other arguments are :func:`precompute`'s. Returns the run's report,
    always a :class:`PrecomputeReport` dict: ``report["complete"]`` is true for the run
    that completed the cache (the last slice to finish), whose ``report["cache_dir"]``
    then opens with :class:`Cache`; the slices may run in any order and at once.
    """
    return _run(data, shard, cache, jobs, on_error, config, layout, columns, mic,
                max_skipped, features)


def _run(
    data: str | os.PathLike[str],
    shard: str | tuple[int, int] | None,
    cache: str | os.PathLike[str] | None,
    jobs: int | None,
    on_error: str,
    config: str | os.PathLike[str] | None,
    layout: str | None,
    columns: str | Mapping[str, str] | Sequence[str] | None,
    mic: str | None,
    max_skipped: float | None,
    features: str | Sequence[str] | None,
) -> PrecomputeReport:
    """``precompute_run`` of the extension with the arguments as it takes them."""
    return _gpufeed.precompute_run(
        os.fspath(data),
        cache=None if cache is None else os.fspath(cache),
        jobs=jobs,
        shard=shard,
        on_error=on_error,
        config=None if config is None else os.fspath(config),
        layout=layout,
        columns=_columns(columns),
        mic=mic,
        max_skipped=max_skipped,
        features=[features] if isinstance(features, str) else None if features is None else list(features),
    )


def _columns(columns: str | Mapping[str, str] | Sequence[str] | None) -> str | None:
    """``columns`` as the CLI's ``--columns`` string."""
    if columns is None or isinstance(columns, str):
        return columns
    if isinstance(columns, Mapping):
        return ",".join(f"{role}={name}" for role, name in columns.items())
    return ",".join(columns)


def load_config(path: str | os.PathLike[str]) -> ConfigDocument:
    """The config file as gpufeed reads it (every default filled in), as a dict. Warnings
    about the file are issued as Python warnings."""
    return _gpufeed.load_config(os.fspath(path))
