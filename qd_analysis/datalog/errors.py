"""Exceptions raised while loading or running a Datalog program.

Every static problem in a rule file is reported as :class:`DatalogSyntaxError` with the file,
line and column plus the offending source line and a caret, because the rules are the single
source of truth for the analysis and a rule author must be able to jump straight to the mistake.
"""

from __future__ import annotations


class DatalogError(Exception):
    """Base class for every error raised by :mod:`qd_analysis.datalog`."""


class DatalogSyntaxError(DatalogError):
    """A rule file is outside the supported Soufflé subset or is ill-formed.

    Carries ``filename``, ``line`` and ``col`` (both 1-based) so callers can point at the source.
    """

    def __init__(self, message: str, filename: str, line: int, col: int, source_line: str) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self) -> str:
        text = self.source_line.rstrip("\n").expandtabs(1)
        caret = " " * max(self.col - 1, 0) + "^"
        return f"{self.filename}:{self.line}:{self.col}: {self.message}\n    {text}\n    {caret}"


class DatalogStratificationError(DatalogError):
    """The program uses negation through recursion, so it has no unique stratified model."""


class EngineUnavailableError(DatalogError):
    """The requested engine cannot run here (unknown name, no ``souffle`` binary, not executable).

    Distinct from other errors because it is a setting of the user's (``QD_DATALOG_ENGINE``), not a
    problem of the rules or of an engine: callers report it as a configuration error.
    """
