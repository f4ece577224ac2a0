"""Automatic planner diagnostics: probe sensitivities and a power-law fit.

Every planner variant is shown these numbers after each measurement batch (paper S1, eq. S1);
baselines never are. They are advisory: a power law fitted to a handful of points can be exactly
right (multiplicative laws) or badly wrong (sums, exponentials, angles).

* **Sensitivity** of variable ``k``: the log-ratio slope between the centre bootstrap probe (row 0)
  and the probe that moved only ``k`` (to u = 0.75, or to u = 0.25 when the 0.75 probe gives no
  usable value)::

      S_k = (ln y_k - ln y_0) / (ln x_k - ln x_0)

  defined only where both outputs and both inputs are positive and the inputs differ.
* **Power-law fit** ``ln y = b0 + sum_k bk ln xk`` by least squares over every observation with a
  finite positive output and finite positive inputs. Variables with any non-positive input among
  those rows are left out of the fit (the text says so). At least ``p + 1`` rows are needed for ``p``
  fitted variables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from etc_fast.core import Diagnostics

__all__ = [
    "compute_diagnostics",
    "probe_rows",
    "power_law_expression",
    "render_observations",
    "format_number",
    "with_planner_estimate",
    "describe_noisy_step",
]


def format_number(v: float, digits: int = 10) -> str:
    """Compact, round-trippable-enough text for one number (``nan``, ``inf`` spelled out)."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def probe_rows(d: int, n_probe: int) -> list[tuple[int | None, int | None]]:
    """Row indices of each variable's bootstrap probes within the first ``n_probe`` rows.

    The layout is that of :func:`etc_fast.sampling.bootstrap_unit`: row 0 is the centre, rows
    ``1..d`` move one variable to u = 0.75, rows ``d+1..2d`` move one variable to u = 0.25.

    Returns:
        One ``(row_075, row_025)`` pair per variable; ``None`` where that probe was not taken.
    """
    out = []
    for k in range(d):
        hi = 1 + k if 1 + k < n_probe else None
        lo = 1 + d + k if 1 + d + k < n_probe else None
        out.append((hi, lo))
    return out


def _log_ratio(x0: float, xk: float, y0: float, yk: float) -> float | None:
    vals = (x0, xk, y0, yk)
    if not all(math.isfinite(v) and v > 0 for v in vals):
        return None
    dx = math.log(xk) - math.log(x0)
    if dx == 0.0:
        return None
    s = (math.log(yk) - math.log(y0)) / dx
    return s if math.isfinite(s) else None


def _check_inputs(variables: Sequence[str], X: np.ndarray, y: np.ndarray, n_probe: int) -> tuple[np.ndarray, np.ndarray]:
    names = list(variables)
    if not names or not all(isinstance(v, str) for v in names):
        raise ValueError(f"compute_diagnostics: variables must be a non-empty sequence of names, got {variables!r}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[1] != len(names):
        raise ValueError(f"compute_diagnostics: X must have shape (n, {len(names)}) for {names}, got {X.shape}")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"compute_diagnostics: X has {X.shape[0]} rows but y has {y.shape[0]} values")
    if isinstance(n_probe, bool) or not isinstance(n_probe, (int, np.integer)) or n_probe < 0:
        raise ValueError(f"compute_diagnostics: n_probe must be a non-negative integer, got {n_probe!r}")
    return X, y


