"""gpufeed's PEP 517 build backend: maturin's, with the ``gpufeed`` binary in the wheel.

The wheel holds the extension module (``gpufeed._gpufeed``, library crates only) and the
``gpufeed`` command as the Rust binary itself, in the wheel's ``scripts`` folder, as ruff
and uv ship theirs: ``pip install .`` puts it on the PATH beside ``python``, and it starts
as fast as ``cargo install`` would make it.

maturin builds one Cargo target per wheel, so this backend builds the binary first (same
profile and target as maturin's build: ``MATURIN_PEP517_ARGS`` or the ``build-args``
config setting), puts it in ``gpufeed._gpufeed.data/scripts/`` at the project root,
where maturin takes a wheel's data folder from, lets maturin build the wheel, and removes
the folder. Everything else is maturin's own backend, unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import maturin
from maturin import (  # noqa: F401 (the PEP 517 hooks this backend does not change)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

# Where maturin looks for a wheel's data folder when pyproject.toml names none: the
# extension module's full name with `.data`, beside pyproject.toml (optional there).
DATA = Path("gpufeed._gpufeed.data")
BIN = "gpufeed.exe" if os.name == "nt" else "gpufeed"


def _cargo_args(config_settings: Mapping[str, Any] | None) -> list[str]:
    """The profile and target that maturin is asked to build with, as cargo arguments."""
    args = maturin.get_maturin_pep517_args(config_settings)
    out = ["--release"]
    for i, arg in enumerate(args):
        for flag in ("--profile", "--target"):
            if arg == flag and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(flag + "="):
                value = arg.split("=", 1)[1]
            else:
                continue
            if flag == "--profile":
                out = [a for a in out if a != "--release"]
            out += [flag, value]
    return out


def _strip_asked(config_settings: Mapping[str, Any] | None) -> bool:
    """Whether maturin strips the extension (`strip` in pyproject.toml or `--strip`): the
    binary is stripped alike."""
    args = maturin.get_maturin_pep517_args(config_settings)
    if any(a == "--strip" or a == "--strip=true" for a in args):
        return True
    if any(a == "--strip=false" for a in args):
        return False
    return bool(maturin.get_config().get("strip", False))


def _build_binary(config_settings: Mapping[str, Any] | None) -> Path:
    """`cargo build` of the `gpufeed` binary; the path cargo wrote it to."""
    command = [
        "cargo",
        "build",
        "--package",
        "gpufeed",
        # Features resolved as for the extension (whose crate turns on every feature the
        # binary's tree does): maturin's build that follows reuses every dependency.
        "--package",
        "gpufeed-python",
        "--bin",
        "gpufeed",
        "--message-format=json-render-diagnostics",
        *_cargo_args(config_settings),
    ]
    print("Running `{}`".format(" ".join(command)), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        sys.stderr.write(f"error: `{' '.join(command)}` exited {result.returncode}\n")
        sys.exit(1)
    for line in result.stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        target = message.get("target") or {}
        if (
            message.get("reason") == "compiler-artifact"
            and target.get("name") == "gpufeed"
            and "bin" in target.get("kind", [])
            and message.get("executable")
        ):
            return Path(message["executable"])
    sys.stderr.write(f"error: `{' '.join(command)}` named no executable\n")
    sys.exit(1)


@contextmanager
def _binary_in_data(config_settings: Mapping[str, Any] | None) -> Iterator[None]:
    binary = _build_binary(config_settings)
    # The folder is this backend's alone (.gitignore): one left by a build that was cut
    # off holds only an older binary.
    shutil.rmtree(DATA, ignore_errors=True)
    try:
        scripts = DATA / "scripts"
        scripts.mkdir(parents=True)
        shutil.copy2(binary, scripts / BIN)
        # The release profile keeps line tables for profilers (Cargo.toml); the wheel's
        # command needs none of them: 199 MB unstripped.
        strip = shutil.which("strip")
        if _strip_asked(config_settings) and strip is not None:
            subprocess.run([strip, str(scripts / BIN)], check=True)
        yield
    finally:
        shutil.rmtree(DATA, ignore_errors=True)


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _binary_in_data(config_settings):
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _binary_in_data(config_settings):
        return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
