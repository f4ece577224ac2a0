"""Symbolic search and policy: recovers laws written only here, deterministic, bounded."""

import numpy as np
import pytest

from etc_fast.core import CONFIGURATIONS, Diagnostics, Observation, Policy
from etc_fast.evaluate._structural import StructuralJudge
from etc_fast.policies.symbolic import SymbolicPolicy, VariableDomain, is_confident, search
from etc_fast.tasks import task_view
from etc_fast.tasks._base import Task
from tests._tasks import make_task


def sobol_points(task: Task, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    from etc_fast.sampling import pool_unit

    X = task.unit_to_inputs(pool_unit(task.d, seed, 64)[:n])
    return X, task.truth(X)


LAWS = [
    ("power", "3.1*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)]),
    ("poly", "2*a + 5*a**3", [("a", "log", 0.01, 3)]),
    ("decay", "7*exp(-0.5*a*b)", [("a", "log", 0.1, 3), ("b", "log", 0.1, 3)]),
    ("trig", "4*sin(a)**2*b", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)]),
    ("root", "sqrt(a**2 + 3*b)", [("a", "log", 0.5, 5), ("b", "log", 0.5, 5)]),
    ("angle", "degrees(asin(0.8*sin(radians(a))/b))", [("a", "linear", 0, 90), ("b", "linear", 1, 1.5)]),
    ("saturation", "3*a/(0.7 + a)*b", [("a", "log", 0.01, 30), ("b", "log", 1, 10)]),
    ("offset", "a*340/(340 - b)", [("a", "log", 10, 100), ("b", "linear", 0, 100)]),
    ("lorentz", "1/sqrt(1 - (a/3)**2)", [("a", "linear", 0.1, 2.9)]),
    ("binomial", "2*b**2*(a + b)**3/c**2", [("a", "log", 0.1, 10), ("b", "log", 0.1, 10), ("c", "log", 0.1, 10)]),
    ("binomial_real_power", "0.3*(a + 2*b)**1.5/c**3", [("a", "log", 1, 10), ("b", "log", 1, 10), ("c", "log", 0.5, 2)]),
    ("binomial_signed", "0.05*c*(a - b)**2", [("a", "log", 0.005, 0.02), ("b", "log", 0.005, 0.02), ("c", "log", 0.005, 0.02)]),
]
# What the variables' descriptions say (the search reads angle units from them, not from domains).
ANGLES = {("trig", "a"): "angle in radians", ("angle", "a"): "angle of incidence in degrees"}
OUTPUT_UNIT = {"angle": "deg"}


def described_task(name, law, variables):
    """``make_task`` with the variable descriptions of :data:`ANGLES` (what an agent reads)."""
    return make_task(name, law, variables, descriptions={v: d for (n, v), d in ANGLES.items() if n == name})


def domains(task):
    return [VariableDomain(v.name, v.scale, v.low, v.high, ANGLES.get((task.name, v.name), v.description))
            for v in task.variables]


@pytest.mark.parametrize("name,law,variables", LAWS, ids=[x[0] for x in LAWS])
def test_search_recovers_law(name, law, variables):
    task = make_task(name, law, variables)
    X, y = sobol_points(task, 16)
    res = search(X, y, domains(task), output_unit=OUTPUT_UNIT.get(name))
    best = res.best
    assert best.error <= res.tol, (best.expression, best.error)
    assert is_confident(res)
    v = StructuralJudge().judge(best.source, task)
    assert v.credited, (best.expression, v.reason)


def test_candidates_are_in_the_language_and_agree():
    from etc_fast.expr import parse

    task = make_task("t", "2*a + 5*a**3", [("a", "log", 0.01, 3)])
    X, y = sobol_points(task, 10)
    res = search(X, y, domains(task))
    assert len({c.structure for c in res.candidates}) == len(res.candidates)
    for c in res.candidates[:8]:
        a = parse(c.expression, ["a"]).evaluate(X)
        b = parse(c.source, ["a"]).evaluate(X)
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
        assert c.source.startswith("def discovered_law(a):")
    assert [c.score for c in res.candidates] == sorted(c.score for c in res.candidates)


