"""Type stubs of the Rust extension ``gpufeed._gpufeed`` (crates/gpufeed-python)."""

import os
import pathlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, NotRequired, Self, TypedDict, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "schema_text",
    "mel",
    "precompute_run",
    "load_config",
    "Cache",
    "Loader",
    "LoaderIter",
    "BatchBuffers",
    "phase_steps_report",
    "phase_steps_save",
    "Monitor",
    "analyze_run",
    "attach_run",
]

__version__: str

class Batch(TypedDict):
    """One batch. Every array owns its memory (the batch's buffers go back to the loader
    only when Python has dropped them) and starts on a 64-byte boundary."""

    mel: npt.NDArray[np.float32]
    """[B, T, n_mels], zero-padded."""
    mel_lengths: npt.NDArray[np.int64]
    """[B]: true frames per row (0 for filler rows)."""
    tokens: npt.NDArray[np.int64]
    """[B, L], padded with 0."""
    token_lengths: npt.NDArray[np.int64]
    """[B]: true tokens per row (0 for filler rows)."""
    ids: list[str]
    """The rows' utterance ids ("" for filler rows)."""
    items: npt.NDArray[np.int64]
    """[B]: the rows' indices in the cache (-1 for filler rows)."""
    speakers: npt.NDArray[np.int64]
    """[B]: the rows' speakers, indices into ``Cache.speaker_table`` (-1: none, or a
    filler row)."""
    linear: NotRequired[npt.NDArray[np.float32] | npt.NDArray[np.float16]]
    """[B, T, n_fft/2 + 1], zero-padded (caches built with ``linear``)."""
    linear_lengths: NotRequired[npt.NDArray[np.int64]]
    energy: NotRequired[npt.NDArray[np.float32]]
    """[B, T] (``energy``)."""
    energy_lengths: NotRequired[npt.NDArray[np.int64]]
    f0: NotRequired[npt.NDArray[np.float32]]
    """[B, T], Hz, 0 where unvoiced or padded (``f0``)."""
    f0_lengths: NotRequired[npt.NDArray[np.int64]]
    voiced: NotRequired[npt.NDArray[np.uint8]]
    """[B, T] (``f0``)."""
    voiced_lengths: NotRequired[npt.NDArray[np.int64]]
    wav: NotRequired[npt.NDArray[np.int16] | npt.NDArray[np.float32]]
    """[B, T * hop_length]: frames [a, b) of row r are samples [a*hop, b*hop) (``wav``)."""
    wav_lengths: NotRequired[npt.NDArray[np.int64]]
    """[B]: true samples per row."""
    epoch: int
    index: int
    """The batch's position in its epoch."""

class Item(TypedDict):
    mel: npt.NDArray[np.float32]
    """[frames, n_mels], a read-only view of the mapped shard."""
    tokens: npt.NDArray[np.int32]
    """[n], a read-only view of the mapped shard."""
    linear: NotRequired[npt.NDArray[np.float32] | npt.NDArray[np.float16]]
    """[frames, n_fft/2 + 1], the magnitude spectrogram (caches built with ``linear``;
    float16 with ``linear:float16``)."""
    energy: NotRequired[npt.NDArray[np.float32]]
    """[frames], the L2 norm of each STFT frame (``energy``)."""
    f0: NotRequired[npt.NDArray[np.float32]]
    """[frames], F0 in Hz, 0 where unvoiced (``f0``)."""
    voiced: NotRequired[npt.NDArray[np.uint8]]
    """[frames], 1 where voiced (``f0``)."""
    wav: NotRequired[npt.NDArray[np.int16] | npt.NDArray[np.float32]]
    """[frames * hop_length], the waveform: frames [a, b) are samples [a*hop, b*hop)."""
    id: str
    text: str
    speaker: str | None
    language: str | None
    index: int

# Documents: the dicts the functions and properties return (type checkers only; the
# runtime values are plain dicts and lists).

