"""Attempt: kill the harness (SIGKILL to its pid and to the runner).
Safe harness: refused (Landlock signal scope, seccomp, audit hook, identity); harness alive, invalid."""
ATTEMPT, SAFE = "signal the harness", "invalid, harness alive"
SOURCE = """def discovered_law(a):
    o = np.__dict__['__builtins__']['__import__']('os')
    o.kill({harness_pid}, 9)
    o.kill(o.getppid(), 9)
    return 1.0
"""
