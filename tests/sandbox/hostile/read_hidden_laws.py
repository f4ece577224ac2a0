"""Attempt: read the package's hidden laws (etc_fast/laws/_table.py) by absolute path.
Safe harness: the file is outside the box (Landlock, audit hook): the law is invalid with a reason."""
ATTEMPT, SAFE = "read the hidden laws", "invalid, file not readable"
SOURCE = """def discovered_law(a):
    return float(len(open({laws!r}).read()))
"""