def test_negligible_terms_are_pruned():
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import make_atoms
    from etc_fast.policies.symbolic._search import OUTERS, SearchLimits, _Collector, _prune_terms

    task = make_task("t", "3*a**2*c**2 + 5*b**2*c**2", [("a", "log", 1, 10), ("b", "log", 1, 10), ("c", "log", 1, 10)])
    X, y = sobol_points(task, 16)
    doms = domains(task)
    view = tuple(a for atoms in make_atoms(doms) for a in atoms)
    col = _Collector(X, y, [d.name for d in doms], 1e-12, 1e-10)
    # the exact law plus a term whose coefficient the data cannot see
    col.add(Form(view, OUTERS[0], "sum", ((2.0, 0.0, 2.0), (0.0, 2.0, 2.0), (0.5, 1.6, 1.75)), (3.0, 5.0, 1e-19)))
    col.flush()
    _prune_terms(col, SearchLimits())
    best = col.ranked(1)[0][0]
    assert best.structure == "C*a**2*c**2 + C*b**2*c**2", best.expression
    assert StructuralJudge().judge(best.source, task).credited


def test_search_deterministic():
    task = make_task("t", "7*exp(-0.5*a*b)", [("a", "log", 0.1, 3), ("b", "log", 0.1, 3)])
    X, y = sobol_points(task, 12)
    r1 = search(X, y, domains(task))
    r2 = search(X, y, domains(task))
    assert [c.expression for c in r1.candidates] == [c.expression for c in r2.candidates]


def test_time_limit_fails_instead_of_cutting_the_search():
    from etc_fast.errors import InfrastructureError
    from etc_fast.policies.symbolic import SearchTimeLimit

    task = make_task("t", "4*sin(a)**2*b", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)])
    X, y = sobol_points(task, 12)
    with pytest.raises(SearchTimeLimit, match="wall-clock limit of 1e-09 s") as info:
        search(X, y, domains(task), time_limit_s=1e-9)
    assert isinstance(info.value, InfrastructureError) and info.value.kind == "search_time_limit"


def test_bad_input():
    with pytest.raises(ValueError, match="X must be"):
        search(np.ones((3, 2)), np.ones(3), [VariableDomain("a", "log", 1.0, 10.0)])
    with pytest.raises(ValueError, match="mode"):
        search(np.ones((3, 1)), np.ones(3), [VariableDomain("a", "log", 1.0, 10.0)], mode="magic")
    with pytest.raises(ValueError, match="time_limit_s"):
        SymbolicPolicy(time_limit_s=0)
    with pytest.raises(ValueError, match="time_budget_s is gone"):
        SymbolicPolicy(time_budget_s=10)
    with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
        SymbolicPolicy(colour="red")


def test_noise_sets_tolerance():
    # noisy data leave the scale a little off: the law's constant is hidden, so the judge allows it
    task = make_task("t", "C*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)], constants={"C": 3.1})
    X, y = sobol_points(task, 24)
    y = y * (1 + 1e-3 * np.random.default_rng(0).standard_normal(y.size))
    res = search(X, y, domains(task), noise=1e-3)
    assert res.best.structure == "C*a**2/b"
    assert StructuralJudge().judge(res.best.source, task).credited


def test_diagnostic_mode_uses_only_power_law_edits():
    task = make_task("t", "3.1*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)])
    X, y = sobol_points(task, 8)
    res = search(X, y, domains(task), mode="diagnostic", exponent_hint=[1.98, -1.01])
    assert res.best.structure == "C*a**2/b"
    assert all(c.family.startswith("id/") for c in res.candidates)


# ----------------------------------------------------------------------------------------
# Policy
# ----------------------------------------------------------------------------------------
def _obs(phase, task, X, y, *, turn=0, turns_left=7, allowed=("committee", "draft"), interpreter=True, draft=None,
         diagnostics=None, left=None, noisy=False, feedback_kind=None):
    if interpreter and phase != "final":
        allowed = tuple(allowed) + ("analysis",)
    return Observation(phase=phase, task=task_view(task), X=X, y=y, diagnostics=diagnostics, turn=turn, turns_left=turns_left,
                       measurements_used=len(y), measurements_left=left, allowed=frozenset(allowed), interpreter=interpreter,
                       draft=draft, noisy=noisy, feedback_kind=feedback_kind)


def _planner(task, policy, config="random_c", seed=0):
    """A minimal planner loop (bootstrap, random batches of 4, synthesis) around the policy."""
    from etc_fast.sampling import bootstrap_probes, candidate_pool

    cfg = CONFIGURATIONS[config]
    _, X = bootstrap_probes(task, 3)
    y = task.truth(X)
    pool = candidate_pool(task, seed, 256)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pool))
    policy.begin("explore", task_view(task), cfg, seed)
    draft, kinds, fkind = None, [], None
    for turn in range(cfg.exploration_turns):
        a = policy.act(_obs("explore", task, X, y, turn=turn, turns_left=cfg.exploration_turns - turn - 1,
                            interpreter=cfg.interpreter, feedback_kind=fkind))
        kinds.append(a.kind)
        if a.kind == "draft":
            draft = a.source
            break
        if a.kind == "analysis":  # the analysis uses the turn; no new measurements
            assert cfg.interpreter and a.code
            fkind = "analysis"
            continue
        fkind = "selection"
        assert a.kind == "committee" and 2 <= len(a.hypotheses) <= 5
        new = pool[order[4 * turn:4 * turn + 4]]
        X, y = np.vstack([X, new]), np.concatenate([y, task.truth(new)])
    policy.begin("synthesis", task_view(task), cfg, seed)
    a = policy.act(_obs("synthesis", task, X, y, allowed=("final",), interpreter=cfg.interpreter, draft=draft, turns_left=2))
    if a.kind == "analysis":
        a = policy.act(_obs("synthesis", task, X, y, allowed=("final",), interpreter=cfg.interpreter, draft=draft,
                            turn=1, turns_left=1, feedback_kind="analysis"))
    assert a.kind == "final"
    return a.source, len(y), kinds


