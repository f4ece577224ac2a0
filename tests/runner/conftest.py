import pytest

from etc_fast.runner import parse_config

SMALL = {
    "name": "t",
    "workers": 2,
    "judge": "none",
    "grids": [
        {
            "model": "symbolic",
            "configurations": ["baseline_n", "variance_n", "random_c"],
            "tasks": ["m0_gravity", "m9_hooke_law"],
            "difficulties": ["easy", "medium"],
            "rollouts": 2,
        }
    ],
}


@pytest.fixture
def small_config(tmp_path):
    """24 trials into tmp_path/run."""
    return parse_config({**SMALL, "out": str(tmp_path / "run")}, source="small.yaml")
