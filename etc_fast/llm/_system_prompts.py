"""What an agent reads about a system: the apparatus block of a system trial's opening message.

NewtonBench's system prompts carry, per module and system, the apparatus, the control parameters,
the request and response format (time series of at most 20 points), the physics background and the
"confirmed assisting laws". :func:`apparatus_block` renders the same parts from
:mod:`etc_fast.systems._spec`, in the project's own words, so that the baselines' prompt builders
(``etc_fast.llm._prompts``) can put it where the vanilla apparatus block goes. Nothing here reads
the hidden law: the spec is public, and the law is named only by its signature and meaning.

The LLM planner's messages on a system (exploration, fresh synthesis) mirror the vanilla planner's
(``etc_fast.llm._prompts``) part by part: the apparatus block in place of the vanilla apparatus,
the experiments as run with NewtonBench's outputs (:func:`records_block`) in place of the
observation table, and the protocol's derived law table in words (:func:`derived_block`) in place
of the vanilla diagnostics (docs/systems.md, "LLM agents on systems").
"""

from __future__ import annotations

import json

import numpy as np

from etc_fast.systems import SystemSpec, definition

__all__ = [
    "apparatus_block",
    "derived_block",
    "records_block",
    "request_example",
    "response_example",
    "system_baseline_message",
    "system_explore_first_message",
    "system_explore_next_message",
    "system_planner_system_prompt",
    "system_synthesis_first_message",
    "system_synthesis_system_prompt",
]


def request_example(sp: SystemSpec) -> str:
    """``<run_experiment>`` with two placeholder objects holding every control key."""
    obj = "{" + ", ".join(f'"{c.key}": ...' for c in sp.controls) + "}"
    return f"<run_experiment>\n[{obj},\n {obj}]\n</run_experiment>"


def response_example(sp: SystemSpec) -> str:
    """``<experiment_output>`` with the shape of NewtonBench's answer (placeholders, not values).

    The shape of one output is the system definition's ``response`` where it has one (bare
    numbers, nested pairs, named parts); else a series system's stamps and channels as lists, a
    reading's channels as single values.
    """
    defn = definition(sp.module, sp.system)
    one: object
    if defn.response is not None:
        one = defn.response
    elif sp.n_times > 1:
        time_key = defn.time_key
        one = {time_key: ["..."], **{c: ["..."] for c in sp.channels if c != time_key}}
    else:
        one = {c: "..." for c in sp.channels}
    text = json.dumps([one, one]).replace('"..."', "...")
    return f"<experiment_output>\n{text}\n</experiment_output>"


def apparatus_block(sp: SystemSpec, *, law_signature: str, law_meaning: str) -> str:
    """The apparatus, controls, formats and assisting laws of ``sp``, as one prompt block.

    Args:
        sp: The system's public spec.
        law_signature: ``def discovered_law(...):`` of the law to find.
        law_meaning: What the law returns (the vanilla task's output description).
    """
    controls = []
    for c in sp.controls:
        default = "required" if c.default is None else f"default {c.default:g}"
        controls.append(f"- `{c.key}`: {c.description} ({default})")
    series = sp.n_times > 1
    laws = "\n".join(f"{i}. {text}" for i, text in enumerate(sp.assisting_laws, 1))
    parts = [
        f"Experimental apparatus: {sp.apparatus}",
        (
            f"Inside it acts an unknown law, the one you must find: `{law_signature}` returns {law_meaning}. You never "
            "measure the law directly; you see what the apparatus records while the law acts."
        ),
        "Control parameters (the JSON keys of one experiment; a key you leave out takes its default):\n"
        + "\n".join(controls),
        "Request format: a JSON array of experiments inside <run_experiment> tags, one object per experiment:\n"
        + request_example(sp),
        "Response: one result per experiment, in order"
        + (
            " (time series of at most 20 points each)"
            if series and "20" not in sp.output_format
            else ""
        )
        + f": {sp.output_format}.\n"
        + response_example(sp),
        "Confirmed assisting laws (they hold in this universe):\n" + laws,
    ]
    return "\n\n".join(parts)