class AudioSettings(TypedDict):
    """The audio keys of the config's ``data`` section (``Cache.settings["audio"]``)."""

    sample_rate: int
    n_fft: int
    hop_length: int
    win_length: int
    n_mels: int
    fmin: float
    fmax: float | None
    """``None``: ``sample_rate / 2``."""
    mel_scale: Literal["slaney", "htk"]
    mel_norm: Literal["slaney", "none"]
    power: float
    center: bool
    pad_mode: Literal["reflect", "constant"]
    log: Literal["ln", "log10", "none"]
    log_floor: float

class TextSettings(TypedDict):
    cleaner: Literal["unicode", "english", "basic", "none"]
    add_blank: bool
    add_eos: bool
    use_normalized_text: bool

class CacheSettings(TypedDict):
    """What a cache was built with (``Cache.settings``); its ``key`` hashes these."""

    audio: AudioSettings
    text: TextSettings
    text_fingerprint: str
    arrays: dict[str, Any]
    """The settings of the arrays beside the mel."""

class LoaderSettings(TypedDict):
    """The loader's resolved settings (``Loader.settings``)."""

    batch_size: int
    batch_frames: int | None
    workers: int
    prefetch: int
    shuffle: bool
    seed: int
    bucket_window: int
    drop_last: bool
    padding: dict[str, Any]
    """``{"fixed": {"max_text": T, "max_frames": F}}`` (``pad="static"``), or the
    longest-item padding with its multiple."""
    over_length: Literal["skip", "truncate"]
    int64: bool
    rank: int
    world_size: int

class LoaderState(TypedDict):
    """``Loader.state_dict()``: where to resume, over which cache and plan."""

    format: Literal["gpufeed-loader-state"]
    version: int
    epoch: int
    position: int
    batches_per_epoch: int
    cache_key: str
    cache_hash: str
    settings: dict[str, Any]

class SkippedItem(TypedDict):
    """An utterance left out of the cache, with the reason."""

    id: str | None
    line: int
    """Its line in the manifest."""
    audio: str | None
    reason: str

class CacheTotals(TypedDict):
    items: int
    skipped: int
    mel_frames: int
    tokens: int
    audio_s: float

class SymbolTable(TypedDict):
    format_version: int
    reserved: list[str]
    """The ids before the symbols: ``<pad>``, ``<eos>``, ``<blank>``, ``<unk>``."""
    symbols: list[str]

class PrecomputeReport(TypedDict):
    """What a ``precompute`` run did (``Cache.report``, and what ``precompute_shard``
    returns)."""

    cache_dir: str
    key: str
    items: int
    shards_total: int
    shards_built: int
    shards_reused: int
    items_computed: int
    audio_s_computed: float
    skipped: list[SkippedItem]
    complete: bool
    """Whether every shard exists and the manifest is written."""
    was_complete: bool
    over_text_length: int
    over_mel_frames: int
    elapsed_s: float
    jobs: int
    layout: str
    detected: str
    notes: list[str]
    speakers: int
    languages: int
    cleaner: str
    text_changed: int
    text_lost: str
    symbols: int
    arrays: list[str]
    cache_bytes: int
    cache_audio_s: float
    summary: str
    """The run as ``gpufeed precompute`` prints it."""
    extra: NotRequired[dict[str, Any]]
    """``precompute(extra=fn)``: what was computed and what was kept."""

class ConfigDocument(TypedDict):
    """``load_config(path)``: every section with its defaults filled in."""

    model: dict[str, Any]
    data: dict[str, Any]
    training: dict[str, Any]

class MonitorReport(TypedDict):
    """``Monitor.report()``: the ``monitor`` document (``gpufeed.schema("monitor")``)."""

    schema_version: int
    kind: Literal["util"]
    samples: int
    interval_s: float
    gpus: list[dict[str, Any]]
    """Per GPU: utilisation statistics, idle gaps, period and verdict."""
    host: dict[str, Any]

class AttachShares(TypedDict):
    data_wait: float
    sync: float
    compute: float
    checkpoint_logging: float
    other: float

