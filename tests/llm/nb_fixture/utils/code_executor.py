# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Fixture interpreter (NewtonBench's structure, placeholder texts)."""

from .code_executor_base import CodeExecutorBase


class CodeExecutor(CodeExecutorBase):
    def __init__(self, module_name, difficulty, system):
        super().__init__(module_name, difficulty, system)
        self.python_calls_this_turn = 0
        self.turn_number = 0
        self.max_python_calls_per_turn = 1

    def reset_turn_counter(self):
        self.python_calls_this_turn = 0
        self.turn_number += 1

    def can_execute_python(self):
        return self.python_calls_this_turn < self.max_python_calls_per_turn

    def increment_python_counter(self):
        self.python_calls_this_turn += 1

    def get_turn_usage_info(self):
        return f"[turn {self.turn_number} used {self.python_calls_this_turn} of {self.max_python_calls_per_turn}]"

    def process_llm_response(self, llm_response):
        python_code = self.extract_python_tag(llm_response)
        if not python_code:
            return {'has_python_tag': False, 'turn_usage_info': self.get_turn_usage_info()}
        is_valid, error_message = self.validate_python_code(python_code)
        if not is_valid:
            return {'has_python_tag': True, 'validation_success': False, 'error_message': error_message,
                    'python_code': python_code, 'turn_usage_info': self.get_turn_usage_info()}
        execution_result = self.execute_python_code(python_code)
        self.increment_python_counter()
        return {'has_python_tag': True, 'validation_success': True, 'execution_result': execution_result,
                'python_code': python_code, 'turn_usage_info': self.get_turn_usage_info()}

    def format_execution_feedback(self, processing_result):
        if not processing_result['validation_success']:
            return f"FIXTURE invalid: {processing_result['error_message']}\n{processing_result['python_code']}\n{processing_result['turn_usage_info']}"
        execution_result = processing_result['execution_result']
        if not execution_result['success']:
            return f"FIXTURE failed {execution_result['error_type']}: {execution_result['error_message']}\n{processing_result['python_code']}\n{processing_result['turn_usage_info']}"
        remaining_calls = self.max_python_calls_per_turn - self.python_calls_this_turn
        return f"<<py>>\n{execution_result['stdout'] if execution_result['stdout'] else 'FIXTURE nothing printed'}\n{execution_result['code']}\n{processing_result['turn_usage_info']}\n{'more' if remaining_calls > 0 else 'no more'}\n<</py>>"
