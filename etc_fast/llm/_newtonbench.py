"""Exact mode: the baselines' and the judge's messages from the user's NewtonBench checkout.

With ``llm.prompts: newtonbench`` (and ``llm.newtonbench_path: DIR`` or ``NEWTONBENCH_PATH``) every
text the free-form baselines and the LLM judge send is taken, at run time, from the NewtonBench
source tree the user points at; etc_fast ships none of it. Nothing of the checkout is imported and
its agents, API client and simulators never run. What is read:

* string constants: ``utils/vanilla_agent.py`` ``BASE_PROMPT``; each module's ``prompts.py`` and
  ``modules/common/prompts_base.py`` (apparatus, instructions, signature, examples, parameter
  descriptions, the judge prompt); the enumeration values of ``modules/common/types.py``;
* the message expressions inside the agents' loops, located by the variable they are assigned to
  (``final_prompt``, ``turn_reminder``, ``reminder_message``, ``output_str``, ``combined_content``)
  or by their place (the invalid-reply message, the value format, the NaN stand-in), evaluated as
  the expressions they are with only the values they name;
* a few pure text functions, compiled alone from the source with no builtins but the ones they
  use: ``create_code_assisted_system_prompt``, ``format_experiment_results``, each module's
  ``get_task_prompt``, and the interpreter's ``get_turn_usage_info``, ``format_execution_feedback``
  and ``validate_python_code``.

A checkout without one of these, or whose module does not have the task's signature, is
*incompatible*: :class:`NewtonBenchCheckoutError` says which file and name (the run exits 2). The
identity recorded for a run is the checkout's git commit (when it has a ``.git``) and the SHA-256 of
every file read.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import os
import re
import types
from pathlib import Path
from typing import Any

from etc_fast.core import TaskView
from etc_fast.llm._texts import DEFAULT_TEXTS, PROMPT_MODES, BaselineTexts, error_message

#: Environment variable naming the checkout when ``llm.newtonbench_path`` is not set.
ENV_VAR = "NEWTONBENCH_PATH"

_IMPORTABLE = {"json": json, "re": re, "ast": ast}


def _import(name: str, *args: Any, **kwargs: Any) -> Any:
    """The only imports the compiled text functions may make."""
    if name in _IMPORTABLE:
        return _IMPORTABLE[name]
    raise ImportError(f"exact mode: NewtonBench text function imports {name!r}, which is not allowed")


_SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("len", "str", "int", "float", "isinstance", "list", "dict", "all", "any", "hasattr", "print",
                 "Exception", "SyntaxError", "ValueError", "TypeError", "range", "enumerate", "zip", "repr")
}
_SAFE_BUILTINS["__import__"] = _import


class NewtonBenchCheckoutError(ValueError):
    """The NewtonBench checkout is missing or does not have what exact mode reads (one line)."""


def resolve_checkout(path: str | os.PathLike[str] | None, environ: Any = None) -> Path:
    """The checkout directory: ``path``, else ``$NEWTONBENCH_PATH``.

    Raises:
        NewtonBenchCheckoutError: neither is set, or the directory does not exist.
    """
    env = os.environ if environ is None else environ
    raw = path if path not in (None, "") else env.get(ENV_VAR)
    if raw in (None, ""):
        raise NewtonBenchCheckoutError(
            f"llm.prompts is 'newtonbench' but no NewtonBench checkout is given: set llm.newtonbench_path or {ENV_VAR}"
        )
    p = Path(str(raw)).expanduser()
    if not p.is_dir():
        raise NewtonBenchCheckoutError(f"NewtonBench checkout {str(p)!r} is not a directory")
    return p.resolve()


def _git_commit(root: Path) -> str | None:
    """The commit of ``root``'s ``.git`` (HEAD followed through one ref), without running git."""
    git = root / ".git"
    if git.is_file():  # a worktree or submodule: "gitdir: PATH"
        text = git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            git = (root / text[7:].strip()).resolve()
    head = git / "HEAD"
    if not head.is_file():
        return None
    ref = head.read_text(errors="replace").strip()
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return ref
    if not ref.startswith("ref:"):
        return None
    name = ref[4:].strip()
    f = git / name
    if f.is_file():
        sha = f.read_text(errors="replace").strip()
        return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None
    packed = git / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == name and re.fullmatch(r"[0-9a-f]{40}", parts[0]):
                return parts[0]
    return None


