"""Attempt: write a gigantic frame into every inherited descriptor (the reply pipe), to cost the
scoring process memory and time. Safe harness: replies are read with a byte bound; invalid, fast."""
ATTEMPT, SAFE = "flood the reply channel", "invalid, bounded memory and time"
SOURCE = """def discovered_law(a):
    o = np.__dict__['__builtins__']['__import__']('os')
    chunk = b'[' * (1 << 20)
    for fd in range(3, 16):
        try:
            for _ in range(1024):
                o.write(fd, chunk)
        except OSError:
            pass
    return 1.0
"""
