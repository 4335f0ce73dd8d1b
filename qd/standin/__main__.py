"""`python -m qd.standin [-m module | script.py] [args...]`: run a quadrants program on qd.

The program runs as it would when run directly, finding qd wherever it imports quadrants: as
`python script.py`, its `__main__` module is the script with an absolute `__file__`, `sys.argv` is
the command line from the script on, and `sys.path[0]` is the script's directory (absolute, with
symbolic links resolved), in place of the working directory `python -m` put there; as
`python -m module`, runpy runs the module with the working directory first on `sys.path`.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types
import zipfile

from . import install

_USAGE = "usage: python -m qd.standin [-m module | script.py] [args...]"


def run_script(script: str) -> None:
    """Run the file `script` as the `__main__` module, as `python script` does. A directory or a zip
    archive holding a `__main__.py` runs through runpy, which puts the path itself first on `sys.path`."""
    path = os.path.abspath(script)
    own_path0 = not getattr(sys.flags, "safe_path", False)  # `python -P` puts no directory first
    if not os.path.isfile(path) or zipfile.is_zipfile(path):
        if own_path0 and sys.path:
            del sys.path[0]
        runpy.run_path(path, run_name="__main__")
        return
    if own_path0 and sys.path:
        sys.path[0] = os.path.dirname(os.path.realpath(path))
    with io.open_code(path) as f:
        code = compile(f.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__builtins__ = builtins
    # in place of this module for good, as `python script.py` has it: pickle and multiprocessing's
    # spawned children find the script's functions through it
    sys.modules["__main__"] = main
    exec(code, vars(main))


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        install()
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"qd.standin: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    install()
    sys.argv = argv
    run_script(script)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
