"""PTX checks shared by the CUDA code-generation tests: `ptxas` validation (skipped with a
reason where it is not installed) and small readers of PTX text."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas (CUDA toolkit) is not on PATH")


def ptxas_errors(ptx: str, arch: str = "sm_90") -> str | None:
    """None if `ptxas -arch=<arch>` accepts the PTX, else its diagnostics."""
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        r = subprocess.run([PTXAS, f"-arch={arch}", str(src), "-o", str(Path(d) / "k.cubin")],
                           capture_output=True, text=True, timeout=120)
    return None if r.returncode == 0 else (r.stderr or r.stdout or f"exit {r.returncode}")


def assert_ptxas_ok(ptx: str, arch: str = "sm_90") -> None:
    if PTXAS is None:
        pytest.skip("ptxas (CUDA toolkit) is not on PATH")
    err = ptxas_errors(ptx, arch)
    assert err is None, err


def entries(ptx: str) -> list[str]:
    """The `.entry` names of a PTX module, in order."""
    return re.findall(r"\.entry\s+(\w+)\(", ptx)


def arg_offsets(ptx: str) -> set[int]:
    """Byte offsets read from the argument buffer: every `ld.global` at `[%rdN+off]` from the
    register the entry's parameter was converted into."""
    out: set[int] = set()
    for body in re.split(r"\.entry\s+", ptx)[1:]:
        m = re.search(r"ld\.param\.b64\s+(%rd\d+),", body)
        if m is None:
            continue
        c = re.search(rf"cvta\.to\.global\.u64\s+(%rd\d+),\s*{re.escape(m.group(1))};", body)
        reg = c.group(1) if c else m.group(1)
        for off in re.findall(rf"ld\.global[.\w]*\s+%\w+,\s*\[{re.escape(reg)}(?:\+(\d+))?\]", body):
            out.add(int(off or 0))
    return out