@pytest.mark.parametrize("name,law,variables", LAWS[:4], ids=[x[0] for x in LAWS[:4]])
def test_policy_planner_recovers_law(name, law, variables):
    task = described_task(name, law, variables)
    pol = SymbolicPolicy()
    assert isinstance(pol, Policy)
    source, n, kinds = _planner(task, pol)
    assert kinds[-1] == "draft" and n <= 16, (kinds, n)
    assert StructuralJudge().judge(source, task).credited, source


@pytest.mark.parametrize("level", [1e-3, 3e-3])
def test_policy_told_only_noisy_uses_its_fixed_tolerance(level):
    """The policy never sees the noise level: one fixed tolerance serves every level it is told is noisy."""
    from etc_fast.policies.symbolic import ASSUMED_NOISE

    # C is the law's hidden constant: a value fitted to noisy data may differ from 3.1
    task = make_task("t", "C*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)], constants={"C": 3.1})
    X, y = sobol_points(task, 24)
    y = y * (1 + level * np.random.default_rng(0).standard_normal(y.size))
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["variance_c"], 0)
    a = pol.act(_obs("explore", task, X, y, noisy=True, turns_left=0))  # noisy: drafts on the last turn
    assert pol.last_search.tol == pytest.approx(3 * ASSUMED_NOISE)
    assert a.kind == "draft" and StructuralJudge().judge(a.source, task).credited, a.raw
    # told "noise-free", the same data are not explained to the noiseless tolerance: no draft yet
    b = pol.act(_obs("explore", task, X, y, noisy=False))
    assert pol.last_search.tol < 1e-6 and b.kind != "draft"


def test_observation_carries_no_noise_level():
    import dataclasses

    fields = {f.name for f in dataclasses.fields(Observation)}
    assert "noisy" in fields and "noise" not in fields


def test_policy_deterministic():
    task = make_task("t", "2*a + 5*a**3", [("a", "log", 0.01, 3)])
    assert _planner(task, SymbolicPolicy(seed=3)) == _planner(task, SymbolicPolicy(seed=3))


def test_synthesis_keeps_agreeing_draft_and_replaces_a_wrong_one():
    task = make_task("t", "3.1*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)])
    X, y = sobol_points(task, 12)
    pol = SymbolicPolicy()
    pol.begin("synthesis", task_view(task), CONFIGURATIONS["variance_c"], 0)
    keep = "def discovered_law(a, b):\n    return 9*a*a/b\n"
    assert pol.act(_obs("synthesis", task, X, y, allowed=("final",), draft=keep)).source == keep
    wrong = "def discovered_law(a, b):\n    return 9*a/b\n"
    src = pol.act(_obs("synthesis", task, X, y, allowed=("final",), draft=wrong)).source
    assert src != wrong and StructuralJudge().judge(src, task).credited


def test_interpreter_search_costs_an_analysis_turn():
    """With an interpreter the full search needs an analysis action first (a turn); without, never."""
    task = described_task("trig", "4*sin(a)**2*b", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)])
    X, y = sobol_points(task, 8)
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["random_c"], 0)
    first = pol.act(_obs("explore", task, X, y))
    assert first.kind == "analysis" and "np." in first.code
    from etc_fast.sandbox import run_code

    run = run_code(first.code, {"X": X, "y": y})
    assert run.ok and "log-log exponents" in run.stdout
    second = pol.act(_obs("explore", task, X, y, turn=1, feedback_kind="analysis"))
    assert second.kind in ("draft", "committee") and any(f.startswith(("mono:", "sum:")) for f in pol.last_search.families_tried)
    assert "sin(a)" in (second.source or " ".join(second.hypotheses))
    # without an interpreter: no analysis action, only the diagnostic search
    pol.begin("explore", task_view(task), CONFIGURATIONS["random_n"], 0)
    a = pol.act(_obs("explore", task, X, y, interpreter=False))
    assert a.kind in ("draft", "committee") and all(f.endswith(":id") for f in pol.last_search.families_tried)


