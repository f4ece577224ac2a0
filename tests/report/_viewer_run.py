"""Synthetic run directories for the viewer tests and its size measurement.

Each trial is a :class:`etc_fast.protocol.TrialRecord` shaped like the ones the protocol stores
(bootstrap probes, a committee turn with its selection, an interpreter turn, a draft, synthesis),
on a real task's domain and with the task's true law as the measured values, and optionally a chat
of LLM-sized messages with per-call records. Nothing is run: no policy, no sandbox, no judge. The
run goes through the real store (``RunStore.append``), so trials.jsonl, the transcripts and
trials.parquet are exactly what a run writes, and the report is the real ``write_report``.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from pathlib import Path

import numpy as np

from etc_fast.protocol import CONFIGURATIONS, TrialSpec
from etc_fast.report import write_report
from etc_fast.runner._store import RunStore
from etc_fast.tasks import get_task

HOSTILE_LAW = 'def discovered_law(x):\n    return "</script><img src=x onerror=alert(1)><script>alert(2)</script>"\n'
HOSTILE_REASON = "judge says </script><img src=x onerror=\"window.__pwned=1\"> & <b>bold</b> \u2028 end"


@functools.lru_cache(maxsize=1)
def _corpus() -> str:
    root = Path(__file__).resolve().parents[2]
    parts = [q.read_text(encoding="utf-8") for q in sorted((root / "docs").glob("*.md")) + sorted((root / "etc_fast" / "protocol").glob("*.py"))]
    return " ".join(" ".join(parts).split(" "))


def _chat(rng: np.random.Generator, n_calls: int, chars: int, hostile: bool) -> list[dict]:
    # text about as compressible as a model's: windows of the project's own prose and code at
    # random offsets, with numbers in full precision mixed in
    corpus = _corpus()

    def text(n: int) -> str:
        at = int(rng.integers(0, max(1, len(corpus) - n)))
        words = corpus[at: at + n].split(" ")
        for k in rng.integers(0, len(words), size=max(1, len(words) // 12)):
            words[int(k)] = f"{rng.normal() * 10.0 ** int(rng.integers(-4, 5)):.9e}"
        return " ".join(words)

    out: list[dict] = [{"event": "begin", "phase": "explore", "seed": 7}, {"role": "system", "content": "You are a careful scientist. " * 40}]
    for i in range(n_calls):
        user = text(chars)
        reply = text(chars // 2)
        if hostile and i == 0:
            reply = "</script><script>window.__pwned=2</script><img src=x onerror=\"window.__pwned=3\">" + reply
        out.append({"role": "user", "content": user})
        out.append({"role": "assistant", "content": reply, "call": {
            "model": "gpt-4.1-mini-2025-04-14", "finish_reason": "stop" if i % 7 else "length",
            "prompt_tokens": 900 + 40 * i, "completion_tokens": 120 + i, "latency_s": round(1.5 + 0.1 * i, 3),
            "attempts": 1 + (i % 3 == 2), "from_cache": i % 4 == 0, "key": f"{i:064x}"}})
    return out


def make_record(config: str, task_name: str, *, difficulty: str = "easy", rollout: int = 0, model: str = "symbolic",
                chat_calls: int = 0, chat_chars: int = 0, hostile: bool = False, credited: bool | None = None) -> dict:
    """One stored-shape trial record (``TrialRecord.to_dict()``)."""
    cfg = CONFIGURATIONS[config]
    spec = TrialSpec(model=model, config=cfg, task=task_name, difficulty=difficulty, rollout=rollout)
    task = get_task(task_name, difficulty, "v0")
    seed = zlib.crc32(f"{config}|{task_name}|{difficulty}|{rollout}".encode())
    rng = np.random.default_rng(seed)
    d = task.d
    boot_u = np.full((d + 1, d), 0.5)
    for j in range(d):
        boot_u[j + 1, j] = 0.6
    boot_x = task.unit_to_inputs(boot_u)
    boot_y = task.truth(boot_x)
    events: list[dict] = [{"event": "bootstrap", "phase": "bootstrap", "X": boot_x.tolist(), "y": boot_y.tolist(),
                           "measured": len(boot_y), "n_probes": len(boot_y), "truncated_by_budget": False}]
    X, y, src = boot_x.tolist(), boot_y.tolist(), ["bootstrap"] * len(boot_y)
    hyp = [task.law_expression or "x", "2*x", "x**2"]
    new_u = rng.random((4, d))
    new_x = task.unit_to_inputs(new_u)
    new_y = task.truth(new_x)
    obs0 = {"allowed": ["analysis", "committee", "draft"], "diagnostics_index": 0, "draft_shown": False, "feedback": None,
            "feedback_kind": None, "measurements_left": None, "measurements_used": len(X), "n_observations": len(X),
            "new_rows": len(X), "turns_left": 7}
    events.append({"phase": "explore", "turn": 0, "observation": obs0, "action": {"kind": "analysis", "raw": "look", "code": "print(X.shape)\nprint(y.min(), y.max())"},
                   "analysis": {"ok": True, "stdout": f"({len(X)}, {d})\n{min(y)} {max(y)}\n", "error": None, "truncated": False},
                   "feedback": "Python execution succeeded.", "feedback_kind": "analysis"})
    events.append({"phase": "explore", "turn": 1, "observation": dict(obs0, turns_left=6, feedback="Python execution succeeded."),
                   "action": {"kind": "committee", "raw": "committee of 3", "hypotheses": hyp},
                   "committee": {"dropped": [], "parsed": [{"text": h, "canonical": h, "ok": True, "nuisance": []} for h in hyp]},
                   "selection": {"chosen": [{"index": int(i), "raw": 0.1, "regularized": 0.5, "finite_fraction": 1.0, "u": u.tolist()} for i, u in zip(range(4), new_u)],
                                 "hypotheses": [{"position": k, "text": h, "parsed": h, "fit_ok": True, "fit_error": 1e-3 * k, "a": 1.0, "b": 0.0,
                                                 "kept": k != 2, "n_pairs": 4, "parse_error": None} for k, h in enumerate(hyp)],
                                 "error": None, "fallback_used": False},
                   "selection_seed": 12345, "measured": {"X": new_x.tolist(), "y": new_y.tolist(), "indices": [0, 1, 2, 3]},
                   "outcome": "measured 4 point(s)", "feedback": "The planner selected and measured 4 new point(s).", "feedback_kind": "selection"})
    X += new_x.tolist()
    y += new_y.tolist()
    src += ["planner"] * 4
    final = HOSTILE_LAW if hostile else f"{task.signature}\n    import numpy as np\n    return {task.law_expression or '0'}\n"
    events.append({"phase": "explore", "turn": 2, "observation": dict(obs0, n_observations=len(X), turns_left=5),
                   "action": {"kind": "draft", "raw": "draft", "source": final}, "outcome": "draft stored; exploration ends"})
    events.append({"event": "exploration_end", "phase": "explore", "measurements": len(X), "reason": "draft", "policy_begin_error": None})
    events.append({"phase": "synthesis", "turn": 0, "observation": dict(obs0, allowed=["analysis", "final"], draft_shown=True),
                   "action": {"kind": "final", "raw": "final", "source": final}, "outcome": "valid synthesis law"})
    events.append({"event": "submission", "phase": "synthesis", "origin": "synthesis", "reason": "the synthesis law is valid"})
    ok = credited if credited is not None else bool(rng.random() < 0.7)
    rmsle = float(10 ** rng.uniform(-6, 0)) if ok else float(rng.choice([0.8, 2.5, float("nan")]))
    chat = _chat(rng, chat_calls, chat_chars, hostile) if chat_calls else []
    calls = [m["call"] for m in chat if "call" in m]
    return {
        "spec": spec.to_dict(), "trial_id": spec.trial_id, "status": "completed", "measurements": len(X),
        "observations": {"X": X, "y": y, "source": src}, "events": events,
        "diagnostics": [{"phase": "explore", "text": "Automatic diagnostics (advisory):\n  exponents ..."}],
        "synthesis_input": {"X": X, "y": y, "draft": final, "allowed": ["analysis", "final"]},
        "draft": final, "final_source": final, "submission_origin": "synthesis",
        "evaluation": {"valid": True, "rmsle": rmsle, "complete": ok, "n_finite_target": 5000, "n_finite_pred": 5000 if ok else 4000,
                       "sign_disagreements": 0, "q": {"0.01": ok and rmsle <= 0.01, "0.1": ok and rmsle <= 0.1, "1": ok and rmsle <= 1}, "error": None},
        "judge": {"judge": "structural", "credited": ok, "reason": HOSTILE_REASON if hostile else ("same law" if ok else "different law: exponent 2 vs 1.5"), "status": "ok"},
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls), "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "llm_calls": len(calls), "calls_cached": sum(c["from_cache"] for c in calls),
        "prompt_tokens_cached": sum(c["prompt_tokens"] for c in calls if c["from_cache"]),
        "completion_tokens_cached": sum(c["completion_tokens"] for c in calls if c["from_cache"]),
        "wall_s": 1.0, "error": None, "error_kind": None, "chat": chat, "versions": {"etc_fast": "test"},
    }


def make_run(root: Path, *, configs=("baseline_n", "variance_c"), tasks=("m0_gravity", "m4_snell_law"), difficulties=("easy",),
             rollouts: int = 1, model: str = "symbolic", chat_calls: int = 0, chat_chars: int = 0, hostile: int = 0,
             report: bool = True, n_draws: int = 200) -> Path:
    """A run directory at ``root``: trials.jsonl, transcripts, trials.parquet and (``report``) the report.
    ``hostile``: that many trials (the first ones) carry a hostile law, judge reason and reply."""
    root.mkdir(parents=True, exist_ok=True)
    with RunStore(root) as store:
        for n, (cfg, task, diff, r) in enumerate(itertools.product(configs, tasks, difficulties, range(rollouts))):
            store.append(make_record(cfg, task, difficulty=diff, rollout=r, model=model, chat_calls=chat_calls,
                                     chat_chars=chat_chars, hostile=n < hostile, credited=(n % 3 != 1)))
        store.export_parquet()
    if report:
        write_report(root, n_draws=n_draws)
    return root
