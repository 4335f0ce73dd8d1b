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
        self.arms: dict[tuple, list] = {}
        for i, p, loc, cond, taken in rel.get("Access_InArm", ()):
            self.arms.setdefault((i, p, loc), []).append({"condition": cond, "taken": bool(taken)})
        self.kept = {(k, p) for k, p in rel.get("Kept", ())}
        self.pruned = {(k, p) for k, p in rel.get("Pruned", ())}

    def why_kept(self, k: str, p: str) -> list[dict]:
        """Shortest chain of forwards from (k, p) to a live access, as reason records."""
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
            return [{"kind": "underived", "func": _name(k), "param": p}]
        chain = []
        node = end
        while prev[node] is not None:
            before, s = prev[node]
            chain.append({"kind": "forward", "func": _name(before[0]), "param": before[1], "callee": _name(node[0]),
                          "callee_param": node[1], **_site(s, self.files, before[0])})
            node = before
        chain.reverse()
        loc, kind = sorted(self.access[end])[0]
        chain.append({"kind": "access", "func": _name(end[0]), "param": end[1], "access": kind, **_loc(loc),
                      "arms": sorted(self.arms.get((end[0], end[1], loc), []), key=lambda a: a["condition"])})
        return chain

    def why_pruned(self, k: str, p: str, seen=None) -> list[dict]:
        """Near misses, as reason records: accesses only in dead code, bindings to parameters
        nobody uses (each with the callee's own reasons nested)."""
        seen = set() if seen is None else seen
        if (k, p) in seen:
            return []
        seen.add((k, p))
        out = []
        for loc in sorted(self.dead_access.get((k, p), ())):
            out.append({"kind": "dead_access", "func": _name(k), "param": p, **_loc(loc),
                        "arms": sorted(self.arms.get((k, p, loc), []), key=lambda a: a["condition"])})
        for s, j, q in sorted(self.unused_forward.get((k, p), ())):
            sub = self.why_pruned(j, q, seen)
            out.append({"kind": "unused_forward", "func": _name(k), "param": p, "callee": _name(j),
                        "callee_param": q, **_site(s, self.files, k),
                        "reasons": sub or [{"kind": "never_mentioned", "func": _name(j), "param": q}]})
        return out

    def reasons(self, k: str, p: str) -> tuple[str, list[dict]]:
        """("kept" | "pruned" | "unknown", reason records) of leaf p of kernel k."""
        if (k, p) in self.kept:
            return "kept", self.why_kept(k, p)
        if (k, p) in self.pruned:
            return "pruned", self.why_pruned(k, p) or [{"kind": "never_mentioned", "func": _name(k), "param": p}]
        return "unknown", []

    def kernel_record(self, name: str, inst: str, static: Mapping[str, str], params: list[str],
                      only: str | None = None) -> dict:
        """One kernel specialisation as data (the form `qd/explain_schema.json` describes)."""
        out = [{"path": q, "status": st, "reasons": rs}
               for q in ([only] if only else params) for st, rs in [self.reasons(inst, q)]]
        return {"kernel": name, "instantiation": inst, "specialization": dict(static), "leaves": len(params),
                "kept": sum(1 for q in params if (inst, q) in self.kept), "params": out}

    def explain(self, k: str, p: str) -> str:
        status, reasons = self.reasons(k, p)
        if status == "kept":
            return f"{p} is kept because:\n" + "\n".join(f"  {n}. {_sentence(r)}" for n, r in enumerate(reasons, 1))
        if status == "pruned":
            if reasons[0]["kind"] == "never_mentioned":
                return f"{p} is pruned: no code of {_name(k)} or of the funcs it calls mentions it"
            return f"{p} is pruned: no live code needs it.\n" + "\n".join(_pruned_lines(reasons, 1))
        return f"{p} is not a runtime parameter of {_name(k)}"


_VERB = {"read": "reads", "write": "writes", "atomic": "updates atomically", "shape": "reads the shape of",
         "arg": "uses"}


