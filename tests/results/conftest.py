import pytest

from etc_fast.runner import parse_config, run_config
from tests.runner._fakes import FakeWorker

TINY = {
    "name": "tiny",
    "workers": 1,
    "judge": "none",
    "grids": [
        {
            "model": "symbolic",
            "configurations": ["baseline_n", "random_c"],
            "tasks": ["m0_gravity", "m9_hooke_law"],
            "difficulties": ["easy"],
            "rollouts": 2,
        }
    ],
}


@pytest.fixture
def fake_run(tmp_path):
    """A finished 8-trial run (stand-in worker) with its report, in tmp_path/run."""
    cfg = parse_config({**TINY, "out": str(tmp_path / "run")}, source="tiny.yaml")
    run_config(cfg, worker=FakeWorker(), tty=False)
    return tmp_path / "run"
