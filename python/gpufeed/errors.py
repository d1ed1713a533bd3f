"""gpufeed's exceptions: one base, :class:`Error`, and a class per domain under it.

Each class keeps the builtin base that gpufeed raised before it had its own classes, so
``except ValueError`` or ``except FileNotFoundError`` in existing code still catches what
it caught:

- :class:`DataError` (``ValueError``): a dataset gpufeed cannot read, a cache that is
  damaged, incomplete or held by another run, an item that fails under
  ``on_error="fail"``; :class:`DataNotFoundError` (also ``FileNotFoundError``) when the
  dataset, the cache or a file in it is not there, :class:`DataIOError` (also
  ``OSError``) for other I/O errors;
- :class:`ConfigError` (``ValueError``): a config file or a setting (YAML or keyword
  argument) gpufeed refuses; :class:`ConfigNotFoundError` (also ``FileNotFoundError``)
  when the config file is not there;
- :class:`TraceError` (``ValueError``): a GPU recording or log that cannot be replayed
  (``Monitor(source="replay:PATH")``);
- :class:`AttachError` (``RuntimeError``): a process :func:`gpufeed.attach` cannot
  sample (no such process, not Python, permission denied, an unreadable interpreter).

An argument of the wrong type or an impossible value checked on the spot (``jobs=0``,
``pad="wide"``) stays a plain ``TypeError`` / ``ValueError``, as in the standard library.
"""

from __future__ import annotations

__all__ = [
    "AttachError",
    "ConfigError",
    "ConfigNotFoundError",
    "DataError",
    "DataIOError",
    "DataNotFoundError",
    "Error",
    "TraceError",
]


class Error(Exception):
    """The base of every exception gpufeed defines."""


class DataError(Error, ValueError):
    """A dataset gpufeed cannot read, or a cache that is damaged, incomplete or busy."""


class DataNotFoundError(DataError, FileNotFoundError):
    """The dataset, the cache, or a file they need, is not there."""


class DataIOError(DataError, OSError):
    """An I/O error reading a dataset or reading or writing a cache."""


class ConfigError(Error, ValueError):
    """A config file, or a setting given as a keyword argument, that gpufeed refuses."""


class ConfigNotFoundError(ConfigError, FileNotFoundError):
    """The config file is not there."""


class TraceError(Error, ValueError):
    """A GPU recording or log that cannot be read or replayed."""


class AttachError(Error, RuntimeError):
    """A process that :func:`gpufeed.attach` cannot sample."""
