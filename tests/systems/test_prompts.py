"""The apparatus block an agent reads for each system: complete, and free of the hidden law."""

from __future__ import annotations

import json
import re

import pytest

from etc_fast.llm._system_prompts import apparatus_block, response_example
from etc_fast.systems import simulate
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._spec import SPECS
from etc_fast.tasks import DIFFICULTIES, LAW_VERSIONS, get_task


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_block_names_every_control_format_and_assisting_law(module, system):
    sp = SPECS[(module, system)]
    law = get_task(module)
    text = apparatus_block(
        sp, law_signature=law.signature, law_meaning=law.output_description
    )
    assert law.signature in text and sp.apparatus in text
    for c in sp.controls:
        assert f"`{c.key}`" in text and f'"{c.key}": ...' in text
        assert ("required" if c.default is None else f"default {c.default:g}") in text
    for line in sp.assisting_laws:
        assert line in text
    assert "<run_experiment>" in text and "<experiment_output>" in text
    if sp.n_times > 1:
        assert re.search(r"\b20\b", text)  # the point count (at most, or exactly, 20)


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_block_never_shows_a_hidden_law_or_constant(module, system):
    sp = SPECS[(module, system)]
    law = get_task(module)
    text = apparatus_block(
        sp, law_signature=law.signature, law_meaning=law.output_description
    )
    numbers = set(re.findall(r"\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+", text))
    for d in DIFFICULTIES:
        for v in LAW_VERSIONS:
            task = get_task(module, d, v)
            assert (
                task.ground_truth_text not in text and task.law_expression not in text
            )
            for value in task.constants.values():
                assert repr(value) not in numbers and f"{value:g}" not in numbers


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_response_example_has_newtonbench_shape(module, system):
    """The placeholder answer has the keys (and nesting) of a real answer."""
    sp = SPECS[(module, system)]
    example = json.loads(response_example(sp).split("\n")[1].replace("...", '"x"'))[0]
    req = {
        c.key: c.pool_value if not c.pool else c.low
        for c in sp.controls
        if c.pool or c.pool_value is not None
    }
    real = simulate(
        module, system, [req], hidden_law(module, "easy", "v0"), rng_seed=0
    )[0]
    if isinstance(real, dict):
        assert isinstance(example, dict) and set(example) == set(real)
    else:
        assert not isinstance(example, dict)
