"""The cost estimate of ``--dry-run`` against what a run then used, on the scripted stand-in server.

``python -m tests.llm.estimate_study [OUT_DIR]`` runs two studies and prints, per study, the estimate
(made before the run, as ``--dry-run`` makes it) beside the usage the server reported:

* ``baselines``: baseline_n and baseline_c on m0_gravity, 4 rollouts, a model that asks for 2 experiments
  and then submits (3 calls a trial; the protocol allows 11);
* ``mixed``: baseline_n, variance_n and variance_c on m0_gravity and m9_hooke_law, 2 rollouts, a model
  that runs 5 rounds before it submits.

The server counts tokens its own way (a word-and-punctuation split of every message, 1.3 tokens per
word: a rough stand-in for a BPE tokenizer), so the estimate's ``chars/4`` is compared with a different
count, as it would be with a real server.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from tests.llm._server import ChatServer, Reply, model_like

_WORD = re.compile(r"\w+|[^\w\s]")


def server_tokens(text: str) -> int:
    """The stand-in server's token count of ``text``."""
    return math.ceil(1.3 * len(_WORD.findall(text)))


def counting(inner: Any) -> Any:
    """``inner``'s replies with usage counted from the request and the reply text."""
    def answer(body: dict, index: int) -> Reply:
        reply = inner(body, index)
        prompt = sum(server_tokens(str(m.get("content") or "")) + 4 for m in body.get("messages") or [])
        return dataclasses.replace(reply, prompt_tokens=prompt, completion_tokens=server_tokens(reply.content or ""))
    return answer


STUDIES: dict[str, dict[str, Any]] = {
    "baselines": {"experiments": 2, "configurations": ["baseline_n", "baseline_c"], "tasks": ["m0_gravity"], "rollouts": 4},
    "mixed": {"experiments": 5, "configurations": ["baseline_n", "variance_n", "variance_c"],
              "tasks": ["m0_gravity", "m9_hooke_law"], "rollouts": 2},
}


def write_config(root: Path, base_url: str, study: dict[str, Any], *, max_tokens: int = 200) -> Path:
    cfg = {
        "name": "estimate-study", "workers": 4, "judge": "structural",
        "llm": {"base_url": base_url, "timeout_s": 20, "max_retries": 2, "max_tokens": max_tokens,
                "cache": {"path": str(root / "cache.db"), "mode": "use"},
                "prices": {"test-model": {"prompt": 0.4, "completion": 1.6}}},
        "grids": [{"model": "test-model", "configurations": study["configurations"], "tasks": study["tasks"],
                   "rollouts": study["rollouts"]}],
    }
    path = root / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def run_study(name: str, root: Path) -> dict[str, Any]:
    """Run study ``name`` under ``root``; returns the estimate, the actual usage and the errors."""
    from etc_fast.run import main
    from etc_fast.runner import read_trials

    study = STUDIES[name]
    root.mkdir(parents=True, exist_ok=True)
    with ChatServer(counting(model_like(study["experiments"])), models=["test-model"], max_requests=5000,
                    lifetime_s=1800) as srv:
        code = main([str(write_config(root, srv.base_url, study)), "--out", str(root / "out")])
    estimate = json.loads((root / "out" / "estimate.json").read_text())
    est = estimate["models"][0]
    rows = [e["summary"] for e in read_trials(root / "out" / "trials.jsonl")]
    actual = {k: sum(int(r[k]) for r in rows) for k in ("llm_calls", "prompt_tokens", "completion_tokens")}
    # The estimate's prompt tokens of the calls each trial really made (its first n calls): the token
    # count's error without the call count's.
    matched = sum(sum(estimate["shapes"][estimate["trial_shapes"][r["trial_id"]]][: int(r["llm_calls"])]) for r in rows)

    def err(e: float, a: float) -> float:
        return (e - a) / a if a else float("nan")

    return {
        "study": name, "exit": code, "trials": len(rows),
        "calls": (est["calls"], actual["llm_calls"], err(est["calls"], actual["llm_calls"])),
        "prompt_tokens": (est["prompt_tokens"], actual["prompt_tokens"], err(est["prompt_tokens"], actual["prompt_tokens"])),
        "completion_tokens": (est["completion_tokens"], actual["completion_tokens"],
                              err(est["completion_tokens"], actual["completion_tokens"])),
        "calls_min": est["calls_min"], "prompt_tokens_min": est["prompt_tokens_min"],
        "calls_every_turn": est.get("calls_every_turn"), "prompt_tokens_every_turn": est.get("prompt_tokens_every_turn"),
        "matched_prompt_tokens": (matched, actual["prompt_tokens"], err(matched, actual["prompt_tokens"])),
        "failed": sum(1 for r in rows if r["status"] == "failed"),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="estimate-study-"))
    for name in STUDIES:
        r = run_study(name, root / name)
        print(f"{name}: exit {r['exit']}, {r['trials']} trials ({r['failed']} failed)")
        print(f"  calls: estimate at least {r['calls_min']:,}, every turn {r['calls_every_turn']:,}, at most {r['calls'][0]:,}; "
              f"actual {r['calls'][1]:,}")
        print(f"  prompt tokens: estimate {r['prompt_tokens_min']:,} (fewest calls), {r['prompt_tokens_every_turn']:,} (every turn), "
              f"{r['prompt_tokens'][0]:,} (at the caps); actual {r['prompt_tokens'][1]:,}")
        e, a, rel = r["matched_prompt_tokens"]
        print(f"  prompt tokens of the calls made: estimate {e:,}, actual {a:,} ({rel:+.0%})")
        e, a, rel = r["completion_tokens"]
        print(f"  completion tokens: estimate <= {e:,}, actual {a:,} ({rel:+.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
