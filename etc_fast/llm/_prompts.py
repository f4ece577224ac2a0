"""Prompt texts for the LLM policies and the judge.

Two families share one task description:

* **Planner** (explore-then-commit): an exploration system prompt and per-turn messages that show
  the observations, the automatic diagnostics and the actions allowed this turn (a JSON committee,
  a ``<python>`` analysis, a ``<draft_law>``); then a fresh synthesis prompt with every observation
  and the draft, which must end in a ``<final_law>``.
* **Baseline** (NewtonBench's free-form agents): ``<run_experiment>`` / ``<python>`` /
  ``<final_law>`` tags, the forced-final message and the invalid-reply message.

The structure and tags follow NewtonBench; the wording is this project's own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from etc_fast.diagnostics import format_number, render_observations
from etc_fast.protocol._types import Diagnostics, TaskView

# ----------------------------------------------------------------------------------------
# Shared pieces
# ----------------------------------------------------------------------------------------
HYPOTHESIS_LANGUAGE = (
    "Write each hypothesis as a single Python expression in the input names ({names}). Allowed: numbers, "
    "the operators + - * / ** and unary minus, parentheses, the functions sin, cos, tan, asin, acos, atan, "
    "exp, log, sqrt, abs, degrees, radians and pow (also written math.sin, np.exp, ...), and the constants "
    "pi and e. Any other name (C, k, alpha, ...) stands for an unknown constant: the lab rescales and "
    "shifts each hypothesis to fit the measurements, so overall factors need not be known. Write exponents "
    "and constants inside functions as numbers (for example r**1.5). No assignments, no 'y =' prefix, no "
    "function definitions."
)


def _var_names(task: TaskView) -> list[str]:
    return [str(v["name"]) for v in task.variables]


def _var_keys(task: TaskView) -> list[str]:
    return [str(v.get("key") or v["name"]) for v in task.variables]


def objective_block(task: TaskView) -> str:
    """Block 1: the shared objective."""
    return (
        f"You are a physicist running experiments in a simulated universe. Your goal is to discover the law "
        f"that governs {task.title} in it. The laws of this universe may differ from the ones you know, both "
        f"in which factors matter and in the values of the constants, so do not assume a textbook formula. "
        f"No ground truth will be revealed to you."
    )


def noise_sentence(noisy: bool) -> str:
    """Whether measurements are noisy; the level itself is never shown (as in NewtonBench)."""
    if noisy:
        return "Each measurement carries some random error, so repeating an input gives slightly different values."
    return "The lab is noise-free: repeating an input always gives exactly the same value."


def variables_block(task: TaskView, *, keys: bool) -> str:
    """One line per input: its name (or experiment key) and meaning."""
    lines = []
    for v in task.variables:
        label = str(v.get("key") or v["name"]) if keys else str(v["name"])
        desc = str(v.get("description") or "").strip()
        extra = ""
        if keys and v.get("key") and v.get("key") != v["name"]:
            extra = f" (argument `{v['name']}` of discovered_law)"
        lines.append(f"- `{label}`{extra}: {desc}" if desc else f"- `{label}`{extra}")
    return "\n".join(lines)


def submission_block(task: TaskView, *, probing: bool = True) -> str:
    """Block 4: how to submit the final law (shared template); ``probing`` adds the broad-range advice."""
    text = (
        "Submission requirements:\n"
        "Submit exactly one Python function inside <final_law> tags.\n"
        f"- It is named discovered_law and has exactly this signature: `{task.signature}`\n"
        f"- It returns {task.output_description.strip() or 'the measured quantity'}.\n"
        "- Keep every parameter in the signature, even one your law does not use.\n"
        "- Define constants as local variables inside the function, never as extra parameters.\n"
        "- Put any import inside the function body.\n"
        "- Write no comments or explanations inside the block.\n"
        "Your final answer must contain only the <final_law> block. The format (not the answer) looks like:\n"
        "<final_law>\n"
        "def discovered_law(a, b):\n"
        "    import math\n"
        "    C = 3.7\n"
        "    return C * a * math.exp(-b)\n"
        "</final_law>"
    )
    if probing:
        text += (
            "\nThe law of this universe may differ from the familiar one; probe each input over broad ranges "
            "(for example from 1e-3 to 1e15 where that is meaningful) to see how it matters."
        )
    return text


def observations_table(task: TaskView, X: np.ndarray, y: np.ndarray, *, start: int = 0) -> str:
    """Plain-text table of observations, rows numbered from ``start + 1``."""
    return render_observations(_var_names(task), X, y, output_name=task.output_name or "y", start=start)


def diagnostics_block(diag: Diagnostics | None) -> str:
    """The advisory diagnostics text (empty when there are none)."""
    if diag is None:
        return ""
    if diag.text and diag.text.strip():
        return diag.text.strip()
    parts = ["Automatic diagnostics (advisory):"]
    for name, s in diag.sensitivities.items():
        parts.append(f"  sensitivity of {name}: {'n/a' if s is None else format_number(s, 6)}")
    if diag.exponents:
        parts.append("  power-law exponents: " + ", ".join(f"{k}={format_number(b, 6)}" for k, b in diag.exponents.items()))
        if diag.r2 is not None:
            parts.append(f"  R^2 = {format_number(diag.r2, 8)}")
    return "\n".join(parts)


def analysis_data_note(task: TaskView) -> str:
    names = ", ".join(_var_names(task))
    return (
        f"The measurements are preloaded in the interpreter: `X` (one row per measurement, columns {names}), "
        f"`y` (the measured {task.output_name or 'output'}), one array per input name, and `data` (a list of "
        "dicts). numpy (as np) and math are available. Print what you want to see; only printed output "
        "comes back. Nothing is kept between calls."
    )


# ----------------------------------------------------------------------------------------
# Planner: exploration
# ----------------------------------------------------------------------------------------
def planner_system_prompt(interpreter: bool) -> str:
    tool = (
        " You may also run Python analysis on the measurements when the turn allows it." if interpreter else ""
    )
    return (
        "You are a research physicist working with an automated laboratory in a simulated universe whose laws "
        "may differ from textbook physics. The work is split: you propose candidate laws; the lab picks the "
        "next inputs to measure so that your candidates disagree as much as possible, measures them, and shows "
        "you the results together with automatic numerical diagnostics. You never choose inputs yourself."
        + tool
        + " When the evidence pins the law down, submit a draft law; a fresh session then finalizes the law "
        "from all observations. Take exactly one action per reply."
    )


def task_block(task: TaskView, noisy: bool) -> str:
    """Objective, apparatus and inputs (planner and synthesis)."""
    desc = task.description.strip()
    lines = [
        objective_block(task),
        "",
        f"Apparatus: {desc}" if desc else "Apparatus: a device that measures the output for chosen inputs.",
        f"Measured output `{task.output_name}`: {task.output_description.strip()}",
        "Inputs:",
        variables_block(task, keys=False),
        noise_sentence(noisy),
    ]
    return "\n".join(lines)


def action_menu(task: TaskView, allowed: Sequence[str], batch_cap: int, *, brief: bool = False) -> str:
    """The actions allowed this exploration turn, with their formats (``brief``: a reminder only)."""
    if brief:
        names = {
            "committee": 'a committee {"hypotheses": [...]} (2 to 5 expressions)',
            "analysis": "a <python> analysis",
            "draft": "a <draft_law> (ends exploration)",
        }
        options = [names[k] for k in ("committee", "analysis", "draft") if k in allowed]
        return "Allowed actions this turn (formats as described at the start; choose exactly one): " + "; ".join(options) + "."
    items = []
    if "committee" in allowed:
        items.append(
            "Propose hypotheses: a JSON object with up to 5 candidate expressions, for example\n"
            '{"hypotheses": ["C * a * b / c**2", "C * a**2 / c"]}\n'
            "Give at least two genuinely different candidates: the lab needs them to disagree to choose "
            f"informative inputs. It then measures up to {batch_cap} new inputs.\n" + HYPOTHESIS_LANGUAGE.format(names=", ".join(_var_names(task)))
        )
    if "analysis" in allowed:
        items.append(
            "Analyse: Python code inside <python> ... </python> tags; its printed output is returned next "
            "turn. " + analysis_data_note(task)
        )
    if "draft" in allowed:
        items.append(
            "Submit a draft law (this ends exploration):\n"
            "<draft_law>\n"
            f"{task.signature}\n"
            "    C = 1.0\n"
            "    return ...\n"
            "</draft_law>\n"
            "with constants as local variables and imports inside the function."
        )
    lines = ["Allowed actions this turn (choose exactly one):"]
    lines += [f"{i}. {item}" for i, item in enumerate(items, 1)]
    return "\n".join(lines)


def turn_status(turns_left: int, measurements_used: int, measurements_left: int | None) -> str:
    budget = "" if measurements_left is None else f", {measurements_left} left in the budget"
    return f"Measurements so far: {measurements_used}{budget}. Turns left after this one: {turns_left}."


def _opening_parts(
    task: TaskView, noisy: bool, heading: str, X: np.ndarray, y: np.ndarray, diagnostics: Diagnostics | None
) -> list[str]:
    """The opening sections of a session's first message: task, all observations so far, diagnostics."""
    parts = [task_block(task, noisy), f"{heading} ({y.shape[0]}):\n" + observations_table(task, X, y)]
    diag = diagnostics_block(diagnostics)
    if diag:
        parts.append(diag)
    return parts


