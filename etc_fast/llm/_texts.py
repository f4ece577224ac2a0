"""The messages of the free-form baselines and of the LLM judge.

:class:`BaselineTexts` holds every text a baseline agent or the judge sends, as methods, so that
one policy loop can speak either of two languages:

* :class:`BaselineTexts` itself (``llm.prompts: etc_fast``, the default): this project's wording,
  with the *content* and shape of NewtonBench's messages (the same instructions, the suggested
  limit of 20 points per experiment, no countdown, the same reply shapes for experiments and the
  interpreter, the forced final appended to the last message, the judge's worked examples in
  NewtonBench's order);
* :class:`etc_fast.llm._newtonbench.NewtonBenchTexts` (``llm.prompts: newtonbench``): the texts
  read at run time from the user's NewtonBench checkout, byte for byte.

The task message is assembled from sections (:meth:`BaselineTexts.task_sections`); the apparatus
section is built per experiment system by a function registered with :func:`register_apparatus`
(``vanilla_equation`` is built in). A system tier plugs in its own apparatus, controls and output
format by registering ``builder(task, noisy=..., interpreter=...) -> str`` under its system name;
the task view's ``system`` attribute (absent = ``vanilla_equation``) picks it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from etc_fast.core import TaskView

#: NewtonBench's agents and judge prefix this control phrase for Nemotron models.
NEMOTRON_SWITCH = "detailed thinking on"

ApparatusBuilder = Callable[..., str]
_APPARATUS: dict[str, ApparatusBuilder] = {}


def register_apparatus(system: str, builder: ApparatusBuilder) -> None:
    """Use ``builder(task, noisy=bool, interpreter=bool) -> str`` as the apparatus section (the
    device, its controls, the request and output format) of tasks whose ``system`` is ``system``."""
    if not isinstance(system, str) or not system:
        raise ValueError(f"register_apparatus: system must be a non-empty string, got {system!r}")
    if not callable(builder):
        raise TypeError(f"register_apparatus: builder for {system!r} is not callable")
    _APPARATUS[system] = builder


def task_system(task: Any) -> str:
    """The experiment system of a task view (``vanilla_equation`` when it names none)."""
    return str(getattr(task, "system", None) or "vanilla_equation")


def _keys(task: TaskView) -> list[str]:
    return [str(v.get("key") or v["name"]) for v in task.variables]


def vanilla_value(v: Any) -> str:
    """NewtonBench's vanilla formatting of one output value: ``"{:.15e}"``."""
    if isinstance(v, complex):
        return f"{v:.15e}"
    return f"{float(v):.15e}"


def error_message(error: str | None) -> str:
    """The message of a sandbox error without its leading exception name (``NameError: x`` ->
    ``x``): what ``str(exception)`` gives, as NewtonBench's interpreter reports it."""
    text = (error or "").strip()
    m = re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning|Interrupt|Exit): ", text)
    return text[m.end():] if m else text


def vanilla_apparatus(task: TaskView, *, noisy: bool, interpreter: bool) -> str:
    """The apparatus section of a ``vanilla_equation`` task: device, controls, run instruction,
    request and output format."""
    desc = task.description.strip()
    controls = "\n".join(
        f"- {str(v.get('description') or v['name']).strip()} (`{v.get('key') or v['name']}`)" for v in task.variables
    )
    if noisy:
        run = (
            "**Running experiments:**\nCollect data with the <run_experiment> tag: a JSON array with one or as many "
            "parameter sets as you like. Every value the system returns carries **random noise**, as a real "
            "sensor would."
        )
    else:
        run = (
            "**Running experiments:**\nCollect data with the <run_experiment> tag: a JSON array with one or as many "
            "parameter sets as you like. The values the system returns are **noise-free**: exact and "
            "deterministic."
        )
    obj = "{" + ", ".join(f'"{k}": ...' for k in _keys(task)) + "}"
    return (
        "**Apparatus:**\n"
        + (desc + "\n" if desc else "")
        + "For each experiment you set these properties:\n"
        + controls
        + "\n\n"
        + run
        + "\n\n**Request and reply format:**\nWrite requests in exactly this JSON format, with no comments inside "
        "the JSON; the system answers with an array of outputs in the same order.\n\n"
        "*Request:*\n<run_experiment>\n[\n  " + obj + ",\n  " + obj + "\n]\n</run_experiment>\n\n"
        f"*Reply:*\nA list of the measured values of {task.output_description.strip() or task.output_name}.\n"
        "<experiment_output>\n[3.2e-02, 4.75e+01]\n</experiment_output>"
    )