def test_analysis_of_a_small_noiseless_table_fits_monomials_only():
    """Below margin + 2 finite rows no two-constant law can be validated: the analysed search fits
    the one-constant families only; from margin + 2 rows on, and on noisy tables, the whole grammar."""
    task = described_task("trig", "4*sin(a)**2*b", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)])
    X, y = sobol_points(task, 8)

    def analysed(n, noisy=False, y_rows=None, left=None):
        pol = SymbolicPolicy()
        pol.begin("explore", task_view(task), CONFIGURATIONS["variance_c"], 0)
        yy = y[:n] if y_rows is None else y_rows
        first = pol.act(_obs("explore", task, X[:n], yy, noisy=noisy, left=left))
        assert first.kind == "analysis"
        pol.act(_obs("explore", task, X[:n], yy, turn=1, feedback_kind="analysis", noisy=noisy, left=left))
        return pol.last_search.families_tried

    small = analysed(4)
    assert small and all(f.startswith("mono:") for f in small) and "mono:binomial" not in small
    assert any(f.startswith(("sum:", "signed:")) for f in analysed(5))
    y_nan = y[:5].copy()
    y_nan[0] = np.nan  # a row without a finite output does not count
    assert all(f.startswith("mono:") for f in analysed(5, y_rows=y_nan))
    assert any(f.startswith(("sum:", "signed:")) for f in analysed(4, noisy=True))
    # no measurement can follow (the budget is spent): the best law may be submitted, whole grammar
    assert any(f.startswith(("sum:", "signed:")) for f in analysed(4, left=0))
    assert all(f.startswith("mono:") for f in analysed(4, left=4))
    # the search itself: monomials_only keeps every outer and view of the monomials, nothing else
    doms = [VariableDomain("a", "linear", 0.1, 1.5), VariableDomain("b", "log", 1, 10)]
    full = search(X, y, doms, mode="full")
    mono = search(X, y, doms, mode="full", monomials_only=True)
    assert mono.families_tried == tuple(f for f in full.families_tried if f.startswith("mono:") and f != "mono:binomial")
    with pytest.raises(ValueError, match="monomials_only"):
        search(X, y, doms, mode="diagnostic", monomials_only=True)


def test_no_interpreter_uses_diagnostics():
    task = make_task("t", "3.1*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)])
    X, y = sobol_points(task, 8)
    diag = Diagnostics(sensitivities={"a": 2.0, "b": -1.0}, exponents={"a": 2.0, "b": -1.0}, intercept=None, r2=1.0,
                       residual_rms=0.0, n_used=8, text="")
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["variance_n"], 0)
    a = pol.act(_obs("explore", task, X[:6], y[:6], interpreter=False, diagnostics=diag))
    # the diagnostic search (the diagnostics' exponents as its hint) finds the law, but six records it
    # was fitted to are no evidence: the agent proposes a committee holding it instead of drafting
    assert a.kind == "committee" and "3.1*a**2/b" in a.hypotheses
    assert pol.last_search.families_tried and all(f.endswith(":id") for f in pol.last_search.families_tried)
    # the next batch, measured after that committee, is evidence the law did not see: now it drafts
    a = pol.act(_obs("explore", task, X, y, turns_left=6, interpreter=False, diagnostics=diag))
    assert a.kind == "draft" and StructuralJudge().judge(a.source, task).credited
    assert all(f.endswith(":id") for f in pol.last_search.families_tried)


def test_baseline_designs_experiments_then_submits():
    task = make_task("t", "7*exp(-0.5*a*b)", [("a", "log", 0.1, 3), ("b", "linear", 0.1, 3)])
    pol = SymbolicPolicy(seed=1)
    pol.begin("baseline", task_view(task), CONFIGURATIONS["baseline_c"], 0)
    X, y = np.empty((0, 2)), np.empty(0)
    allowed = ("experiment", "final")
    fkind, analyses = None, 0
    for r in range(10):
        a = pol.act(_obs("baseline", task, X, y, turn=r, turns_left=9 - r, allowed=allowed, feedback_kind=fkind))
        if a.kind == "final":
            break
        if a.kind == "analysis":  # an analysis uses the round
            analyses += 1
            fkind = "analysis"
            continue
        fkind = "experiment"
        assert a.kind == "experiment" and 1 <= len(a.points) <= 20
        for p in a.points:
            assert set(p) == {"a", "b"} and 0.1 <= p["a"] <= 3 and 0.1 <= p["b"] <= 3
        new = task.inputs_from_request(a.points)
        X, y = np.vstack([X, new]), np.concatenate([y, task.truth(new)])
    assert a.kind == "final" and StructuralJudge().judge(a.source, task).credited
    assert len(y) <= 24 and analyses >= 1
    pol.begin("final", task_view(task), CONFIGURATIONS["baseline_c"], 0)
    forced = pol.act(_obs("final", task, X, y, allowed=("final",), turns_left=0))
    assert forced.kind == "final"