def explore_first_message(
    task: TaskView,
    X: np.ndarray,
    y: np.ndarray,
    diagnostics: Diagnostics | None,
    allowed: Sequence[str],
    *,
    noisy: bool,
    batch_cap: int,
    turns_left: int,
    measurements_left: int | None,
) -> str:
    parts = _opening_parts(task, noisy, "Observations so far", X, y, diagnostics)
    parts.append(action_menu(task, allowed, batch_cap))
    parts.append(turn_status(turns_left, int(y.shape[0]), measurements_left))
    return "\n\n".join(parts)


def explore_next_message(
    task: TaskView,
    feedback: str | None,
    X_new: np.ndarray,
    y_new: np.ndarray,
    start: int,
    diagnostics: Diagnostics | None,
    allowed: Sequence[str],
    *,
    batch_cap: int,
    turns_left: int,
    measurements_used: int,
    measurements_left: int | None,
) -> str:
    parts = []
    if feedback and feedback.strip():
        parts.append(feedback.strip())
    if y_new.shape[0]:
        parts.append(f"New observations ({y_new.shape[0]}):\n" + observations_table(task, X_new, y_new, start=start))
    diag = diagnostics_block(diagnostics)
    if diag:
        parts.append(diag)
    parts.append(action_menu(task, allowed, batch_cap, brief=True))
    parts.append(turn_status(turns_left, measurements_used, measurements_left))
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------------------
# Planner: fresh synthesis
# ----------------------------------------------------------------------------------------
def synthesis_system_prompt(interpreter: bool) -> str:
    tool = " You may run Python analysis on the measurements before submitting." if interpreter else ""
    return (
        "You are a research physicist finalizing the law of a simulated universe from a fixed set of "
        "measurements. No new measurements can be made in this session." + tool + " Your session must end "
        "with a <final_law> block."
    )


