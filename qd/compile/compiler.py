"""The compile side of the pipeline, as one module loaded on first use.

Everything a variant that is not cached, `qd.ptx` or `qd.explain` needs (the frontend lowering,
the analysis engine, codegen, the targets' code generators) is reached through here, and
`qd.compile.pipeline.load_compiler` imports this module the first time one of them is asked for, so
neither `import qd` nor a launch served from the disk cache loads any of it.
"""

from __future__ import annotations

from qd_analysis.explain import Explainer, record_text, to_dot

from .compile_path import build, compile_many, forget, prepare, ptx, registry, start_workers
from .pruning import explain_facts, explain_relations

__all__ = ["Explainer", "build", "compile_many", "explain_facts", "explain_relations", "forget", "prepare", "ptx",
           "record_text", "registry", "start_workers", "to_dot"]
