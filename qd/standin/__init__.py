"""Standing in for quadrants: run a program or library written for quadrants on qd, unmodified.

    python -m qd.standin script.py [args...]       # like `python -m cProfile script.py`
    python -m qd.standin -m package.module [args...]

    import qd.standin; qd.standin.install()         # from Python, before anything imports quadrants

After `install()`, `import quadrants` gives qd's namespace: a module whose every attribute is qd's
(`quadrants.X is qd.X`; `quadrants.X = v` sets `qd.X`) but whose `__version__` is the quadrants
release qd implements, `(1, 3, 3)` as quadrants writes it, so a library's version check passes;
`qd.__version__` stays qd's own. `import quadrants.A.B` / `from quadrants.A.B import name` give qd's
module `qd.A.B`, or the module qd holds at that attribute path. A path qd does not have is not
found (`importlib.util.find_spec` answers None, an import fails with `ModuleNotFoundError`), so a
program that probes for an optional quadrants module takes its fallback.

Nothing is copied: a name qd lacks is an `AttributeError` on qd, as after `import qd`. The mapping
is installed ahead of every other importer, so it wins over an installed quadrants, and it follows
the program into the `multiprocessing` children it starts (`qd.standin.children`); installing after
quadrants itself was imported is refused (the program would hold both).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import qd

from . import children

__all__ = ["install", "uninstall", "installed", "QUADRANTS_VERSION"]

_NAME = "quadrants"

# the quadrants release whose API qd implements, in the form of quadrants' `__version__`
QUADRANTS_VERSION = (1, 3, 3)
_OWN = frozenset({"__version__", "__version_str__"})  # the names `quadrants` answers itself


class QuadrantsModule(types.ModuleType):
    """`quadrants` under the stand-in: qd's namespace, except the version. It is a module of its own,
    not qd, only so that the two versions can differ; it keeps qd's `__name__` ("qd"), which is how
    qd recognises its own namespace in a kernel's globals.

    Its dictionary holds qd's names as they are once qd is imported (qd never rebinds one), so a
    read is a plain module attribute read, as fast as `qd.X`: programs read `qd.X` in their
    per-step Python code. A name qd gains later (a submodule imported afterwards) is read through
    the module's `__getattr__` (in its dictionary, as PEP 562 has it: a method of the class would slow
    every read); a write or a delete through `quadrants` reaches qd as well."""

    def __setattr__(self, name: str, value) -> None:
        if name not in _OWN:
            setattr(qd, name, value)
        types.ModuleType.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name not in _OWN:
            delattr(qd, name)
        if name in self.__dict__:
            types.ModuleType.__delattr__(self, name)


def _make_quadrants() -> QuadrantsModule:
    module = QuadrantsModule(_NAME)
    module.__dict__.update(qd.__dict__)
    module.__dict__["__getattr__"] = lambda name: getattr(qd, name)  # names qd gains later
    types.ModuleType.__setattr__(module, "__version__", QUADRANTS_VERSION)
    types.ModuleType.__setattr__(module, "__version_str__", ".".join(map(str, QUADRANTS_VERSION)))
    return module


quadrants = _make_quadrants()


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
    prefix = "qd" + fullname[len(_NAME):]
    for name, child in list(sys.modules.items()):
        if name.startswith(prefix + ".") and "." not in name[len(prefix) + 1:]:
            sys.modules.setdefault(fullname + name[len(prefix):], child)


class QuadrantsFinder(importlib.abc.MetaPathFinder):
    """Finds `quadrants` and `quadrants.*` among qd's modules."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _NAME and not fullname.startswith(_NAME + "."):
            return None
        module = quadrants if fullname == _NAME else _qd_module(fullname)
        if module is None:
            return None  # as for any missing module: `find_spec` says None, an import raises ModuleNotFoundError
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
    """Make `import quadrants[.A.B]` give qd's modules from now on, in this process and the
    `multiprocessing` children it starts."""
    loaded = sys.modules.get(_NAME)
    if loaded is not None and loaded is not quadrants and loaded is not qd:
        raise qd.QdConfigError("qd.standin.install(): quadrants itself was already imported in this process; "
                               "install the stand-in before anything imports quadrants")
    if not installed():
        sys.meta_path.insert(0, QuadrantsFinder())
    sys.modules[_NAME] = quadrants
    children.follow()


def uninstall() -> None:
    """Undo `install()`: forget the quadrants names (qd's modules stay as they are)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, QuadrantsFinder)]
    for name in [n for n in sys.modules if n == _NAME or n.startswith(_NAME + ".")]:
        del sys.modules[name]
    children.unfollow()
