"""`python -m qd.standin [-m module | script.py] [args...]`: run a quadrants program on qd.

The program sees the command line it would see when run directly (`sys.argv[0]` is the script
or the module's file), runs as `__main__`, and finds qd wherever it imports quadrants.
"""

from __future__ import annotations

import os
import runpy
import sys

from . import install

_USAGE = "usage: python -m qd.standin [-m module | script.py] [args...]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"qd.standin: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
