"""The chat client against a scripted local server, through the real ``openai`` SDK."""

from __future__ import annotations

import email.utils
import pickle
import random
import threading
import time

import pytest

from etc_fast.llm import (
    LLMCallError,
    LLMClient,
    LLMConfigError,
    LLMSettings,
    backoff_delay,
    parse_retry_after,
    resolve_model,
)
from tests.llm._server import Reply, dropped, error, ok, slow

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]


# -- models and settings ------------------------------------------------------------------
def test_aliases_resolve_to_newtonbench_ids():
    assert resolve_model("gpt41mini").model_id == "gpt-4.1-mini-2025-04-14"
    assert resolve_model("gpt41").model_id == "gpt-4.1-2025-04-14"
    assert resolve_model("o4mini").model_id == "o4-mini-2025-04-16"
    assert resolve_model("gpt5").model_id == "gpt-5"
    assert resolve_model("gpt5mini").model_id == "gpt-5-mini-2025-08-07"
    assert resolve_model("gpt41", "https://openrouter.ai/api/v1").model_id == "openai/gpt-4.1"


def test_unknown_names_pass_through_unchanged():
    for raw in ("meta-llama/Llama-3.1-8B-Instruct", "qwen2.5:7b", "my-model"):
        r = resolve_model(raw)
        assert r.model_id == raw and r.temperature is None


@pytest.mark.parametrize("alias", ["o4mini", "gpt5", "gpt5mini"])
def test_reasoning_models_force_temperature_one(alias):
    assert resolve_model(alias).temperature == 1.0
    assert LLMSettings(model=alias, temperature=0.4).effective_temperature == 1.0
    assert LLMSettings(model="gpt41mini", temperature=0.4).effective_temperature == 0.4


def test_missing_key_error_names_the_ways_out():
    with pytest.raises(LLMConfigError) as err:
        LLMClient(LLMSettings(model="gpt41mini"), environ={})
    msg = str(err.value)
    assert "OPENAI_API_KEY" in msg and "base_url" in msg
    assert "--model symbolic" not in msg  # only the policy, which --model replaces, suggests it
    with pytest.raises(LLMConfigError, match="MY_KEY"):
        LLMClient(LLMSettings(model="gpt41mini", api_key_env="MY_KEY"), environ={"OPENAI_API_KEY": "x"})


def test_key_or_base_url_or_replay_is_enough(tmp_path):
    LLMClient(LLMSettings(model="gpt41mini"), environ={"OPENAI_API_KEY": "sk-test"})
    LLMClient(LLMSettings(model="local", base_url="http://127.0.0.1:9/v1"), environ={})
    LLMClient(LLMSettings(model="gpt41mini", cache_path=str(tmp_path / "c.db"), cache_mode="replay"), environ={})


@pytest.mark.parametrize(
    "bad",
    [
        dict(cache_mode="sometimes"),
        dict(cache_mode="replay"),
        dict(max_retries=-1),
        dict(max_concurrency=0),
        dict(timeout_s=0),
        dict(temperature=float("nan")),
        dict(model=""),
        dict(seed=1.5),
    ],
)
def test_bad_settings_are_refused_with_the_field_named(bad):
    field = next(iter(bad))
    with pytest.raises(LLMConfigError, match=field if field != "cache_mode" or bad[field] != "replay" else "cache_path"):
        LLMSettings(**{"model": "m", **bad})


# -- replies -------------------------------------------------------------------------------
def test_good_reply_content_reasoning_and_tokens(serve, make_client):
    srv = serve([ok("the answer", reasoning="thinking...", prompt_tokens=123, completion_tokens=45)])
    client, _ = make_client(srv, temperature=0.3, seed=7)
    c = client.complete(MSGS)
    assert c.content == "the answer" and c.reasoning == "thinking..."
    assert (c.prompt_tokens, c.completion_tokens, c.cached, c.attempts) == (123, 45, False, 1)
    body = srv.requests[0]
    assert body["model"] == "test-model" and body["temperature"] == 0.3 and body["seed"] == 7
    assert body["messages"] == MSGS
    # A base_url without a key sends a placeholder key.
    assert srv.headers[0]["authorization"].startswith("Bearer ")


@pytest.mark.parametrize(
    "p_tok, c_tok, expect",
    [("abc", 5, (0, 5)), (None, 4.0, (0, 4)), (-3, 2, (0, 2)), ([1], {"a": 1}, (0, 0)), (float("inf"), 7, (0, 7))],
)
def test_garbage_usage_keeps_the_reply(serve, make_client, p_tok, c_tok, expect):
    srv = serve([Reply(content="fine", prompt_tokens=p_tok, completion_tokens=c_tok)])
    client, _ = make_client(srv, max_retries=0)
    c = client.complete(MSGS)
    assert c.content == "fine" and (c.prompt_tokens, c.completion_tokens) == expect


def test_empty_content_is_a_reply_but_null_content_is_retried(serve, make_client):
    srv = serve([ok(""), ok(None), ok("second")])
    client, rec = make_client(srv)
    c = client.complete(MSGS)
    assert c.content == "" and c.attempts == 1 and c.finish_reason == "stop"
    c = client.complete(MSGS + [{"role": "user", "content": "again"}])
    assert c.content == "second" and c.attempts == 2 and len(rec.waits) == 1


def test_429_with_retry_after_is_honoured(serve, make_client):
    srv = serve([error(429, retry_after="0.004"), ok("fine")])
    client, rec = make_client(srv, backoff_max_s=1.0)
    c = client.complete(MSGS)
    assert c.content == "fine" and c.attempts == 2 and srv.n_requests == 2
    assert rec.waits == [pytest.approx(0.004)]


