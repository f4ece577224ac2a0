"""OpenAI-compatible chat client with retries, bounded concurrency and a response cache.

One client serves one model. It talks to the OpenAI API by default or to any OpenAI-compatible server
(vLLM, Ollama, OpenRouter, ...) given ``base_url``. The SDK's own retries are disabled; this module
retries 429, 5xx, 408, timeouts and connection errors with jittered exponential backoff, honouring
``Retry-After``, and fails at once on any other 4xx. Replies go through :class:`ResponseCache`.
"""

from __future__ import annotations

import dataclasses
import email.utils
import math
import os
import random
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from etc_fast.llm._cache import CACHE_MODES, CachedReply, CacheMiss, ResponseCache, cache_key, canonical_request

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


def resolve_model(name: str, base_url: str | None = None) -> ResolvedModel:
    """Map a NewtonBench short name to a model id; any other name is used unchanged.

    With an OpenRouter ``base_url`` the OpenRouter id is used; otherwise the OpenAI id (or the
    OpenRouter-style id for models OpenAI does not serve, which other gateways also understand).
    """
    if not isinstance(name, str) or not name.strip():
        raise LLMConfigError(f"model must be a non-empty string, got {name!r}")
    name = name.strip()
    if name in MODEL_ALIASES:
        oa_id, or_id = MODEL_ALIASES[name]
        model_id = or_id if (_is_openrouter(base_url) or oa_id is None) else oa_id
    else:
        model_id = name
    forced = 1.0 if model_id in FIXED_TEMPERATURE_MODELS else None
    return ResolvedModel(name=name, model_id=model_id, temperature=forced)


# ----------------------------------------------------------------------------------------
# Settings and errors
# ----------------------------------------------------------------------------------------
class LLMConfigError(ValueError):
    """The client cannot be used as configured (raised before any trial starts)."""


