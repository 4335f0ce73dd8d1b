"""quadrants' error class names (`qd.lang.exception.QuadrantsTypeError`, `qd.QuadrantsRuntimeError`, ...).

Programs written for quadrants catch its errors by these names. Each name is qd's own class for
the same failure, so an `except QuadrantsTypeError:` clause catches the `QdTypeError` qd raises
where quadrants would raise its `QuadrantsTypeError`, and `except qd.QdTypeError:` keeps working.
The classes keep qd's names (a printed error says `QdTypeError`); docs/differences.md lists that.
"""

from __future__ import annotations

from ..core.errors import (
    QdArgumentError,
    QdAssertionError,
    QdCompileError,
    QdIndexError,
    QdNameError,
    QdRuntimeError,
    QdSyntaxError,
    QdTypeError,
)

QuadrantsCompilationError = QdCompileError  # any failure to compile a kernel or func
QuadrantsSyntaxError = QdSyntaxError
QuadrantsNameError = QdNameError
QuadrantsTypeError = QdTypeError
QuadrantsIndexError = QdIndexError
QuadrantsRuntimeError = QdRuntimeError
QuadrantsAssertionError = QdAssertionError
QuadrantsRuntimeTypeError = QdArgumentError  # a launch argument of the wrong type (quadrants checks it at launch)

__all__ = ["QuadrantsCompilationError", "QuadrantsSyntaxError", "QuadrantsNameError", "QuadrantsTypeError",
           "QuadrantsIndexError", "QuadrantsRuntimeError", "QuadrantsAssertionError", "QuadrantsRuntimeTypeError"]
