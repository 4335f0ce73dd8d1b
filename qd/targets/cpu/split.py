"""A large module's IR text as several modules that LLVM optimises and emits on several cores.

LLVM works on one module on one core, and its time grows with the module: Genesis' collision
detection is one module of 3 MB whose optimisation and code generation alone take seconds.
Codegen keeps large funcs out of line (`CpuTarget.inline_func`, attribute group `noinline`),
so such a module is a set of *roots* (the entry, its tasks and the out-of-line funcs), each
with the small `alwaysinline` funcs it inlines. `split` deals the roots into parts of about
equal work, each part a module of its own with copies of the small funcs it inlines; a root
called from another part becomes an external definition there and a declaration here. Calls
between roots are calls in either case (they are never inlined), so only interprocedural
facts LLVM would have drawn across the boundary (attributes of a callee it can no longer see)
differ; the instructions each root runs are the same.

The text is the one `qd.codegen` writes: a header of declarations, globals, attribute groups
and metadata, and functions that start with `define ` and end with a line `}`. A text with
anything else (a mutable global, a quoted name, an external global other than a module
marker) is kept whole, as is one too small to be worth a second process.
"""

from __future__ import annotations

import re

_DEFINE = re.compile(r"define (internal )?(.*?) @([A-Za-z0-9_.$]+)\((.*)\)( #(\d+))? \{$")
_SYMBOL = re.compile(r"@([A-Za-z0-9_.$]+)")
_GLOBAL = re.compile(r"@([A-Za-z0-9_.$]+) = (.*)$")
_ATTRIBUTES = re.compile(r"attributes #(\d+) = \{(.*)\}$")
_LABEL = re.compile(r"([A-Za-z0-9_.]+):")
_TARGET = re.compile(r"label %([A-Za-z0-9_.]+)")
# What a loop costs LLVM, in lines of straight code: measured on Genesis' modules, a function
# takes about 15 us per line plus 10 ms per loop (the loop passes, the vectoriser's analysis
# and unrolling), so a part's work is counted as its lines plus this much per loop.
LOOP_LINES = 700
# A part has at least this much work (about 60 ms of LLVM): a part's own cost (parsing the
# shared header, a worker's round trip, the small funcs each part compiles again) is a few
# milliseconds, so smaller parts would win too little to be worth it.
MIN_PART_WORK = 4000
# A module with less work than this (about a quarter of a second of LLVM) is compiled whole:
# what a second process could save is then less than what starting one costs a short program.
MIN_SPLIT_WORK = 16000
# At most this many parts, whatever the machine: the parts are a function of the text alone (so
# is the object code), and a machine with fewer cores runs several parts on each.
MAX_PARTS = 8


class _Function:
    __slots__ = ("name", "lines", "inline", "calls", "loops")

    def __init__(self, name: str, lines: list[str], inline: bool):
        self.name, self.lines, self.inline = name, lines, inline
        self.calls: dict[str, int] = {}  # symbol -> how many times the body names it
        self.loops = 0  # branches back to a block above (codegen writes a loop's header first)


def _parse(text: str) -> tuple[list[str], dict[str, _Function]] | None:
    header: list[str] = []
    functions: dict[str, _Function] = {}
    groups: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define "):
            m = _DEFINE.match(line)
            if m is None:
                return None
            j = i + 1
            while j < len(lines) and lines[j] != "}":
                j += 1
            if j == len(lines):
                return None
            f = _Function(m.group(3), lines[i:j + 1], False)
            f.inline = m.group(6) or ""  # the attribute group, resolved below
            functions[f.name] = f
            i = j + 1
            continue
        a = _ATTRIBUTES.match(line)
        if a is not None:
            groups[a.group(1)] = a.group(2)
        header.append(line)
        i += 1
    for f in functions.values():
        f.inline = "alwaysinline" in groups.get(f.inline, "").split()
        seen: set[str] = set()
        for line in f.lines[1:]:
            label = _LABEL.match(line)
            if label is not None:
                seen.add(label.group(1))
            elif line.lstrip().startswith("br "):
                f.loops += sum(1 for t in _TARGET.findall(line) if t in seen)
            for s in _SYMBOL.findall(line):
                f.calls[s] = f.calls.get(s, 0) + 1
    return header, functions


