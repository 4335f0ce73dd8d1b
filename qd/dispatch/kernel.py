"""`@qd.kernel` / `@qd.func` and the dispatch from a Python call to a compiled variant.

This module sits above the pipeline and the runtime (a first call goes through
`pipeline.get_variant`, later calls go to generated launchers and dispatchers); they see a
kernel only through `runtime.kernel_view.KernelView`, so nothing imports this module back.
The pipeline's launch side (fastcache, the targets' host side, the launcher) is loaded on the
first launch and its compile side (frontend lowering, analysis, codegen) on the first compile,
so `import qd` stays cheap and a process served from the disk cache never loads a compiler.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import typing

import numpy as np

from ..core import variants as _variants
from ..core.errors import (
    QdArgumentError,
    QdCompileError,
    QdError,
    QdInternalError,
    QdSyntaxError,
    SourceLoc,
    caller_loc,
    show,
    signature_error,
    unexpected_keywords,
    warn_at,
)
from ..core.source import free_vars, get_source
from ..frontend.signature import ConstSpec, StructSpec, spec_of, walk_specs
from ..frontend.spec_key import key_paths, reads_generation, spec_key, typed_by_annotation
from ..lang import config as _config
from ..lang import impl as _impl
from ..lang import stream as _stream
from ..lang.funcs import Decorated, check_decorated, func
from ..lang.graph import CheckpointTable
from ..lang.matrix import UNPACKED_ONLY_MEMBERS, MatrixType, OpenElementType, VectorType
from ..lang.structs import StructType
from ..runtime.hygiene import Namer, checked_path, internal_names, param_list
from ..runtime.kernel_view import LaunchInfo
from .arg_tokens import DispatchTable


class Kernel(Decorated):
    """A `@qd.kernel`: compiled lazily per specialisation key on first call."""

    is_qd_kernel = True
    graph = False  # `@qd.kernel(graph=True)`: quadrants records a GPU graph; qd launches it as any kernel
    # each kernel's number in the names `qd.profiler` records (`fill_c60_0`): quadrants counts its
    # kernels in definition order, two per kernel (its adjoint twin), after the 30 it defines itself
    _numbers = itertools.count(60, 2)

    checkpoint_table = None  # `checkpoints=True`: its labels (`qd.lang.graph.CheckpointTable`)
    resume_from = None  # a kernel made by `resume`: the label it starts at

    def __init__(self, fn, fastcache: bool = False, number: int | None = None):
        super().__init__(fn)
        self.fastcache = fastcache or getattr(fn, "_qd_pure", False) is True  # `@qd.pure` below `@qd.kernel`
        self.defaults = {p.name: p.default for p in self.signature.parameters.values() if p.default is not p.empty}
        self._specs = None
        self._gen = -1
        self._fast = None
        self._table: DispatchTable | None = None  # the dispatcher's table and token function
        self._tokens = None
        self.variants: dict = {}
        self.number = next(Kernel._numbers) if number is None else number
        self.instances: dict = {}  # specialisation key -> its number in profiler names (kept by `qd.init`, as there)
        self.last: LaunchInfo | None = None
        self._ret_struct: StructType | None = None  # a struct result: built from the returned components
        self._ret_items: tuple | None = None  # a tuple result holding vectors or structs: its item types

    # -- lazily computed signature facts -------------------------------------------------------

    @property
    def specs(self) -> list[tuple[str, object]]:
        if self._specs is None:
            hints = self.hints
            specs = []
            for p in self.signature.parameters.values():
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    raise QdArgumentError("kernels cannot take *args / **kwargs", self.param_loc(p.name))
                ann = hints.get(p.name)
                if isinstance(ann, str):  # typing could not evaluate all annotations together
                    ann = self._eval_annotation(ann, p.name)
                if ann is None and p.name == "self" and not specs:  # a method: the object is a template
                    specs.append((p.name, ConstSpec()))
                    continue
                spec = spec_of(ann, allow_any=False) if ann is not None else None
                if getattr(ann, "unpacked", False):  # quadrants' layout marker of dataclass members only
                    raise QdSyntaxError(UNPACKED_ONLY_MEMBERS, self.param_loc(p.name))
                if spec is None and isinstance(ann, OpenElementType):
                    raise QdArgumentError(f"kernel parameter {p.name!r}: {ann!r} has no sizes, so it only describes "
                                          "the elements of an ndarray annotation; give its sizes "
                                          "(qd.types.vector(3, qd.f32))", self.param_loc(p.name))
                if spec is None:
                    what = "needs a type annotation" if ann is None else f"has an annotation qd does not know ({ann!r})"
                    raise QdArgumentError(f"kernel parameter {p.name!r} {what}: use a qd dtype, "
                                          "qd.types.NDArray[...], qd.template() or a dataclass", self.param_loc(p.name))
                specs.append((p.name, spec))
            ret = hints.get("return")
            self._ret_struct = ret if isinstance(ret, StructType) else None
            self._ret_items = _tuple_result_items(ret)
            self._specs = specs
            self.key_paths, self.array_paths = key_paths(specs)  # what `spec_key` reads
        return self._specs

    def __get__(self, obj, objtype=None):
        """A kernel defined in a class, reached through an instance: bound to it (`self`)."""
        return self if obj is None else BoundKernel(self, obj)

    def _eval_annotation(self, text: str, name: str):
        """Evaluate one string annotation, so that the one that fails is reported at its parameter."""
        try:
            return eval(text, dict(self.fn.__globals__), free_vars(self.fn))  # noqa: S307 - the user's own annotation
        except QdError as e:
            raise type(e)(e.message, self.param_loc(name)) from None
        except Exception as e:
            raise QdArgumentError(f"cannot evaluate the annotation {text!r} of parameter {name!r}: "
                                  f"{type(e).__name__}: {e}", self.param_loc(name)) from None

    def param_loc(self, path: str) -> SourceLoc | None:
        root = path.split(".")[0].split("[")[0]
        try:
            src = get_source(self.fn)
        except QdError:
            return None
        a = src.tree.args
        for node in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if node.arg == root:
                return src.loc(node)
        return src.loc(src.tree)

    def grad(self, *args, **kwargs):
        """quadrants' reverse-mode launch. qd has no automatic differentiation: refused by name,
        so a program that relies on it stops here instead of reading gradients never computed."""
        raise QdCompileError(f"{self.fn.__qualname__}.grad(): automatic differentiation is not supported by qd "
                             "(gradient fields made with needs_grad=True hold only what the program writes)",
                             self.def_loc())

    def def_loc(self) -> SourceLoc | None:
        try:
            src = get_source(self.fn)
        except QdError:
            return None
        return src.loc(src.tree)

    # -- calls -------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if self._gen != _config._config.generation:
            self._reset()
        if kwargs and "qd_stream" in kwargs:  # quadrants' launch on a stream: qd's launches are in order
            kwargs = dict(kwargs)
            _stream.check_stream(kwargs.pop("qd_stream"), graph=self.graph)
        fast = self._fast
        try:
            if fast is not None:
                try:
                    r = fast(*args, **kwargs)
                except QdError:
                    raise
                except TypeError:  # wrong number or names of arguments: explain them
                    r = self._slow_call(args, kwargs)
            else:
                r = self._slow_call(args, kwargs)
        except QdError as e:
            raise e.with_traceback(None) from None
        if self.checkpoint_table is not None:
            return self.checkpoint_table.status(r)
        if self._ret_items is not None:
            return _regroup(r, self._ret_items)
        return r if self._ret_struct is None else self._ret_struct.from_flat(r)

    def resume(self, *args, from_checkpoint, **kwargs):
        """quadrants' `kernel.resume(..., from_checkpoint=label)`: launch a kernel with checkpoints
        from the block labelled `label` on (what comes before it in source order is skipped). Each
        label's kernel is compiled once, as a kernel of its own."""
        table = self.checkpoint_table
        if table is None:
            raise QdArgumentError(f"{self.fn.__qualname__}.resume(): the kernel has no checkpoints (decorate it "
                                  "with @qd.kernel(graph=True, checkpoints=True))", caller_loc())
        if isinstance(from_checkpoint, bool) or not isinstance(from_checkpoint, int):
            raise QdArgumentError(f"from_checkpoint= must be a checkpoint label (an int or an IntEnum member), got "
                                  f"{show(from_checkpoint)}", caller_loc())
        k = table.resumed.get(from_checkpoint)
        if k is None:
            k = table.resumed[from_checkpoint] = Kernel(self.fn, number=self.number)
            k.graph, k.checkpoint_table, k.resume_from = True, table, from_checkpoint
        return k(*args, **kwargs)

    def drop_dispatcher(self) -> None:
        """Forget the generated dispatcher and its table (which holds variants and the frozen
        arguments it keys by identity); the next call makes them again."""
        if self._table is not None:
            self._table.clear()
        self._fast = self._table = self._tokens = None

    def _reset(self) -> None:
        """Forget variants compiled under an earlier `qd.init` (under the compile lock: several
        threads may notice the new generation at once, and only the first one resets)."""
        with _variants.compile_lock():
            gen = _config._config.generation
            if self._gen == gen:
                return
            self._gen = gen
            self._specs = None  # `int` / `float` annotations follow the new default_ip / default_fp
            self.drop_dispatcher()
            self.variants = {}
            self.last = None

    def bind(self, args, kwargs) -> dict:
        try:
            b = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            loc = self.def_loc()
            try:  # point at the first missing parameter when that is the problem
                given = self.signature.bind_partial(*args, **kwargs).arguments
                missing = [p.name for p in self.signature.parameters.values()
                           if p.name not in given and p.default is p.empty
                           and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
                if missing:
                    loc = self.param_loc(missing[0])
            except TypeError:
                pass
            raise signature_error(f"kernel {self.fn.__qualname__}", e, loc) from None
        b.apply_defaults()
        return dict(b.arguments)

    def bind_checked(self, args, kwargs) -> dict:
        """`bind`, then every dataclass argument checked against its annotated class."""
        bound = self.bind(args, kwargs)
        for name, spec in self.specs:
            if isinstance(spec, StructSpec):
                _check_struct_arg(bound[name], spec, name, self)
        return bound

    def _slow_call(self, args, kwargs):
        """First call of a specialisation (or a call the fast path could not handle). Runs
        under the compile lock, which also guards the lazily computed signature facts, but
        launches after releasing it."""
        with _variants.compile_lock():
            bound = self.bind_checked(args, kwargs)
            load_pipeline().learn_computed_reads()
            reads = reads_generation()
            key = spec_key(self, bound)
            if key not in self.variants:
                _impl.get_runtime().materialize()  # as quadrants' does before it makes a kernel variant
            variant, source = get_variant(self, key, bound)
            if reads != reads_generation():  # the compile read values objects compute: keys hold them now
                key = self._rekey(key, spec_key(self, bound), variant)
            if not self.key_paths:
                if typed_by_annotation(key):
                    self._fast = variant.launch
            else:
                if self._fast is None:
                    self._fast = self._make_dispatcher()
                self._enter(key, variant, args, kwargs)
        result = variant.launch(*args, **kwargs)
        self.last = LaunchInfo(key, variant.kept, variant.pruned, source, variant.inst_id)
        return result

    def _rekey(self, old, new, variant):
        """Move a variant compiled under `old` to `new`, the key its arguments have now (no
        later launch makes `old` again)."""
        if new != old and self.variants.get(old) is variant:
            del self.variants[old]
            self.variants[new] = variant
        return new

    def _make_dispatcher(self):
        """Generated code that maps the key-relevant arguments straight to a variant, through a
        table of its own keyed by one token per parameter (`arg_tokens`: a frozen struct
        argument by identity). Its internal names live in a prefix no parameter can take
        (`runtime.hygiene`)."""
        table = DispatchTable(self)
        nm = Namer(self.signature.parameters)
        plist, fwd = param_list(self.signature, nm.bind("defaults", self.defaults))
        for name, value in {"table": table.variants, "slow": lambda *a, **k: self._slow_call(a, k)}.items():
            nm.bind(name, value)
        for b in ("KeyError", "TypeError", "AttributeError"):
            nm.builtin(b)
        tokens = []
        for n, (param, token) in enumerate(table.tokens):
            try:
                checked_path(param, self.signature.parameters, f"dispatcher of kernel {self.fn.__qualname__}")
            except QdInternalError as e:
                raise QdInternalError(e.message, self.def_loc()) from None
            nm.bind(f"tok{n}", token)
            tokens.append(f"@tok{n}({param})")
        key = f"({', '.join(tokens)},)"
        src = internal_names("\n".join([
            f"def @dispatch({plist}):",
            "  try:",
            f"    @v = @table[{key}]",
            "  except (@KeyError, @TypeError, @AttributeError):",
            f"    return @slow({fwd})",
            f"  return @v.launch({fwd})",
            f"def @tokens({plist}):",
            f"  return {key}",
        ]), nm.prefix)
        ns = dict(nm.ns)
        exec(compile(src, f"<qd dispatch {self.fn.__qualname__}>", "exec"), ns)
        dispatch = ns[nm("dispatch")]
        dispatch.__qd_source__ = src
        self._table, self._tokens = table, ns[nm("tokens")]
        return dispatch

    def _enter(self, key: tuple, variant, args, kwargs) -> None:
        """Enter a launch keyed by `spec_key` in the dispatcher's table under its tokens. A key
        with a layout or numpy-dtype part (of arrays the tokens do not look at) is left out: such
        launches always take `spec_key`."""
        if self._tokens is None or any(part[:1] in (("layouts",), ("dtypes",)) for part in key[-2:]):
            return
        try:
            self._table.variants[self._tokens(*args, **kwargs)] = variant
        except (KeyError, TypeError, AttributeError):
            pass


class BoundKernel(functools.partial):
    """A kernel method bound to its object: calling it passes the object as `self` (a C-level
    partial, so a method launch costs what a plain launch does)."""

    def __repr__(self) -> str:
        return f"<bound qd.kernel {self.func.fn.__qualname__} of {type(self.args[0]).__qualname__}>"

    def resume(self, *args, from_checkpoint, **kwargs):
        """`Kernel.resume` with the object as `self`."""
        return self.func.resume(self.args[0], *args, from_checkpoint=from_checkpoint, **kwargs)


def as_kernel(k) -> Kernel | None:
    """The kernel `k` is (a kernel method bound to an object is its kernel), else None."""
    if isinstance(k, BoundKernel):
        k = k.func
    return k if isinstance(k, Kernel) else None


def _tuple_result_items(ret) -> tuple | None:
    """The item types of a declared tuple result holding vectors or structs, else None."""
    items = ret if isinstance(ret, tuple) else typing.get_args(ret) if typing.get_origin(ret) is tuple else None
    if items is None or not any(isinstance(a, (StructType, VectorType, MatrixType)) for a in items):
        return None
    return tuple(items)


def _regroup(flat, items: tuple) -> tuple:
    """A kernel's flat result components as the declared tuple: numbers, vectors, structs."""
    out, k = [], 0
    for a in items:
        if isinstance(a, StructType):
            n = len(a.flat_dtypes())
            out.append(a.from_flat(flat[k:k + n]))
        elif isinstance(a, (VectorType, MatrixType)):
            n = int(np.prod(a.shape))
            out.append(a(*flat[k:k + n]))
        else:
            n = 1
            out.append(flat[k])
        k += n
    return tuple(out)


def load_pipeline():
    """The launch side of the pipeline (`qd.compile.pipeline`), imported on the first launch: `import qd`
    stays cheap for a script that only defines kernels."""
    from ..compile import pipeline  # lazy: the disk cache, the targets' host side, the launcher

    return pipeline


def load_compiler():
    """The compile side (`qd.compile.compiler`), for `qd.ptx` and `qd.explain`; a launch reaches it
    through the pipeline, and only for a variant that is not cached."""
    return load_pipeline().load_compiler()


def get_variant(kernel, key, bound: dict):
    """(variant, source) for a specialisation key, loading or compiling it on its first launch."""
    return load_pipeline().get_variant(kernel, key, bound)


def ptx(kernel, *args, sm: str = "sm_90", **kwargs) -> str:
    """The PTX text of `kernel`'s specialisation for these arguments, for CUDA `sm` (no GPU
    or driver needed)."""
    if isinstance(kernel, BoundKernel):  # a kernel method: its object is the first argument
        args = (*kernel.args, *args)
        kernel = kernel.func
    return load_compiler().ptx(kernel, *args, sm=sm, **kwargs)


def _check_struct_arg(v, spec: StructSpec, path: str, kernel) -> None:
    """A dataclass parameter takes an instance of its dataclass (members are read by name and
    the class is part of the compiled variant), nested members likewise."""
    values = {path: v}
    for p, s in walk_specs([(path, spec)]):
        if not isinstance(s, StructSpec):
            continue
        m = values[p]
        if not isinstance(m, s.cls):
            st = getattr(s, "stype", None)  # a struct type's (signature.RecSpec)
            what = f"a {st.name} struct" if st is not None else f"a {s.cls.__qualname__} (the annotated dataclass)"
            raise QdArgumentError(f"argument {p!r} must be {what}, got {type(m).__name__}", kernel.param_loc(p))
        values.update((f"{p}.{name}", getattr(m, name, None)) for name, ms in s.members if isinstance(ms, StructSpec))


KERNEL_OPTIONS = ("fastcache", "pure", "graph", "checkpoints", "gpu_graph")


def kernel(fn=None, *, fastcache: bool = False, pure: bool | None = None, graph: bool = False,
           checkpoints: bool = False, gpu_graph: bool = False, **unknown):
    """Decorator: `@qd.kernel` or `@qd.kernel(fastcache=True)`. quadrants' deprecated
    `pure=True` means `fastcache=True` (and warns, as there); Genesis' `gpu_graph=True` means
    `graph=True`. Any other keyword is a TypeError, as in quadrants (a misspelt option would
    otherwise do nothing)."""
    unexpected_keywords("@qd.kernel", unknown, KERNEL_OPTIONS)
    _options = {"graph": graph or gpu_graph, "checkpoints": checkpoints}
    if pure is not None:
        warn_at("@qd.kernel parameter `pure` is deprecated (as in quadrants): write fastcache=True", caller_loc())
        fastcache = fastcache or bool(pure)
    if fn is None:
        def wrap(f):
            check_decorated(f, "kernel")
            return _with_graph(Kernel(f, fastcache=fastcache), _options)
        return wrap
    check_decorated(fn, "kernel")
    return _with_graph(Kernel(fn, fastcache=fastcache), _options)


def _with_graph(k: Kernel, options: dict) -> Kernel:
    """Record `graph=True` (or Genesis' `gpu_graph=True`): streams refuse such a kernel, as in quadrants."""
    if options.get("graph"):
        k.graph = True
    if options.get("checkpoints"):  # launches return a qd.GraphStatus; labels are this process's objects
        k.checkpoint_table = CheckpointTable()
        k.fastcache = False
    return k


def real_func(fn):
    """quadrants' `@qd.real_func` (a func compiled once and called, not inlined). qd compiles
    every `@qd.func` call as a call of an instantiation, so this is `@qd.func` that may also call
    itself (recursion, which a plain func may not). Its signature is checked as quadrants checks it: every parameter
    annotated, and a return annotation when it returns a value."""
    check_decorated(fn, "real_func")
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.annotation is p.empty:
            raise QdSyntaxError(f"parameter {p.name!r} of real function {fn.__qualname__} must be type annotated",
                                caller_loc())
    if sig.return_annotation is sig.empty and any(
            isinstance(n, ast.Return) and n.value is not None for n in ast.walk(get_source(fn).tree)):
        raise QdCompileError(f"real function {fn.__qualname__} returns a value, so its return value must be "
                             "annotated", caller_loc())
    f = func(fn)
    f.is_real = True  # it may call itself (see `InstRegistry.instantiating`)
    return f


def pure(fn):
    """quadrants' deprecated `@qd.pure`: the kernel may use the disk cache, as
    `@qd.kernel(fastcache=True)` says (which is what to write instead). Above or below
    `@qd.kernel`."""
    warn_at("@qd.pure is deprecated (as in quadrants): write @qd.kernel(fastcache=True)", caller_loc())
    if isinstance(fn, Kernel):
        fn.fastcache = True
    else:
        fn._qd_pure = True
    return fn


def launch_info(k: Kernel) -> LaunchInfo | None:
    """Specialisation, kept/pruned leaf paths and cache source of `k`'s last launch."""
    kernel = as_kernel(k)
    if kernel is None:
        raise QdArgumentError(f"qd.launch_info expects a @qd.kernel, got {type(k).__name__}", caller_loc())
    return kernel.last


