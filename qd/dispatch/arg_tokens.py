"""The warm dispatcher's key: one token per parameter, a frozen struct argument by identity.

A kernel's specialisation key (`spec_key`) has a part for every key path: Genesis passes
frozen dataclasses holding 400 to 800 arrays, and keying each array at every launch (and
hashing a key that long) costs ten times the launch itself. Yet the part of a struct argument
can only change if one of the objects on its paths is rebound or retyped, and a frozen tree
allows neither: a frozen dataclass or a named tuple cannot rebind its members, a `qd.ndarray`
never changes its dtype, rank or element shape, nor does a placed field. Such an argument's
parts are a function of its identity.

So the generated dispatcher looks a launch up in a table of its own, keyed by one token per
parameter with key paths: a frozen struct argument's token is its `id` (the memo holds the
object, so the id cannot be reused while the token is in the table), any other struct
argument's token is the tuple of its parts, and a parameter that is itself a key path gives
its part. The launch that misses is keyed by `spec_key` as before and enters the table under
its tokens; the table and the held arguments are cleared together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..frontend.spec_key import dispatch_parts
from ..lang.field import frozen_along

__all__ = ["DispatchTable"]

MAX_HELD = 256  # frozen arguments held at once; past it the table starts again


class DispatchTable:
    """The dispatcher's table (token tuple -> variant) and the frozen arguments it holds."""

    def __init__(self, kernel: Any):
        self.variants: dict = {}
        self.held: dict[int, object] = {}  # id -> the frozen struct argument whose token it is
        groups: dict[str, list] = {}
        for path, part in dispatch_parts(kernel):
            root, _, rest = path.partition(".")
            groups.setdefault(root, []).append((tuple(rest.split(".")) if rest else (), part))
        # (parameter, the function of its argument that gives its token), in key order
        self.tokens: list[tuple[str, Callable[[object], object]]] = [
            (root, subs[0][1] if subs[0][0] == () else self._struct_token(subs)) for root, subs in groups.items()]

    def _struct_token(self, subs: list) -> Callable[[object], object]:
        held = self.held
        chains = [chain for chain, _ in subs]

        def token(v):
            if held.get(id(v)) is v:
                return id(v)
            parts = []
            for chain, part in subs:
                x = v
                for name in chain:
                    x = getattr(x, name)
                parts.append(part(x))
            if not frozen_along(v, chains):
                return tuple(parts)
            if len(held) >= MAX_HELD:
                self.clear()
            held[id(v)] = v  # from now on its token is its id, for as long as the table holds it
            return id(v)
        return token

    def clear(self) -> None:
        """Forget every entry and let the held arguments go (entries keyed by their ids with them)."""
        self.variants.clear()
        self.held.clear()
