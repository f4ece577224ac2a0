"""The LLM planner's messages on every system: apparatus, records, derived-law rows, no hidden law."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from etc_fast.core import SystemObservation, to_jsonable
from etc_fast.llm._system_prompts import (
    apparatus_block,
    system_explore_first_message,
    system_explore_next_message,
    system_synthesis_first_message,
)
from etc_fast.systems._derive import derive_law_table
from etc_fast.systems._forward import observe
from etc_fast.systems._pool import system_pool
from etc_fast.systems._spec import SPECS
from etc_fast.tasks import DIFFICULTIES, get_task, task_view


def _records(text: str, tag: str, k: int) -> list:
    """The JSON array of the ``k``-th ``<tag>`` block of ``text`` (0: the apparatus block's example)."""
    return json.loads(text.split(f"<{tag}>\n")[k].split(f"\n</{tag}>")[0])


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_messages_on_every_system(module, system):
    sp = SPECS[(module, system)]
    task = get_task(module, "easy", "v0", system=system)
    view = task_view(task.law)
    requests = system_pool(module, system, 5, 8)[:4]
    outputs = task.experiment(requests, rng_seed=1)
    series = observe(module, system, outputs)
    so = SystemObservation(
        module=module, system=system, spec=sp, requests=tuple(requests), outputs=tuple(outputs), series=series,
        apparatus=apparatus_block(sp, law_signature=view.signature, law_meaning=view.output_description),
        derived=derive_law_table(module, system, requests, series),
    )
    first = system_explore_first_message(view, so, noisy=False, allowed=["analysis", "committee", "draft"], batch_cap=4,
                                         turns_left=3, measurements_left=None)
    assert so.apparatus in first and "Experiments so far (4; numbered 1-4)" in first
    assert _records(first, "run_experiment", 2) == to_jsonable(requests)
    assert _records(first, "experiment_output", 2) == json.loads(json.dumps(to_jsonable(outputs)))
    names = [str(v["name"]) for v in view.variables]
    assert "exp  " + "  ".join(names) + "  L  misfit  rel_unc" in first
    assert len([ln for ln in first.split("\n") if ln[:2] in ("1 ", "2 ", "3 ", "4 ")]) == 4  # one derived row each
    assert f"in the law's inputs ({', '.join(names)})" in first
    later = system_explore_next_message(view, so, "The planner (variance) selected and ran 2 new experiment(s).", 2,
                                        noisy=False, allowed={"committee", "draft"}, batch_cap=4, turns_left=2,
                                        measurements_left=10)
    assert "New experiments (2; numbered 3-4)" in later and so.apparatus not in later
    assert _records(later, "experiment_output", 1) == json.loads(json.dumps(to_jsonable(outputs[2:])))
    assert "Derived law values of experiments 3-4" in later and "10 left in the budget" in later
    synth = system_synthesis_first_message(view, so, None, noisy=True, interpreter=True, turns_left=2)
    assert "All experiments (4; numbered 1-4)" in synth and "No draft law" in synth and "random error" in synth
    for text in (first, later, synth):
        assert module not in text and "HIDDEN_CONSTANT" not in text
        for d in DIFFICULTIES:
            law = get_task(module, d, "v0")
            assert law.law_expression not in text and law.ground_truth_text not in text
            static = text.split("Experiments so far")[0].split("All experiments")[0].split("New experiments")[0]
            numbers = set(re.findall(r"\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+", static))
            for value in law.constants.values():
                assert repr(value) not in numbers and f"{value:g}" not in numbers


def test_derived_rows_are_those_of_the_protocol_table():
    module, system = "m8_sound_speed", "simple_system"  # inputs set by the controls: exact derived values
    sp = SPECS[(module, system)]
    task = get_task(module, "easy", "v0", system=system)
    view = task_view(task.law)
    requests = system_pool(module, system, 2, 8)[:6]
    outputs = task.experiment(requests)
    series = observe(module, system, outputs)
    table = derive_law_table(module, system, requests, series)
    so = SystemObservation(module=module, system=system, apparatus="A", spec=sp, requests=tuple(requests),
                           outputs=tuple(outputs), series=series, derived=table)
    text = system_explore_first_message(view, so, noisy=False, allowed=["committee"], batch_cap=4, turns_left=1,
                                        measurements_left=None)
    rows = [ln.split("  ") for ln in text.split("\n") if ln[:2] in {f"{i} " for i in range(1, 7)}]
    shown = np.array([[float(c) for c in r[1:-2]] for r in rows])
    np.testing.assert_allclose(shown[:, :-1], table.X, rtol=1e-5)
    np.testing.assert_allclose(shown[:, -1], table.y, rtol=1e-5)
    np.testing.assert_allclose(shown[:, -1], task.law.truth(table.X), rtol=1e-4)  # the law's values (test side)


def test_no_newtonbench_sentence_in_the_system_prompts():
    import etc_fast.llm._system_prompts as SP
    from tests.llm.test_prompts import NEWTONBENCH_PHRASES

    texts = [open(SP.__file__).read().lower(), SP.system_planner_system_prompt(True).lower(),
             SP.system_synthesis_system_prompt(True).lower()]
    for phrase in NEWTONBENCH_PHRASES:
        assert all(phrase.lower() not in t for t in texts), phrase