def system_baseline_message(task, sp: SystemSpec, *, noisy: bool, interpreter: bool) -> str:
    """The user message that opens a baseline trial on a system (NewtonBench's skeleton).

    The objective and the submission requirements are the vanilla blocks
    (``etc_fast.llm._prompts``); the apparatus block in between is the system's
    (:func:`apparatus_block`); with an interpreter, a note on the preloaded data.
    """
    from etc_fast.llm._prompts import noise_sentence, objective_block, submission_block

    app = apparatus_block(sp, law_signature=task.signature, law_meaning=task.output_description.strip())
    blocks = [objective_block(task), app + "\n\n" + noise_sentence(noisy)]
    if interpreter:
        blocks.append(
            "Python tool: put code inside <python> ... </python> tags to analyse your data. " + SYSTEM_DATA_NOTE
            + " The printed output comes back as:\n<python_output>\n...\n</python_output>"
        )
    blocks.append(submission_block(task, probing=False))
    return "\n\n".join(blocks)


# ----------------------------------------------------------------------------------------
# LLM planner on a system: exploration and fresh synthesis (the vanilla planner's skeleton,
# etc_fast.llm._prompts, with the system's apparatus, records and derived-law diagnostics)
# ----------------------------------------------------------------------------------------
#: What analysis code finds preloaded in a system trial (baseline and planner alike).
SYSTEM_DATA_NOTE = (
    "Preloaded: `X` (one row per experiment run, the controls in the order listed above), `series` (NumPy array "
    "[experiment, recorded quantity, point]: the outputs as numbers, NaN where none) and `data` (a list "
    "of {\"request\": ..., \"output\": ...})."
)

#: The hypothesis language on a system: the vanilla one, except how unknown constants are treated
#: (a system trial fits named constants through the apparatus; nothing is rescaled or shifted).
SYSTEM_HYPOTHESIS_LANGUAGE = (
    "Write each hypothesis as a single Python expression in the law's inputs ({names}): the value "
    "discovered_law would return. Allowed: numbers, the operators + - * / ** and unary minus, parentheses, "
    "the functions sin, cos, tan, asin, acos, atan, exp, log, sqrt, abs, degrees, radians and pow (also "
    "written math.sin, np.exp, ...), and the constants pi and e. Any other name (C, k, alpha, ...) stands "
    "for an unknown constant: before simulating a hypothesis the lab fits each such constant to the records "
    "so far by running the hypothesis through the apparatus. A hypothesis without such names is simulated "
    "exactly as written, so write an unknown overall factor as a named constant (C * ...). Write exponents "
    "and constants inside functions as numbers (for example r**1.5). No assignments, no 'y =' prefix, no "
    "function definitions."
)


def system_planner_system_prompt(interpreter: bool) -> str:
    """The exploration session's system prompt on a system (the vanilla one's roles, with experiments)."""
    tool = " You may also run Python analysis on the records when the turn allows it." if interpreter else ""
    return (
        "You are a research physicist working with an automated laboratory in a simulated universe whose laws "
        "may differ from textbook physics. The law you must find acts inside an apparatus: you never see its "
        "value, only what the apparatus records while it acts. The work is split: you propose candidate laws; "
        "the lab simulates every candidate inside the apparatus, runs the next experiments where the simulated "
        "records of your candidates disagree most, and shows you what the apparatus recorded together with "
        "automatic numerical diagnostics. You never choose experiments yourself."
        + tool
        + " When the evidence pins the law down, submit a draft law; a fresh session then finalizes the law "
        "from all records. Take exactly one action per reply."
    )


def system_synthesis_system_prompt(interpreter: bool) -> str:
    """The system prompt of the fresh synthesis session on the systems tier (the law acts inside an
    apparatus, seen through its experiment records); ``interpreter`` adds that Python analysis may be run.
    """
    tool = " You may run Python analysis on the records before submitting." if interpreter else ""
    return (
        "You are a research physicist finalizing the law of a simulated universe from a fixed set of experiment "
        "records. The law acts inside an apparatus; the records are what the apparatus showed while it acted. No "
        "new experiments can be run in this session." + tool + " Your session must end with a <final_law> block."
    )


