"""`qd.explain(kernel)`: why each parameter of the last launched variant was kept or pruned."""

from __future__ import annotations

from .errors import QdError
from .kernel import Kernel


def explain(kernel: Kernel, path: str | None = None) -> str:
    """Sentences for one leaf path (`"md.mid.pos"`), or for every leaf when `path` is None.

    Explains the variant of the kernel's last launch; the provenance rules run now, over the
    facts of every instantiation the kernel reaches.
    """
    from analysis.analyze import explain_relations  # analysis imports qd.frontend: load it late
    from analysis.explain import Explainer

    if not isinstance(kernel, Kernel):
        raise TypeError("qd.explain expects a @qd.kernel")
    info = kernel.last
    if info is None:
        raise QdError(f"kernel {kernel.fn.__qualname__} has not been launched yet; launch it, then ask why")
    variant = kernel.variants.get(info.specialization)
    if variant is None:
        raise QdError(f"the variant of {kernel.fn.__qualname__} last launched is no longer compiled (qd.init?)")
    facts, files = variant.explain_facts()
    ex = Explainer(explain_relations(facts), files)
    k = variant.inst_id
    params = [p for _k, p, _slot in sorted((r for r in facts["Param"] if r[0] == k), key=lambda r: r[2])]
    if path is not None:
        if path not in params:
            raise QdError(f"{path!r} is not a runtime parameter of {kernel.fn.__qualname__}; its leaves are: "
                          + ", ".join(params))
        return ex.explain(k, path)
    return "\n".join(ex.explain(k, p) for p in params)
