"""Run one small program on quadrants 1.3.3 (the oracle) and on qd, each in a fresh interpreter.

A program is written as quadrants users write it (`import quadrants as qd`); the qd run is the
same text with that import replaced by `import qd`. quadrants and qd both start runtimes and
print banners, so each runs in its own process, and only the program's own output lines are
compared (quadrants' log lines are dropped).
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMPORT = "import quadrants as qd"


def _own_lines(stdout: str) -> str:
    return "\n".join(line for line in stdout.splitlines() if not line.startswith(("[Quadrants]", "[W ", "[I ")))


def run(tmp_path: Path, source: str, *, on_qd: bool, standin: bool = False, args: tuple[str, ...] = ()) -> str:
    """The program's output lines (stdout) on qd or on quadrants; a failing run fails the test.
    `standin`: the qd run is the unchanged text under `python -m qd.standin` (no import rewritten),
    and the program need not `import quadrants as qd` literally; `args`: its command line."""
    text = textwrap.dedent(source)
    if on_qd and not standin:
        assert IMPORT in text, "the program must `import quadrants as qd`"
        text = text.replace(IMPORT, "import qd")
    script = tmp_path / ("prog_qd.py" if on_qd else "prog_quadrants.py")
    script.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QD_OFFLINE_CACHE_FILE_PATH": str(tmp_path / "cache")}
    cmd = [sys.executable, *(["-m", "qd.standin"] if on_qd and standin else []), str(script), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return _own_lines(p.stdout)


def same(tmp_path: Path, source: str, *, standin: bool = False, args: tuple[str, ...] = ()) -> str:
    """A program's output, which must be the same on quadrants and on qd."""
    ref = run(tmp_path, source, on_qd=False, args=args)
    got = run(tmp_path, source, on_qd=True, standin=standin, args=args)
    assert got == ref
    return got


def run_here(tmp_path: Path, source: str, capsys) -> str:
    """The program's output on qd, run in this process (the quick tier's check of a program whose
    quadrants output a slow test compares): written to a file, so kernels have their source."""
    text = textwrap.dedent(source)
    assert IMPORT in text, "the program must `import quadrants as qd`"
    script = tmp_path / "prog_here.py"
    script.write_text(text.replace(IMPORT, "import qd"))
    capsys.readouterr()
    runpy.run_path(str(script), run_name="__main__")
    return _own_lines(capsys.readouterr().out).strip()


def both(tmp_path: Path, source: str) -> tuple[str, str]:
    """(quadrants' output, qd's output) of one program."""
    return run(tmp_path, source, on_qd=False), run(tmp_path, source, on_qd=True)


def recorded_checks(program: str, output: str, *, arch: bool = False):
    """The two tests of a program whose output on quadrants 1.3.3 is recorded beside it, to be
    bound to test names in the module: the quick one runs the program on qd in this process and
    compares with the record; the slow one runs both interpreters and checks that quadrants still
    prints the record and qd the same. `arch`: the quick one takes the `arch` fixture, so it is
    parametrised by target as the other tests of its folder are."""
    if arch:
        def quick(arch, tmp_path, capsys):
            assert run_here(tmp_path, program, capsys) == output
    else:
        def quick(tmp_path, capsys):
            assert run_here(tmp_path, program, capsys) == output

    @pytest.mark.slow  # two interpreters
    def same_as_quadrants(tmp_path):
        ref, got = both(tmp_path, program)
        assert ref == got == output

    return quick, same_as_quadrants
