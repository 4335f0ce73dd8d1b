"""Why a parameter was kept or pruned: `qd.explain` and the `qd-explain` command.
"""
