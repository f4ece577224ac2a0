# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
from .prompts import get_task_prompt, FUNCTION_SIGNATURE, PARAM_DESCRIPTION
