"""Dead `qd.static` arms: recorded, never instantiated.

The analysis needs to know what a not-taken arm *would* access or call, so that "only used
under a dead qd.static" is a fact the rules (and explanations) can see; this scanner finds
those names syntactically, without evaluating or type-checking the arm.
"""

from __future__ import annotations

import ast

from ..core import ir
from . import fields
from .ids import dead_site_id
from .kinds import RUNTIME, kind_of, known
from .values import CT, LeafV


class DeadArmScanner:
    """Records what a not-taken `qd.static` arm would access or call, without instantiating it."""

    def __init__(self, low, block: ir.Block):
        self.low = low
        self.block = block

    def scan(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        low = self.low
        if isinstance(s, ast.If):
            arg = low.static_call_arg(s.test)
            if arg is not None:
                cond = self._try_static(arg)
                for body, taken, name in zip((s.body, s.orelse), (cond is True, cond is False), static_arm_names(s)):
                    if body:
                        sub = low.new_block(self.block.id, 1 if taken else 0, name)
                        DeadArmScanner(low, sub).scan(body)
                return
        passed: set[int] = set()
        for node in ast.walk(s):
            if isinstance(node, ast.Call):
                passed |= self.call(node)
        self.refs(s, "read", passed)

    def _try_static(self, node):
        try:
            v = self.resolve(node)
        except Exception:
            return None
        if known(v) is not RUNTIME:
            return bool(v.value)
        return None

    def resolve(self, node):
        """Resolve a Name/Attribute chain without emitting anything."""
        if isinstance(node, ast.Name):
            low = self.low
            if node.id in low.scope:
                return low.scope[node.id]
            if node.id in low.freevars:
                return fields.dead_arm_value(low, low.freevars[node.id], "free", node.id)
            if node.id in low.globals:
                return fields.dead_arm_value(low, low.globals[node.id], "global", node.id)
            return None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return kind_of(base).member(base, node.attr)
        if isinstance(node, ast.Constant):
            return CT(node.value)
        return None

    def call(self, node) -> set[int]:
        """Record a call of a qd func; returns the ids of the argument nodes that are plain
        parameter names (`md`, `md.mid`), which the call passes rather than accesses."""
        f = self.resolve(node.func)
        if not getattr(known(f), "is_qd_func", False):
            return set()
        low = self.low
        site = dead_site_id(low.inst.id, node.lineno, node.col_offset, low.n_sites)
        low.n_sites += 1
        passed: set[int] = set()
        paths: list[str] = []
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            try:
                v = self.resolve(arg) if isinstance(arg, (ast.Name, ast.Attribute)) else None
            except Exception:
                v = None
            if kind_of(v).dead_access("arg") is None:
                continue
            paths.extend(lf.path for lf in kind_of(v).leaves(v))
            passed.update(id(n) for n in ast.walk(arg))
        low.inst.dead_calls.append(ir.DeadCallRec(site, f.value.fn.__qualname__, self.block.id, tuple(paths),
                                                      low.loc(node)))
        return passed

    def refs(self, s, default_kind, passed: set[int] = frozenset()):
        stored = {id(n.value) for n in ast.walk(s) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)}
        seen: set[int] = set(passed)
        for node in ast.walk(s):
            if id(node) in seen or not isinstance(node, (ast.Name, ast.Attribute)):
                continue
            # take maximal chains only
            chain = node
            for sub in ast.walk(chain):
                seen.add(id(sub))
            v = self.resolve_chain(chain)
            if v is None:
                continue
            val, at = v
            kind = "write" if id(chain) in stored or isinstance(getattr(at, "ctx", None), ast.Store) else default_kind
            access = kind_of(val).dead_access(kind, default_kind)
            for lf in kind_of(val).leaves(val):
                self._record(lf.path, at, access)

    def resolve_chain(self, node):
        # walk down to the deepest resolvable Name/Attribute prefix
        try:
            v = self.resolve(node)
        except Exception:
            v = None
        if kind_of(v).dead_access("read") is not None:
            return v, node
        if isinstance(node, ast.Attribute):
            inner = self.resolve_chain(node.value)
            if inner is not None and isinstance(inner[0], LeafV) and node.attr == "shape":
                return inner
            return inner
        return None

    def _record(self, path, node, kind):
        low = self.low
        low.inst.accesses.append(ir.AccessRec(path, self.block.id, low.loc(node), kind))


def static_arm_names(node: ast.If) -> tuple[str, str]:
    """How explanations quote the two arms of `if qd.static(...)`: its body and its else."""
    test = ast.unparse(node.test)
    return f"if {test}", f"else of if {test}"

