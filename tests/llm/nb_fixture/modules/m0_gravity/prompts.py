# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
from .m0_types import ExperimentSystem
from modules.common.prompts_base import (
	OBJECTIVE_PROMPT,
	ASSISTING_LAWS_DISCLAIMER,
	SUBMISSION_REQUIREMENTS,
	RUN_EXPERIMENT_INSTRUCTION_WITHOUT_NOISE,
	RUN_EXPERIMENT_INSTRUCTION_WITH_NOISE
)

PARAM_DESCRIPTION = """- mass1: FIXTURE first.
- mass2: FIXTURE second.
- distance: FIXTURE gap."""

FUNCTION_SIGNATURE = "def discovered_law(mass1, mass2, distance):"
RETURN_DESCRIPTION = "FIXTURE force"
EXAMPLE = """FIXTURE example {not a field}"""

VANILLA_EQUATION_PROMPT = """FIXTURE apparatus.

{RUN_EXPERIMENT_INSTRUCTION}

Request {{"mass1": ...}}"""

ORBITAL_MOTION_PROMPT = """FIXTURE orbit apparatus: mass1, mass2, distance, initial_velocity, duration, time_step.

{RUN_EXPERIMENT_INSTRUCTION}

Request {{"mass1": ..., "duration": ...}}

FIXTURE laws:
{ASSISTING_LAWS_DISCLAIMER}"""

LINEAR_MOTION_PROMPT = """FIXTURE line apparatus: mass1, mass2, distance, initial_velocity, duration, time_step.

{RUN_EXPERIMENT_INSTRUCTION}

FIXTURE laws:
{ASSISTING_LAWS_DISCLAIMER}"""

CODE_ASSISTED_PROMPT_INSTRUCTION = """FIXTURE python tool."""


def get_task_prompt(system, is_code_assisted=False, noise_level=0.0):
	prompts = [OBJECTIVE_PROMPT]
	if noise_level > 0.0:
		run_experiment_instruction = RUN_EXPERIMENT_INSTRUCTION_WITH_NOISE
	else:
		run_experiment_instruction = RUN_EXPERIMENT_INSTRUCTION_WITHOUT_NOISE
	if system == ExperimentSystem.VANILLA_EQUATION:
		prompts.append(VANILLA_EQUATION_PROMPT.format(RUN_EXPERIMENT_INSTRUCTION=run_experiment_instruction))
	elif system == ExperimentSystem.SIMPLE_SYSTEM:
		prompts.append(LINEAR_MOTION_PROMPT.format(ASSISTING_LAWS_DISCLAIMER=ASSISTING_LAWS_DISCLAIMER, RUN_EXPERIMENT_INSTRUCTION=run_experiment_instruction))
	elif system == ExperimentSystem.COMPLEX_SYSTEM:
		prompts.append(ORBITAL_MOTION_PROMPT.format(ASSISTING_LAWS_DISCLAIMER=ASSISTING_LAWS_DISCLAIMER, RUN_EXPERIMENT_INSTRUCTION=run_experiment_instruction))
	if is_code_assisted:
		prompts.append(CODE_ASSISTED_PROMPT_INSTRUCTION)
	prompts.append(SUBMISSION_REQUIREMENTS.format(function_signature=FUNCTION_SIGNATURE, return_description=RETURN_DESCRIPTION, example=EXAMPLE))
	return "\n\n".join(prompts)
