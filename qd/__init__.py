"""qd: a Python kernel language with declarative parameter pruning.

Source-compatible with the common subset of the quadrants API: replace
`import quadrants as qd` with `import qd`.
"""

from __future__ import annotations

import sys as _sys

from .compile.stats import compile_stats
from .core.dtypes import f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64
from .core.errors import (
    QdArgumentError,
    QdBoundsError,
    QdCallError,
    QdCompileError,
    QdConfigError,
    QdError,
    QdIndexCountError,
    QdIndexError,
    QdInternalError,
    QdNameError,
    QdResumeError,
    QdRuntimeError,
    QdShapeError,
    QdSignatureError,
    QdStaticError,
    QdSyntaxError,
    QdSyntaxWarning,
    QdTypeError,
    QdValueError,
    QdWarning,
)
from .core.version import __version__
from .dispatch.kernel import kernel, launch_info, ptx, pure, real_func
from .dispatch.warmup import compile_all
from .explain.api import explain
from .lang import config, linalg, math, types
from .lang.config import amdgpu, arm64, cpu, cuda, gpu, init, metal, python, vulkan, x64
from .lang.data_oriented import data_oriented
from .lang.field import Axis, Field, Layout, SNode, field, root
from .lang.funcs import func
from .lang.linalg import eig, make_spd, polar_decompose, solve, svd, sym_eig
from .lang.matrix import Matrix, Vector
from .lang.ndarray import MatrixNdarray, Ndarray, VectorNdarray, ndarray
from .lang.ops import (
    abs,
    atomic_add,
    atomic_and,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_sub,
    atomic_xor,
    cast,
    ceil,
    cos,
    exp,
    floor,
    grouped,
    log,
    max,
    min,
    ndrange,
    pi,
    sin,
    sqrt,
    static,
    sync,
    tan,
)
from .lang.struct_field import StructField
from .lang.structs import Struct, dataclass
from .lang.tensor import Backend, MatrixTensor, Tensor, VectorTensor, tensor, wrap
from .lang.types import Template, ref, template

# Module paths programs import (`from qd.types import NDArray`, `import qd.math as tm`,
# `qd.config.current()`, `qd.linalg.svd`): those modules live in `qd.lang`, under these names too
for _module in (config, linalg, math, types):
    _sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module

# `qd.algorithms` (the device-wide sort, scans, reductions, select) is written in qd itself; its
# funcs are built on first use (a lazy module: most programs never sort), so `import qd` skips them
import importlib.util as _importlib_util  # noqa: E402

_spec = _importlib_util.find_spec(".lib.algorithms", __name__)
_spec.loader = _importlib_util.LazyLoader(_spec.loader)
algorithms = _importlib_util.module_from_spec(_spec)
_sys.modules[_spec.name] = _sys.modules[f"{__name__}.algorithms"] = algorithms
_spec.loader.exec_module(algorithms)

# `qd.profiler` (quadrants' kernel profiler: launches timed under `qd.init(kernel_profiler=True)`)
# and `qd.tools` (its PLY / VTK file writers)
from .compile import profiler  # noqa: E402
from .lang import tools  # noqa: E402

_sys.modules[f"{__name__}.profiler"] = profiler
_sys.modules[f"{__name__}.tools"] = tools
for _name in ("np2ply", "vtk", "diagnose"):  # `import qd.tools.vtk` finds the same (lazy) modules
    _sys.modules[f"{__name__}.tools.{_name}"] = getattr(tools, _name)

# `qd.graph` (do-while loops and parallel sections), streams and events: run in order
from .lang import graph  # noqa: E402
from .lang.stream import Event, Stream, create_event, create_stream, stream_parallel  # noqa: E402

_sys.modules[f"{__name__}.graph"] = graph
graph_do_while, graph_parallel_context, graph_parallel = graph.do_while, graph.parallel_context, graph.parallel
checkpoint, GraphStatus = graph.checkpoint, graph.GraphStatus

from .lang import simt  # noqa: E402 - block, grid, warp and subgroup operations of GPU kernels
from .lang.buffer_view import BufferView  # noqa: E402 - ndarray slices as views

for _name in ("", ".block", ".grid", ".warp", ".subgroup"):
    _sys.modules[f"{__name__}.simt{_name}"] = _sys.modules[f"{simt.__name__}{_name}"]

i = i32
f = f32
j, k = Axis(1), Axis(2)  # placement axes (`qd.i` is also i32's alias; dense() takes it as axis 0)
ij, ijk, ijkl = Axis(0, 1), Axis(0, 1, 2), Axis(0, 1, 2, 3)