def _where(r: dict) -> str:
    return f"{r['file']}:{r['line']}:{r['col']}" if r.get("line") is not None else str(r.get("file", "?"))


def _sentence(r: dict) -> str:
    kind = r["kind"]
    if kind == "forward":
        return f"{r['func']} passes {r['param']} to {r['callee']} as {r['callee_param']} (call at {_where(r)})"
    if kind == "access":
        return f"{r['func']} {_VERB.get(r['access'], r['access'])} {r['param']} at {_where(r)}{_arms(r, True)}"
    if kind == "dead_access":
        return (f"{r['func']} accesses {r['param']} at {_where(r)}, but only inside a qd.static arm that is not taken"
                + _arms(r, False))
    if kind == "unused_forward":
        return (f"{r['func']} passes {r['param']} to {r['callee']} as {r['callee_param']} (call at {_where(r)}), "
                f"but {r['callee']} does not use {r['callee_param']}:")
    if kind == "never_mentioned":
        return f"{r['func']} never reads or writes {r['param']}"
    return f"{r['param']} is used, but no derivation was found (was the analysis run with provenance?)"


def _arms(r: dict, taken: bool) -> str:
    """The static arms around an access, quoted as written: the selected ones for a live access,
    the unselected ones for a dead one."""
    arms = [f"`{a['condition']}`" for a in r.get("arms", []) if a["taken"] == taken]
    if not arms:
        return ""
    if taken:
        return f", inside {' and '.join(arms)}, selected in {r['func']}"
    return f": {' and '.join(arms)} in {r['func']}"


def _pruned_lines(reasons: list[dict], depth: int) -> list[str]:
    out = []
    for r in reasons:
        out.append("  " * depth + _sentence(r))
        out.extend(_pruned_lines(r.get("reasons", []), depth + 1))
    return out


def _loc(loc: str) -> dict:
    """file/line/col of an access location written `file:line:col` (1-based column)."""
    head, _, col = str(loc).rpartition(":")
    file, _, line = head.rpartition(":")
    if file and line.isdigit() and col.isdigit():
        return {"file": file, "line": int(line), "col": int(col)}
    return {"file": str(loc), "line": None, "col": None}


def _site(site: str, files: Mapping[str, str], caller: str) -> dict:
    return _loc(_site_loc(site, files, caller))


def to_dot(records: list[dict]) -> str:
    """The derivation graph of kernel records as Graphviz `dot` text: a node per kernel leaf,
    call site and access, an edge per step; pruned chains and dead accesses are dashed."""
    lines = ["digraph qd_explain {", "  rankdir=LR;", '  node [shape=box, fontname="monospace"];']
    ids: dict[str, str] = {}

    def node(label: str, style: str = "") -> str:
        if label not in ids:
            ids[label] = f"n{len(ids)}"
            lines.append(f"  {ids[label]} [label={_dot_str(label)}{style}];")
        return ids[label]

    def chain(src: str, reasons: list[dict], dashed: bool) -> None:
        prev = src
        for r in reasons:
            dead = dashed or r["kind"] in ("dead_access", "unused_forward", "never_mentioned")
            label = _sentence(r).rstrip(":")
            cur = node(label, ', style="dashed"' if dead else "")
            lines.append(f"  {prev} -> {cur}{' [style=dashed]' if dead else ''};")
            if r.get("reasons"):
                chain(cur, r["reasons"], True)
            if r["kind"] in ("forward", "access"):
                prev = cur  # a kept chain goes on from its last hop

    for rec in records:
        spec = ", ".join(f"{k}={v}" for k, v in rec["specialization"].items())
        title = f"{rec['kernel']}[{spec}]" if spec else rec["kernel"]
        for prm in rec["params"]:
            src = node(f"{title}: {prm['path']} ({prm['status']})", ', style="bold"' if prm["status"] == "kept" else
                       ', style="dashed"')
            chain(src, prm["reasons"], prm["status"] != "kept")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

