"""Judge registry: build a judge by name."""

from __future__ import annotations

from etc_fast.evaluate._judge import Judge, Verdict
from etc_fast.tasks import Task

__all__ = ["JUDGES", "NoJudge", "create_judge"]

#: Judge names :func:`create_judge` accepts.
JUDGES: tuple[str, ...] = ("structural", "llm", "none")


class NoJudge:
    """A judge that never credits (``reason="no judge"``): numerical evaluation only."""

    name = "none"

    def judge(self, source: str, task: Task) -> Verdict:
        return Verdict(judge=self.name, credited=False, reason="no judge")


def create_judge(name: str, **kwargs) -> Judge:
    """Build a judge by name.

    Args:
        name: ``"structural"`` (offline: the hidden law up to its hidden constants, :mod:`etc_fast.evaluate._structural`), ``"llm"`` (NewtonBench judge prompt) or
            ``"none"`` (never credits).
        **kwargs: Passed to the judge's constructor.

    Raises:
        ValueError: unknown name, or options given to ``"none"``.
    """
    if name == "structural":
        from etc_fast.evaluate._structural import StructuralJudge

        return StructuralJudge(**kwargs)
    if name == "llm":
        from etc_fast.evaluate._llm_judge import LLMJudge

        return LLMJudge(**kwargs)
    if name == "none":
        if kwargs:
            raise ValueError(f"judge 'none' takes no options, got {sorted(kwargs)}")
        return NoJudge()
    raise ValueError(f"unknown judge {name!r}; expected one of {', '.join(JUDGES)}")
