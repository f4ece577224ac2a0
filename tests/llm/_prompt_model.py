"""A stand-in model whose reply is a pure function of the request's messages.

Used to check that prompts stay byte-stable across code versions (tests/llm/test_prompt_stability.py,
and ``python -m tests.llm._prompt_model --port P`` as a server for command-line runs): two versions
that send the same prompts get the same replies, so their conversations stay in step and a reply
cache filled by one is hit by the other.

It plays the normal path of every phase, on every tier, reading only the prompt: the argument names
of ``def discovered_law(...)`` and the JSON keys of the request template in the first user message,
whether a ``<python>`` tool is offered, and which conversation it is (the system prompt):

* free-form baseline: experiment, (interpreter: an analysis), experiment, final law;
* planner exploration: committee, (interpreter: an analysis), committee, draft law;
* synthesis: (interpreter: an analysis), final law.

Every request is valid, inside the domains of m0_gravity and m1_coulomb_force, and every law has the
signature's arguments. This module imports nothing from etc_fast, so a script run against an older
checkout can load it by path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

_SIGNATURE = re.compile(r"def discovered_law\(([^)]*)\)")
_TEMPLATE_KEY = re.compile(r'"(\w+)": \.\.\.')


def _first_user(messages: Sequence[dict[str, Any]]) -> str:
    for m in messages:
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


def _law(args: Sequence[str], exponent: int = 2) -> str:
    head, last = (list(args[:-1]) or list(args)), args[-1]
    return f"def discovered_law({', '.join(args)}):\n    C = 1.5\n    return C * {' * '.join(head)} / {last} ** {exponent}"


def _committee(args: Sequence[str], variant: int) -> str:
    head, last = " * ".join(args[:-1] or args), args[-1]
    hyps = [f"C * {head} / {last}**2", f"C * {head} / {last}"] if variant == 0 else [
        f"C * {head} / {last}**3", f"C * {head} / {last}**2", f"C * {head}"]
    return json.dumps({"hypotheses": hyps})


def _request(keys: Sequence[str], args: Sequence[str], turn: int) -> str:
    """Two experiments varying the law's own inputs (other controls keep their defaults)."""
    varied = [k for k in keys if k in args] or list(keys[:1])
    points = [{k: round(1.0 + 0.5 * turn + 0.25 * j + 0.75 * e, 6) for j, k in enumerate(varied)} for e in range(2)]
    return f"<run_experiment>\n{json.dumps(points)}\n</run_experiment>"


def reply_text(messages: Sequence[dict[str, Any]], *, baseline_analysis: bool = True) -> str:
    """The reply to a conversation (deterministic: nothing but the messages is read).

    ``baseline_analysis=False``: a free-form baseline runs no analysis even with an interpreter.
    """
    system = str(messages[0].get("content") or "") if messages else ""
    first = _first_user(messages)
    found = _SIGNATURE.search(first)
    args = [a.strip() for a in found.group(1).split(",") if a.strip()] if found else ["x"]
    keys = list(dict.fromkeys(_TEMPLATE_KEY.findall(first)))
    interpreter = "<python>" in system or "<python>" in first
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    analysis = "<python>\nprint(sum(range(10)), 'checked')\n</python>"
    planner_analysis = "<python>\nprint(len(X), 'rows')\n</python>"
    if "finalizing the law" in system:  # synthesis
        steps = ["analysis"] if interpreter else []
        step = steps[turn] if turn < len(steps) else "final"
        return planner_analysis if step == "analysis" else f"<final_law>\n{_law(args)}\n</final_law>"
    if "you propose candidate laws" in system:  # planner exploration
        steps = ["committee0", "analysis", "committee1"] if interpreter else ["committee0", "committee1"]
        step = steps[turn] if turn < len(steps) else "draft"
        if step == "analysis":
            return planner_analysis
        if step.startswith("committee"):
            return _committee(args, int(step[-1]))
        return f"<draft_law>\n{_law(args, 1)}\n</draft_law>"
    # free-form baseline
    steps = ["experiment", "analysis", "experiment"] if interpreter and baseline_analysis else ["experiment", "experiment"]
    step = steps[turn] if turn < len(steps) else "final"
    if step == "analysis":
        return analysis
    if step == "experiment":
        return _request(keys, args, turn)
    return f"<final_law>\n{_law(args)}\n</final_law>"


def prompt_model(reply_factory: Callable[..., Any], *, baseline_analysis: bool = True) -> Callable[[dict, int], Any]:
    """A ``ChatServer`` script: ``reply_factory(content, prompt_tokens=..., completion_tokens=...)``
    (``tests.llm._server.ok``) wraps :func:`reply_text`; token counts depend on the prompt only."""

    def answer(body: dict, index: int) -> Any:
        messages = body.get("messages") or []
        text = reply_text(messages, baseline_analysis=baseline_analysis)
        size = sum(len(str(m.get("content") or "")) for m in messages)
        return reply_factory(text, prompt_tokens=size // 4 + 1, completion_tokens=len(text) // 4 + 1)

    return answer


def main(argv: Sequence[str] | None = None) -> int:
    """Serve :func:`prompt_model` on a fixed port until SIGTERM; log each request's digest."""
    import argparse
    import hashlib
    import signal
    import sys
    import threading

    from tests.llm._server import ChatServer, ok

    p = argparse.ArgumentParser(prog="python -m tests.llm._prompt_model")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True, help="append one JSON line per chat request here")
    p.add_argument("--lifetime", type=float, default=3600.0)
    args = p.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    base = prompt_model(ok)
    lock = threading.Lock()

    def logged(body: dict, index: int) -> Any:
        raw = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
        with lock, open(args.log, "a") as fh:
            fh.write(json.dumps({"index": index, "sha256": hashlib.sha256(raw.encode()).hexdigest(), "body": body}) + "\n")
        return base(body, index)

    with ChatServer(logged, max_requests=10**7, lifetime_s=args.lifetime, models=["test-model"], port=args.port) as srv:
        print(srv.base_url, flush=True)
        stop.wait(args.lifetime)
        print(f"served {srv.n_requests} chat requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
