"""SIGTERM handled as Ctrl-C by the command-line tools."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["interrupt_on_sigterm"]


@contextlib.contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """Inside the block SIGTERM acts like Ctrl-C (``KeyboardInterrupt``), so a terminated run
    stops its workers and closes its files the same way (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
