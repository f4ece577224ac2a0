"""Not an attack: an honest law with scipy.special and scipy.constants. Safe harness: scores it."""
ATTEMPT, SAFE = "honest scipy law", "valid, exact values"
EXPECT = "gamma"
SOURCE = """def discovered_law(a):
    import scipy.special
    from scipy import constants
    return scipy.special.gamma(a) + 0.0 * constants.g
"""
