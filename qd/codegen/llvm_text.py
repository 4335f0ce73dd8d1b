"""A minimal LLVM IR text writer.

qd writes textual IR with opaque pointers and hands it to `llvm.parse_assembly`; this is
cheaper than building llvmlite.ir objects and sidesteps the IR layer's typed-pointer mode.
"""

from __future__ import annotations

import struct

import numpy as np

from ..dtypes import DType

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
