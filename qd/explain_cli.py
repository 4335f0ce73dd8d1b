"""`qd-explain`: why kernel parameters were kept or pruned, read from the disk cache.

Every `@qd.kernel(fastcache=True)` entry stores the analysis facts of its compile, so the
question can be answered later without importing or recompiling the program.

    qd-explain [--cache-dir DIR] KERNEL [PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import config as _config
from . import fastcache, fastcache_trust


def _entries(cache: Path, kernel: str):
    for p in sorted(cache.glob("*.qdk")):
        try:
            data = fastcache_trust.read_entry(p)  # never blocks on a FIFO or follows a link
            if data is None:
                continue
            header, _ = fastcache.split(data)
        except (OSError, ValueError, fastcache_trust.Untrusted) as e:
            print(f"qd-explain: skipping unreadable entry {p.name}: {e}", file=sys.stderr)
            continue
        name = header.get("kernel", "")
        if kernel in (name, name.rsplit(".", 1)[-1], header.get("inst_id")):
            yield p, header


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qd-explain", description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="kernel name (qualified or plain) or instantiation id")
    ap.add_argument("path", nargs="?", help="a leaf parameter such as md.mid.pos (default: all)")
    ap.add_argument("--cache-dir", help="the offline_cache_file_path the program used (default: ~/.cache/qd)")
    args = ap.parse_args(argv)
    cfg = _config.Config(offline_cache_file_path=args.cache_dir)
    cache = fastcache.cache_dir(cfg)
    from analysis.analyze import explain_relations
    from analysis.datalog import EngineUnavailableError
    from analysis.explain import Explainer

    found = False
    for p, header in _entries(cache, args.kernel):
        found = True
        facts = {k: [tuple(r) for r in v] for k, v in header["facts"].items()}
        try:
            ex = Explainer(explain_relations(facts), header["files"])
        except EngineUnavailableError as e:
            print(f"qd-explain: {e}", file=sys.stderr)
            return 2
        k = header["inst_id"]
        params = [q for _k, q, _s in sorted((r for r in facts["Param"] if r[0] == k), key=lambda r: r[2])]
        print(f"== {k} (cache entry {p.name})")
        if args.path is not None and args.path not in params:
            print(f"{args.path!r} is not a runtime parameter; its leaves are: {', '.join(params)}")
            continue
        for q in [args.path] if args.path else params:
            print(ex.explain(k, q))
    if not found:
        print(f"qd-explain: no cache entry for kernel {args.kernel!r} in {cache}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
