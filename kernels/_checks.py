"""Input checks shared by the public kernel wrappers (plain Python; the compiled helpers are in ``_shared``)."""

from __future__ import annotations

import functools

import numpy as np

from kernels._shared import _first_outside_unit


def as_float_array(x, name: str, ndim: int, kinds: str = "fiub") -> np.ndarray:
    """``x`` as a C-contiguous float64 array, checked to have ``ndim`` dimensions and a dtype kind in ``kinds``.

    Raises:
        ValueError: when ``x`` has another number of dimensions.
        TypeError: when its dtype kind is not in ``kinds`` (default: real numbers or booleans).
    """
    x = np.asarray(x)
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}")
    if x.dtype.kind not in kinds:
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    return np.ascontiguousarray(x, dtype=np.float64)


def as_unit_coordinates(U, name: str, n_rows: int | None = None) -> np.ndarray:
    """``U`` as C-contiguous float64[n, d >= 1] with every entry in [0, 1] (``n_rows`` rows when given).

    Raises:
        ValueError: on another shape, naming it, or on the first entry outside [0, 1], naming it.
        TypeError: when ``U`` does not hold real numbers.
    """
    U = np.asarray(U)
    if U.ndim != 2 or U.shape[1] < 1 or (n_rows is not None and U.shape[0] != n_rows):
        want = "a 2-D array [n, d] with d >= 1" if n_rows is None else f"of shape [{n_rows}, d >= 1] (one row per point)"
        raise ValueError(f"{name} must be {want}, got shape {U.shape}")
    if U.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {U.dtype}")
    U = np.ascontiguousarray(U, dtype=np.float64)
    bad = _first_outside_unit(U)
    if bad >= 0:
        j, c = divmod(int(bad), U.shape[1])
        raise ValueError(f"{name} must lie in [0, 1]; {name}[{j}, {c}] = {U[j, c]!r}")
    return U


def check_k(k) -> int:
    """Batch size ``k`` as a non-negative int (booleans refused)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def check_fraction(top_fraction) -> float:
    """The eligible fraction as a float in (0, 1]."""
    f = float(top_fraction)
    if not (0.0 < f <= 1.0):
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction!r}")
    return f


def check_keep_edges(max_keep, min_keep, edge_lo, edge_hi, power) -> tuple[float, float, float]:
    """Check the fit-filter counts and the boundary ramp; returns ``(edge_lo, edge_hi, power)`` as floats."""
    if int(min_keep) < 1 or int(max_keep) < int(min_keep):
        raise ValueError(f"need 1 <= min_keep <= max_keep, got min_keep={min_keep}, max_keep={max_keep}")
    lo, hi, pw = float(edge_lo), float(edge_hi), float(power)
    if not (hi > lo and pw > 0):
        raise ValueError(f"need edge_lo < edge_hi and power > 0, got {edge_lo}, {edge_hi}, {power}")
    return lo, hi, pw


def as_int64(name, a):
    """``a`` as a C-contiguous 1-D int64 array (returned as is when it already is one)."""
    if type(a) is np.ndarray and a.dtype == np.int64 and a.ndim == 1 and a.flags.c_contiguous:
        return a
    a = np.ascontiguousarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def as_packed_programs(ops, args, consts, prog_start, prog_len, const_start):
    """Packed programs (:mod:`kernels.programs`) as int64 / float64 1-D arrays, checked for consistent lengths."""
    ops = as_int64("ops", ops)
    args = as_int64("args", args)
    prog_start = as_int64("prog_start", prog_start)
    prog_len = as_int64("prog_len", prog_len)
    const_start = as_int64("const_start", const_start)
    consts = np.ascontiguousarray(consts, dtype=np.float64)
    if consts.ndim != 1:
        raise ValueError(f"consts must be one-dimensional, got shape {consts.shape}")
    if ops.shape != args.shape:
        raise ValueError(f"ops and args differ in length: {ops.shape[0]} vs {args.shape[0]}")
    n_prog = prog_start.shape[0]
    if prog_len.shape[0] != n_prog or const_start.shape[0] != n_prog:
        raise ValueError(
            "prog_start, prog_len and const_start must have one entry per program, got "
            f"{n_prog}, {prog_len.shape[0]}, {const_start.shape[0]}"
        )
    return ops, args, consts, prog_start, prog_len, const_start


def named_errors(fn):
    """Decorate a public wrapper so that every ValueError or TypeError it raises begins with its name.

    The message is changed in place (``"H_obs must be 2-D"`` becomes ``"calibrate: H_obs must be
    2-D"``), so the exception keeps its type and traceback; one raised by a nested public wrapper
    keeps that wrapper's name after this one's. A message that already begins with the name is left
    as it is. The cost is one Python call frame per call.
    """
    prefix = fn.__name__ + ": "

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            if exc.args and isinstance(exc.args[0], str) and not exc.args[0].startswith(prefix):
                exc.args = (prefix + exc.args[0], *exc.args[1:])
            raise

    return wrapper


def check_count(n, name: str) -> int | None:
    """An optional stated size (``None`` or a non-negative int, booleans refused)."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {n!r}")
    return int(n)


def check_points_last(P: np.ndarray, name: str, n_points, rows: str = "n_hyp") -> None:
    """Orientation of ``P`` [rows, n_points]: hypotheses along the rows, points along the columns.

    With ``n_points`` stated, ``P`` must have that many columns. Without it the rule is
    ``rows <= n_points`` (an empty ``P`` passes): a committee is not larger than the set of points it is compared at, so a
    matrix with more rows than columns is refused as transposed (a caller whose committee really
    outnumbers its points states ``n_points``).
    """
    n = check_count(n_points, "n_points")
    if n is not None:
        if P.shape[1] != n:
            raise ValueError(f"{name} must have shape ({rows}, n_points={n}), got {P.shape}")
    elif P.shape[0] > P.shape[1] and P.size:
        raise ValueError(
            f"{name} must have shape ({rows}, n_points) with {rows} <= n_points, got {P.shape}: {P.shape[0]} "
            f"{rows} at {P.shape[1]} points looks transposed (pass {name}.T), or state n_points={P.shape[1]} "
            f"when there are more {rows} than points"
        )


def check_points_first(X: np.ndarray, name: str, n_points, reads, cols: str = "d") -> None:
    """Orientation of ``X`` [n_points, cols]: points along the rows.

    With ``n_points`` stated, ``X`` must have that many rows. Without it, ``X`` with more columns
    rows (and at least one) is refused as transposed when fewer than all its columns are used: ``reads()`` is the
    number of leading columns the call uses (called only in that case, so the common call pays one
    comparison). A caller with fewer points than unused columns states ``n_points``.
    """
    n = check_count(n_points, "n_points")
    if n is not None:
        if X.shape[0] != n:
            raise ValueError(f"{name} must have shape (n_points={n}, {cols}), got {X.shape}")
    elif 0 < X.shape[0] < X.shape[1] and reads() < X.shape[1]:
        raise ValueError(
            f"{name} must have shape (n_points, {cols}), got {X.shape}: {X.shape[0]} points with {X.shape[1]} "
            f"columns of which only {reads()} are used looks transposed (pass {name}.T), or state "
            f"n_points={X.shape[0]}"
        )
