"""NewtonBench's LLM symbolic judge.

The judge model (default ``gpt41`` at temperature 0.6) is shown the ground-truth text of the law
(Equation 1), the raw submitted source (Equation 2) and the parameter description, and asked whether
they are the same relationship up to algebra and renaming, constants free in value but exponents and
structure exact. The prompt is :meth:`~etc_fast.llm._texts.BaselineTexts.judge_prompt`: this
project's words with NewtonBench's instructions and seven worked examples, the parameter
descriptions before the two equations (``prompts: etc_fast``), or NewtonBench's own template read
from a checkout (``prompts: newtonbench``). The reply is stripped and upper-cased; the first
``ANSWER:`` followed by YES or NO decides; failing that, the last whole-word YES or NO
(NewtonBench's rule). A reply with neither (or one cut at the token limit) is asked again;
after three such replies the submission is not credited. A call that gets no reply at all is no
verdict: the :class:`~etc_fast.errors.InfrastructureError` is raised (the trial record then says
``judge status: error`` and the runner judges it again on resume).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from etc_fast.errors import InfrastructureError
from etc_fast.evaluate._judge import Verdict
from etc_fast.llm import BaselineTexts, LLMClient, LLMConfigError, LLMSettings, make_texts, parse_verdict
from etc_fast.tasks import Task

#: Judge model and temperature used by NewtonBench's run_experiments.
DEFAULT_JUDGE_MODEL = "gpt41"
DEFAULT_JUDGE_TEMPERATURE = 0.6
DEFAULT_ATTEMPTS = 3

_SIGNATURE_RE = re.compile(r"def\s+discovered_law\s*\(")


class LLMJudge:
    """Symbolic-equivalence judge backed by a chat model.

    Args:
        settings: Client settings; default ``gpt41`` at temperature 0.6.
        attempts: Calls before giving up (NewtonBench: 3).
        client: A ready client (tests); built from ``settings`` otherwise.
        prompts: ``etc_fast`` or ``newtonbench`` (the template of a NewtonBench checkout).
        newtonbench_path: The checkout (``None``: ``NEWTONBENCH_PATH``).
        texts: Ready texts (instead of ``prompts``).
        **overrides: Settings fields (``model``, ``base_url``, ``cache_path``, ...) applied to the
            defaults when ``settings`` is not given.

    Raises:
        LLMConfigError: at construction, when no key and no base_url are available.
    """

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        attempts: int = DEFAULT_ATTEMPTS,
        client: LLMClient | None = None,
        prompts: str = "etc_fast",
        newtonbench_path: str | None = None,
        texts: BaselineTexts | None = None,
        **overrides: Any,
    ) -> None:
        self.texts = texts if texts is not None else make_texts(prompts, newtonbench_path)
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"attempts must be a positive integer, got {attempts!r}")
        if settings is not None and overrides:
            raise ValueError(f"pass either settings or setting overrides ({', '.join(overrides)}), not both")
        if settings is None:
            settings = client.settings if client is not None else judge_settings(**overrides)
        self.settings = settings
        if client is None:
            try:
                client = LLMClient(settings)
            except LLMConfigError as exc:
                raise LLMConfigError(f"LLM judge: {exc}, or use judge: structural (offline)") from None
        client.ledger_role = "judge"  # its paid calls are the judge's on the ledger
        self.client = client
        self.attempts = attempts
        self.usage: dict[str, int] = {
            "prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cached": 0,
            "prompt_tokens_cached": 0, "completion_tokens_cached": 0,
        }
        self.last_reply: str | None = None

    def messages(self, source: str, task: Task) -> list[dict[str, str]]:
        """The chat messages sent for ``source`` (one user message, as NewtonBench; a system message
        first for Nemotron judges)."""
        model = str(self.settings.model)
        if self.texts.name == "newtonbench" and task.source == "newtonbench":
            return self.texts.judge_messages(  # type: ignore[call-arg]
                task.ground_truth_text, source, task.param_description, model=model, task_name=task.module,
            )
        return self.texts.judge_messages(task.ground_truth_text, source, task.param_description, model=model)

    def judge(self, source: str, task: Task) -> Verdict:
        """Ask the judge model; never raises for a bad submission or a reply without a verdict.

        Raises:
            InfrastructureError: a call got no reply (bad key, dead server, replay miss, ...).
        """
        model = self.client.model.model_id
        if not isinstance(source, str) or not source.strip():
            return Verdict(judge=self.name, credited=False, reason="no submission to judge")
        if not _SIGNATURE_RE.search(source):
            return Verdict(judge=self.name, credited=False, reason="no discovered_law function in the submission; judge not called")
        messages = self.messages(source, task)
        problems: list[str] = []
        for attempt in range(self.attempts):
            try:
                reply = self.client.complete(messages, sample=attempt if attempt else None)
            except InfrastructureError:
                raise
            except Exception as exc:  # noqa: BLE001 - a judge never brings a trial down
                problems.append(f"attempt {attempt + 1}: {type(exc).__name__}: {exc}")
                continue
            self._count(reply)
            self.last_reply = reply.content
            verdict = None if getattr(reply, "truncated", False) else parse_verdict(reply.content)
            if verdict is None:
                tail = reply.content.strip()[-120:].replace("\n", " ")
                problems.append(f"attempt {attempt + 1}: no YES/NO in the reply ({tail!r})")
                continue
            answer = "YES" if verdict else "NO"
            return Verdict(
                judge=self.name,
                credited=verdict,
                reason=f"LLM judge {model} answered {answer}" + (f" on attempt {attempt + 1}" if attempt else ""),
            )
        return Verdict(
            judge=self.name,
            credited=False,
            reason=f"LLM judge {model} gave no verdict in {self.attempts} attempts; not credited. " + " | ".join(problems)[:600],
        )

    def _count(self, reply: Any) -> None:
        self.usage["prompt_tokens"] += int(reply.prompt_tokens)
        self.usage["completion_tokens"] += int(reply.completion_tokens)
        self.usage["calls"] += 1
        self.usage["cached"] += int(bool(reply.cached))
        if reply.cached:
            self.usage["prompt_tokens_cached"] += int(reply.prompt_tokens)
            self.usage["completion_tokens_cached"] += int(reply.completion_tokens)


def judge_settings(**overrides: Any) -> LLMSettings:
    """Judge settings: NewtonBench defaults (``gpt41``, temperature 0.6) with ``overrides`` applied."""
    fields = {f.name for f in dataclasses.fields(LLMSettings)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"unknown judge setting(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
    base: dict[str, Any] = {"model": DEFAULT_JUDGE_MODEL, "temperature": DEFAULT_JUDGE_TEMPERATURE}
    base.update(overrides)
    return LLMSettings(**base)


__all__ = ["DEFAULT_JUDGE_MODEL", "DEFAULT_JUDGE_TEMPERATURE", "LLMJudge", "judge_settings", "parse_verdict"]
