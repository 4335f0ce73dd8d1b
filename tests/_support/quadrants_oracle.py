"""Run one small program on quadrants 1.3.3 (the oracle) and on qd, each in a fresh interpreter.

A program is written as quadrants users write it (`import quadrants as qd`); the qd run is the
same text with that import replaced by `import qd`. quadrants and qd both start runtimes and
print banners, so each runs in its own process, and only the program's own output lines are
compared (quadrants' log lines are dropped).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMPORT = "import quadrants as qd"


def run(tmp_path: Path, source: str, *, on_qd: bool) -> str:
    """The program's output lines (stdout) on qd or on quadrants; a failing run fails the test."""
    text = textwrap.dedent(source)
    assert IMPORT in text, "the program must `import quadrants as qd`"
    if on_qd:
        text = text.replace(IMPORT, "import qd")
    script = tmp_path / ("prog_qd.py" if on_qd else "prog_quadrants.py")
    script.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QD_OFFLINE_CACHE_FILE_PATH": str(tmp_path / "cache")}
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return "\n".join(line for line in p.stdout.splitlines() if not line.startswith(("[Quadrants]", "[W ", "[I ")))


def both(tmp_path: Path, source: str) -> tuple[str, str]:
    """(quadrants' output, qd's output) of one program."""
    return run(tmp_path, source, on_qd=False), run(tmp_path, source, on_qd=True)
