"""Runs small programs written for quadrants under one implementation and pickles what each
leaves in its `OUT` dict (or the name of the exception it raised), for tests that compare qd
with quadrants program by program.

Usage: `python _program_runner.py <qd|quadrants> <output.pkl> <program.py>...`. Each program is
first rewritten to import the implementation as `qd` (`import qd` → `import quadrants as qd`
and `from qd import` → `from quadrants import` for quadrants) into a file next to it, then run as a script.
"""

from __future__ import annotations

import pickle
import runpy
import sys
import warnings
from pathlib import Path


def run(impl: str, programs: list[str]) -> dict:
    results = {}
    for p in programs:
        src = Path(p).read_text()
        if impl == "quadrants":
            src = src.replace("import qd\n", "import quadrants as qd\n", 1)
            src = src.replace("from qd import", "from quadrants import")
        target = Path(p).with_name(f"{Path(p).stem}_{impl}.py")
        target.write_text(src)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ns = runpy.run_path(str(target), run_name="__main__")
            results[Path(p).stem] = ("ok", ns.get("OUT", {}))
        except Exception as e:  # noqa: BLE001 - the result is the kind of error
            results[Path(p).stem] = ("error", type(e).__name__, str(e)[:500])
    return results


if __name__ == "__main__":
    impl, out, *programs = sys.argv[1:]
    res = run(impl, programs)
    Path(out).write_bytes(pickle.dumps(res))
