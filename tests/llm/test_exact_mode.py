"""Exact mode (``llm.prompts: newtonbench``): the messages etc_fast sends equal, byte for byte, the
messages the agent code of a NewtonBench-shaped checkout sends for the same replies.

``tests/llm/nb_fixture`` has NewtonBench's layout and loop structure with placeholder texts (none
of NewtonBench's). Each test runs the fixture's own agent loop with a scripted model, records every
message list it sends, then plays the same script through etc_fast's protocol and LLM policy in
exact mode against the stand-in server, and compares the request bodies.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from etc_fast.evaluate._llm_judge import LLMJudge
from etc_fast.llm import LLMClient
from etc_fast.llm._newtonbench import NewtonBenchCheckoutError, NewtonBenchTexts
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from etc_fast.tasks import get_task, task_view
from tests.llm._server import ok
from tests.llm.conftest import fast_settings

FIXTURE = Path(__file__).parent / "nb_fixture"
TASK = get_task("m0_gravity", "easy")
#: The fixture always; a real NewtonBench checkout too when NEWTONBENCH_PATH names one (its agent
#: code then runs here, with its API client replaced by the script).
ROOTS = [pytest.param(FIXTURE, id="fixture")] + (
    [pytest.param(Path(os.environ["NEWTONBENCH_PATH"]), id="newtonbench")] if os.environ.get("NEWTONBENCH_PATH") else
    [pytest.param(None, id="newtonbench", marks=pytest.mark.skip(
        reason="NEWTONBENCH_PATH is not set: set it to a NewtonBench checkout to compare with its real agent code"))]
)
_PACKAGES = ("utils", "modules", "dotenv")


@contextlib.contextmanager
def fixture_imports(root: Path = FIXTURE):
    """Import ``root``'s ``utils`` and ``modules`` packages, leaving ``sys.modules`` as it was."""
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in _PACKAGES}
    for k in saved:
        del sys.modules[k]
    if importlib.util.find_spec("dotenv") is None:  # NewtonBench's client loads .env files
        sys.modules["dotenv"] = types.SimpleNamespace(load_dotenv=lambda *a, **k: None)  # type: ignore[assignment]
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k.split(".")[0] in _PACKAGES]:
            del sys.modules[k]
        sys.modules.update(saved)


class Scripted:
    """The fixture's ``call_llm_api``: records each message list and answers from a script."""

    def __init__(self, replies):
        self.replies, self.sent = list(replies), []

    def __call__(self, messages, model_name=None, trial_info=None, temperature=0.4):
        self.sent.append(copy.deepcopy(messages))
        return self.replies[len(self.sent) - 1], None, 7


def fixture_module(imp):
    prompts = imp("modules.m0_gravity.prompts")

    def run(mass1, mass2, distance, noise_level, difficulty, system, law_version):
        return float(TASK.truth(np.array([[mass1, mass2, distance]], dtype=np.float64))[0])

    return types.SimpleNamespace(__name__="modules.m0_gravity", get_task_prompt=prompts.get_task_prompt,
                                 FUNCTION_SIGNATURE=prompts.FUNCTION_SIGNATURE, run_experiment_for_module=run)


def play_etc_fast(serve, replies, config, root=FIXTURE):
    srv = serve([ok(r) for r in replies])
    client = LLMClient(fast_settings(srv.base_url, cache_mode="off"), sleep=lambda s: None, environ={})
    policy = LLMPolicy(client=client, prompts="newtonbench", newtonbench_path=str(root))
    record = run_trial(TrialSpec(model="test-model", config=config, task="m0_gravity"), policy)
    return srv, record


VANILLA_REPLIES = [
    'I will measure.\n<run_experiment>\n[{"mass1": 1, "mass2": 2, "distance": 3}, {"mass1": 10, "mass2": 1, "distance": 2}]\n</run_experiment>',
    '<run_experiment>\n```json\n[{"mass1": 2, "mass2": 2, "distance": 2}]\n```\n</run_experiment>',  # a fence: invalid
    '<run_experiment>{"mass1": 5, "mass2": 5, "distance": 0.5}</run_experiment>',  # one object
    "<final_law>no function here</final_law> so nothing is submitted",
    "<final_law>\n```python\ndef discovered_law(mass1, mass2, distance):\n    return mass1\n```\n</final_law>",  # forced
]