class AttachDocument(TypedDict):
    """``gpufeed.attach()``: the ``attach`` document (``gpufeed.schema("attach")``)."""

    schema_version: int
    pid: int
    python: str
    verdict: Literal["input-bound", "sync-bound", "compute-bound", "undetermined"]
    level: NotRequired[Literal["moderate", "high"] | None]
    shares: AttachShares
    samples: int
    torn: int
    window_s: float
    rate_hz: float
    exited: bool
    launcher: NotRequired[str | None]
    ranks: list[dict[str, Any]]
    lines: list[dict[str, Any]]
    workers: list[dict[str, Any]]
    gpus: NotRequired[list[dict[str, Any]] | None]
    evidence: list[str]
    fix: str
    if_fixed: NotRequired[dict[str, Any] | None]
    no_estimate: NotRequired[str | None]
    cost: dict[str, Any]

def schema_text(name: str) -> str: ...
def mel(
    audio: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    sr: int,
    *,
    preset: Literal["tts", "librosa", "librosa-tts"] = "tts",
    **settings: Any,
) -> npt.NDArray[np.float32]:
    """The mel spectrogram of 1-D ``audio`` at ``sr`` Hz, float32 ``[frames, n_mels]``
    (librosa's layout transposed). ``preset="tts"``: log mel of Tacotron 2 / HiFi-GAN;
    ``"librosa"``: exactly ``librosa.feature.melspectrogram(y=audio, sr=sr).T``, every
    default (n_fft 2048, hop 512, 128 mels up to sr / 2, power 2, zero padding, no log);
    ``"librosa-tts"``: the same power spectrum on the ``"tts"`` frames and filterbank
    (n_fft 1024, hop 256, 80 mels up to 8 kHz). Settings: n_fft,
    hop_length, win_length, n_mels, fmin, fmax, mel_scale, mel_norm, power, center,
    pad_mode, log, log_floor. The GIL is released."""

def precompute_run(
    data: str,
    cache: str | None = None,
    jobs: int | None = None,
    shard: str | tuple[int, int] | None = None,
    on_error: str = "skip",
    config: str | None = None,
    layout: str | None = None,
    columns: str | None = None,
    mic: str | None = None,
    max_skipped: float | None = None,
    features: list[str] | None = None,
) -> PrecomputeReport: ...
def load_config(path: str) -> ConfigDocument: ...
def attach_run(pid: int, *, duration: float, rate: float) -> AttachDocument: ...
def analyze_run(
    out: str,
    *,
    data: str | None = None,
    config: str | None = None,
    code: str | None = None,
    trace: str | None = None,
    attach: int | None = None,
    attach_duration: float = 10.0,
    quick: bool = False,
    demo: bool = False,
    progress: bool = True,
) -> dict[str, Any]: ...
def phase_steps_report(
    meta: dict[str, Any], steps: list[tuple[float, list[tuple[str, float]], int | None]]
) -> tuple[dict[str, Any], str]: ...
def phase_steps_save(
    path: str, meta: dict[str, Any], steps: list[tuple[float, list[tuple[str, float]], int | None]]
) -> None: ...