def test_5xx_retries_with_growing_jittered_backoff(serve, make_client):
    srv = serve([error(500), error(502), error(503), ok("after three")])
    client, rec = make_client(srv, backoff_base_s=0.01, backoff_max_s=1.0, max_retries=5)
    assert client.complete(MSGS).content == "after three"
    assert srv.n_requests == 4 and len(rec.waits) == 3
    for i, w in enumerate(rec.waits):  # equal jitter: [d/2, d], d = base * 2**i
        d = 0.01 * 2**i
        assert d / 2 <= w <= d


def test_gives_up_after_max_retries(serve, make_client):
    srv = serve([error(500)] * 10)
    client, rec = make_client(srv, max_retries=2)
    with pytest.raises(LLMCallError) as err:
        client.complete(MSGS)
    assert srv.n_requests == 3 and len(rec.waits) == 2
    assert err.value.status == 500 and err.value.attempts == 3 and "gave up after 3 attempts" in str(err.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_fail_at_once(serve, make_client, status):
    srv = serve([error(status), ok("never")])
    client, rec = make_client(srv)
    with pytest.raises(LLMCallError) as err:
        client.complete(MSGS)
    assert srv.n_requests == 1 and rec.waits == []
    assert err.value.status == status and f"HTTP {status}" in str(err.value)


def test_timeout_is_retried(serve, make_client):
    srv = serve([slow(0.6), ok("quick")])
    client, rec = make_client(srv, timeout_s=0.15)
    c = client.complete(MSGS)
    assert c.content == "quick" and c.attempts == 2 and len(rec.waits) == 1


def test_timeout_every_time_fails_with_kind_timeout(serve, make_client):
    srv = serve([slow(0.5)] * 3)
    client, _ = make_client(srv, timeout_s=0.1, max_retries=1)
    with pytest.raises(LLMCallError) as err:
        client.complete(MSGS)
    assert err.value.kind == "timeout" and err.value.attempts == 2


def test_dropped_connection_is_retried(serve, make_client):
    srv = serve([dropped(), ok("reconnected")])
    client, rec = make_client(srv)
    assert client.complete(MSGS).content == "reconnected"
    assert srv.n_requests == 2 and len(rec.waits) == 1


def test_unreachable_server_is_a_connection_error(make_client):
    client = LLMClient(
        LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_base_s=0.001, timeout_s=1, cache_mode="off"),
        sleep=lambda s: None,
        environ={},
    )
    with pytest.raises(LLMCallError) as err:
        client.complete(MSGS)
    assert err.value.kind in ("unreachable", "timeout") and err.value.attempts == 2


def test_malformed_messages_are_refused_before_any_request(serve, make_client):
    srv = serve([ok("x")])
    client, _ = make_client(srv)
    for bad in ([], [{"role": "user"}], [{"role": "robot", "content": "x"}], [{"role": "user", "content": 3}]):
        with pytest.raises(ValueError):
            client.complete(bad)
    assert srv.n_requests == 0


# -- retry helpers -------------------------------------------------------------------------
def test_retry_after_forms():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30, abs=1.5)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_delay_caps_and_prefers_retry_after():
    rng = random.Random(0)
    assert backoff_delay(1, 1.0, 60, rng, retry_after=5.0) == 5.0
    assert backoff_delay(1, 1.0, 60, rng, retry_after=500.0) == 60
    for attempt in range(1, 12):
        w = backoff_delay(attempt, 1.0, 8.0, rng)
        d = min(8.0, 2.0 ** (attempt - 1))
        assert d / 2 <= w <= d


def test_http_date_retry_after_through_the_server(serve, make_client):
    date = email.utils.formatdate(time.time() + 2, usegmt=True)
    srv = serve([Reply(content=None, status=429, headers=(("Retry-After", date),)), ok("ok")])
    client, rec = make_client(srv, backoff_max_s=10.0)
    assert client.complete(MSGS).content == "ok"
    assert 0.0 <= rec.waits[0] <= 3.0


# -- concurrency and pickling ---------------------------------------------------------------
def test_concurrency_is_bounded_per_client(serve, make_client):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def script(body, index):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return ok(f"r{index}")

    srv = serve(script)
    client, _ = make_client(srv, max_concurrency=2)
    threads = [threading.Thread(target=client.complete, args=([{"role": "user", "content": str(i)}],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert srv.n_requests == 6
    assert state["peak"] <= 2


def test_client_pickles_without_live_handles(serve, make_client):
    srv = serve([ok("one"), ok("two")])
    client, _ = make_client(srv)
    assert client.complete(MSGS).content == "one"
    clone = pickle.loads(pickle.dumps(client))
    assert clone.complete([{"role": "user", "content": "again"}]).content == "two"
    clone.close()


def test_aliases_become_openai_ids_only_for_the_openai_api():
    assert resolve_model("gpt41mini").model_id == "gpt-4.1-mini-2025-04-14"
    assert resolve_model("gpt41mini", "http://localhost:8000/v1").model_id == "gpt41mini"
    assert resolve_model("gpt41mini", "https://openrouter.ai/api/v1").model_id == "openai/gpt-4.1-mini"
    assert resolve_model("gpt41mini", "http://localhost:8000/v1", "served-name").model_id == "served-name"
    assert LLMSettings(model="gpt41mini", model_id="x").resolved.model_id == "x"


def test_base_url_spelling_does_not_change_the_cache_key():
    from etc_fast.llm import cache_key, canonical_request

    keys = {cache_key(canonical_request("m", MSGS, 0.4, None, url)) for url in
            ("http://127.0.0.1:8000/v1", "http://localhost:8000/v1/", "http://LOCALHOST:8000/v1")}
    assert len(keys) == 1
