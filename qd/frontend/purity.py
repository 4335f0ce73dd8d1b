"""quadrants' purity rule for disk-cached kernels (`fastcache=True`, `pure=True`, `@qd.pure`).

quadrants keys its disk cache by source and arguments only, so a pure kernel must not read a
global or closure value that can change between processes: a number, a string or a field
reached by name (`a`, `cfg.size`) rather than through a parameter. It refuses such a read
(QdCompileError), and only warns (`[PURE.VIOLATION]`) for an UPPERCASE name, taken as a
constant, and inside `qd.static(...)`, where quadrants is still migrating code. Enum members,
`math` / `numpy` constants and qd's own attributes are allowed.

qd's own cache would re-check such values on load, but a program qd accepts here would fail on
quadrants, so qd applies the same rule. The lowering records every candidate read in its
instantiation (`inst.impure`), pure kernel or not, because instantiations of funcs are shared
between kernels; `check` applies the rule for a pure kernel over all instantiations it reaches.
"""

from __future__ import annotations

import enum
import math
import types
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import QdCompileError, SourceLoc, warn_at
from ..lang.field import Field
from .values import CT

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["check", "own_code", "record_attribute", "record_name"]

_VALUES = (int, float, str, Field)  # what quadrants checks (bool is an int)


def own_code(low: Lowering) -> bool:
    """Whether the code being lowered is qd's own (its kernel-language library)."""
    module = getattr(low.func.fn, "__module__", "") or ""
    return module == "qd" or module.startswith("qd.")


def record_name(low: Lowering, ident: str, value, node) -> None:
    """A global or closure variable `ident` read by name."""
    if isinstance(value, _VALUES) and not ident.startswith("_qd_") and not own_code(low):
        _add(low, (f"global variable {ident}", ident, low.static_scope > 0, low.loc(node)))


def record_attribute(low: Lowering, base: CT, attr: str, value, node) -> None:
    """`base.attr`, where `base` was reached from a global or closure variable."""
    if base.origin is None or base.origin == ("qd",) or own_code(low):
        return
    if not isinstance(value, _VALUES) or isinstance(value, enum.Enum):
        return
    if base.value in (math, np) or (isinstance(base.value, types.ModuleType)
                                    and base.value.__name__.split(".")[0] in ("qd", "math", "numpy")):
        return
    _add(low, (f"global var {attr} from outside function scope", attr, low.static_scope > 0, low.loc(node)))


def _add(low: Lowering, entry: tuple) -> None:
    if entry not in low.inst.impure:  # a callee expression may be read twice (see `Lowerer.stmt_Expr`)
        low.inst.impure.append(entry)


def check(kernel_name: str, insts) -> None:
    """Apply the rule for the pure kernel `kernel_name` over the instantiations it reaches."""
    for inst in insts:
        for what, name, in_static, loc in inst.impure:
            _violation(kernel_name, what, name, in_static, loc)


def _violation(kernel_name: str, what: str, name: str, in_static: bool, loc: SourceLoc | None) -> None:
    message = (f"[PURE.VIOLATION] pure kernel {kernel_name} reads {what}, which its disk-cache key does not "
               "hold: pass it as a parameter")
    if name.upper() == name or in_static:
        warn_at(message + " (a warning for an UPPERCASE name or inside qd.static, as in quadrants)", loc)
    else:
        raise QdCompileError(message + " (a field as a qd.template() parameter)", loc)
