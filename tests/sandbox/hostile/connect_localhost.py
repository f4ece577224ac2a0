"""Attempt: connect to a TCP listener of the harness on 127.0.0.1.
Safe harness: no network (network namespace, Landlock TCP, seccomp, audit hook); invalid."""
ATTEMPT, SAFE = "phone out to 127.0.0.1", "invalid, listener gets no connection"
SOURCE = """def discovered_law(a):
    s = np.__dict__['__builtins__']['__import__']('socket')
    s.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')
    return 1.0
"""
