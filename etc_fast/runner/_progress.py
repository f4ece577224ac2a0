"""Progress display: a redrawn one-line bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from etc_fast.runner._ledger import RunLedger

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """``45s``, ``3m12s``, ``2h05m``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def _rmsle_text(v: Any) -> str:
    if v is None:
        return "-"
    f = float(v)
    return f"{f:.3g}" if math.isfinite(f) else str(f)  # three significant digits: 1e-15 keeps its magnitude


class Progress:
    """Reports finished trials.

    Args:
        total: Trials in the whole grid.
        done: Trials already finished before this session (resume).
        todo: Trials this session will run.
        stream: Where to write (default stderr).
        tty: Force terminal mode on/off (default: ``stream.isatty()``).
        show_model: Include the model in plain lines (runs with several models).
        ledger: The run's LLM call totals (calls, paid, reused, tokens, money), shown on each
            line and on the bar; ``None`` (an offline run) shows nothing of the kind.
    """

    _BAR = 24

    def __init__(
        self,
        total: int,
        *,
        done: int = 0,
        todo: int | None = None,
        stream: TextIO | None = None,
        tty: bool | None = None,
        show_model: bool = False,
        ledger: RunLedger | None = None,
    ) -> None:
        self.total, self.done = total, done
        self.todo = total - done if todo is None else todo
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(tty) if tty is not None else bool(getattr(self.stream, "isatty", lambda: False)())
        self.show_model = show_model
        self.ledger = ledger
        self.ran = 0
        self.failed = 0
        self.t0 = time.monotonic()
        self._width = 0

    def eta(self) -> float:
        """Seconds left at this session's rate (``nan`` before the first trial)."""
        if self.ran == 0:
            return math.nan
        return (time.monotonic() - self.t0) / self.ran * max(0, self.todo - self.ran)

    def update(self, summary: Mapping[str, Any]) -> None:
        """Report one finished trial (its results-table row)."""
        self.ran += 1
        self.done += 1
        failed = summary.get("status") == "failed"
        self.failed += failed
        if self.ledger is not None:
            self.ledger.note(summary)
        if self.tty:
            self._draw()
        else:
            self.stream.write(self.line(summary) + "\n")
            self.stream.flush()

    def line(self, summary: Mapping[str, Any]) -> str:
        """The plain-text line for one finished trial."""
        status = summary.get("status")
        if status == "failed":
            err = str(summary.get("error") or "")
            kind = summary.get("error_kind")
            state = "FAILED" + (f" {kind}" if kind else "") + (f" ({err[:80]})" if err else "")
        else:
            state = "ok" if status == "completed" else str(status)
            if summary.get("credited"):
                state += " credited"
            if summary.get("judge_status") == "error":
                state += " JUDGE UNAVAILABLE"
        parts = [f"[{self.done}/{self.total}]"]
        if self.show_model:
            parts.append(str(summary.get("model")))
        from etc_fast.report import task_label
        from etc_fast.tasks import is_custom_task

        task = str(summary.get("task"))
        custom = is_custom_task(task)
        parts.append(task_label(task))  # a custom task by the name its file declares
        if summary.get("system") not in (None, "vanilla_equation"):  # a simulated system (vanilla lines unchanged)
            parts.append(str(summary.get("system")))
        parts += [
            "custom" if custom else str(summary.get("difficulty")),
            str(summary.get("configuration")),
            f"r{summary.get('rollout')}",
            state,
        ]
        if status != "failed":
            parts += [f"rmsle={_rmsle_text(summary.get('rmsle'))}", f"meas={summary.get('measurements')}"]
        if self.ledger is not None:
            parts.append(self.ledger.text())
        parts.append(f"(ETA {format_duration(self.eta())})")
        return " ".join(parts)

    def _draw(self) -> None:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self._BAR))
        bar = "#" * fill + "." * (self._BAR - fill)
        text = (
            f"\r[{bar}] {self.done}/{self.total} failed {self.failed} "
            f"elapsed {format_duration(time.monotonic() - self.t0)} ETA {format_duration(self.eta())}"
        )
        if self.ledger is not None:
            text += " " + self.ledger.text()
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write(text + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        """Finish the bar line (terminal mode)."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
