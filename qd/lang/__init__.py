"""The user's Python scope: `qd.init`, fields, ndarrays, vectors and matrices, struct types,
type annotations, and the Python-scope versions of the kernel builtins.

`qd.lang.<name>` of a builtin (`qd.lang.static`, `qd.lang.ndrange`, as quadrants' `quadrants.lang`
has them) is the `ops` module's.
"""

from __future__ import annotations

import types as _types

from . import ops as _ops


def __getattr__(name: str):
    # a module `ops` imports (`math`, `numpy`) is not a builtin: `qd.lang.math` is the submodule
    value = getattr(_ops, name, None)
    if value is None or isinstance(value, _types.ModuleType):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return value
