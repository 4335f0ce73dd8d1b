"""Where a call of a kernel enters qd: the decorated kernel, its dispatch to a
compiled variant by specialisation key (`qd.frontend.spec_key`), warm-up.
"""
