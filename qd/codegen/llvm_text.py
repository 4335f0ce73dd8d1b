"""A minimal LLVM IR text writer.

qd writes textual IR with opaque pointers and hands it to `llvm.parse_assembly`; this is
cheaper than building llvmlite.ir objects and sidesteps the IR layer's typed-pointer mode.
"""

from __future__ import annotations

import struct

import numpy as np

from ..core.dtypes import DType

LL = {"i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "i8", "u16": "i16", "u32": "i32",
      "u64": "i64", "f32": "float", "f64": "double", "u1": "i1"}
MEM = dict(LL, u1="i8")  # bools live in memory as one byte, as numpy stores them
ALIGN = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "float": 4, "double": 8, "ptr": 8}


def ll(d: DType) -> str:
    return LL[d.name]


def mem(d: DType) -> str:
    return MEM[d.name]


def const(d: DType, value) -> str:
    """LLVM literal for `value` of type `d`."""
    if d.is_bool:
        return "true" if value else "false"
    if d.is_float:
        with np.errstate(over="ignore"):  # 1e300 as f32 is inf, as in the compiled code; no warning
            v = float(np.float32(value)) if d.bits == 32 else float(value)
        return "0x" + struct.pack(">d", v).hex().upper()
    v = int(value) & ((1 << d.bits) - 1)
    if v >= 1 << (d.bits - 1):
        v -= 1 << d.bits
    return str(v)


class Fn:
    """One function body under construction. `block` is the label of the basic block being
    written (a phi names the blocks its values come from)."""

    def __init__(self, header: str):
        self.header = header
        self.allocas: list[str] = []
        self.lines: list[str] = []
        self.n = 0
        self.terminated = False
        self.block = "entry"
        self.label("entry")

    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def new_label(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def label(self, name: str) -> None:
        if self.lines and not self.terminated:
            self.lines.append(f"  br label %{name}")
        self.lines.append(f"{name}:")
        self.block = name
        self.terminated = False

    def ins(self, text: str) -> str:
        if self.terminated:
            self.label(self.new_label("dead"))
        t = self.tmp()
        self.lines.append(f"  {t} = {text}")
        return t

    def op(self, text: str) -> None:
        if self.terminated:
            self.label(self.new_label("dead"))
        self.lines.append(f"  {text}")

    def term(self, text: str) -> None:
        self.op(text)
        self.terminated = True

    def alloca(self, ty: str) -> str:
        t = self.tmp()
        self.allocas.append(f"  {t} = alloca {ty}, align {max(ALIGN.get(ty, 8), 1)}")
        return t

    def finish(self, default_ret: str) -> str:
        if not self.terminated:
            self.lines.append(f"  {default_ret}")
        body = [self.lines[0], *self.allocas, *self.lines[1:]]
        return self.header + " {\n" + "\n".join(body) + "\n}\n"


def printf_arg(fn: Fn, d: DType, v: str, spec: str) -> tuple[str, str]:
    """(printf directive, typed argument) that print value `v` of dtype `d` as quadrants does:
    f32 as `%f` of the value widened to double, f64 as `%.12f`, integers narrower than 32 bits
    widened to i32 (`%hd`/`%hu`), 64-bit ones with `ll`. `spec` (flags, width, precision and
    maybe a conversion letter, from a format spec) replaces the default directive."""
    if d.is_float:
        if d.bits == 32:
            v = fn.ins(f"fpext float {v} to double")
        default, length = ("f" if d.bits == 32 else ".12f"), ""
        arg = f"double {v}"
    else:
        unsigned = not d.is_signed
        if d.bits < 32:
            v = fn.ins(f"{'zext' if unsigned else 'sext'} {ll(d)} {v} to i32")
            arg, length = f"i32 {v}", "h"
        else:
            arg, length = f"{ll(d)} {v}", ("ll" if d.bits == 64 else "")
        default = "u" if unsigned else "d"
    if not spec:
        return f"%{length}{default}" if not d.is_float else f"%{default}", arg
    conv = spec[-1] if spec[-1].isalpha() else ""
    body = spec[:-1] if conv else spec
    return f"%{body}{length}{conv or default[-1]}", arg
