"""`qd.tools.diagnose.main()` (also `python -m qd.lang.tools.diagnose`): what a bug report
needs about the machine, as quadrants' diagnose prints it for quadrants: Python, the platform,
the `QD_` environment, qd's and llvmlite's versions, and which of qd's machines start here.
Each check that starts a machine runs in a child process, so a crashing driver cannot take
this one down with it.
"""

from __future__ import annotations

import locale
import os
import platform
import subprocess
import sys


def _child(code: str) -> str:
    """What `code` prints in a fresh interpreter, or why it failed."""
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"ERROR {e}"
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return f"ERROR {lines[-1] if lines else f'exit status {p.returncode}'}"
    return p.stdout.strip()


def main() -> None:
    """Print the report on stdout."""
    print("qd system diagnose:")
    print("")
    print(f"python: {sys.version}")
    print(f"system: {sys.platform}")
    print(f"executable: {sys.executable}")
    print(f"platform: {platform.platform()}")
    print(f'architecture: {" ".join(platform.architecture())}')
    print(f"uname: {platform.uname()}")
    print(f"locale: {'.'.join(str(x) for x in locale.getlocale())}")
    print(f'PATH: {os.environ.get("PATH")}')
    print(f"PYTHONPATH: {sys.path}")
    print("")
    for k, v in os.environ.items():
        if k.startswith("QD_"):
            print(f"{k}={v}")
    print("")
    print(f"import: {_child('import qd, llvmlite; print(qd.__version__, llvmlite.__version__)')}")
    for arch in ("cpu", "cuda"):
        code = (f"import warnings, qd; warnings.simplefilter('error'); qd.init(arch=qd.{arch}, enable_fallback=False); "
                "print(True)")
        print(f"{arch}: {_child(code)}")
    print("")
    print("Consider attaching this log when maintainers ask about system information.")


if __name__ == "__main__":
    main()

__all__: list[str] = []
