"""Evaluation: sandboxed replay of a submission, NewtonBench RMSLE with coverage, and judges."""

from etc_fast.evaluate._evaluation import TAUS, Evaluation, IntegrityError, evaluate_submission, median_relative_error
from etc_fast.evaluate._judge import Judge, Verdict
from etc_fast.evaluate._judge_client import judge_server
from etc_fast.evaluate._judges import JUDGES, NoJudge, create_judge
from etc_fast.evaluate._structural import JUDGE_VERSION

__all__ = [
    "JUDGE_VERSION",
    "judge_server",
    "Evaluation",
    "IntegrityError",
    "TAUS",
    "evaluate_submission",
    "median_relative_error",
    "Judge",
    "Verdict",
    "JUDGES",
    "NoJudge",
    "create_judge",
]