# ----------------------------------------------------------------------------------------
# Bounded work: counts decide; a wall-clock limit only ever fails the trial
# ----------------------------------------------------------------------------------------
def _summary(res):
    return [(c.expression, c.error, c.score) for c in res.candidates], res.families_tried, res.n_forms


@pytest.mark.parametrize("name,law,variables", LAWS, ids=[x[0] for x in LAWS])
def test_time_limit_never_changes_a_result(name, law, variables):
    task = make_task(name, law, variables)
    X, y = sobol_points(task, 12)
    default = search(X, y, domains(task))
    limited = search(X, y, domains(task), time_limit_s=1e4)
    assert not default.capped
    assert _summary(default) == _summary(limited)


def test_search_past_its_time_limit_fails_the_trial():
    from etc_fast.protocol import TrialSpec, run_trial

    spec = TrialSpec(model="symbolic", config=CONFIGURATIONS["variance_c"], task="m0_gravity", difficulty="easy")
    rec = run_trial(spec, SymbolicPolicy(time_limit_s=1e-9))
    assert rec.status == "failed" and rec.error_kind == "search_time_limit", (rec.status, rec.error_kind, rec.error)
    assert "wall-clock limit" in rec.error
    ok = run_trial(spec, SymbolicPolicy())
    assert ok.status == "completed"


def test_policy_identical_at_any_time_limit():
    task = make_task("t", "7*exp(-0.5*a*b)", [("a", "log", 0.1, 3), ("b", "log", 0.1, 3)])
    assert _planner(task, SymbolicPolicy()) == _planner(task, SymbolicPolicy(time_limit_s=1e4)) \
        == _planner(task, SymbolicPolicy(time_limit_s=None))


def test_an_overdetermined_exact_fit_stops_the_costliest_families():
    """Noiseless: an exact fit (complexity <= 12) with more distinct points than parameters stops the
    signed and compound families; the cheaper families still run until the fit is validated (three
    outputs more than its parameters), when they stop too. Noisy records need the validated fit."""
    task = described_task("mono", "2.5*a**1.5/b**0.5", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)])
    doms = [VariableDomain("a", "linear", 0.1, 1.5), VariableDomain("b", "log", 1, 10)]

    def families(n, noise=0.0, repeat=False):
        X, y = sobol_points(task, n)
        if repeat:  # the first point measured again: a row, but no new point to test a fit on
            X, y = np.vstack([X, X[:1]]), np.concatenate([y, y[:1]])
            n += 1
        if noise:
            y = y * (1 + noise * np.random.default_rng(n).standard_normal(n))
        res = search(X, y, doms, noise=noise)
        assert res.best.structure == "C*a**1.5/b**0.5" and res.best.n_params == 3
        return {f.split(":")[0] for f in res.families_tried}

    everything = {"mono", "sum", "exp", "ratio", "factor", "factordiff", "signed", "cexp"}
    assert families(3) == everything  # as many points as parameters: no test passed yet
    assert families(3, repeat=True) == everything
    assert families(4) == families(5) == everything - {"signed", "cexp"}
    assert families(6) == {"mono"}  # validated
    assert families(4, noise=1e-3) == families(5, noise=1e-3) == everything


def test_a_repeated_search_is_answered_from_the_memo():
    """The same inputs give the result a second run would give, without running it; any input that
    the result depends on (records, noise, hint, narrowing, limits) is a new search."""
    from etc_fast.policies.symbolic import _search as S
    from etc_fast.policies.symbolic._search import SearchLimits

    task = described_task("mono", "2.5*a**1.5/b**0.5 + a", [("a", "linear", 0.1, 1.5), ("b", "log", 1, 10)])
    doms = [VariableDomain("a", "linear", 0.1, 1.5), VariableDomain("b", "log", 1, 10)]
    X, y = sobol_points(task, 5)
    first = search(X, y, doms)
    assert search(X.copy(), y.copy(), doms, time_limit_s=1e-9) is first  # a hit runs nothing, so no limit is reached
    others = [search(X, y, doms, noise=1e-3), search(X, y, doms, monomials_only=True),
              search(X, y, doms, mode="diagnostic"), search(X, y, doms, mode="diagnostic", exponent_hint=[1.5, -0.5]),
              search(X, y, doms, limits=SearchLimits(max_views=2)), search(X, y[::-1].copy(), doms)]
    assert all(o is not first for o in others) and len({id(o) for o in others}) == len(others)
    S._MEMO.clear()
    fresh = search(X, y, doms)
    assert fresh is not first and fresh.candidates == first.candidates


