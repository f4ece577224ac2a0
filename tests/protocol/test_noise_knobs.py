"""The planner loop with the noise knobs (docs/guide/noise.md): inert in a noiseless lab, reported in a noisy one."""

from __future__ import annotations

import numpy as np

from tests.protocol._helpers import GRAVITY_LAW, committee, draft, make_spec

HYPS = ("C * mass1 * mass2 / distance**2", "C * mass1 * mass2 / distance**1.5", "C * mass1 * mass2 / distance")
KNOBS = {"noise_aware": True, "explore_fraction": 0.5, "replicates": 1}


def _actions():
    return [committee(*HYPS), committee(*HYPS), draft(GRAVITY_LAW)]


def _measured(rec):
    return [e["measured"]["X"] for e in rec.events if isinstance(e.get("measured"), dict)]


def test_knobs_are_inert_in_a_noiseless_lab(play):
    paper, _ = play(make_spec("variance_c"), _actions())
    knobs, _ = play(make_spec("variance_c", **KNOBS), _actions())
    assert _measured(paper) == _measured(knobs) and len(_measured(paper)) == 2
    assert "noise_aware" not in knobs.events[2]["selection"]


def test_noisy_lab_batch_is_split_and_reported(play):
    rec, policy = play(make_spec("variance_c", noise=0.01, **KNOBS), _actions())
    sel = [e for e in rec.events if e.get("feedback_kind") == "selection"]
    assert len(sel) == 2
    for ev in sel:
        s = ev["selection"]
        assert s["noise_aware"] and s["noise_estimate"]["basis"] in ("residuals", "replicates")
        assert len(s["chosen"]) + len(s["replicate_rows"]) == 4 and len(s["explored"]) >= 2
        assert "Noise estimate: about" in ev["feedback"] and "to explore" in ev["feedback"]
        X = np.asarray(ev["measured"]["X"])
        for t, r in enumerate(s["replicate_rows"]):  # a replicate re-measures an earlier input exactly
            assert X[len(s["chosen"]) + t].tolist() == np.asarray(rec.observations["X"])[r].tolist()
    # the diagnostics the policy saw after the first batch carry the estimate, in fields and in words
    shown = [o.diagnostics for o in policy.observations if o.diagnostics is not None and o.diagnostics.noise_basis]
    assert shown and shown[0].noise_estimate > 0 and shown[0].explored
    assert "Planner's noise estimate" in shown[0].text and "explored" in shown[0].text


def test_stopping_rule_reports_the_prediction_check(play):
    knobs = {"noise_aware": True, "explore_fraction": 0.5, "stop_when_settled": True}
    rec, policy = play(make_spec("variance_c", noise=0.01, **knobs), _actions())
    sel = [e["selection"] for e in rec.events if e.get("feedback_kind") == "selection"]
    assert "prior_check" not in sel[0]  # nothing measured after a step yet
    prior = sel[1]["prior_check"]  # the first step's best law against the first batch, measured after it
    assert prior["hypothesis"] in HYPS and prior["n"] == len(sel[0]["chosen"]) and prior["error"] >= 0
    shown = [o.diagnostics for o in policy.observations if o.diagnostics is not None and o.diagnostics.prediction]
    assert shown and shown[0].prediction[0] == prior["hypothesis"] and "predicted its" in shown[0].text
    # without the knob the check is neither run nor shown
    rec2, policy2 = play(make_spec("variance_c", noise=0.01, noise_aware=True, explore_fraction=0.5), _actions())
    assert all("prior_check" not in e["selection"] for e in rec2.events if e.get("feedback_kind") == "selection")
    assert not any(o.diagnostics is not None and o.diagnostics.prediction for o in policy2.observations)