def compute_diagnostics(variables: Sequence[str], X: np.ndarray, y: np.ndarray, n_probe: int) -> Diagnostics:
    """Sensitivities from the bootstrap probes and a power-law fit on all observations.

    Args:
        variables: Variable names in signature order (length d).
        X: float64[n, d] observed inputs; the first ``n_probe`` rows are the bootstrap probes in
            :func:`etc_fast.sampling.bootstrap_unit` order.
        y: float64[n] observed outputs (NaN allowed).
        n_probe: Number of bootstrap rows at the top of ``X`` (fewer than ``n`` is fine; more
            than ``n`` is clipped to ``n``).

    Returns:
        A :class:`~etc_fast.protocol.Diagnostics` with the numbers and an advisory text.

    Raises:
        ValueError: if shapes disagree or ``n_probe`` is not a non-negative integer.
    """
    X, y = _check_inputs(variables, X, y, n_probe)
    names = list(variables)
    d = len(names)
    n = X.shape[0]
    n_probe = min(int(n_probe), n)

    # -- sensitivities -------------------------------------------------------------------
    sens: dict[str, float | None] = {}
    sens_from: dict[str, str] = {}
    for k, (hi, lo) in enumerate(probe_rows(d, n_probe)):
        s = None
        if n_probe >= 1:
            for row, tag in ((hi, "0.75"), (lo, "0.25")):
                if row is None:
                    continue
                s = _log_ratio(X[0, k], X[row, k], y[0], y[row])
                if s is not None:
                    sens_from[names[k]] = tag
                    break
        sens[names[k]] = s

    # -- power-law fit -------------------------------------------------------------------
    with np.errstate(invalid="ignore"):
        ypos = np.isfinite(y) & (y > 0)
    rows = np.flatnonzero(ypos)
    excluded: list[str] = []
    used_vars: list[int] = []
    for k in range(d):
        col = X[rows, k]
        if rows.size and not np.all(np.isfinite(col) & (col > 0)):
            excluded.append(names[k])
        else:
            used_vars.append(k)
    exponents: dict[str, float] | None = None
    intercept = r2 = rms = None
    n_used = int(rows.size)
    p = len(used_vars)
    fit_note = ""
    if n_used >= p + 1 and n_used >= 1:
        ly = np.log(y[rows])
        A = np.ones((n_used, p + 1))
        if p:
            # numpy's ix_ overloads take arguments of one kind only (all arrays or all lists): it accepts both
            A[:, 1:] = np.log(X[np.ix_(rows, used_vars)])  # type: ignore[arg-type]
        coef, _res, rank, _sv = np.linalg.lstsq(A, ly, rcond=None)
        if np.all(np.isfinite(coef)):
            resid = ly - A @ coef
            ss_res = float(resid @ resid)
            ss_tot = float(((ly - ly.mean()) ** 2).sum())
            rms = math.sqrt(ss_res / n_used)
            if ss_tot > 0:
                r2 = 1.0 - ss_res / ss_tot
            else:
                r2 = 1.0 if ss_res <= 1e-24 * max(1.0, float(ly @ ly)) else None
            intercept = float(coef[0])
            exponents = {names[k]: float(coef[1 + j]) for j, k in enumerate(used_vars)}
            if rank < p + 1:
                fit_note = (
                    f"the log-inputs are collinear (rank {rank} of {p + 1}), so the exponents are one of "
                    "many equally good solutions"
                )
            elif n_used == p + 1:
                fit_note = (
                    f"no spare observations ({n_used} rows for {p + 1} coefficients): the fit passes through every "
                    "point, so R^2 = 1 and the zero residual say nothing about whether a power law is right"
                )
        else:
            fit_note = "the least-squares fit did not give finite coefficients"
    else:
        fit_note = f"needs at least {p + 1} observations with positive output and inputs, have {n_used}"

    text = _advisory_text(names, sens, sens_from, exponents, intercept, r2, rms, n_used, excluded, fit_note, n)
    return Diagnostics(
        sensitivities=sens,
        exponents=exponents,
        intercept=intercept,
        r2=r2,
        residual_rms=rms,
        n_used=n_used,
        text=text,
        excluded=tuple(excluded),
        n_observations=n,
    )


def _rms_text(rms: float | None) -> str:
    """The power-law fit's residual RMS; one at rounding level (below 1e-12, where CPUs differ in
    the last bits of ``log``) is written as such, so the prompt is the same on every machine."""
    if rms is not None and math.isfinite(rms) and rms < 1e-12:
        return "below 1e-12 (rounding)"
    return format_number(rms, 4) if rms is not None else "nan"


