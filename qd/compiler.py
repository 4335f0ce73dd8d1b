"""The compiler behind the dispatch, as one module loaded on first use.

Everything a first launch, `qd.ptx` or `qd.explain` needs (the frontend, the analysis engine,
codegen, the targets) is reached through here, and `qd.kernel.load_compiler` imports this module
the first time one of them is asked for, so `import qd` loads none of it: a script that only
defines kernels, or runs from the disk cache, does not pay for a compiler it does not use.
"""

from __future__ import annotations

from analysis.explain import Explainer, record_text, to_dot

from .pipeline import get_variant
from .pruning import explain_relations
from .targets.cuda.ptx import compile_ptx, ptx

__all__ = ["Explainer", "compile_ptx", "explain_relations", "get_variant", "ptx", "record_text", "to_dot"]