def test_search_limits_cap_the_work():
    from etc_fast.policies.symbolic import SearchLimits

    task = make_task("t", "2*a + 5*a**3", [("a", "log", 0.01, 3)])
    X, y = sobol_points(task, 10)
    full = search(X, y, domains(task))
    small = search(X, y, domains(task), limits=SearchLimits(max_forms=1))
    assert small.capped and not full.capped and small.families_tried == ("mono:id",)
    assert len(small.families_tried) < len(full.families_tried)
    assert small.best is not None
    fewer = search(X, y, domains(task), limits=SearchLimits(snap_combos=2, sum_pairs=1, sum_triples=1))
    assert fewer.n_forms < full.n_forms
    with pytest.raises(ValueError, match="snap_combos"):
        SearchLimits(snap_combos=0)
    with pytest.raises(ValueError, match="limits"):
        search(X, y, domains(task), limits={"max_forms": 3})
    with pytest.raises(ValueError, match="time_limit_s"):
        search(X, y, domains(task), time_limit_s=-1.0)


# ----------------------------------------------------------------------------------------
# Candidate scoring on the program kernel
# ----------------------------------------------------------------------------------------
def _all_kinds_of_forms():
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import OUTERS, Atom

    a, b = Atom(0, "a"), Atom(1, "b")
    sa, cd = Atom(0, "a", "sin"), Atom(1, "b", "cos", degrees=True)
    forms = []
    for outer in OUTERS:
        forms += [
            Form((a, b), outer, "mono", ((2.0, -1.5),), (0.7,)),
            Form((sa, cd), outer, "mono", ((1.0, 0.5),), (-0.2,)),
            Form((a, b), outer, "expmono", ((0.5, 0.0),), (1.3, -0.4), (1.0, 1.0)),
            Form((a, cd), outer, "sum", ((1.0, 0.0), (0.0, 2.0), (0.0, 0.0)), (0.3, -0.25, 0.05)),
        ]
    forms += _compound_forms()
    return forms


def _compound_forms():
    """One form of every compound-exponential template, with several prefactors."""
    from etc_fast.policies.symbolic._expfamilies import TEMPLATES
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import OUTERS, Atom

    a, b = Atom(0, "a"), Atom(1, "b")
    forms = []
    for tmpl in TEMPLATES.values():
        prm = tuple(0.9 - 0.35 * i for i in range(tmpl.n_params))  # mixed signs
        for pm in ((0.0, 0.0), (2.0, -1.0), (0.5, 0.0)):
            forms.append(Form((a, b), OUTERS[0], "compound", (pm, (1.0, -0.5)), prm, spec=tmpl))
    return forms


def test_compiled_forms_match_numpy_twin_and_rendered_text():
    from etc_fast.expr import parse
    from etc_fast.policies.symbolic._forms import evaluate_forms, predict
    from etc_fast.policies.symbolic._search import _render

    rng = np.random.default_rng(5)
    X = np.column_stack([rng.uniform(0.05, 1.5, 40), rng.uniform(1.0, 80.0, 40)])
    forms = _all_kinds_of_forms()
    atoms = sorted({at for f in forms for at in f.atoms}, key=repr)
    col = {at: j for j, at in enumerate(atoms)}
    table = np.column_stack([at.values(X) for at in atoms])
    comp = evaluate_forms(forms, table, col.__getitem__)
    assert comp.shape == (len(forms), len(X))
    for f, row in zip(forms, comp):
        A = np.column_stack([at.values(X) for at in f.atoms])
        ref = predict(f, A)
        np.testing.assert_allclose(row, ref, rtol=1e-12, atol=1e-300, equal_nan=True, err_msg=_render(f))
        text = parse(_render(f), ["a", "b"]).evaluate(X)
        np.testing.assert_allclose(row, text, rtol=1e-9, atol=1e-300, equal_nan=True, err_msg=_render(f))
    assert np.isnan(comp).any() and np.isfinite(comp).any()  # both defined and undefined points covered
    assert evaluate_forms([], table, col.__getitem__).shape == (0, len(X))


