"""The trusted side: clipped, escaped text; required isolation; layers in versions.json."""

from __future__ import annotations

import pytest

from etc_fast.sandbox import LAYERS, IsolationError, _probe, require_isolation
from etc_fast.sandbox._supervisor import ENV_REQUIRE, clean_text


def test_clean_text_clips_and_escapes():
    t = clean_text("ok\x1b[2K\rvalid True\x07\n\tend" + "x" * 5000, 100)
    assert "\x1b" not in t and "\r" not in t and "\x07" not in t
    assert "\\x1b" in t and "\n\t" in t
    assert len(t) < 200 and "more characters" in t
    assert "\n" not in clean_text("a\nb", newlines=False)
    assert clean_text("\u00e9\u4e2d") == "\u00e9\u4e2d"  # printable text is kept


def test_require_isolation_refuses_missing_layers(monkeypatch):
    monkeypatch.setenv(ENV_REQUIRE, "0")  # restored afterwards: require_isolation() sets it for the process
    monkeypatch.setattr(_probe, "_cache", {n: (n != "landlock_fs") for n in LAYERS})
    with pytest.raises(IsolationError, match="landlock_fs"):
        require_isolation()
    monkeypatch.setattr(_probe, "_cache", {n: True for n in LAYERS})
    assert require_isolation()["identity"] is True


def test_config_key_and_preflight(monkeypatch, tmp_path):
    from etc_fast.runner import ConfigError, PreflightError, parse_config, run_config

    doc = {"name": "t", "out": str(tmp_path / "run"), "sandbox": {"require_isolation": True},
           "grids": [{"model": "scripted", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]}
    cfg = parse_config(doc)
    assert cfg.require_isolation and cfg.to_dict()["sandbox"] == {"require_isolation": True}
    with pytest.raises(ConfigError, match="sandbox.require_isolation"):
        parse_config({**doc, "sandbox": {"require_isolation": "yes"}})
    with pytest.raises(ConfigError, match="sandbox"):
        parse_config({**doc, "sandbox": {"uid": 3}})
    monkeypatch.setenv(ENV_REQUIRE, "0")
    monkeypatch.setattr(_probe, "_cache", {n: (n != "net_ns") for n in LAYERS})
    with pytest.raises(PreflightError, match="net_ns"):
        run_config(cfg)
    assert not (tmp_path / "run" / "trials.jsonl").exists()


def test_versions_json_records_the_layers(tmp_path):
    import json

    from etc_fast.runner import RunStore, parse_config

    cfg = parse_config({"name": "t", "out": str(tmp_path / "run"), "grids": [
        {"model": "scripted", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]})
    with RunStore.open(cfg) as store:
        versions = json.loads((store.root / "versions.json").read_text())
    assert set(LAYERS) <= set(versions["sandbox_layers"])
    assert versions["sandbox_layers"]["audit_hook"] is True
    import numpy

    zyg = versions["sandbox_zygote"]
    assert zyg["numpy"] == numpy.__version__ and "scipy.special" in zyg["preloaded"] and zyg["python"]


def test_interpreter_output_carries_no_harness_secret(monkeypatch):
    from etc_fast.sandbox import run_code
    from tests.sandbox._util import FAKE_KEY

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    code = (
        "os = np.__dict__['__builtins__']['__import__']('os')\nprint(dict(os.environ))\n"
        "for p in ('/proc/%d/environ' % os.getppid(), '/proc/1/environ'):\n"
        "    try:\n        print(open(p, 'rb').read())\n    except Exception as e:\n        print(type(e).__name__)\n"
    )
    r = run_code(code)
    assert r.ok, r.error
    assert "HOME" in r.stdout  # the fixed minimal environment
    assert FAKE_KEY not in (r.stdout + str(r.error))
    assert "OPENAI_API_KEY" not in r.stdout


def test_missing_layers_warned_once(monkeypatch, capsys):
    from etc_fast.sandbox import _supervisor

    monkeypatch.setattr(_supervisor, "_warned", False)
    layers = {n: (n != "landlock_fs") for n in LAYERS}
    layers["notes"] = "landlock: \x1b[31mnot here"
    _supervisor._warn_layers(layers)
    _supervisor._warn_layers(layers)
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "landlock_fs" in err and "\x1b" not in err
    _supervisor._warn_layers({n: True for n in LAYERS})
    assert capsys.readouterr().err == ""


def test_disk_budget_counts_bytes_and_entries(tmp_path):
    from etc_fast.sandbox._supervisor import _dir_usage

    (tmp_path / "a").write_bytes(b"x" * 100_000)
    (tmp_path / "d").mkdir()
    for i in range(5):
        (tmp_path / "d" / f"f{i}").write_bytes(b"y")
    used, files = _dir_usage(str(tmp_path), 100)
    assert files == 7 and used >= 100_000