__all__ = [
    "types", "math", "Matrix", "Vector", "init", "cpu", "cuda", "gpu", "metal", "vulkan", "amdgpu", "x64", "arm64",
    "python",
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "u1",
    "QdError", "QdCompileError", "QdSyntaxError", "QdNameError", "QdTypeError", "QdStaticError", "QdCallError",
    "QdSignatureError", "QdArgumentError", "QdConfigError", "QdValueError", "QdIndexError", "QdIndexCountError",
    "QdBoundsError",
    "QdRuntimeError", "QdResumeError", "QdShapeError", "QdInternalError", "QdWarning",
    "QdSyntaxWarning",
    "kernel", "func", "launch_info", "explain", "static", "ndrange", "grouped", "cast", "sync",
    "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_and", "atomic_or", "atomic_xor",
    "sqrt", "sin", "cos", "tan", "exp", "log", "abs", "floor", "ceil", "min", "max", "pi",
    "ndarray", "Ndarray", "VectorNdarray", "MatrixNdarray", "template", "Template", "ref", "ptx", "__version__",
    "svd", "polar_decompose", "sym_eig", "eig", "make_spd", "solve",
    "field", "Field", "Layout", "root", "SNode", "Axis", "j", "k", "ij", "ijk", "ijkl", "data_oriented", "pure",
    "real_func", "tensor", "Tensor", "Backend", "StructField", "VectorTensor", "MatrixTensor", "wrap",
    "compile_all", "compile_stats",
]
__all__ += ["Struct", "dataclass"]
__all__ += ["algorithms", "graph", "Stream", "Event", "create_stream", "create_event", "stream_parallel",
            "graph_do_while", "graph_parallel_context", "graph_parallel", "checkpoint", "GraphStatus"]
__all__ += ["BufferView", "profiler", "tools", "simt"]

# ---------------------------------------------------------------- quadrants' configuration, dtype and builtin names
from .core.dtypes import (  # noqa: E402
    f16,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint1,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.errors import QdAssertionError  # noqa: E402
from .lang.config import cfg, extension, is_extension_enabled  # noqa: E402
from .lang.impl import reset  # noqa: E402

__all__ += [
    "cfg", "reset", "extension", "is_extension_enabled", "QdAssertionError", "f16", "float16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint1", "uint8", "uint16", "uint32", "uint64",
]
from .lang.ops import (  # noqa: E402
    acos,
    asin,
    atan2,
    atomic_cas,
    atomic_exchange,
    atomic_mul,
    bit_cast,
    bit_shr,
    loop_config,
    one,
    pow,
    raw_div,
    raw_mod,
    round,
    rsqrt,
    select,
    static_assert,
    static_print,
    tanh,
    zero,
)

__all__ += [
    "acos", "asin", "atan2", "atomic_cas", "atomic_exchange", "atomic_mul", "bit_cast", "bit_shr", "loop_config", "pow",
    "raw_div", "raw_mod", "round", "rsqrt", "select", "static_assert", "static_print", "tanh", "zero",
    "one",
]
from .lang.ops import outer, randn, random, volatile_load  # noqa: E402

__all__ += ["random", "randn", "volatile_load", "outer"]

# ---------------------------------------------------------------- the host-side surface of quadrants programs
# (`qd.lang.impl`, quadrants' error names, logging, `qd.types.primitive_types`, `@qd.perf_dispatch`)
from .core import log as _logging  # noqa: E402
from .core.log import CRITICAL, DEBUG, ERROR, INFO, TRACE, WARN, is_logging_effective, set_logging_level  # noqa: E402
from .lang import _template_mapper, exception, impl, primitive_types, util  # noqa: E402,F401
from .lang.exception import (  # noqa: E402
    QuadrantsAssertionError,
    QuadrantsCompilationError,
    QuadrantsIndexError,
    QuadrantsNameError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
)
from .lang.perf_dispatch import perf_dispatch  # noqa: E402

_sys.modules[f"{__name__}._logging"] = _logging
_sys.modules[f"{__name__}.types.primitive_types"] = primitive_types
types.primitive_types = primitive_types
__all__ += [
    "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "set_logging_level", "is_logging_effective",
    "QuadrantsCompilationError", "QuadrantsSyntaxError", "QuadrantsNameError", "QuadrantsTypeError",
    "QuadrantsIndexError", "QuadrantsRuntimeError", "QuadrantsAssertionError", "QuadrantsRuntimeTypeError",
    "perf_dispatch",
]
