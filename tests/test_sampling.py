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

# SHA-256 (array_sha256) of each module's 5000-point evaluation grid. Any change of the grid
# (seeding, draw order, mapping, library behaviour, machine) must show up here.
GRID_SHA256 = {
    "m0_gravity": "f172e568f3661f76ae0985e97170dc85d072aea4d36629351b07a4a77bd8ef05",
    "m1_coulomb_force": "08fdb7e6b256c1ec4f7769610da9587c951bd94cc71b8a1374f6845766a5b526",
    "m2_magnetic_force": "1f115731caa5bec3e090c919706bcaf9b61c77e6257303bf08247e1fad6c5677",
    "m3_fourier_law": "46c314bb2134c06558fb45e2189b36bd40f6784d2e732f47c01a08a2d8236a48",
    "m4_snell_law": "ffd92a4e4308a7f323a04576b17c75cde3ac8a2ab84d1da5a6f119671240bf48",
    "m5_radioactive_decay": "e635767103fdfd4a1a4aba5b0d17c04f52d678748f709a29b89e6f78e16b0593",
    "m6_underdamped_harmonic": "bc63a0629c3323e19acb9a7beceab01e449a4b81c3966e2a9ac1addc2593fac0",
    "m7_malus_law": "0eb35e8d28dfdd6824bbe6fd35ae3b6ec35f6124908b450a7f2ec08df016a62c",
    "m8_sound_speed": "24017c26df8376945d53e4e79e06d8d001e5274af79abd083af1b0b31096a9c9",
    "m9_hooke_law": "915f21aa907712c7def56d6a2c0e842663e0fa535f15279fed85760723fb4702",
    "m10_be_distribution": "83ce3b3bde2aa76f7d9d71b110e9ec3561e239a9b7bc3f952fdcc72047bdee8f",
    "m11_heat_transfer": "eda27759d79c91bc7aa752a99a6d57317501a9ec4685b247edb31afd5b6bde6b",
}
# 2048-point pools of a 3-variable task (m0_gravity), seeds 0 and 1, in task and unit coordinates.
POOL_SHA256 = {
    0: "b7ba339b067920616d247c735cd04f88cea76aa0a3f9a65fe1b2e1df074abdce",
    1: "eced60dea283c295bbcbeafda85f57578b3fc3b568f8bae9e7f6111390f48ead",
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
