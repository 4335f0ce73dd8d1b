"""User-facing errors.

Every error a user can cause names the source position (file:line:col) and shows the
line with a caret, because kernels are compiled far from where they are called and a
bare message would leave the user guessing which expression was meant.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A span in a user's source file (1-based line, 0-based column, like `ast`)."""

    file: str
    line: int
    col: int
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


def render(loc: SourceLoc | None, message: str) -> str:
    if loc is None:
        return message
    text = linecache.getline(loc.file, loc.line).rstrip("\n")
    head = f"{loc}: {message}"
    if not text:
        return head
    end = loc.end_col if loc.end_col is not None and loc.end_col > loc.col else len(text.rstrip())
    width = max(1, min(end, len(text)) - loc.col)
    return f"{head}\n    {text}\n    {' ' * loc.col}{'^' * width}"


class QdError(Exception):
    """Base of every error qd reports about user code or user input."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(render(loc, message))


class QdCompileError(QdError):
    """A kernel or func could not be compiled."""


class QdSyntaxError(QdCompileError, SyntaxError):
    """Python syntax that the kernel language does not support."""

    def __str__(self) -> str:  # SyntaxError formats itself differently; keep ours
        return self.args[0]


class QdNameError(QdCompileError, NameError):
    """A name in a kernel that is neither a local, a parameter nor a global."""


class QdTypeError(QdCompileError, TypeError):
    """Operands or values whose types do not fit the operation."""


class QdStaticError(QdCompileError):
    """`qd.static(...)` applied to a value that is only known at run time."""


class QdCallError(QdCompileError):
    """A call qd cannot compile: a kernel from a kernel, recursion, wrong arguments to a func."""


class QdArgumentError(QdError, TypeError):
    """A kernel was launched with arguments that do not match its signature."""


class QdRuntimeError(QdError, RuntimeError):
    """A check inside a running kernel failed (bounds checks under `qd.init(debug=True)`)."""


class QdInternalError(QdError):
    """A bug in qd itself; the location says which user code triggered it."""
