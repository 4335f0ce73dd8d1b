# Task runner; every recipe also works as the plain command it runs.

setup:
    python3 -m venv .venv && .venv/bin/pip install -q '.[dev]'

demo:
    .venv/bin/python examples/demo.py

# everything (what CI runs)
test:
    .venv/bin/python -m pytest -q

# the quick tier: no subprocess suites, no PTX sweep, Hypothesis with a few examples (a few minutes)
test-fast:
    .venv/bin/python -m pytest -q -m "not slow"

# what test-fast leaves out
test-slow:
    .venv/bin/python -m pytest -q -m slow

bench:
    .venv/bin/python bench/throughput.py
    .venv/bin/python bench/launch.py
    .venv/bin/python bench/pruning.py
    .venv/bin/python bench/compile.py

lint:
    .venv/bin/ruff check qd qd_analysis tests bench examples
