"""A scripted OpenAI-compatible chat server on 127.0.0.1 for offline tests.

Each POST to ``/v1/chat/completions`` takes the next entry of a script (or asks a callable) and
answers with it: a normal completion, an HTTP error with headers, a slow reply, or a dropped
connection. Every request body is recorded. The server runs in a daemon thread, answers at most
``max_requests`` requests and shuts itself down after ``lifetime_s`` seconds whatever happens.
"""

from __future__ import annotations

import dataclasses
import json
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
    """

    content: str | None = ""
    reasoning: str | None = None
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    drop: bool = False
    prompt_tokens: int = 11
    completion_tokens: int = 7


def ok(content: str | None, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def error(status: int, retry_after: str | None = None, **kw: Any) -> Reply:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Reply(content=None, status=status, headers=headers, **kw)


def slow(seconds: float, content: str = "late") -> Reply:
    return Reply(content=content, delay_s=seconds)


def dropped() -> Reply:
    return Reply(drop=True)


Script = Sequence[Reply] | Callable[[dict, int], Reply]


class ChatServer:
    """Context manager serving a script; ``requests`` holds the decoded request bodies.

    Args:
        script: Replies in order, or ``f(body, index) -> Reply``.
        max_requests: Requests answered before every further one gets a 503 and the server stops.
        lifetime_s: The server shuts down after this many seconds even if still in use.
    """

    def __init__(self, script: Script, *, max_requests: int = 200, lifetime_s: float = 60.0) -> None:
        self.script = script
        self.max_requests = max_requests
        self.lifetime_s = lifetime_s
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._closed = False
        self._closing = False

    # -- script --------------------------------------------------------------------------
    def _next(self, body: dict) -> Reply | None:
        with self._lock:
            index = len(self.requests)
            if index >= self.max_requests:
                return None
            self.requests.append(body)
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
        with self._lock:
            return len(self.requests)

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server._next(body)
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
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.reasoning is not None:
                    message["reasoning_content"] = reply.reasoning
                payload = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "unknown"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
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
                self._send(200, payload, reply.headers)

            def _send(self, status: int, payload: dict, headers: Sequence[tuple[str, str]] = ()) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers:
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
