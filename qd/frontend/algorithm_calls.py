"""`qd.algorithms`' scratch-size helpers inside kernels: quadrants lets a kernel recompute the
scratch an op needs from a count read on the device, to check it against `scratch.shape[0]`.

With compile-time arguments a helper is evaluated now, as any plain function a kernel calls;
with a run-time count its entry here calls the matching func of `qd/lib/algorithms.py`, after
checking that the depth is a compile-time value (the depth-less form needs a loop over the count
that quadrants keeps to the host, and so does qd).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import QdTypeError
from ..lib import algorithms as alg
from . import builtin_calls as bc
from . import calls
from .kinds import RUNTIME, known
from .values import CT

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []


def _entry(name: str, kernel_func, takes_depth: bool):
    def handler(low: Lowering, f, node, args, kwargs):
        if kwargs or not 1 <= len(args) <= (2 if takes_depth else 1):
            return bc.FALLBACK  # the Python function reports its own signature
        if all(known(a) is not RUNTIME for a in args):
            return bc.FALLBACK
        if not takes_depth:
            return calls.call_func(low, kernel_func, node, given=([args[0]], {}))
        if len(args) < 2 or known(args[1]) is RUNTIME:
            raise QdTypeError(f"qd.algorithms.{name}() of a run-time count needs log256_max_n, a compile-time "
                              "value (the form without it works in Python scope only)")
        depth = alg._check_depth(args[1].value)
        return calls.call_func(low, kernel_func, node, given=([args[0], CT(depth)], {}))

    return bc.Builtin(f"qd.algorithms.{name}", handler, f"the scratch slots of qd.algorithms' {name[:-14]}")


for _f, _kf, _depth in ((alg.reduce_scratch_slots, alg.reduce_slots_k, True),
                        (alg.exclusive_scan_scratch_slots, alg.scan_slots_k, True),
                        (alg.sort_scratch_slots, alg.sort_slots_k, True),
                        (alg.select_scratch_slots, alg.select_slots_k, False),
                        (alg.reduce_by_key_scratch_slots, alg.reduce_by_key_slots_k, False)):
    bc._register([_f], _entry(_f.__name__, _kf, _depth))