@pytest.mark.parametrize("root", ROOTS)
def test_vanilla_messages_are_byte_identical(serve, root):
    with fixture_imports(root) as imp:
        agent = imp("utils.vanilla_agent")
        scripted = Scripted(VANILLA_REPLIES)
        agent.call_llm_api = scripted
        result = agent.conduct_exploration(fixture_module(imp), "test-model", 0.0, max_turns=4)
    srv, record = play_etc_fast(serve, VANILLA_REPLIES, get_configuration("baseline_n", name="bn4", baseline_rounds=4), root)
    sent = [r["messages"] for r in srv.requests]
    assert len(sent) == len(scripted.sent) == 5
    for ours, theirs in zip(sent, scripted.sent, strict=True):
        assert ours == theirs
    assert result["status"] == record.status == "max_turns_reached"
    # The law as NewtonBench extracts it: the fence line stays in (and the submission then fails).
    assert record.final_source == result["submitted_law"] and record.final_source.endswith("```")
    if root == FIXTURE:
        assert sent[-1][-1]["content"].endswith("\n\nFIXTURE: rounds are over, send the law.")


CODE_REPLIES = [
    "<python>\nprint(2 + 3)\n</python>",  # turn 1: runs
    "<python>\nimport os\nprint(1)\n</python>",  # turn 2: fails validation, asked again in the same turn
    "<python>\nprint(undefined_name)\n</python>",  # turn 2: fails when run
    '<run_experiment>[{"mass1": 1, "mass2": 2, "distance": 3}, {"mass1": 2, "mass2": 2, "distance": 2}]</run_experiment>',
    '<run_experiment>{"mass1": 4, "mass2": 1, "distance": 2}</run_experiment>',  # one object: one value
    "I am still thinking.",  # no action: the one-action reminder
    "<run_experiment>[{mass1: 1}]</run_experiment>",  # unreadable: no reply at all
    '<run_experiment>[{"mass1": 1}]</run_experiment>',  # missing keys: the run raises, no reply
    '<python>print(1)</python> then <run_experiment>{"mass1": 1, "mass2": 1, "distance": 1}</run_experiment>',
    "<run_experiment>[]</run_experiment>",  # empty: no reply
    '<run_experiment>{"mass1": 0, "mass2": 1, "distance": 1}</run_experiment>',  # value 0.0: no reply
    "<final_law>\ndef discovered_law(mass1, mass2, distance):\n    return 6.674e-05 * mass1 * mass2 / distance ** 1.5\n</final_law>",
]


@pytest.mark.parametrize("root", ROOTS)
def test_code_assisted_messages_are_byte_identical(serve, root, monkeypatch):
    with fixture_imports(root) as imp:
        agent = imp("utils.code_assisted_agent")
        monkeypatch.setattr(agent, "time", types.SimpleNamespace(sleep=lambda s: None), raising=False)
        scripted = Scripted(CODE_REPLIES)
        agent.call_llm_api = scripted
        result = agent.conduct_code_assisted_exploration(fixture_module(imp), "test-model", 0.0, "easy", "vanilla_equation")
    srv, record = play_etc_fast(serve, CODE_REPLIES, get_configuration("baseline_c"), root)
    sent = [r["messages"] for r in srv.requests]
    assert len(sent) == len(scripted.sent) == len(CODE_REPLIES)
    for i, (ours, theirs) in enumerate(zip(sent, scripted.sent, strict=True)):
        assert ours == theirs, f"call {i + 1} differs"
    assert result["status"] == record.status == "max_turns_reached"
    assert record.final_source == result["submitted_law"]
    texts = [m["content"] for m in sent[-1]]
    if root != FIXTURE:
        return
    assert any("FIXTURE failed fixture_error: name 'undefined_name' is not defined" in t for t in texts)
    assert any(t.startswith("FIXTURE invalid: FIXTURE blocked import\\s+os") for t in texts)


@pytest.mark.parametrize("root", ROOTS)
def test_judge_messages_are_byte_identical(serve, root):
    source = "def discovered_law(mass1, mass2, distance):\n    C = 2.0\n    return C * mass1 * mass2 / distance ** 1.5"
    for model in ("gpt41", "nemotron-ultra"):
        with fixture_imports(root) as imp:
            ev = imp("modules.common.evaluation")
            scripted = Scripted(["Answer: YES"])
            ev.call_llm_api = scripted
            assert ev.llm_symbolic_equivalence_judge(source, TASK.ground_truth_text, imp("modules.m0_gravity.prompts").PARAM_DESCRIPTION,
                                                     judge_model_name=model)
        srv = serve([ok("Answer: YES")])
        client = LLMClient(fast_settings(srv.base_url, model=model, cache_mode="off"), sleep=lambda s: None, environ={})
        judge = LLMJudge(client=client, prompts="newtonbench", newtonbench_path=str(root))
        assert judge.judge(source, TASK).credited
        assert srv.requests[0]["messages"] == scripted.sent[0]