def _advisory_text(
    names: list[str],
    sens: dict[str, float | None],
    sens_from: dict[str, str],
    exponents: dict[str, float] | None,
    intercept: float | None,
    r2: float | None,
    rms: float | None,
    n_used: int,
    excluded: list[str],
    fit_note: str,
    n: int,
) -> str:
    lines = [f"Automatic diagnostics on {n} observations (advisory, not ground truth):"]
    lines.append("Log-ratio sensitivity d ln(y) / d ln(x) from the bootstrap probes (one variable moved from the centre):")
    for name in names:
        s = sens[name]
        if s is None:
            lines.append(f"  {name}: not computable (needs positive outputs and inputs at both probes)")
        else:
            where = " (from the u=0.25 probe)" if sens_from.get(name) == "0.25" else ""
            lines.append(f"  {name}: {format_number(s, 6)}{where}")
    lines.append("Power-law fit ln(y) = b0 + sum_k b_k ln(x_k) by least squares:")
    if exponents is None:
        lines.append(f"  not available: {fit_note}")
    else:
        lines.append(f"  observations used: {n_used} (positive output and inputs)")
        lines.append(f"  b0 = {format_number(intercept, 8)}  (scale exp(b0) = {format_number(math.exp(intercept), 8) if intercept < 700 else 'overflow'})")
        for name, b in exponents.items():
            lines.append(f"  exponent of {name}: {format_number(b, 6)}")
        lines.append(f"  R^2 = {format_number(r2, 8) if r2 is not None else 'undefined'}, residual RMS in ln(y) = {_rms_text(rms)}")
        if fit_note:
            lines.append(f"  note: {fit_note}")
    if excluded:
        lines.append(f"  left out of the fit (non-positive or non-finite inputs): {', '.join(excluded)}")
    lines.append(
        "A good fit (R^2 near 1, small residual) suggests a product of powers; a poor fit suggests sums, "
        "exponentials, trigonometric or other structure. Treat these numbers as hints."
    )
    return "\n".join(lines)


def _point_text(names: Sequence[str], x: Sequence[float]) -> str:
    return "(" + ", ".join(f"{n}={format_number(v, 4)}" for n, v in zip(names, x)) + ")"


def with_planner_estimate(diag: Diagnostics, step, names: Sequence[str], check=None) -> Diagnostics:
    """``diag`` with what a noise-aware planner step estimated (noise level, where it explored).

    Args:
        diag: Diagnostics of the current observations.
        step: The :class:`etc_fast.acquisition.NoisyStepResult` of the batch just measured.
        names: Variable names.
        check: The :class:`etc_fast.acquisition.PredictionCheck` of that batch (None: none).

    The fields ``noise_estimate``, ``noise_basis`` and ``explored`` are set, and the text gains
    a paragraph an agent can act on: the noise level to fit to, and that the explored points
    are there to test the hypotheses where nothing was measured before.
    """
    import dataclasses

    est = step.noise
    explored = tuple(tuple(float(v) for v in row) for row in getattr(step, "explored_X", ()))
    lines = ["Planner's noise estimate (before the last batch): " + est.describe() + "."]
    if est.sigma is not None and est.sigma > 0:
        lines.append(
            f"  A law that is right should leave relative residuals of about {format_number(100 * est.sigma, 3)}% "
            "(RMS); differences between hypotheses smaller than about twice that cannot be told apart by one measurement."
        )
    if explored:
        pts = ", ".join(_point_text(names, x) for x in explored[:8])
        lines.append(f"  The planner explored {len(explored)} point(s) far from all earlier observations: {pts}. "
                     "Large residuals there point to a term the current hypotheses miss.")
    settled = bool(getattr(step, "settled", False))
    if check is not None:
        verdict = "within the noise" if check.passed else "more than the noise allows: a term may be missing"
        lines.append(f"  Before the last batch was measured, the best-fitting hypothesis {check.hypothesis} predicted its "
                     f"{check.n} measurement(s) with a relative RMS error of {format_number(100 * check.error, 3)}% "
                     f"({verdict}).")
    if settled:
        lines.append(f"  The laws that fit agree to within the noise wherever the planner could score, so it left "
                     f"{step.n_dropped} slot(s) of the last batch unmeasured.")
    return dataclasses.replace(
        diag, noise_estimate=est.sigma, noise_basis=est.basis, explored=explored, text=diag.text + "\n" + "\n".join(lines),
        prediction=None if check is None else (check.hypothesis, check.error, check.sigma, check.passed), settled=settled,
    )


