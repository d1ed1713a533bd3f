"""``python -m gpufeed``: the ``gpufeed`` command that came with this package.

The wheel ships the Rust binary itself as its command (``pip install .`` puts it on the
PATH); this runs the same binary, in place of this process where the system allows.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ._bin import find_gpufeed_bin


def main() -> None:
    """Runs ``gpufeed`` with this process's arguments and exits with its code."""
    try:
        binary = find_gpufeed_bin()
    except FileNotFoundError as e:
        sys.stderr.write(f"error: {e}\n")
        sys.exit(2)
    args = [binary, *sys.argv[1:]]
    if os.name == "posix":
        # The binary is the whole process from here: signals, exit code and terminal
        # are its own.
        os.execv(binary, args)
    sys.exit(subprocess.call(args))


if __name__ == "__main__":
    main()
