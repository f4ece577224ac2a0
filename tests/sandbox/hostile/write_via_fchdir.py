"""Attempt: fchdir into the canary directory, then overwrite the canary by a relative name.
Safe harness: refused (audit hook checks the descriptor's directory; Landlock); canary unchanged."""
ATTEMPT, SAFE = "write outside after fchdir", "invalid, canary unchanged"
SOURCE = """def discovered_law(a):
    o = np.__dict__['__builtins__']['__import__']('os')
    o.fchdir(o.open({canary_dir!r}, o.O_PATH | o.O_DIRECTORY))
    open('canary.txt', 'w').write('pwned')
    return 1.0
"""
