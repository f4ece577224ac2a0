"""The paid-call ledger: an answered call is recorded once, with its reply, in the same transaction."""

from __future__ import annotations

import io
import sqlite3
import threading

import pytest

from etc_fast.llm import (
    CachedReply,
    CacheError,
    LLMClient,
    ResponseCache,
    ledger_tag,
    paid_usd,
    read_ledger_file,
    read_paid,
    write_ledger_file,
)
from etc_fast.llm._ledger import LedgerTag, PaidCall
from etc_fast.runner._ledger import RunLedger
from etc_fast.runner._progress import Progress
from tests.llm._server import ChatServer, ok
from tests.llm.conftest import fast_settings

MSG = [{"role": "user", "content": "hello"}]


def _client(srv: ChatServer, cache, **kw) -> LLMClient:
    return LLMClient(fast_settings(srv.base_url, cache_path=str(cache), cache_mode="use", **kw), environ={})


def test_an_answered_call_is_on_the_ledger_once_and_a_reuse_is_not(tmp_path):
    cache = tmp_path / "c.db"
    with ChatServer([ok("a", prompt_tokens=30, completion_tokens=5), ok("b", prompt_tokens=40, completion_tokens=6),
                     ok("c")],
                    models=["test-model"]) as srv:
        client = _client(srv, cache)
        with ledger_tag("run1", "trialA"):
            first = client.complete(MSG)
            again = client.complete(MSG)  # the same request: from the cache, nothing paid
            other = client.complete([*MSG, {"role": "assistant", "content": "a"}, {"role": "user", "content": "more"}])
        untagged = client.complete(MSG, sample=7)
        client.close()
        assert srv.n_answered == 3
    assert not first.cached and again.cached and not other.cached and not untagged.cached
    with ResponseCache(cache) as rc:
        rows = rc.paid_rows()
    assert [(r["run"], r["trial"], r["role"], r["name"], r["model"]) for r in rows] == [
        ("run1", "trialA", "policy", "test-model", "test-model")] * 2 + [(None, None, "policy", "test-model", "test-model")]
    assert [(r["prompt_tokens"], r["completion_tokens"], r["attempts"]) for r in rows[:2]] == [(30, 5, 1), (40, 6, 1)]
    assert rows[0]["key"] == first.key and rows[1]["key"] == other.key
    [tot] = read_paid(cache, "run1")
    assert (tot.calls, tot.prompt_tokens, tot.completion_tokens, tot.trials) == (2, 70, 11, 1)
    assert read_paid(cache, "another run") == []
    assert paid_usd([tot], {"test-model": {"prompt": 1.0, "completion": 10.0}}) == pytest.approx((70 + 110) / 1e6)
    assert paid_usd([tot], {}) is None  # no price: no money, never a made-up zero


def test_a_retried_call_is_one_paid_call_with_its_attempts(tmp_path):
    from tests.llm._server import error

    cache = tmp_path / "c.db"
    with ChatServer([error(500), ok("fine")], models=["test-model"]) as srv:
        client = LLMClient(fast_settings(srv.base_url, cache_path=str(cache), cache_mode="use"), environ={},
                           sleep=lambda s: None)
        with ledger_tag("r", "t"):
            client.complete(MSG)
        client.close()
        assert srv.n_requests == 2 and srv.n_answered == 1
    with ResponseCache(cache) as rc:
        [row] = rc.paid_rows("r")
    assert row["attempts"] == 2


def test_the_ledger_row_and_the_reply_are_one_transaction(tmp_path):
    """A ledger row that cannot be written takes its reply with it: a stored reply is always paid for."""
    path = tmp_path / "c.db"
    rc = ResponseCache(path)
    raw = sqlite3.connect(path)
    raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON ledger BEGIN SELECT RAISE(ABORT, 'ledger refused'); END")
    raw.commit()
    paid = PaidCall(LedgerTag("r", "t"), "policy", "m", "m-id", 3, 4, 1)
    with pytest.raises(CacheError, match="ledger refused"):
        rc.put("k1", {"model": "m-id"}, CachedReply("text", None, 3, 4), paid=paid)
    assert rc.get("k1") is None and rc.paid_rows() == []
    raw.execute("DROP TRIGGER refuse")
    raw.commit()
    raw.close()
    rc.put("k1", {"model": "m-id"}, CachedReply("text", None, 3, 4), paid=paid)
    assert rc.get("k1") is not None and len(rc.paid_rows()) == 1
    rc.put("k2", {"model": "m-id"}, CachedReply("no payment", None, 1, 1))  # stored without a payment
    assert len(rc) == 2 and len(rc.paid_rows()) == 1
    rc.close()