def describe_noisy_step(step, start: int, names: Sequence[str], X_new: np.ndarray) -> str:
    """Plain-language account of a noise-aware batch (the selection feedback)."""
    n_pool = int(len(step.indices))
    n_exp = int(len(step.explored))
    n_rep = int(len(step.replicate_rows))
    parts = []
    if n_pool - n_exp:
        parts.append(f"{n_pool - n_exp} where the hypotheses disagree most")
    if n_exp:
        parts.append(f"{n_exp} to explore (rows {start + n_pool - n_exp + 1}-{start + n_pool}, far from earlier observations)")
    if n_rep:
        rows = ", ".join(str(int(r) + 1) for r in step.replicate_rows)
        parts.append(f"{n_rep} repeat(s) of observation(s) {rows} (rows {start + n_pool + 1}-{start + n_pool + n_rep})")
    lines = ["Batch: " + "; ".join(parts) + "." if parts else "Batch: empty."]
    lines.append("Noise estimate: " + step.noise.describe() + ".")
    lines.extend(f"Note: {n}." for n in step.notes)
    return "\n".join(lines)


def power_law_expression(diag: Diagnostics, digits: int = 12) -> str | None:
    """The fitted power law as a hypothesis-language expression, or ``None`` without a fit.

    Example: ``"exp(-17.5) * m1**1.0 * m2**1.0 * distance**-2.0"``.
    """
    if diag.exponents is None or diag.intercept is None or not math.isfinite(diag.intercept):
        return None
    terms = [f"exp({format_number(diag.intercept, digits)})"]
    for name, b in diag.exponents.items():
        if not math.isfinite(b):
            return None
        terms.append(f"{name}**({format_number(b, digits)})")
    return " * ".join(terms)


def render_observations(
    variables: Sequence[str],
    X: np.ndarray,
    y: np.ndarray,
    *,
    output_name: str = "y",
    sources: Sequence[str] | None = None,
    digits: int = 10,
    start: int = 0,
) -> str:
    """A plain-text table of observations, one row per measurement.

    Args:
        variables: Variable names (column headers), signature order.
        X: float64[n, d] inputs.
        y: float64[n] outputs.
        output_name: Header of the output column.
        sources: Optional per-row origin (``bootstrap``, ``planner``, ``experiment``).
        digits: Significant digits per number.
        start: Number of the first row (rows are numbered from ``start + 1``).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    names = list(variables)
    if X.ndim != 2 or X.shape[1] != len(names) or X.shape[0] != y.shape[0]:
        raise ValueError(f"render_observations: X {X.shape} and y {y.shape} do not match variables {names}")
    if sources is not None and len(sources) != y.shape[0]:
        raise ValueError(f"render_observations: {len(sources)} sources for {y.shape[0]} rows")
    header = ["#", *names, output_name] + (["source"] if sources is not None else [])
    body = []
    for i in range(y.shape[0]):
        row = [str(start + i + 1), *(format_number(v, digits) for v in X[i]), format_number(y[i], digits)]
        if sources is not None:
            row.append(str(sources[i]))
        body.append(row)
    widths = [max(len(h), *(len(r[j]) for r in body)) if body else len(h) for j, h in enumerate(header)]
    fmt = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    lines = [fmt(header)] + [fmt(r) for r in body]
    if not body:
        lines.append("(no observations)")
    return "\n".join(lines)
