"""The agent's one criterion and its drafting rule: evidence the law did not see (docs/guide/model-selection.md)."""

import numpy as np

from etc_fast.core import CONFIGURATIONS, Observation
from etc_fast.expr import parse
from etc_fast.policies.symbolic import SymbolicPolicy
from etc_fast.policies.symbolic._criterion import DECISIVE, criterion, criterion_ranked, implied_noise, predicts_unseen
from etc_fast.policies.symbolic._search import Candidate, SearchResult
from etc_fast.tasks import task_view
from tests._tasks import make_task


def _cand(expr: str, error: float, complexity: float, n_params: int, n_used: int = 12) -> Candidate:
    return Candidate(expr, expr, "id/mono", complexity, error, error, n_params, n_used, 0.0, "")


def _obs(task, X, y, *, turns_left=6, feedback_kind=None):
    return Observation(phase="explore", task=task_view(task), X=X, y=y, diagnostics=None, turn=0, turns_left=turns_left,
                       measurements_used=len(y), measurements_left=None,
                       allowed=frozenset(("committee", "draft", "analysis")), interpreter=True, draft=None, noisy=False,
                       feedback_kind=feedback_kind)


def _decide(pol: SymbolicPolicy, task, X, y, turns_left=6):
    """The policy's decision on these records (an analysis turn first, as a C agent takes one)."""
    a = pol.act(_obs(task, X, y, turns_left=turns_left))
    if a.kind == "analysis":
        a = pol.act(_obs(task, X, y, turns_left=turns_left - 1, feedback_kind="analysis"))
    return a


def test_the_criterion_weighs_fit_against_noise_and_fitted_numbers():
    # within the noise, the law with fewer fitted numbers and less complexity wins ...
    a, b = _cand("2*x*y", 0.010, 5.0, 3), _cand("2.0137*x**1.0041*y", 0.0098, 9.0, 3)
    res = SearchResult((b, a), 0.03, 12, 0.0, ())
    assert criterion_ranked(res, 0.01).best is a
    # ... a law that misses the records by 5 noise levels loses to a longer one that explains them
    c, d = _cand("3*x", 0.05, 3.0, 2), _cand("3*x + 0.5*y", 0.01, 7.0, 3)
    assert criterion_ranked(SearchResult((c, d), 0.03, 12, 0.0, ()), 0.01).best is d
    # the implied noise is the larger of the lab's level and the best law's residual scatter
    assert implied_noise(SearchResult((c, d), 0.03, 12, 0.0, ()), 0.01) == 0.05 * np.sqrt(12 / 10)
    assert implied_noise(SearchResult((d,), 0.03, 12, 0.0, ()), 0.1) == 0.1
    # one decade of likelihood: 1/0.35 complexity units at the same fit and fitted numbers
    e, f = _cand("x*y", 1e-15, 5.0, 2), _cand("x*y*y/y", 1e-15, 5.0 + DECISIVE / 0.35 + 0.01, 2)
    assert criterion(f, 1e-12) - criterion(e, 1e-12) > DECISIVE


def test_a_law_that_did_not_see_the_batch_must_predict_it():
    task = make_task("t", "3*a/b**2", [("a", "log", 1, 10), ("b", "log", 1, 10)])
    rng = np.random.default_rng(0)
    X = np.exp(rng.uniform(0, np.log(10), size=(10, 2)))
    y = task.truth(X)
    right, wrong = parse("3.5*a/b**2", ["a", "b"]), parse("3.5*a/b**1.9", ["a", "b"])
    assert predicts_unseen(right, X[:4], y[:4], X[4:], y[4:], 1e-12)
    assert not predicts_unseen(wrong, X[:4], y[:4], X[4:], y[4:], 1e-12)
    assert not predicts_unseen(right, X[:4], y[:4], X[:0], y[:0], 1e-12)  # nothing unseen: no evidence


def test_an_exact_fit_to_degenerate_first_records_is_not_drafted():
    """A law of a difference of two inputs, first records mostly at equal inputs (readings 0): many
    laws fit them exactly, so the agent proposes a committee; once a batch it did not see confirms
    its law, it drafts the law the judge credits."""
    from etc_fast.evaluate._structural import StructuralJudge

    task = make_task("diff", "1.6e-3*(a - b)", [("a", "linear", 1, 10), ("b", "linear", 1, 10)])
    X = np.array([[5.5, 5.5], [3.0, 3.0], [8.0, 8.0], [2.0, 2.0], [1.0, 10.0], [10.0, 1.0]])
    y = task.truth(X)
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["variance_c"], 0)
    a = _decide(pol, task, X, y)
    assert a.kind == "committee", a.raw
    new = np.array([[7.0, 2.0], [2.5, 9.0], [6.0, 4.0], [9.5, 3.5]])
    X2, y2 = np.vstack([X, new]), np.concatenate([y, task.truth(new)])
    a = _decide(pol, task, X2, y2, turns_left=4)
    assert a.kind == "draft", a.raw
    assert StructuralJudge().judge(a.source, task).credited, a.source


def test_the_first_records_alone_never_license_a_draft():
    """Even the true law, exact on the first records, is not drafted before it predicted a batch."""
    task = make_task("t", "3*a/b**2", [("a", "log", 1, 10), ("b", "log", 1, 10)])
    rng = np.random.default_rng(1)
    X = np.exp(rng.uniform(0, np.log(10), size=(8, 2)))
    pol = SymbolicPolicy()
    pol.begin("explore", task_view(task), CONFIGURATIONS["variance_c"], 0)
    assert _decide(pol, task, X, task.truth(X)).kind == "committee"
    new = np.exp(rng.uniform(0, np.log(10), size=(4, 2)))
    X2 = np.vstack([X, new])
    assert _decide(pol, task, X2, task.truth(X2), turns_left=4).kind == "draft"
