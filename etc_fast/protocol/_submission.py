"""Pre-checks on submitted ``discovered_law`` sources (no code is executed here).

NewtonBench rejects a submission before running it unless the text holds
``def discovered_law(<exact argument list>):`` and a ``return``. The protocol uses the same check,
plus a syntax check (``compile`` only parses; it never runs the code), to decide whether a
synthesis law is valid enough to replace a draft. Whether the law actually evaluates is decided
later by the sandboxed evaluation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from etc_fast.sandbox import check_signature, signature_pattern

__all__ = ["precheck_submission", "is_trivial_submission", "signature_pattern"]

_MAX_SOURCE_CHARS = 100_000


def precheck_submission(source: object, variable_names: Sequence[str], *, syntax: bool = True) -> str | None:
    """Why ``source`` cannot be a valid submission, or ``None`` when it passes.

    Checks: a non-empty string of reasonable size, the exact ``discovered_law`` signature, a
    ``return`` with a value (NewtonBench's regex pre-check) and, with ``syntax``, valid Python syntax.
    """
    if not isinstance(source, str):
        return f"the law must be Python source text, got {type(source).__name__}"
    if not source.strip():
        return "the law is empty"
    if len(source) > _MAX_SOURCE_CHARS:
        return f"the law is {len(source)} characters long (limit {_MAX_SOURCE_CHARS})"
    problem = check_signature(source, variable_names)  # the evaluator's own pre-check, so both agree
    if problem is not None:
        return problem
    if not syntax:
        return None
    try:
        compile(source, "<discovered_law>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno}, col {exc.offset})" if exc.lineno else ""
        return f"syntax error{where}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:  # null bytes, absurd nesting
        return f"the source cannot be compiled: {type(exc).__name__}: {exc}"
    return None


_NAN_RETURN = re.compile(
    r"\breturn\s*\(?\s*(?:float\(\s*['\"][+-]?nan['\"]\s*\)|(?:math\.|np\.|numpy\.)?nan|None)\s*\)?\s*$",
    re.IGNORECASE,
)


def is_trivial_submission(source: object, variable_names: Sequence[str]) -> bool:
    """True when a draft carries no information: missing, failing the pre-check, or returning NaN/None only."""
    if precheck_submission(source, variable_names) is not None:
        return True
    returns = [ln.strip() for ln in str(source).splitlines() if re.search(r"\breturn\b", ln)]
    return bool(returns) and all(_NAN_RETURN.search(r) for r in returns)