class _Checkout:
    """Parsed files of a checkout, each read once; records what was read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, ast.Module] = {}
        self.files: dict[str, str] = {}  # relative path -> sha256

    def tree(self, rel: str) -> ast.Module:
        if rel not in self._trees:
            f = self.root / rel
            if not f.is_file():
                raise NewtonBenchCheckoutError(f"NewtonBench checkout {str(self.root)!r} has no {rel}")
            data = f.read_bytes()
            self.files[rel] = hashlib.sha256(data).hexdigest()
            try:
                self._trees[rel] = ast.parse(data.decode("utf-8"), filename=rel)
            except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
                raise NewtonBenchCheckoutError(f"NewtonBench checkout: {rel} cannot be parsed ({exc})") from None
        return self._trees[rel]

    def fail(self, rel: str, what: str) -> NewtonBenchCheckoutError:
        return NewtonBenchCheckoutError(f"NewtonBench checkout {str(self.root)!r} is incompatible: {rel} has no {what}")

    # -- lookups ------------------------------------------------------------------------
    def constants(self, rel: str) -> dict[str, str]:
        """Module-level ``NAME = "..."`` string assignments, and names imported from
        ``modules.common.prompts_base`` (resolved in that file)."""
        out: dict[str, str] = {}
        for node in self.tree(rel).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("prompts_base") and rel != _PROMPTS_BASE:
                base = self.constants(_PROMPTS_BASE)
                for alias in node.names:
                    if alias.name in base:
                        out[alias.asname or alias.name] = base[alias.name]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        out[t.id] = node.value.value
        return out

    def constant(self, rel: str, name: str) -> str:
        found = self.constants(rel).get(name)
        if found is None:
            raise self.fail(rel, f"string constant {name}")
        return found

    def function(self, rel: str, name: str, cls: str | None = None) -> ast.FunctionDef:
        body: list[ast.stmt] = self.tree(rel).body
        if cls is not None:
            klass = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == cls), None)
            if klass is None:
                raise self.fail(rel, f"class {cls}")
            body = klass.body
        fn = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if fn is None:
            raise self.fail(rel, f"function {(cls + '.') if cls else ''}{name}")
        return fn

    def assigned(self, rel: str, fn: ast.FunctionDef, var: str) -> ast.expr:
        """The value of the first assignment to ``var`` (a plain name) in ``fn``."""
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets):
                return node.value
        raise self.fail(rel, f"assignment to {var} in {fn.name}")

    def evaluate(self, rel: str, node: ast.expr, env: dict[str, Any]) -> Any:
        code = compile(ast.Expression(body=node), str(self.root / rel), "eval")
        return eval(code, {"__builtins__": _SAFE_BUILTINS, "json": json}, dict(env))  # NewtonBench's own text expression, no builtins but _SAFE_BUILTINS

    def compile_function(self, rel: str, fn: ast.FunctionDef, glb: dict[str, Any]) -> Any:
        mod = ast.Module(body=[fn], type_ignores=[])
        ns: dict[str, Any] = {"__builtins__": _SAFE_BUILTINS, **glb}
        exec(compile(mod, str(self.root / rel), "exec"), ns)  # one pure text function of the checkout
        return ns[fn.name]


_VANILLA = "utils/vanilla_agent.py"
_CODE = "utils/code_assisted_agent.py"
_EXEC = "utils/code_executor.py"
_EXEC_BASE = "utils/code_executor_base.py"
_PROMPTS_BASE = "modules/common/prompts_base.py"
_TYPES = "modules/common/types.py"
_EVAL = "modules/common/evaluation.py"


def _user_content_constant(fn: ast.FunctionDef) -> str | None:
    """The content of the one ``{"role": "user", "content": "<constant>"}`` literal in ``fn``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if "content" in keys and "role" in keys:
                v = node.values[keys.index("content")]
                r = node.values[keys.index("role")]
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and isinstance(r, ast.Constant) and r.value == "user":
                    return v.value
    return None


