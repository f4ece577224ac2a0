"""Attempt: drop a .pth file into site-packages (code execution in every later interpreter).
Safe harness: site-packages is read-only for the box (identity drop, Landlock, audit hook); invalid."""
ATTEMPT, SAFE = "write a .pth into site-packages", "invalid, nothing written"
SOURCE = """def discovered_law(a):
    n = np.__dict__['__builtins__']['__import__']('numpy')
    d = n.__file__.rsplit('/', 2)[0]
    open(d + '/zz_etc_pwned.pth', 'w').write('import os')
    return 1.0
"""
