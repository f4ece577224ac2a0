# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Fixture vanilla agent (NewtonBench's loop structure, placeholder texts)."""

import re
import json

from utils.call_llm_api import call_llm_api

BASE_PROMPT = """FIXTURE vanilla system prompt.
Line two says there are {max_turns} rounds; braces {{kept}} survive formatting."""


def parse_experiment_request(response_text):
    start_index = response_text.rfind('<run_experiment>')
    if start_index == -1:
        return []
    end_index = response_text.find('</run_experiment>', start_index)
    if end_index == -1:
        return []
    content = response_text[start_index + len('<run_experiment>'):end_index].strip()
    try:
        experiments = json.loads(content)
        if isinstance(experiments, list):
            return experiments
        elif isinstance(experiments, dict):
            return [experiments]
        return []
    except Exception:
        return []


def _extract_final_law(response_text, function_signature):
    last_start = response_text.rfind('<final_law>')
    if last_start == -1:
        return False, f"{function_signature} return FIXTURE_NAN"
    last_end = response_text.find('</final_law>', last_start)
    if last_end == -1:
        return False, f"{function_signature} return FIXTURE_NAN"
    final_content = response_text[last_start + len('<final_law>'):last_end].strip()
    function_match = re.findall(r'(def discovered_law.*?(?=\ndef|\Z))', final_content, re.DOTALL)
    if function_match:
        return True, function_match[-1].strip()
    return False, f"{function_signature} return FIXTURE_NAN"


def _call_llm_and_process_response(messages, model_name, trial_info):
    response_text, reasoning_response, tokens = call_llm_api(messages, model_name=model_name, trial_info=trial_info)
    if response_text is None:
        response_text = ""
    if reasoning_response and reasoning_response.strip():
        combined_content = f"<<FIXTURE reasoning>>{reasoning_response}<<FIXTURE answer>>{response_text}"
    else:
        combined_content = response_text
    messages.append({"role": "assistant", "content": combined_content})
    return messages, tokens, response_text


def conduct_exploration(module, model_name, noise_level, difficulty='easy', system='vanilla_equation', law_version=None, max_turns=10, trial_info=None):
    base_prompt = BASE_PROMPT.format(max_turns=max_turns)
    if "nemotron" in model_name:
        base_prompt = "FIXTURE switch \n" + base_prompt
    messages = [{"role": "system", "content": base_prompt}]
    messages.append({"role": "user", "content": module.get_task_prompt(system, noise_level=noise_level)})
    num_experiments_run = 0
    for turn in range(max_turns):
        messages, tokens, response_text = _call_llm_and_process_response(messages, model_name, trial_info)
        is_submitted, submitted_law = _extract_final_law(response_text, module.FUNCTION_SIGNATURE)
        if is_submitted:
            return {"status": "completed", "submitted_law": submitted_law, "rounds": turn + 1, "chat_history": messages}
        experiments_to_run = parse_experiment_request(response_text)
        if experiments_to_run:
            num_experiments_run += len(experiments_to_run)
            results = []
            for exp in experiments_to_run:
                result = module.run_experiment_for_module(**exp, noise_level=noise_level, difficulty=difficulty, system=system, law_version=law_version)
                if system == "vanilla_equation":
                    result = "{:.15e}".format(result)
                results.append(result)
            output_str = f"<<FIXTURE output>>\n{json.dumps(results)}\n<</FIXTURE output>>"
            messages.append({"role": "user", "content": output_str})
        else:
            messages.append({"role": "user", "content": "FIXTURE: that reply was not an action."})
    final_prompt = "FIXTURE: rounds are over, send the law."
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"] += "\n\n" + final_prompt
    else:
        messages.append({"role": "user", "content": final_prompt})
    messages, tokens, response_text = _call_llm_and_process_response(messages, model_name, trial_info)
    _, submitted_law = _extract_final_law(response_text, module.FUNCTION_SIGNATURE)
    return {"status": "max_turns_reached", "submitted_law": submitted_law, "rounds": max_turns, "chat_history": messages}