# ----------------------------------------------------------------------------------------
# Compound exponentials (laws written here, not taken from any suite)
# ----------------------------------------------------------------------------------------
COMPOUND_LAWS = [
    ("two_exponentials", "2.5*(exp(-0.2*a) - exp(-0.9*a))", [("a", "log", 0.1, 30)]),
    ("scaled_difference", "0.3*b*(exp(-0.05*a) - exp(-0.6*a))", [("a", "log", 0.2, 40), ("b", "log", 1, 100)]),
    ("saturation", "4*(1 - exp(-0.7*a*b))", [("a", "log", 0.05, 5), ("b", "log", 0.2, 4)]),
    ("planck_like", "0.8*a**2/(exp(1.7*a/b) - 1)", [("a", "log", 0.1, 20), ("b", "log", 0.5, 10)]),
    ("fermi_like", "3*b/(exp(2*a/b) + 1)", [("a", "log", 0.05, 10), ("b", "log", 0.5, 5)]),
    ("logistic", "50/(1 + 20*exp(-0.3*a))", [("a", "linear", 0, 40)]),
    ("gompertz", "7*exp(-2*exp(-0.5*a))", [("a", "linear", 0, 12)]),
    ("tanh_ratio", "(1 - exp(-2*a))/((1 + exp(-2*a))*a**2)", [("a", "log", 0.1, 4)]),
    ("stretched", "3*b**0.5*exp(-a**2.3*b)", [("a", "log", 0.1, 1.5), ("b", "log", 0.1, 2)]),
]


@pytest.mark.parametrize("name,law,variables", COMPOUND_LAWS, ids=[x[0] for x in COMPOUND_LAWS])
def test_search_recovers_compound_exponentials(name, law, variables):
    task = make_task(name, law, variables)
    X, y = sobol_points(task, 16)
    res = search(X, y, domains(task))
    best = res.best
    assert best.error <= res.tol, (best.expression, best.error)
    v = StructuralJudge().judge(best.source, task)
    assert v.credited, (best.expression, v.reason)


def test_compound_search_is_bounded_by_counts():
    from etc_fast.policies.symbolic import SearchLimits

    # a two-stage decay (a saturation 1 - exp(-k a b) is the factored family's, which stops the search first)
    task = make_task("t", "4*(exp(-0.7*a*b) - exp(-2*a*b))", [("a", "log", 0.05, 5), ("b", "log", 0.2, 4)])
    X, y = sobol_points(task, 16)
    full = search(X, y, domains(task))
    assert "cexp:id" in full.families_tried
    small = search(X, y, domains(task), limits=SearchLimits(cexp_basins=1, cexp_top=1, cexp_refine=1, cexp_snaps=1))
    assert small.n_forms < full.n_forms
    assert _summary(search(X, y, domains(task))) == _summary(full)  # deterministic
    with pytest.raises(ValueError, match="cexp_rates"):
        SearchLimits(cexp_rates=0)


def test_compound_families_leave_plain_laws_alone():
    """A law the simpler grammar explains exactly is not replaced by a compound one."""
    for name, law, variables in LAWS[:4]:
        task = make_task(name, law, variables)
        X, y = sobol_points(task, 16)
        res = search(X, y, domains(task))
        assert "cexp:id" not in res.families_tried or res.best.family.split("/")[1] in ("mono", "sum2", "sum3", "expmono"), name
        assert res.best.error <= res.tol


def test_candidate_errors_match_their_expressions():
    from etc_fast.expr import parse
    from etc_fast.policies.symbolic import relative_errors

    task = make_task("root", "sqrt(a**2 + 3*b)", [("a", "log", 0.5, 5), ("b", "log", 0.5, 5)])
    X, y = sobol_points(task, 14)
    res = search(X, y, domains(task))
    for c in res.candidates[:10]:
        r = relative_errors(parse(c.expression, ["a", "b"]).evaluate(X), y)
        assert c.max_error == pytest.approx(float(r.max()), rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(
    ("estimate", "basis", "expected"),
    [(None, None, "assumed"), (0.002, "replicates", 0.002), (0.03, "replicates", 0.03), (0.002, "residuals", 0.002),
     (0.03, "residuals", "assumed"), (1e-7, "replicates", 1e-4)],
)
def test_policy_reads_the_planners_noise_estimate(estimate, basis, expected):
    """A noise-aware planner's estimate in the diagnostics sets the level the policy fits to."""
    from etc_fast.policies.symbolic import ASSUMED_NOISE
    from etc_fast.policies.symbolic._policy import noise_level

    task = make_task("t", "C*a**2/b", [("a", "log", 0.1, 10), ("b", "log", 1, 100)], constants={"C": 3.1})
    X, y = sobol_points(task, 12)
    diag = Diagnostics(sensitivities={}, exponents=None, intercept=None, r2=None, residual_rms=None, n_used=0, text="",
                       noise_estimate=estimate, noise_basis=basis)
    want = ASSUMED_NOISE if expected == "assumed" else expected
    assert noise_level(_obs("explore", task, X, y, noisy=True, diagnostics=diag)) == pytest.approx(want)
    assert noise_level(_obs("explore", task, X, y, noisy=False, diagnostics=diag)) == 0.0
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["variance_c"], 0)
    pol.act(_obs("explore", task, X, y, noisy=True, diagnostics=diag, interpreter=False))
    assert pol.last_search.tol == pytest.approx(3 * want)