@final
class Cache:
    """A complete feature cache, mapped read-only."""

    def __new__(cls, path: str | os.PathLike[str]) -> Self: ...
    @staticmethod
    def _with_report(path: str, report: PrecomputeReport) -> Cache: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> Item: ...
    @property
    def report(self) -> PrecomputeReport | None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def key(self) -> str: ...
    @property
    def n_mels(self) -> int: ...
    @property
    def ids(self) -> list[str]: ...
    @property
    def texts(self) -> list[str]: ...
    @property
    def speakers(self) -> npt.NDArray[np.int64]:
        """Each item's index into ``speaker_table`` (-1: no speaker)."""
    @property
    def speaker_table(self) -> list[str]:
        """The speakers, sorted; a speaker's index is its place here."""
    @property
    def languages(self) -> list[str | None]:
        """Each item's language as the dataset writes it."""
    @property
    def layout(self) -> str:
        """The dataset's layout (``ljspeech``, ``libritts``, ``nemo``, ...)."""
    @property
    def arrays(self) -> list[dict[str, Any]]:
        """The arrays each item has besides ``mel`` and ``tokens``: name, numpy dtype,
        width and rows per mel frame."""
    @property
    def mel_lengths(self) -> npt.NDArray[np.int64]: ...
    @property
    def token_lengths(self) -> npt.NDArray[np.int64]: ...
    @property
    def settings(self) -> CacheSettings: ...
    @property
    def symbols(self) -> SymbolTable: ...
    @property
    def skipped(self) -> list[SkippedItem]: ...
    @property
    def totals(self) -> CacheTotals: ...
    def verify(self) -> None: ...
    def add(
        self,
        name: str,
        fn: Callable[[str, npt.NDArray[np.float32], int], Any],
        *,
        replace: bool = False,
        jobs: int | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> dict[str, Any]:
        """Adds array ``name``, ``fn(id, audio, sr)`` of every item (a numpy array, or
        what ``numpy.asarray`` takes, 0-D to 2-D), beside the shards; nothing else is
        computed again. ``replace=True`` computes an array the cache holds again; ``data``
        is the dataset when it moved. Returns what was done."""
    def _add_extra(
        self,
        fn: Callable[[str, npt.NDArray[np.float32], int], Mapping[str, Any]],
        *,
        jobs: int | None = None,
        data: str | os.PathLike[str] | None = None,
        layout: str | None = None,
        columns: str | None = None,
        mic: str | None = None,
    ) -> dict[str, Any]: ...

@final
class BatchBuffers:
    """The owner of one batch's buffers (the arrays' ``base``)."""

@final
class LoaderIter(Iterator[Batch]):
    def __next__(self) -> Batch: ...
    def __len__(self) -> int: ...

@final
class Loader:
    """Batches from a gpufeed cache, built on Rust threads. Iterating yields the current
    epoch from the current position; the loader then moves to the next epoch."""

    def __new__(
        cls,
        source: Cache | str | os.PathLike[str] | None = None,
        *,
        batch_size: int | None = None,
        workers: int | None = None,
        prefetch: int | None = None,
        shuffle: bool | None = None,
        seed: int | None = None,
        pad: Literal["static", "longest"] | None = None,
        max_text_length: int | None = None,
        max_mel_frames: int | None = None,
        pad_to_multiple: int | None = None,
        bucket_window: int | None = None,
        drop_last: bool | None = None,
        over_length: Literal["skip", "truncate"] | None = None,
        rank: int | None = None,
        world_size: int | None = None,
        epoch: int = 0,
        cache: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        layout: str | None = None,
        columns: str | None = None,
        batch_frames: int | None = None,
        batch_seconds: float | None = None,
    ) -> Self:
        """``source``: a ``Cache``, a cache folder or a dataset folder (precomputed first);
        left out, the ``data.dataset_path`` of ``config``. The config is read once.

        ``batch_frames`` / ``batch_seconds``: batches by duration (at most that many
        padded mel frames, or seconds of audio, per batch; items of similar length sorted
        together; every rank the same number of batches) instead of ``batch_size``."""
    def __iter__(self) -> LoaderIter: ...
    def __len__(self) -> int: ...
    @property
    def epoch(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def rank(self) -> int: ...
    @property
    def world_size(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def cache(self) -> Cache: ...
    @property
    def settings(self) -> LoaderSettings: ...
    @property
    def closed(self) -> bool: ...
    def plan_stats(self, epoch: int | None = None) -> dict[str, int]: ...
    def set_epoch(self, epoch: int) -> None: ...
    def state_dict(self) -> LoaderState: ...
    def load_state_dict(self, state: LoaderState | dict[str, Any]) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Loader: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class Monitor:
    """Samples the GPUs and this host on a Rust thread between ``start()`` and ``stop()``
    (or over a ``with`` block)."""

    def __new__(cls, interval: float = 0.1, *, source: str = "nvml", speed: float = 1.0) -> Self: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    @property
    def running(self) -> bool: ...
    def report(self) -> MonitorReport: ...
    def text(self) -> str: ...
    def __enter__(self) -> Monitor: ...
    def __exit__(self, *exc: object) -> bool: ...