def test_threads_record_their_own_trials(tmp_path):
    cache = tmp_path / "c.db"

    def answer(body, index):
        return ok("x", prompt_tokens=10, completion_tokens=1)

    with ChatServer(answer, models=["test-model"]) as srv:
        client = _client(srv, cache)

        def trial(name: str) -> None:
            with ledger_tag("run", name):
                for i in range(5):
                    client.complete([{"role": "user", "content": f"{name} {i}"}])

        threads = [threading.Thread(target=trial, args=(f"t{n}",)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        client.close()
        assert srv.n_answered == 20
    per_trial = read_paid(cache, "run", by_trial=True)
    assert sorted((t.trial, t.calls) for t in per_trial) == [(f"t{n}", 5) for n in range(4)]


def test_a_cache_written_before_the_ledger_reads_as_no_ledger_and_gains_one(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE completions (key TEXT PRIMARY KEY, model TEXT NOT NULL, request TEXT NOT NULL, "
                 "content TEXT NOT NULL, reasoning TEXT, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
                 "created REAL NOT NULL)")
    conn.execute("INSERT INTO completions VALUES ('k', 'm', '{}', 'old reply', NULL, 5, 6, 0)")
    conn.commit()
    conn.close()
    assert read_paid(path, "any") is None  # read-only: says "no ledger", changes nothing
    assert read_paid(tmp_path / "absent.db", "any") is None and not (tmp_path / "absent.db").exists()
    with ResponseCache(path) as rc:
        assert rc.get("k").content == "old reply"
        assert rc.paid_rows() == []
    assert read_paid(path, "any") == []


def test_the_ledger_file_keeps_its_id_across_resumes(tmp_path):
    run = write_ledger_file(tmp_path, [tmp_path / "a.db"], {"t0": "sha0"})
    again = write_ledger_file(tmp_path, [tmp_path / "b.db"], {"t0": "sha0", "t1": "sha1"})
    assert run == again and len(run) == 32
    assert read_ledger_file(tmp_path) == {"run": run, "caches": [str(tmp_path / "a.db"), str(tmp_path / "b.db")],
                                          "before": {"t0": "sha0"}}  # what was stored when the ledger began
    assert read_ledger_file(tmp_path / "nowhere") is None
    (tmp_path / "ledger.json").write_text('{"run": 3}')
    with pytest.raises(ValueError, match="ledger.json"):
        read_ledger_file(tmp_path)


def _summary(**kw):
    row = {"trial_id": "t1", "model": "test-model", "task": "m0_gravity", "difficulty": "easy",
           "configuration": "baseline_n", "rollout": 0, "status": "completed", "rmsle": 0.1, "measurements": 2}
    row.update(kw)
    return row


def test_the_progress_line_shows_calls_tokens_and_money(tmp_path):
    cache = tmp_path / "c.db"
    with ResponseCache(cache) as rc:
        for i in range(3):  # three calls paid, one of them by an attempt whose trial was never stored
            rc.put(f"k{i}", {"model": "m"}, CachedReply("r", None, 1000, 100),
                   paid=PaidCall(LedgerTag("run", "t1"), "policy", "test-model", "m", 1000, 100, 1))
    ledger = RunLedger("run", [str(cache)], {"test-model": {"prompt": 2.0, "completion": 10.0}})
    stream = io.StringIO()
    progress = Progress(2, stream=stream, tty=False, ledger=ledger)
    progress.update(_summary(calls_cached=2, prompt_tokens_cached=500, completion_tokens_cached=50))
    line = stream.getvalue()
    assert "calls 5 (paid 3, reused 2) tokens 3,850 $0.0090" in line, line
    # Without prices: tokens only.
    ledger_np = RunLedger("run", [str(cache)], {})
    assert "$" not in ledger_np.text() and "paid 3" in ledger_np.text()
    # An offline run: the line as before, nothing about calls.
    plain = io.StringIO()
    Progress(1, stream=plain, tty=False).update(_summary(model="symbolic"))
    assert "calls" not in plain.getvalue() and "tokens" not in plain.getvalue()
    # The terminal bar carries it too.
    bar = io.StringIO()
    Progress(2, stream=bar, tty=True, ledger=ledger).update(_summary())
    assert "paid 3" in bar.getvalue()


def test_without_a_cache_the_progress_line_counts_the_stored_trials():
    ledger = RunLedger(None, [], {})
    ledger.note(_summary(llm_calls=4, calls_cached=1, prompt_tokens=100, completion_tokens=10,
                         judge_calls_paid=1, judge_prompt_tokens=50, judge_completion_tokens=2))
    t = ledger.totals()
    assert (t["calls"], t["paid"], t["reused"], t["prompt_tokens"], t["source"]) == (5, 4, 1, 150, "trials")


def _frame(**cols):
    import polars as pl

    base = {"trial_id": ["a", "b"], "model": ["test-model", "test-model"], "llm_calls": [3, 3], "calls_paid": [3, 1],
            "calls_cached": [0, 2], "prompt_tokens_paid": [30, 10], "completion_tokens_paid": [3, 1],
            "judge_calls_paid": [0, 0], "judge_calls_cached": [0, 0]}
    base.update(cols)
    return pl.DataFrame(base)


def test_the_report_ledger_counts_every_attempt_and_says_where_it_has_none(tmp_path):
    from etc_fast.report._ledger import ledger_lines, ledger_totals

    # A run directory written before the ledger: the trials' own counts, and it says so.
    old = ledger_totals(tmp_path, _frame())
    assert (old["source"], old["paid"], old["reused"], old["calls"]) == ("trials", 4, 2, 6)
    text = "\n".join(ledger_lines(tmp_path, _frame()))
    assert "No ledger: this run directory names no ledger" in text and "source: trials" in text
    # An offline run: no section at all.
    offline = _frame(model=["symbolic"] * 2, llm_calls=[0, 0], calls_paid=[0, 0], calls_cached=[0, 0])
    assert ledger_totals(tmp_path, offline) is None and ledger_lines(tmp_path, offline) == []
    # With a ledger: paid from it (here 6: the interrupted attempt paid 2 more than the trials show).
    cache = tmp_path / "c.db"
    run = write_ledger_file(tmp_path, [cache])
    with ResponseCache(cache) as rc:
        for i in range(6):
            rc.put(f"k{i}", {"model": "m"}, CachedReply("r", None, 10, 1),
                   paid=PaidCall(LedgerTag(run, "a" if i < 3 else "b"), "policy", "test-model", "m", 10, 1, 1))
        rc.put("j", {"model": "m"}, CachedReply("YES", None, 200, 9),
               paid=PaidCall(LedgerTag(run, "a"), "judge", "test-model", "m", 200, 9, 1))
        rc.put("other", {"model": "m"}, CachedReply("r", None, 10, 1),  # another run's call, not ours
               paid=PaidCall(LedgerTag("other-run", "a"), "policy", "test-model", "m", 10, 1, 1))
    (tmp_path / "config.resolved.yaml").write_text("llm:\n  prices:\n    test-model: {prompt: 1.0, completion: 2.0}\n")
    tot = ledger_totals(tmp_path, _frame())
    assert (tot["source"], tot["paid"], tot["reused"], tot["calls"]) == ("ledger", 7, 2, 9)
    assert [(r["role"], r["paid"], r["reused"]) for r in tot["rows"]] == [("policy", 6, 2), ("judge", 1, 0)]
    assert tot["usd"] == pytest.approx((60 + 200 + 2 * (6 + 9)) / 1e6)
    assert "LLM calls: 9 = paid 7 + reused 2 (source: ledger)." in "\n".join(ledger_lines(tmp_path, _frame()))
    # A ledger file naming a cache that is gone: the trials' counts, and the reason.
    cache.unlink()
    gone = ledger_totals(tmp_path, _frame())
    assert gone["source"] == "trials" and "is missing or holds no ledger" in gone["note"]
