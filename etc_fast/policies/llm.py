"""A policy backed by a chat model.

Each protocol context (planner exploration, fresh synthesis, free-form baseline) is one
conversation: ``begin`` starts it with the phase's system prompt; every ``act`` renders the
observation and the protocol's feedback into the next user message, calls the model, and parses the
reply into an :class:`~etc_fast.protocol.Action`. Any reply is the model's outcome, however useless
(unparseable, empty, cut at the token limit): it becomes an action, ``invalid`` with the reason when
it holds none. A call that ends without a reply (after the client's retries) is not the model's
doing: the :class:`~etc_fast.errors.InfrastructureError` goes up to the protocol, which stops the
trial; nothing of it reaches a prompt. A configuration error (no key, no base_url) is raised at
construction.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from etc_fast.core import Action, Observation, ProtocolConfig, TaskView
from etc_fast.errors import InfrastructureError
from etc_fast.llm import (
    MAX_REPLY_CHARS,
    BaselineTexts,
    LLMClient,
    LLMConfigError,
    LLMSettings,
    make_texts,
    parse_action,
    parse_baseline_newtonbench,
)
from etc_fast.llm import prompts as P

#: Longest feedback text (characters) put into one message; longer text is cut with a note.
DEFAULT_MAX_FEEDBACK_CHARS = 8000
_PHASES = ("explore", "synthesis", "baseline")


def settings_from(model: str | None, settings: LLMSettings | None, options: dict[str, Any]) -> LLMSettings:
    """The :class:`LLMSettings` of a policy: ``settings`` as given, or built from ``model`` and ``options``.

    Raises:
        LLMConfigError: ``settings`` is not an LLMSettings, or is given together with ``options`` or a
            different ``model``; no model is named; or an option is not an LLMSettings field.
    """
    if settings is not None:
        if not isinstance(settings, LLMSettings):
            raise LLMConfigError(f"settings must be LLMSettings, got {type(settings).__name__}")
        if options:
            raise LLMConfigError(f"pass either settings or option overrides ({', '.join(sorted(options))}), not both")
        if model is not None and model != settings.model:
            raise LLMConfigError(f"model {model!r} disagrees with settings.model {settings.model!r}")
        return settings
    if model is None:
        raise LLMConfigError("LLMPolicy needs a model name (or settings)")
    fields = {f.name for f in dataclasses.fields(LLMSettings)} - {"model"}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise LLMConfigError(f"unknown LLM option(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
    return LLMSettings(model=model, **options)


def _kept_reply(text: str) -> str:
    """A reply as kept in the conversation: cut at the parser's window, so that a runaway reply
    cannot make every later request too long for the model's context."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    return text[:MAX_REPLY_CHARS] + f"\n[{len(text) - MAX_REPLY_CHARS} further characters of this reply are not kept]"


