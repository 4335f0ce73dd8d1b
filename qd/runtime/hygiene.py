"""Names for generated Python code (the launcher and the dispatcher).

Generated functions take the user's parameter names, so keyword calls work unchanged. Every
other name they use — locals, the globals of their namespace, even builtins such as `type` or
`TypeError` — is `prefix + tag`, where the prefix is chosen per kernel so that no parameter
name starts with it. A parameter therefore can never shadow or overwrite an internal name,
whatever it is called; this holds by construction, not by a list of forbidden names.

Only identifiers ever reach generated source as code. Leaf paths and parameter names are
checked here before any text is produced, because some of them come from outside the
process (a disk-cache entry); anything that is not a plain identifier is a qd bug or a
damaged input, never something to paste into `exec`.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
from collections.abc import Collection, Iterable

from ..core.errors import QdInternalError

BASE_PREFIX = "_qd_"


def reserved_prefix(params: Iterable[str]) -> str:
    """A prefix no parameter name starts with: internal names `prefix + tag` cannot collide."""
    names = list(params)
    prefix = BASE_PREFIX
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


def is_plain_identifier(name: object) -> bool:
    """A str that Python parses as a single name: never a keyword, a dot or an expression."""
    return type(name) is str and name.isidentifier() and not keyword.iskeyword(name)


class Namer:
    """Hands out internal names and records what each one is bound to in the namespace."""

    def __init__(self, params: Iterable[str]):
        self.prefix = reserved_prefix(params)
        self.ns: dict[str, object] = {}

    def __call__(self, tag: str) -> str:
        """The internal name for `tag` (a local or a slot-numbered local)."""
        return self.prefix + tag

    def bind(self, tag: str, value: object) -> str:
        """An internal global bound to `value` in the generated code's namespace."""
        name = self.prefix + tag
        self.ns[name] = value
        return name

    def builtin(self, name: str) -> str:
        """A builtin (`type`, `TypeError`) under an internal name, so a parameter called
        `type` cannot change what the generated code calls."""
        return self.bind(name, getattr(builtins, name))


def checked_path(path: object, params: Collection[str], what: str) -> list[str]:
    """The parts of a dotted leaf path, after proving each is a plain identifier and the root
    is one of the parameters (`params`: their names, or a signature's parameter mapping);
    raises QdInternalError otherwise."""
    parts = path.split(".") if type(path) is str else None
    if parts and parts[-1].endswith("]"):  # a vector component `v[3]`: the index must be plain digits
        name, _, k = parts[-1][:-1].partition("[")
        if not (k.isascii() and k.isdigit()):
            raise QdInternalError(f"{what}: leaf path {path!r} has a bad component index")
        parts[-1] = name
    if not parts or not all(is_plain_identifier(p) for p in parts):
        raise QdInternalError(f"{what}: leaf path {path!r} is not a dotted identifier")
    if parts[0] not in params:
        raise QdInternalError(f"{what}: leaf path {path!r} does not start with a parameter")
    return parts


def checked_int(value: object, what: str, low: int = 0) -> int:
    """An int that generated code may spell as a literal (slot numbers, dimensions)."""
    if type(value) is not int or value < low:
        raise QdInternalError(f"{what}: {value!r} is not an integer >= {low}")
    return value


def param_list(sig: inspect.Signature, defaults: str) -> tuple[str, str]:
    """(parameter list for `def`, argument list to forward the same call); `defaults` is the
    generated code's name for the kernel's default values."""
    params, fwd = [], []
    star = False
    slash = any(p.kind is p.POSITIONAL_ONLY for p in sig.parameters.values())  # a "/" still to write
    for p in sig.parameters.values():
        if not is_plain_identifier(p.name):
            raise QdInternalError(f"parameter name {p.name!r} is not an identifier")
        if slash and p.kind is not p.POSITIONAL_ONLY:
            params.append("/")
            slash = False
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        params.append(p.name if p.default is p.empty else f"{p.name}={defaults}[{p.name!r}]")
        fwd.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
    if slash:
        params.append("/")
    return ", ".join(params), ", ".join(fwd)


def internal_names(template: str, prefix: str) -> str:
    """Generated source with every `@tag` spelled `prefix + tag` (see the module docstring).
    Templates use `@` for nothing else: what they interpolate is identifiers (checked above),
    ints and reprs of tuples of ints, so every `@` is a marker; a plain replacement costs a
    tenth of a pattern's."""
    return template.replace("@", prefix)
