"""Attempt: read /etc/passwd, also through ../ from the working directory.
Safe harness: refused (Landlock, audit hook); invalid with a reason."""
ATTEMPT, SAFE = "read /etc/passwd", "invalid, not readable"
SOURCE = """def discovered_law(a):
    t = open('../../../../../../../etc/passwd').read()
    return float(len(t))
"""
