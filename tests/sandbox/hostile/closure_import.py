"""Attempt: take the real __import__ out of the import guard's closure, then run a shell command.
Safe harness: the guard holds no closure; processes cannot be started anyway (audit, seccomp)."""
ATTEMPT, SAFE = "real import from the guard's closure", "invalid, no process started"
SOURCE = """def discovered_law(a):
    g = __builtins__['__import__'] if isinstance(__builtins__, dict) else __builtins__.__import__
    real = g.__closure__[0].cell_contents
    real('os').system('touch /tmp/etc_closure_pwned')
    return 1.0
"""
