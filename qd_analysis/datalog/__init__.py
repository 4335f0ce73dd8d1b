"""A generic Datalog: a Soufflé-subset parser and two engines, knowing nothing of any rule set.

A program is parsed, checked and stratified once (:func:`load_program`), then evaluated on
input facts by an engine chosen with :func:`get_engine`: the embedded compiled evaluator by
default, or an external ``souffle``. (Which rule files qd's analysis loads is the business of
``qd_analysis.rules_path``.)

Typical use::

    prog = load_program([Path("edges.dl")])
    out = get_engine().run(prog, {"Edge": [("a", "b"), ("b", "c")]})
    out["Reach"]  # set of tuples
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from .embedded import EmbeddedEngine
from .errors import DatalogError, DatalogStratificationError, DatalogSyntaxError, EngineUnavailableError
from .indexes import GroupedRows, Relations
from .program import Program, load_program, parse_program
from .syntax import Decl


class Engine(Protocol):
    """What every engine offers: evaluate a program on input facts."""

    name: str

    def run(
        self, program: Program, facts: Mapping[str, Iterable[tuple[Any, ...]]]
    ) -> dict[str, set[tuple[Any, ...]]]:
        """Return every ``.output`` relation of ``program`` evaluated on ``facts``."""
        ...


_EMBEDDED = EmbeddedEngine()


def get_engine(name: str | None = None) -> Engine:
    """The engine called ``name``; ``None`` reads ``QD_DATALOG_ENGINE`` (default ``embedded``)."""
    if name is None:
        name = os.environ.get("QD_DATALOG_ENGINE", "").strip() or "embedded"
    if name == "embedded":
        return _EMBEDDED
    if name == "souffle":
        # lazy: an external engine that differential tests ask for; its `subprocess` import would
        # otherwise cost every process's first compile ~4 ms
        from .souffle import SouffleEngine

        return SouffleEngine()
    raise EngineUnavailableError(f"unknown Datalog engine {name!r} in QD_DATALOG_ENGINE (choose 'embedded' or "
                                 "'souffle')")


__all__ = [
    "DatalogError",
    "DatalogStratificationError",
    "DatalogSyntaxError",
    "Decl",
    "Engine",
    "EngineUnavailableError",
    "GroupedRows",
    "Program",
    "Relations",
    "get_engine",
    "load_program",
    "parse_program",
]
