"""The syntax tree of the supported Soufflé subset.

Nodes are small frozen records (`qd_analysis.records`) so that a parsed :class:`~qd_analysis.datalog.program.Program`
can be shared (and cached) safely between engines and runs.  Every node keeps its source
position (:class:`Pos`) so that later checks can report ``file:line:col`` with a caret.
"""

from __future__ import annotations

from ..records import field, record
from .errors import DatalogSyntaxError

SYMBOL = "symbol"
NUMBER = "number"


@record(frozen=True)
class Pos:
    """A source position (1-based line and column) plus the text of that line for carets."""

    filename: str
    line: int
    col: int
    source_line: str = field(repr=False, compare=False)

    def error(self, message: str) -> DatalogSyntaxError:
        """Build the error for a problem found at this position."""
        return DatalogSyntaxError(message, self.filename, self.line, self.col, self.source_line)


@record(frozen=True)
class Var:
    """A named variable; any identifier in an argument position is one (as in Soufflé)."""

    name: str
    pos: Pos = field(compare=False)


@record(frozen=True)
class Wildcard:
    """The anonymous variable ``_``: matches anything, binds nothing."""

    pos: Pos = field(compare=False)


@record(frozen=True)
class Const:
    """A string (``symbol``) or integer (``number``) constant."""

    value: str | int
    pos: Pos = field(compare=False)

    @property
    def kind(self) -> str:
        """The base type of the constant (``symbol`` or ``number``)."""
        return NUMBER if isinstance(self.value, int) else SYMBOL


Term = Var | Wildcard | Const


@record(frozen=True)
class Atom:
    """``R(t1, ..., tn)``, possibly negated (``!R(...)``) when it appears in a body."""

    rel: str
    args: tuple[Term, ...]
    negated: bool
    pos: Pos = field(compare=False)


@record(frozen=True)
class Compare:
    """A comparison ``left op right`` with ``op`` in ``=`` / ``!=``."""

    op: str
    left: Term
    right: Term
    pos: Pos = field(compare=False)


Literal = Atom | Compare


@record(frozen=True)
class Rule:
    """A Horn clause ``head :- body``; facts are stored separately on the program."""

    head: Atom
    body: tuple[Literal, ...]
    pos: Pos = field(compare=False)
    index: int = 0

    def __str__(self) -> str:
        body = ", ".join(_literal_text(lit) for lit in self.body)
        return f"{_literal_text(self.head)} :- {body}."


@record(frozen=True)
class TypeDecl:
    """``.type Name <: base``: a named subtype of ``symbol`` / ``number`` (or of another type)."""

    name: str
    parent: str
    base: str
    pos: Pos = field(compare=False)


@record(frozen=True)
class Column:
    """One attribute of a relation: its name and (possibly user-defined) type."""

    name: str
    type: str
    base: str
    pos: Pos | None = field(default=None, compare=False)


@record(frozen=True)
class Decl:
    """``.decl R(a: T, ...)`` plus the one-line comment that follows it, if any."""

    name: str
    columns: tuple[Column, ...]
    pos: Pos = field(compare=False)
    doc: str = ""

    @property
    def arity(self) -> int:
        """Number of columns."""
        return len(self.columns)

    @property
    def bases(self) -> tuple[str, ...]:
        """The base type (``symbol`` / ``number``) of every column, in order."""
        return tuple(c.base for c in self.columns)


def term_text(term: Term) -> str:
    """Render a term in Soufflé syntax."""
    if isinstance(term, Var):
        return term.name
    if isinstance(term, Wildcard):
        return "_"
    if isinstance(term.value, int):
        return str(term.value)
    escaped = term.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _literal_text(lit: Literal) -> str:
    if isinstance(lit, Atom):
        args = ", ".join(term_text(a) for a in lit.args)
        return f"{'!' if lit.negated else ''}{lit.rel}({args})"
    return f"{term_text(lit.left)} {lit.op} {term_text(lit.right)}"
