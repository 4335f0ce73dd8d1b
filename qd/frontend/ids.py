"""Instantiation ids and call-site ids, and the prefix of a kernel's module name: how they are
written and read back.

Both are the names the facts, the rules, explanations and the disk cache use, so their format
is a contract: an instantiation is `<qualname>#<digest of its static context>`, a live call
site `<caller qualname>@<line>:<col>#<digest of what it binds>` (instantiations of one caller
that bind alike share the site), and a call written in a dead `qd.static` arm
`<caller instantiation id>@<line>:<col>#<serial>`. This module imports nothing from qd, so a
reader of stored facts (the analysis, an explanation of a cache entry) can parse ids without
loading the compiler.
"""

from __future__ import annotations

import hashlib

__all__ = ["dead_site_id", "digest", "inst_id", "inst_name", "site_id", "site_position", "symbol_prefix"]


def digest(key: object) -> str:
    """A short stable hash of a key's repr (keys are tuples of plain values, so the repr is
    the same in every process)."""
    return hashlib.sha1(repr(key).encode()).hexdigest()[:10]


def inst_id(qualname: str, ctx: object) -> str:
    """The id of the instantiation of `qualname` in static context `ctx`."""
    return f"{qualname}#{digest(ctx)}"


def site_id(caller_qualname: str, line: int, col: int, binds: object) -> str:
    """The id of a live call site at line:col of the caller, named by what it binds."""
    return f"{caller_qualname}@{line}:{col}#{digest(binds)}"


def dead_site_id(caller_inst: str, line: int, col: int, serial: int) -> str:
    """The id of a call written inside a dead static arm of instantiation `caller_inst`."""
    return f"{caller_inst}@{line}:{col}#{serial}"


def inst_name(ident: str) -> str:
    """The qualified name an instantiation id starts with."""
    return ident.split("#", 1)[0]


def site_position(ident: str) -> tuple[int, int] | None:
    """(line, col) of a call-site id; None when `ident` is not a site id."""
    if "@" not in ident:
        return None
    line, _, col = ident.split("@", 1)[1].split("#", 1)[0].partition(":")
    if not (line.isdigit() and col.isdigit()):
        return None
    return int(line), int(col)


def symbol_prefix(qualname: str) -> str:
    """`qd_<qualname>_`, the start of the name of a kernel's module (and of every symbol in it),
    written on compiling and checked on reading a disk-cache entry. Only ASCII letters, digits and
    `_` are kept, any other character (`.`, a non-ASCII letter of `Δ` or `Körper.größe`) becomes
    `_`: LLVM takes no other character in an unquoted name, nor PTX in any. The name only labels
    the module, the digest of its text that follows it makes it unique."""
    return "qd_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in qualname) + "_"
