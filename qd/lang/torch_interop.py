"""torch interop: `to_torch` / `from_torch` of qd arrays and fields, torch tensors as arguments.

torch is an optional dependency, so nothing here imports it at module level and `import qd`
never loads it. A torch tensor can only exist once the program has imported torch, so telling a
tensor from other arguments is a look into `sys.modules` (`is_tensor`), never an import: a
launch with numpy arrays or qd arrays pays nothing for this module. `to_torch` uses the torch
module the program has imported (`torch_module`); qd never imports torch.

Zero copy: a qd array's memory is a host numpy buffer (`Ndarray._arr`, the canonical view, with
permuted strides for a `layout=`), so `to_numpy(copy=False)` is a view of it and
`to_torch(copy=False)` is `torch.from_numpy` of that view: writes through either are the
array's own memory, which the next launch reads, and kernel writes show in them. qd gives such
a view exactly where quadrants 1.3.3 gives one (its DLPack export): for the dtypes f32, f64,
i32, i64 and u1, and not for a 0-d scalar field, a vector field of `layout=qd.Layout.SOA`, or a
field that shares its placement cell with others (a member of a struct field of several
members, fields placed by one `SNode`); there `copy=False` is an error and `copy=None` copies,
so a program behaves as it does on quadrants, views and copies alike.

A torch tensor given for an ndarray parameter is passed by its CPU memory (`tensor_view`: a
zero-copy numpy view, so the kernel's writes land in the tensor) and is then checked and keyed
exactly as a numpy array is; as in quadrants a non-contiguous tensor is refused rather than
copied.

The user's tensors stay as they were: qd reads a tensor's memory through its address
(`memory_of`), never through `Tensor.numpy()`, which marks the tensor's storage as one that can
never be resized again (a later `t.resize_()` raises); and `to_torch`'s copies are tensors of
torch's own memory, where `torch.from_numpy` of a copy would share numpy's, which torch cannot
resize either.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdArgumentError, QdConfigError, QdRuntimeError, QdValueError, SourceLoc, caller_loc

# the dtypes quadrants exports without a copy (its DLPack export); the others are copied
_ZERO_COPY = frozenset({"f32", "f64", "i32", "i64", "u1"})

# qd dtype name -> torch dtype name (qd has no f16)
_TORCH_NAMES = {"f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "u1": "bool"}
_FROM_TORCH: dict = {}  # torch dtype -> qd dtype, filled the first time a tensor is seen


def is_tensor(v) -> bool:
    """Whether `v` is a torch tensor, without importing torch (no tensor exists before it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


# torch's device type of tensors in host memory (a torch name, not one of qd's targets): the memory
# a numpy view shares
_TORCH_HOST_MEMORY = "cpu"


def torch_module(what: str) -> ModuleType:
    """The torch module the program has imported, for an operation that returns torch objects
    (`what` names it). qd never imports torch itself: importing it costs seconds, and a
    program that asks for tensors imports torch to use them."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise QdConfigError(f"{what} returns torch tensors: import torch first (qd never imports it itself)",
                            caller_loc())
    return torch


def qd_dtype_of(torch_dtype) -> _dt.DType | None:
    """The qd dtype of a torch dtype (`torch.float32` -> `qd.f32`), None when qd has none."""
    if not _FROM_TORCH:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        _FROM_TORCH.update({getattr(torch, t): getattr(_dt, q) for q, t in _TORCH_NAMES.items()})
    return _FROM_TORCH.get(torch_dtype)


def describe(v) -> str:
    """A torch tensor as messages name it."""
    return f"a torch tensor of dtype {v.dtype}, shape {tuple(v.shape)} on device {v.device}"


class _TensorMemory:
    """A tensor's memory as numpy reads it (`__array_interface__`), holding the tensor, so a numpy
    array over it keeps the tensor alive."""

    __slots__ = ("__array_interface__", "tensor")


_NUMPY_TYPES: dict = {}  # torch dtype -> numpy dtype, or None where numpy has none (bfloat16)


def _numpy_dtype(torch_dtype) -> np.dtype | None:
    hit = _NUMPY_TYPES.get(torch_dtype, False)
    if hit is False:
        torch = sys.modules["torch"]
        try:  # the numpy() of an empty tensor of its own: it marks nothing of the user's
            hit = torch.empty(0, dtype=torch_dtype).numpy().dtype
        except (RuntimeError, TypeError):
            hit = None
        _NUMPY_TYPES[torch_dtype] = hit
    return hit


def memory_of(t) -> np.ndarray:
    """A numpy array over CPU tensor `t`'s own memory (its shape, strides and offset), holding
    `t`, without `Tensor.numpy()`: that marks the storage as never to be resized, which a user's
    tensor must not become by passing through qd. A tensor numpy cannot address (a dtype numpy
    lacks, a negated or conjugated view, a sparse layout) is a TypeError."""
    d = _numpy_dtype(t.dtype)
    if d is None:
        raise TypeError(f"numpy has no dtype for torch {t.dtype}")
    if t.is_neg() or t.is_conj() or t.layout is not sys.modules["torch"].strided:
        raise TypeError("a negated, conjugated or sparse tensor has no plain memory to read")
    if t.numel() == 0:
        return np.empty(tuple(t.shape), d)
    m = _TensorMemory()
    m.tensor = t
    m.__array_interface__ = {"data": (t.data_ptr(), False), "shape": tuple(t.shape), "typestr": d.str,
                             "strides": tuple(k * d.itemsize for k in t.stride()), "version": 3}
    return np.asarray(m)


def tensor_view(v, path: str, loc: Callable[[], SourceLoc | None]) -> np.ndarray:
    """The CPU memory of tensor `v`, an argument for parameter `path`, as a numpy array that
    shares it (`memory_of`; kernel writes bypass autograd, as in quadrants). A tensor on another device, of a dtype qd
    has no type for, or not C-contiguous (quadrants refuses it too, where a numpy array would
    be copied) is an argument error at the parameter, whose place `loc()` finds only then (it
    reads the kernel's source, which a kernel served from the disk cache never needs)."""
    if v.device.type != _TORCH_HOST_MEMORY:
        raise QdArgumentError(f"argument {path!r} is {describe(v)}: qd passes torch tensors in CPU memory only; "
                              "move it with .cpu()", loc())
    if qd_dtype_of(v.dtype) is None:
        raise QdArgumentError(f"argument {path!r} is {describe(v)}: torch dtype {v.dtype} is not supported by qd",
                              loc())
    if not v.is_contiguous():
        raise QdValueError(f"argument {path!r} is {describe(v)} that is not contiguous: Non contiguous tensors are "
                           "not supported, please call tensor.contiguous() before passing it into a qd kernel", loc())
    try:
        return memory_of(v)
    except (RuntimeError, TypeError, ValueError) as e:  # a conjugate or negative-bit view, say
        raise QdArgumentError(f"argument {path!r} is {describe(v)} that qd cannot pass: {e}", loc()) from None


def host_copy(v, op: str) -> np.ndarray:
    """The values of tensor `v` as a numpy array on the host, for `op` (`from_torch`) to copy
    into a qd array; anything but a tensor is an argument error."""
    if not is_tensor(v):
        raise QdArgumentError(f"{op} takes a torch.Tensor, got {type(v).__name__}" +
                              (" (use from_numpy for numpy arrays)" if isinstance(v, np.ndarray) else ""),
                              caller_loc())
    try:
        return memory_of(v if v.device.type == _TORCH_HOST_MEMORY else v.detach().cpu())
    except (RuntimeError, TypeError, ValueError) as e:  # bfloat16, complex views, meta tensors
        raise QdValueError(f"{op}: cannot read {describe(v)}: {e}", caller_loc()) from None


def check_copy(copy) -> bool | None:
    """`copy=` of `to_numpy` / `to_torch`: True (a copy), False (a view, else an error) or None
    (a view where there is one, else a copy)."""
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise QdArgumentError(f"copy must be True, False or None, got {copy!r}", caller_loc())
    return None if copy is None else bool(copy)


def zero_copy_refusal(a) -> str | None:
    """Why array or field `a` has no zero-copy view (as in quadrants: see the module docstring),
    or None when it has one."""
    if a.on_device:
        return "zero-copy views of CUDA device arrays are not supported by qd: use copy=True"
    if a._dtype.name not in _ZERO_COPY:
        return f"Zero-copy not available for dtype={a._dtype.name} (only f32, f64, i32, i64 and u1 arrays have one)"
    if not getattr(a, "_is_field", False):
        return None
    if not a.shape and not a.element_shape:
        return "Zero-copy not available for a 0-d scalar field: use copy=True"
    if getattr(a, "_soa", False):
        return "Zero-copy not available for a vector or matrix field of layout=qd.Layout.SOA: use copy=True"
    cell = getattr(a, "_cell", None)
    if cell is not None and sum(int(np.prod(f.element_shape, dtype=np.int64)) for f in cell) != \
            int(np.prod(a.element_shape, dtype=np.int64)):
        return ("Zero-copy not available for a field that shares its placement with other fields (a member of a "
                "struct field, or fields placed together): use copy=True")
    return None


def numpy_view(a, view_of, copy, dtype) -> np.ndarray | None:
    """`to_numpy(copy=False / None)` of `a`: the view `view_of()` when `a` has one (and `dtype`
    is its own or None); None when a copy is to be made instead (copy=None); an error for
    copy=False where there is no view."""
    copy = check_copy(copy)
    if copy:
        return None
    why = zero_copy_refusal(a)
    if why is not None:
        if copy is None:
            return None
        if a.on_device:
            why = "Zero-copy numpy requires a CPU backend (numpy arrays cannot reference GPU memory)"
        raise QdValueError(why, caller_loc())
    view = view_of()
    if dtype is not None:
        want = _dt.as_dtype(dtype)
        try:
            want_np = want.np if want is not None else np.dtype(dtype)
        except TypeError:
            raise QdArgumentError(f"to_numpy: {dtype!r} is not a dtype", caller_loc()) from None
        if want_np != view.dtype:
            if copy is None:
                return None
            raise QdValueError(f"copy=False is incompatible with dtype conversion ({view.dtype} -> {dtype})",
                               caller_loc())
    return view


def to_torch(a, view_of, copy_of, device, copy):
    """`to_torch` of array or field `a`: `torch.from_numpy` of the view `view_of()` (copy=False /
    None, where `a` has one and it is wanted on the CPU), else of the copy `copy_of()`, moved to
    `device` when one is given."""
    copy = check_copy(copy)
    torch = torch_module("to_torch")
    if not copy:
        why = zero_copy_refusal(a)
        if why is None and device is not None and _device(torch, device).type != _TORCH_HOST_MEMORY:
            why = f"copy=False is incompatible with device transfer (data on cpu, requested {device})"
        if why is None:
            return torch.from_numpy(view_of())
        if copy is False:
            raise QdValueError(why, caller_loc())
    t = _owned(torch, view_of() if zero_copy_refusal(a) is None else copy_of())
    if device is None:
        return t
    dev = _device(torch, device)
    try:
        return t.to(dev)
    except (RuntimeError, AssertionError, TypeError, ValueError) as e:  # torch without CUDA, say
        raise QdValueError(f"to_torch: cannot move the tensor to device {device!r}: {e}", caller_loc()) from None


def _owned(torch: ModuleType, values: np.ndarray):
    """A C-contiguous tensor of torch's own memory holding `values`: an ordinary tensor, which
    `resize_` and the rest of torch treat as any other (`torch.from_numpy` would share numpy's
    memory, which torch can never resize)."""
    t = torch.empty(values.shape, dtype=torch.from_numpy(np.empty(0, values.dtype)).dtype)
    memory_of(t)[...] = values
    return t


def _device(torch: ModuleType, device):
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise QdArgumentError(f"to_torch: {device!r} is not a torch device: {e}", caller_loc()) from None


def dlpack(a, view_of):
    """`to_dlpack()` of array or field `a`: a DLPack capsule of its own memory (what
    `torch.utils.dlpack.from_dlpack` takes), shaped as its zero-copy view; refused, as
    quadrants refuses it, where `a` has no such view."""
    why = zero_copy_refusal(a)
    if why is not None:
        raise QdRuntimeError(f"to_dlpack: {why}", caller_loc())
    return view_of().__dlpack__()