def _json_rows(items) -> str:
    """A JSON array with one element per line (the layout of the request example)."""
    from etc_fast.core import to_jsonable

    rows = [json.dumps(to_jsonable(x)) for x in items]
    return "[" + ",\n ".join(rows) + "]"


def records_block(requests, outputs, *, start: int = 0, heading: str = "Experiments") -> str:
    """Experiments ``start + 1 ..`` as the apparatus ran them and its output for each, in the
    request and response formats of the apparatus block."""
    n = len(requests)
    span = f"{start + 1}" if n == 1 else f"{start + 1}-{start + n}"
    return (
        f"{heading} ({n}; numbered {span}): each request as it was run, every control given, then the apparatus's "
        "output for each, in the same order.\n"
        f"<run_experiment>\n{_json_rows(requests)}\n</run_experiment>\n"
        f"<experiment_output>\n{_json_rows(outputs)}\n</experiment_output>"
    )


def _g(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.6g}"


def reliable_threshold(misfit: np.ndarray, noisy: bool) -> float:
    """Misfit up to which a derived row counts as reproduced by a constant law.

    Noise-free: the protocol's consistency level (``_derive.CONSISTENT`` reading precisions). Noisy
    records cannot be matched to the printed digits, so there a row counts when its misfit is within
    ten times the median misfit of the records (the noise level itself is never shown to the agent).
    """
    from etc_fast.systems import CONSISTENT

    finite = misfit[np.isfinite(misfit)]
    if noisy and finite.size:
        return float(max(CONSISTENT, 10.0 * np.median(finite)))
    return float(CONSISTENT)


