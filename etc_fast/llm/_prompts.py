"""Prompt texts for the LLM planner.

The planner's prompts (explore-then-commit):

* **Planner** (explore-then-commit): an exploration system prompt and per-turn messages that show
  the observations, the automatic diagnostics and the actions allowed this turn (a JSON committee,
  a ``<python>`` analysis, a ``<draft_law>``); then a fresh synthesis prompt with every observation
  and the draft, which must end in a ``<final_law>``.

The free-form baselines' and the judge's messages are in :mod:`etc_fast.llm._texts` (this
project's words) and :mod:`etc_fast.llm._newtonbench` (NewtonBench's own, from a checkout).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from etc_fast.core import Diagnostics, TaskView
from etc_fast.diagnostics import format_number, render_observations

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
    """The sentence telling the model what its Python analysis finds preloaded: ``X``, ``y``, one array per
    input, ``data``, NumPy and math (named after ``task``'s inputs and output).
    """
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
    """The system prompt of the planner's exploration session: the model proposes laws, the lab picks the
    measurements. ``interpreter`` adds that Python analysis may be run where a turn allows it.
    """
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
        items.append(draft_action(task.signature))
    return numbered_actions(items)


def draft_action(signature: str) -> str:
    """The menu item of a draft law (vanilla and system planners alike)."""
    return (
        "Submit a draft law (this ends exploration):\n"
        "<draft_law>\n"
        f"{signature}\n"
        "    C = 1.0\n"
        "    return ...\n"
        "</draft_law>\n"
        "with constants as local variables and imports inside the function."
    )


def numbered_actions(items: list[str]) -> str:
    """The turn's action menu: its items numbered under one heading."""
    lines = ["Allowed actions this turn (choose exactly one):"]
    lines += [f"{i}. {item}" for i, item in enumerate(items, 1)]
    return "\n".join(lines)


def turn_status(turns_left: int, measurements_used: int, measurements_left: int | None) -> str:
    """The closing line of an exploration turn: measurements used, those left in the budget (omitted when
    ``measurements_left`` is None, i.e. no budget) and turns left after this one.
    """
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
    """The first user message of the exploration session.

    The task's opening (description, inputs, the noise note when ``noisy``), the observations ``X`` / ``y``
    so far, the numerical ``diagnostics`` when given, the menu of ``allowed`` actions (``batch_cap``: most
    points a request may ask for) and the turn status.
    """
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
    """A later user message of the exploration session.

    The ``feedback`` on the last reply (when any), the new observations ``X_new`` / ``y_new`` numbered from
    ``start``, the diagnostics, the short action menu and the turn status.
    """
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
    """The system prompt of the fresh synthesis session, which finalizes the law from fixed measurements;
    ``interpreter`` adds that Python analysis may be run first.
    """
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
    """The first user message of the fresh synthesis session.

    The task's opening with all observations ``X`` / ``y`` and the ``diagnostics``, the exploration's
    ``draft`` law (or a note that there is none), that no experiments are available, the analysis note when
    ``interpreter`` is on, and the reply status.
    """
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
    """The closing line of a synthesis turn: replies left, or that this reply must hold the final law
    (the last turn, or always when there is no interpreter).
    """
    if turns_left <= 0 or not interpreter:
        return "This is your last reply in this session: submit the <final_law> block now."
    return f"Replies left after this one: {turns_left}. The last one must contain the <final_law> block."


def synthesis_next_message(feedback: str | None, *, turns_left: int, interpreter: bool) -> str:
    """A later user message of the synthesis session: the ``feedback`` on the last reply (when any) and the
    reply status.
    """
    parts = []
    if feedback and feedback.strip():
        parts.append(feedback.strip())
    parts.append(synthesis_status(turns_left, interpreter))
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------------------
# Observation feedback (planner and synthesis; the baselines' texts are in _texts.py)
# ----------------------------------------------------------------------------------------
def python_output(feedback: str) -> str:
    """Interpreter feedback wrapped in ``<python_output>`` tags."""
    text = feedback.strip("\n")
    if "<python_output>" in text:
        return text
    return f"<python_output>\n{text}\n</python_output>"


__all__ = [
    "HYPOTHESIS_LANGUAGE",
    "action_menu",
    "diagnostics_block",
    "explore_first_message",
    "explore_next_message",
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
