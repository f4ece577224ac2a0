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


@pytest.fixture(scope="session")
def shared_dir():
    """The shared specification folder beside the checkout (``<repo>/../shared``)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(os.path.dirname(here), "shared")
    if not os.path.isdir(path):
        pytest.skip(f"shared/ folder not found beside the checkout ({path})")
    return path
