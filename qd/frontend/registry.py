"""The explicit cache of lowered instantiations, shared by all kernels until `qd.init`.

It also keeps the stack of functions being lowered (`compiling`, `instantiating`,
`expanding`): funcs are inlined, so a func reached again while it is being lowered is a
recursion, reported with the chain of calls; keeping the stack here, behind those context
managers, means it is balanced whatever a lowering raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..core import ir
from ..core.errors import QdCallError, SourceLoc
from .ids import inst_name


class InstRegistry:
    """Explicit cache of lowered instantiations, shared by all kernels until `qd.init`."""

    def __init__(self, config, subgroup_size: int = 0):
        self.config = config
        self.subgroup_size = subgroup_size  # the machine's lanes in step (`qd.simt.subgroup.group_size()`)
        self.insts: dict[str, ir.Inst] = {}
        self.analysed: dict[str, tuple[str, ...]] = {}  # used sets of instantiations already analysed
        self._in_progress: list[tuple[object, str]] = []  # (function, inst id) being lowered, outermost first
        self._lowering: dict[str, object] = {}  # inst id -> its `ir.Inst` while it is lowered (real funcs' recursion)
        self._identities: dict[int, tuple[object, tuple]] = {}

    def identity(self, f) -> tuple:
        """What distinguishes one decorated function from another: module, qualified name and
        a serial, so two closures with the same name (a factory called twice) never share
        instantiations. The registry holds the function, so its id cannot be reused."""
        hit = self._identities.get(id(f))
        if hit is None:
            hit = self._identities[id(f)] = (f, (f.fn.__module__, f.fn.__qualname__, len(self._identities)))
        return hit[1]

    # -- the instantiations being lowered: funcs are inlined, so a cycle among them is an error

    @contextlib.contextmanager
    def compiling(self, kernel, inst_id: str) -> Iterator[None]:
        """Lowering of kernel instantiation `inst_id`, the root of the stack; whatever happens
        inside, the stack is empty afterwards."""
        self._in_progress.append((kernel, inst_id))
        try:
            yield
        finally:
            self._in_progress.clear()

    def lowering(self, inst_id: str):
        """The instantiation `inst_id` while it is being lowered (its declared results are
        known), else None: what a real func's call of itself calls."""
        return self._lowering.get(inst_id)

    def lowering_inst(self, inst_id: str, inst) -> None:
        self._lowering[inst_id] = inst

    def mark_cycle(self, inst_id: str) -> None:
        """`inst_id`, being lowered, is called again: it and every instantiation lowered since
        (the rest of the cycle) are recursive, compiled as called functions counting their depth."""
        ids = [iid for _, iid in self._in_progress]
        for iid in ids[ids.index(inst_id):]:
            inst = self._lowering.get(iid)
            if inst is not None:
                inst.recursive = True

    @contextlib.contextmanager
    def instantiating(self, f, inst_id: str, loc: SourceLoc | None) -> Iterator[None]:
        """Lowering of func instantiation `inst_id` of `f`, called at `loc`: refused when `f` or
        that instantiation is already being lowered (the message shows the chain of calls),
        except that a `qd.real_func` may call itself, as in quadrants, through other static
        contexts too (a new instantiation) or in the same one (a call of the one being lowered)."""
        for fn_obj, iid in self._in_progress:
            if getattr(f, "is_real", False) and fn_obj is f and iid != inst_id:
                continue
            if fn_obj is f or iid == inst_id:
                chain = " -> ".join(inst_name(i) for _, i in self._in_progress) + f" -> {f.fn.__qualname__}"
                raise QdCallError(f"recursive call of {f.fn.__qualname__} ({chain}); qd funcs are inlined and "
                                  "cannot recurse", loc)
        self._in_progress.append((f, inst_id))
        try:
            yield
        finally:
            self._in_progress.pop()
            self._lowering.pop(inst_id, None)

    def refuse_expansion_cycle(self, f, loc: SourceLoc | None) -> None:
        """A func expanded in place while it is being lowered would expand forever."""
        if any(fn_obj is f for fn_obj, _ in self._in_progress):
            raise QdCallError(f"recursive call of {f.fn.__qualname__}; qd funcs are inlined and cannot recurse", loc)

    @contextlib.contextmanager
    def expanding(self, f, into: str, loc: SourceLoc | None) -> Iterator[None]:
        """Lowering of `f`'s body in place into instantiation `into`, called at `loc` (the
        caller checks `refuse_expansion_cycle` before binding the arguments, which may
        instantiate funcs themselves)."""
        self.refuse_expansion_cycle(f, loc)
        self._in_progress.append((f, into))
        try:
            yield
        finally:
            self._in_progress.pop()