def test_identity_and_errors(tmp_path, monkeypatch):
    texts = NewtonBenchTexts(str(FIXTURE))
    texts.check_tasks(["m0_gravity"])
    ident = texts.identity()
    assert ident["prompts"] == "newtonbench" and "utils/vanilla_agent.py" in ident["newtonbench_files"]
    assert "modules/m0_gravity/prompts.py" in ident["newtonbench_files"] and texts.version().startswith("no-git+sha256:")
    monkeypatch.setenv("NEWTONBENCH_PATH", str(FIXTURE))
    assert NewtonBenchTexts().root == FIXTURE.resolve()
    monkeypatch.delenv("NEWTONBENCH_PATH")
    with pytest.raises(NewtonBenchCheckoutError, match="NEWTONBENCH_PATH"):
        NewtonBenchTexts(None, environ={})
    with pytest.raises(NewtonBenchCheckoutError, match="not a directory"):
        NewtonBenchTexts(str(tmp_path / "absent"))
    with pytest.raises(NewtonBenchCheckoutError, match="has no utils/vanilla_agent.py"):
        NewtonBenchTexts(str(tmp_path))
    with pytest.raises(NewtonBenchCheckoutError, match="not one"):
        texts.check_tasks(["configs/tasks/x.yaml"])
    with pytest.raises(NewtonBenchCheckoutError, match="has no modules/m4_snell_law/prompts.py"):
        texts.check_tasks(["m4_snell_law"])
    # A commit is read from .git without running git.
    import shutil

    copy_root = tmp_path / "nb"
    shutil.copytree(FIXTURE, copy_root)
    (copy_root / ".git" / "refs" / "heads").mkdir(parents=True)
    (copy_root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (copy_root / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    assert NewtonBenchTexts(str(copy_root)).version().startswith("a" * 40 + "+sha256:")
    # An incompatible checkout: a message the agent must have is gone.
    agent = copy_root / "utils" / "vanilla_agent.py"
    agent.write_text(agent.read_text().replace("final_prompt = ", "final_words = "))
    with pytest.raises(NewtonBenchCheckoutError, match="incompatible: utils/vanilla_agent.py has no assignment to final_prompt"):
        NewtonBenchTexts(str(copy_root))


def test_wrong_signature_is_incompatible(tmp_path):
    import shutil

    root = tmp_path / "nb"
    shutil.copytree(FIXTURE, root)
    p = root / "modules" / "m0_gravity" / "prompts.py"
    p.write_text(p.read_text().replace("def discovered_law(mass1, mass2, distance):", "def discovered_law(m1, m2, r):"))
    with pytest.raises(NewtonBenchCheckoutError, match="signature"):
        NewtonBenchTexts(str(root)).task_prompt(task_view(TASK), noisy=False, interpreter=False)


def _cfg(**llm):
    return {"name": "x", "judge": "llm", "llm": {"base_url": "http://127.0.0.1:9/v1", **llm},
            "grids": [{"model": "test-model", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"]}]}


def test_config_loads_the_checkout_or_exits_2(tmp_path, monkeypatch, capsys):
    import yaml

    from etc_fast.run import main
    from etc_fast.runner import ConfigError, RunStore, parse_config

    monkeypatch.delenv("NEWTONBENCH_PATH", raising=False)
    with pytest.raises(ConfigError, match="llm.newtonbench_path: .*NEWTONBENCH_PATH"):
        parse_config(_cfg(prompts="newtonbench"))
    cfg = parse_config(_cfg(prompts="newtonbench", newtonbench_path=str(FIXTURE)))
    assert cfg.llm.newtonbench_path == str(FIXTURE.resolve()) and cfg.llm.newtonbench_version.startswith("no-git+sha256:")
    ident = cfg.identity()["llm"]
    assert ident["prompts"] == "newtonbench" and ident["newtonbench_version"] == cfg.llm.newtonbench_version
    assert cfg.policy_options("test-model")["prompts"] == "newtonbench" and cfg.judge_kwargs()["newtonbench_path"]
    # The run records the checkout in versions.json.
    with RunStore.open(cfg, tmp_path / "run") as store:
        pass
    versions = json.loads((tmp_path / "run" / "versions.json").read_text())
    assert versions["prompts"]["newtonbench_files"]["utils/vanilla_agent.py"] == NewtonBenchTexts(str(FIXTURE)).identity()["newtonbench_files"]["utils/vanilla_agent.py"]
    assert store is not None
    # A checkout lacking the task's module: one line, exit 2.
    bad = dict(_cfg(prompts="newtonbench", newtonbench_path=str(FIXTURE)))
    bad["grids"] = [{"model": "test-model", "configurations": ["baseline_c"], "tasks": ["m4_snell_law"]}]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    assert main([str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "has no modules/m4_snell_law/prompts.py" in err and len(err.splitlines()) == 1


def test_identity_marks_llm_baselines_only():
    from etc_fast.runner import parse_config

    plain = parse_config(_cfg())
    assert plain.identity()["llm"]["baselines"] == "newtonbench" and "prompts" not in plain.identity()["llm"]
    planners = parse_config({**_cfg(), "grids": [{"model": "test-model", "configurations": ["variance_n"], "tasks": ["m0_gravity"]}]})
    assert "baselines" not in planners.identity()["llm"]
    offline = parse_config({"name": "x", "grids": [{"model": "symbolic", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]})
    assert "llm" not in offline.identity()
    assert plain.identity()["llm"]["judge_prompt"] == "newtonbench"  # judge: llm
    structural = parse_config({**_cfg(), "judge": "structural"})
    assert "judge_prompt" not in structural.identity()["llm"]


LAW = "<final_law>\ndef discovered_law(mass1, mass2, distance):\n    return mass1 * mass2 / distance ** 2\n</final_law>"



def newtonbench_opening(imp, system: str, interpreter: bool, monkeypatch) -> list[dict]:
    """The first message list NewtonBench's own agent loop sends on a ``system`` trial of m0_gravity
    (the model's first reply submits a law, so nothing is simulated)."""
    scripted = Scripted([LAW])
    if interpreter:
        agent = imp("utils.code_assisted_agent")
        monkeypatch.setattr(agent, "time", types.SimpleNamespace(sleep=lambda s: None), raising=False)
        agent.call_llm_api = scripted
        agent.conduct_code_assisted_exploration(fixture_module(imp), "test-model", 0.0, "easy", system)
    else:
        agent = imp("utils.vanilla_agent")
        agent.call_llm_api = scripted
        agent.conduct_exploration(fixture_module(imp), "test-model", 0.0, system=system)
    assert len(scripted.sent) == 1
    return scripted.sent[0]


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("system", ["simple_system", "complex_system"])
@pytest.mark.parametrize("configuration", ["baseline_n", "baseline_c"])
def test_system_baselines_open_with_newtonbench_bytes(serve, root, system, configuration, monkeypatch):
    interpreter = configuration == "baseline_c"
    with fixture_imports(root) as imp:
        expected = newtonbench_opening(imp, system, interpreter, monkeypatch)
    srv = serve([ok(LAW)])
    client = LLMClient(fast_settings(srv.base_url, cache_mode="off"), sleep=lambda s: None, environ={})
    policy = LLMPolicy(client=client, prompts="newtonbench", newtonbench_path=str(root))
    spec = TrialSpec(model="test-model", config=get_configuration(configuration), task="m0_gravity", system=system)
    record = run_trial(spec, policy)
    assert record.status == "completed", record.error
    sent = srv.requests[0]["messages"]
    assert sent == expected, "the system and task messages are NewtonBench's, byte for byte"
    if root == FIXTURE:
        assert ("FIXTURE line apparatus" if system == "simple_system" else "FIXTURE orbit apparatus") in sent[1]["content"]
        if interpreter:
            assert f"rounds on {system}." in sent[0]["content"]


def test_a_module_without_the_system_text_is_incompatible(tmp_path):
    import shutil

    root = tmp_path / "nb"
    shutil.copytree(FIXTURE, root)
    p = root / "modules" / "m0_gravity" / "prompts.py"
    p.write_text(p.read_text().replace("elif system == ExperimentSystem.COMPLEX_SYSTEM:", "elif False:"))
    texts = NewtonBenchTexts(str(root))
    texts.check_system("m0_gravity", "simple_system")
    with pytest.raises(NewtonBenchCheckoutError, match="get_task_prompt has no complex_system text"):
        texts.check_system("m0_gravity", "complex_system")
