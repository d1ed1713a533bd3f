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
from typing import Any

from . import _gpufeed
from ._gpufeed import Cache, Loader, Monitor, __version__, mel
from ._steps import StepReport, StepTimer

__all__ = [
    "Cache",
    "Loader",
    "Monitor",
    "StepReport",
    "StepTimer",
    "__version__",
    "attach",
    "load_config",
    "mel",
    "precompute",
    "schema",
]


def attach(pid: int, duration: float = 10.0, rate: float = 100.0) -> dict[str, Any]:
    """``gpufeed attach PID --format json``: samples the Python stacks of a running training
    process (and its workers) for ``duration`` seconds at ``rate`` Hz without stopping it,
    and returns the ``attach`` document (verdict, shares, evidence, fix;
    ``gpufeed.schema("attach")``). The sampling runs in a separate gpufeed process, as
    sampling must. Your own process is refused: time your own loop with ``StepTimer``.
    A target that cannot be sampled raises ``RuntimeError`` with gpufeed's one-line reason.
    """
    import json
    import subprocess
    import sys

    if int(pid) == os.getpid():
        raise ValueError(
            "gpufeed.attach samples another process; to time this process's own loop, "
            "use gpufeed.StepTimer"
        )
    r = subprocess.run(
        [sys.executable, "-m", "gpufeed", "attach", str(int(pid)),
         "--duration", f"{float(duration)}s", "--rate", str(float(rate)), "--format", "json"],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().removeprefix("error: "))
    return json.loads(r.stdout)


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
    cache: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    shard: str | tuple[int, int] | None = None,
    on_error: str = "skip",
    config: str | os.PathLike[str] | None = None,
    layout: str | None = None,
    columns: str | Mapping[str, str] | Sequence[str] | None = None,
    mic: str | None = None,
    max_skipped: float | None = None,
    features: str | Sequence[str] | None = None,
    extra: Callable[[str, Any, int], Mapping[str, Any]] | None = None,
) -> Any:
    """Computes the features of every utterance of ``data`` into the cache, as
    ``gpufeed precompute`` does, and returns the :class:`Cache`.

    ``data`` is a dataset folder or manifest in any layout gpufeed reads (LJSpeech,
    LibriTTS, VCTK, Common Voice, NeMo, Kaldi, Lhotse, WebDataset, generic CSV/TSV/JSONL,
    gpufeed's own), detected from what is there; ``layout`` names one instead, and
    ``columns`` says which column holds what (``{"audio": "path", "text": "sentence"}``
    or ``"audio=path,text=sentence"``; a list or ``"id,text,speaker"`` names a headerless
    file's columns by position). ``mic`` picks VCTK's microphone. More than
    ``max_skipped`` (default 0.05) of the items left out raises. ``cache`` is the cache root (default: ``data.cache_dir`` of the config, else
    ``DATA/.gpufeed-cache``). A complete cache with the same settings is reused, a partial
    one finished. ``jobs`` threads (default: every core); ``on_error`` ``"skip"`` lists bad
    utterances in ``cache.skipped``, ``"fail"`` raises on the first. ``config`` is a YAML
    file read as the CLI's ``--config``. The GIL is released for the run.

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

    The returned cache's ``report`` says what was built, reused and skipped. With ``shard``
    (``"I/N"`` or ``(I, N)``: one machine's slice), a run that leaves the cache incomplete
    returns that report (a dict) instead: the last shard's run returns the cache.
    """
    report = _gpufeed.precompute_run(
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
        features=[features] if isinstance(features, str) else features,
    )
    if not report["complete"]:
        return report
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


def _columns(columns: str | Mapping[str, str] | Sequence[str] | None) -> str | None:
    """``columns`` as the CLI's ``--columns`` string."""
    if columns is None or isinstance(columns, str):
        return columns
    if isinstance(columns, Mapping):
        return ",".join(f"{role}={name}" for role, name in columns.items())
    return ",".join(columns)


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The config file as gpufeed reads it (every default filled in), as a dict. Warnings
    about the file are issued as Python warnings."""
    return _gpufeed.load_config(os.fspath(path))
