"""A scripted OpenAI-compatible chat server on 127.0.0.1 for offline tests.

Each POST to ``/v1/chat/completions`` takes the next entry of a script (or asks a callable) and
answers with it: a normal completion, an HTTP error with headers, a slow reply, a dropped
connection, a body that is not JSON, a completion without choices or content, or one cut at the
token limit. ``GET /v1/models`` lists ``models`` (404 when ``None``); ``reject`` answers every
request with that status. Every chat request body is recorded, raw bytes included. The server runs
in a daemon thread, answers at most ``max_requests`` requests and shuts itself down after
``lifetime_s`` seconds whatever happens.

``python -m tests.llm._server`` runs one in the foreground (see ``--help``): a stand-in model for
command-line runs and the concurrency benchmark.
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclasses.dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        content: Assistant text of a successful completion (``None`` sends JSON null).
        reasoning: Optional ``reasoning_content`` of the message.
        status: HTTP status; anything but 200 sends an error body.
        headers: Extra response headers (e.g. ``Retry-After``).
        delay_s: Seconds to wait before answering (a slow reply).
        drop: Close the connection without answering.
        prompt_tokens / completion_tokens: Usage reported for a completion.
        finish_reason: The choice's ``finish_reason``.
        raw: Send these bytes as the 200 body instead of a completion (e.g. not JSON).
        no_choices: Send a completion whose ``choices`` list is empty.
    """

    content: str | None = ""
    reasoning: str | None = None
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    drop: bool = False
    prompt_tokens: int = 11
    completion_tokens: int = 7
    finish_reason: str = "stop"
    raw: bytes | None = None
    no_choices: bool = False


