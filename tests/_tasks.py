"""Small tasks for tests whose truth is a law written in the hypothesis language."""

from __future__ import annotations

from etc_fast.tasks._base import Task, Variable


def make_task(name: str, law: str, variables: list[tuple[str, str, float, float]],
              constants: dict[str, float] | None = None, descriptions: dict[str, str] | None = None) -> Task:
    """A task whose truth is ``law`` (hypothesis language) over ``(name, scale, low, high)`` inputs.

    ``constants`` names the law's hidden constants (their values are inlined into the truth);
    ``descriptions`` maps a variable name to its description (default ``input <name>``).
    """
    import re

    from etc_fast.expr import parse

    vs = tuple(Variable(n, n, None, (descriptions or {}).get(n, f"input {n}"), sc, lo, hi) for n, sc, lo, hi in variables)
    inlined = law
    for k, val in (constants or {}).items():
        inlined = re.sub(rf"\b{re.escape(k)}\b", f"({val!r})", inlined)
    prog = parse(inlined, [v.name for v in vs])
    return Task(
        name=name, module=name, difficulty="custom", law_version="custom", title=name, description=name,
        output_name="y", output_description="the output", variables=vs, noise_floor=0.0,
        ground_truth_text=law, param_description="", truth_fn=prog.evaluate, law_expression=inlined, source="test",
        constants=dict(constants or {}),
    )
