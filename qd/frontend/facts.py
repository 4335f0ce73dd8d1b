"""Fact export: typed IR of instantiations → input relations of `rules/schema.dl`.

The frontend owns this step (the analysis package sees only the rows, never the IR), so a new
IR construct changes the facts here and the rules there, and nothing in between.

Only instantiations not analysed before are exported in full; for the others the exporter
emits their known used sets as `Inst_CachedUsed`, so a helper reached from many kernels is
analysed once per process.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping, Sequence

from qd_analysis.datalog import GroupedRows

from ..core import ir

RELATIONS = ("Kernel", "Inst_Func", "Inst_Template", "Inst_Param", "Block_Parent", "StaticArm_Taken", "StaticArm_Cond",
             "Access", "Access_Block", "Call", "DeadCall", "DeadCall_Arg", "Call_Bind", "Site_Loc", "Inst_CachedUsed")

def loc_str(loc) -> str:
    return "?" if loc is None else f"{loc.file}:{loc.line}:{loc.col + 1}"


def export(kernels: Sequence[ir.Inst], insts: Iterable[ir.Inst],
           cached: Mapping[str, tuple[str, ...]], decision_only: bool = False) -> dict[str, Collection]:
    """Facts for kernel specialisations. `insts` are all instantiations reachable from them;
    those in `cached` (kernels excepted) contribute only their used sets.

    `decision_only` leaves out rows that only the provenance rules read — `Inst_Param` of funcs (the
    prune rules join `Inst_Param` with `Kernel`), `Inst_Func`, `Inst_Template`, `StaticArm_Cond`, `Site_Loc`
    and `DeadCall*` — which are most of the rows in a program with wide dataclasses, gives each access as an
    `Access_Block` row, without the location string and kind only explanations read, and `Call_Bind` as
    `GroupedRows` (each site's binding list as the frontend holds it, no tuple per row); explanations
    export everything as lists of rows."""
    f: dict[str, list] = {r: [] for r in RELATIONS}
    f["Kernel"].extend((k.id,) for k in kernels)
    access, param, blocks, arms = f["Access"], f["Inst_Param"], f["Block_Parent"], f["StaticArm_Taken"]
    calls, binds = f["Call"], f["Call_Bind"]
    bound_sites: set[str] = set()  # a site id names its binding list, so its rows go out once
    bind_lists: dict[str, list[tuple[str, str]]] = {}  # the same, grouped by site (decision_only)
    if decision_only:
        access = f["Access_Block"]
    for inst in insts:
        i = inst.id
        if not inst.is_kernel and i in cached:
            f["Inst_CachedUsed"].extend((i, p) for p in cached[i])
            continue
        if not decision_only:
            f["Inst_Func"].append((i, inst.qualname))
            f["Inst_Template"].extend((i, name, value) for name, value in inst.static)
        if inst.is_kernel or not decision_only:
            param.extend((i, lf.path, n) for n, lf in enumerate(inst.params))
        for b in inst.blocks:
            blocks.append((i, b.id, b.parent))
            if b.static_taken is not None:
                arms.append((i, b.id, b.static_taken))
                if not decision_only:
                    f["StaticArm_Cond"].append((i, b.id, b.static_cond))
        if decision_only:
            access.extend((i, a.path, a.block) for a in inst.accesses)
        else:
            access.extend((i, a.path, a.block, loc_str(a.loc), a.kind) for a in inst.accesses)
        for c in inst.calls:
            site = c.site
            calls.append((site, i, c.callee, c.block))
            if decision_only:
                bind_lists.setdefault(site, c.binds)
            elif site not in bound_sites:
                bound_sites.add(site)
                binds.extend((site, a, q) for a, q in c.binds)
                f["Site_Loc"].append((site, loc_str(c.loc)))
        if not decision_only:
            f["DeadCall"].extend((d.site, i, d.func, d.block) for d in inst.dead_calls)
            f["DeadCall_Arg"].extend((d.site, a) for d in inst.dead_calls for a in d.args)
            f["Site_Loc"].extend((d.site, loc_str(d.loc)) for d in inst.dead_calls)
    if decision_only:
        f["Call_Bind"] = GroupedRows(bind_lists)
    return f


class Signatures(Mapping):
    """Each instantiation's leaf parameters in signature order (how a plan orders used sets),
    read from an instantiation when asked: a plan needs them only for instantiations that use
    some leaf, and there are a million leaves in a large program."""

    def __init__(self, insts: Iterable[ir.Inst]):
        self._insts = {i.id: i for i in insts}

    def __getitem__(self, inst_id: str) -> tuple[str, ...]:
        return tuple([lf.path for lf in self._insts[inst_id].params])

    def select(self, inst_id: str, wanted: Container[str]) -> tuple[str, ...]:
        """The leaves of `inst_id` in `wanted`, in signature order: `self[inst_id]` filtered, in one
        pass that makes no tuple of all its leaves (how a plan orders a used set)."""
        return tuple([p for lf in self._insts[inst_id].params if (p := lf.path) in wanted])

    def __iter__(self):
        return iter(self._insts)

    def __len__(self) -> int:
        return len(self._insts)


def signatures(insts: Iterable[ir.Inst]) -> Signatures:
    """See `Signatures`."""
    return Signatures(insts)