def test_system_law_literals_are_written_to_twelve_digits():
    from etc_fast.policies.symbolic._policy import snap_literals

    # two CPUs' last bits (the 15th-16th digit) give the same submitted text
    assert snap_literals("6.67400132069136e-05*mass1**1*distance**-1.5") == \
        snap_literals("6.674001320691159e-05*mass1**1*distance**-1.5") == "6.67400132069e-05*mass1**1*distance**-1.5"
    # names with digits and integer exponents are left alone; a bare leading point is read as a number
    assert snap_literals("x2**3 + .5*y1e") == "x2**3 + 0.5*y1e"
    assert snap_literals("1.000000000016159/(exp(1.0513000000249055e-14*w/T) + 1)") == \
        "1.00000000002/(exp(1.05130000002e-14*w/T) + 1)"


def test_a_runner_up_that_is_the_same_law_does_not_block_confidence():
    """Noiseless, a runner-up that is the best law itself (a fitted 1.00000000000004 where the
    best has 1) is not a rival; a different law that fits as well is, and under noise nothing
    changes (the gap decides there)."""
    import dataclasses

    task = make_task("t", "a*b/(a - b)", [("a", "log", 10, 100), ("b", "log", 1, 5)])
    X, y = sobol_points(task, 12)
    res = search(X, y, domains(task))
    best = res.best
    assert best.error <= res.exact_tol and is_confident(res)

    def with_rival(expression: str, r=res):
        rival = dataclasses.replace(best, expression=expression, error=4.6e-14, complexity=best.complexity + 1)
        return dataclasses.replace(r, candidates=(best, rival), forms=r.forms[:2])

    assert is_confident(with_rival(best.expression.replace("- b", "- 1.00000000000004*b")))
    assert not is_confident(with_rival(best.expression.replace("- b", "- 1.0001*b")))
    assert not is_confident(with_rival(f"({best.expression})*exp(1e-9*a)"))
    noisy = dataclasses.replace(res, exact_tol=1e-3)
    assert not is_confident(with_rival(best.expression.replace("- b", "- 1.00000000000004*b"), noisy))


def test_exact_fits_on_a_few_records_tie_whatever_the_last_bits():
    """On three records many two-term sums fit exactly; which of them the sums family fits must not
    follow the last bits of their residuals (another CPU's arithmetic): outputs moved by an ulp or
    two give the same candidates (constants to 6 digits). Without the snap they do not."""
    import re

    from etc_fast.policies.symbolic import _search as S

    doms = [VariableDomain("I_0", "log", 100.0, 2000.0), VariableDomain("theta", "linear", 1e-6, 1.5707963267948966)]
    # three records of a law the sums family does not hold: many two-term sums fit them exactly
    X = np.array([[447.213595499958, 0.7853986633974483], [945.7416090031758, 0.7853986633974483],
                  [447.213595499958, 1.1780974950961725]])
    y = np.array([894.4271909996922, 1891.4832180058784, 763.4412034028734])

    def candidates(yy):
        S._MEMO.clear()
        res = search(X, yy, doms, mode="diagnostic", exponent_hint=[1.0, -0.3905331272847124])
        return [re.sub(r"\d+\.\d+", lambda m: f"{float(m.group()):.6g}", c.expression) for c in res.candidates]

    rng = np.random.default_rng(0)

    def moved():
        yy = y.copy()
        for j in range(len(yy)):
            for _ in range(int(rng.integers(0, 3))):
                yy[j] = np.nextafter(yy[j], np.inf if rng.random() < 0.5 else -np.inf)
        return yy

    base = candidates(y)
    assert sum(len(re.findall(r"[+-] ", c)) == 1 for c in base) >= 3  # several exact two-term sums
    assert all(candidates(moved()) == base for _ in range(8))
    try:  # the residuals compared as they are: the ulps choose other sums
        snapped, S._snapped = S._snapped, lambda v, scale: v
        assert any(candidates(moved()) != base for _ in range(8))
    finally:
        S._snapped = snapped
        S._MEMO.clear()
