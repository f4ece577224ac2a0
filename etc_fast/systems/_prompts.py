"""What an agent reads about a system: the apparatus block of a system trial's opening message.

NewtonBench's system prompts carry, per module and system, the apparatus, the control parameters,
the request and response format (time series of at most 20 points), the physics background and the
"confirmed assisting laws". :func:`apparatus_block` renders the same parts from
:mod:`etc_fast.systems._spec`, in the project's own words, so that the baselines' prompt builders
(``etc_fast.llm._prompts``) can put it where the vanilla apparatus block goes. Nothing here reads
the hidden law: the spec is public, and the law is named only by its signature and meaning.
"""

from __future__ import annotations

import json

from etc_fast.systems._spec import SystemSpec

__all__ = ["apparatus_block", "request_example", "response_example"]

_NUMBER_KINDS = ("m7_malus_law", "m9_hooke_law", "m11_heat_transfer")


def request_example(sp: SystemSpec) -> str:
    """``<run_experiment>`` with two placeholder objects holding every control key."""
    obj = "{" + ", ".join(f'"{c.key}": ...' for c in sp.controls) + "}"
    return f"<run_experiment>\n[{obj},\n {obj}]\n</run_experiment>"


def response_example(sp: SystemSpec) -> str:
    """``<experiment_output>`` with the shape of NewtonBench's answer (placeholders, not values)."""
    if sp.module == "m11_heat_transfer" and sp.system == "simple_system":
        one: object = {"P_cond": "...", "P_conv": "...", "P_rad": "..."}
    elif sp.module in _NUMBER_KINDS:
        one = "..."
    elif sp.module == "m0_gravity" and sp.system == "complex_system":
        one = {
            "time": ["..."],
            "position": [["...", "..."]],
            "velocity": [["...", "..."]],
        }
    elif sp.n_times > 1:
        time_key = "x" if sp.module == "m3_fourier_law" else "time"
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
            "Python tool: put code inside <python> ... </python> tags to analyse your data. Preloaded: `X` "
            "(one row per experiment run, the controls in the order listed above), `series` (NumPy array "
            "[experiment, recorded quantity, point]: the outputs as numbers, NaN where none) and `data` (a list "
            "of {\"request\": ..., \"output\": ...}). The printed output comes back as:\n<python_output>\n...\n</python_output>"
        )
    blocks.append(submission_block(task, probing=False))
    return "\n\n".join(blocks)
