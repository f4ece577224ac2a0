"""The quantities every decision of the symbolic agent is stated in (docs/guide/model-selection.md, "Knobs").

The one criterion (:mod:`._criterion`) and the other modules derive their thresholds from these
instead of naming their own. This module imports nothing of the agent, so every module may.
"""

from __future__ import annotations

__all__ = ["ALPHA", "ASSUMED_NOISE", "COMPLEXITY_WEIGHT", "DECISIVE", "DECISIVE_RATIO", "EXACT_DIGITS", "EXACT_FLOOR"]


#: Weight of a law's description complexity in log10 units of error (the search's score and the
#: criterion's third term): one unit of complexity costs as much as a factor 10**0.35 = 2.24 in
#: error. Chosen on the NewtonBench modules; the search's recovery on the generated suite is the same
#: from 0.2 to 0.5 (docs/guide/model-selection.md).
COMPLEXITY_WEIGHT = 0.35
#: The criterion gap that makes one law decisively better than another: a likelihood ratio of 10
#: (Jeffreys' "strong" evidence), one unit of Q. With equal fit and fitted numbers this is a
#: complexity difference of 1/COMPLEXITY_WEIGHT = 2.9 units.
DECISIVE = 1.0
#: The same evidence as a ratio of errors or misfits: one decade. A misfit this many times another
#: (or a floor) is decisively worse; a fit this many times better is decisively better.
DECISIVE_RATIO = 10.0 ** DECISIVE
#: The one significance level of the agent's statistical tests: the F-tests that fix a fitted
#: number to a simple one, the prediction tests of new records, and the 1 - ALPHA quantiles of the
#: noise floors.
ALPHA = 0.01
#: Relative noise level assumed where the agent is told only that its lab is noisy (it never learns
#: the true level, like an LLM agent): the noise-aware studies' level, 1%.
ASSUMED_NOISE = 0.01
#: Decimal digits to which an exact fit agrees with noiseless records: float64 carries 15.9, and a
#: least-squares fit of a few constants loses up to three more to conditioning. The exact-fit
#: tolerance is EXACT_FLOOR; a submitted law's constants are written with this many significant
#: digits, and residual sums compared as fractions rounded to this many decimals tie exact fits.
EXACT_DIGITS = 12
#: The relative error at or below which a validated fit counts as exact: 10**-EXACT_DIGITS.
EXACT_FLOOR = 10.0 ** -EXACT_DIGITS
