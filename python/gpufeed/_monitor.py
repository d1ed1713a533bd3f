"""``Monitor``: GPU and host sampling on a Rust thread while Python code runs."""

from __future__ import annotations

from ._gpufeed import Monitor

__all__ = ["Monitor"]