def synthesis_first_message(
    task: TaskView,
    X: np.ndarray,
    y: np.ndarray,
    diagnostics: Diagnostics | None,
    draft: str | None,
    *,
    noisy: bool,
    interpreter: bool,
    turns_left: int,
) -> str:
    parts = _opening_parts(task, noisy, "All observations", X, y, diagnostics)
    if draft and draft.strip():
        parts.append(
            "Draft law from the exploration session:\n<draft_law>\n" + draft.strip() + "\n</draft_law>\n"
            "Keep this draft unless the observations disagree with it. If they do, correct it so that it "
            "matches every observation, and refit its constants."
        )
    else:
        parts.append("No draft law was submitted during exploration: derive the law from the observations.")
    parts.append("Experiments are not available in this session; requests for new measurements are refused.")
    if interpreter:
        parts.append(
            "Before submitting you may analyse the data with Python inside <python> ... </python> tags (one "
            "block per reply). " + analysis_data_note(task)
        )
    parts.append(submission_block(task, probing=False))
    parts.append(synthesis_status(turns_left, interpreter))
    return "\n\n".join(parts)


def synthesis_status(turns_left: int, interpreter: bool) -> str:
    if turns_left <= 0 or not interpreter:
        return "This is your last reply in this session: submit the <final_law> block now."
    return f"Replies left after this one: {turns_left}. The last one must contain the <final_law> block."


