# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Fixture judge call (NewtonBench's structure, placeholder texts)."""

import re

from utils.call_llm_api import call_llm_api
from .prompts_base import SYMBOLIC_EQUIVALENCE_JUDGE_PROMPT


def llm_symbolic_equivalence_judge(llm_formula_str, gt_formula_str, param_description, judge_model_name="nemotron-ultra", trial_info=None):
    for attempt in range(1, 4):
        prompt = SYMBOLIC_EQUIVALENCE_JUDGE_PROMPT.format(equation1=gt_formula_str, equation2=llm_formula_str, param_description=param_description)
        messages = [{"role": "system", 'content': "FIXTURE think"}] if "nemotron" in judge_model_name else []
        messages.append({"role": "user", "content": prompt})
        response, _, _ = call_llm_api(messages, model_name=judge_model_name, temperature=0.6, trial_info=trial_info)
        m = re.search(r'ANSWER:\s*(YES|NO)', (response or "").strip().upper())
        if m:
            return m.group(1) == "YES"
    return False
