"""Differential test of qd against quadrants over a range of generated programs.

    .venv/bin/python bench/difftest.py --seeds 0:300 [--jobs 1] [--timeout 30] [--check-reference]

Each seed is one program from `tests/difftest/generator.py`, run on qd and on quadrants (the
oracle; it must be installed: it is in the dev extra) and, where the two disagree, as plain
Python (`tests/difftest/refqd.py`) to say which side is wrong. Prints
`difftest: N agree, M differ, K skipped` (M counts value divergences, qd crashes and hangs and
programs quadrants runs but qd refuses; a value divergence where the plain-Python run sides with
qd is a quadrants bug, counted on the next line instead; K the programs quadrants refuses), the counts per
category and per error kind, and every divergence with its seed. Each diverging program is saved
as `bench/results/difftest/seed_N.py` (runnable; the verdict is in its first lines), and
everything goes to `bench/results/difftest.json`.

`--jobs N` runs N batches at once (the default 1 keeps to one core per side at a time).
`--check-reference` also runs the plain-Python reference on programs where qd and quadrants
agree and reports where it does not: a check of the generator and the reference themselves.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from _common import RESULTS_DIR, ROOT, machine_info, write_json

sys.path.insert(0, str(ROOT / "tests"))

from difftest import runner  # noqa: E402 - needs tests/ on sys.path
from difftest.generator import generate  # noqa: E402

LABELS = {
    "differ": "value divergence",
    "qd_crash": "qd crash",
    "qd_hang": "qd hang",
    "qd_refused": "qd refused",
    "qd_refused_allowed": "qd refused (allowed difference)",
    "skipped": "quadrants skipped",
}
DIVERGENT = ("differ", "qd_crash", "qd_hang", "qd_refused")


def parse_seeds(text: str) -> range:
    a, _, b = text.partition(":")
    if not b:
        return range(int(a), int(a) + 1)
    return range(int(a), int(b))


def _first(text: str, n: int = 160) -> str:
    return text.replace("\n", " ")[:n]


def describe(v: runner.Verdict) -> str:
    if v.category == "differ":
        return f"{v.verdict}: {_first('; '.join(v.detail[:2]))}"
    side = v.qd if v.category.startswith("qd") else v.quadrants
    return f"{v.kind}" + (f" at {side.where}" if side is not None and side.where else "")


def save_program(v: runner.Verdict, outdir: Path) -> Path:
    src = generate(v.seed)
    head = [f"# difftest seed {v.seed}: {LABELS[v.category]}"
            + (f", reference verdict: {v.verdict}" if v.verdict else "")]
    head += [f"# {_first(line, 300)}" for line in (v.detail[:5] or [describe(v)])]
    for name, side in (("qd", v.qd), ("quadrants", v.quadrants), ("reference", v.ref)):
        if side is not None:
            head.append(f"# {name}: {_first(side.brief(), 300)}")
    path = outdir / f"seed_{v.seed}.py"
    path.write_text("\n".join(head) + "\n" + src)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0:100", help="A:B, the half-open range of seeds (default 0:100)")
    ap.add_argument("--jobs", type=int, default=1, help="batches run at once (default 1)")
    ap.add_argument("--timeout", type=float, default=runner.DEFAULT_TIMEOUT, help="seconds per program and side")
    ap.add_argument("--check-reference", action="store_true", help="run the reference on agreeing programs too")
    args = ap.parse_args()
    ok, why = runner.quadrants_available()
    if not ok:
        print(f"difftest: cannot run: {why}")
        return 2
    seeds = parse_seeds(args.seeds)
    outdir = RESULTS_DIR / "difftest"
    outdir.mkdir(parents=True, exist_ok=True)
    for s in seeds:
        (outdir / f"seed_{s}.py").unlink(missing_ok=True)
    done = collections.Counter()
    t0 = time.monotonic()

    def progress(v: runner.Verdict) -> None:
        done[v.category] += 1
        if v.category in DIVERGENT:
            print(f"  seed {v.seed}: {LABELS[v.category]}: {describe(v)}", flush=True)
        if v.ref_check and v.ref_check != "agrees":
            print(f"  seed {v.seed}: reference disagrees with both: {_first(v.ref_check)}", flush=True)
        n = sum(done.values())
        if n % 50 == 0:
            print(f"  ... {n} of {len(seeds)} programs, {time.monotonic() - t0:.0f} s", flush=True)

    verdicts = runner.run_seeds(seeds, jobs=args.jobs, timeout=args.timeout, progress=progress,
                                check_reference=args.check_reference)
    elapsed = time.monotonic() - t0
    counts = collections.Counter(v.category for v in verdicts)
    n_agree = counts["agree"]
    verdict_counts = collections.Counter(v.verdict for v in verdicts if v.category == "differ")
    # a value divergence where the plain-Python run agrees with qd is quadrants' bug: counted on
    # its own line (docs/differences.md names each kind), not as a qd divergence
    n_qbugs = verdict_counts["quadrants bug"]
    n_differ = sum(counts[c] for c in DIVERGENT) - n_qbugs
    n_skip = counts["skipped"] + counts["qd_refused_allowed"]
    print(f"difftest: {n_agree} agree, {n_differ} differ, {n_skip} skipped  "
          f"({len(verdicts)} programs, {elapsed:.0f} s)")
    print(f"  quadrants bugs (quadrants differs from the plain-Python run, qd does not): {n_qbugs}")
    for cat in ("differ", "qd_crash", "qd_hang", "qd_refused", "qd_refused_allowed", "skipped"):
        extra = ""
        if cat == "differ" and counts[cat]:
            extra = " (" + ", ".join(f"{k}: {n}" for k, n in sorted(verdict_counts.items())) + ")"
        print(f"  {LABELS[cat]}: {counts[cat]}{extra}")
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for v in verdicts:
        if v.category in ("skipped", "qd_refused", "qd_crash", "qd_hang", "qd_refused_allowed"):
            kinds[v.category][v.kind] += 1
    for cat in ("qd_crash", "qd_hang", "qd_refused", "qd_refused_allowed", "skipped"):
        if kinds[cat]:
            print(f"  {LABELS[cat]} by error kind:")
            for kind, n in kinds[cat].most_common():
                print(f"    {n:4d}  {kind}")
    saved = []
    divergences = []
    for v in verdicts:
        if v.category in DIVERGENT:
            saved.append(save_program(v, outdir))
            divergences.append({
                "seed": v.seed, "category": v.category, "verdict": v.verdict, "kind": v.kind, "detail": v.detail[:10],
                "qd": v.qd.brief() if v.qd else None, "quadrants": v.quadrants.brief() if v.quadrants else None,
                "reference": v.ref.brief() if v.ref else None, "program": str(saved[-1].relative_to(ROOT)),
            })
    if divergences:
        print("divergences (seed: category, verdict or error):")
        for d in divergences:
            print(f"  seed {d['seed']}: {LABELS[d['category']]}"
                  + (f", {d['verdict']}" if d["verdict"] else "") + f" -> {d['program']}")
    reference_checks = {v.seed: v.ref_check for v in verdicts if v.ref_check and v.ref_check != "agrees"}
    payload = {
        "seeds": f"{seeds.start}:{seeds.stop}", "programs": len(verdicts), "seconds": round(elapsed, 1),
        "agree": n_agree, "differ": n_differ, "skipped": n_skip, "quadrants_bugs": n_qbugs,
        "categories": {LABELS.get(k, k): n for k, n in counts.items()},
        "value_divergence_verdicts": dict(verdict_counts),
        "kinds": {LABELS[c]: dict(k) for c, k in kinds.items()},
        "divergences": divergences,
        "reference_disagreements": reference_checks,
        "machine": machine_info(),
    }
    path = write_json("difftest.json", payload)
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
