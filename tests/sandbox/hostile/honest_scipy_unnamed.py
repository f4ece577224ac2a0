"""Not an attack: an honest law that reaches SciPy by a name its text does not spell, so the lean
zygote (NumPy only) forks it and the child imports SciPy itself. Safe harness: scores it."""
ATTEMPT, SAFE = "honest law importing SciPy by a computed name", "valid, exact values"
EXPECT = "gamma"
SOURCE = """def discovered_law(a):
    special = __import__("sci" + "py.special", fromlist=["gamma"])
    return special.gamma(a)
"""
