"""Deterministic point sets: pinned hashes, bootstrap probes, domain mapping, grids in domain."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.sampling import (
    GRID_SIZE,
    POOL_SIZE,
    array_sha256,
    bootstrap_probes,
    bootstrap_unit,
    candidate_pool,
    evaluation_grid,
    grid_seed,
    pool_unit,
)
from etc_fast.tasks import MODULES, Variable, get_task

# SHA-256 (array_sha256) of each module's 5000-point evaluation grid. The grids are built from integer
# generator output and exactly rounded operations only (etc_fast._portable), so these are the same on
# every CPU and every supported NumPy/SciPy version; .ci/run runs this file a second time with NumPy's
# widest SIMD level switched off to check it. Any change of the grid (seeding, draw order, mapping)
# must show up here.
GRID_SHA256 = {
    "m0_gravity": "cdc6608f3b519ebee2cf52b251a57b118409106abf9f54d7f068edfa54ec76a9",
    "m1_coulomb_force": "76beb5867ac6d8af24b6c68ecfdf469721ad87044fefea210f104245e6a7c28e",
    "m2_magnetic_force": "b6f7bb660aaaf629a6bd3561c62e55d60ff50efec39b6c8ea3d0675df68ac35a",
    "m3_fourier_law": "ac654117ec6ae994b1de351a98f61cbd92463fc5a484677aa0d0329fe1ae2320",
    "m4_snell_law": "ffd92a4e4308a7f323a04576b17c75cde3ac8a2ab84d1da5a6f119671240bf48",
    "m5_radioactive_decay": "c8c02d1437cc03080e5a4527bfc4e0bac8fef1728424c22935660b52d4a45882",
    "m6_underdamped_harmonic": "d63d372834f61c8b7cecf168b794bbbc4f37eef12e85a2f51321a0804afd7259",
    "m7_malus_law": "3aa216d053379198adc872bf6c7267cbf5c5b522d3ca771697f351b656f0f83a",
    "m8_sound_speed": "7d79e53b4854b4cf4b8793640ec81a8784cb5624427efa84d42b2f255765bf1c",
    "m9_hooke_law": "b88d7f9ab62e53db57c262a829e32b2e9997e108968cf50e31711100b03c1a63",
    "m10_be_distribution": "7ecd184c9510097b96c7d3368df50b4bb15640732a713c54a7f73b117e17f3d0",
    "m11_heat_transfer": "1dbb74803f40ea8d628326da4ab277ea8e64b3bd9ad5f1b025e9ac348de754ec",
}
# 2048-point pools of a 3-variable task (m0_gravity), seeds 0 and 1, in task and unit coordinates.
POOL_SHA256 = {
    0: "10cc5963e521f28bf3c2db6a444afcdd3d5d985f96d15d22877641e9182d6998",
    1: "d8526e27a151d082157fc1350536b89ac197665dc74eb72d73f76dfd194b7904",
}
POOL_UNIT_SHA256 = {
    0: "ad5e1945bee348c8695fab9af8092dccf04cef6b6f114210e66d7a74a3f56cab",
    1: "bf555fdd6af4dcd22d26a495ee4709cfe8babe0a554219ebff65aa3175b82972",
}


@pytest.mark.parametrize("module", MODULES)
def test_grid_hash_pinned(module):
    grid = evaluation_grid(get_task(module))
    assert grid.shape == (GRID_SIZE, get_task(module).d)
    assert array_sha256(grid) == GRID_SHA256[module]


@pytest.mark.parametrize("seed", [0, 1])
def test_pool_hash_pinned(seed):
    task = get_task("m0_gravity")
    pool = candidate_pool(task, seed)
    assert pool.shape == (POOL_SIZE, 3)
    assert array_sha256(pool) == POOL_SHA256[seed]
    assert array_sha256(pool_unit(3, seed)) == POOL_UNIT_SHA256[seed]


def test_pool_and_grid_deterministic_and_seed_dependent():
    task = get_task("m3_fourier_law")
    np.testing.assert_array_equal(candidate_pool(task, 7), candidate_pool(task, 7))
    assert not np.array_equal(candidate_pool(task, 7), candidate_pool(task, 8))
    np.testing.assert_array_equal(evaluation_grid(task), evaluation_grid(task))
    # shared by difficulty and law version: the grid belongs to the module
    np.testing.assert_array_equal(evaluation_grid(task), evaluation_grid(get_task("m3_fourier_law", "hard", "v2")))
    assert grid_seed("m0_gravity") != grid_seed("m1_coulomb_force")
    assert not np.array_equal(evaluation_grid(task), evaluation_grid(task, grid_version="other"))


def test_pool_unit_in_unit_cube_and_prefix_stable():
    U = pool_unit(4, 3)
    assert U.shape == (POOL_SIZE, 4) and (U >= 0).all() and (U < 1).all()
    np.testing.assert_array_equal(pool_unit(4, 3, 256), pool_unit(4, 3)[:256])  # Sobol: same prefix


@pytest.mark.parametrize("module", MODULES)
def test_grid_and_pool_inside_domains(module):
    task = get_task(module)
    for X in (evaluation_grid(task), candidate_pool(task, 0)):
        for k, v in enumerate(task.variables):
            assert (X[:, k] >= v.low).all() and (X[:, k] <= v.high).all(), (module, v.name)


def test_log_scale_grid_is_log_uniform():
    x = evaluation_grid(get_task("m9_hooke_law"))[:, 0]
    # log-uniform on [1e-3, 1]: each decade holds about a third of the points
    counts = np.histogram(np.log10(x), bins=[-3, -2, -1, 0])[0]
    assert (np.abs(counts / x.size - 1 / 3) < 0.03).all()


@pytest.mark.parametrize(
    "module,d,n",
    [("m9_hooke_law", 1, 3), ("m10_be_distribution", 2, 3), ("m0_gravity", 3, 4), ("m3_fourier_law", 4, 5)],
)
def test_bootstrap_probe_counts(module, d, n):
    U, X = bootstrap_probes(get_task(module))
    assert U.shape == X.shape == (n, d)


def test_bootstrap_layout():
    U = bootstrap_unit(3)
    np.testing.assert_array_equal(U, [[0.5, 0.5, 0.5], [0.75, 0.5, 0.5], [0.5, 0.75, 0.5], [0.5, 0.5, 0.75]])
    U1 = bootstrap_unit(1)  # Hooke: centre, then up, then down
    np.testing.assert_array_equal(U1, [[0.5], [0.75], [0.25]])
    U5 = bootstrap_unit(2, n_min=5)
    np.testing.assert_array_equal(U5, [[0.5, 0.5], [0.75, 0.5], [0.5, 0.75], [0.25, 0.5], [0.5, 0.25]])


def test_bootstrap_probes_map_to_task_coordinates():
    task = get_task("m0_gravity")
    U, X = bootstrap_probes(task)
    # centre of a log domain is the geometric mean
    np.testing.assert_allclose(X[0], [np.sqrt(1e3), np.sqrt(1e3), np.sqrt(10.0)])
    np.testing.assert_allclose(task.inputs_to_unit(X), U)


@pytest.mark.parametrize(
    "var",
    [
        Variable("x", "x", None, "a log-scale input", "log", 1e-3, 1e3),
        Variable("y", "y", None, "a linear input", "linear", -2.0, 5.0),
        Variable("z", "z", None, "a wide log-scale input", "log", 1e8, 1e10),
    ],
    ids=["log", "linear", "log-large"],
)
def test_domain_mapping_round_trip(var):
    u = np.linspace(0.0, 1.0, 101)
    x = var.from_unit(u)
    assert x[0] == pytest.approx(var.low) and x[-1] == pytest.approx(var.high)
    assert np.all(np.diff(x) > 0)
    np.testing.assert_allclose(var.to_unit(x), u, atol=1e-12)
    if var.scale == "log":
        np.testing.assert_allclose(var.from_unit(0.5), np.sqrt(var.low * var.high))
        assert np.isnan(var.to_unit(np.array([-1.0]))[0])


def test_task_unit_round_trip():
    task = get_task("m8_sound_speed")
    U = pool_unit(3, 0, 64)
    np.testing.assert_allclose(task.inputs_to_unit(task.unit_to_inputs(U)), U, atol=1e-12)


def test_point_sets_use_no_numpy_transcendentals(monkeypatch):
    # The bit-identity promise rests on this: NumPy's SIMD exp/log/power differ between CPUs.
    expected = {m: array_sha256(evaluation_grid(get_task(m))) for m in ("m0_gravity", "m8_sound_speed")}
    pool = candidate_pool(get_task("m3_fourier_law"), 0)

    def refuse(*args, **kwargs):
        raise AssertionError("a point set used a NumPy transcendental function")

    for name in ("exp", "log", "log2", "log10", "power", "expm1", "log1p", "exp2"):
        monkeypatch.setattr(np, name, refuse)
    assert {m: array_sha256(evaluation_grid(get_task(m))) for m in expected} == expected
    np.testing.assert_array_equal(candidate_pool(get_task("m3_fourier_law"), 0), pool)
    bootstrap_probes(get_task("m0_gravity"))


def test_unit_doubles_follow_the_generator_mapping():
    from etc_fast._portable import unit_doubles

    u = unit_doubles(np.random.PCG64(123), 1000)
    assert ((u >= 0) & (u < 1)).all()
    # the same mapping Generator.random uses today; the grid relies only on the raw output
    np.testing.assert_array_equal(u, np.random.Generator(np.random.PCG64(123)).random(1000))


def test_rounded_fingerprint_survives_last_bit_differences():
    from etc_fast.sampling import rounded_sha256

    y = np.random.default_rng(5).lognormal(0.0, 10.0, 5000) * np.where(np.arange(5000) % 7 == 0, -1, 1)
    y[:3] = [np.nan, np.inf, 0.0]
    nudged = np.where(y == 0, y, np.nextafter(y, np.inf))  # one ulp, as another CPU might compute
    assert rounded_sha256(nudged) == rounded_sha256(y)
    assert rounded_sha256(y * (1 + 1e-7)) != rounded_sha256(y)
    assert rounded_sha256(y.reshape(1000, 5)) != rounded_sha256(y)


def test_rounded_fingerprint_kept_by_exact_bytes():
    """A repeated fingerprint comes from the memo: the same as computed afresh, and keyed by the
    array's bytes, shape and digits (an array changed in place is hashed again)."""
    from etc_fast import sampling

    y = np.random.default_rng(6).lognormal(0.0, 3.0, 300)
    sampling._ROUNDED.clear()
    first = sampling.rounded_sha256(y)
    assert len(sampling._ROUNDED) == 1 and sampling.rounded_sha256(y.copy()) == first
    fresh = sampling.rounded_sha256(y, digits=9)
    sampling._ROUNDED.clear()
    assert sampling.rounded_sha256(y, digits=9) == fresh == first
    assert sampling.rounded_sha256(y, digits=6) != first
    assert sampling.rounded_sha256(y.reshape(100, 3)) != first
    y[0] *= 2.0
    assert sampling.rounded_sha256(y) != first
