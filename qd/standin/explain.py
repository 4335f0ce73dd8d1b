"""The `qd-explain` command: qd.explain's command line with the stand-in installed, so that a
program written for quadrants (`import quadrants as qd`, itself or in a library it uses) compiles
its kernels on qd and gets them explained, as `python -m qd.standin` runs it. A program that
imports qd is unaffected. It lives here, not in `qd.explain`, because the stand-in names the whole
namespace, which holds `qd.explain`."""

from __future__ import annotations

import sys

from ..explain import cli
from . import install, installed, uninstall


def main(argv: list[str] | None = None) -> int:
    """`qd-explain [args]`; the stand-in is removed afterwards unless it was there before."""
    before = installed()
    install()
    try:
        return cli.main(argv)
    finally:
        if not before:
            uninstall()


if __name__ == "__main__":
    sys.exit(main())
