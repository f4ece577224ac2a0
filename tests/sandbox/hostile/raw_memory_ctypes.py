"""Attempt: read raw process memory with ctypes (string_at on the environment block) looking for keys.
Safe harness: the box starts from an empty environment, so there is nothing to find; ctypes events
are refused by the audit hook. Invalid with a reason, key in no output."""
ATTEMPT, SAFE = "raw memory read via ctypes", "invalid, key in no output"
SOURCE = """def discovered_law(a):
    c = np.__dict__['__builtins__']['__import__']('sys').modules['ctypes']
    env = c.c_char_p.in_dll(c.CDLL(None), 'environ')
    raise RuntimeError(repr(env.value))
"""