def synthesis_next_message(feedback: str | None, *, turns_left: int, interpreter: bool) -> str:
    parts = []
    if feedback and feedback.strip():
        parts.append(feedback.strip())
    parts.append(synthesis_status(turns_left, interpreter))
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------------------
# Baseline (NewtonBench-style free-form agents)
# ----------------------------------------------------------------------------------------
def baseline_system_prompt(max_turns: int, interpreter: bool) -> str:
    lines = [
        "You are a research assistant in a simulated universe whose physical laws may differ from the ones "
        "you know. Your job is to find the law behind the quantity described in the task.",
        "You gather evidence by designing experiments: put the inputs inside <run_experiment> tags, and the "
        "lab answers with the measured values inside <experiment_output> tags. A value of NaN means the "
        "simulator could not compute that point (for example an inverse sine out of range or an overflowing "
        "exponential); such points can be ignored.",
        "Rules:",
        f"- You have {max_turns} rounds. Use them: test your ideas against fresh data before you commit.",
    ]
    if interpreter:
        lines += [
            "- You also have a Python interpreter: put code inside <python> tags for any non-trivial "
            "arithmetic, fitting or checking; its printed output comes back inside <python_output> tags.",
            "- Take exactly ONE action per reply: one <run_experiment>, one <python> or one <final_law> block. "
            "Do not combine them and do not repeat a tag.",
            "- Write no comments inside the final law.",
        ]
    else:
        lines.append("- Take exactly ONE action per reply: a <run_experiment> block or a <final_law> block.")
    lines += [
        "- Check every candidate law against all the data you have.",
        "- Submitting <final_law> ends the mission; it cannot be changed afterwards.",
    ]
    return "\n".join(lines)


def _placeholder_request(task: TaskView) -> str:
    keys = _var_keys(task)
    obj = "{" + ", ".join(f'"{k}": ...' for k in keys) + "}"
    return f"<run_experiment>\n[{obj},\n {obj}]\n</run_experiment>"


def baseline_task_message(task: TaskView, *, noisy: bool, interpreter: bool) -> str:
    """The user message that opens a baseline trial (NewtonBench's four-block skeleton)."""
    desc = task.description.strip()
    apparatus = [
        f"Apparatus: {desc}" if desc else "Apparatus: a device that measures the output for chosen inputs.",
        f"It measures `{task.output_name}`: {task.output_description.strip()}",
        "You control these inputs (the JSON keys of a request):",
        variables_block(task, keys=True),
        "To measure, send a JSON array of one or as many input sets as you like inside <run_experiment> "
        "tags; each object is one measurement. " + noise_sentence(noisy),
        "Request format:",
        _placeholder_request(task),
        "The lab answers with one value per input set, in order:",
        "<experiment_output>\n" + ("[1.234, 0.5678]" if interpreter else '["1.234000000000000e+00", "5.678000000000000e-01"]')
        + "\n</experiment_output>",
    ]
    blocks = [objective_block(task), "\n".join(apparatus)]
    if interpreter:
        names = _var_names(task)
        blocks.append(
            "Python tool: put code inside <python> ... </python> tags to analyse your data. "
            + analysis_data_note(task)
            + " Example:\n<python>\nimport numpy as np\n"
            + f"print(np.corrcoef(np.log(np.abs({names[0]}) + 1e-300), np.log(np.abs(y) + 1e-300)))\n</python>\n"
            "The printed output comes back as:\n<python_output>\n...\n</python_output>"
        )
    blocks.append(submission_block(task))
    return "\n\n".join(blocks)


def action_reminder(turns_left: int, measurements_left: int | None = None) -> str:
    """The line added to every code-assisted baseline message (NewtonBench adds one each turn)."""
    budget = "" if measurements_left is None else f" Measurements left: {measurements_left}."
    return (
        "Reminder: one action per reply, either a <run_experiment> block or a <python> block; spend them "
        f"wisely and submit <final_law> only when you are confident. Rounds left: {turns_left}.{budget}"
    )


def forced_final_message(task: TaskView, interpreter: bool) -> str:
    """Appended after the last round: the forced final call."""
    msg = "All experiment rounds are used up. Submit your final law now, inside <final_law> tags."
    if interpreter:
        msg += (
            f" Use exactly the signature `{task.signature}`, keep all numbers as local variables of the "
            "function body, and leave out comments."
        )
    return msg


