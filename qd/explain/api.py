"""`qd.explain(kernel)`: why each parameter of the last launched variant was kept or pruned."""

from __future__ import annotations

import copy

from ..core.errors import QdArgumentError, QdError, caller_loc
from ..dispatch.kernel import Kernel, as_kernel, load_compiler


class Explanation(str):
    """What `qd.explain` returns: the text (it is a `str`, so printing and `in` work as before),
    with the same answer as data (`to_dict()`, the form of `qd/explain/schema.json`'s kernel
    records) and as a derivation graph (`to_dot()`)."""

    def __new__(cls, text: str, record: dict):
        obj = super().__new__(cls, text)
        obj._record = record
        return obj

    def text(self) -> str:
        return str.__str__(self)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._record)

    def to_dot(self) -> str:
        return load_compiler().to_dot([self._record])


def explain(kernel: Kernel, path: str | None = None) -> Explanation:
    """Sentences for one leaf path (`"md.mid.pos"`), or for every leaf when `path` is None.

    Explains the variant of the kernel's last launch; the provenance rules run now, over the
    facts of every instantiation the kernel reaches.
    """
    k = as_kernel(kernel)
    if k is None:
        raise QdArgumentError(f"qd.explain expects a @qd.kernel, got {type(kernel).__name__}", caller_loc())
    kernel = k
    info = kernel.last
    if info is None:
        raise QdError(f"kernel {kernel.fn.__qualname__} has not been launched yet; launch it, then ask why",
                      caller_loc())
    variant = kernel.variants.get(info.specialization)
    if variant is None:
        raise QdError(f"the variant of {kernel.fn.__qualname__} last launched is no longer compiled (qd.init?)",
                      caller_loc())
    facts = variant.explain_facts()
    c = load_compiler()
    ex = c.Explainer(c.explain_relations(facts), facts)
    k = variant.inst_id
    params = ex.params.get(k, [])
    if path is not None and path not in params:
        raise QdError(f"{path!r} is not a runtime parameter of {kernel.fn.__qualname__}; its leaves are: "
                      + ", ".join(params), caller_loc())
    record = ex.kernel_record(kernel.fn.__qualname__, k, path)
    return Explanation(c.record_text(record), record)
