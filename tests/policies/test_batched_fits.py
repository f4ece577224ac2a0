"""Batched residuals of the symbolic search's fits: every row has the bits of the single residual,
and a fit whose Jacobians come from the batch (``BatchedJacobian``) is the fit of the plain call."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from etc_fast.policies.symbolic import _expfamilies as ef
from etc_fast.policies.symbolic._forms import mono_values
from etc_fast.policies.symbolic._lsq import BatchedJacobian


def _data(n=14, m=3, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.3, 3.0, size=(n, m))
    y = 2.0 * A[:, 0] * (1.0 + 0.5 * np.exp(-0.7 * A[:, 1] / A[:, 2]))
    return A, y


def _steps(th, seed=1):
    """A Jacobian-like batch (one coordinate stepped per row) plus rows that differ everywhere."""
    rng = np.random.default_rng(seed)
    X = np.repeat(th[None], th.size, axis=0)
    X[np.arange(th.size), np.arange(th.size)] += 1.5e-8 * np.maximum(1.0, np.abs(th))
    return np.vstack([X, th + rng.normal(scale=0.3, size=(3, th.size)), th[None]])


def test_mono_rows_bits():
    A, _ = _data()
    P = np.array([[1.0, 0.0, -0.5], [2.0, 0.5, 0.0], [1.0, 0.0, -0.5], [0.37, -1.0, 1.5], [np.nan, 1.0, 0.0]])
    got = ef._mono_rows(A, P)
    for b, p in enumerate(P):
        assert np.array_equal(got[b], mono_values(A, p), equal_nan=True)


@pytest.mark.parametrize("name", ["expoff", "logistic", "mobius", "bose", "fermi", "gompertz", "biexp", "biexpoff"])
@pytest.mark.parametrize("free_m", [True, False])
def test_residual_rows_match_single(name, free_m):
    A, y = _data()
    m = A.shape[1]
    two = name in ("biexp", "biexpoff")
    cols = np.arange(m)
    _run, resid = ef._residual_fn(name, A, y, m, two, cols, free_m=free_m)
    gs = [-0.7, -0.2] if two else [-0.7]
    pm = [] if (name in ef._LOG_FAMILIES and free_m) else [1.0, 0.0, 0.0]
    th = np.array(gs + [0.0, 1.0, -1.0] + pm)
    X = _steps(th)
    R = resid(X)
    for b in range(X.shape[0]):
        assert np.array_equal(R[b], resid(X[b]))


@pytest.mark.parametrize("name", ["expoff", "mobius", "gompertz", "biexpoff"])
def test_template_values_rows_match_single(name):
    A, _ = _data()
    tmpl = ef.TEMPLATES[name]
    exps = ((1.0, 0.0, 0.0), (0.0, 1.0, -1.0))
    p0 = np.linspace(0.4, 1.3, tmpl.n_params) * np.where(np.arange(tmpl.n_params) % 2, -1.0, 1.0)
    X = _steps(p0)
    V = tmpl.values(A, exps, X)
    for b in range(X.shape[0]):
        assert np.array_equal(V[b], tmpl.values(A, exps, X[b]))


def test_batched_jacobian_is_scipys():
    A, y = _data()
    _run, resid = ef._residual_fn("expoff", A, y, 3, False, np.arange(3))
    th = np.array([-0.6, 0.0, 1.0, -1.0, 1.0, 0.0, 0.0])
    fd = BatchedJacobian(resid, resid)
    from scipy.optimize._numdiff import approx_derivative

    ref = approx_derivative(resid, th, method="2-point", f0=fd.fun(th))
    J = fd.jac(th)
    assert np.array_equal(J, ref) and J.flags.f_contiguous == ref.flags.f_contiguous


def test_fit_same_with_and_without_batch():
    """Trust-region fits (pure NumPy) of all seven parameters: the same to the bit. (SciPy 1.17's
    MINPACK ``"lm"`` path can itself end an ill-conditioned fit like this one differently depending
    on the process's earlier allocations, with or without a batch, so ``"lm"`` is checked on the
    well-posed fits below and through the Jacobians above.)"""
    method = "trf"
    A, y = _data()
    _run, resid = ef._residual_fn("expoff", A, y, 3, False, np.arange(3))
    th0 = np.array([-0.5, 0.0, 1.1, -0.9, 1.0, 0.0, 0.0])
    plain = least_squares(resid, th0, method=method, max_nfev=60, ftol=1e-14, xtol=1e-14, gtol=1e-15)
    fd = BatchedJacobian(resid, resid)
    fast = least_squares(fd.fun, th0, jac=fd.jac, method=method, max_nfev=60, ftol=1e-14, xtol=1e-14, gtol=1e-15)
    assert np.array_equal(plain.x, fast.x) and plain.nfev == fast.nfev and np.array_equal(plain.fun, fast.fun)


def test_lsq_and_polish_same_with_and_without_batch(monkeypatch):
    A, y = _data()
    _run, resid = ef._residual_fn("expoff", A, y, 3, False, np.arange(3))
    th0 = np.array([-0.5, 0.0, 1.1, -0.9, 1.0, 0.0, 0.0])
    def rates(x):  # the rate alone, the other parameters held (one vector, or a batch of them)
        rest = np.broadcast_to(th0[1:], (x.shape[0], th0.size - 1)) if x.ndim == 2 else th0[1:]
        return resid(np.concatenate([x, rest], axis=x.ndim - 1))

    fast = ef._lsq(rates, th0[:1], 80, y.size, batched=True)
    plain = ef._lsq(rates, th0[:1], 80, y.size)
    assert np.array_equal(fast, plain) and not np.array_equal(fast, th0[:1])
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import OUTERS

    form = Form(("a", "b", "c"), OUTERS[0], "compound", ((1.0, 0.0, 0.0), (0.0, 1.0, -1.0)), (1.9, 1.1, -0.6),
                spec=ef.TEMPLATES["expoff"])
    fast_form = ef._polish(form, A, y, 40)

    class Plain:  # the plain call: SciPy's own finite differences, one residual per step
        def __init__(self, fun, _batch):
            self.fun, self.jac = fun, "2-point"

    monkeypatch.setattr(ef, "BatchedJacobian", Plain)
    assert fast_form.params == ef._polish(form, A, y, 40).params


def _forms():
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import OUTERS

    at = ("a", "b", "c")
    by = {o.name: o for o in OUTERS}
    e1, e2, e3 = (1.0, 0.0, -2.0), (0.5, 1.0, 0.0), (0.0, 0.0, 1.0)
    return [
        Form(at, by["id"], "mono", (e1,), (1.7,)),
        Form(at, by["sqrt"], "sum", (e1, e2), (1.7, 0.4)),
        Form(at, by["log"], "sum", (e1, e2, e3), (1.7, -0.4, 0.9)),
        Form(at, by["recip"], "ratio", (e1, e2, e3), (1.7, 0.4, 0.3), n_num=2),
        Form(at, by["id"], "expmono", (e1,), (2.1, -0.6), exp_exps=e2),
        Form(at, by["atan_deg"], "mono", (e1,), (0.8,)),
        Form(at, by["inv_exp_m1"], "sum", (e2,), (0.9,)),
        Form(at, by["id"], "compound", ((1.0, 0.0, 0.0), (0.0, 1.0, -1.0)), (1.9, 1.1, -0.6),
             spec=ef.TEMPLATES["expoff"]),
    ]


@pytest.mark.parametrize("k", range(8))
def test_predict_rows_match_single(k):
    from etc_fast.policies.symbolic._forms import predict

    A, _ = _data()
    form = _forms()[k]
    X = _steps(np.asarray(form.params))
    V = predict(form, A, X)
    assert V.shape == (X.shape[0], A.shape[0])
    for b in range(X.shape[0]):
        assert np.array_equal(V[b], predict(form, A, X[b]), equal_nan=True)


@pytest.mark.parametrize("k", range(8))
def test_refit_relative_same_with_and_without_batch(monkeypatch, k):
    from etc_fast.policies.symbolic import _lsq
    from etc_fast.policies.symbolic._forms import predict

    A, _ = _data()
    form = _forms()[k]
    p_true = np.asarray(form.params)
    y = predict(form, A, p_true) * (1.0 + 0.01 * np.sin(np.arange(A.shape[0])))
    start = p_true * 1.3
    scale = _lsq.error_scale(y)
    fixed = {0: float(p_true[0])} if p_true.size > 2 else {}
    fast = _lsq.refit_relative(form, A, y, scale, start, fixed, 40)

    class Plain:
        def __init__(self, fun, _batch):
            self.fun, self.jac = fun, "2-point"

    monkeypatch.setattr(_lsq, "BatchedJacobian", Plain)
    plain = _lsq.refit_relative(form, A, y, scale, start, fixed, 40)
    assert fast[1] == plain[1] and np.array_equal(fast[0], plain[0])


def test_first_stable_is_the_stable_argsort_prefix():
    from etc_fast.policies.symbolic._search import _first_stable

    rng = np.random.default_rng(3)
    for size in (1, 5, 50, 4000):
        v = np.round(rng.normal(size=size), 1)  # many ties
        v[rng.random(size) < 0.2] = np.inf
        v[rng.random(size) < 0.05] = -0.0
        for k in (0, 1, 3, 40, size, size + 5):
            assert np.array_equal(_first_stable(v, k), np.argsort(v, kind="stable")[:k])


def test_signed_values_rows_bits():
    from etc_fast.policies.symbolic import _signed as sg
    from etc_fast.policies.symbolic._search import SearchLimits

    A, _ = _data()
    P = np.array([[[1.0, 0.0, -0.5], [2.0, 0.5, 0.0]], [[1.0, 0.0, -0.5], [2.0, 0.5000001, 0.0]],
                  [[0.37, -1.0, 1.5], [np.nan, 1.0, 0.0]], [[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]]])
    got = sg._values_rows(A, P)
    for b, p in enumerate(P):
        assert np.array_equal(got[b], sg._values(A, p, SearchLimits().signed_term_by_term), equal_nan=True)


@pytest.mark.parametrize("kind", ["sum", "ratio"])
def test_signed_refine_same_with_and_without_batch(monkeypatch, kind):
    """The signed family's exponent refinement: its Jacobians from the batch give the forms of the plain call."""
    from etc_fast.policies.symbolic import _signed as sg
    from etc_fast.policies.symbolic._forms import Form
    from etc_fast.policies.symbolic._grammar import OUTERS
    from etc_fast.policies.symbolic._search import SearchLimits

    rng = np.random.default_rng(3)
    A = rng.uniform(0.3, 3.0, size=(16, 3))
    if kind == "sum":
        z = 1.3 * A[:, 0] ** 1.37 * A[:, 1] + 0.4 * A[:, 2] ** -0.8
        form = Form(("a", "b", "c"), OUTERS[0], "sum", ((1.5, 1.0, 0.0), (0.0, 0.0, -1.0)), (1.3, 0.4))
    else:
        z = 2.0 * A[:, 0] ** 1.3 / (1.0 + 0.5 * A[:, 1] ** 2.2)
        form = Form(("a", "b", "c"), OUTERS[0], "ratio", ((1.5, 0.0, 0.0), (0.0, 2.0, 0.0)), (2.0, 0.5), n_num=1)
    kinds = ("pos", "pos", "pos")
    ws = sg.error_scale(z, 1.0)

    class Col:
        def __init__(self):
            self.forms = []

        def add(self, f):
            self.forms.append(f)

        def flush(self):
            pass

    fast = Col()
    sg._refine_exponents(fast, form, kinds, A, z, ws, SearchLimits())

    class Plain:  # the plain call: SciPy's own finite differences, one residual per step
        def __init__(self, fun, _batch):
            self.fun, self.jac = fun, "2-point"

    monkeypatch.setattr(sg, "BatchedJacobian", Plain)
    plain = Col()
    sg._refine_exponents(plain, form, kinds, A, z, ws, SearchLimits())
    assert fast.forms and [(f.exps, f.params) for f in fast.forms] == [(f.exps, f.params) for f in plain.forms]