def ok(content: str | None, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def error(status: int, retry_after: str | None = None, **kw: Any) -> Reply:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Reply(content=None, status=status, headers=headers, **kw)


def slow(seconds: float, content: str = "late") -> Reply:
    return Reply(content=content, delay_s=seconds)


def dropped() -> Reply:
    return Reply(drop=True)


def not_json() -> Reply:
    return Reply(raw=b"<html>upstream hiccup</html>")


def no_choices() -> Reply:
    return Reply(no_choices=True)


def null_content() -> Reply:
    return Reply(content=None)


def cut(content: str, **kw: Any) -> Reply:
    return Reply(content=content, finish_reason="length", **kw)


Script = Sequence[Reply] | Callable[[dict, int], Reply]


class ChatServer:
    """Context manager serving a script; ``requests`` holds the decoded request bodies.

    Args:
        script: Replies in order, or ``f(body, index) -> Reply``.
        max_requests: Requests answered before every further one gets a 503 and the server stops.
        lifetime_s: The server shuts down after this many seconds even if still in use.
    """

    def __init__(
        self,
        script: Script,
        *,
        max_requests: int = 200,
        lifetime_s: float = 60.0,
        models: Sequence[str] | None = None,
        reject: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = script
        self.models = None if models is None else list(models)
        self.reject = reject
        self.host, self.port = host, port
        self.raw_requests: list[bytes] = []
        self.gets: list[str] = []
        self.max_requests = max_requests
        self.lifetime_s = lifetime_s
        self.requests: list[dict] = []
        self.answered = 0
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._closed = False
        self._closing = False

    # -- script --------------------------------------------------------------------------
    def _next(self, body: dict, raw: bytes = b"") -> Reply | None:
        with self._lock:
            index = len(self.requests)
            if index >= self.max_requests:
                return None
            self.requests.append(body)
            self.raw_requests.append(raw)
        if callable(self.script):
            return self.script(body, index)
        if index < len(self.script):
            return self.script[index]
        return Reply(content=None, status=500, headers=(("X-Script", "exhausted"),))

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def n_requests(self) -> int:
        """Chat requests received (model listings not counted)."""
        with self._lock:
            return len(self.requests)

    @property
    def n_answered(self) -> int:
        """Chat requests answered with a completion (HTTP 200, body written): the calls a client pays for."""
        with self._lock:
            return self.answered

    @property
    def n_all(self) -> int:
        """Every request received, model listings and rejected ones included."""
        with self._lock:
            return len(self.requests) + len(self.gets)

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                with server._lock:
                    server.gets.append(self.path)
                if server.reject is not None:
                    self._send(server.reject, {"error": {"message": f"rejected with {server.reject}", "type": "scripted"}})
                elif self.path.rstrip("/").endswith("/models") and server.models is not None:
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if server.reject is not None:
                    with server._lock:
                        server.gets.append("POST " + self.path)
                    self._send(server.reject, {"error": {"message": f"rejected with {server.reject}", "type": "scripted"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server._next(body, raw)
                if reply is None:
                    self._send(503, {"error": {"message": "request limit reached"}})
                    threading.Thread(target=server.close, daemon=True).start()
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                if reply.status != 200:
                    payload = {"error": {"message": f"scripted status {reply.status}", "type": "scripted"}}
                    self._send(reply.status, payload, reply.headers)
                    return
                if reply.raw is not None:
                    self._send_bytes(200, reply.raw, "text/html")
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.reasoning is not None:
                    message["reasoning_content"] = reply.reasoning
                payload = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "unknown"),
                    "choices": [] if reply.no_choices else [
                        {"index": 0, "message": message, "finish_reason": reply.finish_reason}
                    ],
                    "usage": {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": (
                            reply.prompt_tokens + reply.completion_tokens
                            if isinstance(reply.prompt_tokens, int) and isinstance(reply.completion_tokens, int)
                            else None
                        ),
                    },
                }
                if self._send(200, payload, reply.headers) and not reply.no_choices:
                    with server._lock:
                        server.answered += 1

            def _send(self, status: int, payload: dict, headers: Sequence[tuple[str, str]] = ()) -> bool:
                return self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

            def _send_bytes(self, status: int, data: bytes, ctype: str, headers: Sequence[tuple[str, str]] = ()) -> bool:
                """Send a response; ``False`` when the client had gone."""
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers:
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    self.close_connection = True
                    return False
                return True

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.close)
        self._timer.daemon = True
        self._timer.start()
        return self

    def close(self) -> None:
        """Stop serving (idempotent; safe from any thread but a request handler's own)."""
        with self._lock:
            httpd, self._closed = self._httpd, True
            if httpd is None or self._closing:
                return
            self._closing = True
        httpd.shutdown()
        httpd.server_close()

    def __exit__(self, *exc: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.close()
        if self._thread is not None:
            self._thread.join(timeout=5)


# ----------------------------------------------------------------------------------------
# A stand-in model: answers from the request alone (any number of concurrent trials)
# ----------------------------------------------------------------------------------------
GRAVITY_LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 2"
_FAULTS = (
    lambda: error(429, retry_after="1"), lambda: error(500), lambda: error(503), dropped, not_json, no_choices, null_content,
)


def fault_at(index: int, faults: float, seed: int = 0) -> Reply | None:
    """The transient fault :func:`model_like` sends for request ``index``, or ``None``."""
    rng = random.Random(f"{seed}:{index}")
    if faults and rng.random() < faults:
        return rng.choice(_FAULTS)()
    return None


def _signature_args(messages: list[dict]) -> list[str]:
    """The argument names of ``def discovered_law(...)`` in the conversation's first user message."""
    import re

    for m in messages:
        if m.get("role") == "user":
            found = re.search(r"def discovered_law\(([^)]*)\)", str(m.get("content") or ""))
            if found:
                return [a.strip() for a in found.group(1).split(",") if a.strip()]
            break
    return []


def _planner_answer(messages: list[dict], turn: int, law: str, experiments: int) -> str:
    """A stand-in planner conversation: ``experiments`` committees, then a draft; synthesis: the final law.

    The committee and the law are power laws in the signature's arguments (``law`` itself when its
    signature is the conversation's): a generic reply, not a reading of the data.
    """
    args = _signature_args(messages)
    if law.split("\n", 1)[0] != f"def discovered_law({', '.join(args)}):" and args:
        head, last = args[:-1] or args, args[-1]
        law = f"def discovered_law({', '.join(args)}):\n    C = 1.0\n    return C * {' * '.join(head)} / {last} ** 2"
    system = str(messages[0].get("content") or "") if messages else ""
    if "finalizing the law" in system:
        return f"<final_law>\n{law}\n</final_law>"
    if turn < experiments:
        head, last = " * ".join(args[:-1] or args[:1] or ["x"]), (args[-1] if args else "x")
        hyps = [f"C * {head} / {last}**2", f"C * {head} / {last}"]
        return json.dumps({"hypotheses": hyps})
    return f"<draft_law>\n{law}\n</draft_law>"


def model_like(experiments: int = 2, *, delay_s: float = 0.0, faults: float = 0.0, seed: int = 0,
               law: str = GRAVITY_LAW) -> Callable[[dict, int], Reply]:
    """A script for free-form baseline trials on ``m0_gravity``, planner trials and the LLM judge.

    The reply depends only on the conversation: in a baseline the first ``experiments`` turns
    request one measurement each, the next submits ``law``; in a planner's exploration the first
    ``experiments`` turns propose a committee of two power laws in the signature's arguments, the
    next a draft law, and the synthesis submits it; a judge prompt (one user message) gets ``YES``.
    With ``faults`` > 0 that share of requests, drawn from ``seed`` by request index, fails with
    one of 429 (Retry-After 1), 500, 503, a dropped connection, a body that is not JSON, no
    choices, or null content. Every answer waits ``delay_s`` first.
    """
    def answer(body: dict, index: int) -> Reply:
        fault = fault_at(index, faults, seed)
        if fault is not None:
            return dataclasses.replace(fault, delay_s=delay_s)
        messages = body.get("messages") or []
        if len(messages) == 1 and messages[0].get("role") == "user":
            return Reply(content="Same structure, constants absorbed.\nANSWER: YES", delay_s=delay_s,
                         prompt_tokens=200, completion_tokens=9)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        system = str(messages[0].get("content") or "") if messages else ""
        if "you propose candidate laws" in system or "finalizing the law" in system:
            return Reply(content=_planner_answer(messages, turn, law, experiments), delay_s=delay_s,
                         prompt_tokens=300 + 40 * turn, completion_tokens=30)
        if turn < experiments:
            point = {"mass1": 1 + turn, "mass2": 2, "distance": 1 + 0.5 * turn}
            return Reply(content=f"<run_experiment>\n{json.dumps([point])}\n</run_experiment>", delay_s=delay_s,
                         prompt_tokens=300 + 40 * turn, completion_tokens=25)
        return Reply(content=f"<final_law>\n{law}\n</final_law>", delay_s=delay_s, prompt_tokens=300 + 40 * turn,
                     completion_tokens=60)

    return answer


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import signal
    import sys

    p = argparse.ArgumentParser(prog="python -m tests.llm._server", description="A stand-in OpenAI-compatible model server.")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", help="write the base URL here once listening")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    p.add_argument("--faults", type=float, default=0.0, help="share of requests that fail transiently")
    p.add_argument("--reject", type=int, help="answer every request with this HTTP status (e.g. 401)")
    p.add_argument("--experiments", type=int, default=2, help="experiment turns before the final law")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=900.0)
    args = p.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    script = model_like(args.experiments, delay_s=args.delay, faults=args.faults, seed=args.seed)
    with ChatServer(script, max_requests=10**7, lifetime_s=args.lifetime, models=["test-model"], reject=args.reject,
                    port=args.port) as srv:
        if args.port_file:
            with open(args.port_file + ".tmp", "w") as fh:
                fh.write(srv.base_url)
            import os

            os.replace(args.port_file + ".tmp", args.port_file)
        print(srv.base_url, flush=True)
        stop.wait(args.lifetime)
        print(f"served {srv.n_requests} chat requests ({srv.n_answered} answered), {len(srv.gets)} other requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
