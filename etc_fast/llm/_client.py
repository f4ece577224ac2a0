"""OpenAI-compatible chat client with retries, bounded concurrency and a response cache.

One client serves one model. It talks to the OpenAI API by default or to any OpenAI-compatible server
(vLLM, Ollama, OpenRouter, ...) given ``base_url``. The SDK's own retries are disabled; this module
retries only transient failures (429 rate limits, honouring ``Retry-After``; 5xx; 408; timeouts;
dropped or refused connections; an empty or unreadable body) with jittered exponential backoff, within
``max_retries`` and a total ``retry_budget_s`` per call, and says on stderr what it waits for. A retry
sends the very same request. Everything else (401, 403, 404, an exhausted quota, other 4xx) fails at
once. A call that ends without a reply raises :class:`LLMCallError`, an
:class:`~etc_fast.errors.InfrastructureError`: it is never a reply. Replies go through
:class:`ResponseCache`.
"""

from __future__ import annotations

import dataclasses
import email.utils
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from etc_fast._urls import normalise_base_url
from etc_fast.errors import InfrastructureError
from etc_fast.llm._cache import CACHE_MODES, CachedReply, CacheMiss, ResponseCache, cache_key, canonical_request
from etc_fast.llm._ledger import PaidCall, current_tag

#: Set to stop every call in this process at its next attempt or wait (run interrupted, or the
#: run's circuit breaker tripped); see :func:`stop_calls`.
_STOP = threading.Event()


def stop_calls(stop: bool = True) -> None:
    """Make every call in this process fail with kind ``stopped`` at its next attempt or wait
    (``stop=False`` lets calls through again)."""
    if stop:
        _STOP.set()
    else:
        _STOP.clear()

# ----------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------
#: NewtonBench short names -> (OpenAI id, OpenRouter id). OpenAI ids are ``None`` for models
#: NewtonBench only reaches through OpenRouter.
MODEL_ALIASES: dict[str, tuple[str | None, str]] = {
    "gpt41mini": ("gpt-4.1-mini-2025-04-14", "openai/gpt-4.1-mini"),
    "gpt41": ("gpt-4.1-2025-04-14", "openai/gpt-4.1"),
    "o4mini": ("o4-mini-2025-04-16", "openai/o4-mini"),
    "gpt5": ("gpt-5", "openai/gpt-5"),
    "gpt5mini": ("gpt-5-mini-2025-08-07", "openai/gpt-5-mini"),
    "gem25f": (None, "google/gemini-2.5-flash"),
    "gem25p": (None, "google/gemini-2.5-pro"),
    "qwen3-235b": (None, "qwen/qwen3-235b-a22b"),
    "qwq-32b": (None, "qwen/qwq-32b"),
    "dsv3": (None, "deepseek/deepseek-chat-v3-0324"),
    "dsr1": (None, "deepseek/deepseek-r1-0528"),
    "nemotron-ultra": (None, "nvidia/llama-3.1-nemotron-ultra-253b-v1"),
}

#: Models that only accept temperature 1.0 (NewtonBench forces it for these).
_FIXED_TEMPERATURE_ALIASES = ("o4mini", "gpt5", "gpt5mini")
FIXED_TEMPERATURE_MODELS: frozenset[str] = frozenset(
    mid for alias in _FIXED_TEMPERATURE_ALIASES for mid in MODEL_ALIASES[alias] if mid is not None
)


@dataclasses.dataclass(frozen=True)
class ResolvedModel:
    """A model name after alias resolution.

    Attributes:
        name: The name as given.
        model_id: The id sent to the server.
        temperature: Forced temperature for models that accept only one value, else ``None``.
    """

    name: str
    model_id: str
    temperature: float | None


def _is_openrouter(base_url: str | None) -> bool:
    return bool(base_url) and "openrouter.ai" in str(base_url)