def _format_constant(fn: ast.FunctionDef) -> str | None:
    """The string in the first ``"<constant>".format(...)`` call of ``fn``."""
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
            return node.func.value.value
    return None


def _returned_fstring(fn: ast.FunctionDef) -> ast.JoinedStr | None:
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            for elt in node.value.elts:
                if isinstance(elt, ast.JoinedStr):
                    return elt
    return None


def _prefix_constant(fn: ast.FunctionDef, var: str) -> str | None:
    """``"<constant>" + var`` assigned to ``var`` (the Nemotron prefix)."""
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)
                and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)
                and isinstance(node.value.left, ast.Constant) and isinstance(node.value.left.value, str)):
            return node.value.left.value
    return None


def _dict_value(fn: ast.FunctionDef, key: str) -> Any:
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=False):
                if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Constant):
                    return v.value
    return None


def _self_constant(fn: ast.FunctionDef, attr: str) -> Any:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == attr:
                    return node.value.value
    return None


class _Executor:
    """Stand-in for NewtonBench's CodeExecutor: the counters its text methods read."""

    def __init__(self, turn: int, calls: int, max_calls: int) -> None:
        self.turn_number = turn
        self.python_calls_this_turn = calls
        self.max_python_calls_per_turn = max_calls


class NewtonBenchTexts(BaselineTexts):
    """Every baseline and judge message built from a NewtonBench checkout (see the module doc).

    Raises:
        NewtonBenchCheckoutError: the checkout is missing or incompatible.
    """

    name = "newtonbench"

    def __init__(self, path: str | os.PathLike[str] | None = None, *, environ: Any = None) -> None:
        self.root = resolve_checkout(path, environ)
        c = self._c = _Checkout(self.root)
        self.commit = _git_commit(self.root)
        # vanilla agent
        self._base_prompt = c.constant(_VANILLA, "BASE_PROMPT")
        explore = c.function(_VANILLA, "conduct_exploration")
        self._nemotron_prefix = _prefix_constant(explore, "base_prompt")
        forced = c.assigned(_VANILLA, explore, "final_prompt")
        self._vanilla_forced = c.evaluate(_VANILLA, forced, {})
        invalid = _user_content_constant(explore)
        if invalid is None:
            raise c.fail(_VANILLA, "invalid-reply message in conduct_exploration")
        self._vanilla_invalid = invalid
        fmt = _format_constant(explore)
        if fmt is None:
            raise c.fail(_VANILLA, "value format in conduct_exploration")
        self._value_format = fmt
        self._vanilla_output = c.assigned(_VANILLA, explore, "output_str")
        stand_in = _returned_fstring(c.function(_VANILLA, "_extract_final_law"))
        if stand_in is None:
            raise c.fail(_VANILLA, "NaN stand-in in _extract_final_law")
        self._stand_in = stand_in
        self._vanilla_combined = c.assigned(_VANILLA, c.function(_VANILLA, "_call_llm_and_process_response"), "combined_content")
        # code-assisted agent
        self._code_system = c.compile_function(_CODE, c.function(_CODE, "create_code_assisted_system_prompt"), {})
        loop = c.function(_CODE, "conduct_code_assisted_exploration")
        self.code_max_turns = c.evaluate(_CODE, c.assigned(_CODE, loop, "max_turns"), {})
        self._turn_reminder = c.assigned(_CODE, loop, "turn_reminder")
        self._code_invalid = c.assigned(_CODE, loop, "reminder_message")
        self._code_forced = c.assigned(_CODE, loop, "final_prompt")
        self._code_combined = c.assigned(_CODE, loop, "combined_content")
        self._format_results = c.compile_function(_CODE, c.function(_CODE, "format_experiment_results"), {"json": json})
        # interpreter
        self._usage = c.compile_function(_EXEC, c.function(_EXEC, "get_turn_usage_info", "CodeExecutor"), {})
        self._feedback = c.compile_function(_EXEC, c.function(_EXEC, "format_execution_feedback", "CodeExecutor"), {})
        self._validate = c.compile_function(
            _EXEC_BASE, c.function(_EXEC_BASE, "validate_python_code", "CodeExecutorBase"), {"ast": ast, "re": re})
        self._error_type = _dict_value(c.function(_EXEC_BASE, "execute_python_code", "CodeExecutorBase"), "error_type")
        max_calls = _self_constant(c.function(_EXEC, "__init__", "CodeExecutor"), "max_python_calls_per_turn")
        self._max_calls = max_calls if isinstance(max_calls, int) else 1
        # task prompts, judge
        systems = {}
        for node in ast.walk(c.tree(_TYPES)):
            if isinstance(node, ast.ClassDef) and node.name == "ExperimentSystem":
                for st in node.body:
                    if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                        for t in st.targets:
                            if isinstance(t, ast.Name):
                                systems[t.id] = st.value.value
        if "VANILLA_EQUATION" not in systems:
            raise c.fail(_TYPES, "ExperimentSystem.VANILLA_EQUATION")
        self._systems = types.SimpleNamespace(**systems)
        self._judge_template = c.constant(_PROMPTS_BASE, "SYMBOLIC_EQUIVALENCE_JUDGE_PROMPT")
        judge_fn = c.function(_EVAL, "llm_symbolic_equivalence_judge")
        self._judge_switch: str | None = None
        for node in ast.walk(judge_fn):
            if isinstance(node, ast.Dict):
                keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
                if keys.count("role") and keys.count("content"):
                    r, v = node.values[keys.index("role")], node.values[keys.index("content")]
                    if isinstance(r, ast.Constant) and r.value == "system" and isinstance(v, ast.Constant) and isinstance(v.value, str):
                        self._judge_switch = v.value
        self._modules: dict[str, tuple[Any, dict[str, str]]] = {}

    # -- identity -------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """Where the texts come from: the checkout, its commit, the SHA-256 of each file read so far."""
        return {
            "prompts": self.name,
            "newtonbench_path": str(self.root),
            "newtonbench_commit": self.commit,
            "newtonbench_files": dict(sorted(self._c.files.items())),
        }

    def version(self) -> str:
        """One line naming the texts: the commit (``no-git`` without one) and a SHA-256 over the
        files read so far (path and content hash of each)."""
        blob = "\n".join(f"{k} {v}" for k, v in sorted(self._c.files.items()))
        return f"{self.commit or 'no-git'}+sha256:{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    def check_tasks(self, names: Any) -> None:
        """Load the module of every task name now (so an incompatible one fails before any trial)."""
        for n in names:
            self._module(str(n))

    # -- per module -----------------------------------------------------------------------
    def _module(self, name: str) -> tuple[Any, dict[str, str]]:
        if name not in self._modules:
            if not re.fullmatch(r"m\d+_\w+", name):
                raise NewtonBenchCheckoutError(
                    f"llm.prompts 'newtonbench' needs NewtonBench modules; task {name!r} is not one (use prompts: etc_fast)"
                )
            rel = f"modules/{name}/prompts.py"
            consts = self._c.constants(rel)
            fn = self._c.function(rel, "get_task_prompt")
            for needed in ("FUNCTION_SIGNATURE", "PARAM_DESCRIPTION"):
                if needed not in consts:
                    raise self._c.fail(rel, f"string constant {needed}")
            get = self._c.compile_function(rel, fn, {**consts, "ExperimentSystem": self._systems})
            self._modules[name] = (get, consts)
        return self._modules[name]

    def _signature(self, task: TaskView) -> str:
        _, consts = self._module(task.name)
        sig = consts["FUNCTION_SIGNATURE"]
        if sig.strip() != task.signature.strip():
            raise NewtonBenchCheckoutError(
                f"NewtonBench checkout {str(self.root)!r} is incompatible: modules/{task.name}/prompts.py has "
                f"signature {sig!r}, the task has {task.signature!r}"
            )
        return sig

    # -- opening --------------------------------------------------------------------------
    def system_prompt(self, max_turns: int, interpreter: bool, model: str = "", system: str | None = None) -> str:
        """NewtonBench's system message: ``BASE_PROMPT`` (vanilla agent) or
        ``create_code_assisted_system_prompt(module, difficulty, system, max_turns)``, called with the
        trial's system (``None``: vanilla_equation)."""
        if interpreter:
            return self._code_system(None, "easy", self._system_value(system), max_turns)
        text = self._base_prompt.format(max_turns=max_turns)
        if "nemotron" in model and self._nemotron_prefix is not None:
            text = self._nemotron_prefix + text
        return text

    def _system_value(self, system: str | None) -> str:
        """The checkout's ``ExperimentSystem`` value for ``system`` (``simple_system`` -> ``SIMPLE_SYSTEM``)."""
        if system in (None, "", "vanilla_equation"):
            return str(self._systems.VANILLA_EQUATION)
        value = getattr(self._systems, str(system).upper(), None)
        if value is None:
            raise self._c.fail(_TYPES, f"ExperimentSystem.{str(system).upper()}")
        return str(value)

    def task_prompt(self, task: TaskView, *, noisy: bool, interpreter: bool, system: str | None = None) -> str:
        """The module's ``get_task_prompt(system, is_code_assisted=..., noise_level=...)``; ``system``:
        the trial's NewtonBench system (``None``: the task's, else vanilla_equation)."""
        get, _ = self._module(task.name)
        self._signature(task)
        value = self._system_value(system or getattr(task, "system", None))
        return get(value, is_code_assisted=interpreter, noise_level=1.0 if noisy else 0.0)

    def check_system(self, name: str, system: str) -> None:
        """Fail now unless the module's ``get_task_prompt`` has an apparatus for ``system``: its text
        for the system must differ from its text for a system it does not know (which has no
        apparatus at all)."""
        get, _ = self._module(name)
        unknown = get("etc_fast: no such system", is_code_assisted=False, noise_level=0.0)
        if get(self._system_value(system), is_code_assisted=False, noise_level=0.0) == unknown:
            raise NewtonBenchCheckoutError(
                f"NewtonBench checkout {str(self.root)!r} is incompatible: modules/{name}/prompts.py "
                f"get_task_prompt has no {system} text"
            )

    def task_sections(self, task: TaskView, *, noisy: bool, interpreter: bool) -> list[str]:
        return [self.task_prompt(task, noisy=noisy, interpreter=interpreter)]

    # -- every turn -----------------------------------------------------------------------
    def turn_reminder(self) -> str:
        return self._c.evaluate(_CODE, self._turn_reminder, {})

    def turn_usage(self, turn: int, calls: int) -> str:
        return self._usage(_Executor(turn, calls, self._max_calls))

    def invalid_reply(self, interpreter: bool, turn: int = 0) -> str:
        if interpreter:
            return self._c.evaluate(_CODE, self._code_invalid, {"code_executor": _UsageView(self, turn, 0)})
        return self._vanilla_invalid

    def request_error(self, interpreter: bool, problem: str | None, turn: int = 0) -> str | None:
        # Code-assisted: no reply. Vanilla: NewtonBench's harness crashes and restarts the trial;
        # the nearest message it has is the invalid-reply one.
        return None if interpreter else self._vanilla_invalid

    def experiment_output(self, values: Any, *, interpreter: bool, single: bool = False) -> str | None:
        vals = [float(v) for v in values]
        if not interpreter:
            results = [self._value_format.format(v) for v in vals]
            return self._c.evaluate(_VANILLA, self._vanilla_output, {"results": results})
        result: Any = vals[0] if single and vals else vals
        if not result:  # NewtonBench's agent sends nothing for an empty or zero result
            return None
        return self._format_results(result)

    def _run_feedback(self, turn: int, calls: int, result: dict[str, Any]) -> str:
        ex = _Executor(turn, calls, self._max_calls)
        result = {**result, "turn_usage_info": self._usage(ex)}
        return self._feedback(ex, result)

    def python_success(self, stdout: str, code: str, turn: int) -> str:
        return self._run_feedback(turn, 1, {
            "has_python_tag": True, "validation_success": True, "python_code": code,
            "execution_result": {"success": True, "stdout": stdout.strip(), "code": code},
        })

    def python_failure(self, error: str, code: str, turn: int) -> str:
        return self._run_feedback(turn, 1, {
            "has_python_tag": True, "validation_success": True, "python_code": code,
            "execution_result": {"success": False, "error_type": self._error_type, "error_message": error_message(error)},
        })

    def python_invalid(self, problem: str, code: str, turn: int) -> str:
        return self._run_feedback(turn, 0, {
            "has_python_tag": True, "validation_success": False, "error_message": problem, "python_code": code,
        })

    def validation_message(self, code: str, fallback: str) -> str:
        ok, msg = self._validate(None, code)
        return fallback if ok or msg is None else str(msg)

    def forced_final(self, task: TaskView, interpreter: bool) -> str:
        if interpreter:
            sig = self._signature(task)
            return self._c.evaluate(_CODE, self._code_forced, {"module": types.SimpleNamespace(FUNCTION_SIGNATURE=sig)})
        return self._vanilla_forced

    def nan_law(self, task: TaskView) -> str:
        sig = self._signature(task)
        return self._c.evaluate(_VANILLA, self._stand_in, {"function_signature": sig})

    def combine_reasoning(self, reasoning: str, content: str) -> str:
        return self._c.evaluate(_VANILLA, self._vanilla_combined, {"reasoning_response": reasoning, "response_text": content})

    # -- the judge ------------------------------------------------------------------------
    def judge_messages(self, ground_truth: str, submitted: str, param_description: str, model: str = "",
                       task_name: str | None = None) -> list[dict[str, str]]:
        if task_name is not None:
            param_description = self._module(task_name)[1]["PARAM_DESCRIPTION"]
        messages: list[dict[str, str]] = []
        if "nemotron" in model and self._judge_switch:
            messages.append({"role": "system", "content": self._judge_switch})
        messages.append({"role": "user", "content": self.judge_prompt(ground_truth, submitted, param_description)})
        return messages

    def judge_prompt(self, ground_truth: str, submitted: str, param_description: str) -> str:
        return self._judge_template.format(equation1=ground_truth, equation2=submitted, param_description=param_description)


class _UsageView:
    """What ``reminder_message`` reads of the code executor: ``get_turn_usage_info()``."""

    def __init__(self, texts: NewtonBenchTexts, turn: int, calls: int) -> None:
        self._texts, self._turn, self._calls = texts, turn, calls

    def get_turn_usage_info(self) -> str:
        return self._texts.turn_usage(self._turn, self._calls)


__all__ = ["ENV_VAR", "NewtonBenchCheckoutError", "NewtonBenchTexts", "make_texts", "resolve_checkout"]


def make_texts(prompts: str = "etc_fast", newtonbench_path: str | None = None) -> BaselineTexts:
    """The texts for ``llm.prompts`` (``etc_fast``: :data:`~etc_fast.llm._texts.DEFAULT_TEXTS`;
    ``newtonbench``: read from the checkout by :class:`NewtonBenchTexts`).

    Raises:
        ValueError: an unknown mode; NewtonBenchCheckoutError: a missing or incompatible checkout.
    """
    if prompts in (None, "etc_fast"):
        return DEFAULT_TEXTS
    if prompts == "newtonbench":
        return NewtonBenchTexts(newtonbench_path)
    raise ValueError(f"llm.prompts must be one of {', '.join(PROMPT_MODES)}, got {prompts!r}")
