"""Fixtures for the LLM layer tests: a scripted local chat server and fast client settings."""

from __future__ import annotations

import pytest

from etc_fast.llm import LLMClient, LLMSettings
from tests.llm._server import ChatServer


def fast_settings(base_url: str, **overrides) -> LLMSettings:
    """Client settings for tests: tiny backoff, no cache unless asked. The request timeout is
    generous (a loaded CI machine once held the local server past 2 s); the tests of timeouts set
    their own."""
    kw = dict(
        model="test-model",
        base_url=base_url,
        timeout_s=20.0,
        max_retries=3,
        backoff_base_s=0.001,
        backoff_max_s=0.01,
        cache_mode="off",
    )
    kw.update(overrides)
    return LLMSettings(**kw)


class SleepRecorder:
    """Stands in for ``time.sleep`` and records the requested waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def serve():
    """``serve(script) -> ChatServer`` started for the test and stopped afterwards."""
    servers: list[ChatServer] = []

    def start(script, **kw) -> ChatServer:
        srv = ChatServer(script, **kw).__enter__()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.__exit__(None, None, None)


@pytest.fixture
def make_client():
    """``make_client(server, **settings) -> (client, sleep_recorder)``; clients closed afterwards."""
    clients: list[LLMClient] = []

    def make(srv: ChatServer, **overrides):
        rec = SleepRecorder()
        client = LLMClient(fast_settings(srv.base_url, **overrides), sleep=rec, environ={})
        clients.append(client)
        return client, rec

    yield make
    for c in clients:
        c.close()
