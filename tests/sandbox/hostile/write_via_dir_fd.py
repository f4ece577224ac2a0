"""Attempt: create a file in the harness's canary directory with os.open(..., dir_fd=fd).
Safe harness: refused (audit hook resolves dir_fd; Landlock refuses the create); canary dir unchanged."""
ATTEMPT, SAFE = "write outside through dir_fd", "invalid, canary unchanged"
SOURCE = """def discovered_law(a):
    o = np.__dict__['__builtins__']['__import__']('os')
    fd = o.open({canary_dir!r}, o.O_PATH | o.O_DIRECTORY)
    o.close(o.open('pwned_dirfd', o.O_WRONLY | o.O_CREAT, dir_fd=fd))
    return 1.0
"""
