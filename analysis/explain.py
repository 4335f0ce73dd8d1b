"""Why a kernel parameter was kept or pruned, in sentences.

The answers are read off the one-step provenance relations (`UsedBy_Access`,
`UsedBy_Forward`) and the why-not relations (`Access_Dead`, `Forward_Unused`, `Call_Dead`)
derived by `rules/provenance.dl`; a breadth-first walk chains the single steps into the
shortest story from the kernel parameter to the code that needs it (or fails to).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping


def _name(inst: str) -> str:
    return inst.split("#", 1)[0]


def _site_loc(site: str, files: Mapping[str, str], caller: str) -> str:
    where = site.split("@", 1)[1].split("#", 1)[0] if "@" in site else site
    line, _, col = where.partition(":")
    file = files.get(caller, "?")
    return f"{file}:{line}:{int(col) + 1}" if col.isdigit() else f"{file}:{where}"


class Explainer:
    """Indexes the derived relations of one analysis run for explanation queries."""

    def __init__(self, rel: Mapping[str, set], files: Mapping[str, str]):
        self.files = files
        self.access: dict[tuple, list] = {}
        for i, p, loc, kind in rel.get("UsedBy_Access", ()):
            self.access.setdefault((i, p), []).append((loc, kind))
        self.forward: dict[tuple, list] = {}
        for i, a, s, j, q in rel.get("UsedBy_Forward", ()):
            self.forward.setdefault((i, a), []).append((s, j, q))
        self.dead_access: dict[tuple, list] = {}
        for i, p, loc, _b in rel.get("Access_Dead", ()):
            self.dead_access.setdefault((i, p), []).append(loc)
        self.unused_forward: dict[tuple, list] = {}
        for i, a, s, j, q in rel.get("Forward_Unused", ()):
            self.unused_forward.setdefault((i, a), []).append((s, j, q))
        self.dead_calls: dict[str, list] = {}
        for s, i, func, _b in rel.get("Call_Dead", ()):
            self.dead_calls.setdefault(i, []).append((s, func))
        self.kept = {(k, p) for k, p in rel.get("Kept", ())}
        self.pruned = {(k, p) for k, p in rel.get("Pruned", ())}

    def why_kept(self, k: str, p: str) -> list[str]:
        """Shortest chain of forwards from (k, p) to a live access."""
        start = (k, p)
        prev: dict[tuple, tuple | None] = {start: None}
        queue = deque([start])
        end = None
        while queue:
            node = queue.popleft()
            if node in self.access:
                end = node
                break
            for s, j, q in sorted(self.forward.get(node, ())):
                nxt = (j, q)
                if nxt not in prev:
                    prev[nxt] = (node, s)
                    queue.append(nxt)
        if end is None:
            return [f"{p} is used, but no derivation was found (was the analysis run with provenance?)"]
        chain = []
        node = end
        while prev[node] is not None:
            before, s = prev[node]
            chain.append(f"{_name(before[0])} passes {before[1]} to {_name(node[0])} as {node[1]} "
                         f"(call at {_site_loc(s, self.files, before[0])})")
            node = before
        chain.reverse()
        loc, kind = sorted(self.access[end])[0]
        verb = {"read": "reads", "write": "writes", "atomic": "updates atomically", "shape": "reads the shape of",
                "arg": "uses"}.get(kind, kind)
        chain.append(f"{_name(end[0])} {verb} {end[1]} at {loc}")
        return chain

    def why_pruned(self, k: str, p: str, depth: int = 0, seen=None) -> list[str]:
        """Near misses: accesses only in dead code, bindings to parameters nobody uses."""
        seen = set() if seen is None else seen
        if (k, p) in seen:
            return []
        seen.add((k, p))
        pad = "  " * depth
        out = []
        for loc in sorted(self.dead_access.get((k, p), ())):
            out.append(f"{pad}{_name(k)} accesses {p} at {loc}, but only inside a qd.static arm that is not taken")
        for s, j, q in sorted(self.unused_forward.get((k, p), ())):
            out.append(f"{pad}{_name(k)} passes {p} to {_name(j)} as {q} (call at {_site_loc(s, self.files, k)}), "
                       f"but {_name(j)} does not use {q}:")
            sub = self.why_pruned(j, q, depth + 1, seen)
            out.extend(sub or [f"{pad}  {_name(j)} never reads or writes {q}"])
        return out

    def explain(self, k: str, p: str) -> str:
        if (k, p) in self.kept:
            steps = self.why_kept(k, p)
            return f"{p} is kept because:\n" + "\n".join(f"  {n}. {s}" for n, s in enumerate(steps, 1))
        if (k, p) in self.pruned:
            lines = self.why_pruned(k, p)
            if not lines:
                return f"{p} is pruned: no code of {_name(k)} or of the funcs it calls mentions it"
            return f"{p} is pruned: no live code needs it.\n" + "\n".join(f"  {s}" for s in lines)
        return f"{p} is not a runtime parameter of {_name(k)}"
