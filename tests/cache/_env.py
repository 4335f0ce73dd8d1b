"""Environment for the programs cache tests run as later processes.

They must import the qd of this tree, not a copy installed into the interpreter's
site-packages, so the repository root goes first on PYTHONPATH (the program's own directory
still comes before it, for its helper modules)."""

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def child_env(**extra) -> dict:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    e.update(extra, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    return e
