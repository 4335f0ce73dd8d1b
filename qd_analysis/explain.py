"""Why a kernel parameter was kept or pruned, in sentences.

The answers are read off the one-step provenance relations (`Why_Access`, `Why_Forward`)
and the why-not relations (`Why_DeadAccess`, `Why_UnusedForward`, `Why_DeadForward`)
derived by `rules/provenance.dl`; a breadth-first walk chains the single steps into the
shortest story from the kernel parameter to the code that needs it (or fails to).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping


def _arm(cond: str, taken: int) -> dict:
    """A static arm as data: the condition as written, which arm ("if" body or "else"), the
    condition's value in this instantiation and whether the arm was selected."""
    is_else = cond.startswith("else of ")
    test = cond[len("else of "):] if is_else else cond
    test = test[len("if "):] if test.startswith("if ") else test
    return {"condition": test, "arm": "else" if is_else else "if", "value": bool(taken) != is_else,
            "taken": bool(taken)}


def _arms(rows) -> list[dict]:
    return sorted((_arm(c, t) for c, t in rows), key=lambda a: (a["condition"], a["arm"]))


class Explainer:
    """Indexes the derived relations of one analysis run for explanation queries.

    `facts` (the input relations the run read) supply the labels: each instantiation's function
    and compile-time values, so sentences name `inner[use_deep=True]` rather than an id; where
    each call site is written; each kernel's leaf parameters in signature order. Ids are never
    parsed here: their encoding belongs to the frontend."""

    def __init__(self, rel: Mapping[str, set], facts: Mapping[str, list]):
        self.funcs = dict(facts.get("Inst_Func", ()))
        self.site_locs = dict(facts.get("Site_Loc", ()))
        self.templates: dict[str, list] = {}
        for i, name, value in facts.get("Inst_Template", ()):
            self.templates.setdefault(i, []).append((name, value))
        self.params: dict[str, list] = {}
        for i, p, _slot in sorted(facts.get("Inst_Param", ()), key=lambda r: (r[0], r[2])):
            self.params.setdefault(i, []).append(p)
        self.access: dict[tuple, list] = {}
        for i, p, loc, kind in rel.get("Why_Access", ()):
            self.access.setdefault((i, p), []).append((loc, kind))
        self.forward: dict[tuple, list] = {}
        for i, a, s, j, q in rel.get("Why_Forward", ()):
            self.forward.setdefault((i, a), []).append((s, j, q))
        self.dead_access: dict[tuple, list] = {}
        for i, p, loc, _b in rel.get("Why_DeadAccess", ()):
            self.dead_access.setdefault((i, p), []).append(loc)
        self.unused_forward: dict[tuple, list] = {}
        for i, a, s, j, q in rel.get("Why_UnusedForward", ()):
            self.unused_forward.setdefault((i, a), []).append((s, j, q))
        self.dead_forward: dict[tuple, list] = {}
        for i, a, s, func in rel.get("Why_DeadForward", ()):
            self.dead_forward.setdefault((i, a), []).append((s, func))
        self.arms: dict[tuple, list] = {}
        for i, p, loc, cond, taken in rel.get("Why_AccessInArm", ()):
            self.arms.setdefault((i, p, loc), []).append((cond, taken))
        self.site_arms: dict[tuple, list] = {}
        for i, s, cond, taken in rel.get("Why_SiteInArm", ()):
            self.site_arms.setdefault((i, s), []).append((cond, taken))
        self.kept = {(k, p) for k, p in rel.get("Param_Kept", ())}
        self.pruned = {(k, p) for k, p in rel.get("Param_Pruned", ())}

    def name(self, inst: str) -> str:
        """An instantiation as a reader knows it: its function and compile-time values."""
        values = self.templates.get(inst)
        func = self.funcs.get(inst, inst)
        return f"{func}[{', '.join(f'{n}={v}' for n, v in values)}]" if values else func

    def _site(self, site: str) -> dict:
        return _loc(self.site_locs.get(site, "?"))

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
            return [{"kind": "underived", "func": self.name(k), "param": p}]
        chain = []
        node = end
        while prev[node] is not None:
            before, s = prev[node]
            chain.append({"kind": "forward", "func": self.name(before[0]), "param": before[1],
                          "callee": self.name(node[0]), "callee_param": node[1], **self._site(s)})
            node = before
        chain.reverse()
        loc, kind = sorted(self.access[end])[0]
        chain.append({"kind": "access", "func": self.name(end[0]), "param": end[1], "access": kind, **_loc(loc),
                      "arms": _arms(self.arms.get((end[0], end[1], loc), []))})
        return chain

    def why_pruned(self, k: str, p: str, seen=None) -> list[dict]:
        """Near misses, as reason records: accesses only in dead code, calls in dead code it
        would have been passed to, bindings to parameters nobody uses (each with the callee's
        own reasons nested)."""
        seen = set() if seen is None else seen
        if (k, p) in seen:
            return []
        seen.add((k, p))
        out = []
        for loc in sorted(self.dead_access.get((k, p), ())):
            out.append({"kind": "dead_access", "func": self.name(k), "param": p, **_loc(loc),
                        "arms": _arms(self.arms.get((k, p, loc), []))})
        calls = [{"kind": "dead_call", "func": self.name(k), "param": p, "callee": func, **self._site(s),
                  "arms": _arms(self.site_arms.get((k, s), []))} for s, func in self.dead_forward.get((k, p), ())]
        for r in sorted({repr(sorted(r.items())): r for r in calls}.values(),
                        key=lambda r: (r["line"] or 0, r["col"] or 0)):
            out.append(r)  # one per source position: an unrolled loop writes one call many times
        for s, j, q in sorted(self.unused_forward.get((k, p), ())):
            sub = self.why_pruned(j, q, seen)
            out.append({"kind": "unused_forward", "func": self.name(k), "param": p, "callee": self.name(j),
                        "callee_param": q, **self._site(s),
                        "reasons": sub or [{"kind": "never_mentioned", "func": self.name(j), "param": q}]})
        return out

    def reasons(self, k: str, p: str) -> tuple[str, list[dict]]:
        """("kept" | "pruned" | "unknown", reason records) of leaf p of kernel k."""
        if (k, p) in self.kept:
            return "kept", self.why_kept(k, p)
        if (k, p) in self.pruned:
            return "pruned", self.why_pruned(k, p) or [{"kind": "never_mentioned", "func": self.name(k), "param": p}]
        return "unknown", []

    def kernel_record(self, name: str, inst: str, only: str | None = None) -> dict:
        """One kernel specialisation as data (the form `qd/explain/schema.json` describes)."""
        params = self.params.get(inst, [])
        out = [{"path": q, "status": st, "reasons": rs}
               for q in ([only] if only else params) for st, rs in [self.reasons(inst, q)]]
        return {"kernel": name, "instantiation": inst, "specialization": dict(self.templates.get(inst, ())),
                "leaves": len(params), "kept": sum(1 for q in params if (inst, q) in self.kept), "params": out}

    def explain(self, k: str, p: str) -> str:
        status, reasons = self.reasons(k, p)
        return param_text({"path": p, "status": status, "reasons": reasons}, self.name(k))