def power_law_summary(X: np.ndarray, y: np.ndarray, names, keep: np.ndarray) -> str | None:
    """A log-linear fit ``|L| = K prod |x_j|**p_j`` of the kept rows, as one sentence (``None``: not possible).

    Like the vanilla diagnostics, the sentence gives the exponents and R^2, not the factor ``K``.
    """
    rows = keep & np.isfinite(y) & (y != 0) & np.all(np.isfinite(X) & (X != 0), axis=1)
    if rows.sum() < 3:
        return None
    signs = np.sign(y[rows])
    if not (np.all(signs > 0) or np.all(signs < 0)):
        return None
    with np.errstate(all="ignore"):
        logs = np.log(np.abs(X[rows]))
    varied = [j for j in range(X.shape[1]) if np.ptp(logs[:, j]) > 1e-6]
    if not varied or rows.sum() < len(varied) + 2:
        return None
    A = np.column_stack([np.ones(int(rows.sum())), logs[:, varied]])
    b = np.log(np.abs(y[rows]))
    coef, *_ = np.linalg.lstsq(A, b, rcond=None)
    resid = b - A @ coef
    ss = float(np.sum((b - b.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss if ss > 0 else float("nan")
    terms = " * ".join(f"{names[j]}**{coef[i + 1]:.3f}" for i, j in enumerate(varied))
    fixed = [names[j] for j in range(X.shape[1]) if j not in varied]
    text = (f"A power law fitted to those rows (least squares on the logarithms): |L| proportional to {terms}"
            f" (R^2 = {r2:.6f}; L is {'negative' if signs[0] < 0 else 'positive'} in every one)")
    if fixed:
        text += "; not varied in those rows: " + ", ".join(fixed)
    return text + "."


def derived_block(derived, names, control_keys, *, noisy: bool, start: int = 0, full: bool = True) -> str:
    """The derived law table (the protocol's diagnostics on a system) in words an agent can use.

    Args:
        derived: The protocol's :class:`~etc_fast.systems._derive.DerivedTable` (every experiment so far).
        names: The law's input names (signature order).
        control_keys: The apparatus's control keys (inputs named like one are read from the request).
        noisy: Whether the records carry noise.
        start: Show the rows from this experiment on (earlier rows do not change: each row is
            derived from its own record); the summary always uses every row.
        full: Include the explanation of the columns (the first time the table is shown).
    """
    if derived is None or len(derived.y) == 0:
        return ""
    X, y = np.asarray(derived.X, dtype=np.float64), np.asarray(derived.y, dtype=np.float64)
    misfit = np.asarray(derived.misfit, dtype=np.float64)
    sigma = np.asarray(derived.sigma, dtype=np.float64)
    thr = reliable_threshold(misfit, noisy)
    direct = [n for n in names if n in control_keys]
    effective = [n for n in names if n not in control_keys]
    parts = []
    if full:
        how = []
        if direct:
            how.append(", ".join(direct) + " " + ("is" if len(direct) == 1 else "are") + " read from the request (the value the control sets at the start)")
        if effective:
            how.append(", ".join(effective) + " " + ("is" if len(effective) == 1 else "are") + " the constant that imitates "
                       "the input best over the record (an effective value)")
        parts.append(
            "Automatic diagnostics (advisory): the law read back from each record. For each experiment the lab put a "
            "constant value L in place of the unknown law and searched for the L whose simulated record matches the "
            "observed one best; L is then an approximate sample of discovered_law at that experiment's inputs. Of the "
            "inputs, " + "; ".join(how) + ". `misfit` is the mean squared mismatch between the best constant-law record "
            "and the observed one, in units of a reading's precision: at most "
            f"{thr:.3g} means a constant law reproduces the record and L is a reliable sample; a larger misfit means "
            "the law's value changed while the record ran (L is then read from the record's start, an effective "
            "value) or the record pins it down poorly. `rel_unc` is the relative change of L that moves the record "
            "by one precision unit."
        )
    head = ["exp", *names, "L", "misfit", "rel_unc"]
    lines = ["  ".join(head)]
    for i in range(start, len(y)):
        cells = [str(i + 1), *(_g(v) for v in X[i]), _g(y[i]), f"{misfit[i]:.3g}" if np.isfinite(misfit[i]) else "n/a",
                 f"{sigma[i]:.2g}" if np.isfinite(sigma[i]) else "n/a"]
        lines.append("  ".join(cells))
    label = "Derived law values" + (f" of experiments {start + 1}-{len(y)}" if start else "")
    parts.append(label + ":\n" + "\n".join(lines))
    keep = np.isfinite(misfit) & (misfit <= thr) & np.isfinite(y)
    summary = f"Rows whose record a constant law reproduces (misfit <= {thr:.3g}): {int(keep.sum())} of {len(y)}."
    fit = power_law_summary(X, y, list(names), keep)
    if fit is not None:
        summary += " " + fit
    parts.append(summary)
    return "\n\n".join(parts)


def system_action_menu(task, allowed, batch_cap: int) -> str:
    """The exploration actions on a system, with their formats (the vanilla menu's items)."""
    from etc_fast.llm._prompts import draft_action, numbered_actions

    names = ", ".join(str(v["name"]) for v in task.variables)
    items = []
    if "committee" in allowed:
        items.append(
            "Propose hypotheses: a JSON object with up to 5 candidate expressions for the law, for example\n"
            '{"hypotheses": ["C * a * b / c**2", "C * a**2 / c"]}\n'
            "Give at least two genuinely different candidates: the lab simulates each of them inside the apparatus "
            f"at every experiment it could run and runs up to {batch_cap} new experiments where their simulated "
            "records disagree most.\n" + SYSTEM_HYPOTHESIS_LANGUAGE.format(names=names)
        )
    if "analysis" in allowed:
        items.append(
            "Analyse: Python code inside <python> ... </python> tags; its printed output is returned next turn. "
            + SYSTEM_DATA_NOTE + " numpy (as np) and math are available. Print what you want to see; only printed "
            "output comes back. Nothing is kept between calls."
        )
    if "draft" in allowed:
        items.append(draft_action(task.signature))
    return numbered_actions(items)


def system_turn_status(turns_left: int, experiments: int, left: int | None) -> str:
    """The closing line of a systems-tier exploration turn: ``experiments`` run so far, those ``left`` in the
    budget (omitted when None) and ``turns_left`` after this one.
    """
    budget = "" if left is None else f", {left} left in the budget"
    return f"Experiments run so far: {experiments}{budget}. Turns left after this one: {turns_left}."


def _task_part(task, apparatus: str, noisy: bool) -> str:
    from etc_fast.llm._prompts import noise_sentence, objective_block

    return objective_block(task) + "\n\n" + apparatus + "\n\n" + noise_sentence(noisy)


def _everything_so_far(task, so, noisy: bool, heading: str) -> list[str]:
    """A fresh session's opening parts: objective and apparatus, every record, the derived table."""
    keys = [c.key for c in so.spec.controls]
    names = [str(v["name"]) for v in task.variables]
    parts = [_task_part(task, so.apparatus, noisy), records_block(so.requests, so.outputs, heading=heading)]
    diag = derived_block(so.derived, names, keys, noisy=noisy)
    if diag:
        parts.append(diag)
    return parts


def system_explore_first_message(task, system_obs, *, noisy: bool, allowed, batch_cap: int, turns_left: int,
                                 measurements_left: int | None) -> str:
    """The exploration session's first message: objective, apparatus, every record so far, diagnostics, menu."""
    so = system_obs
    parts = _everything_so_far(task, so, noisy, "Experiments so far")
    parts.append(system_action_menu(task, allowed, batch_cap))
    parts.append(system_turn_status(turns_left, len(so.requests), measurements_left))
    return "\n\n".join(parts)


def system_explore_next_message(task, system_obs, feedback: str | None, start: int, *, noisy: bool, allowed,
                                batch_cap: int, turns_left: int, measurements_left: int | None) -> str:
    """A later exploration message: the reply to the last action, the new records, their derived rows."""
    from etc_fast.llm._prompts import action_menu

    so = system_obs
    keys = [c.key for c in so.spec.controls]
    names = [str(v["name"]) for v in task.variables]
    parts = []
    if feedback and feedback.strip():
        parts.append(feedback.strip())
    if len(so.requests) > start:
        parts.append(records_block(so.requests[start:], so.outputs[start:], start=start, heading="New experiments"))
    diag = derived_block(so.derived, names, keys, noisy=noisy, start=start, full=False) if len(so.requests) > start else ""
    if diag:
        parts.append(diag)
    parts.append(action_menu(task, sorted(allowed), batch_cap, brief=True))
    parts.append(system_turn_status(turns_left, len(so.requests), measurements_left))
    return "\n\n".join(parts)


def system_synthesis_first_message(task, system_obs, draft: str | None, *, noisy: bool, interpreter: bool,
                                   turns_left: int) -> str:
    """The fresh synthesis session's message: apparatus, every record, diagnostics (if shown), the draft."""
    from etc_fast.llm._prompts import submission_block, synthesis_status

    so = system_obs
    parts = _everything_so_far(task, so, noisy, "All experiments")
    if draft and draft.strip():
        parts.append(
            "Draft law from the exploration session:\n<draft_law>\n" + draft.strip() + "\n</draft_law>\n"
            "Keep this draft unless the records disagree with it. If they do, correct it so that the apparatus, "
            "driven by your law, would produce every record, and refit its constants."
        )
    else:
        parts.append("No draft law was submitted during exploration: derive the law from the records.")
    parts.append("Experiments are not available in this session; requests for new experiments are refused.")
    if interpreter:
        parts.append(
            "Before submitting you may analyse the records with Python inside <python> ... </python> tags (one block "
            "per reply). " + SYSTEM_DATA_NOTE + " numpy (as np) and math are available. Print what you want to see; "
            "only printed output comes back. Nothing is kept between calls."
        )
    parts.append(submission_block(task, probing=False))
    parts.append(synthesis_status(turns_left, interpreter))
    return "\n\n".join(parts)
