"""Limits that keep a misbehaving policy from exhausting memory or time, and per-trial policy seeds."""

from __future__ import annotations

from etc_fast.labs import EquationLab
from etc_fast.protocol import Action, TrialRecord, _baseline, _state
from tests.protocol._helpers import GRAVITY_LAW, committee, draft, experiment, final, make_spec

P = {"mass1": 10.0, "mass2": 20.0, "distance": 3.0}


def test_default_request_cap_is_documented_and_large():
    assert _baseline.MAX_EXPERIMENT_POINTS == 10_000


def test_oversized_request_runs_only_the_first_points(play, monkeypatch):
    monkeypatch.setattr(EquationLab, "default_request_cap", 6)
    rec, pol = play(make_spec("baseline_n"), [experiment(*([P] * 9)), experiment(P, P), final()])
    assert rec.measurements == 6 + 2
    fb = pol.observations[1].feedback
    assert "Only the first 6 of 9 requested" in fb and "at most 6 points" in fb
    assert pol.observations[1].new_rows == 6 and pol.observations[2].new_rows == 2
    (ev,) = [e for e in rec.events if e.get("turn") == 0 and e.get("phase") == "baseline"]
    assert ev["measured"]["requested"] == 9 and ev["capped_at"] == 6
    assert len(ev["action"]["points"]) == 6 and ev["action"]["n_points"] == 9


def test_request_cap_and_budget_together(play, monkeypatch):
    monkeypatch.setattr(EquationLab, "default_request_cap", 6)
    rec, pol = play(make_spec("baseline_n", measurement_budget=4), [experiment(*([P] * 9)), final()])
    assert rec.measurements == 4
    assert "Only the first 4 of 9 requested" in pol.observations[1].feedback


def test_ten_million_point_request_is_bounded(play):
    huge = Action(kind="experiment", points=(P,) * 10_000_000, raw="x" * 1_000_000)
    rec, pol = play(make_spec("baseline_n", baseline_rounds=1), [huge, final()])
    assert rec.measurements == _baseline.MAX_EXPERIMENT_POINTS
    assert "10000000" in pol.observations[1].feedback
    ev = [e for e in rec.events if e.get("phase") == "baseline"][0]
    assert len(ev["action"]["points"]) == _baseline.MAX_EXPERIMENT_POINTS
    assert len(ev["action"]["raw"]) < 300_000 and ev["action"]["raw_chars"] == 1_000_000
    assert TrialRecord.from_json(rec.to_json()).measurements == rec.measurements


def test_refused_planner_experiment_records_a_bounded_action(play):
    huge = Action(kind="experiment", points=(P,) * 1_000_000, raw="")
    rec, pol = play(make_spec("variance_n", exploration_turns=1), [huge, final()])
    ev = [e for e in rec.events if e.get("phase") == "explore" and "action" in e][0]
    assert ev["feedback_kind"] == "refusal" and pol.observations[1].phase == "synthesis"
    assert len(ev["action"]["points"]) <= _baseline.MAX_EXPERIMENT_POINTS and ev["action"]["n_points"] == 1_000_000


def test_huge_committee_is_recorded_compactly(play):
    hyps = tuple(f"mass1**{k % 7 + 1}*mass2/distance**2" for k in range(200_000))
    rec, pol = play(make_spec("variance_n", exploration_turns=1), [committee(*hyps), final()])
    ev = [e for e in rec.events if e.get("phase") == "explore" and "action" in e][0]
    assert len(ev["committee"]["parsed"]) == 5
    assert ev["committee"]["n_dropped"] == 200_000 - 5 and len(ev["committee"]["dropped"]) <= _state.MAX_RECORDED_ITEMS
    assert len(ev["action"]["hypotheses"]) <= _state.MAX_RECORDED_ITEMS and ev["action"]["n_hypotheses"] == 200_000
    assert "199995 dropped" in ev["feedback"]
    assert rec.measurements == 8


def test_policy_seed_identifies_the_trial(play):
    """Independent trials get independent policy seeds (an LLM reply cache keys on it), a rerun the same."""
    seeds = {}
    for cfg in ("variance_n", "pairwise_n", "random_n"):
        for diff in ("easy", "medium"):
            for rollout in (0, 1):
                spec = make_spec(cfg, difficulty=diff, rollout=rollout)
                _, pol = play(spec, [draft(), final()])
                (s1, s2) = [b[1] for b in pol.begins]
                assert s1 == s2 and isinstance(s1, int) and 0 <= s1 < 2**32
                seeds[spec.trial_id] = s1
    assert len(set(seeds.values())) == len(seeds) == 12
    spec = make_spec("variance_n", difficulty="medium", rollout=1)
    _, again = play(spec, [draft(), final()])
    assert again.begins[0][1] == seeds[spec.trial_id]


def test_baseline_policy_seed_differs_by_difficulty(play):
    _, a = play(make_spec("baseline_n", difficulty="easy"), [final(GRAVITY_LAW)])
    _, b = play(make_spec("baseline_n", difficulty="medium"), [final(GRAVITY_LAW)])
    assert a.begins[0][1] != b.begins[0][1]
