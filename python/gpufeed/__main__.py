"""The ``gpufeed`` command: the same Rust CLI as the binary, run in this process.

``pip install gpufeed`` puts it on the PATH; ``python -m gpufeed`` runs it too.
"""

from __future__ import annotations

import signal
import sys


def main() -> None:
    """Runs ``gpufeed`` with this process's arguments and exits with its code."""
    from ._gpufeed import main as run

    # The CLI is the whole process: Ctrl-C ends it as it ends the binary, rather than
    # setting a flag that no Python code is left to check.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(run(["gpufeed", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
