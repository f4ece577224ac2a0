# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Placeholder of the API client; tests replace ``call_llm_api``."""


def call_llm_api(messages, model_name, trial_info=None, temperature=0.4):
    raise RuntimeError("the fixture makes no API call; a test patches call_llm_api")
