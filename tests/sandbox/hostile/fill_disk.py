"""Attempt: fill the temporary filesystem (large files and many files).
Safe harness: the box's directory has a byte and file quota (tmpfs, or RLIMIT_FSIZE plus the
supervisor's budget); the run stops with a reason."""
ATTEMPT, SAFE = "fill the disk", "invalid, quota reason"
SOURCE = """def discovered_law(a):
    blob = b'x' * (1 << 20)
    for i in range(10000):
        with open('fill%d' % i, 'wb') as f:
            for _ in range(8):
                f.write(blob)
    return 1.0
"""
