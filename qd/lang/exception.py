"""quadrants' error class names (`qd.lang.exception.QuadrantsTypeError`, `qd.QuadrantsRuntimeError`, ...).

Programs written for quadrants catch and print its errors by these names. Each is qd's own class
for the same failure, under quadrants' name (`QdTypeError` is `QuadrantsTypeError`), so an
`except QuadrantsTypeError:` clause catches what qd raises and `type(e).__name__` prints what
quadrants prints. Where qd's error is more specific than quadrants' (`QdStaticError`, a kind of
`QuadrantsCompilationError`), the class keeps qd's name; docs/differences.md lists those.
"""

from __future__ import annotations

from ..core.errors import (
    QdArgumentError,
    QdAssertionError,
    QdCompileError,
    QdNameError,
    QdRuntimeError,
    QdSyntaxError,
    QdTypeError,
    QuadrantsIndexError,  # an array or field indexed with the wrong number of indices (errors.py's own class)
)

QuadrantsCompilationError = QdCompileError  # any failure to compile a kernel or func
QuadrantsSyntaxError = QdSyntaxError
QuadrantsNameError = QdNameError
QuadrantsTypeError = QdTypeError
QuadrantsRuntimeError = QdRuntimeError
QuadrantsAssertionError = QdAssertionError
QuadrantsRuntimeTypeError = QdArgumentError  # a launch argument of the wrong type (quadrants checks it at launch)

__all__ = ["QuadrantsCompilationError", "QuadrantsSyntaxError", "QuadrantsNameError", "QuadrantsTypeError",
           "QuadrantsIndexError", "QuadrantsRuntimeError", "QuadrantsAssertionError", "QuadrantsRuntimeTypeError"]
