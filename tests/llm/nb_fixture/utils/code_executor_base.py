# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
"""Fixture interpreter base (NewtonBench's structure, placeholder texts)."""

import ast
import io
import re
from contextlib import redirect_stdout


class CodeExecutorBase:
    def __init__(self, module_name, difficulty, system):
        self.module_name = module_name

    def extract_python_tag(self, llm_response):
        start_index = llm_response.rfind('<python>')
        if start_index == -1:
            return None
        end_index = llm_response.find('</python>', start_index)
        if end_index == -1:
            return None
        return llm_response[start_index + len('<python>'):end_index].strip()

    def validate_python_code(self, code):
        try:
            ast.parse(code)
            for pattern in [r'import\s+os', r'open\(']:
                if re.search(pattern, code, re.IGNORECASE):
                    return False, f"FIXTURE blocked {pattern}"
            return True, None
        except SyntaxError as e:
            return False, f"FIXTURE syntax: {e}"

    def execute_python_code(self, code):
        try:
            namespace = {}
            buf = io.StringIO()
            with redirect_stdout(buf):
                exec(code, namespace)
            return {'success': True, 'stdout': buf.getvalue().strip(), 'code': code}
        except Exception as e:
            return {'success': False, 'error_type': 'fixture_error', 'error_message': str(e)}
