"""A compiled program as bytes, and back: the embedded engine's work kept between processes.

Parsing, checking and compiling the rules costs a process's first analysis several milliseconds
(for qd, about a sixth of a small kernel's first launch), and gives the same result every time
for the same rule texts, engine and Python. An image is that result: the generated code, as a
marshalled code object, with the constants it reads and the shape of the input relations.
Loading one executes that code, so an image must come from a place the caller trusts (qd
authenticates the file it keeps it in); `from_image` checks only that the bytes are well formed
and of this Python, not who wrote them.
"""

from __future__ import annotations

import marshal
import sys
import types

from .embedded import CompiledProgram, namespace

FORMAT = (1, sys.implementation.cache_tag, sys.version)  # marshal's code format changes between Pythons


def to_image(comp: CompiledProgram) -> bytes:
    """The bytes of `comp`."""
    return marshal.dumps((FORMAT, comp.code, comp.source, comp.consts, comp.getters, comp.inputs,
                          tuple(sorted(comp.relations))))


def from_image(data: bytes) -> CompiledProgram:
    """The compiled program of an image (ValueError if the bytes are not one of this Python)."""
    try:
        fmt, code, source, consts, getters, inputs, relations = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as e:
        raise ValueError(f"not a rules image: {e}") from None
    if fmt != FORMAT:
        raise ValueError("a rules image of another engine or Python")
    ok = (isinstance(code, types.CodeType) and isinstance(source, str) and isinstance(consts, dict)
          and all(isinstance(k, str) and isinstance(v, frozenset) for k, v in consts.items())
          and isinstance(getters, dict)
          and all(isinstance(k, str) and isinstance(v, tuple) and all(type(c) is int for c in v)
                  for k, v in getters.items())
          and isinstance(inputs, dict)
          and all(isinstance(k, str) and isinstance(v, tuple) and len(v) == 2 for k, v in inputs.items())
          and isinstance(relations, tuple) and all(isinstance(r, str) for r in relations))
    if not ok:
        raise ValueError("a malformed rules image")
    hints: dict = {}
    env = namespace(consts, getters, hints)
    exec(code, env)  # noqa: S102  (the caller vouches for the image: see the module docstring)
    run = env.get("__qd_eval")
    if not callable(run):
        raise ValueError("a rules image without its evaluation function")
    return CompiledProgram(source, run, hints, code, consts, getters, inputs, frozenset(relations))