register_apparatus("vanilla_equation", vanilla_apparatus)


class BaselineTexts:
    """The baselines' and the judge's messages in this project's words (NewtonBench's content).

    Subclasses override single methods; the policy and the judge only call these methods.
    """

    name = "etc_fast"

    #: A description of where the texts come from, for the run's records.
    def identity(self) -> dict[str, Any]:
        return {"prompts": self.name}

    # -- opening --------------------------------------------------------------------------
    def system_prompt(self, max_turns: int, interpreter: bool, model: str = "") -> str:
        if interpreter:
            return self._code_system_prompt(max_turns)
        text = (
            "You are an AI research assistant whose task is to discover a scientific law in a simulated universe.\n"
            "You propose experiments, study the data they return and finally deduce the law behind them.\n"
            "The laws of physics of this universe may differ from ours.\n"
            "You may run experiments to collect data, but you must keep strictly to the protocol.\n\n"
            "**Workflow:**\n"
            "1. Study the mission description.\n"
            "2. Plan experiments that test your hypotheses.\n"
            "3. Send your experimental inputs inside a `<run_experiment>` tag.\n"
            "4. The system answers inside an <experiment_output> tag (up to 20 data points per experiment).\n"
            "    - A value of nan means the computation broke down, for example:\n"
            "        - a ValueError (such as asin of a value outside [-1, 1])\n"
            "        - an OverflowError (such as exp of a very large input)\n"
            "    - Points that return nan carry no evidence; you may ignore them.\n"
            "    - Consider changing your inputs to stay out of invalid ranges and to cover the space better.\n"
            f"5. You have up to {max_turns} rounds of experiments. Spend them well: before you submit, make sure you have\n"
            "    - explored the experimental space thoroughly\n"
            "    - checked your hypotheses against the data\n"
            "    - used the available rounds to make your conclusion as strong as possible\n"
            "6. Each round allows one action only: <run_experiment> or <final_law>.\n"
            "7. After a <run_experiment>, wait for its <experiment_output> before going on.\n"
            "8. Check a hypothesis by comparing what it predicts with what the experiments returned.\n"
            "9. Once you are confident, submit the law you found inside a `<final_law>` tag; that ends the mission."
        )
        if "nemotron" in model:
            text = NEMOTRON_SWITCH + " \n" + text
        return text

    def _code_system_prompt(self, max_turns: int) -> str:
        return (
            "You are an AI research assistant whose task is to discover a scientific law in a simulated universe.\n"
            "You propose experiments, study the data they return and finally deduce the law behind them.\n"
            "The laws of physics of this universe may differ from ours.\n"
            "You may run experiments to collect data, but you must keep strictly to the protocol.\n\n"
            "**Rules**:\n"
            "1. **Calculations**:\n"
            "    - Use the <python> tag for any non-trivial mathematics, for example:\n"
            "        - powers, logarithms and other advanced operations;\n"
            "        - comparing the outputs your proposed law predicts with the experimental results;\n"
            "        - error measures such as the mean squared error of a hypothesis;\n"
            "        - sensitivity analysis and modelling of how the inputs change the output.\n"
            "2. **Using the tool well**:\n"
            "    - Do not call the tool twice with the same input.\n"
            "    - Read the tool's output before deciding on another call; call again only when the result is incomplete, unclear or unsatisfying.\n"
            "    - **Per turn**: plan the Python call of each turn so that analysis and refinement advance step by step.\n\n"
            "**Workflow:**\n"
            "1. Study the mission description.\n"
            "2. Plan experiments that test your hypotheses.\n"
            "3. Send your experimental inputs inside a `<run_experiment>` tag.\n"
            "4. The system answers inside an `<experiment_output>` tag (at most 20 sets of data per experiment).\n"
            f"5. You have up to {max_turns} rounds. Spend them well: before you submit, make sure you have\n"
            "    - explored the experimental space thoroughly\n"
            "    - checked your hypotheses against the data\n"
            "    - used the available rounds to make your conclusion as strong as possible\n"
            "6. Use `<python>` tags to test hypotheses, compute, or study the data between experiments.\n"
            "7. The results of a `<python>` tag come back inside a `<python_output>` tag.\n"
            "8. **CRITICAL: one action per turn**:\n"
            "    - a `<run_experiment>` tag to run experiments\n"
            "    - a `<python>` tag for calculation or analysis (1 call per turn at most)\n"
            "    - a `<final_law>` tag to submit the law you found\n"
            "9. **NO MIXING**: never combine action types in one turn (for example Python and an experiment).\n"
            "10. **NO DUPLICATES**: never use the same tag twice in one turn.\n"
            "11. After a <run_experiment>, wait for its <experiment_output> before going on.\n"
            "12. After a <python>, wait for its <python_output> before going on.\n"
            "13. Check a hypothesis by comparing what it predicts with what the experiments returned.\n"
            "14. Use <python> tags for whatever you judge necessary within each turn.\n"
            "15. Read what the `<python_output>` tags return and sharpen your picture of the law.\n"
            "16. Once you are confident, submit the law you found inside a `<final_law>` tag; that ends the mission.\n\n"
            "**Notes:**\n"
            "- Your single tool is <python>, for heavy calculation only (powers, logs, analysing data, testing hypotheses).\n"
            "- **NEVER** try to run experiments or submit the law through a `run_python_code` tool: experiments go in `<run_experiment>`, the law in `<final_law>`.\n"
            "- **NEVER** put comments inside the submitted law.\n"
            "- Always answer with the right tag when you run experiments or submit the law; the environment runs them and replies."
        )

    def objective(self, task: TaskView) -> str:
        return (
            "**Mission:** You are an AI physicist doing research in a simulated universe; your goal is to discover "
            "the physical law that holds in it.\n"
            "The laws of this universe may differ from ours, both in which factors matter and in the values of the "
            "constants.\n"
            "No ground-truth law is available to you: you have to discover it yourself."
        )

    def apparatus(self, task: TaskView, *, noisy: bool, interpreter: bool) -> str:
        system = task_system(task)
        builder = _APPARATUS.get(system)
        if builder is None:
            raise KeyError(f"no apparatus section is registered for experiment system {system!r}")
        return builder(task, noisy=noisy, interpreter=interpreter)

    def python_instructions(self, task: TaskView) -> str:
        names = [str(v["name"]) for v in task.variables]
        args = ", ".join(names)
        rows = "print(" + ", ".join(names) + ", '->', y)"
        trial = ", ".join(str(1.0 + i) for i in range(len(names)))
        body = (
            f"def candidate({args}):\n"
            "\tK = 2.5\n"
            f"\treturn K * {' * '.join(names)}\n\n"
            f"for {args} in [({trial},), ({', '.join(str(2.0 + i) for i in range(len(names)))},)]:\n"
            f"\ty = candidate({args})\n"
            f"\t{rows}"
        )
        return (
            "**You can run Python code interactively inside <python> tags.**\n\n"
            "**How to use <python> tags:**\n"
            "1. **Any Python code is allowed**: functions, calculations, print statements and so on.\n"
            "2. **Format:** <python>your_python_code_here</python>\n"
            "3. **You may send <python> tags in several turns** to try different ideas.\n"
            "4. **Every <python> tag is run** and its result comes back at once inside <python_output> tags.\n"
            "5. **Use that result** to refine your reasoning and calculations.\n\n"
            "**CRITICAL: use EXACTLY these tags:**\n"
            "- Opening tag: `<python>`\n"
            "- Closing tag: `</python>`\n"
            "- NOT `<|python_tag|>` or any other variant\n\n"
            "**Examples:**\n\n"
            "**A calculation:**\n```\n<python>\nimport math\n\nx = 3.0\nprint('ln(x) * e^x =', math.log(x) * math.exp(x))\n</python>\n```\n\n"
            f"**Defining and testing a function:**\n```\n<python>\n{body}\n</python>\n```\n\n"
            "**The system replies:**\n```\n<python_output>\n✅ **Python code ran successfully**\n\n**Output:**\n...\n\n"
            f"**Your code:**\n```python\n{body}\n```\n</python_output>\n```\n\n"
            "**Workflow:**\n"
            "1. **Study the problem** and form first hypotheses\n"
            "2. **Use <python> tags** to test ideas, compute, or study data\n"
            "3. **Read the results** in <python_output> and sharpen your picture\n"
            "4. **Repeat** with further <python> tags until you are confident\n"
            "5. **Submit the law** in <final_law> tags as a Python function"
        )

    def submission(self, task: TaskView) -> str:
        sig = task.signature.strip()
        names = [str(v["name"]) for v in task.variables]
        product = " * ".join(names)
        example = (
            "**Example (the format only, not the answer):**\n<final_law>\n"
            f"{sig}\n   import math\n   K = 4.2e-3\n   return K * math.exp(-{names[0]}) * {product}\n</final_law>"
        )
        return (
            "**Final submission:**\n"
            "When you are confident you have found the law, submit it as one Python function inside <final_law> tags.\n\n"
            "**Requirements:**\n"
            "1. The function is named `discovered_law`\n"
            f"2. Its signature is exactly: `{sig}`\n"
            f"3. It returns {task.output_description.strip() or 'the measured quantity'}.\n"
            "4. If a parameter turns out not to matter, leave it unused in the function body; do not change the signature.\n"
            "5. Each constant of your law is set inside the body of the function (a local variable), never passed as an argument.\n"
            "6. Import whatever you need (math, numpy, ...) inside the function body\n\n"
            "**Strict limits:**\n"
            "- Put no explanations or remarks in the <final_law> block, nor in the function body.\n"
            "- Your final answer contains only the <final_law> block.\n\n"
            f"{example}\n\n"
            "**Remember:**\n"
            "1. The laws of this universe may differ from ours in which factors matter, in the constants and in the form of the law.\n"
            "2. Use a broad range of inputs in your experiments, for example values from 10^-3 to 10^15, so that your law holds at every scale."
        )

    def task_sections(self, task: TaskView, *, noisy: bool, interpreter: bool) -> list[str]:
        """The sections of the opening user message, in order."""
        parts = [self.objective(task), self.apparatus(task, noisy=noisy, interpreter=interpreter)]
        if interpreter:
            parts.append(self.python_instructions(task))
        parts.append(self.submission(task))
        return parts

    def task_prompt(self, task: TaskView, *, noisy: bool, interpreter: bool) -> str:
        return "\n\n".join(self.task_sections(task, noisy=noisy, interpreter=interpreter))

    # -- every turn -----------------------------------------------------------------------
    def turn_reminder(self) -> str:
        """Appended to the last user message before every code-assisted call."""
        return (
            "You can use <run_experiment> to collect more data or the <python> tag to analyse it. Spread your "
            "actions wisely. Submit your law with the <final_law> tag only when you are confident."
        )

    def turn_usage(self, turn: int, calls: int) -> str:
        return f"Turn {turn}: {calls} of 1 Python calls spent"

    def invalid_reply(self, interpreter: bool, turn: int = 0) -> str:
        if interpreter:
            return (
                "**One action per turn:** reply with exactly 1 action, in the right format: a <run_experiment> tag "
                "with valid JSON, a <python> tag to run Python code, or a <final_law> tag to submit the law. "
                + self.turn_usage(turn, 0)
            )
        return "Invalid reply. Use the <run_experiment> tag with valid JSON, or the <final_law> tag to submit the law."

    def request_error(self, interpreter: bool, problem: str | None, turn: int = 0) -> str | None:
        """The reply to an experiment request that could not be run (``problem``: the protocol's
        explanation); ``None``: no reply at all, as NewtonBench's code-assisted agent."""
        if interpreter:
            return None
        return problem or "The experiment request could not be run; no measurement was taken."

    def experiment_output(self, values: Iterable[Any], *, interpreter: bool, single: bool = False) -> str | None:
        """The reply to an experiment; ``None`` where NewtonBench's code-assisted agent sends none (a
        single request whose value is 0, an empty result)."""
        vals = [float(v) for v in values]
        if not interpreter:
            return "<experiment_output>\n" + json.dumps([vanilla_value(v) for v in vals]) + "\n</experiment_output>"
        if single:
            if not vals or not vals[0]:
                return None
            body = json.dumps(vals[0])
            return f"<experiment_output>\n{body}\n</experiment_output>" + self._data_reminder(body, "Value")
        if not vals:
            return None
        return f"<experiment_output>\n{json.dumps(vals)}\n</experiment_output>" + self._data_reminder(json.dumps(vals[0]), "First value")

    def _data_reminder(self, first: str, label: str) -> str:
        return (
            "\n\n**Reminder:** the <python> tag can analyse these results, for example: "
            f"<python>import json; data = {first}; print(f\"{label}: {{data}}\")</python>"
        )

    def python_success(self, stdout: str, code: str, turn: int) -> str:
        out = stdout.strip()
        return (
            "<python_output>\n✅ **Python code ran successfully**\n\n"
            f"**Output:**\n{out if out else '(the code printed nothing)'}\n\n"
            f"**Your code:**\n```python\n{code}\n```\n\n"
            f"**{self.turn_usage(turn, 1)}**\n"
            "**Turn limit reached:** all 1 Python calls of this turn are used.\n"
            "</python_output>"
        )

    def python_failure(self, error: str, code: str, turn: int) -> str:
        return (
            "❌ **The Python code stopped with an error**\n\n"
            "**Error type:** execution_error\n"
            f"**Error message:** {error_message(error)}\n\n"
            f"**Your code:**\n```python\n{code}\n```\n\n"
            "**Fix the error and send corrected Python code.**\n\n"
            f"**{self.turn_usage(turn, 1)}**\n"
            "**Reminder:** <python> is available in every turn for whatever you need"
        )

    def python_invalid(self, problem: str, code: str, turn: int) -> str:
        return (
            "❌ **The Python code did not pass the checks**\n\n"
            f"**Error:** {problem}\n\n"
            f"**Your code:**\n```python\n{code}\n```\n\n"
            "**Fix the error and send corrected Python code.**\n\n"
            f"**{self.turn_usage(turn, 0)}**\n"
            "**Reminder:** <python> is available in every turn for whatever you need"
        )

    def validation_message(self, code: str, fallback: str) -> str:
        """The validation error NewtonBench would report for ``code`` (``fallback``: ours)."""
        return fallback

    def forced_final(self, task: TaskView, interpreter: bool) -> str:
        if interpreter:
            return (
                "**IMPORTANT:**\nAll your experiment turns are used. Submit your final law now with the <final_law> "
                f"tag. Remember that the function signature must be {task.signature.strip()}. Define every other "
                "variable inside the function. No comments inside the function."
            )
        return "All your experiment turns are used. Submit your final law now with the <final_law> tag."

    def nan_law(self, task: TaskView) -> str:
        """The law submitted when none can be extracted: the signature and ``return float('nan')``."""
        return f"{task.signature.strip()} return float('nan')"

    def combine_reasoning(self, reasoning: str, content: str) -> str:
        """The assistant message kept (and sent again) when the server returns reasoning apart."""
        return f"**Reasoning:**\n{reasoning}\n\n**Answer:**\n{content}"

    # -- the judge ------------------------------------------------------------------------
    def judge_messages(self, ground_truth: str, submitted: str, param_description: str, model: str = "") -> list[dict[str, str]]:
        messages = [{"role": "system", "content": NEMOTRON_SWITCH}] if "nemotron" in model else []
        messages.append({"role": "user", "content": self.judge_prompt(ground_truth, submitted, param_description)})
        return messages

    def judge_prompt(self, ground_truth: str, submitted: str, param_description: str) -> str:
        ex = [
            ("(HIDDEN_CONSTANT_C * x1 * x2) ** 2 / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   C = 6.7e-05\n   return (C * (x1 * x2) ** 2) / x3 ** 2",
             "The first constant appears squared and the second does not, but each only scales the output, so they are interchangeable ......",
             "YES"),
            ("(C * x1 * x2) / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   C = 6.7e-05\n   return (C * x1) / (x3 ** 4 * x2)",
             "The exponent of x3 is different and x2 has moved to the denominator ......",
             "NO"),
            ("sqrt(C * x1 * (x2 ** 2)) / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   C = 6.7e-05\n   return sqrt(C * x1) * x2 / x3 ** 2",
             "sqrt(x2 ** 2) equals x2, so the two describe one relationship ......",
             "YES"),
            ("(G * x1 * x2) / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   C = 6.7e-05\n   return (C * x1 * x2) / x3 ** 2.02",
             "The exponent of x3 is slightly different ......",
             "NO"),
            ("(C * x1 * x2) / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   G = 6.7e-05\n   product = x1 * x2\n   return (G * product) / x3 ** 2",
             "Only the names differ; structure and operations are the same, and G plays the role of C ......",
             "YES"),
            ("C * ln(x ** 2)",
             "def discovered_law(x1, x2, x3):\n   G = 2.02\n   return G * ln(x)",
             "C * ln(x**2) equals 2C * ln(x), and the constant 2C plays the role of G ......",
             "YES"),
            ("(C * x1 * x2) / x3 ** 2",
             "def discovered_law(x1, x2, x3):\n   return (x1 * x2) / x3 ** 2",
             "The first equation has a constant where the second has the number 1 ......",
             "YES"),
        ]
        examples = "\n\n".join(
            f"Equation 1: {a}\nEquation 2: {b}\nReasoning: {r}\nAnswer: {v}" for a, b, r, v in ex
        )
        return (
            "You are a mathematical judge. Decide whether two equations are equivalent.\n\n"
            "**Instructions:**\n"
            "1. Look closely at both equations\n"
            "2. Allow algebraic manipulation, reordered variables and renamed variables\n"
            "3. Decide whether they express the same mathematical relationship\n"
            "4. First give your reasoning step by step, then exactly one answer in the form **Answer: YES/NO**\n"
            "5. Bringing both into one common algebraic shape makes the comparison easier.\n"
            "   - e.g. write ln(x ** 2) as 2ln(x)\n\n"
            "**Output format:**\n"
            "Reasoning: (your reasoning steps)\n"
            "Answer: (YES/NO)\n\n"
            "**Remember:**\n"
            "- An equation may be written in ordinary notation or as Python code. Python code that implies the same relationship counts as equivalent.\n"
            "- Constants can be written differently or have other values; if they do the same job (for instance both scale the output), either can replace the other.\n"
            "   - For example, a constant written sqrt(k) in one equation and c in the other can be equivalent, if both act on the output the same way and a suitable value of one gives the other\n"
            "- Names of variables can differ, yet exponents and structure have to be identical before the two count as equivalent.\n"
            "   - For example, exponents 4 and 4.03 are different\n"
            "- Write YES/NO on the same line as \"Answer:\"\n\n"
            f"**Examples:**\n\n{examples}\n\n"
            "**Your task:**\n"
            "Compare these two equations and decide whether they are equivalent:\n\n"
            f"Parameter descriptions:\n{param_description}\n\n"
            f"Equation 1: {ground_truth}\n\n"
            f"Equation 2: {submitted}"
        )


#: The default texts.
DEFAULT_TEXTS = BaselineTexts()

#: Values of ``llm.prompts``.
PROMPT_MODES = ("etc_fast", "newtonbench")


_ANSWER_RE = re.compile(r"ANSWER:\s*(YES|NO)")
_WORD_RE = re.compile(r"\b(YES|NO)\b")


def parse_verdict(reply: str | None) -> bool | None:
    """NewtonBench's verdict rule: in the stripped, upper-cased reply the FIRST ``ANSWER:`` followed
    by YES or NO decides; without one, the last whole-word YES or NO; ``None`` when neither."""
    if not reply:
        return None
    text = reply.strip().upper()
    m = _ANSWER_RE.search(text)
    if m:
        return m.group(1) == "YES"
    found = _WORD_RE.findall(text)
    if not found:
        return None
    return found[-1] == "YES"


__all__ = [
    "DEFAULT_TEXTS",
    "NEMOTRON_SWITCH",
    "PROMPT_MODES",
    "BaselineTexts",
    "error_message",
    "parse_verdict",
    "register_apparatus",
    "task_system",
    "vanilla_apparatus",
    "vanilla_value",
]
