# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
from .m0_types import ExperimentSystem
from modules.common.prompts_base import (
	OBJECTIVE_PROMPT,
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

CODE_ASSISTED_PROMPT_INSTRUCTION = """FIXTURE python tool."""


def get_task_prompt(system, is_code_assisted=False, noise_level=0.0):
	prompts = [OBJECTIVE_PROMPT]
	if noise_level > 0.0:
		run_experiment_instruction = RUN_EXPERIMENT_INSTRUCTION_WITH_NOISE
	else:
		run_experiment_instruction = RUN_EXPERIMENT_INSTRUCTION_WITHOUT_NOISE
	if system == ExperimentSystem.VANILLA_EQUATION:
		prompts.append(VANILLA_EQUATION_PROMPT.format(RUN_EXPERIMENT_INSTRUCTION=run_experiment_instruction))
	if is_code_assisted:
		prompts.append(CODE_ASSISTED_PROMPT_INSTRUCTION)
	prompts.append(SUBMISSION_REQUIREMENTS.format(function_signature=FUNCTION_SIGNATURE, return_description=RETURN_DESCRIPTION, example=EXAMPLE))
	return "\n\n".join(prompts)