class LLMCallError(RuntimeError):
    """A call failed for good (after retries, or at once for a non-retryable error).

    Attributes:
        kind: ``http`` (status error), ``timeout``, ``connection``, ``bad_response`` or ``cache_miss``.
        status: HTTP status when there was one.
        attempts: Requests made.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.attempts = attempts


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
        max_retries: Retries after the first attempt for retryable failures.
        backoff_base_s: First backoff delay; doubles per retry.
        backoff_max_s: Cap of any single wait, ``Retry-After`` included.
        max_concurrency: Requests in flight at once through one client.
        seed: Sampling seed sent to the server (``None`` = not sent); part of the cache key.
        cache_path: SQLite reply cache file; ``None`` = no cache.
        cache_mode: ``use`` | ``refresh`` | ``off`` | ``replay`` (see :mod:`etc_fast.llm._cache`).
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.4
    timeout_s: float = 60
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60
    max_concurrency: int = 4
    seed: int | None = None
    cache_path: str | None = None
    cache_mode: str = "use"

    def __post_init__(self) -> None:
        errors = []
        if not isinstance(self.model, str) or not self.model.strip():
            errors.append(f"model must be a non-empty string, got {self.model!r}")
        if self.base_url is not None and (not isinstance(self.base_url, str) or not self.base_url.strip()):
            errors.append(f"base_url must be a URL string or null, got {self.base_url!r}")
        if not isinstance(self.api_key_env, str) or not self.api_key_env:
            errors.append(f"api_key_env must name an environment variable, got {self.api_key_env!r}")
        for field, lo, strict in (
            ("temperature", 0.0, False), ("timeout_s", 0.0, True), ("backoff_base_s", 0.0, False), ("backoff_max_s", 0.0, False),
        ):
            val = getattr(self, field)
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < lo or (strict and val == lo):
                errors.append(f"{field} must be a finite number {'>' if strict else '>='} {lo}, got {val!r}")
        for field, lo in (("max_retries", 0), ("max_concurrency", 1)):
            val = getattr(self, field)
            if isinstance(val, bool) or not isinstance(val, int) or val < lo:
                errors.append(f"{field} must be an integer >= {lo}, got {val!r}")
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
        return resolve_model(self.model, self.base_url)

    @property
    def effective_temperature(self) -> float:
        forced = self.resolved.temperature
        return float(self.temperature if forced is None else forced)

    @property
    def caching(self) -> bool:
        return bool(self.cache_path) and self.cache_mode != "off"


@dataclasses.dataclass(frozen=True)
class Completion:
    """One chat reply.

    Attributes:
        content: Assistant text ("" when the server sent none).
        reasoning: Reasoning text when the server returns it separately, else ``None``.
        prompt_tokens / completion_tokens: Usage reported for the call (stored ones on a cache hit).
        cached: Whether the reply came from the cache (no request was made).
        model: Resolved model id.
        key: Cache key of the request.
        attempts: HTTP requests made for this reply (0 on a cache hit).
    """

    content: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    model: str
    key: str
    attempts: int = 0


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


def _classify(exc: BaseException) -> tuple[str, int | None, bool, float | None]:
    """(kind, status, retryable, retry_after) for an SDK exception."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None, True, None
    if isinstance(exc, openai.APIConnectionError):
        return "connection", None, True, None
    if isinstance(exc, openai.APIStatusError):
        status = int(exc.status_code)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        retryable = status == 429 or status == 408 or status >= 500
        return "http", status, retryable, parse_retry_after(headers) if retryable else None
    return "bad_response", None, False, None


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
        sleep: Function used to wait between retries (tests pass a recorder).
        environ: Where to read the API key (default ``os.environ``).
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        sleep: Callable[[float], None] | None = None,
        environ: Mapping[str, str] | None = None,
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
                f"(or configure another key variable with api_key_env), or pass base_url for a local "
                f"OpenAI-compatible server (vLLM, Ollama), or use --model symbolic to run offline"
            )
        self._api_key = key or _PLACEHOLDER_KEY
        self._sleep = sleep or time.sleep
        self._rng = random.Random(settings.seed)
        self._semaphore = threading.BoundedSemaphore(settings.max_concurrency)
        self._init_lock = threading.Lock()
        self._sdk: Any = None
        self._cache: ResponseCache | None = None
        self._count_lock = threading.Lock()
        self.requests_made = 0

    # -- pickling: drop live handles -----------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for k in ("_sdk", "_cache", "_semaphore", "_init_lock", "_count_lock"):
            state[k] = None
        if state.get("_sleep") is time.sleep:
            state["_sleep"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sleep = self._sleep or time.sleep
        self._semaphore = threading.BoundedSemaphore(self.settings.max_concurrency)
        self._init_lock = threading.Lock()
        self._count_lock = threading.Lock()

    # -- lazy handles --------------------------------------------------------------------
    def _client(self) -> Any:
        with self._init_lock:
            if self._sdk is None:
                import openai

                kwargs: dict[str, Any] = dict(api_key=self._api_key, max_retries=0, timeout=float(self.settings.timeout_s))
                if self.settings.base_url:
                    kwargs["base_url"] = self.settings.base_url
                self._sdk = openai.OpenAI(**kwargs)
            return self._sdk

    @property
    def cache(self) -> ResponseCache | None:
        """The reply cache (opened on first use), or ``None`` when caching is off."""
        if not self.settings.caching:
            return None
        with self._init_lock:
            if self._cache is None:
                self._cache = ResponseCache(self.settings.cache_path)  # type: ignore[arg-type]
            return self._cache

    def close(self) -> None:
        """Close the HTTP client and the cache connection (reopened if used again)."""
        with self._init_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None
            if self._cache is not None:
                self._cache.close()
                self._cache = None

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the call ------------------------------------------------------------------------
    def request_for(self, messages: Sequence[Mapping[str, Any]], sample: int | None = None) -> dict[str, Any]:
        """The canonical request (the cache key's input) for ``messages``."""
        s = self.settings
        if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)):
            raise ValueError(f"sample must be an integer or None, got {sample!r}")
        return canonical_request(
            self.model.model_id, _check_messages(messages), s.effective_temperature, s.seed, s.base_url, sample
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
            LLMCallError: the call failed for good (after retries for retryable failures).
        """
        request = self.request_for(messages, sample)
        key = cache_key(request)
        mode = self.settings.cache_mode
        cache = self.cache
        if cache is not None and mode in ("use", "replay"):
            hit = cache.get(key)
            if hit is not None:
                return Completion(hit.content, hit.reasoning, hit.prompt_tokens, hit.completion_tokens, True, self.model.model_id, key, 0)
            if mode == "replay":
                raise CacheMiss(key, self.model.model_id)
        content, reasoning, p_tok, c_tok, attempts = self._call(request)
        if cache is not None:
            try:
                cache.put(key, request, CachedReply(content, reasoning, p_tok, c_tok))
            except sqlite3.Error as exc:  # a paid reply is still returned; only its reuse is lost
                warnings.warn(f"could not store reply {key} in {cache.path}: {exc}", RuntimeWarning, stacklevel=2)
        return Completion(content, reasoning, p_tok, c_tok, False, self.model.model_id, key, attempts)

    def _call(self, request: dict[str, Any]) -> tuple[str, str | None, int, int, int]:
        s = self.settings
        sdk = self._client()
        kwargs: dict[str, Any] = dict(model=request["model"], messages=request["messages"], temperature=request["temperature"])
        if s.seed is not None:
            kwargs["seed"] = s.seed
        where = s.base_url or "the OpenAI API"
        total = s.max_retries + 1
        last = ""
        for attempt in range(1, total + 1):
            try:
                with self._semaphore:
                    with self._count_lock:
                        self.requests_made += 1
                    resp = sdk.chat.completions.create(**kwargs)
            except Exception as exc:  # classified below; anything unknown fails at once
                kind, status, retryable, retry_after = _classify(exc)
                what = f"HTTP {status}" if status is not None else kind
                last = f"{what}: {_error_detail(exc)}"
                if not retryable:
                    hint = ""
                    if status in (401, 403):
                        hint = f" (check {s.api_key_env})"
                    elif status == 404:
                        hint = f" (is {request['model']!r} a model this server serves?)"
                    raise LLMCallError(
                        f"model {request['model']} at {where}: {last}{hint}", kind=kind, status=status, attempts=attempt
                    ) from exc
                if attempt == total:
                    raise LLMCallError(
                        f"model {request['model']} at {where}: gave up after {attempt} attempts; last error {last}",
                        kind=kind, status=status, attempts=attempt,
                    ) from exc
                self._sleep(backoff_delay(attempt, s.backoff_base_s, s.backoff_max_s, self._rng, retry_after))
                continue
            choices = getattr(resp, "choices", None) or []
            if not choices or getattr(choices[0], "message", None) is None:
                raise LLMCallError(
                    f"model {request['model']} at {where}: reply has no choices/message", kind="bad_response", attempts=attempt
                )
            content, reasoning = _message_text(choices[0].message)
            usage = getattr(resp, "usage", None)
            p_tok = _token_count(getattr(usage, "prompt_tokens", 0))
            c_tok = _token_count(getattr(usage, "completion_tokens", 0))
            return content, reasoning, p_tok, c_tok, attempt
        raise AssertionError("unreachable")  # pragma: no cover


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
]