def _work(functions: dict[str, _Function]) -> dict[str, int]:
    """The work LLVM does on each function once its `alwaysinline` callees are inlined (each call
    site a copy): lines, and `LOOP_LINES` for each loop."""
    memo: dict[str, int] = {}

    def of(name: str, depth: int = 0) -> int:
        if name in memo:
            return memo[name]
        f = functions[name]
        total = len(f.lines) + LOOP_LINES * f.loops
        if depth < 64:
            for callee, n in f.calls.items():
                g = functions.get(callee)
                if g is not None and g.inline and callee != name:
                    total += n * of(callee, depth + 1)
        memo[name] = total
        return total

    return {name: of(name) for name in functions}


def _inlined_closure(functions: dict[str, _Function], roots: list[str]) -> set[str]:
    """The `alwaysinline` functions `roots` reach through `alwaysinline` calls."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        for callee in functions[stack.pop()].calls:
            g = functions.get(callee)
            if g is not None and g.inline and callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen


def _header_globals(header: list[str]) -> dict[str, str] | None:
    """Globals the header defines (name -> its line), or None when one of them is mutable (a
    part of its own would have a copy of it)."""
    found: dict[str, str] = {}
    for line in header:
        m = _GLOBAL.match(line)
        if m is not None:
            if not re.match(r"(private |internal )?(unnamed_addr )?constant ", m.group(2)):
                return None
            found[m.group(1)] = line
    return found


def _copyable_global(line: str) -> bool:
    """A private or internal constant: every part may have its own copy."""
    return _GLOBAL.match(line).group(2).startswith(("private ", "internal "))


def _declaration(define_line: str) -> str:
    m = _DEFINE.match(define_line)
    return f"declare {m.group(2)} @{m.group(3)}({m.group(4)})"


def split(text: str, parts: int) -> list[str]:
    """`text` as at most `parts` module texts that together define what it defines, the entry in
    the first; `[text]` when it is not worth splitting or not of the shape above."""
    if parts < 2 or '@"' in text:
        return [text]
    parsed = _parse(text)
    if parsed is None:
        return [text]
    header, functions = parsed
    globals_ = _header_globals(header)
    if globals_ is None:
        return [text]
    work = _work(functions)
    roots = [f.name for f in functions.values() if not f.inline]
    external = [n for n in roots if not functions[n].lines[0].startswith("define internal ")]
    total = sum(work[n] for n in roots)
    if total < MIN_SPLIT_WORK:
        return [text]
    parts = min(parts, len(roots), total // MIN_PART_WORK)
    if parts < 2 or len(external) != 1:
        return [text]
    # the largest first, each into the part with the least work so far (ties: the lower
    # part); the entry's part is part 0
    bins: list[list[str]] = [[] for _ in range(parts)]
    load = [0] * parts
    bins[0].append(external[0])
    load[0] = work[external[0]]
    for name in sorted((n for n in roots if n != external[0]), key=lambda n: (-work[n], n)):
        k = min(range(parts), key=lambda i: (load[i], i))
        bins[k].append(name)
        load[k] += work[name]
    bins = [b for b in bins if b]
    if len(bins) < 2:
        return [text]
    home = {name: k for k, b in enumerate(bins) for name in b}
    # a root another part calls is external there
    called_across = {callee for k, b in enumerate(bins) for name in b for callee in functions[name].calls
                     if callee in home and home[callee] != k}
    called_across |= {callee for k, b in enumerate(bins) for name in _inlined_closure(functions, b)
                      for callee in functions[name].calls if callee in home and home[callee] != k}
    marker_lines = {line for name, line in globals_.items() if not _copyable_global(line)}
    texts = []
    for k, b in enumerate(bins):
        inlined = _inlined_closure(functions, b)
        used = {s for name in (*b, *inlined) for s in functions[name].calls}
        out = [line for line in header if k == 0 or line not in marker_lines]
        for callee in sorted(s for s in used if s in home and home[s] != k):
            out.append(_declaration(functions[callee].lines[0]))
        for name, f in functions.items():  # in the text's order
            if name in inlined or home.get(name) == k:
                lines = f.lines
                if name in called_across:
                    lines = [lines[0].replace("define internal ", "define ", 1), *lines[1:]]
                out.extend(lines)
        if k > 0 and any(s in globals_ and globals_[s] in marker_lines for s in used):
            return [text]
        texts.append("\n".join(out) + "\n")
    return texts
