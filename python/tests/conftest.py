"""Fixtures: the demo dataset and its cache (built once per session), the real LJSpeech
clips of shared/data, and helpers."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import gpufeed

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"


def run_cli(*args: str, **kw):
    """`python -m gpufeed ARGS` in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run(
        [sys.executable, "-m", "gpufeed", *args],
        capture_output=True,
        text=True,
        timeout=kw.pop("timeout", 300),
        **kw,
    )
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> pathlib.Path:
    """64 generated clips in LJSpeech layout (`gpufeed demo-data`)."""
    d = tmp_path_factory.mktemp("demo") / "data"
    code, _, err = run_cli("demo-data", str(d), "--clips", "64", "--seed", "7")
    assert code == 0, err
    return d


@pytest.fixture(scope="session")
def demo_cache(demo_dir, tmp_path_factory) -> gpufeed.Cache:
    root = tmp_path_factory.mktemp("cache")
    return gpufeed.precompute(demo_dir, cache=root)


@pytest.fixture(scope="session")
def lj_dir() -> pathlib.Path:
    d = SHARED / "ljspeech-mini"
    if not (d / "metadata.csv").is_file():
        pytest.fail(f"{d} is missing: the tests need the team's shared/ folder beside the repository")
    return d


@pytest.fixture(scope="session")
def lj_cache(lj_dir, tmp_path_factory) -> gpufeed.Cache:
    return gpufeed.precompute(lj_dir, cache=tmp_path_factory.mktemp("ljcache"))


def threads() -> int:
    """Threads of this process."""
    return len(os.listdir("/proc/self/task"))
