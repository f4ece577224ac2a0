import math

import pytest

from etc_fast.protocol import CONFIGURATIONS
from etc_fast.runner import trials_frame

CONFIGS = ("baseline_n", "baseline_c", "variance_n", "pairwise_n", "random_n", "variance_c", "pairwise_c", "random_c")
_FAMILY = {name: (c.family, c.acquisition, c.interpreter) for name, c in CONFIGURATIONS.items()}


def row(configuration, task, rollout=0, *, model="m", difficulty="medium", credited=False, rmsle=0.5,
        complete=True, measurements=10, status="completed", sign_disagreements=0):
    family, acq, interp = _FAMILY.get(configuration, ("planner", "variance", True))
    finite = rmsle is not None and math.isfinite(rmsle)
    return {
        "trial_id": f"{model}-{difficulty}-{configuration}-{task}-{rollout}", "model": model,
        "configuration": configuration, "family": family, "acquisition": acq, "interpreter": interp,
        "task": task, "difficulty": difficulty, "law_version": "v0", "noise": 0.0, "rollout": rollout,
        "measurements": measurements, "valid": rmsle is not None, "error": None, "rmsle": rmsle,
        "complete": complete, "n_finite_target": 100, "n_finite_pred": 100 if complete else 50,
        "sign_disagreements": sign_disagreements,
        "q_0_01": complete and finite and rmsle <= 0.01, "q_0_1": complete and finite and rmsle <= 0.1,
        "q_1": complete and finite and rmsle <= 1, "credited": credited, "judge": "structural",
        "judge_reason": "", "status": status, "prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0,
        "wall_s": 0.1,
    }


@pytest.fixture
def make_frame():
    return lambda rows: trials_frame(rows)
