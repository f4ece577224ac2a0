"""Shared test configuration."""

import os

import pytest
from hypothesis import HealthCheck, settings

# Property tests stay bounded on a 2-core CI machine; JIT compilation of the first call must not
# count against Hypothesis' deadline.
settings.register_profile(
    "etc_fast",
    max_examples=int(os.environ.get("ETC_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile("etc_fast")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """Workers for ``-n auto`` (pyproject.toml's default): two, or one on a single core. More would
    not make a two-core machine faster, and the Ray and sandbox tests start processes of their own.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` chooses another number."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    return min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@pytest.fixture(scope="session")
def shared_dir():
    """The shared specification folder beside the checkout (``<repo>/../shared``)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(os.path.dirname(here), "shared")
    if not os.path.isdir(path):
        pytest.skip(f"shared/ folder not found beside the checkout ({path})")
    return path