def title(record: dict) -> str:
    """The kernel specialisation a record describes, named by its template values."""
    spec = ", ".join(f"{k}={v}" for k, v in record["specialization"].items())
    return f"{record['kernel']}[{spec}]" if spec else record["kernel"]


def summary(record: dict) -> str:
    return f"== {title(record)}: kept {record['kept']} of {record['leaves']} leaves"


def param_text(prm: dict, kernel: str) -> str:
    """The block of sentences for one leaf of a kernel record."""
    p, status, reasons = prm["path"], prm["status"], prm["reasons"]
    if status == "kept":
        return f"{p} is kept because:\n" + "\n".join(f"  {n}. {_sentence(r)}" for n, r in enumerate(reasons, 1))
    if status == "pruned":
        if reasons[0]["kind"] == "never_mentioned" and len(reasons) == 1:
            return f"{p} is pruned: no code of {kernel} or of the funcs it calls mentions it"
        return f"{p} is pruned: no live code needs it.\n" + "\n".join(_pruned_lines(reasons, 1))
    return f"{p} is not a runtime parameter of {kernel}"


def record_text(record: dict) -> str:
    """Every leaf block of a kernel record (what `qd.explain` prints), without the summary."""
    return "\n".join(param_text(prm, title(record)) for prm in record["params"])


_VERB = {"read": "reads", "write": "writes", "atomic": "updates atomically", "shape": "reads the shape of",
         "arg": "uses"}


def _where(r: dict) -> str:
    return f"{r['file']}:{r['line']}:{r['col']}" if r.get("line") is not None else str(r.get("file", "?"))


def _sentence(r: dict) -> str:
    kind = r["kind"]
    if kind == "forward":
        return f"{r['func']} passes {r['param']} to {r['callee']} as {r['callee_param']} (call at {_where(r)})"
    if kind == "access":
        return f"{r['func']} {_VERB.get(r['access'], r['access'])} {r['param']} at {_where(r)}{_arm_text(r, True)}"
    if kind == "dead_access":
        return (f"{r['func']} accesses {r['param']} at {_where(r)}, but only inside a qd.static arm that is not taken"
                + _arm_text(r, False))
    if kind == "dead_call":
        return (f"{r['func']} passes {r['param']} into a call of {r['callee']} at {_where(r)}, but the call sits in "
                f"a qd.static arm that is not taken{_arm_text(r, False)}")
    if kind == "unused_forward":
        return (f"{r['func']} passes {r['param']} to {r['callee']} as {r['callee_param']} (call at {_where(r)}), "
                f"but {r['callee']} does not use {r['callee_param']}:")
    if kind == "never_mentioned":
        return f"{r['func']} never reads or writes {r['param']}"
    return f"{r['param']} is used, but no derivation was found (was the analysis run with provenance?)"


def _arm_text(r: dict, taken: bool) -> str:
    """The static arms around an access or call, quoted as written with the condition's value
    in this instantiation: the selected arms for live code, the unselected ones for dead code."""
    arms = [a for a in r.get("arms", []) if a["taken"] == taken]
    if not arms:
        return ""
    said = []
    for a in arms:
        test, value = f"`if {a['condition']}`", a["value"]
        if taken:
            said.append(f"inside {'the else of ' if a['arm'] == 'else' else ''}{test}, {value} in {r['func']}")
        else:
            said.append(f"{test} is {value} in {r['func']}" + (", so its else is not taken" if a["arm"] == "else"
                                                                else ""))
    return f"{', ' if taken else ': '}{' and '.join(said)}"


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
            dead = dashed or r["kind"] in ("dead_access", "dead_call", "unused_forward", "never_mentioned")
            label = _sentence(r).rstrip(":")
            cur = node(label, ', style="dashed"' if dead else "")
            lines.append(f"  {prev} -> {cur}{' [style=dashed]' if dead else ''};")
            if r.get("reasons"):
                chain(cur, r["reasons"], True)
            if r["kind"] in ("forward", "access"):
                prev = cur  # a kept chain goes on from its last hop

    for rec in records:
        for prm in rec["params"]:
            src = node(f"{title(rec)}: {prm['path']} ({prm['status']})",
                       ', style="bold"' if prm["status"] == "kept" else ', style="dashed"')
            chain(src, prm["reasons"], prm["status"] != "kept")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