def resolve_model(name: str, base_url: str | None = None, model_id: str | None = None) -> ResolvedModel:
    """The model id sent to the server for ``name``.

    ``model_id`` wins when given. Otherwise a NewtonBench short name maps to its OpenAI snapshot id
    only for the OpenAI API itself (no ``base_url``; the OpenRouter-style id for models OpenAI does
    not serve), to its OpenRouter id for an OpenRouter ``base_url``, and is sent as given to any other
    server (a local vLLM or Ollama names its models itself). Any other name is sent as given.
    """
    if not isinstance(name, str) or not name.strip():
        raise LLMConfigError(f"model must be a non-empty string, got {name!r}")
    name = name.strip()
    if model_id is not None:
        if not isinstance(model_id, str) or not model_id.strip():
            raise LLMConfigError(f"model_id must be a non-empty string or null, got {model_id!r}")
        model_id = model_id.strip()
    elif name in MODEL_ALIASES and _is_openrouter(base_url):
        model_id = MODEL_ALIASES[name][1]
    elif name in MODEL_ALIASES and not base_url:
        oa_id, or_id = MODEL_ALIASES[name]
        model_id = oa_id if oa_id is not None else or_id
    else:
        model_id = name
    forced = 1.0 if model_id in FIXED_TEMPERATURE_MODELS else None
    return ResolvedModel(name=name, model_id=model_id, temperature=forced)


# ----------------------------------------------------------------------------------------
# Settings and errors
# ----------------------------------------------------------------------------------------
class LLMConfigError(ValueError):
    """The client cannot be used as configured (raised before any trial starts)."""