class LLMPolicy:
    """Chat-model policy for planner and baseline trials.

    Args:
        model: Model short name or raw id (see :class:`~etc_fast.llm.LLMSettings`).
        settings: Full client settings (instead of ``model`` + options).
        client: A ready client (shares its cache and concurrency limit).
        max_feedback_chars: Cut longer feedback (interpreter output) to this many characters.
        prompts: ``etc_fast`` (the baselines' messages in this project's words, NewtonBench's
            content) or ``newtonbench`` (NewtonBench's own texts, read from ``newtonbench_path``).
        newtonbench_path: A NewtonBench checkout (``None``: the ``NEWTONBENCH_PATH`` variable).
        texts: Ready :class:`~etc_fast.llm._texts.BaselineTexts` (instead of ``prompts``).

    Attributes:
        transcript: The whole chat of the current trial across its contexts, for the trial
            record: every message sent (system, user), every reply (assistant, with a ``call``
            record: model id, finish_reason, tokens, latency, attempts, from_cache), plus
            ``begin`` and ``call_failed`` events.
        **options: :class:`~etc_fast.llm.LLMSettings` fields (``base_url``, ``temperature``,
            ``cache_path``, ``cache_mode``, ...).

    Raises:
        LLMConfigError: when the model cannot be reached as configured (no key and no base_url),
            or an option is unknown.
    """

    #: Planner trials on simulated systems get their own prompts (``etc_fast.llm._system_prompts``).
    plays_system_planner = True

    def __init__(
        self,
        model: str | None = None,
        settings: LLMSettings | None = None,
        *,
        client: LLMClient | None = None,
        max_feedback_chars: int = DEFAULT_MAX_FEEDBACK_CHARS,
        prompts: str = "etc_fast",
        newtonbench_path: str | None = None,
        texts: BaselineTexts | None = None,
        **options: Any,
    ) -> None:
        self.texts = texts if texts is not None else make_texts(prompts, newtonbench_path)
        if client is not None:
            if settings is not None or options:
                raise LLMConfigError("pass either a client or settings/options, not both")
            self.client = client
        else:
            try:
                self.client = LLMClient(settings_from(model, settings, options))
            except LLMConfigError as exc:
                if "no API key" in str(exc):
                    raise LLMConfigError(f"{exc}, or use --model symbolic to run offline") from None
                raise
        self.settings = self.client.settings
        self.name = f"llm:{self.settings.model}"
        if isinstance(max_feedback_chars, bool) or not isinstance(max_feedback_chars, int) or max_feedback_chars < 200:
            raise LLMConfigError(f"max_feedback_chars must be an integer >= 200, got {max_feedback_chars!r}")
        self.max_feedback_chars = max_feedback_chars
        self.transcript: list[dict[str, Any]] = []
        self._reset(None, None, None, 0)

    # -- context -------------------------------------------------------------------------
    def _reset(self, phase: str | None, task: TaskView | None, config: ProtocolConfig | None, seed: int) -> None:
        self._phase = phase
        self._task = task
        self._config = config
        self._seed = seed
        self.messages: list[dict[str, str]] = []
        self._shown = 0  # observation rows already shown in this conversation
        self._last: Action | None = None
        self._last_info: dict[str, Any] = {}  # facts of the last baseline reply (single request, silent)
        self._last_round = 0  # 0-based round of the last baseline decision
        self._shown_experiments = 0  # system trials: experiments already shown in this conversation

    def begin(self, phase: str, task: TaskView, config: ProtocolConfig, seed: int) -> None:
        """Start a fresh conversation for ``phase`` (``explore``, ``synthesis`` or ``baseline``)."""
        if phase not in _PHASES:
            raise ValueError(f"LLMPolicy.begin: unknown phase {phase!r}; expected one of {', '.join(_PHASES)}")
        self._reset(phase, task, config, int(seed))
        if phase in ("explore", "baseline"):  # a new trial: the transcript restarts
            self.transcript = []
        if phase == "explore":
            system = P.planner_system_prompt(config.interpreter)
        elif phase == "synthesis":
            system = P.synthesis_system_prompt(config.interpreter)
        else:
            system = self.texts.system_prompt(config.baseline_rounds, config.interpreter, model=self.settings.model)
        self.messages.append({"role": "system", "content": system})
        self.transcript.append({"event": "begin", "phase": phase, "seed": int(seed)})
        self.transcript.append({"role": "system", "content": system})

    # -- one decision --------------------------------------------------------------------
    def act(self, obs: Observation) -> Action:
        """Render ``obs``, call the model, parse the reply.

        Raises:
            InfrastructureError: the call produced no reply (the conversation is left as it was).
        """
        if self._phase is None or self._task is None:
            raise RuntimeError("LLMPolicy.act called before begin()")
        shown_before, shown_exp_before = self._shown, self._shown_experiments
        self._system_prompt_for(obs)
        text = self._render(obs)
        self.messages.append({"role": "user", "content": text})
        self.transcript.append({"role": "user", "content": text})
        try:
            reply = self.client.complete(self.messages, sample=self._seed)
        except InfrastructureError as exc:
            self.messages.pop()
            self._shown, self._shown_experiments = shown_before, shown_exp_before
            self.transcript.append({"event": "call_failed", "error_kind": exc.kind, "error": exc.one_line()})
            raise
        shown = _kept_reply(reply.content)
        if reply.reasoning and reply.reasoning.strip():
            # Reasoning returned separately is kept and sent back with the answer (as NewtonBench does).
            if self._phase == "baseline":
                shown = self.texts.combine_reasoning(_kept_reply(reply.reasoning), shown)
            else:
                shown = f"[reasoning]\n{_kept_reply(reply.reasoning)}\n\n[reply]\n{shown}"
        self.messages.append({"role": "assistant", "content": shown})
        self.transcript.append({"role": "assistant", "content": shown, "call": reply.call_record()})
        if reply.truncated:
            action = Action(
                kind="invalid",
                error=f"the reply was cut off at the token limit (finish_reason: length, {reply.completion_tokens} tokens) "
                "before it was complete",
            )
        else:
            try:
                action = self._parse(reply.content, obs)
            except Exception as exc:  # noqa: BLE001 - the reply is unusable; its tokens still count
                action = Action(kind="invalid", error=f"the reply could not be parsed: {type(exc).__name__}: {exc}")
        if self._phase == "baseline" and obs.phase == "baseline":
            self._last_round = int(obs.turn)
        cached = bool(reply.cached)
        usage: dict[str, int | str | None] = {
            "prompt_tokens": int(reply.prompt_tokens),
            "completion_tokens": int(reply.completion_tokens),
            "calls": 1,
            "cached": int(cached),
            "prompt_tokens_cached": int(reply.prompt_tokens) if cached else 0,
            "completion_tokens_cached": int(reply.completion_tokens) if cached else 0,
            "finish_reason": reply.finish_reason,
        }
        action = dataclasses.replace(action, raw=reply.content, usage=usage)
        self._last = action
        return action

    def _system_prompt_for(self, obs: Observation) -> None:
        """On a simulated system, the planner's and synthesis's system prompt is the system's own.

        ``begin`` does not see the observation, so it starts every conversation with the vanilla
        system prompt; the first ``act`` of an exploration or synthesis conversation on a system
        replaces it (before anything is sent) with :func:`system_planner_system_prompt` or
        :func:`system_synthesis_system_prompt`. Vanilla conversations are left exactly as they were.
        """
        if getattr(obs, "system", None) is None or len(self.messages) != 1:
            return
        if self._phase == "baseline":
            # exact mode: NewtonBench's system message is built with the trial's system
            if self.texts.name == "newtonbench" and self._config is not None:
                exact = self.texts.system_prompt(  # type: ignore[call-arg]
                    self._config.baseline_rounds, self._config.interpreter, model=self.settings.model, system=obs.system.spec.system)
                self._replace_system(exact)
            return
        if self._phase not in ("explore", "synthesis"):
            return
        from etc_fast import llm as SP

        interpreter = bool(self._config.interpreter) if self._config is not None else bool(obs.interpreter)
        system = (SP.system_planner_system_prompt(interpreter) if self._phase == "explore"
                  else SP.system_synthesis_system_prompt(interpreter))
        self._replace_system(system)

    def _replace_system(self, system: str) -> None:
        """Make ``system`` the conversation's system message (before anything was sent)."""
        if self.messages[0]["content"] == system:
            return
        self.messages[0] = {"role": "system", "content": system}
        for entry in reversed(self.transcript):
            if entry.get("role") == "system":
                entry["content"] = system
                break

    def _parse(self, content: str, obs: Observation) -> Action:
        self._last_info = {}
        cfg = self._config
        if self._phase == "baseline" and cfg is not None and cfg.resolved_parsing == "newtonbench":
            action, self._last_info = parse_baseline_newtonbench(
                content, interpreter=bool(obs.interpreter), final_only=obs.phase == "final",
                nan_law=self.texts.nan_law(obs.task),
            )
            return action
        return parse_action(content, phase=obs.phase, allowed=obs.allowed)

    def close(self) -> None:
        """Close the client's connections (reopened if the policy is used again)."""
        self.client.close()

    # -- rendering -----------------------------------------------------------------------
    def _cut(self, text: str | None) -> str | None:
        if text is None:
            return None
        if len(text) <= self.max_feedback_chars:
            return text
        return text[: self.max_feedback_chars] + f"\n... (truncated: {len(text) - self.max_feedback_chars} more characters)"

    def _new_rows(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, int]:
        X = np.asarray(obs.X, dtype=np.float64).reshape(-1, len(obs.task.variables))
        y = np.asarray(obs.y, dtype=np.float64).reshape(-1)
        start = min(self._shown, y.shape[0])
        self._shown = y.shape[0]
        return X[start:], y[start:], start

    def _render(self, obs: Observation) -> str:
        first = len(self.messages) <= 1
        if self._phase == "explore":
            return self._render_explore(obs, first)
        if self._phase == "synthesis":
            return self._render_synthesis(obs, first)
        return self._render_baseline(obs, first)

    def _render_explore(self, obs: Observation, first: bool) -> str:
        if getattr(obs, "system", None) is not None:
            return self._render_system_explore(obs, first)
        allowed = sorted(obs.allowed)
        if first:
            X_new, y_new, _ = self._new_rows(obs)
            text = P.explore_first_message(
                obs.task, X_new, y_new, obs.diagnostics, allowed, noisy=obs.noisy, batch_cap=obs.batch_cap,
                turns_left=obs.turns_left, measurements_left=obs.measurements_left,
            )
            feedback = self._feedback_text(obs)
            return (feedback + "\n\n" + text) if feedback else text
        X_new, y_new, start = self._new_rows(obs)
        return P.explore_next_message(
            obs.task, self._feedback_text(obs), X_new, y_new, start, obs.diagnostics, allowed,
            batch_cap=obs.batch_cap, turns_left=obs.turns_left, measurements_used=obs.measurements_used,
            measurements_left=obs.measurements_left,
        )

    def _render_synthesis(self, obs: Observation, first: bool) -> str:
        if first and getattr(obs, "system", None) is not None:
            from etc_fast.llm import system_synthesis_first_message

            self._shown_experiments = len(obs.system.requests)
            text = system_synthesis_first_message(
                obs.task, obs.system, obs.draft, noisy=obs.noisy, interpreter=obs.interpreter and "analysis" in obs.allowed,
                turns_left=obs.turns_left,
            )
            feedback = self._feedback_text(obs)
            return (feedback + "\n\n" + text) if feedback else text
        if first:
            self._new_rows(obs)
            text = P.synthesis_first_message(
                obs.task, np.asarray(obs.X), np.asarray(obs.y), obs.diagnostics, obs.draft, noisy=obs.noisy,
                interpreter=obs.interpreter and "analysis" in obs.allowed, turns_left=obs.turns_left,
            )
            feedback = self._feedback_text(obs)
            return (feedback + "\n\n" + text) if feedback else text
        return P.synthesis_next_message(
            self._feedback_text(obs), turns_left=obs.turns_left, interpreter=obs.interpreter and "analysis" in obs.allowed
        )

    def _render_system_explore(self, obs: Observation, first: bool) -> str:
        """An exploration message on a simulated system (``etc_fast.llm._system_prompts``): the records
        are rendered from ``obs.system`` (requests and outputs), so the protocol's selection note
        keeps only its sentence and the outputs are not shown twice."""
        from etc_fast import llm as SP

        so = obs.system
        start = min(self._shown_experiments, len(so.requests))
        self._shown_experiments = len(so.requests)
        if first:
            text = SP.system_explore_first_message(
                obs.task, so, noisy=obs.noisy, allowed=sorted(obs.allowed), batch_cap=obs.batch_cap,
                turns_left=obs.turns_left, measurements_left=obs.measurements_left,
            )
            feedback = self._feedback_text(obs)
            return (feedback + "\n\n" + text) if feedback else text
        feedback = obs.feedback or ""
        if "<experiment_output>" in feedback and len(so.requests) > start:
            feedback = feedback[: feedback.index("<experiment_output>")].strip()
            obs = dataclasses.replace(obs, feedback=feedback)
        return SP.system_explore_next_message(
            obs.task, so, self._feedback_text(obs), start, noisy=obs.noisy, allowed=obs.allowed,
            batch_cap=obs.batch_cap, turns_left=obs.turns_left, measurements_left=obs.measurements_left,
        )

    def _render_baseline(self, obs: Observation, first: bool) -> str:
        """The next user message of a baseline conversation, assembled as NewtonBench's agents do:
        the reply to the last action (none after a request the code-assisted agent ignores), then
        (code-assisted) the turn reminder before every call, or the forced final instruction."""
        T = self.texts
        interpreter = bool(obs.interpreter)
        parts: list[str] = []
        if first and getattr(obs, "system", None) is not None and T.name == "newtonbench":
            # exact mode: the module's own task prompt for this system, read from the checkout
            parts.append(T.task_prompt(obs.task, noisy=obs.noisy, interpreter=interpreter, system=obs.system.spec.system))  # type: ignore[call-arg]
        elif first and getattr(obs, "system", None) is not None:  # a simulated system: its apparatus block
            from etc_fast.llm import system_baseline_message

            parts.append(system_baseline_message(obs.task, obs.system.spec, noisy=obs.noisy, interpreter=interpreter))
        elif first:
            parts.append(T.task_prompt(obs.task, noisy=obs.noisy, interpreter=interpreter))
            self._new_rows(obs)
        else:
            fb = self._baseline_feedback(obs, interpreter)
            if fb:
                parts.append(fb)
        if obs.measurements_left is not None and obs.phase != "final":
            parts.append(f"(Measurement budget: {obs.measurements_left} left.)")
        if obs.phase == "final":
            parts.append(T.forced_final(obs.task, interpreter))
        elif interpreter:
            parts.append(T.turn_reminder())
        if not parts:  # a vanilla call with nothing to answer (not reached by the protocol)
            parts.append(T.invalid_reply(False))
        return "\n\n".join(parts)

    def _baseline_feedback(self, obs: Observation, interpreter: bool) -> str | None:
        """The reply to the previous baseline action (``None``: no reply)."""
        T = self.texts
        _, y_new, _ = self._new_rows(obs)
        kind = obs.feedback_kind
        turn = self._last_round + 1  # NewtonBench counts turns from 1
        info = self._last_info
        res = obs.analysis_result or {}
        if kind == "experiment" and getattr(obs, "system", None) is not None:
            # a simulated system: the protocol already wrote NewtonBench's time-series output
            fb = (obs.feedback or "").strip()
            return fb if "<experiment_output>" in fb else None
        if kind == "experiment":
            out = T.experiment_output(y_new, interpreter=interpreter, single=bool(info.get("single")))
            notes = [ln for ln in (obs.feedback or "").split("\n") if ln.startswith("Only the first ")]
            return "\n".join([p for p in [out, *notes] if p]) or None
        if kind == "analysis":
            code = str(res.get("code") or (self._last.code if self._last is not None else "") or "")
            if res.get("ok"):
                return self._cut(T.python_success(str(res.get("stdout") or ""), code, turn))
            return self._cut(T.python_failure(str(res.get("error") or obs.feedback or ""), code, turn))
        if kind == "validation":
            code = str(res.get("code") or "")
            problem = T.validation_message(code, str(res.get("validation_error") or ""))
            return self._cut(T.python_invalid(problem, code, turn))
        if kind == "request_error":
            return T.request_error(interpreter, (obs.feedback or "").strip() or None, turn)
        if kind == "repair" or (self._last is not None and self._last.kind == "invalid"):
            if info.get("silent"):
                return None
            return T.invalid_reply(interpreter, turn)
        return (self._cut(obs.feedback) or "").strip() or None

    def _feedback_text(self, obs: Observation) -> str:
        """The protocol's feedback, wrapped by kind (interpreter output in ``<python_output>``)."""
        fb = self._cut(obs.feedback)
        kind = obs.feedback_kind
        if not fb or not fb.strip():
            if self._last is not None and self._last.kind == "invalid" and self._last.error:
                return f"Your previous reply could not be used: {self._last.error}."
            return ""
        if kind == "analysis" or (kind is None and self._last is not None and self._last.kind == "analysis"):
            return P.python_output(fb)
        return fb.strip()


__all__ = ["LLMPolicy"]
