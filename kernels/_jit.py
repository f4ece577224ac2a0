"""JIT options, held in one place for every kernel.

``FASTMATH`` leaves out ``nnan`` and ``ninf``: kernels branch on finiteness, and those flags would let
LLVM assume NaN/inf never occur.
"""

FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}
JIT = dict(cache=True, nogil=True, fastmath=FASTMATH)