class LLMCallError(InfrastructureError, RuntimeError):
    """A call ended without a reply (after retries for transient failures, at once otherwise).

    Attributes:
        kind: One of :data:`etc_fast.errors.ERROR_KINDS` (``auth``, ``unreachable``, ``timeout``, ...).
        status: HTTP status when there was one.
        attempts: Requests made.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message, kind=kind, attempts=attempts)
        self.status = status


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """How to reach a model and how hard to try.

    Attributes:
        model: NewtonBench short name (``gpt41mini``, ``gpt41``, ``o4mini``, ``gpt5``, ``gpt5mini``, ...)
            or any raw model id, sent unchanged (vLLM, Ollama, OpenRouter).
        base_url: OpenAI-compatible endpoint (``http://localhost:8000/v1``); ``None`` = OpenAI.
        api_key_env: Environment variable holding the API key. With a ``base_url`` and no key a
            placeholder key is sent (local servers ignore it).
        temperature: Sampling temperature (forced to 1.0 for o4mini/gpt5/gpt5mini).
        timeout_s: Per-request timeout in seconds.
        max_retries: Retries after the first attempt for transient failures.
        retry_budget_s: Most seconds one call may take, all attempts and waits together; no retry
            starts that would end after it.
        backoff_base_s: First backoff delay; doubles per retry.
        backoff_max_s: Cap of any single wait, ``Retry-After`` included.
        max_concurrency: Requests in flight at once through one client.
        seed: Sampling seed sent to the server (``None`` = not sent); part of the cache key.
        cache_path: SQLite reply cache file; ``None`` = no cache.
        cache_mode: ``use`` | ``refresh`` | ``off`` | ``replay`` (see :mod:`etc_fast.llm._cache`).
        max_tokens: Longest reply in tokens (``None`` = the server's default); part of the cache key.
            A reply cut at this limit (``finish_reason: length``) is recorded as such, never parsed.
        model_id: The id sent to the server, overriding the name's resolution (see :func:`resolve_model`).
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.4
    timeout_s: float = 60
    max_retries: int = 6
    retry_budget_s: float = 300.0
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60
    max_concurrency: int = 4
    seed: int | None = None
    cache_path: str | None = None
    cache_mode: str = "use"
    max_tokens: int | None = None
    model_id: str | None = None

    def __post_init__(self) -> None:
        errors = []
        if not isinstance(self.model, str) or not self.model.strip():
            errors.append(f"model must be a non-empty string, got {self.model!r}")
        if self.base_url is not None and (not isinstance(self.base_url, str) or not self.base_url.strip()):
            errors.append(f"base_url must be a URL string or null, got {self.base_url!r}")
        if not isinstance(self.api_key_env, str) or not self.api_key_env:
            errors.append(f"api_key_env must name an environment variable, got {self.api_key_env!r}")
        for field, lo, strict in (
            ("temperature", 0.0, False), ("timeout_s", 0.0, True), ("retry_budget_s", 0.0, True), ("backoff_base_s", 0.0, False),
            ("backoff_max_s", 0.0, False),
        ):
            val = getattr(self, field)
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < lo or (strict and val == lo):
                errors.append(f"{field} must be a finite number {'>' if strict else '>='} {lo}, got {val!r}")
        for field, lo in (("max_retries", 0), ("max_concurrency", 1)):
            val = getattr(self, field)
            if isinstance(val, bool) or not isinstance(val, int) or val < lo:
                errors.append(f"{field} must be an integer >= {lo}, got {val!r}")
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1):
            errors.append(f"max_tokens must be an integer >= 1 or null, got {self.max_tokens!r}")
        if self.model_id is not None and (not isinstance(self.model_id, str) or not self.model_id.strip()):
            errors.append(f"model_id must be a non-empty string or null, got {self.model_id!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            errors.append(f"seed must be an integer or null, got {self.seed!r}")
        if self.cache_mode not in CACHE_MODES:
            errors.append(f"cache_mode must be one of {', '.join(CACHE_MODES)}, got {self.cache_mode!r}")
        if self.cache_mode == "replay" and not self.cache_path:
            errors.append("cache_mode 'replay' needs a cache_path to replay from")
        if errors:
            raise LLMConfigError("LLM settings: " + "; ".join(errors))

    @property
    def resolved(self) -> ResolvedModel:
        return resolve_model(self.model, self.base_url, self.model_id)

    @property
    def effective_temperature(self) -> float:
        forced = self.resolved.temperature
        return float(self.temperature if forced is None else forced)

    @property
    def caching(self) -> bool:
        return bool(self.cache_path) and self.cache_mode != "off"

    @property
    def endpoint(self) -> tuple[str | None, str, str]:
        """``(normalised base_url, model id, key variable)``: calls with equal endpoints reach the
        same model with the same key (one preflight check serves them all)."""
        return normalise_base_url(self.base_url), self.resolved.model_id, self.api_key_env


@dataclasses.dataclass(frozen=True)
class Completion:
    """One chat reply.

    Attributes:
        content: Assistant text ("" when the server sent none).
        reasoning: Reasoning text when the server returns it separately, else ``None``.
        prompt_tokens / completion_tokens: Usage reported for the call (stored ones on a cache hit).
        cached: Whether the reply came from the cache (no request was made).
        model: The model id sent.
        key: Cache key of the request.
        attempts: HTTP requests made for this reply (0 on a cache hit).
        finish_reason: Why the model stopped (``stop``, ``length``, ...; ``None`` when not reported).
        latency_s: Seconds from the first attempt to the reply, waits included (0 on a cache hit).
    """

    content: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    model: str
    key: str
    attempts: int = 0
    finish_reason: str | None = None
    latency_s: float = 0.0

    @property
    def truncated(self) -> bool:
        """The reply was cut at the token limit."""
        return self.finish_reason == "length"

    def call_record(self) -> dict[str, Any]:
        """What the transcript keeps about this call."""
        return {
            "model": self.model, "finish_reason": self.finish_reason, "prompt_tokens": int(self.prompt_tokens),
            "completion_tokens": int(self.completion_tokens), "latency_s": round(float(self.latency_s), 3),
            "attempts": int(self.attempts), "from_cache": bool(self.cached), "key": self.key,
        }


# ----------------------------------------------------------------------------------------
# Retry helpers
# ----------------------------------------------------------------------------------------
def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    get = headers.get
    ms = get("retry-after-ms") or get("Retry-After-Ms")
    if ms:
        try:
            val = float(ms) / 1000.0
            if math.isfinite(val) and val >= 0:
                return val
        except ValueError:
            pass
    raw = get("retry-after") or get("Retry-After")
    if not raw:
        return None
    raw = raw.strip()
    try:
        val = float(raw)
        return val if math.isfinite(val) and val >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(attempt: int, base_s: float, max_s: float, rng: random.Random, retry_after: float | None = None) -> float:
    """Wait before retry number ``attempt`` (1-based).

    ``Retry-After`` wins when given (capped at ``max_s``); otherwise an "equal jitter" exponential
    delay: ``d = min(max_s, base_s * 2**(attempt-1))``, waiting ``d/2 + uniform(0, d/2)``.
    """
    if retry_after is not None:
        return min(max_s, retry_after)
    d = min(max_s, base_s * (2.0 ** (attempt - 1)))
    return 0.5 * d + rng.uniform(0.0, 0.5 * d)


def _error_code(exc: BaseException) -> str:
    """The ``code``/``type`` of an OpenAI-style error body, lower-cased ("" when none)."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, Mapping) else None
    if isinstance(err, Mapping):
        return " ".join(str(err.get(k) or "") for k in ("code", "type")).lower()
    return ""


def _classify(exc: BaseException) -> tuple[str, int | None, bool, float | None]:
    """``(kind, status, transient, retry_after)`` for an exception raised by a request.

    Transient: timeouts, connection failures, 408, 409, 429 (unless the body says the quota is
    spent), 5xx and bodies that cannot be read. Everything else fails the call at once.
    """
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None, True, None
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable", None, True, None
    if isinstance(exc, openai.APIStatusError):
        status = int(exc.status_code)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        if status == 401:
            return "auth", status, False, None
        if status == 403:
            return "permission", status, False, None
        if status == 404:
            return "not_found", status, False, None
        if status == 402 or (status == 429 and "quota" in _error_code(exc)):
            return "quota", status, False, None
        if status == 429:
            return "rate_limit", status, True, parse_retry_after(headers)
        if status in (408, 409) or status >= 500:
            return ("timeout" if status == 408 else "server_error"), status, True, parse_retry_after(headers)
        return "bad_request", status, False, None
    if isinstance(exc, (openai.APIResponseValidationError, ValueError, TypeError, KeyError, AttributeError)):
        return "bad_response", None, True, None  # e.g. a 200 whose body is not JSON
    return "bad_response", None, False, None


_HINTS = {
    "auth": "the server rejected the key: check {key_env}",
    "permission": "the key may not use this model: check {key_env} and the account's model access",
    "not_found": "check the model name (or llm.model_id) and base_url",
    "quota": "the account's credit or quota is spent",
    "unreachable": "check base_url and that the server is running",
}


def _hint(kind: str, key_env: str) -> str:
    hint = _HINTS.get(kind)
    return f" ({hint.format(key_env=key_env)})" if hint else ""


def _error_detail(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    return (str(exc) or type(exc).__name__)[:300]


def _message_text(message: Any) -> tuple[str, str | None]:
    content = getattr(message, "content", None)
    extra = getattr(message, "model_extra", None) or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning") or getattr(message, "reasoning", None)
    if isinstance(content, list):  # some servers send content parts
        content = "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return ("" if content is None else str(content)), (str(reasoning) if reasoning else None)


def _token_count(value: Any) -> int:
    """A usage field as a non-negative int; anything a server should not have sent counts as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
        return int(value)
    return 0


def _check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)) or not messages:
        raise ValueError("messages must be a non-empty list of {role, content} dicts")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {m!r:.80}")
        if m["role"] not in ("system", "user", "assistant"):
            raise ValueError(f"messages[{i}]: role must be system, user or assistant, got {m['role']!r}")
        if not isinstance(m["content"], str):
            raise ValueError(f"messages[{i}]: content must be a string, got {type(m['content']).__name__}")
        out.append({"role": m["role"], "content": m["content"]})
    return out


