"""Where a call of a kernel enters qd: the decorated kernel, its specialisation key, warm-up.
"""
