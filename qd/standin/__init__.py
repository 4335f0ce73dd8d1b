"""Standing in for quadrants: run a program or library written for quadrants on qd, unmodified.

    python -m qd.standin script.py [args...]       # like `python -m cProfile script.py`
    python -m qd.standin -m package.module [args...]

    import qd.standin; qd.standin.install()         # from Python, before anything imports quadrants

After `install()`, `import quadrants` gives qd itself (the same module object, so `quadrants.X`
is `qd.X`), and `import quadrants.A.B` / `from quadrants.A.B import name` give qd's module
`qd.A.B`, or the module qd holds at that attribute path. A path qd does not have fails with
`ModuleNotFoundError` naming the qd module it looked for, so a program that probes for an
optional quadrants module takes its fallback, and one that needs it says what is missing.

Nothing is copied or wrapped: a name qd lacks is an `AttributeError` on qd, as after `import qd`.
The mapping is installed ahead of every other importer, so it wins over an installed quadrants;
installing after quadrants itself was imported is refused (the program would hold both).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import qd

__all__ = ["install", "uninstall", "installed"]

_NAME = "quadrants"


def _qd_module(fullname: str) -> types.ModuleType | None:
    """qd's module for `quadrants.A.B`: `qd.A.B` imported, else a module at the attribute path."""
    qd_name = "qd" + fullname[len(_NAME):]
    try:  # by name: which qd module a quadrants path means is known only when the program imports it
        return importlib.import_module(qd_name)
    except ModuleNotFoundError as e:
        if e.name is None or not qd_name.startswith(e.name):
            raise  # a module qd.A.B exists but itself failed to import something else
    obj: object = qd
    for part in qd_name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, types.ModuleType) else None


class _SameModule(importlib.abc.Loader):
    """Loads `quadrants.A.B` as qd's existing module object (not a copy)."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import system set the quadrants-named spec on qd's module: give it back its own
        own = getattr(module, "__qd_spec__", None)
        if own is not None:
            module.__spec__ = own


def _alias_children(fullname: str, module: types.ModuleType) -> None:
    """qd registers a few modules under a plain module's name (`qd.types.primitive_types`); the import
    system looks such a child up only in `sys.modules` (its parent has no `__path__`), so it is entered
    there under the quadrants name too."""
    prefix = module.__name__ if module is qd else "qd" + fullname[len(_NAME):]
    for name, child in list(sys.modules.items()):
        if name.startswith(prefix + ".") and "." not in name[len(prefix) + 1:]:
            sys.modules.setdefault(fullname + name[len(prefix):], child)


class QuadrantsFinder(importlib.abc.MetaPathFinder):
    """Finds `quadrants` and `quadrants.*` among qd's modules."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _NAME and not fullname.startswith(_NAME + "."):
            return None
        module = qd if fullname == _NAME else _qd_module(fullname)
        if module is None:
            qd_name = "qd" + fullname[len(_NAME):]
            raise ModuleNotFoundError(f"No module named {fullname!r} (qd, standing in for quadrants, has no "
                                      f"{qd_name})", name=fullname)
        if "__qd_spec__" not in vars(module):
            module.__qd_spec__ = module.__spec__
        if not hasattr(module, "__path__"):
            _alias_children(fullname, module)
        return importlib.machinery.ModuleSpec(fullname, _SameModule(module),
                                              is_package=hasattr(module, "__path__"))


def installed() -> bool:
    """Whether `import quadrants` gives qd in this process."""
    return any(isinstance(f, QuadrantsFinder) for f in sys.meta_path)


def install() -> None:
    """Make `import quadrants[.A.B]` give qd's modules from now on, in this process."""
    loaded = sys.modules.get(_NAME)
    if loaded is not None and loaded is not qd:
        raise qd.QdConfigError("qd.standin.install(): quadrants itself was already imported in this process; "
                               "install the stand-in before anything imports quadrants")
    if not installed():
        sys.meta_path.insert(0, QuadrantsFinder())
    sys.modules[_NAME] = qd


def uninstall() -> None:
    """Undo `install()`: forget the quadrants names (qd's modules stay as they are)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, QuadrantsFinder)]
    for name in [n for n in sys.modules if n == _NAME or n.startswith(_NAME + ".")]:
        del sys.modules[name]
