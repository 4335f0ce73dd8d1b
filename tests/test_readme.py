"""The README and `docs/` say what qd does: the README's example runs, its stated launch_info
values and its `qd-explain` session are what qd reports, the copies of them in `docs/` are the
same text, and every link and repository path the documentation names exists."""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
ROOT = README.parent
DOCS = ROOT / "docs"
PRUNING_DOC = DOCS / "pruning-and-explain.md"


def documentation() -> list[pathlib.Path]:
    """The markdown files users read: the README, DESIGN.md and everything in `docs/`."""
    return [README, ROOT / "DESIGN.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.slow  # starts Python processes
def test_readme_example_and_stated_pruning(tmp_path):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    example, info_block = blocks[0], blocks[1]
    stated = {name: ast.literal_eval(value) for name, value in
              re.findall(r"info\.(kept|pruned)\s+#\s*(\(.*?\))", info_block)}
    assert set(stated) == {"kept", "pruned"}
    script = tmp_path / "readme_example.py"
    script.write_text(example + "\ninfo = qd.launch_info(step)\nprint(repr((info.kept, info.pruned)))\n")
    env = {**os.environ, "PYTHONPATH": str(README.parent)}  # this tree's qd, not an installed copy
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    kept, pruned = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert kept == stated["kept"] and pruned == stated["pruned"]


@pytest.mark.slow  # starts Python processes
def test_readme_explain_example_is_what_qd_explain_prints():
    """The README's qd-explain session: the command it shows, run here, prints the output it shows."""
    text = README.read_text()
    (session,) = re.findall(r"```console\n\$ qd-explain (.*?)\n\(the demo's own output, then\)\n(.*?)```", text, re.S)
    args, shown = session
    env = {**os.environ, "PYTHONPATH": str(README.parent)}
    env.pop("COLUMNS", None)
    r = subprocess.run([sys.executable, "-m", "qd.explain.cli", *args.split()], capture_output=True, text=True,
                       timeout=300, env=env, cwd=README.parent)
    assert r.returncode == 0, r.stderr
    printed = r.stdout[r.stdout.index("== "):]
    assert printed == shown


def test_pruning_doc_shows_the_checked_examples():
    """`docs/pruning-and-explain.md` repeats the README's launch_info block and qd-explain session
    word for word, so the two tests above check what the reference shows too."""
    readme, doc = README.read_text(), PRUNING_DOC.read_text()
    info = re.findall(r"```python\n(step\(s, 0\.01\)\n.*?)```", readme, re.S)
    session = re.findall(r"```console\n(\$ qd-explain .*?)```", readme, re.S)
    assert len(info) == 1 and len(session) == 1
    assert info[0] in doc and session[0] in doc


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(md: pathlib.Path) -> set[str]:
    """The anchors a markdown file's headings get (GitHub's rule: lower case, punctuation dropped,
    spaces to dashes)."""
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", md.read_text(), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def broken_links(md: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """The relative links of a markdown file whose file, or heading anchor, does not exist."""
    out = []
    for target in _LINK.findall(md.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ...
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve() if path else md
        if not dest.exists():
            out.append(f"{md.relative_to(root)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            out.append(f"{md.relative_to(root)}: {target} (no such heading)")
    return out


def test_relative_links_resolve():
    files = documentation()
    assert README in files and len(files) >= 8
    assert [b for f in files for b in broken_links(f)] == []


def test_link_check_can_fail(tmp_path):
    md = tmp_path / "x.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    md.write_text("[ok](there.md#a-heading) [web](https://example.org) [gone](gone.md) [bad](there.md#nope)\n")
    assert broken_links(md, tmp_path) == ["x.md: gone.md (no such file)", "x.md: there.md#nope (no such heading)"]


# backticked repository paths (`qd/core/abi.py`, `rules/*.dl`, `frontend/vectors.py`): the
# prefixes that name a top-level folder; other paths ending in a source suffix are looked up
# under the packages too (prose names modules relative to `qd/` or `qd_analysis/`)
_TOP = ("qd/", "qd_analysis/", "rules/", "tests/", "bench/", "examples/", "docs/", ".ci/")
MADE_BY_RUNS = {"bench/results/"}  # written by the benchmarks, not in a fresh checkout


def missing_paths(md: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """The backticked repository paths of a markdown file that name nothing on disk."""
    out = []
    for tok in sorted(set(re.findall(r"`([\w./*-]+)`", md.read_text()))):
        if not re.fullmatch(r"[\w.*-]+(/[\w.*-]+)+/?", tok) or tok in MADE_BY_RUNS:
            continue
        if os.path.normpath(tok).split(os.sep)[0] == "..":  # outside the repository: no such path in a fresh clone
            out.append(f"{md.relative_to(root)}: {tok} (outside the repository)")
            continue
        if not tok.startswith(_TOP) and not tok.endswith((".py", ".dl", ".json", "/")):
            continue
        bases = [root] if tok.startswith(_TOP) else [root, root / "qd", root / "qd_analysis"]
        if not any(any(b.glob(tok.rstrip("/"))) for b in bases):
            out.append(f"{md.relative_to(root)}: {tok}")
    return out


def test_paths_named_in_the_documentation_exist():
    """A module moved or renamed leaves no stale path in the README, DESIGN.md or `docs/`."""
    assert [m for f in documentation() for m in missing_paths(f)] == []


def test_path_check_can_fail(tmp_path):
    (tmp_path / "qd" / "core").mkdir(parents=True)
    (tmp_path / "qd" / "core" / "abi.py").write_text("")
    md = tmp_path / "x.md"
    md.write_text("`qd/core/abi.py`, `core/abi.py`, `qd/abi.py`, `frontend/gone.py`, `a / b`, `x.y`\n")
    assert missing_paths(md, tmp_path) == ["x.md: frontend/gone.py", "x.md: qd/abi.py"]


def test_a_path_outside_the_repository_is_refused_even_where_it_exists(tmp_path):
    """The docs speak of the repository only: a folder beside it exists on one machine, not in a fresh clone."""
    root, beside = tmp_path / "repo", tmp_path / "beside"
    (root / "qd").mkdir(parents=True)
    (beside / "genesis").mkdir(parents=True)
    md = root / "x.md"
    md.write_text("`../beside/genesis/`, `qd/../qd/`\n")
    assert missing_paths(md, root) == ["x.md: ../beside/genesis/ (outside the repository)"]


def test_readme_is_a_front_door():
    """The README stays short, its second section is the table of what is supported and what
    differs, and it links every page of `docs/`."""
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert sections[1].startswith("What is supported")
    table = re.search(r"^## What is supported.*?\n(.*?)(?=^## )", text, re.S | re.M).group(1)
    assert "| area | in qd | differs from quadrants |" in table
    linked = {t.partition("#")[0] for t in _LINK.findall(text)}
    assert {f"docs/{p.name}" for p in DOCS.glob("*.md")} <= linked
