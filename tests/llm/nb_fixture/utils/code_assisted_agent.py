# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Fixture code-assisted agent (NewtonBench's loop structure, placeholder texts)."""

import json
import re

from .code_executor import CodeExecutor
from .call_llm_api import call_llm_api


def conduct_code_assisted_exploration(module, model_name, noise_level, difficulty, system, law_version=None, trial_info=None):
    code_executor = CodeExecutor(module_name=module.__name__.split('.')[-1], difficulty=difficulty, system=system)
    max_turns = 10
    system_prompt = create_code_assisted_system_prompt(module, difficulty, system, max_turns)
    messages = [{"role": "system", "content": system_prompt}]
    task_prompt = module.get_task_prompt(system, is_code_assisted=True, noise_level=noise_level)
    messages.append({"role": "user", "content": task_prompt})
    chat_history = [{"role": "system", "content": system_prompt}, {"role": "user", "content": task_prompt}]
    num_experiments = 0
    trial_completed = False
    for turn in range(max_turns):
        if trial_completed:
            break
        code_executor.reset_turn_counter()
        turn_completed = False
        while not turn_completed and code_executor.can_execute_python():
            turn_reminder = f"FIXTURE reminder: experiment or python, {'law'} when sure."
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"] += "\n\n" + turn_reminder
            else:
                messages.append({"role": "user", "content": turn_reminder})
            response, reasoning_content, tokens = call_llm_api(messages, model_name, trial_info=trial_info)
            if response is None:
                response = ""
            if reasoning_content and reasoning_content.strip():
                combined_content = f"[[FIXTURE r]]{reasoning_content}[[FIXTURE a]]{response}"
            else:
                combined_content = response
            chat_history.append({"role": "assistant", "content": combined_content})
            if response and "<final_law>" in response and "</final_law>" in response:
                trial_completed = True
                turn_completed = True
                break
            python_pos = response.rfind('<python>')
            experiment_pos = response.rfind('<run_experiment>')
            code_result = code_executor.process_llm_response(response)
            if code_result['has_python_tag'] and python_pos > experiment_pos:
                feedback = code_executor.format_execution_feedback(code_result)
                messages.append({"role": "assistant", "content": combined_content})
                messages.append({"role": "user", "content": feedback})
            else:
                messages.append({"role": "assistant", "content": combined_content})
                if response and "<run_experiment>" in response and "</run_experiment>" in response:
                    experiment_result = run_experiment_from_response(module, response, system, noise_level, difficulty, law_version)
                    if experiment_result:
                        num_experiments += len(experiment_result) if isinstance(experiment_result, list) else 1
                        experiment_message = format_experiment_results(experiment_result)
                        if messages and messages[-1]["role"] == "user":
                            messages[-1]["content"] += "\n\n" + experiment_message
                        else:
                            messages.append({"role": "user", "content": experiment_message})
                else:
                    reminder_message = f"FIXTURE: one action please. {code_executor.get_turn_usage_info()}"
                    if messages and messages[-1]["role"] == "user":
                        messages[-1]["content"] += "\n\n" + reminder_message
                    else:
                        messages.append({"role": "user", "content": reminder_message})
                turn_completed = True
                break
        if not turn_completed and not code_executor.can_execute_python():
            turn_completed = True
    else:
        if not trial_completed:
            final_prompt = f"FIXTURE final: signature {module.FUNCTION_SIGNATURE} please."
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"] += "\n\n" + final_prompt
            else:
                messages.append({"role": "user", "content": final_prompt})
            response, reasoning_content, tokens = call_llm_api(messages, model_name, trial_info=trial_info)
            chat_history.append({"role": "assistant", "content": response})
    return {"status": "completed" if trial_completed else "max_turns_reached",
            "submitted_law": extract_final_law(chat_history, module), "chat_history": chat_history}


def create_code_assisted_system_prompt(module, difficulty, system, max_turns):
    code_assisted_system_prompt = f"""FIXTURE code system prompt, {max_turns} rounds on {system}.
Second line."""
    return code_assisted_system_prompt


def run_experiment_from_response(module, response, system, noise_level, difficulty, law_version=None):
    try:
        start_index = response.rfind('<run_experiment>')
        if start_index == -1:
            return None
        end_index = response.find('</run_experiment>', start_index)
        if end_index == -1:
            return None
        try:
            exp_data = json.loads(response[start_index + len('<run_experiment>'):end_index].strip())
            if isinstance(exp_data, list):
                return [module.run_experiment_for_module(**exp, noise_level=noise_level, difficulty=difficulty,
                                                         system=system, law_version=law_version) for exp in exp_data]
            return module.run_experiment_for_module(**exp_data, noise_level=noise_level, difficulty=difficulty,
                                                    system=system, law_version=law_version)
        except json.JSONDecodeError:
            return None
    except Exception:
        return None


def format_experiment_results(experiment_result):
    if experiment_result is None:
        return "FIXTURE error"
    if isinstance(experiment_result, list):
        if all(r is None for r in experiment_result):
            return "FIXTURE all failed"
        import json
        return f"<<out>>\n{json.dumps(experiment_result)}\n<</out>>" + " first=" + json.dumps(experiment_result[0] if experiment_result else {})
    import json
    return f"<<out>>\n{json.dumps(experiment_result)}\n<</out>>" + " single=" + json.dumps(experiment_result)


def extract_final_law(chat_history, module):
    for message in reversed(chat_history):
        if message.get('role') == 'assistant' and '<final_law>' in message.get('content', ''):
            content = message['content']
            last_start = content.rfind('<final_law>')
            last_end = content.find('</final_law>', last_start)
            if last_end == -1:
                continue
            match = re.findall(r'(def discovered_law.*?(?=\ndef|\Z))', content[last_start + 11:last_end].strip(), re.DOTALL)
            if match:
                return match[-1].strip()
    return f"{module.FUNCTION_SIGNATURE} return FIXTURE_NAN"