def invalid_reply_message(interpreter: bool, problem: str | None = None) -> str:
    """Sent after an unusable baseline reply."""
    tags = "a <run_experiment> block with a JSON array of input objects"
    if interpreter:
        tags += ", a <python> block"
    msg = f"Your reply could not be used. Reply with {tags} or a <final_law> block to submit the law."
    if problem:
        msg += f" (Problem: {problem}.)"
    return msg


# ----------------------------------------------------------------------------------------
# Observation feedback
# ----------------------------------------------------------------------------------------
def format_vanilla_value(v: Any) -> str:
    """NewtonBench's vanilla formatting of one output: ``"{:.15e}"``."""
    if isinstance(v, complex):
        return f"{v:.15e}"
    return f"{float(v):.15e}"


def experiment_output(values: Sequence[float] | np.ndarray, *, interpreter: bool) -> str:
    """``<experiment_output>`` block: ``{:.15e}`` strings (vanilla) or raw numbers (code-assisted)."""
    from etc_fast.protocol._baseline import format_experiment_output

    return format_experiment_output(np.asarray(values, dtype=np.float64), interpreter)


def python_output(feedback: str) -> str:
    """Interpreter feedback wrapped in ``<python_output>`` tags."""
    text = feedback.strip("\n")
    if "<python_output>" in text:
        return text
    return f"<python_output>\n{text}\n</python_output>"


# ----------------------------------------------------------------------------------------
# Judge
# ----------------------------------------------------------------------------------------
def judge_prompt(ground_truth: str, submitted: str, param_description: str) -> str:
    """The equivalence question put to the judge model (NewtonBench judge intent, own wording)."""
    return (
        "Decide whether two equations describe the same mathematical relationship.\n\n"
        "Treat them as equivalent when one can be turned into the other by algebra (expanding, factoring, "
        "using identities such as ln(x**2) = 2*ln(x) or sqrt(x**2) = x for positive x) and by renaming or "
        "reordering variables. Python code counts as an equation: read what the function returns.\n"
        "Constants: numerical constants may differ in value or in how they are written, as long as they play "
        "the same role (for example an overall scale factor); a constant that is absent counts as 1.\n"
        "Structure and exponents must match exactly: a different exponent (4 versus 4.03, x**2 versus x**2.02), "
        "a variable in a different place, a missing or extra dependency, or a different functional form "
        "makes them NOT equivalent.\n\n"
        "Examples:\n"
        "- C*a*b/r**2 versus 6.7e-11*a*b/r**2: YES (the constant is only a scale).\n"
        "- C*a*b/r**2 versus C*a*b/r**2.05: NO (the exponent differs).\n"
        "- C*a**2*b versus C*a*b**2: NO (the exponents sit on different variables).\n"
        "- C*sqrt(x**2)*y versus K*x*y with positive x: YES.\n"
        "- C*ln(x**2) versus G*ln(x): YES (ln(x**2) = 2 ln(x), the 2 joins the constant).\n"
        "- C*exp(-k*t) versus C*exp(-k*t**1.5): NO.\n\n"
        f"Equation 1 (reference):\n{ground_truth.strip()}\n\n"
        f"Equation 2 (submitted):\n{submitted.strip()}\n\n"
        f"Parameters:\n{param_description.strip()}\n\n"
        "First explain your comparison, then give the verdict on its own line, exactly in this format:\n"
        "Reasoning: <your reasoning>\n"
        "Answer: YES or NO"
    )


__all__ = [
    "HYPOTHESIS_LANGUAGE",
    "action_menu",
    "action_reminder",
    "baseline_system_prompt",
    "baseline_task_message",
    "diagnostics_block",
    "experiment_output",
    "explore_first_message",
    "explore_next_message",
    "forced_final_message",
    "format_vanilla_value",
    "invalid_reply_message",
    "judge_prompt",
    "objective_block",
    "observations_table",
    "planner_system_prompt",
    "python_output",
    "submission_block",
    "synthesis_first_message",
    "synthesis_next_message",
    "synthesis_system_prompt",
    "task_block",
]
