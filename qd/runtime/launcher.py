"""The launch path: a Python function generated per kernel specialisation.

It reads exactly the kept leaves from the arguments (a pruned field is never touched),
writes them into a preallocated packed argument buffer and makes one ctypes call. Keeping
this straight-line code, instead of a generic loop over parameter descriptions, is what
brings a launch down to a few microseconds.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref
from collections.abc import Callable

import numpy as np

from ..core.abi import ARG_HEADER, STATUS_SLOT, WARN_SLOT, KernelModule, assert_slot, return_slot
from ..core.dtypes import ALL as ALL_DTYPES
from ..core.dtypes import from_numpy
from ..core.entry import EntryPoint
from ..core.errors import QdInternalError
from ..frontend.signature import ScalarSpec, VecSpec, walk_specs
from ..lang.field import Field, frozen_along
from ..lang.matrix import Matrix, Vector
from ..lang.ndarray import Ndarray
from .args import alias_checked, array_arg, components, int_range, overlaps, slow_launch
from .hygiene import Namer, checked_int, checked_path, internal_names, param_list
from .kernel_view import KernelView, LaunchInfo
from .status import check_error, format_assert, overflow_report


def make_launcher(kernel: KernelView, km: KernelModule, entry: EntryPoint, written: set[str],
                  on_alias: Callable[..., object] | None, info: LaunchInfo,
                  array_type: type = Ndarray, fields: dict | None = None,
                  compile_code: Callable[[str, str], object] | None = None) -> Callable[..., object]:
    """The launch function of one compiled variant, run through the target's `entry`:
    straight-line code for the fast case, and the checked slow path (`slow_launch`) for
    anything the fast path does not take. `array_type` is the `qd.ndarray` class whose
    pointer the target's code can use directly (the fast path takes only it: a host array
    for the CPU, a `DeviceNdarray` for CUDA); other arrays go through `array_arg`. `fields`
    maps each field leaf's path to the function that fetches the field at launch (see
    `frontend/fields.py`); generated code calls it by a bound name, never spelling the path.
    `compile_code(source, filename)` compiles the launcher's text (by default `compile`; the
    disk cache passes one that keeps the code object with its entries). `written`: the array
    leaves the code stores to; `on_alias` launches the variant compiled for aliased arrays,
    which a launch whose written arrays overlap others calls instead; None for that variant
    itself, which checks no aliasing."""
    fields = fields or {}
    try:
        _check_module(kernel, km, fields)
    except QdInternalError as e:
        raise QdInternalError(e.message, kernel.def_loc()) from None
    n = km.buffer_size
    buf = (ctypes.c_int64 * n)()
    fbuf = (ctypes.c_double * n).from_buffer(buf)
    status = (ctypes.c_int64 * km.status_size)()
    fstatus = (ctypes.c_double * len(status)).from_buffer(status)
    ustatus = (ctypes.c_uint64 * len(status)).from_buffer(status)
    buf[STATUS_SLOT] = ctypes.addressof(status)
    run = entry.run
    sig = kernel.signature
    nm = Namer(sig.parameters)
    plist, fwd = param_list(sig, nm.bind("defaults", kernel.defaults))
    lock = threading.Lock()
    loc_of = kernel.param_loc  # where an argument error points
    device_ok = array_type.on_device  # the machine's code addresses device memory: host arrays are copied
    returns = [(fstatus if t.is_float else ustatus if not t.is_signed else status, return_slot(i), t.is_bool)
               for i, t in enumerate(km.returns)]

    def fail() -> None:
        _raise_check(km, status, entry.raise_pending)

    def warn() -> None:
        _report_overflow(km, status)

    vec_shapes = {path: spec.shape for path, spec in walk_specs(kernel.specs) if isinstance(spec, VecSpec)}
    # scalar parameters the code does not take are still checked, as quadrants checks every
    # argument: a pruned parameter given a string or an out-of-range integer is an error too
    kept_paths = {s.path for s in km.slots}
    pruned_scalars = [(name, spec.dtype) for name, spec in kernel.specs
                      if isinstance(spec, ScalarSpec) and name not in kept_paths]

    def slow(*args, **kwargs):
        return slow_launch(kernel.bind, loc_of, km, written, args, kwargs, (buf, fbuf), on_alias,
                           lambda: _finish_run(run, buf, kernel, info, status, fail, returns, km.ret_shape,
                                               warn if km.warns else None, km.returns), device_ok,
                           vec_shapes, fields, pruned_scalars)

    for name, value in {"i": buf, "f": fbuf, "st": status, "sf": fstatus, "su": ustatus, "run": run,
                        "argp": ctypes.addressof(buf), "Nd": array_type, "npa": np.ndarray,
                        "Fd": array_type if device_ok else Field,  # fields live in host memory
                        "arr": lambda v, d, nd, path, w, es=(), perm=(), off=(): array_arg(v, d, nd, path, loc_of, w,
                                                                                            device_ok, es, perm, off),
                        "nptr": lambda v, path, w: _numpy_pointer(v, path, w, loc_of),
                        "overlaps": overlaps, "aliased": on_alias, "slow": slow, "fail": fail,
                        "comps": lambda v, shape, path: components(v, shape, path, loc_of),
                        "mat": lambda values, shape: _as_matrix(values, shape, km.returns[0]),
                        "keep": (buf, fbuf, status, fstatus, ustatus), "k": kernel, "info": info,
                        "lock": lock, "canon": (), "warn": warn}.items():
        nm.bind(name, value)
    for b in ("type", "len", "bool", "id", "TypeError", "AttributeError", "OverflowError", "ValueError"):
        nm.builtin(b)
    body = ["  @nd = True"]
    arrays = []
    prefixes: dict[str, str] = {}
    for n, (name, dtype) in enumerate(pruned_scalars):
        if dtype.is_float:
            nm.bind(f"ok{n}", _FLOAT_ARGS)
            body += [f"  if @type({_accessor(name, prefixes, body)}) not in @ok{n}:", "    raise @TypeError"]
        else:
            lo, hi = int_range(dtype)
            nm.bind(f"ok{n}", _INT_ARGS)
            body += [f"  @t = {_accessor(name, prefixes, body)}",
                     f"  if @type(@t) not in @ok{n} or not {lo} <= @t < {hi + 1}:", "    raise @TypeError"]
    def array_slot(s, out: list[str], acc: str, fast_flag: str = "") -> None:
        """The lines reading array leaf `s` (its pointer and extents into the buffer); a leaf
        that takes anything but the direct path clears `fast_flag` when one is given."""
        k = s.slot
        nm.bind(f"dt{k}", s.dtype)
        nm.bind(f"np{k}", s.dtype.np)
        w = s.path in written
        es = tuple(s.element_shape)
        # an array of vectors: its last dimensions must be the element's, which the code was
        # compiled for (the numpy array's trailing extents, the qd.ndarray's element shape)
        nd_elem = f" and @v.element_shape == {es!r}" if es else ""
        np_elem = f" and @v.shape[{s.ndim - len(es)}:] == {es!r}" if es else ""
        # the code indexes the buffer in one layout: another layout (numpy arrays are
        # canonical) takes the checked path, which sends it to its own variant
        nd_elem += f" and @v._perm == {tuple(s.perm)!r}" if s.perm else " and @v._perm is @canon"
        if s.perm:
            np_elem += " and False"
        nm.bind(f"path{k}", s.path)  # what messages call the leaf: bound, never pasted into the source
        name = f"@path{k}"
        # a field's offset shifts the code's indices: only the offset compiled in may pass
        if device_ok:  # device arrays: fields take the checked path
            arrays_ok = "False" if s.offset else "@type(@v) is @Nd"
        elif s.offset:
            arrays_ok = f"(@type(@v) is @Fd and @v.offset == {tuple(s.offset)!r})"
        else:
            arrays_ok = "(@type(@v) is @Nd or (@type(@v) is @Fd and not @v.offset))"
        slow_mark = f"; {fast_flag} = False" if fast_flag else ""
        out += [f"  @v = {acc}",
                f"  if {arrays_ok} and @v._dtype is @dt{k} and @v._ndim == {s.ndim}{nd_elem}:",
                f"    @p{k} = @v._ptr; @e{k} = @v._end; @shp = @v._dims",
                f"  elif @type(@v) is @npa and @v.dtype is @np{k} and @v.ndim == {s.ndim} and @v.size{np_elem}:",
                f"    @p{k} = @nptr(@v, {name}, {w}); @e{k} = @p{k} + @v.nbytes; @shp = @v.shape; @nd = False"
                + slow_mark,
                "  else:",
                f"    @p{k}, @e{k}, @shp = @arr(@v, @dt{k}, {s.ndim}, {name}, {w}, {es!r}, {tuple(s.perm)!r}, "
                f"{tuple(s.offset)!r}); "
                "@nd = False" + slow_mark,
                f"  @i[{k}] = @p{k}"]
        out += [f"  @i[{s.extent_slot(d)}] = @shp[{d}]" for d in range(s.ndim)]

    memo_groups = _remembered_structs(km, fields, sig.parameters)
    slots = list(km.slots)
    n_slot = 0
    while n_slot < len(slots):
        s = slots[n_slot]
        group = memo_groups.get(n_slot)
        if group is not None:  # a struct parameter whose arrays a frozen argument fixes (`_remembered_structs`)
            end, lo, hi = group
            members = slots[n_slot:end]
            g = n_slot
            root = s.path.split(".")[0]
            memo: dict = {}
            nm.bind(f"memo{g}", memo)
            chains = [m.path.split(".")[1:] for m in members]
            nm.bind(f"frozen{g}", lambda v, chains=chains: frozen_along(v, chains))
            nm.bind(f"keep{g}", _remember(memo))
            ps = ", ".join(f"@p{m.slot}" for m in members)
            es = ", ".join(f"@e{m.slot}" for m in members)
            inner: list[str] = ["  @fast = True"]
            for m in members:
                array_slot(m, inner, _accessor(m.path, prefixes, inner, vec_shapes), "@fast")
                arrays.append(m)
            inner += [f"  if @fast and @frozen{g}(@m{g}):", f"    @keep{g}(@m{g}, @i[{lo}:{hi}], ({ps},), ({es},))"]
            body += [f"  @m{g} = {root}",
                     f"  @h{g} = @memo{g}.get(@id(@m{g}))",
                     f"  if @h{g} is not None and @h{g}[0] is @m{g}:",
                     f"    @i[{lo}:{hi}] = @h{g}[1]",
                     f"    {ps}, = @h{g}[2]",
                     f"    {es}, = @h{g}[3]",
                     "  else:"]
            body += ["  " + line for line in inner]
            n_slot = end
            continue
        n_slot += 1
        k = s.slot
        if s.path in fields:
            nm.bind(f"fld{k}", fields[s.path])
            acc = f"@fld{k}()"
        else:
            acc = _accessor(s.path, prefixes, body, vec_shapes)
        if s.is_array:
            array_slot(s, body, acc)
            arrays.append(s)
        elif s.dtype.is_float:
            body.append(f"  @f[{k}] = {acc}")
        else:
            # ctypes would silently wrap an out-of-range int; one chained comparison sends it
            # to the slow path, which names the parameter. The bounds are powers of two, so a
            # comparison that numpy 1.x does in float64 (a uint64 scalar against an int) can
            # only send a value near a bound to the exact slow path, never let one through.
            lo, hi = int_range(s.dtype)
            body += [f"  @t = {acc}", f"  if not {lo} <= @t < {hi + 1}:", "    raise @OverflowError",
                     f"  @i[{k}] = @t"]
    if on_alias is not None and alias_checked(km, written):
        ps = [f"@p{a.slot}" for a in arrays]
        spans = ", ".join(f"(@p{a.slot}, @e{a.slot})" for a in arrays)
        if len(arrays) == 2:
            a, b = arrays
            cond = f"(@p{a.slot} < @e{b.slot} and @p{b.slot} < @e{a.slot}) or @p{a.slot} == @p{b.slot}"
        else:
            cond = f"(@len({{{', '.join(ps)}}}) < {len(ps)}) if @nd else @overlaps(({spans},))"
        body += [f"  if {cond}:", f"    return @aliased({fwd})"]
    # The argument buffer belongs to this variant; the lock keeps a launch from another Python
    # thread from rewriting it while native code reads it.
    lines = [f"def @launch({plist}):", " with @lock:", "  try:"]
    lines += ["  " + b for b in body]
    lines += ["  except (@TypeError, @AttributeError, @OverflowError, @ValueError):", f"    return @slow({fwd})",
              "  @run(@argp)", "  @k.last = @info"]
    if km.warns:  # a debug build with overflow checks: report the first overflow, then go on
        lines += [f"  if @st[{WARN_SLOT}]:", "    @warn()"]
    lines += ["  if @st[0]:", "    @fail()"]
    rets = []
    for i, t in enumerate(km.returns):
        slot = return_slot(i)
        rets.append(f"@sf[{slot}]" if t.is_float else f"@bool(@st[{slot}])" if t.is_bool
                    else f"@st[{slot}]" if t.is_signed else f"@su[{slot}]")
    if km.ret_shape is not None:
        lines.append(f"  return @mat(({', '.join(rets)},), {tuple(km.ret_shape)!r})")
    elif len(rets) == 1:
        lines.append(f"  return {rets[0]}")
    elif rets:
        lines.append(f"  return ({', '.join(rets)},)")
    src = internal_names("\n".join(lines), nm.prefix)
    ns = dict(nm.ns)
    filename = f"<qd launcher {kernel.fn.__qualname__}>"
    code = compile(src, filename, "exec") if compile_code is None else compile_code(src, filename)
    exec(code, ns)
    launch = ns[nm("launch")]
    launch.__qd_source__ = src
    launch.__qd_lock__ = nm("lock")
    _live.add(launch)
    return launch


# the argument types a launch takes for a scalar parameter without the checked path's conversion
_INT_ARGS = frozenset({int, bool, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                       np.uint64})
_FLOAT_ARGS = _INT_ARGS | {float, np.float16, np.float32, np.float64}

_live: weakref.WeakSet = weakref.WeakSet()  # every launcher, so a forked child can renew its lock


def _renew_locks_in_child() -> None:
    """A thread of the parent may have been inside a launch at `fork()`: its lock stays held in
    the child, where that thread does not exist. The child's launches rewrite the whole
    argument buffer, so a fresh lock is all it needs."""
    for launch in list(_live):
        launch.__globals__[launch.__qd_lock__] = threading.Lock()


os.register_at_fork(after_in_child=_renew_locks_in_child)


def _finish_run(run, buf, kernel, info, status, fail, returns, ret_shape=None, warn=None, types=()):
    """Run the kernel on the filled buffer and read its results, like the generated code."""
    run(ctypes.addressof(buf))
    kernel.last = info
    if warn is not None and status[WARN_SLOT]:
        warn()
    if status[0]:
        fail()
    vals = [bool(view[slot]) if is_bool else view[slot] for view, slot, is_bool in returns]
    if ret_shape is not None:
        return _as_matrix(tuple(vals), ret_shape, types[0])
    if len(vals) == 1:
        return vals[0]
    return tuple(vals) if vals else None


_DTYPES = frozenset(ALL_DTYPES)  # a hash lookup: `in` on the tuple compared a dataclass per dtype before


def _check_module(kernel, km: KernelModule, fields: dict) -> None:
    """Everything of `km` that generated code spells out must be plain: identifiers for paths,
    non-negative ints inside the buffer for slots. `km` may come from a disk-cache entry."""
    what = f"launcher of kernel {kernel.fn.__qualname__}"
    n = max(checked_int(km.n_slots, f"{what}: slot count"), ARG_HEADER)
    for t in km.returns:
        if t not in _DTYPES:
            raise QdInternalError(f"{what}: return type {t!r} is not a qd dtype")
    if km.ret_shape is not None:
        count = 1
        for d in km.ret_shape:
            count *= checked_int(d, f"{what}: result shape", 1)
        if len(km.ret_shape) not in (1, 2) or count != len(km.returns):
            raise QdInternalError(f"{what}: result shape {km.ret_shape!r} does not match its return types")
    vectors = {path for path, spec in walk_specs(kernel.specs) if isinstance(spec, VecSpec)}
    params = kernel.signature.parameters
    for s in km.slots:
        path = s.path
        if path in fields:  # fetched by a bound function, never spelled in the source
            if not s.is_array:
                raise QdInternalError(f"{what}: field leaf {path!r} is not an array")
        else:
            checked_path(path, params, what)
            if path.endswith("]") and path[:path.rindex("[")] not in vectors:
                raise QdInternalError(f"{what}: leaf path {path!r} is a component of no vector parameter")
        if s.dtype not in _DTYPES:
            raise QdInternalError(f"{what}: leaf {path!r} has no qd dtype")
        nd = s.ndim if s.is_array else 0
        slot = s.slot
        if type(nd) is not int or nd < 0:  # the messages are formatted only for a bad value
            checked_int(nd, f"{what}: dimensions of {path!r}")
        if type(slot) is not int or slot < ARG_HEADER:
            checked_int(slot, f"{what}: slot of {path!r}", ARG_HEADER)
        if slot + nd >= n:
            raise QdInternalError(f"{what}: slot {slot} of {path!r} lies outside the argument buffer")


def _as_matrix(values: tuple, shape: tuple, dtype) -> Matrix:
    """A kernel's vector or matrix result, as quadrants returns it: of the declared component
    type (Python numbers alone would make an f64 result f32, the default float type)."""
    if len(shape) == 1:
        return Vector(list(values), dt=dtype)
    return Matrix([list(values[i * shape[1]:(i + 1) * shape[1]]) for i in range(shape[0])], dt=dtype)


MAX_REMEMBERED = 64  # frozen arguments a launcher remembers per struct parameter


def _remembered_structs(km: KernelModule, fields: dict, params) -> dict[int, tuple[int, int, int]]:
    """The struct parameters whose leaves a launch may read once per argument object: {index
    in km.slots of the first leaf: (index past the last, first buffer slot, slot past the
    last)}. Such a parameter's leaves are all arrays, consecutive in the slots and filling a
    contiguous run of the buffer (pointers and extents), so what a frozen argument gives them
    (`field.frozen_along`) is copied in with one slice."""
    out = {}
    slots = list(km.slots)
    roots = [s.path.split(".")[0] if "." in s.path and s.path not in fields else None for s in slots]
    i = 0
    while i < len(slots):
        root, j = roots[i], i
        while j < len(slots) and roots[j] == root:
            j += 1
        group = slots[i:j]
        cells = sorted(c for s in group if s.is_array for c in range(s.slot, s.slot + 1 + s.ndim))
        if root is not None and root in params and root not in roots[j:] and root not in roots[:i] \
                and all(s.is_array for s in group) and cells == list(range(cells[0], cells[-1] + 1)):
            out[i] = (j, cells[0], cells[-1] + 1)
        i = j
    return out


def _remember(memo: dict) -> Callable[..., None]:
    def keep(obj, cells: list, pointers: tuple, ends: tuple) -> None:
        if len(memo) >= MAX_REMEMBERED:
            memo.clear()
        memo[id(obj)] = (obj, tuple(cells), pointers, ends)  # holds obj: its id is not reused meanwhile
    return keep


def _accessor(path: str, prefixes: dict[str, str], body: list[str], vec_shapes: dict | None = None) -> str:
    """Python expression for a leaf path; each shared dataclass prefix is read once, and each
    vector argument converted to its components once (`v[2]` is component 2 of `v`)."""
    if path.endswith("]"):
        base, _, k = path[:-1].rpartition("[")
        local = prefixes.get(base + "[]")
        if local is None:
            local = prefixes[base + "[]"] = f"@o{len(prefixes)}"
            shape = (vec_shapes or {}).get(base)
            body.append(f"  {local} = @comps({_accessor(base, prefixes, body)}, {shape!r}, {base!r})")
        return f"{local}[{int(k)}]"
    parts = path.split(".")
    expr = parts[0]
    for i in range(1, len(parts) - 1):
        prefix = ".".join(parts[: i + 1])
        local = prefixes.get(prefix)
        if local is None:
            local = prefixes[prefix] = f"@o{len(prefixes)}"
            body.append(f"  {local} = {expr}.{parts[i]}")
        expr = local
    return expr if len(parts) == 1 else f"{expr}.{parts[-1]}"


def _numpy_pointer(v, path: str, writable: bool, loc_of) -> int:
    """Data pointer of a numpy array: `c_char.from_buffer` costs a quarter of `.ctypes.data` and
    also proves the buffer is C-contiguous and writable; anything else takes the checked path."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(v))
    except (TypeError, ValueError, BufferError):
        return array_arg(v, from_numpy(v.dtype) or v.dtype, v.ndim, path, loc_of, writable)[0]


def _report_overflow(km: KernelModule, status) -> None:
    """Print the overflow record of a debug launch (to stdout, as quadrants' device printf does)
    and clear it."""
    w = WARN_SLOT
    kind, site, value = status[w], status[w + 1], status[w + 2]
    status[w] = status[w + 1] = status[w + 2] = 0
    loc = km.check_locs[site] if 0 <= site < len(km.check_locs) else None
    sys.stdout.write(overflow_report(kind, value, loc))
    sys.stdout.flush()


def _raise_check(km: KernelModule, status, raise_pending: Callable[[object], None]) -> None:
    raise_pending(status)  # e.g. a parallel loop of this launch was interrupted (Ctrl-C): re-raise that
    kind, site, value = status[0], status[1], status[2]
    status[0] = status[1] = status[2] = 0
    loc = km.check_locs[site] if 0 <= site < len(km.check_locs) else None
    message = km.check_messages.get(site)
    types = km.check_formats.get(site)
    if types and message is not None:  # an assert whose message formats run-time values
        first = assert_slot(km)
        message = format_assert(message, types, [status[first + k] for k in range(len(types))])
    raise check_error(kind, value, loc, message)
