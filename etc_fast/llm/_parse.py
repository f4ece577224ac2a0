"""Turning model replies into protocol actions.

Tolerant where it costs nothing (JSON in code fences or bare, prose around it, ``F = ...`` prefixes,
trailing commas) and faithful to NewtonBench where its rules define the benchmark: the last tag block
wins (from the last opening tag to the next closing tag), experiment requests are strict JSON (a
single object counts as a list of one), and the submitted law is the last ``def discovered_law``
inside the block, ending where a line starts with ``def`` or at the end. An unusable reply becomes
``Action(kind="invalid", error=...)``; nothing here raises for bad model output.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from etc_fast.core import Action

#: Most hypotheses a committee keeps (paper: up to five).
MAX_HYPOTHESES = 5
#: Replies longer than this are cut before parsing (guards the quadratic JSON scan).
MAX_REPLY_CHARS = 200_000

_LAW_RE = re.compile(r"def discovered_law.*?(?=\ndef|\Z)", re.DOTALL)
_FENCE_LINE_RE = re.compile(r"^\s*```[\w+-]*\s*$")
_FENCED_RE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")
_EXPR_KEYS = ("expression", "expr", "formula", "law", "hypothesis", "equation")


class ReplyError(ValueError):
    """A reply does not hold the expected content (the message says what is wrong)."""


# ----------------------------------------------------------------------------------------
# Tags
# ----------------------------------------------------------------------------------------
def last_block(text: str, tag: str) -> str | None:
    """Text between the last ``<tag>`` and the next ``</tag>`` after it, or ``None``.

    Tags match case-insensitively. A last opening tag without a closing tag after it gives ``None``
    (NewtonBench semantics: an unterminated block is no block).
    """
    if not text:
        return None
    low = text.lower()
    open_tag, close_tag = f"<{tag.lower()}>", f"</{tag.lower()}>"
    start = low.rfind(open_tag)
    if start < 0:
        return None
    begin = start + len(open_tag)
    end = low.find(close_tag, begin)
    if end < 0:
        return None
    return text[begin:end]


def last_open_position(text: str, tag: str) -> int:
    """Index of the last ``<tag>`` (case-insensitive), or -1."""
    return (text or "").lower().rfind(f"<{tag.lower()}>")


def _strip_fences(block: str) -> str:
    """Drop lines that are only a Markdown code fence (```` ``` ```` or ```` ```python ````)."""
    return "\n".join(line for line in block.split("\n") if not _FENCE_LINE_RE.match(line))


def extract_law(block: str | None) -> str | None:
    """The last ``def discovered_law...`` in ``block`` (up to a newline followed by ``def`` or the end).

    Markdown fence lines are removed first; trailing whitespace is dropped. ``None`` when absent.
    """
    if not block:
        return None
    matches = _LAW_RE.findall(_strip_fences(block))
    if not matches:
        return None
    law = matches[-1].rstrip()
    return law or None


def extract_final_law(text: str, tag: str = "final_law") -> str | None:
    """The law in the last complete ``<tag>`` block, or ``None``."""
    return extract_law(last_block(text, tag))


def extract_code(text: str, tag: str = "python") -> str | None:
    """Code in the last complete ``<tag>`` block (fence lines removed), or ``None`` if empty/absent."""
    block = last_block(text, tag)
    if block is None:
        return None
    code = _strip_fences(block).strip("\n")
    return code if code.strip() else None


# ----------------------------------------------------------------------------------------
# Experiments (strict JSON, NewtonBench semantics)
# ----------------------------------------------------------------------------------------
def parse_experiments(text: str) -> tuple[dict[str, Any], ...]:
    """Experiment points from the last ``<run_experiment>`` block.

    The block must be strict JSON (no comments, no trailing commas): an array of objects, or one
    object (a list of one). A surrounding Markdown fence is ignored.

    Raises:
        ReplyError: no complete block, invalid JSON, an empty list, or a non-object entry.
    """
    block = last_block(text, "run_experiment")
    if block is None:
        raise ReplyError("no complete <run_experiment>...</run_experiment> block")
    body = _strip_fences(block).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the <run_experiment> block is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ReplyError("the <run_experiment> block is not usable JSON: it is nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise ReplyError(f"the <run_experiment> block is not valid JSON ({exc})") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ReplyError(f"the <run_experiment> block must hold a JSON array of objects, got {type(data).__name__}")
    if not data:
        raise ReplyError("the <run_experiment> block holds an empty list")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise ReplyError(f"experiment {i} must be a JSON object of inputs, got {type(item).__name__}")
    return tuple(data)


# ----------------------------------------------------------------------------------------
# Committees (tolerant JSON)
# ----------------------------------------------------------------------------------------
def _balanced_end(text: str, start: int, limit: int) -> tuple[int, int]:
    """(index just past the bracket matching ``text[start]`` or -1, characters scanned).

    Quotes are respected; the scan stops after ``limit`` characters.
    """
    pairs = {"{": "}", "[": "]"}
    stack = [pairs[text[start]]]
    quote = None
    i = start + 1
    n = min(len(text), start + 1 + limit)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            if ch != stack[-1]:
                return -1, i - start
            stack.pop()
            if not stack:
                return i + 1, i - start
        i += 1
    return -1, i - start


#: Characters the bracket scan may visit in one reply (keeps pathological replies linear-time).
_SCAN_BUDGET = 2_000_000
_JSON_START_RE = re.compile(r"""\{\s*["'}]|\[\s*["'{\]]""")


def _loads_lenient(s: str) -> Any:
    """JSON, else JSON without trailing commas, else a Python literal (single quotes).

    Raises:
        ValueError: none of them parses (also for absurd nesting or integer literals).
    """
    try:
        return json.loads(s)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        pass
    try:
        return json.loads(_TRAILING_COMMA_RE.sub(r"\1", s))
    except (ValueError, RecursionError):
        pass
    if len(s) <= 20_000:
        try:
            return ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise ValueError("not JSON")


def _json_candidates(text: str) -> list[tuple[int, Any]]:
    """(position, value) of every JSON-ish object/array in fences or bare text, in text order."""
    found: list[tuple[int, Any]] = []
    for m in _FENCED_RE.finditer(text):
        body = m.group(2).strip()
        if body[:1] in "{[":
            try:
                found.append((m.start(), _loads_lenient(body)))
            except ValueError:
                pass
    # Bare JSON: only where an object/array plausibly starts ({"..., ['..., [{...), within a budget.
    budget = _SCAN_BUDGET
    pos = 0
    while budget > 0:
        m = _JSON_START_RE.search(text, pos)
        if m is None:
            break
        i = m.start()
        end, scanned = _balanced_end(text, i, budget)
        budget -= scanned
        if end > 0:
            try:
                found.append((i, _loads_lenient(text[i:end])))
                pos = end
                continue
            except ValueError:
                pass
        pos = i + 1
    found.sort(key=lambda t: t[0])
    return found


def clean_expression(expr: str) -> str:
    """Strip decorations models add around an expression: backticks, ``F = `` prefixes, ``;``."""
    s = expr.strip()
    prev = None
    while s != prev:
        prev = s
        s = s.strip().strip("`").rstrip(";").strip()
    # A single top-level "=" (not ==, <=, >=, !=) means "name = expression": keep the right side.
    depth = 0
    eq_at = []
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            prev = s[i - 1] if i else ""
            nxt = s[i + 1] if i + 1 < len(s) else ""
            if prev not in "=<>!" and nxt != "=":
                eq_at.append(i)
    if len(eq_at) == 1:
        s = s[eq_at[0] + 1 :].strip()
    return s


def _hypotheses_from(value: Any) -> list[str] | None:
    """The expression list of a committee value, or ``None`` if it is not one."""
    items = None
    if isinstance(value, Mapping):
        for k, v in value.items():
            if str(k).strip().lower() in ("hypotheses", "hypothesis", "committee", "expressions", "laws"):
                items = v
                break
        if items is None:
            return None
    elif isinstance(value, list):
        items = value
    else:
        return None
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list):
        return None
    out: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            item = next((item[k] for k in _EXPR_KEYS if isinstance(item.get(k), str)), None)
        if isinstance(item, str):
            expr = clean_expression(item)
            if expr and expr not in out:
                out.append(expr)
    return out if (out or isinstance(value, Mapping)) else None


def parse_committee(text: str, max_hypotheses: int = MAX_HYPOTHESES) -> tuple[tuple[str, ...], int]:
    """Hypotheses of the last committee in ``text`` and where it starts.

    Accepts ``{"hypotheses": [...]}`` (fenced or bare, prose around it, trailing commas or single
    quotes tolerated), a bare JSON list of strings, and entries that are objects with an
    ``expression`` field. Duplicates are dropped and at most ``max_hypotheses`` are kept.

    Raises:
        ReplyError: no committee found, or it lists no expressions.
    """
    text = (text or "")[:MAX_REPLY_CHARS]
    best: tuple[int, list[str]] | None = None
    fallback: tuple[int, list[str]] | None = None
    for pos, value in _json_candidates(text):
        hyps = _hypotheses_from(value)
        if hyps is None:
            continue
        if isinstance(value, Mapping):
            best = (pos, hyps)
        elif hyps:
            fallback = (pos, hyps)
    chosen = best or fallback
    if chosen is None:
        raise ReplyError('no committee found: expected a JSON object {"hypotheses": ["expression", ...]}')
    pos, hyps = chosen
    if not hyps:
        raise ReplyError('the committee lists no expressions: "hypotheses" must be a list of expression strings')
    return tuple(hyps[:max_hypotheses]), pos


# ----------------------------------------------------------------------------------------
# Reply -> Action
# ----------------------------------------------------------------------------------------
def _invalid(raw: str, error: str) -> Action:
    return Action(kind="invalid", raw=raw, error=error)


def parse_action(text: str | None, *, phase: str, allowed: Collection[str]) -> Action:
    """Decide which action a reply asks for.

    Candidates are read in a fixed order per phase; the first one whose kind is in ``allowed`` wins.
    When the reply asks only for actions not allowed now, the first of them is returned so the
    protocol can refuse it with an explanation; when it asks for nothing usable, the action is
    ``invalid`` with the reason.

    Phases: ``explore`` (draft > analysis/committee, the later of the two in the text; an experiment
    request is recognised only to be refused), ``synthesis``
    (final > analysis > experiment), ``baseline`` (final > analysis when its last ``<python>`` comes
    after the last ``<run_experiment>`` > experiment, as NewtonBench's agents), ``final`` (final only).
    """
    raw = text if isinstance(text, str) else ""
    if not raw.strip():
        return _invalid(raw, "the reply was empty")
    raw_cut = raw[:MAX_REPLY_CHARS]
    allowed = frozenset(allowed)
    candidates: list[Action] = []
    problems: list[str] = []

    def law_action(kind: str, tags: tuple[str, ...]) -> None:
        for tag in tags:
            block = last_block(raw_cut, tag)
            if block is None:
                continue
            law = extract_law(block)
            if law is not None:
                candidates.append(Action(kind=kind, source=law, raw=raw))  # type: ignore[arg-type]
                return
            problems.append(f"the <{tag}> block holds no 'def discovered_law(...)' function")
            return

    def analysis_action() -> None:
        code = extract_code(raw_cut, "python")
        if code is not None:
            candidates.append(Action(kind="analysis", code=code, raw=raw))
        elif last_open_position(raw_cut, "python") >= 0:
            problems.append("the <python> block is empty or not closed with </python>")

    def experiment_action() -> None:
        if last_open_position(raw_cut, "run_experiment") < 0:
            return
        try:
            points = parse_experiments(raw_cut)
        except ReplyError as exc:
            problems.append(str(exc))
            return
        candidates.append(Action(kind="experiment", points=points, raw=raw))

    def committee_action(source: str) -> tuple[int, Action] | None:
        try:
            hyps, pos = parse_committee(source)
        except ReplyError as exc:
            problems.append(str(exc))
            return None
        return pos, Action(kind="committee", hypotheses=hyps, raw=raw)

    if phase == "explore":
        law_action("draft", ("draft_law", "final_law"))
        py_pos = last_open_position(raw_cut, "python")
        # JSON inside a <python> block is code, not a committee.
        committee = committee_action(mask_blocks(raw_cut, "python"))
        code = extract_code(raw_cut, "python")
        analysis = Action(kind="analysis", code=code, raw=raw) if code is not None else None
        if code is None and py_pos >= 0:
            problems.append("the <python> block is empty or not closed with </python>")
        ordered = [a for a in (analysis, committee[1] if committee else None) if a is not None]
        if analysis is not None and committee is not None and committee[0] > py_pos:
            ordered.reverse()
        candidates.extend(ordered)
        experiment_action()  # never allowed here: returned only so the protocol can explain the refusal
    elif phase == "synthesis":
        law_action("final", ("final_law", "draft_law"))
        analysis_action()
        experiment_action()
    elif phase == "baseline":
        law_action("final", ("final_law",))
        py, ex = last_open_position(raw_cut, "python"), last_open_position(raw_cut, "run_experiment")
        if "analysis" in allowed and py >= 0 and py > ex:
            analysis_action()
        experiment_action()
    elif phase == "final":
        law_action("final", ("final_law",))
    else:
        return _invalid(raw, f"unknown phase {phase!r}")

    for action in candidates:
        if action.kind in allowed:
            return action
    if candidates:
        return candidates[0]
    if not problems:
        problems.append(_missing_message(phase, allowed))
    if len(raw) > MAX_REPLY_CHARS:
        problems.append(
            f"the reply is {len(raw)} characters long and only its first {MAX_REPLY_CHARS} characters are read"
        )
    return _invalid(raw, "; ".join(dict.fromkeys(problems)))


# ----------------------------------------------------------------------------------------
# Baseline replies under NewtonBench's rules (``parsing: newtonbench``)
# ----------------------------------------------------------------------------------------
_NB_LAW_RE = re.compile(r"(def discovered_law.*?(?=\ndef|\Z))", re.DOTALL)


def _nb_block(text: str, tag: str) -> str | None:
    """NewtonBench's block rule: from the last ``<tag>`` (exact case) to the first ``</tag>`` after
    it, stripped; ``None`` when either is missing."""
    start = text.rfind(f"<{tag}>")
    if start < 0:
        return None
    end = text.find(f"</{tag}>", start)
    if end < 0:
        return None
    return text[start + len(tag) + 2 : end].strip()


def nb_final_law(text: str) -> str | None:
    """The law NewtonBench extracts from a reply: the last ``def discovered_law...`` (up to a
    newline followed by ``def``, or the end) in the last complete ``<final_law>`` block, stripped.
    Nothing is repaired: a Markdown fence inside the block stays part of the law."""
    block = _nb_block(text, "final_law")
    if block is None:
        return None
    found = _NB_LAW_RE.findall(block)
    return found[-1].strip() if found else None


def nb_experiments(text: str) -> tuple[list[Any] | None, bool]:
    """NewtonBench's experiment request: (list of entries or ``None``, whether it was one object).

    The last complete ``<run_experiment>`` block, stripped, read with strict ``json.loads``: a list
    is the request, an object is a request of one; anything else (invalid JSON, a fence, another
    type) is ``None``. The entries are not checked here.
    """
    block = _nb_block(text, "run_experiment")
    if block is None:
        return None, False
    try:
        data = json.loads(block)
    except Exception:  # noqa: BLE001 - NewtonBench treats every failure alike
        return None, False
    if isinstance(data, dict):
        return [data], True
    if isinstance(data, list):
        return data, False
    return None, False


def parse_baseline_newtonbench(text: str | None, *, interpreter: bool, final_only: bool = False,
                               nan_law: str | None = None) -> tuple[Action, dict[str, Any]]:
    """A baseline reply read as NewtonBench's agents read it. Returns the action and facts the
    reply's answer depends on (``single``: the request was one object; ``silent``: NewtonBench's
    code-assisted agent sends no reply to it).

    Vanilla (``interpreter`` false): a complete ``<final_law>`` holding ``def discovered_law``
    ends the trial; else a non-empty request is run; else the reply is invalid.
    Code-assisted: a reply holding both ``<final_law>`` and ``</final_law>`` ends the trial (its
    law, or ``nan_law`` when none can be extracted); else a non-empty ``<python>`` block whose
    last opening tag comes after the last ``<run_experiment>`` is analysis; else a reply holding
    both experiment tags is a request (one that cannot be read gets no reply at all); else invalid.
    ``final_only``: the forced final call, where only a law counts.
    """
    raw = text if isinstance(text, str) else ""
    info: dict[str, Any] = {"single": False, "silent": False}
    body = raw[:MAX_REPLY_CHARS]
    law = nb_final_law(body)
    if interpreter and not final_only and "<final_law>" in body and "</final_law>" in body:
        return Action(kind="final", source=law if law is not None else nan_law, raw=raw), info
    if law is not None:
        return Action(kind="final", source=law, raw=raw), info
    if final_only:
        return _invalid(raw, "the reply holds no complete <final_law> block with def discovered_law(...)"), info
    if interpreter:
        code = _nb_block(body, "python")
        if code and body.rfind("<python>") > body.rfind("<run_experiment>"):
            return Action(kind="analysis", code=code, raw=raw), info
        if "<run_experiment>" in body and "</run_experiment>" in body:
            points, single = nb_experiments(body)
            if points:
                info["single"] = single
                return Action(kind="experiment", points=tuple(points), raw=raw), info
            info["silent"] = True
            return _invalid(raw, "the <run_experiment> block could not be read (strict JSON, a non-empty array or an object)"), info
        return _invalid(raw, "the reply holds no usable action (<run_experiment>, <python> or <final_law>)"), info
    points, single = nb_experiments(body)
    if points:
        info["single"] = single
        return Action(kind="experiment", points=tuple(points), raw=raw), info
    if "<run_experiment>" in body:
        return _invalid(raw, "the <run_experiment> block is missing its closing tag or is not a non-empty strict JSON array or object"), info
    return _invalid(raw, "the reply holds neither a <run_experiment> block nor a complete <final_law> block"), info


_BLOCK_CACHE: dict[str, re.Pattern[str]] = {}


def mask_blocks(text: str, tag: str) -> str:
    """``text`` with every complete ``<tag>...</tag>`` block blanked out (positions kept)."""
    pat = _BLOCK_CACHE.get(tag)
    if pat is None:
        pat = _BLOCK_CACHE[tag] = re.compile(rf"<{re.escape(tag)}>.*?</{re.escape(tag)}>", re.DOTALL | re.IGNORECASE)
    return pat.sub(lambda m: " " * len(m.group(0)), text)


def _missing_message(phase: str, allowed: Collection[str]) -> str:
    wanted = {
        "committee": 'a JSON committee {"hypotheses": [...]}',
        "analysis": "a <python> block",
        "draft": "a <draft_law> block",
        "final": "a <final_law> block with def discovered_law(...)",
        "experiment": "a <run_experiment> block",
    }
    parts = [wanted[k] for k in ("final", "draft", "committee", "analysis", "experiment") if k in allowed]
    return f"the reply holds none of the expected actions ({' or '.join(parts) or 'none allowed'})"


__all__ = [
    "MAX_HYPOTHESES",
    "ReplyError",
    "clean_expression",
    "extract_code",
    "extract_final_law",
    "extract_law",
    "last_block",
    "nb_experiments",
    "nb_final_law",
    "parse_action",
    "parse_baseline_newtonbench",
    "parse_committee",
    "parse_experiments",
]
