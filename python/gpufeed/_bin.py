"""Where the ``gpufeed`` command that came with this package is.

The wheel ships the Rust binary itself in its ``scripts`` folder (as ruff and uv ship
theirs), and pip installs it beside the environment's ``python``. ``python -m gpufeed``
runs it, and other tools can find it with :func:`find_gpufeed_bin`.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

_NAME = "gpufeed" + (sysconfig.get_config_var("EXE") or "")


def _candidates() -> list[Path]:
    """Where pip puts a wheel's scripts, for each way this package can be installed."""
    places = [Path(sysconfig.get_path("scripts"))]
    # `pip install --user`: the user scheme's scripts.
    places.append(Path(sysconfig.get_path("scripts", scheme=sysconfig.get_preferred_scheme("user"))))
    # `pip install --target DIR` and `--prefix DIR`: scripts land in DIR/bin, beside the
    # package, or under the prefix above site-packages.
    package = Path(__file__).resolve().parent
    places.append(package.parent / "bin")
    for parent in package.parents:
        if parent.name == "site-packages" or parent.name == "dist-packages":
            places.append(parent.parents[2] / "bin")
            break
    # The interpreter's own folder (a venv's python found through a symlink).
    places.append(Path(sys.executable).parent)
    seen: list[Path] = []
    for p in places:
        if p not in seen:
            seen.append(p)
    return seen


def find_gpufeed_bin() -> str:
    """The path of the ``gpufeed`` binary installed with this package.

    Raises ``FileNotFoundError`` naming every folder looked in, when it is not there (a
    package built without the backend in pyproject.toml, for example by ``maturin
    develop``).
    """
    places = _candidates()
    for folder in places:
        path = folder / _NAME
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    looked = ", ".join(str(p) for p in places)
    raise FileNotFoundError(
        f"the `gpufeed` command is not installed beside this package (looked in {looked}): "
        "install the package with `pip install .` from the repository, which builds the "
        "binary into the wheel, or put the binary on the PATH with "
        "`cargo install --path crates/gpufeed`"
    )
