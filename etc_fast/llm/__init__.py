"""LLM layer: an OpenAI-compatible client with retries and a reply cache, prompts, reply parsing
and the NewtonBench symbolic judge.

* :class:`LLMSettings` / :class:`LLMClient` — one model behind the OpenAI API or any compatible
  ``base_url``; NewtonBench short names (``gpt41mini``, ``gpt41``, ...) resolve to model ids.
* :class:`ResponseCache` — SQLite (WAL) cache keyed by everything that changes a reply; modes
  ``use``, ``refresh``, ``off``, ``replay``.
* :func:`parse_action` — a model reply to a protocol :class:`~etc_fast.protocol.Action`.
* the LLM judge lives with the other judges: :class:`etc_fast.evaluate.LLMJudge`.
* :class:`BaselineTexts` — every message of the free-form baselines and the judge (etc_fast's
  words); :class:`NewtonBenchTexts` — the same read from a NewtonBench checkout (exact mode);
  :func:`register_apparatus` — the apparatus section of a task message per experiment system.
"""

from etc_fast.llm import _prompts as prompts
from etc_fast.llm._cache import (
    CACHE_MODES,
    CachedReply,
    CacheError,
    CacheMiss,
    ResponseCache,
    cache_key,
    canonical_request,
)
from etc_fast.llm._client import (
    FIXED_TEMPERATURE_MODELS,
    MODEL_ALIASES,
    Completion,
    LLMCallError,
    LLMClient,
    LLMConfigError,
    LLMSettings,
    ResolvedModel,
    backoff_delay,
    parse_retry_after,
    resolve_model,
    stop_calls,
)
from etc_fast.llm._ledger import (
    LEDGER_FILE,
    LedgerTag,
    PaidCall,
    PaidTotals,
    current_tag,
    ledger_tag,
    paid_usd,
    read_ledger_file,
    read_paid,
    write_ledger_file,
)
from etc_fast.llm._newtonbench import NewtonBenchCheckoutError, NewtonBenchTexts, make_texts
from etc_fast.llm._parse import (
    MAX_HYPOTHESES,
    MAX_REPLY_CHARS,
    ReplyError,
    clean_expression,
    extract_code,
    extract_final_law,
    extract_law,
    last_block,
    nb_experiments,
    nb_final_law,
    parse_action,
    parse_baseline_newtonbench,
    parse_committee,
    parse_experiments,
)
from etc_fast.llm._system_prompts import (
    apparatus_block,
    system_baseline_message,
    system_explore_first_message,
    system_explore_next_message,
    system_planner_system_prompt,
    system_synthesis_first_message,
    system_synthesis_system_prompt,
)
from etc_fast.llm._texts import BaselineTexts, parse_verdict, register_apparatus

__all__ = [
    "LEDGER_FILE",
    "LedgerTag",
    "PaidCall",
    "PaidTotals",
    "current_tag",
    "ledger_tag",
    "paid_usd",
    "read_ledger_file",
    "read_paid",
    "write_ledger_file",
    "prompts",
    "MAX_REPLY_CHARS",
    "parse_verdict",
    "apparatus_block",
    "system_baseline_message",
    "system_explore_first_message",
    "system_explore_next_message",
    "system_planner_system_prompt",
    "system_synthesis_first_message",
    "system_synthesis_system_prompt",
    "BaselineTexts",
    "CACHE_MODES",
    "CacheError",
    "CacheMiss",
    "CachedReply",
    "Completion",
    "FIXED_TEMPERATURE_MODELS",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMSettings",
    "MAX_HYPOTHESES",
    "MODEL_ALIASES",
    "NewtonBenchCheckoutError",
    "NewtonBenchTexts",
    "ReplyError",
    "ResolvedModel",
    "ResponseCache",
    "backoff_delay",
    "cache_key",
    "canonical_request",
    "clean_expression",
    "extract_code",
    "extract_final_law",
    "extract_law",
    "last_block",
    "make_texts",
    "nb_experiments",
    "nb_final_law",
    "parse_action",
    "parse_baseline_newtonbench",
    "parse_committee",
    "parse_experiments",
    "parse_retry_after",
    "register_apparatus",
    "resolve_model",
    "stop_calls",
]
