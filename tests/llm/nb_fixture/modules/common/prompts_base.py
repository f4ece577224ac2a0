# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
OBJECTIVE_PROMPT = """FIXTURE objective."""

ASSISTING_LAWS_DISCLAIMER = """FIXTURE disclaimer."""

RUN_EXPERIMENT_INSTRUCTION_WITHOUT_NOISE = """FIXTURE exact data."""

RUN_EXPERIMENT_INSTRUCTION_WITH_NOISE = """FIXTURE noisy data."""

SUBMISSION_REQUIREMENTS = """FIXTURE submit `{function_signature}` returning {return_description}.

{example}"""

SYMBOLIC_EQUIVALENCE_JUDGE_PROMPT = """FIXTURE judge.
Params:
{param_description}
One: {equation1}
Two: {equation2}"""
