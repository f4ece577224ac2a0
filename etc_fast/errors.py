"""The one exception that separates infrastructure failures from model outcomes.

A *model outcome* is any reply a model gave, however useless: the protocol handles it (an invalid
turn, a repair message) and the trial goes on. An *infrastructure failure* is everything that kept
a reply from existing: a rejected key, a dead host, a quota, a timeout or a malformed body after the
retries, a reply missing from a replay cache. Such a failure must never reach a prompt or a policy
decision: it is raised as :class:`InfrastructureError`, the protocol stops the trial, and the runner
stores it with status ``failed`` and the :attr:`~InfrastructureError.kind`, to be run again later.

This module imports nothing from the project, so any layer can raise or catch the exception.
"""

from __future__ import annotations

__all__ = ["ERROR_KINDS", "FATAL_KINDS", "JUDGE_STOPPED", "InfrastructureError"]

#: What went wrong, one word each.
ERROR_KINDS: dict[str, str] = {
    "auth": "the server rejected the API key (HTTP 401)",
    "permission": "the key may not use this model or endpoint (HTTP 403)",
    "not_found": "the server does not know this model or path (HTTP 404)",
    "quota": "the account is out of credit or quota",
    "unreachable": "no connection to the server",
    "timeout": "no reply within the time allowed",
    "rate_limit": "still rate limited (HTTP 429) when the retry time ran out",
    "server_error": "still failing with HTTP 5xx when the retry time ran out",
    "bad_response": "the server's answer was not a usable completion",
    "bad_request": "the server refused the request (HTTP 4xx)",
    "cache_miss": "replay mode and the reply is not in the cache",
    "cache_error": "the reply cache could not be opened, read or written",
    "stopped": "the run was stopped before this call finished",
    "search_time_limit": "the offline agent's search ran past its wall-clock limit (never a shorter search)",
    "memory_limit": "the offline agent's search needed more memory than its bound (symbolic.memory_limit_mb)",
    "judge_time_limit": "the structural judge reached no verdict within its wall-clock limit (never a verdict)",
    "judge_failed": "the structural judge's process or server failed before a verdict (never a verdict)",
}

#: How a structural judge child past its deadline begins its reason (the deadline in seconds follows).
#: Judges before deadlines were failures stored it as "not credited"; the store reads such a line
#: as unfinished by this prefix (:func:`etc_fast.store.no_verdict`).
JUDGE_STOPPED = "structural judge stopped: no verdict within"

#: Kinds that no retry and no other trial can cure: the run stops at the first one.
FATAL_KINDS: frozenset[str] = frozenset({"auth", "permission", "not_found", "quota"})


class InfrastructureError(Exception):
    """A model call that produced no reply for reasons outside the model, or a result the machinery
    did not reach (the offline agent's search past its limits, a judge with no verdict).

    Attributes:
        kind: One of :data:`ERROR_KINDS`.
        attempts: HTTP requests made for the failed call (0 when none was made).
    """

    def __init__(self, message: str, *, kind: str, attempts: int = 0) -> None:
        super().__init__(message)
        self.kind = kind if kind in ERROR_KINDS else "bad_response"
        self.attempts = int(attempts)

    def one_line(self) -> str:
        """The message on one line (the form stored in the results table)."""
        return " ".join(str(self).split())