# ----------------------------------------------------------------------------------------
# Client
# ----------------------------------------------------------------------------------------
_PLACEHOLDER_KEY = "not-needed"


class LLMClient:
    """Chat completions for one model.

    The configuration is checked at construction (a missing key raises :class:`LLMConfigError`
    before any trial starts); the HTTP client and the cache connection open on first use, so a
    client can be pickled to a worker process.

    Args:
        settings: Model, endpoint, retry and cache settings.
        sleep: Function used to wait between retries (tests pass a recorder); by default the wait
            ends early, failing the call, when :func:`stop_calls` is called.
        environ: Where to read the API key (default ``os.environ``).
        notify: Receives one line each time a call waits before a retry (default: stderr).
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        sleep: Callable[[float], None] | None = None,
        environ: Mapping[str, str] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        if not isinstance(settings, LLMSettings):
            raise LLMConfigError(f"settings must be LLMSettings, got {type(settings).__name__}")
        self.settings = settings
        self.model = settings.resolved
        env = os.environ if environ is None else environ
        key = (env.get(settings.api_key_env) or "").strip()
        if not key and not settings.base_url and settings.cache_mode != "replay":
            raise LLMConfigError(
                f"no API key for model {settings.model!r}: set {settings.api_key_env} "
                f"(or name another key variable with api_key_env), or pass base_url for a local "
                f"OpenAI-compatible server (vLLM, Ollama)"
            )
        self._api_key = key or _PLACEHOLDER_KEY
        self._sleep = sleep
        self._notify = notify
        self._rng = random.Random(settings.seed)
        self._semaphore = threading.BoundedSemaphore(settings.max_concurrency)
        self._init_lock = threading.Lock()
        self._sdk: Any = None
        self._cache: ResponseCache | None = None
        self._count_lock = threading.Lock()
        self.requests_made = 0
        #: What the ledger records this client's paid calls as: ``policy`` or ``judge``.
        self.ledger_role = "policy"

    # -- pickling: drop live handles -----------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for k in ("_sdk", "_cache", "_semaphore", "_init_lock", "_count_lock"):
            state[k] = None
        for k in ("_sleep", "_notify"):
            if state.get(k) is not None and getattr(state[k], "__module__", None) in ("time", "builtins"):
                state[k] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._semaphore = threading.BoundedSemaphore(self.settings.max_concurrency)
        self._init_lock = threading.Lock()
        self._count_lock = threading.Lock()

    # -- lazy handles --------------------------------------------------------------------
    def _client(self) -> Any:
        with self._init_lock:
            if self._sdk is None:
                self._sdk = _shared_sdk(self._api_key, self.settings.base_url, float(self.settings.timeout_s))
            return self._sdk

    @property
    def cache(self) -> ResponseCache | None:
        """The reply cache (opened on first use), or ``None`` when caching is off."""
        if not self.settings.caching:
            return None
        with self._init_lock:
            if self._cache is None:
                self._cache = ResponseCache(self.settings.cache_path)
            return self._cache

    def close(self) -> None:
        """Close the HTTP client and the cache connection (reopened if used again)."""
        with self._init_lock:
            self._sdk = None  # the HTTP client is shared by the process's clients (see _shared_sdk)
            if self._cache is not None:
                self._cache.close()
                self._cache = None

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def where(self) -> str:
        return self.settings.base_url or "the OpenAI API"

    def _say(self, line: str) -> None:
        if self._notify is not None:
            self._notify(line)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif _STOP.wait(max(0.0, seconds)):
            raise LLMCallError(f"model {self.model.model_id} at {self.where}: the run was stopped", kind="stopped")

    # -- the call ------------------------------------------------------------------------
    def request_for(self, messages: Sequence[Mapping[str, Any]], sample: int | None = None) -> dict[str, Any]:
        """The canonical request (the cache key's input) for ``messages``."""
        s = self.settings
        if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)):
            raise ValueError(f"sample must be an integer or None, got {sample!r}")
        return canonical_request(
            self.model.model_id, _check_messages(messages), s.effective_temperature, s.seed, s.base_url, sample,
            max_tokens=s.max_tokens,
        )

    def complete(self, messages: Sequence[Mapping[str, Any]], *, sample: int | None = None) -> Completion:
        """One chat completion, from the cache when allowed.

        Args:
            messages: ``{role, content}`` dicts (system, user, assistant).
            sample: Index of an independent draw of the same request (a rollout seed, a retry);
                part of the cache key only, never sent.

        Raises:
            ValueError: ``messages`` is malformed.
            CacheMiss: replay mode and the reply is not stored.
            CacheError: the reply cache could not be opened, read or written (the reply is not used).
            LLMCallError: no reply (at once for a permanent failure, after retries for a transient one).
        """
        request = self.request_for(messages, sample)
        key = cache_key(request)
        mode = self.settings.cache_mode
        cache = self.cache
        if cache is not None and mode in ("use", "replay"):
            hit = cache.get(key)
            if hit is not None:
                return Completion(
                    hit.content, hit.reasoning, hit.prompt_tokens, hit.completion_tokens, True, self.model.model_id, key, 0,
                    finish_reason=hit.finish_reason,
                )
            if mode == "replay":
                raise CacheMiss(key, self.model.model_id)
        t0 = time.monotonic()
        content, reasoning, p_tok, c_tok, attempts, finish = self._call(request)
        latency = time.monotonic() - t0
        if cache is not None:
            # Committed before the reply is used: a trial is stored only with replies a later run finds.
            # A reply that cannot be stored fails the call (CacheError): a result that a replay could not
            # reproduce is never recorded, and the next run asks again. The payment goes on the ledger
            # in the same transaction, so it is on record however the run ends afterwards.
            paid = PaidCall(current_tag(), str(getattr(self, "ledger_role", "policy")), self.settings.model,
                            self.model.model_id, p_tok, c_tok, attempts)
            cache.put(key, request, CachedReply(content, reasoning, p_tok, c_tok, finish), paid=paid)
        return Completion(
            content, reasoning, p_tok, c_tok, False, self.model.model_id, key, attempts, finish_reason=finish, latency_s=latency
        )

    def _kwargs(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The SDK arguments of ``request``: built once per call, so every retry sends the same bytes."""
        kwargs: dict[str, Any] = dict(model=request["model"], messages=request["messages"], temperature=request["temperature"])
        if self.settings.seed is not None:
            kwargs["seed"] = self.settings.seed
        if self.settings.max_tokens is not None:
            # OpenAI's reasoning models take only max_completion_tokens.
            field = "max_completion_tokens" if request["model"] in FIXED_TEMPERATURE_MODELS else "max_tokens"
            kwargs[field] = int(self.settings.max_tokens)
        return kwargs

    def _call(self, request: dict[str, Any]) -> tuple[str, str | None, int, int, int, str | None]:
        s = self.settings
        sdk = self._client()
        kwargs = self._kwargs(request)
        model = request["model"]
        deadline = time.monotonic() + float(s.retry_budget_s)
        total = s.max_retries + 1
        for attempt in range(1, total + 1):
            if _STOP.is_set():
                raise LLMCallError(f"model {model} at {self.where}: the run was stopped", kind="stopped", attempts=attempt - 1)
            retry_after: float | None = None
            status: int | None = None
            try:
                with self._semaphore:
                    with self._count_lock:
                        self.requests_made += 1
                    timeout = min(float(s.timeout_s), max(0.05, deadline - time.monotonic()))
                    resp = _post_chat(sdk, kwargs, timeout)
                got = _reply_of(resp)
                if isinstance(got, str):
                    kind, transient, problem = "bad_response", True, got
                else:
                    return (*got[:4], attempt, got[4])
            except Exception as exc:  # classified below
                kind, status, transient, retry_after = _classify(exc)
                problem = (f"HTTP {status}: " if status is not None else f"{kind}: ") + _error_detail(exc)
            where = f"model {model} at {self.where}"
            if not transient:
                raise LLMCallError(
                    f"{where}: {problem}{_hint(kind, s.api_key_env)}", kind=kind, status=status, attempts=attempt
                )
            delay = backoff_delay(attempt, s.backoff_base_s, s.backoff_max_s, self._rng, retry_after)
            if attempt == total or time.monotonic() + delay > deadline:
                why = f"{attempt} attempts" if attempt == total else f"the retry budget of {s.retry_budget_s:g} s"
                raise LLMCallError(
                    f"{where}: gave up after {why}; last error {problem}{_hint(kind, s.api_key_env)}",
                    kind=kind, status=status, attempts=attempt,
                )
            if delay >= 0.5:
                reason = "Retry-After" if retry_after is not None else "backoff"
                self._say(f"llm: {where}: {problem[:120]}; waiting {delay:.1f} s ({reason}) before attempt {attempt + 1} of {total}")
            self._wait(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- preflight -----------------------------------------------------------------------
    def preflight(self) -> str:
        """One cheap check that the endpoint answers, accepts the key and serves the model.

        ``GET /models`` first (no tokens); when the listing does not show the model, or the server
        has no such route, a one-token chat decides. Transient trouble (429, 5xx, a 400 for the
        token limit) passes: the run's own retries deal with it. Nothing is checked in ``replay``
        mode (no network at all). Returns what was checked.

        Raises:
            LLMCallError: kind ``auth``, ``permission``, ``not_found``, ``quota`` or ``unreachable``.
        """
        import openai

        s = self.settings
        model = self.model.model_id
        if s.cache_mode == "replay":
            return f"{model}: replay mode, not checked"
        sdk = self._client().with_options(timeout=min(float(s.timeout_s), 20.0))
        where = f"model {model} at {self.where}"

        def fail(exc: BaseException) -> None:
            kind, status, transient, _ = _classify(exc)
            if kind in ("auth", "permission", "not_found", "quota", "unreachable"):
                what = f"HTTP {status}: " if status is not None else ""
                raise LLMCallError(
                    f"{where}: {what}{_error_detail(exc)}{_hint(kind, s.api_key_env)}", kind=kind, status=status, attempts=1
                ) from None

        listed: list[str] | None = None
        for attempt in range(2):
            try:
                with self._count_lock:
                    self.requests_made += 1
                listed = [str(getattr(m, "id", "")) for m in sdk.models.list()]
                break
            except openai.NotFoundError:
                break  # no /models route here: the chat check decides
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                if attempt == 1:
                    fail(exc)
                time.sleep(1.0)
            except Exception as exc:  # noqa: BLE001 - auth/permission fail; anything else goes to the chat check
                fail(exc)
                break
        if listed and model in listed:
            return f"{model}: listed at {self.where}"
        try:
            with self._count_lock:
                self.requests_made += 1
            sdk.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=1,
            )
        except Exception as exc:  # noqa: BLE001
            fail(exc)
        return f"{model}: answered at {self.where}"


_SDKS: dict[tuple[str, str | None, float], Any] = {}
_SDKS_LOCK = threading.Lock()


def _shared_sdk(api_key: str, base_url: str | None, timeout_s: float) -> Any:
    """One OpenAI SDK client (one HTTP connection pool) per key, endpoint and timeout in this
    process: building one costs ~0.1 s (TLS set-up), and a run builds a policy per trial."""
    key = (api_key, base_url, timeout_s)
    with _SDKS_LOCK:
        sdk = _SDKS.get(key)
        if sdk is None:
            import openai

            kwargs: dict[str, Any] = dict(api_key=api_key, max_retries=0, timeout=timeout_s)
            if base_url:
                kwargs["base_url"] = base_url
            sdk = _SDKS[key] = openai.OpenAI(**kwargs)
        return sdk


def _post_chat(sdk: Any, body: Mapping[str, Any], timeout: float) -> Any:
    """POST ``body`` to ``/chat/completions`` as given. The SDK's ``create`` walks every message
    through its type machinery (~20 ms a call for a long conversation); the body is plain JSON
    already, so it is sent as is and only the reply is parsed."""
    from openai.types.chat import ChatCompletion

    return sdk.post("/chat/completions", body=dict(body), cast_to=ChatCompletion, options={"timeout": timeout})


def _reply_of(resp: Any) -> tuple[str, str | None, int, int, str | None] | str:
    """``(content, reasoning, prompt_tokens, completion_tokens, finish_reason)`` of a completion,
    or why it is not a usable one (no choices, no message, no content and not cut at the limit)."""
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "the reply holds no choices"
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        return "the reply's first choice has no message"
    finish = getattr(choice, "finish_reason", None)
    finish = str(finish) if finish is not None else None
    content, reasoning = _message_text(message)
    if getattr(message, "content", None) is None and not reasoning and finish != "length":
        return "the reply's message has no content"
    usage = getattr(resp, "usage", None)
    p_tok = _token_count(getattr(usage, "prompt_tokens", 0))
    c_tok = _token_count(getattr(usage, "completion_tokens", 0))
    return content, reasoning, p_tok, c_tok, finish


__all__ = [
    "FIXED_TEMPERATURE_MODELS",
    "MODEL_ALIASES",
    "CacheMiss",
    "Completion",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMSettings",
    "ResolvedModel",
    "backoff_delay",
    "parse_retry_after",
    "resolve_model",
    "stop_calls",
]
