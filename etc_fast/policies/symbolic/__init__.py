"""Offline symbolic policy: a generic symbolic-regression search behind the Policy protocol.

* :func:`search` — ranked candidate laws (hypothesis-language expressions with fitted constants).
* :class:`SymbolicPolicy` — planner (committees, drafts, synthesis) and baseline (experiment design) roles.
"""

from etc_fast.policies.symbolic._grammar import VariableDomain
from etc_fast.policies.symbolic._policy import SymbolicPolicy, is_confident
from etc_fast.policies.symbolic._search import Candidate, SearchResult, relative_errors, search

__all__ = ["Candidate", "SearchResult", "SymbolicPolicy", "VariableDomain", "is_confident", "relative_errors", "search"]
