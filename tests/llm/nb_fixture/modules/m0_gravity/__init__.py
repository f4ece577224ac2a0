from .prompts import get_task_prompt, FUNCTION_SIGNATURE, PARAM_DESCRIPTION
