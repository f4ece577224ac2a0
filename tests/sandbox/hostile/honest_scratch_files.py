"""Not an attack: scratch files and directories inside the box (open, mkdir, rename, remove, rmdir).
Safe harness: allowed (they stay inside the box's own directory); the law returns 1.0."""
ATTEMPT, SAFE = "scratch files inside the box", "valid, returns 1.0"
EXPECT = 1.0
SOURCE = """def discovered_law(a):
    o = np.__dict__['__builtins__']['__import__']('os')
    o.mkdir('scratch')
    open('scratch/f.txt', 'w').write('x')
    o.rename('scratch/f.txt', 'scratch/g.txt')
    fd = o.open('scratch', o.O_RDONLY | o.O_DIRECTORY)
    o.remove('g.txt', dir_fd=fd)
    o.close(fd)
    o.rmdir('scratch')
    return 1.0
"""
